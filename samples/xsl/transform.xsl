<?xml version="1.0" encoding="UTF-8"?>
<!-- The seeds' Transformation use case in XSLT (their "Using XSLT" case): a Statement per
     customer Invoice of every SaleList. Cost is Price * 1.6; Amount sums Cost * Quantity over
     the Invoice's items. samples/esql/transform.esql builds the same statements with ESQL. -->
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="xml" encoding="UTF-8"/>
  <xsl:param name="markup" select="1.6"/>

  <xsl:template match="/Parent">
    <Parent><xsl:apply-templates select="SaleList"/></Parent>
  </xsl:template>

  <xsl:template match="SaleList">
    <SaleList><xsl:apply-templates select="Invoice"/></SaleList>
  </xsl:template>

  <xsl:template match="Invoice">
    <Statement Type="Monthly" Style="Full">
      <Customer>
        <Initials><xsl:for-each select="Initial"><xsl:value-of select="."/></xsl:for-each></Initials>
        <Name><xsl:value-of select="Surname"/></Name>
        <Balance><xsl:value-of select="Balance"/></Balance>
      </Customer>
      <Purchases>
        <xsl:for-each select="Item">
          <Article>
            <Desc><xsl:value-of select="Description"/></Desc>
            <Cost><xsl:value-of select="Price * $markup"/></Cost>
            <Qty><xsl:value-of select="Quantity"/></Qty>
          </Article>
        </xsl:for-each>
      </Purchases>
      <Amount>
        <xsl:call-template name="amount"><xsl:with-param name="items" select="Item"/></xsl:call-template>
      </Amount>
    </Statement>
  </xsl:template>

  <!-- XSLT 1.0's sum() takes nodes, not computed values: add Cost * Quantity item by item. -->
  <xsl:template name="amount">
    <xsl:param name="items"/>
    <xsl:param name="total" select="0"/>
    <xsl:choose>
      <xsl:when test="$items">
        <xsl:call-template name="amount">
          <xsl:with-param name="items" select="$items[position() > 1]"/>
          <xsl:with-param name="total" select="$total + $items[1]/Price * $markup * $items[1]/Quantity"/>
        </xsl:call-template>
      </xsl:when>
      <xsl:otherwise><xsl:value-of select="$total"/></xsl:otherwise>
    </xsl:choose>
  </xsl:template>
</xsl:stylesheet>

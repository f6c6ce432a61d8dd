<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:template match="/"><out><xsl:apply-templates select="//item"/></out></xsl:template>
  <xsl:template match="item" priority="-1"><low/></xsl:template>
  <xsl:template match="order/item"><mid/></xsl:template>
  <xsl:template match="item[@sku = 'a']" priority="2"><high/></xsl:template>
</xsl:stylesheet>

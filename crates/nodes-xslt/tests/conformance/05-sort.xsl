<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:template match="/orders"><out>
    <xsl:for-each select="order"><xsl:sort select="@id" data-type="number" order="descending"/><o id="{@id}"/></xsl:for-each>
    <xsl:for-each select="order/item"><xsl:sort select="@sku"/><xsl:sort select="@qty * @price" data-type="number"/><i sku="{@sku}" total="{@qty * @price}"/></xsl:for-each>
    <xsl:apply-templates select="customers/customer"><xsl:sort select="." order="descending"/></xsl:apply-templates>
  </out></xsl:template>
  <xsl:template match="customer"><c><xsl:value-of select="."/></c></xsl:template>
</xsl:stylesheet>

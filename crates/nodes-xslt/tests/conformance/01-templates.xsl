<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:template match="/"><report><xsl:apply-templates select="orders/order"/></report></xsl:template>
  <xsl:template match="order"><o n="{@id}"><xsl:apply-templates/></o></xsl:template>
  <xsl:template match="item[@qty &gt; 1]"><many sku="{@sku}"/></xsl:template>
  <xsl:template match="item"><one sku="{@sku}"/></xsl:template>
</xsl:stylesheet>

<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:template match="/orders"><out><toc><xsl:apply-templates select="order" mode="toc"/></toc><body><xsl:apply-templates select="order"/></body></out></xsl:template>
  <xsl:template match="order" mode="toc"><entry ref="{@id}"/></xsl:template>
  <xsl:template match="order"><section id="{@id}"><xsl:value-of select="count(item)"/></section></xsl:template>
</xsl:stylesheet>

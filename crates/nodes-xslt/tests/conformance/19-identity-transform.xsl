<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:template match="@*|node()"><xsl:copy><xsl:apply-templates select="@*|node()"/></xsl:copy></xsl:template>
  <xsl:template match="item/@price"><xsl:attribute name="price"><xsl:value-of select=". * 2"/></xsl:attribute></xsl:template>
  <xsl:template match="customers"/>
  <xsl:template match="comment()"/>
</xsl:stylesheet>

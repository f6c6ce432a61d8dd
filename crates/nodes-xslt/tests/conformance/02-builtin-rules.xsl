<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:template match="customer"><xsl:value-of select="concat('[', ., ']')"/></xsl:template>
</xsl:stylesheet>

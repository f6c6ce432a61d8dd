<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="text"/>
  <xsl:template match="/"><xsl:call-template name="fact"><xsl:with-param name="n" select="10"/></xsl:call-template><xsl:text>&#10;</xsl:text><xsl:call-template name="repeat"><xsl:with-param name="s" select="'ab'"/><xsl:with-param name="n" select="4"/></xsl:call-template></xsl:template>
  <xsl:template name="fact"><xsl:param name="n"/><xsl:param name="acc" select="1"/><xsl:choose><xsl:when test="$n &lt;= 1"><xsl:value-of select="$acc"/></xsl:when><xsl:otherwise><xsl:call-template name="fact"><xsl:with-param name="n" select="$n - 1"/><xsl:with-param name="acc" select="$acc * $n"/></xsl:call-template></xsl:otherwise></xsl:choose></xsl:template>
  <xsl:template name="repeat"><xsl:param name="s"/><xsl:param name="n"/><xsl:if test="$n &gt; 0"><xsl:value-of select="$s"/><xsl:call-template name="repeat"><xsl:with-param name="s" select="$s"/><xsl:with-param name="n" select="$n - 1"/></xsl:call-template></xsl:if></xsl:template>
</xsl:stylesheet>

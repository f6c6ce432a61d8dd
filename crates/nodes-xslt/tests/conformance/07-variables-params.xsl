<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:param name="greeting" select="'hello'"/>
  <xsl:param name="who"/>
  <xsl:variable name="total" select="sum(//item/@qty)"/>
  <xsl:variable name="rtf"><x>1</x><x>2</x></xsl:variable>
  <xsl:template match="/"><out g="{$greeting}" w="{$who}" t="{$total}" r="{$rtf}"><xsl:call-template name="line"><xsl:with-param name="n" select="3"/></xsl:call-template><xsl:call-template name="line"/></out></xsl:template>
  <xsl:template name="line"><xsl:param name="n" select="1"/><xsl:variable name="twice" select="$n * 2"/><l><xsl:value-of select="$twice"/></l></xsl:template>
</xsl:stylesheet>

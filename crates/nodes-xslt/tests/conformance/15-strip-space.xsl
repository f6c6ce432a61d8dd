<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:strip-space elements="*"/>
  <xsl:preserve-space elements="pre"/>
  <xsl:template match="/"><out><xsl:for-each select="//*"><e name="{name()}" children="{count(node())}"/></xsl:for-each></out></xsl:template>
</xsl:stylesheet>

<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="text"/>
  <xsl:template match="/"><xsl:for-each select="//customer"><xsl:value-of select="concat(translate(., 'abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'), '|', substring(., 2, 3), '|', string-length(.), '|', substring-before('a-b-c', '-'), '|', substring-after('a-b-c', '-'), '|', normalize-space('  x   y  '), '|', contains(., 'ria'), '|', starts-with(., 'A'))"/><xsl:text>&#10;</xsl:text></xsl:for-each></xsl:template>
</xsl:stylesheet>

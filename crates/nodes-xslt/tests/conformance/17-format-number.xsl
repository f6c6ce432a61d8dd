<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:decimal-format name="eu" decimal-separator="," grouping-separator="."/>
  <xsl:template match="/"><out><xsl:for-each select="//item"><n a="{format-number(@qty * @price, '#,##0.00')}" b="{format-number(@price div 3, '0.###')}" c="{format-number(@qty * 12345.678, '#.##0,0', 'eu')}" d="{format-number(@qty div 4, '0%')}"/></xsl:for-each><x><xsl:value-of select="1 div 0"/>|<xsl:value-of select="0 div 0"/>|<xsl:value-of select="round(2.5)"/>|<xsl:value-of select="floor(-1.5)"/>|<xsl:value-of select="ceiling(1.2)"/>|<xsl:value-of select="7 mod 3"/>|<xsl:value-of select="0.1 + 0.2"/></x></out></xsl:template>
</xsl:stylesheet>

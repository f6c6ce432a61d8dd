<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:key name="sku" match="item" use="@sku"/>
  <xsl:template match="/"><out><xsl:for-each select="//item[count(. | key('sku', @sku)[1]) = 1]"><xsl:sort select="@sku"/><g sku="{@sku}" qty="{sum(key('sku', @sku)/@qty)}"/></xsl:for-each></out></xsl:template>
</xsl:stylesheet>

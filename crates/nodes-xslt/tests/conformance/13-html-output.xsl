<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="html" indent="yes"/>
  <xsl:template match="/orders"><html><head><title>Orders</title></head><body><br/><table><xsl:for-each select="order"><tr><td><xsl:value-of select="@id"/></td><td><input type="checkbox" checked="checked"/></td></tr></xsl:for-each></table><p>a &amp; b &lt; c</p><script>if (a &lt; b) x();</script></body></html></xsl:template>
</xsl:stylesheet>

<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="text" encoding="UTF-8"/>
  <xsl:template match="/orders"><xsl:for-each select="order">order <xsl:value-of select="@id"/>, &lt;<xsl:value-of select="@customer"/>&gt; &amp; <xsl:value-of select="count(item)"/> items
</xsl:for-each></xsl:template>
</xsl:stylesheet>

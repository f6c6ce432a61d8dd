<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:template match="/orders"><out><xsl:for-each select="order"><xsl:element name="order-{@id}"><xsl:attribute name="{concat('c-', @customer)}">yes</xsl:attribute><xsl:if test="position() = last()"><xsl:attribute name="last">true</xsl:attribute></xsl:if><xsl:text>  spaced  </xsl:text></xsl:element></xsl:for-each></out></xsl:template>
</xsl:stylesheet>

<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:attribute-set name="base"><xsl:attribute name="kind">order</xsl:attribute><xsl:attribute name="v">1</xsl:attribute></xsl:attribute-set>
  <xsl:attribute-set name="more" use-attribute-sets="base"><xsl:attribute name="v">2</xsl:attribute></xsl:attribute-set>
  <xsl:template match="/orders"><out><xsl:for-each select="order"><o xsl:use-attribute-sets="more" id="{@id}"/><xsl:copy><xsl:copy-of select="@customer"/></xsl:copy></xsl:for-each></out></xsl:template>
</xsl:stylesheet>

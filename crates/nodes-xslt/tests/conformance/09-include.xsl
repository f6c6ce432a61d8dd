<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:include href="lib/items.xsl"/>
  <xsl:template match="/orders"><out><xsl:apply-templates select="order/item"/></out></xsl:template>
</xsl:stylesheet>

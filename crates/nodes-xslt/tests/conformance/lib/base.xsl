<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:template match="/orders"><out><xsl:apply-templates select="order"/></out></xsl:template>
  <xsl:template match="order"><order id="{@id}" base="yes"/></xsl:template>
</xsl:stylesheet>

<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:import href="lib/base.xsl"/>
  <xsl:template match="order[@id = 2]"><special><xsl:apply-imports/></special></xsl:template>
</xsl:stylesheet>

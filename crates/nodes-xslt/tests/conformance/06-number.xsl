<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:template match="/orders"><out>
    <xsl:for-each select="order"><n><xsl:number/>:<xsl:number format="i"/>:<xsl:number value="position() * 1000" grouping-separator="," grouping-size="3"/>:<xsl:number format="A"/></n></xsl:for-each>
    <xsl:for-each select="order/item"><m><xsl:number level="multiple" count="order|item" format="1.a"/></m><a><xsl:number level="any" count="item" format="01"/></a></xsl:for-each>
  </out></xsl:template>
</xsl:stylesheet>

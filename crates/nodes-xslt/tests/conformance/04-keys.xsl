<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:key name="cust" match="customer" use="@id"/>
  <xsl:key name="by-customer" match="order" use="@customer"/>
  <xsl:template match="/orders"><out><xsl:for-each select="customers/customer"><c name="{.}" orders="{count(key('by-customer', @id))}"/></xsl:for-each>
  <xsl:for-each select="order"><o id="{@id}" who="{key('cust', @customer)}"/></xsl:for-each></out></xsl:template>
</xsl:stylesheet>

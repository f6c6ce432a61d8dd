<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform" xmlns:t="urn:table">
  <t:codes><t:code k="a">Apple</t:code><t:code k="b">Banana</t:code><t:code k="c">Cherry</t:code></t:codes>
  <xsl:variable name="codes" select="document('')/*/t:codes/t:code"/>
  <xsl:template match="/"><out><xsl:for-each select="//item"><i name="{$codes[@k = current()/@sku]}"/></xsl:for-each></out></xsl:template>
</xsl:stylesheet>

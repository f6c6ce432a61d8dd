<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
    xmlns:exsl="http://exslt.org/common" xmlns:str="http://exslt.org/strings"
    xmlns:math="http://exslt.org/math" xmlns:set="http://exslt.org/sets"
    extension-element-prefixes="exsl str math set">
  <xsl:variable name="rtf"><v>3</v><v>1</v><v>2</v></xsl:variable>
  <xsl:template match="/">
    <out max="{math:max(exsl:node-set($rtf)/v)}" distinct="{count(set:distinct(//item/@sku))}">
      <xsl:for-each select="str:tokenize('a,b;c', ',;')"><t><xsl:value-of select="."/></t></xsl:for-each>
      <xsl:for-each select="exsl:node-set($rtf)/v"><xsl:sort select="." data-type="number"/><s><xsl:value-of select="."/></s></xsl:for-each>
    </out>
  </xsl:template>
</xsl:stylesheet>

<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:template match="/"><out><xsl:for-each select="//item"><i sku="{@sku}" pos="{position()}" last="{last()}" prev="{count(preceding::item)}" sib="{count(following-sibling::item)}" anc="{count(ancestor::*)}" parent="{../@id}"/></xsl:for-each><u><xsl:value-of select="count(//order[item/@sku='a'] | //order[@customer='c1'])"/></u></out></xsl:template>
</xsl:stylesheet>

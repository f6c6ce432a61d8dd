<?xml version="1.0" encoding="UTF-8"?>
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="text"/>
  <xsl:template match="/">invoices: <xsl:value-of select="count(//Invoice)"/>, items: <xsl:value-of select="count(//Item)"/></xsl:template>
</xsl:stylesheet>

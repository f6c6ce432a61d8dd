<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="xml" indent="yes" encoding="ISO-8859-1" cdata-section-elements="code" doctype-system="orders.dtd" standalone="yes"/>
  <xsl:template match="/orders"><out><name>Caf&#233; &#8364;</name><code>a &lt; b</code><xsl:comment> made </xsl:comment><xsl:processing-instruction name="p">q</xsl:processing-instruction></out></xsl:template>
</xsl:stylesheet>

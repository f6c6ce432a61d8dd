<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform" xmlns:in="urn:in" xmlns:out="urn:out" exclude-result-prefixes="in">
  <xsl:template match="/in:doc"><out:result><xsl:for-each select="in:v"><out:v in-ns="{namespace-uri()}" local="{local-name()}"><xsl:value-of select="."/></out:v></xsl:for-each><xsl:element name="made" namespace="urn:made"><xsl:attribute name="m:at" namespace="urn:m">1</xsl:attribute></xsl:element><xsl:copy-of select="in:keep"/></out:result></xsl:template>
</xsl:stylesheet>

/* The parts of libxslt that Rust cannot reach through plain declarations: its printf-style
 * (variadic) error callbacks, and fields of its structures whose layout only the headers know. */
#include <stdarg.h>
#include <stdio.h>

#include <libxml/parser.h>
#include <libxml/xmlerror.h>
#include <libxslt/xslt.h>
#include <libxslt/xsltInternals.h>
#include <libxslt/imports.h>
#include <libxslt/transform.h>
#include <libxslt/xsltutils.h>
#include <libexslt/exslt.h>

/* Defined in Rust: appends one formatted diagnostic to the calling thread's buffer. */
extern void sluice_xslt_collect(const char *text);

static void collect(void *ctx, const char *msg, ...) {
    char buf[2048];
    va_list args;
    (void)ctx;
    va_start(args, msg);
    vsnprintf(buf, sizeof buf, msg, args);
    va_end(args);
    sluice_xslt_collect(buf);
}

/* Once per process, before any thread uses the libraries. libxslt's error callback is one
 * process-wide variable; libxml2's is per thread, so new threads take the default set here. */
void sluice_xslt_init(void) {
    xmlInitParser();
    xsltInit();
    /* EXSLT's functions and elements (exsl:node-set, str:, math:, set:, dyn: …), as xsltproc has. */
    exsltRegisterAll();
    xsltSetGenericErrorFunc(NULL, collect);
    xmlThrDefSetGenericErrorFunc(NULL, collect);
    xmlSetGenericErrorFunc(NULL, collect);
}

/* For threads that touched libxml2 before sluice_xslt_init ran. */
void sluice_xslt_thread_errors(void) {
    xmlSetGenericErrorFunc(NULL, collect);
}

int sluice_xslt_error_count(xsltStylesheetPtr style) {
    return style->errors;
}

int sluice_xslt_failed(xsltTransformContextPtr ctxt) {
    return ctxt->state != XSLT_STATE_OK;
}

/* xsl:output's method and encoding as the transformation uses them: the importing
 * stylesheet's, or else the nearest import's. */
const char *sluice_xslt_method(xsltStylesheetPtr style) {
    const xmlChar *method;
    XSLT_GET_IMPORT_PTR(method, style, method);
    return (const char *)method;
}

const char *sluice_xslt_encoding(xsltStylesheetPtr style) {
    const xmlChar *encoding;
    XSLT_GET_IMPORT_PTR(encoding, style, encoding);
    return (const char *)encoding;
}

/* A parser for the messages one stylesheet transforms, on the stylesheet's thread: it interns
 * names in the stylesheet's dictionary, so that the transformation compares names by pointer
 * instead of looking them up, and keeps its buffers from message to message. */
xmlParserCtxtPtr sluice_xslt_new_parser(xsltStylesheetPtr style) {
    xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
    if (ctxt == NULL || style->dict == NULL)
        return ctxt;
    if (ctxt->dict != NULL)
        xmlDictFree(ctxt->dict);
    ctxt->dict = style->dict;
    xmlDictReference(ctxt->dict);
    return ctxt;
}

/* How many strings the stylesheet's dictionary holds (messages add the names they use). */
size_t sluice_xslt_dict_size(xsltStylesheetPtr style) {
    return style->dict == NULL ? 0 : (size_t)xmlDictSize(style->dict);
}

void sluice_xslt_free(void *p) {
    xmlFree(p);
}

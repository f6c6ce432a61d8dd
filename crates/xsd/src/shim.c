/* libxml2's streaming XML Schema validator driven from Rust. The document is never built as a
 * tree: a push parser feeds SAX events to the validator (xmlSchemaSAXPlug), and a small SAX
 * handler of ours keeps the path of open elements so that each violation names its element.
 * Diagnostics go to a Rust callback, through a per-thread pointer to the running call's state
 * (libxml2 hands the parser's own errors the plug's user data, not ours). */
#include <string.h>

#include <libxml/globals.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlschemas.h>

typedef void (*sluice_xsd_sink_fn)(void *sink, int level, int line, int column, const char *file,
                                   const char *path, const char *message);

#define PATH_BYTES 4096
#define MAX_DEPTH 256

typedef struct {
    sluice_xsd_sink_fn sink_fn;
    void *sink;
    xmlParserCtxtPtr parser;
    int errors;
    /* Open elements as "/a/b/c"; marks[i] is where level i starts. Elements deeper than
     * MAX_DEPTH or past PATH_BYTES are counted but not named. */
    char path[PATH_BYTES];
    size_t len;
    size_t marks[MAX_DEPTH];
    int depth;
    /* Ends not yet taken off the path: the validator reports an element's missing content
     * when the element ends, and must still see it on the path then. */
    int pending_ends;
} state;

static _Thread_local state *current;

static void pop_pending(state *st) {
    while (st->pending_ends > 0 && st->depth > 0) {
        st->depth--;
        if (st->depth < MAX_DEPTH)
            st->len = st->marks[st->depth];
        st->pending_ends--;
    }
    st->pending_ends = 0;
    st->path[st->len] = '\0';
}

static void on_start(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                     const xmlChar *uri, int nb_namespaces, const xmlChar **namespaces,
                     int nb_attributes, int nb_defaulted, const xmlChar **attributes) {
    state *st = ctx;
    size_t need;
    (void)uri; (void)nb_namespaces; (void)namespaces; (void)nb_attributes;
    (void)nb_defaulted; (void)attributes;
    pop_pending(st);
    if (st->depth < MAX_DEPTH) {
        st->marks[st->depth] = st->len;
        need = 1 + strlen((const char *)localname) + (prefix ? strlen((const char *)prefix) + 1 : 0);
        if (st->len + need < PATH_BYTES) {
            st->path[st->len++] = '/';
            if (prefix) {
                strcpy(st->path + st->len, (const char *)prefix);
                st->len += strlen((const char *)prefix);
                st->path[st->len++] = ':';
            }
            strcpy(st->path + st->len, (const char *)localname);
            st->len += strlen((const char *)localname);
        }
        st->path[st->len] = '\0';
    }
    st->depth++;
}

static void on_end(void *ctx, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri) {
    state *st = ctx;
    (void)localname; (void)prefix; (void)uri;
    pop_pending(st);
    st->pending_ends = 1;
}

static void on_error(void *data, xmlErrorPtr e) {
    state *st = current;
    int line, column;
    (void)data;
    if (st == NULL || e == NULL || e->level == XML_ERR_NONE)
        return;
    line = e->line;
    column = e->int2;
    /* The streaming validator knows no node; where the parser stands is where it was. */
    if (e->domain == XML_FROM_SCHEMASV && st->parser != NULL && st->parser->input != NULL) {
        line = st->parser->input->line;
        column = st->parser->input->col;
    }
    if (e->level != XML_ERR_WARNING)
        st->errors++;
    st->sink_fn(st->sink, (int)e->level, line, column, e->file, st->path, e->message);
}

static int locate(void *ctx, const char **file, unsigned long *line) {
    xmlParserCtxtPtr p = ctx;
    if (p == NULL || p->input == NULL)
        return -1;
    *file = p->input->filename;
    *line = (unsigned long)p->input->line;
    return 0;
}

/* Schema documents held in memory while this thread compiles a schema set: a schema inside a
 * WSDL has no file of its own, so the loader serves it under a made-up path beside the WSDL,
 * against which its relative locations resolve. Other threads and other paths go to the loader
 * that was there before. */
typedef struct {
    const char *url;
    const char *text;
} sluice_xsd_doc;

static _Thread_local const sluice_xsd_doc *memory_docs;
static _Thread_local int memory_count;
static xmlExternalEntityLoader next_loader;

static xmlParserInputPtr memory_loader(const char *url, const char *id, xmlParserCtxtPtr ctxt) {
    int i;
    xmlParserInputPtr in;
    if (url != NULL) {
        for (i = 0; i < memory_count; i++) {
            if (strcmp(url, memory_docs[i].url) != 0)
                continue;
            in = xmlNewStringInputStream(ctxt, (const xmlChar *)memory_docs[i].text);
            if (in != NULL)
                in->filename = (const char *)xmlStrdup((const xmlChar *)url);
            return in;
        }
    }
    return next_loader(url, id, ctxt);
}

void sluice_xsd_init(void) {
    xmlInitParser();
    next_loader = xmlGetExternalEntityLoader();
    xmlSetExternalEntityLoader(memory_loader);
}

/* Compile the schema at `path` (its includes and imports are read relative to it). Returns
 * NULL when it does not compile; every diagnostic has gone to the sink. */
xmlSchemaPtr sluice_xsd_compile(const char *path, sluice_xsd_sink_fn sink_fn, void *sink) {
    state st;
    state *outer = current;
    xmlStructuredErrorFunc old_fn = xmlStructuredError;
    void *old_ctx = xmlStructuredErrorContext;
    xmlSchemaParserCtxtPtr p;
    xmlSchemaPtr schema = NULL;

    memset(&st, 0, sizeof st);
    st.sink_fn = sink_fn;
    st.sink = sink;
    current = &st;
    /* Included and imported documents are parsed with parsers of libxml2's own, which report
     * to the thread's handler: take it for this call only. */
    xmlSetStructuredErrorFunc(NULL, on_error);
    p = xmlSchemaNewParserCtxt(path);
    if (p != NULL) {
        xmlSchemaSetParserStructuredErrors(p, on_error, NULL);
        schema = xmlSchemaParse(p);
        xmlSchemaFreeParserCtxt(p);
    }
    xmlSetStructuredErrorFunc(old_ctx, old_fn);
    current = outer;
    if (schema != NULL && st.errors > 0) {
        xmlSchemaFree(schema);
        schema = NULL;
    }
    return schema;
}

/* Compile the schema at `path` as sluice_xsd_compile does, with `docs` served from memory. */
xmlSchemaPtr sluice_xsd_compile_with(const char *path, const sluice_xsd_doc *docs, int count,
                                     sluice_xsd_sink_fn sink_fn, void *sink) {
    xmlSchemaPtr schema;
    memory_docs = docs;
    memory_count = count;
    schema = sluice_xsd_compile(path, sink_fn, sink);
    memory_docs = NULL;
    memory_count = 0;
    return schema;
}

void sluice_xsd_free(xmlSchemaPtr schema) {
    xmlSchemaFree(schema);
}

/* Validate `len` bytes against `schema`: 0 when valid, 1 when not (diagnostics sent), -1 when
 * libxml2 could not set up (out of memory). */
int sluice_xsd_validate(xmlSchemaPtr schema, const char *buf, int len, sluice_xsd_sink_fn sink_fn,
                        void *sink) {
    state st;
    state *outer = current;
    xmlSAXHandler sax;
    xmlSchemaValidCtxtPtr v;
    xmlParserCtxtPtr p;
    xmlSchemaSAXPlugPtr plug;
    int well_formed;

    memset(&st, 0, sizeof st);
    st.sink_fn = sink_fn;
    st.sink = sink;
    v = xmlSchemaNewValidCtxt(schema);
    if (v == NULL)
        return -1;
    xmlSchemaSetValidStructuredErrors(v, on_error, NULL);

    memset(&sax, 0, sizeof sax);
    sax.initialized = XML_SAX2_MAGIC;
    sax.startElementNs = on_start;
    sax.endElementNs = on_end;
    sax.serror = on_error;
    p = xmlCreatePushParserCtxt(&sax, &st, NULL, 0, NULL);
    if (p == NULL) {
        xmlSchemaFreeValidCtxt(v);
        return -1;
    }
    /* Messages come from outside: nothing is fetched from the network, no external DTD or
     * entity is loaded. */
    xmlCtxtUseOptions(p, XML_PARSE_NONET);
    st.parser = p;
    plug = xmlSchemaSAXPlug(v, &p->sax, &p->userData);
    if (plug == NULL) {
        xmlFreeParserCtxt(p);
        xmlSchemaFreeValidCtxt(v);
        return -1;
    }
    /* The parser's own errors reach on_error through the plug's copy of our handler. */
    p->sax->serror = on_error;
    xmlSchemaValidateSetLocator(v, locate, p);
    current = &st;
    xmlParseChunk(p, buf, len, 1);
    well_formed = p->wellFormed;
    xmlSchemaSAXUnplug(plug);
    current = outer;
    xmlFreeParserCtxt(p);
    xmlSchemaFreeValidCtxt(v);
    return (well_formed && st.errors == 0) ? 0 : 1;
}

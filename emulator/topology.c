/* topology.c: reads a NARVAL XML topology into actor specifications (libxml2, no network, no entities). */
#include "topology.h"
#include "emu.h"

#include <ctype.h>
#include <errno.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct reader {
    emu_topology *t;
    FILE *notes;
    char *err;
    size_t errlen;
} reader;

const char *emu_share_name(enum emu_share share)
{
    switch (share) {
    case EMU_SHARE_ROUND_ROBIN: return "round-robin";
    case EMU_SHARE_FIRST_FREE: return "first-free";
    case EMU_SHARE_NONE: break;
    }
    return "every block";
}

const char *emu_role_name(enum emu_role role)
{
    switch (role) {
    case EMU_PRODUCER: return "producer";
    case EMU_FILTER: return "intermediary";
    case EMU_CONSUMER: return "consumer";
    }
    return "actor";
}

static const char *tag(const xmlNode *node) { return (const char *)node->name; }

static int is_tag(const xmlNode *node, const char *name)
{
    /* NARVAL reads its topology files without regard to case. */
    return node->type == XML_ELEMENT_NODE && strcasecmp(tag(node), name) == 0;
}

static int fail_at(reader *r, const xmlNode *node, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail_at(reader *r, const xmlNode *node, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emu_vfail_at(r->err, r->errlen, r->t->path, xmlGetLineNo(node), fmt, ap);
    va_end(ap);
    return EMU_E_TOPOLOGY;
}

/* owner: the actor holding the element, NULL for <configuration>. */
static void note_ignored(reader *r, const xmlNode *node, const char *owner)
{
    if (r->notes)
        fprintf(r->notes, "%s:%ld: note: <%s> in %s%s%s ignored by the emulator\n", r->t->path,
                xmlGetLineNo(node), tag(node), owner ? "'" : "<configuration>", owner ? owner : "",
                owner ? "'" : "");
}

static char *trimmed_copy(const char *s, size_t len)
{
    while (len > 0 && isspace((unsigned char)*s)) {
        s++;
        len--;
    }
    while (len > 0 && isspace((unsigned char)s[len - 1]))
        len--;
    char *copy = malloc(len + 1);
    if (copy) {
        memcpy(copy, s, len);
        copy[len] = '\0';
    }
    return copy;
}

/* Names end up in messages, tables and file names: one line each. */
static int check_printable(reader *r, const xmlNode *owner, char **text)
{
    for (const unsigned char *p = (const unsigned char *)*text; *p; p++)
        if (*p < 0x20 || *p == 0x7f) {
            int rc = fail_at(r, owner, "<%s> holds a control character (byte 0x%02x)", tag(owner), *p);
            free(*text);
            *text = NULL;
            return rc;
        }
    return EMU_OK;
}

/* Concatenates the text children of a node (an element or an attribute).
 * Entity references are refused rather than expanded: a topology has no use
 * for them and expanding them is how XML files attack their readers. */
static int gather_text(reader *r, const xmlNode *owner, const xmlNode *children, char **out)
{
    size_t len = 0;
    char *buf = NULL;
    for (const xmlNode *c = children; c; c = c->next) {
        if (c->type == XML_COMMENT_NODE || c->type == XML_PI_NODE)
            continue;
        if (c->type == XML_ENTITY_REF_NODE) {
            free(buf);
            return fail_at(r, owner, "<%s> uses the entity &%s;: topologies are read without entity expansion",
                           tag(owner), tag(c));
        }
        if (c->type != XML_TEXT_NODE && c->type != XML_CDATA_SECTION_NODE) {
            free(buf);
            return fail_at(r, c, "<%s> must hold text only, not <%s>", tag(owner), tag(c));
        }
        size_t n = c->content ? strlen((const char *)c->content) : 0;
        char *grown = realloc(buf, len + n + 1);
        if (!grown) {
            free(buf);
            return fail_at(r, owner, "out of memory");
        }
        buf = grown;
        memcpy(buf + len, c->content, n);
        len += n;
        buf[len] = '\0';
    }
    *out = trimmed_copy(buf ? buf : "", len);
    free(buf);
    if (!*out)
        return fail_at(r, owner, "out of memory");
    return check_printable(r, owner, out);
}

/* The text of a leaf element such as <name>; empty text is an error. */
static int element_text(reader *r, const xmlNode *el, char **out)
{
    int rc = gather_text(r, el, el->children, out);
    if (rc != EMU_OK)
        return rc;
    if (**out == '\0') {
        free(*out);
        *out = NULL;
        return fail_at(r, el, "<%s> is empty", tag(el));
    }
    return EMU_OK;
}

/* An attribute's value (case-insensitive name), or NULL in *out when absent. */
static int attribute(reader *r, const xmlNode *el, const char *name, char **out)
{
    *out = NULL;
    for (const xmlAttr *a = el->properties; a; a = a->next)
        if (strcasecmp((const char *)a->name, name) == 0)
            return gather_text(r, el, a->children, out);
    return EMU_OK;
}

/* Buffer sizes are decimal; NARVAL's files write them the Ada way, with
 * underscores between digits (1_000_000), so those are accepted too. */
static int parse_size(reader *r, const xmlNode *el, const char *text, unsigned *size)
{
    uint64_t v = 0;
    int digits = 0;
    for (const char *p = text; *p; p++) {
        if (*p == '_' && p > text && isdigit((unsigned char)p[-1]) && isdigit((unsigned char)p[1]))
            continue;
        if (!isdigit((unsigned char)*p))
            return fail_at(r, el, "buffer size '%s' is not a positive whole number of bytes", text);
        if (v <= EMU_MAX_BUFFER)
            v = v * 10 + (uint64_t)(*p - '0');
        digits++;
    }
    if (digits == 0 || v == 0)
        return fail_at(r, el, "buffer size '%s' is not a positive whole number of bytes", text);
    if (v > EMU_MAX_BUFFER)
        return fail_at(r, el, "buffer size %s exceeds the emulator's limit of %u bytes (1 GiB)", text,
                       EMU_MAX_BUFFER);
    *size = (unsigned)v;
    return EMU_OK;
}

static emu_actor_spec *new_actor(reader *r, const xmlNode *el)
{
    emu_topology *t = r->t;
    emu_actor_spec *grown = realloc(t->actors, (t->n_actors + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    t->actors = grown;
    emu_actor_spec *a = &t->actors[t->n_actors++];
    memset(a, 0, sizeof *a);
    a->line = xmlGetLineNo(el);
    return a;
}

/* The actor's <name> comes first because every other message names it. */
static int read_name(reader *r, const xmlNode *el, emu_actor_spec *a)
{
    const xmlNode *found = NULL;
    for (const xmlNode *c = el->children; c; c = c->next) {
        if (!is_tag(c, "name"))
            continue;
        if (found)
            return fail_at(r, c, "%s '%s' has a second <name>", emu_role_name(a->role), a->name);
        found = c;
        int rc = element_text(r, c, &a->name);
        if (rc != EMU_OK)
            return rc;
    }
    if (!found)
        return fail_at(r, el, "<%s> without <name>", tag(el));
    return EMU_OK;
}

/* NARVAL's output_buffers attribute: an actor writes one buffer here, so
 * any count other than 1 is refused rather than misread. */
static int check_output_count(reader *r, const xmlNode *el, const emu_actor_spec *a)
{
    char *value = NULL;
    int rc = attribute(r, el, "output_buffers", &value);
    if (rc == EMU_OK && value && strcmp(value, "1") != 0)
        rc = fail_at(r, el, "%s '%s' declares output_buffers=\"%s\": the emulator supports one output buffer per actor",
                     emu_role_name(a->role), a->name, value);
    free(value);
    return rc;
}

/* NARVAL's input_buffers attribute: how many <data_source> elements the
 * actor has (1 when absent), checked against them once all are read. */
static int read_input_count(reader *r, const xmlNode *el, emu_actor_spec *a)
{
    char *value = NULL, *end = NULL;
    a->input_buffers = 1;
    int rc = attribute(r, el, "input_buffers", &value);
    if (rc != EMU_OK || !value)
        return rc;
    unsigned long n = strtoul(value, &end, 10);
    if (!isdigit((unsigned char)value[0]) || *end || n == 0 || n > EMU_MAX_ACTORS)
        rc = fail_at(r, el, "%s '%s' declares input_buffers=\"%s\": not a whole number from 1 to %d",
                     emu_role_name(a->role), a->name, value, EMU_MAX_ACTORS);
    a->input_buffers = (unsigned)n;
    free(value);
    return rc;
}

static int check_buffer_counts(reader *r, const xmlNode *el, emu_actor_spec *a)
{
    int rc = EMU_OK;
    if (a->role != EMU_CONSUMER)
        rc = check_output_count(r, el, a);
    if (rc == EMU_OK && a->role != EMU_PRODUCER)
        rc = read_input_count(r, el, a);
    return rc;
}

static int read_library(reader *r, const xmlNode *c, emu_actor_spec *a)
{
    if (a->library)
        return fail_at(r, c, "%s '%s' has a second <library>", emu_role_name(a->role), a->name);
    a->library_line = xmlGetLineNo(c);
    a->library_file = r->t->path;
    a->library_dir = r->t->dir;
    return element_text(r, c, &a->library);
}

/* <hostname>: where NARVAL starts the actor; `mpirun ... narwhal run` places actors by it (mpi_place.h). */
static int read_hostname(reader *r, const xmlNode *c, emu_actor_spec *a)
{
    if (a->hostname)
        return fail_at(r, c, "%s '%s' has a second <hostname>", emu_role_name(a->role), a->name);
    a->hostname_line = xmlGetLineNo(c);
    return element_text(r, c, &a->hostname);
}

static int read_output(reader *r, const xmlNode *c, emu_actor_spec *a)
{
    if (a->role == EMU_CONSUMER)
        return fail_at(r, c, "consumer '%s' has an output buffer: a consumer only reads", a->name);
    if (a->output)
        return fail_at(r, c, "%s '%s' has a second <output_buffer_name>: the emulator supports one output per actor",
                       emu_role_name(a->role), a->name);
    a->output_line = xmlGetLineNo(c);
    return element_text(r, c, &a->output);
}

static int read_size(reader *r, const xmlNode *c, emu_actor_spec *a)
{
    if (a->role == EMU_CONSUMER)
        return fail_at(r, c, "consumer '%s' has a <size>: a consumer has no output buffer", a->name);
    if (a->size_buffer)
        return fail_at(r, c, "%s '%s' has a second <size>: the emulator supports one output per actor",
                       emu_role_name(a->role), a->name);
    char *text = NULL;
    int rc = attribute(r, c, "output_buffer", &a->size_buffer);
    if (rc == EMU_OK && !a->size_buffer)
        rc = fail_at(r, c, "<size> of '%s' has no output_buffer attribute naming its buffer", a->name);
    if (rc == EMU_OK)
        rc = element_text(r, c, &text);
    if (rc == EMU_OK)
        rc = parse_size(r, c, text, &a->output_size);
    a->size_line = xmlGetLineNo(c);
    free(text);
    return rc;
}

/* The share attribute of a <data_source>; absent: every block. */
static int read_share(reader *r, const xmlNode *c, const emu_actor_spec *a, enum emu_share *share)
{
    char *value = NULL;
    int rc = attribute(r, c, "share", &value);
    *share = EMU_SHARE_NONE;
    if (rc != EMU_OK || !value)
        return rc;
    if (strcmp(value, "round-robin") == 0)
        *share = EMU_SHARE_ROUND_ROBIN;
    else if (strcmp(value, "first-free") == 0)
        *share = EMU_SHARE_FIRST_FREE;
    else
        rc = fail_at(r, c, "<data_source> of '%s' has share=\"%s\": it is \"round-robin\" or \"first-free\" "
                     "(instances sharing the blocks), or absent (every block)", a->name, value);
    free(value);
    return rc;
}

static int read_source(reader *r, const xmlNode *c, emu_actor_spec *a)
{
    if (a->role == EMU_PRODUCER)
        return fail_at(r, c, "producer '%s' has an input (<data_source>): a producer only writes", a->name);
    if (a->n_sources == EMU_MAX_ACTORS)
        return fail_at(r, c, "%s '%s' has more than %d <data_source> elements", emu_role_name(a->role), a->name,
                       EMU_MAX_ACTORS);
    emu_source *grown = realloc(a->sources, (a->n_sources + 1) * sizeof *grown);
    if (!grown)
        return fail_at(r, c, "out of memory");
    a->sources = grown;
    emu_source *src = &a->sources[a->n_sources++];
    memset(src, 0, sizeof *src);
    src->line = xmlGetLineNo(c);
    int rc = attribute(r, c, "source_buffer", &src->buffer);
    if (rc == EMU_OK && !src->buffer)
        rc = fail_at(r, c, "<data_source> of '%s' has no source_buffer attribute naming the buffer it reads",
                     a->name);
    if (rc == EMU_OK)
        rc = read_share(r, c, a, &src->share);
    if (rc == EMU_OK)
        rc = element_text(r, c, &src->actor);
    return rc;
}

/* What every actor must have once all its elements were read. */
static int check_complete(reader *r, const xmlNode *el, const emu_actor_spec *a)
{
    const char *role = emu_role_name(a->role);
    if (a->role != EMU_CONSUMER && !a->output)
        return fail_at(r, el, "%s '%s' has no <output_buffer_name>", role, a->name);
    if (a->role != EMU_PRODUCER && a->n_sources == 0)
        return fail_at(r, el, "%s '%s' has no input: it needs a <data_source source_buffer=\"...\">", role, a->name);
    if (a->role != EMU_PRODUCER && a->n_sources != a->input_buffers)
        return fail_at(r, el, "%s '%s' declares input_buffers=\"%u\"%s but has %zu <data_source> elements", role,
                       a->name, a->input_buffers, a->input_buffers == 1 ? " (or none)" : "", a->n_sources);
    if (a->role == EMU_CONSUMER)
        return EMU_OK;
    if (!a->size_buffer)
        return fail_at(r, el, "%s '%s' gives no <size output_buffer=\"%s\"> for its output buffer", role, a->name,
                       a->output);
    if (strcmp(a->size_buffer, a->output) != 0)
        return emu_fail_at(r->err, r->errlen, r->t->path, a->size_line,
                           "<size> names buffer '%s' but the output of '%s' is '%s'", a->size_buffer,
                         a->name, a->output);
    return EMU_OK;
}

static int read_actor(reader *r, const xmlNode *el, enum emu_role role)
{
    if (r->t->n_actors == EMU_MAX_ACTORS)
        return fail_at(r, el, "more than %d actors: the emulator's limit for one topology", EMU_MAX_ACTORS);
    emu_actor_spec *a = new_actor(r, el);
    if (!a)
        return fail_at(r, el, "out of memory");
    a->role = role;
    int rc = read_name(r, el, a);
    if (rc == EMU_OK)
        rc = check_buffer_counts(r, el, a);
    for (const xmlNode *c = el->children; c && rc == EMU_OK; c = c->next) {
        if (c->type == XML_ENTITY_REF_NODE)
            rc = fail_at(r, el, "<%s> uses the entity &%s;: topologies are read without entity expansion",
                         tag(el), tag(c));
        if (c->type != XML_ELEMENT_NODE || is_tag(c, "name"))
            continue;
        if (is_tag(c, "library"))
            rc = read_library(r, c, a);
        else if (is_tag(c, "hostname"))
            rc = read_hostname(r, c, a);
        else if (is_tag(c, "output_buffer_name"))
            rc = read_output(r, c, a);
        else if (is_tag(c, "size"))
            rc = read_size(r, c, a);
        else if (is_tag(c, "data_source"))
            rc = read_source(r, c, a);
        else
            note_ignored(r, c, a->name);
    }
    return rc == EMU_OK ? check_complete(r, el, a) : rc;
}

static int read_configuration(reader *r, const xmlNode *root)
{
    r->t->root_line = xmlGetLineNo(root);
    if (!is_tag(root, "configuration"))
        return fail_at(r, root, "the root element is <%s>; a NARVAL topology starts with <configuration>", tag(root));
    int rc = EMU_OK;
    for (const xmlNode *c = root->children; c && rc == EMU_OK; c = c->next) {
        if (c->type == XML_ENTITY_REF_NODE)
            rc = fail_at(r, root, "<%s> uses the entity &%s;: topologies are read without entity expansion",
                         tag(root), tag(c));
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (is_tag(c, "producer"))
            rc = read_actor(r, c, EMU_PRODUCER);
        else if (is_tag(c, "intermediary"))
            rc = read_actor(r, c, EMU_FILTER);
        else if (is_tag(c, "consumer"))
            rc = read_actor(r, c, EMU_CONSUMER);
        else if (is_tag(c, "stand_alone_actor"))
            rc = fail_at(r, c, "<stand_alone_actor> is not supported: the emulator runs producer-to-consumer graphs");
        else
            note_ignored(r, c, NULL);
    }
    return rc;
}

char *emu_directory_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

static emu_topology *new_topology(const char *path)
{
    emu_topology *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->path = strdup(path);
    t->dir = emu_directory_of(path);
    if (!t->path || !t->dir) {
        emu_topology_free(t);
        return NULL;
    }
    return t;
}

/* The first error libxml2 reports while reading one document. */
typedef struct xml_error {
    int set;
    int line;
    char message[512];
} xml_error;

#if LIBXML_VERSION >= 21200
static void keep_first(void *data, const xmlError *e)
#else
static void keep_first(void *data, xmlErrorPtr e)
#endif
{
    xml_error *first = data;
    if (first->set || e->level < XML_ERR_ERROR)
        return;
    first->set = 1;
    first->line = e->line;
    snprintf(first->message, sizeof first->message, "%s", e->message ? e->message : "not well-formed");
}

/* Every libxml2 error of this read, the encoding and I/O layers' included,
 * goes to keep_first instead of stderr; the first one becomes our line.
 * The previous handler is put back so that other users of libxml2 in the
 * process keep theirs. */
static xmlDocPtr read_quietly(xmlParserCtxtPtr ctxt, const char *xml, size_t len, int options, xml_error *first)
{
    xmlStructuredErrorFunc saved = xmlStructuredError;
    void *saved_ctx = xmlStructuredErrorContext;
    xmlSetStructuredErrorFunc(first, keep_first);
    xmlDocPtr doc = xmlCtxtReadMemory(ctxt, xml, (int)len, NULL, NULL, options);
    xmlSetStructuredErrorFunc(saved_ctx, saved);
    return doc;
}

/* The error as one line; an encoding error has no line of its own, the
 * parser's error that follows it does. */
static int xml_failure(reader *r, xmlParserCtxtPtr ctxt, const xml_error *first)
{
    const xmlError *last = xmlCtxtGetLastError(ctxt);
    int line = first->set && first->line > 0 ? first->line : last ? last->line : 0;
    const char *msg = first->set ? first->message : last && last->message ? last->message : "not well-formed";
    size_t len = strlen(msg);
    while (len > 0 && isspace((unsigned char)msg[len - 1]))
        len--;
    return emu_fail(r->err, r->errlen, EMU_E_TOPOLOGY, "%s:%d: malformed XML: %.*s", r->t->path, line, (int)len,
                    msg);
}

int emu_topology_parse(const char *path, const char *xml, size_t len, FILE *notes, emu_topology **out, char *err,
                       size_t errlen)
{
    /* No network, no DTD loading, no entity substitution, nothing printed. */
    const int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES;
    xmlParserCtxtPtr ctxt = NULL;
    xmlDocPtr doc = NULL;
    xml_error first = {0};
    reader r = {.t = new_topology(path), .notes = notes, .err = err, .errlen = errlen};
    int rc = EMU_E_TOPOLOGY;
    *out = NULL;
    if (!r.t) {
        rc = emu_fail(err, errlen, EMU_E_TOPOLOGY, "%s: out of memory", path);
        goto fail;
    }
    if (len > EMU_MAX_TOPOLOGY_BYTES) {
        rc = emu_fail(err, errlen, EMU_E_TOPOLOGY, "%s: %zu bytes: larger than the %u-byte limit for a topology",
                      path, len, EMU_MAX_TOPOLOGY_BYTES);
        goto fail;
    }
    ctxt = xmlNewParserCtxt();
    if (!ctxt) {
        rc = emu_fail(err, errlen, EMU_E_TOPOLOGY, "%s: out of memory", path);
        goto fail;
    }
    doc = read_quietly(ctxt, xml, len, options, &first);
    if (!doc) {
        rc = xml_failure(&r, ctxt, &first);
        goto fail;
    }
    rc = read_configuration(&r, xmlDocGetRootElement(doc));
    if (rc == EMU_OK)
        rc = emu_graph_order(r.t, err, errlen);
    if (rc != EMU_OK)
        goto fail;
    xmlFreeDoc(doc);
    xmlFreeParserCtxt(ctxt);
    *out = r.t;
    return EMU_OK;
fail:
    xmlFreeDoc(doc);
    xmlFreeParserCtxt(ctxt);
    emu_topology_free(r.t);
    return rc;
}

/* The whole file, refused when larger than EMU_MAX_TOPOLOGY_BYTES. */
static int slurp(const char *path, char **out, size_t *len, char *err, size_t errlen)
{
    size_t cap = 0;
    char *buf = NULL;
    int rc = EMU_E_TOPOLOGY;
    FILE *f = fopen(path, "rb");
    *out = NULL;
    *len = 0;
    if (!f)
        return emu_fail(err, errlen, EMU_E_TOPOLOGY, "%s: cannot open: %s", path, strerror(errno));
    while (!feof(f) && *len <= EMU_MAX_TOPOLOGY_BYTES) {
        if (*len == cap) {
            cap = cap ? 2 * cap : 65536;
            char *grown = realloc(buf, cap);
            if (!grown) {
                rc = emu_fail(err, errlen, EMU_E_TOPOLOGY, "%s: out of memory", path);
                goto fail;
            }
            buf = grown;
        }
        *len += fread(buf + *len, 1, cap - *len, f);
        if (ferror(f)) {
            rc = emu_fail(err, errlen, EMU_E_TOPOLOGY, "%s: cannot read: %s", path, strerror(errno));
            goto fail;
        }
    }
    fclose(f);
    *out = buf;
    return EMU_OK;
fail:
    fclose(f);
    free(buf);
    return rc;
}

int emu_topology_read(const char *path, FILE *notes, emu_topology **out, char *err, size_t errlen)
{
    char *xml = NULL;
    size_t len = 0;
    *out = NULL;
    int rc = slurp(path, &xml, &len, err, errlen);
    if (rc == EMU_OK)
        rc = emu_topology_parse(path, xml ? xml : "", len, notes, out, err, errlen);
    free(xml);
    return rc;
}

void emu_topology_free(emu_topology *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_actors; i++) {
        emu_actor_spec *a = &t->actors[i];
        free(a->name);
        free(a->library);
        free(a->hostname);
        free(a->output);
        free(a->size_buffer);
        for (size_t j = 0; j < a->n_sources; j++) {
            free(a->sources[j].actor);
            free(a->sources[j].buffer);
        }
        free(a->sources);
        free(a->conf_dir);
    }
    free(t->actors);
    free(t->path);
    free(t->dir);
    free(t->main_path);
    free(t->main_dir);
    free(t);
}

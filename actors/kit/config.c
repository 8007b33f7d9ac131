/* config.c: reads an actor's <Actor>.conf into its settings struct, as the actor's table of keys describes. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <strings.h>

#include "kit.h"

typedef struct tokens {
    char **v;
    size_t n, cap;
} tokens;

typedef struct parse {
    const kit_spec *spec;
    char *path;
    unsigned line;       /* 0 while applying defaults or checking mandatory keys */
    unsigned *set_line;  /* per key: the line that set it, 0 if none */
    void *settings;
    char *msg;
    size_t len;
} parse;

enum { TOK_OK = 0, TOK_QUOTE = -1, TOK_NOMEM = -2 };

static unsigned fail_at(parse *p, unsigned code, const kit_key *k, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* "<file>:<line>: key '<key>': <reason>", leaving out the parts not known. */
static unsigned fail_at(parse *p, unsigned code, const kit_key *k, const char *fmt, ...)
{
    int n = p->line ? snprintf(p->msg, p->len, "%s:%u: ", p->path, p->line)
                    : snprintf(p->msg, p->len, "%s: ", p->path);
    size_t at = n < 0 ? 0 : (size_t)n;
    if (k && at < p->len) {
        n = snprintf(p->msg + at, p->len - at, "key '%s': ", k->name);
        at += n < 0 ? 0 : (size_t)n;
    }
    if (at < p->len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->msg + at, p->len - at, fmt, ap);
        va_end(ap);
    }
    return code;
}

static int push_token(tokens *t, char *s)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 8;
        char **v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return TOK_NOMEM;
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = s;
    return TOK_OK;
}

/* Splits a line in place: blanks separate, '#' starts a comment, "..." quotes a value. */
static int tokenize(char *s, tokens *t)
{
    t->n = 0;
    for (;;) {
        while (isspace((unsigned char)*s))
            s++;
        if (*s == '\0' || *s == '#')
            return TOK_OK;
        char *start = s, *end;
        if (*s == '"') {
            start = s + 1;
            end = strchr(start, '"');
            if (!end || (end[1] && !isspace((unsigned char)end[1]) && end[1] != '#'))
                return TOK_QUOTE;
        } else {
            end = s + strcspn(s, " \t\r\n\v\f#");
            if (memchr(start, '"', (size_t)(end - start)))
                return TOK_QUOTE;
        }
        char stop = *end;
        *end = '\0';
        if (push_token(t, start) != TOK_OK)
            return TOK_NOMEM;
        if (stop == '\0' || stop == '#')
            return TOK_OK;
        s = end + 1;
    }
}

static int parse_int(const char *text, int64_t *v, char *why, size_t len)
{
    const char *digits = text + (text[0] == '-' || text[0] == '+');
    int base = digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') ? 16 : 10;
    char *end;
    errno = 0;
    long long x = strtoll(text, &end, base);
    if (end == text || isspace((unsigned char)text[0])) {
        snprintf(why, len, "value '%s' is not an integer", text);
        return -1;
    }
    if (*end) {
        snprintf(why, len, "value '%s' has trailing characters '%s' after the number", text, end);
        return -1;
    }
    if (errno == ERANGE) {
        snprintf(why, len, "value '%s' is out of the 64-bit integer range", text);
        return -1;
    }
    *v = x;
    return 0;
}

static int parse_real(const char *text, double *v, char *why, size_t len)
{
    char *end;
    errno = 0;
    double x = strtod(text, &end);
    if (end == text) {
        snprintf(why, len, "value '%s' is not a number", text);
        return -1;
    }
    if (*end) {
        snprintf(why, len, "value '%s' has trailing characters '%s' after the number", text, end);
        return -1;
    }
    if (!isfinite(x) || errno == ERANGE) {
        snprintf(why, len, "value '%s' is not a finite number in double range", text);
        return -1;
    }
    *v = x;
    return 0;
}

static int parse_bool(const char *text, bool *v, char *why, size_t len)
{
    static const char *const yes[] = { "true", "yes", "on", "1" };
    static const char *const no[] = { "false", "no", "off", "0" };
    for (size_t i = 0; i < KIT_COUNT(yes); i++) {
        if (strcasecmp(text, yes[i]) == 0 || strcasecmp(text, no[i]) == 0) {
            *v = strcasecmp(text, yes[i]) == 0;
            return 0;
        }
    }
    snprintf(why, len, "value '%s' is not a boolean (true/false, yes/no, on/off, 1/0)", text);
    return -1;
}

void kit_format_number(const kit_key *k, double v, char *out, size_t len)
{
    if (k->type == KIT_INT)
        snprintf(out, len, "%lld", (long long)v);
    else
        snprintf(out, len, "%g", v);
}

static int check_range(const kit_key *k, const char *text, double v, char *why, size_t len)
{
    char bound[40];
    if (k->has_min && v < k->min) {
        kit_format_number(k, k->min, bound, sizeof bound);
        snprintf(why, len, "value '%s' is below the minimum %s", text, bound);
        return -1;
    }
    if (k->has_max && v > k->max) {
        kit_format_number(k, k->max, bound, sizeof bound);
        snprintf(why, len, "value '%s' is above the maximum %s", text, bound);
        return -1;
    }
    return 0;
}

static unsigned append_list(kit_list *l, char **vals, size_t n, unsigned line)
{
    char **v = realloc(l->v, (l->n + n) * sizeof *v);
    if (!v)
        return NARVAL_E_NOMEM;
    l->v = v;
    unsigned *lines = realloc(l->line, (l->n + n) * sizeof *lines);
    if (!lines)
        return NARVAL_E_NOMEM;
    l->line = lines;
    for (size_t i = 0; i < n; i++) {
        if (!(l->v[l->n] = strdup(vals[i])))
            return NARVAL_E_NOMEM;
        l->line[l->n++] = line;
    }
    return 0;
}

/* Stores the values of one key into the settings; why says what is wrong with a value. */
static unsigned store(const kit_key *k, void *settings, char **vals, size_t n, unsigned line,
                      char *why, size_t len)
{
    void *field = (char *)settings + k->offset;
    switch (k->type) {
    case KIT_INT: {
        int64_t v;
        if (k->word && strcmp(vals[0], k->word) == 0) {
            *(int64_t *)field = k->word_value;
            return 0;
        }
        if (parse_int(vals[0], &v, why, len) || check_range(k, vals[0], (double)v, why, len))
            return NARVAL_E_CONFIG;
        *(int64_t *)field = v;
        return 0;
    }
    case KIT_REAL: {
        double v;
        if (parse_real(vals[0], &v, why, len) || check_range(k, vals[0], v, why, len))
            return NARVAL_E_CONFIG;
        *(double *)field = v;
        return 0;
    }
    case KIT_BOOL:
        return parse_bool(vals[0], (bool *)field, why, len) ? NARVAL_E_CONFIG : 0;
    case KIT_STRING:
        return (*(char **)field = strdup(vals[0])) ? 0 : NARVAL_E_NOMEM;
    case KIT_LIST:
        return append_list(field, vals, n, line);
    }
    snprintf(why, len, "unknown type %d in the actor's table", (int)k->type);
    return NARVAL_E_INTERNAL;
}

static const kit_key *find_key(const kit_spec *spec, const char *name)
{
    for (size_t i = 0; i < spec->n_keys; i++)
        if (strcmp(spec->keys[i].name, name) == 0)
            return &spec->keys[i];
    return NULL;
}

static void list_keys(const kit_spec *spec, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    for (size_t i = 0; i < spec->n_keys && at < len; i++) {
        int n = snprintf(out + at, len - at, "%s%s", i ? ", " : "", spec->keys[i].name);
        at += n < 0 ? 0 : (size_t)n;
    }
}

static unsigned parse_line(parse *p, tokens *t)
{
    const kit_key *k = find_key(p->spec, t->v[0]);
    char why[512];
    if (!k) {
        list_keys(p->spec, why, sizeof why);
        return fail_at(p, NARVAL_E_CONFIG, NULL, "key '%s': unknown key (%s takes: %s)", t->v[0],
                       p->spec->actor, why);
    }
    unsigned *set = &p->set_line[k - p->spec->keys];
    if (*set && k->type != KIT_LIST)
        return fail_at(p, NARVAL_E_CONFIG, k, "set twice (first on line %u)", *set);
    if (t->n < 2)
        return fail_at(p, NARVAL_E_CONFIG, k, "no value");
    if (t->n > 2 && k->type != KIT_LIST)
        return fail_at(p, NARVAL_E_CONFIG, k, "takes one value, but '%s' follows '%s'", t->v[2],
                       t->v[1]);
    if (!*set)
        *set = p->line;
    unsigned code = store(k, p->settings, t->v + 1, t->n - 1, p->line, why, sizeof why);
    if (code == NARVAL_E_NOMEM)
        return fail_at(p, code, k, "out of memory");
    return code ? fail_at(p, code, k, "%s", why) : 0;
}

static unsigned parse_file(parse *p, FILE *fp)
{
    tokens t = { 0 };
    char *buf = NULL;
    size_t cap = 0;
    ssize_t got;
    unsigned code = 0;
    while (!code && (got = getline(&buf, &cap, fp)) >= 0) {
        p->line++;
        if (strlen(buf) != (size_t)got) {
            code = fail_at(p, NARVAL_E_CONFIG, NULL, "the line holds a NUL byte");
            break;
        }
        int rc = tokenize(buf, &t);
        if (rc == TOK_NOMEM)
            code = fail_at(p, NARVAL_E_NOMEM, NULL, "out of memory");
        else if (rc == TOK_QUOTE)
            code = fail_at(p, NARVAL_E_CONFIG, NULL,
                           "a double quote is not closed, or not at the edge of a value");
        else if (t.n)
            code = parse_line(p, &t);
    }
    if (!code && ferror(fp)) {
        p->line = 0;
        code = fail_at(p, NARVAL_E_CONFIG, NULL, "cannot read: %s", strerror(errno));
    }
    free(buf);
    free(t.v);
    return code;
}

/* Parses an actor's built-in default; a default that does not parse is a bug of the actor. */
static unsigned store_default(parse *p, const kit_key *k)
{
    char why[512];
    tokens t = { 0 };
    char *text = strdup(k->def);
    int rc = text ? tokenize(text, &t) : TOK_NOMEM;
    unsigned code = rc == TOK_NOMEM ? NARVAL_E_NOMEM : 0;
    if (!code && (rc == TOK_QUOTE || t.n == 0 || (t.n > 1 && k->type != KIT_LIST))) {
        snprintf(why, sizeof why, "it is not exactly %s", k->type == KIT_LIST ? "a list" : "one value");
        code = NARVAL_E_INTERNAL;
    } else if (!code) {
        code = store(k, p->settings, t.v, t.n, 0, why, sizeof why);
    }
    free(text);
    free(t.v);
    if (code == NARVAL_E_NOMEM)
        return fail_at(p, code, k, "out of memory");
    if (code)
        return fail_at(p, NARVAL_E_INTERNAL, k, "the actor's default '%s' is invalid: %s", k->def,
                       why);
    return 0;
}

/* Keys the file did not set: their default, or an error for a mandatory one. */
static unsigned apply_defaults(parse *p, bool file_missing)
{
    p->line = 0;
    for (size_t i = 0; i < p->spec->n_keys; i++) {
        const kit_key *k = &p->spec->keys[i];
        unsigned code = 0;
        if (p->set_line[i])
            continue;
        if (!k->def)
            return fail_at(p, NARVAL_E_CONFIG, k, "mandatory, but %s",
                           file_missing ? "the file does not exist" : "not set");
        if ((code = store_default(p, k)) != 0)
            return code;
    }
    return 0;
}

static char *path_in(const char *dir, size_t n, const char *actor)
{
    const char *sep = n == 0 || dir[n - 1] == '/' ? "" : "/"; /* "" is the working directory */
    size_t len = n + strlen(sep) + strlen(actor) + sizeof ".conf";
    char *path = malloc(len);
    if (path)
        snprintf(path, len, "%.*s%s%s.conf", (int)n, dir, sep, actor);
    return path;
}

/* dir may list several directories separated by ':', most specific first:
 * the file is taken from the first that has it (the first names it if none). */
/* The file a link in a host's private configuration directory stands for
 * (the emulator gives each actor a directory of links), so that messages
 * name the file the user edits; other paths as they are. */
static char *named_as_read(char *path)
{
    struct stat st;
    if (!path || lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
        return path;
    char *real = realpath(path, NULL);
    if (!real)
        return path;
    free(path);
    return real;
}

char *kit_conf_path(const char *dir, const char *actor)
{
    char *first = NULL;
    for (const char *d = dir;; d++) {
        size_t n = strcspn(d, ":");
        char *path = path_in(d, n, actor);
        if (!path || access(path, F_OK) == 0) {
            free(first);
            return named_as_read(path);
        }
        if (!first)
            first = path;
        else
            free(path);
        d += n;
        if (!*d)
            return first;
    }
}

/* The lines of the last file read in full, for kit_key_line. */
static struct {
    const kit_spec *spec;
    unsigned *line;
} last;

__attribute__((destructor)) static void free_last_lines(void) { free(last.line); }

unsigned kit_key_line(const char *key)
{
    for (size_t i = 0; last.spec && i < last.spec->n_keys; i++)
        if (strcmp(last.spec->keys[i].name, key) == 0)
            return last.line[i];
    return 0;
}

unsigned kit_config_load(const kit_spec *spec, const char *dir, void *settings, char *msg,
                         size_t len)
{
    parse p = { .spec = spec, .msg = msg, .len = len };
    FILE *fp = NULL;
    unsigned code;
    snprintf(msg, len, "%s: no configuration directory given", spec->actor);
    if (!dir)
        return NARVAL_E_CONFIG;
    snprintf(msg, len, "%s: out of memory", spec->actor);
    p.path = kit_conf_path(dir, spec->actor);
    p.set_line = calloc(spec->n_keys + 1, sizeof *p.set_line);
    p.settings = calloc(1, spec->size);
    if (!p.path || !p.set_line || !p.settings) {
        code = NARVAL_E_NOMEM;
        goto fail;
    }
    fp = fopen(p.path, "r");
    if (!fp && errno != ENOENT) {
        code = fail_at(&p, NARVAL_E_CONFIG, NULL, "cannot open: %s", strerror(errno));
        goto fail;
    }
    code = fp ? parse_file(&p, fp) : 0;
    if (code || (code = apply_defaults(&p, fp == NULL)) != 0)
        goto fail;
    if (!fp)
        kit_log(spec->actor, KIT_INFO, "no %s: every key takes its default", p.path);
    kit_config_free(spec, settings);
    memcpy(settings, p.settings, spec->size);
    free(p.settings);
    p.settings = NULL;
    free(last.line);
    last.spec = spec;
    last.line = p.set_line;
    p.set_line = NULL;
fail:
    if (fp)
        fclose(fp);
    if (p.settings) {
        kit_config_free(spec, p.settings);
        free(p.settings);
    }
    free(p.set_line);
    free(p.path);
    return code;
}

void kit_config_free(const kit_spec *spec, void *settings)
{
    for (size_t i = 0; i < spec->n_keys; i++) {
        void *field = (char *)settings + spec->keys[i].offset;
        if (spec->keys[i].type == KIT_STRING) {
            free(*(char **)field);
        } else if (spec->keys[i].type == KIT_LIST) {
            kit_list *l = field;
            for (size_t j = 0; j < l->n; j++)
                free(l->v[j]);
            free(l->v);
            free(l->line);
        }
    }
    memset(settings, 0, spec->size);
}

/* describe.c: the text of process_describe, built from an actor's table of configuration keys. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kit.h"

typedef struct text {
    char *buf;
    size_t cap, at;
} text;

static void add(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends without ever overrunning; a text that does not fit ends cut short. */
static void add(text *t, const char *fmt, ...)
{
    if (t->at >= t->cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->at, t->cap - t->at, fmt, ap);
    va_end(ap);
    t->at += n < 0 ? 0 : (size_t)n;
}

static const char *type_name(kit_type type)
{
    static const char *const names[] = { "integer", "real", "string", "boolean", "list" };
    return (unsigned)type < KIT_COUNT(names) ? names[type] : "?";
}

static void format_range(const kit_key *k, char *out, size_t len)
{
    char lo[32], hi[32], word[40] = "";
    kit_format_number(k, k->min, lo, sizeof lo);
    kit_format_number(k, k->max, hi, sizeof hi);
    if (k->type == KIT_INT && k->word)
        snprintf(word, sizeof word, " or %s", k->word);
    if (k->has_min && k->has_max)
        snprintf(out, len, "[%s, %s]%s", lo, hi, word);
    else if (k->has_min)
        snprintf(out, len, ">= %s%s", lo, word);
    else if (k->has_max)
        snprintf(out, len, "<= %s%s", hi, word);
    else
        snprintf(out, len, "%s", *word ? word + 4 : "-");
}

static const char *default_text(const kit_key *k)
{
    if (!k->def)
        return "(mandatory)";
    return *k->def ? k->def : "\"\"";
}

const char *kit_describe(const kit_spec *spec)
{
    static char buf[16384];
    text t = { buf, sizeof buf, 0 };
    int wkey = 3, wtype = 4, wdef = 7, wrange = 5;
    char range[80];
    for (size_t i = 0; i < spec->n_keys; i++) {
        const kit_key *k = &spec->keys[i];
        format_range(k, range, sizeof range);
        wkey = (int)strlen(k->name) > wkey ? (int)strlen(k->name) : wkey;
        wtype = (int)strlen(type_name(k->type)) > wtype ? (int)strlen(type_name(k->type)) : wtype;
        wdef = (int)strlen(default_text(k)) > wdef ? (int)strlen(default_text(k)) : wdef;
        wrange = (int)strlen(range) > wrange ? (int)strlen(range) : wrange;
    }
    add(&t, "%s (%s): %s\n", spec->actor, spec->role, spec->summary);
    add(&t, "configuration file: %s.conf%s\n", spec->actor, spec->n_keys ? "" : " (no keys)");
    if (spec->n_keys)
        add(&t, "  %-*s  %-*s  %-*s  %-*s  %s\n", wkey, "key", wtype, "type", wdef, "default",
            wrange, "range", "description");
    for (size_t i = 0; i < spec->n_keys; i++) {
        const kit_key *k = &spec->keys[i];
        format_range(k, range, sizeof range);
        add(&t, "  %-*s  %-*s  %-*s  %-*s  %s\n", wkey, k->name, wtype, type_name(k->type), wdef,
            default_text(k), wrange, range, k->help ? k->help : "");
    }
    return buf;
}

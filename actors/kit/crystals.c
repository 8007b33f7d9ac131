/* crystals.c: reads a `Crystals` key (all, ids, ranges A-B) into the set of crystals an actor handles. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit_crystals.h"

static unsigned bad(const kit_list *l, size_t i, const char *file, const char *key, char *msg, size_t len,
                    const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static unsigned bad(const kit_list *l, size_t i, const char *file, const char *key, char *msg, size_t len,
                    const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    unsigned line = i < l->n && l->line ? l->line[i] : 0;
    if (line)
        snprintf(msg, len, "%s:%u: key '%s': %s", file, line, key, why);
    else
        snprintf(msg, len, "%s: key '%s': %s", file, key, why);
    return NARVAL_E_CONFIG;
}

/* One id 0..65535, all of s; -1 otherwise. */
static long parse_id(const char *s, const char *end)
{
    if (s == end || end - s > 5)
        return -1;
    long v = 0;
    for (; s < end; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = 10 * v + (*s - '0');
    }
    return v <= 65535 ? v : -1;
}

/* "A" or "A-B" into [*lo, *hi]. */
static int parse_range(const char *s, long *lo, long *hi)
{
    const char *dash = strchr(s, '-'), *end = s + strlen(s);
    *lo = parse_id(s, dash ? dash : end);
    *hi = dash ? parse_id(dash + 1, end) : *lo;
    return *lo < 0 || *hi < 0 ? -1 : 0;
}

unsigned kit_crystals_read(const kit_list *l, const char *file, const char *key, kit_crystals *c, char *msg,
                           size_t len)
{
    memset(c, 0, sizeof *c);
    if (l->n == 1 && strcmp(l->v[0], "all") == 0) {
        c->all = true;
        return 0;
    }
    if (l->n == 0)
        return bad(l, 0, file, key, msg, len, "needs 'all' or crystal ids");
    for (size_t i = 0; i < l->n; i++) {
        long lo, hi;
        if (parse_range(l->v[i], &lo, &hi))
            return bad(l, i, file, key, msg, len, "'%s' is neither an id 0..65535 nor a range A-B%s", l->v[i],
                       strcmp(l->v[i], "all") == 0 ? " ('all' stands alone)" : "");
        if (lo > hi)
            return bad(l, i, file, key, msg, len, "the range '%s' is empty (%ld > %ld)", l->v[i], lo, hi);
        for (long id = lo; id <= hi; id++) {
            if (c->on[id >> 3] >> (id & 7) & 1)
                return bad(l, i, file, key, msg, len, "crystal %ld is listed twice", id);
            c->on[id >> 3] |= (uint8_t)(1u << (id & 7));
            c->n++;
        }
    }
    if (!(c->id = malloc(c->n * sizeof *c->id))) {
        snprintf(msg, len, "%s: key '%s': no memory for %zu crystal ids", file, key, c->n);
        return NARVAL_E_NOMEM;
    }
    size_t k = 0;
    for (unsigned id = 0; id < 65536u; id++)
        if (c->on[id >> 3] >> (id & 7) & 1)
            c->id[k++] = (uint16_t)id;
    return 0;
}

void kit_crystals_free(kit_crystals *c)
{
    free(c->id);
    c->id = NULL;
    c->n = 0;
}

void kit_crystals_describe(const kit_crystals *c, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    if (c->all) {
        snprintf(out, len, "all");
        return;
    }
    for (size_t i = 0; i < c->n && at < len;) {
        size_t j = i;
        while (j + 1 < c->n && c->id[j + 1] == c->id[j] + 1)
            j++;
        int n = j > i ? snprintf(out + at, len - at, "%s%u-%u", i ? " " : "", c->id[i], c->id[j])
                      : snprintf(out + at, len - at, "%s%u", i ? " " : "", c->id[i]);
        if (n < 0 || (size_t)n >= len - at) {
            if (len >= 4)
                snprintf(out + len - 4, 4, "...");
            return;
        }
        at += (size_t)n;
        i = j + 1;
    }
}

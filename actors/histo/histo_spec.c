/* histo_spec.c: reads the Histogram, Plot and Formats keys of Histo.conf into declarations, naming the file and line of any error. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "histo_cpu.h"
#include "histo_spec.h"

#define ALL_SCOPES (1u << HISTO_SUM | 1u << HISTO_PER_CRYSTAL | 1u << HISTO_PER_SEGMENT)
#define NO_SEGMENT (1u << HISTO_SUM | 1u << HISTO_PER_CRYSTAL)
#define SUM_ONLY (1u << HISTO_SUM)
/* 128 GiB of 64-bit counts: beyond this a declaration is a typo, not a plan. */
#define MAX_SLOTS ((uint64_t)1 << 34)

/* A gamma-gamma matrix is RadWare's 4096 x 4096 of 1 keV unless declared otherwise. */
static const char *const gg_axes[] = { "4096", "0", "4096", "4096", "0", "4096" };

const histo_quantity_info histo_quantities[HISTO_Q_COUNT] = {
    [HISTO_Q_CRYSTAL_SEGMENT] = { "crystal.segment", HISTO_FROM_CRYSTAL, 1, ALL_SCOPES,
                                  { "segment energy (keV)", NULL } },
    [HISTO_Q_CRYSTAL_CORE] = { "crystal.core", HISTO_FROM_CRYSTAL, 1, NO_SEGMENT,
                               { "core energy (keV)", NULL } },
    [HISTO_Q_PSA_E] = { "psa.e", HISTO_FROM_PSA, 1, ALL_SCOPES, { "hit energy (keV)", NULL } },
    [HISTO_Q_PSA_X] = { "psa.x", HISTO_FROM_PSA, 1, ALL_SCOPES, { "hit x (mm)", NULL } },
    [HISTO_Q_PSA_Y] = { "psa.y", HISTO_FROM_PSA, 1, ALL_SCOPES, { "hit y (mm)", NULL } },
    [HISTO_Q_PSA_Z] = { "psa.z", HISTO_FROM_PSA, 1, ALL_SCOPES, { "hit z (mm)", NULL } },
    [HISTO_Q_PSA_CORE] = { "psa.core", HISTO_FROM_PSA, 1, NO_SEGMENT,
                           { "core energy e0 (keV)", NULL } },
    [HISTO_Q_TRACKED_E] = { "tracked.e", HISTO_FROM_TRACKED, 1, SUM_ONLY,
                            { "gamma energy (keV)", NULL } },
    [HISTO_Q_TRACKED_E_DC] = { "tracked.e_dc", HISTO_FROM_TRACKED, 1, SUM_ONLY,
                               { "Doppler-corrected gamma energy (keV)", NULL } },
    [HISTO_Q_GG_E] = { "gg.e", HISTO_FROM_TRACKED, 2, SUM_ONLY,
                       { "gamma energy (keV)", "coincident gamma energy (keV)" }, gg_axes },
    [HISTO_Q_GG_E_DC] = { "gg.e_dc", HISTO_FROM_TRACKED, 2, SUM_ONLY,
                          { "Doppler-corrected gamma energy (keV)",
                            "coincident Doppler-corrected gamma energy (keV)" }, gg_axes },
    [HISTO_Q_PSA_XY] = { "psa.xy", HISTO_FROM_PSA, 2, NO_SEGMENT,
                         { "hit x (mm)", "hit y (mm)" } },
};

static const char *const scope_names[] = { [HISTO_SUM] = "sum", [HISTO_PER_CRYSTAL] = "crystal",
                                           [HISTO_PER_SEGMENT] = "segment" };

typedef struct parser {
    const histo_spec_keys *k;
    char *msg;
    size_t len;
} parser;

static histo_status fail(const parser *p, const char *key, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Errors read like the kit's: "<file>:<line>: key '<key>': <reason>". */
static histo_status fail(const parser *p, const char *key, unsigned line, const char *fmt, ...)
{
    int n = line ? snprintf(p->msg, p->len, "%s:%u: key '%s': ", p->k->path, line, key)
                 : snprintf(p->msg, p->len, "%s: key '%s' (default): ", p->k->path, key);
    size_t at = n < 0 ? 0 : (size_t)n;
    if (at < p->len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->msg + at, p->len - at, fmt, ap);
        va_end(ap);
    }
    return HISTO_E_CONFIG;
}

static int find_quantity(const char *name)
{
    for (int q = 0; q < HISTO_Q_COUNT; q++)
        if (strcmp(histo_quantities[q].name, name) == 0)
            return q;
    return -1;
}

static void list_quantities(char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    for (int q = 0; q < HISTO_Q_COUNT && at < len; q++) {
        int n = snprintf(out + at, len - at, "%s%s", q ? ", " : "", histo_quantities[q].name);
        at += n < 0 ? 0 : (size_t)n;
    }
}

static bool valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > HISTO_NAME_MAX || strcmp(s, "all") == 0 || strcmp(s, "none") == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", s[i]))
            return false;
    return true;
}

static uint32_t instances_of(const histo_spec *s, histo_scope scope)
{
    return scope == HISTO_SUM           ? 1
           : scope == HISTO_PER_CRYSTAL ? s->crystals
                                        : s->crystals * s->segments;
}

/* One axis from three values: BINS LO HI. */
static histo_status parse_axis(const parser *p, unsigned line, const char *name,
                               const char *const *v, histo_axis *a)
{
    char *end;
    errno = 0;
    long long bins = strtoll(v[0], &end, 10);
    if (end == v[0] || *end || errno || bins < 1 || bins > HISTO_MAX_BINS)
        return fail(p, "Histogram", line, "'%s': bins '%s' is not an integer from 1 to %u", name,
                    v[0], HISTO_MAX_BINS);
    double lim[2];
    for (int i = 0; i < 2; i++) {
        errno = 0;
        lim[i] = strtod(v[1 + i], &end);
        if (end == v[1 + i] || *end || errno)
            return fail(p, "Histogram", line, "'%s': %s '%s' is not a finite number", name,
                        i ? "upper edge" : "lower edge", v[1 + i]);
    }
    if (histo_axis_make(a, (uint32_t)bins, lim[0], lim[1]) != 0 || !isfinite(a->hi) || !isfinite(a->lo) ||
        !(a->scale > 0) || !isfinite(a->scale))
        return fail(p, "Histogram", line, "'%s': the range [%s, %s) is empty or not finite in "
                    "single precision", name, v[1], v[2]);
    /* each bin's edges must be distinct floats, or values of several bins land in one */
    float far = fabsf(a->lo) > fabsf(a->hi) ? fabsf(a->lo) : fabsf(a->hi);
    if ((double)(a->hi - a->lo) / (double)bins < (double)(nextafterf(far, INFINITY) - far))
        return fail(p, "Histogram", line, "'%s': %lld bins over [%s, %s) are narrower than a float's "
                    "step there (%g): fewer bins or a narrower range", name, bins, v[1], v[2],
                    (double)(nextafterf(far, INFINITY) - far));
    return 0;
}

/* A declaration at v[0..]: NAME QUANTITY SCOPE BINS LO HI [BINS LO HI]; *used = tokens taken. */
static histo_status parse_decl(const parser *p, histo_spec *s, char *const *v, const unsigned *lines,
                               size_t left, size_t *used)
{
    histo_decl *d = &s->decl[s->n_decl];
    unsigned line = lines[0];
    char known[512];
    if (left < 3)
        return fail(p, "Histogram", line, "'%s' is incomplete: write NAME QUANTITY SCOPE BINS "
                    "LO HI (and BINS LO HI again for a matrix)", v[0]);
    if (!valid_name(v[0]))
        return fail(p, "Histogram", line, "name '%s' must be 1 to %d letters, digits, '_' or "
                    "'-' (it names files), and not 'all' or 'none'", v[0], HISTO_NAME_MAX);
    int q = find_quantity(v[1]);
    if (q < 0) {
        list_quantities(known, sizeof known);
        return fail(p, "Histogram", line, "'%s': unknown quantity '%s' (known: %s)", v[0], v[1],
                    known);
    }
    const histo_quantity_info *info = &histo_quantities[q];
    int scope = -1;
    for (int i = 0; i < 3; i++)
        if (strcmp(v[2], scope_names[i]) == 0)
            scope = i;
    if (scope < 0 || !(info->scopes & 1u << scope))
        return fail(p, "Histogram", line, "'%s': scope '%s' is not one of those %s allows "
                    "(%s%s%s)", v[0], v[2], info->name, "sum",
                    info->scopes & 1u << HISTO_PER_CRYSTAL ? ", crystal" : "",
                    info->scopes & 1u << HISTO_PER_SEGMENT ? ", segment" : "");
    /* NAME QUANTITY SCOPE alone on its line takes the quantity's default axes. */
    bool short_form = info->axes && line && (left == 3 || lines[3] != line);
    const char *const *axes = short_form ? info->axes : (const char *const *)v + 3;
    size_t need = short_form ? 3 : 3 + 3 * info->dims;
    if (left < need)
        return fail(p, "Histogram", line, "'%s': %s needs %u values after the scope (BINS LO HI "
                    "per axis), found %zu", v[0], info->name, 3 * info->dims, left - 3);
    for (size_t i = 1; i < need; i++)
        if (lines[i] != line)
            return fail(p, "Histogram", line, "'%s': the declaration continues on line %u; write "
                        "one declaration per Histogram line", v[0], lines[i]);
    if (need < left && lines[need] == line && line)
        return fail(p, "Histogram", line, "'%s': '%s' follows the last value of the declaration "
                    "(one declaration per line)", v[0], v[need]);
    for (size_t i = 0; i < s->n_decl; i++)
        if (strcmp(s->decl[i].name, v[0]) == 0)
            return fail(p, "Histogram", line, "name '%s' is already declared on line %u", v[0],
                        s->decl[i].line);
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", v[0]);
    d->q = (histo_quantity)q;
    d->scope = (histo_scope)scope;
    d->line = line;
    d->g.dims = info->dims;
    for (unsigned a = 0; a < info->dims; a++) {
        histo_status code = parse_axis(p, line, v[0], axes + 3 * a, &d->g.ax[a]);
        if (code)
            return code;
    }
    uint64_t bins = d->g.ax[0].bins * (uint64_t)(info->dims == 2 ? d->g.ax[1].bins : 1);
    d->g.instances = instances_of(s, d->scope);
    d->g.slots = bins + HISTO_EXTRA;
    d->g.offset = s->slots;
    s->slots += d->g.slots * d->g.instances;
    if (s->slots > MAX_SLOTS)
        return fail(p, "Histogram", line, "'%s': the histograms declared so far need %.0f GiB of "
                    "counts, more than the %.0f GiB this actor accepts", v[0],
                    s->slots * 8.0 / (1u << 30), MAX_SLOTS * 8.0 / (1u << 30));
    s->needs[info->source] = true;
    s->n_decl++;
    *used = need;
    return 0;
}

static histo_status parse_histograms(const parser *p, histo_spec *s)
{
    const histo_values *l = &p->k->histograms;
    if (!(s->decl = calloc(l->n / 3 + 1, sizeof *s->decl)))
        return HISTO_E_NOMEM;
    for (size_t i = 0, used = 0; i < l->n; i += used) {
        histo_status code = parse_decl(p, s, l->v + i, l->line + i, l->n - i, &used);
        if (code)
            return code;
    }
    return 0;
}

static const histo_decl *find_decl(const histo_spec *s, const char *name, size_t n)
{
    for (size_t i = 0; i < s->n_decl; i++)
        if (strlen(s->decl[i].name) == n && strncmp(s->decl[i].name, name, n) == 0)
            return &s->decl[i];
    return NULL;
}

/* The whole family of a 1D declaration, summed. */
static void plot_all(histo_spec *s, const histo_decl *d)
{
    histo_plot *pl = &s->plot[s->n_plot++];
    pl->decl = (size_t)(d - s->decl);
    pl->first = 0;
    pl->count = d->g.instances;
    snprintf(pl->file, sizeof pl->file, "%s", d->name);
    if (d->g.instances > 1)
        snprintf(pl->what, sizeof pl->what, "sum of %u histograms", d->g.instances);
}

/* NAME, NAME:cC or NAME:cCsS. */
static histo_status parse_plot(const parser *p, histo_spec *s, const char *v, unsigned line)
{
    const char *colon = strchr(v, ':');
    size_t n = colon ? (size_t)(colon - v) : strlen(v);
    const histo_decl *d = find_decl(s, v, n);
    if (!d)
        return fail(p, "Plot", line, "'%.*s' is not a declared histogram", (int)n, v);
    if (d->g.dims != 1)
        return fail(p, "Plot", line, "'%s' is a matrix; plots are made of 1D spectra", d->name);
    if (!colon) {
        plot_all(s, d);
        return 0;
    }
    unsigned c, seg;
    int end = 0;
    bool with_seg = sscanf(colon + 1, "c%us%u%n", &c, &seg, &end) == 2 && colon[1 + end] == '\0';
    if (!with_seg && !(sscanf(colon + 1, "c%u%n", &c, &end) == 1 && colon[1 + end] == '\0'))
        return fail(p, "Plot", line, "'%s': after ':' write cC (a crystal) or cCsS (a segment)", v);
    if (d->scope == HISTO_SUM || (with_seg && d->scope != HISTO_PER_SEGMENT))
        return fail(p, "Plot", line, "'%s': histogram '%s' has scope %s, which has no %s", v,
                    d->name, scope_names[d->scope], with_seg ? "segments" : "crystals");
    if (c >= s->crystals || (with_seg && seg >= s->segments))
        return fail(p, "Plot", line, "'%s': crystal %u or segment beyond Crystals %u, Segments "
                    "%u", v, c, s->crystals, s->segments);
    histo_plot *pl = &s->plot[s->n_plot++];
    pl->decl = (size_t)(d - s->decl);
    bool per_seg = d->scope == HISTO_PER_SEGMENT;
    pl->first = per_seg ? c * s->segments + (with_seg ? seg : 0) : c;
    pl->count = per_seg && !with_seg ? s->segments : 1;
    if (with_seg) {
        snprintf(pl->file, sizeof pl->file, "%s_c%03u_s%02u", d->name, c, seg);
        snprintf(pl->what, sizeof pl->what, "crystal %u segment %u", c, seg);
    } else {
        snprintf(pl->file, sizeof pl->file, "%s_c%03u", d->name, c);
        snprintf(pl->what, sizeof pl->what, per_seg ? "crystal %u, all segments" : "crystal %u",
                 c);
    }
    return 0;
}

static histo_status parse_plots(const parser *p, histo_spec *s)
{
    const histo_values *l = &p->k->plots;
    if (!(s->plot = calloc(l->n + s->n_decl + 1, sizeof *s->plot)))
        return HISTO_E_NOMEM;
    for (size_t i = 0; i < l->n; i++) {
        bool word = strcmp(l->v[i], "all") == 0 || strcmp(l->v[i], "none") == 0;
        if (word && l->n > 1)
            return fail(p, "Plot", l->line[i], "'%s' must be the only value of Plot", l->v[i]);
        if (strcmp(l->v[i], "all") == 0) {
            for (size_t k = 0; k < s->n_decl; k++)
                if (s->decl[k].g.dims == 1)
                    plot_all(s, &s->decl[k]);
        } else if (!word) {
            histo_status code = parse_plot(p, s, l->v[i], l->line[i]);
            if (code)
                return code;
        }
    }
    return 0;
}

static histo_status parse_formats(const parser *p, histo_spec *s)
{
    const histo_values *l = &p->k->formats;
    static const struct {
        const char *name;
        unsigned bit;
    } known[] = { { "spe", HISTO_SPE }, { "csv", HISTO_CSV }, { "m4b", HISTO_M4B }, { "none", 0 } };
    for (size_t i = 0; i < l->n; i++) {
        size_t k = 0;
        while (k < sizeof known / sizeof known[0] && strcmp(l->v[i], known[k].name) != 0)
            k++;
        if (k == sizeof known / sizeof known[0])
            return fail(p, "Formats", l->line[i], "unknown format '%s' (spe, csv, m4b or none)",
                        l->v[i]);
        if (known[k].bit == 0 && l->n > 1)
            return fail(p, "Formats", l->line[i], "'none' must be the only value of Formats");
        s->formats |= known[k].bit;
    }
    return 0;
}

histo_status histo_spec_build(histo_spec *s, const histo_spec_keys *k, char *msg, size_t len)
{
    parser p = { k, msg, len };
    histo_status code;
    s->crystals = (uint32_t)k->crystals;
    s->segments = (uint32_t)k->segments;
    if ((code = parse_histograms(&p, s)) || (code = parse_plots(&p, s)) ||
        (code = parse_formats(&p, s))) {
        if (code == HISTO_E_NOMEM)
            snprintf(msg, len, "%s: out of memory for the declarations", k->path);
        histo_spec_free(s);
        return code;
    }
    return 0;
}

void histo_spec_free(histo_spec *s)
{
    free(s->decl);
    free(s->plot);
    memset(s, 0, sizeof *s);
}

void histo_spec_instance_name(const histo_spec *s, const histo_decl *d, uint32_t i, char *out,
                              size_t len)
{
    if (d->scope == HISTO_SUM)
        snprintf(out, len, "%s", d->name);
    else if (d->scope == HISTO_PER_CRYSTAL)
        snprintf(out, len, "%s_c%03u", d->name, i);
    else
        snprintf(out, len, "%s_c%03u_s%02u", d->name, i / s->segments, i % s->segments);
}

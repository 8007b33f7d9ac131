/* gen_conf.c: Generator.conf: the keys, their defaults, and the checks that turn them into a source, outputs and trace settings. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

#define KEY(name, type, field, def, ...) {name, type, offsetof(gen_conf, field), def, __VA_ARGS__}

static const kit_key gen_keys[] = {
    KEY("Array", KIT_STRING, array, "detector/arrays/agata180.txt",
        .help = "array file: Narwhal's format or a CrystalPositionLookUpTable (detector/README.md)"),
    KEY("Crystal", KIT_STRING, crystal, "detector/geometry/agata.geo", .help = "crystal geometry file"),
    KEY("Basis", KIT_STRING, basis, "build/cache/default.basis",
        .help = "signal basis file (detector/basis.h); read when Output has crystal"),
    KEY("Bases", KIT_LIST, bases, "none",
        .help = "an array that names its crystals' shapes (agata180-atc.txt: AGATA's A, B, C): one basis per "
                "shape, in the array's order (their crystals must be the shapes'); none: the array has one shape, "
                "the Basis key's"),
    KEY("Seed", KIT_INT, seed, "1", KIT_MIN(0), .help = "random seed: the same seed gives the same bytes"),
    KEY("Events", KIT_INT, events, "10000", KIT_RANGE(0, 4294967295.0),
        .help = "events to simulate per run, then meta:eof and the end of data (0: until the run is stopped)"),
    KEY("Threads", KIT_INT, threads, "0", KIT_RANGE(0, 256), .help = "OpenMP threads (0: OpenMP's default)"),
    KEY("Source", KIT_LIST, source, "lines",
        .help = "lines, cascade, continuum, gammaevents, or a nuclide whose decays are the events: 60Co, 152Eu, "
                "133Ba, 56Co or 137Cs (evaluated decay schemes, sim/decay.c; co60 and cs137 are 60Co and 137Cs)"),
    KEY("GammaEventsInput", KIT_STRING, gammaevents_input, "none",
        .help = "Source gammaevents: the GammaEvents file whose interactions are the events"),
    KEY("Lines", KIT_LIST, lines, "1332.492 1", .help = "Source lines: pairs 'energy/keV intensity', one γ per event"),
    KEY("Cascade", KIT_LIST, cascade, "1173.228 1332.492",
        .help = "Source cascade: the energies (keV, 1..30) every event emits"),
    KEY("ContinuumMin", KIT_REAL, continuum_min, "100", KIT_RANGE(10, 20000), .help = "Source continuum: lowest keV"),
    KEY("ContinuumMax", KIT_REAL, continuum_max, "2000", KIT_RANGE(10, 20000), .help = "Source continuum: highest keV"),
    KEY("Multiplicity", KIT_INT, multiplicity, "1", KIT_RANGE(1, SIM_MAX_MULTIPLICITY),
        .help = "Source continuum: γ rays per event"),
    KEY("Beta", KIT_REAL, beta, "0", KIT_RANGE(0, 0.9), .help = "v/c of the emitter along +z (Doppler shift)"),
    KEY("Origin", KIT_LIST, origin, "0 0 0", .help = "source position x y z, mm, lab"),
    KEY("Direction", KIT_LIST, direction, "isotropic", .help = "isotropic, or dx dy dz of a pencil beam"),
    KEY("Rate", KIT_REAL, rate, "50000", KIT_RANGE(1e-3, 1e9), .help = "events per second: Poisson timestamps (10 ns)"),
    KEY("Packing", KIT_LIST, packing, "segment", .help = "segment: one interaction per γ and segment; none"),
    KEY("Threshold", KIT_REAL, threshold, "10", KIT_RANGE(0, 1e5), .help = "keV a crystal needs to fire"),
    KEY("FWHMConstant", KIT_REAL, fwhm_a, "1", KIT_RANGE(0, 1e4), .help = "a in FWHM = sqrt(a + b E/MeV), keV^2"),
    KEY("FWHMSlope", KIT_REAL, fwhm_b, "3.7", KIT_RANGE(0, 1e4), .help = "b in FWHM = sqrt(a + b E/MeV), keV^2/MeV"),
    KEY("Output", KIT_LIST, output, "crystal truth", .help = "frames to emit: crystal (data:crystal), truth"),
    KEY("Crystals", KIT_LIST, crystals, "all",
        .help = "whose data:crystal frames to emit: all, or ids and ranges (175 176, 0-2) of the array; every "
                "instance simulates every event whole (same Seed, same events), so producers of disjoint "
                "selections together emit the frames of one with all; a selection also emits meta:sync"),
    KEY("SyncEvery", KIT_INT, sync_every, "100000", KIT_RANGE(0, 281474976710655.0),
        .help = "with a Crystals selection: 10 ns ticks between meta:sync rounds (one frame per selected "
                "crystal, before the first event at or past each multiple, and one round before meta:eof); "
                "0: none"),
    KEY("Samples", KIT_INT, samples, "100", KIT_RANGE(1, ADF_MAX_SAMPLES), .help = "samples per trace (10 ns)"),
    KEY("PreTrigger", KIT_INT, pre_trigger, "10", KIT_RANGE(0, ADF_MAX_SAMPLES - 1),
        .help = "samples before the signal starts"),
    KEY("ADCBits", KIT_INT, adc_bits, "14", KIT_RANGE(8, 16), .help = "ADC resolution; values clip to 0..2^bits-1"),
    KEY("Gain", KIT_REAL, gain, "1", KIT_RANGE(1e-3, 1e3), .help = "ADC counts per keV"),
    KEY("Baseline", KIT_REAL, baseline, "8192", KIT_RANGE(0, 65535),
        .help = "ADC counts at zero signal (mid-range: the core swings negative)"),
    KEY("NoiseKeV", KIT_REAL, noise, "5", KIT_RANGE(0, 1e4), .help = "trace noise sigma, keV equivalent"),
    KEY("SubtractBaseline", KIT_BOOL, subtract_baseline, "true",
        .help = "frames hold ADC - Baseline (data:crystal's convention); false: raw ADC"),
    KEY("SubSample", KIT_BOOL, sub_sample, "true",
        .help = "random sub-sample start of each event's signals; false: on a sample edge"),
    KEY("GammaEvents", KIT_STRING, gammaevents, "none",
        .help = "also write the events as a GammaEvents text file (none: no), published at each run's stop; "
                "one live instance per file: instance k > 1 of one configuration writes FILE with .k before "
                "its extension (events.txt -> events.2.txt)"),
};

const kit_spec gen_spec = {
    "Generator", "producer",
    "simulates γ rays in the array and emits crystal traces and the truth, then one meta:eof; every run "
    "continues the event numbers (and so the random streams and the clock) where the last one stopped, "
    "reset and initialise included (Source gammaevents reads its file again from the start)",
    gen_keys, KIT_COUNT(gen_keys), sizeof(gen_conf), gen_resolve,
};

gen_conf gen_settings;
gen_plan gen_resolved;

/* Where messages point: the file and, for list keys, the line of a value. */
typedef struct where {
    char path[1024];
    char msg[1700];
} where;

static unsigned bad(where *w, const char *key, const kit_list *l, size_t i, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    unsigned line = l && i < l->n ? l->line[i] : 0;
    if (line)
        snprintf(w->msg, sizeof w->msg, "%s:%u: key '%s': %s", w->path, line, key, why);
    else
        snprintf(w->msg, sizeof w->msg, "%s: key '%s': %s", w->path, key, why);
    return NARVAL_E_CONFIG;
}

static unsigned number(where *w, const char *key, const kit_list *l, size_t i, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(l->v[i], &end);
    if (*end || errno || !isfinite(v))
        return bad(w, key, l, i, "'%s' is not a number", l->v[i]);
    if (v < lo || v > hi)
        return bad(w, key, l, i, "%s is outside [%g, %g]", l->v[i], lo, hi);
    *out = v;
    return 0;
}

static unsigned one_word(where *w, const char *key, const kit_list *l, const char *const *names, int *out)
{
    if (l->n != 1)
        return bad(w, key, l, 1, "takes one value, got %zu", l->n);
    for (int i = 0; names[i]; i++)
        if (strcmp(l->v[0], names[i]) == 0) {
            *out = i;
            return 0;
        }
    return bad(w, key, l, 0, "'%s' is not one of the choices (see narwhal inspect)", l->v[0]);
}

static unsigned read_lines(where *w, sim_source *s)
{
    const kit_list *l = &gen_settings.lines;
    if (l->n == 0 || l->n % 2 || l->n / 2 > SIM_MAX_LINES)
        return bad(w, "Lines", l, l->n ? l->n - 1 : 0, "needs 1..%d pairs 'energy intensity', got %zu values",
                   SIM_MAX_LINES, l->n);
    s->n = (int)(l->n / 2);
    for (int i = 0; i < s->n; i++) {
        unsigned code = number(w, "Lines", l, 2 * (size_t)i, 10, 20000, &s->energy[i]);
        if (code || (code = number(w, "Lines", l, 2 * (size_t)i + 1, 1e-12, 1e12, &s->cumulative[i])))
            return code;
    }
    sim_source_normalise(s);
    return 0;
}

static unsigned read_cascade(where *w, sim_source *s)
{
    const kit_list *l = &gen_settings.cascade;
    if (l->n == 0 || l->n > SIM_MAX_MULTIPLICITY)
        return bad(w, "Cascade", l, l->n ? l->n - 1 : 0, "needs 1..%d energies, got %zu", SIM_MAX_MULTIPLICITY,
                   l->n);
    s->n = (int)l->n;
    for (int i = 0; i < s->n; i++) {
        unsigned code = number(w, "Cascade", l, (size_t)i, 10, 20000, &s->energy[i]);
        if (code)
            return code;
    }
    return 0;
}

/* Source NUCLIDE: its decay scheme (sim/decay.h). */
static unsigned read_decay(where *w, sim_source *s, const sim_scheme *scheme)
{
    s->kind = SIM_DECAY;
    if (sim_decay_prepare(&s->decay, scheme) != 0)
        return bad(w, "Source", &gen_settings.source, 0, "the decay scheme of %s does not fit the tables",
                   scheme->name);
    return 0;
}

static unsigned read_kind(where *w, gen_plan *p)
{
    sim_source *s = &p->source;
    static const char *const kinds[] = {"lines", "cascade", "continuum", "gammaevents", NULL};
    const kit_list *l = &gen_settings.source;
    const sim_scheme *scheme = l->n == 1 ? sim_scheme_find(l->v[0]) : NULL;
    int k;
    if (scheme)
        return read_decay(w, s, scheme);
    unsigned code = one_word(w, "Source", l, kinds, &k);
    if (code)
        return code;
    switch (k) {
    case 0:
        s->kind = SIM_LINES;
        return read_lines(w, s);
    case 1:
        s->kind = SIM_CASCADE;
        return read_cascade(w, s);
    case 2:
        s->kind = SIM_CONTINUUM;
        s->e_min = gen_settings.continuum_min;
        s->e_max = gen_settings.continuum_max;
        s->multiplicity = (int)gen_settings.multiplicity;
        if (s->e_min > s->e_max)
            return bad(w, "ContinuumMin", NULL, 0, "%g keV is above ContinuumMax %g keV", s->e_min, s->e_max);
        return 0;
    default:
        p->from_file = true;
        if (strcmp(gen_settings.gammaevents_input, "none") == 0)
            return bad(w, "Source", l, 0, "gammaevents needs a GammaEventsInput file");
        return 0;
    }
}

static unsigned read_geometry(where *w, sim_source *s)
{
    const kit_list *o = &gen_settings.origin, *d = &gen_settings.direction;
    if (o->n != 3)
        return bad(w, "Origin", o, o->n ? o->n - 1 : 0, "needs x y z, got %zu values", o->n);
    for (size_t i = 0; i < 3; i++) {
        unsigned code = number(w, "Origin", o, i, -1e4, 1e4, &s->origin[i]);
        if (code)
            return code;
    }
    if (d->n == 1 && strcmp(d->v[0], "isotropic") == 0)
        return 0;
    if (d->n != 3)
        return bad(w, "Direction", d, 0, "is 'isotropic' or dx dy dz");
    double norm = 0;
    for (size_t i = 0; i < 3; i++) {
        unsigned code = number(w, "Direction", d, i, -1e6, 1e6, &s->direction[i]);
        if (code)
            return code;
        norm += s->direction[i] * s->direction[i];
    }
    if (!(norm > 1e-12))
        return bad(w, "Direction", d, 0, "the vector is zero");
    for (int i = 0; i < 3; i++)
        s->direction[i] /= sqrt(norm);
    s->pencil = 1;
    return 0;
}

static unsigned read_outputs(where *w, gen_plan *p)
{
    const kit_list *l = &gen_settings.output;
    p->emit_truth = p->emit_crystals = false;
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->v[i], "truth") == 0)
            p->emit_truth = true;
        else if (strcmp(l->v[i], "crystal") == 0)
            p->emit_crystals = true;
        else
            return bad(w, "Output", l, i, "'%s' is neither crystal nor truth", l->v[i]);
    }
    return 0;
}

static unsigned read_traces(where *w, gen_plan *p)
{
    const gen_conf *c = &gen_settings;
    sim_trace_params *t = &p->trace;
    t->samples = (int)c->samples;
    t->pre_trigger = (int)c->pre_trigger;
    t->adc_bits = (int)c->adc_bits;
    t->gain = c->gain;
    t->baseline = c->baseline;
    t->noise = c->noise;
    t->subtract_baseline = c->subtract_baseline;
    t->sub_sample = c->sub_sample;
    if (t->pre_trigger >= t->samples)
        return bad(w, "PreTrigger", NULL, 0, "%d samples leave no room in traces of %d", t->pre_trigger, t->samples);
    long top = (1L << t->adc_bits) - 1, offset = t->subtract_baseline ? lround(t->baseline) : 0;
    if (t->baseline > (double)top)
        return bad(w, "Baseline", NULL, 0, "%g is beyond the %d-bit ADC's range", t->baseline, t->adc_bits);
    if (top - offset > INT16_MAX || offset > -(long)INT16_MIN)
        return bad(w, "ADCBits", NULL, 0, "%d-bit values less %ld do not fit data:crystal's 16-bit samples",
                   t->adc_bits, offset);
    return 0;
}

unsigned gen_resolve(const char *directory_path)
{
    static const char *const packings[] = {"none", "segment", NULL};
    where w;
    gen_plan p;
    memset(&p, 0, sizeof p);
    char *path = kit_conf_path(directory_path, gen_spec.actor);
    if (!path)
        return kit_fail(gen_spec.actor, NARVAL_E_NOMEM, "out of memory");
    snprintf(w.path, sizeof w.path, "%s", path);
    snprintf(p.conf_file, sizeof p.conf_file, "%s", path);
    free(path);
    unsigned code = read_kind(&w, &p);
    if (!code)
        code = read_geometry(&w, &p.source);
    if (!code)
        code = one_word(&w, "Packing", &gen_settings.packing, packings, &p.packing);
    if (!code)
        code = read_outputs(&w, &p);
    if (!code)
        code = read_traces(&w, &p);
    if (!code)
        code = kit_check_input(gen_settings.array, "Array", w.path, kit_key_line("Array"), w.msg, sizeof w.msg);
    if (!code)
        code = kit_check_input(gen_settings.crystal, "Crystal", w.path, kit_key_line("Crystal"), w.msg, sizeof w.msg);
    bool shaped = strcmp(gen_settings.bases.v[0], "none") != 0;
    if (!code && p.emit_crystals && !shaped)
        code = kit_check_input(gen_settings.basis, "Basis", w.path, kit_key_line("Basis"), w.msg, sizeof w.msg);
    for (size_t i = 0; !code && p.emit_crystals && shaped && i < gen_settings.bases.n; i++)
        code = kit_check_input(gen_settings.bases.v[i], "Bases", w.path, gen_settings.bases.line[i], w.msg,
                               sizeof w.msg);
    if (!code)
        code = kit_crystals_read(&gen_settings.crystals, w.path, "Crystals", &p.crystals, w.msg, sizeof w.msg);
    if (!code && !p.crystals.all && !p.emit_crystals) {
        kit_crystals_free(&p.crystals);
        code = bad(&w, "Crystals", &gen_settings.crystals, 0, "selects data:crystal frames, but Output has no crystal");
    }
    if (code)
        return kit_fail(gen_spec.actor, code, "%s", w.msg);
    p.source.beta = gen_settings.beta;
    kit_crystals_free(&gen_resolved.crystals);
    gen_resolved = p;
    return 0;
}

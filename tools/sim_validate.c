/* sim_validate.c: the sim-validate program: prints the transport's figures for an array (full absorption, interactions and crystals per γ, attenuation). */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "xs_ge.h"

typedef struct options {
    const char *array, *crystal;
    double energy, threshold;
    long events;
    uint64_t seed;
} options;

typedef struct tally {
    long gammas, absorbed, missed, paired, hits, deposits, fired;
} tally;

static void usage(FILE *to)
{
    fprintf(to, "usage: sim-validate [--array FILE] [--crystal FILE] [--energy KEV] [--events N] [--seed S]\n"
                "                    [--threshold KEV]\n"
                "defaults: --array detector/arrays/agata180.txt --crystal detector/geometry/agata.geo\n"
                "          --energy 1332.492 --events 1000000 --seed 1 --threshold 10\n");
}

static int number(const char *opt, const char *text, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = text ? strtod(text, &end) : NAN;
    if (!text || *end || errno || !(v >= lo && v <= hi)) {
        fprintf(stderr, "sim-validate: %s wants a number in [%g, %g], got '%s'\n", opt, lo, hi, text ? text : "");
        return -1;
    }
    *out = v;
    return 0;
}

static int parse(int argc, char **argv, options *o)
{
    *o = (options){"detector/arrays/agata180.txt", "detector/geometry/agata.geo", 1332.492, 10, 1000000, 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        double v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        }
        if (!next) {
            usage(stderr);
            return -1;
        }
        i++;
        if (!strcmp(a, "--array")) {
            o->array = next;
        } else if (!strcmp(a, "--crystal")) {
            o->crystal = next;
        } else if (!strcmp(a, "--energy")) {
            if (number(a, next, 10, 20000, &o->energy)) return -1;
        } else if (!strcmp(a, "--threshold")) {
            if (number(a, next, 0, 1e5, &o->threshold)) return -1;
        } else if (!strcmp(a, "--events")) {
            if (number(a, next, 1, 1e10, &v)) return -1;
            o->events = (long)v;
        } else if (!strcmp(a, "--seed")) {
            if (number(a, next, 0, 1.8e19, &v)) return -1;
            o->seed = (uint64_t)v;
        } else {
            fprintf(stderr, "sim-validate: unknown option '%s'\n", a);
            usage(stderr);
            return -1;
        }
    }
    return 0;
}

static void count(const sim_event *ev, tally *t)
{
    const adf_truth_gamma *g = &ev->truth.gamma[0];
    t->gammas++;
    t->absorbed += !!(g->flags & ADF_TRUTH_ABSORBED);
    t->missed += !!(g->flags & ADF_TRUTH_MISSED);
    t->paired += !!(g->flags & ADF_TRUTH_PAIRED);
    t->hits += g->n_interactions;
    t->deposits += ev->deposits.n;
    t->fired += ev->n_fired;
}

/* Simulates the events on every thread; per-event streams keep the sums independent of the threads. */
static int simulate(const sim_physics *ph, long n, tally *sum, double *seconds)
{
    int failed = 0;
    double t0 = omp_get_wtime();
#pragma omp parallel
    {
        tally mine = {0};
        sim_event *ev = sim_event_new(ph->world->n);
        char msg[256];
        if (!ev) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1024)
        for (long i = 0; i < n; i++) {
            if (!ev || failed)
                continue;
            if (sim_event_run(ph, (uint32_t)i, ev, msg, sizeof msg)) {
                fprintf(stderr, "sim-validate: %s\n", msg);
#pragma omp atomic write
                failed = 1;
                continue;
            }
            count(ev, &mine);
        }
#pragma omp critical(tally)
        {
            sum->gammas += mine.gammas;
            sum->absorbed += mine.absorbed;
            sum->missed += mine.missed;
            sum->paired += mine.paired;
            sum->hits += mine.hits;
            sum->deposits += mine.deposits;
            sum->fired += mine.fired;
        }
        sim_event_free(ev);
    }
    *seconds = omp_get_wtime() - t0;
    return failed ? -1 : 0;
}

static void report(const options *o, const sim_world *w, const tally *p, const tally *u, double seconds)
{
    double n = (double)p->gammas;
    xs_mu mu = xs_ge_mu(o->energy);
    printf("sim-validate: %ld γ rays of %g keV from the target into %d crystals (%s), seed %llu\n", p->gammas,
           o->energy, w->n, o->array, (unsigned long long)o->seed);
    printf("  germanium at %g keV: mu = %.5f /mm (photo %.2f %%, Compton %.2f %%, pair %.2f %%), mean free path %.2f mm\n",
           o->energy, mu.total, 100 * mu.photo / mu.total, 100 * mu.compton / mu.total, 100 * mu.pair / mu.total,
           1 / mu.total);
    printf("  full absorption (all energy in germanium): %.4f +- %.4f\n", p->absorbed / n,
           sqrt(p->absorbed * (1 - p->absorbed / n)) / n);
    printf("  missed the germanium: %.4f; made a pair: %.4f\n", p->missed / n, p->paired / n);
    printf("  interactions per γ: %.3f packed per segment, %.3f unpacked (%.3f deposits)\n", p->hits / n, u->hits / n,
           u->deposits / n);
    printf("  interactions per γ that reached germanium: %.3f packed, %.3f unpacked\n", p->hits / (n - p->missed),
           u->hits / (n - u->missed));
    printf("  crystals fired per γ (threshold %g keV): %.3f; per γ that reached germanium: %.3f\n", o->threshold,
           p->fired / n, p->fired / (n - p->missed));
    printf("  transport speed: %.0f γ/s on %d threads (both passes, no traces)\n", 2 * n / seconds,
           omp_get_max_threads());
}

int main(int argc, char **argv)
{
    options o;
    char msg[512];
    det_crystal c;
    det_array a = {0};
    sim_world w;
    if (parse(argc, argv, &o))
        return 2;
    if (det_crystal_load(&c, o.crystal, msg, sizeof msg) || det_array_load(&a, o.array, msg, sizeof msg) ||
        sim_world_init(&w, &a, &c, msg, sizeof msg)) {
        fprintf(stderr, "sim-validate: %s\n", msg);
        return 1;
    }
    sim_physics ph = {.world = &w, .threshold = o.threshold, .fwhm_a = 1, .fwhm_b = 3.7, .seed = o.seed};
    ph.source.kind = SIM_LINES;
    ph.source.n = 1;
    ph.source.energy[0] = o.energy;
    ph.source.cumulative[0] = 1;
    tally packed = {0}, unpacked = {0};
    double t1, t2;
    ph.packing = SIM_PACK_SEGMENT;
    int rc = simulate(&ph, o.events, &packed, &t1);
    ph.packing = SIM_PACK_NONE;
    if (!rc)
        rc = simulate(&ph, o.events, &unpacked, &t2);
    if (!rc)
        report(&o, &w, &packed, &unpacked, t1 + t2);
    sim_world_free(&w);
    det_array_free(&a);
    return rc ? 1 : 0;
}

/* tracker_study.c: simulates 1332 keV events with libsim's transport, smears them, and measures efficiency and peak-to-total with and without tracking. */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "event.h"
#include "tracker/tracker_engine.h"
#include "tool.h"
#include "tracker_study.h"

enum { BINS = 2048, WINDOW_KEV = 3 };
#define CRYSTAL_THRESHOLD_KEV 10.0

/* Crystals are neighbours for add-back when their front faces are closer than
 * 1.3 times the median distance from a crystal to its nearest one. */
static int build_neighbours(tracker_study *st)
{
    int n = st->array.n;
    double *nearest = malloc((size_t)n * sizeof *nearest);
    st->neighbour = calloc((size_t)n * (size_t)n, 1);
    if (!nearest || !st->neighbour) {
        free(nearest);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        nearest[i] = INFINITY;
        for (int j = 0; j < n; j++) {
            double d = 0;
            for (int k = 0; k < 3; k++)
                d += pow(st->array.crystal[i].T[k] - st->array.crystal[j].T[k], 2);
            if (j != i && sqrt(d) < nearest[i])
                nearest[i] = sqrt(d);
        }
    }
    qsort(nearest, (size_t)n, sizeof *nearest, tool_by_double);
    st->neighbour_mm = n > 1 ? 1.3 * nearest[n / 2] : 0;
    free(nearest);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double d = 0;
            for (int k = 0; k < 3; k++)
                d += pow(st->array.crystal[i].T[k] - st->array.crystal[j].T[k], 2);
            st->neighbour[(size_t)i * n + j] = i != j && sqrt(d) < st->neighbour_mm;
        }
    return 0;
}

int tracker_study_init(tracker_study *st, const char *array, const char *geometry, const tracker_model_conf *mc,
                       char *msg, size_t len)
{
    memset(st, 0, sizeof *st);
    if (det_array_load(&st->array, array, msg, len) != 0 || det_crystal_load(&st->crystal, geometry, msg, len) != 0 ||
        sim_world_init(&st->world, &st->array, &st->crystal, msg, len) != 0)
        return -1;
    st->model = malloc(sizeof *st->model);
    if (!st->model || tracker_lookup_init(&st->lookup, &st->array) != 0 || build_neighbours(st) != 0) {
        snprintf(msg, len, "out of memory");
        return -1;
    }
    if (tracker_model_build(st->model, &st->array, &st->crystal, mc, msg, len) != 0)
        return -1;
    st->smear = (tracker_smear){ 2.7, 6.2, 1 };
    return 0;
}

void tracker_study_free(tracker_study *st)
{
    free(st->model);
    free(st->neighbour);
    tracker_lookup_free(&st->lookup);
    sim_world_free(&st->world);
    det_array_free(&st->array);
}

void tracker_sample_free(tracker_sample *s)
{
    tracker_events_free(&s->ev);
    free(s->truth);
    memset(s, 0, sizeof *s);
}

/* ---- simulated samples -------------------------------------------------------------- */

typedef struct frames {
    uint8_t *data;
    size_t used, cap;
} frames;

static int put_truth(frames *f, uint32_t number, const adf_truth *t)
{
    for (;;) {
        adf_writer w;
        adf_writer_init(&w, f->data + f->used, f->cap - f->used);
        int rc = adf_truth_write(&w, number, (uint64_t)number * 2000, t);
        if (rc == ADF_OK) {
            f->used += w.used;
            return 0;
        }
        size_t cap = f->cap ? 2 * f->cap : 1 << 20;
        uint8_t *d = rc == ADF_E_NOSPACE ? realloc(f->data, cap) : NULL;
        if (!d)
            return -1;
        f->data = d;
        f->cap = cap;
    }
}

/* Events first .. first+n-1 into f (one thread). */
static int simulate(const sim_physics *ph, uint32_t first, uint32_t n, frames *f, char *msg, size_t len)
{
    sim_event *ev = sim_event_new(ph->world->n);
    if (!ev) {
        snprintf(msg, len, "out of memory for an event");
        return -1;
    }
    int rc = 0;
    for (uint32_t i = first; i < first + n && rc == 0; i++) {
        rc = sim_event_run(ph, i, ev, msg, len);
        if (rc == 0 && put_truth(f, i, &ev->truth) != 0) {
            snprintf(msg, len, "out of memory for the truth frames");
            rc = -1;
        }
    }
    sim_event_free(ev);
    return rc;
}

static int join(frames *parts, int n, tracker_sample *s)
{
    size_t total = 0;
    for (int t = 0; t < n; t++)
        total += parts[t].used;
    s->truth = malloc(total ? total : 1);
    if (!s->truth)
        return -1;
    for (int t = 0; t < n; t++) {
        memcpy(s->truth + s->truth_size, parts[t].data, parts[t].used);
        s->truth_size += parts[t].used;
    }
    return 0;
}

static int smear_all(const tracker_study *st, tracker_sample *s, char *msg, size_t len)
{
    adf_truth *t = malloc(sizeof *t);
    adf_iter it;
    adf_frame f;
    int rc;
    if (!t)
        return -1;
    adf_iter_init(&it, s->truth, s->truth_size);
    while ((rc = adf_iter_next(&it, &f)) > 0)
        if (tracker_events_add_truth(&s->ev, &st->lookup, &st->smear, &f, t, msg, len) != TR_OK)
            break;
    free(t);
    return rc == 0 ? 0 : -1;
}

int tracker_study_sample(const tracker_study *st, int mult, uint32_t events, uint64_t seed, tracker_sample *s,
                         char *msg, size_t len)
{
    memset(s, 0, sizeof *s);
    s->mult = mult;
    sim_physics ph = { .world = &st->world, .packing = SIM_PACK_SEGMENT, .threshold = CRYSTAL_THRESHOLD_KEV,
                       .fwhm_a = 1, .fwhm_b = 3.7, .seed = seed };
    ph.source.kind = SIM_CASCADE;
    ph.source.n = mult;
    for (int i = 0; i < mult; i++)
        ph.source.energy[i] = TRACKER_STUDY_KEV;
    int threads = omp_get_max_threads(), failed = 0;
    frames *parts = calloc((size_t)threads, sizeof *parts);
    if (!parts)
        return -1;
#pragma omp parallel num_threads(threads) reduction(| : failed)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        uint32_t a = (uint32_t)((uint64_t)events * t / nt), b = (uint32_t)((uint64_t)events * (t + 1) / nt);
        char m[256];
        if (simulate(&ph, a, b - a, &parts[t], m, sizeof m) != 0) {
#pragma omp critical
            snprintf(msg, len, "%s", m);
            failed = 1;
        }
    }
    if (!failed && join(parts, threads, s) != 0) {
        snprintf(msg, len, "out of memory for the truth frames");
        failed = 1;
    }
    for (int t = 0; t < threads; t++)
        free(parts[t].data);
    free(parts);
    if (!failed && smear_all(st, s, msg, len) != 0)
        failed = 1;
    return failed ? -1 : 0;
}

/* ---- the study ------------------------------------------------------------------------ */

enum { IDEAL, CRYSTAL, ADDBACK, TRACKED, KINDS };
static const char *const kind_name[KINDS] = { "ideal (each γ's deposits)", "crystal by crystal",
                                              "add-back of neighbours", "tracked" };

typedef struct spectra {
    uint64_t bin[KINDS][BINS];
    uint64_t peak[KINDS], total[KINDS];
    uint64_t emitted;
} spectra;

static void count(spectra *sp, int kind, double e)
{
    if (e <= 0)
        return;
    sp->total[kind]++;
    sp->peak[kind] += fabs(e - TRACKER_STUDY_KEV) <= WINDOW_KEV;
    int b = (int)e;
    if (b < BINS)
        sp->bin[kind][b]++;
}

static int find_root(int *parent, int i)
{
    while (parent[i] != i)
        i = parent[i] = parent[parent[i]];
    return i;
}

/* Crystal energies of one event, on their own and added back. */
static void count_crystals(const tracker_study *st, const adf_truth *t, double *energy, int *parent, spectra *sp)
{
    int n = st->array.n;
    for (int k = 0; k < n; k++) {
        energy[k] = 0;
        parent[k] = k;
    }
    for (unsigned i = 0; i < t->n_interactions; i++)
        energy[st->lookup.index[t->hit[i].crystal_id]] += t->hit[i].e;
    for (int k = 0; k < n; k++) {
        if (energy[k] < CRYSTAL_THRESHOLD_KEV)
            continue;
        count(sp, CRYSTAL, energy[k]);
        for (int j = 0; j < k; j++)
            if (energy[j] >= CRYSTAL_THRESHOLD_KEV && st->neighbour[(size_t)k * n + j])
                parent[find_root(parent, k)] = find_root(parent, j);
    }
    for (int k = 0; k < n; k++)
        if (energy[k] >= CRYSTAL_THRESHOLD_KEV && find_root(parent, k) != k)
            energy[find_root(parent, k)] += energy[k];
    for (int k = 0; k < n; k++)
        if (energy[k] >= CRYSTAL_THRESHOLD_KEV && find_root(parent, k) == k)
            count(sp, ADDBACK, energy[k]);
}

static void count_truth(const tracker_study *st, const adf_truth *t, double *energy, int *parent, spectra *sp)
{
    unsigned h = 0;
    for (unsigned g = 0; g < t->n_gammas; g++) {
        double e = 0;
        for (unsigned k = 0; k < t->gamma[g].n_interactions; k++)
            e += t->hit[h++].e;
        count(sp, IDEAL, e);
        sp->emitted++;
    }
    count_crystals(st, t, energy, parent, sp);
}

static int analyse(const tracker_study *st, const tracker_sample *s, const tr_out *o, spectra *sp)
{
    adf_truth *t = malloc(sizeof *t);
    double *energy = malloc((size_t)st->array.n * sizeof *energy);
    int *parent = malloc((size_t)st->array.n * sizeof *parent);
    int rc = t && energy && parent ? 0 : -1;
    adf_iter it;
    adf_frame f;
    uint32_t e = 0;
    adf_iter_init(&it, s->truth, s->truth_size);
    while (rc == 0 && adf_iter_next(&it, &f) > 0) {
        if (adf_truth_read(&f, t) != ADF_OK) {
            rc = -1;
            break;
        }
        count_truth(st, t, energy, parent, sp);
        const tr_gamma *g = &o->gammas[s->ev.first[e]];
        for (unsigned k = 0; k < o->info[e].n_gammas; k++) {
            double sum = 0;
            for (int p = 0; p < g[k].n; p++)
                sum += s->ev.points[s->ev.first[e] + g[k].pt[p]].e;
            count(sp, TRACKED, sum);
        }
        e++;
    }
    free(t);
    free(energy);
    free(parent);
    return rc;
}

static int write_spectra(const char *dir, int mult, const spectra *sp)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/spectra-m%d.csv", dir, mult);
    FILE *fp = fopen(path, "w");
    if (!fp)
        return -1;
    fprintf(fp, "# 1332.492 keV, M = %d, %llu gammas emitted; counts per 1 keV bin\nkeV,ideal,crystal,addback,tracked\n",
            mult, (unsigned long long)sp->emitted);
    for (int b = 0; b < BINS; b++)
        fprintf(fp, "%d,%llu,%llu,%llu,%llu\n", b, (unsigned long long)sp->bin[IDEAL][b],
                (unsigned long long)sp->bin[CRYSTAL][b], (unsigned long long)sp->bin[ADDBACK][b],
                (unsigned long long)sp->bin[TRACKED][b]);
    return fclose(fp) == 0 ? 0 : -1;
}

static void print_rows(FILE *fp, int mult, const spectra *sp)
{
    for (int k = 0; k < KINDS; k++)
        fprintf(fp, "| %d | %s | %.1f %% | %.1f %% | %llu | %llu |\n", mult, kind_name[k],
                100.0 * sp->peak[k] / sp->emitted, sp->total[k] ? 100.0 * sp->peak[k] / sp->total[k] : 0.0,
                (unsigned long long)sp->peak[k], (unsigned long long)sp->total[k]);
}

static int study_one(const tracker_study *st, tracker_engine *eng, int mult, uint32_t events, uint64_t seed,
                     spectra *sp, char *msg, size_t len)
{
    tracker_sample s;
    tr_out o;
    if (tracker_study_sample(st, mult, events, seed, &s, msg, len) != 0)
        return -1;
    tr_batch b = tracker_events_batch(&s.ev);
    int rc = tracker_engine_run(eng, &b, &o, msg, len) == TR_OK ? analyse(st, &s, &o, sp) : -1;
    if (rc == 0)
        fprintf(stderr, "M=%d: %u events, %.2f points per event\n", mult, events,
                events ? (double)b.first[b.n_events] / events : 0.0);
    tracker_sample_free(&s);
    return rc;
}

int tracker_study_run(const tracker_study *st, const char *dir, const uint32_t events[2], uint64_t seed)
{
    static const int mults[2] = { 1, 30 };
    char msg[512], path[4096];
    tracker_engine *eng = NULL;
    spectra *sp = calloc(2, sizeof *sp);
    int rc = 1;
    if (!sp || (mkdir(dir, 0777) != 0 && errno != EEXIST)) {
        fprintf(stderr, "bench-tracker: cannot create %s: %s\n", dir, sp ? strerror(errno) : "out of memory");
        goto fail;
    }
    if (tracker_engine_open(&eng, st->model, TRACKER_AUTO, 0, true, msg, sizeof msg) != TR_OK) {
        fprintf(stderr, "bench-tracker: %s\n", msg);
        goto fail;
    }
    fprintf(stderr, "tracking on the %s; add-back joins crystals whose front faces are closer than %.1f mm\n", msg,
            st->neighbour_mm);
    for (int m = 0; m < 2; m++) {
        if (study_one(st, eng, mults[m], events[m], seed, &sp[m], msg, sizeof msg) != 0) {
            fprintf(stderr, "bench-tracker: M=%d: %s\n", mults[m], msg);
            goto fail;
        }
        if (write_spectra(dir, mults[m], &sp[m]) != 0) {
            fprintf(stderr, "bench-tracker: cannot write the spectra into %s: %s\n", dir, strerror(errno));
            goto fail;
        }
    }
    snprintf(path, sizeof path, "%s/efficiency.md", dir);
    FILE *fp = fopen(path, "w");
    for (int pass = 0; pass < 2; pass++) {
        FILE *to = pass ? fp : stdout;
        if (!to)
            continue;
        fprintf(to, "| M | spectrum | photopeak efficiency | peak-to-total | peak counts | all counts |\n"
                    "|---|---|---:|---:|---:|---:|\n");
        for (int m = 0; m < 2; m++)
            print_rows(to, mults[m], &sp[m]);
    }
    rc = fp && fclose(fp) == 0 ? 0 : 1;
fail:
    tracker_engine_destroy(eng);
    free(sp);
    return rc;
}

/* bench_psa.c: bench-psa: grid searches per second of the naive reference, the CPU and the GPU on the same events, how well they agree, how often adaptive misses; and the accuracy of a PSA run against its truth. */
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "adf.h"
#include "bench_limits.h"
#include "psa/psa_engine.h"
#include "psa/psa_naive.h"
#include "psa/psa_pow.h"
#include "psa_truth.h"
#include "tool.h"
#ifdef NARWHAL_HAVE_CUDA
#include "gridsearch_gpu.h"
#endif

/*
 * The events: for a point P drawn at random, the signals of P blended with
 * those of a grid neighbour Q of the same segment (weight w drawn in [0, 1):
 * positions between the grid points), times E = 1332 keV, plus white noise
 * of 5 keV (Generator.conf's default), rounded to whole ADC counts (1 per
 * keV), over E again: what the actor feeds a search.  Every engine answers
 * the same searches; the naive reference and the CPU take the first ones.
 */
#define DEFAULT_BASIS "build/cache/default.basis"
#define ENERGY_KEV 1332.0
#define NOISE_KEV 5.0

typedef struct options {
    const char *basis, *accuracy, *csv;
    size_t searches, cpu, naive, ladder, rounds;
    unsigned prune_step;
    double p, coarse_mm, radius_mm;
    int gpu;
    bool check, gpu_prune;
} options;

typedef struct events {
    psa_batch batch;
    uint32_t *truth; /* basis point nearest the blend */
} events;

typedef struct result {
    char path[48], data[8], mode[10];
    size_t n;
    double rate, kernel_rate;
    double call_ms, lead_ms, kernel_ms; /* GPU rows: medians of the runs' call, lead (gs_gpu_lead_ms) and kernels */
    double cpu_rate; /* searches per second of the process's CPU time (all its threads) */
    double gpu_w, cpu_w; /* mean power over the row's runs (bl_power), -1 when not measured */
    psa_query *q;    /* the answers */
} result;

typedef struct bench {
    options o;
    det_basis basis;
    psa_layout layout;
    gs_pow pw;
    events ev;
    result r[52]; /* naive, 4 CPU, 4 GPU, 12 GPU pruned, 12 CPU kernels, the ladder's 16 */
    int n;
    int failures;
    bl_machine machine;
    double terms, samples; /* |d|^p terms and measured samples of a full search, on average */
} bench;

/* ---- random numbers (splitmix64) */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next64(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform(void) { return (next64() >> 11) * (1.0 / 9007199254740992.0); }

static double gauss(void)
{
    double u = uniform() + 1e-300, v = uniform();
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/* ---- the basis and the events */

static int ensure_basis(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 || strcmp(path, DEFAULT_BASIS) != 0)
        return 0;
    printf("bench-psa: %s is missing; building it (make basis does the same, about 20 s)\n", path);
    fflush(stdout);
    mkdir("build/cache", 0755);
    return system("build/bin/basisgen --quiet --geometry detector/geometry/agata.geo -o " DEFAULT_BASIS);
}

/* The point at p + step along one axis, in segment s, or -1: a binary search
 * in the points sorted by grid position. */
typedef struct keyed {
    int64_t key;
    uint32_t point;
} keyed;

static int64_t grid_key(const float *p, double grid)
{
    int64_t k[3];
    for (int a = 0; a < 3; a++)
        k[a] = (int64_t)floor(p[a] / grid + 0.5) + (1 << 20);
    return k[2] << 42 | k[1] << 21 | k[0];
}

static int by_key(const void *a, const void *b)
{
    int64_t x = ((const keyed *)a)->key, y = ((const keyed *)b)->key;
    return x < y ? -1 : x > y;
}

static int64_t neighbour(const det_basis *b, const keyed *sorted, uint32_t p, int axis, int dir)
{
    if (!(b->grid_mm > 0))
        return -1;
    float q[3] = { b->pos[3 * (size_t)p], b->pos[3 * (size_t)p + 1], b->pos[3 * (size_t)p + 2] };
    q[axis] += (float)(dir * b->grid_mm);
    keyed k = { grid_key(q, b->grid_mm), 0 };
    const keyed *hit = bsearch(&k, sorted, b->n_points, sizeof *sorted, by_key);
    return hit && b->segment[hit->point] == b->segment[p] ? (int64_t)hit->point : -1;
}

static int make_events(bench *B)
{
    const det_basis *b = &B->basis;
    const psa_layout *l = &B->layout;
    keyed *sorted = malloc(b->n_points * sizeof *sorted);
    if (!sorted || !(B->ev.truth = malloc(B->o.searches * sizeof *B->ev.truth)))
        return -1;
    for (uint32_t i = 0; i < b->n_points; i++)
        sorted[i] = (keyed){ grid_key(&b->pos[3 * (size_t)i], b->grid_mm > 0 ? b->grid_mm : 1), i };
    qsort(sorted, b->n_points, sizeof *sorted, by_key);
    for (size_t n = 0; n < B->o.searches; n++) {
        uint32_t p = (uint32_t)(uniform() * b->n_points);
        int64_t q = neighbour(b, sorted, p, (int)(uniform() * 3), uniform() < 0.5 ? -1 : 1);
        double w = q < 0 ? 0 : uniform();
        const psa_segment *g = &l->seg[b->segment[p]];
        float *m = psa_batch_add(&B->ev.batch, l, (unsigned)b->segment[p], (1u << g->n_mask) - 1);
        if (!m)
            return -1;
        const float *sp = det_basis_point(b, p), *sq = det_basis_point(b, q < 0 ? p : (uint32_t)q);
        for (uint32_t c = 0; c < g->n_mask; c++)
            for (uint32_t i = 0; i < l->window; i++) {
                size_t at = (size_t)g->mask[c] * b->n_samples + l->window_start + i;
                double kev = ENERGY_KEV * ((1 - w) * sp[at] + w * sq[at]) + NOISE_KEV * gauss();
                m[c * l->window + i] = (float)(round(kev) / ENERGY_KEV);
            }
        B->ev.truth[n] = w < 0.5 ? p : (uint32_t)q;
    }
    free(sorted);
    return psa_batch_quantise(&B->ev.batch);
}

/* ---- running the engines */

static psa_batch first(const events *ev, size_t n)
{
    psa_batch b = ev->batch;
    b.n = n < ev->batch.n ? n : ev->batch.n;
    b.q = malloc((b.n + 1) * sizeof *b.q);
    if (b.q)
        memcpy(b.q, ev->batch.q, b.n * sizeof *b.q);
    return b;
}

static result *add_result(bench *B, const char *path, psa_data data, psa_mode mode, size_t n)
{
    if (B->n == (int)(sizeof B->r / sizeof B->r[0])) {
        fprintf(stderr, "bench-psa: more than %d rows\n", B->n);
        exit(1);
    }
    result *r = &B->r[B->n++];
    memset(r, 0, sizeof *r);
    r->gpu_w = r->cpu_w = -1;
    snprintf(r->path, sizeof r->path, "%s", path);
    snprintf(r->data, sizeof r->data, "%s", data == PSA_I16 ? "int16" : "float");
    snprintf(r->mode, sizeof r->mode, "%s", mode == PSA_ADAPTIVE ? "adaptive" : "full");
    r->n = n;
    return r;
}

static void run_naive(bench *B)
{
    psa_batch b = first(&B->ev, B->o.naive);
    if (!b.q)
        return;
    result *r = add_result(B, "naive reference, 1 thread", PSA_F32, PSA_FULL, b.n);
    double t = tool_seconds();
    psa_naive_search(&B->basis, &B->layout, B->pw.p, &b);
    r->rate = b.n / (tool_seconds() - t);
    r->q = b.q;
}

/* The process's CPU time, all threads: on a shared machine a one-thread
 * rate per CPU-second does not count the time other processes held the core. */
static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* The median of v[1 .. reps] (v[0] is the warm-up run's; reps is odd), v sorted there. */
static double median(double *v, int reps)
{
    qsort(v + 1, (size_t)reps, sizeof *v, tool_by_double);
    return v[1 + reps / 2];
}

/* Median rate of `reps` runs (an odd number) of the engine over the first n searches: of their times,
 * so that the rate, the kernels' rate and the split of the call come from the same medians. */
static void run_engine(bench *B, psa_engine *e, const char *path, psa_data data, psa_mode mode,
                       size_t n, int reps)
{
    double per_cpu[16], call_ms[16], lead_ms[16], kernel_ms[16];
    psa_batch b = first(&B->ev, n);
    char msg[512];
    bool fell_back = false;
    if (!b.q)
        return;
    result *r = add_result(B, path, data, mode, b.n);
    e->p.mode = mode;
    e->cpu.data = e->p.data = data;
    bl_energy e0 = bl_energy_now(B->o.gpu);
    for (int k = 0; k <= reps; k++) { /* run 0 warms up */
        memcpy(b.q, B->ev.batch.q, b.n * sizeof *b.q);
        double t = tool_seconds(), c = cpu_seconds();
        if (psa_engine_run(e, &b, &fell_back, msg, sizeof msg) || fell_back) {
            printf("bench-psa: %s: %s\n", path, fell_back ? msg : "out of memory");
            B->failures++;
            r->rate = 0;
            free(b.q);
            return;
        }
        call_ms[k] = 1e3 * (tool_seconds() - t);
        per_cpu[k] = b.n / (cpu_seconds() - c);
        lead_ms[k] = kernel_ms[k] = 0;
#ifdef NARWHAL_HAVE_CUDA
        if (e->gpu && gs_gpu_kernel_ms(e->gpu) > 0) {
            kernel_ms[k] = gs_gpu_kernel_ms(e->gpu);
            lead_ms[k] = gs_gpu_lead_ms(e->gpu);
        }
#endif
    }
    bl_energy e1 = bl_energy_now(B->o.gpu);
    bl_power(&e0, &e1, &r->gpu_w, &r->cpu_w);
    r->call_ms = median(call_ms, reps);
    r->lead_ms = median(lead_ms, reps);
    r->kernel_ms = median(kernel_ms, reps);
    r->rate = b.n / (1e-3 * r->call_ms);
    r->cpu_rate = median(per_cpu, reps);
    r->kernel_rate = r->kernel_ms > 0 ? b.n / (1e-3 * r->kernel_ms) : 0;
    r->q = b.q;
}

static const result *find(const bench *B, const char *path_prefix, const char *data, const char *mode)
{
    for (int i = 0; i < B->n; i++)
        if (strncmp(B->r[i].path, path_prefix, strlen(path_prefix)) == 0 &&
            strcmp(B->r[i].data, data) == 0 && strcmp(B->r[i].mode, mode) == 0 && B->r[i].rate > 0)
            return &B->r[i];
    return NULL;
}

/* ---- agreement */

static double dist_mm(const bench *B, unsigned seg, uint32_t a, uint32_t b)
{
    const psa_segment *g = &B->layout.seg[seg];
    const float *p = &B->basis.pos[3 * (size_t)g->point[a]], *q = &B->basis.pos[3 * (size_t)g->point[b]];
    return sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2]));
}

/* Same columns; the others are near-ties when the reference's FoM of both
 * columns (naive: exact powf; else the answers' own FoMs) differ by at most 1e-5. */
static void agree(bench *B, const char *what, const result *a, const result *b, bool naive,
                  bool must_be_identical)
{
    if (!a || !b)
        return;
    size_t n = a->n < b->n ? a->n : b->n, same = 0, bits = 0, ties = 0, far = 0;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        const psa_query *x = &a->q[i], *y = &b->q[i];
        if (x->column == y->column) {
            same++;
            bits += gs_bits(x->fom) == gs_bits(y->fom);
            continue;
        }
        double fx = naive ? psa_naive_fom(&B->basis, &B->layout, B->pw.p, &B->ev.batch, x, x->column) : x->fom;
        double fy = naive ? psa_naive_fom(&B->basis, &B->layout, B->pw.p, &B->ev.batch, x, y->column) : y->fom;
        double rel = fabs(fx - fy) / fmax(fx, fy);
        worst = fmax(worst, rel);
        ties += rel <= 1e-5;
        far += dist_mm(B, x->segment, x->column, y->column) > 0;
    }
    bool ok = (double)same >= 0.999 * n && same + ties == n && (!must_be_identical || (same == n && bits == n));
    printf("  %-34s %6zu searches: same point %6zu (%.3f %%), same FoM bits %6zu, near-ties %zu, "
           "others %zu (worst relative FoM gap %.2g)  %s\n", what, n, same, 100.0 * same / n, bits,
           ties, n - same - ties, worst, ok ? "ok" : "FAILED");
    B->failures += !ok;
}

/* The thesis's answers against ours: where the points differ, both points' FoMs
 * (ours) within tol of each other; every FoM within tol of ours for its point. */
static void agree_within(bench *B, const char *what, const result *ours, const result *theirs, double tol)
{
    if (!ours || !theirs)
        return;
    size_t n = ours->n < theirs->n ? ours->n : theirs->n, same = 0, ties = 0, bits = 0;
    double worst_fom = 0, worst_tie = 0;
    for (size_t i = 0; i < n; i++) {
        const psa_query *x = &ours->q[i], *y = &theirs->q[i];
        if (x->column == y->column) {
            same++;
            bits += gs_bits(x->fom) == gs_bits(y->fom);
            worst_fom = fmax(worst_fom, fabs((double)x->fom - y->fom) / x->fom);
            continue;
        }
        double gap = fabs((double)x->fom - y->fom) / x->fom; /* y's FoM is its own point's, by its sums */
        worst_tie = fmax(worst_tie, gap);
        ties += gap <= tol;
    }
    bool ok = same + ties == n && worst_fom <= tol;
    printf("  %-40s %6zu searches: same point %6zu, same FoM bits %6zu, largest relative FoM difference "
           "%.2g; near-ties %zu (largest gap %.2g)  %s\n", what, n, same, bits, worst_fom, ties, worst_tie,
           ok ? "ok" : "FAILED");
    B->failures += !ok;
}

static void misses(const bench *B, const result *full, const result *adaptive)
{
    if (!full || !adaptive)
        return;
    size_t n = full->n < adaptive->n ? full->n : adaptive->n, missed = 0;
    double sum = 0, worse = 0;
    for (size_t i = 0; i < n; i++)
        if (full->q[i].column != adaptive->q[i].column) {
            missed++;
            sum += dist_mm(B, full->q[i].segment, full->q[i].column, adaptive->q[i].column);
            worse += adaptive->q[i].fom / full->q[i].fom - 1;
        }
    printf("  adaptive (%s) misses the full search's point in %zu of %zu searches (%.2f %%); "
           "by %.2f mm and %.1f %% of FoM on average when it does\n", full->data, missed, n,
           100.0 * missed / n, missed ? sum / missed : 0.0, missed ? 100 * worse / missed : 0.0);
}

static void truth(const bench *B, const result *r)
{
    if (!r)
        return;
    size_t hit = 0;
    double s2 = 0;
    for (size_t i = 0; i < r->n; i++) {
        const psa_query *q = &r->q[i];
        uint32_t p = psa_answer_point(&B->layout, q), t = B->ev.truth[i];
        hit += p == t;
        for (int a = 0; a < 3; a++) {
            double d = B->basis.pos[3 * (size_t)p + a] - B->basis.pos[3 * (size_t)t + a];
            s2 += d * d;
        }
    }
    printf("  %s %s %s: the nearest grid point found in %.1f %% of searches, RMS distance %.2f mm\n",
           r->path, r->data, r->mode, 100.0 * hit / r->n, sqrt(s2 / r->n));
}

/* ---- the table */

/* The CPU baseline of the ratios: the fastest full float search on all the
 * cores, the thesis's algorithm or ours, exhaustive or pruned. */
static const result *best_cpu(const bench *B)
{
    const result *best = NULL;
    char all[32];
    snprintf(all, sizeof all, ", %d thread", omp_get_max_threads());
    for (int i = 0; i < B->n; i++) {
        const result *r = &B->r[i];
        if (strstr(r->path, "CPU") && strstr(r->path, all) && !strcmp(r->data, "float") &&
            !strcmp(r->mode, "full") && r->rate > 0 && (!best || r->rate > best->rate))
            best = r;
    }
    return best;
}

static void print_table(const bench *B)
{
    const result *naive = find(B, "naive", "float", "full");
    const result *cpu = best_cpu(B);
    if (cpu)
        printf("\nbench-psa: the CPU baseline (x best CPU): %s, %s %s\n", cpu->path, cpu->data, cpu->mode);
    printf("\n| path | data | search | searches/s | x naive | x best CPU (float, full) | kernel only, searches/s "
           "| per CPU-second |\n|---|---|---|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < B->n; i++) {
        const result *r = &B->r[i];
        char ratio_n[32] = "", ratio_c[32] = "", kern[32] = "";
        if (r->rate <= 0)
            continue;
        if (naive)
            snprintf(ratio_n, sizeof ratio_n, "%.1f", r->rate / naive->rate);
        if (cpu)
            snprintf(ratio_c, sizeof ratio_c, "%.2f", r->rate / cpu->rate);
        if (r->kernel_rate > 0)
            snprintf(kern, sizeof kern, "%.0f", r->kernel_rate);
        printf("| %s | %s | %s | %.0f | %s | %s | %s | %.0f |\n", r->path, r->data, r->mode, r->rate,
               ratio_n, ratio_c, kern, r->cpu_rate);
    }
    if (!find(B, "GPU", "float", "full"))
        printf("| GPU | float | full | n/a | | | | |\n");
    bool split = false;
    for (int i = 0; i < B->n; i++) {
        const result *r = &B->r[i];
        if (r->rate <= 0 || r->kernel_ms <= 0)
            continue;
        if (!split)
            printf("\nbench-psa: where a GPU row's call goes (medians of its runs, ms): before its first kernel "
                   "(sorting, the first chunk's packing and upload; the device's clock), its kernels, the rest "
                   "(the last answers, the host's share)\n\n| path | data | search | call | before | kernels | rest | "
                   "kernels / call |\n|---|---|---|---:|---:|---:|---:|---:|\n");
        split = true;
        printf("| %s | %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f |\n", r->path, r->data, r->mode, r->call_ms,
               r->lead_ms, r->kernel_ms, r->call_ms - r->lead_ms - r->kernel_ms, r->kernel_ms / r->call_ms);
    }
}

/* FP32 instructions per |d|^p term (kernels/gridsearch_fom.h): the difference, t = m - 1.5, the
 * polynomial's 5 fused multiply-adds, the last one by the exponent's factor into the sum. */
enum { OPS_PER_TERM = 8 };

/*
 * Each row against its device's two limits.  Bytes: what a search must move
 * at least, its measured samples in and its answer (column, FoM) out; the
 * basis stays on chip across the searches of a tile.  Operations: the full
 * search's terms times OPS_PER_TERM (the naive reference's powf costs more:
 * its ratio says how much); a pruned search skips terms, so its ratio can
 * pass 1; the adaptive search's terms are not counted.
 */
static void print_ratios(const bench *B)
{
    bl_device cpu = bl_cpu_device(&B->machine, 0), cpu1 = bl_cpu_device(&B->machine, 1);
    bl_device gpu = bl_gpu_device(&B->machine);
    bool measured = false;
    for (int i = 0; i < B->n; i++) {
        const result *r = &B->r[i];
        char what[96], gw[96], cw[96];
        if (r->rate <= 0)
            continue;
        bool on_gpu = !strncmp(r->path, "GPU", 3), full = !strcmp(r->mode, "full");
        bool one = strstr(r->path, ", 1 thread") != NULL || !strncmp(r->path, "naive", 5);
        double bytes = B->samples * (strcmp(r->data, "int16") ? 4 : 2) + 8, ops = full ? B->terms * OPS_PER_TERM : 0;
        snprintf(what, sizeof what, "%s %s %s", r->path, r->data, r->mode);
        bl_ratio("bench-psa", what, r->rate, "search", bytes, ops, on_gpu ? &gpu : one ? &cpu1 : &cpu);
        if (r->kernel_rate > 0) {
            char kernel[112];
            snprintf(kernel, sizeof kernel, "%s, kernel only", what);
            bl_ratio("bench-psa", kernel, r->kernel_rate, "search", bytes, ops, &gpu);
        }
        double w = on_gpu ? r->gpu_w : r->cpu_w;
        if (r->gpu_w < 0 && r->cpu_w < 0)
            continue;
        measured = true;
        printf("bench-psa: power: %s: GPU %s, CPU packages %s", what, bl_watts_text(r->gpu_w, BL_NO_NVML, gw, sizeof gw),
               bl_watts_text(r->cpu_w, BL_NO_RAPL, cw, sizeof cw));
        if (w > 0)
            printf("; %.4g searches per joule of the %s", r->rate / w, on_gpu ? "GPU" : "CPU packages");
        printf("\n");
    }
    if (!measured)
        printf("bench-psa: power: not measured (%s, %s)\n", BL_NO_NVML, BL_NO_RAPL);
}

/* ---- accuracy of a PSA run against its truth */

typedef struct bin {
    double lo, hi, s2[3], s1[3];
    size_t n;
} bin;

enum { N_ACCURACY_BINS = 11 };

/* Crystals with one truth interaction and one hit: found minus true, by energy. */
static void accumulate(const adf_truth *t, const adf_psa *p, bin *bins, int n_bins)
{
    int idx = -1, count = 0;
    for (int i = 0; i < t->n_interactions; i++)
        if (t->hit[i].crystal_id == p->crystal_id) {
            idx = i;
            count++;
        }
    if (count != 1 || p->n_hits != 1)
        return;
    const adf_truth_hit *h = &t->hit[idx];
    for (int b = 0; b < n_bins; b++)
        if (h->e >= bins[b].lo && h->e < bins[b].hi) {
            float found[3] = { p->hit[0].x, p->hit[0].y, p->hit[0].z };
            for (int a = 0; a < 3; a++) {
                double d = found[a] - h->pos[a];
                bins[b].s2[a] += d * d;
                bins[b].s1[a] += d;
            }
            bins[b].n++;
        }
}

static void accumulate_frame(const adf_truth *t, const adf_psa *p, void *bins)
{
    accumulate(t, p, bins, N_ACCURACY_BINS);
}

static int accuracy(const options *o)
{
    static const double edges[N_ACCURACY_BINS + 1] = { 50, 150, 250, 350, 500, 700, 900, 1100, 1300, 1400,
                                                       1700, 2100 };
    bin bins[N_ACCURACY_BINS] = { { 0 } };
    for (int b = 0; b < N_ACCURACY_BINS; b++)
        bins[b].lo = edges[b], bins[b].hi = edges[b + 1];
    int rc = tool_psa_with_truth("bench-psa", o->accuracy, accumulate_frame, bins);
    FILE *csv = o->csv ? fopen(o->csv, "w") : NULL;
    printf("| energy, keV | crystals | RMS x, mm | RMS y | RMS z | AGATA sigma(E), mm | mean x, y, z |\n"
           "|---|---:|---:|---:|---:|---:|---|\n");
    if (csv)
        fprintf(csv, "# e_mid_kev n rms_x rms_y rms_z agata_sigma\n");
    for (int b = 0; b < N_ACCURACY_BINS; b++) {
        bin *x = &bins[b];
        if (!x->n)
            continue;
        double mid = 0.5 * (x->lo + x->hi), agata = 2.7 + 6.2 * sqrt(100.0 / mid), r[3];
        for (int a = 0; a < 3; a++)
            r[a] = sqrt(x->s2[a] / x->n);
        printf("| %.0f-%.0f | %zu | %.2f | %.2f | %.2f | %.1f | %+.2f %+.2f %+.2f |\n", x->lo, x->hi,
               x->n, r[0], r[1], r[2], agata, x->s1[0] / x->n, x->s1[1] / x->n, x->s1[2] / x->n);
        if (csv)
            fprintf(csv, "%.1f %zu %.4f %.4f %.4f %.3f\n", mid, x->n, r[0], r[1], r[2], agata);
    }
    if (csv)
        fclose(csv);
    return rc;
}

/* ---- main */

static int usage(void)
{
    fprintf(stderr,
            "usage: bench-psa [--basis FILE] [--searches N] [--cpu N] [--naive N] [--exponent P] "
            "[--ladder N] [--prune-step N] [--gpu DEV] [--no-gpu-prune] [--coarse MM] [--radius MM] [--check] "
            "[--rounds N]\n"
            "       bench-psa --accuracy PSA-OUTPUT.adf [--csv FILE]\n"
            "defaults: --basis " DEFAULT_BASIS " (built when missing) --searches 65536 (GPU) --cpu 8192 "
            "--naive 400 --ladder 2048 --prune-step 128 --exponent 0.3 --gpu 0 --coarse 6 --radius 8 "
            "(adaptive search, as PSA.conf)\n"
            "--ladder: searches of the thesis's algorithm and ours on one thread and on all; --prune-step: "
            "columns per step of the CPU's pruned full search (at most 128)\n"
            "the GPU's pruned full search (gs_gpu_set_prune, the actor's default GPUPrune fine) is measured "
            "and checked bit for bit beside the exhaustive one; --no-gpu-prune leaves it out (--gpu-prune: "
            "the default, accepted)\n"
            "--check: exit 1 unless the CPU agrees with the naive reference and the GPU with the CPU\n"
            "--rounds N: only the GPU, on N blocks of the replay chain's batch sizes (pruned and exhaustive, "
            "timed per batch, checked bit for bit against one large batch)\n");
    return 2;
}

static int parse(int argc, char **argv, options *o)
{
    *o = (options){ .basis = DEFAULT_BASIS, .searches = 65536, .cpu = 8192, .naive = 400, .ladder = 2048,
                    .prune_step = PSA_PRUNE_STEP, .p = 0.3,
                    .coarse_mm = 6, .radius_mm = 8, .gpu_prune = true };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--check") || !strcmp(a, "--gpu-prune")) {
            *(!strcmp(a, "--check") ? &o->check : &o->gpu_prune) = true;
            continue;
        }
        if (!strcmp(a, "--no-gpu-prune")) {
            o->gpu_prune = false;
            continue;
        }
        if (!v)
            return -1;
        i++;
        if (!strcmp(a, "--basis")) o->basis = v;
        else if (!strcmp(a, "--accuracy")) o->accuracy = v;
        else if (!strcmp(a, "--csv")) o->csv = v;
        else if (!strcmp(a, "--searches")) o->searches = strtoul(v, NULL, 10);
        else if (!strcmp(a, "--cpu")) o->cpu = strtoul(v, NULL, 10);
        else if (!strcmp(a, "--naive")) o->naive = strtoul(v, NULL, 10);
        else if (!strcmp(a, "--ladder")) o->ladder = strtoul(v, NULL, 10);
        else if (!strcmp(a, "--prune-step")) o->prune_step = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--exponent")) o->p = strtod(v, NULL);
        else if (!strcmp(a, "--coarse")) o->coarse_mm = strtod(v, NULL);
        else if (!strcmp(a, "--radius")) o->radius_mm = strtod(v, NULL);
        else if (!strcmp(a, "--gpu")) o->gpu = atoi(v);
        else if (!strcmp(a, "--rounds")) o->rounds = strtoul(v, NULL, 10);
        else return -1;
    }
    if (o->searches < 1 || o->cpu > o->searches || o->naive > o->searches || o->ladder > o->searches ||
        o->prune_step < 1 || o->prune_step > PSA_PRUNE_STEP || !(o->p > 0 && o->p <= PSA_POW_MAX))
        return -1;
    return 0;
}

static int prepare(bench *B)
{
    char msg[1024];
    double err;
    if (ensure_basis(B->o.basis) || det_basis_load(&B->basis, B->o.basis, msg, sizeof msg)) {
        fprintf(stderr, "bench-psa: %s\n", ensure_basis(B->o.basis) ? "basisgen failed" : msg);
        return -1;
    }
    psa_layout_params lp = { .window_start = B->basis.pretrigger - 1, .window = 40,
                             .coarse_mm = B->o.coarse_mm, .radius_mm = B->o.radius_mm, .f32 = 1, .i16 = 1 };
    for (unsigned s = 0; s < DET_SEGMENTS; s++)
        lp.n_mask[s] = (uint8_t)psa_default_mask(s, lp.mask[s]);
    if (psa_layout_build(&B->layout, &B->basis, &lp, msg, sizeof msg) || psa_pow_fit(B->o.p, &B->pw, &err)) {
        fprintf(stderr, "bench-psa: %s: %s\n", B->o.basis, msg);
        return -1;
    }
    if (make_events(B)) {
        fprintf(stderr, "bench-psa: out of memory for %zu searches\n", B->o.searches);
        return -1;
    }
    double evals = 0, samples = 0;
    for (size_t i = 0; i < B->ev.batch.n; i++) {
        const psa_segment *g = &B->layout.seg[B->ev.batch.q[i].segment];
        evals += (double)g->n_points * g->n_mask * B->layout.window;
        samples += (double)g->n_mask * B->layout.window;
    }
    B->terms = evals / B->ev.batch.n;
    B->samples = samples / B->ev.batch.n;
    printf("bench-psa: basis %s: %u points, grid %g mm; window %u samples, default masks; p = %g "
           "(fast |d|^p: largest relative error %.2g)\n", B->o.basis, B->basis.n_points,
           B->basis.grid_mm, B->layout.window, B->o.p, err + 1.2e-7);
    printf("bench-psa: %zu searches of one net-charge segment at %.0f keV with %.0f keV noise; "
           "a full search evaluates |d|^p %.0f times on average\n", B->ev.batch.n, ENERGY_KEV,
           NOISE_KEV, evals / B->ev.batch.n);
    return 0;
}

/* Every CPU kernel on the same searches, float and int16, full and adaptive: the same bits. */
static void run_cpu_kernels(bench *B)
{
    static const psa_simd kinds[] = { PSA_SIMD_AVX512, PSA_SIMD_AVX2, PSA_SIMD_SCALAR };
    static const char *names[] = { "CPU AVX-512", "CPU AVX2", "CPU portable" };
    static const psa_data datas[] = { PSA_F32, PSA_I16 };
    static const psa_mode modes[] = { PSA_FULL, PSA_ADAPTIVE };
    for (int k = 0; k < 3; k++) {
        psa_engine e;
        char msg[512];
        psa_engine_params p = { .device = PSA_DEVICE_CPU, .mode = PSA_FULL, .data = PSA_F32, .simd = kinds[k] };
        psa_engine_create(&e, &B->basis, &B->layout, &B->pw, &p, msg, sizeof msg);
        if (e.cpu.simd != kinds[k])
            continue;
        e.cpu.prune_step = B->o.prune_step;
        for (int d = 0; d < 2; d++)
            for (int m = 0; m < 2; m++)
                run_engine(B, &e, names[k], datas[d], modes[m], kinds[k] == PSA_SIMD_SCALAR ? 48 : 384, 1);
        psa_engine_destroy(&e);
    }
    for (int d = 0; d < 2; d++)
        for (int m = 0; m < 2; m++) {
            const char *dn = d ? "int16" : "float", *mn = m ? "adaptive" : "full";
            for (int a = 0; a < 3; a++)
                for (int b = a + 1; b < 3; b++) {
                    char what[64];
                    snprintf(what, sizeof what, "%s = %s, %s %s (bits)", names[b] + 4, names[a] + 4, dn, mn);
                    agree(B, what, find(B, names[a], dn, mn), find(B, names[b], dn, mn), false, true);
                }
        }
}

/*
 * The thesis's speed ladder, like for like: its CPU algorithm (CPUKernel
 * thesis) and ours, exhaustive and pruned, on one thread and on all, float
 * and int16, full searches, the first --ladder searches.  Its answers
 * against ours: the same point, or a near-tie; FoMs within 1e-5 (the table
 * and powf round each term once more than our fused sums).
 */
static void run_ladder(bench *B)
{
    static const psa_data datas[] = { PSA_I16, PSA_F32 };
    int all = omp_get_max_threads(), counts[2] = { 1, all };
    for (int k = 0; k < (all > 1 ? 2 : 1); k++)
        for (int d = 0; d < 2; d++) {
            static const struct { psa_simd simd; int prune; const char *name; } paths[] = {
                { PSA_SIMD_THESIS, 0, "thesis CPU" },
                { PSA_SIMD_AUTO, 0, "CPU exhaustive" },
                { PSA_SIMD_AUTO, 1, "CPU pruned" },
            };
            for (int i = 0; i < 3; i++) {
                psa_engine e;
                char msg[512], path[48];
                psa_engine_params p = { .device = PSA_DEVICE_CPU, .mode = PSA_FULL, .data = datas[d],
                                         .simd = paths[i].simd, .threads = counts[k] };
                if (psa_engine_create(&e, &B->basis, &B->layout, &B->pw, &p, msg, sizeof msg))
                    continue;
                e.cpu.prune = paths[i].prune;
                e.cpu.prune_step = B->o.prune_step;
                snprintf(path, sizeof path, "%s, %d thread%s", paths[i].name, counts[k], counts[k] > 1 ? "s" : "");
                run_engine(B, &e, path, datas[d], PSA_FULL, B->o.ladder, 3);
                psa_engine_destroy(&e);
            }
        }
    printf("bench-psa: the ladder's agreement\n");
    for (int d = 0; d < 2; d++) {
        const char *dn = d ? "float" : "int16";
        char what[64];
        snprintf(what, sizeof what, "thesis %s vs CPU exhaustive (1e-5)", dn);
        agree_within(B, what, find(B, "CPU exhaustive", dn, "full"), find(B, "thesis CPU", dn, "full"), 1e-5);
        snprintf(what, sizeof what, "CPU pruned = exhaustive, %s (bits)", dn);
        agree(B, what, find(B, "CPU exhaustive", dn, "full"), find(B, "CPU pruned", dn, "full"), false, true);
    }
}

/* With --gpu-prune, the GPU's pruned full search (search_tiles_pruned) on the
 * same searches, with each of its bounds (gpu_prunes). */
#ifdef NARWHAL_HAVE_CUDA
/* The GPU's pruned rows: each mode, whether its searches start from a guess
 * (gs_gpu_set_guess), its row's path, and the prefix the agreement lines
 * name it by (a row's own path, or a prefix no row before it has). */
static const struct { int mode, guess; const char *path, *label; } gpu_prunes[] = {
    { GS_PRUNE_EXPONENT, 0, "GPU pruned, exponent bound", "GPU pruned, exponent" },
    { GS_PRUNE_FINE, 0, "GPU pruned, 3-bit bound", "GPU pruned, 3-bit" },
    { GS_PRUNE_LOG, 0, "GPU pruned, log bound", "GPU pruned, log" },
    { GS_PRUNE_BYTE, 0, "GPU pruned, byte bound", "GPU pruned, byte" },
    { GS_PRUNE_LOG, 1, "GPU pruned, log bound, guess", "GPU pruned, log bound, guess" },
    { GS_PRUNE_BYTE, 1, "GPU pruned, byte bound, guess", "GPU pruned, byte bound, guess" },
    { GS_PRUNE_GEO, 0, "GPU pruned, geometric bound", "GPU pruned, geometric" },
    { GS_PRUNE_GEO, 1, "GPU pruned, geometric bound, guess", "GPU pruned, geometric bound, guess" },
};
enum { N_GPU_PRUNES = sizeof gpu_prunes / sizeof gpu_prunes[0] };
#endif

static void run_gpu_pruned(bench *B, psa_engine *gpu, psa_data data)
{
#ifdef NARWHAL_HAVE_CUDA
    for (int i = 0; B->o.gpu_prune && i < N_GPU_PRUNES; i++) {
        if ((gpu_prunes[i].mode == GS_PRUNE_LOG || gpu_prunes[i].mode == GS_PRUNE_GEO) && !(B->o.p < 2)) {
            printf("bench-psa: no row '%s': Mitchell's bound holds for p < 2\n", gpu_prunes[i].path);
            continue;
        }
        if (gs_gpu_set_prune(gpu->gpu, gpu_prunes[i].mode) != GPU_OK) {
            printf("bench-psa: no row '%s': the device lacks the pruned kernel's shared memory, or the bound "
                   "does not hold for this basis and p\n", gpu_prunes[i].path);
            B->failures++;
            continue;
        }
        gs_gpu_set_guess(gpu->gpu, gpu_prunes[i].guess);
        run_engine(B, gpu, gpu_prunes[i].path, data, PSA_FULL, B->o.searches, 5);
    }
    gs_gpu_set_prune(gpu->gpu, GS_PRUNE_OFF);
    gs_gpu_set_guess(gpu->gpu, 0);
#endif
}

/*
 * --rounds N: the searches in the batches the replay chain's 16 MB blocks
 * send the GPU, N blocks' worth, one batch at a time: each batch's kernels
 * timed (gs_gpu_kernel_ms: their span), pruned (GPUPrune fine, the actor's
 * default) and exhaustive, each batch's answers against the same searches
 * answered in one large exhaustive batch, bit for bit.  The sizes: a block
 * of sample_runs/full_chain/h200-issue20/9-final (Neighbours off: 1,957,087
 * crystal-events, 5,167,092 searches, 945 blocks): round 0 (2,059), the
 * start-time refinement's three passes (2,131 in all, split as assumed
 * here), the later hits' rounds (1,277 in all, likewise).  The actor runs
 * them through gs_resident_launch (the same kernels and tile plans; the
 * refinement's passes on round 0's plan), this through gs_gpu_search.
 */
#ifdef NARWHAL_HAVE_CUDA
static const size_t round_sizes[] = { 2059, 1130, 680, 320, 850, 280, 100, 35, 12 };
enum { N_ROUND_SIZES = sizeof round_sizes / sizeof round_sizes[0] };

/* Runs the batches of `blocks` blocks from the first search on; adds each size's kernel
 * seconds to kernel_s and host-to-host seconds to host_s; the answers in q.  False on failure. */
static bool replay_rounds(bench *B, psa_engine *e, size_t blocks, psa_query *q, double kernel_s[],
                          double host_s[])
{
    char msg[512];
    bool fell_back = false;
    size_t at = 0;
    for (size_t k = 0; k < blocks; k++)
        for (int r = 0; r < N_ROUND_SIZES; r++) {
            psa_batch b = B->ev.batch;
            b.q = q + at;
            b.n = round_sizes[r];
            double t = tool_seconds();
            if (psa_engine_run(e, &b, &fell_back, msg, sizeof msg) || fell_back) {
                printf("bench-psa: rounds: %s\n", fell_back ? msg : "out of memory");
                return false;
            }
            host_s[r] += tool_seconds() - t;
            kernel_s[r] += gs_gpu_kernel_ms(e->gpu) * 1e-3;
            at += b.n;
        }
    return true;
}
#endif

static void run_rounds(bench *B)
{
#ifdef NARWHAL_HAVE_CUDA
    static const struct { int mode, guess; const char *how, *row; } runs[] = {
        { GS_PRUNE_FINE, 0, "pruned (fine)", "GPU rounds pruned" },
        { GS_PRUNE_LOG, 0, "pruned (log)", "GPU rounds pruned, log" },
        { GS_PRUNE_BYTE, 0, "pruned (byte)", "GPU rounds pruned, byte" },
        { GS_PRUNE_BYTE, 1, "pruned (byte, guess)", "GPU rounds pruned, byte, guess" },
        { GS_PRUNE_LOG, 1, "pruned (log, guess)", "GPU rounds pruned, log, guess" },
        { GS_PRUNE_GEO, 0, "pruned (geometric)", "GPU rounds pruned, geometric" },
        { GS_PRUNE_OFF, 0, "exhaustive", "GPU rounds exhaustive" },
    };
    size_t per_block = 0;
    for (int r = 0; r < N_ROUND_SIZES; r++)
        per_block += round_sizes[r];
    const size_t blocks = B->o.rounds, n = blocks * per_block;
    char msg[512];
    psa_engine gpu;
    psa_engine_params p = { .device = PSA_DEVICE_GPU, .gpu = B->o.gpu, .mode = PSA_FULL, .data = PSA_F32,
                            .simd = PSA_SIMD_AUTO };
    if (n > B->ev.batch.n) {
        printf("bench-psa: --rounds %zu needs %zu searches (--searches)\n", blocks, n);
        B->failures++;
        return;
    }
    if (psa_engine_create(&gpu, &B->basis, &B->layout, &B->pw, &p, msg, sizeof msg)) {
        printf("bench-psa: no GPU for --rounds: %s\n", msg);
        B->failures++;
        return;
    }
    printf("bench-psa: %s\n", msg);
    run_engine(B, &gpu, "GPU", PSA_F32, PSA_FULL, n, 1);
    const result *whole = find(B, "GPU", "float", "full");
    psa_query *q = malloc(n * sizeof *q);
    if (!q) {
        printf("bench-psa: rounds: out of memory\n");
        B->failures++;
    }
    for (size_t i = 0; q && i < sizeof runs / sizeof *runs; i++) {
        const int prune = runs[i].mode;
        double kernel_s[N_ROUND_SIZES] = { 0 }, host_s[N_ROUND_SIZES] = { 0 }, warm[N_ROUND_SIZES] = { 0 };
        double all_k = 0, all_h = 0;
        memcpy(q, B->ev.batch.q, n * sizeof *q);
        gs_gpu_set_guess(gpu.gpu, runs[i].guess);
        if (gs_gpu_set_prune(gpu.gpu, prune) != GPU_OK || !replay_rounds(B, &gpu, 1, q, warm, warm) ||
            !replay_rounds(B, &gpu, blocks, q, kernel_s, host_s)) {
            B->failures++;
            break;
        }
        const char *how = runs[i].how;
        printf("bench-psa: rounds, %s: %zu blocks of the replay chain's batches, float full search\n"
               "| batch | searches | kernels, ms per batch | searches/s in the kernels | host to host |\n"
               "|---:|---:|---:|---:|---:|\n", how, blocks);
        for (int r = 0; r < N_ROUND_SIZES; r++) {
            printf("| %zu | %zu | %.3f | %.0f | %.0f |\n", round_sizes[r], round_sizes[r] * blocks,
                   1e3 * kernel_s[r] / blocks, round_sizes[r] * blocks / kernel_s[r],
                   round_sizes[r] * blocks / host_s[r]);
            all_k += kernel_s[r];
            all_h += host_s[r];
        }
        printf("| a block | %zu | %.3f | **%.0f** | %.0f |\n", n, 1e3 * all_k / blocks, n / all_k, n / all_h);
        result *r = add_result(B, runs[i].row, PSA_F32, PSA_FULL, n);
        r->rate = n / all_h;
        r->kernel_rate = n / all_k;
        r->q = malloc(n * sizeof *q);
        if (r->q)
            memcpy(r->q, q, n * sizeof *q);
        char what[64];
        snprintf(what, sizeof what, "rounds %s = one batch (bits)", how);
        agree(B, what, whole, r->q ? r : NULL, false, true);
    }
    free(q);
    psa_engine_destroy(&gpu);
#else
    printf("bench-psa: --rounds: built without CUDA\n");
    B->failures++;
#endif
}

static void run_all(bench *B)
{
    static const psa_data datas[] = { PSA_F32, PSA_I16 };
    static const psa_mode modes[] = { PSA_FULL, PSA_ADAPTIVE };
    char msg[512], path[48];
    psa_engine cpu, gpu;
    psa_engine_params p = { .device = PSA_DEVICE_CPU, .gpu = B->o.gpu, .mode = PSA_FULL, .data = PSA_F32,
                            .simd = PSA_SIMD_AUTO };
    run_naive(B);
    psa_engine_create(&cpu, &B->basis, &B->layout, &B->pw, &p, msg, sizeof msg);
    cpu.cpu.prune_step = B->o.prune_step;
    printf("bench-psa: %s\n", msg);
    snprintf(path, sizeof path, "CPU, %d threads", omp_get_max_threads());
    for (int d = 0; d < 2; d++)
        for (int m = 0; m < 2; m++)
            run_engine(B, &cpu, path, datas[d], modes[m], B->o.cpu, 3);
    bool have_gpu = false;
    for (int d = 0; d < 2; d++) {
        p = (psa_engine_params){ .device = PSA_DEVICE_GPU, .gpu = B->o.gpu, .mode = PSA_FULL, .data = datas[d],
                                 .simd = PSA_SIMD_AUTO };
        if (psa_engine_create(&gpu, &B->basis, &B->layout, &B->pw, &p, msg, sizeof msg)) {
            printf("bench-psa: no GPU column: %s\n", msg);
            break;
        }
        printf("bench-psa: %s\n", msg);
        have_gpu = true;
        for (int m = 0; m < 2; m++)
            run_engine(B, &gpu, "GPU", datas[d], modes[m], B->o.searches, 5);
        run_gpu_pruned(B, &gpu, datas[d]);
        psa_engine_destroy(&gpu);
    }
    printf("bench-psa: agreement\n");
    agree(B, "CPU float full vs naive reference", find(B, "naive", "float", "full"),
          find(B, "CPU,", "float", "full"), true, false);
    for (int d = 0; have_gpu && d < 2; d++)
        for (int m = 0; m < 2; m++) {
            const char *dn = d ? "int16" : "float", *mn = m ? "adaptive" : "full";
            char what[64];
            snprintf(what, sizeof what, "GPU vs CPU, %s %s", dn, mn);
            agree(B, what, find(B, "CPU,", dn, mn), find(B, "GPU", dn, mn), false, false);
        }
#ifdef NARWHAL_HAVE_CUDA /* the pruned rows' modes */
    for (int d = 0; have_gpu && d < 2; d++) {
        const char *dn = d ? "int16" : "float";
        char what[64];
        for (int k = 0; k < N_GPU_PRUNES; k++) {
            const char *pruned = gpu_prunes[k].label;
            snprintf(what, sizeof what, "%s = GPU, %s full (bits)", pruned, dn);
            agree(B, what, find(B, "GPU", dn, "full"), find(B, pruned, dn, "full"), false, true);
            snprintf(what, sizeof what, "%s = CPU, %s full (bits)", pruned, dn);
            agree(B, what, find(B, "CPU,", dn, "full"), find(B, pruned, dn, "full"), false, true);
        }
    }
#endif
    run_cpu_kernels(B);
    run_ladder(B);
    misses(B, find(B, "CPU,", "float", "full"), find(B, "CPU,", "float", "adaptive"));
    misses(B, find(B, "CPU,", "int16", "full"), find(B, "CPU,", "int16", "adaptive"));
    truth(B, find(B, "CPU,", "float", "full"));
    truth(B, find(B, "CPU,", "int16", "full"));
    truth(B, find(B, "CPU,", "float", "adaptive"));
}

int main(int argc, char **argv)
{
    static bench B;
    if (parse(argc, argv, &B.o))
        return usage();
    if (B.o.accuracy)
        return accuracy(&B.o);
    if (prepare(&B))
        return 1;
    bl_measure(&B.machine, B.o.gpu);
    bl_print_machine("bench-psa", &B.machine);
    if (B.o.rounds)
        run_rounds(&B);
    else {
        run_all(&B);
        print_table(&B);
        print_ratios(&B);
    }
    if (B.failures)
        printf("bench-psa: %d check%s FAILED\n", B.failures, B.failures > 1 ? "s" : "");
    return B.o.check && B.failures ? 1 : 0;
}

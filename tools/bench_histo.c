/* bench_histo.c: bench-histo: samples/s and GB/s of the GPU path, the CPU path and CUB's HistogramEven on three histogramming cases. */
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "bench_limits.h"
#include "histo/histo_cpu.h"
#include "tool.h"
#ifdef NARWHAL_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "histogram_cub.h"
#include "histogram_gpu.h"
#endif

/*
 * Cases (docs/PERF.md records the results):
 *   a  one channel, 256 bins, 8-bit samples (uniform random bytes)
 *   b  6,480 channels (36 segments x 180 crystals) x 16,384 bins over [0, 4096) keV,
 *      each channel a few strong lines on a Compton background
 *   c  a 4096 x 4096 gamma-gamma matrix of a cascade, every ordered pair of each event
 * Every path counts the same input; the GPU counts must equal the CPU counts
 * slot for slot (else the program fails), and CUB's bins are compared too.
 * Times are medians over repeated runs; GPU runs are timed from the launch to
 * the end of a stream synchronisation, with the input already on the device
 * ("GPU") or in pageable host memory ("GPU+H2D", the actor's situation).
 */

#define CHANNELS (36 * 180)
#define BINS_B 16384
#define BINS_C 4096

typedef struct row {
    char name[64];
    double seconds, samples, bytes;
    char note[96];
} row;

typedef struct table {
    row r[24];
    int n;
} table;

typedef struct bench {
    size_t n_a, n_b, n_c;
    int reps_gpu, reps_cpu;
    bool gpu;
    bl_machine machine;
    table t;
} bench;

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, tool_by_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void add_row(table *t, const char *name, double sec, double samples, double bytes,
                    const char *note)
{
    if (t->n >= (int)(sizeof t->r / sizeof t->r[0]))
        return;
    row *r = &t->r[t->n++];
    snprintf(r->name, sizeof r->name, "%s", name);
    snprintf(r->note, sizeof r->note, "%s", note ? note : "");
    r->seconds = sec;
    r->samples = samples;
    r->bytes = bytes;
}

/* ---- input models ------------------------------------------------------- */

static uint64_t next_u64(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

static double uniform(uint64_t *s) { return (next_u64(s) >> 11) * 0x1.0p-53; }

static double gauss(uint64_t *s)
{
    double u = uniform(s), v = uniform(s);
    return sqrt(-2.0 * log(u > 0 ? u : 1e-300)) * cos(2 * M_PI * v);
}

/* A germanium detector's response to a line: the photopeak (resolution
 * about 2 keV FWHM at 1.3 MeV) with probability `peak`, else a Compton
 * electron below the edge. */
static float response(uint64_t *s, double line, double peak)
{
    if (uniform(s) < peak)
        return (float)(line + (0.6 + 0.00015 * line) * gauss(s));
    double edge = line * (1.0 - 1.0 / (1.0 + 2.0 * line / 511.0));
    return (float)(edge * uniform(s));
}

/* 152Eu and 60Co lines, the strong ones weighted up. */
static float source_energy(uint64_t *s)
{
    static const double line[] = { 121.78,  344.28,  778.90,  964.08,
                                   1112.08, 1173.23, 1332.49, 1408.01 };
    static const double weight[] = { 0.28, 0.27, 0.13, 0.15, 0.14, 0.5, 0.5, 0.21 };
    double total = 0, pick;
    for (size_t i = 0; i < sizeof line / sizeof line[0]; i++)
        total += weight[i];
    pick = uniform(s) * total;
    for (size_t i = 0; i < sizeof line / sizeof line[0]; i++) {
        if ((pick -= weight[i]) <= 0)
            return response(s, line[i], 0.3);
    }
    return response(s, line[0], 0.3);
}

static void make_bytes(uint8_t *d, size_t n, uint64_t seed)
{
#pragma omp parallel
    {
        uint64_t s = seed + 0x9E3779B97F4A7C15ULL * (uint64_t)(omp_get_thread_num() + 1);
#pragma omp for schedule(static)
        for (size_t i = 0; i < n / 8; i++) {
            uint64_t v = next_u64(&s);
            memcpy(d + 8 * i, &v, 8);
        }
    }
    for (size_t i = n / 8 * 8; i < n; i++)
        d[i] = (uint8_t)i;
}

static void make_family(uint32_t *inst, float *e, size_t n, uint64_t seed)
{
#pragma omp parallel
    {
        uint64_t s = seed + 0x9E3779B97F4A7C15ULL * (uint64_t)(omp_get_thread_num() + 1);
#pragma omp for schedule(static)
        for (size_t i = 0; i < n; i++) {
            inst[i] = (uint32_t)(next_u64(&s) % CHANNELS);
            e[i] = source_energy(&s);
        }
    }
}

/* A rotational band: events of 2 to 5 gammas, each from the cascade; every
 * ordered pair of an event is one sample (x, y). */
static void make_pairs(float *x, float *y, size_t n, uint64_t seed)
{
    static const double band[] = { 208.0, 396.5, 564.9, 713.8, 842.6, 951.3, 1040.1 };
    uint64_t s = seed;
    float g[5];
    size_t at = 0;
    while (at < n) {
        int m = 2 + (int)(next_u64(&s) % 4);
        for (int k = 0; k < m; k++)
            g[k] = response(&s, band[next_u64(&s) % (sizeof band / sizeof band[0])], 0.4);
        for (int i = 0; i < m && at < n; i++)
            for (int j = 0; j < m && at < n; j++)
                if (i != j) {
                    x[at] = g[i];
                    y[at++] = g[j];
                }
    }
}

/* ---- CPU ---------------------------------------------------------------- */

static void run_cpu(bench *b, const char *name, const histo_group *g, const histo_entries *e,
                    const uint8_t *bytes, size_t n, double in_bytes, uint64_t *ref)
{
    uint64_t slots = g->offset + (uint64_t)g->instances * g->slots;
    uint64_t *scratch = calloc(slots, sizeof *scratch);
    double t[16];
    if (!scratch) {
        fprintf(stderr, "bench-histo: out of memory for %s\n", name);
        exit(1);
    }
    memset(scratch, 0, slots * sizeof *scratch); /* page faults out of the timed runs */
    for (int r = -1; r < b->reps_cpu; r++) {
        uint64_t *dst = r < 0 ? ref : scratch;
        double t0 = tool_seconds();
        if (bytes)
            histo_cpu_fill_u8(g, 0, bytes, n, dst);
        else
            histo_cpu_fill(g, e, dst);
        if (r >= 0)
            t[r] = tool_seconds() - t0;
    }
    char note[96];
    snprintf(note, sizeof note, "%d threads", omp_get_max_threads());
    add_row(&b->t, name, median(t, b->reps_cpu), (double)n, in_bytes, note);
    free(scratch);
}

/* ---- GPU and CUB ---------------------------------------------------------- */
#ifdef NARWHAL_HAVE_CUDA

static char msg[512];

#define CU(call)                                                                             \
    do {                                                                                     \
        cudaError_t err_ = (call);                                                           \
        if (err_ != cudaSuccess) {                                                           \
            fprintf(stderr, "bench-histo: %s: %s\n", #call, cudaGetErrorString(err_));       \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

static void check(int rc)
{
    if (rc) {
        fprintf(stderr, "bench-histo: %s\n", msg);
        exit(1);
    }
}

static void *to_device(const void *host, size_t bytes)
{
    void *d = NULL;
    CU(cudaMalloc(&d, bytes ? bytes : 1));
    CU(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice));
    return d;
}

typedef struct gpu_input {
    const histo_entries *dev;  /* entries on the device, or NULL for bytes */
    const histo_entries *host; /* the same entries in host memory */
    const uint8_t *dev_bytes;
} gpu_input;

/* Times the GPU path and checks its counts against the CPU's (exit on a difference). */
static void run_gpu(bench *b, const char *name, const histo_group *g, const gpu_input *in, size_t n,
                    double in_bytes, const uint64_t *ref)
{
    uint64_t slots = g->offset + (uint64_t)g->instances * g->slots;
    uint64_t *got = malloc(slots * sizeof *got);
    histo_gpu *gpu;
    double t[64];
    char plan[128], label[80];
    if (!got) {
        fprintf(stderr, "bench-histo: out of memory for %s\n", name);
        exit(1);
    }
    check(histo_gpu_create(&gpu, slots, msg, sizeof msg));
    histo_gpu_plan_text(gpu, g, plan, sizeof plan);
    for (int r = -2; r < b->reps_gpu; r++) {
        if (r == -1)
            check(histo_gpu_clear(gpu, msg, sizeof msg));
        check(histo_gpu_sync(gpu, msg, sizeof msg));
        double t0 = tool_seconds();
        if (in->dev_bytes)
            check(histo_gpu_fill_u8_device(gpu, g, 0, in->dev_bytes, n, msg, sizeof msg));
        else
            check(histo_gpu_fill_device(gpu, g, in->dev, msg, sizeof msg));
        check(histo_gpu_sync(gpu, msg, sizeof msg));
        if (r >= 0)
            t[r] = tool_seconds() - t0;
        if (r == -1) {
            check(histo_gpu_download(gpu, got, msg, sizeof msg));
            for (uint64_t s = 0; s < slots; s++)
                if (got[s] != ref[s]) {
                    fprintf(stderr, "bench-histo: %s: GPU slot %llu = %llu, CPU %llu\n", name,
                            (unsigned long long)s, (unsigned long long)got[s],
                            (unsigned long long)ref[s]);
                    exit(1);
                }
            printf("%s: GPU counts equal CPU counts in all %llu slots (%s)\n", name,
                   (unsigned long long)slots, plan);
        }
    }
    add_row(&b->t, name, median(t, b->reps_gpu), (double)n, in_bytes, plan);
    if (in->host) {
        for (int r = -1; r < b->reps_gpu; r++) {
            check(histo_gpu_sync(gpu, msg, sizeof msg));
            double t0 = tool_seconds();
            check(histo_gpu_fill_host(gpu, g, in->host, 1, msg, sizeof msg));
            check(histo_gpu_sync(gpu, msg, sizeof msg));
            if (r >= 0)
                t[r] = tool_seconds() - t0;
        }
        snprintf(label, sizeof label, "%s+H2D", name);
        add_row(&b->t, label, median(t, b->reps_gpu), (double)n, in_bytes,
                "entries from pageable host memory, one transfer");
    }
    histo_gpu_destroy(gpu);
    free(got);
}

/* Bins where CUB's counts differ from ours (ours carry 3 extra slots per histogram). */
static size_t cub_differences(const unsigned *cub, const uint64_t *ours, const histo_group *g,
                              uint64_t bins)
{
    size_t diff = 0;
    for (uint64_t i = 0; i < g->instances; i++)
        for (uint64_t k = 0; k < bins; k++)
            diff += cub[i * bins + k] != ours[g->offset + i * g->slots + k];
    return diff;
}

static void cub_row(bench *b, const char *name, double *t, double n, double bytes, size_t diff,
                    const char *how)
{
    char note[96];
    snprintf(note, sizeof note, "%s; %zu bins differ from ours", how, diff);
    add_row(&b->t, name, median(t, b->reps_cpu), n, bytes, note);
}

static void cub_u8(bench *b, histo_cub *c, const uint8_t *dev, size_t n, const histo_group *g,
                   const uint64_t *ref)
{
    unsigned *d_hist, hist[256];
    double t[16];
    CU(cudaMalloc((void **)&d_hist, sizeof hist));
    for (int r = -1; r < b->reps_cpu; r++) {
        check(histo_cub_sync(msg, sizeof msg));
        double t0 = tool_seconds();
        check(histo_cub_u8(c, dev, n, d_hist, msg, sizeof msg));
        check(histo_cub_sync(msg, sizeof msg));
        if (r >= 0)
            t[r] = tool_seconds() - t0;
    }
    CU(cudaMemcpy(hist, d_hist, sizeof hist, cudaMemcpyDeviceToHost));
    cudaFree(d_hist);
    cub_row(b, "a CUB", t, (double)n, (double)n, cub_differences(hist, ref, g, 256),
            "HistogramEven, 257 levels");
}

/* Samples grouped by histogram (a counting sort, not timed: it favours CUB),
 * then one HistogramEven call per histogram. */
static void cub_each(bench *b, histo_cub *c, const char *name, const uint32_t *key,
                     const float *value, size_t n, size_t k, const histo_group *g,
                     const histo_axis *a, const uint64_t *ref)
{
    size_t *start = calloc(k + 1, sizeof *start), *fill = calloc(k + 1, sizeof *fill);
    float *grouped = malloc(n * sizeof *grouped);
    unsigned *hist = malloc(k * a->bins * sizeof *hist), *d_hist;
    double t[16];
    if (!start || !fill || !grouped || !hist) {
        fprintf(stderr, "bench-histo: out of memory for %s\n", name);
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        start[key[i] + 1]++;
    for (size_t i = 0; i < k; i++)
        fill[i + 1] = start[i + 1] += start[i];
    for (size_t i = 0; i < n; i++)
        grouped[fill[key[i]]++] = value[i];
    float *d_samples = to_device(grouped, n * sizeof *grouped);
    CU(cudaMalloc((void **)&d_hist, k * a->bins * sizeof *d_hist));
    for (int r = -1; r < b->reps_cpu; r++) {
        check(histo_cub_sync(msg, sizeof msg));
        double t0 = tool_seconds();
        check(histo_cub_f32_each(c, d_samples, start, k, a->bins, a->lo, a->hi, d_hist, msg,
                                 sizeof msg));
        check(histo_cub_sync(msg, sizeof msg));
        if (r >= 0)
            t[r] = tool_seconds() - t0;
    }
    CU(cudaMemcpy(hist, d_hist, k * a->bins * sizeof *hist, cudaMemcpyDeviceToHost));
    char how[64];
    snprintf(how, sizeof how, "HistogramEven, one call per histogram (%zu)", k);
    cub_row(b, name, t, (double)n, (double)n * sizeof(float),
            cub_differences(hist, ref, g, a->bins), how);
    cudaFree(d_samples);
    cudaFree(d_hist);
    free(start);
    free(fill);
    free(grouped);
    free(hist);
}

/* One HistogramEven call over a combined index (histogram * bins + bin,
 * computed on the host with our binning, not timed), where CUB's temporary
 * storage, a private copy of every bin per block, fits the device. */
static void cub_combined(bench *b, histo_cub *c, const char *name, const uint32_t *key,
                         const histo_axis *a, const float *value, size_t n, size_t k,
                         const histo_group *g, const uint64_t *ref)
{
    uint64_t bins = (uint64_t)k * a->bins;
    size_t need = histo_cub_combined_temp(n, bins), free_b = 0, total_b = 0;
    CU(cudaMemGetInfo(&free_b, &total_b));
    printf("  %s: CUB with a combined index (%llu bins, one call) asks for %.1f GiB of temporary "
           "storage; the device has %.1f GiB free\n", name, (unsigned long long)bins,
           need / 1073741824.0, free_b / 1073741824.0);
    if (!need || need + bins * 4 + n * 4 > free_b / 10 * 9) {
        printf("  %s: combined index not run: it does not fit\n", name);
        return;
    }
    if (need / sizeof(unsigned) > INT_MAX) {
        /* On an H200 (2026-11-21) such a call, 16.8 M bins asking 24.8 GiB, ended in
         * "an illegal memory access": CUB indexes its per-block copies with int. */
        printf("  %s: combined index not run: CUB's per-block copies hold more than 2^31 "
               "counters, which it indexes with int (it crashed so on an H200)\n", name);
        return;
    }
    int *idx = malloc(n * sizeof *idx);
    unsigned *hist = malloc(bins * sizeof *hist), *d_hist;
    double t[16];
    if (!idx || !hist) {
        fprintf(stderr, "bench-histo: out of memory for %s\n", name);
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        idx[i] = (int)(key[i] * a->bins + histo_axis_bin(a, value[i]));
    int *d_idx = to_device(idx, n * sizeof *idx);
    CU(cudaMalloc((void **)&d_hist, bins * sizeof *d_hist));
    for (int r = -1; r < b->reps_cpu; r++) {
        check(histo_cub_sync(msg, sizeof msg));
        double t0 = tool_seconds();
        check(histo_cub_combined(c, d_idx, n, bins, d_hist, msg, sizeof msg));
        check(histo_cub_sync(msg, sizeof msg));
        if (r >= 0)
            t[r] = tool_seconds() - t0;
    }
    CU(cudaMemcpy(hist, d_hist, bins * sizeof *hist, cudaMemcpyDeviceToHost));
    char label[64];
    snprintf(label, sizeof label, "%s combined", name);
    cub_row(b, label, t, (double)n, (double)n * sizeof(int), cub_differences(hist, ref, g, a->bins),
            "HistogramEven, one call, combined index");
    cudaFree(d_idx);
    cudaFree(d_hist);
    free(idx);
    free(hist);
}
#endif

/* ---- cases ------------------------------------------------------------------ */

static histo_group group_1d(uint32_t bins, double lo, double hi, uint32_t instances)
{
    histo_group g = { .dims = 1, .instances = instances, .slots = bins + HISTO_EXTRA };
    histo_axis_make(&g.ax[0], bins, lo, hi);
    return g;
}

static void case_a(bench *b)
{
    size_t n = b->n_a;
    uint8_t *bytes = malloc(n);
    histo_group g = group_1d(256, 0, 256, 1);
    uint64_t ref[256 + HISTO_EXTRA] = { 0 };
    if (!bytes) {
        fprintf(stderr, "bench-histo: out of memory for case a\n");
        exit(1);
    }
    make_bytes(bytes, n, 1);
    run_cpu(b, "a CPU", &g, NULL, bytes, n, (double)n, ref);
#ifdef NARWHAL_HAVE_CUDA
    if (b->gpu) {
        uint8_t *dev = to_device(bytes, n);
        gpu_input in = { .dev_bytes = dev };
        histo_cub *c;
        run_gpu(b, "a GPU", &g, &in, n, (double)n, ref);
        check(histo_cub_create(&c, msg, sizeof msg));
        cub_u8(b, c, dev, n, &g, ref);
        histo_cub_destroy(c);
        cudaFree(dev);
    }
#endif
    free(bytes);
}

static void case_b(bench *b)
{
    size_t n = b->n_b;
    uint32_t *inst = malloc(n * sizeof *inst);
    float *e = malloc(n * sizeof *e);
    histo_group g = group_1d(BINS_B, 0, 4096, CHANNELS);
    uint64_t *ref = calloc(g.instances * g.slots, sizeof *ref);
    if (!inst || !e || !ref) {
        fprintf(stderr, "bench-histo: out of memory for case b\n");
        exit(1);
    }
    make_family(inst, e, n, 2);
    histo_entries host = { .inst = inst, .x = e, .n = n };
    run_cpu(b, "b CPU", &g, &host, NULL, n, 8.0 * n, ref);
#ifdef NARWHAL_HAVE_CUDA
    if (b->gpu) {
        histo_entries dev = { .inst = to_device(inst, n * 4), .x = to_device(e, n * 4), .n = n };
        gpu_input in = { .dev = &dev, .host = &host };
        histo_cub *c;
        run_gpu(b, "b GPU", &g, &in, n, 8.0 * n, ref);
        cudaFree((void *)dev.inst);
        cudaFree((void *)dev.x);
        check(histo_cub_create(&c, msg, sizeof msg));
        cub_each(b, c, "b CUB", inst, e, n, CHANNELS, &g, &g.ax[0], ref);
        cub_combined(b, c, "b CUB", inst, &g.ax[0], e, n, CHANNELS, &g, ref);
        histo_cub_destroy(c);
    }
#endif
    free(inst);
    free(e);
    free(ref);
}

static void case_c(bench *b)
{
    size_t n = b->n_c;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    histo_group g = { .dims = 2, .instances = 1, .slots = (uint64_t)BINS_C * BINS_C + HISTO_EXTRA };
    uint64_t *ref = calloc(g.slots, sizeof *ref);
    if (!x || !y || !ref) {
        fprintf(stderr, "bench-histo: out of memory for case c\n");
        exit(1);
    }
    histo_axis_make(&g.ax[0], BINS_C, 0, 4096);
    histo_axis_make(&g.ax[1], BINS_C, 0, 4096);
    make_pairs(x, y, n, 3);
    histo_entries host = { .x = x, .y = y, .n = n };
    run_cpu(b, "c CPU", &g, &host, NULL, n, 8.0 * n, ref);
#ifdef NARWHAL_HAVE_CUDA
    if (b->gpu) {
        histo_entries dev = { .x = to_device(x, n * 4), .y = to_device(y, n * 4), .n = n };
        gpu_input in = { .dev = &dev, .host = &host };
        histo_cub *c;
        uint32_t *row_of = malloc(n * sizeof *row_of);
        if (!row_of) {
            fprintf(stderr, "bench-histo: out of memory for case c\n");
            exit(1);
        }
        run_gpu(b, "c GPU", &g, &in, n, 8.0 * n, ref);
        cudaFree((void *)dev.x);
        cudaFree((void *)dev.y);
        for (size_t i = 0; i < n; i++)
            row_of[i] = histo_axis_bin(&g.ax[0], x[i]);
        /* CUB sees the matrix as 4096 row histograms (its instances). */
        histo_group rows = { .dims = 1, .instances = BINS_C, .slots = BINS_C };
        check(histo_cub_create(&c, msg, sizeof msg));
        cub_each(b, c, "c CUB", row_of, y, n, BINS_C, &rows, &g.ax[1], ref);
        cub_combined(b, c, "c CUB", row_of, &g.ax[1], y, n, BINS_C, &rows, ref);
        histo_cub_destroy(c);
        free(row_of);
    }
#endif
    free(x);
    free(y);
    free(ref);
}

static const row *find(const table *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->r[i].name, name) == 0)
            return &t->r[i];
    return NULL;
}

/* FP32 instructions per value of histo_slot_1d (3 comparisons, a subtraction, a multiply, a
 * conversion), twice for a pair; a byte's bin is the byte: its count's add alone. */
static double ops_per_value(const row *r)
{
    return r->name[0] == 'a' ? 1 : r->name[0] == 'b' ? 6 : 12;
}

/* Each row against its device's limits: the CPU's, the GPU's, or PCIe's for the +H2D rows. */
static void print_ratios(const bench *b)
{
    bl_device cpu = bl_cpu_device(&b->machine, 0), gpu = bl_gpu_device(&b->machine), h2d = gpu;
    h2d.bw = b->machine.gpu.h2d_bw;
    h2d.bw_how = "the measured pinned host-to-device copy";
    for (int i = 0; i < b->t.n; i++) {
        const row *r = &b->t.r[i];
        const bl_device *d = strstr(r->name, "CPU") ? &cpu : strstr(r->name, "+H2D") ? &h2d : &gpu;
        bl_ratio("bench-histo", r->name, r->samples / r->seconds, "sample", r->bytes / r->samples,
                 ops_per_value(r), d);
    }
}

static void print_table(const bench *b)
{
    const double copy_gbs = b->machine.gpu.copy_bw / 1e9; /* 0 without a GPU */
    printf("\n| case / path | Msamples/s | GB/s | ms per run | how |\n|---|---:|---:|---:|---|\n");
    for (int i = 0; i < b->t.n; i++) {
        const row *r = &b->t.r[i];
        printf("| %s | %.1f | %.1f | %.3f | %s |\n", r->name, r->samples / r->seconds / 1e6,
               r->bytes / r->seconds / 1e9, r->seconds * 1e3, r->note);
    }
    const row *ag = find(&b->t, "a GPU"), *bg = find(&b->t, "b GPU"), *bc = find(&b->t, "b CUB");
    const row *bc1 = find(&b->t, "b CUB combined");
    if (bc1 && (!bc || bc1->seconds < bc->seconds))
        bc = bc1;
    if (copy_gbs > 0)
        printf("\ndevice-to-device copy: %.1f GB/s (bytes read + written)\n", copy_gbs);
    if (ag && copy_gbs > 0)
        printf("goal a: GPU reads %.1f GB/s = %.0f %% of the copy bandwidth (goal >= 70 %%)\n",
               ag->bytes / ag->seconds / 1e9, 100 * ag->bytes / ag->seconds / 1e9 / copy_gbs);
    if (bg && bc)
        printf("goal b: GPU %.1fx CUB (its faster way, %s) in samples/s (goal >= 5x)\n",
               (bg->samples / bg->seconds) / (bc->samples / bc->seconds), bc->note);
    print_ratios(b);
}

int main(int argc, char **argv)
{
    bench b = { .n_a = (size_t)1 << 30, .n_b = (size_t)32 << 20, .n_c = (size_t)32 << 20,
                .reps_gpu = 20, .reps_cpu = 3 };
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            b.n_a >>= 4;
            b.n_b >>= 4;
            b.n_c >>= 4;
        } else {
            fprintf(stderr, "usage: bench-histo [--quick]   (sizes divided by 16)\n");
            return 2;
        }
    }
    printf("bench-histo: CPU: %d OpenMP threads\n", omp_get_max_threads());
#ifdef NARWHAL_HAVE_CUDA
    char desc[256];
    int present;
    b.gpu = gpu_probe(0, &present, desc, sizeof desc) == GPU_OK;
    printf("bench-histo: GPU: %s\n", desc);
#else
    printf("bench-histo: GPU: none (built without CUDA)\n");
#endif
    bl_measure(&b.machine, b.gpu ? 0 : -1);
    bl_print_machine("bench-histo", &b.machine);
    if (!b.gpu)
        b.reps_cpu = 1;
    printf("bench-histo: a %zu bytes, b %zu entries, c %zu pairs\n", b.n_a, b.n_b, b.n_c);
    case_a(&b);
    case_b(&b);
    case_c(&b);
    print_table(&b);
    return 0;
}

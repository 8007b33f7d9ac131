/* bench_tracker.c: bench-tracker: tracked events per second on the same simulated events (straightforward CPU, optimised CPU, GPU) at multiplicity 1 and 30, and the efficiency / peak-to-total study. */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_limits.h"
#include "event.h"
#include "tracker/tracker_cpu.h"
#include "tracker/tracker_events.h"
#include "tracker/tracker_model.h"
#include "tool.h"
#include "tracker_study.h"
#ifdef NARWHAL_HAVE_CUDA
#include "tracker_gpu.h"
#endif

/*
 * Usage: bench-tracker [--events1 N] [--events30 N] [--naive1 N] [--naive30 N] [--mult M] [--block N] [--seed S] [--segment]
 *                      [--shell] [--min-cluster F] [--min-single F] [--isolation MM] [--size-bonus B]
 *                      [--no-retrack] [--angular A]
 *                      [--energy-sigma KEV] [--pos-a MM] [--pos-b MM]
 *                      [--study DIR [--set table|scan|ENERGY,...] [--ideal] | --gammaevents FILE]
 *
 * Events come from libsim's transport (sim/): 1332.492 keV γ rays from the
 * target, M per event, isotropic, the default 180-crystal array, prepared as
 * issue 16 defines the tracker's input (tracker_study.h: deposits packed
 * within 5 mm, energies and positions smeared, 15 keV threshold); --segment
 * takes the input of the earlier benchmarks instead (deposits packed per γ and
 * segment, exact energies, positions smeared by a sigma of 2.7 mm + 6.2 mm
 * sqrt(100 keV / e); points under 1 keV dropped), for before/after comparisons.
 * The straightforward path (one thread, every ordering of every cluster, the
 * germanium paths of each cluster computed for it) runs on the first --naive
 * events; the optimised CPU path (all OpenMP threads, pruned search, paths
 * cached per event) and the GPU path (clustering on the GPU, then on the CPU)
 * on all of them.  Every path's tracks are compared with the optimised CPU
 * path's, field by field: any difference fails the program.
 *
 * --study DIR: instead, efficiency and peak-to-total (tracker_study.h), one
 * table row per input, energy and multiplicity, on --events1 events at M = 1
 * and --events30 at M = 30, each tracked spectrum written to DIR.  --set
 * table (the default): issue 16's rows, 661.657, 1173.228 and 1332.492 keV on
 * the smeared and the ideal input; scan: 300, 661.657, 1332.492 and 2500 keV
 * on the smeared input (the set the defaults are chosen on); or a list of
 * energies in keV (--ideal: on the ideal input too).  --gammaevents FILE: one
 * row from a GammaEvents file (its first γ's energy is the line; M is the γ
 * rays of its first event).
 * --mult M replaces the multiplicity 30 (and --events30 counts its events).
 * --block N: the optimised CPU and the GPU paths track the events N per call,
 * as the actor tracks one block of its input per call (a block of the replay
 * chain holds about 880 60Co events): the rates then include each call's
 * fixed costs and its slowest event or candidate (the GPU's kernels wait for
 * their longest thread); the GPU's phases are timed on the first call.
 * The model's settings default to Tracker.conf's; the options change them.
 */

typedef struct options {
    uint32_t events[2], naive[2];
    uint32_t block; /* events per call, 0: all in one */
    int mults[2]; /* the two multiplicities: 1 and --mult (30) */
    uint64_t seed;
    tracker_model_conf model;
    tracker_input input;
    const char *study_dir, *set, *gammaevents;
    int ideal; /* --ideal: a list of energies also on the ideal input */
} options;

#define TRACKER_BENCH_KEV 1332.492 /* the 60Co line */

static int usage(void)
{
    fprintf(stderr, "usage: bench-tracker [--events1 N] [--events30 N] [--naive1 N] [--naive30 N] [--mult M] [--block N] "
                    "[--seed S] "
                    "[--segment] [--shell] [--min-cluster F] [--min-single F] [--isolation MM] [--size-bonus B] "
                    "[--no-retrack] [--angular A] "
                    "[--energy-sigma KEV] [--pos-a MM] [--pos-b MM] "
                    "[--study DIR [--set table|scan|KEV,...] [--ideal] | --gammaevents FILE]\n");
    return 2;
}

/* The input of the benchmarks before issue 16: the same points, to float rounding, but for those
 * under 1 keV, whose smearing (tens of centimetres) now puts them beyond their crystal, where the
 * tracker refuses a hit. */
static const tracker_input segment_input = { SIM_PACK_SEGMENT, 0, 0, 0, 1,
                                             { 2.7 * TRACKER_FWHM_PER_SIGMA, 6.2 * TRACKER_FWHM_PER_SIGMA, 1 } };

static double *real_option(options *o, const char *a)
{
    static const struct {
        const char *name;
        size_t at;
    } reals[] = { { "--min-cluster", offsetof(tracker_model_conf, min_cluster) },
                  { "--min-single", offsetof(tracker_model_conf, min_single) },
                  { "--isolation", offsetof(tracker_model_conf, single_isolation) },
                  { "--size-bonus", offsetof(tracker_model_conf, size_bonus) },
                  { "--angular", offsetof(tracker_model_conf, theta_scale) },
                  { "--energy-sigma", offsetof(tracker_model_conf, energy_sigma) },
                  { "--pos-a", offsetof(tracker_model_conf, pos_a) },
                  { "--pos-b", offsetof(tracker_model_conf, pos_b) } };
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++)
        if (strcmp(a, reals[i].name) == 0)
            return (double *)((char *)&o->model + reals[i].at);
    return NULL;
}

static int parse(int argc, char **argv, options *o)
{
    /* Tracker.conf's defaults */
    *o = (options){ .events = { 40000, 4000 }, .naive = { 4000, 200 }, .mults = { 1, 30 }, .seed = 1,
                    .model = { .pos_a = 2.7, .pos_b = 6.2, .energy_sigma = 3.0, .theta_scale = 0.6,
                               .min_cluster = 0.05, .min_single = 0.0004, .single_isolation = 60,
                               .size_bonus = 4, .retrack = 1,
                               .path_model = TR_PATH_ARRAY, .shell_inner = 235, .shell_outer = 325 },
                    .input = tracker_input_issue16, .set = "table" };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        unsigned long long v = 0;
        if (strcmp(a, "--shell") == 0) {
            o->model.path_model = TR_PATH_SHELL;
            continue;
        }
        if (strcmp(a, "--ideal") == 0) {
            o->ideal = 1;
            continue;
        }
        if (strcmp(a, "--no-retrack") == 0) {
            o->model.retrack = 0;
            continue;
        }
        if (strcmp(a, "--segment") == 0) {
            o->input = segment_input;
            continue;
        }
        if (i + 1 >= argc)
            return usage();
        const char *val = argv[++i];
        const char **text = strcmp(a, "--study") == 0         ? &o->study_dir
                            : strcmp(a, "--set") == 0         ? &o->set
                            : strcmp(a, "--gammaevents") == 0 ? &o->gammaevents
                                                              : NULL;
        if (text) {
            *text = val;
            continue;
        }
        char *end;
        double *real = real_option(o, a);
        if (real) {
            *real = strtod(val, &end);
            if (*end || end == val || !(*real >= 0))
                return usage();
            continue;
        }
        v = strtoull(val, &end, 10);
        if (*end || end == val || v > 10000000)
            return usage();
        if (strcmp(a, "--events1") == 0)
            o->events[0] = (uint32_t)v;
        else if (strcmp(a, "--events30") == 0)
            o->events[1] = (uint32_t)v;
        else if (strcmp(a, "--naive1") == 0)
            o->naive[0] = (uint32_t)v;
        else if (strcmp(a, "--naive30") == 0)
            o->naive[1] = (uint32_t)v;
        else if (strcmp(a, "--seed") == 0)
            o->seed = v;
        else if (strcmp(a, "--block") == 0)
            o->block = (uint32_t)v;
        else if (strcmp(a, "--mult") == 0 && v >= 1 && v <= 60)
            o->mults[1] = (int)v;
        else
            return usage();
    }
    for (int m = 0; m < 2; m++)
        if (o->naive[m] > o->events[m])
            o->naive[m] = o->events[m];
    return 0;
}

/* ---- comparing tracks ------------------------------------------------------------- */

static uint32_t differences(const tr_batch *b, uint32_t n, const tr_out *x, const tr_out *y)
{
    uint32_t bad = 0;
    for (uint32_t e = 0; e < n; e++) {
        const tr_event_info *a = &x->info[e], *c = &y->info[e];
        int same = a->n_gammas == c->n_gammas && a->n_cands == c->n_cands &&
                   a->big_clusters == c->big_clusters && a->unused == c->unused &&
                   memcmp(&x->gammas[b->first[e]], &y->gammas[b->first[e]], a->n_gammas * sizeof(tr_gamma)) == 0;
        bad += !same;
    }
    return bad;
}

static int alloc_out(tr_out *o, const tr_batch *b)
{
    o->gammas = malloc((b->first[b->n_events] + 1) * sizeof *o->gammas);
    o->info = malloc((b->n_events + 1) * sizeof *o->info);
    return o->gammas && o->info ? 0 : -1;
}

static void free_out(tr_out *o)
{
    free(o->gammas);
    free(o->info);
}

/* ---- the benchmark ----------------------------------------------------------------- */

typedef struct row {
    const char *path;
    double rate[2];   /* events per second */
    double hits[2];   /* points per second */
    int ran[2];
} row;

static void note(row *r, int m, uint32_t events, uint32_t points, double seconds)
{
    r->rate[m] = events / seconds;
    r->hits[m] = points / seconds;
    r->ran[m] = 1;
}

static int check_same(const char *what, const tr_batch *b, uint32_t n, const tr_out *ref, const tr_out *o)
{
    uint32_t bad = differences(b, n, ref, o);
    printf("  %-34s %u of %u events differ from the optimised CPU path\n", what, bad, n);
    return bad ? 1 : 0;
}

/* The events of b cut into calls of `per` events (0: one call), each a batch of its own. */
typedef struct calls {
    uint32_t n;
    tr_batch *b;
    uint32_t *first;  /* the calls' offsets (from 0 in each), back to back */
    uint32_t *event0; /* each call's first event in b */
} calls;

static void calls_free(calls *c)
{
    free(c->b);
    free(c->first);
    free(c->event0);
}

static int calls_make(const tr_batch *b, uint32_t per, calls *c)
{
    if (per == 0 || per > b->n_events)
        per = b->n_events ? b->n_events : 1;
    c->n = (b->n_events + per - 1) / per;
    c->b = malloc((c->n + 1) * sizeof *c->b);
    c->first = malloc((b->n_events + c->n + 1) * sizeof *c->first);
    c->event0 = malloc((c->n + 1) * sizeof *c->event0);
    if (!c->b || !c->first || !c->event0) {
        calls_free(c);
        return -1;
    }
    uint32_t *f = c->first;
    for (uint32_t k = 0; k < c->n; k++) {
        uint32_t e0 = k * per, e1 = b->n_events - e0 > per ? e0 + per : b->n_events;
        for (uint32_t e = e0; e <= e1; e++)
            f[e - e0] = b->first[e] - b->first[e0];
        c->b[k] = (tr_batch){ e1 - e0, f, b->points + b->first[e0] };
        c->event0[k] = e0;
        f += e1 - e0 + 1;
    }
    return 0;
}

/* Where call k's results go in o (the results of all of b). */
static tr_out calls_out(const calls *c, const tr_batch *b, uint32_t k, const tr_out *o)
{
    uint32_t e0 = c->event0[k];
    return (tr_out){ o->gammas + b->first[e0], o->info + e0 };
}

/* A batch of the first n events of b. */
static tr_batch head(const tr_batch *b, uint32_t n)
{
    tr_batch h = *b;
    h.n_events = n;
    return h;
}

static int bench_cpu(tracker_cpu *cpu, const tr_model *m, const tr_batch *b, const calls *c, uint32_t naive, int mi,
                     row *rows, tr_out *ref)
{
    tr_out slow;
    if (alloc_out(&slow, b) != 0)
        return -1;
    tr_batch h = head(b, naive);
    double t0 = tool_seconds();
    tracker_cpu_track(cpu, m, &h, &slow, false);
    double t1 = tool_seconds();
    for (uint32_t k = 0; k < c->n; k++) {
        tr_out out = calls_out(c, b, k, ref);
        tracker_cpu_track(cpu, m, &c->b[k], &out, true);
    }
    double t2 = tool_seconds();
    note(&rows[0], mi, naive, b->first[naive], t1 - t0);
    note(&rows[1], mi, b->n_events, b->first[b->n_events], t2 - t1);
    int bad = check_same("straightforward CPU:", b, naive, ref, &slow);
    /* clustering alone on the CPU, to compare with the GPU's clustering kernel */
    tr_cand *cands = malloc((b->first[b->n_events] + 1) * sizeof *cands);
    if (cands) {
        double c0 = tool_seconds();
        tracker_cpu_cluster(cpu, m, b, cands, slow.info);
        printf("  clustering alone, CPU (%d threads): %.2f ms\n", omp_get_max_threads(), 1e3 * (tool_seconds() - c0));
    }
    free(cands);
    free_out(&slow);
    return bad;
}

#ifdef NARWHAL_HAVE_CUDA
static int bench_gpu(tracker_cpu *cpu, tr_gpu *g, const tr_model *m, const tr_batch *b, const calls *c, int mi,
                     row *rows, const tr_out *ref)
{
    char msg[256];
    tr_out o;
    tr_cand *cands = malloc((b->first[b->n_events] + 1) * sizeof *cands);
    if (alloc_out(&o, b) != 0 || !cands) {
        free(cands);
        return -1;
    }
    int bad = 0, rc = tr_gpu_track(g, b, NULL, NULL, &o, NULL, msg, sizeof msg); /* warm-up: buffers grow */
    for (int side = 0; side < 2 && rc == GPU_OK; side++) {
        int reps = 3;
        double t0 = tool_seconds();
        for (int r = 0; r < reps; r++) {
            for (uint32_t k = 0; k < c->n && rc == GPU_OK; k++) {
                tr_out out = calls_out(c, b, k, &o);
                tr_cand *ck = cands + b->first[c->event0[k]];
                if (side == 1)
                    tracker_cpu_cluster(cpu, m, &c->b[k], ck, out.info);
                rc = tr_gpu_track(g, &c->b[k], side ? ck : NULL, side ? out.info : NULL, &out, NULL, msg, sizeof msg);
            }
        }
        double t = (tool_seconds() - t0) / reps;
        if (rc == GPU_OK) {
            note(&rows[2 + side], mi, b->n_events, b->first[b->n_events], t);
            bad |= check_same(side ? "GPU, clustering on the CPU:" : "GPU, clustering on the GPU:", b,
                              b->n_events, ref, &o);
        }
    }
    tr_gpu_times times;
    if (rc == GPU_OK && (rc = tr_gpu_track(g, &c->b[0], NULL, NULL, &o, &times, msg, sizeof msg)) == GPU_OK)
        printf("  GPU phases, one stream, the first call (%u events): upload %.2f ms, clustering %.2f ms, scoring %.2f ms, selection (and the second "
               "pass) %.2f ms, "
               "download %.2f ms\n", c->b[0].n_events, times.upload, times.cluster, times.score, times.select, times.download);
    if (rc != GPU_OK)
        fprintf(stderr, "bench-tracker: GPU: %s\n", msg);
    free(cands);
    free_out(&o);
    return rc != GPU_OK ? -1 : bad;
}
#endif

static void print_table(const row *rows, int n_rows, const uint32_t *points, const uint32_t *events, const int *mults)
{
    printf("\n| path | M=%d events/s | M=%d hits/s | M=%d events/s | M=%d hits/s | vs straightforward (%d / %d) |\n",
           mults[0], mults[0], mults[1], mults[1], mults[0], mults[1]);
    printf("|---|---:|---:|---:|---:|---:|\n");
    for (int r = 0; r < n_rows; r++) {
        if (!rows[r].ran[0] && !rows[r].ran[1])
            continue;
        printf("| %s |", rows[r].path);
        for (int m = 0; m < 2; m++)
            if (rows[r].ran[m])
                printf(" %.0f | %.3g |", rows[r].rate[m], rows[r].hits[m]);
            else
                printf(" - | - |");
        printf(" %.1fx / %.1fx |\n", rows[0].ran[0] ? rows[r].rate[0] / rows[0].rate[0] : 0,
               rows[0].ran[1] ? rows[r].rate[1] / rows[0].rate[1] : 0);
    }
    printf("\n(%u and %u events; %.2f and %.2f points per event)\n", events[0], events[1],
           events[0] ? (double)points[0] / events[0] : 0, events[1] ? (double)points[1] / events[1] : 0);
}

/*
 * Each figure against its device's limits.  Bytes: an event's points in, its
 * gammas out (one per point at most) and its index and summary.  Operations:
 * a floor, not the tracker's work: the point pairs any clustering compares
 * (N (N - 1) / 2 per event of N points), 5 FP32 instructions each (a dot
 * product of the two directions, its scaling by their lengths, the
 * comparison); the permutations scored after it are not counted.
 */
static void print_ratios(const row *rows, int n_rows, const uint32_t *points, const uint32_t *events, const int *mults,
                         const bl_machine *mach)
{
    bl_device cpu1 = bl_cpu_device(mach, 1), cpu = bl_cpu_device(mach, 0), gpu = bl_gpu_device(mach);
    const bl_device *dev[4] = { &cpu1, &cpu, &gpu, &gpu };
    for (int m = 0; m < 2; m++) {
        double n = events[m] ? (double)points[m] / events[m] : 0;
        double bytes = n * (sizeof(tr_point) + sizeof(tr_gamma)) + sizeof(uint32_t) + sizeof(tr_event_info);
        for (int r = 0; r < n_rows && r < 4; r++) {
            char what[96];
            if (!rows[r].ran[m])
                continue;
            snprintf(what, sizeof what, "%s, M=%d", rows[r].path, mults[m]);
            bl_ratio("bench-tracker", what, rows[r].rate[m], "event", bytes, 2.5 * n * (n - 1), dev[r]);
        }
    }
}

static int run_bench(const options *o, const tracker_study *st)
{
    row rows[4] = { { "straightforward CPU, 1 thread", { 0 }, { 0 }, { 0 } },
                    { "optimised CPU", { 0 }, { 0 }, { 0 } },
                    { "GPU, clustering on the GPU", { 0 }, { 0 }, { 0 } },
                    { "GPU, clustering on the CPU", { 0 }, { 0 }, { 0 } } };
    char msg[512];
    int status = 0;
    uint32_t points[2] = { 0, 0 };
    tracker_cpu *cpu = tracker_cpu_create(omp_get_max_threads());
    if (!cpu)
        return 1;
#ifdef NARWHAL_HAVE_CUDA
    tr_gpu *gpu = NULL;
    int present;
    if (gpu_probe(0, &present, msg, sizeof msg) == GPU_OK) {
        printf("GPU: %s\n", msg);
        if (tr_gpu_create(&gpu, st->model, msg, sizeof msg) != GPU_OK) {
            fprintf(stderr, "bench-tracker: %s\n", msg);
            status = 1;
        }
    } else {
        printf("no GPU: %s\n", msg);
    }
#else
    printf("no GPU: built without CUDA\n");
#endif
    printf("CPU: %d OpenMP threads\n", omp_get_max_threads());
    bl_machine mach;
#ifdef NARWHAL_HAVE_CUDA
    bl_measure(&mach, gpu ? 0 : -1);
#else
    bl_measure(&mach, -1);
#endif
    bl_print_machine("bench-tracker", &mach);
    for (int mi = 0; mi < 2 && !status; mi++) {
        tracker_sample s;
        double t0 = tool_seconds();
        if (tracker_study_sample(st, &o->input, TRACKER_BENCH_KEV, o->mults[mi], o->events[mi], o->seed, &s, msg,
                                 sizeof msg) != 0) {
            fprintf(stderr, "bench-tracker: %s\n", msg);
            status = 1;
            break;
        }
        tr_batch b = tracker_events_batch(&s.ev);
        points[mi] = b.first[b.n_events];
        printf("M=%d: %u events, %u points (simulated and smeared in %.1f s)\n", o->mults[mi], b.n_events,
               points[mi], tool_seconds() - t0);
        tr_out ref;
        calls c = { 0 };
        if (alloc_out(&ref, &b) != 0 || calls_make(&b, o->block, &c) != 0 ||
            bench_cpu(cpu, st->model, &b, &c, o->naive[mi], mi, rows, &ref) != 0)
            status = 1;
        if (o->block)
            printf("  in %u calls of up to %u events\n", c.n, o->block);
#ifdef NARWHAL_HAVE_CUDA
        if (gpu && !status && bench_gpu(cpu, gpu, st->model, &b, &c, mi, rows, &ref) != 0)
            status = 1;
#endif
        calls_free(&c);
        free_out(&ref);
        tracker_sample_free(&s);
    }
    print_table(rows, 4, points, o->events, o->mults);
    print_ratios(rows, 4, points, o->events, o->mults, &mach);
#ifdef NARWHAL_HAVE_CUDA
    tr_gpu_destroy(gpu);
#endif
    tracker_cpu_destroy(cpu);
    if (status)
        fprintf(stderr, "bench-tracker: FAILED (a path's tracks differ, or a path could not run)\n");
    return status;
}

/* ---- the study ------------------------------------------------------------------------ */

/* One row: a sample of mult γ rays of `line` keV on input in, measured. */
static int study_row(const options *o, const tracker_study *st, const tracker_input *in, const char *label,
                     double line, int mi)
{
    char msg[512], csv[4096];
    tracker_sample s;
    snprintf(csv, sizeof csv, "%s/%s-%.0f-m%d.csv", o->study_dir, label, line, o->mults[mi]);
    int rc = tracker_study_sample(st, in, line, o->mults[mi], o->events[mi], o->seed, &s, msg, sizeof msg);
    if (rc == 0)
        rc = tracker_study_measure(st, &s, label, csv, msg, sizeof msg);
    if (rc != 0)
        fprintf(stderr, "bench-tracker: %s keV, M = %d: %s\n", label, o->mults[mi], msg);
    tracker_sample_free(&s);
    return rc;
}

/* The energies of --set: table, scan, or a comma-separated list; their number. */
static int study_energies(const char *set, double *kev, int max)
{
    static const double table[] = { 1332.492, 661.657, 1173.228 }, scan[] = { 300, 661.657, 1332.492, 2500 };
    const double *from = strcmp(set, "table") == 0 ? table : strcmp(set, "scan") == 0 ? scan : NULL;
    int n = from == table ? 3 : from == scan ? 4 : 0;
    if (from) {
        memcpy(kev, from, (size_t)n * sizeof *kev);
        return n;
    }
    for (const char *at = set; n < max;) {
        char *end;
        kev[n] = strtod(at, &end);
        if (end == at || !(kev[n] > 0 && kev[n] < 20000) || (*end && *end != ','))
            return 0;
        n++;
        if (!*end)
            return n;
        at = end + 1;
    }
    return 0;
}

static int run_study(const options *o, const tracker_study *st)
{
    double kev[16];
    int n = study_energies(o->set, kev, 16), rc = 0;
    if (n == 0 || (mkdir(o->study_dir, 0777) != 0 && errno != EEXIST)) {
        fprintf(stderr, "bench-tracker: %s\n", n ? strerror(errno) : "--set takes table, scan or KEV,KEV,...");
        return n ? 1 : 2;
    }
    tracker_input ideal = o->input;
    ideal.smear.a = ideal.smear.b = 0;
    tracker_study_header();
    for (int k = 0; k < n && rc == 0; k++)
        for (int mi = 0; mi < 2 && rc == 0; mi++)
            rc = study_row(o, st, &o->input, "smeared", kev[k], mi);
    for (int k = 0; k < n && rc == 0 && (o->ideal || strcmp(o->set, "table") == 0); k++)
        for (int mi = 0; mi < 2 && rc == 0; mi++)
            rc = study_row(o, st, &ideal, "ideal", kev[k], mi);
    return rc ? 1 : 0;
}

static int run_file(const options *o, const tracker_study *st)
{
    char msg[512];
    tracker_sample s;
    int rc = tracker_study_sample_file(st, &o->input, o->gammaevents, &s, msg, sizeof msg);
    if (rc == 0) {
        tracker_study_header();
        rc = tracker_study_measure(st, &s, o->gammaevents, NULL, msg, sizeof msg);
    }
    if (rc != 0)
        fprintf(stderr, "bench-tracker: %s\n", msg);
    tracker_sample_free(&s);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    options o;
    char msg[512];
    if (parse(argc, argv, &o) != 0)
        return 2;
    tracker_study st;
    if (tracker_study_init(&st, "detector/arrays/agata180.txt", "detector/geometry/agata.geo", &o.model, msg,
                           sizeof msg) != 0) {
        fprintf(stderr, "bench-tracker: %s\n", msg);
        return 1;
    }
    int rc = o.gammaevents ? run_file(&o, &st) : o.study_dir ? run_study(&o, &st) : run_bench(&o, &st);
    tracker_study_free(&st);
    return rc;
}

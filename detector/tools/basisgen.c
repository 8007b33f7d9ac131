/* basisgen: builds the PSA basis from the geometry file (fields, then signals), imports a foreign basis, prints statistics. */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basis.h"
#include "field.h"
#include "signals.h"

typedef struct options {
    const char *geometry, *out, *import, *stats;
    double grid, field_grid, tol;
    det_signal_config sig;
    int quiet;
} options;

static void usage(FILE *to)
{
    fprintf(to,
            "usage: basisgen [--geometry GEO] [--grid MM] [--field-grid MM] [--samples N] [--pretrigger K]\n"
            "                [--sampling NS] [--step NS] [--tol X] [--quiet] -o OUT.basis\n"
            "       basisgen --import FILE [--geometry GEO] -o OUT.basis\n"
            "       basisgen --stats FILE.basis\n"
            "defaults: --geometry detector/geometry/agata.geo --grid 2 --field-grid 1 --samples 100 --pretrigger 5\n"
            "          --sampling 10 --step 1 --tol 1e-5\n");
}

static int number(const char *opt, const char *text, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (*end || errno || !(v >= lo && v <= hi)) {
        fprintf(stderr, "basisgen: %s wants a number in [%g, %g], got '%s'\n", opt, lo, hi, text);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->geometry = "detector/geometry/agata.geo";
    o->grid = 2;
    o->field_grid = 1;
    o->tol = 1e-5;
    det_signal_config_default(&o->sig);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        double x;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        }
        if (!strcmp(a, "--quiet")) {
            o->quiet = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "basisgen: %s needs a value (or is unknown)\n", a);
            return -1;
        }
        i++;
        if (!strcmp(a, "-o")) o->out = v;
        else if (!strcmp(a, "--geometry")) o->geometry = v;
        else if (!strcmp(a, "--import")) o->import = v;
        else if (!strcmp(a, "--stats")) o->stats = v;
        else if (!strcmp(a, "--grid")) {
            if (number(a, v, 0.25, 20, &o->grid)) return -1;
        } else if (!strcmp(a, "--field-grid")) {
            if (number(a, v, 0.1, 5, &o->field_grid)) return -1;
        } else if (!strcmp(a, "--tol")) {
            if (number(a, v, 1e-9, 1e-2, &o->tol)) return -1;
        } else if (!strcmp(a, "--samples")) {
            if (number(a, v, 2, 512, &x)) return -1;
            o->sig.n_samples = (int)x;
        } else if (!strcmp(a, "--pretrigger")) {
            if (number(a, v, 0, 511, &x)) return -1;
            o->sig.pretrigger = (int)x;
        } else if (!strcmp(a, "--sampling")) {
            if (number(a, v, 0.01, 1000, &o->sig.sample_ns)) return -1;
        } else if (!strcmp(a, "--step")) {
            if (number(a, v, 0.01, 10, &o->sig.step_ns)) return -1;
        } else {
            fprintf(stderr, "basisgen: unknown option %s\n", a);
            return -1;
        }
    }
    if (!o->stats && !o->out) {
        fprintf(stderr, "basisgen: no output file (-o)\n");
        return -1;
    }
    return 0;
}

static int print_stats(const char *path)
{
    det_basis b;
    det_basis_stats s;
    char msg[600];
    if (det_basis_load(&b, path, msg, sizeof msg)) {
        fprintf(stderr, "basisgen: %s\n", msg);
        return 1;
    }
    printf("%s: %u channels x %u samples of %g ns (%u baseline), %s, grid %g mm, %g V, preamp %g ns\n", path,
           b.n_channels, b.n_samples, b.sample_ns, b.pretrigger, b.flags & DET_BASIS_IMPORTED ? "imported" : "generated",
           b.grid_mm, b.crystal.bias, b.crystal.preamp_rise);
    int rc = det_basis_stats_compute(&b, &s);
    if (!rc) det_basis_stats_print(&s, stdout);
    else fprintf(stderr, "basisgen: out of memory for the statistics\n");
    det_basis_free(&b);
    return rc ? 1 : 0;
}

static int import(const options *o)
{
    det_crystal c;
    det_basis b;
    char msg[600];
    if (det_crystal_load(&c, o->geometry, msg, sizeof msg) || det_basis_import(&b, o->import, &c, msg, sizeof msg) ||
        det_basis_save(&b, o->out, msg, sizeof msg)) {
        fprintf(stderr, "basisgen: %s\n", msg);
        return 1;
    }
    printf("basisgen: imported %u points (%u channels x %u samples) from %s into %s\n", b.n_points, b.n_channels,
           b.n_samples, o->import, o->out);
    det_basis_free(&b);
    return 0;
}

/* The basis points: centres of the grid's cubes that lie in the crystal. */
static float *grid_points(const det_crystal *c, double g, uint32_t *count)
{
    int nxy = (int)ceil(c->radius / g), nz = (int)floor(c->length / g + 1e-9);
    size_t cap = (size_t)(2 * nxy) * (2 * nxy) * nz, n = 0;
    float *p = malloc(cap * 3 * sizeof *p);
    if (!p) return NULL;
    for (int k = 0; k < nz; k++)
        for (int j = -nxy; j < nxy; j++)
            for (int i = -nxy; i < nxy; i++) {
                double q[3] = {(i + 0.5) * g, (j + 0.5) * g, (k + 0.5) * g};
                if (!det_crystal_contains(c, q)) continue;
                for (int a = 0; a < 3; a++) p[3 * n + a] = (float)q[a];
                n++;
            }
    *count = (uint32_t)n;
    return p;
}

typedef struct chunk_result {
    int32_t *segment;
    float *signal;
    long fallbacks; /* points whose hole reached no segment within the window */
    int failed;
} chunk_result;

static void compute_chunk(const det_fields *f, const det_signal_config *cfg, const float *pos, size_t first, size_t n,
                          chunk_result *r)
{
    size_t per = (size_t)DET_CHANNELS * cfg->n_samples;
    long fallbacks = 0;
    int failed = 0;
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : fallbacks, failed)
    for (size_t i = 0; i < n; i++) {
        const float *q = pos + 3 * (first + i);
        double p[3] = {q[0], q[1], q[2]};
        det_drift_info info;
        if (det_signal_compute(f, cfg, p, r->signal + i * per, &info)) {
            failed++;
            continue;
        }
        int seg = info.hole_contact;
        if (seg < 0 || seg >= DET_SEGMENTS) {
            seg = det_crystal_segment(&f->crystal, p);
            fallbacks++;
        }
        r->segment[i] = seg;
    }
    r->fallbacks += fallbacks;
    r->failed += failed;
}

static void report_fields(const det_fields *f)
{
    const det_solve_report *r = &f->report;
    double worst = 0;
    for (int s = 0; s < DET_SLOTS; s++) worst = fmax(worst, r->residual[s]);
    printf("basisgen: fields on a %g mm grid: %ld free nodes, sweeps %d/%d/%d (4h/2h/h), max residual %.1e, %.2f s\n",
           f->grid.h, r->free_nodes, r->iterations[0], r->iterations[1], r->iterations[2], worst, r->seconds);
    printf("basisgen: potential inside %.1f .. %.1f V; %s\n", r->v_min, r->v_max,
           r->undepleted_nodes ? "NOT fully depleted" : "fully depleted");
    if (r->undepleted_nodes)
        printf("basisgen: %ld nodes (%.0f mm3) have a potential outside [0, bias]: raise the bias or lower the impurity\n",
               r->undepleted_nodes, r->undepleted_volume);
}

static int generate(const options *o)
{
    enum { CHUNK = 2048 };
    char msg[600];
    det_crystal c;
    det_fields f;
    det_basis_writer w;
    chunk_result r = {0};
    float *pos = NULL;
    int rc = 1;
    if (det_crystal_load(&c, o->geometry, msg, sizeof msg) || det_signal_config_check(&o->sig, msg, sizeof msg)) {
        fprintf(stderr, "basisgen: %s\n", msg);
        return 1;
    }
    double t0 = omp_get_wtime();
    if (det_fields_solve(&f, &c, o->field_grid, o->tol, msg, sizeof msg)) {
        fprintf(stderr, "basisgen: %s\n", msg);
        return 1;
    }
    report_fields(&f);
    double t1 = omp_get_wtime();
    det_basis hb = {.crystal = c, .n_channels = DET_CHANNELS, .n_samples = (uint32_t)o->sig.n_samples,
                    .pretrigger = (uint32_t)o->sig.pretrigger, .sample_ns = o->sig.sample_ns, .grid_mm = o->grid,
                    .field_grid_mm = o->field_grid, .step_ns = o->sig.step_ns};
    pos = grid_points(&c, o->grid, &hb.n_points);
    size_t per = (size_t)DET_CHANNELS * o->sig.n_samples;
    r.segment = malloc(CHUNK * sizeof *r.segment);
    r.signal = malloc(CHUNK * per * sizeof *r.signal);
    if (!pos || !r.segment || !r.signal || hb.n_points == 0) {
        fprintf(stderr, "basisgen: out of memory (or no points on a %g mm grid)\n", o->grid);
        goto done;
    }
    if (det_basis_writer_open(&w, &hb, o->out, msg, sizeof msg)) {
        fprintf(stderr, "basisgen: %s\n", msg);
        goto done;
    }
    double writing = 0;
    for (size_t first = 0; first < hb.n_points; first += CHUNK) {
        size_t n = hb.n_points - first < CHUNK ? hb.n_points - first : CHUNK;
        compute_chunk(&f, &o->sig, pos, first, n, &r);
        if (r.failed) {
            fprintf(stderr, "basisgen: the signal of %d points could not be computed (out of memory)\n", r.failed);
            det_basis_writer_abort(&w);
            goto done;
        }
        double tw = omp_get_wtime();
        for (size_t i = 0; i < n; i++)
            if (det_basis_writer_put(&w, pos + 3 * (first + i), r.segment[i], r.signal + i * per, msg, sizeof msg)) {
                fprintf(stderr, "basisgen: %s\n", msg);
                det_basis_writer_abort(&w);
                goto done;
            }
        writing += omp_get_wtime() - tw;
        if (!o->quiet) fprintf(stderr, "\rbasisgen: %zu / %u points", first + n, hb.n_points);
    }
    if (!o->quiet) fputc('\n', stderr);
    if (det_basis_writer_close(&w, msg, sizeof msg)) {
        fprintf(stderr, "basisgen: %s\n", msg);
        goto done;
    }
    double t2 = omp_get_wtime();
    double signals = t2 - t1 - writing;
    printf("basisgen: %u points on a %g mm grid, %d x %d samples of %g ns; %ld points fell back to the geometric "
           "segment (hole not collected in the window)\n",
           hb.n_points, o->grid, DET_CHANNELS, o->sig.n_samples, o->sig.sample_ns, r.fallbacks);
    printf("basisgen: time: fields %.2f s, signals %.2f s (%.0f us per point, %d threads), writing %.2f s, total "
           "%.2f s\n",
           t1 - t0, signals, 1e6 * signals / hb.n_points, omp_get_max_threads(), writing, t2 - t0);
    printf("basisgen: wrote %s\n", o->out);
    rc = 0;
done:
    free(pos);
    free(r.segment);
    free(r.signal);
    det_fields_free(&f);
    return rc;
}

int main(int argc, char **argv)
{
    options o;
    if (parse(argc, argv, &o)) {
        usage(stderr);
        return 2;
    }
    if (o.stats) return print_stats(o.stats);
    if (o.import) return import(&o);
    return generate(&o);
}

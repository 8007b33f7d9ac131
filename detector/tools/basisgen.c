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
    double grid, field_grid, tol, label_reach;
    det_signal_config sig;
    int quiet, grid_given, strict;
} options;

static void usage(FILE *to)
{
    fprintf(to,
            "usage: basisgen [--geometry GEO] [--grid MM] [--field-grid MM] [--samples N] [--pretrigger K]\n"
            "                [--sampling NS] [--step NS] [--tol X] [--quiet] -o OUT.basis\n"
            "       basisgen --import FILE [--geometry GEO] [--grid MM] [--strict] [--label-reach MM] -o OUT.basis\n"
            "       basisgen --stats FILE.basis [--label-reach MM]\n"
            "defaults: --geometry detector/geometry/agata.geo --grid 2 --field-grid 1 --samples 100 --pretrigger 5\n"
            "          --sampling 10 --step 1 --tol 1e-5 --label-reach 15\n"
            "--import: the grid is --grid, else the file's grid_mm, else detected from the points; a point outside\n"
            "          the crystal is left out and counted (--strict: an error); labels with no segment within\n"
            "          --label-reach mm of their point are reported\n");
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
    o->label_reach = 15; /* the default basis's labels lie up to 11.5 mm from their segment */
    det_signal_config_default(&o->sig);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        double x;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        }
        if (!strcmp(a, "--quiet") || !strcmp(a, "--strict")) {
            *(a[2] == 'q' ? &o->quiet : &o->strict) = 1;
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
            o->grid_given = 1;
        } else if (!strcmp(a, "--label-reach")) {
            if (number(a, v, 0, 50, &o->label_reach)) return -1;
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

/* The label check's lines; 0, or -1 without memory. */
static int print_labels(const det_basis *b, double reach)
{
    det_label_report r;
    if (det_basis_check_labels(b, reach, &r)) return -1;
    printf("labels: %u of %u points labelled with another segment than the one holding them, at most %.1f mm from "
           "their label's volume; %u farther than %g mm from it\n",
           r.other, b->n_points, r.max_distance, r.far, reach);
    for (uint32_t k = 0; k < r.far && k < DET_IMPORT_LISTED; k++) {
        const float *p = b->pos + 3 * (size_t)r.far_point[k];
        double q[3] = {p[0], p[1], p[2]};
        printf("  point %u at (%g, %g, %g) mm: labelled %d, in segment %d\n", r.far_point[k], q[0], q[1], q[2],
               b->segment[r.far_point[k]], det_crystal_segment(&b->crystal, q));
    }
    return 0;
}

static void print_header(const char *path, const det_basis *b)
{
    printf("%s: %u points, %u channels x %u samples of %g ns (%u baseline), grid %g mm\n", path, b->n_points,
           b->n_channels, b->n_samples, b->sample_ns, b->pretrigger, b->grid_mm);
    if (b->flags & DET_BASIS_IMPORTED)
        printf("imported from '%s': preamplifier %g ns, bias %g V as the import gave them (0: not given)\n",
               b->source, b->crystal.preamp_rise, b->crystal.bias);
    else
        printf("generated: %g V, preamplifier %g ns, field grid %g mm, drift step %g ns, %s\n", b->crystal.bias,
               b->crystal.preamp_rise, b->field_grid_mm, b->step_ns,
               b->flags & DET_BASIS_ANISOTROPIC ? "anisotropic drift" : "isotropic drift");
    if (b->flags & DET_BASIS_ANISOTROPIC) printf("lattice: [110] at azimuth %g degrees\n", b->crystal.phi110);
    if (!b->crystal.irregular) return;
    printf("shape: irregular hexagon, front corners");
    for (int k = 0; k < DET_SECTORS; k++) printf(" (%.2f, %.2f)", b->crystal.corner[0][k][0], b->crystal.corner[0][k][1]);
    printf(" mm\n");
}

static int print_stats(const options *o)
{
    det_basis b;
    det_basis_stats s;
    char msg[600];
    if (det_basis_load(&b, o->stats, msg, sizeof msg)) {
        fprintf(stderr, "basisgen: %s\n", msg);
        return 1;
    }
    print_header(o->stats, &b);
    int rc = det_basis_stats_compute(&b, &s);
    if (!rc) det_basis_stats_print(&s, stdout);
    if (!rc) rc = print_labels(&b, o->label_reach);
    if (rc) fprintf(stderr, "basisgen: out of memory for the statistics\n");
    det_basis_free(&b);
    return rc ? 1 : 0;
}

/* What the import left out and the grid it found. */
static void print_import(const options *o, const det_basis *b, const det_import_report *r)
{
    printf("basisgen: imported %u of %u points (%u channels x %u samples of %g ns) from %s into %s\n", b->n_points,
           r->records, b->n_channels, b->n_samples, b->sample_ns, o->import, o->out);
    if (r->outside) {
        printf("basisgen: %u points outside the crystal of %s left out (--strict makes this an error):", r->outside,
               o->geometry);
        for (uint32_t k = 0; k < r->outside && k < DET_IMPORT_LISTED; k++)
            printf(" record %u at (%g, %g, %g) mm%s", r->outside_record[k], r->outside_pos[k][0],
                   r->outside_pos[k][1], r->outside_pos[k][2], k + 1 < r->outside && k + 1 < DET_IMPORT_LISTED ? "," : "");
        printf("%s\n", r->outside > DET_IMPORT_LISTED ? ", ..." : "");
    }
    if (b->grid_mm > 0)
        printf("basisgen: grid %g mm (%s)\n", b->grid_mm, r->grid_detected ? "detected from the points" : "as given");
    else
        printf("basisgen: no grid (%s): the generator will refuse this basis, the PSA takes it\n", r->grid_note);
}

static int import(const options *o)
{
    det_crystal c;
    det_basis b;
    det_import_report r;
    det_import_options io = {.grid_mm = o->grid_given ? o->grid : 0, .strict = o->strict};
    char msg[600];
    if (det_crystal_load(&c, o->geometry, msg, sizeof msg) ||
        det_basis_import(&b, o->import, &c, &io, &r, msg, sizeof msg) || det_basis_save(&b, o->out, msg, sizeof msg)) {
        fprintf(stderr, "basisgen: %s\n", msg);
        return 1;
    }
    print_import(o, &b, &r);
    print_header(o->out, &b);
    int rc = print_labels(&b, o->label_reach);
    if (rc) fprintf(stderr, "basisgen: out of memory for the label check\n");
    det_basis_free(&b);
    return rc ? 1 : 0;
}

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
                    .field_grid_mm = o->field_grid, .step_ns = o->sig.step_ns, .flags = c.anisotropic ? DET_BASIS_ANISOTROPIC : 0};
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
    if (o.stats) return print_stats(&o);
    if (o.import) return import(&o);
    return generate(&o);
}

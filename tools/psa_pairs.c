/* psa_pairs.c: psa-pairs: own events with one or two interactions in chosen segment classes (ring, sector, diagonal neighbours, far), and the PSA's accuracy on them by class. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adf.h"
#include "array.h"
#include "basis.h"
#include "event.h"
#include "geometry.h"
#include "psa_truth.h"
#include "rng.h"
#include "traces.h"
#include "transport.h"

/*
 * `make` writes an ADF file of events as the generator makes them (its
 * response: the energies smeared as Generator.conf's defaults, the traces from
 * the basis, 5 keV of noise, the sub-sample start), each a narwhal:truth frame
 * and one data:crystal frame, with exactly the interactions asked for: a single
 * one, or two in segments of a class, their energies a split of one γ line
 * (25-75 % by default).  Each interaction lies at a random place within half a
 * grid step of a random basis point of its segment, so that the segment in its
 * truth is the one that collects its charge (the basis point's), the one its
 * traces say (the geometric segment beside it in the truth).  `score` reads
 * the PSA's output of such a file (the truth frames passed through) and
 * gives, by class of the collecting segments, the found minus the true
 * position of every interaction whose segment has a hit, and the start time
 * found less the truth's.
 *
 * Classes (segment = 6 * sector + ring): ring neighbours share a ring and
 * sit in adjacent sectors; sector neighbours share a sector and sit in
 * adjacent rings; diagonal neighbours are both one sector and one ring
 * apart (they touch at a corner); far is every other pair.
 */
enum { SINGLE, RING, SECTOR, DIAGONAL, FAR, N_CLASSES };
static const char *const class_names[N_CLASSES] = { "single", "ring", "sector", "diagonal", "far" };
static const char *const class_titles[N_CLASSES] = { "single interaction", "ring neighbours", "sector neighbours",
                                                     "diagonal neighbours", "far (not touching)" };

static int pair_class(int a, int b)
{
    int sa = a / DET_RINGS, sb = b / DET_RINGS, ra = a % DET_RINGS, rb = b % DET_RINGS;
    int ds = abs(sa - sb), dr = abs(ra - rb);
    ds = ds < DET_SECTORS - ds ? ds : DET_SECTORS - ds;
    if (ds == 1 && dr == 0)
        return RING;
    if (ds == 0 && dr == 1)
        return SECTOR;
    if (ds == 1 && dr == 1)
        return DIAGONAL;
    return FAR;
}

/* ---- make */

typedef struct maker {
    const char *basis, *crystal, *array, *out;
    int events;
    unsigned classes; /* bit c: class c is made */
    double energy, split_lo, split_hi;
    uint64_t seed;
    det_crystal shape;
    det_array arr;
    sim_world world;
    det_basis b;
    uint32_t *seg_points[DET_SEGMENTS];
    uint32_t n_seg_points[DET_SEGMENTS];
    sim_traces *traces;
} maker;

static int index_points(maker *m)
{
    for (uint32_t i = 0; i < m->b.n_points; i++) {
        int s = m->b.segment[i];
        if (s < 0 || s >= DET_SEGMENTS)
            continue;
        uint32_t *p = realloc(m->seg_points[s], (m->n_seg_points[s] + 1) * sizeof *p);
        if (!p)
            return -1;
        m->seg_points[s] = p;
        p[m->n_seg_points[s]++] = i;
    }
    for (int s = 0; s < DET_SEGMENTS; s++)
        if (!m->n_seg_points[s]) {
            fprintf(stderr, "psa-pairs: %s: segment %d has no basis point\n", m->basis, s);
            return -1;
        }
    return 0;
}

/* A place in the germanium within half a grid step of a random point of segment s. */
static void place_in(const maker *m, sim_rng *r, int s, float pos[3])
{
    double h = m->b.grid_mm > 0 ? m->b.grid_mm : 1;
    for (;;) {
        uint32_t p = m->seg_points[s][sim_below(r, m->n_seg_points[s])];
        double q[3];
        for (int k = 0; k < 3; k++)
            q[k] = m->b.pos[3 * (size_t)p + k] + (sim_uniform(r) - 0.5) * h;
        if (det_crystal_contains(&m->shape, q)) {
            for (int k = 0; k < 3; k++)
                pos[k] = (float)q[k];
            return;
        }
    }
}

/* The segments of event n's interactions (class c): 1 or 2. */
static int pick_segments(sim_rng *r, int c, int seg[2])
{
    seg[0] = (int)sim_below(r, DET_SEGMENTS);
    if (c == SINGLE)
        return 1;
    do
        seg[1] = (int)sim_below(r, DET_SEGMENTS);
    while (seg[1] == seg[0] || pair_class(seg[0], seg[1]) != c);
    return 2;
}

static void fill_truth(const maker *m, sim_rng *r, int c, sim_event *ev)
{
    adf_truth *t = &ev->truth;
    int seg[2], n = pick_segments(r, c, seg);
    double f = m->split_lo + (m->split_hi - m->split_lo) * sim_uniform(r);
    memset(t, 0, sizeof *t);
    t->n_gammas = 1;
    t->n_interactions = (uint16_t)n;
    t->gamma[0] = (adf_truth_gamma){ .e0 = (float)m->energy, .e = (float)m->energy, .dir = { 0, 0, 1 },
                                     .flags = ADF_TRUTH_ABSORBED, .n_interactions = (uint16_t)n };
    for (int k = 0; k < n; k++) {
        adf_truth_hit *h = &t->hit[k];
        h->crystal_id = (uint16_t)m->world.pl[0].id;
        h->segment = (uint16_t)seg[k];
        h->process = k + 1 < n ? ADF_TRUTH_COMPTON : ADF_TRUTH_PHOTO;
        h->deposits = 1;
        h->e = (float)(n == 1 ? m->energy : k == 0 ? f * m->energy : m->energy - t->hit[0].e);
        place_in(m, r, seg[k], h->pos);
        double p[3] = { h->pos[0], h->pos[1], h->pos[2] }, lab[3];
        h->geo_segment = (uint16_t)det_crystal_segment(&m->shape, p);
        det_to_lab(&m->world.pl[0], p, lab);
        for (int a = 0; a < 3; a++)
            h->lab[a] = (float)lab[a];
    }
}

static int open_maker(maker *m)
{
    char msg[1024];
    sim_trace_params tp = { .samples = 100, .pre_trigger = 10, .adc_bits = 14, .gain = 1, .baseline = 8192,
                            .noise = 5, .subtract_baseline = 1, .sub_sample = 1 };
    if (det_crystal_load(&m->shape, m->crystal, msg, sizeof msg) ||
        det_array_load_any(&m->arr, m->array, msg, sizeof msg) ||
        sim_world_init(&m->world, &m->arr, &m->shape, msg, sizeof msg) ||
        det_basis_load(&m->b, m->basis, msg, sizeof msg) ||
        sim_traces_open(&m->traces, m->basis, &m->shape, &tp, m->seed, msg, sizeof msg)) {
        fprintf(stderr, "psa-pairs: %s\n", msg);
        return -1;
    }
    return index_points(m);
}

static int make(maker *m)
{
    int classes[N_CLASSES], nc = 0, rc = 1;
    for (int c = 0; c < N_CLASSES; c++)
        if (m->classes >> c & 1)
            classes[nc++] = c;
    if (open_maker(m))
        return 1;
    sim_physics ph = { .world = &m->world, .packing = SIM_PACK_SEGMENT, .threshold = 10, .fwhm_a = 1,
                       .fwhm_b = 3.7, .seed = m->seed };
    sim_event *ev = sim_event_new(m->world.n);
    adf_crystal *x = malloc(sizeof *x);
    float *scratch = malloc(sim_traces_scratch(m->traces) * sizeof *scratch);
    size_t cap = 1 << 20;
    uint8_t *buf = malloc(cap);
    adf_file *f = NULL;
    char msg[512];
    if (!ev || !x || !scratch || !buf || adf_file_open_write(&f, m->out, 0)) {
        fprintf(stderr, "psa-pairs: %s: %s\n", m->out, f ? "no memory" : strerror(errno));
        goto done;
    }
    for (int n = 0; n < m->events; n++) {
        sim_rng r;
        sim_rng_seed(&r, m->seed, (uint64_t)n, SIM_STREAM_PHYSICS);
        ev->number = (uint32_t)n;
        fill_truth(m, &r, classes[n % nc], ev);
        if (sim_event_respond(&ph, ev, msg, sizeof msg)) {
            fprintf(stderr, "psa-pairs: %s\n", msg);
            goto done;
        }
        sim_traces_start(m->traces, ev);
        adf_writer w;
        adf_writer_init(&w, buf, cap);
        uint64_t ts = 1000 * (uint64_t)(n + 1);
        int st = adf_truth_write(&w, ev->number, ts, &ev->truth);
        for (int k = 0; st == ADF_OK && k < ev->n_fired; k++) {
            memset(x, 0, sizeof *x);
            x->crystal_id = (uint16_t)m->world.pl[ev->fired[k].crystal].id;
            x->n_channels = DET_CHANNELS;
            x->n_samples = 100;
            for (int ch = 0; ch < DET_CHANNELS; ch++)
                x->energy[ch] = (float)ev->fired[k].energy[ch];
            sim_traces_make(m->traces, ev, &ev->fired[k], x, scratch);
            st = adf_crystal_write(&w, ev->number, ts, x);
        }
        if (st != ADF_OK || adf_file_write(f, buf, w.used) != ADF_OK) {
            fprintf(stderr, "psa-pairs: %s: writing event %d failed\n", m->out, n);
            goto done;
        }
    }
    rc = 0;
done:
    if (f && adf_file_close(f) != ADF_OK && rc == 0) {
        fprintf(stderr, "psa-pairs: %s: %s\n", m->out, strerror(errno));
        rc = 1;
    }
    free(buf);
    free(scratch);
    free(x);
    sim_event_free(ev);
    return rc;
}

static void close_maker(maker *m)
{
    sim_traces_close(m->traces);
    det_basis_free(&m->b);
    sim_world_free(&m->world);
    det_array_free(&m->arr);
    for (int s = 0; s < DET_SEGMENTS; s++)
        free(m->seg_points[s]);
}

/* ---- score */

typedef struct tally {
    size_t crystals, found, missing;
    double s1[3], s2[3], t1, t2; /* t: the start found (data:psa's t1) less the truth's, ns */
} tally;

/* Crystal p's hits against the truth's interactions in that crystal (one, or two in different segments). */
static void score_one(const adf_truth *t, const adf_psa *p, tally *by)
{
    const adf_truth_hit *h[2];
    int n = 0;
    for (int i = 0; i < t->n_interactions; i++)
        if (t->hit[i].crystal_id == p->crystal_id && n < 2)
            h[n++] = &t->hit[i];
    if (n == 0 || (n == 2 && h[0]->segment == h[1]->segment))
        return;
    tally *c = &by[n == 1 ? SINGLE : pair_class(h[0]->segment, h[1]->segment)];
    c->crystals++;
    c->t1 += p->t1 - h[0]->t;
    c->t2 += (p->t1 - h[0]->t) * (p->t1 - h[0]->t);
    for (int k = 0; k < n; k++) {
        const adf_psa_hit *f = NULL;
        for (int j = 0; j < p->n_hits && !f; j++)
            if (p->hit[j].segment == (int)h[k]->segment)
                f = &p->hit[j];
        if (!f) {
            c->missing++;
            continue;
        }
        const float found[3] = { f->x, f->y, f->z };
        for (int a = 0; a < 3; a++) {
            double d = found[a] - h[k]->pos[a];
            c->s1[a] += d;
            c->s2[a] += d * d;
        }
        c->found++;
    }
}

static void score_frame(const adf_truth *t, const adf_psa *p, void *by) { score_one(t, p, by); }

static int score(const char *path, const char *csv_path)
{
    tally by[N_CLASSES] = { { 0 } };
    int rc = tool_psa_with_truth("psa-pairs", path, score_frame, by);
    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    printf("| class | crystals | interactions found | RMS x, mm | RMS y | RMS z | mean x, y, z | start: mean, RMS, ns |\n"
           "|---|---:|---:|---:|---:|---:|---|---|\n");
    if (csv)
        fprintf(csv, "# class crystals found missing rms_x rms_y rms_z mean_x mean_y mean_z\n");
    for (int c = 0; c < N_CLASSES; c++) {
        const tally *x = &by[c];
        if (!x->crystals)
            continue;
        double r[3], m[3];
        for (int a = 0; a < 3; a++) {
            r[a] = x->found ? sqrt(x->s2[a] / x->found) : NAN;
            m[a] = x->found ? x->s1[a] / x->found : NAN;
        }
        double tm = x->t1 / x->crystals, tr = sqrt(x->t2 / x->crystals);
        printf("| %s | %zu | %zu of %zu | %.2f | %.2f | %.2f | %+.2f %+.2f %+.2f | %+.2f, %.2f |\n", class_titles[c],
               x->crystals, x->found, x->found + x->missing, r[0], r[1], r[2], m[0], m[1], m[2], tm, tr);
        if (csv)
            fprintf(csv, "%s %zu %zu %zu %.4f %.4f %.4f %.4f %.4f %.4f\n", class_names[c], x->crystals, x->found,
                    x->missing, r[0], r[1], r[2], m[0], m[1], m[2]);
    }
    if (csv)
        fclose(csv);
    return rc;
}

/* ---- main */

static int usage(void)
{
    fprintf(stderr,
            "usage: psa-pairs make -o FILE.adf [--events N] [--classes LIST] [--energy KEV] [--split LO HI]\n"
            "                      [--seed N] [--basis FILE] [--crystal FILE] [--array FILE]\n"
            "       psa-pairs score PSA-OUTPUT.adf [--csv FILE]\n"
            "LIST: comma-separated of single, ring, sector, diagonal, far (all five by default), the events\n"
            "      going round them; defaults: --events 1000 --energy 1332.492 --split 0.25 0.75 --seed 1\n"
            "      --basis build/cache/default.basis --crystal detector/geometry/agata.geo\n"
            "      --array detector/arrays/agata180.txt\n");
    return 2;
}

static int parse_classes(const char *list, unsigned *out)
{
    char copy[256];
    snprintf(copy, sizeof copy, "%s", list);
    *out = 0;
    for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
        int c = 0;
        while (c < N_CLASSES && strcmp(tok, class_names[c]) != 0)
            c++;
        if (c == N_CLASSES)
            return -1;
        *out |= 1u << c;
    }
    return *out ? 0 : -1;
}

static int parse_make(int argc, char **argv, maker *m)
{
    *m = (maker){ .basis = "build/cache/default.basis", .crystal = "detector/geometry/agata.geo",
                  .array = "detector/arrays/agata180.txt", .events = 1000, .classes = (1u << N_CLASSES) - 1,
                  .energy = 1332.492, .split_lo = 0.25, .split_hi = 0.75, .seed = 1 };
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return -1;
        i++;
        if (!strcmp(a, "-o")) m->out = v;
        else if (!strcmp(a, "--events")) m->events = atoi(v);
        else if (!strcmp(a, "--classes")) { if (parse_classes(v, &m->classes)) return -1; }
        else if (!strcmp(a, "--energy")) m->energy = strtod(v, NULL);
        else if (!strcmp(a, "--split") && i + 1 < argc) { m->split_lo = strtod(v, NULL); m->split_hi = strtod(argv[++i], NULL); }
        else if (!strcmp(a, "--seed")) m->seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--basis")) m->basis = v;
        else if (!strcmp(a, "--crystal")) m->crystal = v;
        else if (!strcmp(a, "--array")) m->array = v;
        else return -1;
    }
    return m->out && m->events > 0 && m->energy > 0 && m->split_lo > 0 && m->split_lo <= m->split_hi &&
           m->split_hi < 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "score")) {
        const char *csv = argc == 5 && !strcmp(argv[3], "--csv") ? argv[4] : NULL;
        return argc == 3 || csv ? score(argv[2], csv) : usage();
    }
    maker m;
    if (argc < 2 || strcmp(argv[1], "make") != 0 || parse_make(argc, argv, &m))
        return usage();
    int rc = make(&m);
    close_maker(&m);
    return rc;
}

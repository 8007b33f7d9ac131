/* traces.c: builds a crystal's 37 digitised traces from the basis (trilinear in space, linear in time), with baseline, noise and a clipping ADC. */
#include "traces.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basis.h"

/*
 * Space: the basis points lie on a grid of spacing grid_mm.  The signal at a
 * point is the trilinear blend of the 8 grid points around it; corners the
 * basis lacks (outside the germanium) are left out and the weights of the
 * others scaled up to 1; with no corner at all the nearest basis point is used.
 * Collection: the segment that collects a point's charge is the label of the
 * basis points carrying most of that trilinear weight (the nearest point's when
 * no corner exists).  An interaction's signal blends only the corners of the
 * segment it is given (the one collecting it), so that its net charge ends in
 * that segment, where the generator puts its energy: a blend across a boundary
 * of the collection regions would split the net charge between two segments
 * (issue 15).  Without such a corner, the nearest point of that segment.
 * A basis whose points all belong to sector A (holes collected by segments
 * 0..5) is used for every sector by the crystal's 60° symmetry: the point is
 * turned back into sector A and the segment channels turned forward.
 *
 * Time: basis sample b is at (b - pretrigger) * sample_ns from the creation
 * of the pair; trace sample s at (s - PreTrigger - u) * 10 ns, u in [0, 1)
 * the event's sub-sample start.  Values between basis samples are linear,
 * before the first the first, after the last the last (the final charges).
 *
 * Noise: white Gaussian, from a table of 2^20 values made once from the seed;
 * each channel of each trace reads it from its own random offset (cheap,
 * and the table is far longer than a trace).
 */
#define NOISE_BITS 20
#define TRACE_NS 10.0
enum { NEAREST_REACH = 3 };

struct sim_traces {
    det_basis basis;
    sim_trace_params p;
    uint64_t seed;
    int one_sector;            /* the basis holds sector A only */
    double h, origin[3];       /* grid */
    int dim[3];
    int32_t *node;             /* grid node -> basis point, -1 where there is none */
    float *noise;
    int adc_max;
    long offset;               /* subtracted from every ADC value */
};

static int on_grid(sim_traces *t, char *msg, size_t len)
{
    const det_basis *b = &t->basis;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (uint32_t i = 0; i < b->n_points; i++)
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], b->pos[3 * i + k]);
            hi[k] = fmax(hi[k], b->pos[3 * i + k]);
        }
    size_t nodes = 1;
    for (int k = 0; k < 3; k++) {
        t->origin[k] = lo[k];
        t->dim[k] = (int)lround((hi[k] - lo[k]) / t->h) + 1;
        nodes *= (size_t)t->dim[k];
    }
    if (!(t->node = malloc(nodes * sizeof *t->node))) {
        snprintf(msg, len, "no memory for a grid of %zu nodes", nodes);
        return -1;
    }
    for (size_t n = 0; n < nodes; n++)
        t->node[n] = -1;
    for (uint32_t i = 0; i < b->n_points; i++) {
        int ijk[3];
        for (int k = 0; k < 3; k++) {
            double f = (b->pos[3 * i + k] - t->origin[k]) / t->h;
            ijk[k] = (int)lround(f);
            if (fabs(f - ijk[k]) > 1e-3) {
                snprintf(msg, len, "point %u is off the %g mm grid", i, t->h);
                return -1;
            }
        }
        t->node[((size_t)ijk[2] * t->dim[1] + ijk[1]) * t->dim[0] + ijk[0]] = (int32_t)i;
    }
    return 0;
}

static int check_basis(sim_traces *t, const det_crystal *shape, char *msg, size_t len)
{
    const det_basis *b = &t->basis;
    if (b->n_channels != DET_CHANNELS) {
        snprintf(msg, len, "%u channels, the generator makes %d", b->n_channels, DET_CHANNELS);
        return -1;
    }
    if (!(b->grid_mm > 0)) {
        snprintf(msg, len, "its points are not on a grid (grid spacing 0): trilinear interpolation needs one");
        return -1;
    }
    int other = fabs(b->crystal.length - shape->length) > 1e-3 || fabs(b->crystal.radius - shape->radius) > 1e-3 ||
                fabs(b->crystal.hex_front - shape->hex_front) > 1e-3 || fabs(b->crystal.hex_back - shape->hex_back) > 1e-3;
    if (other || ((b->crystal.irregular || shape->irregular) && !det_crystal_same_shape(&b->crystal, shape, 1e-3))) {
        snprintf(msg, len, "it was made for another crystal shape than the %s", shape->irregular ? "array's" : "Crystal file's");
        return -1;
    }
    t->one_sector = 1;
    for (uint32_t i = 0; i < b->n_points; i++)
        if (b->segment[i] >= DET_RINGS)
            t->one_sector = 0;
    t->h = b->grid_mm;
    return 0;
}

static int make_noise(sim_traces *t, char *msg, size_t len)
{
    sim_rng r;
    size_t n = (size_t)1 << NOISE_BITS;
    if (!(t->noise = malloc(n * sizeof *t->noise))) {
        snprintf(msg, len, "no memory for the noise table");
        return -1;
    }
    sim_rng_seed(&r, t->seed, 0, SIM_STREAM_TRACES);
    for (size_t i = 0; i < n; i++)
        t->noise[i] = (float)sim_gauss(&r);
    return 0;
}

int sim_traces_open(sim_traces **out, const char *basis_path, const det_crystal *shape, const sim_trace_params *p,
                    uint64_t seed, char *msg, size_t len)
{
    char why[512];
    sim_traces *t = calloc(1, sizeof *t);
    *out = NULL;
    if (!t) {
        snprintf(msg, len, "%s: no memory", basis_path);
        return -1;
    }
    t->p = *p;
    t->seed = seed;
    t->adc_max = (1 << p->adc_bits) - 1;
    t->offset = p->subtract_baseline ? lround(p->baseline) : 0;
    if (det_basis_load(&t->basis, basis_path, msg, len))
        goto fail;
    if (check_basis(t, shape, why, sizeof why) || on_grid(t, why, sizeof why)) {
        snprintf(msg, len, "%s: %s", basis_path, why);
        goto fail;
    }
    if (make_noise(t, msg, len))
        goto fail;
    *out = t;
    return 0;
fail:
    sim_traces_close(t);
    return -1;
}

void sim_traces_close(sim_traces *t)
{
    if (!t)
        return;
    det_basis_free(&t->basis);
    free(t->node);
    free(t->noise);
    free(t);
}

size_t sim_traces_scratch(const sim_traces *t)
{
    return (size_t)DET_CHANNELS * t->basis.n_samples;
}

/* ---- space */

static int32_t node_at(const sim_traces *t, int i, int j, int k)
{
    if (i < 0 || j < 0 || k < 0 || i >= t->dim[0] || j >= t->dim[1] || k >= t->dim[2])
        return -1;
    return t->node[((size_t)k * t->dim[1] + j) * t->dim[0] + i];
}

/* The basis point of segment label (any when -1) nearest to q among the grid
 * nodes within NEAREST_REACH cells, else among all points; -1 when the basis has none. */
static int32_t nearest(const sim_traces *t, const double q[3], int label)
{
    const det_basis *b = &t->basis;
    int c[3];
    for (int k = 0; k < 3; k++)
        c[k] = (int)lround((q[k] - t->origin[k]) / t->h);
    int32_t best = -1;
    double best_d = INFINITY;
    for (int dk = -NEAREST_REACH; dk <= NEAREST_REACH; dk++)
        for (int dj = -NEAREST_REACH; dj <= NEAREST_REACH; dj++)
            for (int di = -NEAREST_REACH; di <= NEAREST_REACH; di++) {
                int32_t n = node_at(t, c[0] + di, c[1] + dj, c[2] + dk);
                double d = (double)di * di + (double)dj * dj + (double)dk * dk;
                if (n >= 0 && d < best_d && (label < 0 || b->segment[n] == label)) {
                    best = n;
                    best_d = d;
                }
            }
    if (best >= 0)
        return best;
    for (uint32_t i = 0; i < b->n_points; i++) {
        const float *p = &b->pos[3 * i];
        if (label >= 0 && b->segment[i] != label)
            continue;
        double d = (p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2]);
        if (d < best_d)
            best_d = d, best = (int32_t)i;
    }
    return best;
}

/* Eight basis points and their weights; absent corners read a row of zeros with weight 0. */
typedef struct corners {
    const float *sig[8];
    float w[8];
} corners;

static const float zeros[DET_BASIS_MAX_CHANNELS * DET_BASIS_MAX_SAMPLES];

/* acc[c] += sum over the corners of w * signal channel perm[c], for every channel:
 * one pass over acc for all eight (it stays in L1; the basis rows stream in). */
static void add_corners(const sim_traces *t, const corners *k, const int *perm, float *acc)
{
    size_t n = t->basis.n_samples;
    const float w0 = k->w[0], w1 = k->w[1], w2 = k->w[2], w3 = k->w[3], w4 = k->w[4], w5 = k->w[5],
                w6 = k->w[6], w7 = k->w[7];
    for (int c = 0; c < DET_CHANNELS; c++) {
        size_t off = (size_t)perm[c] * n;
        const float *s0 = k->sig[0] + off, *s1 = k->sig[1] + off, *s2 = k->sig[2] + off, *s3 = k->sig[3] + off,
                    *s4 = k->sig[4] + off, *s5 = k->sig[5] + off, *s6 = k->sig[6] + off, *s7 = k->sig[7] + off;
        float *dst = acc + (size_t)c * n;
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            dst[i] += w0 * s0[i] + w1 * s1[i] + w2 * s2[i] + w3 * s3[i] + w4 * s4[i] + w5 * s5[i] + w6 * s6[i] +
                      w7 * s7[i];
    }
}

/* p turned into the basis's sectors (by -turn sectors; turn is 0 unless the basis holds sector A only). */
static int to_basis(const sim_traces *t, const double p[3], double q[3])
{
    int turn = t->one_sector ? det_sector_of(p[0], p[1]) : 0;
    det_rotate_sectors(p, -turn, q);
    return turn;
}

/* The 8 grid nodes around q (basis frame) and their trilinear weights (0 where
 * the basis has no point); the sum of the weights. */
static double cell(const sim_traces *t, const double q[3], int32_t node[8], double w[8])
{
    int base[3];
    double f[3], total = 0;
    for (int k = 0; k < 3; k++) {
        double x = (q[k] - t->origin[k]) / t->h;
        base[k] = (int)floor(x);
        f[k] = x - base[k];
    }
    for (int m = 0; m < 8; m++) {
        int a = m & 1, b = (m >> 1) & 1, c = m >> 2;
        node[m] = node_at(t, base[0] + a, base[1] + b, base[2] + c);
        w[m] = node[m] < 0 ? 0 : (a ? f[0] : 1 - f[0]) * (b ? f[1] : 1 - f[1]) * (c ? f[2] : 1 - f[2]);
        total += w[m];
    }
    return total;
}

/* The cell reduced to one node (weight 1): q is outside the basis's grid cells. */
static void single_node(int32_t n, int32_t node[8], double w[8])
{
    node[0] = n;
    w[0] = 1;
    for (int m = 1; m < 8; m++)
        node[m] = -1, w[m] = 0;
}

int sim_traces_collecting(const sim_traces *t, const double p[3])
{
    double q[3], w[8], weight[DET_SEGMENTS] = {0};
    int32_t node[8];
    int turn = to_basis(t, p, q), best = 0;
    if (cell(t, q, node, w) < 1e-9)
        single_node(nearest(t, q, -1), node, w);
    for (int m = 0; m < 8; m++)
        if (node[m] >= 0)
            weight[t->basis.segment[node[m]]] += w[m];
    for (int s = 1; s < DET_SEGMENTS; s++)
        if (weight[s] > weight[best])
            best = s;
    return (best + DET_RINGS * turn) % DET_SEGMENTS;
}

/* Adds energy e times the basis signal at p (crystal frame), collected by segment seg, to acc. */
static void add_interaction(const sim_traces *t, const double p[3], int seg, double e, float *acc)
{
    int perm[DET_CHANNELS];
    double q[3];
    int turn = to_basis(t, p, q), label = (seg + DET_SEGMENTS - DET_RINGS * turn) % DET_SEGMENTS;
    for (int c = 0; c < DET_SEGMENTS; c++)
        perm[(c + DET_RINGS * turn) % DET_SEGMENTS] = c;
    perm[DET_CORE] = DET_CORE;
    corners k;
    int32_t node[8];
    double w[8], total = 0;
    cell(t, q, node, w);
    for (int m = 0; m < 8; m++) {
        if (node[m] >= 0 && t->basis.segment[node[m]] != label)
            node[m] = -1, w[m] = 0;
        total += w[m];
    }
    if (total < 1e-9) {
        int32_t n = nearest(t, q, label);
        single_node(n >= 0 ? n : nearest(t, q, -1), node, w);
        total = 1;
    }
    for (int m = 0; m < 8; m++) {
        k.sig[m] = node[m] < 0 ? zeros : det_basis_point(&t->basis, (size_t)node[m]);
        k.w[m] = (float)(e * w[m] / total);
    }
    add_corners(t, &k, perm, acc);
}

/* ---- time, noise, ADC */

static double sub_sample(const sim_traces *t, uint32_t event)
{
    sim_rng r;
    if (!t->p.sub_sample)
        return 0;
    sim_rng_seed(&r, t->seed, event, SIM_STREAM_TRACES);
    return sim_uniform(&r);
}

void sim_traces_start(const sim_traces *t, sim_event *ev)
{
    float start = (float)((t->p.pre_trigger + sub_sample(t, ev->number)) * TRACE_NS);
    for (int c = 0; c < ev->n_fired; c++) {
        const sim_fired *f = &ev->fired[c];
        for (int k = 0; k < f->count; k++)
            ev->truth.hit[ev->order[f->first + k]].t = start;
    }
}

/* Where each trace sample falls in the basis: the two samples around it and the weight of the second. */
typedef struct time_map {
    int lo[ADF_MAX_SAMPLES], hi[ADF_MAX_SAMPLES];
    double f[ADF_MAX_SAMPLES];
} time_map;

static void map_time(const sim_traces *t, double u, time_map *m)
{
    const det_basis *b = &t->basis;
    double per_sample = TRACE_NS / b->sample_ns;
    int last = (int)b->n_samples - 1;
    for (int s = 0; s < t->p.samples; s++) {
        double x = b->pretrigger + (s - t->p.pre_trigger - u) * per_sample;
        x = x < 0 ? 0 : x > last ? last : x;
        m->lo[s] = (int)x;
        m->hi[s] = m->lo[s] < last ? m->lo[s] + 1 : last;
        m->f[s] = x - m->lo[s];
    }
}

/* One channel: resampled to trace time, gain, baseline, noise, then the ADC
 * (nearest count, halves up, as lround for the values it keeps); 1 if it clipped. */
static int digitise(const sim_traces *t, const time_map *m, const float *sig, const float *noise, int16_t *out)
{
    double gain = t->p.gain, sigma = t->p.noise * gain, base = t->p.baseline, top = t->adc_max + 0.5;
    int clipped = 0;
    for (int s = 0; s < t->p.samples; s++) {
        double a = sig[m->lo[s]], v = a + m->f[s] * (sig[m->hi[s]] - a);
        double y = base + gain * v + sigma * noise[s];
        long adc;
        if (y < -0.5 || y >= top) {
            clipped = 1;
            adc = y < 0 ? 0 : t->adc_max;
        } else {
            adc = (long)(y + 0.5);
        }
        out[s] = (int16_t)(adc - t->offset);
    }
    return clipped;
}

void sim_traces_make(const sim_traces *t, sim_event *ev, const sim_fired *f, adf_crystal *c, float *scratch)
{
    size_t s = t->basis.n_samples;
    uint32_t starts = ((uint32_t)1 << NOISE_BITS) - (uint32_t)t->p.samples + 1;
    static const float silence[ADF_MAX_SAMPLES];
    sim_rng r;
    memset(scratch, 0, DET_CHANNELS * s * sizeof *scratch);
    for (int k = 0; k < f->count; k++) {
        const adf_truth_hit *h = &ev->truth.hit[ev->order[f->first + k]];
        const double p[3] = {h->pos[0], h->pos[1], h->pos[2]};
        add_interaction(t, p, h->segment, h->e, scratch);
    }
    time_map map;
    map_time(t, sub_sample(t, ev->number), &map);
    sim_rng_seed(&r, t->seed, ev->number, SIM_STREAM_TRACES | ((uint64_t)c->crystal_id + 1) << 8);
    c->gain = (float)t->p.gain;
    for (int ch = 0; ch < DET_CHANNELS; ch++) {
        const float *noise = t->p.noise > 0 ? t->noise + sim_below(&r, starts) : silence;
        if (digitise(t, &map, scratch + ch * s, noise, c->trace[ch]))
            c->status |= SIM_STATUS_CLIPPED;
    }
}

/* psa_refine.h: the PSA's steps around its searches written once for the CPU path (actors/psa/) and the GPU block (kernels/psa_block.cu): alignment, a search's values, its answer as a hit, the start-time refinement (channels, schedule of starts, the best, the "moved" rule) and the subtraction (GPUd() kernel bodies). */
#ifndef NARWHAL_PSA_REFINE_H
#define NARWHAL_PSA_REFINE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "psa_trace.h"

/*
 * Each function here is a kernel body: on the GPU the threads of a block
 * (one event) share it (GPUthread() of GPUthreads()); on the CPU one thread
 * runs it whole (gpud.h).  The values do not depend on the split: every
 * element is computed by the same operations (psa_trace.h), and the sums
 * of squares are added in one order, channel after channel, the starts
 * scanned in order.
 */

enum {
    PR_MAX_CHANNELS = PSA_MAX_MASK + 2, /* a refinement's channels: the mask's, the segment, the core */
    PR_GROUP = 7,                       /* starts whose channels' sums are taken side by side */
};

/* What the refinement reads besides the event: the basis's window on the
 * traces, its signals (n_points x 37 x n_samples), each point's edge (NaN:
 * none), and the timing's shifts. */
typedef struct pr_basis {
    pt_window w;
    uint32_t n_samples;
    const float *signal, *point_edge;
    double basis_edge, shift_step, half_step;
    int steps; /* shifts either side in the first pass */
} pr_basis;

/* An event as the steps read it: its traces, start, net-charge segments
 * (highest energy first) and energies, and net segment 0's mask and point. */
typedef struct pr_event {
    const uint8_t *trace; /* 37 x n_samples int16 ADC values */
    uint32_t n_samples, n_net;
    float per_kev;        /* 1 / gain */
    double t0;            /* trace samples: the start from the edge */
    const uint8_t *net;
    const float *e;
    const uint8_t *mask;  /* net segment 0's mask channels */
    uint32_t n_mask;
    uint32_t point;       /* the basis point found for net segment 0 */
    const uint32_t *points; /* the basis point found for each net segment (the neighbour passes) */
} pr_event;

/* The first pass's shifts either side: shift_range over shift_step, whole. */
GPUd() static inline int pr_steps(double range, double step)
{
    return (int)floor(range / step + 1e-9);
}

/* The event's 37 channels read at start t into out (37 x window). */
GPUd() static inline void pr_align(const pt_window *w, const pr_event *ev, double t, float *out)
{
    for (uint32_t v = GPUthread(); v < DET_CHANNELS * w->length; v += GPUthreads()) {
        const uint32_t ch = v / w->length, i = v % w->length;
        const pt_tap tp = pt_tap_at(w, ev->n_samples, t, i);
        out[v] = pt_lerp(pt_raw(ev->trace, ev->n_samples, ev->per_kev, ch, tp.lo),
                         pt_raw(ev->trace, ev->n_samples, ev->per_kev, ch, tp.hi), tp.f);
    }
}

/* A search's measured values: the aligned mask channels (resid, 37 x W) over the segment's energy e. */
GPUd() static inline void pr_fill(const float *resid, const uint8_t *mask, uint32_t n_mask, uint32_t W, float e,
                                  float *meas)
{
    for (uint32_t v = GPUthread(); v < n_mask * W; v += GPUthreads())
        meas[v] = pt_fill(resid[(size_t)mask[v / W] * W + v % W], e);
}

/* A search's answer as a hit: the column it found (use: the mask channels
 * it used; none: the segment's point nearest its centre, status
 * PSA_HIT_NO_MASK) as a basis point; points: the segment's columns' points. */
GPUd() static inline void pr_answer(uint32_t use, uint32_t column, uint32_t centre, const uint32_t *points,
                                    uint16_t *status, uint32_t *point)
{
    *status = use ? 0 : PSA_HIT_NO_MASK;
    *point = points[use ? column : centre];
}

/* A hit's signal (sig: its point's, from the window's first basis sample)
 * times its energy e leaves the aligned values resid (37 x W). */
GPUd() static inline void pr_subtract(float *resid, const float *sig, uint32_t n_samples, uint32_t W, float e)
{
    for (uint32_t v = GPUthread(); v < DET_CHANNELS * W; v += GPUthreads())
        resid[v] = pt_subtract(resid[v], e, sig[(size_t)(v / W) * n_samples + v % W]);
}

/* A neighbour pass's measured values (the hit searched again with the
 * event's other hits subtracted): the aligned mask channels with the hit's
 * own signal (sig: its point's, from the window's first basis sample) times
 * its energy e put back, over e. */
GPUd() static inline void pr_fill_back(const float *resid, const float *sig, uint32_t n_samples, const uint8_t *mask,
                                       uint32_t n_mask, uint32_t W, float e, float *meas)
{
    for (uint32_t v = GPUthread(); v < n_mask * W; v += GPUthreads()) {
        const uint32_t ch = mask[v / W], i = v % W;
        meas[v] = pt_fill(pt_restore(resid[(size_t)ch * W + i], e, sig[(size_t)ch * n_samples + i]), e);
    }
}

/* A hit of energy e moved from the point of signal was to that of signal now:
 * the aligned values resid (37 x W) get was's signal back and lose now's. */
GPUd() static inline void pr_replace(float *resid, const float *was, const float *now, uint32_t n_samples, uint32_t W,
                                     float e)
{
    for (uint32_t v = GPUthread(); v < DET_CHANNELS * W; v += GPUthreads()) {
        const size_t at = (size_t)(v / W) * n_samples + v % W;
        resid[v] = pt_subtract(pt_restore(resid[v], e, was[at]), e, now[at]);
    }
}

/* The refinement's channels (into ch, their count returned): net segment
 * 0's mask channels that are not other net-charge segments, the segment,
 * and the core for a single net-charge segment. */
GPUd() static inline int pr_channels(const pr_event *ev, uint8_t *ch)
{
    int n = 0;
    for (uint32_t c = 0; c < ev->n_mask; c++) {
        int other = 0;
        for (uint32_t k = 1; k < ev->n_net; k++)
            other = other || ev->net[k] == ev->mask[c];
        if (!other && ev->mask[c] != ev->net[0])
            ch[n++] = ev->mask[c];
    }
    ch[n++] = ev->net[0];
    if (ev->n_net == 1)
        ch[n++] = DET_CORE;
    return n;
}

/* The point's own start: the basis's median edge less the point's edge (0
 * without one, and for every point of a basis aligned on its edges, as the
 * actor's is: actors/psa/psa_event.h, "Start time"). */
GPUd() static inline double pr_own(const pr_basis *b, uint32_t point)
{
    const float pe = b->point_edge[point];
    return isfinite(pe) ? PT_DSUB(b->basis_edge, (double)pe) : 0;
}

/*
 * The schedule of starts: stage 0 tries own + k * step, k = -steps..steps;
 * then the step is halved twice, each stage trying the best less and plus
 * the half step.  A lower sum wins, the starts taken in order.
 */
typedef struct pr_scan {
    double t0, own, step, h, centre, best, best_sum;
    int steps, stage, n; /* n: the stage's starts */
} pr_scan;

GPUd() static inline void pr_scan_init(pr_scan *s, double t0, double own, int steps, double step)
{
    s->t0 = t0;
    s->own = own;
    s->step = step;
    s->h = step;
    s->centre = own;
    s->best = own;
    s->best_sum = INFINITY;
    s->steps = steps;
    s->stage = -1;
    s->n = 0;
}

/* Begins the next stage; 0 once the schedule is done. */
GPUd() static inline int pr_scan_next(pr_scan *s)
{
    if (++s->stage == 0) {
        s->n = 2 * s->steps + 1;
        return 1;
    }
    s->h = s->stage == 1 ? s->step / 2 : s->h / 2;
    if (!(s->h >= s->step / 4))
        return 0;
    s->centre = s->best;
    s->n = 2;
    return 1;
}

/* Start k of the stage (trace samples). */
GPUd() static inline double pr_scan_start(const pr_scan *s, int k)
{
    if (s->stage == 0)
        return PT_DADD(s->t0, pt_shift(s->own, k - s->steps, s->step));
    const double tc = PT_DADD(s->t0, s->centre);
    return k == 0 ? PT_DSUB(tc, s->h) : PT_DADD(tc, s->h);
}

/* Start k's sum of squares: it becomes the best when lower. */
GPUd() static inline void pr_scan_take(pr_scan *s, int k, double sum)
{
    if (!(sum < s->best_sum))
        return;
    s->best_sum = sum;
    s->best = s->stage == 0 ? pt_shift(s->own, k - s->steps, s->step) : pt_shift(s->centre, 2 * k - 1, s->h);
}

/* Channel ch's sum of squares over the window between the traces started
 * at t and the point's signals sig (samples in order). */
GPUd() static inline double pr_channel_squares(const pr_basis *b, const pr_event *ev, double t, const float *sig,
                                               uint32_t ch, double inv)
{
    const float *s = sig + (size_t)ch * b->n_samples + b->w.start;
    double acc = 0;
    for (uint32_t i = 0; i < b->w.length; i++) {
        const pt_tap tp = pt_tap_at(&b->w, ev->n_samples, t, i);
        const float v = pt_lerp(pt_raw(ev->trace, ev->n_samples, ev->per_kev, ch, tp.lo),
                                pt_raw(ev->trace, ev->n_samples, ev->per_kev, ch, tp.hi), tp.f);
        acc = pt_square(acc, v, inv, s[i]);
    }
    return acc;
}

/*
 * The neighbour passes' start time (actors/psa/psa_block.h): the event's
 * traces against the sum of all its hits, every channel.  Start k's sum of
 * squares of channel ch: the trace read at t less each hit's signal times
 * its energy, hits in order (the values the subtraction leaves).  The
 * samples go PR_CHUNK at a time, each step over the chunk's samples before
 * the next (a GPU thread then has the chunk's reads in flight at once);
 * every value and the sum take the same operations in the same order.
 */
enum { PR_CHUNK = 8 };
GPUd() static inline double pr_joint_squares(const pr_basis *b, const pr_event *ev, double t, uint32_t ch)
{
    const size_t point_values = (size_t)DET_CHANNELS * b->n_samples, at = (size_t)ch * b->n_samples + b->w.start;
    const uint32_t W = b->w.length;
    double acc = 0;
    for (uint32_t i0 = 0; i0 < W; i0 += PR_CHUNK) {
        float v[PR_CHUNK];
        for (uint32_t u = 0; u < PR_CHUNK; u++)
            if (i0 + u < W) {
                const pt_tap tp = pt_tap_at(&b->w, ev->n_samples, t, i0 + u);
                v[u] = pt_lerp(pt_raw(ev->trace, ev->n_samples, ev->per_kev, ch, tp.lo),
                               pt_raw(ev->trace, ev->n_samples, ev->per_kev, ch, tp.hi), tp.f);
            }
        for (uint32_t k = 0; k < ev->n_net; k++) {
            const float *s = b->signal + (size_t)ev->points[k] * point_values + at + i0;
            for (uint32_t u = 0; u < PR_CHUNK; u++)
                if (i0 + u < W)
                    v[u] = pt_subtract(v[u], ev->e[k], s[u]);
        }
        for (uint32_t u = 0; u < PR_CHUNK; u++)
            if (i0 + u < W)
                acc = PT_DADD(acc, PT_DMUL((double)v[u], (double)v[u]));
    }
    return acc;
}

/* The best start of pr_scan's schedule around `centre`: for each group of
 * starts, the threads sum a start's channel each; then every thread adds
 * the channels in order and scans the starts in order, so that all hold the
 * same best.  joint: the neighbour passes' sums (pr_joint_squares, every
 * channel); else the event's point's (pr_channel_squares over
 * pr_channels'). */
GPUd() static inline double pr_scan_best(const pr_basis *b, const pr_event *ev, double centre, int joint)
{
    GPUshared() double part[PR_GROUP][DET_CHANNELS];
    uint8_t ch[PR_MAX_CHANNELS];
    const int n = joint ? DET_CHANNELS : pr_channels(ev, ch);
    const float *sig = b->signal + (size_t)ev->point * DET_CHANNELS * b->n_samples;
    const double inv = 1.0 / (double)ev->e[0];
    pr_scan s;
    pr_scan_init(&s, ev->t0, centre, b->steps, b->shift_step);
    while (pr_scan_next(&s))
        for (int k0 = 0; k0 < s.n; k0 += PR_GROUP) {
            const int m = s.n - k0 < PR_GROUP ? s.n - k0 : PR_GROUP;
            for (int t = (int)GPUthread(); t < m * n; t += (int)GPUthreads()) {
                const double start = pr_scan_start(&s, k0 + t / n);
                part[t / n][t % n] = joint ? pr_joint_squares(b, ev, start, (uint32_t)(t % n))
                                           : pr_channel_squares(b, ev, start, sig, ch[t % n], inv);
            }
            GPUbarrier();
            for (int k = 0; k < m; k++) {
                double sum = 0;
                for (int c = 0; c < n; c++)
                    sum = PT_DADD(sum, part[k][c]);
                pr_scan_take(&s, k0 + k, sum);
            }
            GPUbarrier();
        }
    return s.best;
}

/* The best shift from t0 for the event's point, around the point's own start. */
GPUd() static inline double pr_best_shift(const pr_basis *b, const pr_event *ev)
{
    return pr_scan_best(b, ev, pr_own(b, ev->point), 0);
}

/* Whether pass `pass` refines an event: every event in the first pass,
 * then those whose start the last pass moved (moved) and whose search then
 * found another point than the one it refined with (before). */
GPUd() static inline int pr_again(int pass, int moved, uint32_t point, uint32_t before)
{
    return pass == 0 || (moved && point != before);
}

/* Whether a pass moved the start from `was` to `best`: any change in the
 * first pass, half a ShiftStep or more after it. */
GPUd() static inline int pr_moved(int pass, double best, double was, double half_step)
{
    return pass == 0 ? best != was : fabs(PT_DSUB(best, was)) >= half_step;
}

/*
 * Refinement pass `pass` of one event (pr_again says whether it runs): the
 * best shift for its point, *moved (pr_moved), *before the point it used,
 * *shift the new shift, and, where the start changed, its traces aligned
 * again into resid.  The caller searches again the events it moved.
 */
GPUd() static inline void pr_pass(const pr_basis *b, const pr_event *ev, int pass, double *shift, uint32_t *before,
                                  uint8_t *moved, float *resid)
{
    if (!pr_again(pass, *moved, ev->point, *before)) {
        if (GPUthread() == 0)
            *moved = 0;
        return;
    }
    const double was = *shift, best = pr_best_shift(b, ev);
    if (GPUthread() == 0) {
        *moved = (uint8_t)pr_moved(pass, best, was, b->half_step);
        *before = ev->point;
        *shift = best;
    }
    if (best != was)
        pr_align(&b->w, ev, PT_DADD(ev->t0, best), resid);
}

/* Neighbour pass `pass`'s start time for one event: the joint best shift
 * around the current one (the first pass: around the first hit's own start;
 * the rounds left these events' starts at their edges); where it moved,
 * *shift takes it, *moved is set and the traces are aligned again with every
 * hit subtracted (resid: traces less all hits, as before). */
GPUd() static inline void pr_joint_pass(const pr_basis *b, const pr_event *ev, int pass, double *shift, uint8_t *moved,
                                        float *resid)
{
    const double was = *shift, best = pr_scan_best(b, ev, pass == 1 ? pr_own(b, ev->points[0]) : was, 1);
    if (best == was)
        return;
    GPUbarrier();
    if (GPUthread() == 0) {
        *shift = best;
        *moved = 1;
    }
    pr_align(&b->w, ev, PT_DADD(ev->t0, best), resid);
    for (uint32_t k = 0; k < ev->n_net; k++)
        pr_subtract(resid, b->signal + (size_t)ev->points[k] * DET_CHANNELS * b->n_samples + b->w.start, b->n_samples,
                    b->w.length, ev->e[k]);
}

#endif

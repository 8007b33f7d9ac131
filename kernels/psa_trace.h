/* psa_trace.h: a crystal's traces read at a start time on the basis's samples, the refinement's sums of squares, the fill and the subtraction: arithmetic and constants written once for the PSA's CPU path and its GPU block (GPUd()). */
#ifndef NARWHAL_PSA_TRACE_H
#define NARWHAL_PSA_TRACE_H

#include <stdint.h>

#include "channels.h"
#include "gpud.h"

/* What the CPU path and the GPU block both hold: a segment's FoM sums at
 * most PSA_MAX_MASK channels; a hit whose every mask channel was another
 * net-charge segment gets the status PSA_HIT_NO_MASK and the segment's point
 * nearest its centre. */
enum {
    PSA_MAX_MASK = 16,
    PSA_HIT_NO_MASK = 1,
};

/* Every operation rounded on its own, as gcc's C11 mode computes it
 * (-ffp-contract=off): nvcc would otherwise fuse a multiply and an add
 * in device code. */
#ifdef __CUDA_ARCH__
#define PT_DADD(a, b) __dadd_rn((a), (b))
#define PT_DSUB(a, b) __dsub_rn((a), (b))
#define PT_DMUL(a, b) __dmul_rn((a), (b))
#define PT_FADD(a, b) __fadd_rn((a), (b))
#define PT_FSUB(a, b) __fsub_rn((a), (b))
#define PT_FMUL(a, b) __fmul_rn((a), (b))
#define PT_FDIV(a, b) __fdiv_rn((a), (b))
#else
#define PT_DADD(a, b) ((a) + (b))
#define PT_DSUB(a, b) ((a) - (b))
#define PT_DMUL(a, b) ((a) * (b))
#define PT_FADD(a, b) ((a) + (b))
#define PT_FSUB(a, b) ((a) - (b))
#define PT_FMUL(a, b) ((a) * (b))
#define PT_FDIV(a, b) ((a) / (b))
#endif

/* Where the basis's window lies: basis samples start .. start + length, the
 * basis's pretrigger, and trace samples per basis sample. */
typedef struct pt_window {
    uint32_t start, length;
    double pretrigger, ratio;
} pt_window;
GPU_LAYOUT(sizeof(pt_window) == 24 && offsetof(pt_window, length) == 4 &&
           offsetof(pt_window, pretrigger) == 8 && offsetof(pt_window, ratio) == 16);

/* Sample i of channel ch of 37 x n int16 little-endian ADC values, in keV. */
GPUd() static inline float pt_raw(const uint8_t *trace, uint32_t n, float per_kev, uint32_t ch, uint32_t i)
{
    const uint8_t *p = trace + 2 * ((uint64_t)ch * n + i);
    int16_t v = (int16_t)(uint16_t)(p[0] | (uint16_t)p[1] << 8);
    return PT_FMUL((float)v, per_kev);
}

/* Window sample i of a trace of n samples started at t (trace samples): the
 * two samples it reads and the weight of the second, linear, held at the
 * ends (a held end reads its sample exactly). */
typedef struct pt_tap {
    uint32_t lo, hi;
    double f;
} pt_tap;

GPUd() static inline pt_tap pt_tap_at(const pt_window *w, uint32_t n, double t, uint32_t i)
{
    double last = n - 1;
    double x = PT_DADD(t, PT_DMUL(PT_DSUB((double)(w->start + i), w->pretrigger), w->ratio));
    uint32_t k = !(x > 0) ? 0 : x >= last ? n - 1u : (uint32_t)x;
    int inside = x > 0 && x < last;
    pt_tap tp;
    tp.lo = k;
    tp.hi = inside ? k + 1 : k;
    tp.f = inside ? PT_DSUB(x, (double)k) : 0;
    return tp;
}

/* The trace between samples a and c at weight f. */
GPUd() static inline float pt_lerp(float a, float c, double f)
{
    return (float)PT_DADD((double)a, PT_DMUL(f, (double)PT_FSUB(c, a)));
}

/* One term of a refinement's sum of squares: v, the trace at a tap, over the
 * segment's energy (inv = 1 / E) against the basis value s. */
GPUd() static inline double pt_square(double acc, float v, double inv, float s)
{
    double d = PT_DSUB(PT_DMUL((double)v, inv), (double)s);
    return PT_DADD(acc, PT_DMUL(d, d));
}

/* Shift k of a refinement's first pass: `own` (the point's own start) plus k steps. */
GPUd() static inline double pt_shift(double own, int k, double step)
{
    return PT_DADD(own, PT_DMUL((double)k, step));
}

/* A search's measured value: the aligned trace over the segment's energy. */
GPUd() static inline float pt_fill(float resid, float e)
{
    return PT_FMUL(resid, PT_FDIV(1.0f, e));
}

/* An aligned value less a hit's basis value times its energy. */
GPUd() static inline float pt_subtract(float resid, float e, float s)
{
    return PT_FSUB(resid, PT_FMUL(e, s));
}

/* An aligned value with a hit's basis value times its energy put back. */
GPUd() static inline float pt_restore(float resid, float e, float s)
{
    return PT_FADD(resid, PT_FMUL(e, s));
}

#endif

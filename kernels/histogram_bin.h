/* histogram_bin.h: where a value lands in a histogram (bin, underflow, overflow, NaN), one source for the CPU and the GPU. */
#ifndef NARWHAL_HISTOGRAM_BIN_H
#define NARWHAL_HISTOGRAM_BIN_H

#include <stddef.h>
#include <stdint.h>

#include "gpud.h"

/*
 * A histogram is stored as its bins followed by three counters, and every
 * value lands in exactly one of these slots:
 *
 *   slot                    1D                       2D (x-axis bins nx, y-axis bins ny)
 *   0 .. bins-1             bin floor((v-lo)*scale)  bin ix*ny + iy (row = x bin, .m4b order)
 *   bins + HISTO_UNDER      v < lo                   x < lo_x or y < lo_y (and neither NaN)
 *   bins + HISTO_OVER       v >= hi                  x >= hi_x or y >= hi_y (and no underflow)
 *   bins + HISTO_NAN        v is NaN                 x or y is NaN
 *
 * NaN is tested first, so a NaN is never an underflow or an overflow; -inf is
 * an underflow and +inf an overflow.  scale = bins / (hi - lo) is rounded to
 * float once (histo_axis_make); the product (v - lo) * scale is evaluated in
 * float, where gcc (SSE) and nvcc (no fast-math, no contraction possible for
 * this form) round identically, so both paths pick the same bin for every
 * float.  A value just under hi whose product rounds up to bins goes to the
 * last bin: the range test, not the product, decides overflow.
 */
enum { HISTO_UNDER = 0, HISTO_OVER = 1, HISTO_NAN = 2, HISTO_EXTRA = 3 };

/* Bins are at most 2^24 per axis, so that every bin index is exact in float. */
#define HISTO_MAX_BINS (1u << 24)

typedef struct histo_axis {
    float lo, hi;  /* the binned range [lo, hi) */
    float scale;   /* bins / (hi - lo) */
    uint32_t bins;
} histo_axis;
GPU_LAYOUT(sizeof(histo_axis) == 16 && offsetof(histo_axis, hi) == 4 && offsetof(histo_axis, scale) == 8 &&
           offsetof(histo_axis, bins) == 12);

/* A group: `instances` histograms of one shape stored back to back (the
 * channels of a family: 36 segments x 180 crystals, say). */
typedef struct histo_group {
    histo_axis ax[2];   /* ax[1] is used when dims == 2 */
    uint32_t dims;      /* 1 or 2 */
    uint32_t instances;
    uint64_t slots;     /* per instance: its bins plus HISTO_EXTRA */
    uint64_t offset;    /* slot of instance 0 in the set's count array */
} histo_group;
GPU_LAYOUT(sizeof(histo_group) == 56 && offsetof(histo_group, dims) == 32 &&
           offsetof(histo_group, instances) == 36 && offsetof(histo_group, slots) == 40 &&
           offsetof(histo_group, offset) == 48);

/* Entries for one group, structure of arrays: instance inst[i] (all 0 when
 * inst is NULL) receives the value x[i] (and y[i] for a 2D group). */
typedef struct histo_entries {
    const uint32_t *inst;
    const float *x;
    const float *y;
    size_t n;
} histo_entries;
GPU_LAYOUT(sizeof(histo_entries) == 32 && offsetof(histo_entries, x) == 8 &&
           offsetof(histo_entries, y) == 16 && offsetof(histo_entries, n) == 24);

/* For v in [lo, hi). */
GPUd() static inline uint32_t histo_axis_bin(const histo_axis *a, float v)
{
    uint32_t b = (uint32_t)((v - a->lo) * a->scale);
    return b < a->bins ? b : a->bins - 1;
}

GPUd() static inline uint32_t histo_slot_1d(const histo_axis *a, float v)
{
    if (v != v)
        return a->bins + HISTO_NAN;
    if (v < a->lo)
        return a->bins + HISTO_UNDER;
    if (v >= a->hi)
        return a->bins + HISTO_OVER;
    return histo_axis_bin(a, v);
}

GPUd() static inline uint64_t histo_slot_2d(const histo_axis *ax, const histo_axis *ay, float x,
                                            float y)
{
    uint64_t bins = (uint64_t)ax->bins * ay->bins;
    if (x != x || y != y)
        return bins + HISTO_NAN;
    if (x < ax->lo || y < ay->lo)
        return bins + HISTO_UNDER;
    if (x >= ax->hi || y >= ay->hi)
        return bins + HISTO_OVER;
    return (uint64_t)histo_axis_bin(ax, x) * ay->bins + histo_axis_bin(ay, y);
}

/* The slot of entry i, counted from the group's first slot. */
GPUd() static inline uint64_t histo_entry_slot(const histo_group *g, const histo_entries *e,
                                               size_t i)
{
    uint64_t inst = e->inst ? e->inst[i] : 0;
    uint64_t s = g->dims == 1 ? histo_slot_1d(&g->ax[0], e->x[i])
                              : histo_slot_2d(&g->ax[0], &g->ax[1], e->x[i], e->y[i]);
    return inst * g->slots + s;
}

/* For raw 8-bit samples: the slot of each of the 256 values, computed with
 * the same function, so a table lookup bins exactly as the float path. */
GPUd() static inline void histo_u8_table(const histo_axis *a, uint32_t table[256])
{
    for (int v = 0; v < 256; v++)
        table[v] = histo_slot_1d(a, (float)v);
}

#endif

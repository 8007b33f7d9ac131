/* histo_cpu.h: the CPU (OpenMP) histogram path, the reference the GPU path is checked against. */
#ifndef NARWHAL_HISTO_CPU_H
#define NARWHAL_HISTO_CPU_H

#include <stddef.h>
#include <stdint.h>

#include "histogram_bin.h"

/* An axis of `bins` bins over [lo, hi); 0, or -1 when bins is 0 or above
 * HISTO_MAX_BINS, or lo, hi are not finite with lo < hi. */
int histo_axis_make(histo_axis *a, uint32_t bins, double lo, double hi);

/* Adds the entries to counts (the set's count array; the group's offset is
 * applied here).  Each thread counts into its own copy of the group when that
 * pays (at least as many entries as slots) and the copies fit in
 * HISTO_CPU_COPY_BUDGET bytes; otherwise the threads add atomically. */
#define HISTO_CPU_COPY_BUDGET ((size_t)256 << 20)
void histo_cpu_fill(const histo_group *g, const histo_entries *e, uint64_t *counts);

/* Raw 8-bit samples for instance `inst` of a 1D group. */
void histo_cpu_fill_u8(const histo_group *g, uint32_t inst, const uint8_t *data, size_t n,
                       uint64_t *counts);

#endif

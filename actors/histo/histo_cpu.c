/* histo_cpu.c: the CPU (OpenMP) histogram path: per-thread copies merged, or atomic adds for groups too large to copy. */
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "histo_cpu.h"

/* Below this many entries threads cost more than they save. */
#define SERIAL_ENTRIES 16384
/* A thread's private counts are 32-bit: a chunk never holds more entries. */
#define CHUNK ((size_t)1 << 31)

int histo_axis_make(histo_axis *a, uint32_t bins, double lo, double hi)
{
    if (bins == 0 || bins > HISTO_MAX_BINS || !isfinite(lo) || !isfinite(hi) || !(lo < hi) ||
        (float)lo >= (float)hi)
        return -1;
    a->lo = (float)lo;
    a->hi = (float)hi;
    a->bins = bins;
    a->scale = (float)((double)bins / ((double)a->hi - (double)a->lo));
    return 0;
}

static void fill_serial(const histo_group *g, const histo_entries *e, uint64_t *base)
{
    for (size_t i = 0; i < e->n; i++)
        base[histo_entry_slot(g, e, i)]++;
}

static void fill_atomic(const histo_group *g, const histo_entries *e, uint64_t *base)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < e->n; i++) {
        uint64_t s = histo_entry_slot(g, e, i);
#pragma omp atomic
        base[s]++;
    }
}

/* Sums the threads' copies into the counts, one slot range per thread. */
static void merge(const uint32_t *copies, int threads, uint64_t total, uint64_t *base)
{
#pragma omp for schedule(static)
    for (uint64_t s = 0; s < total; s++) {
        uint64_t sum = 0;
        for (int t = 0; t < threads; t++)
            sum += copies[(uint64_t)t * total + s];
        base[s] += sum;
    }
}

/* Returns 0 when the copies could not be allocated (the caller goes atomic). */
static int fill_copies(const histo_group *g, const histo_entries *e, uint64_t *base, int threads)
{
    const uint64_t total = (uint64_t)g->instances * g->slots;
    uint32_t *copies = calloc((size_t)threads * total, sizeof *copies);
    if (!copies)
        return 0;
#pragma omp parallel num_threads(threads)
    {
        uint32_t *mine = copies + (uint64_t)omp_get_thread_num() * total;
#pragma omp for schedule(static)
        for (size_t i = 0; i < e->n; i++)
            mine[histo_entry_slot(g, e, i)]++;
        merge(copies, omp_get_num_threads(), total, base);
    }
    free(copies);
    return 1;
}

static void fill_chunk(const histo_group *g, const histo_entries *e, uint64_t *base)
{
    const uint64_t total = (uint64_t)g->instances * g->slots;
    const int threads = omp_get_max_threads();
    if (threads == 1 || e->n < SERIAL_ENTRIES) {
        fill_serial(g, e, base);
        return;
    }
    bool pays = e->n >= total &&
                total * sizeof(uint32_t) * (uint64_t)threads <= HISTO_CPU_COPY_BUDGET;
    if (!pays || !fill_copies(g, e, base, threads))
        fill_atomic(g, e, base);
}

void histo_cpu_fill(const histo_group *g, const histo_entries *e, uint64_t *counts)
{
    for (size_t at = 0; at < e->n; at += CHUNK) {
        histo_entries part = *e;
        part.n = e->n - at < CHUNK ? e->n - at : CHUNK;
        part.x += at;
        part.y = e->y ? e->y + at : NULL;
        part.inst = e->inst ? e->inst + at : NULL;
        fill_chunk(g, &part, counts + g->offset);
    }
}

/* Byte values counted per thread in 64-bit counters (no chunking needed),
 * then mapped to slots through the table of histogram_bin.h. */
void histo_cpu_fill_u8(const histo_group *g, uint32_t inst, const uint8_t *data, size_t n,
                       uint64_t *counts)
{
    uint32_t table[256];
    uint64_t values[256] = { 0 };
    histo_u8_table(&g->ax[0], table);
#pragma omp parallel if (n >= SERIAL_ENTRIES)
    {
        uint64_t mine[256] = { 0 };
#pragma omp for schedule(static)
        for (size_t i = 0; i < n; i++)
            mine[data[i]]++;
        for (int v = 0; v < 256; v++) {
#pragma omp atomic
            values[v] += mine[v];
        }
    }
    uint64_t *base = counts + g->offset + (uint64_t)inst * g->slots;
    for (int v = 0; v < 256; v++)
        base[table[v]] += values[v];
}

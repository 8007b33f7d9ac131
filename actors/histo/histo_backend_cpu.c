/* histo_backend_cpu.c: the histogram engine's host backend: OpenMP counting (histo_cpu.c) straight into the engine's count array. */
#include <omp.h>
#include <stdbool.h>
#include <stdio.h>

#include "histo_backend.h"
#include "histo_cpu.h"

static int open_host(void **state, int device, uint64_t slots, char *msg, size_t len)
{
    *state = NULL;
    return GPU_OK;
}

static void close_host(void *state) {}

static void plan(const void *state, const histo_group *g, char *out, size_t len)
{
    uint64_t total = g->slots * g->instances;
    bool copies = total * 4 * (uint64_t)omp_get_max_threads() <= HISTO_CPU_COPY_BUDGET;
    snprintf(out, len, copies ? "OpenMP, per-thread copies merged (atomic adds for a block with "
                                "fewer entries than slots)"
                              : "OpenMP, atomic adds (per-thread copies would pass 256 MiB)");
}

static int fill(void *state, const histo_group *groups, const histo_entries *e, size_t n, uint64_t *counts,
                char *msg, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (e[i].n)
            histo_cpu_fill(&groups[i], &e[i], counts);
    return GPU_OK;
}

static int clear(void *state, char *msg, size_t len)
{
    return GPU_OK;
}

static int counts(void *state, uint64_t *host, char *msg, size_t len)
{
    return GPU_OK;
}

const histo_backend histo_backend_cpu = {
    .name = "CPU", .open = open_host, .close = close_host, .plan = plan, .fill = fill, .clear = clear,
    .counts = counts,
};

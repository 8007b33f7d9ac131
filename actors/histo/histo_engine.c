/* histo_engine.c: counts staged entries on the GPU when one is usable, else with OpenMP, and hands back the counts. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "histo_cpu.h"
#include "histo_engine.h"
#ifdef NARWHAL_HAVE_CUDA
#include "histogram_gpu.h"
#endif

struct histo_engine {
    histo_group *groups;
    size_t n_groups;
    uint64_t slots;
    histo_stage *stage;
    histo_entries *entries; /* commit's view of the stages */
    uint64_t *counts;       /* the CPU path's counts, or the GPU's last download */
#ifdef NARWHAL_HAVE_CUDA
    histo_gpu *gpu;         /* NULL: the CPU counts */
    bool downloaded;        /* counts equal the device's */
#endif
};

unsigned histo_stage_grow(histo_stage *s)
{
    size_t cap = s->cap ? 2 * s->cap : 4096;
    uint32_t *inst = realloc(s->inst, cap * sizeof *inst);
    if (inst)
        s->inst = inst;
    float *x = inst ? realloc(s->x, cap * sizeof *x) : NULL;
    if (x)
        s->x = x;
    float *y = x ? realloc(s->y, cap * sizeof *y) : NULL;
    if (y)
        s->y = y;
    if (!y)
        return NARVAL_E_NOMEM;
    s->cap = cap;
    return 0;
}

/* Picks the GPU when asked or when usable; msg tells the choice. */
static unsigned choose_device(histo_engine *e, histo_device want, char *msg, size_t len)
{
    char why[256];
#ifdef NARWHAL_HAVE_CUDA
    if (want != HISTO_DEVICE_CPU) {
        int rc = histo_gpu_probe(why, sizeof why);
        if (rc == HISTO_GPU_OK) {
            char desc[256];
            snprintf(desc, sizeof desc, "%s", why);
            rc = histo_gpu_create(&e->gpu, e->slots, why, sizeof why);
            if (rc == HISTO_GPU_OK) {
                snprintf(msg, len, "GPU: %s; %.1f MiB of counts resident", desc,
                         e->slots * 8.0 / (1 << 20));
                return 0;
            }
            snprintf(msg, len, "the GPU (%s) cannot hold the histograms: %s", desc, why);
            return rc == HISTO_GPU_NOMEM ? NARVAL_E_NOMEM : NARVAL_E_DEVICE;
        }
    }
#else
    snprintf(why, sizeof why, "built without CUDA");
#endif
    if (want == HISTO_DEVICE_GPU) {
        snprintf(msg, len, "Device gpu is configured but %s", why);
        return NARVAL_E_DEVICE;
    }
    if (want == HISTO_DEVICE_CPU)
        snprintf(msg, len, "CPU, %d OpenMP threads (Device cpu is configured)",
                 omp_get_max_threads());
    else
        snprintf(msg, len, "CPU, %d OpenMP threads (%s)", omp_get_max_threads(), why);
    return 0;
}

unsigned histo_engine_create(histo_engine **out, const histo_group *groups, size_t n,
                             histo_device want, char *msg, size_t len)
{
    histo_engine *e = calloc(1, sizeof *e);
    unsigned code = NARVAL_E_NOMEM;
    *out = NULL;
    snprintf(msg, len, "out of memory for %zu histogram groups", n);
    if (!e)
        return code;
    e->n_groups = n;
    for (size_t i = 0; i < n; i++)
        e->slots = groups[i].offset + groups[i].slots * groups[i].instances > e->slots
                       ? groups[i].offset + groups[i].slots * groups[i].instances
                       : e->slots;
    e->groups = malloc((n + 1) * sizeof *e->groups);
    e->stage = calloc(n + 1, sizeof *e->stage);
    e->entries = calloc(n + 1, sizeof *e->entries);
    e->counts = calloc(e->slots + 1, sizeof *e->counts);
    if (!e->groups || !e->stage || !e->entries || !e->counts) {
        snprintf(msg, len, "out of memory for %.1f MiB of host counts", e->slots * 8.0 / (1 << 20));
        goto fail;
    }
    memcpy(e->groups, groups, n * sizeof *groups);
    if ((code = choose_device(e, want, msg, len)) != 0)
        goto fail;
    *out = e;
    return 0;
fail:
    histo_engine_destroy(e);
    return code;
}

void histo_engine_destroy(histo_engine *e)
{
    if (!e)
        return;
#ifdef NARWHAL_HAVE_CUDA
    histo_gpu_destroy(e->gpu);
#endif
    for (size_t i = 0; e->stage && i < e->n_groups; i++) {
        free(e->stage[i].inst);
        free(e->stage[i].x);
        free(e->stage[i].y);
    }
    free(e->stage);
    free(e->entries);
    free(e->groups);
    free(e->counts);
    free(e);
}

void histo_engine_plan(const histo_engine *e, size_t g, char *out, size_t len)
{
#ifdef NARWHAL_HAVE_CUDA
    if (e->gpu) {
        histo_gpu_plan_text(e->gpu, &e->groups[g], out, len);
        return;
    }
#endif
    uint64_t total = e->groups[g].slots * e->groups[g].instances;
    bool copies = total * 4 * (uint64_t)omp_get_max_threads() <= HISTO_CPU_COPY_BUDGET;
    snprintf(out, len, copies ? "OpenMP, per-thread copies merged (atomic adds for a block with "
                                "fewer entries than slots)"
                              : "OpenMP, atomic adds (per-thread copies would pass 256 MiB)");
}

histo_stage *histo_engine_stage(histo_engine *e, size_t g) { return &e->stage[g]; }

size_t histo_engine_staged(const histo_engine *e)
{
    size_t n = 0;
    for (size_t i = 0; i < e->n_groups; i++)
        n += e->stage[i].n;
    return n;
}

void histo_engine_discard(histo_engine *e)
{
    for (size_t i = 0; i < e->n_groups; i++)
        e->stage[i].n = 0;
}

/* The stages as entries: no instance array for a single histogram, no y for 1D. */
static void view_stages(histo_engine *e)
{
    for (size_t i = 0; i < e->n_groups; i++) {
        const histo_stage *s = &e->stage[i];
        e->entries[i] = (histo_entries){
            .inst = e->groups[i].instances > 1 ? s->inst : NULL,
            .x = s->x,
            .y = e->groups[i].dims == 2 ? s->y : NULL,
            .n = s->n,
        };
    }
}

unsigned histo_engine_commit(histo_engine *e, char *msg, size_t len)
{
    unsigned code = 0;
    view_stages(e);
#ifdef NARWHAL_HAVE_CUDA
    if (e->gpu) {
        int rc = histo_gpu_fill_host(e->gpu, e->groups, e->entries, e->n_groups, msg, len);
        code = rc == HISTO_GPU_OK ? 0 : rc == HISTO_GPU_NOMEM ? NARVAL_E_NOMEM : NARVAL_E_DEVICE;
        e->downloaded = false;
        histo_engine_discard(e);
        return code;
    }
#endif
    (void)msg;
    (void)len;
    for (size_t i = 0; i < e->n_groups; i++)
        if (e->entries[i].n)
            histo_cpu_fill(&e->groups[i], &e->entries[i], e->counts);
    histo_engine_discard(e);
    return code;
}

unsigned histo_engine_clear(histo_engine *e, char *msg, size_t len)
{
    histo_engine_discard(e);
    memset(e->counts, 0, e->slots * sizeof *e->counts);
#ifdef NARWHAL_HAVE_CUDA
    if (e->gpu) {
        e->downloaded = true;
        if (histo_gpu_clear(e->gpu, msg, len) != HISTO_GPU_OK)
            return NARVAL_E_DEVICE;
    }
#endif
    (void)msg;
    (void)len;
    return 0;
}

unsigned histo_engine_counts(histo_engine *e, const uint64_t **counts, char *msg, size_t len)
{
    *counts = e->counts;
#ifdef NARWHAL_HAVE_CUDA
    if (e->gpu && !e->downloaded) {
        if (histo_gpu_download(e->gpu, e->counts, msg, len) != HISTO_GPU_OK)
            return NARVAL_E_DEVICE;
        e->downloaded = true;
    }
#endif
    (void)msg;
    (void)len;
    return 0;
}

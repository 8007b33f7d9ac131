/* histo_engine.c: counts staged entries on the GPU when one is usable, else with OpenMP (each a backend, histo_backend.h), and hands back the counts. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "histo_backend.h"
#include "histo_engine.h"

struct histo_engine {
    histo_group *groups;
    size_t n_groups;
    uint64_t slots;
    histo_stage *stage;
    histo_entries *entries; /* commit's view of the stages */
    uint64_t *counts;       /* the CPU path's counts, or the GPU's last download */
    const histo_backend *be;
    void *state;            /* the backend's */
};

/* A backend's gpu_status as the library's. */
static histo_status of_gpu(int rc)
{
    return rc == GPU_OK ? HISTO_OK : rc == GPU_NOMEM ? HISTO_E_NOMEM : HISTO_E_DEVICE;
}

/* Room for at least `need` entries. */
static histo_status stage_reserve(histo_stage *s, size_t need)
{
    size_t cap = s->cap ? 2 * s->cap : 4096;
    while (cap < need)
        cap *= 2;
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
        return HISTO_E_NOMEM;
    s->cap = cap;
    return HISTO_OK;
}

histo_status histo_stage_grow(histo_stage *s) { return stage_reserve(s, s->cap + 1); }

void histo_stage_free(histo_stage *s)
{
    free(s->inst);
    free(s->x);
    free(s->y);
    *s = (histo_stage){ 0 };
}

/* The counts on GPU `device` (desc: its description); msg tells the choice. */
static histo_status open_gpu(histo_engine *e, const histo_backend *gpu, int device, const char *desc, char *msg,
                             size_t len)
{
    char why[256];
    int rc = gpu->open(&e->state, device, e->slots, why, sizeof why);
    if (rc != GPU_OK) {
        snprintf(msg, len, "the GPU (%s) cannot hold the histograms: %s", desc, why);
        return of_gpu(rc);
    }
    e->be = gpu;
    snprintf(msg, len, "GPU %d: %s; %.1f MiB of counts resident", device, desc, e->slots * 8.0 / (1 << 20));
    return 0;
}

/* Picks the GPU when asked or when usable (the Device and GPU keys, gpu_choose); msg tells the choice. */
static histo_status choose_device(histo_engine *e, histo_device want, int device, char *msg, size_t len)
{
    const histo_backend *gpu = HISTO_BACKEND_GPU;
    char why[256] = "Device cpu is configured";
    if (want != HISTO_DEVICE_CPU) {
        gpu_choice c = gpu_choose(gpu ? gpu->probe : NULL, want == HISTO_DEVICE_GPU, device, why, sizeof why);
        if (c == GPU_CHOICE_GPU)
            return open_gpu(e, gpu, device, why, msg, len);
        if (c != GPU_CHOICE_CPU) {
            snprintf(msg, len, "%s", why);
            return c == GPU_CHOICE_NUMBER ? HISTO_E_CONFIG : HISTO_E_DEVICE;
        }
    }
    e->be = &histo_backend_cpu;
    histo_status code = of_gpu(e->be->open(&e->state, device, e->slots, msg, len));
    if (!code)
        snprintf(msg, len, "CPU, %d OpenMP threads (%s)", omp_get_max_threads(), why);
    return code;
}

histo_status histo_engine_create(histo_engine **out, const histo_group *groups, size_t n,
                                 histo_device want, int gpu, char *msg, size_t len)
{
    histo_engine *e = calloc(1, sizeof *e);
    histo_status code = HISTO_E_NOMEM;
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
    if ((code = choose_device(e, want, gpu, msg, len)) != 0)
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
    if (e->be)
        e->be->close(e->state);
    for (size_t i = 0; e->stage && i < e->n_groups; i++)
        histo_stage_free(&e->stage[i]);
    free(e->stage);
    free(e->entries);
    free(e->groups);
    free(e->counts);
    free(e);
}

bool histo_engine_on_gpu(const histo_engine *e) { return e->be != &histo_backend_cpu; }

void histo_engine_plan(const histo_engine *e, size_t g, char *out, size_t len)
{
    e->be->plan(e->state, &e->groups[g], out, len);
}

histo_status histo_engine_take(histo_engine *e, const histo_stage *from)
{
    for (size_t i = 0; i < e->n_groups; i++) {
        histo_stage *s = &e->stage[i];
        const histo_stage *f = &from[i];
        if (f->n == 0)
            continue;
        if (s->n + f->n > s->cap && stage_reserve(s, s->n + f->n))
            return HISTO_E_NOMEM;
        memcpy(s->inst + s->n, f->inst, f->n * sizeof *s->inst);
        memcpy(s->x + s->n, f->x, f->n * sizeof *s->x);
        memcpy(s->y + s->n, f->y, f->n * sizeof *s->y);
        s->n += f->n;
    }
    return HISTO_OK;
}

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

histo_status histo_engine_commit(histo_engine *e, char *msg, size_t len)
{
    view_stages(e);
    int rc = e->be->fill(e->state, e->groups, e->entries, e->n_groups, e->counts, msg, len);
    histo_engine_discard(e);
    return of_gpu(rc);
}

histo_status histo_engine_clear(histo_engine *e, char *msg, size_t len)
{
    histo_engine_discard(e);
    memset(e->counts, 0, e->slots * sizeof *e->counts);
    return of_gpu(e->be->clear(e->state, msg, len));
}

histo_status histo_engine_counts(histo_engine *e, const uint64_t **counts, char *msg, size_t len)
{
    *counts = e->counts;
    return of_gpu(e->be->counts(e->state, e->counts, msg, len));
}

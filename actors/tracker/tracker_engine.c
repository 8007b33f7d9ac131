/* tracker_engine.c: the tracker's choice between the GPU path and the optimised CPU path (each a backend, tracker_backend.h), and the result buffers both fill. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "tracker_backend.h"
#include "tracker_engine.h"

struct tracker_engine {
    const tr_model *model;
    tracker_cpu *cpu;
    size_t cap_events, cap_points;
    tr_gamma *gammas;
    tr_event_info *info;
    const tracker_backend *be;
    void *state; /* the backend's */
};

/* A backend's gpu_status as the library's. */
static tr_status of_gpu(int rc)
{
    return rc == GPU_OK ? TR_OK : rc == GPU_NOMEM ? TR_E_NOMEM : TR_E_DEVICE;
}

/* The model on GPU `device` (desc: its description); msg tells the choice. */
static tr_status open_gpu(tracker_engine *e, const tracker_backend *gpu, int device, bool cluster_on_gpu,
                          const char *desc, char *msg, size_t len)
{
    char why[256];
    int rc = gpu->open(&e->state, e->model, device, cluster_on_gpu, why, sizeof why);
    if (rc != GPU_OK) {
        snprintf(msg, len, "the GPU (%s) cannot be used: %s", desc, why);
        return of_gpu(rc);
    }
    e->be = gpu;
    snprintf(msg, len, "GPU %d: %s; clustering on the %s", device, desc, cluster_on_gpu ? "GPU" : "CPU");
    return 0;
}

/* The GPU when asked or when usable (the Device and GPU keys, gpu_choose); msg tells the choice. */
static tr_status choose_device(tracker_engine *e, tracker_device want, int device, bool cluster_on_gpu, char *msg,
                               size_t len)
{
    const tracker_backend *gpu = TRACKER_BACKEND_GPU;
    char why[256] = "Device cpu is configured";
    if (want != TRACKER_CPU) {
        gpu_choice c = gpu_choose(gpu ? gpu->probe : NULL, want == TRACKER_GPU, device, why, sizeof why);
        if (c == GPU_CHOICE_GPU)
            return open_gpu(e, gpu, device, cluster_on_gpu, why, msg, len);
        if (c != GPU_CHOICE_CPU) {
            snprintf(msg, len, "%s", why);
            return c == GPU_CHOICE_NUMBER ? TR_E_CONFIG : TR_E_DEVICE;
        }
    }
    e->be = &tracker_backend_cpu;
    tr_status code = of_gpu(e->be->open(&e->state, e->model, device, cluster_on_gpu, msg, len));
    if (!code)
        snprintf(msg, len, "CPU, %d OpenMP threads (%s)", omp_get_max_threads(), why);
    return code;
}

tr_status tracker_engine_open(tracker_engine **out, const tr_model *m, tracker_device want, int gpu,
                              bool cluster_on_gpu, char *msg, size_t len)
{
    *out = NULL;
    tracker_engine *e = calloc(1, sizeof *e);
    if (!e || !(e->cpu = tracker_cpu_create(omp_get_max_threads()))) {
        free(e);
        snprintf(msg, len, "no memory for the tracking engine");
        return TR_E_NOMEM;
    }
    e->model = m;
    tr_status code = choose_device(e, want, gpu, cluster_on_gpu, msg, len);
    if (code) {
        tracker_engine_destroy(e);
        return code;
    }
    *out = e;
    return 0;
}

void tracker_engine_destroy(tracker_engine *e)
{
    if (!e)
        return;
    if (e->be)
        e->be->close(e->state);
    tracker_cpu_destroy(e->cpu);
    free(e->gammas);
    free(e->info);
    free(e);
}

bool tracker_engine_on_gpu(const tracker_engine *e)
{
    return e->be != &tracker_backend_cpu;
}

static bool reserve(tracker_engine *e, size_t events, size_t points)
{
    if (events > e->cap_events) {
        tr_event_info *info = realloc(e->info, events * sizeof *info);
        if (!info)
            return false;
        e->info = info;
        e->cap_events = events;
    }
    if (points > e->cap_points) {
        tr_gamma *g = realloc(e->gammas, points * sizeof *g);
        if (!g)
            return false;
        e->gammas = g;
        e->cap_points = points;
    }
    return true;
}

tr_status tracker_engine_run(tracker_engine *e, const tr_batch *b, tr_out *out, char *msg, size_t len)
{
    size_t points = b->first[b->n_events];
    if (!reserve(e, b->n_events ? b->n_events : 1, points ? points : 1)) {
        snprintf(msg, len, "no memory for the results of %u events", b->n_events);
        return TR_E_NOMEM;
    }
    out->gammas = e->gammas;
    out->info = e->info;
    return of_gpu(e->be->track(e->state, e->cpu, e->model, b, out, msg, len));
}

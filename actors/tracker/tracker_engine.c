/* tracker_engine.c: the tracker's choice between the GPU path and the optimised CPU path, and the result buffers both fill. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "narval.h"
#include "tracker_cpu.h"
#include "tracker_engine.h"
#ifdef NARWHAL_HAVE_CUDA
#include "tracker_gpu.h"
#endif

struct tracker_engine {
    const tr_model *model;
    tracker_cpu *cpu;
    size_t cap_events, cap_points;
    tr_gamma *gammas;
    tr_event_info *info;
#ifdef NARWHAL_HAVE_CUDA
    tr_gpu *gpu;        /* NULL: the CPU tracks */
    bool cluster_on_gpu;
    tr_cand *cands;     /* CPU-made candidates for the GPU */
#endif
};

static unsigned choose_device(tracker_engine *e, tracker_device want, bool cluster_on_gpu, char *msg,
                              size_t len)
{
    char why[256];
#ifdef NARWHAL_HAVE_CUDA
    if (want != TRACKER_CPU) {
        int rc = tr_gpu_probe(why, sizeof why);
        if (rc == TR_GPU_OK) {
            char desc[256];
            snprintf(desc, sizeof desc, "%s", why);
            rc = tr_gpu_create(&e->gpu, e->model, why, sizeof why);
            if (rc == TR_GPU_OK) {
                e->cluster_on_gpu = cluster_on_gpu;
                snprintf(msg, len, "GPU: %s; clustering on the %s", desc, cluster_on_gpu ? "GPU" : "CPU");
                return 0;
            }
            tr_gpu_destroy(e->gpu);
            e->gpu = NULL;
            snprintf(msg, len, "the GPU (%s) cannot be used: %s", desc, why);
            return rc == TR_GPU_NOMEM ? NARVAL_E_NOMEM : NARVAL_E_DEVICE;
        }
    }
#else
    (void)cluster_on_gpu;
    snprintf(why, sizeof why, "built without CUDA");
#endif
    if (want == TRACKER_GPU) {
        snprintf(msg, len, "Device gpu is configured but %s", why);
        return NARVAL_E_DEVICE;
    }
    snprintf(msg, len, "CPU, %d OpenMP threads (%s)", omp_get_max_threads(),
             want == TRACKER_CPU ? "Device cpu is configured" : why);
    return 0;
}

unsigned tracker_engine_create(tracker_engine **out, const tr_model *m, tracker_device want,
                               bool cluster_on_gpu, char *msg, size_t len)
{
    *out = NULL;
    tracker_engine *e = calloc(1, sizeof *e);
    if (!e || !(e->cpu = tracker_cpu_create(omp_get_max_threads()))) {
        free(e);
        snprintf(msg, len, "no memory for the tracking engine");
        return NARVAL_E_NOMEM;
    }
    e->model = m;
    unsigned code = choose_device(e, want, cluster_on_gpu, msg, len);
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
#ifdef NARWHAL_HAVE_CUDA
    tr_gpu_destroy(e->gpu);
    free(e->cands);
#endif
    tracker_cpu_destroy(e->cpu);
    free(e->gammas);
    free(e->info);
    free(e);
}

bool tracker_engine_on_gpu(const tracker_engine *e)
{
#ifdef NARWHAL_HAVE_CUDA
    return e->gpu != NULL;
#else
    (void)e;
    return false;
#endif
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
#ifdef NARWHAL_HAVE_CUDA
        tr_cand *c = realloc(e->cands, points * sizeof *c);
        if (!c)
            return false;
        e->cands = c;
#endif
        e->cap_points = points;
    }
    return true;
}

unsigned tracker_engine_run(tracker_engine *e, const tr_batch *b, tr_out *out, char *msg, size_t len)
{
    size_t points = b->first[b->n_events];
    if (!reserve(e, b->n_events ? b->n_events : 1, points ? points : 1)) {
        snprintf(msg, len, "no memory for the results of %u events", b->n_events);
        return NARVAL_E_NOMEM;
    }
    out->gammas = e->gammas;
    out->info = e->info;
#ifdef NARWHAL_HAVE_CUDA
    if (e->gpu) {
        if (!e->cluster_on_gpu)
            tracker_cpu_cluster(e->cpu, e->model, b, e->cands, e->info);
        int rc = tr_gpu_track(e->gpu, b, e->cluster_on_gpu ? NULL : e->cands,
                              e->cluster_on_gpu ? NULL : e->info, out, NULL, msg, len);
        return rc == TR_GPU_OK ? 0 : rc == TR_GPU_NOMEM ? NARVAL_E_NOMEM : NARVAL_E_DEVICE;
    }
#endif
    tracker_cpu_track(e->cpu, e->model, b, out, true);
    return 0;
}

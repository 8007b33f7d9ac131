/* tracker_backend_cuda.c: the tracking engine's CUDA backend: the model resident on the device, batches tracked there (kernels/tracker.cu), clustered there or on the CPU; compiled only with CUDA. */
#include <stdio.h>
#include <stdlib.h>

#include "tracker_backend.h"
#include "tracker_gpu.h"

typedef struct cuda_state {
    tr_gpu *gpu;
    bool cluster_on_gpu;
    tr_cand *cands; /* CPU-made candidates for the GPU */
    size_t cap_cands;
} cuda_state;

static void close_device(void *state)
{
    cuda_state *c = state;
    if (!c)
        return;
    tr_gpu_destroy(c->gpu);
    free(c->cands);
    free(c);
}

static int open_device(void **state, const tr_model *m, int device, bool cluster_on_gpu, char *msg, size_t len)
{
    cuda_state *c = calloc(1, sizeof *c);
    int rc = GPU_NOMEM;
    *state = NULL;
    if (!c) {
        snprintf(msg, len, "no host memory for the GPU state");
        return rc;
    }
    c->cluster_on_gpu = cluster_on_gpu;
    if ((rc = gpu_select(device, msg, len)) != GPU_OK || (rc = tr_gpu_create(&c->gpu, m, msg, len)) != GPU_OK) {
        close_device(c);
        return rc;
    }
    *state = c;
    return GPU_OK;
}

static int track(void *state, tracker_cpu *cpu, const tr_model *m, const tr_batch *b, tr_out *out, char *msg,
                 size_t len)
{
    cuda_state *c = state;
    if (c->cluster_on_gpu)
        return tr_gpu_track(c->gpu, b, NULL, NULL, out, NULL, msg, len);
    size_t points = b->first[b->n_events] ? b->first[b->n_events] : 1;
    if (points > c->cap_cands) {
        tr_cand *more = realloc(c->cands, points * sizeof *more);
        if (!more) {
            snprintf(msg, len, "no memory for the candidates of %zu points", points);
            return GPU_NOMEM;
        }
        c->cands = more;
        c->cap_cands = points;
    }
    tracker_cpu_cluster(cpu, m, b, c->cands, out->info);
    return tr_gpu_track(c->gpu, b, c->cands, out->info, out, NULL, msg, len);
}

const tracker_backend tracker_backend_cuda = {
    .name = "GPU", .probe = gpu_probe, .open = open_device, .close = close_device, .track = track,
};

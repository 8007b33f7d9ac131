/* histo_backend_cuda.c: the histogram engine's CUDA backend: counts resident on the device (kernels/histogram.cu), copied back when asked; compiled only with CUDA. */
#include <stdbool.h>
#include <stdlib.h>

#include "histo_backend.h"
#include "histogram_gpu.h"

typedef struct cuda_state {
    histo_gpu *gpu;
    bool downloaded; /* the host array equals the device's counts */
} cuda_state;

static int open_device(void **state, int device, uint64_t slots, char *msg, size_t len)
{
    cuda_state *c = calloc(1, sizeof *c);
    int rc = GPU_NOMEM;
    *state = NULL;
    if (!c) {
        snprintf(msg, len, "out of host memory for the GPU context");
        return rc;
    }
    if ((rc = gpu_select(device, msg, len)) != GPU_OK || (rc = histo_gpu_create(&c->gpu, slots, msg, len)) != GPU_OK) {
        free(c);
        return rc;
    }
    c->downloaded = true;
    *state = c;
    return GPU_OK;
}

static void close_device(void *state)
{
    cuda_state *c = state;
    if (c)
        histo_gpu_destroy(c->gpu);
    free(c);
}

static void plan(const void *state, const histo_group *g, char *out, size_t len)
{
    const cuda_state *c = state;
    histo_gpu_plan_text(c->gpu, g, out, len);
}

static int fill(void *state, const histo_group *groups, const histo_entries *e, size_t n, uint64_t *counts,
                char *msg, size_t len)
{
    cuda_state *c = state;
    c->downloaded = false;
    return histo_gpu_fill_host(c->gpu, groups, e, n, msg, len);
}

static int clear(void *state, char *msg, size_t len)
{
    cuda_state *c = state;
    c->downloaded = true;
    return histo_gpu_clear(c->gpu, msg, len);
}

static int counts(void *state, uint64_t *host, char *msg, size_t len)
{
    cuda_state *c = state;
    if (c->downloaded)
        return GPU_OK;
    int rc = histo_gpu_download(c->gpu, host, msg, len);
    c->downloaded = rc == GPU_OK;
    return rc;
}

const histo_backend histo_backend_cuda = {
    .name = "GPU", .probe = gpu_probe, .open = open_device, .close = close_device, .plan = plan, .fill = fill,
    .clear = clear, .counts = counts,
};

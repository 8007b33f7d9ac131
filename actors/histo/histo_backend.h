/* histo_backend.h: the private API between the histogram engine and its backends (Redis's ae_*.c): the host's (histo_backend_cpu.c) and CUDA's (histo_backend_cuda.c, compiled only with CUDA). */
#ifndef NARWHAL_HISTO_BACKEND_H
#define NARWHAL_HISTO_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "gpu_device.h"
#include "histogram_bin.h"

/* Where a set of groups is counted.  counts is the engine's host array of
 * every slot: the host counts into it, a GPU into its own copy on the device,
 * brought back by counts().  Calls return a gpu_status with a sentence in msg. */
typedef struct histo_backend {
    const char *name;    /* "GPU" or "CPU" */
    gpu_probe_fn *probe; /* NULL on the host */
    /* Counts for `slots` slots on device `device` (the host has none), zeroed. */
    int (*open)(void **state, int device, uint64_t slots, char *msg, size_t len);
    void (*close)(void *state);
    /* How group g is counted, for the log. */
    void (*plan)(const void *state, const histo_group *g, char *out, size_t len);
    int (*fill)(void *state, const histo_group *groups, const histo_entries *e, size_t n, uint64_t *counts,
                char *msg, size_t len);
    /* Zeroes the backend's counts (the engine zeroes the host array). */
    int (*clear)(void *state, char *msg, size_t len);
    /* Brings counts up to date with the backend's. */
    int (*counts)(void *state, uint64_t *counts, char *msg, size_t len);
} histo_backend;

extern const histo_backend histo_backend_cpu;

/* The one place that knows whether CUDA was built. */
#ifdef NARWHAL_HAVE_CUDA
extern const histo_backend histo_backend_cuda;
#define HISTO_BACKEND_GPU (&histo_backend_cuda)
#else
#define HISTO_BACKEND_GPU ((const histo_backend *)NULL)
#endif

#endif

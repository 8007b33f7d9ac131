/* tracker_backend.h: the private API between the tracking engine and its backends (Redis's ae_*.c): the host's (tracker_backend_cpu.c) and CUDA's (tracker_backend_cuda.c, compiled only with CUDA). */
#ifndef NARWHAL_TRACKER_BACKEND_H
#define NARWHAL_TRACKER_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "gpu_device.h"
#include "tracker_cpu.h"
#include "tracker_types.h"

/* Where a batch is tracked.  Calls return a gpu_status with a sentence in msg. */
typedef struct tracker_backend {
    const char *name;    /* "GPU" or "CPU" */
    gpu_probe_fn *probe; /* NULL on the host */
    /* The model (which outlives the backend) on device `device` (the host has
     * none); cluster_on_gpu: where a GPU clusters. */
    int (*open)(void **state, const tr_model *m, int device, bool cluster_on_gpu, char *msg, size_t len);
    void (*close)(void *state);
    /* Tracks b into out (room for b's events and points); cpu: the engine's
     * CPU tracker, which also clusters for a GPU that does not. */
    int (*track)(void *state, tracker_cpu *cpu, const tr_model *m, const tr_batch *b, tr_out *out, char *msg,
                 size_t len);
} tracker_backend;

extern const tracker_backend tracker_backend_cpu;

/* The one place that knows whether CUDA was built. */
#ifdef NARWHAL_HAVE_CUDA
extern const tracker_backend tracker_backend_cuda;
#define TRACKER_BACKEND_GPU (&tracker_backend_cuda)
#else
#define TRACKER_BACKEND_GPU ((const tracker_backend *)NULL)
#endif

#endif

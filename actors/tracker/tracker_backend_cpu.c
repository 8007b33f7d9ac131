/* tracker_backend_cpu.c: the tracking engine's host backend: the optimised CPU path (tracker_cpu.c). */
#include "tracker_backend.h"

static int open_host(void **state, const tr_model *m, int device, bool cluster_on_gpu, char *msg, size_t len)
{
    *state = NULL;
    return GPU_OK;
}

static void close_host(void *state) {}

static int track(void *state, tracker_cpu *cpu, const tr_model *m, const tr_batch *b, tr_out *out, char *msg,
                 size_t len)
{
    tracker_cpu_track(cpu, m, b, out, true);
    return GPU_OK;
}

const tracker_backend tracker_backend_cpu = { .name = "CPU", .open = open_host, .close = close_host, .track = track };

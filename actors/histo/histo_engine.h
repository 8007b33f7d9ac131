/* histo_engine.h: a set of histogram groups counted on the GPU or the CPU: staged entries, commit, counts. */
#ifndef NARWHAL_HISTO_ENGINE_H
#define NARWHAL_HISTO_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "histo_status.h"
#include "histogram_bin.h"

/*
 * Entries are staged per group while a block is decoded; histo_engine_commit
 * counts them all (one transfer and one launch per group on the GPU, OpenMP
 * on the CPU) and histo_engine_discard drops them (a block that failed half
 * way is not counted at all).  On the GPU the counts live on the device and
 * histo_engine_counts copies them back; on the CPU they are the host array.
 * Functions return HISTO_OK or a code with a sentence in msg.
 */
typedef enum histo_device { HISTO_DEVICE_AUTO, HISTO_DEVICE_CPU, HISTO_DEVICE_GPU } histo_device;

typedef struct histo_stage {
    uint32_t *inst;
    float *x, *y;
    size_t n, cap;
    size_t mark; /* n before the frame being decoded (histo_decode drops what a bad one staged) */
} histo_stage;

typedef struct histo_engine histo_engine;

/* Counts on CUDA device `gpu` (the GPU key) or the CPU, as gpu_choose
 * reads the Device and GPU keys.  On success msg says which path counts and
 * why ("GPU 0: NVIDIA H200, ..." or "CPU, 16 OpenMP threads (no usable GPU:
 * ...)").  HISTO_DEVICE_GPU without a usable device is HISTO_E_DEVICE, a
 * GPU number other than 0 that names no device HISTO_E_CONFIG. */
histo_status histo_engine_create(histo_engine **e, const histo_group *groups, size_t n,
                                 histo_device want, int gpu, char *msg, size_t len);
void histo_engine_destroy(histo_engine *e);
/* Whether it counts on the GPU (the actor's process_device). */
bool histo_engine_on_gpu(const histo_engine *e);
/* How group g is counted, for the log. */
void histo_engine_plan(const histo_engine *e, size_t g, char *out, size_t len);

histo_status histo_stage_grow(histo_stage *s);
void histo_stage_free(histo_stage *s);

static inline histo_status histo_engine_put(histo_stage *s, uint32_t inst, float x, float y)
{
    if (s->n == s->cap && histo_stage_grow(s))
        return HISTO_E_NOMEM;
    s->inst[s->n] = inst;
    s->x[s->n] = x;
    s->y[s->n] = y;
    s->n++;
    return HISTO_OK;
}

/* Appends the entries of from[g] to group g's stage, for every group (the
 * stages a decoding thread filled, histo_block.h); from is left as it was. */
histo_status histo_engine_take(histo_engine *e, const histo_stage *from);
size_t histo_engine_staged(const histo_engine *e);
void histo_engine_discard(histo_engine *e);
histo_status histo_engine_commit(histo_engine *e, char *msg, size_t len);
histo_status histo_engine_clear(histo_engine *e, char *msg, size_t len);
/* Every slot's count (histogram_bin.h layout, groups at their offsets). */
histo_status histo_engine_counts(histo_engine *e, const uint64_t **counts, char *msg, size_t len);

#endif

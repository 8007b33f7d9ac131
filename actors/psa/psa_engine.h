/* psa_engine.h: runs batches of searches on the GPU when one is usable, else on the CPU (or on the naive reference), and falls back to the CPU when the GPU fails. */
#ifndef NARWHAL_PSA_ENGINE_H
#define NARWHAL_PSA_ENGINE_H

#include <pthread.h>
#include <stdbool.h>

#include "basis.h"
#include "psa_cpu.h"
#include "psa_search.h"
#include "psa_status.h"

typedef enum psa_device { PSA_DEVICE_AUTO, PSA_DEVICE_CPU, PSA_DEVICE_GPU, PSA_DEVICE_REFERENCE } psa_device;

typedef struct psa_engine_params {
    psa_device device;
    int gpu;            /* CUDA device number */
    psa_mode mode;
    psa_data data;
    psa_simd simd;
    int threads;
    int gpu_prune;      /* GS_PRUNE_*: the GPU's full search pruned (GPUPrune; 0, off, where not set) */
    int gpu_guess;      /* GPUGuess on: a pruned search's first step bounded against its own guess (gs_gpu_set_guess) */
} psa_engine_params;

typedef struct psa_engine {
    const det_basis *basis;
    const psa_layout *layout;
    const gs_pow *pw;
    psa_engine_params p;
    psa_cpu cpu;
    const struct psa_backend *be;             /* where the searches run (psa_backend.h) */
    const struct psa_block_backend *block_be; /* whole blocks, with block */
    void *gpu;          /* gs_gpu, when the GPU searches */
    void *block;        /* pb_gpu, when whole blocks run on the GPU (psa_block_gpu_open) */
    unsigned long blocks; /* blocks run whole on the GPU (NARWHAL_PSA_GPU_FAULT counts them) */
    unsigned long fault_at; /* NARWHAL_PSA_GPU_FAULT, read once when whole blocks open on the GPU; 0: none */
    /* The parts of a block search from several threads (psa_parts.h): the
     * GPU's searches and the fall back one at a time, and a GPU given up
     * stays allocated (the other parts' blocks may still read its tables)
     * until psa_engine_settle. */
    pthread_mutex_t lock;
    bool gave_up;
} psa_engine;

/* Chooses where the searches run (gpu_choose: the Device and GPU keys).  On
 * success msg says which and why ("GPU 0: NVIDIA H100 ..., 58.2 MiB of float
 * basis resident" or "CPU, AVX-512, 16 threads (no usable GPU: ...)");
 * Device gpu without a usable GPU is PSA_E_DEVICE, a GPU number other
 * than 0 that names no device PSA_E_CONFIG. */
psa_status psa_engine_create(psa_engine *e, const det_basis *b, const psa_layout *l, const gs_pow *pw,
                           const psa_engine_params *p, char *msg, size_t len);
void psa_engine_destroy(psa_engine *e);

/* Frees the GPU that a failed search gave up (psa_engine_run), once no
 * other thread's block uses it: between blocks. */
void psa_engine_settle(psa_engine *e);

/* Answers every query of b; several threads may call it at once.  A GPU
 * failure is written into msg, the GPU is given up (psa_engine_settle frees
 * it) and the batch runs on the CPU (*fell_back set): same answers.
 * PSA_E_NOMEM when the CPU cannot get its working memory. */
psa_status psa_engine_run(psa_engine *e, psa_batch *b, bool *fell_back, char *msg, size_t len);

/* The GPU's share of the searches since it was chosen (gs_gpu_times). */
typedef gs_gpu_time psa_gpu_times;
/* Fills t and returns true when the searches run on the GPU. */
bool psa_engine_gpu_times(const psa_engine *e, psa_gpu_times *t);

/* "GPU", "CPU" or "reference": where the next batch runs. */
const char *psa_engine_where(const psa_engine *e);

#endif

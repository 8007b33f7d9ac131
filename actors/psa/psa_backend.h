/* psa_backend.h: the private API between the PSA's engine and block code and their backends (Redis's ae_*.c): the host's searches (psa_backend_cpu.c), CUDA's searches (psa_backend_cuda.c) and whole blocks (psa_block_cuda.c), the CUDA files compiled only with CUDA. */
#ifndef NARWHAL_PSA_BACKEND_H
#define NARWHAL_PSA_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "gpu_device.h"
#include "psa_block.h"

/* Where the searches run.  A GPU backend has every entry; a host backend only name and search. */
typedef struct psa_backend {
    const char *name; /* "CPU", "reference" or "GPU": psa_engine_where's answer */
    /* Answers every query of b.  0; else a host backend ran out of memory,
     * a GPU backend failed (msg says why: the engine falls back to the CPU). */
    int (*search)(psa_engine *e, psa_batch *b, char *msg, size_t len);
    gpu_probe_fn *probe;
    /* Puts the layout on device e->p.gpu (e->gpu): a gpu_status with msg saying how much is resident, or why not. */
    int (*open)(psa_engine *e, char *msg, size_t len);
    /* Frees e->block and e->gpu. */
    void (*close)(psa_engine *e);
    void (*times)(const psa_engine *e, psa_gpu_times *t);
} psa_backend;

/* Whole blocks on the GPU (GPUWork block), beside a GPU backend's searches;
 * psa_block.c's steps of the same names, psa_block_gpu_open's documentation. */
typedef struct psa_block_backend {
    bool (*open)(const psa_setup *s, char *msg, size_t len); /* e->block */
    void (*close)(psa_engine *e);
    bool (*times)(const psa_block *const *w, size_t n, const psa_setup *s, char *text, size_t len);
    /* Pinned host memory for a block's copy (its uploads then run asynchronously), or NULL. */
    void *(*host_alloc)(size_t bytes);
    void (*host_free)(void *p);
    /* Whether a block at p is pinned already (its uploads may read it where it lies): gpu_host_pinned. */
    bool (*pinned)(const void *p, size_t bytes);
    /* Another device workspace beside e->block's (its own stream and
     * buffers, e->block's resident tables), or NULL with msg; free_fork's. */
    void *(*fork)(const psa_setup *s, char *msg, size_t len);
    void (*free_fork)(void *p);
    /* The whole block, which the host gave in pinned memory, queued for the
     * device before psa_block_begin lists it (w->gpu_rc, w->gpu_msg). */
    void (*send)(psa_block *w, const psa_setup *s);
    /* Room on the device for the block psa_block_begin listed (unless w->gpu_rc
     * holds a failure already): 0, or -1 without host memory. */
    int (*begin)(psa_block *w, const psa_setup *s);
    /* Events [from, to), just decoded, sent to the device: a gpu_status. */
    int (*part)(psa_block *w, const psa_setup *s, size_t from, size_t to);
    /* psa_block_search's rounds on the device, the same answers: 0, or a
     * gpu_status with msg when the GPU failed. */
    int (*run)(psa_block *w, const psa_setup *s, char *msg, size_t len);
} psa_block_backend;

extern const psa_backend psa_backend_cpu, psa_backend_reference;

/* The one place that knows whether CUDA was built. */
#ifdef NARWHAL_HAVE_CUDA
extern const psa_backend psa_backend_cuda;
extern const psa_block_backend psa_block_cuda;
#define PSA_BACKEND_GPU (&psa_backend_cuda)
#define PSA_BLOCK_GPU (&psa_block_cuda)
#else
#define PSA_BACKEND_GPU ((const psa_backend *)NULL)
#define PSA_BLOCK_GPU ((const psa_block_backend *)NULL)
#endif

#endif

/* psa_engine.c: the choice between the GPU, the CPU and the reference (each a backend, psa_backend.h), and the fall back to the CPU. */
#include "psa_engine.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psa_backend.h"

/* A gpu_status as the library's: PSA_E_NOMEM for an allocation, PSA_E_DEVICE for any other failure. */
static psa_status gpu_code(int status)
{
    return status == GPU_OK ? PSA_OK : status == GPU_NOMEM ? PSA_E_NOMEM : PSA_E_DEVICE;
}

/* The GPU when asked or when usable (the Device and GPU keys, gpu_choose);
 * on the CPU, why not.  PSA_OK, or the code of a refused initialise
 * (gpu_choose refusing: a GPU key naming no device of this host is
 * PSA_E_CONFIG, Device gpu without a usable GPU PSA_E_DEVICE), msg saying
 * it in both cases. */
static psa_status choose_gpu(psa_engine *e, char *why, size_t why_len, char *msg, size_t len)
{
    const psa_backend *gpu = PSA_BACKEND_GPU;
    const bool required = e->p.device == PSA_DEVICE_GPU;
    char desc[256], up[640]; /* up: the open message, pruning and guess included */
    gpu_choice c = gpu_choose(gpu ? gpu->probe : NULL, required, e->p.gpu, desc, sizeof desc);
    if (c == GPU_CHOICE_CPU) {
        snprintf(why, why_len, "%s", desc);
        return PSA_OK;
    }
    if (c != GPU_CHOICE_GPU) {
        snprintf(msg, len, "%s", desc);
        return c == GPU_CHOICE_NUMBER ? PSA_E_CONFIG : PSA_E_DEVICE;
    }
    int rc = gpu->open(e, up, sizeof up);
    if (rc == GPU_OK) {
        e->be = gpu;
        snprintf(msg, len, "GPU %d: %s; %s", e->p.gpu, desc, up);
        return 0;
    }
    if (required) {
        snprintf(msg, len, "Device gpu is configured but %s", up);
        return gpu_code(rc);
    }
    snprintf(why, why_len, "%s", up);
    return 0;
}

/* Picks the GPU when asked or when usable; msg tells the choice. */
static psa_status choose(psa_engine *e, char *msg, size_t len)
{
    char why[640] = "";
    if (e->p.device == PSA_DEVICE_AUTO || e->p.device == PSA_DEVICE_GPU) {
        psa_status code = choose_gpu(e, why, sizeof why, msg, len);
        if (code || e->gpu)
            return code;
    }
    int threads = e->p.threads > 0 ? e->p.threads : omp_get_max_threads();
    if (e->p.device == PSA_DEVICE_REFERENCE) {
        e->be = &psa_backend_reference;
        snprintf(msg, len, "the naive reference (full search, libm powf, one thread; Device reference "
                 "is configured)");
    } else {
        e->be = &psa_backend_cpu;
        snprintf(msg, len, "CPU, %s, %d OpenMP threads (%s)", psa_simd_name(e->cpu.simd), threads,
                 e->p.device == PSA_DEVICE_CPU ? "Device cpu is configured" : why);
    }
    return 0;
}

psa_status psa_engine_create(psa_engine *e, const det_basis *b, const psa_layout *l, const gs_pow *pw,
                           const psa_engine_params *p, char *msg, size_t len)
{
    *e = (psa_engine){ .basis = b, .layout = l, .pw = pw, .p = *p };
    pthread_mutex_init(&e->lock, NULL);
    psa_cpu_init(&e->cpu, l, pw, p->data, p->simd, p->threads);
    return choose(e, msg, len);
}

/* Frees the GPU's searches and blocks, when they were set up. */
static void close_gpu(psa_engine *e)
{
    const psa_backend *gpu = PSA_BACKEND_GPU;
    if (e->gpu && gpu)
        gpu->close(e);
}

void psa_engine_destroy(psa_engine *e)
{
    close_gpu(e);
    if (e->layout)
        pthread_mutex_destroy(&e->lock);
    psa_cpu_free(&e->cpu);
    e->block = NULL;
    e->gpu = NULL;
}

bool psa_engine_gpu_times(const psa_engine *e, psa_gpu_times *t)
{
    *t = (psa_gpu_times){ 0 };
    if (!e->gpu)
        return false;
    e->be->times(e, t);
    return true;
}

const char *psa_engine_where(const psa_engine *e)
{
    return e->be->name;
}

void psa_engine_settle(psa_engine *e)
{
    if (e->gave_up)
        close_gpu(e);
    e->gave_up = false;
}

/* A search on the host: int16 takes the values quantised first (the GPU quantises them as it packs them). */
static psa_status host_search(psa_engine *e, const psa_backend *be, psa_batch *b)
{
    char why[384];
    if (e->p.data == PSA_I16 && psa_batch_quantise(b))
        return PSA_E_NOMEM;
    return be->search(e, b, why, sizeof why) ? PSA_E_NOMEM : PSA_OK;
}

psa_status psa_engine_run(psa_engine *e, psa_batch *b, bool *fell_back, char *msg, size_t len)
{
    *fell_back = false;
    if (b->n == 0)
        return 0;
    char why[384];
    pthread_mutex_lock(&e->lock);
    const psa_backend *be = e->be;
    if (be != PSA_BACKEND_GPU) { /* the host's searches take no lock: they share nothing */
        pthread_mutex_unlock(&e->lock);
        return host_search(e, be, b);
    }
    int rc = be->search(e, b, why, sizeof why);
    if (rc) {
        snprintf(msg, len, "the GPU failed (%s); the searches go on on the CPU (%s)", why,
                 psa_simd_name(e->cpu.simd));
        e->be = &psa_backend_cpu;
        e->gave_up = *fell_back = true;
    }
    pthread_mutex_unlock(&e->lock);
    return !rc ? PSA_OK : host_search(e, &psa_backend_cpu, b);
}

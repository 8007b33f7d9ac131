/* gpu_status.h: a CUDA error as a gs_gpu_status with its message, the CHECK that returns it, and a table uploaded once: shared by the PSA's GPU sources (CUDA C++ only). */
#ifndef NARWHAL_GPU_STATUS_H
#define NARWHAL_GPU_STATUS_H

#include <cuda_runtime.h>
#include <stdio.h>

#include "gridsearch_gpu.h"

/* "what: CUDA's message" into msg; GS_GPU_NOMEM for an allocation, GS_GPU_FAIL otherwise. */
static inline int gpu_fail(cudaError_t err, const char *what, char *msg, size_t len)
{
    snprintf(msg, len, "%s: %s", what, cudaGetErrorString(err));
    return err == cudaErrorMemoryAllocation ? GS_GPU_NOMEM : GS_GPU_FAIL;
}

/* Returns gpu_fail's status from the calling function (which has msg and len) when call fails. */
#define CHECK(call, what)                                                                          \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess)                                                                   \
            return gpu_fail(err_, what, msg, len);                                                 \
    } while (0)

/* bytes of src into a new device allocation at *dst (16 bytes when empty). */
static inline int gpu_upload(void **dst, const void *src, size_t bytes, const char *what, char *msg, size_t len)
{
    CHECK(cudaMalloc(dst, bytes ? bytes : 16), what);
    if (bytes)
        CHECK(cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice), what);
    return GS_GPU_OK;
}

#endif

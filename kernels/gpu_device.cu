/* gpu_device.cu: the GPU layer's CUDA side: device probe and selection, CUDA errors as gpu_status with file and line, one-time uploads, pinned host memory (on 2 MiB pages). */
#include <cuda_runtime.h>
#include <stdio.h>

#include "adf.h"
#include "gpu_device.h"

/* Why the runtime sees no device, in words a person without a GPU
 * understands: CUDA's own ("CUDA driver version is insufficient for CUDA
 * runtime version") says neither that there is no driver nor which one
 * would do. */
static void why_no_device(cudaError_t err, char *why, size_t len)
{
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    if (err == cudaSuccess || err == cudaErrorNoDevice)
        snprintf(why, len, "no CUDA device on this machine");
    else if (driver == 0)
        snprintf(why, len, "no NVIDIA driver on this machine");
    else if (err == cudaErrorInsufficientDriver)
        snprintf(why, len, "the NVIDIA driver runs CUDA %d.%d, this build needs %d.%d", driver / 1000,
                 driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
    else
        snprintf(why, len, "CUDA: %s", cudaGetErrorString(err));
}

extern "C" int gpu_probe(int device, int *present, char *msg, size_t len)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    *present = err == cudaSuccess ? count : 0;
    if (err != cudaSuccess || count == 0) {
        char why[160];
        why_no_device(err, why, sizeof why);
        gpu_none(msg, len, why);
        cudaGetLastError(); /* not sticky: a later call must not report it */
        return GPU_NODEV;
    }
    if (device < 0 || device >= count) {
        snprintf(msg, len, "no CUDA device %d (%d present)", device, count);
        return GPU_NODEV;
    }
    cudaDeviceProp p;
    if ((err = cudaGetDeviceProperties(&p, device)) != cudaSuccess) {
        snprintf(msg, len, "CUDA device %d: %s", device, cudaGetErrorString(err));
        cudaGetLastError();
        return GPU_NODEV;
    }
    snprintf(msg, len, "%s, %d SMs, compute %d.%d, %.1f GiB", p.name, p.multiProcessorCount, p.major,
             p.minor, p.totalGlobalMem / 1073741824.0);
    return GPU_OK;
}

extern "C" int gpu_select(int device, char *msg, size_t len)
{
    GPU_CHECK(cudaSetDevice(device), "selecting the CUDA device");
    return GPU_OK;
}

int gpu_error(cudaError_t err, const char *what, const char *file, int line, char *msg, size_t len)
{
    snprintf(msg, len, "%s: %s (%s:%d)", what, cudaGetErrorString(err), file, line);
    return err == cudaErrorMemoryAllocation ? GPU_NOMEM : GPU_FAIL;
}

int gpu_upload(void **dst, const void *src, size_t bytes, const char *what, char *msg, size_t len)
{
    GPU_CHECK(cudaMalloc(dst, bytes ? bytes : 16), what);
    if (bytes)
        GPU_CHECK(cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice), what);
    return GPU_OK;
}

/* adf_block_alloc's memory (2 MiB pages for a large block: the host's walks
 * over its keys) registered with CUDA, rather than cudaHostAlloc's. */
extern "C" void *gpu_host_alloc(size_t bytes)
{
    size_t size = bytes ? bytes : 16;
    void *p = adf_block_alloc(size);
    if (p && cudaHostRegister(p, size, cudaHostRegisterPortable) != cudaSuccess) {
        cudaGetLastError();
        adf_block_free(p);
        return nullptr;
    }
    return p;
}

extern "C" void gpu_host_free(void *p)
{
    if (!p)
        return;
    cudaHostUnregister(p);
    adf_block_free(p);
}

/* Whether the byte at p is page-locked host memory. */
static bool pinned_byte(const void *p)
{
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return a.type == cudaMemoryTypeHost;
}

extern "C" bool gpu_host_pinned(const void *p, size_t bytes)
{
    return p && bytes && pinned_byte(p) && pinned_byte((const char *)p + bytes - 1);
}

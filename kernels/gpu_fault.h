/* gpu_fault.h: the fault build's CUDA hook (make FAULT=1, nvcc -include): before each CUDA runtime call of kernels/, libfault.so (tests/fault/) may say it fails. */
#ifndef NARWHAL_GPU_FAULT_H
#define NARWHAL_GPU_FAULT_H

/*
 * Only the fault build includes this (the Makefile's FAULT=1 gives nvcc -include), so
 * a normal build's CUDA calls are untouched.  Each call below becomes "ask, then call":
 * the preloaded tests/fault/libfault.so counts the calls of the whole process and says
 * yes to the N-th (NARWHAL_FAULT=cuda:N), which then returns an error without running:
 * cudaErrorMemoryAllocation for an allocation, cudaErrorLaunchFailure for the others.
 * The library is looked up once per source file, at its first call; without it nothing
 * fails.  Releases (cudaFree, cudaFreeHost, cudaStreamDestroy, cudaEventDestroy) are
 * left alone: a failure there changes nothing a caller can act on.
 */
#include <cuda_runtime.h>
#include <dlfcn.h>

static inline bool gpu_fault(void)
{
    static bool (*ask)(void);
    static bool looked;
    if (!looked) {
        ask = (bool (*)(void))dlsym(RTLD_DEFAULT, "narwhal_fault_cuda");
        looked = true;
    }
    return ask && ask();
}

#define GPU_FAULT_ALLOC(call) (gpu_fault() ? cudaErrorMemoryAllocation : (call))
#define GPU_FAULT_CALL(call) (gpu_fault() ? cudaErrorLaunchFailure : (call))

#define cudaMalloc(...) GPU_FAULT_ALLOC(cudaMalloc(__VA_ARGS__))
#define cudaMallocHost(...) GPU_FAULT_ALLOC(cudaMallocHost(__VA_ARGS__))
#define cudaHostAlloc(...) GPU_FAULT_ALLOC(cudaHostAlloc(__VA_ARGS__))
#define cudaMemcpy(...) GPU_FAULT_CALL(cudaMemcpy(__VA_ARGS__))
#define cudaMemcpyAsync(...) GPU_FAULT_CALL(cudaMemcpyAsync(__VA_ARGS__))
#define cudaMemcpyToSymbol(...) GPU_FAULT_CALL(cudaMemcpyToSymbol(__VA_ARGS__))
#define cudaMemsetAsync(...) GPU_FAULT_CALL(cudaMemsetAsync(__VA_ARGS__))
#define cudaStreamCreateWithFlags(...) GPU_FAULT_CALL(cudaStreamCreateWithFlags(__VA_ARGS__))
#define cudaStreamSynchronize(...) GPU_FAULT_CALL(cudaStreamSynchronize(__VA_ARGS__))
#define cudaStreamWaitEvent(...) GPU_FAULT_CALL(cudaStreamWaitEvent(__VA_ARGS__))
#define cudaEventCreate(...) GPU_FAULT_CALL(cudaEventCreate(__VA_ARGS__))
#define cudaEventCreateWithFlags(...) GPU_FAULT_CALL(cudaEventCreateWithFlags(__VA_ARGS__))
#define cudaEventRecord(...) GPU_FAULT_CALL(cudaEventRecord(__VA_ARGS__))
#define cudaEventSynchronize(...) GPU_FAULT_CALL(cudaEventSynchronize(__VA_ARGS__))
#define cudaEventElapsedTime(...) GPU_FAULT_CALL(cudaEventElapsedTime(__VA_ARGS__))
#define cudaDeviceSynchronize(...) GPU_FAULT_CALL(cudaDeviceSynchronize(__VA_ARGS__))
#define cudaGetLastError(...) GPU_FAULT_CALL(cudaGetLastError(__VA_ARGS__))
#define cudaSetDevice(...) GPU_FAULT_CALL(cudaSetDevice(__VA_ARGS__))
#define cudaGetDevice(...) GPU_FAULT_CALL(cudaGetDevice(__VA_ARGS__))
#define cudaGetDeviceCount(...) GPU_FAULT_CALL(cudaGetDeviceCount(__VA_ARGS__))
#define cudaGetDeviceProperties(...) GPU_FAULT_CALL(cudaGetDeviceProperties(__VA_ARGS__))
#define cudaDeviceGetAttribute(...) GPU_FAULT_CALL(cudaDeviceGetAttribute(__VA_ARGS__))
#define cudaFuncSetAttribute(...) GPU_FAULT_CALL(cudaFuncSetAttribute(__VA_ARGS__))
#define cudaOccupancyMaxActiveBlocksPerMultiprocessor(...) \
    GPU_FAULT_CALL(cudaOccupancyMaxActiveBlocksPerMultiprocessor(__VA_ARGS__))

#endif

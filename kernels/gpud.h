/* gpud.h: GPUd() marks a function that both nvcc (device and host) and gcc compile, so CPU and GPU share one source; GPUshared(), GPUthread(), GPUthreads() and GPUbarrier() let a whole kernel body compile for the CPU; GPU_LAYOUT asserts a layout both compilers share. */
#ifndef NARWHAL_GPUD_H
#define NARWHAL_GPUD_H

/* The CPU path is the reference the GPU path is checked against bit for bit
 * (ALICE O2's convention): arithmetic written once, in a GPUd() function of a
 * kernels/ header, cannot drift between the two. */
#ifdef __CUDACC__
#define GPUd() __device__ __host__
#else
#define GPUd()
#endif

/* A kernel body written once (ALICE O2's GPUCommonDefAPI.h): on the device
 * the threads of a block share the work (GPUthread() of GPUthreads(), block
 * shared memory, barriers); on the host the body runs as one thread, its
 * shared memory an automatic array and a barrier nothing.  Work split as
 * `for (v = GPUthread(); v < n; v += GPUthreads())` is then the plain loop. */
#ifdef __CUDA_ARCH__
#define GPUshared() __shared__
#define GPUthread() ((unsigned)threadIdx.x)
#define GPUthreads() ((unsigned)blockDim.x)
#define GPUbarrier() __syncthreads()
#else
#define GPUshared()
#define GPUthread() 0u
#define GPUthreads() 1u
#define GPUbarrier() ((void)0)
#endif

/* A struct that gcc's objects and nvcc's exchange must have one layout in
 * both (libuv's STATIC_ASSERT): the headers that define such structs assert
 * their sizes and offsets, and every C and CUDA source that includes them
 * checks the same numbers at compile time. */
#include <stddef.h>
#ifdef __cplusplus
#define GPU_LAYOUT(expr) static_assert(expr, #expr)
#else
#define GPU_LAYOUT(expr) _Static_assert(expr, #expr)
#endif

#endif

/* gpud.h: GPUd() marks a function that both nvcc (device and host) and gcc compile, so CPU and GPU share one source; GPU_LAYOUT asserts a layout both compilers share. */
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

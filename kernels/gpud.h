/* gpud.h: GPUd() marks a function that both nvcc (device and host) and gcc compile, so CPU and GPU share one source. */
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

#endif

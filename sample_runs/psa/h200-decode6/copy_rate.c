/* copy_rate.c: what the PSA's host prefix costs on a machine, apart from the actor (issue 20, session 6): a 16 MB block of 7,580-byte data:crystal frames copied frame by frame into pinned memory on T OpenMP threads (psa_block.c's decode_range), into plain memory, or only its decoded bytes read; pinned memory's first touch; the upload from pinned and from plain memory.
 *   cc -O2 -fopenmp -I$CUDA/include copy_rate.c -L$CUDA/lib64 -lcudart_static -ldl -lrt -lpthread -lstdc++ -o copy_rate
 *   ./copy_rate [BLOCKS]    (each row: BLOCKS blocks, each written just before by 4 threads as the reader writes it) */
#include <cuda_runtime_api.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { BLOCK = 16000000, FRAME = 7580, RING = 8, SAMPLES = 100, CHANNELS = 37, HEAD = 20 + 12 + 4 * CHANNELS };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* The reader's write of block b (not timed): 4 threads, as its preads. */
static void write_block(uint8_t *src, int b)
{
#pragma omp parallel for num_threads(4) schedule(static)
    for (long i = 0; i < BLOCK; i += 4096)
        memset(src + i, (b + i / 4096) & 0xff, BLOCK - i < 4096 ? BLOCK - i : 4096);
}

/* mode 0: copy frame by frame to dst; 1: read what decoding reads (header, energies, two channels). */
static double run(uint8_t **ring, uint8_t *dst, int threads, int mode, int blocks, volatile long *sink)
{
    const long frames = BLOCK / FRAME;
    double spent = 0;
    for (int b = 0; b < blocks; b++) {
        uint8_t *src = ring[b % RING];
        write_block(src, b);
        double t = now();
        long acc = 0;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 16) reduction(+ : acc)
        for (long k = 0; k < frames; k++) {
            const uint8_t *f = src + k * FRAME;
            if (mode == 0) {
                memcpy(dst + k * FRAME, f, FRAME);
                f = dst + k * FRAME;
            }
            for (int i = 0; i < HEAD; i += 64)
                acc += f[i];
            for (int ch = 0; ch < 2; ch++)
                for (int s = 0; s < SAMPLES; s++)
                    acc += ((const int16_t *)(f + HEAD))[(ch ? 36 : 5) * SAMPLES + s];
        }
        spent += now() - t;
        *sink += acc;
    }
    return spent / blocks;
}

static void row(const char *what, int threads, double s)
{
    printf("%-48s threads %2d: %7.3f ms a block, %6.1f GB/s\n", what, threads, s * 1e3, BLOCK / s / 1e9);
}

int main(int argc, char **argv)
{
    int blocks = argc > 1 ? atoi(argv[1]) : 64, counts[] = { 1, 4, 8, 12, 16 };
    volatile long sink = 0;
    uint8_t *ring[RING], *pinned, *plain = malloc(BLOCK), *dev;
    for (int i = 0; i < RING; i++)
        ring[i] = malloc(BLOCK);
    memset(plain, 1, BLOCK);
    double t = now();
    if (cudaHostAlloc((void **)&pinned, BLOCK, cudaHostAllocPortable) != cudaSuccess || cudaMalloc((void **)&dev, BLOCK)) {
        printf("no CUDA device: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    printf("CUDA context and a 16 MB cudaHostAlloc: %.1f ms; %d CPU threads\n", (now() - t) * 1e3, omp_get_max_threads());
    for (int i = 0; i < 3; i++) {
        uint8_t *fresh;
        t = now();
        cudaHostAlloc((void **)&fresh, BLOCK, cudaHostAllocPortable);
        double alloc = now() - t;
        t = now();
        memset(fresh, 2, BLOCK);
        double touch = now() - t;
        t = now();
        memset(fresh, 3, BLOCK);
        printf("another 16 MB cudaHostAlloc %.2f ms, its first memset %.2f ms, the second %.2f ms\n", alloc * 1e3,
               touch * 1e3, (now() - t) * 1e3);
        cudaFreeHost(fresh);
    }
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        int n = counts[i];
        row("copy frame by frame into pinned memory + decode", n, run(ring, pinned, n, 0, blocks, &sink));
        row("copy frame by frame into plain memory + decode", n, run(ring, plain, n, 0, blocks, &sink));
        row("decode's reads only, from the block", n, run(ring, NULL, n, 1, blocks, &sink));
    }
    for (int from_pinned = 1; from_pinned >= 0; from_pinned--) {
        cudaMemcpy(dev, from_pinned ? pinned : ring[0], BLOCK, cudaMemcpyHostToDevice);
        t = now();
        for (int b = 0; b < 16; b++)
            cudaMemcpy(dev, from_pinned ? pinned : ring[b % RING], BLOCK, cudaMemcpyHostToDevice);
        double s = (now() - t) / 16;
        row(from_pinned ? "upload from pinned memory" : "upload from plain memory", 0, s);
    }
    return sink == 42;
}

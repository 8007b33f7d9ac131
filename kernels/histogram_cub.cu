/* histogram_cub.cu: NVIDIA CUB's DeviceHistogram::HistogramEven behind a C interface, for bench-histo. */
#include <climits>
#include <cstdio>
#include <cstdlib>

#include <cub/device/device_histogram.cuh>

#include "histogram_cub.h"

struct histo_cub {
    void *temp;
    size_t cap;
};

static int report(cudaError_t err, const char *what, char *msg, size_t len)
{
    snprintf(msg, len, "CUB %s: %s", what, cudaGetErrorString(err));
    return -1;
}

/* Grows the temporary storage to `bytes`, waiting for calls that use it. */
static int reserve(histo_cub *c, size_t bytes, char *msg, size_t len)
{
    if (bytes <= c->cap)
        return 0;
    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess)
        return report(err, "before growing its storage", msg, len);
    cudaFree(c->temp);
    c->temp = nullptr;
    c->cap = 0;
    if ((err = cudaMalloc(&c->temp, bytes)) != cudaSuccess)
        return report(err, "temporary storage", msg, len);
    c->cap = bytes;
    return 0;
}

extern "C" int histo_cub_create(histo_cub **c, char *msg, size_t len)
{
    *c = (histo_cub *)calloc(1, sizeof **c);
    if (!*c)
        snprintf(msg, len, "out of host memory");
    return *c ? 0 : -1;
}

extern "C" void histo_cub_destroy(histo_cub *c)
{
    if (!c)
        return;
    cudaFree(c->temp);
    free(c);
}

extern "C" int histo_cub_u8(histo_cub *c, const uint8_t *d_samples, size_t n, unsigned *d_hist,
                            char *msg, size_t len)
{
    size_t bytes = 0;
    cudaError_t err = cub::DeviceHistogram::HistogramEven(nullptr, bytes, d_samples, d_hist, 257, 0,
                                                          256, (long long)n);
    if (err != cudaSuccess)
        return report(err, "sizing the 8-bit histogram", msg, len);
    if (reserve(c, bytes, msg, len))
        return -1;
    err = cub::DeviceHistogram::HistogramEven(c->temp, bytes, d_samples, d_hist, 257, 0, 256,
                                              (long long)n);
    return err == cudaSuccess ? 0 : report(err, "8-bit histogram", msg, len);
}

extern "C" int histo_cub_f32_each(histo_cub *c, const float *d_samples, const size_t *start,
                                  size_t k, uint32_t bins, float lo, float hi, unsigned *d_hist,
                                  char *msg, size_t len)
{
    /* CUB's storage grows with the sample count: size it for the largest call. */
    size_t most = 0, largest = 0, bytes = 0;
    for (size_t i = 0; i < k; i++)
        if (start[i + 1] - start[i] > start[largest + 1] - start[largest])
            largest = i;
    cudaError_t err = cub::DeviceHistogram::HistogramEven(
        nullptr, most, d_samples, d_hist, (int)bins + 1, lo, hi,
        (long long)(k ? start[largest + 1] - start[largest] : 0));
    if (err != cudaSuccess)
        return report(err, "sizing a histogram", msg, len);
    if (reserve(c, most, msg, len))
        return -1;
    for (size_t i = 0; i < k; i++) {
        bytes = c->cap;
        err = cub::DeviceHistogram::HistogramEven(
            c->temp, bytes, d_samples + start[i], d_hist + i * bins, (int)bins + 1, lo, hi,
            (long long)(start[i + 1] - start[i]));
        if (err != cudaSuccess)
            return report(err, "histogram", msg, len);
    }
    return 0;
}

extern "C" size_t histo_cub_combined_temp(size_t n, uint64_t bins)
{
    size_t bytes = 0;
    if (bins >= INT_MAX)
        return 0;
    cudaError_t err = cub::DeviceHistogram::HistogramEven(nullptr, bytes, (const int *)nullptr,
                                                          (unsigned *)nullptr, (int)bins + 1, 0,
                                                          (int)bins, (long long)n);
    return err == cudaSuccess ? bytes : 0;
}

extern "C" int histo_cub_combined(histo_cub *c, const int *d_samples, size_t n, uint64_t bins,
                                  unsigned *d_hist, char *msg, size_t len)
{
    size_t bytes = histo_cub_combined_temp(n, bins);
    if (bytes == 0) {
        snprintf(msg, len, "CUB refuses %llu bins in one call", (unsigned long long)bins);
        return -1;
    }
    if (reserve(c, bytes, msg, len))
        return -1;
    cudaError_t err = cub::DeviceHistogram::HistogramEven(c->temp, bytes, d_samples, d_hist,
                                                          (int)bins + 1, 0, (int)bins,
                                                          (long long)n);
    return err == cudaSuccess ? 0 : report(err, "combined-index histogram", msg, len);
}

extern "C" int histo_cub_sync(char *msg, size_t len)
{
    cudaError_t err = cudaDeviceSynchronize();
    return err == cudaSuccess ? 0 : report(err, "work", msg, len);
}

/* histogram_cub.h: NVIDIA CUB's DeviceHistogram::HistogramEven behind a C interface, the reference bench-histo measures against. */
#ifndef NARWHAL_HISTOGRAM_CUB_H
#define NARWHAL_HISTOGRAM_CUB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Holds CUB's temporary storage between calls.  Every call returns 0 or -1
 * with a sentence in msg.  Pointers named d_* are device memory.  CUB
 * overwrites its output counters (it does not accumulate). */
typedef struct histo_cub histo_cub;

int histo_cub_create(histo_cub **c, char *msg, size_t len);
void histo_cub_destroy(histo_cub *c);

/* 256 bins of 8-bit samples: d_hist[v] = number of samples equal to v. */
int histo_cub_u8(histo_cub *c, const uint8_t *d_samples, size_t n, unsigned *d_hist, char *msg,
                 size_t len);

/* k independent histograms, one call each: samples [start[i], start[i+1]) of
 * d_samples go into d_hist + i * bins, `bins` even bins over [lo, hi). */
int histo_cub_f32_each(histo_cub *c, const float *d_samples, const size_t *start, size_t k,
                       uint32_t bins, float lo, float hi, unsigned *d_hist, char *msg,
                       size_t len);

/* The temporary storage CUB asks for to count n integer samples into `bins`
 * bins in one call (a combined channel-and-bin index); 0 when it refuses. */
size_t histo_cub_combined_temp(size_t n, uint64_t bins);

/* That call: d_hist[k] = number of samples equal to k, for k < bins. */
int histo_cub_combined(histo_cub *c, const int *d_samples, size_t n, uint64_t bins,
                       unsigned *d_hist, char *msg, size_t len);

/* Waits for the device. */
int histo_cub_sync(char *msg, size_t len);

#ifdef __cplusplus
}
#endif
#endif

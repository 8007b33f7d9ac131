/* tool.h: what the benchmarks and studies share: a monotonic clock in seconds and the ascending order of doubles for qsort. */
#ifndef NARWHAL_TOOL_H
#define NARWHAL_TOOL_H

#include <time.h>

/* Seconds on CLOCK_MONOTONIC: only differences mean something (wall-clock jumps do not move it). */
static inline double tool_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* qsort's comparison for doubles in ascending order (no NaN among them). */
static inline int tool_by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif

/* threads.c: how many threads an actor's host-side work takes (kit_host_threads). */
#define _GNU_SOURCE
#include <sched.h>

#include "kit.h"

int kit_host_threads(int64_t configured)
{
    if (configured > 0)
        return (int)configured;
    cpu_set_t set;
    int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 2;
    int half = cpus / 2;
    return half < 1 ? 1 : half > 8 ? 8 : half;
}

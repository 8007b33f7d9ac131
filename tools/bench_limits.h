/* bench_limits.h: the machine's two limits that every benchmark figure is judged against (bytes over a memory's bandwidth, operations over an arithmetic rate), taken from the GPU's attributes and measured on the CPU, and the energy a run used where the machine lets us read it. */
#ifndef NARWHAL_BENCH_LIMITS_H
#define NARWHAL_BENCH_LIMITS_H

#include <stdbool.h>

/*
 * An operation is one FP32 lane-instruction: a fused multiply-add counts
 * one, as in the CUDA Programming Guide's throughput table ("results per
 * clock cycle per multiprocessor"), so a kernel's operation count is the
 * FP32 instructions of its inner loop times the lanes that run them.
 *
 * GPU, from the device (cudaDeviceGetAttribute):
 *   bandwidth  = 2 (double data rate) x memory clock x bus width / 8
 *   operations = SMs x FP32 lanes per SM x SM clock
 * FP32 lanes per SM are not an attribute; bl_fp32_lanes gives them by
 * compute capability from the Programming Guide's table (128 for sm_90).
 * Measured beside them: a device-to-device copy and a pinned host-to-device
 * copy.  CPU, measured: a copy on all threads and on one (memcpy), and
 * fused multiply-adds on all threads at the widest vector width the CPU
 * has; the formula threads x lanes x clock is printed beside it.
 * Copies count bytes read plus bytes written, like the GPU's peak.
 */
typedef struct bl_gpu {
    bool present;
    char name[256];
    int sms, major, minor, lanes_per_sm, bus_bits;
    double clock_hz, mem_clock_hz;
    double peak_bw;  /* bytes/s, from the attributes */
    double peak_ops; /* FP32 lane-instructions/s, from the attributes */
    double copy_bw;  /* measured device-to-device copy, bytes read + written per second */
    double h2d_bw;   /* measured pinned host-to-device copy, bytes per second */
} bl_gpu;

typedef struct bl_cpu {
    int threads, lanes;  /* OpenMP threads; FP32 lanes of the widest vector FMA measured */
    const char *vector;  /* "AVX-512", "AVX2", "scalar" */
    double clock_hz;     /* /proc/cpuinfo's current clock of CPU 0, 0 when not given */
    double copy_bw;      /* measured, all threads, bytes read + written per second */
    double copy1_bw;     /* the same on one thread */
    double fma_ops;      /* measured FP32 lane-FMAs per second, all threads */
} bl_cpu;

typedef struct bl_machine {
    bl_gpu gpu;
    bl_cpu cpu;
} bl_machine;

/* Fills m: the CPU's figures measured (about 0.5 s), the GPU's for CUDA
 * device `device` when one is usable (gpu.present), else gpu.present false. */
void bl_measure(bl_machine *m, int device);

/* FP32 lanes per SM of compute capability major.minor; 0 when unknown. */
int bl_fp32_lanes(int major, int minor);

/* The machine's limits, one line each, prefixed "PROGRAM: limits: ". */
void bl_print_machine(const char *program, const bl_machine *m);

/* The limits of one device for a figure: its bandwidth and operation rate
 * and the words that say where they come from. */
typedef struct bl_device {
    const char *name; /* "GPU", "CPU" */
    double bw, ops;
    const char *bw_how, *ops_how;
} bl_device;

bl_device bl_gpu_device(const bl_machine *m);
/* The CPU's limits on `threads` threads: all of them (0 or more than the
 * machine's: the measured figures), or one (the one-thread copy, the FMA
 * rate shared out). */
bl_device bl_cpu_device(const bl_machine *m, int threads);

/*
 * One figure against its two limits:
 *   "PROGRAM: ratio: WHAT: RATE UNIT/s; bytes B per item over BW -> L1/s;
 *    operations O per item over OPS -> L2/s; F of the bytes|operations limit"
 * bytes or ops of 0 mean not counted (that limit is left out, and said so).
 * Returns the fraction of the binding (smaller) limit, or 0 when neither is counted.
 */
double bl_ratio(const char *program, const char *what, double rate, const char *unit, double bytes,
                double ops, const bl_device *d);

/* Energy counters: the GPU's since its driver loaded (NVML, device `device`)
 * and the CPU packages' (RAPL in /sys/class/powercap), in joules, each only
 * when this machine lets a process read it. */
typedef struct bl_energy {
    double t, gpu_j, cpu_j;
    bool gpu, cpu;
} bl_energy;

bl_energy bl_energy_now(int device);

/* Mean watts between two readings, or -1 where a counter is not readable. */
void bl_power(const bl_energy *a, const bl_energy *b, double *gpu_w, double *cpu_w);

/* "312 W" or "not measured (why)" for a power from bl_power. */
const char *bl_watts_text(double w, const char *why, char *buf, unsigned len);

/* Why a GPU's or the CPU's power is not measured (bl_watts_text's why). */
#define BL_NO_NVML "no NVML energy counter"
#define BL_NO_RAPL "no readable RAPL counter in /sys/class/powercap"


#endif

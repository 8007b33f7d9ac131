/* bench_limits.c: the machine's bandwidths and arithmetic rates (the GPU's from its attributes plus measured copies, the CPU's measured), each figure's ratio to them, and the energy counters (NVML, RAPL). */
#include <dirent.h>
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_limits.h"
#include "tool.h"
#ifdef NARWHAL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* ---- the CPU */

enum { ACCUMULATORS = 12 }; /* independent FMA chains: latency 4 x 2 pipes and some spare */

#if defined(__x86_64__)
__attribute__((target("avx512f"))) static float fma_avx512(long iters)
{
    __m512 acc[ACCUMULATORS], mul = _mm512_set1_ps(0.999999f), add = _mm512_set1_ps(1e-7f);
    for (int k = 0; k < ACCUMULATORS; k++)
        acc[k] = _mm512_set1_ps((float)k);
    for (long i = 0; i < iters; i++)
#pragma GCC unroll 12 /* the chains in registers, not in memory */
        for (int k = 0; k < ACCUMULATORS; k++)
            acc[k] = _mm512_fmadd_ps(acc[k], mul, add);
    float s = 0;
    for (int k = 0; k < ACCUMULATORS; k++)
        s += _mm512_reduce_add_ps(acc[k]);
    return s;
}

__attribute__((target("avx2,fma"))) static float fma_avx2(long iters)
{
    __m256 acc[ACCUMULATORS], mul = _mm256_set1_ps(0.999999f), add = _mm256_set1_ps(1e-7f);
    for (int k = 0; k < ACCUMULATORS; k++)
        acc[k] = _mm256_set1_ps((float)k);
    for (long i = 0; i < iters; i++)
#pragma GCC unroll 12
        for (int k = 0; k < ACCUMULATORS; k++)
            acc[k] = _mm256_fmadd_ps(acc[k], mul, add);
    float lanes[8], s = 0;
    for (int k = 0; k < ACCUMULATORS; k++) {
        _mm256_storeu_ps(lanes, acc[k]);
        for (int l = 0; l < 8; l++)
            s += lanes[l];
    }
    return s;
}
#endif

static float fma_scalar(long iters)
{
    float acc[ACCUMULATORS], s = 0;
    for (int k = 0; k < ACCUMULATORS; k++)
        acc[k] = (float)k;
    for (long i = 0; i < iters; i++)
#pragma GCC unroll 12
        for (int k = 0; k < ACCUMULATORS; k++)
            acc[k] = __builtin_fmaf(acc[k], 0.999999f, 1e-7f);
    for (int k = 0; k < ACCUMULATORS; k++)
        s += acc[k];
    return s;
}

typedef float fma_fn(long iters);

static fma_fn *widest_fma(bl_cpu *c)
{
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        c->lanes = 16, c->vector = "AVX-512";
        return fma_avx512;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        c->lanes = 8, c->vector = "AVX2";
        return fma_avx2;
    }
#endif
    c->lanes = 1, c->vector = "scalar";
    return fma_scalar;
}

/* Lane-FMAs per second on all threads: each thread runs the chains for the
 * same count, the slowest thread's time counts (what a parallel loop gets). */
static double measure_fma(bl_cpu *c)
{
    fma_fn *fn = widest_fma(c);
    long iters = 1 << 16;
    double seconds = 0;
    volatile float sink = 0;
    while (seconds < 0.05 && iters < (1L << 30)) {
        iters *= 4;
        double t0 = tool_seconds();
#pragma omp parallel
        {
            float s = fn(iters);
#pragma omp atomic
            sink += s;
        }
        seconds = tool_seconds() - t0;
    }
    (void)sink;
    return (double)iters * ACCUMULATORS * c->lanes * c->threads / seconds;
}

/* Bytes read + written per second by memcpy of `bytes` split over `threads`
 * (the best of 5: the machine's capability, not its neighbours' load). */
static double measure_copy(char *src, char *dst, size_t bytes, int threads)
{
    double best = 0;
    for (int r = 0; r < 6; r++) {
        double t0 = tool_seconds();
#pragma omp parallel num_threads(threads)
        {
            int n = omp_get_num_threads(), k = omp_get_thread_num();
            size_t part = bytes / (size_t)n, at = part * (size_t)k;
            memcpy(dst + at, src + at, k == n - 1 ? bytes - at : part);
        }
        double bw = 2.0 * (double)bytes / (tool_seconds() - t0);
        if (r > 0 && bw > best) /* the first run touches the pages */
            best = bw;
    }
    return best;
}

static double cpu_clock_hz(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    double mhz = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "cpu MHz : %lf", &mhz) == 1)
            break;
    if (f)
        fclose(f);
    return mhz * 1e6;
}

static void measure_cpu(bl_cpu *c)
{
    const size_t bytes = (size_t)256 << 20;
    c->threads = omp_get_max_threads();
    c->clock_hz = cpu_clock_hz();
    char *src = malloc(bytes), *dst = malloc(bytes);
    if (src && dst) {
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < bytes; i += 4096) {
            src[i] = (char)i;
            dst[i] = 0;
        }
        c->copy_bw = measure_copy(src, dst, bytes, c->threads);
        c->copy1_bw = measure_copy(src, dst, bytes, 1);
    }
    free(src);
    free(dst);
    c->fma_ops = measure_fma(c);
}

/* ---- the GPU */

int bl_fp32_lanes(int major, int minor)
{
    /* CUDA C++ Programming Guide, "Arithmetic Instructions", 32-bit floating-point
     * add, multiply, multiply-add: results per clock cycle per multiprocessor. */
    switch (major) {
    case 5: return 128;
    case 6: return minor == 0 ? 64 : 128;
    case 7: return 64;
    case 8: return minor == 0 ? 64 : 128;
    case 9: return 128;
    case 10: case 12: return 128;
    default: return 0;
    }
}

#ifdef NARWHAL_HAVE_CUDA
/* Median seconds of 5 copies (after one warm-up) of `bytes` from src to dst. */
static double time_copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    double t[5];
    for (int r = -1; r < 5; r++) {
        cudaDeviceSynchronize();
        double t0 = tool_seconds();
        if (cudaMemcpy(dst, src, bytes, kind) != cudaSuccess)
            return 0;
        cudaDeviceSynchronize();
        if (r >= 0)
            t[r] = tool_seconds() - t0;
    }
    qsort(t, 5, sizeof *t, tool_by_double);
    return t[2];
}

static void measure_gpu(bl_gpu *g, int device)
{
    struct cudaDeviceProp p;
    int clock_khz = 0, mem_khz = 0;
    if (cudaSetDevice(device) != cudaSuccess || cudaGetDeviceProperties(&p, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&g->bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    g->present = true;
    snprintf(g->name, sizeof g->name, "%s", p.name);
    g->sms = p.multiProcessorCount, g->major = p.major, g->minor = p.minor;
    g->lanes_per_sm = bl_fp32_lanes(p.major, p.minor);
    g->clock_hz = 1e3 * clock_khz, g->mem_clock_hz = 1e3 * mem_khz;
    g->peak_bw = 2.0 * g->mem_clock_hz * g->bus_bits / 8;
    g->peak_ops = (double)g->sms * g->lanes_per_sm * g->clock_hz;
    const size_t big = (size_t)1 << 30, pinned = (size_t)256 << 20;
    void *a = NULL, *b = NULL, *h = NULL;
    if (cudaMalloc(&a, big) == cudaSuccess && cudaMalloc(&b, big) == cudaSuccess &&
        cudaMemset(a, 1, big) == cudaSuccess) {
        double s = time_copy(b, a, big, cudaMemcpyDeviceToDevice);
        g->copy_bw = s > 0 ? 2.0 * big / s : 0;
        if (cudaMallocHost(&h, pinned) == cudaSuccess) {
            memset(h, 1, pinned);
            s = time_copy(a, h, pinned, cudaMemcpyHostToDevice);
            g->h2d_bw = s > 0 ? pinned / s : 0;
        }
    }
    cudaFreeHost(h);
    cudaFree(a);
    cudaFree(b);
    cudaGetLastError();
}
#endif

void bl_measure(bl_machine *m, int device)
{
    memset(m, 0, sizeof *m);
    measure_cpu(&m->cpu);
#ifdef NARWHAL_HAVE_CUDA
    int count = 0;
    if (cudaGetDeviceCount(&count) == cudaSuccess && device >= 0 && device < count)
        measure_gpu(&m->gpu, device);
    cudaGetLastError();
#else
    (void)device;
#endif
}

void bl_print_machine(const char *program, const bl_machine *m)
{
    const bl_cpu *c = &m->cpu;
    const bl_gpu *g = &m->gpu;
    printf("%s: limits: CPU: %d threads; copy %.1f GB/s on all, %.1f on one (memcpy, bytes read + written, "
           "measured); %.3g FP32 lane-FMAs/s measured (%s, %d lanes)", program, c->threads, c->copy_bw / 1e9,
           c->copy1_bw / 1e9, c->fma_ops, c->vector, c->lanes);
    if (c->clock_hz > 0)
        printf("; threads x lanes x clock = %d x %d x %.2f GHz = %.3g (x FMA pipes per core)", c->threads,
               c->lanes, c->clock_hz / 1e9, c->threads * c->lanes * c->clock_hz);
    printf("\n");
    if (!g->present) {
        printf("%s: limits: GPU: none usable\n", program);
        return;
    }
    printf("%s: limits: GPU: %s, sm_%d%d: memory 2 x %.0f MHz x %d bits / 8 = %.0f GB/s; FP32 %d SMs x %d "
           "lanes x %.0f MHz = %.3g lane-instructions/s (lanes per SM from the CUDA Programming Guide's "
           "table for compute %d.%d)\n", program, g->name, g->major, g->minor, g->mem_clock_hz / 1e6,
           g->bus_bits, g->peak_bw / 1e9, g->sms, g->lanes_per_sm, g->clock_hz / 1e6, g->peak_ops, g->major,
           g->minor);
    printf("%s: limits: GPU measured: device-to-device copy %.0f GB/s (bytes read + written; %.2f of the "
           "memory's peak), pinned host-to-device %.1f GB/s\n", program, g->copy_bw / 1e9,
           g->peak_bw > 0 ? g->copy_bw / g->peak_bw : 0, g->h2d_bw / 1e9);
}

bl_device bl_gpu_device(const bl_machine *m)
{
    return (bl_device){ "GPU", m->gpu.peak_bw, m->gpu.peak_ops, "the GPU's memory peak",
                        "its FP32 lane peak" };
}

bl_device bl_cpu_device(const bl_machine *m, int threads)
{
    const bl_cpu *c = &m->cpu;
    if (threads == 1 && c->threads > 1)
        return (bl_device){ "CPU", c->copy1_bw, c->fma_ops / c->threads, "one thread's measured copy",
                            "one thread's share of the measured FMA rate" };
    return (bl_device){ "CPU", c->copy_bw, c->fma_ops, "the CPU's measured copy", "its measured FMA rate" };
}

double bl_ratio(const char *program, const char *what, double rate, const char *unit, double bytes,
                double ops, const bl_device *d)
{
    double by_bytes = bytes > 0 && d->bw > 0 ? d->bw / bytes : 0;
    double by_ops = ops > 0 && d->ops > 0 ? d->ops / ops : 0;
    printf("%s: ratio: %s: %.4g %s/s; ", program, what, rate, unit);
    if (by_bytes > 0)
        printf("bytes %.4g per %s over %s (%.4g GB/s) -> %.4g/s; ", bytes, unit, d->bw_how, d->bw / 1e9, by_bytes);
    else
        printf("bytes not counted; ");
    if (by_ops > 0)
        printf("operations %.4g per %s over %s (%.4g/s) -> %.4g/s; ", ops, unit, d->ops_how, d->ops, by_ops);
    else
        printf("operations not counted; ");
    double limit = by_bytes > 0 && (by_ops <= 0 || by_bytes < by_ops) ? by_bytes : by_ops;
    if (limit <= 0) {
        printf("no limit\n");
        return 0;
    }
    printf("%.3g of the %s limit\n", rate / limit, limit == by_bytes ? "bytes" : "operations");
    return rate / limit;
}

/* ---- energy */

/* NVML, opened at run time: a build machine without the driver still builds and runs.
 * One device per process: the first one asked for (every bench measures one). */
typedef int nvml_init_fn(void);
typedef int nvml_by_bus_fn(const char *bus, void **dev);
typedef int nvml_by_index_fn(unsigned index, void **dev);
typedef int nvml_energy_fn(void *dev, unsigned long long *mj);

static void *nvml_device(int device, nvml_energy_fn **energy)
{
    static void *lib, *dev;
    static nvml_energy_fn *fn;
    static bool tried;
    if (!tried) {
        tried = true;
        lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        nvml_init_fn *init = lib ? (nvml_init_fn *)dlsym(lib, "nvmlInit_v2") : NULL;
        nvml_by_bus_fn *by_bus = lib ? (nvml_by_bus_fn *)dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2") : NULL;
        nvml_by_index_fn *by_index = lib ? (nvml_by_index_fn *)dlsym(lib, "nvmlDeviceGetHandleByIndex_v2") : NULL;
        fn = lib ? (nvml_energy_fn *)dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption") : NULL;
        if (init && fn && init() == 0) {
#ifdef NARWHAL_HAVE_CUDA
            char bus[32]; /* NVML numbers devices in PCI order, CUDA by default fastest first */
            if (by_bus && cudaDeviceGetPCIBusId(bus, sizeof bus, device) == cudaSuccess && by_bus(bus, &dev) != 0)
                dev = NULL;
            cudaGetLastError();
#endif
            if (!dev && by_index && by_index((unsigned)device, &dev) != 0)
                dev = NULL;
        }
    }
    *energy = fn;
    return dev;
}

/* Joules of every CPU package RAPL exposes (intel-rapl:N, AMD's included), 0 packages when unreadable. */
static int rapl_joules(double *j, double *range_j)
{
    DIR *d = opendir("/sys/class/powercap");
    struct dirent *e;
    int packages = 0;
    *j = *range_j = 0;
    while (d && (e = readdir(d))) {
        unsigned a, b;
        char path[512], extra;
        if (sscanf(e->d_name, "intel-rapl:%u%c", &a, &extra) != 1 || sscanf(e->d_name, "intel-rapl:%u:%u", &a, &b) == 2)
            continue;
        unsigned long long uj = 0, range = 0;
        snprintf(path, sizeof path, "/sys/class/powercap/%s/energy_uj", e->d_name);
        FILE *f = fopen(path, "r");
        bool ok = f && fscanf(f, "%llu", &uj) == 1;
        if (f)
            fclose(f);
        snprintf(path, sizeof path, "/sys/class/powercap/%s/max_energy_range_uj", e->d_name);
        if ((f = fopen(path, "r"))) {
            if (fscanf(f, "%llu", &range) != 1)
                range = 0;
            fclose(f);
        }
        if (ok) {
            *j += uj * 1e-6;
            *range_j += range * 1e-6;
            packages++;
        }
    }
    if (d)
        closedir(d);
    return packages;
}

static double rapl_range_j;

bl_energy bl_energy_now(int device)
{
    bl_energy e = { .t = tool_seconds() };
    nvml_energy_fn *fn;
    void *dev = nvml_device(device, &fn);
    unsigned long long mj;
    if (dev && fn(dev, &mj) == 0)
        e.gpu = true, e.gpu_j = mj * 1e-3;
    e.cpu = rapl_joules(&e.cpu_j, &rapl_range_j) > 0;
    return e;
}

void bl_power(const bl_energy *a, const bl_energy *b, double *gpu_w, double *cpu_w)
{
    double dt = b->t - a->t, cpu_j = b->cpu_j - a->cpu_j;
    if (cpu_j < 0) /* a counter wrapped */
        cpu_j += rapl_range_j;
    *gpu_w = a->gpu && b->gpu && dt > 0 ? (b->gpu_j - a->gpu_j) / dt : -1;
    *cpu_w = a->cpu && b->cpu && dt > 0 ? cpu_j / dt : -1;
}

const char *bl_watts_text(double w, const char *why, char *buf, unsigned len)
{
    if (w >= 0)
        snprintf(buf, len, "%.0f W", w);
    else
        snprintf(buf, len, "not measured (%s)", why);
    return buf;
}

/* bench_machine.c: bench-machine: the machine's limits that the other benchmarks' ratios use (make bench prints them first), as text or as shell assignments for scripts, and the mean power of the GPU and the CPU packages while a command runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_limits.h"

/*
 *   bench-machine [--gpu DEV]            the limits, one line each (bench_limits.h says how each is had)
 *   bench-machine --shell [--gpu DEV]    the same as NAME=VALUE lines (bytes/s, operations/s, Hz)
 *   bench-machine --energy [--gpu DEV] -- COMMAND ARGS...
 *                                        runs COMMAND; then its seconds and the mean watts of the GPU
 *                                        (NVML) and of the CPU packages (RAPL) over it, or why not
 */

static void print_shell(const bl_machine *m)
{
    const bl_cpu *c = &m->cpu;
    const bl_gpu *g = &m->gpu;
    printf("CPU_THREADS=%d\nCPU_COPY_BPS=%.6g\nCPU_COPY1_BPS=%.6g\nCPU_FMA_OPS=%.6g\nCPU_LANES=%d\n", c->threads,
           c->copy_bw, c->copy1_bw, c->fma_ops, c->lanes);
    printf("GPU_PRESENT=%d\n", g->present);
    if (g->present)
        printf("GPU_NAME='%s'\nGPU_SMS=%d\nGPU_LANES_PER_SM=%d\nGPU_CLOCK_HZ=%.6g\nGPU_PEAK_BPS=%.6g\n"
               "GPU_PEAK_OPS=%.6g\nGPU_COPY_BPS=%.6g\nGPU_H2D_BPS=%.6g\n", g->name, g->sms, g->lanes_per_sm,
               g->clock_hz, g->peak_bw, g->peak_ops, g->copy_bw, g->h2d_bw);
}

/* Runs argv, returns its exit status; the energy counters read around it. */
static int energy(int device, char **argv)
{
    bl_energy a = bl_energy_now(device);
    pid_t pid = fork();
    if (pid == 0) {
        execvp(argv[0], argv);
        perror("bench-machine: exec");
        _exit(127);
    }
    int status = 1;
    if (pid < 0 || waitpid(pid, &status, 0) < 0) {
        perror("bench-machine");
        return 1;
    }
    bl_energy b = bl_energy_now(device);
    double gw, cw;
    char gt[96], ct[96];
    bl_power(&a, &b, &gw, &cw);
    fprintf(stderr, "bench-machine: energy: %.3f s; GPU %d %s; CPU packages %s\n", b.t - a.t, device,
            bl_watts_text(gw, BL_NO_NVML, gt, sizeof gt),
            bl_watts_text(cw, BL_NO_RAPL, ct, sizeof ct));
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
    int device = 0, shell = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--shell"))
            shell = 1;
        else if (!strcmp(argv[i], "--gpu") && i + 1 < argc)
            device = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--energy") && i + 2 < argc && !strcmp(argv[i + 1], "--"))
            return energy(device, argv + i + 2);
        else {
            fprintf(stderr, "usage: bench-machine [--shell] [--gpu DEV]\n"
                            "       bench-machine [--gpu DEV] --energy -- COMMAND [ARGS...]\n");
            return 2;
        }
    }
    bl_machine m;
    bl_measure(&m, device);
    if (shell)
        print_shell(&m);
    else
        bl_print_machine("bench-machine", &m);
    return 0;
}

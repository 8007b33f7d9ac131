/* bench_mpi_link.c: bench-mpi-link: the throughput of narwhal's link protocol between two MPI ranks (a synchronous header, then the block; a window of blocks in flight) against memcpy's. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_limits.h"

/*
 * What emulator/mpi_comm.c does on a link, without the rings and threads
 * around it: rank 0 sends each block as a synchronous header (MPI_Issend,
 * 80 bytes) followed by its bytes (MPI_Isend), at most WINDOW blocks not yet
 * complete; rank 1 receives a header, then the block into its buffer, one
 * block at a time.  GB/s is bytes over the receiver's time.  Beside it, a
 * memcpy of the same blocks on one core: what a copy between two threads of
 * one process costs.  Started without mpirun, it starts itself under
 * `mpirun -np 2`.  Each row's ratio line judges the link against the
 * host's one-thread copy (bench_limits.h): every byte is read and written
 * at least once on its way from one rank's buffer to the other's.
 *
 *   bench-mpi-link [--mib TOTAL] [--window N]
 */

enum { HEADER = 80, TAG = 16 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Not started by mpirun: run again under it, two ranks on this host. */
static void start_under_mpirun(int argc, char **argv)
{
    char **args = calloc((size_t)argc + 8, sizeof *args);
    int n = 0;
    if (!args)
        exit(1);
    args[n++] = "mpirun";
    args[n++] = "--oversubscribe";
    if (geteuid() == 0)
        args[n++] = "--allow-run-as-root";
    args[n++] = "-np";
    args[n++] = "2";
    for (int i = 0; i < argc; i++)
        args[n++] = argv[i];
    execvp("mpirun", args);
    perror("bench-mpi-link: mpirun");
    exit(1);
}

static double memcpy_gbs(size_t block, size_t total)
{
    uint8_t *a = malloc(block), *b = malloc(block);
    if (!a || !b)
        exit(1);
    memset(a, 1, block);
    memset(b, 2, block);
    double t0 = now();
    for (size_t done = 0; done < total; done += block)
        memcpy(done / block % 2 ? a : b, done / block % 2 ? b : a, block);
    double gbs = (double)total / (now() - t0) / 1e9;
    free(a);
    free(b);
    return gbs;
}

static void send_blocks(size_t block, size_t count, int window)
{
    uint8_t *data = malloc(block * (size_t)window), header[HEADER] = {0};
    MPI_Request *req = calloc(2 * (size_t)window, sizeof *req);
    if (!data || !req)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(data, 7, block * (size_t)window);
    for (int i = 0; i < 2 * window; i++)
        req[i] = MPI_REQUEST_NULL;
    for (size_t i = 0; i < count; i++) {
        int slot = (int)(i % (size_t)window);
        MPI_Waitall(2, &req[2 * slot], MPI_STATUSES_IGNORE);
        MPI_Issend(header, HEADER, MPI_BYTE, 1, TAG, MPI_COMM_WORLD, &req[2 * slot]);
        MPI_Isend(data + (size_t)slot * block, (int)block, MPI_BYTE, 1, TAG, MPI_COMM_WORLD, &req[2 * slot + 1]);
    }
    MPI_Waitall(2 * window, req, MPI_STATUSES_IGNORE);
    free(data);
    free(req);
}

static double receive_blocks(size_t block, size_t count)
{
    uint8_t *data = malloc(block), header[HEADER];
    if (!data)
        MPI_Abort(MPI_COMM_WORLD, 1);
    double t0 = 0;
    for (size_t i = 0; i < count; i++) {
        MPI_Recv(header, HEADER, MPI_BYTE, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (i == 0)
            t0 = now();
        MPI_Recv(data, (int)block, MPI_BYTE, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    double seconds = now() - t0;
    free(data);
    return seconds;
}

int main(int argc, char **argv)
{
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMIX_RANK"))
        start_under_mpirun(argc, argv);
    size_t total = (size_t)1 << 30;
    int window = 4;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--mib") == 0)
            total = (size_t)strtoul(argv[i + 1], NULL, 10) << 20;
        else if (strcmp(argv[i], "--window") == 0)
            window = atoi(argv[i + 1]);
    }
    if (total == 0 || window < 1) {
        fprintf(stderr, "usage: bench-mpi-link [--mib TOTAL] [--window N]\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "bench-mpi-link: two ranks, not %d\n", size);
        MPI_Finalize();
        return 2;
    }
    char host[MPI_MAX_PROCESSOR_NAME];
    int len;
    MPI_Get_processor_name(host, &len);
    bl_machine mach;
    bl_device copy1;
    if (rank == 0) {
        bl_measure(&mach, -1);
        bl_print_machine("bench-mpi-link", &mach);
        copy1 = bl_cpu_device(&mach, 1);
    }
    if (rank == 0)
        printf("bench-mpi-link: 2 ranks on %s, %zu MiB per size, %d blocks in flight\n"
               "%10s  %12s  %12s  %8s\n",
               host, total >> 20, window, "block", "link GB/s", "memcpy GB/s", "ratio");
    static const size_t blocks[] = {64u << 10, 1u << 20, 4u << 20, 16u << 20};
    double links[sizeof blocks / sizeof blocks[0]];
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
        size_t count = total / blocks[b] ? total / blocks[b] : 1;
        double copy = rank == 0 ? memcpy_gbs(blocks[b], count * blocks[b]) : 0;
        MPI_Barrier(MPI_COMM_WORLD);
        double seconds = 0;
        if (rank == 0)
            send_blocks(blocks[b], count, window);
        else
            seconds = receive_blocks(blocks[b], count);
        MPI_Bcast(&seconds, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
        double link = (double)(count * blocks[b]) / seconds / 1e9;
        links[b] = link;
        if (rank == 0)
            printf("%7zu KiB  %12.2f  %12.2f  %8.2f\n", blocks[b] >> 10, link, copy, link / copy);
    }
    for (size_t b = 0; rank == 0 && b < sizeof blocks / sizeof blocks[0]; b++) {
        char what[64];
        snprintf(what, sizeof what, "link, %zu KiB blocks", blocks[b] >> 10);
        bl_ratio("bench-mpi-link", what, links[b] * 1e9, "byte", 2, 0, &copy1);
    }
    MPI_Finalize();
    return 0;
}

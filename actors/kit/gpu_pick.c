/* gpu_pick.c: GPU auto: each GPU actor instance locks the lowest free slot of a node-wide registry of lock files and runs on device slot mod n (kit.h tells why a registry). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kit.h"

/* Slots one local rank may hold at once: far more GPU instances than a node runs. */
enum { SLOTS_PER_RANK = 4096 };

/* The registry's directory (kit.h), made if missing; 0, or -1 with msg. */
static int registry(char *dir, size_t cap, char *msg, size_t len)
{
    const char *own = getenv("NARWHAL_GPU_SLOTS"), *run = getenv("XDG_RUNTIME_DIR");
    int n = own && *own   ? snprintf(dir, cap, "%s", own)
            : run && *run ? snprintf(dir, cap, "%s/narwhal-gpu", run)
                          : snprintf(dir, cap, "/tmp/narwhal-gpu-%u", (unsigned)geteuid());
    if (n < 0 || (size_t)n >= cap) {
        snprintf(msg, len, "GPU auto: the slot directory's name is too long");
        return -1;
    }
    struct stat st;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(msg, len, "GPU auto: cannot make the slot directory %s: %s", dir, strerror(errno));
        return -1;
    }
    /* another user's directory (or a link) in /tmp would let them take our slots or point our files elsewhere */
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
        snprintf(msg, len, "GPU auto: %s is not a directory of this user that only this user may write "
                 "(NARWHAL_GPU_SLOTS names another)", dir);
        return -1;
    }
    return 0;
}

/* A launcher's node-local rank, as a non-negative number below `limit`; -1 when unset or not one. */
static int rank_variable(const char *name, long limit)
{
    const char *text = getenv(name);
    char *end;
    long v = text && *text ? strtol(text, &end, 10) : -1;
    return v >= 0 && v < limit && !*end ? (int)v : -1;
}

/* This process's rank among the ranks of its node (kit.h): 0 of 1 outside MPI. */
static void local_rank(int *rank, int *ranks)
{
    static const char *const vars[][2] = {
        { "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE" }, /* Open MPI */
        { "MPI_LOCALRANKID", "MPI_LOCALNRANKS" },                       /* MPICH's Hydra */
    };
    for (size_t i = 0; i < KIT_COUNT(vars); i++) {
        int size = rank_variable(vars[i][1], 1L << 20);
        int r = size > 0 ? rank_variable(vars[i][0], size) : -1;
        if (r >= 0) {
            *rank = r;
            *ranks = size;
            return;
        }
    }
    *rank = 0;
    *ranks = 1;
}

int kit_gpu_slot_take(kit_gpu_slot *s, char *msg, size_t len)
{
    char dir[PATH_MAX - 32], path[PATH_MAX];
    int rank, ranks;
    if (registry(dir, sizeof dir, msg, len) != 0)
        return -1;
    local_rank(&rank, &ranks);
    for (long k = 0; k < SLOTS_PER_RANK; k++) {
        int slot = (int)(rank + k * ranks);
        snprintf(path, sizeof path, "%s/slot-%d", dir, slot);
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) {
            snprintf(msg, len, "GPU auto: cannot open the slot file %s: %s", path, strerror(errno));
            return -1;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            *s = (kit_gpu_slot){ .held = true, .fd = fd, .slot = slot };
            return 0;
        }
        int err = errno;
        close(fd);
        if (err != EWOULDBLOCK) {
            snprintf(msg, len, "GPU auto: cannot lock the slot file %s: %s", path, strerror(err));
            return -1;
        }
    }
    snprintf(msg, len, "GPU auto: the %d slots of local rank %d in %s are all held", SLOTS_PER_RANK, rank, dir);
    return -1;
}

void kit_gpu_slot_release(kit_gpu_slot *s)
{
    if (s->held)
        close(s->fd); /* closing the only descriptor of the open file drops its flock */
    *s = (kit_gpu_slot){ .held = false };
}

unsigned kit_gpu_device(void *algo_data, int64_t configured, int devices, int *device)
{
    kit_instance *inst = kit_instance_of(algo_data);
    char msg[PATH_MAX + 128];
    if (!inst)
        return kit_fail(kit_name(algo_data), NARVAL_E_STATE, "kit_gpu_device called with a foreign instance");
    if (configured != KIT_GPU_AUTO || devices <= 1) {
        *device = configured == KIT_GPU_AUTO ? 0 : (int)configured;
        return 0;
    }
    if (!inst->gpu.held && kit_gpu_slot_take(&inst->gpu, msg, sizeof msg) != 0)
        return kit_fail(inst->name, NARVAL_E_IO, "%s (the key GPU with a number needs no slot)", msg);
    *device = inst->gpu.slot % devices;
    kit_log(inst->name, KIT_INFO, "GPU auto: node slot %d, device %d of the %d this process sees", inst->gpu.slot,
            *device, devices);
    return 0;
}

void kit_device(void *algo_data, char *text, unsigned len)
{
    const kit_instance *inst = kit_instance_of(algo_data);
    if (len)
        snprintf(text, len, "%s", inst ? inst->device : "");
}

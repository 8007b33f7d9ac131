/* common.h: what the fuzz targets share: the invariant check, a private directory (in memory where possible), the input as a file, a hash of it. */
#ifndef NARWHAL_FUZZ_COMMON_H
#define NARWHAL_FUZZ_COMMON_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define FZ_CHECK(cond)                                                                             \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz: invariant broken at %s:%d: %s\n", __FILE__, __LINE__, #cond);   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static char fz_dir[PATH_MAX];

static inline void fz_remove_dir(void)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fz_dir);
    if (fz_dir[0] && system(cmd) != 0)
        fprintf(stderr, "fuzz: could not remove %s\n", fz_dir);
}

/* A private directory, in memory when /dev/shm exists (a write per input), removed at exit. */
static inline void fz_make_dir(const char *name)
{
    snprintf(fz_dir, sizeof fz_dir, "/dev/shm/narwhal-fuzz-%s.XXXXXX", name);
    if (!mkdtemp(fz_dir)) {
        snprintf(fz_dir, sizeof fz_dir, "/tmp/narwhal-fuzz-%s.XXXXXX", name);
        FZ_CHECK(mkdtemp(fz_dir) != NULL);
    }
    atexit(fz_remove_dir);
}

/* What chooses, per input, among the ways a target runs it (output sizes, end of run, plots). */
static inline uint64_t fz_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* fz_dir/input.adf holding exactly the input; its path. */
static inline const char *fz_input_file(const uint8_t *data, size_t size)
{
    static char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/input.adf", fz_dir);
    FILE *fp = fopen(path, "wb");
    FZ_CHECK(fp != NULL);
    FZ_CHECK(fwrite(data, 1, size, fp) == size);
    FZ_CHECK(fclose(fp) == 0);
    return path;
}

#endif

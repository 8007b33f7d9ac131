/* origin.c: a bounded index of where the latest frames producers read came from, and its answers to actors. */
#include "origin.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adf.h"

#define ORIGIN_AHEAD 16

typedef struct entry {
    uint32_t id, event, crystal, file; /* file: index into files */
    uint64_t offset;
} entry;

static struct {
    pthread_mutex_t lock;
    entry *ring;  /* EMU_ORIGIN_FRAMES entries once the first frame comes */
    uint64_t added;
    char **files; /* every file name met, each once */
    uint32_t n_files;
} idx = { .lock = PTHREAD_MUTEX_INITIALIZER };

__attribute__((destructor)) static void free_index(void)
{
    free(idx.ring);
    for (uint32_t i = 0; i < idx.n_files; i++)
        free(idx.files[i]);
    free(idx.files);
}

/* The index of file in idx.files, added when new; UINT32_MAX when out of memory. */
static uint32_t file_index(const char *file)
{
    for (uint32_t i = idx.n_files; i-- > 0;)
        if (strcmp(idx.files[i], file) == 0)
            return i;
    char **files = realloc(idx.files, (idx.n_files + 1) * sizeof *files);
    if (!files)
        return UINT32_MAX;
    idx.files = files;
    if (!(files[idx.n_files] = strdup(file)))
        return UINT32_MAX;
    return idx.n_files++;
}

static uint32_t crystal_of(uint32_t id, const uint8_t *p, size_t payload)
{
    bool has = id == ADF_ID_NW_CRYSTAL || id == ADF_ID_DATA_PSA || id == ADF_ID_META_SYNC;
    return has && payload >= 2 ? adf_get_u16(p + ADF_KEY_SIZE) : NARWHAL_NO_CRYSTAL;
}

static void origin(void *ctx, const char *file, const void *frames, size_t size, const unsigned long long *offsets,
                   size_t n)
{
    const uint8_t *p = frames;
    (void)ctx;
    pthread_mutex_lock(&idx.lock);
    uint32_t f = file_index(file);
    if (!idx.ring)
        idx.ring = malloc(EMU_ORIGIN_FRAMES * sizeof *idx.ring);
    for (size_t i = 0, at = 0; idx.ring && f != UINT32_MAX && i < n && size - at >= ADF_KEY_SIZE; i++) {
        /* the frames lie as they lay in the file, unless the producer left some out: the key ORIGIN_AHEAD frames on
         * is fetched before it is needed (each key's place is known only from the one before) */
        if (i + ORIGIN_AHEAD < n && offsets[i + ORIGIN_AHEAD] - offsets[0] < size)
            __builtin_prefetch(p + (offsets[i + ORIGIN_AHEAD] - offsets[0]));
        uint32_t length = adf_get_u32(p + at), id = adf_get_u32(p + at + 4);
        if (length < ADF_KEY_SIZE || length > size - at)
            break; /* not whole frames: nothing more can be told */
        idx.ring[idx.added++ % EMU_ORIGIN_FRAMES] =
            (entry){ id, adf_get_u32(p + at + 8), crystal_of(id, p + at, length - ADF_KEY_SIZE), f, offsets[i] };
        at += length;
    }
    pthread_mutex_unlock(&idx.lock);
}

static int locate(void *ctx, unsigned id, unsigned event, unsigned crystal, char *out, size_t len)
{
    (void)ctx;
    int found = 0;
    pthread_mutex_lock(&idx.lock);
    uint64_t kept = idx.added < EMU_ORIGIN_FRAMES ? idx.added : EMU_ORIGIN_FRAMES;
    for (uint64_t k = 0; k < kept && !found; k++) {
        const entry *e = &idx.ring[(idx.added - 1 - k) % EMU_ORIGIN_FRAMES];
        if (e->event != event || (crystal != NARWHAL_NO_CRYSTAL && e->crystal != NARWHAL_NO_CRYSTAL &&
                                  e->crystal != crystal))
            continue;
        const char *name = adf_id_name(e->id);
        if (e->id == id)
            snprintf(out, len, "read from %s at byte %llu", idx.files[e->file], (unsigned long long)e->offset);
        else
            snprintf(out, len, "made from %s read from %s at byte %llu", name ? name : "a frame",
                     idx.files[e->file], (unsigned long long)e->offset);
        found = 1;
    }
    pthread_mutex_unlock(&idx.lock);
    return found;
}

const narwhal_host *emu_origin_host(void)
{
    static const narwhal_host host = { NULL, origin, locate };
    return &host;
}

/* psa_async.c: the two slots of GPUWork block's blocks in flight. */
#include "psa_async.h"

#include <stdlib.h>
#include <string.h>

#ifdef NARWHAL_HAVE_CUDA
#include "psa_block_gpu.h"
#endif

static void release_copy(psa_slot *sl)
{
#ifdef NARWHAL_HAVE_CUDA
    if (sl->pinned) {
        pb_host_free(sl->copy);
        sl->copy = NULL;
    }
#endif
    free(sl->copy);
    sl->copy = NULL;
    sl->cap = 0;
}

unsigned char *psa_async_room(psa_async *q, int i, unsigned size)
{
    psa_slot *sl = &q->slot[i];
    if (size > sl->cap) {
        release_copy(sl);
        size_t want = (size_t)size + size / 4;
#ifdef NARWHAL_HAVE_CUDA
        sl->copy = pb_host_alloc(want);
        sl->pinned = sl->copy != NULL;
#endif
        if (!sl->copy && !(sl->copy = malloc(want)))
            return NULL;
        sl->cap = want;
    }
    sl->size = size;
    return sl->copy;
}

void psa_async_close(psa_async *q)
{
    for (int i = 0; i < 2; i++) {
        release_copy(&q->slot[i]);
        psa_block_free(&q->slot[i].w);
    }
    memset(q, 0, sizeof *q);
}

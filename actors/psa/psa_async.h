/* psa_async.h: GPUWork block's two blocks in flight (block k on the GPU while process_block writes block k-1): their working memory and pinned copies of their input. */
#ifndef NARWHAL_PSA_ASYNC_H
#define NARWHAL_PSA_ASYNC_H

#include <stdbool.h>

#include "psa_block.h"

/* A block on its way: its working memory and a copy of its input (pinned
 * where possible: the upload then runs asynchronously), kept until its
 * frames are written.  Slot i's block runs on the GPU block's lane i. */
typedef struct psa_slot {
    psa_block w;
    unsigned char *copy;
    size_t cap;
    bool pinned;
    unsigned size;
} psa_slot;

typedef struct psa_async {
    psa_slot slot[2];
} psa_async;

/* Room for a copy of a block of `size` bytes in slot i, whose previous
 * block must be written or forgotten (psa_block_decode copies the block
 * there); NULL when no memory. */
unsigned char *psa_async_room(psa_async *q, int i, unsigned size);

/* Frees the slots (nothing of theirs may be in flight). */
void psa_async_close(psa_async *q);

#endif

/* psa_async.h: GPUWork block's blocks one behind: a worker thread runs block k's work on the GPU while the chain goes on, and process_block writes block k-1's frames. */
#ifndef NARWHAL_PSA_ASYNC_H
#define NARWHAL_PSA_ASYNC_H

#include <pthread.h>
#include <stdbool.h>

#include "psa_block.h"

/* A block on its way: its working memory and a copy of its input (pinned
 * where possible: the upload then runs asynchronously), kept until its
 * frames are written. */
typedef struct psa_slot {
    psa_block w;
    unsigned char *copy;
    size_t cap;
    bool pinned;
    unsigned size;
    unsigned code;   /* psa_block_search's, once the worker is done */
} psa_slot;

typedef struct psa_async {
    const psa_setup *s;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool started, quit;
    int job;         /* the slot handed to the worker, -1: none */
    bool done;       /* the worker finished it */
    psa_slot slot[2];
} psa_async;

/* Starts the worker.  0, or NARVAL_E_NOMEM when no thread can be made. */
unsigned psa_async_open(psa_async *q, const psa_setup *s);

/* Room for a copy of a block of `size` bytes in slot i, which must not be
 * in the worker's hands (psa_block_decode copies the block there); NULL
 * when no memory. */
unsigned char *psa_async_room(psa_async *q, int i, unsigned size);

/* Hands slot i (decoded by psa_block_decode from its copy) to the worker,
 * which runs psa_block_search on it.  One slot at a time: wait first. */
void psa_async_submit(psa_async *q, int i);

/* Waits until the worker finished the slot it was handed (none: returns at
 * once) and returns that slot's psa_block_search code. */
unsigned psa_async_wait(psa_async *q);

/* Waits, stops the worker and frees the slots. */
void psa_async_close(psa_async *q);

#endif

/* psa_async.h: GPUWork block inside one call: a block cut into parts, searched on the GPU in order by a worker thread while process_block decodes the next parts and writes the finished ones. */
#ifndef NARWHAL_PSA_ASYNC_H
#define NARWHAL_PSA_ASYNC_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "psa_block.h"

/* The most parts a block is cut into (BlockParts's maximum). */
enum { PSA_MAX_PARTS = 16 };

/* Every part of a block has its own working memory; the block's copy (pinned
 * where possible: the uploads then run asynchronously) holds all their
 * frames.  Nothing outlives the call that brought the block. */
typedef struct psa_async {
    const psa_setup *s;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool started, quit;
    unsigned char *copy;
    size_t cap;
    bool pinned;
    psa_block part[PSA_MAX_PARTS];
    size_t at[PSA_MAX_PARTS + 1];    /* part j is bytes at[j] .. at[j+1] of the block */
    unsigned code[PSA_MAX_PARTS];    /* psa_block_search's, per finished part */
    int n_parts;
    int submitted, done;             /* parts handed to the worker, parts it finished */
    bool cancel;                     /* the worker skips the parts not yet begun */
} psa_async;

/* Starts the worker.  0, or NARVAL_E_NOMEM when no thread can be made. */
unsigned psa_async_open(psa_async *q, const psa_setup *s);

/* Room for a copy of a block of `size` bytes, its parts at q->at[0..n_parts]
 * (set by the caller); the worker must be idle.  NULL when no memory. */
unsigned char *psa_async_begin(psa_async *q, unsigned size, int n_parts);

/* Hands the next part (decoded by psa_block_decode from its place in the
 * copy) to the worker, which runs psa_block_search on it. */
void psa_async_submit(psa_async *q);

/* Waits until part j is searched; its psa_block_search code. */
unsigned psa_async_wait(psa_async *q, int j);

/* The parts not yet begun are skipped; returns once the worker is idle. */
void psa_async_cancel(psa_async *q);

/* Cancels, stops the worker and frees the parts. */
void psa_async_close(psa_async *q);

#endif

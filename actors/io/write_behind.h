/* write_behind.h: the ADF writer's I/O thread: a block's bytes for each output, copied out of the host's buffer, written by a thread of their own while the host goes on (double buffered, order kept, the first error kept for the next call). */
#ifndef NARWHAL_WRITE_BEHIND_H
#define NARWHAL_WRITE_BEHIND_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "publish.h"

/*
 * A consumer's input buffer is the host's again when process_block returns,
 * so the writer copies what each output gets (a memcpy, several times faster
 * than write() into the page cache) into a stage, hands the stage to this
 * thread and returns; the kernel's copy then overlaps the other actors'
 * calls.  Two stages: the caller fills one while the thread writes the
 * other; wb_submit waits for the thread's previous job first, so at most one
 * block is in flight and the outputs see the blocks in order.  A write
 * error stops the writing: wb_submit and wb_stop return it (the
 * actor fails, the host aborts, the temporaries are discarded, as without
 * the thread).  Up to WB_OUTPUTS outputs per block.
 *
 *   run start:  wb_start(&wb, msg, len)
 *   a block:    uint8_t *s = wb_stage(&wb, bytes, msg, len);  fill s;
 *               wb_submit(&wb, outputs, sizes, n, msg, len)   (sizes: each output's bytes, in s one after another)
 *   run stop:   wb_stop(&wb, msg, len), then publish
 *   reset/unload: wb_stop too (its error only logged: the run is discarded)
 */
enum { WB_OUTPUTS = 2 };

typedef struct write_behind {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool running, busy, quit;
    uint8_t *stage[2];
    size_t cap[2];
    int fill; /* the stage the caller fills next */
    /* the job handed over: stage `job_stage`, outputs' sizes in order */
    int job_stage, n;
    kit_output *out[WB_OUTPUTS];
    size_t size[WB_OUTPUTS];
    unsigned code; /* the first write error, sticky until wb_stop */
    double writing, waited; /* this run's seconds: the thread's writes; wb_submit waiting for the job before */
    char msg[PATH_MAX + 256];
} write_behind;

/* Starts the thread (the stages stay from a previous run). */
unsigned wb_start(write_behind *w, char *msg, size_t len);

/* The stage to fill, with room for `bytes`; NULL with msg when out of memory. */
uint8_t *wb_stage(write_behind *w, size_t bytes, char *msg, size_t len);

/* Hands the stage just filled to the thread: n outputs, size[i] bytes for
 * out[i], back to back from the stage's start.  Returns a previous write's
 * error (nothing handed over then). */
unsigned wb_submit(write_behind *w, kit_output *const *out, const size_t *size, int n, char *msg, size_t len);

/* Waits for the job in flight, then ends the thread; the run's error, if any.  Nothing when not started. */
unsigned wb_stop(write_behind *w, char *msg, size_t len);

/* Frees the stages (after wb_stop). */
void wb_free(write_behind *w);

#endif

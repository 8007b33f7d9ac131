/* psa_parts.h: a block cut into parts at frame boundaries, each decoded and searched in a workspace of its own on a thread of its own, within the call that brought the block. */
#ifndef NARWHAL_PSA_PARTS_H
#define NARWHAL_PSA_PARTS_H

#include <pthread.h>
#include <stdbool.h>

#include "psa_block.h"

/*
 * Why: in one workspace a block's host work (decoding, each round's list of
 * searches) and its device work (copies, searches) follow each other, the
 * host idle while the device searches and the device idle while the host
 * decodes.  Cut into N parts, each with its own workspace, thread and (with
 * the whole block on the GPU) its own device stream and buffers beside the
 * engine's resident basis (psa_block_gpu_fork), one part's searches run
 * while the next part decodes.  The parts decode one at a time, in order,
 * each with all the host's threads (that work is bound by memory
 * bandwidth); they search at the same time.  Every part is a block of its
 * own (whole frames, its data:crystal frames and the frames between them),
 * so the parts' outputs one after the other are the whole block's output.
 */
typedef struct psa_part {
    psa_block w;           /* its workspace, kept from block to block */
    size_t at, size;       /* its bytes in the last block: [at, at + size) */
    size_t pieces;         /* the pieces it was decoded in (none without data:crystal frames) */
    psa_status st;
    struct psa_parts *parts;
    int k;                 /* its index */
    pthread_t thread;      /* parts 1..n-1 (part 0 runs on the caller's thread) */
} psa_part;

typedef struct psa_parts {
    psa_part *part;        /* n */
    int n, used;           /* workspaces, and the parts the last block was cut into */
    int started;           /* threads started: parts 1..started */
    /* the block being worked on, read by every part */
    const uint8_t *in;
    const psa_setup *s;
    bool copy;
    int pieces;
    /* the threads' meeting point */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned long generation; /* blocks started */
    int turn;              /* the part whose decoding comes next */
    int done;              /* parts of this block searched */
    bool quit;
} psa_parts;

/* n workspaces (1..PSA_MAX_PARTS) and n - 1 threads; with the whole block on
 * the GPU (psa_block_gpu_open), each workspace gets a device workspace of
 * its own when n > 1.  PSA_OK; PSA_E_NOMEM; PSA_E_DEVICE with msg when a
 * device workspace could not be made (nothing left open). */
enum { PSA_MAX_PARTS = 16 };
psa_status psa_parts_open(psa_parts *p, const psa_setup *s, int n, char *msg, size_t len);
void psa_parts_close(psa_parts *p);

/* Block in[0, size) cut into at most n parts at frame boundaries, its
 * data:crystal frames shared out evenly (one part when its framing is bad:
 * *bad set, or when it has fewer such frames), each part begun
 * (psa_block_begin with copy), decoded in `pieces` pieces (fewer for fewer
 * frames; 0: psa_block_pieces' choice; psa_block_decode_part) and searched
 * (psa_block_search).  Then,
 * with no part running: a GPU that failed during the block is given up
 * (the next blocks run round by round; the engine's settled).  PSA_OK, or
 * the status of the first part that failed, *failed its index. */
psa_status psa_parts_run(psa_parts *p, const psa_setup *s, const void *in, unsigned size, bool copy, int pieces,
                         bool *bad, int *failed);

#endif

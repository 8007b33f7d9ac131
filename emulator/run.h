/* run.h: drives a loaded chain through NARVAL's lifecycle and its blocks, sequentially or pipelined. */
#ifndef NARWHAL_RUN_H
#define NARWHAL_RUN_H

#include <stdint.h>
#include <stdio.h>

#include "loader.h"

/* The frames of one key id an actor emitted: at the top level of its
 * buffers, and as sub-frames of a composite (event:data:psa's data:psa). */
typedef struct emu_kind_count {
    uint32_t id;
    unsigned long long frames;
    unsigned long long inside;
} emu_kind_count;

/* Key ids counted apart per actor; frames of further ids go to other_kinds. */
#define EMU_MAX_KINDS 16

typedef struct emu_actor_stats {
    unsigned long long blocks;     /* process_block calls that succeeded (end-of-data and flush calls too) */
    unsigned long long frames_in;  /* top-level ADF frames handed to it */
    unsigned long long frames_out; /* top-level ADF frames it emitted */
    unsigned long long bytes_in;
    unsigned long long bytes_out;
    unsigned long long grown;      /* times its output buffer was enlarged on NARVAL_E_OUTPUT_SIZE */
    unsigned buffer_size;          /* its output buffer at the end, bytes (0 for the consumer) */
    double seconds;                /* in its process_* calls, process_config included */
    double block_seconds;          /* of which in process_block */
    double wait_input;             /* pipelined: its thread waited for a block from upstream */
    double wait_output;            /* pipelined: its thread waited for a free buffer downstream */
    emu_kind_count kinds[EMU_MAX_KINDS]; /* what it emitted, by key id, in the order first seen */
    unsigned n_kinds;
    unsigned long long other_kinds; /* frames (any depth) of ids beyond the EMU_MAX_KINDS first */
} emu_actor_stats;

enum emu_end {
    EMU_END_DATA,   /* the producer reported the end of its data */
    EMU_END_LIMIT,  /* --blocks N producer blocks were run */
    EMU_END_SIGNAL, /* SIGINT or SIGTERM */
    EMU_END_ERROR,  /* an actor reported an error */
};

typedef struct emu_run_options {
    unsigned long long max_blocks; /* producer blocks to run; 0: until the end of the data */
    FILE *log;                    /* actor failures, one line each, as they happen; NULL: none */
    FILE *trace;                  /* -v: lifecycle calls and buffer growth; NULL: none */
    unsigned ring_depth;          /* 0: sequential, on the calling thread; N: pipelined, one thread per
                                     actor, N buffers between neighbours (at most EMU_MAX_RING) */
} emu_run_options;

/* The deepest ring: each slot may hold a buffer of the topology's size. */
#define EMU_MAX_RING 1024u

typedef struct emu_run_result {
    emu_actor_stats *actors;      /* n_actors entries, chain order; freed by emu_run_result_free */
    size_t n_actors;
    unsigned long long blocks;    /* non-empty producer blocks */
    double wall_seconds;          /* from the first process_config to the last process_unload */
    double block_seconds;         /* from the first process_block to the end of the flushes */
    unsigned ring_depth;          /* the run's emu_run_options.ring_depth */
    enum emu_end end;
    int signal;                   /* the signal that stopped the run, with EMU_END_SIGNAL */
} emu_run_result;

/* Calls process_config of every library of the chain, once each, with its
 * own directory (emu_library.conf_dir).  A non-zero code is EMU_E_RUN; err
 * names actor, call and code. */
int emu_configure(const emu_chain *c, emu_run_result *res, FILE *trace, char *err, size_t errlen);

/* The whole run: config, register and initialise per actor, start, blocks
 * until the end, the flush of every filter, stop, unload.  The blocks and
 * flushes run on this thread, or pipelined on one thread per actor; every
 * other call is made on this thread, in chain order.  After a failure
 * every started actor is still stopped and every registered one unloaded.
 * Returns EMU_OK or EMU_E_RUN (err holds the first failure).  res comes
 * from emu_run_result_init with the chain's actor count; it is filled in
 * either case and freed by the caller. */
int emu_run(const emu_chain *c, const emu_run_options *o, emu_run_result *res, char *err, size_t errlen);

int emu_run_result_init(emu_run_result *res, size_t n_actors);
void emu_run_result_free(emu_run_result *res);

#endif

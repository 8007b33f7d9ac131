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
    double count_seconds;          /* the loop's time on the count of its output blocks' frames: counting them,
                                      or (sequential) waiting for the thread that counts them */
    double wait_input;             /* pipelined: its thread waited for a block from upstream */
    double wait_output;            /* pipelined: its thread waited for a free buffer downstream */
    emu_kind_count kinds[EMU_MAX_KINDS]; /* what it emitted, by key id, in the order first seen */
    unsigned n_kinds;
    unsigned long long other_kinds; /* frames (any depth) of ids beyond the EMU_MAX_KINDS first */
    char device[64];               /* process_device after its last initialise ("GPU 1 (NVIDIA H200)",
                                      "CPU"); "": the actor has none or said none.  Plain bytes, so
                                      the row travels to rank 0 whole (mpi_session.c) */
} emu_actor_stats;

enum emu_end {
    EMU_END_DATA,   /* the producer reported the end of its data */
    EMU_END_LIMIT,  /* --blocks N producer blocks were run */
    EMU_END_SIGNAL, /* SIGINT or SIGTERM */
    EMU_END_ERROR,  /* an actor reported an error */
};

typedef struct emu_run_options {
    unsigned long long max_blocks; /* producer blocks per run; 0: until the end of the data */
    unsigned cycles;              /* runs (--cycles): start, blocks, stop, then reset and initialise
                                     before the next; 0 counts as 1 */
    unsigned long long pause_every; /* a process_pause/process_resume pair on every actor after every
                                       this many producer blocks of a run; 0: none */
    int strict;                   /* NARVAL's behaviour exactly: the topology's sizes, no flush call,
                                     NARVAL_E_OUTPUT_SIZE stops the run */
    FILE *log;                    /* actor failures, one line each, as they happen; NULL: none */
    FILE *trace;                  /* -v: every call (process_block with its sizes) and buffer growth;
                                     NULL: none */
    unsigned ring_depth;          /* 0: sequential, on the calling thread; N: pipelined, one thread per
                                     actor, N buffers between neighbours (at most EMU_MAX_RING) */
    struct emu_live *live;        /* what the progress line and the monitor see (live.h); NULL: nothing */
    struct emu_mpi *mpi;          /* under mpirun: the session across ranks (mpi.h), which runs pipelined
                                     the actors of this rank only; NULL: one process */
} emu_run_options;

/* The most runs of one `narwhal run --cycles N`. */
#define EMU_MAX_CYCLES 100000u

/* What one run (one start-to-stop cycle) moved. */
typedef struct emu_cycle_stats {
    unsigned long long blocks;   /* non-empty producer blocks */
    unsigned long long produced; /* top-level frames the producer emitted */
    unsigned long long consumed; /* top-level frames handed to the consumer */
    unsigned long long pauses;   /* pause/resume pairs */
    enum emu_end end;
} emu_cycle_stats;

/* The deepest ring: each slot may hold a buffer of the topology's size. */
#define EMU_MAX_RING 1024u

typedef struct emu_run_result {
    emu_actor_stats *actors;      /* n_actors entries, chain order, summed over the runs; freed by
                                     emu_run_result_free */
    size_t n_actors;
    unsigned long long blocks;    /* non-empty producer blocks, every run */
    unsigned long long pauses;    /* pause/resume pairs, every run */
    emu_cycle_stats *cycle;       /* one per run started, in order; freed by emu_run_result_free */
    unsigned runs;                /* runs started (process_start called on every actor) */
    unsigned cycles;              /* runs asked for (emu_run_options.cycles, at least 1) */
    int strict;                   /* the run's emu_run_options.strict */
    double wall_seconds;          /* from the first process_config to the last process_unload */
    double block_seconds;         /* from the first process_block to the end of the flushes, every run */
    unsigned ring_depth;          /* the run's emu_run_options.ring_depth */
    enum emu_end end;             /* how the last run ended */
    int signal;                   /* the signal that stopped the run, with EMU_END_SIGNAL */
    unsigned ranks;               /* across MPI ranks (rank 0, once gathered: mpi.h): how many; 0: one process */
    const int *rank_of;           /* with ranks: per actor, the rank that ran it */
    const char *const *host_of;   /* with ranks: per actor, that rank's host */
} emu_run_result;

/* Calls process_config of every library of the chain, once each, with its
 * own directory (emu_library.conf_dir).  A non-zero code is EMU_E_RUN; err
 * names actor, call and code. */
int emu_configure(const emu_chain *c, emu_run_result *res, FILE *trace, char *err, size_t errlen);

/* The whole session, as NARVAL's GUI drives it: config, register and
 * initialise per actor; then o->cycles runs, each: start, blocks until the
 * end (of the data, of o->max_blocks, or a signal), the flush of every
 * filter (not with o->strict), stop; between two runs reset and initialise;
 * unload after the last.  A signal ends the run in hand and the session.
 * Between two blocks a run may pause: every actor's process_pause, in
 * chain order, then process_resume on each (after every o->pause_every
 * producer blocks, or at SIGTSTP, resumed at SIGCONT).  The blocks and
 * flushes run on this thread, or pipelined on one thread per actor (the
 * pipeline drains before a pause; its producer's thread makes the pause and
 * resume calls); every other call is made on this thread, in chain order.
 * An actor's error aborts: no further call but process_unload on every
 * registered instance, without process_stop (a failed process_stop still
 * lets the other actors stop: the run was ending normally).  Returns
 * EMU_OK or EMU_E_RUN (err holds the first failure).  res comes from
 * emu_run_result_init with the chain's actor count; it is filled in either
 * case and freed by the caller. */
int emu_run(const emu_chain *c, const emu_run_options *o, emu_run_result *res, char *err, size_t errlen);

int emu_run_result_init(emu_run_result *res, size_t n_actors);
void emu_run_result_free(emu_run_result *res);

#endif

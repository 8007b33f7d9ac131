/* live.h: a run as other threads see it while it goes (counters, state, producers' progress, rings, spectra), for the progress line and the monitoring page. */
#ifndef NARWHAL_LIVE_H
#define NARWHAL_LIVE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "loader.h"

/*
 * The run loops keep their exact counts in emu_run_result, written by each
 * actor's own thread without a lock, for the table at the end.  What a
 * reader on another thread may see during the run is published here
 * besides: relaxed atomics, each written by the one thread that calls its
 * actor (so no read-modify-write is contended), read by a ticker thread
 * once a second into samples (emu_live_sample) that the progress line and
 * the monitor turn into rates.  Everything here is an extra for a person
 * watching: nothing in the run depends on it.
 *
 * Two things come from the actors themselves, through the optional Narwhal
 * symbols of narval.h, called on the actor's own thread between blocks:
 * process_progress (a producer's done/total: the ETA) after every block of
 * a producer, and process_spectra (the histogrammer's spectra) at most once
 * a second per actor while a monitor runs (a GPU histogrammer copies its
 * counts back for it: a second's worth of blocks pays for one copy); once
 * more on the main thread after each run's blocks, so that the monitor
 * shows the final spectra.
 */
enum emu_state {
    EMU_STATE_LOADING,    /* libraries loaded; process_config not yet called */
    EMU_STATE_CONFIGURED, /* configured, registered and initialised */
    EMU_STATE_RUNNING,    /* started: blocks go */
    EMU_STATE_STOPPING,   /* the blocks ended (data, --blocks, a signal): flush and stop */
    EMU_STATE_DONE,       /* every actor unloaded after a good session */
    EMU_STATE_FAILED,     /* an actor failed: the session aborted */
};
const char *emu_state_name(enum emu_state s);

typedef struct emu_live_actor {
    atomic_ullong blocks, frames_in, frames_out, bytes_in, bytes_out;
    atomic_ullong crystals; /* narwhal:crystal and data:psa frames it emitted (a producer's: crystal-events) */
    atomic_ullong events;   /* event-level frames it emitted: event:data*, narwhal:tracked */
    atomic_ullong busy_ns;  /* in process_block, calls that returned */
    atomic_ullong since_ns; /* when the process_block in hand began; 0: none in hand */
    atomic_ullong done, total; /* its process_progress */
    _Atomic(const char *) unit;
} emu_live_actor;

/* One actor's counts at a sample. */
typedef struct emu_live_counts {
    unsigned long long blocks, frames_in, frames_out, bytes_in, bytes_out, crystals, events, busy_ns, done, total;
    const char *unit; /* NULL: no process_progress */
} emu_live_counts;

/* One ring (pipelined): input `input` of actor `reader`, written by `writer`. */
typedef struct emu_live_ring {
    size_t writer, reader, input;
    unsigned used, depth;
} emu_live_ring;

/* What the ticker saw at one time. */
typedef struct emu_live_sample {
    double t;          /* emu_now() */
    double run_t0;     /* when the first run's blocks began (0: not yet) */
    enum emu_state state;
    emu_live_counts *actor; /* n entries */
    emu_live_ring *ring;    /* n_rings entries (pipelined, while blocks run) */
    size_t n_rings;
} emu_live_sample;

/* One spectrum as an actor's process_spectra last gave it. */
typedef struct emu_live_spectrum {
    size_t actor;
    char *name, *title, *x_label;
    unsigned bins;
    double lo, hi;
    unsigned long long *counts, underflow, overflow, entries;
    unsigned long long version; /* the actor's snapshots so far */
    double t;                   /* emu_now() of the snapshot */
} emu_live_spectrum;

struct emu_live;
typedef void emu_live_tick_fn(void *ctx, const struct emu_live *l, const emu_live_sample *prev,
                              const emu_live_sample *last);

typedef struct emu_live {
    const emu_chain *c;
    size_t n;
    unsigned ring_depth;      /* the run's: 0 sequential */
    emu_live_actor *actor;
    atomic_int state;
    atomic_ullong run_t0_ns;  /* when the first run's blocks began */
    int spectra_on;           /* a monitor shows spectra: actors are asked for them */
    double *spectra_at;       /* per actor: its last snapshot, touched by its thread only */
    char *spectra_off;        /* per actor: its process_spectra failed once */
    FILE *log;                /* warnings (a failed process_spectra) */

    pthread_mutex_t lock;     /* what follows */
    emu_live_sample prev, last;
    void *rings;              /* struct emu_ring * of the pipeline, while blocks run */
    const size_t *ring_of;
    size_t n_rings;
    emu_live_spectrum *spectrum;
    size_t n_spectra, cap_spectra;

    pthread_t ticker;
    pthread_cond_t wake;
    int ticking, stop_ticker;
    double period;
    emu_live_tick_fn *on_tick;
    void *tick_ctx;
} emu_live;

int emu_live_init(emu_live *l, const emu_chain *c, FILE *log);
/* Stops the ticker first. */
void emu_live_free(emu_live *l);

void emu_live_set_state(emu_live *l, enum emu_state s);
/* The first run's blocks begin now (the rates' origin). */
void emu_live_blocks_begin(emu_live *l);

/* A ticker thread: a sample every `period` seconds, then on_tick (on that
 * thread) with the previous and the new one, under the live lock.  Stopped
 * by emu_live_stop_ticker, which takes a last sample and ticks once more. */
int emu_live_start_ticker(emu_live *l, double period, emu_live_tick_fn *on_tick, void *ctx);
void emu_live_stop_ticker(emu_live *l);

/* The hooks of the run loops (calls.c, pipeline.c, run.c), each a no-op
 * for a NULL l. */
void emu_live_call_begins(emu_live *l, size_t k);
/* An output block's top-level frames as the host counted them (calls.c,
 * in the one walk that also counts them by kind for the report): all, those
 * that count as crystal-events (narwhal:crystal, data:psa) and as events
 * (composites but event:data:crystal, narwhal:tracked). */
typedef struct emu_live_out {
    unsigned long long frames, crystals, events;
} emu_live_out;
/* Actor k's process_block returned after ns: its counts, its output's
 * (used bytes), then (on its thread) process_progress and, when due,
 * process_spectra. */
void emu_live_call_ends(emu_live *l, size_t k, void *instance, unsigned long long ns, unsigned in_size,
                        unsigned long long in_frames, unsigned used, const emu_live_out *out);
/* Actor k's output counted after its call ended (the sequential loop counts
 * beside the next call): the counts emu_live_call_ends was given as zero. */
void emu_live_counted(emu_live *l, size_t k, const emu_live_out *out);
/* The pipeline's rings while blocks run (ring_of[k] + i: input i of actor
 * k); NULL before it destroys them. */
void emu_live_set_rings(emu_live *l, void *rings, const size_t *ring_of, size_t n_rings);
/* After a run's blocks, on the main thread (no block in hand): every
 * actor's spectra, when a monitor may show them. */
void emu_live_final_spectra(emu_live *l, void *const *instances);

#endif

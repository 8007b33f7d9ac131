/* progress.h: the progress line of `narwhal run`: events and crystal-events so far, rates, the busiest actor, the time left. */
#ifndef NARWHAL_PROGRESS_H
#define NARWHAL_PROGRESS_H

#include <stdio.h>

#include "live.h"

/* What two samples of a run say, for the line and the monitor. */
typedef struct emu_figures {
    double elapsed;                   /* since the first run's blocks began (0: not yet) */
    double window;                    /* between the two samples */
    unsigned long long crystals;      /* crystal-events: narwhal:crystal and data:psa frames the producers emitted */
    unsigned long long events;        /* event-level frames of the last actor (topology order) that emits any */
    double crystal_rate, event_rate;  /* per second over the window */
    long event_actor;                 /* that actor; -1: none emits events */
    long busiest;                     /* the actor busiest in process_block over the window; -1: none */
    double busiest_share;             /* its busy time over the window, 0..1 */
    double fraction;                  /* of the producers' data done (the least advanced); -1: unknown */
    double eta;                       /* seconds left at the pace so far; -1: unknown */
} emu_figures;

void emu_figures_of(const emu_live *l, const emu_live_sample *prev, const emu_live_sample *last, emu_figures *f);
/* The actor's busy share of the window (0..1). */
double emu_busy_share(const emu_live_sample *prev, const emu_live_sample *last, size_t k);

/* One line, without "narwhal: " or a line end: "12.0 s: 120,000 crystal-events
 * (10,000/s), 40,000 events (3,333/s); busiest 'psa' 97%; 40% of 100,000
 * events, about 18 s left". */
void emu_progress_format(char *buf, size_t len, const emu_live *l, const emu_figures *f,
                         const emu_live_sample *last);

/* The line on out: on a terminal (tty) rewritten in place with \r every
 * tick, cleared at the end; otherwise a line every `every` seconds. */
typedef struct emu_progress {
    FILE *out;
    int tty;
    double every;      /* seconds between lines; 0: none */
    double last_print; /* emu_now() of the last line */
    int open;          /* a terminal line is on screen, unfinished */
} emu_progress;

/* An emu_live_tick_fn: ctx is an emu_progress. */
void emu_progress_tick(void *ctx, const emu_live *l, const emu_live_sample *prev, const emu_live_sample *last);
/* Clears a terminal line left on screen (the run's own output follows). */
void emu_progress_end(emu_progress *p);

#endif

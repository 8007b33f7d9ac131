/* builder_core.h: event building by timestamp: data:psa frames of several crystals within a window become one event:data:psa. */
#ifndef NARWHAL_BUILDER_CORE_H
#define NARWHAL_BUILDER_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adf.h"

/*
 * Frames wait in a buffer sorted by timestamp, then crystal id, then arrival
 * (so that frames of one timestamp from several streams line up the same
 * way whatever order the streams arrive in).  An event starts at the
 * earliest frame waiting and takes the frames that follow it within `window`
 * ticks, one per crystal: a second frame of a crystal already in the event
 * ends it (a crystal fires once per event).
 *
 * Sources.  Every crystal id the builder meets (in a data:psa frame, in a
 * meta:sync mark, or listed in conf.crystals) is a source whose progress is
 * the largest timestamp it has delivered: a crystal's stream is in time
 * order, so it will deliver nothing earlier (up to `delay`, below).  A
 * source is *synchronised* when it is listed in conf.crystals or has sent a
 * meta:sync: the builder waits for it, however far behind the others it is.
 * The crystals seen only in data frames count together as one more source
 * whose progress is the latest of theirs (one stream of several crystals,
 * the single-stream chain): so a crystal that fires once is not waited for.
 * A listed crystal that has delivered nothing yet holds every event.  A
 * meta:sync with timestamp UINT64_MAX says its stream has ended.
 *
 * An event starting at t is closed, and written, once every source's
 * progress is past t + window + delay (delay is the disorder a stream may
 * have: a frame may come up to `delay` ticks after a later one of its
 * source and still join its event), when more than max_held frames wait
 * (the oldest events close early, counted as forced: memory stays bounded,
 * at the price of exactness), or at the end of the data.  A frame that
 * matches nothing is a one-crystal event; a frame that arrives after its
 * time was closed still becomes an event, counted as late.  Nothing is
 * dropped.  So the events do not depend on how the frames were cut into
 * blocks nor on how the streams interleave, as long as nothing is late.
 */
typedef struct bld_conf {
    uint64_t window, delay;  /* 10 ns ticks */
    size_t max_held;         /* frames */
    const uint16_t *crystals; /* waited for from the start; ascending, owned by the caller */
    size_t n_crystals;
} bld_conf;

enum { BLD_FOLD_BINS = 65 }; /* folds 1 .. 64; the last bin counts 64 and more */

typedef struct bld_counts {
    uint64_t frames, events, late, forced;
    uint64_t fold[BLD_FOLD_BINS];
} bld_counts;

/* A data:psa frame known to the builder. */
typedef struct bld_frame {
    const uint8_t *data; /* key first */
    uint32_t length;
    uint32_t event;
    uint64_t timestamp;
    uint64_t seq;        /* arrival order */
    uint16_t crystal;
} bld_frame;

/* A progress mark: the crystal's stream holds nothing earlier than timestamp
 * from now on (a meta:sync frame's crystal id and key timestamp). */
typedef struct bld_mark {
    uint16_t crystal;
    uint64_t timestamp;
} bld_mark;

/* A source (a crystal) and how far it has come. */
typedef struct bld_source {
    uint16_t crystal;
    bool synced;         /* listed in conf.crystals or sent a meta:sync: waited for */
    uint64_t progress;   /* the largest timestamp delivered (0: nothing yet) */
} bld_source;

typedef struct bld_state {
    bld_conf conf;
    bld_source *src;     /* by crystal id */
    size_t n_src, cap_src;
    bld_frame *held;     /* sorted; data points into arena */
    size_t n_held, cap_held;
    uint8_t *arena;
    size_t arena_used, arena_cap;
    uint64_t next_seq;
    bool closed_any;
    uint64_t closed_until; /* start of the last event closed */
    bld_counts counts;
} bld_state;

/* What one block did, kept apart until bld_commit (the host may call again
 * with the same input after NARVAL_E_OUTPUT_SIZE). */
typedef struct bld_pending {
    bld_frame *all;      /* held + fresh, sorted */
    size_t n_all, cap_all;
    size_t closed;       /* all[0 .. closed) went out in events */
    bld_source *src;     /* the sources after the block, by crystal id */
    size_t n_src, cap_src;
    uint32_t *slot;      /* per crystal id (65,536): 1 + its index in src, 0 when absent */
    bool closed_any;
    uint64_t closed_until;
    bld_counts delta;
} bld_pending;

void bld_init(bld_state *s, const bld_conf *c);
void bld_free(bld_state *s);
void bld_pending_free(bld_pending *p);

/* The crystal id, event and timestamp of a data:psa frame; -1 when its
 * payload is shorter than data:psa's global part. */
int bld_frame_of(const adf_frame *f, bld_frame *out);

/* Builds what can be built from the waiting frames and the fresh ones
 * (fresh[i].seq is assigned here), after the sources' progress took the
 * fresh frames and marks, writing event:data:psa frames into w (failures
 * stay in w, as the kit expects).  flush closes everything.  Returns 0, or
 * -1 when out of memory. */
int bld_block(const bld_state *s, bld_frame *fresh, size_t n_fresh, const bld_mark *marks, size_t n_marks,
              bool flush, adf_writer *w, bld_pending *p);

/* Makes p the new state: the frames not yet built are copied into the arena.
 * Returns 0, or -1 when out of memory (the state is then unchanged). */
int bld_commit(bld_state *s, bld_pending *p);

/* The state after p, when p flushed (closed every frame): nothing held, no
 * source met (the streams ended: the next ones start afresh), p's clocks
 * and counts applied.  It owns no memory, so a filter can build the
 * rest of a block on it (the frames after a meta:eof) and still leave s
 * untouched until the block succeeds: bld_commit into *out, then *out
 * replaces s.  out may be s only when s owns no memory either. */
void bld_flushed(const bld_state *s, const bld_pending *p, bld_state *out);

#endif

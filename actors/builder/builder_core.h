/* builder_core.h: event building by timestamp: data:psa frames of several crystals within a window become one event:data:psa. */
#ifndef NARWHAL_BUILDER_CORE_H
#define NARWHAL_BUILDER_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adf.h"

/*
 * Frames wait in a buffer sorted by timestamp (then by arrival).  An event
 * starts at the earliest frame waiting and takes the frames that follow it
 * within `window` ticks, one per crystal: a second frame of a crystal already
 * in the event ends it (a crystal fires once per event).  An event is closed,
 * and written, once a frame later than its start + window + delay has been
 * seen (delay is the out-of-order tolerance: a frame may arrive up to `delay`
 * ticks after a later one and still join its event), when more than max_held
 * frames wait (the oldest events close early, counted as forced), or at the
 * end of the data.  A frame that matches nothing is a one-crystal event; a
 * frame that arrives after its time was closed (later than the tolerance)
 * still becomes an event, counted as late.  Nothing is dropped.
 */
typedef struct bld_conf {
    uint64_t window, delay; /* 10 ns ticks */
    size_t max_held;        /* frames */
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

typedef struct bld_state {
    bld_conf conf;
    bld_frame *held;     /* sorted; data points into arena */
    size_t n_held, cap_held;
    uint8_t *arena;
    size_t arena_used, arena_cap;
    uint64_t next_seq;
    uint64_t latest;     /* the latest timestamp seen */
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
    uint64_t latest;
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
 * (fresh[i].seq is assigned here), writing event:data:psa frames into w
 * (failures stay in w, as the kit expects).  flush closes everything.
 * Returns 0, or -1 when out of memory. */
int bld_block(const bld_state *s, bld_frame *fresh, size_t n_fresh, bool flush, adf_writer *w,
              bld_pending *p);

/* Makes p the new state: the frames not yet built are copied into the arena.
 * Returns 0, or -1 when out of memory (the state is then unchanged). */
int bld_commit(bld_state *s, bld_pending *p);

/* The state after p, when p flushed (closed every frame): nothing held, p's
 * clocks and counts applied.  It owns no memory, so a filter can build the
 * rest of a block on it (the frames after a meta:eof) and still leave s
 * untouched until the block succeeds: bld_commit into *out, then *out
 * replaces s.  out may be s only when s owns no memory either. */
void bld_flushed(const bld_state *s, const bld_pending *p, bld_state *out);

#endif

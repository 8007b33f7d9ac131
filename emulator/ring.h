/* ring.h: a bounded ring of buffers from one actor's thread to one reader's: order kept, writer waits when full. */
#ifndef NARWHAL_RING_H
#define NARWHAL_RING_H

#include <pthread.h>

#include "calls.h"

/* What a slot carries besides frames. */
enum emu_mark {
    EMU_MARK_NONE,  /* a block: the frames an actor emitted */
    EMU_MARK_END,   /* sent after an actor's last block (and its flush) */
    EMU_MARK_PAUSE, /* passed down the graph before a pause: every block before it has been through */
    EMU_MARK_SKIP,  /* nothing at this key: the writer emitted nothing, or its block went to another instance */
};

/* Splits recorded in a key: a pipelined graph refuses deeper ones. */
#define EMU_KEY_PATH 32

/* Where a block stands in the sequential order (pipeline.c): the round and
 * producer (or, for a flush, UINT64_MAX and the filter) it comes from, then
 * at each writer with several outlets the outlet (and for a shared group
 * the instance's place in that delivery) it took.  Keys compare
 * lexicographically, a prefix first. */
typedef struct emu_key {
    unsigned long long round;
    unsigned origin;
    unsigned depth;
    unsigned short path[EMU_KEY_PATH];
} emu_key;

/* One block in flight, or a mark (used == 0). */
typedef struct emu_slot {
    emu_buffer buf;
    unsigned used;
    unsigned long long frames;
    enum emu_mark mark;
    emu_key key;
} emu_slot;

/* One writer thread and one reader thread.  The writer fills the slot
 * emu_ring_acquire gives, outside the lock, and hands it over with
 * emu_ring_publish; the reader reads the slot emu_ring_peek gives, outside
 * the lock, and gives it back with emu_ring_release.  The mutex makes each
 * side's writes to a slot visible to the other. */
typedef struct emu_ring {
    emu_slot *slot;
    unsigned depth;
    unsigned head;  /* the oldest published slot */
    unsigned count; /* published, not yet released */
    int aborted;
    unsigned waiting; /* threads blocked on readable or writable now */
    pthread_mutex_t lock;
    pthread_cond_t readable, writable;
} emu_ring;

/* depth slots, their buffers unallocated; EMU_E_RUN when out of memory. */
int emu_ring_init(emu_ring *r, unsigned depth);
/* Frees the slots and their buffers; no thread may use the ring any more. */
void emu_ring_destroy(emu_ring *r);

/* The writer's next slot, once one is free; the time spent waiting is added
 * to *waited.  Until it is published, calling again gives the same slot, so
 * a writer may keep it for its next block.  NULL once the ring is aborted. */
emu_slot *emu_ring_acquire(emu_ring *r, double *waited);
void emu_ring_publish(emu_ring *r);

/* The oldest published slot, once there is one; waiting is added to
 * *waited.  NULL once the ring is aborted. */
emu_slot *emu_ring_peek(emu_ring *r, double *waited);
void emu_ring_release(emu_ring *r);

/* Wakes both sides for good: every later acquire and peek returns NULL. */
void emu_ring_abort(emu_ring *r);

/* Slots published and not yet released: 0 when the reader has nothing waiting. */
unsigned emu_ring_count(emu_ring *r);

/* How many threads are blocked in acquire or peek now: a test sees that a
 * thread waits before it aborts the ring. */
unsigned emu_ring_waiting(emu_ring *r);

#endif

/* counter.h: one job at a time on a thread of its own: the sequential loop counts an actor's output there while the next actor works on it. */
#ifndef NARWHAL_COUNTER_H
#define NARWHAL_COUNTER_H

typedef struct emu_counter emu_counter;
typedef void emu_counter_fn(void *ctx);

/* The thread, started; NULL when it cannot be (the caller then counts on its own thread). */
emu_counter *emu_counter_start(void);
/* Runs fn(ctx) on the thread; the job before must have been waited for. */
void emu_counter_post(emu_counter *c, emu_counter_fn *fn, void *ctx);
/* Returns once the job posted last has run (at once when none is in hand). */
void emu_counter_wait(emu_counter *c);
/* Waits for the job in hand, ends the thread and frees c (NULL is a no-op). */
void emu_counter_stop(emu_counter *c);

#endif

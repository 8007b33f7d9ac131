/* ring.c: a bounded ring of buffers from one actor's thread to one reader's: order kept, writer waits when full. */
#include "ring.h"
#include "emu.h"

#include <stdlib.h>

int emu_ring_init(emu_ring *r, unsigned depth)
{
    r->slot = calloc(depth, sizeof *r->slot);
    r->depth = depth;
    r->head = r->count = 0;
    r->aborted = 0;
    r->waiting = 0;
    if (!r->slot)
        return EMU_E_RUN;
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->readable, NULL);
    pthread_cond_init(&r->writable, NULL);
    return EMU_OK;
}

void emu_ring_destroy(emu_ring *r)
{
    if (!r->slot)
        return;
    for (unsigned i = 0; i < r->depth; i++)
        emu_buffer_release(&r->slot[i].buf);
    free(r->slot);
    r->slot = NULL;
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->readable);
    pthread_cond_destroy(&r->writable);
}

/* Waits on cond while count is at limit (depth: full, for the writer; 0:
 * empty, for the reader) and the ring is not aborted.  The clock is read
 * only when there is a wait. */
static void wait_while(emu_ring *r, pthread_cond_t *cond, unsigned limit, double *waited)
{
    if (r->count != limit || r->aborted)
        return;
    double t0 = emu_now();
    r->waiting++;
    while (r->count == limit && !r->aborted)
        pthread_cond_wait(cond, &r->lock);
    r->waiting--;
    *waited += emu_now() - t0;
}

emu_slot *emu_ring_acquire(emu_ring *r, double *waited)
{
    pthread_mutex_lock(&r->lock);
    wait_while(r, &r->writable, r->depth, waited);
    emu_slot *s = r->aborted ? NULL : &r->slot[(r->head + r->count) % r->depth];
    pthread_mutex_unlock(&r->lock);
    return s;
}

void emu_ring_publish(emu_ring *r)
{
    pthread_mutex_lock(&r->lock);
    r->count++;
    pthread_cond_signal(&r->readable);
    pthread_mutex_unlock(&r->lock);
}

emu_slot *emu_ring_peek(emu_ring *r, double *waited)
{
    pthread_mutex_lock(&r->lock);
    wait_while(r, &r->readable, 0, waited);
    emu_slot *s = r->aborted ? NULL : &r->slot[r->head];
    pthread_mutex_unlock(&r->lock);
    return s;
}

void emu_ring_release(emu_ring *r)
{
    pthread_mutex_lock(&r->lock);
    r->head = (r->head + 1) % r->depth;
    r->count--;
    pthread_cond_signal(&r->writable);
    pthread_mutex_unlock(&r->lock);
}

void emu_ring_abort(emu_ring *r)
{
    pthread_mutex_lock(&r->lock);
    r->aborted = 1;
    pthread_cond_broadcast(&r->readable);
    pthread_cond_broadcast(&r->writable);
    pthread_mutex_unlock(&r->lock);
}

unsigned emu_ring_waiting(emu_ring *r)
{
    pthread_mutex_lock(&r->lock);
    unsigned n = r->waiting;
    pthread_mutex_unlock(&r->lock);
    return n;
}

unsigned emu_ring_count(emu_ring *r)
{
    pthread_mutex_lock(&r->lock);
    unsigned n = r->count;
    pthread_mutex_unlock(&r->lock);
    return n;
}

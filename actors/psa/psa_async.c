/* psa_async.c: the worker thread of GPUWork block and the two slots it alternates between. */
#include "psa_async.h"

#include <stdlib.h>
#include <string.h>

#include "narval.h"
#ifdef NARWHAL_HAVE_CUDA
#include "psa_block_gpu.h"
#endif

static void *worker(void *arg)
{
    psa_async *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->quit && (q->job < 0 || q->done))
            pthread_cond_wait(&q->cv, &q->mu);
        if (q->quit)
            break;
        psa_slot *sl = &q->slot[q->job];
        pthread_mutex_unlock(&q->mu);
        unsigned code = psa_block_search(&sl->w, q->s, sl->copy, sl->size);
        pthread_mutex_lock(&q->mu);
        sl->code = code;
        q->done = true;
        pthread_cond_broadcast(&q->cv);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

unsigned psa_async_open(psa_async *q, const psa_setup *s)
{
    memset(q, 0, sizeof *q);
    q->s = s;
    q->job = -1;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    if (pthread_create(&q->thread, NULL, worker, q) != 0)
        return NARVAL_E_NOMEM;
    q->started = true;
    return 0;
}

static void release_copy(psa_slot *sl)
{
#ifdef NARWHAL_HAVE_CUDA
    if (sl->pinned) {
        pb_host_free(sl->copy);
        sl->copy = NULL;
    }
#endif
    free(sl->copy);
    sl->copy = NULL;
    sl->cap = 0;
}

unsigned char *psa_async_room(psa_async *q, int i, unsigned size)
{
    psa_slot *sl = &q->slot[i];
    if (size > sl->cap) {
        release_copy(sl);
        size_t want = (size_t)size + size / 4;
#ifdef NARWHAL_HAVE_CUDA
        sl->copy = pb_host_alloc(want);
        sl->pinned = sl->copy != NULL;
#endif
        if (!sl->copy && !(sl->copy = malloc(want)))
            return NULL;
        sl->cap = want;
    }
    sl->size = size;
    return sl->copy;
}

void psa_async_submit(psa_async *q, int i)
{
    pthread_mutex_lock(&q->mu);
    q->job = i;
    q->done = false;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

unsigned psa_async_wait(psa_async *q)
{
    unsigned code = 0;
    pthread_mutex_lock(&q->mu);
    while (q->job >= 0 && !q->done)
        pthread_cond_wait(&q->cv, &q->mu);
    if (q->job >= 0)
        code = q->slot[q->job].code;
    q->job = -1;
    pthread_mutex_unlock(&q->mu);
    return code;
}

void psa_async_close(psa_async *q)
{
    if (q->started) {
        psa_async_wait(q);
        pthread_mutex_lock(&q->mu);
        q->quit = true;
        pthread_cond_broadcast(&q->cv);
        pthread_mutex_unlock(&q->mu);
        pthread_join(q->thread, NULL);
        pthread_mutex_destroy(&q->mu);
        pthread_cond_destroy(&q->cv);
    }
    for (int i = 0; i < 2; i++) {
        release_copy(&q->slot[i]);
        psa_block_free(&q->slot[i].w);
    }
    memset(q, 0, sizeof *q);
    q->job = -1;
}

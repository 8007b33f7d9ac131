/* psa_async.c: the worker thread of GPUWork block: it searches a block's parts in the order process_block hands them over. */
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
        while (!q->quit && q->done == q->submitted)
            pthread_cond_wait(&q->cv, &q->mu);
        if (q->quit)
            break;
        int j = q->done;
        unsigned code = 0;
        if (!q->cancel) {
            psa_block *w = &q->part[j];
            const unsigned char *copy = q->copy + q->at[j];
            unsigned size = (unsigned)(q->at[j + 1] - q->at[j]);
            pthread_mutex_unlock(&q->mu);
            code = psa_block_search(w, q->s, copy, size);
            pthread_mutex_lock(&q->mu);
        }
        q->code[j] = code;
        q->done++;
        pthread_cond_broadcast(&q->cv);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

unsigned psa_async_open(psa_async *q, const psa_setup *s)
{
    memset(q, 0, sizeof *q);
    q->s = s;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    if (pthread_create(&q->thread, NULL, worker, q) != 0)
        return NARVAL_E_NOMEM;
    q->started = true;
    return 0;
}

static void release_copy(psa_async *q)
{
#ifdef NARWHAL_HAVE_CUDA
    if (q->pinned) {
        pb_host_free(q->copy);
        q->copy = NULL;
    }
#endif
    free(q->copy);
    q->copy = NULL;
    q->cap = 0;
    q->pinned = false;
}

unsigned char *psa_async_begin(psa_async *q, unsigned size, int n_parts)
{
    if (size > q->cap) {
        release_copy(q);
        size_t want = (size_t)size + size / 4;
#ifdef NARWHAL_HAVE_CUDA
        q->copy = pb_host_alloc(want);
        q->pinned = q->copy != NULL;
#endif
        if (!q->copy && !(q->copy = malloc(want)))
            return NULL;
        q->cap = want;
    }
    pthread_mutex_lock(&q->mu);
    q->n_parts = n_parts;
    q->submitted = q->done = 0;
    q->cancel = false;
    pthread_mutex_unlock(&q->mu);
    return q->copy;
}

void psa_async_submit(psa_async *q)
{
    pthread_mutex_lock(&q->mu);
    q->submitted++;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

unsigned psa_async_wait(psa_async *q, int j)
{
    pthread_mutex_lock(&q->mu);
    while (q->done <= j)
        pthread_cond_wait(&q->cv, &q->mu);
    unsigned code = q->code[j];
    pthread_mutex_unlock(&q->mu);
    return code;
}

void psa_async_cancel(psa_async *q)
{
    pthread_mutex_lock(&q->mu);
    q->cancel = true;
    while (q->done < q->submitted)
        pthread_cond_wait(&q->cv, &q->mu);
    pthread_mutex_unlock(&q->mu);
}

void psa_async_close(psa_async *q)
{
    if (q->started) {
        psa_async_cancel(q);
        pthread_mutex_lock(&q->mu);
        q->quit = true;
        pthread_cond_broadcast(&q->cv);
        pthread_mutex_unlock(&q->mu);
        pthread_join(q->thread, NULL);
        pthread_mutex_destroy(&q->mu);
        pthread_cond_destroy(&q->cv);
    }
    release_copy(q);
    for (int j = 0; j < PSA_MAX_PARTS; j++)
        psa_block_free(&q->part[j]);
    memset(q, 0, sizeof *q);
}

/* psa_parts.c: a block's parts worked on concurrently (psa_parts.h): the cut, the threads, the decoding taken in turn. */
#include "psa_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psa_backend.h"

/* Part k of the current block: its decoding when its turn comes, then its searches. */
static psa_status work(psa_parts *p, int k)
{
    psa_part *q = &p->part[k];
    const psa_setup *s = p->s;
    bool bad;
    pthread_mutex_lock(&p->mu);
    while (p->turn != k)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    psa_status st = psa_block_begin(&q->w, s, p->in + q->at, (unsigned)q->size, &bad, p->copy);
    size_t n = 0;
    if (!st) {
        const size_t want = (size_t)psa_block_pieces(&q->w, p->pieces);
        n = want < q->w.n_ev ? want : q->w.n_ev ? q->w.n_ev : 1;
        for (size_t j = 1; j <= n; j++)
            psa_block_decode_part(&q->w, s, q->w.n_ev * j / n);
    }
    pthread_mutex_lock(&p->mu);
    p->turn++;
    q->pieces = q->w.n_ev ? n : 0;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return st ? st : psa_block_search(&q->w, s);
}

/* Counts part k's work as done. */
static void finish(psa_parts *p, int k, psa_status st)
{
    pthread_mutex_lock(&p->mu);
    p->part[k].st = st;
    p->done++;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

/* Part k's thread: the blocks it has a part of, until psa_parts_close. */
static void *worker(void *arg)
{
    psa_part *q = arg;
    psa_parts *p = q->parts;
    unsigned long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->quit && p->generation == seen)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->quit)
            break;
        seen = p->generation;
        if (q->k >= p->used)
            continue;
        pthread_mutex_unlock(&p->mu);
        finish(p, q->k, work(p, q->k));
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

psa_status psa_parts_open(psa_parts *p, const psa_setup *s, int n, char *msg, size_t len)
{
    memset(p, 0, sizeof *p);
    if (n < 1 || n > PSA_MAX_PARTS || !(p->part = calloc((size_t)n, sizeof *p->part)))
        return PSA_E_NOMEM;
    p->n = n;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    for (int k = 0; k < n; k++) {
        p->part[k].parts = p;
        p->part[k].k = k;
        if (n > 1 && s->engine->block && !psa_block_gpu_fork(&p->part[k].w, s, msg, len)) {
            psa_parts_close(p);
            return PSA_E_DEVICE;
        }
    }
    for (int k = 1; k < n; k++, p->started++)
        if (pthread_create(&p->part[k].thread, NULL, worker, &p->part[k])) {
            psa_parts_close(p);
            return PSA_E_NOMEM;
        }
    return PSA_OK;
}

void psa_parts_close(psa_parts *p)
{
    if (!p->part)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int k = 1; k <= p->started; k++)
        pthread_join(p->part[k].thread, NULL);
    for (int k = 0; k < p->n; k++)
        psa_block_free(&p->part[k].w);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p->part);
    memset(p, 0, sizeof *p);
}

/* The cut: at most p->n parts, part k ending with the data:crystal frame
 * that completes its share of them; the frames between two parts start
 * the later one.  Sets p->used and the parts' bytes; *bad with bad framing. */
static void cut(psa_parts *p, const void *in, unsigned size, bool *bad)
{
    adf_iter it;
    adf_frame f;
    size_t crystals = 0, seen = 0, at = 0;
    int rc, k = 0;
    adf_iter_init(&it, in, size);
    while ((rc = adf_iter_next(&it, &f)) > 0)
        crystals += f.key.id == ADF_ID_NW_CRYSTAL;
    *bad = rc < 0;
    p->used = *bad || crystals < 2 ? 1 : crystals < (size_t)p->n ? (int)crystals : p->n;
    adf_iter_init(&it, in, size);
    while (p->used > 1 && k < p->used - 1 && adf_iter_next(&it, &f) > 0) {
        if (f.key.id != ADF_ID_NW_CRYSTAL || ++seen < crystals * (size_t)(k + 1) / (size_t)p->used)
            continue;
        p->part[k].at = at;
        p->part[k].size = f.offset + f.key.length - at;
        at = f.offset + f.key.length;
        k++;
    }
    p->part[k].at = at;
    p->part[k].size = size - at;
}

/* After the parts (no thread uses the GPU): a GPU block that failed in a
 * part's workspace is given up as psa_block_search gives it up with one
 * workspace, and a GPU whose searches failed is freed. */
static void give_up_failed(psa_parts *p, const psa_setup *s)
{
    bool failed = false;
    for (int k = 0; k < p->used; k++)
        failed |= p->part[k].w.fell_back != 0;
    if (failed && s->engine->block)
        s->engine->block_be->close(s->engine);
    psa_engine_settle(s->engine);
}

psa_status psa_parts_run(psa_parts *p, const psa_setup *s, const void *in, unsigned size, bool copy, int pieces,
                         bool *bad, int *failed)
{
    cut(p, in, size, bad);
    pthread_mutex_lock(&p->mu);
    p->in = in;
    p->s = s;
    p->copy = copy;
    p->pieces = pieces < 0 ? 0 : pieces;
    p->turn = p->done = 0;
    p->generation++;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    finish(p, 0, work(p, 0));
    pthread_mutex_lock(&p->mu);
    while (p->done < p->used)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    give_up_failed(p, s);
    for (int k = 0; k < p->used; k++)
        if (p->part[k].st) {
            *failed = k;
            return p->part[k].st;
        }
    return PSA_OK;
}

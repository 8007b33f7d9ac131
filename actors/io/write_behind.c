/* write_behind.c: the ADF writer's I/O thread: staged blocks written in order by a thread of their own, the first error kept. */
#include "write_behind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ahead.h" /* adf_now */
#include "narval.h"

static void *writer_thread(void *arg)
{
    write_behind *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->busy && !w->quit)
            pthread_cond_wait(&w->cond, &w->lock);
        if (!w->busy)
            break;
        const uint8_t *at = w->stage[w->job_stage]; /* a job comes only while w->code is 0 (idle()) */
        pthread_mutex_unlock(&w->lock);
        char msg[sizeof w->msg];
        unsigned code = 0;
        double t0 = adf_now();
        for (int i = 0; i < w->n && !code; i++) {
            code = kit_output_write(w->out[i], at, w->size[i], msg, sizeof msg);
            at += w->size[i];
        }
        double took = adf_now() - t0;
        pthread_mutex_lock(&w->lock);
        w->writing += took;
        if (code) {
            w->code = code;
            memcpy(w->msg, msg, sizeof msg);
        }
        w->busy = false;
        pthread_cond_broadcast(&w->cond);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

unsigned wb_start(write_behind *w, char *msg, size_t len)
{
    if (w->running) {
        snprintf(msg, len, "the writing thread of the previous run is still running");
        return NARVAL_E_INTERNAL;
    }
    w->busy = w->quit = false;
    w->code = 0;
    w->fill = 0;
    w->writing = w->waited = 0;
    if (pthread_mutex_init(&w->lock, NULL) != 0)
        goto fail;
    if (pthread_cond_init(&w->cond, NULL) != 0) {
        pthread_mutex_destroy(&w->lock);
        goto fail;
    }
    if (pthread_create(&w->thread, NULL, writer_thread, w) != 0) {
        pthread_cond_destroy(&w->cond);
        pthread_mutex_destroy(&w->lock);
        goto fail;
    }
    w->running = true;
    return 0;
fail:
    snprintf(msg, len, "cannot start the writing thread");
    return NARVAL_E_NOMEM;
}

uint8_t *wb_stage(write_behind *w, size_t bytes, char *msg, size_t len)
{
    int s = w->fill;
    if (bytes > w->cap[s] || !w->stage[s]) { /* a block with nothing to write still needs a stage */
        uint8_t *grown = malloc(bytes ? bytes : 1); /* the old bytes are not needed: no realloc's copy */
        if (!grown) {
            snprintf(msg, len, "no memory for a block of %zu bytes to write", bytes);
            return NULL;
        }
        free(w->stage[s]);
        w->stage[s] = grown;
        w->cap[s] = bytes;
    }
    return w->stage[s];
}

/* Waits until the thread holds no job; the error it kept.  Called with the lock. */
static unsigned idle(write_behind *w, char *msg, size_t len)
{
    while (w->busy)
        pthread_cond_wait(&w->cond, &w->lock);
    if (w->code)
        snprintf(msg, len, "%s", w->msg);
    return w->code;
}

unsigned wb_submit(write_behind *w, kit_output *const *out, const size_t *size, int n, char *msg, size_t len)
{
    double t0 = adf_now();
    pthread_mutex_lock(&w->lock);
    unsigned code = idle(w, msg, len);
    w->waited += adf_now() - t0;
    if (!code) {
        w->job_stage = w->fill;
        w->n = n;
        for (int i = 0; i < n; i++) {
            w->out[i] = out[i];
            w->size[i] = size[i];
        }
        w->busy = true;
        w->fill ^= 1;
        pthread_cond_broadcast(&w->cond);
    }
    pthread_mutex_unlock(&w->lock);
    return code;
}

unsigned wb_stop(write_behind *w, char *msg, size_t len)
{
    if (!w->running)
        return 0;
    pthread_mutex_lock(&w->lock);
    unsigned code = idle(w, msg, len);
    w->quit = true;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
    w->running = false;
    return code;
}

void wb_free(write_behind *w)
{
    for (int s = 0; s < 2; s++) {
        free(w->stage[s]);
        w->stage[s] = NULL;
        w->cap[s] = 0;
    }
}

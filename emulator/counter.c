/* counter.c: one job at a time on a thread of its own (counter.h). */
#include "counter.h"

#include <pthread.h>
#include <stdlib.h>

struct emu_counter {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    emu_counter_fn *fn; /* the job in hand, NULL once it ran */
    void *ctx;
    int quit;
};

static void *work(void *arg)
{
    emu_counter *c = arg;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        while (!c->fn && !c->quit)
            pthread_cond_wait(&c->changed, &c->lock);
        if (!c->fn)
            break;
        emu_counter_fn *fn = c->fn;
        void *ctx = c->ctx;
        pthread_mutex_unlock(&c->lock);
        fn(ctx);
        pthread_mutex_lock(&c->lock);
        c->fn = NULL;
        pthread_cond_broadcast(&c->changed);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

emu_counter *emu_counter_start(void)
{
    emu_counter *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->changed, NULL);
    if (pthread_create(&c->thread, NULL, work, c) != 0) {
        pthread_cond_destroy(&c->changed);
        pthread_mutex_destroy(&c->lock);
        free(c);
        return NULL;
    }
    return c;
}

void emu_counter_post(emu_counter *c, emu_counter_fn *fn, void *ctx)
{
    pthread_mutex_lock(&c->lock);
    c->fn = fn;
    c->ctx = ctx;
    pthread_cond_broadcast(&c->changed);
    pthread_mutex_unlock(&c->lock);
}

void emu_counter_wait(emu_counter *c)
{
    pthread_mutex_lock(&c->lock);
    while (c->fn)
        pthread_cond_wait(&c->changed, &c->lock);
    pthread_mutex_unlock(&c->lock);
}

void emu_counter_stop(emu_counter *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    while (c->fn)
        pthread_cond_wait(&c->changed, &c->lock);
    c->quit = 1;
    pthread_cond_broadcast(&c->changed);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->thread, NULL);
    pthread_cond_destroy(&c->changed);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

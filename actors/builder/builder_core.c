/* builder_core.c: the event builder's buffer: merge by timestamp, close events whose window has passed, keep the rest for later blocks. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "builder_core.h"

void bld_init(bld_state *s, const bld_conf *c)
{
    memset(s, 0, sizeof *s);
    s->conf = *c;
}

void bld_free(bld_state *s)
{
    free(s->held);
    free(s->arena);
    memset(s, 0, sizeof *s);
}

void bld_pending_free(bld_pending *p)
{
    free(p->all);
    memset(p, 0, sizeof *p);
}

int bld_frame_of(const adf_frame *f, bld_frame *out)
{
    if (f->payload_size < ADF_PSA_GLOBAL)
        return -1;
    *out = (bld_frame){ f->data, f->key.length, f->key.event, f->key.timestamp, 0, adf_get_u16(f->payload) };
    return 0;
}

static int by_time(const void *pa, const void *pb)
{
    const bld_frame *a = pa, *b = pb;
    if (a->timestamp != b->timestamp)
        return a->timestamp < b->timestamp ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int merge(const bld_state *s, bld_frame *fresh, size_t n, bld_pending *p)
{
    size_t need = s->n_held + n;
    if (need > p->cap_all) {
        size_t cap = need + need / 2 + 64;
        bld_frame *all = realloc(p->all, cap * sizeof *all);
        if (!all)
            return -1;
        p->all = all;
        p->cap_all = cap;
    }
    qsort(fresh, n, sizeof *fresh, by_time);
    size_t i = 0, j = 0, k = 0;
    while (i < s->n_held || j < n) {
        if (j == n || (i < s->n_held && by_time(&s->held[i], &fresh[j]) < 0))
            p->all[k++] = s->held[i++];
        else
            p->all[k++] = fresh[j++];
    }
    p->n_all = k;
    return 0;
}

/* The end of the event starting at all[i]: frames within the window, one per crystal. */
static size_t event_end(const bld_state *s, const bld_pending *p, size_t i)
{
    size_t j = i + 1;
    while (j < p->n_all && p->all[j].timestamp - p->all[i].timestamp <= s->conf.window) {
        bool seen = false;
        for (size_t k = i; k < j && !seen; k++)
            seen = p->all[k].crystal == p->all[j].crystal;
        if (seen)
            break;
        j++;
    }
    return j;
}

static bool window_passed(const bld_state *s, uint64_t latest, uint64_t start)
{
    return latest > start && latest - start > s->conf.window && latest - start - s->conf.window > s->conf.delay;
}

static void write_event(adf_writer *w, const bld_pending *p, size_t i, size_t j)
{
    adf_begin(w, ADF_ID_EVENT_DATA_PSA, p->all[i].event, p->all[i].timestamp);
    for (size_t k = i; k < j; k++)
        adf_put_frame(w, p->all[k].data, p->all[k].length);
    adf_end(w); /* a failure stays in w->status */
}

int bld_block(const bld_state *s, bld_frame *fresh, size_t n_fresh, bool flush, adf_writer *w,
              bld_pending *p)
{
    memset(&p->delta, 0, sizeof p->delta);
    p->latest = s->latest;
    p->closed_any = s->closed_any;
    p->closed_until = s->closed_until;
    for (size_t i = 0; i < n_fresh; i++) {
        fresh[i].seq = s->next_seq + i;
        if (fresh[i].timestamp > p->latest)
            p->latest = fresh[i].timestamp;
        p->delta.late += s->closed_any && (fresh[i].timestamp <= s->closed_until ||
                                           fresh[i].timestamp - s->closed_until <= s->conf.window);
    }
    p->delta.frames = n_fresh;
    if (merge(s, fresh, n_fresh, p) != 0)
        return -1;
    size_t i = 0;
    while (i < p->n_all) {
        bool due = flush || window_passed(s, p->latest, p->all[i].timestamp);
        bool forced = !due && p->n_all - i > s->conf.max_held;
        if (!due && !forced)
            break;
        size_t j = event_end(s, p, i);
        write_event(w, p, i, j);
        p->delta.events++;
        p->delta.forced += forced;
        p->delta.fold[(j - i < BLD_FOLD_BINS ? j - i : BLD_FOLD_BINS) - 1]++;
        p->closed_any = true;
        p->closed_until = p->all[i].timestamp;
        i = j;
    }
    p->closed = i;
    return 0;
}

/* The clocks and counts of p onto s (what a commit and a flush both apply). */
static void advance(bld_state *s, const bld_pending *p)
{
    s->next_seq += p->delta.frames;
    s->latest = p->latest;
    s->closed_any = p->closed_any;
    s->closed_until = p->closed_until;
    s->counts.frames += p->delta.frames;
    s->counts.events += p->delta.events;
    s->counts.late += p->delta.late;
    s->counts.forced += p->delta.forced;
    for (int b = 0; b < BLD_FOLD_BINS; b++)
        s->counts.fold[b] += p->delta.fold[b];
}

void bld_flushed(const bld_state *s, const bld_pending *p, bld_state *out)
{
    assert(p->closed == p->n_all);
    bld_state next = { .conf = s->conf, .next_seq = s->next_seq, .counts = s->counts };
    advance(&next, p);
    *out = next;
}

int bld_commit(bld_state *s, bld_pending *p)
{
    size_t n = p->n_all - p->closed, bytes = 0;
    for (size_t k = p->closed; k < p->n_all; k++)
        bytes += p->all[k].length;
    bld_frame *held = n > s->cap_held ? malloc((n + n / 2 + 16) * sizeof *held) : NULL;
    uint8_t *arena = malloc(bytes ? bytes : 1);
    if ((n > s->cap_held && !held) || !arena) {
        free(held);
        free(arena);
        return -1;
    }
    if (held) {
        free(s->held);
        s->held = held;
        s->cap_held = n + n / 2 + 16;
    }
    size_t at = 0;
    for (size_t k = 0; k < n; k++) {
        bld_frame f = p->all[p->closed + k];
        memcpy(arena + at, f.data, f.length);
        f.data = arena + at;
        at += f.length;
        s->held[k] = f;
    }
    free(s->arena);
    s->arena = arena;
    s->arena_used = at;
    s->arena_cap = bytes;
    s->n_held = n;
    advance(s, p);
    return 0;
}

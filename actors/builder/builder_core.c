/* builder_core.c: the event builder's buffer: merge by timestamp, close events whose window every source has passed, keep the rest for later blocks. */
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
    free(s->src);
    free(s->held);
    free(s->arena);
    memset(s, 0, sizeof *s);
}

void bld_pending_free(bld_pending *p)
{
    free(p->slot);
    free(p->src);
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
    if (a->crystal != b->crystal)
        return a->crystal < b->crystal ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Whether frames are already in by_time's order: a producer's stream most
 * often is (one crystal's, or a chain's replayed in time order), and then
 * sorting it was most of the builder's time. */
static bool in_order(const bld_frame *f, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (by_time(&f[i - 1], &f[i]) > 0)
            return false;
    return true;
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
    if (n && !in_order(fresh, n)) /* fresh is NULL before the first data frame */
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

/* The source of crystal c in p->src, added (at 0, not synchronised) when
 * absent; NULL when out of memory.  Found through p->slot: a binary search
 * per frame was a third of the builder's time. */
static bld_source *source_of(bld_pending *p, uint16_t c)
{
    if (p->slot[c])
        return &p->src[p->slot[c] - 1];
    /* absent (slot[c] == 0): its place in the sorted sources */
    size_t lo = 0, hi = p->n_src;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->src[mid].crystal < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (p->n_src == p->cap_src) {
        size_t cap = 2 * p->cap_src + 16;
        bld_source *src = realloc(p->src, cap * sizeof *src);
        if (!src)
            return NULL;
        p->src = src;
        p->cap_src = cap;
    }
    memmove(p->src + lo + 1, p->src + lo, (p->n_src - lo) * sizeof *p->src);
    p->src[lo] = (bld_source){ .crystal = c };
    p->n_src++;
    for (size_t k = lo; k < p->n_src; k++)
        p->slot[p->src[k].crystal] = (uint32_t)k + 1;
    return &p->src[lo];
}

static void reach(bld_source *x, uint64_t timestamp)
{
    if (timestamp > x->progress)
        x->progress = timestamp;
}

/* p's sources: s's, then the listed crystals, the marks and the fresh frames. */
static int take_progress(const bld_state *s, const bld_frame *fresh, size_t n, const bld_mark *marks,
                         size_t n_marks, bld_pending *p)
{
    if (s->n_src > p->cap_src) {
        bld_source *src = realloc(p->src, s->n_src * sizeof *src);
        if (!src)
            return -1;
        p->src = src;
        p->cap_src = s->n_src;
    }
    if (!p->slot && !(p->slot = calloc(UINT16_MAX + 1, sizeof *p->slot)))
        return -1;
    for (size_t i = 0; i < p->n_src; i++) /* the previous block's sources */
        p->slot[p->src[i].crystal] = 0;
    if (s->n_src)
        memcpy(p->src, s->src, s->n_src * sizeof *p->src);
    p->n_src = s->n_src;
    for (size_t i = 0; i < p->n_src; i++)
        p->slot[p->src[i].crystal] = (uint32_t)i + 1;
    bld_source *x;
    for (size_t i = 0; i < s->conf.n_crystals; i++) {
        if (!(x = source_of(p, s->conf.crystals[i])))
            return -1;
        x->synced = true;
    }
    for (size_t i = 0; i < n_marks; i++) {
        if (!(x = source_of(p, marks[i].crystal)))
            return -1;
        x->synced = true;
        reach(x, marks[i].timestamp);
    }
    for (size_t i = 0; i < n; i++) {
        if (!(x = source_of(p, fresh[i].crystal)))
            return -1;
        reach(x, fresh[i].timestamp);
    }
    return 0;
}

/* How far every source has come: the least progress of the synchronised
 * sources and of the data-only crystals taken together (the latest of
 * those).  A listed crystal that has delivered nothing is at 0, before
 * every frame: it holds every event. */
static uint64_t sources_floor(const bld_pending *p)
{
    uint64_t least = UINT64_MAX, pool = 0;
    bool in_pool = false;
    for (size_t i = 0; i < p->n_src; i++) {
        const bld_source *x = &p->src[i];
        if (x->synced)
            least = x->progress < least ? x->progress : least;
        else {
            pool = x->progress > pool ? x->progress : pool;
            in_pool = true;
        }
    }
    return in_pool && pool < least ? pool : least;
}

/* Every source is past start + window + delay: nothing can join the event starting at start. */
static bool window_passed(const bld_state *s, uint64_t floor, uint64_t start)
{
    return floor > start && floor - start > s->conf.window && floor - start - s->conf.window > s->conf.delay;
}

static void write_event(adf_writer *w, const bld_pending *p, size_t i, size_t j)
{
    adf_begin(w, ADF_ID_EVENT_DATA_PSA, p->all[i].event, p->all[i].timestamp);
    for (size_t k = i; k < j; k++)
        adf_put_frame(w, p->all[k].data, p->all[k].length);
    adf_end(w); /* a failure stays in w->status */
}

int bld_block(const bld_state *s, bld_frame *fresh, size_t n_fresh, const bld_mark *marks, size_t n_marks,
              bool flush, adf_writer *w, bld_pending *p)
{
    memset(&p->delta, 0, sizeof p->delta);
    p->closed_any = s->closed_any;
    p->closed_until = s->closed_until;
    for (size_t i = 0; i < n_fresh; i++) {
        fresh[i].seq = s->next_seq + i;
        p->delta.late += s->closed_any && (fresh[i].timestamp <= s->closed_until ||
                                           fresh[i].timestamp - s->closed_until <= s->conf.window);
    }
    p->delta.frames = n_fresh;
    if (take_progress(s, fresh, n_fresh, marks, n_marks, p) != 0 || merge(s, fresh, n_fresh, p) != 0)
        return -1;
    uint64_t floor = sources_floor(p);
    size_t i = 0;
    while (i < p->n_all) {
        bool due = flush || window_passed(s, floor, p->all[i].timestamp);
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
    bld_source *src = p->n_src > s->cap_src ? malloc(p->n_src * sizeof *src) : NULL;
    uint8_t *arena = malloc(bytes ? bytes : 1);
    if ((n > s->cap_held && !held) || (p->n_src > s->cap_src && !src) || !arena) {
        free(held);
        free(src);
        free(arena);
        return -1;
    }
    if (src) {
        free(s->src);
        s->src = src;
        s->cap_src = p->n_src;
    }
    if (p->n_src)
        memcpy(s->src, p->src, p->n_src * sizeof *s->src);
    s->n_src = p->n_src;
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

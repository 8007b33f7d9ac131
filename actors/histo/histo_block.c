/* histo_block.c: a block's frames decoded on several threads (OpenMP), each staging into a decoder of its own, and the frames they refused. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "histo_block.h"

/* Fewer frames than this per thread: the team's start costs more than it saves. */
#define FRAMES_PER_THREAD 128
/* Frames handed out at a time: threads that another process delays take fewer. */
#define FRAMES_PER_CHUNK 32
#define CACHE_LINE 64

/* Zeroed memory on cache lines of its own: each put writes its stage's
 * count, and two threads' stages on one line made two threads slower than
 * one (2-core VM: histo 0.05 -> 0.3-1.7 s). */
static void *own_lines(size_t bytes)
{
    size_t whole = (bytes + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE;
    void *p = aligned_alloc(CACHE_LINE, whole);
    if (p)
        memset(p, 0, whole);
    return p;
}

static void free_decoder(histo_decoder *d, size_t n_decl)
{
    for (size_t k = 0; d->stage && k < n_decl; k++)
        histo_stage_free(&d->stage[k]);
    free(d->stage);
}

histo_status histo_block_init(histo_block *b, const histo_spec *spec, int threads)
{
    *b = (histo_block){ .spec = spec, .threads = threads < 1 ? 1 : threads };
    b->dec = calloc((size_t)b->threads, sizeof *b->dec);
    b->refused = calloc((size_t)b->threads, sizeof *b->refused);
    if (!b->dec || !b->refused)
        goto fail;
    for (int t = 0; t < b->threads; t++) {
        b->dec[t] = (histo_decoder){ .spec = spec, .stage = own_lines((spec->n_decl + 1) * sizeof *b->dec[t].stage) };
        if (!b->dec[t].stage)
            goto fail;
    }
    return HISTO_OK;
fail:
    histo_block_free(b);
    return HISTO_E_NOMEM;
}

void histo_block_free(histo_block *b)
{
    for (int t = 0; b->dec && t < b->threads; t++)
        free_decoder(&b->dec[t], b->spec->n_decl);
    for (int t = 0; b->refused && t < b->threads; t++)
        free(b->refused[t].v);
    free(b->dec);
    free(b->refused);
    free(b->faults.v);
    free(b->frame);
    *b = (histo_block){ 0 };
}

static int by_frame(const void *pa, const void *pb)
{
    const histo_fault *a = pa, *b = pb;
    return a->frame < b->frame ? -1 : a->frame > b->frame;
}

/* v, an array of *cap elements of `size` bytes, with room for element n:
 * v itself, or v moved into twice the room (*cap updated); NULL without
 * memory (v untouched). */
static void *room(void *v, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return v;
    size_t more = *cap ? 2 * *cap : 16;
    void *moved = realloc(v, more * size);
    if (moved)
        *cap = more;
    return moved;
}

static histo_status add_fault(histo_faults *l, const histo_fault *f)
{
    histo_fault *v = room(l->v, l->n, &l->cap, sizeof *v);
    if (!v)
        return HISTO_E_NOMEM;
    l->v = v;
    l->v[l->n++] = *f;
    return HISTO_OK;
}

/* The top-level frames the validating iterator hands out (the caller's walk sees the same). */
static histo_status list_frames(histo_block *b, const void *buf, size_t size)
{
    adf_iter it;
    adf_frame f;
    b->n_frames = 0;
    adf_iter_init(&it, buf, size);
    while (adf_iter_next(&it, &f) > 0) {
        adf_frame *v = room(b->frame, b->n_frames, &b->cap_frames, sizeof *v);
        if (!v)
            return HISTO_E_NOMEM;
        b->frame = v;
        b->frame[b->n_frames++] = f;
    }
    return HISTO_OK;
}

/* Frames [lo, hi) into thread t's decoder; a refused frame becomes a fault
 * (its sentence copied).  Returns HISTO_E_NOMEM when a fault could not be
 * kept: the block cannot be told right. */
static histo_status decode_run(histo_block *b, int t, size_t lo, size_t hi)
{
    histo_decoder *d = &b->dec[t];
    for (size_t i = lo; i < hi; i++) {
        histo_status code = histo_decode(d, &b->frame[i]);
        if (!code)
            continue;
        histo_fault f = { .frame = i, .code = code };
        memcpy(f.msg, d->msg, sizeof f.msg);
        if (add_fault(&b->refused[t], &f) != HISTO_OK)
            return HISTO_E_NOMEM;
    }
    return HISTO_OK;
}

histo_status histo_block_decode(histo_block *b, const void *buf, size_t size)
{
    size_t n_decl = b->spec->n_decl;
    for (int t = 0; t < b->threads; t++) {
        for (size_t k = 0; k < n_decl; k++)
            b->dec[t].stage[k].n = 0;
        memset(b->dec[t].seen, 0, sizeof b->dec[t].seen);
        b->refused[t].n = 0;
    }
    b->faults.n = 0;
    if (list_frames(b, buf, size) != HISTO_OK)
        return HISTO_E_NOMEM;
    size_t want = b->n_frames / FRAMES_PER_THREAD, chunks = (b->n_frames + FRAMES_PER_CHUNK - 1) / FRAMES_PER_CHUNK;
    int threads = want < (size_t)b->threads ? (want ? (int)want : 1) : b->threads, lost = 0;
    if (threads == 1)
        lost = decode_run(b, 0, 0, b->n_frames) != HISTO_OK;
    else {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(| : lost)
        for (size_t c = 0; c < chunks; c++) {
            size_t lo = c * FRAMES_PER_CHUNK, hi = lo + FRAMES_PER_CHUNK < b->n_frames ? lo + FRAMES_PER_CHUNK : b->n_frames;
            lost |= decode_run(b, omp_get_thread_num(), lo, hi) != HISTO_OK;
        }
    }
    if (lost)
        return HISTO_E_NOMEM;
    for (int t = 0; t < b->threads; t++)
        for (size_t i = 0; i < b->refused[t].n; i++)
            if (add_fault(&b->faults, &b->refused[t].v[i]) != HISTO_OK)
                return HISTO_E_NOMEM;
    if (b->faults.n > 1) /* the threads took chunks as they came: back in frame order */
        qsort(b->faults.v, b->faults.n, sizeof *b->faults.v, by_frame);
    return HISTO_OK;
}

const histo_fault *histo_block_fault(const histo_block *b, size_t i, size_t *cursor)
{
    if (*cursor < b->faults.n && b->faults.v[*cursor].frame == i)
        return &b->faults.v[(*cursor)++];
    return NULL;
}

histo_status histo_block_take(histo_block *b, histo_engine *e, uint64_t seen[HISTO_SEEN_KINDS])
{
    for (int t = 0; t < b->threads; t++) {
        if (histo_engine_take(e, b->dec[t].stage) != HISTO_OK)
            return HISTO_E_NOMEM;
        for (int k = 0; k < HISTO_SEEN_KINDS; k++)
            seen[k] += b->dec[t].seen[k];
    }
    return HISTO_OK;
}

/* ahead.c: bulk reads in parallel parts (pread), and a file's next one read ahead by a thread of its own. */
#include "ahead.h"

#include "adf.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define AHEAD_PART (2u << 20)   /* at most; less when threads would be left without a part */
#define AHEAD_GRAIN (64u << 10)
#define AHEAD_PARTS 128         /* at most, per request */
#define AHEAD_COPY (1u << 20)   /* a copy thread's share of a take, at a time */

/* The size of a read's parts: AHEAD_PART, or less (whole grains) so that each thread has one. */
static size_t part_size(size_t want, unsigned threads)
{
    size_t share = (want / threads + AHEAD_GRAIN - 1) / AHEAD_GRAIN * AHEAD_GRAIN;
    return share < AHEAD_PART ? share : AHEAD_PART;
}

/* One thread copies out of the page cache at about 4-5 GB/s, less than the
 * replay chain asks of its reader: several read a request's parts. */
long long adf_read_parts(int fd, uint8_t *buf, size_t want, uint64_t at, unsigned threads)
{
    if (want == 0)
        return 0;
    size_t part = part_size(want, threads), parts = (want + part - 1) / part, got[AHEAD_PARTS];
    if (parts > AHEAD_PARTS)
        parts = AHEAD_PARTS;
    int failed = 0;
#pragma omp parallel for num_threads(threads) schedule(static, 1) reduction(| : failed)
    for (size_t i = 0; i < parts; i++) {
        size_t from = i * part, len = from + part > want ? want - from : part;
        size_t have = 0;
        while (have < len) {
            ssize_t n = pread(fd, buf + from + have, len - have, (off_t)(at + from + have));
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                failed = 1;
            if (n <= 0)
                break;
            have += (size_t)n;
        }
        got[i] = have;
    }
    if (failed)
        return -1;
    size_t total = 0;
    for (size_t i = 0; i < parts; i++) {
        total += got[i];
        if (got[i] < part)
            break;
    }
    return (long long)total;
}

size_t adf_whole_frames(const uint8_t *buf, size_t got, size_t cap, size_t *n, uint32_t *starts, size_t room)
{
    size_t u = 0;
    *n = 0;
    while (u + ADF_KEY_SIZE <= got && (!starts || *n < room)) {
        uint32_t length = adf_get_u32(buf + u);
        if (length < ADF_KEY_SIZE || length > cap - u || length > got - u)
            break;
        if (adf_id_is_composite(adf_get_u32(buf + u + 4)) && adf_validate(buf + u, length, NULL, NULL) != ADF_OK)
            break;
        if (starts)
            starts[*n] = (uint32_t)u;
        u += length;
        (*n)++;
    }
    return u;
}

/* The whole frames of the bytes just read, and where each starts; not
 * found (the call walks) when there were more frames than room for their
 * starts.  The room starts at a frame a KiB (the 64 MB blocks of traces, 5
 * KB a frame, need 12,400) and after such a read becomes what the frames
 * seen so far promise for a whole read, and a quarter more. */
static void find_frames(adf_ahead *a, long long got)
{
    a->whole = SIZE_MAX;
    if (got != (long long)a->want || a->want > UINT32_MAX)
        return;
    size_t room = a->cap_starts ? a->cap_starts : a->want / 1024 + 64, most = a->want / ADF_KEY_SIZE + 1;
    if (a->grow)
        room = (size_t)((double)a->grow * 1.25 + 64);
    room = room < most ? room : most;
    a->grow = 0;
    if (room > a->cap_starts) {
        free(a->starts);
        a->starts = malloc(room * sizeof *a->starts);
        a->cap_starts = a->starts ? room : 0;
    }
    if (!a->starts)
        return;
    size_t whole = adf_whole_frames(a->buf, a->want, a->want, &a->frames, a->starts, a->cap_starts);
    if (a->frames < a->cap_starts || whole + ADF_KEY_SIZE > a->want)
        a->whole = whole;
    else /* the frames a whole read would hold at this one's density */
        a->grow = (size_t)((double)a->frames * (double)a->want / (double)(whole ? whole : 1));
}

static void *ahead_thread(void *arg)
{
    adf_ahead *a = arg;
    pthread_mutex_lock(&a->lock);
    for (;;) {
        while (!a->busy && !a->quit)
            pthread_cond_wait(&a->done, &a->lock);
        if (!a->busy)
            break;
        int fd = a->fd;
        uint64_t at = a->at;
        size_t want = a->want;
        unsigned threads = a->threads;
        pthread_mutex_unlock(&a->lock);
        long long got = adf_read_parts(fd, a->buf, want, at, threads); /* the buffer is the thread's while busy */
        find_frames(a, got);
        pthread_mutex_lock(&a->lock);
        a->got = got;
        a->busy = 0;
        pthread_cond_broadcast(&a->done);
    }
    pthread_mutex_unlock(&a->lock);
    return NULL;
}

/* The thread, started with every signal blocked: a host's handlers run on its own threads. */
static int start(adf_ahead *a)
{
    sigset_t all, old;
    if (pthread_mutex_init(&a->lock, NULL) != 0)
        return -1;
    if (pthread_cond_init(&a->done, NULL) != 0) {
        pthread_mutex_destroy(&a->lock);
        return -1;
    }
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&a->thread, NULL, ahead_thread, a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        pthread_cond_destroy(&a->done);
        pthread_mutex_destroy(&a->lock);
        return -1;
    }
    a->running = 1;
    return 0;
}

/* Waits until no read is in flight.  Called with the lock. */
static void idle(adf_ahead *a)
{
    while (a->busy)
        pthread_cond_wait(&a->done, &a->lock);
}

double adf_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int adf_ahead_ask(adf_ahead *a, int fd, uint64_t at, size_t want, unsigned threads)
{
    if (!a->running && start(a) != 0)
        return -1;
    pthread_mutex_lock(&a->lock);
    idle(a);
    a->held = 0;
    if (want > a->cap) {
        adf_block_free(a->buf); /* what it held is not needed: no realloc's copy */
        a->buf = adf_block_alloc(want);
        a->cap = a->buf ? want : 0;
    }
    if (a->buf) {
        a->fd = fd;
        a->at = at;
        a->want = want;
        a->threads = threads;
        a->busy = a->held = 1;
        pthread_cond_broadcast(&a->done);
    }
    pthread_mutex_unlock(&a->lock);
    return a->held ? 0 : -1;
}

/* One piece of a take: n bytes from s to d.  The block goes on to the
 * host, whose actors read its keys and a few channels of each frame (the
 * keys fetched again below) and whose GPU actors send it to the device: so
 * its lines are written by streaming stores, which neither read the
 * destination's lines first nor push out of the caches what the other
 * actors hold there (H200, the replay chain's 15 GB: 0.34-0.42 s against
 * 0.41-0.59 s by memcpy, docs/PERF.md).  memcpy where SSE2 is missing. */
static void take_piece(uint8_t *d, const uint8_t *s, size_t n)
{
    size_t i = 0;
#ifdef __SSE2__
    for (; i < n && ((uintptr_t)(d + i) & 15); i++)
        d[i] = s[i];
    for (; i + 64 <= n; i += 64) {
        __m128i x0 = _mm_loadu_si128((const __m128i *)(s + i)), x1 = _mm_loadu_si128((const __m128i *)(s + i + 16));
        __m128i x2 = _mm_loadu_si128((const __m128i *)(s + i + 32)), x3 = _mm_loadu_si128((const __m128i *)(s + i + 48));
        _mm_stream_si128((__m128i *)(d + i), x0);
        _mm_stream_si128((__m128i *)(d + i + 16), x1);
        _mm_stream_si128((__m128i *)(d + i + 32), x2);
        _mm_stream_si128((__m128i *)(d + i + 48), x3);
    }
    _mm_sfence(); /* the streamed lines are seen by every thread after the loop's barrier */
#endif
    memcpy(d + i, s + i, n - i);
}

long long adf_ahead_take(adf_ahead *a, uint64_t at, uint8_t *buf, size_t want, unsigned threads, size_t *whole,
                         size_t *frames)
{
    if (!a->running)
        return -1;
    pthread_mutex_lock(&a->lock);
    if (a->busy) {
        double t0 = adf_now();
        idle(a);
        a->waited += adf_now() - t0;
    }
    int usable = a->held && a->at == at && want <= a->want && a->got == (long long)a->want;
    a->held = 0;
    pthread_mutex_unlock(&a->lock);
    a->taken += usable;
    a->missed += !usable;
    if (!usable)
        return -1;
    size_t pieces = (want + AHEAD_COPY - 1) / AHEAD_COPY;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < pieces; i++) {
        size_t from = i * AHEAD_COPY;
        take_piece(buf + from, a->buf + from, from + AHEAD_COPY > want ? want - from : AHEAD_COPY);
    }
    if (want == a->want && a->whole != SIZE_MAX) {
        *whole = a->whole;
        *frames = a->frames;
        for (size_t i = 0; i < a->frames; i++)
            __builtin_prefetch(buf + a->starts[i]);
    }
    return (long long)want;
}

void adf_ahead_free(adf_ahead *a)
{
    if (a->running) {
        pthread_mutex_lock(&a->lock);
        idle(a);
        a->quit = 1;
        pthread_cond_broadcast(&a->done);
        pthread_mutex_unlock(&a->lock);
        pthread_join(a->thread, NULL);
        pthread_cond_destroy(&a->done);
        pthread_mutex_destroy(&a->lock);
    }
    adf_block_free(a->buf);
    free(a->starts);
    memset(a, 0, sizeof *a);
}

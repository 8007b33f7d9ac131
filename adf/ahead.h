/* ahead.h: a file's next bulk read, done by a thread of its own while the caller works on the block before (libadf's own, not installed). */
#ifndef NARWHAL_ADF_AHEAD_H
#define NARWHAL_ADF_AHEAD_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A producer's call copies its block out of the page cache and then walks
 * its frames, while every other actor of a sequential chain waits.  On the
 * H200's host (64 MB blocks of 5 KB frames) the copy took 0.6-0.8 s of the
 * replay chain's 15 GB and the first walk 0.27-0.34 s: about 100 ns a
 * frame, a memory latency at each key the copy's threads wrote.  With
 * read-ahead this thread reads the bytes that follow the block just
 * delivered into a buffer of the file's own, beside the host's other
 * calls, and finds their whole frames there (adf_whole_frames); the next
 * call copies the bytes (no faster than pread there, 0.45-0.55 s; by
 * streaming stores since session 17, 0.34-0.42 s), takes
 * the frames found and fetches their keys' lines, so that its walks do not
 * wait.  The offset moves in the call, as without it, and the frames,
 * errors and offsets a caller sees do not change.  A read that met the end
 * of the file is not used (the file may have grown since): the call reads
 * itself.
 *
 *   after a bulk read ends at offset O:  adf_ahead_ask(a, fd, O, cap, threads)
 *   the next bulk read at O:             got = adf_ahead_take(a, O, buf, cap, threads, &whole, &frames);
 *                                        got < 0: read as without it
 *   close:                               adf_ahead_free(a)
 */
typedef struct adf_ahead {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t done;
    int running, busy, quit;
    int fd;
    unsigned threads;
    uint8_t *buf;
    size_t cap;
    uint64_t at;   /* the read asked: want bytes at `at` */
    size_t want;
    long long got; /* its bytes read without a gap (adf_read_parts), once not busy */
    int held;      /* the buffer holds the read asked (not taken yet) */
    size_t whole, frames; /* of its bytes, the whole frames (adf_whole_frames with cap `want`) */
    uint32_t *starts;     /* where each of those frames starts */
    size_t cap_starts;
    size_t grow;          /* when the last read had more frames than cap_starts: how many it promised */
    unsigned long long taken, missed; /* takes that copied, takes that gave -1 */
    double waited; /* seconds takes waited for a read in flight */
} adf_ahead;

/* The bytes of the whole frames at the start of buf[0, got) that fit in
 * cap and whose composites' sub-frames are well formed (the first that is
 * not is the next call's to report, through the frame-by-frame path); *n
 * their count.  With starts, each one's offset in buf, and no more than
 * `room` frames. */
size_t adf_whole_frames(const uint8_t *buf, size_t got, size_t cap, size_t *n, uint32_t *starts, size_t room);

/* Reads buf[0, want) from fd at `at` with pread in parts on `threads`
 * threads; the bytes read from `at` on without a gap (fewer at the end of
 * the file), or -1 when pread failed or cannot be used on fd (a pipe). */
long long adf_read_parts(int fd, uint8_t *buf, size_t want, uint64_t at, unsigned threads);

/* Starts reading `want` bytes of fd at `at` (after the read before is
 * done).  0, or -1 when there is no memory or no thread for it: nothing is
 * asked then, and the next take gives -1. */
int adf_ahead_ask(adf_ahead *a, int fd, uint64_t at, size_t want, unsigned threads);

/* Waits for the read asked; when it was of `at` and got all its bytes,
 * copies the first `want` of them into buf (want no more than asked) and
 * returns want; else -1.  The read is spent either way.  When want is what
 * was asked, *whole and *frames are adf_whole_frames(buf, want, want, ...),
 * found by the thread, and the lines that hold the frames' keys are
 * fetched into this thread's cache (the copy's threads wrote them: the
 * caller's walks over the keys would wait on each); else they are left
 * as they were. */
long long adf_ahead_take(adf_ahead *a, uint64_t at, uint8_t *buf, size_t want, unsigned threads, size_t *whole,
                         size_t *frames);

/* Seconds on a monotonic clock. */
double adf_now(void);

/* Waits for the read in flight, ends the thread and frees the buffer; a
 * zeroed adf_ahead is fine. */
void adf_ahead_free(adf_ahead *a);

#endif

/* psa_block.h: one input block's PSA: its data:crystal frames decoded, searched round by round, written as data:psa. */
#ifndef NARWHAL_PSA_BLOCK_H
#define NARWHAL_PSA_BLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "adf.h"
#include "psa_engine.h"
#include "psa_event.h"
#include "psa_status.h"

/* What the searches of a block need, fixed at initialise. */
typedef struct psa_setup {
    const det_basis *basis;
    const psa_layout *layout;
    const psa_timing *timing;
    psa_engine *engine;
    psa_warn_fn *warn; /* where the block's warnings go (psa_status.h), with log_ctx */
    void *log_ctx;
    int threads;       /* OpenMP threads of the host's loops (psa_block_threads at initialise) */
    int neighbour_passes; /* Neighbours iterate: passes at most (0: off; psa_block_search says what they do) */
} psa_setup;

/* Where process_block's time goes (host clock, summed over the run): the
 * phases of psa_block_decode and psa_block_search, then the output (psa.c). */
typedef enum psa_phase {
    PSA_PHASE_DECODE, PSA_PHASE_ALIGN, PSA_PHASE_GATHER, PSA_PHASE_SEARCH, PSA_PHASE_REFINE,
    PSA_PHASE_SUBTRACT, PSA_PHASE_WRITE, PSA_PHASES
} psa_phase;

const char *psa_phase_name(psa_phase p);

/* OpenMP threads of the host's loops: Threads when set; else every core,
 * except with the whole block on the GPU, where the host's work (copying,
 * decoding, writing) is bound by memory bandwidth: half the cores, at most
 * 8, leaving the rest to the chain's other actors (pipelined, 16 threads
 * made these loops wait for threads the other actors had taken). */
int psa_block_threads(const psa_setup *s);
double psa_now(void);

/* The block's working memory, kept from block to block. */
typedef struct psa_block {
    psa_event *ev;     /* one per top-level data:crystal frame, in order */
    size_t n_ev, cap_ev;
    size_t n_sized;    /* of those, the frames whose size fits their counts (psa_event_sized): the
                          only ones searched, so what their searches reserve follows the bytes */
    adf_frame *frame;  /* those frames (their traces are read from the input block) */
    size_t cap_frame;
    size_t *out_at;    /* psa_block_emit: where each frame's output starts */
    size_t cap_out_at;
    float *resid;
    size_t cap_resid;
    psa_batch batch;
    uint32_t *owner;   /* the event of each search of the batch */
    size_t cap_owner;
    uint64_t searches, refined, neighboured, fell_back; /* neighboured: searches of the neighbour passes */
    double phase_s[PSA_PHASES];  /* summed over blocks until psa_block_free */
    uint64_t in_place;           /* blocks not copied: pinned by the host (psa_block_begin); until psa_block_free */
    double list_s, send_s;       /* of the decode phase: listing the frames (and the copy's room); sending to the GPU (a block pinned by the host whole, else its pieces) */
    /* GPUWork block: the events with net-charge segments as the GPU holds
     * them (the device workspace's pinned room, not the block's to free)
     * and their events' indices, a round's searches and their events */
    struct pb_event *gev;
    uint32_t *gidx;
    size_t cap_gidx;
    gs_query *gq;
    uint32_t *gowner;
    size_t cap_gq, cap_gowner;
    /* the block being decoded (psa_block_begin): its bytes, its copy (NULL:
     * none), the events decoded so far; on the GPU, the events sent there */
    const uint8_t *in;
    uint8_t *copy, *copy_buf;
    size_t copy_cap;
    void (*copy_free)(void *); /* copy_buf's: free, or the GPU block's for pinned memory */
    unsigned size;
    size_t decoded, n_gev;
    bool on_gpu;
    bool sent;         /* on the GPU: the whole block went there before it was listed (pinned by the host) */
    void *gpu;         /* its own device workspace (psa_block_gpu_fork); NULL: the engine's */
    int gpu_rc;        /* the first failure sending the block to the GPU, 0: none */
    char gpu_msg[256];
} psa_block;

/* Decoding a block, in parts when its host work should overlap the GPU's:
 * psa_block_begin lists the data:crystal frames of in (collection stops at
 * malformed framing: *bad is then set, and the frame loop reports it) and
 * makes room for their events; psa_block_decode_part decodes the events up
 * to `to` (in order, part after part) and, with the whole block on the GPU,
 * sends them there to be aligned while the host decodes the next part.
 * With copy, the block is copied on the way into the block's own buffer
 * (pinned where possible: the GPU's copies then run asynchronously), frame
 * by frame in parallel, and the events read the copy; not when the host's
 * buffer is pinned memory already (w->in_place counts those blocks): then,
 * with the whole block on the GPU, all its bytes go there at once, before
 * the frames are listed, and the parts send only their events.
 * psa_block_decode is begin and one part.  PSA_E_NOMEM, or PSA_OK. */
psa_status psa_block_begin(psa_block *w, const psa_setup *s, const void *in, unsigned size, bool *bad, bool copy);
/* The pieces a begun block is decoded in: `configured` when above 0; else
 * two where the whole block on the GPU has its pieces' bytes copied and
 * sent (each piece's upload and alignment then overlap the next one's
 * decoding), one where it went whole before it was listed (w->sent: on the
 * H200 a second piece no longer overlapped anything, docs/PERF.md) and on
 * the CPU. */
int psa_block_pieces(const psa_block *w, int configured);
void psa_block_decode_part(psa_block *w, const psa_setup *s, size_t to);
psa_status psa_block_decode(psa_block *w, const psa_setup *s, const void *in, unsigned size, bool *bad, bool copy);

/* Runs the decoded block's searches: round r searches every event's r-th
 * net-charge segment (highest energy first), the first round refines each
 * start time and searches again where it moved, and each hit's signal is
 * subtracted before the next round.  Net-charge segments that touch (one in
 * the other's mask: its transient signals lie in the other's channels) are
 * then searched again with neighbour_passes: pass after pass, round after
 * round, each such hit with every other hit of its event subtracted and its
 * whole mask compared (the other net-charge segments' channels included),
 * the traces updated as soon as a hit moves; an event goes on to the next
 * pass only while one of its hits moved.  With neighbour_passes, round r's
 * first search already compares the channels of the net-charge segments
 * found before it (their hits are subtracted).  The whole block on the GPU when
 * psa_block_gpu_open put it there (its failure is a warning, the GPU given up
 * and the block done again round by round), else round by round (the
 * engine's searches).  PSA_E_NOMEM, or PSA_OK. */
psa_status psa_block_search(psa_block *w, const psa_setup *s);

/* GPUWork block with the searches on the GPU: uploads what the blocks'
 * alignment, refinement and subtraction need (the engine keeps it), so that
 * psa_block_search does whole blocks there; msg says so, or why not (blocks
 * then run round by round).  Returns whether it is in use. */
bool psa_block_gpu_open(const psa_setup *s, char *msg, size_t len);
/* Gives w a device workspace of its own (stream and buffers; the basis and
 * tables the engine's), so that its blocks run on the GPU beside those of
 * the engine's workspace and of other such blocks (psa_parts.h): true, or
 * false with msg (w keeps the engine's).  psa_block_free frees it. */
bool psa_block_gpu_fork(psa_block *w, const psa_setup *s, char *msg, size_t len);
/* The GPU block's time on the device (from each upload to its answers) and
 * its steps, summed over the n workspaces w, as text; false when the block
 * is not on the GPU. */
bool psa_block_gpu_times(const psa_block *const *w, size_t n, const psa_setup *s, char *text, size_t len);

/* The output of a decoded and searched block whose framing is good (in:
 * its bytes): each data:crystal frame's data:psa (none for a rejected
 * one), every other frame as it is, in order; the sizes first, then the
 * frames, in parallel.  PSA_OK with *used set; PSA_E_OUTPUT_SIZE with *used
 * the size needed (nothing written); PSA_E_NOMEM; PSA_E_INTERNAL when a
 * data:psa frame did not take its computed size. */
psa_status psa_block_emit(psa_block *w, const psa_setup *s, const void *in, unsigned size, void *out,
                        unsigned out_size, size_t *used);

/* The size psa_block_emit needs for a decoded block of `size` bytes (known
 * before its searches: a frame's hits are its net-charge segments). */
size_t psa_block_output_size(const psa_block *w, unsigned size);

/* Writes event ev's data:psa frame. */
void psa_block_write(const psa_event *ev, const psa_setup *s, adf_writer *out);

void psa_block_free(psa_block *w);

/* ---- for the whole block's backend (psa_backend.h), which runs the same steps */

/* Round 0's start times: each event's best point tried at shifted starts;
 * where the start moves, the event is searched again, and where that search
 * finds another point, the start is tried again with it (at most
 * PSA_REFINE_PASSES times), so that start and point agree.  After the first
 * pass, a move of less than half a ShiftStep is kept without a search. */
enum { PSA_REFINE_PASSES = 3 };

/* Whether event ev's hit r is searched in pass `pass` (0: the rounds; 1 on:
 * the neighbour passes, which take only the events one of whose hits moved
 * in the pass before), and how many of its hits are subtracted for that
 * search (psa_event_use: their segments' channels are compared).  The CPU's
 * and the GPU block's rule. */
static inline int psa_block_searched(const psa_event *ev, int r, const psa_layout *l, int pass)
{
    return ev->n_net > r && (pass == 0 || psa_event_touches(ev, r, l));
}
/* Whether the neighbour passes take event ev: it is accepted and has hits that touch. */
static inline int psa_block_neighbours(const psa_event *ev, const psa_layout *l)
{
    int touch = 0;
    for (int r = 0; !ev->reject && r < ev->n_net && !touch; r++)
        touch = psa_event_touches(ev, r, l);
    return touch;
}
static inline int psa_block_subtracted(const psa_setup *s, int r, int pass)
{
    return pass ? DET_SEGMENTS : s->neighbour_passes ? r : 0;
}
/* Whether round r's searches in neighbour pass `pass` are local (PSA_LOCAL:
 * the layout's local lists, NeighbourRadius, around each hit's current
 * point), else the engine's mode over the whole segment: with local lists,
 * every search but the first pass's of the hits after the first (the lower
 * energies, whose point from the joint search on the coarse grid is the
 * least sure: searched locally from there, ring neighbours came out at
 * 2.14/2.09 mm RMS against 1.65/1.64 with every pass search whole; with
 * these whole, 1.75/1.72 at 6 mm, docs/PERF.md).  The CPU's and the GPU block's rule. */
static inline int psa_block_local(const psa_setup *s, int r, int pass)
{
    return s->layout->local_mm > 0 && pass >= 1 && (pass > 1 || r == 0);
}

/* Adds the time since *t to phase p and restarts *t. */
void psa_block_lap(psa_block *w, psa_phase p, double *t);
/* Where listed frame k ends in the block. */
size_t psa_block_frame_end(const psa_block *w, size_t k);
/* *p holds at least need elements of elem bytes (grown by realloc): 0, or -1 without memory. */
int psa_block_reserve(void **p, size_t *cap, size_t need, size_t elem);

#endif

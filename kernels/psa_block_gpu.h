/* psa_block_gpu.h: the C interface of the PSA's GPU block (kernels/psa_block.cu): a whole input block on the device, aligned, searched, refined and subtracted there. */
#ifndef NARWHAL_PSA_BLOCK_GPU_H
#define NARWHAL_PSA_BLOCK_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gridsearch_gpu.h"
#include "psa_trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * An event with net-charge segments as the device holds it.  The host fills
 * the inputs; the device writes shift, point, fom and hit_status, as the
 * CPU path (actors/psa/psa_block.c) computes them: the same kernel bodies
 * (psa_refine.h).
 */
typedef struct pb_event {
    uint64_t trace;     /* byte offset of its 37 x n_samples int16 ADC values in the block */
    double t0, shift;   /* trace samples: the start from the edge, and the refinement (0 in) */
    float per_kev;      /* 1 / gain */
    uint32_t n_samples, n_net;
    uint32_t before;    /* the device's: point[0] when the refinement last ran */
    uint8_t net[DET_SEGMENTS]; /* net-charge segments, highest energy first */
    uint8_t neighbours; /* 1: hits that touch: round 0 does not refine its start, the neighbour passes take it (psa_block.h) */
    uint8_t pad[3];
    float e[DET_SEGMENTS];
    uint32_t point[DET_SEGMENTS];
    float fom[DET_SEGMENTS];
    uint16_t hit_status[DET_SEGMENTS];
} pb_event;
GPU_LAYOUT(sizeof(pb_event) == 584 && offsetof(pb_event, t0) == 8 && offsetof(pb_event, shift) == 16 &&
           offsetof(pb_event, per_kev) == 24 && offsetof(pb_event, n_samples) == 28 &&
           offsetof(pb_event, n_net) == 32 && offsetof(pb_event, before) == 36 &&
           offsetof(pb_event, net) == 40 && offsetof(pb_event, neighbours) == 76 && offsetof(pb_event, e) == 80 &&
           offsetof(pb_event, point) == 224 && offsetof(pb_event, fom) == 368 &&
           offsetof(pb_event, hit_status) == 512);

/* A segment's mask and its columns' basis points (psa_layout's: coarse
 * points first), its sparse coarse points (the joint pair search's seed:
 * their coarse indices, psa_pair_sparse's), and its local lists
 * (psa_layout's local_first and local: the neighbour passes' local
 * searches; NULL without them). */
typedef struct pb_segment {
    uint32_t n_points, n_mask, centre;
    uint8_t mask[PSA_MAX_MASK];
    uint32_t n_coarse;
    const uint32_t *point;
    const uint32_t *sparse;
    uint32_t n_sparse;
    uint32_t pad;
    const uint32_t *local_first, *local;
} pb_segment;
GPU_LAYOUT(sizeof(pb_segment) == 72 && offsetof(pb_segment, n_mask) == 4 &&
           offsetof(pb_segment, centre) == 8 && offsetof(pb_segment, mask) == 12 &&
           offsetof(pb_segment, n_coarse) == 28 && offsetof(pb_segment, point) == 32 &&
           offsetof(pb_segment, sparse) == 40 && offsetof(pb_segment, n_sparse) == 48 &&
           offsetof(pb_segment, local_first) == 56 && offsetof(pb_segment, local) == 64);

/* What pb_gpu_create uploads besides the search's resident layout. */
typedef struct pb_setup {
    uint32_t n_points, n_samples;  /* the basis: n_points x 37 x n_samples signals */
    const float *signal;
    const float *point_edge;       /* per point: its own edge (NaN: none) */
    pt_window window;
    double basis_edge, shift_step, half_step;
    int steps;                     /* shifts either side in the refinement's first pass */
    pb_segment seg[DET_SEGMENTS];
    const gs_pow *pow;             /* |d|^p of the joint pair search */
    const uint32_t *column;        /* per point: its column in its segment (psa_layout's), where a local search starts */
} pb_setup;
GPU_LAYOUT(sizeof(pb_setup) == 2688 && offsetof(pb_setup, n_samples) == 4 &&
           offsetof(pb_setup, signal) == 8 && offsetof(pb_setup, point_edge) == 16 &&
           offsetof(pb_setup, window) == 24 && offsetof(pb_setup, basis_edge) == 48 &&
           offsetof(pb_setup, shift_step) == 56 && offsetof(pb_setup, half_step) == 64 &&
           offsetof(pb_setup, steps) == 72 && offsetof(pb_setup, seg) == 80 && offsetof(pb_setup, pow) == 2672 &&
           offsetof(pb_setup, column) == 2680);

typedef struct pb_gpu pb_gpu;

/* Uploads the basis signals and the segments' tables beside search's layout
 * (which must stay alive).  GPU_OK, or a gpu_status and why. */
int pb_gpu_create(pb_gpu **out, gs_gpu *search, const pb_setup *s, char *msg, size_t len);
/* Another workspace on from's device (its own stream, events and buffers:
 * blocks in it run beside from's), reading from's resident basis and tables,
 * so from must outlive it.  GPU_OK, or a gpu_status and why. */
int pb_gpu_fork(pb_gpu **out, const pb_gpu *from, char *msg, size_t len);
void pb_gpu_destroy(pb_gpu *p);

/* A block goes to the device in parts, so that the host decodes the next
 * part while the device copies and aligns the last.  pb_gpu_begin makes room
 * for a block of `bytes` bytes and at most n events; the host writes the
 * events into pb_gpu_events' pinned room (valid until the next
 * pb_gpu_begin: they are uploaded from there, with no copy on the host);
 * pb_gpu_part sends bytes [at, at + bytes) of the block (host: the block's
 * start, best in pinned memory, gpu_host_alloc's or the host's, unchanged
 * until pb_gpu_results returned) and events [first, first + n) of that
 * room, whose traces lie in those bytes, and queues the alignment of their
 * traces at t0 + shift, without waiting; the parts come in order, and the
 * host leaves a part's events as they are once sent.  pb_gpu_loaded closes
 * the block's loading.  A block that lies in pinned memory already may go
 * whole first, before the host lists its frames (its bytes need no
 * decoding): pb_gpu_send queues the copy of all its `bytes` at host
 * (unchanged until pb_gpu_results returned), and pb_gpu_begin's `sent`
 * then tells the parts that their bytes are on their way. */
int pb_gpu_send(pb_gpu *p, const void *host, size_t bytes, char *msg, size_t len);
int pb_gpu_begin(pb_gpu *p, size_t bytes, size_t n, bool sent, char *msg, size_t len);
pb_event *pb_gpu_events(pb_gpu *p);
int pb_gpu_part(pb_gpu *p, const void *host, size_t at, size_t bytes, size_t first, size_t n, char *msg,
                size_t len);
int pb_gpu_loaded(pb_gpu *p, char *msg, size_t len);

/* Round r: the n searches q (sorted by segment; q[i].meas: where its values
 * go) of events owner[i] are filled from their aligned traces, searched
 * (adaptive or full), and answered as their events' hit r. */
int pb_gpu_search(pb_gpu *p, int r, const gs_query *q, const uint32_t *owner, size_t n, int adaptive,
                  char *msg, size_t len);

/* Refinement pass `pass` of every event (pass 0) or of those whose start it
 * moved and whose new search found another point (later passes); the events
 * whose start moved are searched again (round 0's searches, picked out on
 * the device: nothing waits for the host). */
int pb_gpu_refine(pb_gpu *p, int pass, char *msg, size_t len);

/* Hit r's signal times its energy leaves the aligned traces of every event with an r-th hit. */
int pb_gpu_subtract(pb_gpu *p, int r, char *msg, size_t len);

/*
 * The neighbour passes (actors/psa/psa_block.h, Neighbours iterate) of the
 * events with touching hits, after the rounds: each pair's joint search
 * (kernels/psa_pair_fom.h, a block per pair), then `passes` passes: the
 * start of the events still going refined on all their hits (joint: the
 * refinement is on), then round after round their touching hits searched
 * again with every other hit subtracted, the traces updated where a hit
 * moved; an event goes on to the next pass only while its start or a hit
 * moved.  Every pass is queued (a pass without events does nothing), the
 * events' marks stay on the device.  round[r]: round r's searches (sorted
 * by segment, measured values one after the other, as pb_gpu_search's) of
 * every event with neighbours whose hit r touches another; the passes pick
 * those of the events still going and search them as mode[pass - 1][r]
 * says (gridsearch_gpu.h's GS_*; GS_LOCAL: around each hit's current
 * point), the lists planned for `whole` (GS_FULL or GS_ADAPTIVE).  The
 * local rounds need no list: a pass's consecutive local rounds run as one
 * launch, a CUDA block per event going round after round (a round that
 * every pass searches locally may come with n = 0).  max_coarse: the most
 * coarse points of a segment.
 */
enum { PB_MAX_PASSES = 16 }; /* NeighbourPasses' most */
typedef struct pb_pair {
    uint32_t event;     /* of the block's events */
    uint8_t r, q;       /* its hits searched jointly (psa_pair_of's) */
    uint8_t pad[2];
} pb_pair;
GPU_LAYOUT(sizeof(pb_pair) == 8 && offsetof(pb_pair, r) == 4 && offsetof(pb_pair, q) == 5);
typedef struct pb_list {
    const gs_query *q;
    const uint32_t *owner;
    size_t n;
} pb_list;
GPU_LAYOUT(sizeof(pb_list) == 24 && offsetof(pb_list, owner) == 8 && offsetof(pb_list, n) == 16);
int pb_gpu_neighbours(pb_gpu *p, const pb_pair *pairs, size_t n_pairs, const pb_list *round, int rounds,
                      int passes, int joint, int whole, const uint8_t mode[PB_MAX_PASSES][DET_SEGMENTS],
                      uint32_t max_coarse, char *msg, size_t len);

/* Waits for the block and copies its n events back (shift, points, FoMs,
 * statuses) into pb_gpu_events' room and, when ev is elsewhere, into ev;
 * the number of searches the refinement made and the number the neighbour
 * passes made; GPU_FAIL when a search answered out of range. */
int pb_gpu_results(pb_gpu *p, pb_event *ev, size_t n, uint64_t *researched, uint64_t *neighboured, char *msg,
                   size_t len);

/* The device's time by step since pb_gpu_create (device clock, from each
 * block's upload to its answers; a step's time includes the device's wait
 * for the host before it).  The neighbour passes' steps: the lists' copy
 * (with the wait for the host's lists), the pair searches, the passes'
 * joint starts, local rounds, and their whole rounds' fills (picks
 * included), searches and answers. */
enum {
    PB_LOAD, PB_FILL, PB_SEARCH, PB_ANSWER, PB_REFINE, PB_SUBTRACT, PB_LISTS, PB_PAIRS, PB_JOINT, PB_NB_LOCAL,
    PB_NB_FILL, PB_NB_SEARCH, PB_NB_ANSWER, PB_RESULTS, PB_STEPS
};
void pb_gpu_steps(const pb_gpu *p, double seconds[PB_STEPS]);
const char *pb_step_name(int step);

#ifdef __cplusplus
}
#endif
#endif

/* tracker_events.h: a batch of events for the tracker: decoded from event:data:psa, data:psa or truth frames into lab-frame points. */
#ifndef NARWHAL_TRACKER_EVENTS_H
#define NARWHAL_TRACKER_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adf.h"
#include "array.h"
#include "tracker_status.h"
#include "tracker_truth.h"
#include "tracker_types.h"

/* data:tracked status values the tracker sets (adf.h: 0 = good). */
enum {
    TRACKER_STATUS_TOO_MANY = 1,  /* more than TR_MAX_POINTS points: not tracked, no gammas */
    TRACKER_STATUS_TRUNCATED = 2, /* more than ADF_TRACKED_MAX gammas: the lowest ranked left out */
};

/* A hit farther than this from its crystal's origin on any axis (a crystal
 * is about 90 mm long and 80 mm across), or with more energy, is not a
 * measurement: its frame is bad (the figure of merit of such a point
 * overflows to NaN on the CPU and the GPU alike). */
#define TRACKER_MAX_HIT_MM 1000.0f
#define TRACKER_MAX_HIT_KEV 1e6f

/* Core scaling (Tracker.conf CoreScale): a crystal's hit energies are
 * multiplied by e0 / (their sum) so that they add up to the core energy,
 * which has the better resolution and also holds the deposits of segments
 * under the PSA's threshold.  A ratio outside [MIN, MAX], or a core energy
 * that is not a positive finite number, leaves the hits as they are. */
#define TRACKER_CORE_RATIO_MIN 0.5
#define TRACKER_CORE_RATIO_MAX 2.0

/* What core scaling did, per crystal (data:psa member) with core scaling on. */
typedef struct tracker_core_counts {
    uint64_t scaled;   /* hits multiplied by e0 / sum */
    uint64_t matched;  /* hits already summed to e0 (within float rounding) */
    uint64_t unscaled; /* e0 missing, not finite or not positive, or e0 / sum out of bounds */
    uint64_t empty;    /* a positive e0 but no hit with energy: its energy is lost */
} tracker_core_counts;

typedef struct tracker_events {
    uint32_t n, cap;
    uint32_t *first;      /* n + 1 offsets into the points */
    uint32_t *number;     /* event number of each event */
    uint64_t *timestamp;
    uint16_t *status;     /* TRACKER_STATUS_* or 0 */
    size_t n_points, cap_points;
    tr_point *points;     /* lab frame, mm, keV */
    uint16_t *crystal;    /* crystal id of each point */
    uint64_t skipped_hits; /* hits without energy (e <= 0), left out */
    bool core_scale;       /* set by the owner: scale each crystal's hits to its e0 */
    tracker_core_counts core;
    /* tracker_events_add_psa_frames' scratch: each frame's points apart */
    struct sink *frame_sink;
    size_t cap_frames, cap_spare;
    tr_point *spare_points;
    uint16_t *spare_crystal;
} tracker_events;

/* The array's crystals by id, for the lab transform. */
typedef struct tracker_lookup {
    const det_array *array;
    int16_t *index; /* 65536 entries: index into array->crystal, or -1 */
} tracker_lookup;

int tracker_lookup_init(tracker_lookup *l, const det_array *a);
void tracker_lookup_free(tracker_lookup *l);

void tracker_events_clear(tracker_events *ev);
void tracker_events_free(tracker_events *ev);

/* Appends one event from an event:data:psa frame (every member's hits) or a
 * data:psa frame (one crystal), each crystal's hits scaled to its core energy
 * when ev->core_scale is set.  Returns TR_OK or a code with msg: a
 * malformed member (TR_E_INPUT), a crystal id the array lacks, a position
 * or an energy that is not finite or beyond TRACKER_MAX_HIT_* (TR_E_DATA),
 * no memory.  psa is scratch. */
tr_status tracker_events_add_psa(tracker_events *ev, const tracker_lookup *l, const adf_frame *f,
                                 adf_psa *psa, char *msg, size_t len);

/* Appends one event for each of n psa frames (as tracker_events_add_psa
 * does, in their order), decoded by `threads` OpenMP threads; event[i] is
 * frame i's event in the batch, or UINT32_MAX for a frame that
 * tracker_events_add_psa refuses (left out: call it on that frame alone for
 * its code and message).  Returns TR_OK, or TR_E_NOMEM with msg. */
tr_status tracker_events_add_psa_frames(tracker_events *ev, const tracker_lookup *l, const adf_frame *f, size_t n,
                                        int threads, uint32_t *event, char *msg, size_t len);
/* Appends one event from a narwhal:truth frame, each interaction's crystal-
 * frame position smeared (truth is scratch).  Same codes. */
tr_status tracker_events_add_truth(tracker_events *ev, const tracker_lookup *l, const tracker_smear *s,
                                   const adf_frame *f, adf_truth *truth, char *msg, size_t len);

/* The batch view of ev for the engines. */
static inline tr_batch tracker_events_batch(const tracker_events *ev)
{
    tr_batch b = { ev->n, ev->first, ev->points };
    return b;
}

#endif

/* psa_event.h: one crystal's event on its way through the PSA: checked decoding, start time, alignment on the basis, searches' inputs, subtraction. */
#ifndef NARWHAL_PSA_EVENT_H
#define NARWHAL_PSA_EVENT_H

#include <stdint.h>

#include "adf.h"
#include "basis.h"
#include "gridsearch_fom.h"
#include "psa_refine.h"
#include "psa_trace.h"
#include "psa_search.h"

/* Why a data:crystal frame was rejected (nothing is emitted for it; the actor counts and logs it). */
typedef enum psa_reject {
    PSA_ACCEPTED = 0,
    PSA_REJECT_PAYLOAD,  /* the payload's size does not match its counts (truncated, padded) */
    PSA_REJECT_CHANNELS, /* not 37 channels */
    PSA_REJECT_GAIN,     /* gain not a positive finite number */
    PSA_REJECT_ENERGY,   /* an energy not finite, below -MaxEnergy or above MaxEnergy */
    PSA_REJECT_EDGE,     /* net-charge segments, but neither the core nor their sum rises */
    PSA_REJECTS,
} psa_reject;

const char *psa_reject_name(psa_reject r);

/* data:psa statuses this actor sets (0: good); the hit status PSA_HIT_NO_MASK
 * is psa_trace.h's, since the GPU block sets it too. */
enum {
    PSA_STATUS_T0_FROM_SEGMENTS = 1, /* psa status: the core did not rise; t0 from the segments' sum */
};

/*
 * Start time.  The edge of a signal is where it crosses `fraction` of its
 * amplitude, read back from its first sample at half height.  The signal is
 * the mean of the core's and the first net-charge segment's, each over its
 * energy: the core rises first for a hit near the core, the segment for one
 * near the segment, and their mean keeps the edge within a few samples of
 * the start wherever the hit is (the core alone spreads over 2 to 12
 * samples at 0.2).  The points' edges spread too (0.46 samples RMS about
 * their median on the 5 mm test basis), so the basis is aligned on its
 * edges first (psa_basis_align): every point's signals are moved so that
 * its edge sits at the median.  The event is read from its edge minus that
 * median, which is, for every candidate point at once, the start that
 * candidate's own edge implies: a search compares each point with the
 * event as that point would have made it (read from the median alone, a
 * neighbour of the true point whose edge is nearer the median fit better
 * for up to 16 of the 5 mm test basis's 3,056 points: p = 2 or the
 * lattice's drift).  Then the start is tried at shifts around it, and the interaction
 * lies the found point's offset from the aligned start.
 */
typedef struct psa_timing {
    double threshold;      /* keV: net-charge segments */
    double max_energy;     /* keV: larger |energy| is absurd */
    double fraction;       /* of the amplitude where the edge is read */
    double basis_edge;     /* the basis's median edge, trace samples after the start */
    const float *point_edge; /* each basis point's edge as the search holds it (aligned: the median; NaN: none) */
    const float *offset;   /* per basis point: trace samples from its aligned signals' start to its interaction */
    double ratio;          /* trace samples per basis sample (basis period / 10 ns) */
    double shift_range, shift_step; /* trace samples */
} psa_timing;

typedef struct psa_event {
    adf_key key;
    size_t offset;             /* of its frame in the input block */
    uint16_t crystal_id, crystal_status;
    psa_reject reject;
    uint16_t psa_status;
    uint16_t n_samples;
    float core_e;
    int n_net;
    uint8_t net[DET_SEGMENTS]; /* net-charge segments, highest energy first */
    float e[DET_SEGMENTS];
    double t0, shift;          /* trace samples: the start from the edge, and the refinement */
    const uint8_t *trace;      /* 37 x n_samples int16 ADC values in the frame's payload */
    float per_kev;             /* 1 / gain */
    float *resid;              /* 37 x window, aligned on the basis, keV, hits found so far subtracted */
    uint32_t point[DET_SEGMENTS]; /* basis point found for net segment r */
    float fom[DET_SEGMENTS];
    uint16_t hit_status[DET_SEGMENTS];
} psa_event;

/* Each basis point's edge (the timing's signal built from its core and its
 * segment), in trace samples after its start, into edge[n_points]; returns
 * their median, or -1 when no point's signal reaches half height. */
double psa_basis_edges(const det_basis *b, double fraction, double ratio, float *edge);

/* Aligns the basis on its edges (ratio: trace samples per basis sample):
 * each point's signals, every channel, read from its edge less the median
 * (edge, as psa_basis_edges gave it) as the traces are read
 * (psa_trace.h's taps: linear, held at the ends), so that its edge sits at
 * the median.  edge[i] becomes the aligned point's (the median, as a
 * float; NaN stays NaN and that point unmoved) and offset[i] the trace
 * samples from the aligned signals' start to the point's interaction (the
 * median less its edge; 0 unmoved).  Returns the median as edge holds it. */
double psa_basis_align(det_basis *b, double median, double ratio, float *edge, float *offset);

/* The size checks of psa_event_decode: PSA_ACCEPTED when the payload holds
 * exactly the counts it states for 37 channels, the only frames the other
 * checks may accept; else the reason. */
psa_reject psa_event_sized(const adf_frame *f);

/* Decodes and checks a data:crystal frame into ev; ev->reject says the
 * verdict.  For an accepted event: the net-charge segments and the start
 * time; its traces are read from the frame (which must outlive ev) when
 * needed.  The caller sets ev->resid (37 x window floats) afterwards. */
void psa_event_decode(const adf_frame *f, psa_event *ev, const psa_timing *tm);

/* Sample i of channel ch, keV. */
static inline float psa_event_raw(const psa_event *ev, unsigned ch, unsigned i)
{
    return pt_raw(ev->trace, ev->n_samples, ev->per_kev, ch, i);
}

/* The frame's sample count (0 when its payload is too short to say). */
unsigned psa_event_samples(const adf_frame *f);

/* The interaction's start, trace samples: the aligned start t0 + shift
 * plus the first hit's point's offset (psa_timing). */
double psa_event_start(const psa_event *ev, const psa_timing *tm);

/* Fills ev->resid from the raw traces, the start at t0 + shift. */
void psa_event_align(psa_event *ev, const det_basis *b, const psa_layout *l, const psa_timing *tm);

/* The mask channels of net-charge segment r's search (bit c: mask channel c):
 * all but the event's other net-charge segments whose hits are not yet
 * subtracted (those after the first `subtracted`: 0 leaves every other
 * net-charge segment out, ev->n_net none). */
unsigned psa_event_use(const psa_event *ev, int r, const psa_layout *l, int subtracted);

/* Whether net-charge segment r's mask holds another net-charge segment of the
 * event: the hits a neighbour pass searches again. */
int psa_event_touches(const psa_event *ev, int r, const psa_layout *l);

/* Appends the search of net-charge segment r to batch, its mask as
 * psa_event_use says; its values are filled later by psa_event_fill or
 * psa_event_fill_back (the appends are sequential, the fills parallel).
 * -1: no memory. */
int psa_event_query(const psa_event *ev, int r, const psa_layout *l, int subtracted, psa_batch *batch);
/* The measured values of that search: the aligned traces over the segment's energy. */
void psa_event_fill(const psa_event *ev, int r, const psa_layout *l, float *meas);
/* The same with hit r's own signal put back (a neighbour pass: every hit subtracted). */
void psa_event_fill_back(const psa_event *ev, int r, const det_basis *b, const psa_layout *l, float *meas);

/* The event as kernels/psa_refine.h's steps read it (net segment 0's mask and point). */
pr_event psa_event_view(const psa_event *ev, const psa_layout *l);
/* What those steps read of the basis and the timing (the refinement's
 * shifts: the point's own start, then the timing's shifts around it tried by
 * least squares over the mask, the segment and, for a single net-charge
 * segment, the core). */
pr_basis psa_event_basis(const det_basis *b, const psa_layout *l, const psa_timing *tm);

/* Subtracts the signal of net segment r's point times its energy from resid. */
void psa_event_subtract(psa_event *ev, int r, const det_basis *b, const psa_layout *l);
/* Hit r moved from point `was` to ev->point[r]: resid gets was's signal back and loses the new one's. */
void psa_event_replace(psa_event *ev, int r, uint32_t was, const det_basis *b, const psa_layout *l);

#endif

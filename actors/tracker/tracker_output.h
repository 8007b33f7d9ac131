/* tracker_output.h: the gammas of a tracked event as a data:tracked frame, with the optional Doppler correction. */
#ifndef NARWHAL_TRACKER_OUTPUT_H
#define NARWHAL_TRACKER_OUTPUT_H

#include "adf.h"
#include "tracker_events.h"

/* Doppler correction: E0 = E gamma (1 - beta cos theta), theta between the
 * first interaction (seen from the target) and the beam; beta 0 leaves E. */
typedef struct tracker_doppler {
    double beta;
    double beam[3]; /* unit vector */
} tracker_doppler;

/* The gammas a data:tracked of the event keeps: info->n_gammas, at most
 * ADF_TRACKED_MAX (tracker_output_event's t->n_gammas, known before it runs). */
unsigned tracker_output_gammas(const tr_event_info *info);

/* Fills t from event e of ev and its gammas (engine output at
 * gammas[ev->first[e] ...], info->n_gammas of them).  More than
 * ADF_TRACKED_MAX gammas: the first ADF_TRACKED_MAX are kept (they come in
 * order of acceptance) and the status is TRACKER_STATUS_TRUNCATED. */
void tracker_output_event(const tracker_events *ev, uint32_t e, const tr_gamma *gammas, const tr_event_info *info,
                          const tracker_doppler *d, adf_tracked *t);

#endif

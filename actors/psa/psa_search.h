/* psa_search.h: a batch of grid searches (one per net-charge segment of an event round) and the modes every engine runs. */
#ifndef NARWHAL_PSA_SEARCH_H
#define NARWHAL_PSA_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "gridsearch_gpu.h"
#include "psa_layout.h"

/* PSA_LOCAL: the fine stage alone, over the local list (psa_layout.h) of
 * the column each query holds on input: a batch's mode (psa_batch.local),
 * never an engine's. */
typedef enum psa_mode { PSA_FULL, PSA_ADAPTIVE, PSA_LOCAL } psa_mode;
typedef enum psa_data { PSA_F32, PSA_I16 } psa_data;

/*
 * One search (gridsearch_gpu.h's record, shared with the GPU): segment s,
 * the measured values (n_mask x window of s's layout, normalised by the
 * segment's energy) at meas in the batch's arrays, and `use`: bit c set when
 * mask channel c enters the sum (clear for the other net-charge segments of
 * the event).  The engine writes the answer: the best column of s's layout
 * and its FoM.
 */
typedef gs_query psa_query;

typedef struct psa_batch {
    psa_query *q;
    size_t n, cap;
    float *meas;      /* always filled */
    int16_t *meas16;  /* filled by psa_batch_quantise for the int16 path */
    size_t n_meas, cap_meas, cap_meas16;
    int local;        /* the searches are PSA_LOCAL (column: where each starts), else the engine's mode */
} psa_batch;

/* Appends a search and returns where its K = n_mask x window measured values
 * go, or NULL when memory runs out. */
float *psa_batch_add(psa_batch *b, const psa_layout *l, unsigned segment, unsigned use);
/* The int16 copy of every measured value (gs_quantise). 0 or -1 (no memory). */
int psa_batch_quantise(psa_batch *b);
/* Empties the batch; it takes the engine's mode again (local cleared). */
void psa_batch_clear(psa_batch *b);
void psa_batch_free(psa_batch *b);

/* The position of a query's answer: the basis point of its column. */
static inline uint32_t psa_answer_point(const psa_layout *l, const psa_query *q)
{
    return l->seg[q->segment].point[q->column];
}

#endif

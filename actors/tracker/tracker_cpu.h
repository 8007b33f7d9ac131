/* tracker_cpu.h: forward tracking of a batch of events on the CPU, optimised (OpenMP, pruned search, path cache) or straightforward. */
#ifndef NARWHAL_TRACKER_CPU_H
#define NARWHAL_TRACKER_CPU_H

#include <stdbool.h>

#include "tracker_types.h"

typedef struct tracker_cpu tracker_cpu;

/* Per-thread scratch for max_threads OpenMP threads; NULL when out of memory. */
tracker_cpu *tracker_cpu_create(int max_threads);
void tracker_cpu_destroy(tracker_cpu *c);

/* Tracks every event of b into o.  Optimised: events spread over the OpenMP
 * threads, each pair's clustering step found once, each cluster's orderings
 * searched depth-first with the exact bound of tracker_fom.h, germanium paths
 * cached per event.  Straightforward (for the benchmark): one thread, every
 * pair tested at every clustering step, every ordering of every cluster
 * scored, paths computed per cluster.  Both give the same result, bit for bit, as the GPU. */
void tracker_cpu_track(tracker_cpu *c, const tr_model *m, const tr_batch *b, tr_out *o, bool optimised);

/* Only the clustering (candidates and counts per event), for the GPU path
 * when the clustering runs on the CPU: cands[first[e] ...], info[e].n_cands
 * and .big_clusters. */
void tracker_cpu_cluster(tracker_cpu *c, const tr_model *m, const tr_batch *b, tr_cand *cands,
                         tr_event_info *info);

#endif

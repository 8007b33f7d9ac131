/* tracker_engine.h: runs a batch of events through the GPU path when one is usable, else the optimised CPU path, and keeps the results. */
#ifndef NARWHAL_TRACKER_ENGINE_H
#define NARWHAL_TRACKER_ENGINE_H

#include <stdbool.h>
#include <stddef.h>

#include "tracker_status.h"
#include "tracker_types.h"

typedef enum tracker_device { TRACKER_AUTO, TRACKER_CPU, TRACKER_GPU } tracker_device;

typedef struct tracker_engine tracker_engine;

/* Chooses the device (want, and the CUDA device number gpu, as gpu_choose
 * reads the Device and GPU keys) and where the GPU path clusters
 * (cluster_on_gpu); msg says what was chosen, or why the GPU asked for cannot
 * be had (TR_E_DEVICE; TR_E_CONFIG for a GPU number other than 0 that
 * names no device).  The model must outlive the engine. */
tr_status tracker_engine_open(tracker_engine **e, const tr_model *m, tracker_device want, int gpu,
                              bool cluster_on_gpu, char *msg, size_t len);
void tracker_engine_destroy(tracker_engine *e);
bool tracker_engine_on_gpu(const tracker_engine *e);

/* Tracks b; the results stay valid until the next call: gammas of event i at
 * out->gammas[b->first[i] ...], out->info[i].  TR_OK, or a code with msg. */
tr_status tracker_engine_run(tracker_engine *e, const tr_batch *b, tr_out *out, char *msg, size_t len);

#endif

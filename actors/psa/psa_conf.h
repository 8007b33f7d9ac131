/* psa_conf.h: PSA.conf: the keys, their checks, and the settings the instances share. */
#ifndef NARWHAL_PSA_CONF_H
#define NARWHAL_PSA_CONF_H

#include "kit.h"
#include "psa_engine.h"
#include "psa_layout.h"

typedef struct psa_settings {
    char *basis, *search_log;
    kit_list device, search, data, kernel, masks, gpu_work, neighbours, gpu_prune, gpu_guess;
    int64_t gpu, window_start, window_length, threads, block_parts, parts, max_bad, neighbour_passes;
    double threshold, exponent, coarse_mm, radius_mm, fraction, shift_range, shift_step, max_energy, neighbour_mm;
} psa_settings;

/* The settings checked and turned into what the instances use. */
typedef struct psa_config {
    psa_engine_params engine;
    bool gpu_block;           /* GPUWork block: the whole block on the GPU when the searches run there */
    int window_start;         /* basis samples from the signal's start */
    uint32_t window;
    uint8_t n_mask[DET_SEGMENTS], mask[DET_SEGMENTS][PSA_MAX_MASK];
    unsigned custom[DET_SEGMENTS]; /* the Mask line that set a segment's mask, 0: the default */
    int neighbour_passes;     /* Neighbours iterate: NeighbourPasses; off: 0 */
} psa_config;

extern const kit_spec psa_spec;
extern psa_settings psa_set;
extern psa_config psa_conf;

/* Checks what kit_config could not (choices, masks, the basis readable, the
 * SearchLog writable) and fills psa_conf (left as it was on failure);
 * NARVAL_E_CONFIG with the file, line and key logged.  psa_spec's check:
 * kit_config runs it. */
unsigned psa_conf_resolve(const char *dir);

#endif

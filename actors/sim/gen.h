/* gen.h: what the generator actor's files share: its settings, their resolved form, the instance and its event slots. */
#ifndef NARWHAL_SIM_GEN_H
#define NARWHAL_SIM_GEN_H

#include <stdbool.h>
#include <stdint.h>

#include "event.h"
#include "gammaevents.h"
#include "kit.h"
#include "kit_crystals.h"
#include "publish.h"
#include "traces.h"

/* Generator.conf as the kit reads it (keys and defaults in gen_conf.c). */
typedef struct gen_conf {
    char *array, *crystal, *basis, *gammaevents, *gammaevents_input;
    int64_t seed, events, threads, multiplicity, samples, pre_trigger, adc_bits, sync_every;
    kit_list source, lines, cascade, origin, direction, packing, output, crystals, bases;
    double continuum_min, continuum_max, beta, rate, threshold, fwhm_a, fwhm_b;
    double gain, baseline, noise;
    bool subtract_baseline, sub_sample;
} gen_conf;

/* The settings checked and turned into the simulation's own structures. */
typedef struct gen_plan {
    sim_source source;
    int packing;
    bool emit_truth, emit_crystals;
    bool from_file;          /* the events are read from GammaEventsInput */
    kit_crystals crystals;   /* whose data:crystal frames are emitted; a selection also emits meta:sync */
    sim_trace_params trace;
    char conf_file[1024];    /* the Generator.conf read, for messages */
} gen_plan;

extern const kit_spec gen_spec;
extern gen_conf gen_settings;
extern gen_plan gen_resolved;

/* Checks what the kit cannot (value pairs, names, cross-key rules) and fills
 * gen_resolved; NARVAL_E_CONFIG with a logged "FILE:LINE: key 'K': why". */
unsigned gen_resolve(const char *directory_path);

/* One event, simulated and encoded, waiting to be emitted. */
typedef struct gen_slot {
    uint32_t number;
    uint64_t timestamp;
    adf_truth *input;    /* the event read from GammaEventsInput (allocated in that mode) */
    uint8_t *bytes;
    size_t size, cap;
    size_t truth_size;   /* bytes of its truth frame at the start (0 if none was made) */
    size_t emit_from;    /* first byte that goes out (truth_size when truth is not emitted) */
    int n_crystals;      /* data:crystal frames in it (of the selected crystals) */
    int fired;           /* crystals that fired (with or without frames) */
} gen_slot;

/* One thread's workspace. */
typedef struct gen_work {
    sim_event *event;
    adf_crystal *crystal;
    float *scratch;
    char msg[256];
    unsigned code;
} gen_work;

typedef struct gen {
    kit_instance k;
    det_array array;
    det_crystal shape;
    sim_world world;
    sim_physics physics;
    sim_traces *traces[DET_ARRAY_SHAPES]; /* per shape of the world (one: the Basis key's) */
    int n_threads;
    gen_work *work;
    gen_slot *slot;
    int batch;             /* slots allocated */
    int pending, next;     /* slots [next, pending) wait to be emitted */
    uint32_t first_number; /* number of the run's first event */
    uint32_t next_event;   /* events simulated this run: the next is number first_number + next_event */
    uint64_t clock;        /* timestamp of the last simulated event */
    /* The last event emitted, kept across runs (reset and initialise
     * included): the next run continues the numbers, and with them the
     * random streams and the clock, where this one stopped. */
    uint32_t last_number;
    uint64_t last_timestamp;
    bool emitted_any;
    bool eof_sent;         /* this run's meta:eof went out: the next call ends the run */
    /* meta:sync (a Crystals selection with SyncEvery > 0): a round, one per
     * selected crystal, before the first event at or past next_sync, and a
     * last one before the meta:eof. */
    uint64_t next_sync;
    uint32_t *since_sync;  /* per selected crystal (index in crystals.id): frames since its last meta:sync */
    bool last_sync_sent;
    uint64_t syncs;        /* meta:sync frames emitted this run */
    char *gev_file;        /* GammaEvents as this instance writes it (kit_instance_output) */
    kit_claim gev_claim;   /* gev_file, claimed at initialise */
    kit_output gev_out;    /* its temporary during a run, published at stop */
    gev_writer *gev;
    gev_reader *gev_in;    /* Source gammaevents */
    bool input_done;       /* its end was reached */
    adf_truth *gev_truth;
    uint64_t events, frames, crystals, bytes; /* emitted */
    uint64_t fired;                           /* crystals fired in the simulated events */
    double seconds;        /* spent simulating */
} gen;

/* Sets up geometry, basis and workspaces; runs again after every process_reset
 * (what a previous initialise set up is freed first). */
unsigned gen_initialise(gen *g);
unsigned gen_start(gen *g);
unsigned gen_stop(gen *g);
/* A reset in the middle of a run closes its input and discards its
 * unpublished GammaEvents output (after a stop, nothing). */
unsigned gen_reset(gen *g);
void gen_release(gen *g);
/* The body of process_block. */
unsigned gen_block(gen *g, uint8_t *out, unsigned cap, unsigned *used);

#endif

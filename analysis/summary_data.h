/* summary_data.h: what `narwhal summary` keeps of an output file while it reads it, shared by its modules. */
#ifndef NARWHAL_SUMMARY_DATA_H
#define NARWHAL_SUMMARY_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "adf.h"
#include "summary.h"

/* A growable array of elements of one size. */
typedef struct sum_vec {
    void *p;
    size_t n, cap;
} sum_vec;

/* Room for one more element of size bytes, zeroed; NULL when out of memory. */
void *sum_push(sum_vec *v, size_t size);
void sum_vec_free(sum_vec *v);

/* The events whose truth was read, by number and timestamp (summary_seen.c). */
typedef struct sum_seen {
    struct sum_seen_slot *slot;
    size_t n, cap;
} sum_seen;

/* Adds (event, timestamp): 1 when it is new, 0 when it was there, -1 out of memory. */
int sum_seen_add(sum_seen *s, uint32_t event, uint64_t timestamp);
void sum_seen_free(sum_seen *s);

/* A point in a crystal: a PSA hit, or the truth's deposits of one event in one
 * segment (their energy-weighted centre, which is what the PSA looks for). */
typedef struct sum_point {
    uint32_t event;
    uint16_t crystal, segment;
    float e;
    float pos[3]; /* crystal frame, mm */
} sum_point;

/* One data:psa frame: a crystal of a generator event, in built event `built`. */
typedef struct sum_crystal {
    uint32_t event, built;
    uint16_t crystal;
    float e0;
} sum_crystal;

typedef struct sum_truth {
    uint32_t event;
    uint16_t gammas; /* emitted */
    uint8_t missed;  /* every γ of the event missed the germanium */
    float e_sum;     /* keV: the lab energies of its γ rays added */
} sum_truth;

/* An event as the builder made it, and what the tracker said of it. */
typedef struct sum_built {
    uint32_t event;     /* its key */
    uint64_t timestamp;
    int status;         /* of its data:tracked; -1 until one is seen */
    uint32_t first_member; /* the generator event of its first data:psa */
    uint8_t mixed;      /* its data:psa come from more than one generator event */
} sum_built;

typedef struct sum_data {
    sum_vec truth, truth_points, hits, crystals, built;
    sum_seen truth_seen; /* the events of d->truth: a repeated event's truth is counted once */
    sum_vec tracked_e; /* float: energies of the tracked γ (Doppler-corrected when beta is set) */
    long last_built;   /* the built event the previous top-level frame held, else -1 */
    const char *narwhal; /* the pair's Narwhal file as named (--narwhal), or NULL */
    int in_pair;       /* reading a pair's Narwhal file: tracked frames pair by event and timestamp */
    size_t pair_next;  /* the built event after the last one a tracked frame of the pair matched */
    double max_energy; /* the highest emitted γ energy */
    adf_truth *truth_frame; /* decoding scratch (large) */
    adf_psa psa_frame;
    adf_tracked tracked_frame;
    int rc;            /* of the frame that stopped the scan */
    ana_summary *s;
    const char *path;
    char *err;
    size_t errlen;
} sum_data;

/* The largest frame the summary reads: the emulator's largest buffer. */
#define SUM_MAX_FRAME (1u << 30)

/* Reads the file into d and the frame counts of d->s, then its Narwhal file
 * (d->narwhal, else adf_narwhal_file's name when that file exists): ANA_E_OPEN,
 * ANA_E_INPUT for a bad frame (named with its file and offset), ANA_E_MEMORY. */
int sum_read_file(sum_data *d);
void sum_data_free(sum_data *d);

/* Frames of one key id an actor emitted: top level, and inside composites. */
typedef struct sum_kind {
    uint32_t id;
    unsigned long long frames, inside;
} sum_kind;

/* An actor of the run's report: its frame counts and what it emitted, by id. */
typedef struct sum_actor {
    char name[64];
    unsigned long long frames_in, frames_out;
    unsigned n_sources; /* the actors it reads: 0 for a producer */
    sum_kind kinds[ANA_REPORT_KINDS];
    unsigned n_kinds;
} sum_actor;

/* Actor `to` reads actor `from` (indices into sum_report.actors). */
typedef struct sum_edge {
    size_t from, to;
} sum_edge;

typedef struct sum_report {
    sum_vec actors; /* sum_actor, the run's order: every actor after those it reads */
    sum_vec edges;  /* sum_edge: the report's source records; a report without them (written before
                       they were) is taken as a chain in its order */
    sum_vec table;  /* char: the printed table, lines ending in '\n' */
} sum_report;

/* Reads a `narwhal run --report` file (its format: emulator/report.h); one
 * that cannot be opened is ANA_E_OPEN, a malformed one ANA_E_INPUT naming its line. */
int sum_read_report(const char *path, sum_report *r, char *err, size_t errlen);
void sum_report_free(sum_report *r);

/* The frames of id that actor a emitted, top-level plus inside composites. */
unsigned long long sum_emitted(const sum_actor *a, uint32_t id);

/* The checks that follow the producers' frames to the file (after sum_read_file). */
void sum_check_balance(ana_summary *s, const sum_report *r);

/* Events, PSA against the truth, spectra, efficiencies (after sum_read_file). */
int sum_physics(sum_data *d);

/* The energies a spectrum was filled with: float i at p + i * stride (NaN: left out). */
typedef struct sum_values {
    const void *p;
    size_t n, stride;
} sum_values;

/* Each line's photopeak in each spectrum (model in summary.h), from the energies themselves. */
void sum_peaks(ana_summary *s, const sum_values v[ANA_SPECTRA]);

/* The source the lines come from: a nuclide of sim/decay.c whose γ lines
 * hold every emitted energy and its strongest line, into s->source; else "". */
void sum_name_source(ana_summary *s);

/* The data files and the gnuplot pictures under dir (created); msg says what
 * was written or why not.  ANA_OK, ANA_E_NO_GNUPLOT (the data and scripts are
 * there), ANA_E_PLOT. */
int sum_plot(const ana_summary *s, const char *dir, char *msg, size_t len);

#endif

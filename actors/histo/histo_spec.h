/* histo_spec.h: the histograms Histo.conf declares: quantities, scopes, shapes, plots and output formats. */
#ifndef NARWHAL_HISTO_SPEC_H
#define NARWHAL_HISTO_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "histo_status.h"
#include "histogram_bin.h"

/* Where a quantity comes from. */
typedef enum histo_source { HISTO_FROM_CRYSTAL, HISTO_FROM_PSA, HISTO_FROM_TRACKED } histo_source;

typedef enum histo_quantity {
    HISTO_Q_CRYSTAL_SEGMENT, /* data:crystal: energy of each segment channel */
    HISTO_Q_CRYSTAL_CORE,    /* data:crystal: core energy (last channel) */
    HISTO_Q_PSA_E,           /* data:psa: energy of each hit */
    HISTO_Q_PSA_X,
    HISTO_Q_PSA_Y,
    HISTO_Q_PSA_Z,
    HISTO_Q_PSA_CORE,        /* data:psa: e0, the core energy */
    HISTO_Q_TRACKED_E,       /* data:tracked: energy of each gamma */
    HISTO_Q_TRACKED_E_DC,    /* data:tracked: Doppler-corrected energy of each gamma */
    HISTO_Q_GG_E,            /* data:tracked: every ordered pair of gammas (e_i, e_j), i != j */
    HISTO_Q_GG_E_DC,
    HISTO_Q_PSA_XY,          /* data:psa: (x, y) of each hit */
    HISTO_Q_COUNT
} histo_quantity;

/* One histogram per ... */
typedef enum histo_scope {
    HISTO_SUM,         /* ... declaration: everything summed */
    HISTO_PER_CRYSTAL, /* ... crystal id (Crystals instances) */
    HISTO_PER_SEGMENT, /* ... segment of each crystal (Crystals x Segments, crystal-major) */
} histo_scope;

typedef struct histo_quantity_info {
    const char *name;     /* as written in Histo.conf */
    histo_source source;
    unsigned dims;
    unsigned scopes;      /* bit (1 << histo_scope) set for each scope allowed */
    const char *label[2]; /* axis titles for plots and CSV headers */
    const char *const *axes; /* BINS LO HI per axis when a declaration leaves them out, or NULL */
} histo_quantity_info;

extern const histo_quantity_info histo_quantities[HISTO_Q_COUNT];

#define HISTO_NAME_MAX 32

typedef struct histo_decl {
    char name[HISTO_NAME_MAX + 1];
    histo_quantity q;
    histo_scope scope;
    histo_group g; /* shape, instances and place in the count array */
    unsigned line; /* in Histo.conf, 0 for the default */
} histo_decl;

/* A plot: the sum of `count` consecutive instances of a 1D declaration. */
typedef struct histo_plot {
    size_t decl;
    uint32_t first, count;
    char file[64]; /* file name without extension */
    char what[64]; /* "crystal 12", "crystal 12 segment 5", "sum of 180 histograms", or "" */
} histo_plot;

enum { HISTO_SPE = 1, HISTO_CSV = 2, HISTO_M4B = 4 };

typedef struct histo_spec {
    histo_decl *decl;
    size_t n_decl;
    histo_plot *plot;
    size_t n_plot;
    unsigned formats;   /* HISTO_SPE | HISTO_CSV | HISTO_M4B */
    uint32_t crystals, segments;
    uint64_t slots;     /* of all declarations together */
    bool needs[3];      /* per histo_source: some declaration reads it */
} histo_spec;

/* A key's values as read from Histo.conf: n strings, each with its line in
 * the file (0: the key's default), for the messages. */
typedef struct histo_values {
    size_t n;
    char *const *v;
    const unsigned *line;
} histo_values;

/* The keys of Histo.conf this module interprets (the actor has read them). */
typedef struct histo_spec_keys {
    histo_values histograms, plots, formats;
    int64_t crystals, segments;
    const char *path; /* of Histo.conf, for messages */
} histo_spec_keys;

/* Builds *s (zeroed by the caller) from the keys; HISTO_E_CONFIG with
 * "<path>:<line>: key 'Histogram': ..." in msg for a bad declaration,
 * HISTO_E_NOMEM. */
histo_status histo_spec_build(histo_spec *s, const histo_spec_keys *k, char *msg, size_t len);
void histo_spec_free(histo_spec *s);

/* Instance i of a declaration as a file name: "NAME", "NAME_c012", "NAME_c012_s05". */
void histo_spec_instance_name(const histo_spec *s, const histo_decl *d, uint32_t i, char *out,
                              size_t len);

#endif

/* summary.h: `narwhal summary`: what a chain's output file says, checked against the truth and the run. */
#ifndef NARWHAL_SUMMARY_H
#define NARWHAL_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

#include "ana.h"

typedef struct ana_summary_options {
    const char *report; /* the file of `narwhal run --report`, or NULL */
    const char *plots;  /* directory for the summary's spectra, residuals and PNG plots, or NULL */
    const char *histo;  /* histo's OutputDir, whose spectra and plots are listed, or NULL */
    double window;      /* keV either side of a line that counts as its photopeak */
    const char *narwhal; /* the Narwhal file of the pair, or NULL: the data file's (adf_narwhal_file) if it exists */
} ana_summary_options;

#define ANA_SUMMARY_WINDOW 5.0 /* keV: the default photopeak half-width */
#define ANA_SUMMARY_LINES 32   /* distinct emitted energies above which the source is a continuum */
#define ANA_SUMMARY_EBINS 5    /* PSA resolution: hit energy bins */
#define ANA_SUMMARY_CHECKS 8
#define ANA_SUMMARY_MINOR 0.001   /* a line with a smaller share of the emitted γ rays is not measured */
#define ANA_SUMMARY_MULTIPLICITY 6 /* γ rays per event counted one by one up to this, then together */
/* The highest γ energy a narwhal:truth frame may claim: far above any
 * nuclear γ ray (the generator's sources stop at 20 MeV).  A frame that
 * claims more (or a negative or non-finite energy) is corrupt: it is
 * counted and named, and its contents are not used. */
#define ANA_SUMMARY_MAX_KEV 100000.0
/* The spectra have a 1 keV bin per keV up to the highest energy in the file,
 * but stop here: an entry above it is counted (and said), not binned. */
#define ANA_SUMMARY_SPECTRUM_KEV 20000.0
/* The frame kinds per actor a run report may list: what the emulator writes
 * (EMU_MAX_KINDS, emulator/run.h; main.c asserts that it fits). */
#define ANA_REPORT_KINDS 16

/* The three spectra the summary compares: the tracker's γ rays, each
 * crystal's energy (untracked, no add-back), each event's crystals summed. */
enum { ANA_SPEC_TRACKED, ANA_SPEC_CRYSTAL, ANA_SPEC_SUM, ANA_SPECTRA };

/*
 * A photopeak, estimated without a fit (summary_peaks.c), from the energies
 * themselves (unbinned): the entries within the window [e - w, e + w] less a
 * straight background through the densities of two bands as wide on either
 * side; its centroid and FWHM from the first and second moments of the net
 * entries, the background's own moments taken off (FWHM = 2.3548 sigma).
 * w is the --window half-width at first, then twice the FWHM found (about
 * 4.7 sigma), three times over: a window much wider than the peak would let
 * the background's moments swamp the peak's.
 */
typedef struct ana_summary_peak {
    double area;       /* net counts */
    double background; /* counts under the peak */
    double centroid;   /* keV; 0 when the net area is not positive */
    double fwhm;       /* keV; 0 when it cannot be told (too few counts) */
    double efficiency; /* area per γ ray of the line emitted */
} ana_summary_peak;

typedef struct ana_summary_line {
    double e;                   /* keV, as emitted */
    unsigned long long emitted; /* γ rays of this energy in the truth frames */
    double window;              /* keV either side of e: the untracked peak's last window (else the tracked one's) */
    int blend;                  /* another line lies within its window or bands */
    int minor;                  /* too few emitted (under ANA_SUMMARY_MINOR of all, or 100) to measure */
    ana_summary_peak peak[ANA_SPECTRA];
} ana_summary_line;

typedef struct ana_summary_check {
    int ok;
    char text[512];
} ana_summary_check;

typedef struct ana_summary {
    /* the file, frame by frame (both files of a pair: the data file, then its Narwhal file) */
    char narwhal_file[4096];           /* the pair's Narwhal file, or "" when the data file was read alone */
    unsigned long long frames;         /* top-level frames */
    unsigned long long truth;          /* narwhal:truth */
    unsigned long long crystal;        /* data:crystal (traces nobody analysed) */
    unsigned long long psa;            /* data:psa at any depth */
    unsigned long long built;          /* event:data:psa, and top-level data:psa (each an event of its own) */
    unsigned long long tracked;        /* data:tracked */
    unsigned long long tracked_status[3]; /* by status: 0 good, 1 too many points, 2 gammas left out */
    unsigned long long gammas;         /* tracked γ rays */
    unsigned long long unpaired;       /* data:tracked not right after the event it tracks (KeepInput) */
    unsigned long long eof;            /* meta:eof: the producer's end of data, passed down the chain */
    int ends_with_eof;                 /* the file's last frame is a meta:eof */
    unsigned long long other;          /* frames of other ids */
    unsigned long long truth_ignored;  /* narwhal:truth frames with an energy out of bounds, not used */
    unsigned long long truth_repeated; /* narwhal:truth frames of an event already read (its number and
                                          timestamp: several producers writing the same events' truth), not used */
    char first_ignored[256];           /* the first of them: event, offset, energy */
    unsigned long long rejected[ANA_SPECTRA]; /* energies not finite or negative (data:psa, data:tracked) */
    char first_rejected[256];          /* the first frame that held one: kind, event, offset, value */
    /* the source, by the truth */
    char source[64];                   /* the nuclide whose decay scheme the lines are (sim/decay.c), or "" */
    unsigned long long multiplicity[ANA_SUMMARY_MULTIPLICITY + 1]; /* events by γ rays emitted (last: or more) */
    unsigned max_multiplicity;
    unsigned long long sum_events, sum_full; /* events with γ rays; those whose crystals sum to all of them */
    unsigned crystals;                 /* distinct crystal ids with a data:psa in the file */
    /* the generator's events, by the truth */
    unsigned long long events, gammas_emitted, ev_tracked, ev_not_tracked, ev_untracked, ev_no_psa,
        ev_missed, ev_piled;
    /* the run's report */
    int have_report;
    unsigned n_producers;              /* the report's actors that read no other */
    char producer[64];                 /* the first of them */
    char producers[256];               /* their names, quoted: "'gen_A', 'gen_B', 'gen_C' and 1 more" */
    unsigned long long produced_truth, produced_crystal, writer_frames; /* summed over the producers */
    int n_checks;
    ana_summary_check check[ANA_SUMMARY_CHECKS];
    int balanced;                      /* every check holds */
    char *table;                       /* the run's per-actor table, or NULL */
    /* PSA against the truth */
    unsigned long long hits, matched, unmatched_hits, missed_deposits;
    double rms[3], sigma68[3], mean_distance;
    struct {
        double lo, hi;
        unsigned long long n;
        double rms[3];
    } ebin[ANA_SUMMARY_EBINS];
    /* spectra: 1 keV bins from 0 to the highest energy in the file, at most ANA_SUMMARY_SPECTRUM_KEV */
    unsigned n_bins;
    uint32_t *spectrum[ANA_SPECTRA];
    unsigned long long total[ANA_SPECTRA];  /* entries, binned or beyond */
    unsigned long long beyond[ANA_SPECTRA]; /* entries above the last bin */
    double highest;                    /* keV: the highest energy of the file (truth, PSA, tracker, sums) */
    int continuum;                     /* more distinct energies than ANA_SUMMARY_LINES */
    int n_lines;
    ana_summary_line line[ANA_SUMMARY_LINES];
    double window;                     /* the --window half-width */
    /* residuals for the plot: 0.5 mm bins on [-25, 25) per axis */
    uint32_t residual[3][100];
} ana_summary;

/* Reads the output file at path (and o->report when given) into s.  A
 * file that cannot be opened is ANA_E_OPEN; a malformed file, report or
 * frame ANA_E_INPUT; each with a message naming the file and the offset or
 * line; s is then freed already.  A narwhal:truth frame with an energy
 * beyond ANA_SUMMARY_MAX_KEV is no error: it is counted in s. */
int ana_summary_compute(const char *path, const ana_summary_options *o, ana_summary *s, char *err, size_t errlen);

/* Prints s for a physicist; writes the plots when o->plots is set (and
 * says where, or why not). */
void ana_summary_print(FILE *out, const char *path, const ana_summary_options *o, ana_summary *s);

void ana_summary_free(ana_summary *s);

/* What s is of, as the summary and its plots title it: "60Co, 180 crystals,
 * 100000 events" (the nuclide when the lines are one of sim/decay.c's, else
 * the lines; the crystals that reached the file; the events of the truth,
 * or the built events of a file without it). */
void ana_summary_title(const ana_summary *s, char *out, size_t len);

/* `narwhal summary`: compute, print, free.  ANA_E_BALANCE when a balance
 * check fails, after the summary was printed. */
int ana_summary_run(const char *path, const ana_summary_options *o, FILE *out, char *err, size_t errlen);

#endif

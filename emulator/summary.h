/* summary.h: `narwhal summary`: what a chain's output file says, checked against the truth and the run. */
#ifndef NARWHAL_SUMMARY_H
#define NARWHAL_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

typedef struct emu_summary_options {
    const char *report; /* the file of `narwhal run --report`, or NULL */
    const char *plots;  /* directory for the summary's spectra, residuals and PNG plots, or NULL */
    const char *histo;  /* histo's OutputDir, whose spectra and plots are listed, or NULL */
    double window;      /* keV either side of a line that counts as its photopeak */
} emu_summary_options;

#define EMU_SUMMARY_WINDOW 5.0 /* keV: the default photopeak half-width */
#define EMU_SUMMARY_LINES 16   /* distinct emitted energies above which the source is a continuum */
#define EMU_SUMMARY_EBINS 5    /* PSA resolution: hit energy bins */
#define EMU_SUMMARY_CHECKS 8

/* The three spectra the summary compares. */
enum { EMU_SPEC_TRACKED, EMU_SPEC_CRYSTAL, EMU_SPEC_SUM, EMU_SPECTRA };

typedef struct emu_summary_line {
    double e;                         /* keV, as emitted */
    unsigned long long emitted;       /* γ rays of this energy in the truth frames */
    unsigned long long peak[EMU_SPECTRA]; /* entries within the window in each spectrum */
} emu_summary_line;

typedef struct emu_summary_check {
    int ok;
    char text[320];
} emu_summary_check;

typedef struct emu_summary {
    /* the file, frame by frame */
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
    /* the generator's events, by the truth */
    unsigned long long events, gammas_emitted, ev_tracked, ev_not_tracked, ev_untracked, ev_no_psa,
        ev_missed, ev_piled;
    /* the run's report */
    int have_report;
    char producer[64];
    unsigned long long produced_truth, produced_crystal, writer_frames;
    int n_checks;
    emu_summary_check check[EMU_SUMMARY_CHECKS];
    int balanced;                      /* every check holds */
    char *table;                       /* the run's per-actor table, or NULL */
    /* PSA against the truth */
    unsigned long long hits, matched, unmatched_hits, missed_deposits;
    double rms[3], sigma68[3], mean_distance;
    struct {
        double lo, hi;
        unsigned long long n;
        double rms[3];
    } ebin[EMU_SUMMARY_EBINS];
    /* spectra: 1 keV bins from 0 */
    unsigned n_bins;
    uint32_t *spectrum[EMU_SPECTRA];
    unsigned long long total[EMU_SPECTRA];
    int continuum;                     /* more distinct energies than EMU_SUMMARY_LINES */
    int n_lines;
    emu_summary_line line[EMU_SUMMARY_LINES];
    double window;
    /* residuals for the plot: 0.5 mm bins on [-25, 25) per axis */
    uint32_t residual[3][100];
} emu_summary;

/* Reads the output file at path (and o->report when given) into s.  An
 * unreadable or malformed file, report or frame is EMU_E_RUN (EMU_E_TOPOLOGY
 * when a file cannot be opened) with a message naming the file and the
 * offset or line; s is then freed already. */
int emu_summary_compute(const char *path, const emu_summary_options *o, emu_summary *s, char *err, size_t errlen);

/* Prints s for a physicist; writes the plots when o->plots is set (and
 * says where, or why not). */
void emu_summary_print(FILE *out, const char *path, const emu_summary_options *o, emu_summary *s);

void emu_summary_free(emu_summary *s);

/* `narwhal summary`: compute, print, free.  EMU_E_RUN also when a balance
 * check fails, after the summary was printed. */
int emu_summary_run(const char *path, const emu_summary_options *o, FILE *out, char *err, size_t errlen);

#endif

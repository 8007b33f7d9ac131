/* histo_output.h: writes every declared histogram in the configured formats, and the plots, into the output directory. */
#ifndef NARWHAL_HISTO_OUTPUT_H
#define NARWHAL_HISTO_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "histo_spec.h"
#include "publish.h"

/*
 * Layout under DIR:
 *   NAME.spe, NAME.csv, NAME.m4b     a declaration of scope sum
 *   NAME/NAME_c012.spe ...           scope crystal: one file per crystal
 *   NAME/NAME_c012_s05.spe ...       scope segment: one file per crystal and segment
 *   PLOT.png                         each plot (NAME, NAME_c012, NAME_c012_s05)
 * .spe holds 1D spectra, .m4b the 4096 x 4096 matrices (others get CSV only),
 * .csv any histogram.  The actor writes the run's files into its OutputDir at
 * process_stop, and the snapshots of WriteEvery into OutputDir/live/, which
 * holds the same layout.
 *
 * A write is a set: every file goes into its own unique temporary beside its
 * final name, and only when all of them are written are they renamed, so a
 * set whose writing failed publishes nothing and leaves no temporary.
 */
typedef struct histo_written {
    size_t files, plots;
    bool plot_failed; /* a warning has been logged */
} histo_written;

/* Writes all histograms (NARVAL_E_IO on the first failure: nothing is
 * published) and the plots (a failed plot is logged as a warning under `who`
 * and left out), then publishes them. */
unsigned histo_output_write(const histo_spec *s, const uint64_t *counts, const char *dir,
                            const char *who, histo_written *w, char *msg, size_t len);

/* One plot into a temporary of DIR/FILE.png held by *o (zeroed on entry),
 * as histo_write.h's functions do; 0, or -1 with msg and *o holding nothing.
 * *no_gnuplot tells that gnuplot itself is missing, so that the caller stops trying. */
int histo_plot_write(const histo_spec *s, const histo_plot *p, const uint64_t *counts,
                     const char *dir, kit_output *o, bool *no_gnuplot, char *msg, size_t len);

/* mkdir -p; NARVAL_E_IO with msg. */
unsigned histo_output_mkdir(const char *dir, char *msg, size_t len);

#endif

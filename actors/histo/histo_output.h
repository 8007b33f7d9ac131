/* histo_output.h: writes every declared histogram in the configured formats, and the plots, into the output directory. */
#ifndef NARWHAL_HISTO_OUTPUT_H
#define NARWHAL_HISTO_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "histo_spec.h"
#include "histo_write.h"

/*
 * Layout under DIR:
 *   NAME.spe, NAME.spe.txt           a declaration of scope sum: 1D (the .spe's companion: calibration)
 *   NAME.csv, NAME.m4b
 *   NAME/NAME_c012.spe ...           scope crystal: one file per crystal
 *   NAME/NAME_c012_s05.spe ...       scope segment: one file per crystal and segment
 *   PLOT.png                         each plot (NAME, NAME_c012, NAME_c012_s05)
 * .spe holds 1D spectra, .m4b the 4096 x 4096 matrices (others get CSV only),
 * .csv any histogram.  The actor writes the run's files into its OutputDir at
 * process_stop, and the snapshots of WriteEvery into OutputDir/live/, which
 * holds the same layout.
 *
 * A write is a set: every file goes through the caller's files (histo_files,
 * histo_write.h), which publishes them all only when all of them are written,
 * so that a set whose writing failed publishes nothing.
 */
typedef struct histo_written {
    size_t files, plots;
    bool plot_failed; /* a warning has been given to files->warn */
} histo_written;

/* Writes all histograms (the first failure's code: the caller then publishes
 * nothing) and the plots (a failed plot is a warning to files->warn, and left
 * out).  Publishing is the caller's. */
histo_status histo_output_write(const histo_spec *s, const uint64_t *counts, const char *dir,
                                const histo_files *files, histo_written *w, char *msg, size_t len);

/* One plot, DIR/FILE.png, through files as histo_write.h's functions write;
 * 0, or -1 with msg and nothing of it kept.  *no_gnuplot tells that gnuplot
 * itself is missing, so that the caller stops trying. */
int histo_plot_write(const histo_spec *s, const histo_plot *p, const uint64_t *counts,
                     const char *dir, const histo_files *files, bool *no_gnuplot, char *msg, size_t len);

/* mkdir -p; HISTO_E_IO with msg. */
histo_status histo_output_mkdir(const char *dir, char *msg, size_t len);

#endif

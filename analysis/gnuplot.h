/* gnuplot.h: the one way Narwhal runs gnuplot (histo's plots, `narwhal summary`'s): no shell, script on stdin, PNG on a descriptor. */
#ifndef NARWHAL_GNUPLOT_H
#define NARWHAL_GNUPLOT_H

#include <stddef.h>

/* Runs the gnuplot found on the PATH and waits for it:
 *  - its standard input is script_fd, read from where it stands (a regular
 *    file: a pipe to a gnuplot that is missing or dies would raise SIGPIPE
 *    in the caller, an actor's host);
 *  - its standard output is png_fd: the script says `set output` without a
 *    name, so gnuplot is given no output path at all;
 *  - with dir set it runs in that directory, so that the script names its
 *    data files relative to it ("plot 'spectra.csv'").  The directory goes to
 *    chdir as data, never through a shell: any name works (quotes, blanks,
 *    '$').  A relative entry of the PATH is then taken from dir;
 *  - its messages go to the caller's standard error.
 * No shell is involved anywhere.  Returns ANA_OK; ANA_E_NO_GNUPLOT when no
 * gnuplot is on the PATH; ANA_E_PLOT when it could not be started, exited
 * with a failure or was killed.  msg (len bytes) then says which, naming
 * the package to install when gnuplot is missing. */
int ana_gnuplot_run(int script_fd, int png_fd, const char *dir, char *msg, size_t len);

#endif

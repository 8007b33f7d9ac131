/* ana.h: status codes and error formatting shared by the analysis library's modules (`narwhal summary`, plots). */
#ifndef NARWHAL_ANA_H
#define NARWHAL_ANA_H

#include <stddef.h>

/* Every analysis function that can fail returns one of these, with a
 * message in the caller's buffer naming the file and the offset or line. */
enum ana_status {
    ANA_OK = 0,
    ANA_E_OPEN = 1,       /* an input file cannot be opened */
    ANA_E_INPUT = 2,      /* an input file, report or frame is malformed */
    ANA_E_MEMORY = 3,     /* an allocation failed */
    ANA_E_BALANCE = 4,    /* the summary was made, and its frames do not balance */
    ANA_E_NO_GNUPLOT = 5, /* gnuplot is not on the PATH */
    ANA_E_PLOT = 6,       /* a plot's files could not be written, or gnuplot failed */
};

/* Writes a printf-style message into err (always terminated, truncated to
 * errlen, control characters turned into blanks so that it stays one line
 * whatever a file name holds) and returns code: `return ana_fail(...)`. */
int ana_fail(char *err, size_t errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif

/* histo_write.h: histogram files: RadWare .spe and .m4b, CSV; each written through the caller's files (histo_files), to be published with the others. */
#ifndef NARWHAL_HISTO_WRITE_H
#define NARWHAL_HISTO_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "histo_status.h"
#include "histogram_bin.h"

/*
 * Where the files of a write go: the caller publishes them.  create gives a
 * stream on a new file that is to become PATH once the whole set is written
 * (the actor's: a unique temporary beside PATH, so that no file of an
 * unfinished run ever has its final name); finish ends the file created
 * last: kept when ok (and its closing succeeds), else removed and forgotten.
 * Both return HISTO_OK, or HISTO_E_IO (HISTO_E_NOMEM) with the path and the
 * reason in msg.  warn gets a sentence the write goes on after (a plot that
 * failed).
 */
typedef struct histo_files {
    void *ctx;
    histo_status (*create)(void *ctx, const char *path, FILE **fp, char *msg, size_t len);
    histo_status (*finish)(void *ctx, bool ok, char *msg, size_t len);
    void (*warn)(void *ctx, const char *sentence);
} histo_files;

/*
 * Every function writes the file PATH through f->create and f->finish; on
 * failure nothing of it is kept and the return is finish's code or
 * HISTO_E_NOMEM, with the path and the reason in msg.
 *
 * .spe (RadWare gf3), little-endian Fortran records of a spectrum of n bins:
 *   record 1: int32 24 | name, 8 characters padded with blanks | int32 n, 1, 1, 1 | int32 24
 *   record 2: int32 4n | n float32 counts                      | int32 4n
 *   A float32 holds counts exactly up to 2^24; larger counts are rounded.
 * NAME.spe.txt, the .spe's companion (RadWare's format has no axis): text lines
 *   "spectrum NAME", "quantity Q: LABEL", "channels N", "calibration E = lo + w * ch"
 *   (ch from 0 at a channel's low edge; gf3's offset and gain), "bin width w"
 *   (counts per unit = counts / w), and the counts in the channels, under- and
 *   overflow and NaN, which the .spe cannot hold.
 * .m4b (RadWare escl8r/levit8r matrix): 4096 rows of 4096 int32, no header;
 *   row r holds the bins of x bin r; counts above 2^31 - 1 are written as 2^31 - 1.
 * CSV, 1D: header "bin,low,high,count", one row per non-zero bin, then the rows
 *   "underflow,,,N", "overflow,,,N" and "nan,,,N".
 * CSV, 2D: header "x_bin,y_bin,x_low,y_low,count", one row per non-zero bin, then
 *   "underflow,,,,N", "overflow,,,,N", "nan,,,,N".
 *   Bins with no counts are left out, so that a family of thousands of mostly
 *   empty spectra costs what its counts cost.  Edges are lo + i (hi - lo) / bins,
 *   printed with 9 significant digits.
 */
#define HISTO_M4B_SIDE 4096

histo_status histo_write_spe(const histo_files *f, const char *path, const char *name, const uint64_t *bins,
                             uint32_t n, char *msg, size_t len);
/* The companion of the .spe `spe` (its file name) at path; slots: its bins and three counters. */
histo_status histo_write_spe_notes(const histo_files *f, const char *path, const char *spe, const char *name,
                                   const char *quantity, const char *label, const histo_axis *a,
                                   const uint64_t *slots, char *msg, size_t len);
histo_status histo_write_m4b(const histo_files *f, const char *path, const uint64_t *bins, char *msg,
                             size_t len);
/* slots: one histogram of group g (its bins then its three counters). */
histo_status histo_write_csv(const histo_files *f, const char *path, const histo_group *g,
                             const uint64_t *slots, char *msg, size_t len);

#endif

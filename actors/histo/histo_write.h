/* histo_write.h: histogram files: RadWare .spe and .m4b, CSV; each written under a unique temporary name, to be published with the others. */
#ifndef NARWHAL_HISTO_WRITE_H
#define NARWHAL_HISTO_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "histogram_bin.h"
#include "publish.h"

/*
 * Every function writes the file PATH into a new temporary of PATH (the kit's
 * kit_output_open: PATH.XXXXXX.part, created with O_EXCL, never following a
 * link) and closes it; *o (zeroed on entry) then holds the temporary, which
 * the caller publishes (renames to PATH) or discards together with the other
 * files of the run, so that no file of an unfinished run ever has its final
 * name.  On failure the temporary is removed, *o holds nothing, and the
 * return is NARVAL_E_IO (NARVAL_E_NOMEM) with the path and the reason in msg.
 *
 * .spe (RadWare gf3), little-endian Fortran records of a spectrum of n bins:
 *   record 1: int32 24 | name, 8 characters padded with blanks | int32 n, 1, 1, 1 | int32 24
 *   record 2: int32 4n | n float32 counts                      | int32 4n
 *   A float32 holds counts exactly up to 2^24; larger counts are rounded.
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

unsigned histo_write_spe(kit_output *o, const char *path, const char *name, const uint64_t *bins,
                         uint32_t n, char *msg, size_t len);
unsigned histo_write_m4b(kit_output *o, const char *path, const uint64_t *bins, char *msg,
                         size_t len);
/* slots: one histogram of group g (its bins then its three counters). */
unsigned histo_write_csv(kit_output *o, const char *path, const histo_group *g,
                         const uint64_t *slots, char *msg, size_t len);

#endif

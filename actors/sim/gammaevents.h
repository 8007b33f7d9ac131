/* gammaevents.h: the text format of the AGATA Geant4 code's GammaEvents files, written from and read into narwhal:truth. */
#ifndef NARWHAL_SIM_GAMMAEVENTS_H
#define NARWHAL_SIM_GAMMAEVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "adf.h"
#include "array.h"

/*
 * The file (lengths in mm, energies in keV, lab frame, origin at the target):
 *
 *   NARWHAL GammaEvents 1                 header lines: anything but '$' and
 *   GENERATOR <free text>                 SUMMARY is skipped by the reader
 *   SUMMARY r_inner r_outer n_crystals max_crystal_id n_segments
 *   $                                     end of the header
 *   -1 E dx dy dz n [e0 beta flags]       one γ of event n: energy, direction cosines
 *   crystal E x y z segment [process deposits t]    one line per interaction
 *   ...
 *
 * The γ lines of one event are consecutive and carry the same n; a new n
 * starts a new event.  A γ line may have no interaction line after it (the γ
 * missed the germanium).  Segments are 0..35 (6 * sector + ring).  Columns in
 * brackets are Narwhal's extras, written always and read when present in a
 * file whose header has the line "NARWHAL GammaEvents" (in other files the
 * columns past the sixth belong to other codes and are ignored):
 *   e0       the γ energy in the emitter's frame (absent: = E)
 *   beta     v/c of the emitter along +z (absent: 0)
 *   flags    ADF_TRUTH_* (absent: ABSORBED when the interactions sum to E
 *            within 0.01 keV, MISSED when there are none)
 *   process  ADF_TRUTH_PHOTO, _COMPTON or _PAIR (absent: PHOTO for the last
 *            interaction of a γ and COMPTON before it, a guess)
 *   deposits how many deposits were packed into the point (absent: 1)
 *   t        ns from the first trace sample to the signal (absent: 0)
 * Further columns are ignored, and so are lines whose first number is a
 * code below -1 (AGATA's -100 source position, -101 recoil...).  Blank lines
 * and lines starting with '#' are skipped everywhere.
 *
 * SUMMARY: r_inner and r_outer are the smallest and largest distances from
 * the target to the germanium of the array (gev_summary_of computes them),
 * then the number of crystals, the largest crystal id and segments per crystal.
 */
typedef struct gev_summary {
    double r_inner, r_outer; /* mm */
    int n_crystals;
    int max_crystal_id;
    int n_segments;
} gev_summary;

/* The SUMMARY values of an array of crystals of shape c, or of their own shapes when the array names them (the
 * hexagonal frustum and cylinder, the bore ignored). */
void gev_summary_of(const det_array *a, const det_crystal *c, gev_summary *s);

typedef struct gev_writer gev_writer;

/* Writes the header on fp, a stream the caller opened and closes (the
 * generator's is the temporary of a published file); name is the file the
 * messages name.  generator is one line of free text (the source, the seed).
 * 0, or -1 with a message naming the file. */
int gev_create(gev_writer **w, FILE *fp, const char *name, const gev_summary *s, const char *generator,
               char *msg, size_t len);
/* Appends event `event`: every γ of t and its interactions, in t's order. */
int gev_write(gev_writer *w, uint32_t event, const adf_truth *t, char *msg, size_t len);
/* Flushes the stream, which stays open (w is freed in every case, NULL is
 * nothing); 0 or -1 with a message. */
int gev_finish(gev_writer *w, char *msg, size_t len);

typedef struct gev_reader gev_reader;

/* Opens path and reads its header up to '$'.  When array is not NULL, each
 * interaction's crystal-frame position is computed from its lab position and
 * its crystal's placement (an id the array lacks is then an error);
 * otherwise the crystal-frame positions are 0.  The array must outlive the
 * reader.  0, or -1 with a message naming the file and line. */
int gev_open(gev_reader **r, const char *path, const det_array *array, char *msg, size_t len);
/* The header's SUMMARY (zeros when the file has none). */
const gev_summary *gev_header(const gev_reader *r);
/* Reads the next event into *t (large: allocate it) and its number into
 * *event: 1, 0 at the end of the file, -1 with a message "FILE:LINE: why"
 * (bad numbers, a segment outside 0..35, an interaction before any γ, more
 * than ADF_TRUTH_MAX_GAMMAS γ rays or ADF_TRUTH_MAX_INTERACTIONS interactions
 * in one event, a crystal id above 65535). */
int gev_next(gev_reader *r, adf_truth *t, uint32_t *event, char *msg, size_t len);
void gev_close_reader(gev_reader *r);

#endif

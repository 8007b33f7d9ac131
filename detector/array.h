/* detector array: where each crystal sits (rotation + translation), its two text formats, frame transforms, overlap check. */
#ifndef NARWHAL_DET_ARRAY_H
#define NARWHAL_DET_ARRAY_H

#include <stddef.h>

#include "geometry.h"

/*
 * Lab frame: origin at the target, mm.  A crystal's placement maps its own
 * frame (geometry.h) to the lab:   lab = R * crystal + T.
 * R's third column is the crystal axis in the lab; T is the centre of the
 * front face.  Shipped arrays put every front face 235 mm from the target with
 * the axis pointing away from it.
 */
typedef struct det_placement {
    int id;         /* crystal id, unique in the array (AGATA numbering 0..179) */
    int type;       /* crystal shape type (AGATA: 0, 1, 2 = A, B, C; Narwhal's regular hexagon is 0) */
    double R[3][3]; /* rotation, crystal -> lab, row-major */
    double T[3];    /* translation, mm */
} det_placement;

enum { DET_ARRAY_MAX = 4096, DET_ARRAY_SHAPES = 8, DET_ARRAY_PATH = 256 };

typedef struct det_array {
    int n;
    det_placement *crystal; /* n entries, in file order */
    int n_shapes;           /* 0: the file names no shapes (every crystal is the reader's one crystal) */
    det_crystal *shape;     /* n_shapes: the crystal of each type (geometry files the array file names) */
    char (*shape_path)[DET_ARRAY_PATH]; /* each as the array file gives it (relative to that file's folder) */
} det_array;

/* Narwhal's array file (detector/README.md): a first line "narwhal-array 1",
 * optionally "shapes GEO0 GEO1 ..." (the geometry file of each crystal type,
 * relative to the array file's folder; then every type must have one), then
 * per crystal one line "id type Tx Ty Tz R11 R12 R13 R21 R22 R23 R31 R32 R33";
 * '#' starts a comment.  R must be a proper rotation (orthonormal to 1e-6,
 * determinant +1); ids unique.  0, or -1 with a message naming file and line. */
int det_array_load(det_array *a, const char *path, char *msg, size_t len);
int det_array_save(const det_array *a, const char *path, char *msg, size_t len);
/* AGATA simulation's CrystalPositionLookUpTable: per crystal a line
 * "id type Tx Ty Tz" then three lines "k Rk1 Rk2 Rk3" (k = 0, 1, 2), mm. */
int det_array_load_lut(det_array *a, const char *path, char *msg, size_t len);
int det_array_save_lut(const det_array *a, const char *path, char *msg, size_t len);
/* Either format: Narwhal's when the first word that is not a comment is
 * "narwhal-array", AGATA's CrystalPositionLookUpTable otherwise (what every
 * reader of an Array key takes).  Same results as the loader it picks. */
int det_array_load_any(det_array *a, const char *path, char *msg, size_t len);
void det_array_free(det_array *a);
/* Index of the crystal with this id, or -1. */
int det_array_find(const det_array *a, int id);
/* Names the geometry files of the crystal types (copied; paths as the array file will give them) and loads them
 * from base_dir (the array file's folder).  0, or -1 with a message naming the file. */
int det_array_set_shapes(det_array *a, const char *const *paths, int n, const char *base_dir, char *msg, size_t len);
/* The shape of crystal index i: its type's when the array names shapes, else fallback. */
const det_crystal *det_array_shape(const det_array *a, int i, const det_crystal *fallback);

void det_to_lab(const det_placement *pl, const double crystal[3], double lab[3]);
void det_to_crystal(const det_placement *pl, const double lab[3], double crystal[3]);

/*
 * Overlap check, each crystal with its shape (det_array_shape, fallback c).
 * For every pair of crystals whose bounding spheres meet, it
 * first tries to prove them apart: a plane separates two convex bodies, and
 * the crystal (bore ignored) is convex, lying inside both its hexagonal
 * frustum (hull of 12 corners) and its cylinder, so the smaller of the two
 * support values bounds it from above.  Candidate plane normals: each
 * crystal's six side-face normals and the normalised sums of facing pairs,
 * plus the line between the centres.  When no candidate separates the pair
 * by more than `gap` mm, it samples crystal A's volume on a 1 mm grid and
 * looks for a point inside B.
 *   returns 0: every pair proved apart by at least `gap` mm;
 *           1: an overlap found (message names both ids and a shared point);
 *           2: a pair neither proved apart nor seen to overlap (named).
 * *min_gap gets the smallest proven separation (mm) over neighbouring pairs.
 */
int det_array_check_overlaps(const det_array *a, const det_crystal *c, double gap, double *min_gap, char *msg,
                             size_t len);

#endif

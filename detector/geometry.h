/* detector geometry: the AGATA-type crystal (shape, segments, contacts), its text file and frame conventions. */
#ifndef NARWHAL_DET_GEOMETRY_H
#define NARWHAL_DET_GEOMETRY_H

#include <stddef.h>

#include "channels.h"

/*
 * Crystal frame (all lengths in mm)
 * ---------------------------------
 *   z   along the crystal axis, from the front face (z = 0, facing the target)
 *       to the back face (z = length);
 *   x,y origin on the axis.  The hexagon's flats face the azimuths 0°, 60°, ...,
 *       300° (azimuth = atan2(y, x), a right-handed turn about +z), its corners
 *       lie at 30° + 60° k.
 *
 * Shape: the intersection of a cylinder of radius `radius` (0 <= z <= length)
 * with a tapered hexagonal prism, minus the central bore of radius
 * `bore_radius` running from z = bore_depth to the back face.  The prism is
 * either regular (irregular = 0), tapering linearly from apothem (centre-to-flat
 * distance) `hex_front` at z = 0 to `hex_back` at z = length, or given by its
 * six corners at the front and at the back face (irregular = 1: AGATA's
 * asymmetric shapes A, B, C, whose faces are planes through a front edge and
 * the back edge behind it; det_crystal_set_corners).  The corners go
 * counter-clockwise; a regular hexagon's corner k lies at azimuth 60 k - 30°.
 *
 * Segments: 6 sectors x 6 rings.  Sector s (A..F = 0..5) is the wedge from the
 * axis between the corner edges s and s + 1 (at each depth, the half-planes
 * from the axis through the corners there): for the regular hexagon the
 * azimuths [60 s - 30°, 60 s + 30°), centred on a flat.  AGATA draws the
 * sector boundaries along the hexagon's edges the same way (detector/README.md
 * cites it).  Ring r (0..5) covers z in [sum of ring[0..r-1], sum of
 * ring[0..r]) front to back.
 * segment = 6 * sector + ring, as in AGATA and adf.h's data:crystal; channel 36
 * is the core.
 *
 * Contacts: the outer surface (side faces and front face) carries the 36
 * segment contacts at 0 V; the bore surface is the core contact at +bias; the
 * back face is passivated (no contact; no charge flows through it).
 * The channel numbers (DET_SEGMENTS, DET_CORE, ...) are channels.h's.
 */

typedef struct det_crystal {
    double length;          /* mm */
    double radius;          /* mm, outer cylinder (the round back face) */
    double hex_front;       /* mm, hexagon apothem at z = 0 */
    double hex_back;        /* mm, hexagon apothem at z = length */
    double bore_radius;     /* mm */
    double bore_depth;      /* mm, z of the bore's end, from the front face */
    double ring[DET_RINGS]; /* mm, ring thicknesses front to back; they sum to length */
    double bias;            /* V on the core; the segments are at 0 V */
    double impurity_front;  /* net donor concentration at z = 0, 1e10 / cm^3 (n-type: > 0) */
    double impurity_back;   /* at z = length; linear in z in between */
    double preamp_rise;     /* ns, 10-90 % rise time of the preamplifier response */
    double phi110;          /* degrees: azimuth of the lattice's [110] axis; [001] lies along z */
    double anisotropic;     /* 1: drift along the lattice's axes (signals.c); 0: isotropic, along the field */
    int irregular;          /* 1: the hexagon is corner[] (hex_front, hex_back unused, 0); 0: regular */
    double corner[2][DET_SECTORS][2]; /* [front, back][k]: (x, y) mm of corner k at z = 0 and z = length */
    double side[DET_SECTORS][4];      /* irregular: face k (corners k, k + 1) as a unit outward normal n and d:
                                         inside when n . p <= d (det_crystal_set_corners derives it) */
} det_crystal;

/* Makes c irregular with these corners (front[k], back[k] = x, y in mm, counter-clockwise) and derives its faces;
 * det_crystal_validate_shape then checks them. */
void det_crystal_set_corners(det_crystal *c, const double front[DET_SECTORS][2], const double back[DET_SECTORS][2]);
/* The regular hexagon's corners of c (from hex_front, hex_back) into corner[2][6][2]. */
void det_regular_corners(const det_crystal *c, double corner[2][DET_SECTORS][2]);
/* Side face k of either kind as (n, d): inside when n . p <= d (n unit only for irregular crystals). */
void det_crystal_side(const det_crystal *c, int k, double s[4]);
/* 1 when a and b have the same shape (lengths, hexagon, bore, rings) to tol mm. */
int det_crystal_same_shape(const det_crystal *a, const det_crystal *b, double tol);

/* The shipped defaults (the values of detector/geometry/agata.geo). */
void det_crystal_default(det_crystal *c);
/* Checks that the numbers describe a buildable crystal; 0, or -1 with a message. */
int det_crystal_validate(const det_crystal *c, char *msg, size_t len);
/* The same for the shape alone (lengths, rings), not the bias, impurities and preamplifier. */
int det_crystal_validate_shape(const det_crystal *c, char *msg, size_t len);
/* Reads a geometry file (see detector/README.md).  Every key must be present
 * exactly once; unknown keys, bad numbers and inconsistent shapes are errors
 * naming the file and line.  0 on success, -1 with a message. */
int det_crystal_load(det_crystal *c, const char *path, char *msg, size_t len);
/* Writes the geometry in the same format; 0 or -1 with a message. */
int det_crystal_save(const det_crystal *c, const char *path, char *msg, size_t len);

/* Apothem of the regular hexagon at depth z (irregular crystals: the smallest of their faces' distances). */
double det_hex_apothem(const det_crystal *c, double z);
/* Distance from the axis to the outer surface at depth z in the direction azimuth (radians). */
double det_outline_radius(const det_crystal *c, double z, double azimuth);
/* 1 when p lies in the germanium (surfaces included), else 0. */
int det_crystal_contains(const det_crystal *c, const double p[3]);
/* Sector of the azimuth of (x, y) in the regular hexagon, 0..5; the axis itself is sector 0. */
int det_sector_of(double x, double y);
/* Sector of p in crystal c (either kind), 0..5; the axis is sector 0. */
int det_crystal_sector(const det_crystal *c, const double p[3]);
/* Ring of depth z, 0..5 (z below 0 gives 0, beyond the back gives 5). */
int det_ring_of(const det_crystal *c, double z);
/* Segment 0..35 by sector and ring, for any point. */
int det_crystal_segment(const det_crystal *c, const double p[3]);
/* Distance (mm) from p to the region of segment 0..35 (its sector's wedge,
 * its ring's slab; the front and back rings open-ended, as det_crystal_segment
 * assigns them); 0 inside. */
double det_segment_distance(const det_crystal *c, int segment, const double p[3]);
/* The contact a point on the crystal's surface belongs to: DET_CORE on the
 * bore, else its segment.  (The passivated back face has no contact; callers
 * handle it before asking.) */
int det_surface_contact(const det_crystal *c, const double p[3]);
/* Rotates p about the crystal axis by k sectors (k * 60°, k may be negative): a symmetry of regular crystals only. */
void det_rotate_sectors(const double p[3], int k, double out[3]);
/* Impurity (1e10 / cm^3) at depth z. */
double det_impurity(const det_crystal *c, double z);

#endif

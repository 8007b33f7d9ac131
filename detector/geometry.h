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
 * with a hexagonal prism tapering linearly from apothem (centre-to-flat
 * distance) `hex_front` at z = 0 to `hex_back` at z = length, minus the central
 * bore of radius `bore_radius` running from z = bore_depth to the back face.
 *
 * Segments: 6 sectors x 6 rings.  Sector s (A..F = 0..5) covers the azimuths
 * [60 s - 30°, 60 s + 30°), centred on a flat; ring r (0..5) covers
 * z in [sum of ring[0..r-1], sum of ring[0..r]) front to back.
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
} det_crystal;

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

/* Apothem of the hexagon at depth z. */
double det_hex_apothem(const det_crystal *c, double z);
/* Distance from the axis to the outer surface at depth z in the direction azimuth (radians). */
double det_outline_radius(const det_crystal *c, double z, double azimuth);
/* 1 when p lies in the germanium (surfaces included), else 0. */
int det_crystal_contains(const det_crystal *c, const double p[3]);
/* Sector of the azimuth of (x, y), 0..5; the axis itself is sector 0. */
int det_sector_of(double x, double y);
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
/* Rotates p about the crystal axis by k sectors (k * 60°, k may be negative). */
void det_rotate_sectors(const double p[3], int k, double out[3]);
/* Impurity (1e10 / cm^3) at depth z. */
double det_impurity(const det_crystal *c, double z);

#endif

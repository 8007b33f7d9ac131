/* detector basis: the PSA basis in memory, its file format (write, validating load), the plain import format, statistics. */
#ifndef NARWHAL_DET_BASIS_H
#define NARWHAL_DET_BASIS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "geometry.h"

/*
 * Basis file, version 1 (little-endian; detector/README.md has the table)
 *   header, 256 bytes:
 *     0   char[8] "NWBASIS\0"
 *     8   u32  version (1)             12  u32  header size (256; 448 with corners)
 *     16  u32  points P                20  u32  channels C (2..40; 37 for AGATA)
 *     24  u32  samples S (1..512)      28  u32  pretrigger samples (< S)
 *     32  f32  sampling period, ns     36  f32  grid spacing of the points, mm (0: not a grid)
 *     40  u32  flags (bit 0: imported, bit 1: anisotropic drift, bit 2: corners follow)
 *     44  u32  record size, 16 + 4 C S
 *     48  f64 x 18: crystal geometry (length, radius, hex_front, hex_back,
 *         bore_radius, bore_depth, ring[6], bias, impurity_front,
 *         impurity_back, preamp_rise), field grid mm, drift step ns (0: unknown)
 *     192 char[64]: imported bases: where the signals came from, as the import
 *         gave it, NUL-padded; flag bit 1 (anisotropic drift): f64 lattice_phi110
 *         then zeros; zero bytes otherwise (a basis of isotropic drift)
 *   flag bit 2 (an irregular crystal, geometry.h): the header is 448 bytes, the
 *   256 above then f64 x, y of the hexagon's 6 front and 6 back corners
 *   (hex_front and hex_back are 0).
 *   An imported basis describes its signals, not our geometry file: the shape
 *   is the crystal its points lie in, bias and preamp_rise are the import's
 *   (0: not given), impurities, field grid and drift step 0 (unknown).
 *   P records: f32 x, y, z (mm, crystal frame); i32 segment (0..C-2);
 *              f32 samples, channel by channel (C x S)
 *   trailer: u32 CRC-32 (IEEE 802.3, as zlib's crc32) of every byte before it.
 */
#define DET_BASIS_MAGIC "NWBASIS"
enum {
    DET_BASIS_VERSION = 1,
    DET_BASIS_HEADER = 256,
    DET_BASIS_MAX_CHANNELS = 40,
    DET_BASIS_MAX_SAMPLES = 512,
    DET_BASIS_IMPORTED = 1,
    DET_BASIS_ANISOTROPIC = 2, /* drifted with the anisotropic mobilities: lattice_phi110 stored */
    DET_BASIS_CORNERS = 4,     /* an irregular crystal: its hexagon's corners follow the header (set on writing) */
    DET_BASIS_CORNER_BYTES = 2 * DET_SECTORS * 2 * 8, /* f64 x, y of the 6 front, then the 6 back corners */
};

typedef struct det_basis {
    det_crystal crystal;
    uint32_t n_points, n_channels, n_samples, pretrigger, flags;
    double sample_ns, grid_mm, field_grid_mm, step_ns;
    char source[64];  /* imported: where the signals came from (NUL-terminated) */
    float *pos;       /* 3 per point */
    int32_t *segment; /* per point: the segment that collects the holes */
    float *signal;    /* n_points x n_channels x n_samples */
} det_basis;

/* The n_channels x n_samples block of point i. */
static inline float *det_basis_point(const det_basis *b, size_t i)
{
    return b->signal + i * (size_t)b->n_channels * b->n_samples;
}

/* Reads and checks a basis file: magic, version, sizes against the file size,
 * the checksum, the geometry, every point inside the crystal, every segment in
 * range, every sample finite.  0, or -1 with a message naming the file (and
 * the point or offset). */
int det_basis_load(det_basis *b, const char *path, char *msg, size_t len);
/* Checks every point: inside the crystal, segment in 0..n_channels-2, samples finite; 0 or -1 with the reason. */
int det_basis_check_points(const det_basis *b, char *why, size_t len);
/* Writes b (to path.tmp, renamed when complete).  0 or -1 with a message. */
int det_basis_save(const det_basis *b, const char *path, char *msg, size_t len);
void det_basis_free(det_basis *b);
/* Allocates the arrays for n_points with the header fields already set in *b. */
int det_basis_alloc(det_basis *b);

/* Streaming writer: header first (from b's header fields, b->n_points
 * records promised), then the records in order, then close (checks the
 * count, appends the checksum, renames into place). */
typedef struct det_basis_writer {
    FILE *f;
    char path[1024], tmp[1040];
    uint32_t crc, promised, written, record_floats;
} det_basis_writer;

int det_basis_writer_open(det_basis_writer *w, const det_basis *header, const char *path, char *msg, size_t len);
int det_basis_writer_put(det_basis_writer *w, const float pos[3], int32_t segment, const float *samples, char *msg,
                         size_t len);
int det_basis_writer_close(det_basis_writer *w, char *msg, size_t len);
/* Drops an unfinished file. */
void det_basis_writer_abort(det_basis_writer *w);

/*
 * Import format (a basis from another simulator), detector/README.md:
 *   text lines, '#' comments allowed:
 *     narwhal-basis-import 1
 *     points P
 *     channels C
 *     samples S
 *     sampling_ns T
 *     pretrigger K        (optional, default 0)
 *     grid_mm G           (optional: the spacing of the points' grid; else detected)
 *     preamp_ns R         (optional: 10-90 % rise of the preamplifier the signals include)
 *     bias_v V            (optional: the bias they were computed for)
 *     source TEXT         (optional, the rest of the line, at most 63 bytes; default the file's name)
 *     end
 *   then, right after the newline of "end", P binary records, little-endian:
 *     f32 x, y, z (mm, crystal frame); i32 segment; f32 C x S samples.
 * Points are checked against the crystal c (given by the caller): one outside
 * it (or not finite) is counted and left out, or an error with `strict`.  The
 * grid: o->grid_mm (checked), else the import's grid_mm (checked), else the
 * spacing detected from the points (0 when they lie on no grid, which the
 * generator refuses: its interpolation needs one).
 */
typedef struct det_import_options {
    double grid_mm; /* > 0: the points' grid spacing (checked); 0: the import's, else detected */
    int strict;     /* a point outside the crystal is an error, not skipped */
} det_import_options;

enum { DET_IMPORT_LISTED = 3 };
typedef struct det_import_report {
    uint32_t records;                       /* in the file */
    uint32_t outside;                       /* left out: outside the crystal or not finite */
    uint32_t outside_record[DET_IMPORT_LISTED];
    float outside_pos[DET_IMPORT_LISTED][3];
    int grid_detected;                      /* grid_mm came from the points, not from a key or option */
    char grid_note[160];                    /* why there is no grid (grid_mm 0), else empty */
} det_import_report;

int det_basis_import(det_basis *b, const char *path, const det_crystal *c, const det_import_options *o,
                     det_import_report *r, char *msg, size_t len);

/* The spacing of the grid the points lie on (every coordinate the smallest one
 * of its axis plus a whole number of spacings, to 1e-3 of a spacing): 0 and the
 * reason in why when they lie on none. */
double det_basis_detect_grid(const det_basis *b, char *why, size_t len);
/* 0 when every point lies on the grid of spacing h, else -1 and the first point off it. */
int det_basis_check_grid(const det_basis *b, double h, char *why, size_t len);

/* Labels against the geometry: a point whose label is no segment whose volume
 * (sector and ring) comes within reach_mm of it.  The collecting segment
 * differs from the geometric one near boundaries (holes drift across them),
 * so only a label with no such segment near is suspect (a wrong numbering, a
 * mirrored axis). */
typedef struct det_label_report {
    uint32_t far;                           /* such points */
    uint32_t other;                         /* points labelled with another segment than their volume's */
    double max_distance;                    /* mm, largest distance from a point to its label's volume */
    uint32_t far_point[DET_IMPORT_LISTED];
} det_label_report;
int det_basis_check_labels(const det_basis *b, double reach_mm, det_label_report *r);

/* CRC-32 (IEEE 802.3), continuing from crc (start with 0). */
uint32_t det_crc32(uint32_t crc, const void *data, size_t n);

typedef struct det_basis_stats {
    uint32_t points;
    uint32_t per_segment[DET_SEGMENTS];
    uint32_t rise_counted;          /* points whose core reached half the full charge */
    double rise_p50, rise_p90, rise_p99, rise_max, rise_min; /* core 10-90 %, ns */
    double transient_p50, transient_p90, transient_p99, transient_max; /* largest |signal| on a non-hit segment */
} det_basis_stats;

int det_basis_stats_compute(const det_basis *b, det_basis_stats *s);
void det_basis_stats_print(const det_basis_stats *s, FILE *out);
/* The core's 10-90 % rise time of point i in ns, or -1 when the core does not reach half the full charge. */
double det_basis_core_rise(const det_basis *b, size_t i);

#endif

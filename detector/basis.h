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
 *     8   u32  version (1)             12  u32  header size (256)
 *     16  u32  points P                20  u32  channels C (2..40; 37 for AGATA)
 *     24  u32  samples S (1..512)      28  u32  pretrigger samples (< S)
 *     32  f32  sampling period, ns     36  f32  grid spacing of the points, mm (0: not a grid)
 *     40  u32  flags (bit 0: imported) 44  u32  record size, 16 + 4 C S
 *     48  f64 x 18: crystal geometry (length, radius, hex_front, hex_back,
 *         bore_radius, bore_depth, ring[6], bias, impurity_front,
 *         impurity_back, preamp_rise), field grid mm, drift step ns (0: unknown)
 *     192 zero bytes up to 256
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
};

typedef struct det_basis {
    det_crystal crystal;
    uint32_t n_points, n_channels, n_samples, pretrigger, flags;
    double sample_ns, grid_mm, field_grid_mm, step_ns;
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
 *     end
 *   then, right after the newline of "end", P binary records, little-endian:
 *     f32 x, y, z (mm, crystal frame); i32 segment; f32 C x S samples.
 * Points are checked against the crystal c (given by the caller).
 */
int det_basis_import(det_basis *b, const char *path, const det_crystal *c, char *msg, size_t len);

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

/* mkforeign.c: writes a small synthetic "foreign" basis in basisgen's import format, as another simulator would hand one over. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basis.h"

/*
 * What makes it foreign: its own sampling (5 ns, 8 samples of baseline), a
 * preamplifier and bias of its own, points on a 6 mm grid that does not start
 * where ours does (offset 0.5 mm), and no grid_mm key (basisgen detects it).
 * Planted for basisgen's checks: OUTSIDE points beyond the crystal (left out
 * and counted) and MISLABELLED points labelled with the opposite sector (far
 * from every segment near them).  The signals are smooth in position, shaped
 * like a basis's: the hit segment rises to +1 and the core to -1 in a time
 * that grows with the distance to the outer surface; the two neighbours of the
 * hit segment in its ring carry a transient that returns to 0.
 */
enum { CHANNELS = DET_CHANNELS, SAMPLES = 80, PRETRIGGER = 8, OUTSIDE = 3, MISLABELLED = 2 };
#define SAMPLING_NS 5.0
#define GRID_MM 6.0
#define OFFSET_MM 0.5

static void signals(const det_crystal *c, const double p[3], int seg, float *s)
{
    double r = hypot(p[0], p[1]), depth = fmax(c->radius - r, 1.0);
    double rise = 4 + depth / 2 + p[2] / 30; /* samples */
    memset(s, 0, sizeof(float) * CHANNELS * SAMPLES);
    int sector = seg / DET_RINGS, ring = seg % DET_RINGS;
    int left = ((sector + 5) % DET_SECTORS) * DET_RINGS + ring, right = ((sector + 1) % DET_SECTORS) * DET_RINGS + ring;
    double side = atan2(p[1], p[0]) - sector * M_PI / 3; /* which neighbour is nearer */
    for (int k = PRETRIGGER; k < SAMPLES; k++) {
        double t = (k - PRETRIGGER) / rise, q = t >= 1 ? 1 : t, bump = t >= 1 ? 0 : 0.2 * sin(M_PI * t);
        s[seg * SAMPLES + k] = (float)q;
        s[DET_CORE * SAMPLES + k] = (float)-q;
        s[left * SAMPLES + k] = (float)(bump * (1 - side));
        s[right * SAMPLES + k] = (float)(bump * (1 + side));
    }
}

static void put_point(FILE *f, const det_crystal *c, const double p[3], int label)
{
    static float s[CHANNELS * SAMPLES];
    float pos[3] = {(float)p[0], (float)p[1], (float)p[2]};
    int32_t seg = label;
    signals(c, p, det_crystal_segment(c, p), s);
    fwrite(pos, sizeof pos[0], 3, f);
    fwrite(&seg, sizeof seg, 1, f);
    fwrite(s, sizeof s[0], CHANNELS * SAMPLES, f);
}

/* The grid points inside the crystal, in z, y, x order; their count (out may be NULL). */
static int grid(const det_crystal *c, double (*out)[3])
{
    int n = 0, m = (int)ceil(c->radius / GRID_MM) + 1;
    for (int k = 0; OFFSET_MM + k * GRID_MM <= c->length; k++)
        for (int j = -m; j <= m; j++)
            for (int i = -m; i <= m; i++) {
                double p[3] = {OFFSET_MM + i * GRID_MM, OFFSET_MM + j * GRID_MM, OFFSET_MM + k * GRID_MM};
                if (!det_crystal_contains(c, p)) continue;
                if (out) memcpy(out[n], p, sizeof out[n]);
                n++;
            }
    return n;
}

int main(int argc, char **argv)
{
    det_crystal c;
    char msg[512];
    if (argc != 3) {
        fprintf(stderr, "usage: mkforeign GEOMETRY OUT\n");
        return 2;
    }
    if (det_crystal_load(&c, argv[1], msg, sizeof msg)) {
        fprintf(stderr, "mkforeign: %s\n", msg);
        return 1;
    }
    int n = grid(&c, NULL);
    double (*p)[3] = malloc((size_t)n * sizeof *p);
    FILE *f = fopen(argv[2], "wb");
    if (!p || !f) {
        fprintf(stderr, "mkforeign: cannot write %s\n", argv[2]);
        return 1;
    }
    grid(&c, p);
    fprintf(f, "narwhal-basis-import 1\n# written by tests/tools/mkforeign.c\n"
               "source synthetic foreign basis (mkforeign)\npoints %d\nchannels %d\nsamples %d\nsampling_ns %g\n"
               "pretrigger %d\npreamp_ns 35\nbias_v 4000\nend\n",
            n + OUTSIDE, CHANNELS, SAMPLES, SAMPLING_NS, PRETRIGGER);
    int mislabelled = 0;
    for (int i = 0; i < n; i++) {
        int seg = det_crystal_segment(&c, p[i]);
        /* the opposite sector, same ring: at least the point's radius (> 25 mm) from that segment */
        if (i >= (mislabelled + 1) * n / (MISLABELLED + 1) && mislabelled < MISLABELLED && hypot(p[i][0], p[i][1]) > 25) {
            seg = (seg + 3 * DET_RINGS) % DET_SEGMENTS;
            mislabelled++;
        }
        put_point(f, &c, p[i], seg);
        if (i % (n / OUTSIDE) == 0 && i / (n / OUTSIDE) < OUTSIDE) { /* beyond the back face, on the grid */
            double q[3] = {p[i][0], p[i][1], OFFSET_MM + GRID_MM * ceil((c.length - OFFSET_MM) / GRID_MM)};
            put_point(f, &c, q, det_crystal_segment(&c, q));
        }
    }
    int bad = ferror(f);
    if (fclose(f) || bad) {
        fprintf(stderr, "mkforeign: error writing %s\n", argv[2]);
        return 1;
    }
    printf("mkforeign: %s: %d points inside the crystal of %s, %d outside, %d mislabelled\n", argv[2], n, argv[1],
           OUTSIDE, MISLABELLED);
    free(p);
    return 0;
}

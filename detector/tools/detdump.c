/* detdump: writes plain-text tables of the detector model for plotting (signals, a weighting-potential slice, rise times, the array). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "basis.h"
#include "field.h"

static void usage(void)
{
    fprintf(stderr, "usage: detdump signals BASIS X Y Z      the 37 signals of the basis point nearest (X, Y, Z) mm\n"
                    "       detdump slice GEO CHANNEL Z [H]   weighting potential of CHANNEL on the plane z = Z (grid H mm)\n"
                    "       detdump rise BASIS               histogram of the core 10-90 %% rise times (10 ns bins)\n"
                    "       detdump array ARRAY GEO          front-face outlines seen from the target (Hammer projection)\n");
}

static int fail(const char *msg)
{
    fprintf(stderr, "detdump: %s\n", msg);
    return 1;
}

static int signals(const char *path, const double want[3])
{
    det_basis b;
    char msg[600];
    if (det_basis_load(&b, path, msg, sizeof msg)) return fail(msg);
    size_t best = 0;
    double bd = INFINITY;
    for (size_t i = 0; i < b.n_points; i++) {
        double d = 0;
        for (int k = 0; k < 3; k++) d += pow(b.pos[3 * i + k] - want[k], 2);
        if (d < bd) bd = d, best = i;
    }
    const float *s = det_basis_point(&b, best);
    printf("# point %zu at (%.1f, %.1f, %.1f) mm, segment %d; columns: t (ns), channels 0..%u (core last)\n", best,
           b.pos[3 * best], b.pos[3 * best + 1], b.pos[3 * best + 2], b.segment[best], b.n_channels - 1);
    for (uint32_t k = 0; k < b.n_samples; k++) {
        printf("%g", (k - (double)b.pretrigger) * b.sample_ns);
        for (uint32_t ch = 0; ch < b.n_channels; ch++) printf(" %.5f", s[ch * b.n_samples + k]);
        putchar('\n');
    }
    det_basis_free(&b);
    return 0;
}

static int slice(const char *geo, int channel, double z, double h)
{
    det_crystal c;
    det_fields f;
    char msg[600];
    if (channel < 0 || channel >= DET_CHANNELS) return fail("channel must be 0..36");
    if (det_crystal_load(&c, geo, msg, sizeof msg) || det_fields_solve(&f, &c, h, 1e-5, msg, sizeof msg)) return fail(msg);
    printf("# weighting potential of channel %d on z = %g mm (NaN outside the crystal); columns: x y w\n", channel, z);
    for (double y = -41; y <= 41.001; y += 0.5) {
        for (double x = -41; x <= 41.001; x += 0.5) {
            double p[3] = {x, y, z};
            float w[DET_CHANNELS];
            det_fields_weighting(&f, p, w);
            if (det_crystal_contains(&c, p)) printf("%g %g %.5f\n", x, y, w[channel]);
            else printf("%g %g NaN\n", x, y);
        }
        putchar('\n');
    }
    det_fields_free(&f);
    return 0;
}

static int rise(const char *path)
{
    det_basis b;
    char msg[600];
    long bins[200] = {0};
    if (det_basis_load(&b, path, msg, sizeof msg)) return fail(msg);
    for (size_t i = 0; i < b.n_points; i++) {
        double r = det_basis_core_rise(&b, i);
        if (r >= 0 && r < 2000) bins[(int)(r / 10)]++;
    }
    printf("# core 10-90 %% rise time: bin start (ns), points\n");
    for (int k = 0; k < 60; k++) printf("%d %ld\n", 10 * k, bins[k]);
    det_basis_free(&b);
    return 0;
}

/* Hammer projection of a lab direction (beam along +z at the top). */
static void hammer(const double v[3], double *px, double *py)
{
    double lat = asin(v[1] / sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
    double lon = atan2(v[0], v[2]);
    double d = sqrt(1 + cos(lat) * cos(lon / 2));
    *px = 2 * sqrt(2.0) * cos(lat) * sin(lon / 2) / d;
    *py = sqrt(2.0) * sin(lat) / d;
}

static int array(const char *path, const char *geo)
{
    det_array a;
    det_crystal c;
    char msg[600];
    if (det_crystal_load(&c, geo, msg, sizeof msg) || det_array_load(&a, path, msg, sizeof msg)) return fail(msg);
    printf("# front-face outlines, Hammer projection (x = atan2(x, z) across, y = latitude of y); blocks per crystal\n");
    for (int i = 0; i < a.n; i++) {
        double prev = NAN;
        printf("# crystal %d\n", a.crystal[i].id);
        for (int k = 0; k <= 72; k++) {
            double phi = 2 * M_PI * k / 72, r = det_outline_radius(&c, 0, phi);
            double p[3] = {r * cos(phi), r * sin(phi), 0}, lab[3], x, y;
            det_to_lab(&a.crystal[i], p, lab);
            hammer(lab, &x, &y);
            if (!isnan(prev) && fabs(x - prev) > 1) putchar('\n'); /* the outline wraps round the map's edge */
            printf("%.5f %.5f\n", x, y);
            prev = x;
        }
        printf("\n\n");
    }
    det_array_free(&a);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 6 && !strcmp(argv[1], "signals")) {
        double p[3] = {atof(argv[3]), atof(argv[4]), atof(argv[5])};
        return signals(argv[2], p);
    }
    if ((argc == 5 || argc == 6) && !strcmp(argv[1], "slice"))
        return slice(argv[2], atoi(argv[3]), atof(argv[4]), argc == 6 ? atof(argv[5]) : 1.0);
    if (argc == 3 && !strcmp(argv[1], "rise")) return rise(argv[2]);
    if (argc == 4 && !strcmp(argv[1], "array")) return array(argv[2], argv[3]);
    usage();
    return 2;
}

/* drift_times.c: how the lattice changes the default crystal's signals: hole and electron drift times of a point under a <100> axis (azimuth 0) and one under a <110> axis (azimuth 45 degrees) at the same radius and depth, with both mobility models, as basisgen computes a basis point's signals (1 mm field grid, tolerance 1e-5).
 * Build and run from the repository root after make:
 *   cc -std=c11 -D_DEFAULT_SOURCE -O2 -iquote adf -iquote detector sample_runs/psa/issue15-aniso/drift_times.c -o build/drift_times \
 *      build/lib/libdetector.a build/lib/libadf.a -lm -fopenmp && build/drift_times */
#include <math.h>
#include <stdio.h>

#include "channels.h"
#include "field.h"
#include "geometry.h"
#include "signals.h"

int main(void)
{
    static float out[DET_CHANNELS * 512];
    const double depth[] = { 30, 50, 70 };
    det_crystal c;
    det_fields f;
    det_signal_config cfg;
    char msg[600];
    if (det_crystal_load(&c, "detector/geometry/agata.geo", msg, sizeof msg) ||
        det_fields_solve(&f, &c, 1, 1e-5, msg, sizeof msg)) {
        fprintf(stderr, "drift_times: %s\n", msg);
        return 1;
    }
    det_signal_config_default(&cfg);
    printf("# z_mm r_mm model | <100> (azimuth 0): hole_ns electron_ns segment | <110> (azimuth 45): hole_ns "
           "electron_ns segment | <110> - <100>: hole_ns, last carrier_ns\n");
    for (int zi = 0; zi < 3; zi++)
        for (double r = 10; r <= 35; r += 5)
            for (int aniso = 0; aniso < 2; aniso++) {
                det_drift_info in[2];
                int bad = 0;
                f.crystal.anisotropic = aniso;
                for (int k = 0; k < 2; k++) {
                    double az = k ? M_PI / 4 : 0, p[3] = { r * cos(az), r * sin(az), depth[zi] };
                    bad |= det_signal_compute(&f, &cfg, p, out, &in[k]) != 0;
                }
                if (bad) {
                    printf("%4.0f %4.0f %-5s | outside the crystal\n", depth[zi], r, aniso ? "aniso" : "iso");
                    continue;
                }
                double last0 = fmax(in[0].hole_ns, in[0].electron_ns), last1 = fmax(in[1].hole_ns, in[1].electron_ns);
                printf("%4.0f %4.0f %-5s | %6.1f %6.1f %2d | %6.1f %6.1f %2d | %+6.1f %+6.1f\n", depth[zi], r,
                       aniso ? "aniso" : "iso", in[0].hole_ns, in[0].electron_ns, in[0].hole_contact, in[1].hole_ns,
                       in[1].electron_ns, in[1].hole_contact, in[1].hole_ns - in[0].hole_ns, last1 - last0);
            }
    det_fields_free(&f);
    return 0;
}

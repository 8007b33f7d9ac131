/* fuzz_histo.h: the histogrammer's fuzz configuration, one for its filter (fuzz_histo.c) and its consumer (fuzz_histo_sink.c). */
#ifndef NARWHAL_FUZZ_HISTO_H
#define NARWHAL_FUZZ_HISTO_H
/* A published run writes a file per histogram and crystal: one run in 16. */
#define FZ_STOPS 16
#include "harness.h"

/* Every quantity, few bins (each run clears them), the CSV written at stop, no plots.  No histogram
 * per segment: 6,480 files at every stop. */
static void fz_conf(FILE *fp, const char *dir, const char *basis)
{
    fprintf(fp, "OutputDir %s/histo\nDevice cpu\nFormats csv\nPlot none\nCrystals 180\nSegments 36\n"
                "Histogram core crystal.core crystal 16 0 8192\n"
                "Histogram segment crystal.segment crystal 8 0 4096\n"
                "Histogram hit psa.e sum 64 0 4096\n"
                "Histogram x psa.x crystal 8 -45 45\nHistogram y psa.y sum 8 -45 45\nHistogram z psa.z sum 8 0 90\n"
                "Histogram pcore psa.core sum 64 0 4096\n"
                "Histogram gamma tracked.e sum 64 0 4096\nHistogram gamma_dc tracked.e_dc sum 64 0 4096\n"
                "Histogram gg gg.e sum 16 0 4096 16 0 4096\nHistogram gg_dc gg.e_dc sum 16 0 4096 16 0 4096\n"
                "Histogram xy psa.xy sum 9 -45 45 9 -45 45\n",
            dir);
}
#endif

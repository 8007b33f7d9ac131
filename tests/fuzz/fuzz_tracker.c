/* fuzz_tracker.c: libFuzzer target: tracker's process_block on mutated event:data:psa blocks, the 180-crystal array. */
#define NARVAL_FILTER
#define FZ_ACTOR "Tracker"
#include "harness.h"

/* The shipped settings on the CPU, each tracked event passed on too (KeepInput). */
static void fz_conf(FILE *fp, const char *dir, const char *basis)
{
    fprintf(fp, "Array detector/arrays/agata180.txt\nGeometry detector/geometry/agata.geo\nDevice cpu\n"
                "Input psa\nKeepInput true\nCoreScale true\n");
}

/* fuzz_psa.c: libFuzzer target: psa's process_block on mutated data:crystal blocks, a small basis, every search path on the CPU. */
#define NARVAL_FILTER
#define FZ_ACTOR "PSA"
#include "harness.h"

/* The adaptive search (its coarse and near passes), the start-time shifts and the search log:
 * the most code a block can reach on the CPU. */
static void fz_conf(FILE *fp, const char *dir, const char *basis)
{
    fprintf(fp, "Basis %s\nDevice cpu\nThreads 1\nSearch adaptive\nCoarseGrid 12\nAdaptiveRadius 12\n"
                "SearchLog %s/search.log\n", basis, dir);
}

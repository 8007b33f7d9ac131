/* fuzz_builder.c: libFuzzer target: builder's process_block on mutated blocks of data:psa and meta:sync frames. */
#define NARVAL_FILTER
#define FZ_ACTOR "Builder"
#include "harness.h"

/* A small MaxHeld so that events also close early; two crystals waited for from the start. */
static void fz_conf(FILE *fp, const char *dir, const char *basis)
{
    fprintf(fp, "Window 50\nDelay 1000\nMaxHeld 16\nCrystals 0-1\n");
}

/* fuzz_histo.c: libFuzzer target: histo's process_block (the filter) on mutated blocks of every frame it fills from. */
#define NARVAL_FILTER
#define FZ_ACTOR "Histo"
#include "fuzz_histo.h"

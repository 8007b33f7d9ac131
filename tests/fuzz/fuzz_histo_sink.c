/* fuzz_histo_sink.c: libFuzzer target: histo_sink's process_block (the consumer) on mutated blocks of every frame it fills from. */
#define NARVAL_CONSUMER
#define FZ_ACTOR "Histo"
#include "fuzz_histo.h"

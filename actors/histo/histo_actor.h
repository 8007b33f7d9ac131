/* histo_actor.h: what the two histo libraries share: histo.so (filter, passes its input on) and histo_sink.so (consumer, last in a chain). */
#ifndef NARWHAL_HISTO_ACTOR_H
#define NARWHAL_HISTO_ACTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "histo_spec.h"

/* "filter" or "consumer": defined by the file that defines process_block. */
extern const char histo_role[];

/* The body of process_block for both roles.  The filter copies every input
 * frame to its output unchanged (pass = true); the consumer has no output
 * (out NULL, out_size 0, pass = false). */
unsigned histo_actor_block(void *algo_data, const void *in, unsigned in_size, void *out,
                           unsigned out_size, unsigned *used, bool pass);

/* The counts so far (histogram_bin.h's layout, the declarations' groups at
 * their offsets) and the declarations, for process_spectra (histo_live.c):
 * between two blocks, on the thread that makes them.  0 or a NARVAL code
 * (logged). */
unsigned histo_actor_counts(void *algo_data, const histo_spec **declared, const uint64_t **counts);

#endif

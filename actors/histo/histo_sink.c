/* histo_sink.c: process_block of histo_sink.so, the consumer that ends a chain with the histograms (a NARVAL chain ends with a consumer). */
#define NARVAL_CONSUMER
#include "histo_actor.h"
#include "narval.h"

const char histo_role[] = "consumer";

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer,
                   unsigned int *error_code)
{
    unsigned used;
    *error_code = histo_actor_block(algo_data, input_buffer, size_of_input_buffer, NULL, 0, &used,
                                    false);
}

/* histo_filter.c: process_block of histo.so, the filter: histograms every frame and passes the input on unchanged. */
#define NARVAL_FILTER
#include "histo_actor.h"
#include "narval.h"

const char histo_role[] = "filter";

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer,
                   void *output_buffer, unsigned int size_of_output_buffer,
                   unsigned int *used_size_of_output_buffer, unsigned int *error_code)
{
    *error_code = histo_actor_block(algo_data, input_buffer, size_of_input_buffer, output_buffer,
                                    size_of_output_buffer, used_size_of_output_buffer, true);
}

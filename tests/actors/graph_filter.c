/* graph_filter.c: test filter for graph topologies: logs the frames it is handed and passes them on unchanged. */
#define NARVAL_FILTER
#include "graph.h"

GR_ACTOR(F)

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer, void *output_buffer,
                   unsigned int size_of_output_buffer, unsigned int *used_size_of_output_buffer,
                   unsigned int *error_code)
{
    *used_size_of_output_buffer = 0;
    if (size_of_input_buffer > size_of_output_buffer) {
        /* Asked again with a buffer this large: logged once, when passed on. */
        *used_size_of_output_buffer = size_of_input_buffer;
        *error_code = NARVAL_E_OUTPUT_SIZE;
        return;
    }
    *error_code = gr_block(algo_data, input_buffer, size_of_input_buffer);
    if (*error_code)
        return;
    memcpy(output_buffer, input_buffer, size_of_input_buffer);
    *used_size_of_output_buffer = size_of_input_buffer;
}

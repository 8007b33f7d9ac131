/* graph_consumer.c: test consumer for graph topologies: logs the frames it is handed. */
#define NARVAL_CONSUMER
#include "graph.h"

GR_ACTOR(C)

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer, unsigned int *error_code)
{
    *error_code = gr_block(algo_data, input_buffer, size_of_input_buffer);
}

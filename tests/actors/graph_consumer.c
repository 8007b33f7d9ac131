/* graph_consumer.c: test consumer for graph topologies: logs the frames it is handed. */
#define NARVAL_CONSUMER
#include "graph.h"

static unsigned instances;

void process_config(const char *directory_path, unsigned int *error_code)
{
    gr_log("C", "process_config", directory_path);
    *error_code = NARVAL_OK;
}

void *process_register(unsigned int *error_code) { return gr_register('C', &instances, error_code); }

void process_initialise(void *algo_data, unsigned int *error_code) { gr_call(algo_data, "process_initialise", error_code); }
void process_start(void *algo_data, unsigned int *error_code) { gr_call(algo_data, "process_start", error_code); }
void process_pause(void *algo_data, unsigned int *error_code) { gr_call(algo_data, "process_pause", error_code); }
void process_resume(void *algo_data, unsigned int *error_code) { gr_call(algo_data, "process_resume", error_code); }
void process_stop(void *algo_data, unsigned int *error_code) { gr_call(algo_data, "process_stop", error_code); }
void process_reset(void *algo_data, unsigned int *error_code) { gr_call(algo_data, "process_reset", error_code); }
void process_unload(void *algo_data, unsigned int *error_code) { gr_unload(algo_data, error_code); }

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer, unsigned int *error_code)
{
    *error_code = gr_block(algo_data, input_buffer, size_of_input_buffer);
}

/* graph_filter.c: test filter for graph topologies: logs the frames it is handed and passes them on unchanged. */
#define NARVAL_FILTER
#include "graph.h"

static unsigned instances;

void process_config(const char *directory_path, unsigned int *error_code)
{
    gr_log("F", "process_config", directory_path);
    *error_code = NARVAL_OK;
}

void *process_register(unsigned int *error_code) { return gr_register('F', &instances, error_code); }

void process_initialise(void *algo_data, unsigned int *error_code) { gr_call(algo_data, "process_initialise", error_code); }
void process_start(void *algo_data, unsigned int *error_code) { gr_call(algo_data, "process_start", error_code); }
void process_pause(void *algo_data, unsigned int *error_code) { gr_call(algo_data, "process_pause", error_code); }
void process_resume(void *algo_data, unsigned int *error_code) { gr_call(algo_data, "process_resume", error_code); }
void process_stop(void *algo_data, unsigned int *error_code) { gr_call(algo_data, "process_stop", error_code); }
void process_reset(void *algo_data, unsigned int *error_code) { gr_call(algo_data, "process_reset", error_code); }
void process_unload(void *algo_data, unsigned int *error_code) { gr_unload(algo_data, error_code); }

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

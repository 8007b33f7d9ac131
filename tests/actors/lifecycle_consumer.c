/* lifecycle_consumer.c: test consumer that logs every call with the sequence numbers of the frames it takes. */
#define NARVAL_CONSUMER
#include "lifecycle.h"

static unsigned config_calls, instances;

void process_config(const char *directory_path, unsigned int *error_code)
{
    lc_config("C", &config_calls, directory_path, error_code);
}

void *process_register(unsigned int *error_code) { return lc_register("C", &instances, error_code); }

void process_initialise(void *algo_data, unsigned int *error_code) { lc_lifecycle(algo_data, LC_INITIALISE, error_code); }
void process_start(void *algo_data, unsigned int *error_code) { lc_lifecycle(algo_data, LC_START, error_code); }
void process_pause(void *algo_data, unsigned int *error_code) { lc_lifecycle(algo_data, LC_PAUSE, error_code); }
void process_resume(void *algo_data, unsigned int *error_code) { lc_lifecycle(algo_data, LC_RESUME, error_code); }
void process_stop(void *algo_data, unsigned int *error_code) { lc_lifecycle(algo_data, LC_STOP, error_code); }
void process_reset(void *algo_data, unsigned int *error_code) { lc_lifecycle(algo_data, LC_RESET, error_code); }
void process_unload(void *algo_data, unsigned int *error_code) { lc_unload(algo_data, error_code); }

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer, unsigned int *error_code)
{
    char seqs[256];
    unsigned frames;
    size_t bad_offset;
    lc_sequences(input_buffer, size_of_input_buffer, seqs, sizeof seqs, &frames);
    *error_code = lc_enter(algo_data, LC_BLOCK, "in=%u frames=%u seq=%s", size_of_input_buffer, frames, seqs);
    if (!*error_code && adf_validate(input_buffer, size_of_input_buffer, &bad_offset, NULL) < 0)
        *error_code = NARVAL_E_INPUT;
}

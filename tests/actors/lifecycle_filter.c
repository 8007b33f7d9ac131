/* lifecycle_filter.c: test filter that logs every call and passes its frames on, or holds them until the flush. */
#define NARVAL_FILTER
#include "lifecycle.h"

static unsigned config_calls, instances;

void process_config(const char *directory_path, unsigned int *error_code)
{
    lc_config("F", &config_calls, directory_path, error_code);
}

void *process_register(unsigned int *error_code) { return lc_register("F", &instances, error_code); }

void process_initialise(void *algo_data, unsigned int *error_code) { lc_lifecycle(algo_data, LC_INITIALISE, error_code); }
void process_start(void *algo_data, unsigned int *error_code) { lc_lifecycle(algo_data, LC_START, error_code); }
void process_stop(void *algo_data, unsigned int *error_code) { lc_lifecycle(algo_data, LC_STOP, error_code); }
void process_unload(void *algo_data, unsigned int *error_code) { lc_unload(algo_data, error_code); }

static int hold(lc_instance *in, const void *input, unsigned size)
{
    uint8_t *grown = realloc(in->held, in->held_size + size);
    if (!grown && size > 0)
        return NARVAL_E_NOMEM;
    in->held = grown;
    memcpy(in->held + in->held_size, input, size);
    in->held_size += size;
    return NARVAL_OK;
}

/* Copies whole frames; on NOSPACE the writer goes on counting what all of them need. */
static int copy_frames(adf_writer *w, const void *input, size_t size)
{
    adf_iter it;
    adf_frame f;
    int rc;
    adf_iter_init(&it, input, size);
    while ((rc = adf_iter_next(&it, &f)) > 0)
        adf_put_frame(w, f.data, f.key.length);
    return rc < 0 ? rc : w->status;
}

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer, void *output_buffer,
                   unsigned int size_of_output_buffer, unsigned int *used_size_of_output_buffer,
                   unsigned int *error_code)
{
    lc_instance *in = algo_data;
    int flushing = size_of_input_buffer == 0;
    const void *source = flushing ? in->held : input_buffer;
    size_t size = flushing ? in->held_size : size_of_input_buffer;
    adf_writer w;
    char seqs[128];
    unsigned frames;
    *used_size_of_output_buffer = 0;
    lc_sequences(input_buffer, size_of_input_buffer, seqs, sizeof seqs, &frames);
    *error_code = lc_enter(in, LC_BLOCK, "in=%u seq=%s out=%u", size_of_input_buffer, seqs, size_of_output_buffer);
    if (*error_code)
        return;
    if (lc_need(in->who)) {
        *used_size_of_output_buffer = lc_need(in->who);
        *error_code = NARVAL_E_OUTPUT_SIZE;
        return;
    }
    if (!flushing && lc_env_names("LIFECYCLE_HOLD", in->who)) {
        *error_code = (unsigned)hold(in, input_buffer, size_of_input_buffer);
        return;
    }
    adf_writer_init(&w, output_buffer, size_of_output_buffer);
    int rc = copy_frames(&w, source, size);
    if (rc == ADF_E_NOSPACE) {
        *used_size_of_output_buffer = (unsigned)adf_writer_needed(&w);
        *error_code = NARVAL_E_OUTPUT_SIZE;
        return;
    }
    if (rc != ADF_OK) {
        *error_code = NARVAL_E_INPUT;
        return;
    }
    if (flushing) {
        free(in->held);
        in->held = NULL;
        in->held_size = 0;
    }
    *used_size_of_output_buffer = (unsigned)w.used;
    if (lc_env_names("LIFECYCLE_OVERCLAIM", in->who))
        *used_size_of_output_buffer = size_of_output_buffer + 1;
}

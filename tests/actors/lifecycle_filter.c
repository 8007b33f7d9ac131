/* lifecycle_filter.c: test filter that logs every call and passes its frames on, or holds them until the flush or meta:eof. */
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
void process_pause(void *algo_data, unsigned int *error_code) { lc_lifecycle(algo_data, LC_PAUSE, error_code); }
void process_resume(void *algo_data, unsigned int *error_code) { lc_lifecycle(algo_data, LC_RESUME, error_code); }
void process_stop(void *algo_data, unsigned int *error_code) { lc_lifecycle(algo_data, LC_STOP, error_code); }
void process_reset(void *algo_data, unsigned int *error_code) { lc_lifecycle(algo_data, LC_RESET, error_code); }
void process_unload(void *algo_data, unsigned int *error_code) { lc_unload(algo_data, error_code); }

static unsigned hold(lc_instance *in, const void *input, unsigned size)
{
    if (size == 0)
        return NARVAL_OK;
    uint8_t *grown = realloc(in->held, in->held_size + size);
    if (!grown)
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

/* The frames of source into the output; NARVAL_E_OUTPUT_SIZE, with what
 * they all need in *used, when they do not fit. */
static unsigned emit(const void *source, size_t size, void *output, unsigned cap, unsigned *used)
{
    adf_writer w;
    adf_writer_init(&w, output, cap);
    int rc = copy_frames(&w, source, size);
    if (rc == ADF_E_NOSPACE) {
        *used = (unsigned)adf_writer_needed(&w);
        return NARVAL_E_OUTPUT_SIZE;
    }
    if (rc != ADF_OK)
        return NARVAL_E_INPUT;
    *used = (unsigned)w.used;
    return NARVAL_OK;
}

/* Hold mode: the input joins the frames held; at the flush (empty input)
 * or a meta:eof they all go out.  When they do not fit the input is taken
 * back, so that the host's call again, with a larger buffer, brings it once. */
static unsigned hold_or_release(lc_instance *in, const void *input, unsigned size, void *output, unsigned cap,
                                unsigned *used)
{
    size_t before = in->held_size;
    unsigned code = hold(in, input, size);
    if (code || (size > 0 && !lc_has_eof(input, size)))
        return code;
    code = emit(in->held, in->held_size, output, cap, used);
    if (code) {
        in->held_size = before;
        return code;
    }
    free(in->held);
    in->held = NULL;
    in->held_size = 0;
    return NARVAL_OK;
}

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer, void *output_buffer,
                   unsigned int size_of_output_buffer, unsigned int *used_size_of_output_buffer,
                   unsigned int *error_code)
{
    lc_instance *in = algo_data;
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
    if (lc_env_names("LIFECYCLE_HOLD", in->who))
        *error_code = hold_or_release(in, input_buffer, size_of_input_buffer, output_buffer, size_of_output_buffer,
                                      used_size_of_output_buffer);
    else
        *error_code =
            emit(input_buffer, size_of_input_buffer, output_buffer, size_of_output_buffer, used_size_of_output_buffer);
    if (!*error_code && lc_env_names("LIFECYCLE_OVERCLAIM", in->who))
        *used_size_of_output_buffer = size_of_output_buffer + 1;
}

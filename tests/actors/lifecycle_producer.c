/* lifecycle_producer.c: test producer that logs every call and emits numbered frames, a few per block. */
#define NARVAL_PRODUCER
#include "lifecycle.h"

#include <signal.h>

static unsigned config_calls, instances;

void process_config(const char *directory_path, unsigned int *error_code)
{
    lc_config("P", &config_calls, directory_path, error_code);
}

void *process_register(unsigned int *error_code) { return lc_register("P", &instances, error_code); }

void process_initialise(void *algo_data, unsigned int *error_code) { lc_lifecycle(algo_data, LC_INITIALISE, error_code); }
void process_start(void *algo_data, unsigned int *error_code) { lc_lifecycle(algo_data, LC_START, error_code); }
void process_pause(void *algo_data, unsigned int *error_code) { lc_lifecycle(algo_data, LC_PAUSE, error_code); }
void process_resume(void *algo_data, unsigned int *error_code) { lc_lifecycle(algo_data, LC_RESUME, error_code); }
void process_stop(void *algo_data, unsigned int *error_code) { lc_lifecycle(algo_data, LC_STOP, error_code); }
void process_reset(void *algo_data, unsigned int *error_code) { lc_lifecycle(algo_data, LC_RESET, error_code); }
void process_unload(void *algo_data, unsigned int *error_code) { lc_unload(algo_data, error_code); }

const char *process_describe(void)
{
    return "lifecycle_producer (producer): test actor; logs every call to $LIFECYCLE_LOG\n";
}

/* Writes frames next_seq, next_seq + 1, ... while they fit; *emitted says how many. */
static int write_frames(lc_instance *in, adf_writer *w, unsigned count, unsigned *emitted)
{
    *emitted = 0;
    for (unsigned i = 0; i < count; i++) {
        unsigned seq = in->next_seq + i;
        adf_begin(w, ADF_ID_META_SYNC, seq, 1000u * seq);
        adf_put_le32(w, seq);
        int rc = adf_end(w);
        if (rc != ADF_OK)
            return rc;
        (*emitted)++;
    }
    return ADF_OK;
}

/* LIFECYCLE_EOF: once the run's frames are all out, a meta:eof after them
 * in this block if it fits (it then counts the frames and bytes before it). */
static void write_eof(lc_instance *in, adf_writer *w, unsigned total)
{
    adf_eof e = {.frames = total, .bytes = (uint64_t)total * LC_FRAME_SIZE};
    if (in->eof_sent || in->next_seq < total || lc_env_unsigned("LIFECYCLE_EOF", 0) == 0)
        return;
    in->eof_sent = adf_eof_write(w, total, 1000ull * total, &e) == ADF_OK;
}

void process_block(void *algo_data, void *output_buffer, unsigned int size_of_output_buffer,
                   unsigned int *used_size_of_output_buffer, unsigned int *error_code)
{
    lc_instance *in = algo_data;
    unsigned total = lc_env_unsigned("LIFECYCLE_FRAMES", 10), per_block = lc_env_unsigned("LIFECYCLE_PER_BLOCK", 4);
    unsigned left = total - in->next_seq, count = left < per_block ? left : per_block, emitted;
    adf_writer w;
    *used_size_of_output_buffer = 0;
    *error_code = lc_enter(in, LC_BLOCK, "size=%u", size_of_output_buffer);
    if (*error_code)
        return;
    if (in->calls[LC_BLOCK] == lc_env_unsigned("LIFECYCLE_SIGNAL", 0)) {
        const char *spec = getenv("LIFECYCLE_SIGNAL");
        raise(strstr(spec, ":TERM") ? SIGTERM : strstr(spec, ":STOP") ? SIGSTOP : SIGINT);
    }
    adf_writer_init(&w, output_buffer, size_of_output_buffer);
    int rc = write_frames(in, &w, count, &emitted);
    in->next_seq += emitted;
    if (rc == ADF_OK)
        write_eof(in, &w, total);
    if (w.used == 0 && (count > 0 || (lc_env_unsigned("LIFECYCLE_EOF", 0) && !in->eof_sent))) {
        /* Not even one frame fits: say how much one block takes. */
        *used_size_of_output_buffer = count ? count * LC_FRAME_SIZE : ADF_KEY_SIZE + ADF_EOF_PAYLOAD;
        *error_code = NARVAL_E_OUTPUT_SIZE;
        return;
    }
    *used_size_of_output_buffer = (unsigned)w.used;
}

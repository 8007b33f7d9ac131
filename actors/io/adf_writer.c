/* adf_writer.c: consumer that writes every frame it receives to an ADF file, complete only once the run stops. */
#define NARVAL_CONSUMER
#include <errno.h>
#include <libgen.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kit.h"

typedef struct writer_conf {
    char *file;
} writer_conf;

static const kit_key writer_keys[] = {
    { "File", KIT_STRING, offsetof(writer_conf, file), NULL,
      .help = "output ADF file, written as FILE.part and renamed at the end of the run" },
};

static const kit_spec writer_spec = {
    "ADFWriter", "consumer", "writes every frame it receives to an ADF file",
    writer_keys, KIT_COUNT(writer_keys), sizeof(writer_conf),
};

static writer_conf conf;

/* The instances share the configuration, hence the output path: one writes at a time. */
static atomic_flag output_taken = ATOMIC_FLAG_INIT;

typedef struct writer {
    kit_instance k;
    char *part;      /* conf.file + ".part": what the run writes until it stops */
    adf_file *out;   /* open while running */
    uint64_t frames, bytes;
} writer;

/* Counts the frames of a block, and refuses a malformed one before anything is written. */
static unsigned count_frames(writer *w, const void *in, unsigned size, uint64_t *frames)
{
    adf_iter it;
    adf_frame f;
    int rc;
    adf_iter_init(&it, in, size);
    *frames = 0;
    while ((rc = adf_iter_next(&it, &f)) > 0)
        ++*frames;
    if (rc < 0) {
        char msg[256];
        adf_iter_describe(&it, msg, sizeof msg);
        return kit_fail(w->k.name, NARVAL_E_INPUT, "input block of %u bytes: %s; nothing of it "
                        "written", size, msg);
    }
    return 0;
}

static unsigned write_block(writer *w, const void *in, unsigned size)
{
    uint64_t frames;
    unsigned code = count_frames(w, in, size, &frames);
    if (code || size == 0)
        return code;
    int rc = adf_file_write(w->out, in, size);
    if (rc != ADF_OK) {
        char msg[512];
        adf_file_describe(w->out, rc, msg, sizeof msg);
        return kit_fail(w->k.name, kit_adf_code(rc), "%s", msg);
    }
    w->frames += frames;
    w->bytes += size;
    return 0;
}

/* Fails at initialise, not at the end of a run, when the output directory is not writable. */
static unsigned writer_initialise(void *algo_data)
{
    writer *w = algo_data;
    size_t n = strlen(conf.file);
    char *dir = strdup(conf.file);
    w->part = malloc(n + sizeof ".part");
    if (!dir || !w->part) {
        free(dir);
        return kit_fail(w->k.name, NARVAL_E_NOMEM, "no memory for the output path");
    }
    snprintf(w->part, n + sizeof ".part", "%s.part", conf.file);
    unsigned code = 0;
    const char *parent = dirname(dir);
    if (access(parent, W_OK | X_OK) != 0)
        code = kit_fail(w->k.name, NARVAL_E_IO, "cannot write '%s' into '%s': %s", conf.file,
                        parent, strerror(errno));
    free(dir);
    return code;
}

static unsigned writer_start(void *algo_data)
{
    writer *w = algo_data;
    if (atomic_flag_test_and_set(&output_taken))
        return kit_fail(w->k.name, NARVAL_E_CONFIG, "another ADFWriter instance is writing '%s' "
                        "(the instances of a library share its configuration)", conf.file);
    if (adf_file_open_write(&w->out, w->part, 0) != ADF_OK) {
        atomic_flag_clear(&output_taken);
        return kit_fail(w->k.name, NARVAL_E_IO, "cannot create '%s': %s", w->part, strerror(errno));
    }
    w->frames = 0;
    w->bytes = 0;
    return 0;
}

/* Closes the .part file and gives the output back to the other instances. */
static int close_output(writer *w)
{
    int rc = adf_file_close(w->out);
    w->out = NULL;
    atomic_flag_clear(&output_taken);
    return rc;
}

static unsigned writer_stop(void *algo_data)
{
    writer *w = algo_data;
    if (close_output(w) != ADF_OK)
        return kit_fail(w->k.name, NARVAL_E_IO, "writing '%s' failed when closing it: %s; the "
                        "output is incomplete", w->part, strerror(errno));
    if (rename(w->part, conf.file) != 0)
        return kit_fail(w->k.name, NARVAL_E_IO, "cannot rename '%s' to '%s': %s", w->part,
                        conf.file, strerror(errno));
    kit_log(w->k.name, KIT_INFO, "wrote %llu frames (%llu bytes) to %s",
            (unsigned long long)w->frames, (unsigned long long)w->bytes, conf.file);
    return 0;
}

static void writer_release(void *algo_data)
{
    writer *w = algo_data;
    if (w->out) {
        close_output(w);
        kit_log(w->k.name, KIT_WARN, "unloaded without process_stop: %s holds %llu frames "
                "(%llu bytes) and was not renamed to %s", w->part, (unsigned long long)w->frames,
                (unsigned long long)w->bytes, conf.file);
    }
    free(w->part);
}

void process_config(const char *directory_path, unsigned int *error_code)
{
    *error_code = kit_config(&writer_spec, directory_path, &conf);
}

const char *process_describe(void) { return kit_describe(&writer_spec); }

void *process_register(unsigned int *error_code)
{
    return kit_register(sizeof(writer), error_code);
}

KIT_LIFECYCLE(writer_initialise, writer_start, writer_stop, NULL, writer_release)

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer,
                   unsigned int *error_code)
{
    if ((*error_code = kit_enter(algo_data, KIT_BLOCK)) == 0)
        *error_code = write_block(algo_data, input_buffer, size_of_input_buffer);
}

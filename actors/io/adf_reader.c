/* adf_reader.c: producer that reads ADF files and emits their frames, whole and in order. */
#define NARVAL_PRODUCER
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kit.h"

typedef struct reader_conf {
    kit_list files;
    int64_t repeat;
    int64_t max_frames;
} reader_conf;

static const kit_key reader_keys[] = {
    { "File", KIT_LIST, offsetof(reader_conf, files), NULL,
      .help = "ADF files read in this order (several per line, or several File lines)" },
    { "Repeat", KIT_INT, offsetof(reader_conf, repeat), "1", KIT_RANGE(1, 1000000000),
      .help = "times the whole list is read (replay throughput tests)" },
    { "MaxFrames", KIT_INT, offsetof(reader_conf, max_frames), "0", KIT_MIN(0),
      .help = "end of data after this many frames (0: every frame)" },
};

static const kit_spec reader_spec = {
    "ADFReader", "producer", "reads ADF files and emits their frames, whole and in order",
    reader_keys, KIT_COUNT(reader_keys), sizeof(reader_conf),
};

static reader_conf conf;

typedef struct file_count {
    uint64_t frames, bytes;
} file_count;

typedef struct reader {
    kit_instance k;
    file_count *count;  /* per file of the list, summed over the passes of this run */
    adf_file *file;     /* the file being read; NULL between files */
    size_t current;     /* its index in conf.files */
    uint64_t opened;    /* files opened this run, counting every pass */
    uint64_t frames;    /* frames emitted this run */
    bool done;          /* end of data reached */
} reader;

static unsigned close_file(reader *r)
{
    if (!r->file)
        return 0;
    int rc = adf_file_close(r->file);
    r->file = NULL;
    if (rc != ADF_OK)
        return kit_fail(r->k.name, NARVAL_E_IO, "closing '%s': %s", conf.files.v[r->current],
                        strerror(errno));
    return 0;
}

/* Opens the next file of the sequence (the list, Repeat times), or marks the end of data. */
static unsigned open_next(reader *r)
{
    uint64_t total = (uint64_t)conf.files.n * (uint64_t)conf.repeat;
    if (r->opened == total) {
        r->done = true;
        return 0;
    }
    r->current = (size_t)(r->opened % conf.files.n);
    const char *path = conf.files.v[r->current];
    if (adf_file_open_read(&r->file, path) != ADF_OK)
        return kit_fail(r->k.name, NARVAL_E_IO, "cannot open '%s': %s", path, strerror(errno));
    r->opened++;
    kit_log(r->k.name, KIT_DEBUG, "reading %s (pass %llu of %lld)", path,
            (unsigned long long)((r->opened - 1) / conf.files.n + 1), (long long)conf.repeat);
    return 0;
}

/* The bytes of the first n frames of a buffer that adf_file_read filled (so already valid). */
static size_t first_frames(const void *buf, size_t size, uint64_t n)
{
    adf_iter it;
    adf_frame f;
    size_t end = 0;
    adf_iter_init(&it, buf, size);
    while (n-- > 0 && adf_iter_next(&it, &f) > 0)
        end = f.offset + f.key.length;
    return end;
}

/* Keeps to MaxFrames: cuts the block and ends the data once the limit is reached. */
static size_t apply_limit(reader *r, const void *buf, size_t got, size_t *frames)
{
    if (conf.max_frames == 0)
        return got;
    uint64_t left = (uint64_t)conf.max_frames - r->frames;
    if (*frames >= left) {
        got = first_frames(buf, got, left);
        *frames = (size_t)left;
        r->done = true;
    }
    return got;
}

static unsigned read_block(reader *r, void *out, unsigned cap, unsigned *used)
{
    char msg[512];
    unsigned code;
    *used = 0;
    while (!r->done) {
        if (!r->file && ((code = open_next(r)) != 0 || r->done))
            return code;
        size_t got = 0, frames = 0;
        int rc = adf_file_read(r->file, out, cap, &got, &frames);
        if (rc == ADF_E_TOO_BIG) {
            *used = (unsigned)adf_file_next_length(r->file);
            kit_log(r->k.name, KIT_DEBUG, "next frame needs %u bytes, the buffer has %u", *used,
                    cap);
            return NARVAL_E_OUTPUT_SIZE;
        }
        if (rc != ADF_OK) {
            adf_file_describe(r->file, rc, msg, sizeof msg);
            return kit_fail(r->k.name, kit_adf_code(rc), "%s", msg);
        }
        if (got == 0) {
            if ((code = close_file(r)) != 0)
                return code;
            continue;
        }
        got = apply_limit(r, out, got, &frames);
        r->count[r->current].frames += frames;
        r->count[r->current].bytes += got;
        r->frames += frames;
        *used = (unsigned)got;
        return r->done ? close_file(r) : 0;
    }
    return 0;
}

/* Fails at initialise, not in the middle of a run, when a file cannot be opened. */
static unsigned reader_initialise(void *algo_data)
{
    reader *r = algo_data;
    for (size_t i = 0; i < conf.files.n; i++) {
        adf_file *f;
        if (adf_file_open_read(&f, conf.files.v[i]) != ADF_OK)
            return kit_fail(r->k.name, NARVAL_E_IO, "cannot open '%s': %s", conf.files.v[i],
                            strerror(errno));
        adf_file_close(f);
    }
    r->count = calloc(conf.files.n, sizeof *r->count);
    if (!r->count)
        return kit_fail(r->k.name, NARVAL_E_NOMEM, "no memory for %zu file counters",
                        conf.files.n);
    return 0;
}

static unsigned reader_start(void *algo_data)
{
    reader *r = algo_data;
    memset(r->count, 0, conf.files.n * sizeof *r->count);
    r->opened = 0;
    r->frames = 0;
    r->done = false;
    return open_next(r);
}

static unsigned reader_stop(void *algo_data)
{
    reader *r = algo_data;
    uint64_t bytes = 0;
    unsigned code = close_file(r);
    for (size_t i = 0; i < conf.files.n; i++) {
        kit_log(r->k.name, KIT_INFO, "%s: %llu frames, %llu bytes", conf.files.v[i],
                (unsigned long long)r->count[i].frames, (unsigned long long)r->count[i].bytes);
        bytes += r->count[i].bytes;
    }
    kit_log(r->k.name, KIT_INFO, "emitted %llu frames (%llu bytes)%s", (unsigned long long)r->frames,
            (unsigned long long)bytes, r->done ? "" : " before the run was stopped");
    return code;
}

static void reader_release(void *algo_data)
{
    reader *r = algo_data;
    close_file(r);
    free(r->count);
}

void process_config(const char *directory_path, unsigned int *error_code)
{
    *error_code = kit_config(&reader_spec, directory_path, &conf);
}

const char *process_describe(void) { return kit_describe(&reader_spec); }

void *process_register(unsigned int *error_code)
{
    return kit_register(sizeof(reader), error_code);
}

KIT_LIFECYCLE(reader_initialise, reader_start, reader_stop, NULL, reader_release)

void process_block(void *algo_data, void *output_buffer, unsigned int size_of_output_buffer,
                   unsigned int *used_size_of_output_buffer, unsigned int *error_code)
{
    *used_size_of_output_buffer = 0;
    if ((*error_code = kit_enter(algo_data, KIT_BLOCK)) == 0)
        *error_code = read_block(algo_data, output_buffer, size_of_output_buffer,
                                 used_size_of_output_buffer);
}

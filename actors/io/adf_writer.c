/* adf_writer.c: consumer that writes every frame it receives to an ADF file, published under its name only when the run stops. */
#define NARVAL_CONSUMER
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit.h"
#include "publish.h"

typedef struct writer_conf {
    char *file;
} writer_conf;

static const kit_key writer_keys[] = {
    { "File", KIT_STRING, offsetof(writer_conf, file), NULL,
      .help = "output ADF file, published at the end of each run (until then a temporary "
              "FILE.XXXXXX.part beside it); %d or %0Nd in the name numbers the runs 1, 2, ..., "
              "else each run replaces the file; instance k > 1 of one configuration writes "
              "FILE with .k before its extension (out.adf -> out.2.adf)" },
};

static const kit_spec writer_spec = {
    "ADFWriter", "consumer", "writes every frame it receives to an ADF file",
    writer_keys, KIT_COUNT(writer_keys), sizeof(writer_conf),
};

static writer_conf conf;

/* The file ADFWriter.conf came from, for messages. */
static char *conf_path;

__attribute__((destructor)) static void free_conf_path(void) { free(conf_path); }

/* Where the run number goes in a file name. */
typedef struct run_number {
    bool numbered;
    int width;        /* N of %0Nd; 0 for %d */
    size_t at, after; /* the conversion is name[at, after) */
} run_number;

typedef struct writer {
    kit_instance k;
    char *file;       /* File as this instance writes it (kit_instance_output), from initialise */
    run_number rn;    /* in file */
    kit_claim claim;  /* file, held from initialise to unload */
    kit_output out;   /* the run's temporary, while running */
    unsigned run;     /* runs started: numbers the files */
    uint64_t frames, bytes;
    bool ended;       /* the last frame written is a meta:eof */
} writer;

/* Finds the run number's place in a file name: one %d or %0Nd (N from 1 to 9), no other '%'. */
static unsigned parse_name(const char *file, run_number *rn, char *msg, size_t len)
{
    *rn = (run_number){ 0 };
    for (const char *p = strchr(file, '%'); p; p = strchr(p + 1, '%')) {
        const char *q = p + 1;
        bool zero = q[0] == '0' && q[1] >= '1' && q[1] <= '9' && q[2] == 'd';
        if (rn->numbered || (!zero && q[0] != 'd')) {
            snprintf(msg, len, "%s: key 'File': value '%s': '%%' may only write the run number, "
                     "once, as %%d or %%0Nd (N from 1 to 9)", conf_path, file);
            return NARVAL_E_CONFIG;
        }
        rn->numbered = true;
        rn->width = zero ? q[1] - '0' : 0;
        rn->at = (size_t)(p - file);
        rn->after = (size_t)(q + (zero ? 3 : 1) - file);
    }
    return 0;
}

void process_config(const char *directory_path, unsigned int *error_code)
{
    char msg[1024];
    run_number rn;
    if ((*error_code = kit_config(&writer_spec, directory_path, &conf)) != 0)
        return;
    free(conf_path);
    if (!(conf_path = kit_conf_path(directory_path, writer_spec.actor)))
        *error_code = kit_fail(writer_spec.actor, NARVAL_E_NOMEM, "out of memory");
    else if ((*error_code = parse_name(conf.file, &rn, msg, sizeof msg)) != 0)
        kit_fail(writer_spec.actor, *error_code, "%s", msg);
}

const char *process_describe(void) { return kit_describe(&writer_spec); }

void *process_register(unsigned int *error_code)
{
    writer *w = kit_register(sizeof(writer), error_code);
    if (w)
        w->out.fd = w->claim.fd = -1;
    return w;
}

/* The output of run `run`: the instance's file with the number written in (malloc'd). */
static char *run_file(const writer *w, unsigned run)
{
    const char *f = w->file;
    const run_number *rn = &w->rn;
    if (!rn->numbered)
        return strdup(f);
    int n = snprintf(NULL, 0, "%.*s%0*u%s", (int)rn->at, f, rn->width, run, f + rn->after);
    char *s = malloc((size_t)n + 1);
    if (s)
        snprintf(s, (size_t)n + 1, "%.*s%0*u%s", (int)rn->at, f, rn->width, run, f + rn->after);
    return s;
}

/* Chooses this instance's file (File itself for instance 1, File with .k before
 * its extension for instance k: instances of one library share File) and claims
 * it, with its %d when numbered, so that no other live instance writes it;
 * before any block, and once: a later initialise (after a reset) keeps the
 * claim, since the configuration is the same. */
static unsigned writer_initialise(void *algo_data)
{
    writer *w = algo_data;
    char msg[PATH_MAX + 512], note[2 * PATH_MAX + 128];
    if (w->claim.lock)
        return 0;
    free(w->file);
    if (!(w->file = kit_instance_output(conf.file, false, w->k.number, "File", note, sizeof note)))
        return kit_fail(w->k.name, NARVAL_E_NOMEM, "out of memory");
    if (note[0])
        kit_log(w->k.name, KIT_INFO, "%s", note);
    /* ".k" goes before the extension, never into the run number: it parses as File did */
    unsigned code = parse_name(w->file, &w->rn, msg, sizeof msg);
    if (!code)
        code = kit_claim_output(&w->claim, w->file, false, "File", conf_path, msg, sizeof msg);
    return code ? kit_fail(w->k.name, code, "%s", msg) : 0;
}

static unsigned writer_start(void *algo_data)
{
    writer *w = algo_data;
    char msg[PATH_MAX + 512];
    char *file = run_file(w, w->run + 1);
    if (!file)
        return kit_fail(w->k.name, NARVAL_E_NOMEM, "out of memory");
    unsigned code = kit_output_open(&w->out, file, msg, sizeof msg);
    free(file);
    if (code)
        return kit_fail(w->k.name, code, "%s", msg);
    w->run++;
    w->frames = w->bytes = 0;
    w->ended = false;
    kit_log(w->k.name, KIT_DEBUG, "run %u: writing %s", w->run, w->out.temp);
    return 0;
}

/* Counts the frames of a block and notes a meta:eof at its end, and refuses a
 * malformed block before anything of it is written. */
static unsigned scan_block(writer *w, const void *in, unsigned size, uint64_t *frames,
                           bool *ends)
{
    adf_iter it;
    adf_frame f;
    int rc;
    adf_iter_init(&it, in, size);
    *frames = 0;
    while ((rc = adf_iter_next(&it, &f)) > 0) {
        ++*frames;
        *ends = f.key.id == ADF_ID_META_EOF;
    }
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
    bool ends = w->ended;
    char msg[PATH_MAX + 256];
    unsigned code = scan_block(w, in, size, &frames, &ends);
    if (code || size == 0)
        return code;
    if ((code = kit_output_write(&w->out, in, size, msg, sizeof msg)) != 0)
        return kit_fail(w->k.name, code, "%s", msg);
    w->frames += frames;
    w->bytes += size;
    w->ended = ends;
    return 0;
}

static unsigned writer_stop(void *algo_data)
{
    writer *w = algo_data;
    char msg[PATH_MAX + 512], *file = strdup(w->out.path);
    unsigned code = kit_output_publish(&w->out, true, msg, sizeof msg);
    if (code) {
        free(file);
        return kit_fail(w->k.name, code, "%s; run %u is lost", msg, w->run);
    }
    kit_log(w->k.name, KIT_INFO, "run %u: wrote %llu frames (%llu bytes) to %s, %s%s", w->run,
            (unsigned long long)w->frames, (unsigned long long)w->bytes, file ? file : w->file,
            w->ended ? "ending with meta:eof (the data is complete)"
                     : "without meta:eof at the end (the run was stopped before the end of its data)",
            !w->rn.numbered && w->run > 1 ? "; it replaces the file of the previous run" : "");
    free(file);
    return 0;
}

/* A run that did not stop is not published: its temporary goes, and the log says what it held. */
static void discard_run(writer *w, const char *why)
{
    if (!w->out.temp)
        return;
    kit_log(w->k.name, KIT_WARN, "%s: discarded %llu frames (%llu bytes) of an unfinished run: "
            "%s was not written", why, (unsigned long long)w->frames,
            (unsigned long long)w->bytes, w->out.path);
    kit_output_discard(&w->out);
}

static unsigned writer_reset(void *algo_data)
{
    discard_run(algo_data, "reset before process_stop");
    return 0;
}

static void writer_release(void *algo_data)
{
    writer *w = algo_data;
    discard_run(w, "unloaded without process_stop");
    kit_claim_release(&w->claim);
    free(w->file);
}

KIT_LIFECYCLE(writer_initialise, writer_start, writer_stop, writer_reset, writer_release)

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer,
                   unsigned int *error_code)
{
    if ((*error_code = kit_enter(algo_data, KIT_BLOCK)) == 0)
        *error_code = write_block(algo_data, input_buffer, size_of_input_buffer);
}

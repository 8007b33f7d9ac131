/* adf_writer.c: consumer that writes the frames it receives to an ADF file (those Keys chooses; the others to OtherFile, or counted), by a thread of its own, published under its name only when the run stops. */
#define NARVAL_CONSUMER
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit.h"
#include "publish.h"
#include "write_behind.h"

typedef struct writer_conf {
    char *file;
    kit_list keys;
    char *other_file;
} writer_conf;

static const kit_key writer_keys[] = {
    { "File", KIT_STRING, offsetof(writer_conf, file), NULL,
      .help = "output ADF file, published at the end of each run (until then a temporary "
              "FILE.XXXXXX.part beside it); %d or %0Nd in the name numbers the runs 1, 2, ..., "
              "else each run replaces the file; instance k > 1 of one configuration writes "
              "FILE with .k before its extension (out.adf -> out.2.adf)" },
    { "Keys", KIT_LIST, offsetof(writer_conf, keys), "all",
      .help = "the frames written to File, by the key id of each top-level frame (a composite goes "
              "whole): 'all'; or names and ids (data:psa event:data:psa 0xFA010102) to write only "
              "those; or 'all' and names with '-' (all -narwhal:truth -meta:sync) to write all but "
              "those.  What it leaves out goes to OtherFile, or is counted and named in the log; "
              "data:psa event:data:psa is the file AGATA's readers read whole (adf.h)" },
    { "OtherFile", KIT_STRING, offsetof(writer_conf, other_file), "none",
      .help = "where the frames Keys leaves out go: 'none' (counted by key id and named in a "
              "warning at the end of each run, not written), 'beside' (File with .narwhal before "
              "its extension: out.adf -> out.narwhal.adf, the file `narwhal summary out.adf` reads "
              "with it), or a file; published, numbered and claimed as File is" },
};

static unsigned check_conf(const char *directory_path);

static const kit_spec writer_spec = {
    "ADFWriter", "consumer", "writes the frames it receives to an ADF file, those Keys leaves out to OtherFile",
    writer_keys, KIT_COUNT(writer_keys), sizeof(writer_conf), check_conf,
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

/* Keys, parsed: which top-level frames go to File. */
enum { WRITER_MAX_KEYS = 32 };
typedef struct key_filter {
    bool only;                   /* File gets the ids listed; else all but them */
    size_t n;
    uint32_t id[WRITER_MAX_KEYS];
} key_filter;

static key_filter filter;

/* OtherFile: nowhere, the rule's file beside File, or a file of its own. */
typedef enum other_kind { OTHER_NONE, OTHER_BESIDE, OTHER_PATH } other_kind;
static other_kind other;

/* One output of an instance: File, or OtherFile. */
typedef struct dest {
    const char *key;  /* the configuration key that names it, for messages */
    char *file;       /* as this instance writes it (kit_instance_output), from initialise */
    run_number rn;    /* in file */
    kit_claim claim;  /* file, held from initialise to unload */
    kit_output out;   /* the run's temporary, while running */
    uint64_t frames, bytes;
} dest;

/* Frames of one key id that did not go to File, for the log. */
enum { WRITER_KINDS = 16 };
typedef struct left_kind {
    uint32_t id;
    uint64_t frames;
} left_kind;

typedef struct writer {
    kit_instance k;
    dest main;        /* File */
    dest other;       /* OtherFile, when there is one */
    unsigned run;     /* runs started: numbers the files */
    left_kind left[WRITER_KINDS]; /* the frames File did not get, by id, this run */
    unsigned n_left;
    uint64_t left_frames, left_bytes, left_unnamed; /* unnamed: ids past WRITER_KINDS */
    bool ended;       /* the last frame received is a meta:eof */
    write_behind wb;  /* the run's writes (write_behind.h): the call returns once they are staged */
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

/* A value of Keys: a key name of adf.h's table or an id written 0x..., else 0. */
static uint32_t key_id(const char *v)
{
    uint32_t id = adf_id_from_name(v);
    if (id || strncmp(v, "0x", 2) != 0 || !v[2])
        return id;
    char *end;
    unsigned long long n = strtoull(v + 2, &end, 16);
    return *end || n > UINT32_MAX ? 0 : (uint32_t)n;
}

static unsigned bad_keys(const kit_list *keys, size_t i, char *msg, size_t len, const char *why)
{
    snprintf(msg, len, "%s:%u: key 'Keys': value '%s': %s", conf_path, keys->line[i], keys->v[i], why);
    return NARVAL_E_CONFIG;
}

/* Keys into f: names and ids to write only those, or 'all' and '-' names to leave those out. */
static unsigned parse_keys(const kit_list *keys, key_filter *f, char *msg, size_t len)
{
    bool all = false, listed = false, minus = false;
    *f = (key_filter){ 0 };
    for (size_t i = 0; i < keys->n; i++) {
        const char *v = keys->v[i];
        bool out = v[0] == '-';
        if (!out && strcmp(v, "all") == 0) {
            all = true;
            continue;
        }
        uint32_t id = key_id(v + out);
        if (!id)
            return bad_keys(keys, i, msg, len, "neither a key name of adf.h (data:psa, "
                            "event:data:psa, narwhal:truth, meta:eof, ...) nor a key id (0xFA010102)");
        if (f->n == WRITER_MAX_KEYS)
            return bad_keys(keys, i, msg, len, "more than 32 key ids");
        listed |= !out;
        minus |= out;
        f->id[f->n++] = id;
    }
    if (listed && (all || minus))
        return bad_keys(keys, keys->n - 1, msg, len, "Keys lists the frames File gets, or says "
                        "'all' and leaves some out with '-', not both");
    f->only = listed;
    return 0;
}

static bool to_file(uint32_t id)
{
    bool listed = false;
    for (size_t i = 0; i < filter.n && !listed; i++)
        listed = filter.id[i] == id;
    return listed == filter.only;
}

/* OtherFile: 'none', 'beside' or a file, which must differ from File and receive something. */
static unsigned parse_other(char *msg, size_t len)
{
    run_number rn;
    other = strcmp(conf.other_file, "none") == 0     ? OTHER_NONE
            : strcmp(conf.other_file, "beside") == 0 ? OTHER_BESIDE
                                                     : OTHER_PATH;
    if (other == OTHER_NONE)
        return 0;
    if (!filter.only && filter.n == 0) {
        snprintf(msg, len, "%s: key 'OtherFile': value '%s': OtherFile gets the frames Keys leaves "
                 "out, and Keys leaves none out (Keys all)", conf_path, conf.other_file);
        return NARVAL_E_CONFIG;
    }
    if (other == OTHER_PATH && strcmp(conf.other_file, conf.file) == 0) {
        snprintf(msg, len, "%s: key 'OtherFile': value '%s': the same file as File", conf_path,
                 conf.other_file);
        return NARVAL_E_CONFIG;
    }
    return other == OTHER_PATH ? parse_name(conf.other_file, &rn, msg, len) : 0;
}

/* What the keys say together, and File a file that can be written (writer_spec's check). */
static unsigned check_conf(const char *directory_path)
{
    char msg[PATH_MAX + 1024];
    run_number rn;
    unsigned code;
    (void)directory_path;
    if ((code = parse_name(conf.file, &rn, msg, sizeof msg)) != 0 ||
        (code = kit_check_output(conf.file, false, "File", conf_path, kit_key_line("File"), msg, sizeof msg)) != 0 ||
        (code = parse_keys(&conf.keys, &filter, msg, sizeof msg)) != 0 || (code = parse_other(msg, sizeof msg)) != 0)
        return kit_fail(writer_spec.actor, code, "%s", msg);
    return 0;
}

void process_config(const char *directory_path, unsigned int *error_code)
{
    free(conf_path);
    if (!(conf_path = kit_conf_path(directory_path ? directory_path : "", writer_spec.actor)))
        *error_code = kit_fail(writer_spec.actor, NARVAL_E_NOMEM, "out of memory");
    else
        *error_code = kit_config(&writer_spec, directory_path, &conf);
}

const char *process_describe(void) { return kit_describe(&writer_spec); }

void *process_register(unsigned int *error_code)
{
    writer *w = kit_register(sizeof(writer), error_code);
    if (w) {
        w->main = (dest){ .key = "File", .out.fd = -1, .claim.fd = -1 };
        w->other = (dest){ .key = "OtherFile", .out.fd = -1, .claim.fd = -1 };
    }
    return w;
}

/* The output of run `run`: the instance's file with the number written in (malloc'd). */
static char *run_file(const dest *d, unsigned run)
{
    const char *f = d->file;
    const run_number *rn = &d->rn;
    if (!rn->numbered)
        return strdup(f);
    int n = snprintf(NULL, 0, "%.*s%0*u%s", (int)rn->at, f, rn->width, run, f + rn->after);
    char *s = malloc((size_t)n + 1);
    if (s)
        snprintf(s, (size_t)n + 1, "%.*s%0*u%s", (int)rn->at, f, rn->width, run, f + rn->after);
    return s;
}

/* Claims d->file, chosen already, with its %d when numbered, so that no other live instance writes it. */
static unsigned claim_dest(writer *w, dest *d)
{
    char msg[PATH_MAX + 512];
    if (!d->file)
        return kit_fail(w->k.name, NARVAL_E_NOMEM, "out of memory");
    /* ".k" and ".narwhal" go before the extension, never into the run number: it parses as the key did */
    unsigned code = parse_name(d->file, &d->rn, msg, sizeof msg);
    if (!code)
        code = kit_claim_output(&d->claim, d->file, false, d->key, conf_path, msg, sizeof msg);
    return code ? kit_fail(w->k.name, code, "%s", msg) : 0;
}

/* Chooses this instance's file (File itself for instance 1, File with .k before
 * its extension for instance k: instances of one library share File), and its
 * OtherFile likewise ('beside': the instance's File's Narwhal file), and claims
 * them; before any block, and once: a later initialise (after a reset) keeps
 * the claims, since the configuration is the same. */
static unsigned writer_initialise(void *algo_data)
{
    writer *w = algo_data;
    char note[2 * PATH_MAX + 128];
    if (w->main.claim.lock)
        return 0;
    free(w->main.file);
    w->main.file = kit_instance_output(conf.file, false, w->k.number, "File", note, sizeof note);
    if (note[0])
        kit_log(w->k.name, KIT_INFO, "%s", note);
    unsigned code = claim_dest(w, &w->main);
    if (code || other == OTHER_NONE)
        return code;
    free(w->other.file);
    w->other.file = other == OTHER_BESIDE
                        ? adf_narwhal_file(w->main.file)
                        : kit_instance_output(conf.other_file, false, w->k.number, "OtherFile", note, sizeof note);
    if (other == OTHER_PATH && note[0])
        kit_log(w->k.name, KIT_INFO, "%s", note);
    if ((code = claim_dest(w, &w->other)) != 0)
        kit_claim_release(&w->main.claim);
    return code;
}

/* Opens d's temporary for run `run`. */
static unsigned open_dest(writer *w, dest *d, unsigned run)
{
    char msg[PATH_MAX + 512];
    char *file = run_file(d, run);
    if (!file)
        return kit_fail(w->k.name, NARVAL_E_NOMEM, "out of memory");
    unsigned code = kit_output_open(&d->out, file, msg, sizeof msg);
    free(file);
    if (code)
        return kit_fail(w->k.name, code, "%s", msg);
    d->frames = d->bytes = 0;
    kit_log(w->k.name, KIT_DEBUG, "run %u: writing %s", run, d->out.temp);
    return 0;
}

static unsigned writer_start(void *algo_data)
{
    writer *w = algo_data;
    unsigned code = open_dest(w, &w->main, w->run + 1);
    if (!code && w->other.file && (code = open_dest(w, &w->other, w->run + 1)) != 0)
        kit_output_discard(&w->main.out);
    if (code)
        return code;
    char msg[PATH_MAX + 256];
    if ((code = wb_start(&w->wb, msg, sizeof msg)) != 0) {
        kit_output_discard(&w->main.out);
        kit_output_discard(&w->other.out);
        return kit_fail(w->k.name, code, "%s", msg);
    }
    w->run++;
    w->n_left = 0;
    w->left_frames = w->left_bytes = w->left_unnamed = 0;
    w->ended = false;
    return 0;
}

/* Counts the frames of a block and the bytes File gets of it, notes a
 * meta:eof at its end, and refuses a malformed block before anything of it is
 * written (adf_validate's one walk; the iterator only to say where and why). */
static unsigned scan_block(writer *w, const uint8_t *in, unsigned size, uint64_t *frames,
                           bool *ends, size_t *to_main)
{
    size_t bad, n;
    *frames = 0;
    *to_main = 0;
    if (adf_validate(in, size, &bad, &n) != ADF_OK) {
        adf_iter it;
        adf_frame f;
        char msg[256], where[512];
        adf_iter_init(&it, in, size);
        while (adf_iter_next(&it, &f) > 0)
            ;
        adf_iter_describe(&it, msg, sizeof msg);
        kit_where_at(in, size, it.pos, where, sizeof where);
        return kit_fail(w->k.name, NARVAL_E_INPUT, "input block of %u bytes: %s: %s; nothing of it "
                        "written", size, where, msg);
    }
    for (size_t at = 0; at < size; at += adf_get_u32(in + at)) {
        uint32_t id = adf_get_u32(in + at + 4);
        *ends = id == ADF_ID_META_EOF;
        *to_main += to_file(id) ? adf_get_u32(in + at) : 0;
    }
    *frames = n;
    return 0;
}

/* Counts a frame File does not get under its key id. */
static void count_left(writer *w, uint32_t id, uint32_t length)
{
    w->left_frames++;
    w->left_bytes += length;
    for (unsigned i = 0; i < w->n_left; i++)
        if (w->left[i].id == id) {
            w->left[i].frames++;
            return;
        }
    if (w->n_left == WRITER_KINDS)
        w->left_unnamed++;
    else
        w->left[w->n_left++] = (left_kind){ id, 1 };
}

/* Where a block's frames are staged: File's from the stage's start, OtherFile's after them. */
typedef struct staging {
    uint8_t *at[2]; /* next byte of File's part, of OtherFile's */
} staging;

/* Stages n frames (size bytes) of a block that go to d; d NULL: nowhere. */
static void put_span(writer *w, staging *st, dest *d, const uint8_t *at, size_t size, uint64_t n)
{
    if (!d || size == 0)
        return;
    uint8_t **to = &st->at[d != &w->main];
    memcpy(*to, at, size);
    *to += size;
    d->frames += n;
    d->bytes += size;
}

/* The frames of a checked block (walked by their lengths), each to File's
 * part of the stage or, when Keys leaves it out, to OtherFile's (or
 * nowhere, counted); runs of frames with one destination in one copy. */
static void route_block(writer *w, staging *st, const uint8_t *in, unsigned size)
{
    dest *to = NULL;
    size_t from = 0;
    uint64_t n = 0;
    for (size_t at = 0; at < size;) {
        uint32_t length = adf_get_u32(in + at), id = adf_get_u32(in + at + 4);
        bool keep = to_file(id);
        dest *d = keep ? &w->main : w->other.file ? &w->other : NULL;
        if (!keep)
            count_left(w, id, length);
        if (n && d != to) {
            put_span(w, st, to, in + from, at - from, n);
            from = at;
            n = 0;
        }
        to = d;
        n++;
        at += length;
    }
    put_span(w, st, to, in + from, size - from, n);
}

/* Checks the block, stages what File and OtherFile get of it and hands that to the thread. */
static unsigned write_block(writer *w, const void *in, unsigned size)
{
    char msg[PATH_MAX + 256];
    uint64_t frames;
    size_t to_main;
    bool ends = w->ended;
    unsigned code = scan_block(w, in, size, &frames, &ends, &to_main);
    if (code || size == 0)
        return code;
    size_t stage_bytes = w->other.file ? size : to_main;
    uint8_t *stage = wb_stage(&w->wb, stage_bytes, msg, sizeof msg);
    if (!stage)
        return kit_fail(w->k.name, NARVAL_E_NOMEM, "%s", msg);
    staging st = { { stage, stage + to_main } };
    route_block(w, &st, in, size);
    kit_output *outs[WB_OUTPUTS] = { &w->main.out, &w->other.out };
    size_t sizes[WB_OUTPUTS] = { to_main, (size_t)(st.at[1] - (stage + to_main)) };
    if ((code = wb_submit(&w->wb, outs, sizes, w->other.file ? 2 : 1, msg, sizeof msg)) != 0)
        return kit_fail(w->k.name, code, "%s (a block before this one)", msg);
    w->ended = ends;
    return 0;
}

/* "narwhal:truth 1000, meta:eof 1": the frames File did not get, by key id. */
static void describe_left(const writer *w, char *s, size_t len)
{
    size_t at = 0;
    s[0] = '\0';
    for (unsigned i = 0; i < w->n_left && at < len; i++) {
        const char *name = adf_id_name(w->left[i].id);
        char hex[16];
        snprintf(hex, sizeof hex, "0x%08x", w->left[i].id);
        at += (size_t)snprintf(s + at, len - at, "%s%s %llu", i ? ", " : "", name ? name : hex,
                               (unsigned long long)w->left[i].frames);
    }
    if (w->left_unnamed && at < len)
        snprintf(s + at, len - at, ", %llu of other ids", (unsigned long long)w->left_unnamed);
}

/* Publishes d's run; on failure the run is lost and the message says which file. */
static unsigned publish_dest(writer *w, dest *d)
{
    char msg[PATH_MAX + 512];
    unsigned code = kit_output_publish(&d->out, true, msg, sizeof msg);
    return code ? kit_fail(w->k.name, code, "%s; run %u is lost", msg, w->run) : 0;
}

/* The run's line: where its frames went, what Keys left out, whether its data ended. */
static void log_run(writer *w, const char *file, const char *other_file)
{
    char left[1024], to_other[PATH_MAX + 1200] = "";
    describe_left(w, left, sizeof left);
    if (other_file)
        snprintf(to_other, sizeof to_other, " and %llu frames (%llu bytes) that Keys leaves out to %s (%s)",
                 (unsigned long long)w->other.frames, (unsigned long long)w->other.bytes, other_file,
                 w->left_frames ? left : "none");
    kit_log(w->k.name, KIT_INFO, "run %u: wrote %llu frames (%llu bytes) to %s%s, %s%s", w->run,
            (unsigned long long)w->main.frames, (unsigned long long)w->main.bytes, file, to_other,
            w->ended ? "ending with meta:eof (the data is complete)"
                     : "without meta:eof at the end (the run was stopped before the end of its data)",
            !w->main.rn.numbered && w->run > 1 ? "; it replaces the file of the previous run" : "");
    kit_log(w->k.name, KIT_INFO, "run %u: the I/O thread wrote for %.3f s; the calls waited %.3f s for its writes",
            w->run, w->wb.writing, w->wb.waited);
    if (!other_file && w->left_frames)
        kit_log(w->k.name, KIT_WARN, "run %u: %llu frames (%llu bytes) not written: Keys leaves them "
                "out and OtherFile is none: %s", w->run, (unsigned long long)w->left_frames,
                (unsigned long long)w->left_bytes, left);
}

static unsigned writer_stop(void *algo_data)
{
    writer *w = algo_data;
    char msg[PATH_MAX + 256];
    unsigned written = wb_stop(&w->wb, msg, sizeof msg);
    if (written) /* the host aborts: release discards the run */
        return kit_fail(w->k.name, written, "%s; run %u is lost", msg, w->run);
    char *file = strdup(w->main.out.path);
    char *other_file = w->other.out.path ? strdup(w->other.out.path) : NULL;
    unsigned code = publish_dest(w, &w->main);
    if (code)
        kit_output_discard(&w->other.out);
    else if (w->other.file)
        code = publish_dest(w, &w->other);
    if (!code)
        log_run(w, file ? file : w->main.file, w->other.file ? (other_file ? other_file : w->other.file) : NULL);
    free(file);
    free(other_file);
    return code;
}

/* A run that did not stop is not published: its temporaries go, and the log says what they held. */
static void discard_dest(writer *w, dest *d, const char *why)
{
    if (!d->out.temp)
        return;
    kit_log(w->k.name, KIT_WARN, "%s: discarded %llu frames (%llu bytes) of an unfinished run: "
            "%s was not written", why, (unsigned long long)d->frames,
            (unsigned long long)d->bytes, d->out.path);
    kit_output_discard(&d->out);
}

static void discard_run(writer *w, const char *why)
{
    char msg[PATH_MAX + 256];
    if (wb_stop(&w->wb, msg, sizeof msg))
        kit_log(w->k.name, KIT_WARN, "%s: %s", why, msg);
    discard_dest(w, &w->main, why);
    discard_dest(w, &w->other, why);
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
    kit_claim_release(&w->main.claim);
    kit_claim_release(&w->other.claim);
    wb_free(&w->wb);
    free(w->main.file);
    free(w->other.file);
}

KIT_LIFECYCLE(writer_initialise, writer_start, writer_stop, writer_reset, writer_release)

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer,
                   unsigned int *error_code)
{
    if ((*error_code = kit_enter(algo_data, KIT_BLOCK)) == 0)
        *error_code = write_block(algo_data, input_buffer, size_of_input_buffer);
}

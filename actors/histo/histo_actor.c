/* histo_actor.c: the Histo actors' glue (histo.so, histo_sink.so) onto the histogram library: reads Histo.conf, fills the declared histograms from every block, publishes them at stop (snapshots every N seconds). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_device.h"
#include "histo_actor.h"
#include "histo_block.h"
#include "histo_engine.h"
#include "histo_frames.h"
#include "histo_output.h"
#include "histo_spec.h"
#include "kit.h"
#include "publish.h"

typedef struct histo_conf {
    kit_list histograms, plots, formats, device;
    char *output_dir;
    double write_every;
    int64_t crystals, segments, gpu, max_bad, threads;
} histo_conf;

static const kit_key histo_keys[] = {
    { "Histogram", KIT_LIST, offsetof(histo_conf, histograms), "core crystal.core sum 16384 0 8192",
      .help = "NAME QUANTITY SCOPE BINS LO HI [BINS LO HI], one per line; quantities: "
              "crystal.segment crystal.core psa.e psa.x psa.y psa.z psa.core tracked.e "
              "tracked.e_dc, matrices gg.e gg.e_dc (axes optional: 4096 x 4096 keV) psa.xy; "
              "scope sum, crystal or segment" },
    { "Plot", KIT_LIST, offsetof(histo_conf, plots), "all",
      .help = "1D histograms drawn as PNG by gnuplot: NAME (a family summed), NAME:cC, "
              "NAME:cCsS, or all, or none" },
    { "Formats", KIT_LIST, offsetof(histo_conf, formats), "spe csv m4b",
      .help = "files written: spe (1D), m4b (4096x4096 matrices), csv (any), or none" },
    { "OutputDir", KIT_STRING, offsetof(histo_conf, output_dir), "histo",
      .help = "directory of the histogram files and plots (created), written at the end of "
              "each run; one live instance per directory: instance k > 1 of one configuration "
              "writes into OutputDir/instance-k" },
    { "WriteEvery", KIT_REAL, offsetof(histo_conf, write_every), "0", KIT_MIN(0),
      .help = "seconds between snapshots into OutputDir/live/ during the run; 0: none" },
    { "Device", KIT_LIST, offsetof(histo_conf, device), "auto",
      .help = "auto (the GPU when one is usable, else the CPU), gpu or cpu" },
    { "GPU", KIT_INT, offsetof(histo_conf, gpu), "0", KIT_GPU_RANGE, .help = GPU_KEY_HELP },
    { "Crystals", KIT_INT, offsetof(histo_conf, crystals), "180", KIT_RANGE(1, 65536),
      .help = "crystal ids 0..Crystals-1 (scopes crystal and segment)" },
    { "Segments", KIT_INT, offsetof(histo_conf, segments), "36", KIT_RANGE(1, 1024),
      .help = "segments per crystal (scope segment)" },
    KIT_MAX_BAD_FRAMES(histo_conf, max_bad),
    KIT_HOST_THREADS(histo_conf, threads, "decode a block's frames (a block of fewer than 128 frames a thread "
                                           "takes fewer)"),
};

static unsigned build_spec(const char *dir);

static const kit_spec histo_kit = {
    "Histo", histo_role,
    "fills 1D spectra and 2D matrices from data:crystal, data:psa and data:tracked frames "
    "(GPU or CPU) and writes RadWare .spe/.m4b, CSV and gnuplot PNG files",
    histo_keys, KIT_COUNT(histo_keys), sizeof(histo_conf), build_spec,
};

static histo_conf conf;
static histo_spec spec;
static histo_device device;
static char *conf_path; /* the Histo.conf read, for messages */

typedef struct histo_actor {
    kit_instance k;
    histo_engine *engine;
    char *dir;        /* OutputDir as this instance writes it (kit_instance_output) */
    kit_claim claim;  /* dir, held from initialise to unload */
    bool running;     /* started and not stopped: the counts are an unfinished run's */
    bool pass;        /* this block's frames go to the output */
    bool block_ends;  /* the block's last frame is a meta:eof */
    bool ended;       /* the last frame of the run so far is a meta:eof */
    unsigned run;     /* runs started */
    double last_write;
    uint64_t seen[HISTO_SEEN_KINDS], entries;
    histo_block decoded; /* the block in hand, decoded on the OpenMP team */
    size_t frame, fault; /* on_frame's place among its frames and their faults */
} histo_actor;

/* The library's codes (histo_status.h) as NARVAL's. */
static unsigned narval_code(histo_status s)
{
    static const unsigned codes[] = { [HISTO_OK] = 0,
                                      [HISTO_E_NOMEM] = NARVAL_E_NOMEM,
                                      [HISTO_E_INPUT] = NARVAL_E_INPUT,
                                      [HISTO_E_DATA] = NARVAL_E_DATA,
                                      [HISTO_E_CONFIG] = NARVAL_E_CONFIG,
                                      [HISTO_E_IO] = NARVAL_E_IO,
                                      [HISTO_E_DEVICE] = NARVAL_E_DEVICE };
    return codes[s];
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static unsigned parse_device(const char *path, char *msg, size_t len)
{
    static const char *const names[] = { [HISTO_DEVICE_AUTO] = "auto", [HISTO_DEVICE_CPU] = "cpu",
                                         [HISTO_DEVICE_GPU] = "gpu" };
    unsigned line = conf.device.line[0];
    if (conf.device.n != 1) {
        snprintf(msg, len, "%s:%u: key 'Device': takes one value, found %zu", path, line,
                 conf.device.n);
        return NARVAL_E_CONFIG;
    }
    for (int d = 0; d < 3; d++)
        if (strcmp(conf.device.v[0], names[d]) == 0) {
            device = (histo_device)d;
            return 0;
        }
    snprintf(msg, len, "%s:%u: key 'Device': value '%s' is not auto, gpu or cpu", path, line,
             conf.device.v[0]);
    return NARVAL_E_CONFIG;
}

static histo_values values_of(const kit_list *l) { return (histo_values){ l->n, l->v, l->line }; }

/* The declarations replace the previous ones only when they are all valid. */
static unsigned build_spec(const char *dir)
{
    char msg[1024];
    char *path = kit_conf_path(dir ? dir : "", histo_kit.actor);
    histo_spec next = { 0 };
    unsigned code = NARVAL_E_NOMEM;
    if (!path)
        return kit_fail(histo_kit.actor, code, "out of memory");
    histo_spec_keys keys = { values_of(&conf.histograms), values_of(&conf.plots), values_of(&conf.formats),
                             conf.crystals, conf.segments, path };
    if ((code = parse_device(path, msg, sizeof msg)) == 0 &&
        (code = kit_check_output(conf.output_dir, true, "OutputDir", path, kit_key_line("OutputDir"), msg,
                                 sizeof msg)) == 0 &&
        (code = narval_code(histo_spec_build(&next, &keys, msg, sizeof msg))) == 0) {
        histo_spec_free(&spec);
        spec = next;
    }
    free(conf_path);
    conf_path = path;
    return code ? kit_fail(histo_kit.actor, code, "%s", msg) : 0;
}

/* The declarations belong to the library, like the kit's settings: freed when it is unloaded. */
__attribute__((destructor)) static void free_spec(void)
{
    histo_spec_free(&spec);
    free(conf_path);
}

void process_config(const char *directory_path, unsigned int *error_code)
{
    *error_code = kit_config(&histo_kit, directory_path, &conf);
}

const char *process_describe(void) { return kit_describe(&histo_kit); }

void *process_register(unsigned int *error_code)
{
    histo_actor *a = kit_register(sizeof(histo_actor), error_code);
    if (a)
        a->claim.fd = -1;
    return a;
}

static void log_plans(histo_actor *a)
{
    for (size_t i = 0; i < spec.n_decl; i++) {
        const histo_decl *d = &spec.decl[i];
        char plan[160];
        histo_engine_plan(a->engine, i, plan, sizeof plan);
        kit_log(a->k.name, KIT_INFO, "%s: %s, %u histogram%s of %llu slots: %s", d->name,
                histo_quantities[d->q].name, d->g.instances, d->g.instances > 1 ? "s" : "",
                (unsigned long long)d->g.slots, plan);
    }
}

/* This instance's directory (OutputDir for instance 1, OutputDir/instance-k
 * for instance k: instances of one library share OutputDir), created and
 * claimed; once, since the configuration is not re-read. */
static unsigned claim_dir(histo_actor *a)
{
    char msg[PATH_MAX + 512], note[2 * PATH_MAX + 128];
    unsigned code;
    if (a->claim.lock)
        return 0;
    free(a->dir);
    if (!(a->dir = kit_instance_output(conf.output_dir, true, a->k.number, "OutputDir", note,
                                       sizeof note)))
        return kit_fail(a->k.name, NARVAL_E_NOMEM, "out of memory");
    if (note[0])
        kit_log(a->k.name, KIT_INFO, "%s", note);
    if ((code = narval_code(histo_output_mkdir(a->dir, msg, sizeof msg))) != 0 ||
        (code = kit_claim_output(&a->claim, a->dir, true, "OutputDir", conf_path, msg,
                                 sizeof msg)) != 0)
        return kit_fail(a->k.name, code, "%s", msg);
    return 0;
}

/* Re-runnable (NARVAL initialises again after a reset): the engine of a
 * previous initialise is replaced; the claim on the directory is kept.  The
 * claim comes first, so that a directory taken by another live instance fails
 * before the device is set up. */
static unsigned histo_initialise(void *algo_data)
{
    histo_actor *a = algo_data;
    char msg[PATH_MAX + 512];
    unsigned code;
    if ((code = claim_dir(a)) != 0)
        return code;
    int gpu;
    if ((code = kit_gpu_device(a, conf.gpu, device == HISTO_DEVICE_CPU ? 0 : gpu_devices(), &gpu)) != 0)
        return code;
    histo_engine_destroy(a->engine);
    a->engine = NULL;
    histo_block_free(&a->decoded);
    histo_group *groups = malloc((spec.n_decl + 1) * sizeof *groups);
    if (!groups)
        return kit_fail(a->k.name, NARVAL_E_NOMEM, "out of memory");
    for (size_t i = 0; i < spec.n_decl; i++)
        groups[i] = spec.decl[i].g;
    code = narval_code(histo_engine_create(&a->engine, groups, spec.n_decl, device, gpu, msg, sizeof msg));
    free(groups);
    if (code)
        return kit_fail(a->k.name, code, "%s", msg);
    gpu_device_text(histo_engine_on_gpu(a->engine), gpu, a->k.device, sizeof a->k.device);
    kit_log(a->k.name, KIT_INFO, "counting on the %s", msg);
    log_plans(a);
    if (histo_block_init(&a->decoded, &spec, kit_host_threads(conf.threads)) != HISTO_OK)
        return kit_fail(a->k.name, NARVAL_E_NOMEM, "out of memory for the decoders");
    return 0;
}

static unsigned histo_start(void *algo_data)
{
    histo_actor *a = algo_data;
    char msg[512];
    memset(a->seen, 0, sizeof a->seen);
    a->entries = 0;
    a->ended = false;
    a->last_write = now();
    unsigned code = narval_code(histo_engine_clear(a->engine, msg, sizeof msg));
    if (code)
        return kit_fail(a->k.name, code, "%s", msg);
    a->running = true;
    a->run++;
    return 0;
}

/* For process_spectra (histo_live.c), between two blocks. */
unsigned histo_actor_counts(void *algo_data, const histo_spec **declared, const uint64_t **counts)
{
    histo_actor *a = algo_data;
    char msg[512];
    if (!a || !a->engine)
        return NARVAL_E_STATE;
    unsigned code = narval_code(histo_engine_counts(a->engine, counts, msg, sizeof msg));
    if (code)
        return kit_fail(a->k.name, code, "%s", msg);
    *declared = &spec;
    return 0;
}

/* ---- the files of one write (histo_files, histo_write.h) ---------------------------------
 * Each a unique temporary beside its final name (publish.h), renamed together
 * once all of them are written, else removed together. */
typedef struct file_set {
    kit_output *v;
    size_t n, cap;
    const char *who; /* the instance, for the warnings */
} file_set;

static histo_status histo_code(unsigned narval)
{
    return narval == NARVAL_E_NOMEM ? HISTO_E_NOMEM : HISTO_E_IO;
}

static histo_status set_create(void *ctx, const char *path, FILE **fp, char *msg, size_t len)
{
    file_set *st = ctx;
    if (st->n == st->cap) {
        size_t cap = st->cap ? 2 * st->cap : 64;
        kit_output *v = realloc(st->v, cap * sizeof *v);
        if (!v) {
            snprintf(msg, len, "out of memory for %zu output files", cap);
            return HISTO_E_NOMEM;
        }
        st->v = v;
        st->cap = cap;
    }
    kit_output *o = &st->v[st->n];
    *o = (kit_output){ .fd = -1 };
    unsigned code = kit_output_open(o, path, msg, len);
    if (code)
        return histo_code(code);
    if (!(*fp = kit_output_stream(o, msg, len))) {
        kit_output_discard(o);
        return HISTO_E_IO;
    }
    st->n++;
    return HISTO_OK;
}

/* Closes the file created last: kept, to be published, when it was written
 * (ok) and closes cleanly; else removed. */
static histo_status set_finish(void *ctx, bool ok, char *msg, size_t len)
{
    file_set *st = ctx;
    kit_output *o = &st->v[st->n - 1];
    unsigned code = kit_output_close(o, false, msg, len);
    if (!code && !ok) {
        snprintf(msg, len, "cannot write '%s'", o->temp);
        code = NARVAL_E_IO;
    }
    if (!code)
        return HISTO_OK;
    kit_output_discard(o);
    st->n--;
    return histo_code(code);
}

static void set_warn(void *ctx, const char *sentence)
{
    const file_set *st = ctx;
    kit_log(st->who, KIT_WARN, "%s", sentence);
}

/* Renames every temporary (publish; after a failure the rest are removed),
 * or removes them all. */
static unsigned set_end(file_set *st, bool publish, char *msg, size_t len)
{
    unsigned code = 0;
    for (size_t i = 0; i < st->n; i++)
        if (publish && !code)
            code = kit_output_publish(&st->v[i], false, msg, len);
        else
            kit_output_discard(&st->v[i]);
    free(st->v);
    return code;
}

/* Publishes every file of the counts so far: at stop into the instance's
 * directory, during the run (WriteEvery) into its live/. */
static unsigned write_all(histo_actor *a, bool final)
{
    const uint64_t *counts;
    histo_written w = { 0 };
    file_set set = { .who = a->k.name };
    const histo_files files = { &set, set_create, set_finish, set_warn };
    char msg[PATH_MAX + 1024], dir[PATH_MAX];
    histo_status rc = histo_engine_counts(a->engine, &counts, msg, sizeof msg);
    if (snprintf(dir, sizeof dir, "%s%s", a->dir, final ? "" : "/live") >= (int)sizeof dir)
        return kit_fail(a->k.name, NARVAL_E_IO, "path too long: '%s/live'", a->dir);
    if (rc == HISTO_OK)
        rc = histo_output_write(&spec, counts, dir, &files, &w, msg, sizeof msg);
    unsigned code = set_end(&set, rc == HISTO_OK, msg, sizeof msg);
    if (rc != HISTO_OK)
        code = narval_code(rc);
    if (code)
        return kit_fail(a->k.name, code, "%s; no file of this write was published", msg);
    a->last_write = now();
    kit_log(a->k.name, final ? KIT_INFO : KIT_DEBUG, "%s %u: wrote %zu histogram files and %zu "
            "plots under %s/", final ? "run" : "snapshot of run", a->run, w.files, w.plots, dir);
    for (size_t i = 0; final && i < spec.n_plot && !w.plot_failed; i++)
        kit_log(a->k.name, KIT_INFO, "plot: %s/%s.png", dir, spec.plot[i].file);
    return 0;
}

/* The frames come in the order histo_block_decode listed them: each is
 * answered as its decoding went. */
static unsigned on_frame(void *ctx, const adf_frame *f, adf_writer *out)
{
    histo_actor *a = ctx;
    const histo_fault *refused = histo_block_fault(&a->decoded, a->frame++, &a->fault);
    a->block_ends = f->key.id == ADF_ID_META_EOF;
    if (refused && (refused->code == HISTO_E_INPUT || refused->code == HISTO_E_DATA)) /* not counted, not passed on */
        return kit_bad_frame(a, f, "%s", refused->msg);
    if (refused)
        return kit_fail(a->k.name, narval_code(refused->code), "%s", refused->msg);
    return a->pass ? KIT_PASS : 0;
}

/* Whether a decoded block of in_size bytes has frames, is well-formed to its
 * end and none of its frames was refused: the filter's output is then its
 * input, copied at once rather than frame by frame. */
static bool passes_whole(const histo_block *b, unsigned in_size)
{
    const adf_frame *last = b->n_frames ? &b->frame[b->n_frames - 1] : NULL;
    return !b->faults.n && last && last->offset + last->key.length == in_size;
}

unsigned histo_actor_block(void *algo_data, const void *in, unsigned in_size, void *out,
                           unsigned out_size, unsigned *used, bool pass)
{
    histo_actor *a = algo_data;
    static const kit_filter_ops ops = { on_frame, NULL };
    unsigned code = kit_enter(algo_data, KIT_BLOCK);
    char msg[512];
    if (code)
        return code;
    if (histo_block_decode(&a->decoded, in, in_size) != HISTO_OK)
        return kit_leave(algo_data, KIT_BLOCK, kit_fail(a->k.name, NARVAL_E_NOMEM, "out of memory decoding a block"));
    a->pass = pass;
    a->block_ends = a->ended;
    a->frame = a->fault = 0;
    if (pass && passes_whole(&a->decoded, in_size) && in_size <= out_size) {
        memcpy(out, in, in_size);
        *used = in_size;
        a->block_ends = a->decoded.frame[a->decoded.n_frames - 1].key.id == ADF_ID_META_EOF;
    } else
        code = kit_filter_block(a, &ops, a, in, in_size, pass ? out : NULL, pass ? out_size : 0, used);
    uint64_t seen[HISTO_SEEN_KINDS] = { 0 };
    if (!code && histo_block_take(&a->decoded, a->engine, seen) != HISTO_OK)
        code = kit_fail(a->k.name, NARVAL_E_NOMEM, "no memory to stage histogram entries");
    if (code) {
        histo_engine_discard(a->engine);
        return kit_leave(algo_data, KIT_BLOCK, code);
    }
    a->entries += histo_engine_staged(a->engine);
    a->ended = a->block_ends;
    for (int k = 0; k < HISTO_SEEN_KINDS; k++)
        a->seen[k] += seen[k];
    if ((code = narval_code(histo_engine_commit(a->engine, msg, sizeof msg))) != 0)
        code = kit_fail(a->k.name, code, "%s", msg);
    else if (conf.write_every > 0 && now() - a->last_write >= conf.write_every)
        code = write_all(a, false);
    return kit_leave(algo_data, KIT_BLOCK, code);
}

static uint64_t frames_seen(const histo_actor *a)
{
    uint64_t n = 0;
    for (int k = 0; k < HISTO_SEEN_KINDS; k++)
        n += a->seen[k];
    return n;
}

static unsigned histo_stop(void *algo_data)
{
    histo_actor *a = algo_data;
    kit_log(a->k.name, KIT_INFO, "run %u: %llu frames: %llu data:crystal, %llu data:psa, %llu "
            "data:tracked, %llu others (not histogrammed); %llu entries counted; %s", a->run,
            (unsigned long long)frames_seen(a), (unsigned long long)a->seen[HISTO_SEEN_CRYSTAL],
            (unsigned long long)a->seen[HISTO_SEEN_PSA],
            (unsigned long long)a->seen[HISTO_SEEN_TRACKED],
            (unsigned long long)a->seen[HISTO_SEEN_OTHER], (unsigned long long)a->entries,
            a->ended ? "the data ended with meta:eof"
                     : "no meta:eof at the end (the run was stopped before the end of its data)");
    unsigned code = write_all(a, true);
    if (code == 0)
        a->running = false;
    return code;
}

/* A run that did not stop publishes nothing: the log says what its counts held. */
static void discard_run(histo_actor *a, const char *why)
{
    if (!a->running)
        return;
    kit_log(a->k.name, KIT_WARN, "%s: discarded %llu frames (%llu entries) of an unfinished "
            "run: its histograms were not written to %s/", why,
            (unsigned long long)frames_seen(a), (unsigned long long)a->entries, a->dir);
    a->running = false;
}

static unsigned histo_reset(void *algo_data)
{
    histo_actor *a = algo_data;
    char msg[512];
    discard_run(a, "reset before process_stop");
    unsigned code = narval_code(histo_engine_clear(a->engine, msg, sizeof msg));
    return code ? kit_fail(a->k.name, code, "%s", msg) : 0;
}

static void histo_release(void *algo_data)
{
    histo_actor *a = algo_data;
    discard_run(a, "unloaded without process_stop");
    histo_engine_destroy(a->engine);
    histo_block_free(&a->decoded);
    kit_claim_release(&a->claim);
    free(a->dir);
}

KIT_LIFECYCLE(histo_initialise, histo_start, histo_stop, histo_reset, histo_release)

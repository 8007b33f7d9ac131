/* tracker.c: the Tracker filter, the glue onto the tracker library: event:data:psa (or smeared truth) in, data:tracked out, by forward tracking on the GPU or the CPU. */
#define NARVAL_FILTER
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_device.h"
#include "kit.h"
#include "tracker_engine.h"
#include "tracker_events.h"
#include "tracker_model.h"
#include "tracker_output.h"

typedef struct tracker_conf {
    char *array, *geometry;
    kit_list device, clustering, path_model, input, beam;
    bool keep_input, core_scale, retrack;
    double min_cluster, min_single, single_isolation, size_bonus, theta_scale, pos_a, pos_b, energy_sigma;
    double shell_inner, shell_outer, beta, smear_a, smear_b;
    int64_t seed, gpu, max_bad, threads;
} tracker_conf;

#define KEY(name, type, field, def, ...) { name, type, offsetof(tracker_conf, field), def, __VA_ARGS__ }
static const kit_key tracker_keys[] = {
    KEY("Array", KIT_STRING, array, "detector/arrays/agata180.txt",
        .help = "array file: Narwhal's format or AGATA's CrystalPositionLookUpTable (detector/README.md)"),
    KEY("Geometry", KIT_STRING, geometry, "detector/geometry/agata.geo", .help = "crystal geometry file"),
    KEY("Device", KIT_LIST, device, "auto", .help = "auto (the GPU when one is usable, else the CPU), gpu or cpu"),
    KEY("GPU", KIT_INT, gpu, "0", KIT_GPU_RANGE, .help = GPU_KEY_HELP),
    KEY("Clustering", KIT_LIST, clustering, "gpu",
        .help = "where the GPU path clusters: gpu or cpu (measured by bench-tracker, docs/PERF.md)"),
    KEY("MinClusterFom", KIT_REAL, min_cluster, "0.05", KIT_RANGE(1e-30, 1),
        .help = "figure of merit a cluster needs to be accepted"),
    KEY("MinSingleFom", KIT_REAL, min_single, "0.0004", KIT_RANGE(1e-30, 1),
        .help = "photoabsorption probability a single point needs to be accepted (0.0004: sqrt(P) > 0.02)"),
    KEY("SingleIsolation", KIT_REAL, single_isolation, "60", KIT_RANGE(0, 1e4),
        .help = "mm: a single point is accepted only farther than this from every other point of its event"),
    KEY("SizeBonus", KIT_REAL, size_bonus, "4", KIT_RANGE(0, 100),
        .help = "clusters are taken in order of ln FoM + SizeBonus k / N, N the event's points, k + 1 the cluster's "
                "largest group of points linked by steps within SingleIsolation (0: by figure of merit alone)"),
    KEY("Retrack", KIT_BOOL, retrack, "true",
        .help = "true: the points the clusters left free are clustered and scored once more, on their own"),
    KEY("AngularUncertainty", KIT_REAL, theta_scale, "0.6", KIT_RANGE(1e-6, 100),
        .help = "scales the scattering-angle uncertainty carried from the positions"),
    KEY("PositionSigmaA", KIT_REAL, pos_a, "2.7", KIT_RANGE(0, 1000),
        .help = "mm: position uncertainty sigma(e) = A + B sqrt(100 keV / e)"),
    KEY("PositionSigmaB", KIT_REAL, pos_b, "6.2", KIT_RANGE(0, 1000), .help = "mm: B of the position uncertainty"),
    KEY("EnergySigma", KIT_REAL, energy_sigma, "3", KIT_RANGE(1e-3, 1000), .help = "keV: uncertainty of one deposit"),
    KEY("PathModel", KIT_LIST, path_model, "array",
        .help = "germanium between points: array (the crystals) or shell (two spheres)"),
    KEY("ShellInner", KIT_REAL, shell_inner, "235", KIT_RANGE(0, 1e5), .help = "mm: inner radius of the shell model"),
    KEY("ShellOuter", KIT_REAL, shell_outer, "325", KIT_RANGE(0, 1e5), .help = "mm: outer radius of the shell model"),
    KEY("Beta", KIT_REAL, beta, "0", KIT_RANGE(0, 0.99), .help = "v/c for the Doppler correction (0: none)"),
    KEY("BeamDirection", KIT_LIST, beam, "0 0 1", .help = "x y z of the recoil direction (normalised)"),
    KEY("Input", KIT_LIST, input, "psa",
        .help = "psa: track event:data:psa and data:psa; truth: track narwhal:truth, positions smeared"),
    KEY("KeepInput", KIT_BOOL, keep_input, "false",
        .help = "true: with Input psa, each tracked frame also passes on, before its data:tracked (to compare "
                "the PSA with the truth downstream)"),
    KEY("CoreScale", KIT_BOOL, core_scale, "true",
        .help = "true: with Input psa, each crystal's hit energies are scaled to add up to its core energy e0 "
                "(left as they are when e0 is not a positive number or e0 / sum is outside [0.5, 2])"),
    KEY("SmearFwhmA", KIT_REAL, smear_a, "2.7", KIT_RANGE(0, 1000),
        .help = "mm: Input truth smears each axis by a Gaussian of FWHM A + B sqrt(100 keV / e)"),
    KEY("SmearFwhmB", KIT_REAL, smear_b, "6.2", KIT_RANGE(0, 1000), .help = "mm: B of the smearing's FWHM"),
    KEY("Seed", KIT_INT, seed, "1", KIT_MIN(0), .help = "seed of the smearing (per event: same seed, same bytes)"),
    KIT_MAX_BAD_FRAMES(tracker_conf, max_bad),
    KIT_HOST_THREADS(tracker_conf, threads, "decode a block's psa frames into points and write its output"),
};

static unsigned check_conf(const char *directory_path);

static const kit_spec tracker_kit = {
    "Tracker", "filter",
    "forward tracking (OFT-style) of event:data:psa into data:tracked gammas, on the GPU or the CPU",
    tracker_keys, KIT_COUNT(tracker_keys), sizeof(tracker_conf), check_conf,
};

static tracker_conf conf;

/* What process_config derives from conf (read-only for the instances). */
static struct {
    tracker_device device;
    bool cluster_on_gpu, truth;
    tracker_model_conf model;
    tracker_doppler doppler;
    tracker_smear smear;
} derived;

typedef struct item {
    const uint8_t *frame; /* a frame passed on; NULL: event `event` of the batch */
    uint32_t length;
    uint32_t event;
    uint32_t psa;  /* the block's psa frame it comes from (UINT32_MAX: none): left out if that one is bad */
    bool kept;     /* the frame is a tracked one, passed on by KeepInput */
} item;

typedef struct counts {
    uint64_t events, gammas, singles, pairs, points, unused, big, too_many, truncated, skipped_hits,
        passed, kept;
    tracker_core_counts core;
    double seconds;
} counts;

typedef struct tracker {
    kit_instance k;
    det_array array;
    det_crystal crystal;
    tracker_lookup lookup;
    tr_model *model;
    tracker_engine *engine;
    tracker_events ev;
    item *items;
    size_t *item_at; /* n_items + 1: where each item's output starts in the block's */
    size_t n_items, cap_items;
    adf_frame *psa_frames; /* the block's psa frames, decoded together at its end */
    uint32_t *psa_event;   /* each one's event in the batch (UINT32_MAX: bad) */
    size_t n_psa, cap_psa;
    adf_psa *psa;
    adf_truth *truth;
    counts run, block;
} tracker;

/* The library's codes (tracker_status.h) as NARVAL's. */
static unsigned narval_code(tr_status s)
{
    static const unsigned codes[] = { [TR_OK] = 0,
                                      [TR_E_NOMEM] = NARVAL_E_NOMEM,
                                      [TR_E_INPUT] = NARVAL_E_INPUT,
                                      [TR_E_DATA] = NARVAL_E_DATA,
                                      [TR_E_DEVICE] = NARVAL_E_DEVICE,
                                      [TR_E_CONFIG] = NARVAL_E_CONFIG };
    return codes[s];
}

/* ---- configuration ------------------------------------------------------------ */

static unsigned pick(const kit_list *l, const char *key, const char *const *names, int n, const char *path,
                     int *out)
{
    if (l->n == 1)
        for (int i = 0; i < n; i++)
            if (strcmp(l->v[0], names[i]) == 0) {
                *out = i;
                return 0;
            }
    char choices[128] = "";
    for (int i = 0; i < n; i++)
        snprintf(choices + strlen(choices), sizeof choices - strlen(choices), "%s%s", i ? " or " : "",
                 names[i]);
    return kit_fail(tracker_kit.actor, NARVAL_E_CONFIG, "%s:%u: key '%s': %s%s is not %s", path,
                    l->n ? l->line[0] : 0, key, l->n == 1 ? "value " : "takes one value, not ",
                    l->n == 1 ? l->v[0] : "several", choices);
}

static unsigned parse_beam(const char *path)
{
    double v[3], norm = 0;
    const kit_list *l = &conf.beam;
    for (size_t i = 0; i < l->n && i < 3; i++) {
        char *end;
        v[i] = strtod(l->v[i], &end);
        if (*end || end == l->v[i] || !isfinite(v[i]))
            l = NULL;
        else
            norm += v[i] * v[i];
        if (!l)
            break;
    }
    if (!l || l->n != 3 || norm == 0)
        return kit_fail(tracker_kit.actor, NARVAL_E_CONFIG, "%s:%u: key 'BeamDirection': "
                        "needs three numbers x y z, not all zero", path, conf.beam.n ? conf.beam.line[0] : 0);
    for (int i = 0; i < 3; i++)
        derived.doppler.beam[i] = v[i] / sqrt(norm);
    return 0;
}

/* path: the Tracker.conf that was read (or would have been), for the messages. */
static unsigned derive(const char *path)
{
    static const char *const devices[] = { "auto", "cpu", "gpu" }, *const sides[] = { "cpu", "gpu" },
                             *const paths[] = { "array", "shell" }, *const inputs[] = { "psa", "truth" };
    int device, side, path_model, input;
    unsigned code;
    if ((code = pick(&conf.device, "Device", devices, 3, path, &device)) ||
        (code = pick(&conf.clustering, "Clustering", sides, 2, path, &side)) ||
        (code = pick(&conf.path_model, "PathModel", paths, 2, path, &path_model)) ||
        (code = pick(&conf.input, "Input", inputs, 2, path, &input)) || (code = parse_beam(path)))
        return code;
    if (path_model == TR_PATH_SHELL && conf.shell_outer <= conf.shell_inner)
        return kit_fail(tracker_kit.actor, NARVAL_E_CONFIG, "%s: ShellOuter (%g mm) must "
                        "exceed ShellInner (%g mm)", path, conf.shell_outer, conf.shell_inner);
    derived.device = (tracker_device)device;
    derived.cluster_on_gpu = side == 1;
    derived.truth = input == 1;
    derived.model = (tracker_model_conf){ .pos_a = conf.pos_a, .pos_b = conf.pos_b,
                                          .energy_sigma = conf.energy_sigma, .theta_scale = conf.theta_scale,
                                          .min_cluster = conf.min_cluster, .min_single = conf.min_single,
                                          .single_isolation = conf.single_isolation,
                                          .size_bonus = conf.size_bonus, .retrack = conf.retrack,
                                          .path_model = path_model,
                                          .shell_inner = conf.shell_inner, .shell_outer = conf.shell_outer };
    derived.doppler.beta = conf.beta;
    derived.smear = (tracker_smear){ conf.smear_a, conf.smear_b, (uint64_t)conf.seed };
    return 0;
}

/* The keys that depend on each other, and the files named, before any run. */
static unsigned check_conf(const char *directory_path)
{
    char msg[1536];
    char *path = kit_conf_path(directory_path, tracker_kit.actor);
    if (!path)
        return kit_fail(tracker_kit.actor, NARVAL_E_NOMEM, "out of memory");
    unsigned code = derive(path);
    if (!code && ((code = kit_check_input(conf.array, "Array", path, kit_key_line("Array"), msg, sizeof msg)) ||
                  (code = kit_check_input(conf.geometry, "Geometry", path, kit_key_line("Geometry"), msg,
                                          sizeof msg))))
        kit_fail(tracker_kit.actor, code, "%s", msg);
    free(path);
    return code;
}

void process_config(const char *directory_path, unsigned int *error_code)
{
    *error_code = kit_config(&tracker_kit, directory_path, &conf);
}

const char *process_describe(void) { return kit_describe(&tracker_kit); }

void *process_register(unsigned int *error_code) { return kit_register(sizeof(tracker), error_code); }

/* ---- lifecycle ----------------------------------------------------------------- */

static unsigned load_model(tracker *t)
{
    char msg[1024];
    if (det_array_load_any(&t->array, conf.array, msg, sizeof msg) != 0 ||
        det_crystal_load(&t->crystal, conf.geometry, msg, sizeof msg) != 0)
        return kit_fail(t->k.name, NARVAL_E_CONFIG, "%s", msg);
    if (tracker_lookup_init(&t->lookup, &t->array) != 0 || !(t->model = malloc(sizeof *t->model)))
        return kit_fail(t->k.name, NARVAL_E_NOMEM, "no memory for the tracking model");
    if (tracker_model_build(t->model, &t->array, &t->crystal, &derived.model, msg, sizeof msg) != 0)
        return kit_fail(t->k.name, NARVAL_E_CONFIG, "%s", msg);
    return 0;
}

/* OpenMP's worker threads outlive the parallel regions.  When libgomp came
 * in with this library, a host that dlcloses it would unmap the code they
 * sleep in: keep libgomp loaded for the life of the process. */
static void pin_openmp(void)
{
    dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

/* What initialise sets up, freed: at unload, and before an initialise after reset sets it up again. */
static void tracker_teardown(tracker *t)
{
    tracker_engine_destroy(t->engine);
    t->engine = NULL;
    tracker_lookup_free(&t->lookup);
    det_array_free(&t->array);
    free(t->model);
    free(t->psa);
    free(t->truth);
    t->model = NULL;
    t->psa = NULL;
    t->truth = NULL;
}

static unsigned tracker_initialise(void *algo_data)
{
    tracker *t = algo_data;
    char msg[512];
    pin_openmp();
    tracker_teardown(t);
    unsigned code = load_model(t);
    if (code)
        return code;
    t->ev.core_scale = conf.core_scale;
    t->psa = malloc(sizeof *t->psa);
    t->truth = malloc(sizeof *t->truth);
    if (!t->psa || !t->truth)
        return kit_fail(t->k.name, NARVAL_E_NOMEM, "no memory for the frame decoders");
    int gpu;
    if ((code = kit_gpu_device(t, conf.gpu, derived.device == TRACKER_CPU ? 0 : gpu_devices(), &gpu)))
        return code;
    tr_status rc = tracker_engine_open(&t->engine, t->model, derived.device, gpu, derived.cluster_on_gpu, msg,
                                       sizeof msg);
    if (rc != TR_OK)
        return kit_fail(t->k.name, narval_code(rc), "%s", msg);
    gpu_device_text(tracker_engine_on_gpu(t->engine), gpu, t->k.device, sizeof t->k.device);
    kit_log(t->k.name, KIT_INFO, "tracking on the %s; %d crystals (%s), germanium paths from the %s; "
            "input %s", msg, t->array.n, conf.array,
            derived.model.path_model == TR_PATH_SHELL ? "shell model" : "array",
            derived.truth ? "narwhal:truth, positions smeared" : "event:data:psa and data:psa");
    return 0;
}

/* A run's state is its counters only: the tracker emits every block's frames
 * in the call that brought them (meta:eof among them, passed on in place),
 * so a reset, even in the middle of a run, has nothing held to release. */
static unsigned tracker_start(void *algo_data)
{
    tracker *t = algo_data;
    memset(&t->run, 0, sizeof t->run);
    return 0;
}

static void log_core(const char *name, const tracker_core_counts *c)
{
    kit_log(name, KIT_INFO, "core scaling: %llu crystals scaled to their core energy, %llu already summed to "
            "it, %llu left unscaled (core energy not a positive number, or core / sum outside [%g, %g]); "
            "%llu crystals with a core energy but no hit",
            (unsigned long long)c->scaled, (unsigned long long)c->matched, (unsigned long long)c->unscaled,
            TRACKER_CORE_RATIO_MIN, TRACKER_CORE_RATIO_MAX, (unsigned long long)c->empty);
}

static unsigned tracker_stop(void *algo_data)
{
    tracker *t = algo_data;
    const counts *c = &t->run;
    kit_log(t->k.name, KIT_INFO, "tracked %llu events (%llu points) into %llu gammas: %llu clusters, %llu single "
            "points, %llu pairs; %llu points left unused, %llu clusters over %d points not scored; %.3f s "
            "tracking, %.0f events/s on the %s",
            (unsigned long long)c->events, (unsigned long long)c->points, (unsigned long long)c->gammas,
            (unsigned long long)(c->gammas - c->singles - c->pairs), (unsigned long long)c->singles,
            (unsigned long long)c->pairs, (unsigned long long)c->unused, (unsigned long long)c->big,
            TR_MAX_CLUSTER, c->seconds, c->seconds > 0 ? c->events / c->seconds : 0.0,
            tracker_engine_on_gpu(t->engine) ? "GPU" : "CPU");
    if (c->too_many || c->truncated || c->skipped_hits)
        kit_log(t->k.name, KIT_WARN, "%llu events over %d points not tracked (status %d); %llu gammas left "
                "out of events with more than %d (status %d); %llu hits without energy ignored",
                (unsigned long long)c->too_many, TR_MAX_POINTS, TRACKER_STATUS_TOO_MANY,
                (unsigned long long)c->truncated, ADF_TRACKED_MAX, TRACKER_STATUS_TRUNCATED,
                (unsigned long long)c->skipped_hits);
    if (conf.core_scale && !derived.truth)
        log_core(t->k.name, &c->core);
    kit_log(t->k.name, KIT_INFO, "%llu other frames passed on", (unsigned long long)c->passed);
    if (conf.keep_input)
        kit_log(t->k.name, KIT_INFO, "%llu tracked frames passed on as well (KeepInput)",
                (unsigned long long)c->kept);
    return 0;
}

static void tracker_release(void *algo_data)
{
    tracker *t = algo_data;
    tracker_teardown(t);
    tracker_events_free(&t->ev);
    free(t->items);
    free(t->item_at);
    free(t->psa_frames);
    free(t->psa_event);
}

/* ---- blocks -------------------------------------------------------------------- */

static unsigned add_item(tracker *t, const adf_frame *f, bool pass, bool kept, uint32_t psa)
{
    if (t->n_items == t->cap_items) {
        size_t cap = t->cap_items ? 2 * t->cap_items : 1024;
        item *items = realloc(t->items, cap * sizeof *items);
        if (items)
            t->items = items;
        size_t *at = items ? realloc(t->item_at, (cap + 1) * sizeof *at) : NULL;
        if (!at)
            return kit_fail(t->k.name, NARVAL_E_NOMEM, "no memory for %zu frames of a block", cap);
        t->item_at = at;
        t->cap_items = cap;
    }
    t->items[t->n_items++] = (item){ pass ? f->data : NULL, f->key.length, t->ev.n - (pass ? 0 : 1), psa, kept };
    return 0;
}

/* A psa frame, kept for the block's end (decode_psa_frames); its items name it. */
static unsigned add_psa_frame(tracker *t, const adf_frame *f)
{
    if (t->n_psa == t->cap_psa) {
        size_t cap = t->cap_psa ? 2 * t->cap_psa : 1024;
        adf_frame *frames = realloc(t->psa_frames, cap * sizeof *frames);
        if (frames)
            t->psa_frames = frames;
        uint32_t *event = frames ? realloc(t->psa_event, cap * sizeof *event) : NULL;
        if (!event)
            return kit_fail(t->k.name, NARVAL_E_NOMEM, "no memory for %zu psa frames of a block", cap);
        t->psa_event = event;
        t->cap_psa = cap;
    }
    uint32_t psa = (uint32_t)t->n_psa;
    t->psa_frames[t->n_psa++] = *f;
    unsigned code = conf.keep_input ? add_item(t, f, true, true, psa) : 0;
    return code ? code : add_item(t, f, false, false, psa);
}

/* Records the frame's place in the output: a frame passed on, an event to
 * track, or both (a truth frame in truth mode, and with KeepInput a psa
 * frame, passes on before its gammas).  Psa frames are decoded at the
 * block's end, all together. */
static unsigned on_frame(void *ctx, const adf_frame *f, adf_writer *out)
{
    tracker *t = ctx;
    char msg[512];
    unsigned code = 0;
    bool truth = f->key.id == ADF_ID_NW_TRUTH, psa = f->key.id == ADF_ID_EVENT_DATA_PSA || f->key.id == ADF_ID_DATA_PSA;
    (void)out;
    if (!derived.truth && psa)
        return add_psa_frame(t, f);
    if (!(derived.truth && truth))
        return add_item(t, f, true, false, UINT32_MAX);
    tr_status rc = tracker_events_add_truth(&t->ev, &t->lookup, &derived.smear, f, t->truth, msg, sizeof msg);
    if (rc == TR_E_INPUT || rc == TR_E_DATA) /* a bad frame: neither tracked nor passed on */
        return kit_bad_frame(t, f, "%s", msg);
    if (rc != TR_OK)
        return kit_fail(t->k.name, narval_code(rc), "%s", msg);
    if ((code = add_item(t, f, true, false, UINT32_MAX)) != 0)
        return code;
    return add_item(t, f, false, false, UINT32_MAX);
}

/* The block's psa frames into the batch, on the host's threads; each bad
 * one (neither tracked nor passed on) decoded again alone for its reason,
 * in block order. */
static unsigned decode_psa_frames(tracker *t)
{
    char msg[512];
    tr_status rc = tracker_events_add_psa_frames(&t->ev, &t->lookup, t->psa_frames, t->n_psa,
                                                 kit_host_threads(conf.threads), t->psa_event, msg, sizeof msg);
    if (rc != TR_OK)
        return kit_fail(t->k.name, narval_code(rc), "%s", msg);
    for (size_t i = 0; i < t->n_psa; i++) {
        if (t->psa_event[i] != UINT32_MAX)
            continue;
        rc = tracker_events_add_psa(&t->ev, &t->lookup, &t->psa_frames[i], t->psa, msg, sizeof msg);
        if (rc == TR_OK) /* cannot be: the same decoding refused it */
            return kit_fail(t->k.name, NARVAL_E_INTERNAL, "psa frame %zu of the block decoded alone but not with "
                            "the others", i);
        unsigned code = rc == TR_E_INPUT || rc == TR_E_DATA ? kit_bad_frame(t, &t->psa_frames[i], "%s", msg)
                                                            : kit_fail(t->k.name, narval_code(rc), "%s", msg);
        if (code != KIT_BAD)
            return code;
    }
    for (size_t i = 0; i < t->n_items; i++)
        if (!t->items[i].frame && t->items[i].psa != UINT32_MAX)
            t->items[i].event = t->psa_event[t->items[i].psa];
    return 0;
}

static void count_event(counts *c, const tr_event_info *info, uint32_t points, uint16_t status,
                        const tr_gamma *g)
{
    c->events++;
    c->points += points;
    c->gammas += info->n_gammas;
    c->unused += info->unused;
    c->big += info->big_clusters;
    c->too_many += status == TRACKER_STATUS_TOO_MANY;
    for (unsigned k = 0; k < info->n_gammas; k++) {
        c->singles += (g[k].flags & TR_GAMMA_SINGLE) != 0;
        c->pairs += (g[k].flags & TR_GAMMA_PAIR) != 0;
    }
}

/* Item i's output: its frame passed on, or its event's data:tracked. */
static void write_item(const tracker *t, const tr_out *out, size_t i, adf_writer *w)
{
    const item *it = &t->items[i];
    if (it->frame) {
        adf_put_frame(w, it->frame, it->length); /* a failure stays in w->status */
        return;
    }
    adf_tracked tr;
    uint32_t e = it->event;
    tracker_output_event(&t->ev, e, out->gammas, &out->info[e], &derived.doppler, &tr);
    adf_tracked_write(w, t->ev.number[e], t->ev.timestamp[e], &tr);
}

/* The block's output, counted: each item's size and place first (item_at),
 * then, when it all fits, every item written into its own place by the
 * host's threads; else one after the other, for the writer to measure. */
static unsigned write_block(tracker *t, const tr_out *out, adf_writer *w)
{
    size_t at = 0;
    if (t->n_items == 0) /* item_at is not there before the first item */
        return 0;
    for (size_t i = 0; i < t->n_items; i++) {
        const item *it = &t->items[i];
        t->item_at[i] = at;
        if (it->psa != UINT32_MAX && t->psa_event[it->psa] == UINT32_MAX)
            continue; /* its frame is bad */
        if (it->frame) {
            at += it->length;
            t->block.kept += it->kept;
            t->block.passed += !it->kept;
            continue;
        }
        uint32_t e = it->event, first = t->ev.first[e], kept = tracker_output_gammas(&out->info[e]);
        at += ADF_KEY_SIZE + adf_tracked_payload_size(kept);
        t->block.truncated += out->info[e].n_gammas - kept;
        count_event(&t->block, &out->info[e], t->ev.first[e + 1] - first, t->ev.status[e], &out->gammas[first]);
    }
    t->item_at[t->n_items] = at;
    if (at == 0) /* nothing to write (an empty block, or only bad frames): the buffer may be NULL */
        return 0;
    if (w->status != ADF_OK || w->depth != 0 || at > w->cap - w->used) {
        for (size_t i = 0; i < t->n_items; i++)
            if (t->item_at[i + 1] > t->item_at[i])
                write_item(t, out, i, w);
        return 0;
    }
    uint8_t *base = w->buf + w->used;
    int wrong = 0;
#pragma omp parallel for schedule(dynamic, 512) reduction(| : wrong) num_threads(kit_host_threads(conf.threads)) \
    if (t->n_items > 4096)
    for (size_t i = 0; i < t->n_items; i++) {
        size_t size = t->item_at[i + 1] - t->item_at[i];
        if (!size)
            continue;
        adf_writer part;
        adf_writer_init(&part, base + t->item_at[i], size);
        write_item(t, out, i, &part);
        wrong |= part.status != ADF_OK || part.used != size;
    }
    if (wrong)
        return kit_fail(t->k.name, NARVAL_E_INTERNAL, "an item of the block's output did not take the bytes measured "
                        "for it");
    w->used += at;
    w->needed += at;
    return 0;
}

static unsigned on_end(void *ctx, bool flush, adf_writer *w)
{
    tracker *t = ctx;
    char msg[512];
    tr_out out = { 0 };
    (void)flush;
    unsigned code = t->n_psa ? decode_psa_frames(t) : 0;
    if (code)
        return code;
    tr_batch b = tracker_events_batch(&t->ev);
    if (b.n_events) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        tr_status rc = tracker_engine_run(t->engine, &b, &out, msg, sizeof msg);
        if (rc != TR_OK)
            return kit_fail(t->k.name, narval_code(rc), "%s", msg);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        t->block.seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    }
    if ((code = write_block(t, &out, w)) != 0)
        return code;
    t->block.skipped_hits = t->ev.skipped_hits;
    t->block.core = t->ev.core;
    return 0;
}

static void add_counts(counts *to, const counts *c)
{
    to->events += c->events;
    to->gammas += c->gammas;
    to->singles += c->singles;
    to->pairs += c->pairs;
    to->points += c->points;
    to->unused += c->unused;
    to->big += c->big;
    to->too_many += c->too_many;
    to->truncated += c->truncated;
    to->skipped_hits += c->skipped_hits;
    to->passed += c->passed;
    to->kept += c->kept;
    to->core.scaled += c->core.scaled;
    to->core.matched += c->core.matched;
    to->core.unscaled += c->core.unscaled;
    to->core.empty += c->core.empty;
    to->seconds += c->seconds;
}

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer,
                   void *output_buffer, unsigned int size_of_output_buffer,
                   unsigned int *used_size_of_output_buffer, unsigned int *error_code)
{
    static const kit_filter_ops ops = { on_frame, on_end };
    tracker *t = algo_data;
    *used_size_of_output_buffer = 0;
    if ((*error_code = kit_enter(algo_data, KIT_BLOCK)) != 0)
        return;
    tracker_events_clear(&t->ev);
    t->n_items = 0;
    t->n_psa = 0;
    memset(&t->block, 0, sizeof t->block);
    unsigned code = kit_filter_block(t, &ops, t, input_buffer, size_of_input_buffer, output_buffer,
                                     size_of_output_buffer, used_size_of_output_buffer);
    if (code == 0)
        add_counts(&t->run, &t->block);
    *error_code = kit_leave(algo_data, KIT_BLOCK, code);
}

KIT_LIFECYCLE(tracker_initialise, tracker_start, tracker_stop, tracker_start, tracker_release)

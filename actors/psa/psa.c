/* psa.c: the PSA actor psa.so (filter): data:crystal frames in, data:psa frames out by grid search, other frames passed on untouched. */
#define NARVAL_FILTER
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kit.h"
#include "psa_block.h"
#include "psa_conf.h"
#include "psa_parts.h"
#include "psa_pow.h"
#include "publish.h"

enum { LOGGED_REJECTS = 10 }; /* frames without a rising edge logged per run; the rest are counted */

typedef struct psa_actor {
    kit_instance k;
    det_basis basis;
    psa_layout layout;
    gs_pow pw;
    psa_timing timing;
    float *edges;      /* per basis point: its edge, then (from n_points + 1 on) its offset (psa_timing) */
    psa_engine engine;
    psa_setup setup;
    psa_parts parts;   /* the block's parts and their workspaces (Parts) */
    bool gpu_block;    /* GPUWork block: whole blocks on the GPU */
    const psa_block *writing; /* the block whose frames the frame loop writes */
    size_t cursor;     /* its next event */
    uint64_t pieces;   /* pieces decoded in the run (BlockParts) */
    char *search_file; /* SearchLog as this instance writes it (kit_instance_output); NULL: none */
    kit_claim log_claim; /* search_file, claimed at initialise */
    kit_output log_out;  /* its temporary during a run, published at stop */
    FILE *search_log;    /* log_out's stream, during a run */
    uint64_t frames, hits, empty, searches, refined, neighboured, fell_back, rejected[PSA_REJECTS];
    double seconds;    /* in process_block */
} psa_actor;

static char *conf_path; /* the PSA.conf read, for SearchLog's messages */

/* The PSA library's codes as NARVAL's. */
static unsigned narval_code(psa_status s)
{
    switch (s) {
    case PSA_OK: return 0;
    case PSA_E_NOMEM: return NARVAL_E_NOMEM;
    case PSA_E_OUTPUT_SIZE: return NARVAL_E_OUTPUT_SIZE;
    case PSA_E_DEVICE: return NARVAL_E_DEVICE;
    case PSA_E_CONFIG: return NARVAL_E_CONFIG;
    case PSA_E_INTERNAL: break;
    }
    return NARVAL_E_INTERNAL;
}

/* The library's warnings (psa_setup's callback), in the instance's log. */
static void log_warning(void *ctx, const char *msg)
{
    const psa_actor *a = ctx;
    kit_log(a->k.name, KIT_WARN, "%s", msg);
}

__attribute__((destructor)) static void free_conf_path(void) { free(conf_path); }

void process_config(const char *directory_path, unsigned int *error_code)
{
    free(conf_path);
    if (!(conf_path = kit_conf_path(directory_path ? directory_path : "", psa_spec.actor)))
        *error_code = kit_fail(psa_spec.actor, NARVAL_E_NOMEM, "out of memory");
    else
        *error_code = kit_config(&psa_spec, directory_path, &psa_set);
}

const char *process_describe(void) { return kit_describe(&psa_spec); }

void *process_register(unsigned int *error_code)
{
    return kit_register(sizeof(psa_actor), error_code);
}

static unsigned load_basis(psa_actor *a)
{
    char msg[1024];
    if (det_basis_load(&a->basis, psa_set.basis, msg, sizeof msg))
        return kit_fail(a->k.name, NARVAL_E_IO, "Basis: %s", msg);
    kit_log(a->k.name, KIT_INFO, "basis %s: %u points, %u channels x %u samples of %g ns, grid %g mm",
            psa_set.basis, a->basis.n_points, a->basis.n_channels, a->basis.n_samples,
            a->basis.sample_ns, a->basis.grid_mm);
    return 0;
}

static unsigned build_layout(psa_actor *a)
{
    char msg[512];
    long start = (long)a->basis.pretrigger + psa_conf.window_start;
    if (start < 0 || start + (long)psa_conf.window > (long)a->basis.n_samples)
        return kit_fail(a->k.name, NARVAL_E_CONFIG, "WindowStart %d and WindowLength %u ask for basis "
                        "samples %ld..%ld; %s has 0..%u", psa_conf.window_start, psa_conf.window,
                        start, start + (long)psa_conf.window - 1, psa_set.basis, a->basis.n_samples - 1);
    psa_layout_params p = { .window_start = (uint32_t)start, .window = psa_conf.window,
                            .coarse_mm = psa_set.coarse_mm, .radius_mm = psa_set.radius_mm,
                            .local_mm = psa_conf.neighbour_passes ? psa_set.neighbour_mm : 0,
                            .f32 = psa_conf.engine.data == PSA_F32,
                            .i16 = psa_conf.engine.data == PSA_I16 };
    memcpy(p.n_mask, psa_conf.n_mask, sizeof p.n_mask);
    memcpy(p.mask, psa_conf.mask, sizeof p.mask);
    if (psa_layout_build(&a->layout, &a->basis, &p, msg, sizeof msg))
        return kit_fail(a->k.name, NARVAL_E_DATA, "%s: %s", psa_set.basis, msg);
    uint32_t coarse = 0, custom = 0;
    for (unsigned s = 0; s < DET_SEGMENTS; s++) {
        coarse += a->layout.seg[s].n_coarse;
        custom += psa_conf.custom[s] != 0;
    }
    kit_log(a->k.name, KIT_INFO, "search layout: %.1f MiB (%s), window of %u samples from basis "
            "sample %ld, %u segments with the default mask and %u from Mask lines, %u coarse points "
            "(%g mm)", (a->layout.values + a->layout.pm_values) *
            (psa_conf.engine.data == PSA_I16 ? 2.0 : 4.0) / 1048576.0,
            psa_conf.engine.data == PSA_I16 ? "int16" : "float", psa_conf.window, start,
            DET_SEGMENTS - custom, custom, coarse, psa_set.coarse_mm);
    return 0;
}

/* The basis's edges, and the basis aligned on them (before the search layout copies its signals). */
static unsigned set_timing(psa_actor *a)
{
    double ratio = a->basis.sample_ns / 10.0;
    size_t n = (size_t)a->basis.n_points + 1;
    if (!(a->edges = malloc(2 * n * sizeof *a->edges)))
        return kit_fail(a->k.name, NARVAL_E_NOMEM, "no memory for the basis's edge times");
    double edge = psa_basis_edges(&a->basis, psa_set.fraction, ratio, a->edges);
    if (edge < 0)
        return kit_fail(a->k.name, NARVAL_E_DATA, "%s: no point's signals reach half their charge: "
                        "no start time can be read", psa_set.basis);
    edge = psa_basis_align(&a->basis, edge, ratio, a->edges, a->edges + n);
    a->timing = (psa_timing){ psa_set.threshold, psa_set.max_energy, psa_set.fraction, edge,
                              a->edges, a->edges + n, ratio, psa_set.shift_range, psa_set.shift_step };
    return 0;
}

static void release(psa_actor *a)
{
    kit_output_discard(&a->log_out);
    kit_claim_release(&a->log_claim);
    free(a->search_file);
    psa_parts_close(&a->parts);
    psa_engine_destroy(&a->engine);
    psa_layout_free(&a->layout);
    det_basis_free(&a->basis);
    free(a->edges);
    memset((char *)a + sizeof a->k, 0, sizeof *a - sizeof a->k);
}

/* The pieces each part's decoding is cut into: BlockParts, else 0: psa_parts
 * picks for each part (psa_block_pieces). */
static int pieces(void)
{
    return (int)psa_set.block_parts;
}

/* The parts a block is cut into (psa_parts.h): Parts, 1 unless configured
 * (on the H200 three parts made the PSA slower than one: their searches
 * compete for the one device and each part fills its own half-empty tiles,
 * docs/PERF.md, issue 20).  Where a part cannot have its own device
 * workspace, the block stays whole. */
static unsigned open_parts(psa_actor *a)
{
    char msg[512];
    int n = (int)psa_set.parts;
    psa_status st = psa_parts_open(&a->parts, &a->setup, n, msg, sizeof msg);
    if (st == PSA_E_DEVICE) {
        kit_log(a->k.name, KIT_WARN, "Parts %d: %s; the blocks are worked on whole", n, msg);
        st = psa_parts_open(&a->parts, &a->setup, n = 1, msg, sizeof msg);
    }
    if (st)
        return kit_fail(a->k.name, narval_code(st), "no memory or threads for %d parts of a block", n);
    if (n > 1)
        kit_log(a->k.name, KIT_INFO, "Parts %d: each block cut into %d parts at frame boundaries, decoded in turn "
                "and searched at once on threads of their own%s", n, n,
                a->gpu_block ? ", each in a device stream of its own" : "");
    return 0;
}

/* SearchLog, when set: instance 1 writes the file named, instance k the file
 * with .k before its extension (instances of one library share SearchLog);
 * claimed before anything else is set up, so that a file another live
 * instance writes fails the initialise at once. */
static unsigned claim_search_log(psa_actor *a)
{
    char msg[PATH_MAX + 512], note[2 * PATH_MAX + 128];
    if (strcmp(psa_set.search_log, "none") == 0)
        return 0;
    if (!(a->search_file = kit_instance_output(psa_set.search_log, false, a->k.number, "SearchLog", note,
                                               sizeof note)))
        return kit_fail(a->k.name, NARVAL_E_NOMEM, "out of memory");
    if (note[0])
        kit_log(a->k.name, KIT_INFO, "%s", note);
    unsigned code = kit_claim_output(&a->log_claim, a->search_file, false, "SearchLog", conf_path, msg,
                                     sizeof msg);
    return code ? kit_fail(a->k.name, code, "%s", msg) : 0;
}

/* At first and after every reset (NARVAL re-initialises there): what a
 * previous initialise set up is released, then everything is set up again
 * from the configuration process_config read. */
static unsigned psa_initialise(void *algo_data)
{
    psa_actor *a = algo_data;
    char msg[1024];
    double err;
    unsigned code;
    psa_status st;
    release(a);
    if ((code = claim_search_log(a)) || (code = load_basis(a)) || (code = set_timing(a)) ||
        (code = build_layout(a)))
        return code;
    psa_pow_fit(psa_set.exponent, &a->pw, &err);
    kit_log(a->k.name, KIT_INFO, "FoM: sum of |d|^%g over %s search%s; |d|^p without powf, largest "
            "relative error %.2g; start time from the edge at %g of the core's and segment's amplitudes, refined over "
            "+-%g samples", psa_set.exponent, psa_conf.engine.mode == PSA_ADAPTIVE ? "adaptive" : "full",
            psa_conf.engine.mode == PSA_ADAPTIVE ? "es" : "es (every point)", err + 1.2e-7,
            psa_set.fraction, psa_set.shift_range);
    psa_engine_params p = psa_conf.engine;
    bool cpu = p.device == PSA_DEVICE_CPU || p.device == PSA_DEVICE_REFERENCE;
    if ((code = kit_gpu_device(a, psa_set.gpu, cpu ? 0 : gpu_devices(), &p.gpu)))
        return code;
    if ((st = psa_engine_create(&a->engine, &a->basis, &a->layout, &a->pw, &p, msg, sizeof msg)))
        return kit_fail(a->k.name, narval_code(st), "%s", msg);
    gpu_device_text(a->engine.gpu != NULL, p.gpu, a->k.device, sizeof a->k.device);
    kit_log(a->k.name, KIT_INFO, "searching on the %s", msg);
    a->setup = (psa_setup){ &a->basis, &a->layout, &a->timing, &a->engine, log_warning, a, 0,
                            psa_conf.neighbour_passes };
    bool wanted = psa_conf.gpu_block && a->engine.gpu;
    bool block = wanted && psa_block_gpu_open(&a->setup, msg, sizeof msg);
    a->setup.threads = psa_block_threads(&a->setup);
    if (wanted && !block)
        kit_log(a->k.name, KIT_WARN, "GPUWork block: %s; the blocks run round by round, the searches on the "
                "GPU", msg);
    a->gpu_block = block;
    if (block)
        kit_log(a->k.name, KIT_INFO, "GPUWork block: whole blocks on the GPU (a block in pinned memory sent "
                "whole at once, another copied and sent in pieces as the host decodes them: BlockParts), "
                "searched once all are there, written in the call that brought them; %d OpenMP threads copy, "
                "decode and write; %s", a->setup.threads, msg);
    return open_parts(a);
}

static void clear_counts(psa_actor *a)
{
    a->frames = a->hits = a->empty = a->searches = a->refined = a->neighboured = a->fell_back = 0;
    memset(a->rejected, 0, sizeof a->rejected);
    for (int k = 0; k < a->parts.n; k++)
        memset(a->parts.part[k].w.phase_s, 0, sizeof a->parts.part[k].w.phase_s);
    a->seconds = 0;
    a->pieces = 0;
}

/* The run's SearchLog goes into a temporary beside the file, published at stop. */
static unsigned psa_start(void *algo_data)
{
    psa_actor *a = algo_data;
    char msg[PATH_MAX + 512];
    clear_counts(a);
    if (!a->search_file)
        return 0;
    unsigned code = kit_output_open(&a->log_out, a->search_file, msg, sizeof msg);
    if (!code && !(a->search_log = kit_output_stream(&a->log_out, msg, sizeof msg)))
        code = NARVAL_E_IO;
    if (code) {
        kit_output_discard(&a->log_out);
        return kit_fail(a->k.name, code, "SearchLog: %s", msg);
    }
    fprintf(a->search_log, "# event crystal segment e_keV point x_mm y_mm z_mm fom t0_ns shift_samples "
            "hit_status\n");
    return 0;
}

/* A run that did not stop publishes no SearchLog: its temporary goes, and the log says what it held. */
static void discard_search_log(psa_actor *a, const char *why)
{
    if (!a->search_log)
        return;
    kit_log(a->k.name, KIT_WARN, "%s: discarded the SearchLog lines of %llu hits of an unfinished run: %s was "
            "not written", why, (unsigned long long)a->hits, a->search_file);
    kit_output_discard(&a->log_out);
    a->search_log = NULL;
}

static unsigned on_frame(void *ctx, const adf_frame *f, adf_writer *out)
{
    psa_actor *a = ctx;
    if (f->key.id != ADF_ID_NW_CRYSTAL)
        return KIT_PASS;
    const psa_event *ev = &a->writing->ev[a->cursor++];
    if (ev->reject == PSA_ACCEPTED)
        psa_block_write(ev, &a->setup, out);
    return 0;
}

/* A part's rejected frames: a malformed or absurd one is a bad frame
 * (kit.h's policy: logged with its position in the whole block, counted
 * against MaxBadFrames); one without a rising edge is the physics'
 * rejection, logged the first LOGGED_REJECTS times of a run. */
static void log_rejects(psa_actor *a, const psa_part *q)
{
    char where[512];
    const psa_block *w = &q->w;
    for (size_t k = 0; k < w->n_ev; k++) {
        const psa_event *ev = &w->ev[k];
        adf_frame f = w->frame[k];
        f.offset += q->at;
        uint64_t seen = a->rejected[ev->reject]++;
        if (ev->reject != PSA_ACCEPTED && ev->reject != PSA_REJECT_EDGE)
            kit_bad_frame(a, &f, "%s", psa_reject_name(ev->reject));
        if (ev->reject != PSA_REJECT_EDGE || seen >= LOGGED_REJECTS)
            continue;
        kit_where(&f, where, sizeof where);
        kit_log(a->k.name, KIT_WARN, "%s rejected: %s%s", where, psa_reject_name(ev->reject),
                seen + 1 == LOGGED_REJECTS ? " (further rejections for this reason are only counted)" : "");
    }
}

static void write_search_log(psa_actor *a, const psa_block *w)
{
    for (size_t k = 0; k < w->n_ev && a->search_log; k++) {
        const psa_event *ev = &w->ev[k];
        for (int r = 0; ev->reject == PSA_ACCEPTED && r < ev->n_net; r++) {
            const float *p = &a->basis.pos[3 * (size_t)ev->point[r]];
            fprintf(a->search_log, "%u %u %u %.3f %u %.2f %.2f %.2f %.9g %.3f %.4f %u\n",
                    (unsigned)ev->key.event, ev->crystal_id, ev->net[r], ev->e[r], ev->point[r], p[0],
                    p[1], p[2], ev->fom[r], ev->t0 * 10.0, ev->shift, ev->hit_status[r]);
        }
    }
}

/* The block (in: its bytes) succeeded: its parts' counts join the run's,
 * in order; past MaxBadFrames, NARVAL_E_INPUT. */
static unsigned commit(psa_actor *a, const void *in, unsigned size)
{
    kit_bad_begin(a, in, size);
    for (int p = 0; p < a->parts.used; p++) {
        const psa_block *w = &a->parts.part[p].w;
        log_rejects(a, &a->parts.part[p]);
        for (size_t k = 0; k < w->n_ev; k++) {
            const psa_event *ev = &w->ev[k];
            a->frames++;
            if (ev->reject == PSA_ACCEPTED) {
                a->hits += (uint64_t)ev->n_net;
                a->empty += ev->n_net == 0;
            }
        }
        a->searches += w->searches;
        a->refined += w->refined;
        a->neighboured += w->neighboured;
        a->fell_back += w->fell_back;
        write_search_log(a, w);
    }
    return kit_bad_commit(a);
}

/* The parts' outputs one after the other, each as psa_block_emit writes a
 * block's (the whole block's output: the parts are cut at frame
 * boundaries): *used the size, or the size needed with NARVAL_E_OUTPUT_SIZE
 * and nothing written. */
static unsigned emit_parts(psa_actor *a, const uint8_t *in, unsigned size, uint8_t *out, unsigned out_size,
                           unsigned *used)
{
    size_t need = 0, at = 0, one;
    psa_status st = PSA_OK;
    for (int p = 0; p < a->parts.used; p++)
        need += psa_block_output_size(&a->parts.part[p].w, (unsigned)a->parts.part[p].size);
    if (need > UINT_MAX)
        return kit_fail(a->k.name, NARVAL_E_DATA, "the output of this block needs %zu bytes, more than a NARVAL "
                        "buffer can hold", need);
    *used = (unsigned)need;
    if (need > out_size)
        return NARVAL_E_OUTPUT_SIZE;
    for (int p = 0; p < a->parts.used && !st; p++, at += one) {
        psa_part *q = &a->parts.part[p];
        st = psa_block_emit(&q->w, &a->setup, in + q->at, (unsigned)q->size, out + at, out_size - (unsigned)at,
                            &one);
    }
    if (!st)
        return 0;
    *used = 0;
    if (st == PSA_E_NOMEM)
        return kit_fail(a->k.name, narval_code(st), "no memory to write a block of %u bytes", size);
    return kit_fail(a->k.name, narval_code(st), "a data:psa frame did not take its computed size");
}

/* The block's frames (in: its input) into out; its counts join the run's
 * when they fit.  A block with bad framing (one part) goes through the
 * kit's frame loop, which reports the bad frame. */
static unsigned write_block(psa_actor *a, const void *in, unsigned size, bool bad, void *out, unsigned out_size,
                            unsigned *used)
{
    static const kit_filter_ops ops = { on_frame, NULL };
    psa_block *first = &a->parts.part[0].w;
    double t = psa_now();
    unsigned code;
    if (bad) {
        a->writing = first;
        a->cursor = 0;
        code = kit_filter_block(a, &ops, a, in, size, out, out_size, used);
    } else
        code = emit_parts(a, in, size, out, out_size, used);
    if (!code && (code = commit(a, in, size)) != 0)
        *used = 0;
    first->phase_s[PSA_PHASE_WRITE] += psa_now() - t;
    return code;
}

/* Part k failed (out of memory: the library's only failure there): the call
 * ends, the part and its first frame named. */
static unsigned part_failed(psa_actor *a, psa_status st, const void *in, unsigned size, int k)
{
    char where[512];
    const psa_part *q = &a->parts.part[k];
    kit_where_at(in, size, q->at, where, sizeof where);
    return kit_fail(a->k.name, narval_code(st), "no memory for the searches of part %d of %d of a block of %u "
                    "bytes (bytes %zu to %zu, from %s)", k + 1, a->parts.used, size, q->at, q->at + q->size, where);
}

/* A block: cut into parts worked on at once (psa_parts.h), each decoded in
 * pieces (on the GPU, each piece's traces are copied and aligned there
 * while the host decodes the next) and searched (on the GPU in one go, or
 * round by round); the parts' outputs written in order; all within this
 * call. */
static unsigned run_block(psa_actor *a, const void *in, unsigned size, void *out, unsigned out_size,
                          unsigned *used)
{
    bool bad;
    int failed = 0;
    unsigned code;
    psa_status st = psa_parts_run(&a->parts, &a->setup, in, size, a->gpu_block, pieces(), &bad, &failed);
    if (st)
        return part_failed(a, st, in, size, failed);
    if ((code = write_block(a, in, size, bad, out, out_size, used)) == 0)
        for (int k = 0; k < a->parts.used; k++)
            a->pieces += a->parts.part[k].pieces;
    return code;
}

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer,
                   void *output_buffer, unsigned int size_of_output_buffer,
                   unsigned int *used_size_of_output_buffer, unsigned int *error_code)
{
    psa_actor *a = algo_data;
    *used_size_of_output_buffer = 0;
    if ((*error_code = kit_enter(algo_data, KIT_BLOCK)) != 0)
        return;
    double t = psa_now();
    unsigned code;
    code = run_block(a, input_buffer, size_of_input_buffer, output_buffer, size_of_output_buffer,
                     used_size_of_output_buffer);
    a->seconds += psa_now() - t;
    *error_code = kit_leave(algo_data, KIT_BLOCK, code);
}

/* Where process_block's time went, and the GPU's share of the search phase. */
static void log_phases(const psa_actor *a)
{
    char line[512], gpu[640] = "", device[320], summed[96] = "";
    const psa_block *ws[PSA_MAX_PARTS];
    double phase[PSA_PHASES] = { 0 };
    size_t n = 0;
    unsigned long long in_place = 0;
    double list_s = 0, send_s = 0;
    for (int k = 0; k < a->parts.n; k++) {
        ws[k] = &a->parts.part[k].w;
        for (int p = 0; p < PSA_PHASES; p++)
            phase[p] += ws[k]->phase_s[p];
        in_place += ws[k]->in_place;
        list_s += ws[k]->list_s;
        send_s += ws[k]->send_s;
    }
    for (int p = 0; p < PSA_PHASES && n < sizeof line; p++)
        n += (size_t)snprintf(line + n, sizeof line - n, "%s%s %.3f", p ? ", " : "", psa_phase_name((psa_phase)p),
                              phase[p]);
    if (a->parts.n > 1)
        snprintf(summed, sizeof summed, " (summed over the %d parts, which work at once)", a->parts.n);
    psa_gpu_times g;
    if (psa_block_gpu_times(ws, (size_t)a->parts.n, &a->setup, device, sizeof device))
        snprintf(gpu, sizeof gpu, " (%llu pieces decoded); of decode: listing %.3f s, sending to the device %.3f s; %llu "
                 "blocks uploaded where they lay (pinned by the host), the others copied into pinned memory first; "
                 "the GPU block on the device %s", (unsigned long long)a->pieces, list_s, send_s, in_place, device);
    else if (psa_engine_gpu_times(&a->engine, &g))
        snprintf(gpu, sizeof gpu, " (%llu pieces decoded); of the search: %llu GPU calls, %llu chunks, packing "
                 "%.3f s, kernels %.3f s, waiting %.3f s", (unsigned long long)a->pieces, g.calls, g.chunks,
                 g.pack_s, g.kernel_s, g.wait_s);
    else
        snprintf(gpu, sizeof gpu, " (%llu pieces decoded)", (unsigned long long)a->pieces);
    kit_log(a->k.name, KIT_INFO, "time in process_block %.3f s: %s s%s%s", a->seconds, line, summed, gpu);
}

static unsigned psa_stop(void *algo_data)
{
    psa_actor *a = algo_data;
    uint64_t rejected = 0;
    for (int r = 1; r < PSA_REJECTS; r++)
        rejected += a->rejected[r];
    kit_log(a->k.name, KIT_INFO, "%llu data:crystal frames: %llu hits, %llu frames without a "
            "net-charge segment (data:psa with no hits), %llu rejected; %llu searches on the %s "
            "(%llu after a start-time refinement, %llu in neighbour passes), %.1f searches/s in process_block",
            (unsigned long long)a->frames, (unsigned long long)a->hits, (unsigned long long)a->empty,
            (unsigned long long)rejected, (unsigned long long)a->searches,
            psa_engine_where(&a->engine), (unsigned long long)a->refined, (unsigned long long)a->neighboured,
            a->seconds > 0 ? a->searches / a->seconds : 0.0);
    log_phases(a);
    for (int r = 1; r < PSA_REJECTS; r++)
        if (a->rejected[r])
            kit_log(a->k.name, KIT_INFO, "rejected %llu frames: %s", (unsigned long long)a->rejected[r],
                    psa_reject_name((psa_reject)r));
    if (a->fell_back)
        kit_log(a->k.name, KIT_WARN, "the GPU failed %llu time%s during the run (the warnings above say what "
                "took over: the rounds, or the CPU); no frame was lost", (unsigned long long)a->fell_back,
                a->fell_back == 1 ? "" : "s");
    if (!a->search_log)
        return 0;
    char msg[PATH_MAX + 512];
    a->search_log = NULL;
    unsigned code = kit_output_publish(&a->log_out, true, msg, sizeof msg);
    return code ? kit_fail(a->k.name, code, "SearchLog: %s", msg) : 0;
}

/* A block never outlives its call, so a reset has nothing held to drop. */
static unsigned psa_reset(void *algo_data)
{
    psa_actor *a = algo_data;
    discard_search_log(a, "reset before process_stop");
    clear_counts(a);
    return 0;
}

static void psa_release(void *algo_data)
{
    discard_search_log(algo_data, "unloaded without process_stop");
    release(algo_data);
}

KIT_LIFECYCLE(psa_initialise, psa_start, psa_stop, psa_reset, psa_release)

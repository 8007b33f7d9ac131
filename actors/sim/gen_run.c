/* gen_run.c: the generator's work: geometry and basis at initialise, events simulated in parallel batches, emitted whole and in order. */
#include <assert.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

/* A batch should last about BATCH_SECONDS: long enough that the threads'
 * start and join cost nothing, even when another process holds a core for a
 * while (a thread that waits at the join then waits for a small part of it). */
#define BATCH_SECONDS 0.02
enum { MIN_BATCH_PER_THREAD = 16, MAX_BATCH = 1 << 16 };

static bool writes_gammaevents(void) { return strcmp(gen_settings.gammaevents, "none") != 0; }

static unsigned load_geometry(gen *g)
{
    char msg[512];
    if (det_crystal_load(&g->shape, gen_settings.crystal, msg, sizeof msg))
        return kit_fail(g->k.name, NARVAL_E_IO, "crystal geometry: %s", msg);
    if (det_array_load_any(&g->array, gen_settings.array, msg, sizeof msg))
        return kit_fail(g->k.name, NARVAL_E_IO, "array: %s", msg);
    if (sim_world_init(&g->world, &g->array, &g->shape, msg, sizeof msg))
        return kit_fail(g->k.name, NARVAL_E_CONFIG, "%s: %s", gen_settings.array, msg);
    sim_physics *ph = &g->physics;
    ph->world = &g->world;
    ph->source = gen_resolved.source;
    ph->packing = gen_resolved.packing;
    ph->threshold = gen_settings.threshold;
    ph->fwhm_a = gen_settings.fwhm_a;
    ph->fwhm_b = gen_settings.fwhm_b;
    ph->seed = (uint64_t)gen_settings.seed;
    return 0;
}

static unsigned allocate_work(gen *g)
{
    size_t scratch = 0;
    for (int t = 0; t < g->world.n_shapes; t++) {
        size_t need = g->traces[t] ? sim_traces_scratch(g->traces[t]) : 0;
        scratch = need > scratch ? need : scratch;
    }
    g->n_threads = gen_settings.threads > 0 ? (int)gen_settings.threads : omp_get_max_threads();
    g->work = calloc((size_t)g->n_threads, sizeof *g->work);
    if (!g->work)
        return kit_fail(g->k.name, NARVAL_E_NOMEM, "no memory for %d threads", g->n_threads);
    for (int t = 0; t < g->n_threads; t++) {
        gen_work *w = &g->work[t];
        w->event = sim_event_new(g->world.n);
        w->crystal = malloc(sizeof *w->crystal);
        w->scratch = scratch ? malloc(scratch * sizeof *w->scratch) : NULL;
        if (!w->event || !w->crystal || (scratch && !w->scratch))
            return kit_fail(g->k.name, NARVAL_E_NOMEM, "no memory for thread %d's workspace", t);
    }
    if (writes_gammaevents() && !(g->gev_truth = malloc(sizeof *g->gev_truth)))
        return kit_fail(g->k.name, NARVAL_E_NOMEM, "no memory for the GammaEvents output");
    return 0;
}

/* What initialise sets up, freed (at unload, and before an initialise after reset). */
static void teardown(gen *g)
{
    for (int t = 0; g->work && t < g->n_threads; t++) {
        sim_event_free(g->work[t].event);
        free(g->work[t].crystal);
        free(g->work[t].scratch);
    }
    free(g->work);
    g->work = NULL;
    free(g->since_sync);
    g->since_sync = NULL;
    free(g->gev_truth);
    g->gev_truth = NULL;
    for (int t = 0; t < DET_ARRAY_SHAPES; t++) {
        sim_traces_close(g->traces[t]);
        g->traces[t] = NULL;
        g->physics.basis[t] = NULL;
    }
    sim_world_free(&g->world);
    det_array_free(&g->array);
}

/* No two live instances write one GammaEvents file: instance 1 writes the
 * file named, instance k the file with .k before its extension (instances of
 * one library share GammaEvents).  Claimed once, kept across re-initialisations. */
static unsigned claim_gammaevents(gen *g)
{
    char msg[1536], note[2048];
    if (!writes_gammaevents() || g->gev_claim.lock)
        return 0;
    free(g->gev_file);
    if (!(g->gev_file = kit_instance_output(gen_settings.gammaevents, false, g->k.number, "GammaEvents",
                                            note, sizeof note)))
        return kit_fail(g->k.name, NARVAL_E_NOMEM, "out of memory");
    if (note[0])
        kit_log(g->k.name, KIT_INFO, "%s", note);
    unsigned code = kit_claim_output(&g->gev_claim, g->gev_file, false, "GammaEvents",
                                     gen_resolved.conf_file, msg, sizeof msg);
    return code ? kit_fail(g->k.name, code, "%s", msg) : 0;
}

/* A run's GammaEvents, written into a temporary that only gen_stop publishes. */
static unsigned open_gammaevents(gen *g)
{
    char msg[1536], text[256];
    unsigned code = kit_output_open(&g->gev_out, g->gev_file, msg, sizeof msg);
    FILE *fp = code ? NULL : kit_output_stream(&g->gev_out, msg, sizeof msg);
    if (!fp) {
        kit_output_discard(&g->gev_out);
        return kit_fail(g->k.name, code ? code : NARVAL_E_IO, "%s", msg);
    }
    gev_summary s;
    gev_summary_of(&g->array, &g->shape, &s);
    snprintf(text, sizeof text, "narwhal generator, seed %lld, array %s", (long long)gen_settings.seed,
             gen_settings.array);
    if (gev_create(&g->gev, fp, g->gev_file, &s, text, msg, sizeof msg)) {
        kit_output_discard(&g->gev_out);
        return kit_fail(g->k.name, NARVAL_E_IO, "%s", msg);
    }
    return 0;
}

/* A run that ends without stop publishes nothing. */
static void discard_gammaevents(gen *g, const char *when)
{
    char msg[512];
    if (!g->gev)
        return;
    gev_finish(g->gev, msg, sizeof msg);
    g->gev = NULL;
    kit_output_discard(&g->gev_out);
    kit_log(g->k.name, KIT_WARN, "%s before the end of the run: %s not written (its %llu events discarded)", when,
            g->gev_file, (unsigned long long)g->events);
}

/* Every selected crystal is one of the array's (a typo would emit nothing, silently). */
static unsigned check_selection(gen *g)
{
    const kit_crystals *c = &gen_resolved.crystals;
    if (c->all)
        return 0;
    for (size_t i = 0; i < c->n; i++) {
        int k = 0;
        while (k < g->world.n && g->world.pl[k].id != c->id[i])
            k++;
        if (k == g->world.n)
            return kit_fail(g->k.name, NARVAL_E_CONFIG, "%s: key 'Crystals': crystal %u is not in the array %s",
                            gen_resolved.conf_file, c->id[i], gen_settings.array);
    }
    if (!(g->since_sync = calloc(c->n, sizeof *g->since_sync)))
        return kit_fail(g->k.name, NARVAL_E_NOMEM, "no memory for %zu crystals' counts", c->n);
    return 0;
}

/* Whether the basis of shape t is needed: for the truth (every crystal's
 * hits by collecting segment) or for a selected crystal of that shape's
 * traces.  A generator emitting one shape's crystals of AGATA's array then
 * holds one basis (0.7 GB each), not three. */
static bool shape_needed(const gen *g, int t)
{
    if (gen_resolved.emit_truth || writes_gammaevents())
        return true;
    for (int k = 0; k < g->world.n; k++)
        if (g->world.type[k] == t && kit_crystals_has(&gen_resolved.crystals, g->world.pl[k].id))
            return true;
    return false;
}

/* The first basis held: every shape's traces start alike (they depend on the event alone). */
static const struct sim_traces *any_traces(const gen *g)
{
    for (int t = 0; t < g->world.n_shapes; t++)
        if (g->traces[t])
            return g->traces[t];
    return NULL;
}

/* One basis per shape of the world that is needed: the Bases key's for an array that names its shapes, else the Basis key's. */
static unsigned open_bases(gen *g)
{
    char msg[768];
    const kit_list *bases = &gen_settings.bases;
    bool shaped = strcmp(bases->v[0], "none") != 0;
    if (shaped != (g->array.n_shapes > 0) || (shaped && (int)bases->n != g->world.n_shapes))
        return kit_fail(g->k.name, NARVAL_E_CONFIG, "%s: key 'Bases': the array %s names %d shape%s, Bases %zu "
                        "(one basis per shape of an array that names its shapes, else none and the Basis key)",
                        gen_resolved.conf_file, gen_settings.array, g->array.n_shapes, g->array.n_shapes == 1 ? "" : "s",
                        shaped ? bases->n : 0);
    for (int t = 0; t < g->world.n_shapes; t++) {
        if (!shape_needed(g, t))
            continue; /* its crystals' hits keep their geometric segments, in no frame emitted */
        const char *path = shaped ? bases->v[t] : gen_settings.basis;
        if (sim_traces_open(&g->traces[t], path, &g->world.shape[t], &gen_resolved.trace, g->physics.seed, msg,
                            sizeof msg))
            return kit_fail(g->k.name, NARVAL_E_IO, "basis %s: %s (basisgen -o %s makes one; Output truth needs none)",
                            path, msg, path);
        g->physics.basis[t] = g->traces[t]; /* energies go to the segments the traces say (sim/event.h) */
    }
    return 0;
}

unsigned gen_initialise(gen *g)
{
    char which[256];
    teardown(g);
    unsigned code = load_geometry(g);
    if (!code)
        code = check_selection(g);
    if (!code && gen_resolved.emit_crystals)
        code = open_bases(g);
    if (code)
        return code;
    if ((code = allocate_work(g)) != 0 || (code = claim_gammaevents(g)) != 0)
        return code;
    kit_crystals_describe(&gen_resolved.crystals, which, sizeof which);
    kit_log(g->k.name, KIT_INFO, "%d crystals from %s, frames of %s; %s; %d thread%s", g->world.n,
            gen_settings.array, which, any_traces(g) ? "traces from the basis" : "no traces", g->n_threads,
            g->n_threads > 1 ? "s" : "");
    return 0;
}

/* A run starts after the last event the previous runs emitted (events
 * simulated but not emitted when a run stopped are simulated again). */
unsigned gen_start(gen *g)
{
    char msg[1024];
    g->pending = g->next = 0;
    g->first_number = g->emitted_any ? g->last_number + 1 : 0;
    g->next_event = 0;
    g->clock = g->last_timestamp;
    g->eof_sent = g->last_sync_sent = false;
    g->next_sync = 0;
    if (g->since_sync)
        memset(g->since_sync, 0, gen_resolved.crystals.n * sizeof *g->since_sync);
    g->events = g->frames = g->crystals = g->bytes = g->fired = g->syncs = 0;
    g->seconds = 0;
    g->input_done = false;
    if (gen_resolved.from_file && gev_open(&g->gev_in, gen_settings.gammaevents_input, &g->array, msg, sizeof msg))
        return kit_fail(g->k.name, NARVAL_E_IO, "%s", msg);
    return writes_gammaevents() ? open_gammaevents(g) : 0;
}

/* ---- one event */

static int ensure(gen_slot *s, size_t need)
{
    if (need <= s->cap)
        return 0;
    uint8_t *p = realloc(s->bytes, need);
    if (!p)
        return -1;
    s->bytes = p;
    s->cap = need;
    return 0;
}

/* The event of slot s: read from the file (its response only) or simulated whole. */
static unsigned simulate_one(const gen *g, gen_work *w, const gen_slot *s)
{
    sim_event *ev = w->event;
    int rc;
    if (s->input) {
        memcpy(&ev->truth, s->input, sizeof ev->truth);
        ev->number = s->number;
        rc = sim_event_respond(&g->physics, ev, w->msg, sizeof w->msg);
    } else {
        rc = sim_event_run(&g->physics, s->number, ev, w->msg, sizeof w->msg);
    }
    return rc ? NARVAL_E_DATA : 0;
}

static int write_crystal(const gen *g, gen_work *w, const sim_fired *f, const gen_slot *s, adf_writer *out)
{
    adf_crystal *x = w->crystal;
    x->crystal_id = (uint16_t)g->world.pl[f->crystal].id;
    x->status = 0;
    x->n_channels = DET_CHANNELS;
    x->n_samples = (uint16_t)gen_resolved.trace.samples;
    for (int ch = 0; ch < DET_CHANNELS; ch++)
        x->energy[ch] = (float)f->energy[ch];
    sim_traces_make(g->traces[g->world.type[f->crystal]], w->event, f, x, w->scratch);
    return adf_crystal_write(out, s->number, s->timestamp, x);
}

/* Encodes the simulated event into slot s: its truth frame (kept for the
 * GammaEvents output even when not emitted), then its crystals by id. */
static unsigned encode_one(const gen *g, gen_work *w, gen_slot *s)
{
    sim_event *ev = w->event;
    bool truth = gen_resolved.emit_truth || g->gev, crystals = gen_resolved.emit_crystals;
    size_t truth_size = truth ? ADF_KEY_SIZE + adf_truth_payload_size(ev->truth.n_gammas, ev->truth.n_interactions) : 0;
    size_t crystal_size = ADF_KEY_SIZE + adf_crystal_payload_size(DET_CHANNELS, (unsigned)gen_resolved.trace.samples);
    int selected = 0;
    for (int c = 0; crystals && c < ev->n_fired; c++)
        selected += kit_crystals_has(&gen_resolved.crystals, g->world.pl[ev->fired[c].crystal].id);
    size_t need = truth_size + (size_t)selected * crystal_size;
    if (ensure(s, need)) {
        snprintf(w->msg, sizeof w->msg, "no memory for event %u (%zu bytes)", s->number, need);
        return NARVAL_E_NOMEM;
    }
    if (crystals)
        sim_traces_start(any_traces(g), ev);
    adf_writer out;
    adf_writer_init(&out, s->bytes, s->cap);
    int rc = truth ? adf_truth_write(&out, s->number, s->timestamp, &ev->truth) : ADF_OK;
    for (int c = 0; crystals && rc == ADF_OK && c < ev->n_fired; c++)
        if (kit_crystals_has(&gen_resolved.crystals, g->world.pl[ev->fired[c].crystal].id))
            rc = write_crystal(g, w, &ev->fired[c], s, &out);
    if (rc != ADF_OK) {
        snprintf(w->msg, sizeof w->msg, "encoding event %u: %s", s->number, adf_strerror(rc));
        return NARVAL_E_INTERNAL;
    }
    s->size = out.used;
    s->truth_size = truth_size;
    s->emit_from = gen_resolved.emit_truth ? 0 : truth_size;
    s->n_crystals = selected;
    s->fired = ev->n_fired;
    return 0;
}

static void make_event(const gen *g, gen_work *w, gen_slot *s)
{
    s->size = s->truth_size = s->emit_from = 0;
    s->n_crystals = s->fired = 0;
    w->code = simulate_one(g, w, s);
    if (!w->code)
        w->code = encode_one(g, w, s);
}

/* Events in the next batch: BATCH_SECONDS at the speed seen so far. */
static int batch_size(const gen *g)
{
    int least = MIN_BATCH_PER_THREAD * g->n_threads, n = least;
    if (g->seconds > 0 && g->next_event > 0)
        n = (int)fmin(MAX_BATCH, fmax(least, BATCH_SECONDS * (double)g->next_event / g->seconds));
    uint64_t left = gen_settings.events ? (uint64_t)gen_settings.events - g->next_event : (uint64_t)n;
    return left < (uint64_t)n ? (int)left : n;
}

static int ensure_slots(gen *g, int n)
{
    if (n <= g->batch)
        return 0;
    gen_slot *s = realloc(g->slot, (size_t)n * sizeof *s);
    if (!s)
        return -1;
    memset(s + g->batch, 0, (size_t)(n - g->batch) * sizeof *s);
    g->slot = s;
    g->batch = n;
    return 0;
}

/* Reads up to *n events of GammaEventsInput into the slots; *n becomes the count read. */
static unsigned read_batch(gen *g, int *n)
{
    char msg[1024];
    int i = 0;
    for (; i < *n && !g->input_done; i++) {
        gen_slot *s = &g->slot[i];
        if (!s->input && !(s->input = malloc(sizeof *s->input)))
            return kit_fail(g->k.name, NARVAL_E_NOMEM, "no memory for the events read");
        int rc = gev_next(g->gev_in, s->input, &s->number, msg, sizeof msg);
        if (rc < 0)
            return kit_fail(g->k.name, NARVAL_E_DATA, "%s", msg);
        if (rc == 0)
            break;
    }
    if (i < *n)
        g->input_done = true;
    *n = i;
    return 0;
}

/* Simulates the next batch of events into the slots, on every thread. */
static unsigned simulate_batch(gen *g)
{
    unsigned code = 0;
    int n = batch_size(g);
    if (ensure_slots(g, n))
        return kit_fail(g->k.name, NARVAL_E_NOMEM, "no memory for %d event slots", n);
    if (gen_resolved.from_file && (code = read_batch(g, &n)) != 0)
        return code;
    for (int i = 0; i < n; i++) {
        gen_slot *s = &g->slot[i];
        if (!gen_resolved.from_file)
            s->number = g->first_number + g->next_event + (uint32_t)i;
        s->timestamp = g->clock += sim_event_gap(g->physics.seed, s->number, gen_settings.rate);
    }
    double t0 = omp_get_wtime();
    char msg[256] = "";
#pragma omp parallel for num_threads(g->n_threads) schedule(dynamic, 1)
    for (int i = 0; i < n; i++) {
        gen_work *w = &g->work[omp_get_thread_num()];
        make_event(g, w, &g->slot[i]);
        if (w->code) {
#pragma omp critical
            if (!code) {
                code = w->code;
                memcpy(msg, w->msg, sizeof msg);
            }
        }
    }
    g->seconds += omp_get_wtime() - t0;
    if (code)
        return kit_fail(g->k.name, code, "%s", msg);
    for (int i = 0; i < n; i++)
        g->fired += (uint64_t)g->slot[i].fired;
    g->next_event += (uint32_t)n;
    g->pending = n;
    g->next = 0;
    return 0;
}

/* ---- emission */

static unsigned write_gammaevents(gen *g, const gen_slot *s)
{
    char msg[512];
    adf_iter it;
    adf_frame f;
    adf_iter_init(&it, s->bytes, s->truth_size);
    if (adf_iter_next(&it, &f) != 1 || adf_truth_read(&f, g->gev_truth) != ADF_OK)
        return kit_fail(g->k.name, NARVAL_E_INTERNAL, "an event's own truth frame does not decode");
    if (gev_write(g->gev, f.key.event, g->gev_truth, msg, sizeof msg))
        return kit_fail(g->k.name, NARVAL_E_IO, "%s", msg);
    return 0;
}

/* ---- meta:sync */

static bool syncs_on(void) { return !gen_resolved.crystals.all && gen_settings.sync_every > 0; }

static size_t sync_round_size(void) { return gen_resolved.crystals.n * (ADF_KEY_SIZE + ADF_SYNC_PAYLOAD); }

/* Room for a round at out + *used: 0 when there is; else the block ends
 * here (*used > 0), or NARVAL_E_OUTPUT_SIZE asking for the round's size. */
static unsigned room_for_round(const gen *g, unsigned cap, unsigned *used, bool *full)
{
    size_t need = sync_round_size();
    *full = need > cap - *used;
    if (!*full || *used > 0)
        return 0;
    *used = (unsigned)need;
    kit_log(g->k.name, KIT_DEBUG, "meta:sync round needs %zu bytes, the buffer has %u", need, cap);
    return NARVAL_E_OUTPUT_SIZE;
}

/* One meta:sync per selected crystal, its key holding the event and
 * timestamp no later frame of the stream precedes, its payload the frames
 * of that crystal since its last meta:sync (room checked by the caller). */
static void write_round(gen *g, uint32_t event, uint64_t timestamp, uint8_t *out, unsigned cap, unsigned *used)
{
    const kit_crystals *c = &gen_resolved.crystals;
    adf_writer w;
    adf_writer_init(&w, out + *used, cap - *used);
    for (size_t i = 0; i < c->n; i++) {
        adf_sync sync = {c->id[i], g->since_sync[i]};
        int rc = adf_sync_write(&w, event, timestamp, &sync);
        assert(rc == ADF_OK); /* the room was checked */
        (void)rc;
        g->since_sync[i] = 0;
    }
    *used += (unsigned)w.used;
    g->frames += c->n;
    g->syncs += c->n;
    g->bytes += w.used;
}

/* Counts the data:crystal frames of slot s per selected crystal. */
static void count_for_syncs(gen *g, const gen_slot *s)
{
    const kit_crystals *c = &gen_resolved.crystals;
    for (size_t off = s->truth_size; off < s->size; off += adf_get_u32(s->bytes + off)) {
        uint16_t id = adf_get_u16(s->bytes + off + ADF_KEY_SIZE);
        size_t lo = 0, hi = c->n;
        while (hi - lo > 1)
            if (c->id[(lo + hi) / 2] <= id)
                lo = (lo + hi) / 2;
            else
                hi = (lo + hi) / 2;
        g->since_sync[lo]++;
    }
}

/* A round before event s when its timestamp reached the next multiple of
 * SyncEvery.  *full: no room, the block ends before s. */
static unsigned sync_before(gen *g, const gen_slot *s, uint8_t *out, unsigned cap, unsigned *used, bool *full)
{
    *full = false;
    if (!syncs_on() || s->timestamp < g->next_sync)
        return 0;
    unsigned code = room_for_round(g, cap, used, full);
    if (code || *full)
        return code;
    write_round(g, s->number, s->timestamp, out, cap, used);
    uint64_t every = (uint64_t)gen_settings.sync_every;
    g->next_sync = (s->timestamp / every + 1) * every;
    return 0;
}

/* ---- emission, continued */

static bool all_simulated(const gen *g)
{
    return g->input_done || (gen_settings.events && g->next_event >= (uint64_t)gen_settings.events);
}

/* The run's meta:eof after its last event when it fits there, else alone in
 * the next block; then *used = 0.  Its payload counts what came before it;
 * its key holds the number after the last event's and that event's timestamp. */
static unsigned end_data(gen *g, uint8_t *out, unsigned cap, unsigned *used)
{
    if (g->eof_sent)
        return 0;
    uint32_t after = g->emitted_any ? g->last_number + 1 : 0;
    if (syncs_on() && !g->last_sync_sent) {
        bool full;
        unsigned code = room_for_round(g, cap, used, &full);
        if (code || full)
            return code;
        /* the last event's key: a reader replaying this stream makes the same meta:eof after it */
        write_round(g, g->last_number, g->last_timestamp, out, cap, used);
        g->last_sync_sent = true;
    }
    adf_writer w;
    adf_eof e = { g->frames > UINT32_MAX ? UINT32_MAX : (uint32_t)g->frames, g->bytes };
    adf_writer_init(&w, out + *used, cap - *used);
    if (adf_eof_write(&w, after, g->last_timestamp, &e) == ADF_OK) {
        *used += (unsigned)w.used;
        g->eof_sent = true;
        return 0;
    }
    if (*used > 0)
        return 0;
    *used = ADF_KEY_SIZE + ADF_EOF_PAYLOAD;
    kit_log(g->k.name, KIT_DEBUG, "meta:eof needs %u bytes, the buffer has %u", *used, cap);
    return NARVAL_E_OUTPUT_SIZE;
}

unsigned gen_block(gen *g, uint8_t *out, unsigned cap, unsigned *used)
{
    unsigned code;
    *used = 0;
    for (;;) {
        for (; g->next < g->pending; g->next++) {
            const gen_slot *s = &g->slot[g->next];
            bool full;
            if ((code = sync_before(g, s, out, cap, used, &full)) != 0 || full)
                return code;
            size_t n = s->size - s->emit_from;
            if (n > cap - *used) {
                if (*used > 0)
                    return 0;
                *used = (unsigned)n;
                kit_log(g->k.name, KIT_DEBUG, "event needs %zu bytes, the buffer has %u", n, cap);
                return NARVAL_E_OUTPUT_SIZE;
            }
            if (g->gev && (code = write_gammaevents(g, s)) != 0)
                return code;
            if (n) /* an event with nothing to emit (every γ missed, no truth) has no bytes at all */
                memcpy(out + *used, s->bytes + s->emit_from, n);
            if (syncs_on())
                count_for_syncs(g, s);
            *used += (unsigned)n;
            g->events++;
            g->crystals += (uint64_t)s->n_crystals;
            g->frames += (uint64_t)s->n_crystals + (gen_resolved.emit_truth ? 1 : 0);
            g->bytes += n;
            g->last_number = s->number;
            g->last_timestamp = s->timestamp;
            g->emitted_any = true;
        }
        if (all_simulated(g))
            return end_data(g, out, cap, used);
        if ((code = simulate_batch(g)) != 0)
            return code;
    }
}

unsigned gen_stop(gen *g)
{
    char msg[512], syncs[64] = "";
    if (g->syncs)
        snprintf(syncs, sizeof syncs, ", %llu meta:sync", (unsigned long long)g->syncs);
    double rate = g->seconds > 0 ? (double)g->next_event / g->seconds : 0;
    double crystal_rate = g->seconds > 0 ? (double)g->fired / g->seconds : 0;
    kit_log(g->k.name, KIT_INFO,
            "emitted %llu events, %llu frames (%llu data:crystal%s), %llu bytes%s; simulated %u "
            "events in %.3f s: %.0f events/s, %.0f fired crystals/s on %d thread%s",
            (unsigned long long)g->events, (unsigned long long)g->frames, (unsigned long long)g->crystals, syncs,
            (unsigned long long)g->bytes, g->eof_sent ? ", then meta:eof" : " (no meta:eof: stopped before the end)",
            g->next_event, g->seconds, rate, crystal_rate, g->n_threads, g->n_threads > 1 ? "s" : "");
    gev_close_reader(g->gev_in);
    g->gev_in = NULL;
    if (!g->gev)
        return 0;
    int rc = gev_finish(g->gev, msg, sizeof msg);
    g->gev = NULL;
    if (rc) {
        kit_output_discard(&g->gev_out);
        return kit_fail(g->k.name, NARVAL_E_IO, "%s", msg);
    }
    unsigned code = kit_output_publish(&g->gev_out, true, msg, sizeof msg);
    return code ? kit_fail(g->k.name, code, "%s", msg) : 0;
}

unsigned gen_reset(gen *g)
{
    if (g->k.state != KIT_RUNNING && g->k.state != KIT_PAUSED)
        return 0;
    discard_gammaevents(g, "reset");
    gev_close_reader(g->gev_in);
    g->gev_in = NULL;
    return 0;
}

void gen_release(gen *g)
{
    discard_gammaevents(g, "unloaded");
    gev_close_reader(g->gev_in);
    kit_claim_release(&g->gev_claim);
    free(g->gev_file);
    teardown(g);
    for (int i = 0; g->slot && i < g->batch; i++) {
        free(g->slot[i].bytes);
        free(g->slot[i].input);
    }
    free(g->slot);
}

/* tracker_study.c: the tracker's simulated inputs (libsim's transport or a GammaEvents file, packed, smeared, thresholded) and the efficiency / peak-to-total study. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "sim/gammaevents.h"
#include "tracker/tracker_engine.h"
#include "tracker_study.h"

enum { BINS = 4096, WINDOW_KEV = 3 };
enum { ENERGY_PURPOSE = 0x74726B65 }; /* "trke": the energy stream, apart from the positions' */

const tracker_input tracker_input_issue16 = { SIM_PACK_NONE, 5.0, 1.0, 3.7, 15.0, { 2.7, 6.2, 1 } };

int tracker_study_init(tracker_study *st, const char *array, const char *geometry, const tracker_model_conf *mc,
                       char *msg, size_t len)
{
    memset(st, 0, sizeof *st);
    if (det_array_load_any(&st->array, array, msg, len) != 0 ||
        det_crystal_load(&st->crystal, geometry, msg, len) != 0 ||
        sim_world_init(&st->world, &st->array, &st->crystal, msg, len) != 0)
        return -1;
    st->model = malloc(sizeof *st->model);
    if (!st->model || tracker_lookup_init(&st->lookup, &st->array) != 0) {
        snprintf(msg, len, "out of memory");
        return -1;
    }
    return tracker_model_build(st->model, &st->array, &st->crystal, mc, msg, len);
}

void tracker_study_free(tracker_study *st)
{
    free(st->model);
    tracker_lookup_free(&st->lookup);
    sim_world_free(&st->world);
    det_array_free(&st->array);
}

void tracker_sample_free(tracker_sample *s)
{
    tracker_events_free(&s->ev);
    memset(s, 0, sizeof *s);
}

/* ---- preparing one event --------------------------------------------------------- */

/* Moves deposit b into deposit a: energy-weighted centre, the larger one's segment. */
static void merge(adf_truth_hit *a, const adf_truth_hit *b)
{
    double e = (double)a->e + b->e;
    double wa = e > 0 ? a->e / e : 0.5, wb = 1 - wa;
    for (int k = 0; k < 3; k++) {
        a->pos[k] = (float)(wa * a->pos[k] + wb * b->pos[k]);
        a->lab[k] = (float)(wa * a->lab[k] + wb * b->lab[k]);
    }
    if (b->e > a->e)
        a->segment = b->segment;
    a->deposits = (uint16_t)(a->deposits + b->deposits);
    a->t = a->t < b->t ? a->t : b->t;
    a->e = (float)e;
}

static double dist2(const adf_truth_hit *a, const adf_truth_hit *b)
{
    double d = 0;
    for (int k = 0; k < 3; k++)
        d += ((double)a->pos[k] - b->pos[k]) * ((double)a->pos[k] - b->pos[k]);
    return d;
}

/* Packs the n deposits of one crystal in h: the closest pair within mm, again and again; the new count. */
static int pack_crystal(adf_truth_hit *h, int n, double mm)
{
    for (;;) {
        int bi = -1, bj = -1;
        double best = mm * mm;
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++)
                if (dist2(&h[i], &h[j]) < best) {
                    best = dist2(&h[i], &h[j]);
                    bi = i;
                    bj = j;
                }
        if (bi < 0)
            return n;
        merge(&h[bi], &h[bj]);
        memmove(&h[bj], &h[bj + 1], (size_t)(n - bj - 1) * sizeof *h);
        n--;
    }
}

/* Drops the points under the threshold and shares their crystal's energy among the others. */
static int threshold_crystal(adf_truth_hit *h, int n, double threshold)
{
    double core = 0, kept = 0;
    int m = 0;
    for (int i = 0; i < n; i++) {
        core += h[i].e;
        if (h[i].e >= threshold) {
            kept += h[i].e;
            h[m++] = h[i];
        }
    }
    for (int i = 0; i < m; i++)
        h[i].e = (float)(h[i].e * (core / kept));
    return m;
}

static void smear_energies(const tracker_input *in, sim_rng *r, adf_truth_hit *h, int n)
{
    for (int i = 0; i < n && (in->e_fwhm_a != 0 || in->e_fwhm_b != 0); i++) {
        double e = h[i].e > 0 ? h[i].e : 0;
        h[i].e = (float)(e + sqrt(in->e_fwhm_a + in->e_fwhm_b * e / 1000.0) / TRACKER_FWHM_PER_SIGMA * sim_gauss(r));
    }
}

/* The points of src as *in says, into dst (hits only; grouped by crystal in order of first appearance). */
static void prepare(const tracker_input *in, uint32_t event, const adf_truth *src, adf_truth *dst, uint8_t *done)
{
    int n = 0;
    sim_rng r;
    sim_rng_seed(&r, in->smear.seed, event, ENERGY_PURPOSE);
    memset(done, 0, src->n_interactions);
    for (unsigned i = 0; i < src->n_interactions; i++) {
        if (done[i])
            continue;
        int from = n;
        for (unsigned j = i; j < src->n_interactions; j++)
            if (!done[j] && src->hit[j].crystal_id == src->hit[i].crystal_id) {
                dst->hit[n++] = src->hit[j];
                done[j] = 1;
            }
        int k = n - from;
        if (in->packing == SIM_PACK_NONE && in->pack_mm > 0)
            k = pack_crystal(&dst->hit[from], k, in->pack_mm);
        smear_energies(in, &r, &dst->hit[from], k);
        n = from + threshold_crystal(&dst->hit[from], k, in->threshold);
    }
    dst->n_gammas = 0;
    dst->n_interactions = (uint16_t)n;
}

/* ---- samples ------------------------------------------------------------------------ */

typedef struct frames {
    uint8_t *data;
    size_t used, cap;
    uint64_t emitted, absorbed;
} frames;

typedef struct work {
    adf_truth src, dst;
    tracker_truth_scratch x;
    uint8_t done[ADF_TRUTH_MAX_INTERACTIONS];
} work;

/* Prepares event `number` of t and appends it to f as an event:data:psa frame. */
static int put_event(const tracker_input *in, uint32_t number, work *wk, frames *f, char *msg, size_t len)
{
    const adf_truth *t = &wk->src;
    for (unsigned g = 0; g < t->n_gammas; g++) {
        f->emitted++;
        f->absorbed += (t->gamma[g].flags & ADF_TRUTH_ABSORBED) != 0;
    }
    prepare(in, number, t, &wk->dst, wk->done);
    for (;;) {
        adf_writer w;
        adf_writer_init(&w, f->data + f->used, f->cap - f->used);
        int rc = tracker_truth_write_psa(&w, number, (uint64_t)number * 2000, &wk->dst, &in->smear, &wk->x);
        if (rc == ADF_OK) {
            f->used += w.used;
            return 0;
        }
        size_t cap = f->cap ? 2 * f->cap : 1 << 20;
        uint8_t *d = rc == ADF_E_NOSPACE ? realloc(f->data, cap) : NULL;
        if (!d) {
            snprintf(msg, len, "event %u: %s", number,
                     rc == ADF_E_NOSPACE ? "out of memory for the frames" : "more hits in a crystal than data:psa holds");
            return -1;
        }
        f->data = d;
        f->cap = cap;
    }
}

/* Events first .. first+n-1 simulated and prepared into f (one thread). */
static int simulate(const sim_physics *ph, const tracker_input *in, uint32_t first, uint32_t n, frames *f, char *msg,
                    size_t len)
{
    sim_event *ev = sim_event_new(ph->world->n);
    work *wk = malloc(sizeof *wk);
    int rc = ev && wk ? 0 : -1;
    if (rc)
        snprintf(msg, len, "out of memory for an event");
    for (uint32_t i = first; i < first + n && rc == 0; i++) {
        rc = sim_event_run(ph, i, ev, msg, len);
        if (rc == 0) {
            wk->src = ev->truth;
            rc = put_event(in, i, wk, f, msg, len);
        }
    }
    free(wk);
    sim_event_free(ev);
    return rc;
}

/* The frames of every part decoded into s, in order. */
static int decode(const tracker_study *st, frames *parts, int n, tracker_sample *s, char *msg, size_t len)
{
    adf_psa *psa = malloc(sizeof *psa);
    int rc = psa ? 0 : -1;
    s->ev.core_scale = true;
    for (int t = 0; t < n && rc == 0; t++) {
        adf_iter it;
        adf_frame f;
        int more;
        s->emitted += parts[t].emitted;
        s->absorbed += parts[t].absorbed;
        adf_iter_init(&it, parts[t].data, parts[t].used);
        while (rc == 0 && (more = adf_iter_next(&it, &f)) > 0)
            rc = tracker_events_add_psa(&s->ev, &st->lookup, &f, psa, msg, len) == TR_OK ? 0 : -1;
        if (rc == 0 && more < 0) {
            snprintf(msg, len, "a prepared frame does not read back");
            rc = -1;
        }
    }
    free(psa);
    return rc;
}

int tracker_study_sample(const tracker_study *st, const tracker_input *in, double line, int mult, uint32_t events,
                         uint64_t seed, tracker_sample *s, char *msg, size_t len)
{
    memset(s, 0, sizeof *s);
    s->line = line;
    s->mult = mult;
    sim_physics ph = { .world = &st->world, .packing = in->packing, .threshold = 0, .seed = seed };
    ph.source.kind = SIM_CASCADE;
    ph.source.n = mult;
    for (int i = 0; i < mult; i++)
        ph.source.energy[i] = line;
    int threads = omp_get_max_threads(), failed = 0;
    frames *parts = calloc((size_t)threads, sizeof *parts);
    if (!parts)
        return -1;
#pragma omp parallel num_threads(threads) reduction(| : failed)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        uint32_t a = (uint32_t)((uint64_t)events * t / nt), b = (uint32_t)((uint64_t)events * (t + 1) / nt);
        char m[256];
        if (simulate(&ph, in, a, b - a, &parts[t], m, sizeof m) != 0) {
#pragma omp critical
            snprintf(msg, len, "%s", m);
            failed = 1;
        }
    }
    if (!failed && decode(st, parts, threads, s, msg, len) != 0)
        failed = 1;
    for (int t = 0; t < threads; t++)
        free(parts[t].data);
    free(parts);
    return failed ? -1 : 0;
}

int tracker_study_sample_file(const tracker_study *st, const tracker_input *in, const char *path,
                              tracker_sample *s, char *msg, size_t len)
{
    gev_reader *r = NULL;
    frames f = { 0 };
    work *wk = malloc(sizeof *wk);
    uint32_t number;
    int rc = -1, got;
    memset(s, 0, sizeof *s);
    if (!wk || in->packing != SIM_PACK_NONE) {
        snprintf(msg, len, wk ? "a GammaEvents file is packed by distance only" : "out of memory");
        goto done;
    }
    if (gev_open(&r, path, &st->array, msg, len) != 0)
        goto done;
    while ((got = gev_next(r, &wk->src, &number, msg, len)) > 0) {
        if (s->line == 0 && wk->src.n_gammas > 0) {
            s->line = wk->src.gamma[0].e;
            s->mult = wk->src.n_gammas;
        }
        if (put_event(in, number, wk, &f, msg, len) != 0)
            goto done;
    }
    rc = got == 0 ? decode(st, &f, 1, s, msg, len) : -1;
done:
    gev_close_reader(r);
    free(f.data);
    free(wk);
    return rc;
}

/* ---- the measurement ------------------------------------------------------------------ */

void tracker_study_header(void)
{
    printf("| input | keV | M | events | efficiency | P/T | peak | total | fully absorbed | points/event |\n"
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    fflush(stdout);
}

static int write_spectrum(const char *csv, const tracker_sample *s, const uint64_t *bin)
{
    FILE *fp = fopen(csv, "w");
    if (!fp)
        return -1;
    fprintf(fp, "# tracked spectrum: %g keV, M = %d, %llu gammas emitted; counts per 1 keV bin\nkeV,tracked\n",
            s->line, s->mult, (unsigned long long)s->emitted);
    for (int b = 0; b < BINS; b++)
        fprintf(fp, "%d,%llu\n", b, (unsigned long long)bin[b]);
    return fclose(fp) == 0 ? 0 : -1;
}

int tracker_study_measure(const tracker_study *st, const tracker_sample *s, const char *label, const char *csv,
                          char *msg, size_t len)
{
    tracker_engine *eng = NULL;
    tr_out o;
    uint64_t *bin = calloc(BINS, sizeof *bin), peak = 0, total = 0;
    tr_batch b = tracker_events_batch(&s->ev);
    int rc = -1;
    if (!bin || tracker_engine_open(&eng, st->model, TRACKER_AUTO, 0, true, msg, len) != TR_OK ||
        tracker_engine_run(eng, &b, &o, msg, len) != TR_OK)
        goto done;
    for (uint32_t e = 0; e < b.n_events; e++) {
        const tr_gamma *g = &o.gammas[b.first[e]];
        for (unsigned k = 0; k < o.info[e].n_gammas; k++) {
            double sum = 0;
            for (int p = 0; p < g[k].n; p++)
                sum += b.points[b.first[e] + g[k].pt[p]].e;
            total++;
            peak += fabs(sum - s->line) <= WINDOW_KEV;
            if (sum >= 0 && sum < BINS)
                bin[(int)sum]++;
        }
    }
    double eff = s->emitted ? (double)peak / s->emitted : 0, pt = total ? (double)peak / total : 0;
    printf("| %s | %.1f | %d | %u | %.2f ± %.2f %% | %.2f ± %.2f %% | %llu | %llu | %.1f %% | %.2f |\n", label,
           s->line, s->mult, b.n_events, 100 * eff, s->emitted ? 100 * sqrt(eff * (1 - eff) / s->emitted) : 0.0, 100 * pt,
           total ? 100 * sqrt(pt * (1 - pt) / total) : 0.0, (unsigned long long)peak, (unsigned long long)total,
           s->emitted ? 100.0 * s->absorbed / s->emitted : 0.0, b.n_events ? (double)b.first[b.n_events] / b.n_events : 0);
    fflush(stdout);
    rc = 0;
    if (csv && write_spectrum(csv, s, bin) != 0) {
        snprintf(msg, len, "cannot write %s", csv);
        rc = -1;
    }
done:
    tracker_engine_destroy(eng);
    free(bin);
    return rc;
}

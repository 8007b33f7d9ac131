/* psa_event.c: aligns the basis on its points' edges; checks a data:crystal frame, finds its net-charge segments and start time, aligns it on the basis, feeds and follows its searches (the steps on its traces: kernels/psa_refine.h, which the GPU block runs too). */
#include "psa_event.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

const char *psa_reject_name(psa_reject r)
{
    switch (r) {
    case PSA_ACCEPTED: return "accepted";
    case PSA_REJECT_PAYLOAD: return "payload size does not match its channel and sample counts";
    case PSA_REJECT_CHANNELS: return "not 37 channels (36 segments and the core)";
    case PSA_REJECT_GAIN: return "gain not a positive finite number";
    case PSA_REJECT_ENERGY: return "an energy not finite or beyond MaxEnergy";
    case PSA_REJECT_EDGE: return "net-charge segments but no rising edge on the core or the segments";
    default: return "unknown";
    }
}

/* Where y (rising towards 1) crosses f, in samples, reading back from its
 * first sample at half height (noise before the edge cannot fake it); -1 if
 * it never reaches half height. */
static double edge(const float *y, unsigned n, size_t step, double f)
{
    unsigned s = 0;
    while (s < n && y[s * step] < 0.5f)
        s++;
    if (s == n)
        return -1;
    unsigned j = s;
    while (j > 0 && y[(j - 1) * step] >= f)
        j--;
    if (j == 0)
        return 0;
    double lo = y[(j - 1) * step], hi = y[j * step];
    return j - 1 + (hi > lo ? (f - lo) / (hi - lo) : 0);
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double psa_basis_edges(const det_basis *b, double fraction, double ratio, float *out)
{
    double *t = malloc((b->n_points + 1) * sizeof *t), med = -1;
    float *y = malloc(b->n_samples * sizeof *y);
    size_t n = 0;
    if (!t || !y)
        goto done;
    for (uint32_t i = 0; i < b->n_points; i++) {
        const float *core = det_basis_point(b, i) + (size_t)DET_CORE * b->n_samples;
        const float *seg = det_basis_point(b, i) + (size_t)b->segment[i] * b->n_samples;
        for (uint32_t s = 0; s < b->n_samples; s++)
            y[s] = 0.5f * (seg[s] - core[s]);
        double x = edge(y, b->n_samples, 1, fraction);
        out[i] = x < 0 ? NAN : (float)((x - b->pretrigger) * ratio);
        if (x >= 0)
            t[n++] = out[i];
    }
    if (n) {
        qsort(t, n, sizeof *t, by_double);
        med = t[n / 2];
    }
done:
    free(t);
    free(y);
    return med;
}

double psa_basis_align(det_basis *b, double median, double ratio, float *edge, float *offset)
{
    const float held = (float)median;
    const pt_window w = { 0, b->n_samples, 0, 1 };
    /* Points are independent: one point per iteration, its own scratch. */
#pragma omp parallel for schedule(static)
    for (uint32_t i = 0; i < b->n_points; i++) {
        float moved[DET_BASIS_MAX_SAMPLES];
        offset[i] = 0;
        if (!isfinite(edge[i]))
            continue;
        const double from = (edge[i] - median) / ratio; /* basis samples */
        for (uint32_t ch = 0; ch < b->n_channels; ch++) {
            float *s = det_basis_point(b, i) + (size_t)ch * b->n_samples;
            for (uint32_t j = 0; j < b->n_samples; j++) {
                const pt_tap tp = pt_tap_at(&w, b->n_samples, from, j);
                moved[j] = pt_lerp(s[tp.lo], s[tp.hi], tp.f);
            }
            memcpy(s, moved, b->n_samples * sizeof *s);
        }
        offset[i] = (float)(median - edge[i]);
        edge[i] = held;
    }
    return held;
}

unsigned psa_event_samples(const adf_frame *f)
{
    if (f->payload_size < ADF_CRYSTAL_FIXED)
        return 0;
    unsigned n = adf_get_u16(f->payload + 6);
    return n <= ADF_MAX_SAMPLES ? n : 0;
}

psa_reject psa_event_sized(const adf_frame *f)
{
    const uint8_t *p = f->payload;
    if (f->payload_size < ADF_CRYSTAL_FIXED)
        return PSA_REJECT_PAYLOAD;
    unsigned nc = adf_get_u16(p + 4), ns = adf_get_u16(p + 6);
    if (nc != DET_CHANNELS)
        return PSA_REJECT_CHANNELS;
    if (ns < 1 || ns > ADF_MAX_SAMPLES || f->payload_size != adf_crystal_payload_size(nc, ns))
        return PSA_REJECT_PAYLOAD;
    return PSA_ACCEPTED;
}

static psa_reject check(const adf_frame *f, psa_event *ev, const psa_timing *tm)
{
    const uint8_t *p = f->payload;
    psa_reject sized = psa_event_sized(f);
    if (sized != PSA_ACCEPTED)
        return sized;
    unsigned nc = adf_get_u16(p + 4), ns = adf_get_u16(p + 6);
    float gain = adf_get_f32(p + 8);
    if (!(gain > 0) || !isfinite(gain))
        return PSA_REJECT_GAIN;
    for (unsigned ch = 0; ch < nc; ch++) {
        float e = adf_get_f32(p + ADF_CRYSTAL_FIXED + 4 * ch);
        if (!isfinite(e) || fabs(e) > tm->max_energy)
            return PSA_REJECT_ENERGY;
    }
    ev->crystal_id = adf_get_u16(p);
    ev->crystal_status = adf_get_u16(p + 2);
    ev->n_samples = (uint16_t)ns;
    return PSA_ACCEPTED;
}

/* Net-charge segments by decreasing energy (equal energies: lower segment first). */
static void net_segments(psa_event *ev, const float *energy, double threshold)
{
    ev->n_net = 0;
    for (int s = 0; s < DET_SEGMENTS; s++) {
        if (!(energy[s] > threshold))
            continue;
        int at = ev->n_net++;
        while (at > 0 && ev->e[at - 1] < energy[s]) {
            ev->net[at] = ev->net[at - 1];
            ev->e[at] = ev->e[at - 1];
            at--;
        }
        ev->net[at] = (uint8_t)s;
        ev->e[at] = energy[s];
    }
}

/* The start: the edge of the mean of the core and the first net-charge
 * segment, else of the core alone (an event without net-charge segments) or
 * of the segments' sum (a core that does not rise). */
static psa_reject start_time(psa_event *ev, const psa_timing *tm)
{
    unsigned n = ev->n_samples;
    float y[ADF_MAX_SAMPLES];
    bool core_ok = ev->core_e > tm->threshold;
    double x = -1;
    if (core_ok) {
        for (unsigned s = 0; s < n; s++)
            y[s] = ev->n_net ? 0.5f * (psa_event_raw(ev, ev->net[0], s) / ev->e[0] -
                                       psa_event_raw(ev, DET_CORE, s) / ev->core_e)
                             : -psa_event_raw(ev, DET_CORE, s) / ev->core_e;
        x = edge(y, n, 1, tm->fraction);
    }
    if (x < 0 && ev->n_net > 0) {
        double sum = 0;
        for (int r = 0; r < ev->n_net; r++)
            sum += ev->e[r];
        for (unsigned s = 0; s < n; s++) {
            double v = 0;
            for (int r = 0; r < ev->n_net; r++)
                v += psa_event_raw(ev, ev->net[r], s);
            y[s] = (float)(v / sum);
        }
        x = edge(y, n, 1, tm->fraction);
        ev->psa_status |= PSA_STATUS_T0_FROM_SEGMENTS;
    }
    if (x < 0) {
        ev->t0 = 0;
        return ev->n_net > 0 ? PSA_REJECT_EDGE : PSA_ACCEPTED;
    }
    ev->t0 = x - tm->basis_edge;
    return PSA_ACCEPTED;
}

void psa_event_decode(const adf_frame *f, psa_event *ev, const psa_timing *tm)
{
    float energy[DET_CHANNELS];
    memset(ev, 0, sizeof *ev);
    ev->key = f->key;
    if ((ev->reject = check(f, ev, tm)) != PSA_ACCEPTED)
        return;
    const uint8_t *p = f->payload + ADF_CRYSTAL_FIXED;
    ev->per_kev = 1.0f / adf_get_f32(f->payload + 8);
    for (unsigned ch = 0; ch < DET_CHANNELS; ch++, p += 4)
        energy[ch] = adf_get_f32(p);
    ev->trace = p;
    ev->core_e = energy[DET_CORE];
    net_segments(ev, energy, tm->threshold);
    ev->reject = start_time(ev, tm);
}

static pt_window window_of(const det_basis *b, const psa_layout *l, const psa_timing *tm)
{
    return (pt_window){ l->window_start, l->window, b->pretrigger, tm->ratio };
}

pr_event psa_event_view(const psa_event *ev, const psa_layout *l)
{
    const psa_segment *g = &l->seg[ev->net[0]];
    return (pr_event){ ev->trace, ev->n_samples, (uint32_t)ev->n_net, ev->per_kev, ev->t0, ev->net, ev->e,
                       g->mask, g->n_mask, ev->point[0], ev->point };
}

pr_basis psa_event_basis(const det_basis *b, const psa_layout *l, const psa_timing *tm)
{
    return (pr_basis){ window_of(b, l, tm), b->n_samples, b->signal, tm->point_edge, tm->basis_edge,
                       tm->shift_step, 0.5 * tm->shift_step, pr_steps(tm->shift_range, tm->shift_step) };
}

double psa_event_start(const psa_event *ev, const psa_timing *tm)
{
    return ev->t0 + ev->shift + (ev->n_net ? tm->offset[ev->point[0]] : 0);
}

void psa_event_align(psa_event *ev, const det_basis *b, const psa_layout *l, const psa_timing *tm)
{
    const pt_window w = window_of(b, l, tm);
    const pr_event v = psa_event_view(ev, l);
    pr_align(&w, &v, ev->t0 + ev->shift, ev->resid);
}

/* Whether channel ch is a net-charge segment of the event other than r, from the first `from` on. */
static int is_other_net(const psa_event *ev, int r, unsigned ch, int from)
{
    for (int k = from; k < ev->n_net; k++)
        if (k != r && ev->net[k] == ch)
            return 1;
    return 0;
}

unsigned psa_event_use(const psa_event *ev, int r, const psa_layout *l, int subtracted)
{
    const psa_segment *g = &l->seg[ev->net[r]];
    unsigned use = 0;
    for (uint32_t c = 0; c < g->n_mask; c++)
        use |= (unsigned)!is_other_net(ev, r, g->mask[c], subtracted) << c;
    return use;
}

int psa_event_touches(const psa_event *ev, int r, const psa_layout *l)
{
    const psa_segment *g = &l->seg[ev->net[r]];
    return psa_event_use(ev, r, l, 0) != (1u << g->n_mask) - 1;
}

int psa_event_query(const psa_event *ev, int r, const psa_layout *l, int subtracted, psa_batch *batch)
{
    return psa_batch_add(batch, l, ev->net[r], psa_event_use(ev, r, l, subtracted)) ? 0 : -1;
}

void psa_event_fill(const psa_event *ev, int r, const psa_layout *l, float *m)
{
    const psa_segment *g = &l->seg[ev->net[r]];
    pr_fill(ev->resid, g->mask, g->n_mask, l->window, ev->e[r], m);
}

void psa_event_fill_back(const psa_event *ev, int r, const det_basis *b, const psa_layout *l, float *m)
{
    const psa_segment *g = &l->seg[ev->net[r]];
    pr_fill_back(ev->resid, det_basis_point(b, ev->point[r]) + l->window_start, b->n_samples, g->mask, g->n_mask,
                 l->window, ev->e[r], m);
}

void psa_event_subtract(psa_event *ev, int r, const det_basis *b, const psa_layout *l)
{
    pr_subtract(ev->resid, det_basis_point(b, ev->point[r]) + l->window_start, b->n_samples, l->window, ev->e[r]);
}

void psa_event_replace(psa_event *ev, int r, uint32_t was, const det_basis *b, const psa_layout *l)
{
    pr_replace(ev->resid, det_basis_point(b, was) + l->window_start, det_basis_point(b, ev->point[r]) + l->window_start,
               b->n_samples, l->window, ev->e[r]);
}

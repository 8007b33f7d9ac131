/* psa_event.c: checks a data:crystal frame, finds its net-charge segments and start time, aligns it on the basis, feeds and follows its searches. */
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

unsigned psa_event_samples(const adf_frame *f)
{
    if (f->payload_size < ADF_CRYSTAL_FIXED)
        return 0;
    unsigned n = adf_get_u16(f->payload + 6);
    return n <= ADF_MAX_SAMPLES ? n : 0;
}

static psa_reject check(const adf_frame *f, psa_event *ev, const psa_timing *tm)
{
    const uint8_t *p = f->payload;
    if (f->payload_size < ADF_CRYSTAL_FIXED)
        return PSA_REJECT_PAYLOAD;
    unsigned nc = adf_get_u16(p + 4), ns = adf_get_u16(p + 6);
    if (nc != DET_CHANNELS)
        return PSA_REJECT_CHANNELS;
    if (ns < 1 || ns > ADF_MAX_SAMPLES || f->payload_size != adf_crystal_payload_size(nc, ns))
        return PSA_REJECT_PAYLOAD;
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

enum { MAX_WINDOW = 512 }; /* WindowLength's largest value */

/* Where the window's basis samples fall in the traces for a start at t
 * (trace samples): the two samples each one reads and the weight of the
 * second, linear, held at the ends.  Computed once per start and shared by
 * every channel. */
typedef struct taps {
    uint32_t lo[MAX_WINDOW], hi[MAX_WINDOW];
    double f[MAX_WINDOW];
    uint32_t first, last; /* the samples read lie in first..last */
} taps;

static pt_window window_of(const det_basis *b, const psa_layout *l, const psa_timing *tm)
{
    return (pt_window){ l->window_start, l->window, b->pretrigger, tm->ratio };
}

static void make_taps(taps *tp, const psa_event *ev, const det_basis *b, const psa_layout *l,
                      const psa_timing *tm, double t)
{
    pt_window w = window_of(b, l, tm);
    tp->first = ev->n_samples - 1u;
    tp->last = 0;
    for (uint32_t i = 0; i < l->window; i++) {
        pt_tap x = pt_tap_at(&w, ev->n_samples, t, i);
        tp->lo[i] = x.lo;
        tp->hi[i] = x.hi;
        tp->f[i] = x.f;
        tp->first = x.lo < tp->first ? x.lo : tp->first;
        tp->last = x.hi > tp->last ? x.hi : tp->last;
    }
}

/* Samples first..last of channel ch in keV, at v[first..last]: each sample
 * converted once, however many taps read it. */
static void span(const psa_event *ev, unsigned ch, uint32_t first, uint32_t last, float *v)
{
    for (uint32_t s = first; s <= last; s++)
        v[s] = psa_event_raw(ev, ch, s);
}

void psa_event_align(psa_event *ev, const det_basis *b, const psa_layout *l, const psa_timing *tm)
{
    taps tp;
    float v[ADF_MAX_SAMPLES];
    make_taps(&tp, ev, b, l, tm, ev->t0 + ev->shift);
    for (unsigned ch = 0; ch < DET_CHANNELS; ch++) {
        span(ev, ch, tp.first, tp.last, v);
        for (uint32_t i = 0; i < l->window; i++)
            ev->resid[(size_t)ch * l->window + i] = pt_lerp(v[tp.lo[i]], v[tp.hi[i]], tp.f[i]);
    }
}

static int is_other_net(const psa_event *ev, int r, unsigned ch)
{
    for (int k = 0; k < ev->n_net; k++)
        if (k != r && ev->net[k] == ch)
            return 1;
    return 0;
}

unsigned psa_event_use(const psa_event *ev, int r, const psa_layout *l)
{
    const psa_segment *g = &l->seg[ev->net[r]];
    unsigned use = 0;
    for (uint32_t c = 0; c < g->n_mask; c++)
        use |= (unsigned)!is_other_net(ev, r, g->mask[c]) << c;
    return use;
}

int psa_event_query(const psa_event *ev, int r, const psa_layout *l, psa_batch *batch)
{
    return psa_batch_add(batch, l, ev->net[r], psa_event_use(ev, r, l)) ? 0 : -1;
}

void psa_event_fill(const psa_event *ev, int r, const psa_layout *l, float *m)
{
    const psa_segment *g = &l->seg[ev->net[r]];
    for (uint32_t c = 0; c < g->n_mask; c++)
        for (uint32_t i = 0; i < l->window; i++)
            m[c * l->window + i] = pt_fill(ev->resid[(size_t)g->mask[c] * l->window + i], ev->e[r]);
}

enum { SHIFT_GROUP = 8 }; /* starts whose sums of squares are taken together */

/* The taps of up to SHIFT_GROUP starts, sample by sample (the starts of a
 * sample side by side). */
typedef struct group_taps {
    uint32_t lo[MAX_WINDOW][SHIFT_GROUP], hi[MAX_WINDOW][SHIFT_GROUP];
    double f[MAX_WINDOW][SHIFT_GROUP];
    uint32_t first, last;
} group_taps;

/* The m sums in registers (m a constant where this is inlined), each in the
 * order one start alone takes: channel by channel, each channel's sum over
 * the window added to the total in channel order (the GPU sums the channels
 * side by side and adds them in the same order: the same values). */
static inline __attribute__((always_inline)) void
sum_channels(const psa_event *ev, const group_taps *tp, int m, double *sum, const float *sig,
             const uint8_t *channels, int n, const det_basis *b, const psa_layout *l)
{
    double acc[SHIFT_GROUP] = { 0 }, inv = 1.0 / ev->e[0];
    float v[ADF_MAX_SAMPLES];
    for (int c = 0; c < n; c++) {
        const float *s = sig + (size_t)channels[c] * b->n_samples + l->window_start;
        double part[SHIFT_GROUP] = { 0 };
        span(ev, channels[c], tp->first, tp->last, v);
        for (uint32_t i = 0; i < l->window; i++)
#pragma GCC unroll 8
            for (int k = 0; k < m; k++)
                part[k] = pt_square(part[k], pt_lerp(v[tp->lo[i][k]], v[tp->hi[i][k]], tp->f[i][k]), inv, s[i]);
#pragma GCC unroll 8
        for (int k = 0; k < m; k++)
            acc[k] = PT_DADD(acc[k], part[k]);
    }
#pragma GCC unroll 8
    for (int k = 0; k < m; k++)
        sum[k] = acc[k];
}

/* Sums of squares between the traces started at t[0..m) (1 <= m <=
 * SHIFT_GROUP) and the point's signals on channels[]. */
static void squares(const psa_event *ev, const double *t, int m, double *sum, const float *sig,
                    const uint8_t *channels, int n, const det_basis *b, const psa_layout *l,
                    const psa_timing *tm)
{
    group_taps tp;
    taps one;
    tp.first = ev->n_samples - 1u;
    tp.last = 0;
    for (int k = 0; k < m; k++) {
        make_taps(&one, ev, b, l, tm, t[k]);
        tp.first = one.first < tp.first ? one.first : tp.first;
        tp.last = one.last > tp.last ? one.last : tp.last;
        for (uint32_t i = 0; i < l->window; i++) {
            tp.lo[i][k] = one.lo[i];
            tp.hi[i][k] = one.hi[i];
            tp.f[i][k] = one.f[i];
        }
    }
    switch (m) {
    case 1: sum_channels(ev, &tp, 1, sum, sig, channels, n, b, l); break;
    case 2: sum_channels(ev, &tp, 2, sum, sig, channels, n, b, l); break;
    case 3: sum_channels(ev, &tp, 3, sum, sig, channels, n, b, l); break;
    case 4: sum_channels(ev, &tp, 4, sum, sig, channels, n, b, l); break;
    case 5: sum_channels(ev, &tp, 5, sum, sig, channels, n, b, l); break;
    case 6: sum_channels(ev, &tp, 6, sum, sig, channels, n, b, l); break;
    case 7: sum_channels(ev, &tp, 7, sum, sig, channels, n, b, l); break;
    default: sum_channels(ev, &tp, SHIFT_GROUP, sum, sig, channels, n, b, l); break;
    }
}

/* The shifts own + k * step, k = -steps..steps, tried in order (a lower sum wins). */
static void try_shifts(const psa_event *ev, double own, int steps, const float *sig, const uint8_t *channels,
                       int n, const det_basis *b, const psa_layout *l, const psa_timing *tm,
                       double *best, double *best_sum)
{
    double t[SHIFT_GROUP], sum[SHIFT_GROUP];
    for (int k0 = -steps; k0 <= steps; k0 += SHIFT_GROUP) {
        int m = steps - k0 + 1 < SHIFT_GROUP ? steps - k0 + 1 : SHIFT_GROUP;
        for (int k = 0; k < m; k++)
            t[k] = ev->t0 + pt_shift(own, k0 + k, tm->shift_step);
        squares(ev, t, m, sum, sig, channels, n, b, l, tm);
        for (int k = 0; k < m; k++)
            if (sum[k] < *best_sum) {
                *best_sum = sum[k];
                *best = pt_shift(own, k0 + k, tm->shift_step);
            }
    }
}

double psa_event_refine(const psa_event *ev, uint32_t point, const det_basis *b,
                        const psa_layout *l, const psa_timing *tm)
{
    const psa_segment *g = &l->seg[ev->net[0]];
    uint8_t channels[PSA_MAX_MASK + 2];
    int n = 0;
    for (uint32_t c = 0; c < g->n_mask; c++)
        if (!is_other_net(ev, 0, g->mask[c]) && g->mask[c] != ev->net[0])
            channels[n++] = g->mask[c];
    channels[n++] = ev->net[0];
    if (ev->n_net == 1)
        channels[n++] = DET_CORE;
    const float *sig = det_basis_point(b, point);
    double own = isfinite(tm->point_edge[point]) ? tm->basis_edge - tm->point_edge[point] : 0;
    double best = own, best_sum = INFINITY;
    int steps = (int)floor(tm->shift_range / tm->shift_step + 1e-9);
    try_shifts(ev, own, steps, sig, channels, n, b, l, tm, &best, &best_sum);
    /* then halve the step twice around the best */
    for (double h = tm->shift_step / 2; h >= tm->shift_step / 4; h /= 2) {
        double centre = best, t[2] = { ev->t0 + centre - h, ev->t0 + centre + h }, sum[2];
        squares(ev, t, 2, sum, sig, channels, n, b, l, tm);
        for (int k = 0; k < 2; k++)
            if (sum[k] < best_sum) {
                best_sum = sum[k];
                best = pt_shift(centre, 2 * k - 1, h);
            }
    }
    return best;
}

void psa_event_subtract(psa_event *ev, int r, const det_basis *b, const psa_layout *l)
{
    const float *sig = det_basis_point(b, ev->point[r]);
    for (unsigned ch = 0; ch < DET_CHANNELS; ch++)
        for (uint32_t i = 0; i < l->window; i++)
            ev->resid[(size_t)ch * l->window + i] = pt_subtract(
                ev->resid[(size_t)ch * l->window + i], ev->e[r], sig[(size_t)ch * b->n_samples + l->window_start + i]);
}

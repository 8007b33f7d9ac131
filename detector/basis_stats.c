/* detector basis statistics: points per segment, core rise times, transients on the segments that were not hit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "basis.h"

/* Time (in samples, fractional) at which |x| first reaches level, by linear interpolation; -1 if never. */
static double crossing(const float *x, unsigned n, double level)
{
    for (unsigned i = 1; i < n; i++) {
        double a = fabs(x[i - 1]), b = fabs(x[i]);
        if (b >= level) return a >= level ? i - 1 : i - 1 + (level - a) / (b - a);
    }
    return -1;
}

double det_basis_core_rise(const det_basis *b, size_t i)
{
    const float *core = det_basis_point(b, i) + (size_t)(b->n_channels - 1) * b->n_samples;
    double full = fabs(core[b->n_samples - 1]);
    if (full < 0.5) return -1;
    double t10 = crossing(core, b->n_samples, 0.1 * full), t90 = crossing(core, b->n_samples, 0.9 * full);
    if (t10 < 0 || t90 < 0) return -1;
    return (t90 - t10) * b->sample_ns;
}

static double largest_transient(const det_basis *b, size_t i)
{
    const float *s = det_basis_point(b, i);
    double worst = 0;
    for (uint32_t ch = 0; ch + 1 < b->n_channels; ch++) {
        if ((int32_t)ch == b->segment[i]) continue;
        for (uint32_t k = 0; k < b->n_samples; k++) worst = fmax(worst, fabs(s[ch * b->n_samples + k]));
    }
    return worst;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile of sorted v[0..n-1] (nearest rank). */
static double quantile(const double *v, size_t n, double q)
{
    if (n == 0) return 0;
    size_t k = (size_t)ceil(q * n);
    return v[k == 0 ? 0 : k - 1];
}

int det_basis_stats_compute(const det_basis *b, det_basis_stats *s)
{
    memset(s, 0, sizeof *s);
    size_t n = b->n_points;
    double *rise = malloc(n * sizeof *rise), *tr = malloc(n * sizeof *tr);
    if (!rise || !tr) {
        free(rise);
        free(tr);
        return -1;
    }
    size_t nr = 0;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) tr[i] = largest_transient(b, i);
    for (size_t i = 0; i < n; i++) {
        if (b->segment[i] >= 0 && b->segment[i] < DET_SEGMENTS) s->per_segment[b->segment[i]]++;
        double r = det_basis_core_rise(b, i);
        if (r >= 0) rise[nr++] = r;
    }
    qsort(rise, nr, sizeof *rise, by_value);
    qsort(tr, n, sizeof *tr, by_value);
    s->points = (uint32_t)n;
    s->rise_counted = (uint32_t)nr;
    s->rise_min = nr ? rise[0] : 0;
    s->rise_p50 = quantile(rise, nr, 0.5);
    s->rise_p90 = quantile(rise, nr, 0.9);
    s->rise_p99 = quantile(rise, nr, 0.99);
    s->rise_max = nr ? rise[nr - 1] : 0;
    s->transient_p50 = quantile(tr, n, 0.5);
    s->transient_p90 = quantile(tr, n, 0.9);
    s->transient_p99 = quantile(tr, n, 0.99);
    s->transient_max = n ? tr[n - 1] : 0;
    free(rise);
    free(tr);
    return 0;
}

void det_basis_stats_print(const det_basis_stats *s, FILE *out)
{
    fprintf(out, "points: %u\n", s->points);
    fprintf(out, "points per segment (rows: sectors A-F, columns: rings 1-6 front to back):\n");
    for (int sec = 0; sec < DET_SECTORS; sec++) {
        fprintf(out, "  %c", 'A' + sec);
        for (int r = 0; r < DET_RINGS; r++) fprintf(out, " %6u", s->per_segment[DET_RINGS * sec + r]);
        fputc('\n', out);
    }
    fprintf(out, "points per ring (min..max over sectors):");
    for (int r = 0; r < DET_RINGS; r++) {
        uint32_t lo = UINT32_MAX, hi = 0;
        for (int sec = 0; sec < DET_SECTORS; sec++) {
            uint32_t v = s->per_segment[DET_RINGS * sec + r];
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        fprintf(out, " %u..%u", lo, hi);
    }
    fputc('\n', out);
    fprintf(out, "core rise time 10-90 %% (ns, %u points): min %.0f, median %.0f, p90 %.0f, p99 %.0f, max %.0f\n",
            s->rise_counted, s->rise_min, s->rise_p50, s->rise_p90, s->rise_p99, s->rise_max);
    fprintf(out, "largest transient on a non-hit segment (fraction of the full charge): median %.3f, p90 %.3f, "
                 "p99 %.3f, max %.3f\n",
            s->transient_p50, s->transient_p90, s->transient_p99, s->transient_max);
}

/* tracker_output.c: turns the engine's gammas (point indices in interaction order) into data:tracked records: energies, positions, crystals, Doppler. */
#include <math.h>
#include <string.h>

#include "tracker_output.h"

static double doppler(const tracker_doppler *d, const tr_point *first, double e)
{
    if (d->beta == 0)
        return e;
    double r = sqrt((double)first->x * first->x + (double)first->y * first->y +
                    (double)first->z * first->z);
    double c = r > 0 ? (first->x * d->beam[0] + first->y * d->beam[1] + first->z * d->beam[2]) / r : 0;
    return e * (1 - d->beta * c) / sqrt(1 - d->beta * d->beta);
}

static void fill_gamma(const tr_point *pts, const uint16_t *crystal,
                       const tr_gamma *g, const tracker_doppler *d, adf_gamma *out)
{
    double e = 0;
    uint16_t seen[TR_MAX_CLUSTER];
    int n_crystals = 0;
    for (int k = 0; k < g->n; k++) {
        e += pts[g->pt[k]].e;
        uint16_t id = crystal[g->pt[k]];
        int known = 0;
        for (int j = 0; j < n_crystals; j++)
            known |= seen[j] == id;
        if (!known)
            seen[n_crystals++] = id;
    }
    const tr_point *p1 = &pts[g->pt[0]], *p2 = &pts[g->pt[g->n > 1 ? 1 : 0]];
    memset(out, 0, sizeof *out);
    out->e = (float)e;
    out->e_dc = (float)doppler(d, p1, e);
    out->fom = (float)exp(g->log_fom);
    out->x1 = p1->x;
    out->y1 = p1->y;
    out->z1 = p1->z;
    out->x2 = p2->x;
    out->y2 = p2->y;
    out->z2 = p2->z;
    out->n_points = g->n;
    out->n_crystals = (uint16_t)n_crystals;
    out->first_crystal = crystal[g->pt[0]];
    out->flags = (uint16_t)((g->flags & TR_GAMMA_SINGLE ? ADF_TRACKED_SINGLE : 0) |
                            (g->flags & TR_GAMMA_PAIR ? ADF_TRACKED_PAIR : 0));
}

unsigned tracker_output_gammas(const tr_event_info *info)
{
    return info->n_gammas > ADF_TRACKED_MAX ? ADF_TRACKED_MAX : info->n_gammas;
}

void tracker_output_event(const tracker_events *ev, uint32_t e, const tr_gamma *gammas, const tr_event_info *info,
                          const tracker_doppler *d, adf_tracked *t)
{
    uint32_t first = ev->first[e];
    unsigned n = tracker_output_gammas(info);
    t->status = n < info->n_gammas ? TRACKER_STATUS_TRUNCATED : ev->status[e];
    t->beta = (float)d->beta;
    t->n_gammas = (uint16_t)n;
    for (unsigned g = 0; g < n; g++)
        fill_gamma(&ev->points[first], &ev->crystal[first], &gammas[first + g], d, &t->gamma[g]);
}

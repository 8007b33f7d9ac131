/* source.c: draws the γ rays of one event from the configured source (model in source.h). */
#include "source.h"

#include <math.h>

void sim_source_normalise(sim_source *s)
{
    double sum = 0;
    for (int i = 0; i < s->n; i++)
        sum += s->cumulative[i];
    double run = 0;
    for (int i = 0; i < s->n; i++) {
        run += s->cumulative[i] / sum;
        s->cumulative[i] = run;
    }
    if (s->n > 0)
        s->cumulative[s->n - 1] = 1.0;
}

/* Direction and lab energy of a γ of energy e0 in the emitter's frame. */
static void emit(const sim_source *s, sim_rng *r, double e0, sim_gamma *g)
{
    double beta = s->beta, gamma = 1 / sqrt(1 - beta * beta), c;
    g->e0 = e0;
    if (s->pencil) {
        for (int k = 0; k < 3; k++)
            g->dir[k] = s->direction[k];
        c = s->direction[2];
    } else {
        double c_rest = 2 * sim_uniform(r) - 1, phi = 2 * M_PI * sim_uniform(r);
        c = (c_rest + beta) / (1 + beta * c_rest);
        double sn = sqrt(fmax(0, 1 - c * c));
        g->dir[0] = sn * cos(phi);
        g->dir[1] = sn * sin(phi);
        g->dir[2] = c;
    }
    g->e = e0 / (gamma * (1 - beta * c));
}

/* The first of n cumulative probabilities above a uniform draw. */
static int pick(const double *cumulative, int n, sim_rng *r)
{
    double u = sim_uniform(r);
    int i = 0;
    while (i < n - 1 && u >= cumulative[i])
        i++;
    return i;
}

/* One decay: the level it feeds, then the transitions down to the ground
 * state, each a γ ray unless converted (decay.h). */
static int decay(const sim_source *s, sim_rng *r, sim_gamma *out)
{
    const sim_decay *d = &s->decay;
    int level = pick(d->feeding, d->n_levels, r), m = 0;
    while (d->count[level] > 0 && m < SIM_MAX_MULTIPLICITY) {
        int j = d->first[level] + pick(d->branch + d->first[level], d->count[level], r);
        const sim_transition *t = &d->scheme->t[d->out[j]];
        if (sim_uniform(r) * (1 + t->alpha) < 1)
            emit(s, r, t->e, &out[m++]);
        level = d->to[d->out[j]];
    }
    return m;
}

int sim_source_draw(const sim_source *s, sim_rng *r, sim_gamma *out)
{
    switch (s->kind) {
    case SIM_LINES:
        emit(s, r, s->energy[pick(s->cumulative, s->n, r)], &out[0]);
        return 1;
    case SIM_CASCADE:
        for (int i = 0; i < s->n; i++)
            emit(s, r, s->energy[i], &out[i]);
        return s->n;
    case SIM_CONTINUUM:
        for (int i = 0; i < s->multiplicity; i++)
            emit(s, r, s->e_min + (s->e_max - s->e_min) * sim_uniform(r), &out[i]);
        return s->multiplicity;
    case SIM_DECAY:
        return decay(s, r, out);
    }
    return 0;
}

/* decay.c: the decay schemes of the calibration sources (ENSDF evaluations) and their preparation into draws. */
#include "decay.h"

#include <stddef.h>
#include <strings.h>

/*
 * {initial level, final level, γ energy (keV), γ rays per 100 decays, alpha}.
 * Lines weaker than about 0.3 per 100 decays are left out, except where they
 * complete a level's balance; alpha below 0.001 is taken as 0.  Level
 * energies only group the transitions: a γ ray's energy is its own column.
 */

/* 60Co (β-, 5.27 a) -> 60Ni: ENSDF, E. Browne and J. K. Tuli, Nucl. Data Sheets 114, 1849 (2013).
 * 99.88 % of the decays feed the 4+ level at 2505.75 keV: 1173.228 and 1332.492 in coincidence. */
static const sim_transition co60[] = {
    {2505.753, 1332.514, 1173.228, 99.85, 0},
    {1332.514, 0, 1332.492, 99.9826, 0},
    {2505.753, 2158.632, 347.14, 0.0075, 0},
    {2158.632, 1332.514, 826.10, 0.0076, 0},
    {2158.632, 0, 2158.57, 0.0012, 0},
};

/* 137Cs (β-, 30.08 a) -> 137Ba: ENSDF, E. Browne and J. K. Tuli, Nucl. Data Sheets 108, 2173 (2007).
 * 94.7 % feed the 661.66 keV isomer (2.55 min: its γ ray is taken as prompt), 5.3 % the ground state. */
static const sim_transition cs137[] = {
    {661.659, 0, 661.657, 85.10, 0.1124},
};

/* 133Ba (EC, 10.55 a) -> 133Cs: ENSDF, Yu. Khazov, A. Rodionov and F. G. Kondev, Nucl. Data Sheets 112, 855 (2011).
 * EC feeds the 437.01 (86 %) and 383.85 keV (14 %) levels; the 81 keV line is converted more than not. */
static const sim_transition ba133[] = {
    {437.0113, 80.9979, 356.0129, 62.05, 0.0253},   {437.0113, 160.6121, 276.3989, 7.16, 0.0570},
    {437.0113, 383.8491, 53.1622, 2.14, 6.0},       {383.8491, 80.9979, 302.8508, 18.34, 0.0434},
    {383.8491, 0, 383.8485, 8.94, 0.0220},          {383.8491, 160.6121, 223.2368, 0.453, 0.0727},
    {160.6121, 80.9979, 79.6142, 2.65, 1.6},        {160.6121, 0, 160.6121, 0.638, 0.298},
    {80.9979, 0, 80.9979, 33.31, 1.666},
};

/* 152Eu (EC and β+ 72.1 %, β- 27.9 %; 13.5 a) -> 152Sm and 152Gd: ENSDF, M. J. Martin, Nucl. Data
 * Sheets 114, 1497 (2013).  152Sm levels first, then 152Gd's (344.28 keV and up, all of them distinct
 * from 152Sm's). */
static const sim_transition eu152[] = {
    {121.7817, 0, 121.7817, 28.53, 1.14},           {366.4786, 121.7817, 244.6974, 7.55, 0.107},
    {810.453, 121.7817, 688.670, 0.856, 0.0036},    {810.453, 0, 810.451, 0.317, 0.0020},
    {1041.12, 121.7817, 919.337, 0.419, 0.0030},    {1085.836, 121.7817, 964.057, 14.51, 0.0021},
    {1085.836, 0, 1085.837, 10.11, 0.0019},         {1233.859, 121.7817, 1112.076, 13.67, 0.0016},
    {1233.859, 366.4786, 867.380, 4.23, 0.0022},    {1529.803, 121.7817, 1408.013, 20.87, 0},
    {1529.803, 1085.836, 443.9606, 2.827, 0.0047},  {1579.43, 366.4786, 1212.948, 1.415, 0.0014},
    {1579.43, 121.7817, 1457.643, 0.497, 0.0011},   {344.2785, 0, 344.2785, 26.59, 0.0399},
    {755.3958, 344.2785, 411.1165, 2.237, 0.0239},  {1123.185, 344.2785, 778.9045, 12.93, 0.0024},
    {1434.02, 344.2785, 1089.737, 1.734, 0.0017},   {1643.42, 344.2785, 1299.142, 1.633, 0.0012},
};

/* 56Co (EC and β+, 77.2 d) -> 56Fe: ENSDF, H. Junde, H. Su and Y. Dong, Nucl. Data Sheets 112, 1513 (2011).
 * γ rays up to 3.45 MeV: the high-energy calibration (pair production in the germanium). */
static const sim_transition co56[] = {
    {846.77, 0, 846.770, 99.9399, 0},            {2085.10, 846.77, 1238.288, 66.41, 0},
    {3122.92, 2085.10, 1037.843, 14.03, 0},      {3856.43, 2085.10, 1771.357, 15.45, 0},
    {3445.28, 846.77, 2598.500, 16.96, 0},       {3445.28, 2085.10, 1360.212, 4.283, 0},
    {4100.40, 846.77, 3253.503, 7.923, 0},       {4100.40, 2085.10, 2015.215, 3.017, 0},
    {4100.40, 3122.92, 977.372, 1.421, 0},       {4119.90, 2085.10, 2034.791, 7.741, 0},
    {4119.90, 846.77, 3272.990, 1.856, 0},       {4048.90, 846.77, 3202.029, 3.209, 0},
    {4048.90, 2085.10, 1963.741, 0.707, 0},      {3856.43, 846.77, 3009.645, 1.036, 0},
    {4298.00, 846.77, 3451.232, 0.943, 0},       {4298.00, 3122.92, 1175.101, 2.249, 0},
    {2657.56, 846.77, 1810.757, 0.640, 0},
};

#define SCHEME(name, alias, daughter, t) {name, alias, daughter, (int)(sizeof t / sizeof t[0]), t}

const sim_scheme sim_schemes[] = {
    SCHEME("60Co", "co60", "60Ni", co60),
    SCHEME("137Cs", "cs137", "137Ba", cs137),
    SCHEME("133Ba", "ba133", "133Cs", ba133),
    SCHEME("152Eu", "eu152", "152Sm and 152Gd", eu152),
    SCHEME("56Co", "co56", "56Fe", co56),
    {NULL, NULL, NULL, 0, NULL},
};

const sim_scheme *sim_scheme_find(const char *name)
{
    for (const sim_scheme *s = sim_schemes; s->name; s++)
        if (strcasecmp(name, s->name) == 0 || strcasecmp(name, s->alias) == 0)
            return s;
    return NULL;
}

/* The index of level e in d (added in ascending order when new), or -1 when full. */
static int level_of(sim_decay *d, double e)
{
    int i = 0;
    while (i < d->n_levels && d->level[i] < e)
        i++;
    if (i < d->n_levels && d->level[i] == e)
        return i;
    if (d->n_levels == SIM_DECAY_LEVELS)
        return -1;
    for (int k = d->n_levels; k > i; k--)
        d->level[k] = d->level[k - 1];
    d->level[i] = e;
    d->n_levels++;
    return i;
}

static double strength(const sim_transition *t) { return t->intensity * (1 + t->alpha); }

/* Each level's transitions grouped in out[], with cumulative branchings. */
static void group(sim_decay *d, const sim_scheme *s, const int *from)
{
    int k = 0;
    for (int l = 0; l < d->n_levels; l++) {
        double sum = 0;
        d->first[l] = k;
        for (int i = 0; i < s->n; i++)
            if (from[i] == l) {
                d->out[k++] = i;
                sum += strength(&s->t[i]);
            }
        d->count[l] = k - d->first[l];
        double run = 0;
        for (int j = d->first[l]; j < k; j++) {
            run += strength(&s->t[d->out[j]]) / sum;
            d->branch[j] = run;
        }
        if (k > d->first[l])
            d->branch[k - 1] = 1.0;
    }
}

/* Feeding = out - in per level (>= 0); the ground state takes what is left of 100. */
static void feed(sim_decay *d, const sim_scheme *s, const int *from)
{
    double f[SIM_DECAY_LEVELS] = {0}, total = 0;
    for (int i = 0; i < s->n; i++) {
        f[from[i]] += strength(&s->t[i]);
        f[d->to[i]] -= strength(&s->t[i]);
    }
    for (int l = 1; l < d->n_levels; l++)
        total += f[l] = f[l] > 0 ? f[l] : 0;
    f[0] = total < 100 ? 100 - total : 0;
    total = total < 100 ? 100 : total;
    double run = 0;
    for (int l = 0; l < d->n_levels; l++) {
        run += f[l] / total;
        d->feeding[l] = run;
    }
    d->feeding[d->n_levels - 1] = 1.0;
}

int sim_decay_prepare(sim_decay *d, const sim_scheme *s)
{
    int from[SIM_DECAY_TRANSITIONS];
    *d = (sim_decay){.scheme = s};
    if (s->n > SIM_DECAY_TRANSITIONS || level_of(d, 0) < 0)
        return -1;
    for (int i = 0; i < s->n; i++)
        if (!(s->t[i].to < s->t[i].from) || level_of(d, s->t[i].from) < 0 || level_of(d, s->t[i].to) < 0)
            return -1;
    for (int i = 0; i < s->n; i++) {
        from[i] = level_of(d, s->t[i].from);
        d->to[i] = level_of(d, s->t[i].to);
    }
    group(d, s, from);
    feed(d, s, from);
    return 0;
}

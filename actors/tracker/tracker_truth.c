/* tracker_truth.c: smears simulated interactions with the position-resolution model and packs them into data:psa frames per crystal. */
#include <math.h>
#include <string.h>

#include "tracker_truth.h"

enum { SMEAR_PURPOSE = 0x7472616B }; /* "trak": a stream apart from the generator's */

void tracker_smearer_start(tracker_smearer *r, const tracker_smear *s, uint32_t event)
{
    r->s = s;
    sim_rng_seed(&r->rng, s->seed, event, SMEAR_PURPOSE);
}

void tracker_smear_hit(tracker_smearer *r, const adf_truth_hit *h, adf_psa_hit *out)
{
    double e = h->e > 0 ? h->e : 0;
    double sigma = e > 0 ? (r->s->a + r->s->b * sqrt(100.0 / e)) / TRACKER_FWHM_PER_SIGMA : 0;
    memset(out, 0, sizeof *out);
    out->segment = (int16_t)h->segment;
    out->crystal_id = (int16_t)h->crystal_id;
    out->x = (float)(h->pos[0] + sigma * sim_gauss(&r->rng));
    out->y = (float)(h->pos[1] + sigma * sim_gauss(&r->rng));
    out->z = (float)(h->pos[2] + sigma * sim_gauss(&r->rng));
    out->e = h->e;
    out->t = h->t;
}

/* Member of the crystal of hit i: every hit of that crystal from i on. */
static int fill_member(const adf_truth *t, tracker_truth_scratch *x, unsigned i)
{
    adf_psa *p = &x->psa;
    uint16_t crystal = t->hit[i].crystal_id;
    memset(p, 0, offsetof(adf_psa, hit));
    p->crystal_id = crystal;
    for (unsigned j = i; j < t->n_interactions; j++) {
        if (x->done[j] || t->hit[j].crystal_id != crystal)
            continue;
        if (p->n_hits == ADF_PSA_MAX_HITS)
            return ADF_E_LIMIT;
        p->hit[p->n_hits++] = x->hit[j];
        p->e0 += x->hit[j].e;
        x->done[j] = 1;
    }
    p->e1 = p->e0;
    return ADF_OK;
}

int tracker_truth_write_psa(adf_writer *w, uint32_t event, uint64_t timestamp, const adf_truth *t,
                            const tracker_smear *s, tracker_truth_scratch *x)
{
    tracker_smearer r;
    int rc;
    tracker_smearer_start(&r, s, event);
    for (unsigned i = 0; i < t->n_interactions; i++)
        tracker_smear_hit(&r, &t->hit[i], &x->hit[i]);
    /* a first pass finds a crystal with too many hits before anything is written */
    for (int pass = 0; pass < 2; pass++) {
        memset(x->done, 0, t->n_interactions);
        if (pass == 1)
            adf_begin(w, ADF_ID_EVENT_DATA_PSA, event, timestamp);
        for (unsigned i = 0; i < t->n_interactions; i++) {
            if (x->done[i])
                continue;
            if ((rc = fill_member(t, x, i)) != ADF_OK)
                return rc;
            if (pass == 1)
                adf_psa_write(w, event, timestamp, &x->psa); /* a failure stays in w->status */
        }
    }
    return adf_end(w);
}

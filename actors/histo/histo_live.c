/* histo_live.c: process_spectra of histo.so and histo_sink.so: every 1D histogram's counts so far, a family summed, for the emulator's live page (narval.h). */
#include <stdio.h>
#include <stdlib.h>

#include "histo_actor.h"
#include "narval.h"

/*
 * The host asks between two blocks, at most once a second and only while a
 * monitor runs (emulator/live.h), so a GPU histogrammer copies its counts
 * back (histo_engine_counts) for it at most once a second.  A
 * family (scope crystal or segment) goes out as one spectrum, the sum of
 * its instances, as the plots draw NAME; matrices are left out: the page
 * draws spectra.
 */

/* The sum of declaration d's instances, with their under- and overflows. */
static void sum_family(const histo_decl *d, const uint64_t *counts, unsigned long long *sum,
                       unsigned long long *under, unsigned long long *over)
{
    uint32_t bins = d->g.ax[0].bins;
    *under = *over = 0;
    for (uint32_t b = 0; b < bins; b++)
        sum[b] = 0;
    for (uint32_t i = 0; i < d->g.instances; i++) {
        const uint64_t *h = counts + d->g.offset + (uint64_t)i * d->g.slots;
        for (uint32_t b = 0; b < bins; b++)
            sum[b] += h[b];
        *under += h[bins + HISTO_UNDER];
        *over += h[bins + HISTO_OVER];
    }
}

static void describe(const histo_decl *d, char *title, size_t len)
{
    static const char *const of[] = { [HISTO_SUM] = "", [HISTO_PER_CRYSTAL] = "crystals",
                                      [HISTO_PER_SEGMENT] = "segments" };
    const char *quantity = histo_quantities[d->q].name;
    if (d->scope == HISTO_SUM)
        snprintf(title, len, "%s", quantity);
    else
        snprintf(title, len, "%s, sum of %u %s", quantity, d->g.instances, of[d->scope]);
}

void process_spectra(void *algo_data, narval_spectrum_put_fn *put, void *ctx, unsigned int *error_code)
{
    const histo_spec *s;
    const uint64_t *counts;
    if ((*error_code = histo_actor_counts(algo_data, &s, &counts)) != 0)
        return;
    for (size_t i = 0; i < s->n_decl; i++) {
        const histo_decl *d = &s->decl[i];
        if (d->g.dims != 1)
            continue;
        unsigned long long *sum = malloc(d->g.ax[0].bins * sizeof *sum);
        if (!sum) {
            *error_code = NARVAL_E_NOMEM;
            return;
        }
        char title[96];
        narval_spectrum out = { .name = d->name, .title = title, .x_label = histo_quantities[d->q].label[0],
                                .bins = d->g.ax[0].bins, .lo = d->g.ax[0].lo, .hi = d->g.ax[0].hi, .counts = sum };
        describe(d, title, sizeof title);
        sum_family(d, counts, sum, &out.underflow, &out.overflow);
        put(ctx, &out);
        free(sum);
    }
}

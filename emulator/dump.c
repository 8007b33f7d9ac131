/* dump.c: `narwhal dump`: an ADF file as one line per frame, sub-frames indented, known payloads summarised. */
#include "dump.h"
#include "adf.h"
#include "emu.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct dumper {
    FILE *out;
    unsigned long long frames;      /* all frames printed, sub-frames included */
    unsigned long long top;         /* top-level frames printed */
    unsigned long long undecodable; /* known payloads that did not decode */
    unsigned long long max_frames;  /* top-level frames to print; 0: all */
    union {                         /* decoding scratch: adf_crystal and adf_truth are about 40 KiB */
        adf_crystal crystal;
        adf_psa psa;
        adf_tracked tracked;
        adf_truth truth;
        adf_eof eof;
    } *scratch;
} dumper;

static void summarise_crystal(dumper *d, const adf_frame *f)
{
    adf_crystal *c = &d->scratch->crystal;
    int rc = adf_crystal_read(f, c);
    if (rc != ADF_OK) {
        fprintf(d->out, "  undecodable payload: %s", adf_strerror(rc));
        d->undecodable++;
        return;
    }
    fprintf(d->out, "  crystal %u, %u channels x %u samples, core %.2f keV", c->crystal_id, c->n_channels,
            c->n_samples, (double)c->energy[c->n_channels - 1]);
}

static void summarise_psa(dumper *d, const adf_frame *f)
{
    adf_psa *p = &d->scratch->psa;
    int rc = adf_psa_read(f, p);
    if (rc != ADF_OK) {
        fprintf(d->out, "  undecodable payload: %s", adf_strerror(rc));
        d->undecodable++;
        return;
    }
    fprintf(d->out, "  crystal %u, core %.2f keV, %u hit%s", p->crystal_id, (double)p->e0, p->n_hits,
            p->n_hits == 1 ? "" : "s");
    for (unsigned h = 0; h < p->n_hits; h++) {
        const adf_psa_hit *hit = &p->hit[h];
        fprintf(d->out, "%s seg %d (%.1f, %.1f, %.1f) mm %.2f keV", h ? ";" : ":", hit->segment, (double)hit->x,
                (double)hit->y, (double)hit->z, (double)hit->e);
    }
}

static void summarise_tracked(dumper *d, const adf_frame *f)
{
    adf_tracked *t = &d->scratch->tracked;
    int rc = adf_tracked_read(f, t);
    if (rc != ADF_OK) {
        fprintf(d->out, "  undecodable payload: %s", adf_strerror(rc));
        d->undecodable++;
        return;
    }
    fprintf(d->out, "  %u gamma%s", t->n_gammas, t->n_gammas == 1 ? "" : "s");
    for (unsigned g = 0; g < t->n_gammas; g++)
        fprintf(d->out, "%s %.2f keV", g ? "," : ":", (double)(t->beta != 0 ? t->gamma[g].e_dc : t->gamma[g].e));
    if (t->beta != 0)
        fprintf(d->out, " (Doppler-corrected, beta %.4f)", (double)t->beta);
}

static unsigned count_absorbed(const adf_truth *t)
{
    unsigned n = 0;
    for (unsigned g = 0; g < t->n_gammas; g++)
        n += (t->gamma[g].flags & ADF_TRUTH_ABSORBED) != 0;
    return n;
}

/* One γ: lab energy (with the emitted one when Doppler shifted), its
 * interactions and what became of it. */
static void print_truth_gamma(dumper *d, const adf_truth *t, const adf_truth_gamma *g)
{
    fprintf(d->out, " %.2f keV", (double)g->e);
    if (t->beta != 0)
        fprintf(d->out, " (%.2f emitted)", (double)g->e0);
    fprintf(d->out, " %u interaction%s", g->n_interactions, g->n_interactions == 1 ? "" : "s");
    if (g->flags & ADF_TRUTH_ABSORBED)
        fputs(" absorbed", d->out);
    if (g->flags & ADF_TRUTH_MISSED)
        fputs(" missed", d->out);
    if (g->flags & ADF_TRUTH_PAIRED)
        fputs(" pair", d->out);
}

static void summarise_truth(dumper *d, const adf_frame *f)
{
    adf_truth *t = &d->scratch->truth;
    int rc = adf_truth_read(f, t);
    if (rc != ADF_OK) {
        fprintf(d->out, "  undecodable payload: %s", adf_strerror(rc));
        d->undecodable++;
        return;
    }
    fprintf(d->out, "  %u gamma%s, %u interaction%s, %u absorbed", t->n_gammas, t->n_gammas == 1 ? "" : "s",
            t->n_interactions, t->n_interactions == 1 ? "" : "s", count_absorbed(t));
    for (unsigned g = 0; g < t->n_gammas; g++) {
        fputs(g ? ";" : ":", d->out);
        print_truth_gamma(d, t, &t->gamma[g]);
    }
    if (t->beta != 0)
        fprintf(d->out, " (beta %.4f)", (double)t->beta);
}

static void summarise_eof(dumper *d, const adf_frame *f)
{
    adf_eof *e = &d->scratch->eof;
    int rc = adf_eof_read(f, e);
    if (rc != ADF_OK) {
        fprintf(d->out, "  undecodable payload: %s", adf_strerror(rc));
        d->undecodable++;
        return;
    }
    fprintf(d->out, "  end of stream: %u frames, %llu bytes before it", e->frames, (unsigned long long)e->bytes);
}

static void summarise(dumper *d, const adf_frame *f)
{
    switch (f->key.id) {
    case ADF_ID_NW_CRYSTAL: summarise_crystal(d, f); break;
    case ADF_ID_DATA_PSA: summarise_psa(d, f); break;
    case ADF_ID_NW_TRACKED: summarise_tracked(d, f); break;
    case ADF_ID_NW_TRUTH: summarise_truth(d, f); break;
    case ADF_ID_META_EOF: summarise_eof(d, f); break;
    default: break;
    }
}

static void print_frame(dumper *d, const adf_frame *f, uint64_t base)
{
    const char *name = adf_id_name(f->key.id);
    fprintf(d->out, "%*s%-12llu %10u  0x%08x  %-20s %10u %15llu", 2 * f->depth, "",
            (unsigned long long)(base + f->offset), f->key.length, f->key.id, name ? name : "?", f->key.event,
            (unsigned long long)f->key.timestamp);
    if (adf_id_is_composite(f->key.id))
        fprintf(d->out, "  composite");
    else
        summarise(d, f);
    fputc('\n', d->out);
    d->frames++;
}

/* A frame and, below it, its sub-frames; the file reader has already checked
 * every composite, so the sub-iterators cannot fail. */
static void print_tree(dumper *d, const adf_frame *f, uint64_t base)
{
    print_frame(d, f, base);
    if (!adf_id_is_composite(f->key.id))
        return;
    adf_iter sub;
    adf_frame child;
    if (adf_iter_sub(&sub, f) != ADF_OK)
        return;
    while (adf_iter_next(&sub, &child) > 0)
        print_tree(d, &child, base);
}

/* Prints the frames of one chunk; returns 1 when max_frames is reached. */
static int print_chunk(void *ctx, const uint8_t *buf, size_t used, uint64_t base)
{
    dumper *d = ctx;
    adf_iter it;
    adf_frame f;
    adf_iter_init(&it, buf, used);
    while (adf_iter_next(&it, &f) > 0) {
        if (d->max_frames && d->top >= d->max_frames)
            return 1;
        print_tree(d, &f, base);
        d->top++;
    }
    return d->max_frames && d->top >= d->max_frames;
}

int emu_dump(const char *path, unsigned long long max_frames, FILE *out, char *err, size_t errlen)
{
    dumper d = {.out = out, .max_frames = max_frames, .scratch = malloc(sizeof *d.scratch)};
    if (!d.scratch)
        return emu_fail(err, errlen, EMU_E_RUN, "%s: out of memory", path);
    if (access(path, R_OK) != 0) {
        int rc = emu_fail(err, errlen, EMU_E_TOPOLOGY, "%s: cannot open: %s", path, strerror(errno));
        free(d.scratch);
        return rc;
    }
    fprintf(out, "%-12s %10s  %-10s  %-20s %10s %15s  %s\n", "offset", "length", "id", "name", "event",
            "timestamp", "summary");
    int rc = adf_file_scan(path, EMU_MAX_BUFFER, print_chunk, &d, err, errlen) == ADF_OK ? EMU_OK : EMU_E_RUN;
    free(d.scratch);
    fprintf(out, "%llu frames (%llu top-level)\n", d.frames, d.top);
    if (rc == EMU_OK && d.undecodable)
        rc = emu_fail(err, errlen, EMU_E_RUN, "%s: %llu frame(s) of a known type with a payload that does not decode",
                      path, d.undecodable);
    return rc;
}

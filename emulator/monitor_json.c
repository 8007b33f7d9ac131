/* monitor_json.c: the monitor's JSON documents (status, actors, spectra, one spectrum), read from the run's live state. */
#include "monitor.h"
#include "progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

static void put_number(FILE *out, double v)
{
    if (isfinite(v))
        fprintf(out, "%.6g", v);
    else
        fputs("null", out);
}

/* A number, or null where the figure is unknown (negative). */
static void put_known(FILE *out, double v)
{
    if (v < 0)
        fputs("null", out);
    else
        put_number(out, v);
}

static void put_name(FILE *out, const emu_live *l, long k)
{
    if (k < 0)
        fputs("null", out);
    else
        put_string(out, l->c->topology->actors[k].name);
}

/* A document written by fn into a memory stream. */
static char *document(void (*fn)(FILE *, emu_live *, const void *), emu_live *l, const void *arg)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        return NULL;
    pthread_mutex_lock(&l->lock);
    fn(out, l, arg);
    pthread_mutex_unlock(&l->lock);
    int bad = ferror(out);
    if (fclose(out) != 0 || bad) {
        free(text);
        return NULL;
    }
    return text;
}

static void put_rings(FILE *out, const emu_live *l)
{
    const emu_live_sample *s = &l->last;
    fputs("[", out);
    for (size_t i = 0; i < s->n_rings; i++) {
        const emu_live_ring *r = &s->ring[i];
        fprintf(out, "%s{\"from\":", i ? "," : "");
        put_name(out, l, (long)r->writer);
        fputs(",\"to\":", out);
        put_name(out, l, (long)r->reader);
        fprintf(out, ",\"input\":%zu,\"used\":%u,\"depth\":%u}", r->input, r->used, r->depth);
    }
    fputs("]", out);
}

static void write_status(FILE *out, emu_live *l, const void *unused)
{
    emu_figures f;
    emu_figures_of(l, &l->prev, &l->last, &f);
    fputs("{\"state\":", out);
    put_string(out, emu_state_name((enum emu_state)atomic_load(&l->state)));
    fputs(",\"topology\":", out);
    put_string(out, l->c->topology->path);
    fprintf(out, ",\"mode\":\"%s\",\"ring\":%u,\"elapsed\":", l->ring_depth ? "pipelined" : "sequential",
            l->ring_depth);
    put_number(out, f.elapsed);
    fprintf(out, ",\"crystal_events\":%llu,\"crystal_rate\":", f.crystals);
    put_number(out, f.crystal_rate);
    fprintf(out, ",\"events\":%llu,\"event_rate\":", f.events);
    put_number(out, f.event_rate);
    fputs(",\"event_actor\":", out);
    put_name(out, l, f.event_actor);
    fputs(",\"busiest\":", out);
    put_name(out, l, f.busiest);
    fputs(",\"busiest_share\":", out);
    put_number(out, f.busiest_share);
    fputs(",\"fraction\":", out);
    put_known(out, f.fraction);
    fputs(",\"eta\":", out);
    put_known(out, f.eta);
    char line[512];
    emu_progress_format(line, sizeof line, l, &f, &l->last);
    fputs(",\"line\":", out);
    put_string(out, line);
    fputs(",\"rings\":", out);
    put_rings(out, l);
    fputs("}\n", out);
}

static const char *role_name(enum emu_role r)
{
    return r == EMU_PRODUCER ? "producer" : r == EMU_CONSUMER ? "consumer" : "filter";
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void write_actor(FILE *out, const emu_live *l, size_t k)
{
    const emu_live_counts *c = &l->last.actor[k], *p = &l->prev.actor[k];
    double window = l->last.t - l->prev.t;
    fputs("{\"name\":", out);
    put_name(out, l, (long)k);
    fputs(",\"library\":", out);
    put_string(out, base_name(l->c->libraries[l->c->library_of[k]].path));
    fprintf(out, ",\"role\":\"%s\",\"blocks\":%llu,\"frames_in\":%llu,\"frames_out\":%llu,\"bytes_in\":%llu,"
                 "\"bytes_out\":%llu,\"crystal_events\":%llu,\"events\":%llu,\"busy_seconds\":",
            role_name(l->c->topology->actors[k].role), c->blocks, c->frames_in, c->frames_out, c->bytes_in,
            c->bytes_out, c->crystals, c->events);
    put_number(out, (double)c->busy_ns * 1e-9);
    fputs(",\"busy_share\":", out);
    put_number(out, emu_busy_share(&l->prev, &l->last, k));
    fputs(",\"frames_in_rate\":", out);
    put_number(out, window > 0 ? (double)(c->frames_in - p->frames_in) / window : 0);
    fputs(",\"frames_out_rate\":", out);
    put_number(out, window > 0 ? (double)(c->frames_out - p->frames_out) / window : 0);
    fputs(",\"progress\":", out);
    if (c->unit) {
        fprintf(out, "{\"done\":%llu,\"total\":%llu,\"unit\":", c->done, c->total);
        put_string(out, c->unit);
        fputs("}", out);
    } else {
        fputs("null", out);
    }
    fputs("}", out);
}

static void write_actors(FILE *out, emu_live *l, const void *unused)
{
    fputs("{\"actors\":[", out);
    for (size_t k = 0; k < l->n; k++) {
        fputs(k ? ",\n" : "\n", out);
        write_actor(out, l, k);
    }
    fputs("]}\n", out);
}

static void put_spectrum_head(FILE *out, const emu_live *l, const emu_live_spectrum *s)
{
    fputs("{\"actor\":", out);
    put_name(out, l, (long)s->actor);
    fputs(",\"name\":", out);
    put_string(out, s->name);
    fputs(",\"title\":", out);
    put_string(out, s->title);
    fputs(",\"x_label\":", out);
    put_string(out, s->x_label);
    fprintf(out, ",\"bins\":%u,\"lo\":", s->bins);
    put_number(out, s->lo);
    fputs(",\"hi\":", out);
    put_number(out, s->hi);
    fprintf(out, ",\"entries\":%llu,\"underflow\":%llu,\"overflow\":%llu,\"version\":%llu", s->entries,
            s->underflow, s->overflow, s->version);
}

static void write_spectra(FILE *out, emu_live *l, const void *unused)
{
    fputs("{\"spectra\":[", out);
    for (size_t i = 0; i < l->n_spectra; i++) {
        fputs(i ? ",\n" : "\n", out);
        put_spectrum_head(out, l, &l->spectrum[i]);
        fputs("}", out);
    }
    fputs("]}\n", out);
}

typedef struct which {
    const char *name, *actor;
    unsigned max_bins;
    int found;
} which;

static void write_spectrum(FILE *out, emu_live *l, const void *arg)
{
    which *w = (which *)arg;
    const emu_live_spectrum *s = NULL;
    for (size_t i = 0; i < l->n_spectra && !s; i++)
        if (strcmp(l->spectrum[i].name, w->name) == 0 &&
            (!w->actor || strcmp(l->c->topology->actors[l->spectrum[i].actor].name, w->actor) == 0))
            s = &l->spectrum[i];
    if (!(w->found = s != NULL))
        return;
    unsigned group = w->max_bins && s->bins > w->max_bins ? (s->bins + w->max_bins - 1) / w->max_bins : 1;
    unsigned shown = (s->bins + group - 1) / group;
    put_spectrum_head(out, l, s);
    fprintf(out, ",\"group\":%u,\"shown_bins\":%u,\"shown_hi\":", group, shown);
    /* The last group may be short: the axis ends where its bins end. */
    put_number(out, s->lo + (s->hi - s->lo) * (double)(shown * group) / s->bins);
    fputs(",\"counts\":[", out);
    for (unsigned b = 0; b < shown; b++) {
        unsigned long long sum = 0;
        for (unsigned i = b * group; i < (b + 1) * group && i < s->bins; i++)
            sum += s->counts[i];
        fprintf(out, "%s%llu", b ? "," : "", sum);
    }
    fputs("]}\n", out);
}

char *emu_monitor_status(emu_live *l) { return document(write_status, l, NULL); }

char *emu_monitor_actors(emu_live *l) { return document(write_actors, l, NULL); }

char *emu_monitor_spectra(emu_live *l) { return document(write_spectra, l, NULL); }

char *emu_monitor_spectrum(emu_live *l, const char *name, const char *actor, unsigned max_bins, int *found)
{
    which w = {.name = name, .actor = actor, .max_bins = max_bins};
    char *text = document(write_spectrum, l, &w);
    *found = w.found;
    if (!w.found) {
        free(text);
        return NULL;
    }
    return text;
}

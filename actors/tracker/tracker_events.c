/* tracker_events.c: decodes event:data:psa, data:psa and truth frames into a batch of lab-frame points, validating every value. */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracker_events.h"

int tracker_lookup_init(tracker_lookup *l, const det_array *a)
{
    l->array = a;
    l->index = malloc(65536 * sizeof *l->index);
    if (!l->index)
        return -1;
    for (int i = 0; i < 65536; i++)
        l->index[i] = -1;
    for (int i = 0; i < a->n; i++)
        if (a->crystal[i].id >= 0 && a->crystal[i].id < 65536)
            l->index[a->crystal[i].id] = (int16_t)i;
    return 0;
}

void tracker_lookup_free(tracker_lookup *l)
{
    free(l->index);
    l->index = NULL;
}

void tracker_events_clear(tracker_events *ev)
{
    ev->n = 0;
    ev->n_points = 0;
    ev->skipped_hits = 0;
    memset(&ev->core, 0, sizeof ev->core);
    if (ev->first)
        ev->first[0] = 0;
}

void tracker_events_free(tracker_events *ev)
{
    free(ev->first);
    free(ev->number);
    free(ev->timestamp);
    free(ev->status);
    free(ev->points);
    free(ev->crystal);
    free(ev->frame_sink);
    free(ev->spare_points);
    free(ev->spare_crystal);
    memset(ev, 0, sizeof *ev);
}

static bool grow_events(tracker_events *ev)
{
    uint32_t cap = ev->cap ? 2 * ev->cap : 256;
    uint32_t *first = realloc(ev->first, (cap + 1) * sizeof *first);
    if (first)
        ev->first = first;
    uint32_t *number = first ? realloc(ev->number, cap * sizeof *number) : NULL;
    if (number)
        ev->number = number;
    uint64_t *ts = number ? realloc(ev->timestamp, cap * sizeof *ts) : NULL;
    if (ts)
        ev->timestamp = ts;
    uint16_t *status = ts ? realloc(ev->status, cap * sizeof *status) : NULL;
    if (!status)
        return false;
    ev->status = status;
    if (ev->cap == 0)
        ev->first[0] = 0;
    ev->cap = cap;
    return true;
}

static bool grow_points(tracker_events *ev, size_t need)
{
    if (need <= ev->cap_points)
        return true;
    size_t cap = ev->cap_points ? 2 * ev->cap_points : 4096;
    while (cap < need)
        cap *= 2;
    tr_point *points = realloc(ev->points, cap * sizeof *points);
    if (points)
        ev->points = points;
    uint16_t *crystal = points ? realloc(ev->crystal, cap * sizeof *crystal) : NULL;
    if (!crystal)
        return false;
    ev->crystal = crystal;
    ev->cap_points = cap;
    return true;
}

/* Opens an event: its points follow until close_event. */
static tr_status open_event(tracker_events *ev, const adf_key *key, char *msg, size_t len)
{
    if (ev->n == ev->cap && !grow_events(ev)) {
        snprintf(msg, len, "no memory for %u events", ev->cap * 2);
        return TR_E_NOMEM;
    }
    ev->number[ev->n] = key->event;
    ev->timestamp[ev->n] = key->timestamp;
    ev->status[ev->n] = 0;
    ev->first[ev->n + 1] = (uint32_t)ev->n_points;
    return 0;
}

/* Closes the open event; one with too many points keeps none of them. */
static void close_event(tracker_events *ev)
{
    size_t start = ev->first[ev->n];
    if (ev->n_points - start > TR_MAX_POINTS) {
        ev->status[ev->n] = TRACKER_STATUS_TOO_MANY;
        ev->n_points = start;
    }
    ev->n++;
    ev->first[ev->n] = (uint32_t)ev->n_points;
}

/* Where one frame's points go (room for as many as its bytes can hold), and
 * what its decoding counted. */
typedef struct sink {
    tr_point *points;
    uint16_t *crystal;
    size_t n, cap;
    uint64_t skipped;
    tracker_core_counts core;
} sink;

/* Adds one hit of crystal `id` at crystal-frame position (x, y, z). */
static tr_status add_hit(sink *s, const tracker_lookup *l, uint16_t id, const adf_psa_hit *h, char *msg, size_t len)
{
    if (!isfinite(h->x) || !isfinite(h->y) || !isfinite(h->z) || !isfinite(h->e)) {
        snprintf(msg, len, "crystal %u: a hit with a position or energy that is not a number", id);
        return TR_E_DATA;
    }
    if (fabsf(h->x) > TRACKER_MAX_HIT_MM || fabsf(h->y) > TRACKER_MAX_HIT_MM || fabsf(h->z) > TRACKER_MAX_HIT_MM ||
        h->e > TRACKER_MAX_HIT_KEV) {
        snprintf(msg, len, "crystal %u: a hit at (%g, %g, %g) mm of %g keV, beyond %g mm of its crystal's origin "
                 "or %g keV", id, h->x, h->y, h->z, h->e, TRACKER_MAX_HIT_MM, TRACKER_MAX_HIT_KEV);
        return TR_E_DATA;
    }
    if (h->e <= 0) {
        s->skipped++;
        return 0;
    }
    int k = l->index[id];
    if (k < 0) {
        snprintf(msg, len, "crystal id %u is not in the array", id);
        return TR_E_DATA;
    }
    assert(s->n < s->cap); /* the room is what the frame's bytes can hold */
    double c[3] = { h->x, h->y, h->z }, lab[3];
    det_to_lab(&l->array->crystal[k], c, lab);
    s->points[s->n] = (tr_point){ (float)lab[0], (float)lab[1], (float)lab[2], h->e };
    s->crystal[s->n] = id;
    s->n++;
    return 0;
}

/* Scales the n points of one crystal so that their energies add up to e0
 * (tracker_events.h), counting what it did.  The factor is taken in double
 * and each energy rounded once, so the CPU and GPU engines see the same
 * floats (the points are prepared here, on the host, for both). */
static void scale_to_core(tr_point *p, size_t n, float e0, tracker_core_counts *c)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += p[i].e;
    if (n == 0) {
        c->empty += isfinite(e0) && e0 > 0;
        return;
    }
    if (!isfinite(e0) || e0 <= 0) {
        c->unscaled++;
        return;
    }
    if (fabs(sum - (double)e0) <= 1e-6 * sum) { /* the float rounding of a sum made elsewhere */
        c->matched++;
        return;
    }
    double ratio = (double)e0 / sum;
    if (!(ratio >= TRACKER_CORE_RATIO_MIN && ratio <= TRACKER_CORE_RATIO_MAX)) {
        c->unscaled++;
        return;
    }
    for (size_t i = 0; i < n; i++)
        p[i].e = (float)((double)p[i].e * ratio);
    c->scaled++;
}

static tr_status add_member(sink *s, const tracker_lookup *l, const adf_frame *f, adf_psa *psa, bool core_scale,
                            char *msg, size_t len)
{
    int rc = adf_psa_read(f, psa);
    if (rc != ADF_OK) {
        snprintf(msg, len, "data:psa at offset %zu: %s", f->offset, adf_strerror(rc));
        return TR_E_INPUT;
    }
    size_t start = s->n;
    for (unsigned h = 0; h < psa->n_hits; h++) {
        tr_status code = add_hit(s, l, psa->crystal_id, &psa->hit[h], msg, len);
        if (code)
            return code;
    }
    if (core_scale)
        scale_to_core(s->points + start, s->n - start, psa->e0, &s->core);
    return 0;
}

/* One event's points from an event:data:psa or data:psa frame into s. */
static tr_status decode_psa(sink *s, const tracker_lookup *l, const adf_frame *f, adf_psa *psa, bool core_scale,
                            char *msg, size_t len)
{
    if (f->key.id == ADF_ID_DATA_PSA)
        return add_member(s, l, f, psa, core_scale, msg, len);
    adf_iter it;
    adf_frame m;
    int rc = adf_iter_sub(&it, f); /* the kit's iterator has checked the composite already */
    if (rc != ADF_OK) {
        snprintf(msg, len, "frame at offset %zu: %s", f->offset, adf_strerror(rc));
        return TR_E_INPUT;
    }
    while ((rc = adf_iter_next(&it, &m)) > 0) {
        if (m.key.id != ADF_ID_DATA_PSA) {
            snprintf(msg, len, "member at offset %zu of event:data:psa is %s, not data:psa", m.offset,
                     adf_id_name(m.key.id) ? adf_id_name(m.key.id) : "an unknown frame");
            return TR_E_INPUT;
        }
        tr_status code = add_member(s, l, &m, psa, core_scale, msg, len);
        if (code)
            return code;
    }
    if (rc < 0) {
        adf_iter_describe(&it, msg, len);
        return TR_E_INPUT;
    }
    return 0;
}

/* The most points a psa frame can hold: a hit takes ADF_PSA_HIT of its bytes. */
static size_t psa_room(const adf_frame *f)
{
    return f->key.length / ADF_PSA_HIT;
}

static void add_core(tracker_core_counts *to, const tracker_core_counts *c)
{
    to->scaled += c->scaled;
    to->matched += c->matched;
    to->unscaled += c->unscaled;
    to->empty += c->empty;
}

/* Appends sink s (at the batch's end, ev->n_points on) as the event of key. */
static tr_status append(tracker_events *ev, const adf_key *key, const sink *s, char *msg, size_t len)
{
    tr_status code = open_event(ev, key, msg, len);
    if (code)
        return code;
    ev->n_points += s->n;
    ev->skipped_hits += s->skipped;
    add_core(&ev->core, &s->core);
    close_event(ev);
    return 0;
}

/* A sink at the batch's end with room for `room` points. */
static tr_status sink_at_end(tracker_events *ev, size_t room, sink *s, char *msg, size_t len)
{
    if (!grow_points(ev, ev->n_points + room)) {
        snprintf(msg, len, "no memory for %zu points", ev->n_points + room);
        return TR_E_NOMEM;
    }
    *s = (sink){ .points = ev->points + ev->n_points, .crystal = ev->crystal + ev->n_points, .cap = room };
    return 0;
}

tr_status tracker_events_add_psa(tracker_events *ev, const tracker_lookup *l, const adf_frame *f,
                                 adf_psa *psa, char *msg, size_t len)
{
    sink s;
    tr_status code = sink_at_end(ev, psa_room(f), &s, msg, len);
    if (!code)
        code = decode_psa(&s, l, f, psa, ev->core_scale, msg, len);
    return code ? code : append(ev, &f->key, &s, msg, len); /* on a failure the batch stays as it was */
}

/* The scratch of tracker_events_add_psa_frames: n frames' sinks side by side. */
static bool grow_scratch(tracker_events *ev, size_t frames, size_t points)
{
    if (frames > ev->cap_frames) {
        free(ev->frame_sink);
        ev->frame_sink = malloc(frames * sizeof *ev->frame_sink);
        ev->cap_frames = ev->frame_sink ? frames : 0;
    }
    if (points > ev->cap_spare) {
        free(ev->spare_points);
        free(ev->spare_crystal);
        ev->spare_points = malloc(points * sizeof *ev->spare_points);
        ev->spare_crystal = malloc(points * sizeof *ev->spare_crystal);
        ev->cap_spare = ev->spare_points && ev->spare_crystal ? points : 0;
    }
    return ev->cap_frames >= frames && ev->cap_spare >= points;
}

tr_status tracker_events_add_psa_frames(tracker_events *ev, const tracker_lookup *l, const adf_frame *f, size_t n,
                                        int threads, uint32_t *event, char *msg, size_t len)
{
    size_t room = 0;
    for (size_t i = 0; i < n; i++)
        room += psa_room(&f[i]);
    if (!grow_scratch(ev, n, room) || !grow_points(ev, ev->n_points + room)) {
        snprintf(msg, len, "no memory to decode %zu frames (%zu points at most)", n, room);
        return TR_E_NOMEM;
    }
    sink *s = ev->frame_sink;
    for (size_t i = 0, at = 0; i < n; at += s[i].cap, i++)
        s[i] = (sink){ .points = ev->spare_points + at, .crystal = ev->spare_crystal + at, .cap = psa_room(&f[i]) };
    bool core_scale = ev->core_scale;
#pragma omp parallel num_threads(threads > 0 ? threads : 1)
    {
        adf_psa psa;
        char why[8]; /* a failure is described again, alone (tracker_events_add_psa) */
#pragma omp for schedule(dynamic, 256)
        for (size_t i = 0; i < n; i++)
            if (decode_psa(&s[i], l, &f[i], &psa, core_scale, why, sizeof why) != TR_OK)
                s[i].cap = SIZE_MAX;
    }
    for (size_t i = 0; i < n; i++) {
        event[i] = UINT32_MAX;
        if (s[i].cap == SIZE_MAX)
            continue;
        memcpy(ev->points + ev->n_points, s[i].points, s[i].n * sizeof *s[i].points);
        memcpy(ev->crystal + ev->n_points, s[i].crystal, s[i].n * sizeof *s[i].crystal);
        event[i] = ev->n;
        tr_status code = append(ev, &f[i].key, &s[i], msg, len);
        if (code)
            return code;
    }
    return 0;
}

tr_status tracker_events_add_truth(tracker_events *ev, const tracker_lookup *l, const tracker_smear *sm,
                                   const adf_frame *f, adf_truth *truth, char *msg, size_t len)
{
    int rc = adf_truth_read(f, truth);
    if (rc != ADF_OK) {
        snprintf(msg, len, "narwhal:truth at offset %zu: %s", f->offset, adf_strerror(rc));
        return TR_E_INPUT;
    }
    sink s;
    tr_status code = sink_at_end(ev, truth->n_interactions, &s, msg, len);
    tracker_smearer r;
    tracker_smearer_start(&r, sm, f->key.event);
    for (unsigned i = 0; i < truth->n_interactions && !code; i++) {
        adf_psa_hit h;
        tracker_smear_hit(&r, &truth->hit[i], &h);
        code = add_hit(&s, l, truth->hit[i].crystal_id, &h, msg, len);
    }
    return code ? code : append(ev, &f->key, &s, msg, len);
}

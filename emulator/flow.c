/* flow.c: a topology's data flow at run time: who reads each actor's output, how shared instances take turns, where stream ends go. */
#include "flow.h"
#include "adf.h"
#include "emu.h"

#include <stdlib.h>
#include <string.h>

/* The outlet of writer w that reader source s belongs to: its group's when
 * it shares, else a new one. */
static emu_outlet *outlet_for(emu_flow_actor *w, enum emu_share share)
{
    if (share != EMU_SHARE_NONE)
        for (size_t o = 0; o < w->n_outlets; o++)
            if (w->outlets[o].share == share)
                return &w->outlets[o];
    emu_outlet *grown = realloc(w->outlets, (w->n_outlets + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    w->outlets = grown;
    emu_outlet *o = &w->outlets[w->n_outlets++];
    memset(o, 0, sizeof *o);
    o->share = share;
    return o;
}

static int add_reader(emu_outlet *o, size_t reader, size_t input)
{
    size_t *r = realloc(o->reader, (o->n + 1) * sizeof *r);
    if (r)
        o->reader = r;
    size_t *in = r ? realloc(o->input, (o->n + 1) * sizeof *in) : NULL;
    if (!in)
        return EMU_E_RUN;
    o->input = in;
    o->reader[o->n] = reader;
    o->input[o->n++] = input;
    return EMU_OK;
}

int emu_flow_init(emu_flow *f, const emu_topology *t)
{
    memset(f, 0, sizeof *f);
    f->t = t;
    f->n = t->n_actors;
    f->actor = calloc(f->n ? f->n : 1, sizeof *f->actor);
    if (!f->actor)
        return EMU_E_RUN;
    for (size_t k = 0; k < f->n; k++) {
        const emu_actor_spec *a = &t->actors[k];
        if (a->n_sources && !(f->actor[k].ended = calloc(a->n_sources, 1)))
            return EMU_E_RUN;
        for (size_t i = 0; i < a->n_sources; i++) {
            emu_outlet *o = outlet_for(&f->actor[a->sources[i].from], a->sources[i].share);
            if (!o || add_reader(o, k, i) != EMU_OK)
                return EMU_E_RUN;
        }
    }
    return EMU_OK;
}

void emu_flow_free(emu_flow *f)
{
    for (size_t k = 0; f->actor && k < f->n; k++) {
        emu_flow_actor *a = &f->actor[k];
        for (size_t o = 0; o < a->n_outlets; o++) {
            free(a->outlets[o].reader);
            free(a->outlets[o].input);
        }
        free(a->outlets);
        free(a->ended);
        free(a->scratch.data);
    }
    free(f->actor);
    memset(f, 0, sizeof *f);
}

void emu_flow_reset(emu_flow *f)
{
    for (size_t k = 0; k < f->n; k++) {
        emu_flow_actor *a = &f->actor[k];
        for (size_t o = 0; o < a->n_outlets; o++)
            a->outlets[o].turn = 0;
        if (a->ended)
            memset(a->ended, 0, f->t->actors[k].n_sources);
        a->n_ended = 0;
        a->eof_given = 0;
    }
}

int emu_flow_find_eof(const uint8_t *data, unsigned size, unsigned *offset, unsigned *length)
{
    adf_iter it;
    adf_frame f;
    adf_iter_init(&it, data, size);
    while (adf_iter_next(&it, &f) > 0)
        if (f.key.id == ADF_ID_META_EOF) {
            *offset = (unsigned)(f.data - data);
            *length = f.key.length;
            return 1;
        }
    return 0;
}

/* The block's frames but its meta:eof ones, into the scratch buffer; a
 * malformed tail is copied as it is, for the actor to refuse. */
static int strip_eof(emu_flow_actor *a, const uint8_t **data, unsigned *size, unsigned long long *frames)
{
    if (a->scratch.cap < *size) {
        uint8_t *grown = realloc(a->scratch.data, *size);
        if (!grown)
            return EMU_E_RUN;
        a->scratch.data = grown;
        a->scratch.cap = *size;
    }
    adf_iter it;
    adf_frame fr;
    unsigned used = 0, end = 0;
    adf_iter_init(&it, *data, *size);
    while (adf_iter_next(&it, &fr) > 0) {
        end = (unsigned)(fr.data - *data) + fr.key.length;
        if (fr.key.id == ADF_ID_META_EOF) {
            (*frames)--;
            continue;
        }
        memcpy(a->scratch.data + used, fr.data, fr.key.length);
        used += fr.key.length;
    }
    memcpy(a->scratch.data + used, *data + end, *size - end);
    *size = used + (*size - end);
    *data = a->scratch.data;
    return EMU_OK;
}

int emu_flow_take(emu_flow *f, size_t k, size_t i, const uint8_t **data, unsigned *size, unsigned long long *frames)
{
    emu_flow_actor *a = &f->actor[k];
    size_t inputs = f->t->actors[k].n_sources;
    unsigned offset, length;
    if (inputs < 2 || !emu_flow_find_eof(*data, *size, &offset, &length))
        return EMU_OK;
    if (!a->ended[i]) {
        a->ended[i] = 1;
        a->n_ended++;
    }
    if (a->n_ended == inputs && !a->eof_given) {
        a->eof_given = 1;
        return EMU_OK;
    }
    return strip_eof(a, data, size, frames);
}

size_t emu_flow_next_turn(emu_outlet *o)
{
    size_t at = o->turn;
    o->turn = (at + 1) % o->n;
    return at;
}

/* flow.h: a topology's data flow at run time: who reads each actor's output, how shared instances take turns, where stream ends go. */
#ifndef NARWHAL_FLOW_H
#define NARWHAL_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "calls.h"
#include "topology.h"

/*
 * Where an actor's output goes: one outlet per reader that gets every
 * block, and one per group of instances sharing the buffer (the readers
 * whose <data_source> carries share="..."), in topology order (readers in
 * the order emu_topology lists them; a group where its first instance is).
 *
 * Stream ends (in-band meta:eof frames) are the host's job:
 * - a block with a meta:eof sent to a shared group goes to the instance
 *   whose turn it is, and every other instance gets a block holding only
 *   that meta:eof frame (each instance learns that the stream ended);
 * - an actor with several inputs is handed the meta:eof of the input that
 *   ends last; the others are counted and taken out of their blocks (a
 *   block left empty is not handed at all), so it sees exactly one.
 * Each actor's input state belongs to the thread that calls it, each
 * outlet's turn to the thread of the actor that writes it.
 */
typedef struct emu_outlet {
    enum emu_share share; /* EMU_SHARE_NONE: one reader, every block */
    size_t n;             /* readers (1 without sharing) */
    size_t *reader;       /* their actor indices */
    size_t *input;        /* the input (index of the <data_source>) each reads this buffer on */
    size_t turn;          /* the instance whose turn is next */
} emu_outlet;

typedef struct emu_flow_actor {
    emu_outlet *outlets;
    size_t n_outlets;
    char *ended;          /* per input: its meta:eof came this run */
    size_t n_ended;
    int eof_given;        /* the one meta:eof was handed this run */
    emu_buffer scratch;   /* a block with meta:eof frames taken out */
} emu_flow_actor;

typedef struct emu_flow {
    const emu_topology *t;
    emu_flow_actor *actor;
    size_t n;
} emu_flow;

int emu_flow_init(emu_flow *f, const emu_topology *t);
void emu_flow_free(emu_flow *f);
/* A new run: every input open, every group's turn at its first instance. */
void emu_flow_reset(emu_flow *f);

/* The offset and length of the first top-level meta:eof frame of a block;
 * 0 when it has none. */
int emu_flow_find_eof(const uint8_t *data, unsigned size, unsigned *offset, unsigned *length);

/* What actor k is to be handed of a block that came on input i: the block
 * itself, or a copy without the meta:eof frames the end rule above takes
 * out (in the actor's scratch buffer).  *size 0: hand it nothing.  Returns
 * EMU_E_RUN when out of memory. */
int emu_flow_take(emu_flow *f, size_t k, size_t i, const uint8_t **data, unsigned *size, unsigned long long *frames);

/* Round-robin: the instance of outlet o whose turn it is, the turn passing on. */
size_t emu_flow_next_turn(emu_outlet *o);

#endif

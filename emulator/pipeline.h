/* pipeline.h: `narwhal run --pipeline`: a topology's blocks, flushes and pauses with every actor on its own thread, a ring per input. */
#ifndef NARWHAL_PIPELINE_H
#define NARWHAL_PIPELINE_H

#include "calls.h"

/*
 * Runs the blocks of one started run: every actor on its own thread, each
 * input of each actor a ring of depth buffers that its writer fills (a
 * writer waits while a reader's ring is full: back-pressure).  Every
 * message carries its place in the sequential order (emu_key: the round
 * and producer it comes from, the outlets it took), a filter that emits
 * nothing sends a skip in its place, and an actor always takes, of the
 * heads of its inputs, the first in that order; so every actor sees the
 * blocks, and only the blocks, the sequential loop would hand it, in the
 * same order and with the same output sizes (instances sharing a buffer
 * first-free may be handed other blocks; round-robin ones the same).
 * A producer stops at the end of its data, after o->max_blocks blocks or
 * at a signal, then sends an end mark; a filter flushes (not with
 * o->strict) once every input ended, then sends its end mark.  A pause
 * falls after a round: each producer sends a pause mark after that round's
 * block and waits; filters pass it on once it heads all their inputs; when
 * every consumer has it (or ended) the graph is drained, and the last
 * producer's thread calls emu_calls_pause (actors pause between blocks, in
 * topology order, as sequentially).  An actor's failure aborts every ring:
 * each thread returns after its call in hand, and no flush is made.
 * Returns when every thread has ended: EMU_OK, or EMU_E_RUN after a
 * failure (reported through emu_calls_fail).  Start, stop and unload are
 * left to the caller.
 */
int emu_pipeline_run(emu_calls *s, unsigned depth);

#endif

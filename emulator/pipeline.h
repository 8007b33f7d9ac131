/* pipeline.h: `narwhal run --pipeline`: the blocks, flushes and pauses with every actor on its own thread, rings between. */
#ifndef NARWHAL_PIPELINE_H
#define NARWHAL_PIPELINE_H

#include "calls.h"

/*
 * Runs the blocks of one started run: actor k's thread takes blocks from
 * ring k - 1 and puts what it emits into ring k, each ring of depth
 * buffers, so that every actor sees the blocks, and only the blocks, that
 * the sequential loop would hand it, in the same order and with the same
 * output sizes.  The producer stops at the end of its data, after
 * o->max_blocks blocks or at a signal; it then sends an end mark down the
 * chain, and each filter flushes (not with o->strict) when the mark reaches
 * it, after every block before it.  When a pause is due (emu_calls_pause_due)
 * the producer sends a pause mark down the chain and waits until the
 * consumer has it: the pipeline is drained, every thread waits for input,
 * and the producer's thread calls emu_calls_pause, so that the actors pause
 * between blocks, in chain order, as sequentially.  An actor's failure
 * aborts every ring: each thread returns after its call in hand, and no
 * flush is made.  Returns when every thread has ended: EMU_OK, or EMU_E_RUN
 * after a failure (reported through emu_calls_fail).  Start, stop and
 * unload are left to the caller.
 */
int emu_pipeline_run(emu_calls *s, unsigned depth);

#endif

/* origin.h: where the frames producers read came from (narval.h's process_host), for actors' messages about them. */
#ifndef NARWHAL_ORIGIN_H
#define NARWHAL_ORIGIN_H

#include "narval.h"

/*
 * The emulator gives every library it loads this table (process_host).  A
 * reader reports the file and byte offset of each frame it emits; the index
 * keeps the last EMU_ORIGIN_FRAMES of them, whichever reader sent them, so
 * that its memory stays fixed however long the run; an actor that rejects a
 * frame asks where it (or the frame it was made from: same event, same
 * crystal) was read, and the newest frame that matches answers.  A frame
 * read longer ago, or in another process of an MPI run, is not found: the
 * actor's message then names the event and the block offset only.  The
 * calls lock: readers and actors of a pipelined run call from their threads.
 */
#define EMU_ORIGIN_FRAMES (1u << 18)

const narwhal_host *emu_origin_host(void);

#endif

/* buffer.h: the emulator's block buffers: what actors write their output into and read their input from, page-locked when a CUDA device is usable. */
#ifndef NARWHAL_BUFFER_H
#define NARWHAL_BUFFER_H

#include <stddef.h>
#include <stdint.h>

/* A block buffer.  It is allocated on first use and grown whenever its
 * actor's size (emu_calls.size) has grown past it, so that every buffer an
 * actor is handed has the size the sequential loop would hand it.  Buffers
 * cross links whole (pipeline.c, mpi_comm.c swap them), so each carries
 * how it was allocated. */
typedef struct emu_buffer {
    uint8_t *data;
    unsigned cap;         /* bytes allocated */
    unsigned char pinned; /* data is page-locked memory (emu_buffer_fit) */
} emu_buffer;

/* Makes b hold at least size bytes; what it held is not kept (a buffer's
 * bytes are the next writer's), so a larger one is allocated anew, not
 * reallocated.  With CUDA built, a device usable and emu_buffer_plain(0)
 * it is page-locked (portable: every device's): a GPU actor given it as its
 * input uploads it where it lies instead of copying it into pinned memory
 * of its own first (the PSA's GPU block; a NARVAL host's buffers are plain
 * memory, and the actors work the same on either).  0, or -1 without
 * memory (b empty). */
int emu_buffer_fit(emu_buffer *b, size_t size);

/* Whether the buffers allocated from now on are plain memory even where a
 * device is usable (run.c: no actor on a GPU, or --strict: a NARVAL host's
 * are); set before a run's blocks, and its threads, start.  Plain until
 * then. */
void emu_buffer_plain(int yes);

/* Frees b's memory as it was allocated; b becomes empty. */
void emu_buffer_release(emu_buffer *b);

#endif

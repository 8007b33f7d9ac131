/* histo_block.h: a block's frames decoded on several threads, each staging into a decoder of its own, and what each frame gave. */
#ifndef NARWHAL_HISTO_BLOCK_H
#define NARWHAL_HISTO_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "histo_engine.h"
#include "histo_frames.h"

/*
 * One thread decoding a block was the histogrammer's whole host time (about
 * 0.7 s for 2 M data:psa frames in a sequential chain whose other actors left
 * the cores idle).  histo_block_decode hands the block's top-level frames out
 * to the threads in runs of a few dozen, as each asks (a thread another
 * process delays takes fewer), each decoded by histo_decode into the thread's
 * own decoder; histo_block_take then hands the stages to the engine
 * (integer counts: the order of the entries does not change a count).  A
 * frame histo_decode refused staged nothing and is kept with its code and
 * sentence, so that the caller, walking the frames in order, treats it
 * exactly as when it decoded them itself.
 */
typedef struct histo_fault {
    size_t frame; /* its index among the block's top-level frames */
    histo_status code;
    char msg[sizeof ((histo_decoder *)0)->msg];
} histo_fault;

typedef struct histo_faults {
    histo_fault *v;
    size_t n, cap;
} histo_faults;

typedef struct histo_block {
    const histo_spec *spec;
    int threads;
    histo_decoder *dec;    /* one per thread, with its own stages */
    histo_faults *refused; /* one per thread: the frames its decoder refused */
    histo_faults faults;   /* all of them, in frame order */
    adf_frame *frame;      /* the block's top-level frames, up to a framing error */
    size_t n_frames, cap_frames;
} histo_block;

/* Decoders for up to `threads` threads (the OpenMP team's size). */
histo_status histo_block_init(histo_block *b, const histo_spec *spec, int threads);
void histo_block_free(histo_block *b);
/* Decodes every top-level frame of buf[0, size) that the validating iterator
 * reaches (the caller's walk stops at the same framing error); each decoder's
 * stages and counts start from nothing.  HISTO_E_NOMEM only for the block's
 * own lists: a frame's failure, whatever its code, is a fault. */
histo_status histo_block_decode(histo_block *b, const void *buf, size_t size);
/* The fault of frame i, when frames are asked in order from 0 (*cursor, 0
 * at first, follows them); NULL for a frame that decoded. */
const histo_fault *histo_block_fault(const histo_block *b, size_t i, size_t *cursor);
/* Every decoder's stages into the engine, and their frame counts added to seen. */
histo_status histo_block_take(histo_block *b, histo_engine *e, uint64_t seen[HISTO_SEEN_KINDS]);

#endif

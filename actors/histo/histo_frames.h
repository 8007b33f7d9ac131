/* histo_frames.h: turns data:crystal, data:psa and data:tracked frames into staged histogram entries. */
#ifndef NARWHAL_HISTO_FRAMES_H
#define NARWHAL_HISTO_FRAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "adf.h"
#include "histo_engine.h"
#include "histo_spec.h"

enum { HISTO_SEEN_CRYSTAL, HISTO_SEEN_PSA, HISTO_SEEN_TRACKED, HISTO_SEEN_OTHER, HISTO_SEEN_KINDS };

typedef struct histo_decoder {
    const histo_spec *spec;
    histo_stage *stage;           /* one per declaration of spec: where its entries are staged */
    char msg[512];                /* why histo_decode failed */
    uint64_t seen[HISTO_SEEN_KINDS]; /* frames of each kind staged since the last reset */
    adf_crystal crystal;          /* decoding scratch: adf_crystal holds 40 KiB of traces */
    adf_psa psa;
    adf_tracked tracked;
} histo_decoder;

/* Stages the entries of a frame and, for a composite, of every sub-frame,
 * all or none: a frame refused stages nothing (histo.so rejects it as a bad
 * frame).  Frames of other types are counted and ignored.  A payload libadf rejects
 * is HISTO_E_INPUT; a crystal id or segment beyond Crystals or Segments, for
 * a declaration that needs it, is HISTO_E_DATA; d->msg says which frame. */
histo_status histo_decode(histo_decoder *d, const adf_frame *f);

#endif

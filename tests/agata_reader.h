/* agata_reader.h: a small reader of AGATA's ADF files, written from AGATA's published frame layouts alone (never from adf/), that stops at the first frame it does not know as AGATA's readers do. */
#ifndef NARWHAL_AGATA_READER_H
#define NARWHAL_AGATA_READER_H

#include <stddef.h>
#include <stdint.h>

/*
 * What it knows, from AGATA's documents and readers (the ADF key version 4.0;
 * the data:psa layout that AGATA's PSA writes and that readers such as
 * GRETINA's ag2mode2 decode), little-endian and packed:
 *
 *   key, 20 bytes:   u32 frame length (key included), u32 key id,
 *                    u32 event number, u64 timestamp
 *   data:psa         0xFA010102: u16 crystal id, u16 crystal status,
 *                    f32 e0, e1, t0, t1, u16 PSA status, u16 number of hits N,
 *                    then N times { u16 status, i16 segment, i16 crystal,
 *                    f32 x, y, z, e, t, tCCe, tCCh, tSGe, tSGh }  (24 + 42 N bytes)
 *   event:data:psa   0xCA010102: a key, then data:psa frames, each with its
 *                    own key, that fill it exactly
 *
 * Any other key id, at the top or inside an event, ends the reading: the file
 * is "not whole" for such a reader, which is what AGATA's readers do with an
 * id they do not know.
 */
enum { AGR_MAX_HITS = 64 };

typedef enum agr_status {
    AGR_WHOLE = 0,    /* every frame read */
    AGR_UNKNOWN = 1,  /* stopped at a key id it does not know */
    AGR_BAD = 2,      /* a length or a payload that does not fit the layout */
    AGR_IO = 3,       /* the file could not be read */
} agr_status;

typedef struct agr_hit {
    uint16_t status;
    int16_t segment, crystal;
    float x, y, z, e, t, t_cc_e, t_cc_h, t_sg_e, t_sg_h;
} agr_hit;

typedef struct agr_psa {
    uint32_t event;
    uint64_t timestamp;
    long in_event;        /* the index of the event:data:psa holding it, or -1 at the top */
    uint16_t crystal, status;
    float e0, e1, t0, t1;
    uint16_t psa_status, n_hits;
    agr_hit hit[AGR_MAX_HITS];
} agr_psa;

typedef struct agr_file {
    agr_status status;
    char why[256];        /* what stopped it, with the offset; "" when whole */
    uint32_t stop_id;     /* the unknown key id (AGR_UNKNOWN) */
    uint64_t stop_offset; /* where the frame that stopped it starts */
    size_t frames;        /* top-level frames read before any stop */
    size_t events;        /* event:data:psa frames among them */
    agr_psa *psa;         /* every data:psa, top level or in an event, in file order */
    size_t n_psa;
} agr_file;

/* Reads the file at path into *f (zeroed first); f->status says how far it got. */
agr_status agr_read(const char *path, agr_file *f);
void agr_free(agr_file *f);

#endif

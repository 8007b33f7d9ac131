/* libadf: AGATA Data Flow frames — keys, building, validated reading, typed payloads, files. */
#ifndef NARWHAL_ADF_H
#define NARWHAL_ADF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* libadf's functions are its public interface: they stay visible in libadf.so even
 * when the including code builds with -fvisibility=hidden. */
#pragma GCC visibility push(default)

/*
 * Byte order and alignment
 * ------------------------
 * Everything in a frame is little-endian and packed.  libadf encodes and
 * decodes every field byte by byte (adf_get_* / adf_put_*), so a frame may
 * start at any address and no code casts buffer memory to a struct.
 *
 * The key (ADF key version 4.0, 20 bytes)
 * ---------------------------------------
 *   offset  type  field
 *   0       u32   frame length in bytes, key included (>= 20)
 *   4       u32   key id (message type, ADF_ID_*)
 *   8       u32   event number
 *   12      u64   timestamp, 10 ns ticks (the hardware fills 48 bits)
 *
 * A frame whose id has 0xCA in its top byte is composite: its payload is a
 * sequence of complete sub-frames, each with its own key, that exactly fills
 * the parent.  Any other frame's payload is opaque to the framing layer and is
 * described below for the types libadf knows.
 */
#define ADF_KEY_SIZE 20u
#define ADF_MAX_DEPTH 4 /* key levels: a composite inside a composite inside ... */

enum adf_id {
    /* AGATA's ids whose published payload layouts Narwhal writes byte for byte:
     * AGATA's readers read these frames. */
    ADF_ID_DATA_PSA = 0xFA010102u,
    ADF_ID_EVENT_DATA_PSA = 0xCA010102u,
    /* AGATA's ids whose payloads are Narwhal's (AGATA defines the id, not this
     * layout; the readers AGATA's experiments use do not know these frames). */
    ADF_ID_META_EOF = 0xFA001100u,
    ADF_ID_META_SYNC = 0xFA011101u,
    /* AGATA's ids that Narwhal neither writes nor decodes: named (adf_id_name,
     * `narwhal dump`) so that a file of AGATA's shows what it holds. */
    ADF_ID_AGATA_CRYSTAL = 0xFA010101u, /* data:crystal: AGATA's traces, not Narwhal's layout */
    ADF_ID_AGATA_CCRYSTAL = 0xFA010111u,
    ADF_ID_DATA_EB = 0xFA010103u,
    ADF_ID_DATA_MERGER = 0xFA010104u,
    ADF_ID_AGATA_TRACKED = 0xFA010105u, /* data:tracked: AGATA's γ rays, not Narwhal's layout */
    ADF_ID_DATA_RANC0 = 0xFA0201A0u,   /* ancillary detectors' data */
    ADF_ID_DATA_RANC1 = 0xFA0201A1u,
    ADF_ID_DATA_RANC2 = 0xFA0201A2u,
    ADF_ID_EVENT_DATA = 0xCA000100u,
    ADF_ID_EVENT_DATA_CRYSTAL = 0xCA010101u,
    ADF_ID_EVENT_DATA_TRACKED = 0xCA010103u,
    ADF_ID_CONF_GLOBAL = 0xFA000200u,
    ADF_ID_CONF_CRYSTAL = 0xFA010201u,
    ADF_ID_CONF_PSA = 0xFA010202u,
    ADF_ID_CONF_EB = 0xFA010203u,
    ADF_ID_CONF_MERGER = 0xFA010204u,
    ADF_ID_CONF_TRACKED = 0xFA010205u,
    ADF_ID_CONF_RANC0 = 0xFA0202A0u,
    ADF_ID_CONF_RANC1 = 0xFA0202A1u,
    ADF_ID_CONF_RANC2 = 0xFA0202A2u,
    ADF_ID_META_VERTEX = 0xFA011102u,
    /* Narwhal's own frames: top byte 0x4E ('N'), outside AGATA's 0xFA/0xCA
     * ranges, so that no reader of AGATA's takes them for its own.  The low
     * half mirrors AGATA's id of the same role (0x0101 traces, 0x0105 γ rays). */
    ADF_ID_NW_TRUTH = 0x4E570001u,   /* narwhal:truth: simulation truth */
    ADF_ID_NW_CRYSTAL = 0x4E570101u, /* narwhal:crystal: a crystal's energies and traces */
    ADF_ID_NW_TRACKED = 0x4E570105u, /* narwhal:tracked: the tracked γ rays of an event */
};

typedef struct adf_key {
    uint32_t length;    /* whole frame, key included */
    uint32_t id;        /* ADF_ID_* */
    uint32_t event;     /* event number */
    uint64_t timestamp; /* 10 ns ticks */
} adf_key;

/* Status codes.  Every libadf call that can fail returns one of these;
 * ADF_OK is 0 and every failure is negative, each with its own meaning. */
enum adf_status {
    ADF_OK = 0,
    ADF_E_ARG = -1,         /* a null pointer or impossible argument from the caller */
    ADF_E_SHORT = -2,       /* a frame's length field is below 20 (the key alone) */
    ADF_E_PAST_END = -3,    /* a frame's length runs past the end of its buffer */
    ADF_E_SUB_OVERRUN = -4, /* a sub-frame runs past the end of its composite parent */
    ADF_E_TOO_DEEP = -5,    /* composites nested deeper than ADF_MAX_DEPTH */
    ADF_E_NOSPACE = -6,     /* writing: the frame does not fit in the capacity given */
    ADF_E_NESTING = -7,     /* writing: end without begin, or a non-composite given children */
    ADF_E_WRONG_ID = -8,    /* decoding: the frame is not of the type asked for */
    ADF_E_PAYLOAD = -9,     /* decoding: the payload's size or contents are inconsistent */
    ADF_E_IO = -10,         /* a file could not be opened, read, written or renamed (errno kept) */
    ADF_E_TRUNCATED = -11,  /* a file ends inside a frame */
    ADF_E_TOO_BIG = -12,    /* reading a file: one frame is larger than the whole buffer given */
    ADF_E_NOMEM = -13,      /* an allocation failed */
    ADF_E_LIMIT = -14,      /* a count exceeds a documented limit (hits, channels, samples) */
};

/* A fixed English sentence for a status code ("frame length below 20 bytes"). */
const char *adf_strerror(int status);

/* The name of a key id ("data:psa", "narwhal:truth"), or NULL if libadf does not know it. */
const char *adf_id_name(uint32_t id);
/* The id of a name, or 0 when unknown. */
uint32_t adf_id_from_name(const char *name);
/* Non-zero for ids whose payload is a sequence of sub-frames (top byte 0xCA);
 * inline, as the field access below: every frame walk asks it per frame. */
static inline int adf_id_is_composite(uint32_t id) { return (id >> 24) == 0xCAu; }

/* ---- little-endian field access (any alignment) ---- */

static inline uint16_t adf_get_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t adf_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t adf_get_u64(const uint8_t *p)
{
    return (uint64_t)adf_get_u32(p) | ((uint64_t)adf_get_u32(p + 4) << 32);
}
static inline int16_t adf_get_i16(const uint8_t *p) { return (int16_t)adf_get_u16(p); }
/* memcpy is the one portable way to reinterpret the bits of an IEEE-754 float. */
static inline float adf_get_f32(const uint8_t *p)
{
    uint32_t bits = adf_get_u32(p);
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static inline void adf_put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void adf_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static inline void adf_put_u64(uint8_t *p, uint64_t v)
{
    adf_put_u32(p, (uint32_t)v);
    adf_put_u32(p + 4, (uint32_t)(v >> 32));
}
void adf_put_f32(uint8_t *p, float v);

void adf_key_encode(uint8_t dst[ADF_KEY_SIZE], const adf_key *key);
void adf_key_decode(const uint8_t src[ADF_KEY_SIZE], adf_key *key);

/* ---- writing: begin / put / end ------------------------------------------
 *
 *   adf_writer w;
 *   adf_writer_init(&w, buf, cap);
 *   adf_begin(&w, ADF_ID_EVENT_DATA_PSA, ev, ts);   composite parent
 *     adf_begin(&w, ADF_ID_DATA_PSA, ev, ts);        child
 *     adf_put(&w, bytes, n) ...
 *     adf_end(&w);                                   child length patched
 *   adf_end(&w);                                     parent length patched
 *
 * No call ever writes at or past buf + cap.  When something does not fit, the
 * call returns ADF_E_NOSPACE, the writer remembers the failure (every later
 * begin/put/end also returns it), and adf_end of the outermost frame returns
 * ADF_E_NOSPACE and rolls w.used back to where that frame began, so the
 * buffer only ever holds complete frames.  The writer keeps counting what the
 * failed frame would have taken: adf_writer_needed() is then the capacity the
 * same sequence of calls would need, which a filter reports to its host.
 * adf_writer_clear_error() lets the caller continue with other frames.
 *
 * Precisely: the first failure of any call (ADF_E_NOSPACE, ADF_E_NESTING,
 * ADF_E_ARG, ADF_E_LIMIT for a frame over 4 GiB, or the validation code of a
 * bad adf_put_frame) is kept in w.status and at once rolls w.used back to the
 * start of the outermost open frame.  From then on every call returns that
 * status; begin/put/end/put_frame still count bytes and track nesting, so the
 * caller may simply carry on with the same calls to learn adf_writer_needed().
 * adf_put and adf_reserve outside any frame are ADF_E_NESTING, and so is a
 * begin when ADF_MAX_DEPTH frames are open.  adf_writer_clear_error() forgets
 * the failure and the frames that were open (adf_writer_needed() keeps its
 * count); it does nothing to a healthy writer.  A NULL buf with cap 0 gives a
 * writer that only measures.  The typed writers (adf_crystal_write, ...)
 * refuse counts above their limits with ADF_E_LIMIT before touching w.
 */
typedef struct adf_writer {
    uint8_t *buf;
    size_t cap;
    size_t used;                  /* bytes of complete frames (plus the open ones) */
    size_t needed;                /* bytes the calls so far would have taken */
    size_t open[ADF_MAX_DEPTH];   /* start offsets (in needed-space) of open frames */
    int depth;                    /* frames currently open */
    int status;                   /* first failure since the last clear, else ADF_OK */
} adf_writer;

void adf_writer_init(adf_writer *w, void *buf, size_t cap);
int adf_begin(adf_writer *w, uint32_t id, uint32_t event, uint64_t timestamp);
int adf_put(adf_writer *w, const void *data, size_t n);
int adf_put_le16(adf_writer *w, uint16_t v);
int adf_put_le32(adf_writer *w, uint32_t v);
int adf_put_le64(adf_writer *w, uint64_t v);
int adf_put_lef32(adf_writer *w, float v);
/* Claims n bytes of the open frame for the caller to fill (adf_put_u32 ...), or NULL
 * once the writer has failed (w.status says why): encoders use it to avoid a call per field. */
uint8_t *adf_reserve(adf_writer *w, size_t n);
int adf_end(adf_writer *w);
/* Append one complete frame (e.g. from an adf_iter) as is, inside an open composite
 * or at the top level.  It is checked as adf_iter_next would at the writer's depth
 * (its code is returned on failure), and its length field must equal length. */
int adf_put_frame(adf_writer *w, const void *frame, size_t length);
size_t adf_writer_needed(const adf_writer *w);
void adf_writer_clear_error(adf_writer *w);

/* ---- reading: a validating iterator --------------------------------------
 *
 *   adf_iter it;  adf_frame f;  int rc;
 *   adf_iter_init(&it, buf, size);
 *   while ((rc = adf_iter_next(&it, &f)) > 0) { ... f.key, f.payload ... }
 *   if (rc < 0) { adf_iter_describe(&it, msg, sizeof msg); ... }
 *
 * adf_iter_next returns 1 and fills *f with the next frame, 0 at the clean end
 * of the buffer, or a negative ADF_E_* code.  A frame is returned only after
 * it has been checked completely: its length lies within the buffer (or the
 * parent) and, for a composite, every sub-frame at every depth fits inside its
 * parent, nesting no deeper than ADF_MAX_DEPTH.  After an error the iterator
 * stays at the bad frame and keeps returning the same code; it never reads
 * outside [buf, buf + size).  A frame that runs past the end is ADF_E_PAST_END
 * at the top level and ADF_E_SUB_OVERRUN in an iterator over a composite's
 * payload (adf_iter_sub) or inside a composite; err_offset is then the offset
 * of the deepest offending frame.  Fewer than 20 bytes left at the end of a
 * buffer count as a frame running past it.
 */
typedef struct adf_frame {
    adf_key key;
    const uint8_t *data;    /* the frame, key first; key.length bytes */
    const uint8_t *payload; /* data + 20 */
    uint32_t payload_size;  /* key.length - 20 */
    size_t offset;          /* of the frame within the outermost buffer */
    int depth;              /* 0 for top-level frames */
} adf_frame;

typedef struct adf_iter {
    const uint8_t *buf;
    size_t size;
    size_t pos;
    size_t base_offset; /* offset of buf within the outermost buffer */
    int depth;
    int status;              /* sticky failure, else ADF_OK */
    size_t err_offset;       /* where the offending frame starts (outermost offsets) */
    uint32_t err_length;     /* its length field */
    size_t err_room;         /* the bytes there were for it */
    int err_depth;           /* its depth (0 for a top-level frame) */
} adf_iter;

void adf_iter_init(adf_iter *it, const void *buf, size_t size);
/* Iterate the sub-frames of a composite frame returned by another iterator
 * (ADF_E_WRONG_ID if the parent is not composite). */
int adf_iter_sub(adf_iter *it, const adf_frame *parent);
int adf_iter_next(adf_iter *it, adf_frame *frame);
/* One line about the failure: "frame at offset 140: length 12 is below the 20-byte key". */
void adf_iter_describe(const adf_iter *it, char *msg, size_t len);
/* Validate a whole buffer; on failure returns the code and the offset of the bad frame
 * (size on success).  *frames counts the valid top-level frames before any failure.
 * Either pointer may be NULL.  A well-formed buffer takes one walk by the frames'
 * lengths (no iterator), fetching the lines ahead; a malformed one, the iterator's. */
int adf_validate(const void *buf, size_t size, size_t *bad_offset, size_t *frames);

/* ---- narwhal:crystal (ADF_ID_NW_CRYSTAL), Narwhal's layout -----------------
 *
 * Narwhal's data:crystal: one crystal's digitised event: energies from the digital filters and the
 * traces of every channel.  Channel c < n_channels - 1 is segment c (sector
 * s = c / 6 counting A..F, ring r = c % 6 counting front to back, as AGATA
 * numbers them: segment = 6 * sector + ring); channel n_channels - 1 is the core.
 *
 *   offset            type               field
 *   0                 u16                crystal id
 *   2                 u16                status (0 = good; bit 0: a trace clipped at the
 *                                        ADC's range; other bits reserved, 0)
 *   4                 u16                n_channels C (1..ADF_MAX_CHANNELS; 37 for AGATA)
 *   6                 u16                n_samples S per trace (1..ADF_MAX_SAMPLES)
 *   8                 f32                gain: trace ADC counts per keV
 *   12                f32 x C            energy of each channel, keV (core last)
 *   12 + 4C           i16 x C x S        traces, channel by channel, S samples each,
 *                                        baseline-subtracted ADC counts (10 ns samples)
 *   total payload:    12 + 4C + 2CS bytes (7,560 for C = 37, S = 100)
 */
#define ADF_MAX_CHANNELS 40
#define ADF_MAX_SAMPLES 512
#define ADF_CRYSTAL_FIXED 12u

typedef struct adf_crystal {
    uint16_t crystal_id;
    uint16_t status;
    uint16_t n_channels;
    uint16_t n_samples;
    float gain;
    float energy[ADF_MAX_CHANNELS];
    int16_t trace[ADF_MAX_CHANNELS][ADF_MAX_SAMPLES];
} adf_crystal;

size_t adf_crystal_payload_size(unsigned n_channels, unsigned n_samples);
/* Writes one complete data:crystal frame (key and payload). */
int adf_crystal_write(adf_writer *w, uint32_t event, uint64_t timestamp, const adf_crystal *c);
/* Decodes a data:crystal frame; ADF_E_WRONG_ID / ADF_E_PAYLOAD / ADF_E_LIMIT on mismatch
 * (a count outside 1..ADF_MAX_CHANNELS or 1..ADF_MAX_SAMPLES is ADF_E_LIMIT, here and
 * in adf_crystal_write). */
int adf_crystal_read(const adf_frame *f, adf_crystal *c);

/* ---- data:psa (ADF_ID_DATA_PSA), AGATA's layout --------------------------
 *
 *   offset  type   field (global part, 24 bytes)
 *   0       u16    crystal id
 *   2       u16    status
 *   4       f32    e0: core energy, keV (first gain)
 *   8       f32    e1: core energy, keV (second gain)
 *   12      f32    t0: core time, ns
 *   16      f32    t1: second time (PSA start-time refinement), ns
 *   20      u16    psa status (0 = good)
 *   22      u16    number of hits H
 *   then per hit, 42 bytes at 24 + 42 h:
 *   +0      u16    hit status
 *   +2      i16    segment (0..35)
 *   +4      i16    crystal id
 *   +6      f32    x, mm, crystal frame
 *   +10     f32    y, mm
 *   +14     f32    z, mm
 *   +18     f32    e, keV
 *   +22     f32    t, ns
 *   +26     f32    tCCe  (trapping corrections: core, electrons)
 *   +30     f32    tCCh  (core, holes)
 *   +34     f32    tSGe  (segment, electrons)
 *   +38     f32    tSGh  (segment, holes)
 *   total payload: 24 + 42 H bytes.  A frame with H = 0 is valid: an event in
 *   which no segment passed the PSA threshold.
 */
#define ADF_PSA_GLOBAL 24u
#define ADF_PSA_HIT 42u
#define ADF_PSA_MAX_HITS 64

typedef struct adf_psa_hit {
    uint16_t status;
    int16_t segment;
    int16_t crystal_id;
    float x, y, z, e, t;
    float t_cc_e, t_cc_h, t_sg_e, t_sg_h;
} adf_psa_hit;

typedef struct adf_psa {
    uint16_t crystal_id;
    uint16_t status;
    float e0, e1, t0, t1;
    uint16_t psa_status;
    uint16_t n_hits;
    adf_psa_hit hit[ADF_PSA_MAX_HITS];
} adf_psa;

size_t adf_psa_payload_size(unsigned n_hits);
int adf_psa_write(adf_writer *w, uint32_t event, uint64_t timestamp, const adf_psa *p);
int adf_psa_read(const adf_frame *f, adf_psa *p);

/* ---- event:data:psa (ADF_ID_EVENT_DATA_PSA) --------------------------------
 * A composite whose payload is one data:psa frame per crystal of the event,
 * each with its own key (its own timestamp); nothing else.  Build it with
 * adf_begin(w, ADF_ID_EVENT_DATA_PSA, ...), adf_psa_write per crystal, adf_end.
 * adf_event_psa_read decodes up to max members into out[] and sets *n; a
 * member of another type is ADF_E_PAYLOAD, more than max is ADF_E_LIMIT, and a
 * member adf_psa_read refuses gives its code; *n counts the members decoded.
 */
int adf_event_psa_read(const adf_frame *f, adf_psa *out, unsigned max, unsigned *n);

/* ---- narwhal:tracked (ADF_ID_NW_TRACKED), Narwhal's layout -----------------
 *
 * Narwhal's data:tracked: the γ rays the tracker reconstructed in one event (lab frame, origin at the
 * target, mm; energies keV).
 *
 *   offset  type   field (header, 8 bytes)
 *   0       u16    number of γ rays G
 *   2       u16    status: 0 = good; 1 = too many points, not tracked (no γ);
 *                  2 = more γ than ADF_TRACKED_MAX, the lowest ranked left out
 *   4       f32    beta: v/c used for the Doppler correction (0 = none)
 *   then per γ, 44 bytes at 8 + 44 g:
 *   +0      f32    e: summed energy of its points, keV
 *   +4      f32    e_dc: Doppler-corrected energy (= e when beta is 0)
 *   +8      f32    fom: tracking figure of merit (higher is better, 0..1)
 *   +12     f32    x1, y1, z1: first interaction, lab frame, mm
 *   +24     f32    x2, y2, z2: second interaction (= first for a single point)
 *   +36     u16    number of points
 *   +38     u16    number of crystals the points lie in
 *   +40     u16    crystal id of the first point
 *   +42     u16    flags (ADF_TRACKED_*)
 *   total payload: 8 + 44 G bytes.
 */
#define ADF_TRACKED_HEADER 8u
#define ADF_TRACKED_GAMMA 44u
#define ADF_TRACKED_MAX 64
enum { ADF_TRACKED_SINGLE = 1u, ADF_TRACKED_PAIR = 2u };

typedef struct adf_gamma {
    float e, e_dc, fom;
    float x1, y1, z1, x2, y2, z2;
    uint16_t n_points, n_crystals, first_crystal, flags;
} adf_gamma;

typedef struct adf_tracked {
    uint16_t n_gammas;
    uint16_t status;
    float beta;
    adf_gamma gamma[ADF_TRACKED_MAX];
} adf_tracked;

size_t adf_tracked_payload_size(unsigned n_gammas);
int adf_tracked_write(adf_writer *w, uint32_t event, uint64_t timestamp, const adf_tracked *t);
int adf_tracked_read(const adf_frame *f, adf_tracked *t);

/* ---- narwhal:truth (ADF_ID_NW_TRUTH), Narwhal's layout ----------------------
 *
 * What really happened in one simulated event (actors/sim writes it, every
 * other actor passes it on untouched).  Same event number and timestamp as
 * the event's data:crystal frames, which follow it in the stream.
 * Lab frame: origin at the target, mm; crystal frame: detector/geometry.h.
 *
 *   offset  type   field (header, 8 bytes)
 *   0       u16    number of γ rays G emitted in the event
 *   2       u16    number of interactions N, all γ rays together
 *   4       f32    beta: v/c of the emitter along +z (0 = at rest)
 *   then per γ, 24 bytes at 8 + 24 g:
 *   +0      f32    e0: energy in the emitter's frame, keV
 *   +4      f32    e: energy in the lab (Doppler shifted; = e0 when beta is 0), keV
 *   +8      f32    dx, dy, dz: direction of emission, lab, unit vector
 *   +20     u16    flags (ADF_TRUTH_*)
 *   +22     u16    number of interactions of this γ (they sum to N)
 *   then per interaction, 40 bytes at 8 + 24 G + 40 i, γ by γ in order of
 *   emission (γ 0's interactions first), each γ's in the order they happened
 *   (the annihilation photons of a pair belong to the γ that made the pair):
 *   +0      u16    crystal id
 *   +2      u16    segment 0..35
 *   +4      u16    process: ADF_TRUTH_PHOTO, ADF_TRUTH_COMPTON or ADF_TRUTH_PAIR
 *                  (for packed deposits: the process of the first one)
 *   +6      u16    deposits packed into this interaction (1 = a single one)
 *   +8      f32    e: energy deposited, keV
 *   +12     f32    x, y, z: crystal frame, mm
 *   +24     f32    x, y, z: lab frame, mm
 *   +36     f32    t: ns from the first sample of the crystal's traces to the
 *                  start of its signal (0 when no traces were made)
 *   +40     u16    geometric segment 0..35: the segment whose volume holds x, y, z
 *   total payload: 8 + 24 G + 42 N bytes.
 *
 * The segment at +2 is the one that collects the interaction's charge: the
 * generator puts the energy there and its traces carry the net charge there
 * (in the basis it used; without a basis, the geometric one).  The two differ
 * where the field lines cross a segment's boundary (issue 15).
 * Layout 1 (frames written before issue 15) had 40-byte interactions without the
 * geometric segment: adf_truth_read still reads it, by its size
 * (8 + 24 G + 40 N), and gives the geometric segment as the segment at +2.
 *
 * adf_truth_read refuses G > ADF_TRUTH_MAX_GAMMAS or N > ADF_TRUTH_MAX_INTERACTIONS
 * (ADF_E_LIMIT), a payload of neither size, per-γ counts that do not sum to N,
 * a segment above 35, an unknown process or 0 deposits (ADF_E_PAYLOAD).
 * adf_truth_write refuses the same counts with ADF_E_LIMIT and the same
 * inconsistencies with ADF_E_ARG, before touching w.  adf_truth is large
 * (about 42 KiB): allocate it, do not put it on a small stack.
 */
#define ADF_TRUTH_HEADER 8u
#define ADF_TRUTH_GAMMA 24u
#define ADF_TRUTH_HIT 42u
#define ADF_TRUTH_HIT_V1 40u /* layout 1: read, never written */
#define ADF_TRUTH_MAX_GAMMAS 64
#define ADF_TRUTH_MAX_INTERACTIONS 1024
enum { ADF_TRUTH_PHOTO = 1, ADF_TRUTH_COMPTON = 2, ADF_TRUTH_PAIR = 3 };
enum {
    ADF_TRUTH_ABSORBED = 1u, /* the germanium took all of e */
    ADF_TRUTH_MISSED = 2u,   /* the γ never reached germanium */
    ADF_TRUTH_PAIRED = 4u,   /* a pair was made (its 511 keV photons are followed) */
};

typedef struct adf_truth_gamma {
    float e0, e;
    float dir[3];
    uint16_t flags;
    uint16_t n_interactions;
} adf_truth_gamma;

typedef struct adf_truth_hit {
    uint16_t crystal_id;
    uint16_t segment; /* collecting */
    uint16_t process;
    uint16_t deposits;
    float e;
    float pos[3]; /* crystal frame */
    float lab[3];
    float t;
    uint16_t geo_segment; /* geometric */
} adf_truth_hit;

typedef struct adf_truth {
    uint16_t n_gammas;
    uint16_t n_interactions;
    float beta;
    adf_truth_gamma gamma[ADF_TRUTH_MAX_GAMMAS];
    adf_truth_hit hit[ADF_TRUTH_MAX_INTERACTIONS];
} adf_truth;

size_t adf_truth_payload_size(unsigned n_gammas, unsigned n_interactions);
int adf_truth_write(adf_writer *w, uint32_t event, uint64_t timestamp, const adf_truth *t);
int adf_truth_read(const adf_frame *f, adf_truth *t);

/* ---- meta:eof (ADF_ID_META_EOF) ----------------------------------------------
 * Marks the end of a stream.  AGATA's id; the payload is Narwhal's, and AGATA's
 * readers do not know the frame, so an AGATA-readable file leaves it to its
 * Narwhal file (adf_narwhal_file).  Payload, 12 bytes:
 *   0  u32  frames that came before it in the stream
 *   4  u64  bytes that came before it in the stream
 */
#define ADF_EOF_PAYLOAD 12u
typedef struct adf_eof {
    uint32_t frames;
    uint64_t bytes;
} adf_eof;
int adf_eof_write(adf_writer *w, uint32_t event, uint64_t timestamp, const adf_eof *e);
int adf_eof_read(const adf_frame *f, adf_eof *e);

/* ---- meta:sync (ADF_ID_META_SYNC) --------------------------------------------
 * A producer's progress mark: the crystal's stream will hold no frame with a
 * timestamp below the key's, so an event builder merging several streams
 * can close its windows up to there even when the crystal is silent.
 * Payload (Narwhal's layout, under AGATA's id; an AGATA-readable file leaves
 * it to its Narwhal file, as meta:eof), 8 bytes:
 *   0  u16  crystal id of the stream
 *   2  u16  0 (reserved)
 *   4  u32  frames of the stream since the previous meta:sync
 */
#define ADF_SYNC_PAYLOAD 8u
typedef struct adf_sync {
    uint16_t crystal_id;
    uint32_t frames;
} adf_sync;
int adf_sync_write(adf_writer *w, uint32_t event, uint64_t timestamp, const adf_sync *s);
int adf_sync_read(const adf_frame *f, adf_sync *s);

/* ---- files ---------------------------------------------------------------
 * A file is frames back to back, exactly as in a buffer.
 *
 * Reading fills a caller's buffer with as many whole frames as fit; the file
 * position then stays at the first frame that did not.  A frame larger than
 * the whole buffer is ADF_E_TOO_BIG; a file that ends inside a key or a frame
 * is ADF_E_TRUNCATED; a length below 20 is ADF_E_SHORT.  In each case
 * adf_file_describe() names the file and the offset of the bad frame, and the
 * frames before it have been delivered.
 *
 * Precisely: a call that finds a problem after it has read some frames returns
 * ADF_OK with those frames; the next call returns the problem with *used = 0.
 * ADF_E_TRUNCATED, ADF_E_SHORT, ADF_E_IO and a bad composite (its sub-frames
 * are checked as adf_iter_next does, offsets of the file) stay: every later
 * read returns them.  ADF_E_TOO_BIG does not: adf_file_next_length() is the
 * capacity that frame needs, and a read with that much room delivers it.
 * Offsets are 64-bit; files of any size are read and written in one pass.
 * When opening fails *f is NULL and errno says why.
 */
typedef struct adf_file adf_file;

int adf_file_open_read(adf_file **f, const char *path);
/* Opens for writing; append != 0 keeps what the file holds. */
int adf_file_open_write(adf_file **f, const char *path, int append);
/* Reads whole frames into buf; *used = bytes delivered, 0 at the end of the file. */
int adf_file_read(adf_file *f, void *buf, size_t cap, size_t *used, size_t *frames);
/* Threads that copy a large read out of the page cache (ADF_FILE_READ_THREADS
 * when a file is opened; 1 to ADF_FILE_MAX_READ_THREADS): one thread copies a
 * few GB/s, a server's memory takes several times that.  The bytes delivered
 * do not depend on it.  ADF_E_ARG for a count out of range. */
#define ADF_FILE_READ_THREADS 4
#define ADF_FILE_MAX_READ_THREADS 64
int adf_file_set_read_threads(adf_file *f, unsigned threads);
/* Read-ahead (off when a file is opened): after each large read, a thread of
 * the file's own reads the bytes that follow into a buffer as large as that
 * read and finds their whole frames, while the caller works; the next large
 * read at that offset copies them from there instead of reading, and does
 * not walk the frames again.  The frames, offsets and errors
 * delivered do not change; the file costs one more such buffer.  Reads that
 * meet the end of the file are not used (the call reads).  ADF_E_NOMEM or
 * ADF_E_ARG (a file opened for writing). */
int adf_file_set_read_ahead(adf_file *f, int on);
/* A reading file's large reads so far: copied from a read ahead (taken),
 * read in the call although read-ahead is on (missed: the file's end,
 * another size or offset), the seconds waited for a read ahead to finish,
 * the seconds spent copying the bytes into the caller's buffer (pread or
 * the read ahead's copy, the wait included) and checking their frames. */
typedef struct adf_read_stats {
    unsigned long long taken, missed;
    double waited, copying, checking;
} adf_read_stats;
void adf_file_read_stats(const adf_file *f, adf_read_stats *out);
/* Appends bytes that hold whole frames (validated first: a bad buffer writes nothing). */
int adf_file_write(adf_file *f, const void *buf, size_t size);
/* Reading: the offset of the next frame to deliver; writing: the size of the file. */
uint64_t adf_file_offset(const adf_file *f);
/* The length of the frame at the current offset once a read has seen its key
 * (after ADF_E_TOO_BIG: the capacity it needs), else 0. */
size_t adf_file_next_length(const adf_file *f);
void adf_file_describe(const adf_file *f, int status, char *msg, size_t len);
/* Flushes and closes (f is freed in every case); returns the first write/flush error, if any. */
int adf_file_close(adf_file *f);

/* Memory for a large block of frames (a host's buffers, a read ahead, a
 * GPU's staging): page aligned, zero-filled, and for 2 MiB and more aligned to
 * 2 MiB and advised onto the kernel's transparent huge pages, where the
 * kernel has them (enabled "always" or "madvise").  A walk over a block's keys
 * touches a new 4 KiB page at each frame of traces (5 KiB a crystal-event);
 * on 2 MiB pages those touches stop missing the TLB.  NARWHAL_HUGE_PAGES=off
 * in the environment keeps base pages.  NULL when memory is short.  Freed
 * with adf_block_free (which takes NULL), never with free. */
void *adf_block_alloc(size_t size);
void adf_block_free(void *p);

/* Reading a whole file, for programs that look at every frame (dump, summary):
 * fn is called with each chunk of whole top-level frames, already checked as
 * adf_file_read checks them (composites included), and the file offset of
 * the first; it returns 0 to go on, anything else to stop the scan (which
 * then returns ADF_OK).  The chunk buffer grows for a frame larger than it,
 * up to max_frame bytes.  A file that cannot be opened is ADF_E_IO (errno
 * kept); a bad or truncated frame is its adf_file_read code and one above
 * max_frame ADF_E_LIMIT, after the frames before it were handed over; msg
 * then names the file and the offset. */
typedef int adf_scan_fn(void *ctx, const uint8_t *buf, size_t used, uint64_t base);
int adf_file_scan(const char *path, size_t max_frame, adf_scan_fn *fn, void *ctx, char *msg, size_t len);

/* ---- AGATA-readable files and their Narwhal file ----------------------------
 * Readers of AGATA's data (its own tools, converters such as GRETINA's
 * ag2mode2) stop at the first frame whose key id they do not know, and read a
 * known id with AGATA's layout.  So a chain that writes for them puts in its
 * file only frames whose id AGATA defines with the layout Narwhal writes
 * (data:psa, event:data:psa: the ids listed first in enum adf_id), and
 * Narwhal's own frames (narwhal:truth, narwhal:crystal, narwhal:tracked, and
 * meta:eof and meta:sync, whose payloads are Narwhal's) in a second file beside
 * it (adf_writer's Keys and OtherFile).  That file's name is the data file's
 * with ".narwhal" before its extension (from the last '.' of the file's own
 * name, a leading '.' excepted), or appended when it has none:
 *   output.adf -> output.narwhal.adf,  run%03d.adf -> run%03d.narwhal.adf,
 *   out -> out.narwhal.
 * `narwhal summary DATA` reads the pair when that file exists.  The frames of
 * the two files together are the chain's stream, each file in stream order;
 * the order between the two is not kept (pair frames by event number and
 * timestamp).  malloc'd; NULL when path is NULL or memory is short. */
#define ADF_NARWHAL_SUFFIX ".narwhal"
char *adf_narwhal_file(const char *path);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif

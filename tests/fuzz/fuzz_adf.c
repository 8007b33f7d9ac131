/* fuzz_adf.c: libFuzzer target: libadf on untrusted buffers: the iterator, the decoders and back through the writer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adf.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_adf: invariant broken at line %d: %s\n", __LINE__, #cond); \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Large decode targets live outside the stack. */
static adf_crystal crystal;
static adf_psa psa[ADF_PSA_MAX_HITS];
static adf_tracked tracked;

static uint64_t hash(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* Re-encodes a decoded frame into a buffer of exactly its length; the bytes must come back unchanged. */
static void check_reencoded(const adf_frame *f, int (*encode)(adf_writer *, const adf_frame *))
{
    uint8_t *out = malloc(f->key.length);
    adf_writer w;
    CHECK(out != NULL);
    adf_writer_init(&w, out, f->key.length);
    CHECK(encode(&w, f) == ADF_OK);
    CHECK(w.used == f->key.length && adf_writer_needed(&w) == f->key.length);
    CHECK(memcmp(out, f->data, f->key.length) == 0);
    free(out);
}

static int encode_crystal(adf_writer *w, const adf_frame *f) { return adf_crystal_write(w, f->key.event, f->key.timestamp, &crystal); }
static int encode_psa(adf_writer *w, const adf_frame *f) { return adf_psa_write(w, f->key.event, f->key.timestamp, &psa[0]); }
static int encode_tracked(adf_writer *w, const adf_frame *f) { return adf_tracked_write(w, f->key.event, f->key.timestamp, &tracked); }

static adf_eof eof;
static int encode_eof(adf_writer *w, const adf_frame *f) { return adf_eof_write(w, f->key.event, f->key.timestamp, &eof); }

/* The decoders must agree with the frame's size; any frame they accept re-encodes to itself. */
static void decode(const adf_frame *f)
{
    int rc;
    unsigned n = 0;
    if ((rc = adf_crystal_read(f, &crystal)) == ADF_OK)
        check_reencoded(f, encode_crystal);
    else
        CHECK(rc == ADF_E_WRONG_ID || rc == ADF_E_PAYLOAD || rc == ADF_E_LIMIT);
    if ((rc = adf_psa_read(f, &psa[0])) == ADF_OK)
        check_reencoded(f, encode_psa);
    else
        CHECK(rc == ADF_E_WRONG_ID || rc == ADF_E_PAYLOAD || rc == ADF_E_LIMIT);
    if ((rc = adf_tracked_read(f, &tracked)) == ADF_OK)
        check_reencoded(f, encode_tracked);
    else
        CHECK(rc == ADF_E_WRONG_ID || rc == ADF_E_PAYLOAD || rc == ADF_E_LIMIT);
    if ((rc = adf_eof_read(f, &eof)) == ADF_OK)
        check_reencoded(f, encode_eof);
    else
        CHECK(rc == ADF_E_WRONG_ID || rc == ADF_E_PAYLOAD);
    rc = adf_event_psa_read(f, psa, ADF_PSA_MAX_HITS, &n);
    CHECK(n <= ADF_PSA_MAX_HITS);
    if (rc == ADF_OK)
        CHECK(f->key.id == ADF_ID_EVENT_DATA_PSA && n * (ADF_KEY_SIZE + ADF_PSA_GLOBAL) <= f->payload_size);
}

/* Rebuilds a frame through begin / put_frame / end; the result must equal the original. */
static void rebuild(adf_writer *w, const adf_frame *f)
{
    adf_iter sub;
    adf_frame s;
    if (adf_iter_sub(&sub, f) != ADF_OK) {
        adf_put_frame(w, f->data, f->key.length);
        return;
    }
    adf_begin(w, f->key.id, f->key.event, f->key.timestamp);
    while (adf_iter_next(&sub, &s) > 0)
        rebuild(w, &s);
    adf_end(w);
}

static void check_rebuild(const adf_frame *f, size_t cap)
{
    uint8_t *out = malloc(cap ? cap : 1); /* exactly cap: ASan sees any write past it */
    adf_writer w;
    CHECK(out != NULL);
    adf_writer_init(&w, out, cap);
    rebuild(&w, f);
    CHECK(w.depth == 0 && adf_writer_needed(&w) == f->key.length);
    if (cap >= f->key.length) {
        CHECK(w.status == ADF_OK && w.used == f->key.length);
        CHECK(memcmp(out, f->data, f->key.length) == 0);
    } else {
        CHECK(w.status == ADF_E_NOSPACE && w.used == 0);
    }
    free(out);
}

/* Walks the frames of one level and every level below; every frame handed out lies inside its parent. */
static void walk(adf_iter *it, const uint8_t *lo, const uint8_t *parent, size_t parent_size)
{
    adf_frame f;
    adf_iter sub;
    int rc;
    while ((rc = adf_iter_next(it, &f)) > 0) {
        CHECK(f.data >= parent && f.data + f.key.length <= parent + parent_size);
        CHECK(f.offset == (size_t)(f.data - lo) && f.key.length >= ADF_KEY_SIZE);
        CHECK(f.depth < ADF_MAX_DEPTH && f.payload == f.data + ADF_KEY_SIZE);
        decode(&f);
        if (adf_iter_sub(&sub, &f) == ADF_OK)
            walk(&sub, lo, f.payload, f.payload_size);
    }
    CHECK(rc == 0); /* a frame handed out has been validated at every depth */
}

/* Copies the valid frames into a writer of a random capacity: it holds exactly the prefix that fits. */
static void check_copy(const uint8_t *data, size_t size, size_t cap)
{
    uint8_t *out = malloc(cap ? cap : 1);
    adf_writer w;
    adf_iter it;
    adf_frame f;
    size_t total = 0, fitting = 0, n_fitting = 0, n_out = 0;
    CHECK(out != NULL);
    adf_writer_init(&w, out, cap);
    adf_iter_init(&it, data, size);
    while (adf_iter_next(&it, &f) > 0) {
        int rc = adf_put_frame(&w, f.data, f.key.length);
        total += f.key.length;
        if (rc == ADF_OK && total <= cap) {
            fitting = total;
            n_fitting++;
        } else {
            CHECK(rc == ADF_E_NOSPACE);
        }
    }
    CHECK(adf_writer_needed(&w) == total && w.used == fitting && w.used <= cap);
    CHECK(adf_validate(out, w.used, NULL, &n_out) == 0 && n_out == n_fitting);
    CHECK(memcmp(out, data, w.used) == 0);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    adf_iter it;
    adf_frame f;
    size_t n = 0, bad = 0, counted = 0;
    int rc;
    char msg[200];
    uint64_t h = hash(data, size);

    adf_iter_init(&it, data, size);
    while ((rc = adf_iter_next(&it, &f)) > 0) {
        adf_iter sub;
        n++;
        CHECK(f.data >= data && f.data + f.key.length <= data + size && f.depth == 0);
        decode(&f);
        if (adf_iter_sub(&sub, &f) == ADF_OK)
            walk(&sub, data, f.payload, f.payload_size);
        check_rebuild(&f, (h >> 8) % (f.key.length + 1 + (h & 1 ? 16 : 0)));
    }
    CHECK(rc == 0 || rc == ADF_E_SHORT || rc == ADF_E_PAST_END || rc == ADF_E_SUB_OVERRUN || rc == ADF_E_TOO_DEEP);
    CHECK(adf_iter_next(&it, &f) == rc); /* sticky */
    CHECK(adf_validate(data, size, &bad, &counted) == rc && counted == n);
    if (rc < 0) {
        CHECK(bad == it.err_offset && bad < size);
        adf_iter_describe(&it, msg, sizeof msg);
        CHECK(strstr(msg, "offset") != NULL && strlen(msg) < sizeof msg);
    } else {
        CHECK(bad == size);
    }
    check_copy(data, size, (h & 3) == 0 ? size : (size_t)((h >> 16) % (size + 1)));
    return 0;
}

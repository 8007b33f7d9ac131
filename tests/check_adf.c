/* check_adf.c: Check suite for libadf in memory: keys and ids, the writer's limits, the iterator's errors, payload codecs. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adf.h"
#include "testkit.h"

/* ---- helpers */

static char hex_buf[512];

static const char *hex(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n && 2 * i + 2 < sizeof hex_buf; i++)
        snprintf(hex_buf + 2 * i, 3, "%02x", p[i]);
    return hex_buf;
}

/* A raw key at p, for crafting frames the writer would refuse to make. */
static void raw_key(uint8_t *p, uint32_t length, uint32_t id)
{
    adf_key k = {length, id, 7, 1000};
    adf_key_encode(p, &k);
}

static void fill_psa(adf_psa *p, unsigned crystal, unsigned n_hits)
{
    memset(p, 0, sizeof *p);
    p->crystal_id = (uint16_t)crystal;
    p->status = 3;
    p->e0 = 1332.5f;
    p->e1 = 1332.25f;
    p->t0 = 12.5f;
    p->t1 = -3.75f;
    p->psa_status = 1;
    p->n_hits = (uint16_t)n_hits;
    for (unsigned h = 0; h < n_hits; h++) {
        adf_psa_hit *x = &p->hit[h];
        x->status = (uint16_t)(h + 1);
        x->segment = (int16_t)(h % 36);
        x->crystal_id = (int16_t)crystal;
        x->x = -10.5f + (float)h;
        x->y = 20.25f;
        x->z = 45.0f + (float)h;
        x->e = 100.0f * (float)(h + 1);
        x->t = 5.5f;
        x->t_cc_e = 0.125f;
        x->t_cc_h = 0.25f;
        x->t_sg_e = 0.5f;
        x->t_sg_h = -1.0f;
    }
}

static void assert_psa_eq(const adf_psa *a, const adf_psa *b)
{
    ck_assert_uint_eq(a->crystal_id, b->crystal_id);
    ck_assert_uint_eq(a->status, b->status);
    ck_assert(a->e0 == b->e0 && a->e1 == b->e1 && a->t0 == b->t0 && a->t1 == b->t1);
    ck_assert_uint_eq(a->psa_status, b->psa_status);
    ck_assert_uint_eq(a->n_hits, b->n_hits);
    for (unsigned h = 0; h < a->n_hits; h++) {
        const adf_psa_hit *x = &a->hit[h], *y = &b->hit[h];
        ck_assert(x->status == y->status && x->segment == y->segment && x->crystal_id == y->crystal_id);
        ck_assert(x->x == y->x && x->y == y->y && x->z == y->z && x->e == y->e && x->t == y->t);
        ck_assert(x->t_cc_e == y->t_cc_e && x->t_cc_h == y->t_cc_h && x->t_sg_e == y->t_sg_e && x->t_sg_h == y->t_sg_h);
    }
}

/* event:data:psa with members of 1, 2 and 3 hits: 20 + 86 + 128 + 170 = 404 bytes. */
#define EVENT_PSA_SIZE 404u
static int write_event_psa(adf_writer *w)
{
    adf_psa p;
    adf_begin(w, ADF_ID_EVENT_DATA_PSA, 42, 0x123456789ull);
    for (unsigned m = 0; m < 3; m++) {
        fill_psa(&p, 10 + m, m + 1);
        adf_psa_write(w, 42, 0x123456789ull + m, &p);
    }
    return adf_end(w);
}

static size_t first_frame(const uint8_t *buf, size_t size, adf_frame *f)
{
    adf_iter it;
    adf_iter_init(&it, buf, size);
    ck_assert_int_eq(adf_iter_next(&it, f), 1);
    return f->key.length;
}

/* ---- keys, ids, fields */

START_TEST(test_key_bytes)
{
    adf_key k = {0x1234, ADF_ID_DATA_PSA, 0xA1B2C3D4u, 0x0000123456789ABCull}, back;
    uint8_t raw[ADF_KEY_SIZE];
    adf_key_encode(raw, &k);
    ck_assert_str_eq(hex(raw, sizeof raw), "34120000020101fad4c3b2a1bc9a785634120000");
    adf_key_decode(raw, &back);
    ck_assert_uint_eq(back.length, 0x1234);
    ck_assert_uint_eq(back.id, ADF_ID_DATA_PSA);
    ck_assert_uint_eq(back.event, 0xA1B2C3D4u);
    ck_assert_uint_eq(back.timestamp, 0x0000123456789ABCull);
}
END_TEST

START_TEST(test_id_names)
{
    static const struct {
        uint32_t id;
        const char *name;
        int composite;
    } t[] = {
        {ADF_ID_AGATA_CRYSTAL, "data:crystal", 0},        {ADF_ID_DATA_PSA, "data:psa", 0},
        {ADF_ID_DATA_EB, "data:eb", 0},                    {ADF_ID_DATA_MERGER, "data:merger", 0},
        {ADF_ID_AGATA_TRACKED, "data:tracked", 0},        {ADF_ID_EVENT_DATA, "event:data", 1},
        {ADF_ID_EVENT_DATA_CRYSTAL, "event:data:crystal", 1}, {ADF_ID_EVENT_DATA_PSA, "event:data:psa", 1},
        {ADF_ID_EVENT_DATA_TRACKED, "event:data:tracked", 1}, {ADF_ID_CONF_GLOBAL, "conf:global", 0},
        {ADF_ID_CONF_CRYSTAL, "conf:crystal", 0},          {ADF_ID_CONF_PSA, "conf:psa", 0},
        {ADF_ID_CONF_TRACKED, "conf:tracked", 0},          {ADF_ID_META_EOF, "meta:eof", 0},
        {ADF_ID_META_SYNC, "meta:sync", 0},                {ADF_ID_META_VERTEX, "meta:vertex", 0},
        {ADF_ID_AGATA_CCRYSTAL, "data:ccrystal", 0},      {ADF_ID_CONF_EB, "conf:eb", 0},
        {ADF_ID_CONF_MERGER, "conf:merger", 0},
        {0xFA0201A0u, "data:ranc0", 0},                    {0xFA0201A1u, "data:ranc1", 0},
        {0xFA0201A2u, "data:ranc2", 0},                    {0xFA0202A0u, "conf:ranc0", 0},
        {0xFA0202A1u, "conf:ranc1", 0},                    {0xFA0202A2u, "conf:ranc2", 0},
        {ADF_ID_NW_TRUTH, "narwhal:truth", 0},             {0x4E570101u, "narwhal:crystal", 0},
        {0x4E570105u, "narwhal:tracked", 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        ck_assert_str_eq(adf_id_name(t[i].id), t[i].name);
        ck_assert_uint_eq(adf_id_from_name(t[i].name), t[i].id);
        ck_assert_int_eq(adf_id_is_composite(t[i].id) != 0, t[i].composite);
    }
    ck_assert_uint_eq(ADF_ID_AGATA_CRYSTAL, 0xFA010101u);
    ck_assert_uint_eq(ADF_ID_NW_CRYSTAL, 0x4E570101u);
    ck_assert_uint_eq(ADF_ID_NW_TRACKED, 0x4E570105u);
    ck_assert_uint_eq(ADF_ID_EVENT_DATA_PSA, 0xCA010102u);
    ck_assert_uint_eq(ADF_ID_META_EOF, 0xFA001100u);
    ck_assert_ptr_null(adf_id_name(0x12345678u));
    ck_assert_uint_eq(adf_id_from_name("data:nothing"), 0);
    ck_assert_uint_eq(adf_id_from_name(NULL), 0);
}
END_TEST

START_TEST(test_fields_little_endian)
{
    uint8_t b[9] = {0};
    adf_put_f32(b + 1, 1.0f); /* odd address on purpose */
    ck_assert_str_eq(hex(b + 1, 4), "0000803f");
    ck_assert(adf_get_f32(b + 1) == 1.0f);
    adf_put_u64(b + 1, 0x0102030405060708ull);
    ck_assert_str_eq(hex(b + 1, 8), "0807060504030201");
    adf_put_u16(b + 1, 0xFFFE);
    ck_assert_int_eq(adf_get_i16(b + 1), -2);
}
END_TEST

START_TEST(test_strerror_distinct)
{
    for (int a = ADF_E_LIMIT; a <= ADF_OK; a++)
        for (int b = ADF_E_LIMIT; b < a; b++)
            ck_assert_str_ne(adf_strerror(a), adf_strerror(b));
    ck_assert_str_eq(adf_strerror(-99), "unknown libadf status");
}
END_TEST

/* ---- writer */

START_TEST(test_writer_frame_bytes)
{
    uint8_t buf[64];
    adf_writer w;
    adf_writer_init(&w, buf, sizeof buf);
    ck_assert_int_eq(adf_begin(&w, ADF_ID_META_SYNC, 5, 0x0A0B), ADF_OK);
    ck_assert_int_eq(adf_put_le16(&w, 0xBEEF), ADF_OK);
    ck_assert_int_eq(adf_put_le32(&w, 0x01020304), ADF_OK);
    ck_assert_int_eq(adf_put_le64(&w, 7), ADF_OK);
    ck_assert_int_eq(adf_put_lef32(&w, -2.0f), ADF_OK);
    ck_assert_int_eq(adf_put(&w, "xy", 2), ADF_OK);
    ck_assert_int_eq(adf_end(&w), ADF_OK);
    ck_assert_uint_eq(w.used, 40);
    ck_assert_uint_eq(adf_writer_needed(&w), 40);
    ck_assert_str_eq(hex(buf, 40), "28000000011101fa050000000b0a000000000000"
                                   "efbe040302010700000000000000000000c07879");
}
END_TEST

/* Every capacity from 0 to past the full size: a complete meta:eof, then a composite. */
START_TEST(test_writer_every_capacity)
{
    const size_t eof_size = ADF_KEY_SIZE + ADF_EOF_PAYLOAD, full = eof_size + EVENT_PSA_SIZE;
    uint8_t *ref = malloc(full), *mem = malloc(full + 64);
    adf_writer w;
    adf_eof e = {3, 99};
    adf_writer_init(&w, ref, full);
    adf_eof_write(&w, 1, 2, &e);
    ck_assert_int_eq(write_event_psa(&w), ADF_OK);
    ck_assert_uint_eq(w.used, full);
    for (size_t cap = 0; cap <= full + 2; cap++) {
        uint8_t *buf = mem + 1; /* odd address */
        memset(mem, 0xA5, full + 64);
        adf_writer_init(&w, buf, cap);
        int rc_eof = adf_eof_write(&w, 1, 2, &e);
        int rc = write_event_psa(&w);
        ck_assert_uint_eq(adf_writer_needed(&w), full);
        for (size_t i = cap; i < full + 63; i++)
            ck_assert_msg(buf[i] == 0xA5, "cap %zu: byte %zu written past the capacity", cap, i);
        if (cap >= full) {
            ck_assert_int_eq(rc, ADF_OK);
            ck_assert_uint_eq(w.used, full);
            ck_assert_mem_eq(buf, ref, full);
        } else {
            ck_assert_int_eq(rc, ADF_E_NOSPACE);
            ck_assert_int_eq(w.status, ADF_E_NOSPACE);
            ck_assert_int_eq(rc_eof, cap >= eof_size ? ADF_OK : ADF_E_NOSPACE);
            ck_assert_uint_eq(w.used, cap >= eof_size ? eof_size : 0);
            ck_assert_int_eq(adf_validate(buf, w.used, NULL, NULL), 0);
            ck_assert_mem_eq(buf, ref, w.used);
        }
        ck_assert_int_eq(w.depth, 0);
    }
    free(ref);
    free(mem);
}
END_TEST

START_TEST(test_writer_sticky_and_clear)
{
    uint8_t buf[100];
    adf_writer w;
    adf_eof e = {0, 0};
    adf_writer_init(&w, buf, sizeof buf);
    ck_assert_int_eq(adf_eof_write(&w, 1, 1, &e), ADF_OK);
    ck_assert_int_eq(adf_begin(&w, ADF_ID_META_SYNC, 2, 2), ADF_OK);
    ck_assert_int_eq(adf_put(&w, buf, 60), ADF_E_NOSPACE);
    ck_assert_uint_eq(w.used, 32); /* rolled back at once to the open frame's start */
    ck_assert_int_eq(adf_put_le16(&w, 1), ADF_E_NOSPACE);
    ck_assert_int_eq(adf_end(&w), ADF_E_NOSPACE);
    ck_assert_int_eq(adf_eof_write(&w, 3, 3, &e), ADF_E_NOSPACE); /* fits, but the failure stays */
    ck_assert_uint_eq(w.used, 32);
    ck_assert_uint_eq(adf_writer_needed(&w), 32 + 20 + 60 + 2 + 32);
    adf_writer_clear_error(&w);
    ck_assert_int_eq(adf_eof_write(&w, 4, 4, &e), ADF_OK);
    ck_assert_uint_eq(w.used, 64);
    ck_assert_uint_eq(adf_writer_needed(&w), 32 + 20 + 60 + 2 + 32 + 32);
    size_t frames = 0;
    ck_assert_int_eq(adf_validate(buf, w.used, NULL, &frames), 0);
    ck_assert_uint_eq(frames, 2);
    ck_assert_uint_eq(adf_get_u32(buf + 32 + 8), 4); /* event number of the frame written after clearing */
}
END_TEST

/* The README's pass-through filter: carry on after the failure to learn the size needed. */
START_TEST(test_writer_needed_pass_through)
{
    uint8_t src[EVENT_PSA_SIZE * 3], out[500];
    adf_writer w;
    adf_writer_init(&w, src, sizeof src);
    for (int i = 0; i < 3; i++)
        write_event_psa(&w);
    ck_assert_int_eq(w.status, ADF_OK);
    adf_iter it;
    adf_frame f;
    adf_iter_init(&it, src, w.used);
    adf_writer_init(&w, out, sizeof out);
    int rc, n = 0;
    while ((rc = adf_iter_next(&it, &f)) > 0)
        ck_assert_int_eq(adf_put_frame(&w, f.data, f.key.length), ++n == 1 ? ADF_OK : ADF_E_NOSPACE);
    ck_assert_int_eq(rc, 0);
    ck_assert_uint_eq(adf_writer_needed(&w), sizeof src);
    ck_assert_uint_eq(w.used, EVENT_PSA_SIZE);
}
END_TEST

START_TEST(test_writer_measuring_only)
{
    adf_writer w;
    adf_writer_init(&w, NULL, 0);
    ck_assert_int_eq(write_event_psa(&w), ADF_E_NOSPACE);
    ck_assert_uint_eq(adf_writer_needed(&w), EVENT_PSA_SIZE);
    ck_assert_uint_eq(w.used, 0);
}
END_TEST

START_TEST(test_writer_nesting_errors)
{
    uint8_t buf[400];
    adf_writer w;
    adf_writer_init(&w, buf, sizeof buf);
    ck_assert_int_eq(adf_end(&w), ADF_E_NESTING);
    ck_assert_int_eq(w.status, ADF_E_NESTING);

    adf_writer_init(&w, buf, sizeof buf);
    ck_assert_int_eq(adf_put_le32(&w, 1), ADF_E_NESTING); /* payload bytes outside any frame */

    adf_writer_init(&w, buf, sizeof buf);
    ck_assert_int_eq(adf_begin(&w, ADF_ID_DATA_PSA, 1, 1), ADF_OK);
    ck_assert_int_eq(adf_begin(&w, ADF_ID_DATA_PSA, 1, 1), ADF_E_NESTING);
    ck_assert_uint_eq(w.used, 0);
    ck_assert_int_eq(adf_end(&w), ADF_E_NESTING);
    ck_assert_int_eq(adf_end(&w), ADF_E_NESTING);
    ck_assert_int_eq(w.depth, 0);

    adf_writer_init(&w, buf, sizeof buf);
    adf_begin(&w, ADF_ID_NW_TRACKED, 1, 1);
    uint8_t frame[ADF_KEY_SIZE];
    raw_key(frame, ADF_KEY_SIZE, ADF_ID_META_SYNC);
    ck_assert_int_eq(adf_put_frame(&w, frame, sizeof frame), ADF_E_NESTING);

    adf_writer_init(&w, buf, sizeof buf);
    for (int d = 0; d < ADF_MAX_DEPTH; d++)
        ck_assert_int_eq(adf_begin(&w, ADF_ID_EVENT_DATA, 1, 1), ADF_OK);
    ck_assert_int_eq(adf_begin(&w, ADF_ID_META_SYNC, 1, 1), ADF_E_NESTING);
    ck_assert_uint_eq(w.used, 0);

    adf_writer_init(&w, buf, sizeof buf);
    for (int d = 0; d < ADF_MAX_DEPTH; d++)
        adf_begin(&w, ADF_ID_EVENT_DATA, 1, 1);
    adf_begin(&w, ADF_ID_EVENT_DATA, 1, 1);
    adf_end(&w); /* no-op on a failed writer beyond its depth bookkeeping */
    ck_assert_int_eq(w.status, ADF_E_NESTING);
}
END_TEST

START_TEST(test_writer_deepest_nesting_validates)
{
    uint8_t buf[200];
    adf_writer w;
    adf_writer_init(&w, buf, sizeof buf);
    for (int d = 0; d < ADF_MAX_DEPTH - 1; d++)
        adf_begin(&w, ADF_ID_EVENT_DATA, 1, 1);
    adf_begin(&w, ADF_ID_META_SYNC, 1, 1);
    adf_put_le32(&w, 0xDEADBEEF);
    for (int d = 0; d < ADF_MAX_DEPTH; d++)
        ck_assert_int_eq(adf_end(&w), ADF_OK);
    ck_assert_uint_eq(w.used, 84);
    ck_assert_str_eq(hex(buf, 4), "54000000");
    ck_assert_str_eq(hex(buf + 60, 4), "18000000");
    size_t bad, frames;
    ck_assert_int_eq(adf_validate(buf, w.used, &bad, &frames), 0);
    ck_assert_uint_eq(bad, 84);
    ck_assert_uint_eq(frames, 1);
}
END_TEST

START_TEST(test_put_frame_checks)
{
    uint8_t buf[200], frame[60];
    adf_writer w;

    raw_key(frame, 40, ADF_ID_META_SYNC); /* length field says 40, caller says 60 */
    adf_writer_init(&w, buf, sizeof buf);
    ck_assert_int_eq(adf_put_frame(&w, frame, 60), ADF_E_ARG);

    raw_key(frame, 60, ADF_ID_EVENT_DATA);
    raw_key(frame + 20, 41, ADF_ID_META_SYNC); /* one byte past its parent */
    adf_writer_init(&w, buf, sizeof buf);
    ck_assert_int_eq(adf_put_frame(&w, frame, 60), ADF_E_SUB_OVERRUN);
    ck_assert_uint_eq(w.used, 0);

    /* a composite holding a composite is fine at the top, too deep three levels down */
    raw_key(frame, 60, ADF_ID_EVENT_DATA);
    raw_key(frame + 20, 40, ADF_ID_EVENT_DATA);
    raw_key(frame + 40, 20, ADF_ID_META_SYNC);
    adf_writer_init(&w, buf, sizeof buf);
    ck_assert_int_eq(adf_put_frame(&w, frame, 60), ADF_OK);
    ck_assert_mem_eq(buf, frame, 60);
    adf_writer_init(&w, buf, sizeof buf);
    adf_begin(&w, ADF_ID_EVENT_DATA, 1, 1);
    adf_begin(&w, ADF_ID_EVENT_DATA, 1, 1);
    ck_assert_int_eq(adf_put_frame(&w, frame, 60), ADF_E_TOO_DEEP);
    ck_assert_uint_eq(w.used, 0);
}
END_TEST

/* ---- iterator */

/* [sync 24][event:data 20+(psa-like 30)+(event:data 20+(sync 20))][eof 32] = 146 bytes */
static size_t good_stream(uint8_t *b)
{
    memset(b, 0, 146);
    raw_key(b, 24, ADF_ID_META_SYNC);
    adf_put_u32(b + 20, 0xAABBCCDD);
    raw_key(b + 24, 90, ADF_ID_EVENT_DATA);
    raw_key(b + 44, 30, ADF_ID_DATA_EB);
    raw_key(b + 74, 40, ADF_ID_EVENT_DATA);
    raw_key(b + 94, 20, ADF_ID_META_SYNC);
    raw_key(b + 114, 32, ADF_ID_META_EOF);
    return 146;
}

START_TEST(test_iter_walks_and_descends)
{
    uint8_t mem[200], *b = mem + 3;
    size_t size = good_stream(b);
    adf_iter it, sub, subsub;
    adf_frame f, s, ss;
    adf_iter_init(&it, b, size);
    ck_assert_int_eq(adf_iter_next(&it, &f), 1);
    ck_assert_uint_eq(f.key.id, ADF_ID_META_SYNC);
    ck_assert_uint_eq(f.payload_size, 4);
    ck_assert_uint_eq(adf_get_u32(f.payload), 0xAABBCCDD);
    ck_assert_int_eq(adf_iter_sub(&sub, &f), ADF_E_WRONG_ID);
    ck_assert_int_eq(adf_iter_next(&it, &f), 1);
    ck_assert_uint_eq(f.offset, 24);
    ck_assert_int_eq(adf_iter_sub(&sub, &f), ADF_OK);
    ck_assert_int_eq(adf_iter_next(&sub, &s), 1);
    ck_assert_uint_eq(s.key.id, ADF_ID_DATA_EB);
    ck_assert_uint_eq(s.offset, 44);
    ck_assert_int_eq(s.depth, 1);
    ck_assert_int_eq(adf_iter_next(&sub, &s), 1);
    ck_assert_uint_eq(s.offset, 74);
    ck_assert_int_eq(adf_iter_sub(&subsub, &s), ADF_OK);
    ck_assert_int_eq(adf_iter_next(&subsub, &ss), 1);
    ck_assert_uint_eq(ss.offset, 94);
    ck_assert_int_eq(ss.depth, 2);
    ck_assert_uint_eq(ss.payload_size, 0);
    ck_assert_int_eq(adf_iter_next(&subsub, &ss), 0);
    ck_assert_int_eq(adf_iter_next(&sub, &s), 0);
    ck_assert_int_eq(adf_iter_next(&it, &f), 1);
    ck_assert_uint_eq(f.key.id, ADF_ID_META_EOF);
    ck_assert_ptr_eq(f.data, b + 114);
    ck_assert_int_eq(adf_iter_next(&it, &f), 0);
    ck_assert_int_eq(adf_iter_next(&it, &f), 0);
}
END_TEST

/* Runs an iterator to its first failure; checks the code, stickiness, frames before it and the message. */
static void expect_error(const uint8_t *b, size_t size, int code, size_t frames_before, size_t offset,
                         const char *text)
{
    adf_iter it;
    adf_frame f;
    char msg[160];
    size_t n = 0, bad = 0, counted = 0;
    int rc;
    adf_iter_init(&it, b, size);
    while ((rc = adf_iter_next(&it, &f)) > 0)
        n++;
    ck_assert_int_eq(rc, code);
    ck_assert_uint_eq(n, frames_before);
    ck_assert_uint_eq(it.err_offset, offset);
    ck_assert_int_eq(adf_iter_next(&it, &f), code);
    adf_iter_describe(&it, msg, sizeof msg);
    ck_assert_msg(strstr(msg, text) != NULL, "\"%s\" lacks \"%s\"", msg, text);
    ck_assert_int_eq(adf_validate(b, size, &bad, &counted), code);
    ck_assert_uint_eq(bad, offset);
    ck_assert_uint_eq(counted, frames_before);
}

START_TEST(test_iter_short)
{
    uint8_t b[200];
    size_t size = good_stream(b);
    adf_put_u32(b + 114, 12);
    expect_error(b, size, ADF_E_SHORT, 2, 114, "frame at offset 114: length 12 is below the 20-byte key");
}
END_TEST

START_TEST(test_iter_past_end)
{
    uint8_t b[200];
    size_t size = good_stream(b);
    adf_put_u32(b + 114, 33);
    expect_error(b, size, ADF_E_PAST_END, 2, 114, "frame at offset 114: length 33 runs past the end of its buffer (32 bytes left)");
    expect_error(b, 117, ADF_E_PAST_END, 2, 114, "only 3 bytes left");
    expect_error(b, 130, ADF_E_PAST_END, 2, 114, "(16 bytes left)");
}
END_TEST

START_TEST(test_iter_sub_overrun)
{
    uint8_t b[200];
    size_t size = good_stream(b);
    adf_put_u32(b + 44, 71); /* data:eb one byte past the event:data that holds it */
    expect_error(b, size, ADF_E_SUB_OVERRUN, 1, 44, "sub-frame at offset 44: length 71 runs past the end of its parent (70 bytes left)");
    good_stream(b);
    adf_put_u32(b + 94, 21); /* two levels down: the top frame is still refused */
    expect_error(b, size, ADF_E_SUB_OVERRUN, 1, 94, "sub-frame at offset 94");
    good_stream(b);
    adf_put_u32(b + 94, 5);
    expect_error(b, size, ADF_E_SHORT, 1, 94, "sub-frame at offset 94: length 5 is below");
    good_stream(b);
    adf_put_u32(b + 24, 93); /* parent grows by 3 trailing bytes: a key cannot fit there */
    raw_key(b + 117, 29, ADF_ID_META_EOF);
    expect_error(b, size, ADF_E_SUB_OVERRUN, 1, 114, "only 3 bytes left");
}
END_TEST

START_TEST(test_iter_too_deep)
{
    uint8_t b[200];
    for (int d = 0; d <= ADF_MAX_DEPTH; d++)
        raw_key(b + 20 * d, (uint32_t)(20 * (ADF_MAX_DEPTH + 1 - d)), ADF_ID_EVENT_DATA);
    expect_error(b, 20 * (ADF_MAX_DEPTH + 1), ADF_E_TOO_DEEP, 0, 20 * ADF_MAX_DEPTH, "nesting level 5 exceeds the limit of 4");
    adf_iter it;
    adf_frame f;
    adf_iter_init(&it, b + 20, 20 * ADF_MAX_DEPTH); /* one level less is fine */
    ck_assert_int_eq(adf_iter_next(&it, &f), 1);
    ck_assert_int_eq(adf_iter_next(&it, &f), 0);
}
END_TEST

START_TEST(test_iter_codes_distinct_and_args)
{
    int codes[] = {ADF_E_SHORT, ADF_E_PAST_END, ADF_E_SUB_OVERRUN, ADF_E_TOO_DEEP};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < i; j++)
            ck_assert_int_ne(codes[i], codes[j]);
    adf_iter it;
    adf_frame f;
    adf_iter_init(&it, NULL, 10);
    ck_assert_int_eq(adf_iter_next(&it, &f), ADF_E_ARG);
    adf_iter_init(&it, NULL, 0);
    ck_assert_int_eq(adf_iter_next(&it, &f), 0);
}
END_TEST

/* xorshift: enough to scramble bytes reproducibly */
static uint32_t rnd(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static void walk(adf_iter *it, const uint8_t *lo, const uint8_t *hi)
{
    adf_frame f;
    adf_iter sub;
    while (adf_iter_next(it, &f) > 0) {
        ck_assert(f.data >= lo && f.data + f.key.length <= hi);
        ck_assert_uint_eq(f.offset, (size_t)(f.data - lo));
        if (adf_iter_sub(&sub, &f) == ADF_OK)
            walk(&sub, lo, hi);
    }
}

/* Scrambled streams in exactly sized heap blocks: ASan and valgrind see any stray read. */
START_TEST(test_iter_scrambled_stays_inside)
{
    uint8_t good[200];
    size_t size = good_stream(good);
    uint32_t seed = 12345;
    for (int round = 0; round < 3000; round++) {
        size_t n = 1 + rnd(&seed) % size;
        uint8_t *b = malloc(n);
        memcpy(b, good, n);
        for (int k = rnd(&seed) % 4; k >= 0; k--)
            b[rnd(&seed) % n] = (uint8_t)(rnd(&seed) % 4 == 0 ? rnd(&seed) : rnd(&seed) % 100);
        adf_iter it;
        adf_iter_init(&it, b, n);
        walk(&it, b, b + n);
        free(b);
    }
}
END_TEST

/* ---- payloads */

static adf_crystal crystal_in, crystal_out;

static void fill_crystal(adf_crystal *c, unsigned channels, unsigned samples)
{
    memset(c, 0, sizeof *c);
    c->crystal_id = 17;
    c->status = 0;
    c->n_channels = (uint16_t)channels;
    c->n_samples = (uint16_t)samples;
    c->gain = 5.0f;
    for (unsigned ch = 0; ch < channels; ch++) {
        c->energy[ch] = 10.0f * (float)ch + 0.5f;
        for (unsigned s = 0; s < samples; s++)
            c->trace[ch][s] = (int16_t)((int)(ch * 1000 + s) - 20000);
    }
}

START_TEST(test_crystal_round_trip)
{
    static uint8_t buf[8000];
    adf_writer w;
    adf_frame f;
    fill_crystal(&crystal_in, 37, 100);
    ck_assert_uint_eq(adf_crystal_payload_size(37, 100), 7560);
    adf_writer_init(&w, buf, sizeof buf);
    ck_assert_int_eq(adf_crystal_write(&w, 9, 77, &crystal_in), ADF_OK);
    ck_assert_uint_eq(w.used, 7580);
    ck_assert_str_eq(hex(buf, 4), "9c1d0000");
    ck_assert_str_eq(hex(buf + 4, 4), "0101574e");
    ck_assert_str_eq(hex(buf + 20, 12), "11000000250064000000a040");
    ck_assert_str_eq(hex(buf + 32 + 4, 4), "00002841"); /* energy[1] = 10.5 */
    ck_assert_str_eq(hex(buf + 32 + 148, 4), "e0b1e1b1"); /* trace[0][0] = -20000, [0][1] = -19999 */
    ck_assert_str_eq(hex(buf + 32 + 148 + 200 * 36 + 198, 2), "e33e"); /* trace[36][99] = 16099 - 20000 */
    first_frame(buf, w.used, &f);
    ck_assert_int_eq(adf_crystal_read(&f, &crystal_out), ADF_OK);
    ck_assert_uint_eq(crystal_out.n_channels, 37);
    ck_assert_uint_eq(crystal_out.n_samples, 100);
    ck_assert(crystal_out.gain == 5.0f);
    ck_assert_mem_eq(crystal_out.energy, crystal_in.energy, 37 * sizeof(float));
    for (unsigned ch = 0; ch < 37; ch++)
        ck_assert_mem_eq(crystal_out.trace[ch], crystal_in.trace[ch], 100 * sizeof(int16_t));
}
END_TEST

START_TEST(test_crystal_errors)
{
    static uint8_t buf[8000];
    adf_writer w;
    adf_frame f;
    fill_crystal(&crystal_in, 3, 4);
    adf_writer_init(&w, buf, sizeof buf);
    crystal_in.n_channels = ADF_MAX_CHANNELS + 1;
    ck_assert_int_eq(adf_crystal_write(&w, 1, 1, &crystal_in), ADF_E_LIMIT);
    crystal_in.n_channels = 3;
    crystal_in.n_samples = ADF_MAX_SAMPLES + 1;
    ck_assert_int_eq(adf_crystal_write(&w, 1, 1, &crystal_in), ADF_E_LIMIT);
    crystal_in.n_samples = 0;
    ck_assert_int_eq(adf_crystal_write(&w, 1, 1, &crystal_in), ADF_E_LIMIT);
    ck_assert_uint_eq(w.used, 0);
    ck_assert_int_eq(w.status, ADF_OK);
    crystal_in.n_samples = 4;
    adf_crystal_write(&w, 1, 1, &crystal_in); /* 12 + 12 + 24 = 48 bytes of payload */
    first_frame(buf, w.used, &f);
    ck_assert_uint_eq(f.payload_size, 48);
    buf[24] = ADF_MAX_CHANNELS + 1;
    ck_assert_int_eq(adf_crystal_read(&f, &crystal_out), ADF_E_LIMIT);
    buf[24] = 4; /* 4 channels would need 12 + 16 + 32 bytes */
    ck_assert_int_eq(adf_crystal_read(&f, &crystal_out), ADF_E_PAYLOAD);
    buf[24] = 3;
    f.payload_size = 47;
    ck_assert_int_eq(adf_crystal_read(&f, &crystal_out), ADF_E_PAYLOAD);
    f.payload_size = 11;
    ck_assert_int_eq(adf_crystal_read(&f, &crystal_out), ADF_E_PAYLOAD);
    f.payload_size = 48;
    ck_assert_int_eq(adf_crystal_read(&f, &crystal_out), ADF_OK);
    f.key.id = ADF_ID_DATA_PSA;
    ck_assert_int_eq(adf_crystal_read(&f, &crystal_out), ADF_E_WRONG_ID);
}
END_TEST

START_TEST(test_psa_round_trip)
{
    uint8_t mem[600], *buf = mem + 1;
    adf_writer w;
    adf_frame f;
    adf_psa in, out;
    fill_psa(&in, 5, 3);
    adf_writer_init(&w, buf, 599);
    ck_assert_int_eq(adf_psa_write(&w, 1, 2, &in), ADF_OK);
    ck_assert_uint_eq(w.used, 20 + 24 + 3 * 42);
    const uint8_t *p = buf + 20;
    ck_assert_str_eq(hex(p, 24), "050003000090a6440088a64400004841000070c001000300");
    ck_assert_str_eq(hex(p + 24 + 42, 6), "020001000500");  /* hit 1: status 2, segment 1, crystal 5 */
    ck_assert_str_eq(hex(p + 24 + 42 + 18, 4), "00004843"); /* hit 1: e = 200 */
    ck_assert_str_eq(hex(p + 24 + 84 + 38, 4), "000080bf"); /* hit 2: tSGh = -1 */
    first_frame(buf, w.used, &f);
    ck_assert_int_eq(adf_psa_read(&f, &out), ADF_OK);
    assert_psa_eq(&in, &out);

    fill_psa(&in, 6, 0);
    adf_writer_init(&w, buf, 599);
    ck_assert_int_eq(adf_psa_write(&w, 1, 2, &in), ADF_OK);
    first_frame(buf, w.used, &f);
    ck_assert_uint_eq(f.payload_size, 24);
    ck_assert_int_eq(adf_psa_read(&f, &out), ADF_OK);
    ck_assert_uint_eq(out.n_hits, 0);
}
END_TEST

START_TEST(test_psa_errors)
{
    uint8_t buf[600];
    adf_writer w;
    adf_frame f;
    adf_psa in, out;
    fill_psa(&in, 5, ADF_PSA_MAX_HITS);
    in.n_hits = ADF_PSA_MAX_HITS + 1;
    adf_writer_init(&w, buf, sizeof buf);
    ck_assert_int_eq(adf_psa_write(&w, 1, 2, &in), ADF_E_LIMIT);
    ck_assert_uint_eq(w.used, 0);
    in.n_hits = 2;
    adf_psa_write(&w, 1, 2, &in);
    first_frame(buf, w.used, &f);
    adf_put_u16(buf + 20 + 22, ADF_PSA_MAX_HITS + 1);
    ck_assert_int_eq(adf_psa_read(&f, &out), ADF_E_LIMIT);
    adf_put_u16(buf + 20 + 22, 3);
    ck_assert_int_eq(adf_psa_read(&f, &out), ADF_E_PAYLOAD);
    adf_put_u16(buf + 20 + 22, 2);
    ck_assert_int_eq(adf_psa_read(&f, &out), ADF_OK);
    f.payload_size = 23;
    ck_assert_int_eq(adf_psa_read(&f, &out), ADF_E_PAYLOAD);
    f.key.id = ADF_ID_NW_TRACKED;
    ck_assert_int_eq(adf_psa_read(&f, &out), ADF_E_WRONG_ID);
    ck_assert_int_eq(adf_psa_read(NULL, &out), ADF_E_ARG);
}
END_TEST

START_TEST(test_event_psa)
{
    uint8_t buf[EVENT_PSA_SIZE + 40];
    adf_writer w;
    adf_frame f;
    adf_psa out[3], expect;
    unsigned n = 99;
    adf_writer_init(&w, buf, sizeof buf);
    ck_assert_int_eq(write_event_psa(&w), ADF_OK);
    ck_assert_uint_eq(w.used, EVENT_PSA_SIZE);
    ck_assert_str_eq(hex(buf, 8), "94010000020101ca");
    ck_assert_str_eq(hex(buf + 20, 8), "56000000020101fa"); /* first member: 86 bytes, data:psa */
    first_frame(buf, w.used, &f);
    ck_assert_int_eq(adf_event_psa_read(&f, out, 3, &n), ADF_OK);
    ck_assert_uint_eq(n, 3);
    for (unsigned m = 0; m < 3; m++) {
        fill_psa(&expect, 10 + m, m + 1);
        assert_psa_eq(&out[m], &expect);
    }
    ck_assert_int_eq(adf_event_psa_read(&f, out, 2, &n), ADF_E_LIMIT);
    ck_assert_uint_eq(n, 2);
    adf_put_u32(buf + 20 + 4, ADF_ID_NW_TRACKED);
    ck_assert_int_eq(adf_event_psa_read(&f, out, 3, &n), ADF_E_PAYLOAD);
    adf_put_u32(buf + 20 + 4, ADF_ID_DATA_PSA);
    adf_put_u16(buf + 20 + 20 + 22, 0); /* member says 0 hits but carries 1 */
    ck_assert_int_eq(adf_event_psa_read(&f, out, 3, &n), ADF_E_PAYLOAD);
    f.key.id = ADF_ID_EVENT_DATA_TRACKED;
    ck_assert_int_eq(adf_event_psa_read(&f, out, 3, &n), ADF_E_WRONG_ID);

    adf_writer_init(&w, buf, sizeof buf); /* an empty event is valid */
    adf_begin(&w, ADF_ID_EVENT_DATA_PSA, 1, 1);
    ck_assert_int_eq(adf_end(&w), ADF_OK);
    first_frame(buf, w.used, &f);
    ck_assert_int_eq(adf_event_psa_read(&f, out, 3, &n), ADF_OK);
    ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(test_tracked_round_trip_and_errors)
{
    uint8_t buf[ADF_KEY_SIZE + ADF_TRACKED_HEADER + ADF_TRACKED_GAMMA * 3];
    adf_writer w;
    adf_frame f;
    adf_tracked in, out;
    memset(&in, 0, sizeof in);
    in.n_gammas = 3;
    in.status = 1;
    in.beta = 0.05f;
    for (unsigned g = 0; g < 3; g++)
        in.gamma[g] = (adf_gamma){1000.0f + (float)g, 1010.0f, 0.75f, 1, 2, 3, 4, 5, 6, (uint16_t)(g + 1), 1, 100, ADF_TRACKED_SINGLE};
    adf_writer_init(&w, buf, sizeof buf);
    ck_assert_int_eq(adf_tracked_write(&w, 3, 4, &in), ADF_OK);
    ck_assert_uint_eq(w.used, sizeof buf);
    ck_assert_str_eq(hex(buf + 20, 8), "03000100cdcc4c3d");
    ck_assert_str_eq(hex(buf + 28 + 44 + 4, 4), "00807c44");  /* gamma 1: e_dc = 1010 */
    ck_assert_str_eq(hex(buf + 28 + 88 + 36, 8), "0300010064000100");
    first_frame(buf, w.used, &f);
    ck_assert_int_eq(adf_tracked_read(&f, &out), ADF_OK);
    ck_assert_uint_eq(out.n_gammas, 3);
    ck_assert(out.beta == in.beta);
    ck_assert_mem_eq(out.gamma, in.gamma, 3 * sizeof in.gamma[0]);
    adf_put_u16(buf + 20, ADF_TRACKED_MAX + 1);
    ck_assert_int_eq(adf_tracked_read(&f, &out), ADF_E_LIMIT);
    adf_put_u16(buf + 20, 2);
    ck_assert_int_eq(adf_tracked_read(&f, &out), ADF_E_PAYLOAD);
    f.key.id = ADF_ID_DATA_PSA;
    ck_assert_int_eq(adf_tracked_read(&f, &out), ADF_E_WRONG_ID);
    in.n_gammas = ADF_TRACKED_MAX + 1;
    adf_writer_init(&w, buf, sizeof buf);
    ck_assert_int_eq(adf_tracked_write(&w, 3, 4, &in), ADF_E_LIMIT);
    ck_assert_uint_eq(w.used, 0);
}
END_TEST

START_TEST(test_eof_round_trip_and_errors)
{
    uint8_t buf[40];
    adf_writer w;
    adf_frame f;
    adf_eof in = {12345, 0x100000001ull}, out;
    adf_writer_init(&w, buf, sizeof buf);
    ck_assert_int_eq(adf_eof_write(&w, 0, 0, &in), ADF_OK);
    ck_assert_str_eq(hex(buf, 8), "20000000001100fa");
    ck_assert_str_eq(hex(buf + 20, 12), "393000000100000001000000");
    first_frame(buf, w.used, &f);
    ck_assert_int_eq(adf_eof_read(&f, &out), ADF_OK);
    ck_assert_uint_eq(out.frames, 12345);
    ck_assert_uint_eq(out.bytes, 0x100000001ull);
    f.payload_size = 13;
    ck_assert_int_eq(adf_eof_read(&f, &out), ADF_E_PAYLOAD);
    f.payload_size = 12;
    f.key.id = ADF_ID_META_SYNC;
    ck_assert_int_eq(adf_eof_read(&f, &out), ADF_E_WRONG_ID);
    ck_assert_int_eq(adf_eof_read(&f, NULL), ADF_E_ARG);
}
END_TEST

START_TEST(test_sync_round_trip_and_errors)
{
    uint8_t buf[32];
    adf_writer w;
    adf_frame f;
    adf_sync in = {0x0203, 0x01020304}, out;
    adf_writer_init(&w, buf, sizeof buf);
    ck_assert_int_eq(adf_sync_write(&w, 7, 0x123456789aull, &in), ADF_OK);
    ck_assert_uint_eq(w.used, ADF_KEY_SIZE + ADF_SYNC_PAYLOAD);
    ck_assert_str_eq(hex(buf, 4), "1c000000");
    ck_assert_str_eq(hex(buf + 4, 4), "011101fa");
    ck_assert_str_eq(hex(buf + 20, 8), "0302000004030201");
    first_frame(buf, w.used, &f);
    ck_assert_uint_eq(f.key.timestamp, 0x123456789aull);
    ck_assert_int_eq(adf_sync_read(&f, &out), ADF_OK);
    ck_assert_uint_eq(out.crystal_id, 0x0203);
    ck_assert_uint_eq(out.frames, 0x01020304);
    buf[22] = 1; /* the reserved field must be 0 */
    ck_assert_int_eq(adf_sync_read(&f, &out), ADF_E_PAYLOAD);
    buf[22] = 0;
    f.payload_size = 9;
    ck_assert_int_eq(adf_sync_read(&f, &out), ADF_E_PAYLOAD);
    f.payload_size = 8;
    f.key.id = ADF_ID_META_EOF;
    ck_assert_int_eq(adf_sync_read(&f, &out), ADF_E_WRONG_ID);
    ck_assert_int_eq(adf_sync_read(&f, NULL), ADF_E_ARG);
}
END_TEST

/* Whether the mapping that holds p was advised onto huge pages ("hg" in its
 * VmFlags); -1 when /proc/self/smaps does not say. */
static int advised_huge(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int inside = 0, found = -1;
    if (!f)
        return -1;
    while (found < 0 && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
        else if (inside && strncmp(line, "VmFlags:", 8) == 0)
            found = strstr(line, " hg") != NULL;
    }
    fclose(f);
    return found;
}

/* Transparent huge pages built into this kernel and not switched off. */
static int thp_offered(void)
{
    char mode[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f)
        return 0;
    if (!fgets(mode, sizeof mode, f))
        mode[0] = '\0';
    fclose(f);
    return strstr(mode, "[never]") == NULL && mode[0] != '\0';
}

/* Blocks: aligned, zeroed, writable to their last byte; the large ones on
 * 2 MiB boundaries and advised huge unless NARWHAL_HUGE_PAGES=off. */
START_TEST(test_block_alloc)
{
    static const size_t sizes[] = {1, 4096, 100000, (size_t)3 << 20, (size_t)64 << 20};
    for (int off = 0; off < 2; off++) {
        if (off)
            setenv("NARWHAL_HUGE_PAGES", "off", 1);
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            size_t size = sizes[i];
            int large = size >= ((size_t)2 << 20);
            uint8_t *b = adf_block_alloc(size);
            ck_assert_ptr_nonnull(b);
            ck_assert_uint_eq((uintptr_t)b % (large && !off ? (2u << 20) : 4096u), 0);
            ck_assert_uint_eq(b[0], 0);
            ck_assert_uint_eq(b[size - 1], 0);
            memset(b, 0xA5, size);
            ck_assert_uint_eq(b[size / 2], 0xA5);
            if (thp_offered() && advised_huge(b) >= 0)
                ck_assert_int_eq(advised_huge(b), large && !off);
            adf_block_free(b);
        }
        unsetenv("NARWHAL_HUGE_PAGES");
    }
    adf_block_free(NULL);
    ck_assert_ptr_null(adf_block_alloc(SIZE_MAX - 4096));
}
END_TEST

static Suite *adf_suite(void)
{
    Suite *s = suite_create("adf");
    TCase *tc = tcase_create("keys");
    tcase_add_test(tc, test_key_bytes);
    tcase_add_test(tc, test_id_names);
    tcase_add_test(tc, test_fields_little_endian);
    tcase_add_test(tc, test_strerror_distinct);
    suite_add_tcase(s, tc);
    tc = tcase_create("writer");
    tcase_add_test(tc, test_writer_frame_bytes);
    tcase_add_test(tc, test_writer_every_capacity);
    tcase_add_test(tc, test_writer_sticky_and_clear);
    tcase_add_test(tc, test_writer_needed_pass_through);
    tcase_add_test(tc, test_writer_measuring_only);
    tcase_add_test(tc, test_writer_nesting_errors);
    tcase_add_test(tc, test_writer_deepest_nesting_validates);
    tcase_add_test(tc, test_put_frame_checks);
    tcase_add_test(tc, test_block_alloc);
    suite_add_tcase(s, tc);
    tc = tcase_create("iterator");
    tcase_add_test(tc, test_iter_walks_and_descends);
    tcase_add_test(tc, test_iter_short);
    tcase_add_test(tc, test_iter_past_end);
    tcase_add_test(tc, test_iter_sub_overrun);
    tcase_add_test(tc, test_iter_too_deep);
    tcase_add_test(tc, test_iter_codes_distinct_and_args);
    tcase_add_test(tc, test_iter_scrambled_stays_inside);
    suite_add_tcase(s, tc);
    tc = tcase_create("payloads");
    tcase_add_test(tc, test_crystal_round_trip);
    tcase_add_test(tc, test_crystal_errors);
    tcase_add_test(tc, test_psa_round_trip);
    tcase_add_test(tc, test_psa_errors);
    tcase_add_test(tc, test_event_psa);
    tcase_add_test(tc, test_tracked_round_trip_and_errors);
    tcase_add_test(tc, test_eof_round_trip_and_errors);
    tcase_add_test(tc, test_sync_round_trip_and_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(adf_suite()); }

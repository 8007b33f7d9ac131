/* check_truth.c: Check suite for the narwhal:truth codec: byte layout, round trips, limits and refused payloads. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "adf.h"
#include "testkit.h"

static adf_truth *make_truth(unsigned n_gammas, unsigned per_gamma)
{
    adf_truth *t = calloc(1, sizeof *t);
    ck_assert_ptr_nonnull(t);
    t->n_gammas = (uint16_t)n_gammas;
    t->beta = 0.125f;
    unsigned i = 0;
    for (unsigned g = 0; g < n_gammas; g++) {
        adf_truth_gamma *x = &t->gamma[g];
        x->e0 = 1332.5f + (float)g;
        x->e = 1340.25f + (float)g;
        x->dir[0] = 0.6f;
        x->dir[1] = -0.8f;
        x->dir[2] = 0.0f;
        x->flags = (uint16_t)(g % 2 ? ADF_TRUTH_ABSORBED : ADF_TRUTH_PAIRED);
        x->n_interactions = (uint16_t)per_gamma;
        for (unsigned k = 0; k < per_gamma; k++, i++) {
            adf_truth_hit *h = &t->hit[i];
            h->crystal_id = (uint16_t)(i % 180);
            h->segment = (uint16_t)(i % 36);
            h->geo_segment = (uint16_t)((i + 7) % 36);
            h->process = (uint16_t)(1 + i % 3);
            h->deposits = (uint16_t)(1 + i % 4);
            h->e = 100.5f + (float)i;
            h->pos[0] = -1.5f;
            h->pos[1] = 2.25f;
            h->pos[2] = 45.0f + (float)k;
            h->lab[0] = 10.0f;
            h->lab[1] = -20.0f;
            h->lab[2] = 250.0f + (float)i;
            h->t = 103.75f;
        }
    }
    t->n_interactions = (uint16_t)i;
    return t;
}

static void assert_truth_eq(const adf_truth *a, const adf_truth *b)
{
    ck_assert_uint_eq(a->n_gammas, b->n_gammas);
    ck_assert_uint_eq(a->n_interactions, b->n_interactions);
    ck_assert(a->beta == b->beta);
    for (unsigned g = 0; g < a->n_gammas; g++)
        ck_assert_mem_eq(&a->gamma[g], &b->gamma[g], sizeof a->gamma[g]);
    for (unsigned i = 0; i < a->n_interactions; i++) { /* by field: the struct ends in padding */
        const adf_truth_hit *x = &a->hit[i], *y = &b->hit[i];
        ck_assert_uint_eq(x->crystal_id, y->crystal_id);
        ck_assert_uint_eq(x->segment, y->segment);
        ck_assert_uint_eq(x->process, y->process);
        ck_assert_uint_eq(x->deposits, y->deposits);
        ck_assert_mem_eq(&x->e, &y->e, sizeof x->e);
        ck_assert_mem_eq(x->pos, y->pos, sizeof x->pos);
        ck_assert_mem_eq(x->lab, y->lab, sizeof x->lab);
        ck_assert_mem_eq(&x->t, &y->t, sizeof x->t);
        ck_assert_uint_eq(x->geo_segment, y->geo_segment);
    }
}

/* Writes t into buf, returns the frame as the iterator sees it. */
static adf_frame write_one(uint8_t *buf, size_t cap, const adf_truth *t)
{
    adf_writer w;
    adf_iter it;
    adf_frame f;
    adf_writer_init(&w, buf, cap);
    ck_assert_int_eq(adf_truth_write(&w, 42, 0x123456789aull, t), ADF_OK);
    adf_iter_init(&it, buf, w.used);
    ck_assert_int_eq(adf_iter_next(&it, &f), 1);
    return f;
}

START_TEST(test_byte_layout)
{
    adf_truth *t = make_truth(1, 1);
    uint8_t buf[256];
    adf_frame f = write_one(buf, sizeof buf, t);
    ck_assert_uint_eq(f.key.length, 20 + 8 + 24 + 42);
    ck_assert_uint_eq(f.key.id, 0x4E570001u);
    ck_assert_uint_eq(f.key.event, 42);
    ck_assert_uint_eq(f.key.timestamp, 0x123456789aull);
    const uint8_t *p = f.payload;
    ck_assert_uint_eq(adf_get_u16(p), 1);
    ck_assert_uint_eq(adf_get_u16(p + 2), 1);
    ck_assert(adf_get_f32(p + 4) == 0.125f);
    ck_assert(adf_get_f32(p + 8) == 1332.5f);
    ck_assert(adf_get_f32(p + 12) == 1340.25f);
    ck_assert(adf_get_f32(p + 16) == 0.6f && adf_get_f32(p + 20) == -0.8f && adf_get_f32(p + 24) == 0.0f);
    ck_assert_uint_eq(adf_get_u16(p + 28), ADF_TRUTH_PAIRED);
    ck_assert_uint_eq(adf_get_u16(p + 30), 1);
    const uint8_t *h = p + 32;
    ck_assert_uint_eq(adf_get_u16(h), 0);
    ck_assert_uint_eq(adf_get_u16(h + 2), 0);
    ck_assert_uint_eq(adf_get_u16(h + 4), ADF_TRUTH_PHOTO);
    ck_assert_uint_eq(adf_get_u16(h + 6), 1);
    ck_assert(adf_get_f32(h + 8) == 100.5f);
    ck_assert(adf_get_f32(h + 12) == -1.5f && adf_get_f32(h + 16) == 2.25f && adf_get_f32(h + 20) == 45.0f);
    ck_assert(adf_get_f32(h + 24) == 10.0f && adf_get_f32(h + 28) == -20.0f && adf_get_f32(h + 32) == 250.0f);
    ck_assert(adf_get_f32(h + 36) == 103.75f);
    ck_assert_uint_eq(adf_get_u16(h + 40), 7); /* the geometric segment */
    ck_assert_str_eq(adf_id_name(f.key.id), "narwhal:truth");
    free(t);
}
END_TEST

START_TEST(test_round_trip_sizes)
{
    static const unsigned shapes[][2] = {{0, 0}, {1, 0}, {3, 2}, {30, 6}, {ADF_TRUTH_MAX_GAMMAS, 16}};
    size_t cap = 20 + adf_truth_payload_size(ADF_TRUTH_MAX_GAMMAS, ADF_TRUTH_MAX_INTERACTIONS);
    uint8_t *buf = malloc(cap);
    adf_truth *back = malloc(sizeof *back);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        adf_truth *t = make_truth(shapes[s][0], shapes[s][1]);
        adf_frame f = write_one(buf, cap, t);
        ck_assert_uint_eq(f.payload_size, adf_truth_payload_size(t->n_gammas, t->n_interactions));
        ck_assert_int_eq(adf_truth_read(&f, back), ADF_OK);
        assert_truth_eq(t, back);
        free(t);
    }
    ck_assert_uint_eq(adf_truth_payload_size(ADF_TRUTH_MAX_GAMMAS, ADF_TRUTH_MAX_INTERACTIONS),
                      8 + 24 * 64 + 42 * 1024);
    free(back);
    free(buf);
}
END_TEST

START_TEST(test_writer_refuses)
{
    adf_truth *t = make_truth(2, 2);
    uint8_t buf[512];
    adf_writer w;
    adf_writer_init(&w, buf, sizeof buf);
    ck_assert_int_eq(adf_truth_write(NULL, 0, 0, t), ADF_E_ARG);
    ck_assert_int_eq(adf_truth_write(&w, 0, 0, NULL), ADF_E_ARG);
    t->gamma[1].n_interactions = 3;
    ck_assert_int_eq(adf_truth_write(&w, 0, 0, t), ADF_E_ARG);
    t->gamma[1].n_interactions = 2;
    t->hit[3].segment = 36;
    ck_assert_int_eq(adf_truth_write(&w, 0, 0, t), ADF_E_ARG);
    t->hit[3].segment = 35;
    t->hit[1].geo_segment = 36;
    ck_assert_int_eq(adf_truth_write(&w, 0, 0, t), ADF_E_ARG);
    t->hit[1].geo_segment = 0;
    t->hit[0].process = 4;
    ck_assert_int_eq(adf_truth_write(&w, 0, 0, t), ADF_E_ARG);
    t->hit[0].process = 0;
    ck_assert_int_eq(adf_truth_write(&w, 0, 0, t), ADF_E_ARG);
    t->hit[0].process = ADF_TRUTH_COMPTON;
    t->hit[2].deposits = 0;
    ck_assert_int_eq(adf_truth_write(&w, 0, 0, t), ADF_E_ARG);
    t->hit[2].deposits = 1;
    t->n_gammas = ADF_TRUTH_MAX_GAMMAS + 1;
    ck_assert_int_eq(adf_truth_write(&w, 0, 0, t), ADF_E_LIMIT);
    t->n_gammas = 2;
    t->n_interactions = ADF_TRUTH_MAX_INTERACTIONS + 1;
    ck_assert_int_eq(adf_truth_write(&w, 0, 0, t), ADF_E_LIMIT);
    t->n_interactions = 4;
    ck_assert_uint_eq(w.used, 0);
    ck_assert_int_eq(w.status, ADF_OK);
    ck_assert_int_eq(adf_truth_write(&w, 0, 0, t), ADF_OK);
    ck_assert_uint_eq(w.used, 20 + 8 + 48 + 168);
    free(t);
}
END_TEST

START_TEST(test_writer_no_space)
{
    adf_truth *t = make_truth(2, 3);
    size_t need = 20 + adf_truth_payload_size(2, 6);
    uint8_t buf[512];
    for (size_t cap = 0; cap < need; cap++) {
        adf_writer w;
        memset(buf, 0xEE, sizeof buf);
        adf_writer_init(&w, buf, cap);
        ck_assert_int_eq(adf_truth_write(&w, 1, 2, t), ADF_E_NOSPACE);
        ck_assert_uint_eq(w.used, 0);
        ck_assert_uint_eq(adf_writer_needed(&w), need);
        for (size_t i = cap; i < sizeof buf; i++)
            ck_assert_uint_eq(buf[i], 0xEE);
    }
    free(t);
}
END_TEST

/* A frame with the payload given, for the decoder's refusals. */
static adf_frame raw_frame(uint8_t *buf, uint32_t id, const uint8_t *payload, uint32_t size)
{
    adf_key k = {20 + size, id, 1, 2};
    adf_frame f;
    adf_iter it;
    adf_key_encode(buf, &k);
    memcpy(buf + 20, payload, size);
    adf_iter_init(&it, buf, 20 + size);
    ck_assert_int_eq(adf_iter_next(&it, &f), 1);
    return f;
}

START_TEST(test_reader_refuses)
{
    adf_truth *t = make_truth(2, 2);
    adf_truth *back = malloc(sizeof *back);
    uint8_t buf[512], good[512], bad[512];
    adf_frame f = write_one(buf, sizeof buf, t);
    uint32_t size = f.payload_size;
    memcpy(good, f.payload, size);

    ck_assert_int_eq(adf_truth_read(NULL, back), ADF_E_ARG);
    ck_assert_int_eq(adf_truth_read(&f, NULL), ADF_E_ARG);
    adf_frame other = raw_frame(bad, ADF_ID_DATA_PSA, good, size);
    ck_assert_int_eq(adf_truth_read(&other, back), ADF_E_WRONG_ID);
    adf_frame shorter = raw_frame(bad, ADF_ID_NW_TRUTH, good, 7);
    ck_assert_int_eq(adf_truth_read(&shorter, back), ADF_E_PAYLOAD);
    adf_frame cut = raw_frame(bad, ADF_ID_NW_TRUTH, good, size - 1);
    ck_assert_int_eq(adf_truth_read(&cut, back), ADF_E_PAYLOAD);
    adf_frame between = raw_frame(bad, ADF_ID_NW_TRUTH, good, size - 2); /* neither 42- nor 40-byte interactions */
    ck_assert_int_eq(adf_truth_read(&between, back), ADF_E_PAYLOAD);

    memcpy(bad, good, size);
    adf_put_u16(bad, ADF_TRUTH_MAX_GAMMAS + 1);
    adf_frame many = raw_frame(buf, ADF_ID_NW_TRUTH, bad, size);
    ck_assert_int_eq(adf_truth_read(&many, back), ADF_E_LIMIT);
    memcpy(bad, good, size);
    adf_put_u16(bad + 2, ADF_TRUTH_MAX_INTERACTIONS + 1);
    many = raw_frame(buf, ADF_ID_NW_TRUTH, bad, size);
    ck_assert_int_eq(adf_truth_read(&many, back), ADF_E_LIMIT);

    /* offsets in the payload: γ 1's count at 8 + 24 + 22; interaction 1 at 8 + 48 + 42 */
    static const struct { size_t at; uint16_t value; } edits[] = {
        {8 + 24 + 22, 3},     {8 + 48 + 42 + 2, 36}, {8 + 48 + 42 + 4, 0},
        {8 + 48 + 42 + 4, 4}, {8 + 48 + 42 + 6, 0},  {8 + 48 + 42 + 40, 36},
    };
    for (size_t e = 0; e < sizeof edits / sizeof edits[0]; e++) {
        memcpy(bad, good, size);
        adf_put_u16(bad + edits[e].at, edits[e].value);
        adf_frame g = raw_frame(buf, ADF_ID_NW_TRUTH, bad, size);
        ck_assert_msg(adf_truth_read(&g, back) == ADF_E_PAYLOAD, "edit %zu accepted", e);
    }
    adf_frame ok = raw_frame(buf, ADF_ID_NW_TRUTH, good, size);
    ck_assert_int_eq(adf_truth_read(&ok, back), ADF_OK);
    assert_truth_eq(t, back);
    free(back);
    free(t);
}
END_TEST

/* Layout 1 (40-byte interactions, before issue 15) is still read: the geometric segment is the segment. */
START_TEST(test_reads_layout_1)
{
    adf_truth *t = make_truth(2, 3);
    adf_truth *back = malloc(sizeof *back);
    uint8_t buf[512], old[512];
    adf_frame f = write_one(buf, sizeof buf, t);
    size_t head = 8 + 24 * 2, n = 6;
    memcpy(old, f.payload, head);
    for (size_t i = 0; i < n; i++)
        memcpy(old + head + 40 * i, f.payload + head + 42 * i, 40);
    adf_frame v1 = raw_frame(buf, ADF_ID_NW_TRUTH, old, (uint32_t)(head + 40 * n));
    ck_assert_int_eq(adf_truth_read(&v1, back), ADF_OK);
    for (size_t i = 0; i < n; i++) {
        t->hit[i].geo_segment = t->hit[i].segment;
        ck_assert_uint_eq(back->hit[i].geo_segment, t->hit[i].segment);
    }
    assert_truth_eq(t, back);
    free(back);
    free(t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("truth");
    TCase *tc = tcase_create("codec");
    tcase_add_test(tc, test_byte_layout);
    tcase_add_test(tc, test_round_trip_sizes);
    tcase_add_test(tc, test_writer_refuses);
    tcase_add_test(tc, test_writer_no_space);
    tcase_add_test(tc, test_reader_refuses);
    tcase_add_test(tc, test_reads_layout_1);
    suite_add_tcase(s, tc);
    return tk_run_suite(s);
}

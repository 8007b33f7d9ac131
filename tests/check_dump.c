/* check_dump.c: Check suite for `narwhal dump`: frame lines, sub-frame indentation, payload summaries, bad files. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adf.h"
#include "narwhal_exec.h"
#include "testkit.h"

static char file_path[256];

/* Writes the bytes a writer holds to a fresh file in /tmp. */
static const char *write_file(const void *buf, size_t size)
{
    snprintf(file_path, sizeof file_path, "/tmp/narwhal-dump-%d.adf", (int)getpid());
    tk_write_bytes(file_path, buf, size);
    return file_path;
}

static void dump(nw_result *r, const char *path, const char *max)
{
    const char *args[] = {"dump", path, max ? "--max" : NULL, max, NULL};
    ck_assert_int_eq(nw_run(r, args, NULL), 0);
}

/* crystal, event:data:psa { psa }, tracked, eof: 7876 bytes. */
static size_t sample_stream(uint8_t *buf, size_t cap)
{
    static adf_crystal c;
    adf_psa p = {.crystal_id = 7, .e0 = 1332.5f, .e1 = 1332.5f, .n_hits = 2};
    adf_tracked t = {.n_gammas = 2};
    adf_eof e = {.frames = 4, .bytes = 7844};
    adf_writer w;
    memset(&c, 0, sizeof c);
    c.crystal_id = 7;
    c.n_channels = 37;
    c.n_samples = 100;
    c.gain = 10.0f;
    c.energy[36] = 1332.5f;
    p.hit[0] = (adf_psa_hit){.segment = 3, .crystal_id = 7, .x = 1.0f, .y = 2.0f, .z = 3.0f, .e = 500.25f};
    p.hit[1] = (adf_psa_hit){.segment = 10, .crystal_id = 7, .x = -4.5f, .y = 5.5f, .z = 60.0f, .e = 832.25f};
    t.gamma[0].e = t.gamma[0].e_dc = 1332.5f;
    t.gamma[1].e = t.gamma[1].e_dc = 1173.25f;
    adf_writer_init(&w, buf, cap);
    ck_assert_int_eq(adf_crystal_write(&w, 42, 123456789, &c), ADF_OK);
    ck_assert_int_eq(adf_begin(&w, ADF_ID_EVENT_DATA_PSA, 42, 123456790), ADF_OK);
    ck_assert_int_eq(adf_psa_write(&w, 42, 123456791, &p), ADF_OK);
    ck_assert_int_eq(adf_end(&w), ADF_OK);
    ck_assert_int_eq(adf_tracked_write(&w, 42, 123456792, &t), ADF_OK);
    ck_assert_int_eq(adf_eof_write(&w, 0, 0, &e), ADF_OK);
    ck_assert_uint_eq(w.used, 7876);
    return w.used;
}

static const char header[] = "offset           length  id          name                      event       timestamp  "
                             "summary\n";

START_TEST(frames_are_listed_with_sub_frames_indented_and_payloads_summarised)
{
    static uint8_t buf[16384];
    nw_result r;
    size_t n = sample_stream(buf, sizeof buf);
    dump(&r, write_file(buf, n), NULL);
    unlink(file_path);
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.err, "");
    char expected[4096];
    snprintf(expected, sizeof expected, "%s%s", header,
             "0                  7580  0x4e570101  narwhal:crystal              42       123456789  crystal 7, 37 "
             "channels x 100 samples, core 1332.50 keV\n"
             "7580                148  0xca010102  event:data:psa               42       123456790  composite\n"
             "  7600                128  0xfa010102  data:psa                     42       123456791  crystal 7, core "
             "1332.50 keV, 2 hits: seg 3 (1.0, 2.0, 3.0) mm 500.25 keV; seg 10 (-4.5, 5.5, 60.0) mm 832.25 keV\n"
             "7728                116  0x4e570105  narwhal:tracked              42       123456792  2 gammas: 1332.50 "
             "keV, 1173.25 keV\n"
             "7844                 32  0xfa001100  meta:eof                      0               0  end of stream: 4 "
             "frames, 7844 bytes before it\n"
             "5 frames (4 top-level)\n");
    ck_assert_str_eq(r.out, expected);
}
END_TEST

START_TEST(max_limits_the_top_level_frames)
{
    static uint8_t buf[16384];
    nw_result r;
    size_t n = sample_stream(buf, sizeof buf);
    dump(&r, write_file(buf, n), "2");
    unlink(file_path);
    ck_assert_int_eq(r.status, 0);
    ck_assert_int_eq(nw_lines(r.out), 1 + 3 + 1);
    ck_assert_ptr_nonnull(strstr(r.out, "\n3 frames (2 top-level)\n"));
    ck_assert_ptr_null(strstr(r.out, "narwhal:tracked"));
}
END_TEST

START_TEST(a_truncated_file_names_the_offset_and_is_status_1)
{
    static uint8_t buf[16384];
    nw_result r;
    char expected[512];
    size_t n = sample_stream(buf, sizeof buf);
    dump(&r, write_file(buf, n - 10), NULL);
    unlink(file_path);
    ck_assert_int_eq(r.status, 1);
    /* Everything before the cut is listed. */
    ck_assert_ptr_nonnull(strstr(r.out, "\n4 frames (3 top-level)\n"));
    snprintf(expected, sizeof expected,
             "%s: the file ends inside the frame at offset 7844: length 32, only 22 bytes left\n", file_path);
    ck_assert_str_eq(r.err, expected);
}
END_TEST

START_TEST(a_frame_shorter_than_its_key_is_status_1)
{
    static uint8_t buf[16384];
    nw_result r;
    size_t n = sample_stream(buf, sizeof buf);
    adf_put_u32(buf + 7728, 12); /* the data:tracked frame claims 12 bytes */
    dump(&r, write_file(buf, n), NULL);
    unlink(file_path);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.err, "offset 7728"));
    ck_assert_ptr_nonnull(strstr(r.err, "12"));
    ck_assert_int_eq(nw_lines(r.err), 1);
}
END_TEST

START_TEST(an_undecodable_payload_is_flagged_and_status_1)
{
    uint8_t buf[64];
    adf_writer w;
    nw_result r;
    char expected[512];
    adf_writer_init(&w, buf, sizeof buf);
    adf_begin(&w, ADF_ID_DATA_PSA, 1, 2);
    adf_put_le32(&w, 0); /* 4 bytes: far less than the 24-byte global part */
    ck_assert_int_eq(adf_end(&w), ADF_OK);
    dump(&r, write_file(buf, w.used), NULL);
    unlink(file_path);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.out, "data:psa"));
    ck_assert_ptr_nonnull(strstr(r.out, "undecodable payload: "));
    snprintf(expected, sizeof expected,
             "%s: 1 frame(s) of a known type with a payload that does not decode\n", file_path);
    ck_assert_str_eq(r.err, expected);
}
END_TEST

START_TEST(a_frame_larger_than_the_first_read_buffer_is_dumped)
{
    size_t big = 3u << 20;
    uint8_t *buf = calloc(1, big + 64);
    adf_writer w;
    nw_result r;
    ck_assert_ptr_nonnull(buf);
    adf_writer_init(&w, buf, big + 64);
    adf_begin(&w, ADF_ID_META_SYNC, 9, 10); /* a payload dump does not decode */
    ck_assert_ptr_nonnull(adf_reserve(&w, big - ADF_KEY_SIZE));
    ck_assert_int_eq(adf_end(&w), ADF_OK);
    ck_assert_int_eq(adf_eof_write(&w, 0, 0, &(adf_eof){.frames = 1, .bytes = big}), ADF_OK);
    dump(&r, write_file(buf, w.used), NULL);
    unlink(file_path);
    free(buf);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "\n0               3145728  0xfa011101  meta:sync "));
    ck_assert_ptr_nonnull(strstr(r.out, "end of stream: 1 frames, 3145728 bytes before it\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "\n2 frames (2 top-level)\n"));
}
END_TEST

/* Two simulated events: a 60Co cascade at rest (one γ absorbed in two
 * interactions, one missed) and a 1 MeV γ from a moving nucleus that made
 * a pair. */
static size_t truth_stream(uint8_t *buf, size_t cap)
{
    static adf_truth t;
    adf_writer w;
    adf_writer_init(&w, buf, cap);
    memset(&t, 0, sizeof t);
    t.n_gammas = 2;
    t.n_interactions = 2;
    t.gamma[0] = (adf_truth_gamma){.e0 = 1173.25f, .e = 1173.25f, .dir = {0, 0, 1}, .flags = ADF_TRUTH_ABSORBED,
                                   .n_interactions = 2};
    t.gamma[1] = (adf_truth_gamma){.e0 = 1332.5f, .e = 1332.5f, .dir = {1, 0, 0}, .flags = ADF_TRUTH_MISSED};
    t.hit[0] = (adf_truth_hit){.crystal_id = 4, .segment = 7, .process = ADF_TRUTH_COMPTON, .deposits = 1, .e = 400};
    t.hit[1] = (adf_truth_hit){.crystal_id = 4, .segment = 8, .process = ADF_TRUTH_PHOTO, .deposits = 2, .e = 773.25f};
    ck_assert_int_eq(adf_truth_write(&w, 5, 1000, &t), ADF_OK);
    memset(&t, 0, sizeof t);
    t.n_gammas = 1;
    t.n_interactions = 1;
    t.beta = 0.05f;
    t.gamma[0] = (adf_truth_gamma){.e0 = 1000, .e = 1051.25f, .dir = {0, 0, 1}, .flags = ADF_TRUTH_PAIRED,
                                   .n_interactions = 1};
    t.hit[0] = (adf_truth_hit){.crystal_id = 9, .segment = 0, .process = ADF_TRUTH_PAIR, .deposits = 1, .e = 29.25f};
    ck_assert_int_eq(adf_truth_write(&w, 6, 2000, &t), ADF_OK);
    ck_assert_uint_eq(w.used, 2 * ADF_KEY_SIZE + adf_truth_payload_size(2, 2) + adf_truth_payload_size(1, 1));
    return w.used;
}

START_TEST(truth_frames_are_summarised_per_gamma)
{
    static uint8_t buf[4096];
    nw_result r;
    size_t n = truth_stream(buf, sizeof buf);
    dump(&r, write_file(buf, n), NULL);
    unlink(file_path);
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.err, "");
    char expected[2048];
    snprintf(expected, sizeof expected, "%s%s", header,
             "0                   160  0x4e570001  narwhal:truth                 5            1000  2 gammas, 2 "
             "interactions, 1 absorbed: 1173.25 keV 2 interactions absorbed; 1332.50 keV 0 interactions missed\n"
             "160                  94  0x4e570001  narwhal:truth                 6            2000  1 gamma, 1 "
             "interaction, 0 absorbed: 1051.25 keV (1000.00 emitted) 1 interaction pair (beta 0.0500)\n"
             "2 frames (2 top-level)\n");
    ck_assert_str_eq(r.out, expected);
}
END_TEST

START_TEST(a_truth_frame_whose_counts_disagree_is_undecodable)
{
    static uint8_t buf[4096];
    nw_result r;
    size_t n = truth_stream(buf, sizeof buf);
    adf_put_u16(buf + ADF_KEY_SIZE + ADF_TRUTH_HEADER + 22, 1); /* γ 0 claims 1 of the 2 interactions */
    dump(&r, write_file(buf, n), NULL);
    unlink(file_path);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.out, "narwhal:truth                 5            1000  undecodable payload: "));
    ck_assert_ptr_nonnull(strstr(r.out, "1 gamma, 1 interaction, 0 absorbed: 1051.25 keV"));
    ck_assert_ptr_nonnull(strstr(r.err, ": 1 frame(s) of a known type with a payload that does not decode\n"));
}
END_TEST

START_TEST(a_missing_file_is_status_2)
{
    nw_result r;
    dump(&r, "/tmp/narwhal-no-such-file.adf", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "/tmp/narwhal-no-such-file.adf: cannot open: No such file or directory\n");
}
END_TEST

static Suite *dump_suite(void)
{
    Suite *s = suite_create("dump");
    TCase *tc = tcase_create("dump");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, frames_are_listed_with_sub_frames_indented_and_payloads_summarised);
    tcase_add_test(tc, max_limits_the_top_level_frames);
    tcase_add_test(tc, a_truncated_file_names_the_offset_and_is_status_1);
    tcase_add_test(tc, a_frame_shorter_than_its_key_is_status_1);
    tcase_add_test(tc, an_undecodable_payload_is_flagged_and_status_1);
    tcase_add_test(tc, a_frame_larger_than_the_first_read_buffer_is_dumped);
    tcase_add_test(tc, truth_frames_are_summarised_per_gamma);
    tcase_add_test(tc, a_truth_frame_whose_counts_disagree_is_undecodable);
    tcase_add_test(tc, a_missing_file_is_status_2);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(dump_suite()); }

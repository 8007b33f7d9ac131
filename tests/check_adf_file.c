/* check_adf_file.c: Check suite for libadf's files: round trips, whole-frame reads, truncation, bad lengths, write errors. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adf.h"
#include "ahead.h"
#include "testkit.h"

static char dir[64];

static void make_dir(void) { tk_make_tmpdir(dir, sizeof dir, "check_adf_file"); }

static void remove_dir(void) { tk_remove_tree(dir); }

static const char *path(const char *name) { return tk_path(dir, name); }

/* Appends a meta:sync frame of `length` bytes whose payload bytes count up from its event number. */
static void sync_frame(adf_writer *w, uint32_t event, size_t length)
{
    uint8_t payload[8192];
    adf_begin(w, ADF_ID_META_SYNC, event, 1000 + event);
    for (size_t at = ADF_KEY_SIZE; at < length;) { /* a put per 8 KiB: the bulk cases write some 100 MB */
        size_t n = length - at < sizeof payload ? length - at : sizeof payload;
        for (size_t i = 0; i < n; i++)
            payload[i] = (uint8_t)(event + at + i);
        adf_put(w, payload, n);
        at += n;
    }
    ck_assert_int_eq(adf_end(w), ADF_OK);
}

/* Frames of the given lengths back to back in buf; returns the bytes used. */
static size_t stream(uint8_t *buf, size_t cap, const size_t *lengths, size_t n)
{
    adf_writer w;
    adf_writer_init(&w, buf, cap);
    for (size_t i = 0; i < n; i++)
        sync_frame(&w, (uint32_t)i, lengths[i]);
    ck_assert_int_eq(w.status, ADF_OK);
    return w.used;
}

static void expect_read(adf_file *f, uint8_t *buf, size_t cap, int rc, size_t used, size_t frames)
{
    size_t u = 99, n = 99;
    ck_assert_int_eq(adf_file_read(f, buf, cap, &u, &n), rc);
    ck_assert_uint_eq(u, used);
    ck_assert_uint_eq(n, frames);
}

static void expect_text(adf_file *f, int status, const char *text)
{
    char msg[300];
    adf_file_describe(f, status, msg, sizeof msg);
    ck_assert_msg(strstr(msg, text) != NULL, "\"%s\" lacks \"%s\"", msg, text);
    ck_assert_msg(strstr(msg, dir) != NULL, "\"%s\" does not name the file", msg);
}

START_TEST(test_round_trip)
{
    static const size_t lengths[] = {20, 21, 100, 333, 20, 480, 64, 25, 200, 77, 301, 20};
    uint8_t src[2000], back[2000], mem[501];
    size_t size = stream(src, sizeof src, lengths, 12), got = 0, frames = 0;
    adf_file *f;
    ck_assert_int_eq(adf_file_open_write(&f, path("a.adf"), 0), ADF_OK);
    ck_assert_int_eq(adf_file_write(f, src, 141), ADF_OK); /* 20 + 21 + 100 */
    ck_assert_int_eq(adf_file_write(f, src + 141, 0), ADF_OK);
    ck_assert_int_eq(adf_file_write(f, src + 141, size - 141), ADF_OK);
    ck_assert_uint_eq(adf_file_offset(f), size);
    ck_assert_int_eq(adf_file_close(f), ADF_OK);

    ck_assert_int_eq(adf_file_open_read(&f, path("a.adf")), ADF_OK);
    uint8_t *buf = mem + 1; /* odd address: nothing in libadf may care */
    for (;;) {
        size_t used, n;
        ck_assert_int_eq(adf_file_read(f, buf, 500, &used, &n), ADF_OK);
        if (used == 0)
            break;
        size_t counted;
        ck_assert_int_eq(adf_validate(buf, used, NULL, &counted), 0);
        ck_assert_uint_eq(counted, n);
        memcpy(back + got, buf, used);
        got += used;
        frames += n;
        ck_assert_uint_eq(adf_file_offset(f), got);
    }
    ck_assert_uint_eq(got, size);
    ck_assert_uint_eq(frames, 12);
    ck_assert_mem_eq(back, src, size);
    expect_read(f, buf, 500, ADF_OK, 0, 0);
    ck_assert_int_eq(adf_file_close(f), ADF_OK);
}
END_TEST

START_TEST(test_position_stays_at_first_frame_that_did_not_fit)
{
    static const size_t lengths[] = {100, 100, 100};
    uint8_t src[300], buf[250];
    adf_file *f;
    tk_write_bytes(path("b.adf"), src, stream(src, sizeof src, lengths, 3));
    ck_assert_int_eq(adf_file_open_read(&f, path("b.adf")), ADF_OK);
    expect_read(f, buf, sizeof buf, ADF_OK, 200, 2);
    ck_assert_uint_eq(adf_file_offset(f), 200);
    ck_assert_uint_eq(adf_file_next_length(f), 100);
    ck_assert_mem_eq(buf, src, 200);
    expect_read(f, buf, sizeof buf, ADF_OK, 100, 1);
    ck_assert_mem_eq(buf, src + 200, 100);
    expect_read(f, buf, sizeof buf, ADF_OK, 0, 0);
    ck_assert_uint_eq(adf_file_offset(f), 300);
    adf_file_close(f);
}
END_TEST

START_TEST(test_truncated_in_key)
{
    static const size_t lengths[] = {100, 60, 80};
    uint8_t src[300], buf[1000];
    adf_file *f;
    stream(src, sizeof src, lengths, 3);
    tk_write_bytes(path("c.adf"), src, 167); /* 7 bytes of the third key */
    ck_assert_int_eq(adf_file_open_read(&f, path("c.adf")), ADF_OK);
    expect_read(f, buf, sizeof buf, ADF_OK, 160, 2);
    ck_assert_mem_eq(buf, src, 160);
    expect_read(f, buf, sizeof buf, ADF_E_TRUNCATED, 0, 0);
    expect_text(f, ADF_E_TRUNCATED, "c.adf: the file ends 7 bytes into the 20-byte key of the frame at offset 160");
    expect_read(f, buf, sizeof buf, ADF_E_TRUNCATED, 0, 0);
    ck_assert_uint_eq(adf_file_offset(f), 160);
    adf_file_close(f);
}
END_TEST

START_TEST(test_truncated_in_payload)
{
    static const size_t lengths[] = {100, 60, 80};
    uint8_t src[300], buf[1000];
    adf_file *f;
    stream(src, sizeof src, lengths, 3);
    tk_write_bytes(path("d.adf"), src, 210);
    ck_assert_int_eq(adf_file_open_read(&f, path("d.adf")), ADF_OK);
    expect_read(f, buf, 100, ADF_OK, 100, 1);
    expect_read(f, buf, 100, ADF_OK, 60, 1);
    expect_read(f, buf, 100, ADF_E_TRUNCATED, 0, 0);
    expect_text(f, ADF_E_TRUNCATED, "the file ends inside the frame at offset 160: length 80, only 50 bytes left");
    adf_file_close(f);
}
END_TEST

START_TEST(test_frame_too_big)
{
    static const size_t lengths[] = {50, 500, 40};
    uint8_t src[600], buf[500];
    adf_file *f;
    tk_write_bytes(path("e.adf"), src, stream(src, sizeof src, lengths, 3));
    ck_assert_int_eq(adf_file_open_read(&f, path("e.adf")), ADF_OK);
    expect_read(f, buf, 100, ADF_OK, 50, 1);
    expect_read(f, buf, 100, ADF_E_TOO_BIG, 0, 0);
    expect_text(f, ADF_E_TOO_BIG, "e.adf: the frame at offset 50 is 500 bytes, larger than the whole buffer (100 bytes)");
    ck_assert_uint_eq(adf_file_next_length(f), 500);
    ck_assert_uint_eq(adf_file_offset(f), 50);
    expect_read(f, buf, 500, ADF_OK, 500, 1); /* not sticky: enough room delivers it */
    ck_assert_mem_eq(buf, src + 50, 500);
    expect_read(f, buf, 500, ADF_OK, 40, 1);
    expect_read(f, buf, 500, ADF_OK, 0, 0);
    adf_file_close(f);
}
END_TEST

START_TEST(test_short_length)
{
    static const size_t lengths[] = {50, 40};
    uint8_t src[100], buf[500];
    adf_file *f;
    stream(src, sizeof src, lengths, 2);
    adf_put_u32(src + 50, 8);
    tk_write_bytes(path("g.adf"), src, 90);
    ck_assert_int_eq(adf_file_open_read(&f, path("g.adf")), ADF_OK);
    expect_read(f, buf, sizeof buf, ADF_OK, 50, 1);
    expect_read(f, buf, sizeof buf, ADF_E_SHORT, 0, 0);
    expect_text(f, ADF_E_SHORT, "g.adf: frame at offset 50: length 8 is below the 20-byte key");
    expect_read(f, buf, sizeof buf, ADF_E_SHORT, 0, 0);
    adf_file_close(f);
}
END_TEST

START_TEST(test_bad_composite)
{
    static const size_t lengths[] = {30};
    uint8_t src[200], buf[500];
    adf_writer w;
    adf_file *f;
    stream(src, sizeof src, lengths, 1);
    adf_writer_init(&w, src + 30, 170);
    adf_begin(&w, ADF_ID_EVENT_DATA_PSA, 1, 1);
    sync_frame(&w, 1, 24);
    sync_frame(&w, 2, 24);
    adf_end(&w);
    adf_put_u32(src + 30 + 44, 25); /* second member one byte past its parent */
    tk_write_bytes(path("h.adf"), src, 30 + w.used);
    ck_assert_int_eq(adf_file_open_read(&f, path("h.adf")), ADF_OK);
    expect_read(f, buf, sizeof buf, ADF_OK, 30, 1);
    expect_read(f, buf, sizeof buf, ADF_E_SUB_OVERRUN, 0, 0);
    expect_text(f, ADF_E_SUB_OVERRUN, "h.adf: sub-frame at offset 74: length 25 runs past the end of its parent");
    adf_file_close(f);
}
END_TEST

/* Requests of 4 MiB and more are read in parallel straight into the
 * caller's buffer (file.c's bulk path): the same frames, offsets, next
 * lengths and errors as frame by frame, on an 18 MB file whose last frame
 * has a short length, then (second file) a truncated payload, then (third)
 * a short length half-way.  With
 * read-ahead the same again, the requests' sizes changing between calls
 * (a read ahead longer than the request, and shorter). */
static void bulk_case(const char *name, uint32_t bad_length, size_t cut, int ahead, size_t bad, size_t N)
{
    enum { CAP = 5u << 20, STEP = 512u << 10 };
    size_t *lengths = malloc(N * sizeof *lengths), total = 0;
    for (size_t i = 0; i < N; i++) /* 9000 frames: 2 KB on average; more: 70 bytes (many a block) */
        total += lengths[i] = 20 + (i * 7919) % (N > 9000 ? 100 : 4000);
    uint8_t *src = malloc(total), *buf = malloc(CAP + STEP), *back = malloc(total);
    ck_assert_ptr_nonnull(src);
    ck_assert_uint_eq(stream(src, total, lengths, N), total);
    size_t last = 0; /* where frame `bad` starts: the reads end there */
    for (size_t i = 0; i < bad; i++)
        last += lengths[i];
    if (bad_length)
        adf_put_u32(src + last, bad_length);
    tk_write_bytes(path(name), src, total - cut);
    adf_file *f;
    ck_assert_int_eq(adf_file_open_read(&f, path(name)), ADF_OK);
    ck_assert_int_eq(adf_file_set_read_ahead(f, ahead), ADF_OK);
    size_t got = 0, frames = 0, calls = 0, used, n, cap = CAP;
    int rc;
    while ((rc = adf_file_read(f, buf, cap, &used, &n)) == ADF_OK && used > 0) {
        ck_assert_uint_le(used, cap);
        memcpy(back + got, buf, used);
        got += used;
        frames += n;
        calls++;
        ck_assert_uint_eq(adf_file_offset(f), got);
        if (got < last) { /* the next frame's key is held, as frame by frame; it did not fit */
            ck_assert_uint_eq(adf_file_next_length(f), lengths[frames]);
            ck_assert_uint_gt(used + lengths[frames], cap);
        }
        cap = ahead ? CAP + (calls % 3 == 2 ? STEP : 0) - (calls % 3 == 0 ? STEP : 0) : CAP;
    }
    ck_assert_uint_ge(calls, last > 3 * CAP ? 4 : 2);
    ck_assert_uint_eq(got, last);
    ck_assert_uint_eq(frames, bad);
    ck_assert_mem_eq(back, src, last);
    ck_assert_int_eq(rc, bad_length ? ADF_E_SHORT : ADF_E_TRUNCATED);
    char msg[300], want[120];
    adf_file_describe(f, rc, msg, sizeof msg);
    snprintf(want, sizeof want, "at offset %zu", last);
    ck_assert_msg(strstr(msg, want) != NULL, "\"%s\" lacks \"%s\"", msg, want);
    adf_file_close(f);
    free(lengths);
    free(src);
    free(buf);
    free(back);
}

START_TEST(test_bulk_reads_match_frame_reads)
{
    for (int ahead = 0; ahead < 2; ahead++) {
        bulk_case("bulk-short.adf", 8, 0, ahead, 9000 - 1, 9000);
        bulk_case("bulk-cut.adf", 0, 10, ahead, 9000 - 1, 9000);
        bulk_case("bulk-middle.adf", 8, 0, ahead, 9000 / 2, 9000); /* inside a block read ahead whole */
        bulk_case("bulk-small.adf", 8, 0, ahead, 400000 - 1, 400000); /* more frames than the first room */
    }
}
END_TEST

/* A read ahead that met the end of the file is not used: frames appended
 * to the file after it (a file still being written) are delivered. */
START_TEST(test_read_ahead_sees_a_growing_file)
{
    enum { N = 3000, CAP = 4u << 20 };
    size_t *lengths = malloc(N * sizeof *lengths), total = 0, first = 0;
    for (size_t i = 0; i < N; i++)
        total += lengths[i] = 1000 + (i * 7919) % 3000;
    for (size_t i = 0; i < N / 2; i++)
        first += lengths[i];
    uint8_t *src = malloc(total), *buf = malloc(CAP), *back = malloc(total);
    ck_assert_uint_eq(stream(src, total, lengths, N), total);
    tk_write_bytes(path("grow.adf"), src, first);
    adf_file *f, *w;
    ck_assert_int_eq(adf_file_open_read(&f, path("grow.adf")), ADF_OK);
    ck_assert_int_eq(adf_file_set_read_ahead(f, 1), ADF_OK);
    size_t got = 0, used, n;
    ck_assert_int_eq(adf_file_read(f, buf, CAP, &used, &n), ADF_OK); /* then the rest, to the end, read ahead */
    memcpy(back, buf, used);
    got += used;
    ck_assert_int_eq(adf_file_open_write(&w, path("grow.adf"), 1), ADF_OK);
    ck_assert_int_eq(adf_file_write(w, src + first, total - first), ADF_OK);
    ck_assert_int_eq(adf_file_close(w), ADF_OK);
    while (adf_file_read(f, buf, CAP, &used, &n) == ADF_OK && used > 0) {
        memcpy(back + got, buf, used);
        got += used;
    }
    ck_assert_uint_eq(got, total);
    ck_assert_mem_eq(back, src, total);
    ck_assert_int_eq(adf_file_set_read_ahead(f, 0), ADF_OK);
    adf_file_close(f);
    ck_assert_int_eq(adf_file_open_write(&w, path("w.adf"), 0), ADF_OK);
    ck_assert_int_eq(adf_file_set_read_ahead(w, 1), ADF_E_ARG);
    adf_file_close(w);
    free(lengths);
    free(src);
    free(buf);
    free(back);
}
END_TEST

START_TEST(test_write_refuses_bad_buffer)
{
    static const size_t lengths[] = {100, 60};
    uint8_t src[200], buf[500];
    adf_file *f;
    stream(src, sizeof src, lengths, 2);
    ck_assert_int_eq(adf_file_open_write(&f, path("i.adf"), 0), ADF_OK);
    ck_assert_int_eq(adf_file_write(f, src, 100), ADF_OK);
    ck_assert_int_eq(adf_file_write(f, src, 159), ADF_E_PAST_END);
    expect_text(f, ADF_E_PAST_END, "i.adf: refused to write a bad buffer: frame at offset 200: length 60 runs past");
    ck_assert_uint_eq(adf_file_offset(f), 100);
    ck_assert_int_eq(adf_file_write(f, src + 100, 60), ADF_OK); /* the refusal does not stick */
    ck_assert_int_eq(adf_file_close(f), ADF_OK);
    ck_assert_int_eq(adf_file_open_read(&f, path("i.adf")), ADF_OK);
    expect_read(f, buf, sizeof buf, ADF_OK, 160, 2);
    ck_assert_mem_eq(buf, src, 160);
    adf_file_close(f);
}
END_TEST

START_TEST(test_append)
{
    static const size_t lengths[] = {100, 60, 33};
    uint8_t src[200], buf[500];
    adf_file *f;
    stream(src, sizeof src, lengths, 3);
    tk_write_bytes(path("j.adf"), src, 160);
    ck_assert_int_eq(adf_file_open_write(&f, path("j.adf"), 1), ADF_OK);
    ck_assert_uint_eq(adf_file_offset(f), 160);
    ck_assert_int_eq(adf_file_write(f, src + 160, 33), ADF_OK);
    ck_assert_uint_eq(adf_file_offset(f), 193);
    ck_assert_int_eq(adf_file_close(f), ADF_OK);
    ck_assert_int_eq(adf_file_open_read(&f, path("j.adf")), ADF_OK);
    expect_read(f, buf, sizeof buf, ADF_OK, 193, 3);
    ck_assert_mem_eq(buf, src, 193);
    adf_file_close(f);
    ck_assert_int_eq(adf_file_open_write(&f, path("j.adf"), 0), ADF_OK); /* without append: emptied */
    ck_assert_uint_eq(adf_file_offset(f), 0);
    ck_assert_int_eq(adf_file_close(f), ADF_OK);
    ck_assert_int_eq(adf_file_open_read(&f, path("j.adf")), ADF_OK);
    expect_read(f, buf, sizeof buf, ADF_OK, 0, 0);
    adf_file_close(f);
}
END_TEST

/* Appending to a sparse 5 GiB file: offsets past 4 GiB survive. */
START_TEST(test_offsets_past_4gib)
{
    static const size_t lengths[] = {40};
    const uint64_t big = 5ull << 30;
    uint8_t src[40];
    adf_file *f;
    stream(src, sizeof src, lengths, 1);
    FILE *raw = fopen(path("k.adf"), "wb");
    ck_assert_ptr_nonnull(raw);
    ck_assert_int_eq(ftruncate(fileno(raw), (off_t)big), 0);
    fclose(raw);
    ck_assert_int_eq(adf_file_open_write(&f, path("k.adf"), 1), ADF_OK);
    ck_assert_uint_eq(adf_file_offset(f), big);
    ck_assert_int_eq(adf_file_write(f, src, 40), ADF_OK);
    ck_assert_uint_eq(adf_file_offset(f), big + 40);
    adf_put_u32(src, 41);
    ck_assert_int_eq(adf_file_write(f, src, 40), ADF_E_PAST_END);
    expect_text(f, ADF_E_PAST_END, "frame at offset 5368709160: length 41");
    ck_assert_int_eq(adf_file_close(f), ADF_OK);
}
END_TEST

START_TEST(test_write_errors_reported)
{
    static uint8_t src[100 + (3 << 20)];
    static const size_t lengths[] = {100, 1 << 20, 1 << 20, 1 << 20};
    adf_file *f;
    stream(src, sizeof src, lengths, 4);
    ck_assert_int_eq(adf_file_open_write(&f, "/dev/full", 0), ADF_OK);
    ck_assert_int_eq(adf_file_write(f, src, 50), ADF_E_PAST_END); /* cuts the first frame */
    ck_assert_int_eq(adf_file_write(f, src, 100), ADF_OK);        /* held in the stdio buffer */
    ck_assert_int_eq(adf_file_close(f), ADF_E_IO);

    ck_assert_int_eq(adf_file_open_write(&f, "/dev/full", 0), ADF_OK);
    ck_assert_int_eq(adf_file_write(f, src, sizeof src), ADF_E_IO);
    char msg[200];
    adf_file_describe(f, ADF_E_IO, msg, sizeof msg);
    ck_assert_str_eq(msg, "/dev/full: write failed near offset 0: No space left on device");
    ck_assert_int_eq(adf_file_write(f, src, 1 << 20), ADF_E_IO);
    ck_assert_int_eq(adf_file_close(f), ADF_E_IO);
}
END_TEST

START_TEST(test_open_and_argument_errors)
{
    adf_file *f = (adf_file *)1;
    uint8_t buf[40];
    size_t used;
    errno = 0;
    ck_assert_int_eq(adf_file_open_read(&f, path("missing.adf")), ADF_E_IO);
    ck_assert_ptr_null(f);
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_int_eq(adf_file_open_write(&f, path("no/such/dir.adf"), 0), ADF_E_IO);
    ck_assert_int_eq(adf_file_open_read(&f, NULL), ADF_E_ARG);
    ck_assert_int_eq(adf_file_open_write(&f, path("w.adf"), 0), ADF_OK);
    ck_assert_int_eq(adf_file_read(f, buf, sizeof buf, &used, NULL), ADF_E_ARG);
    ck_assert_int_eq(adf_file_close(f), ADF_OK);
    ck_assert_int_eq(adf_file_open_read(&f, path("w.adf")), ADF_OK);
    ck_assert_int_eq(adf_file_write(f, buf, 0), ADF_E_ARG);
    ck_assert_int_eq(adf_file_read(f, NULL, 10, &used, NULL), ADF_E_ARG);
    ck_assert_int_eq(adf_file_close(f), ADF_OK);
    ck_assert_int_eq(adf_file_close(NULL), ADF_E_ARG);
}
END_TEST

/* A read ahead's bytes reach the caller's buffer exactly, wherever it
 * starts and however long the take (the copy streams 64-byte runs into a
 * 16-byte aligned destination, with the edges copied apart). */
START_TEST(test_read_ahead_copies_every_byte)
{
    const size_t size = (3u << 20) + 37;
    uint8_t *bytes = malloc(size), *got = malloc(size + 64);
    ck_assert_ptr_nonnull(bytes);
    ck_assert_ptr_nonnull(got);
    for (size_t i = 0; i < size; i++)
        bytes[i] = (uint8_t)(i * 2654435761u >> 13);
    tk_write_bytes(path("raw.bin"), bytes, size);
    FILE *fp = fopen(path("raw.bin"), "rb");
    ck_assert_ptr_nonnull(fp);
    const size_t starts[] = { 0, 3, 16, 17 }, wants[] = { size, (1u << 20) + 5, 63, 1 };
    for (size_t i = 0; i < sizeof starts / sizeof *starts; i++)
        for (size_t j = 0; j < sizeof wants / sizeof *wants; j++) {
            adf_ahead a;
            size_t whole = 0, frames = 0;
            memset(&a, 0, sizeof a);
            memset(got, 0xA5, size + 64);
            ck_assert_int_eq(adf_ahead_ask(&a, fileno(fp), 0, size, 3), 0);
            ck_assert_int_eq(adf_ahead_take(&a, 0, got + starts[i], wants[j], 3, &whole, &frames), (long long)wants[j]);
            ck_assert_int_eq(memcmp(got + starts[i], bytes, wants[j]), 0);
            size_t outside = 0; /* bytes written before the start or past the end */
            for (size_t k = 0; k < size + 64; k++)
                outside += (k < starts[i] || k >= starts[i] + wants[j]) && got[k] != 0xA5;
            ck_assert_uint_eq(outside, 0);
            adf_ahead_free(&a);
        }
    fclose(fp);
    free(bytes);
    free(got);
}
END_TEST

/* Typed payloads read straight from a file into a buffer at an odd address. */
START_TEST(test_payloads_from_file_unaligned)
{
    uint8_t mem[2000], *buf = mem + 3;
    adf_writer w;
    adf_psa p, q;
    adf_tracked t, u;
    adf_eof e = {2, 0}, e2;
    adf_file *f;
    memset(&p, 0, sizeof p);
    memset(&t, 0, sizeof t);
    p.crystal_id = 12;
    p.n_hits = 2;
    p.hit[1].e = 511.0f;
    p.hit[1].segment = 35;
    t.n_gammas = 1;
    t.gamma[0].e = 1332.5f;
    adf_writer_init(&w, buf, 1900);
    adf_psa_write(&w, 1, 5, &p);
    adf_tracked_write(&w, 1, 5, &t);
    e.bytes = w.used;
    adf_eof_write(&w, 2, 6, &e);
    ck_assert_int_eq(w.status, ADF_OK);
    ck_assert_int_eq(adf_file_open_write(&f, path("l.adf"), 0), ADF_OK);
    ck_assert_int_eq(adf_file_write(f, buf, w.used), ADF_OK);
    ck_assert_int_eq(adf_file_close(f), ADF_OK);
    memset(mem, 0, sizeof mem);

    ck_assert_int_eq(adf_file_open_read(&f, path("l.adf")), ADF_OK);
    expect_read(f, buf + 2, 1000, ADF_OK, w.used, 3); /* buf + 2: still odd */
    adf_file_close(f);
    adf_iter it;
    adf_frame fr;
    adf_iter_init(&it, buf + 2, w.used);
    ck_assert_int_eq(adf_iter_next(&it, &fr), 1);
    ck_assert_int_eq(adf_psa_read(&fr, &q), ADF_OK);
    ck_assert_uint_eq(q.crystal_id, 12);
    ck_assert_int_eq(q.hit[1].segment, 35);
    ck_assert(q.hit[1].e == 511.0f);
    ck_assert_int_eq(adf_iter_next(&it, &fr), 1);
    ck_assert_int_eq(adf_tracked_read(&fr, &u), ADF_OK);
    ck_assert(u.gamma[0].e == 1332.5f);
    ck_assert_int_eq(adf_iter_next(&it, &fr), 1);
    ck_assert_int_eq(adf_eof_read(&fr, &e2), ADF_OK);
    ck_assert_uint_eq(e2.frames, 2);
    ck_assert_uint_eq(e2.bytes, fr.offset);
    ck_assert_int_eq(adf_iter_next(&it, &fr), 0);
}
END_TEST

static Suite *file_suite(void)
{
    Suite *s = suite_create("adf_file");
    TCase *tc = tcase_create("files");
    tcase_add_checked_fixture(tc, make_dir, remove_dir);
    tcase_set_timeout(tc, 60); /* the bulk cases write and read some 100 MB; slow under the sanitizers */
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_position_stays_at_first_frame_that_did_not_fit);
    tcase_add_test(tc, test_truncated_in_key);
    tcase_add_test(tc, test_truncated_in_payload);
    tcase_add_test(tc, test_frame_too_big);
    tcase_add_test(tc, test_short_length);
    tcase_add_test(tc, test_bad_composite);
    tcase_add_test(tc, test_bulk_reads_match_frame_reads);
    tcase_add_test(tc, test_read_ahead_sees_a_growing_file);
    tcase_add_test(tc, test_write_refuses_bad_buffer);
    tcase_add_test(tc, test_append);
    tcase_add_test(tc, test_offsets_past_4gib);
    tcase_add_test(tc, test_write_errors_reported);
    tcase_add_test(tc, test_open_and_argument_errors);
    tcase_add_test(tc, test_payloads_from_file_unaligned);
    tcase_add_test(tc, test_read_ahead_copies_every_byte);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(file_suite()); }

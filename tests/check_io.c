/* check_io.c: adf_reader.so driven through the NARVAL ABI, and the replay topology end to end (adf_writer.so: check_publish.c). */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adf.h"
#include "narval.h"
#include "testkit.h"

static char tmp[PATH_MAX];     /* this test's directory: conf files, data, logs */
static char conf_dir[PATH_MAX + 8];
static tk_actor rd;

/* ---- helpers: paths, files, actors ----------------------------------------- */

static const char *in_tmp(const char *name) { return tk_path(tmp, name); }

static void conf(const char *actor_name, const char *text)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s.conf", conf_dir, actor_name);
    tk_write_text(path, text);
}

static void setup(void)
{
    tk_make_tmpdir(tmp, sizeof tmp, "check_io");
    snprintf(conf_dir, sizeof conf_dir, "%s/conf", tmp);
    ck_assert_int_eq(mkdir(conf_dir, 0700), 0);
    tk_load_actor(&rd, "adf_reader.so");
}

static void teardown(void)
{
    dlclose(rd.so);
    tk_remove_tree(tmp);
}

/* Test data: frames of many sizes (20 to 20 + 499 bytes), some composite. */
static size_t make_frames(uint8_t *buf, size_t cap, unsigned n, unsigned seed)
{
    adf_writer w;
    uint8_t payload[512];
    adf_writer_init(&w, buf, cap);
    for (unsigned i = 0; i < n; i++) {
        unsigned k = i * 37u + seed * 101u;
        for (unsigned j = 0; j < sizeof payload; j++)
            payload[j] = (uint8_t)(k + j * 13u);
        if (k % 11 == 3) {
            adf_begin(&w, ADF_ID_EVENT_DATA_PSA, i, 100u * i);
            for (unsigned c = 0; c < 1 + k % 3; c++) {
                adf_begin(&w, ADF_ID_DATA_PSA, i, 100u * i + c);
                adf_put(&w, payload, k % 60);
                adf_end(&w);
            }
        } else {
            adf_begin(&w, k % 2 ? ADF_ID_NW_CRYSTAL : ADF_ID_META_SYNC, i, 100u * i);
            adf_put(&w, payload, k % 500);
        }
        ck_assert_int_eq(adf_end(&w), ADF_OK);
    }
    return w.used;
}

/* Writes n frames to a file in tmp through libadf; returns its bytes (malloc'd). */
static uint8_t *make_file(const char *name, unsigned n, unsigned seed, size_t *size)
{
    uint8_t *buf = malloc(600u * n + 64);
    ck_assert_ptr_nonnull(buf);
    *size = make_frames(buf, 600u * n + 64, n, seed);
    adf_file *f;
    ck_assert_int_eq(adf_file_open_write(&f, in_tmp(name), 0), ADF_OK);
    ck_assert_int_eq(adf_file_write(f, buf, *size), ADF_OK);
    ck_assert_int_eq(adf_file_close(f), ADF_OK);
    return buf;
}

static size_t largest_frame(const uint8_t *buf, size_t size)
{
    adf_iter it;
    adf_frame f;
    size_t max = 0;
    adf_iter_init(&it, buf, size);
    while (adf_iter_next(&it, &f) > 0)
        max = f.key.length > max ? f.key.length : max;
    return max;
}

static void *new_instance(tk_actor *a)
{
    unsigned e = 99;
    void *inst = a->reg(&e);
    ck_assert_uint_eq(e, 0);
    ck_assert_ptr_nonnull(inst);
    a->initialise(inst, &e);
    ck_assert_uint_eq(e, 0);
    a->start(inst, &e);
    ck_assert_uint_eq(e, 0);
    return inst;
}

static void end_instance(tk_actor *a, void *inst)
{
    unsigned e = 99;
    a->stop(inst, &e);
    ck_assert_uint_eq(e, 0);
    a->unload(inst, &e);
    ck_assert_uint_eq(e, 0);
}

static void configure(tk_actor *a)
{
    unsigned e = 99;
    a->config(conf_dir, &e);
    ck_assert_uint_eq(e, 0);
}

typedef struct drained {
    uint8_t *bytes;
    size_t size;
    unsigned blocks;
} drained;

/* Calls process_block with cap-byte buffers until the end of data, checking every block. */
static drained drain(void *inst, unsigned cap)
{
    drained d = { malloc(1), 0, 0 };
    uint8_t *block = malloc(cap + 16);
    ck_assert_ptr_nonnull(block);
    for (;;) {
        unsigned used = 0, e = 99;
        memset(block, 0xA5, cap + 16);
        rd.produce(inst, block, cap, &used, &e);
        ck_assert_uint_eq(e, 0);
        ck_assert_uint_le(used, cap);
        for (unsigned i = cap; i < cap + 16; i++)
            ck_assert_uint_eq(block[i], 0xA5);
        if (used == 0)
            break;
        size_t frames, bad;
        ck_assert_int_eq(adf_validate(block, used, &bad, &frames), ADF_OK); /* whole frames only */
        d.bytes = realloc(d.bytes, d.size + used);
        memcpy(d.bytes + d.size, block, used);
        d.size += used;
        d.blocks++;
    }
    free(block);
    return d;
}

enum { EOF_SIZE = ADF_KEY_SIZE + ADF_EOF_PAYLOAD };

/* A producer's data ends with exactly one meta:eof, its last frame, whose
 * payload counts the frames and bytes before it and whose key holds the
 * event number after the last data frame's and that frame's timestamp.  Checks that of the first
 * `size` bytes of `bytes` and returns the bytes before the meta:eof. */
static size_t data_before_eof(const uint8_t *bytes, size_t size, uint32_t frames)
{
    adf_iter it;
    adf_frame f, last = { 0 }, eof = { 0 };
    unsigned eofs = 0, n = 0;
    adf_iter_init(&it, bytes, size);
    while (adf_iter_next(&it, &f) > 0) {
        if (f.key.id == ADF_ID_META_EOF) {
            eofs++;
            eof = f;
        } else {
            last = f;
        }
        n++;
    }
    ck_assert_uint_eq(eofs, 1);
    ck_assert_uint_eq(eof.offset, size - EOF_SIZE);
    ck_assert_uint_eq(n, frames + 1);
    adf_eof e;
    ck_assert_int_eq(adf_eof_read(&eof, &e), ADF_OK);
    ck_assert_uint_eq(e.frames, frames);
    ck_assert_uint_eq(e.bytes, size - EOF_SIZE);
    ck_assert_uint_eq(eof.key.event, last.key.event + 1);
    ck_assert_uint_eq(eof.key.timestamp, last.key.timestamp);
    return size - EOF_SIZE;
}

/* stderr goes to a file while `fn` runs, so a test can check the log lines. */
static char logged[8192];

static void capture_begin(int *saved) { *saved = tk_capture_begin(in_tmp("stderr.log")); }

static void capture_end(int saved)
{
    tk_capture_end(saved, in_tmp("stderr.log"), logged, sizeof logged);
    fputs(logged, stderr);
}

/* ADFReader.conf = text is refused by process_config with `why` in the log. */
static void conf_refused(const char *text, const char *why)
{
    unsigned e = 0;
    int saved;
    conf("ADFReader", text);
    capture_begin(&saved);
    rd.config(conf_dir, &e);
    capture_end(saved);
    ck_assert_uint_eq(e, NARVAL_E_CONFIG);
    ck_assert_msg(strstr(logged, why) != NULL, "no '%s' in: %s", why, logged);
}

/* process_stop on the reader instance r, its log lines in `logged`; it succeeds. */
static void stopped(void *r)
{
    int saved;
    unsigned e = 99;
    capture_begin(&saved);
    rd.stop(r, &e);
    capture_end(saved);
    ck_assert_uint_eq(e, 0);
}

/* ---- reader ------------------------------------------------------------------ */

START_TEST(reader_whole_file_any_buffer)
{
    size_t size;
    uint8_t *want = make_file("a.adf", 400, 1, &size);
    size_t largest = largest_frame(want, size);
    const unsigned caps[] = { (unsigned)largest, (unsigned)largest + 1, 1000, 4096, 65536, 1u << 20 };
    snprintf(logged, sizeof logged, "File %s\n", in_tmp("a.adf"));
    conf("ADFReader", logged);
    configure(&rd);
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        void *r = new_instance(&rd);
        drained d = drain(r, caps[i]);
        ck_assert_uint_eq(data_before_eof(d.bytes, d.size, 400), size);
        ck_assert_mem_eq(d.bytes, want, size);
        ck_assert_uint_ge(d.blocks, (unsigned)((size + EOF_SIZE + caps[i] - 1) / caps[i]));
        if (caps[i] >= size + EOF_SIZE)
            ck_assert_uint_eq(d.blocks, 1); /* the meta:eof after the last frame, in its block */
        unsigned used = 7, e = 99;
        uint8_t block[64];
        rd.produce(r, block, sizeof block, &used, &e); /* after the end: still the end */
        ck_assert_uint_eq(e, 0);
        ck_assert_uint_eq(used, 0);
        end_instance(&rd, r);
        free(d.bytes);
    }
    free(want);
}
END_TEST

/* Frames of 100 and 500 bytes: a 200-byte buffer takes the first, then asks for 500. */
START_TEST(reader_buffer_smaller_than_a_frame)
{
    uint8_t frames[600], payload[480];
    adf_writer w;
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)(i * 7);
    adf_writer_init(&w, frames, sizeof frames);
    adf_begin(&w, ADF_ID_META_SYNC, 1, 1);
    adf_put(&w, payload + 300, 80);
    adf_end(&w);
    adf_begin(&w, ADF_ID_NW_CRYSTAL, 2, 2);
    adf_put(&w, payload, 480);
    ck_assert_int_eq(adf_end(&w), ADF_OK);
    ck_assert_uint_eq(w.used, 600);
    adf_file *f;
    ck_assert_int_eq(adf_file_open_write(&f, in_tmp("two.adf"), 0), ADF_OK);
    ck_assert_int_eq(adf_file_write(f, frames, 600), ADF_OK);
    ck_assert_int_eq(adf_file_close(f), ADF_OK);
    snprintf(logged, sizeof logged, "File %s\n", in_tmp("two.adf"));
    conf("ADFReader", logged);
    configure(&rd);
    void *r = new_instance(&rd);
    uint8_t block[600 + 16];
    unsigned used = 0, e = 99;
    memset(block, 0xA5, sizeof block);
    rd.produce(r, block, 200, &used, &e);
    ck_assert_uint_eq(e, 0);
    ck_assert_uint_eq(used, 100);
    ck_assert_mem_eq(block, frames, 100);
    for (int attempt = 0; attempt < 2; attempt++) { /* asking again changes nothing */
        memset(block, 0xA5, sizeof block);
        rd.produce(r, block, 200, &used, &e);
        ck_assert_uint_eq(e, NARVAL_E_OUTPUT_SIZE);
        ck_assert_uint_eq(used, 500);
        for (size_t i = 0; i < sizeof block; i++)
            ck_assert_uint_eq(block[i], 0xA5);
    }
    rd.produce(r, block, 499, &used, &e);
    ck_assert_uint_eq(e, NARVAL_E_OUTPUT_SIZE);
    ck_assert_uint_eq(used, 500);
    rd.produce(r, block, 500, &used, &e);
    ck_assert_uint_eq(e, 0);
    ck_assert_uint_eq(used, 500);
    ck_assert_mem_eq(block, frames + 100, 500);
    /* no room was left for the meta:eof: it comes alone, and asks for its size */
    rd.produce(r, block, EOF_SIZE - 1, &used, &e);
    ck_assert_uint_eq(e, NARVAL_E_OUTPUT_SIZE);
    ck_assert_uint_eq(used, EOF_SIZE);
    rd.produce(r, block, 500, &used, &e);
    ck_assert_uint_eq(e, 0);
    ck_assert_uint_eq(used, EOF_SIZE);
    uint8_t stream[600 + EOF_SIZE];
    memcpy(stream, frames, 600);
    memcpy(stream + 600, block, EOF_SIZE);
    ck_assert_uint_eq(data_before_eof(stream, sizeof stream, 2), 600); /* it counts the run's frames */
    rd.produce(r, block, 500, &used, &e);
    ck_assert_uint_eq(e, 0);
    ck_assert_uint_eq(used, 0);
    end_instance(&rd, r);
}
END_TEST

START_TEST(reader_files_in_order_repeated)
{
    size_t na, nb;
    uint8_t *a = make_file("a.adf", 50, 1, &na);
    uint8_t *b = make_file("b b.adf", 70, 2, &nb);
    snprintf(logged, sizeof logged, "# two files, the second on its own line\nFile %s\n"
             "File \"%s\"\nRepeat 2\n", in_tmp("a.adf"), in_tmp("b b.adf"));
    conf("ADFReader", logged);
    configure(&rd);
    void *r = new_instance(&rd);
    drained d = drain(r, 4096);
    ck_assert_uint_eq(data_before_eof(d.bytes, d.size, 240), 2 * (na + nb));
    ck_assert_mem_eq(d.bytes, a, na);
    ck_assert_mem_eq(d.bytes + na, b, nb);
    ck_assert_mem_eq(d.bytes + na + nb, a, na);
    ck_assert_mem_eq(d.bytes + 2 * na + nb, b, nb);
    unsigned e = 99;
    stopped(r);
    char line[PATH_MAX + 128];
    snprintf(line, sizeof line, "[ADFReader] %s: 100 frames, %zu bytes\n", in_tmp("a.adf"), 2 * na);
    ck_assert_msg(strstr(logged, line), "log lacks '%s':\n%s", line, logged);
    snprintf(line, sizeof line, "[ADFReader] emitted 240 frames (%zu bytes), then meta:eof\n", 2 * (na + nb));
    ck_assert_msg(strstr(logged, line), "log lacks '%s':\n%s", line, logged);
    rd.unload(r, &e);
    ck_assert_uint_eq(e, 0);
    free(d.bytes);
    free(a);
    free(b);
}
END_TEST

START_TEST(reader_max_frames)
{
    size_t n;
    uint8_t *a = make_file("a.adf", 100, 3, &n);
    snprintf(logged, sizeof logged, "File %s %s\nMaxFrames 137\n", in_tmp("a.adf"), in_tmp("a.adf"));
    conf("ADFReader", logged);
    configure(&rd);
    void *r = new_instance(&rd);
    drained d = drain(r, 8192);
    size_t data = data_before_eof(d.bytes, d.size, 137);
    ck_assert_mem_eq(d.bytes, a, n);
    ck_assert_mem_eq(d.bytes + n, a, data - n);
    end_instance(&rd, r);
    free(d.bytes);
    free(a);
}
END_TEST

/* A file cut inside its last frame: every earlier frame arrives, then NARVAL_E_IO naming the offset. */
START_TEST(reader_truncated_file)
{
    size_t n;
    uint8_t *a = make_file("a.adf", 60, 4, &n);
    size_t last = 0;
    adf_iter it;
    adf_frame f;
    adf_iter_init(&it, a, n);
    while (adf_iter_next(&it, &f) > 0)
        last = f.offset;
    ck_assert_int_eq(truncate(in_tmp("a.adf"), (off_t)(n - 3)), 0);
    snprintf(logged, sizeof logged, "File %s\n", in_tmp("a.adf"));
    conf("ADFReader", logged);
    configure(&rd);
    void *r = new_instance(&rd);
    uint8_t *block = malloc(n);
    size_t got = 0;
    unsigned used = 0, e = 0;
    int saved;
    capture_begin(&saved);
    while (e == 0) {
        rd.produce(r, block, 1000, &used, &e);
        if (e == 0) {
            ck_assert_uint_gt(used, 0);
            ck_assert_mem_eq(block, a + got, used);
            got += used;
        }
    }
    capture_end(saved);
    ck_assert_uint_eq(e, NARVAL_E_IO);
    ck_assert_uint_eq(used, 0);
    ck_assert_uint_eq(got, last);
    char line[PATH_MAX + 200];
    snprintf(line, sizeof line, "[ADFReader] error: %s: the file ends inside the frame at offset %zu",
             in_tmp("a.adf"), last);
    ck_assert_msg(strstr(logged, line), "log lacks '%s':\n%s", line, logged);
    end_instance(&rd, r);
    free(block);
    free(a);
}
END_TEST

START_TEST(reader_corrupt_length)
{
    size_t n;
    uint8_t *a = make_file("a.adf", 30, 5, &n);
    size_t second = adf_get_u32(a);
    adf_put_u32(a + second, 7);
    FILE *fp = fopen(in_tmp("a.adf"), "wb");
    fwrite(a, 1, n, fp);
    fclose(fp);
    snprintf(logged, sizeof logged, "File %s\n", in_tmp("a.adf"));
    conf("ADFReader", logged);
    configure(&rd);
    void *r = new_instance(&rd);
    uint8_t block[4096];
    unsigned used = 0, e = 99;
    rd.produce(r, block, sizeof block, &used, &e);
    ck_assert_uint_eq(e, 0);
    ck_assert_uint_eq(used, second);
    rd.produce(r, block, sizeof block, &used, &e);
    ck_assert_uint_eq(e, NARVAL_E_INPUT);
    ck_assert_uint_eq(used, 0);
    end_instance(&rd, r);
    free(a);
}
END_TEST

START_TEST(reader_bad_configuration)
{
    unsigned e = 0;
    rd.config(conf_dir, &e); /* no file: File is mandatory */
    ck_assert_uint_eq(e, NARVAL_E_CONFIG);
    rd.reg(&e);
    ck_assert_uint_eq(e, NARVAL_E_STATE);
    conf("ADFReader", "File x.adf\nRepeat 0\n");
    rd.config(conf_dir, &e);
    ck_assert_uint_eq(e, NARVAL_E_CONFIG);
    snprintf(logged, sizeof logged, "File %s\n", in_tmp("missing.adf"));
    conf("ADFReader", logged);
    rd.config(conf_dir, &e); /* the file is missing: refused by the configuration (and validate) */
    ck_assert_uint_eq(e, NARVAL_E_CONFIG);
    ck_assert_ptr_null(rd.reg(&e));
    ck_assert_uint_eq(e, NARVAL_E_STATE);
}
END_TEST

START_TEST(reader_call_sequence)
{
    size_t n;
    free(make_file("a.adf", 5, 6, &n));
    snprintf(logged, sizeof logged, "File %s\n", in_tmp("a.adf"));
    conf("ADFReader", logged);
    configure(&rd);
    unsigned e = 0, used = 9;
    uint8_t block[4096];
    void *r = rd.reg(&e);
    rd.produce(r, block, sizeof block, &used, &e);
    ck_assert_uint_eq(e, NARVAL_E_STATE);
    ck_assert_uint_eq(used, 0);
    rd.produce(NULL, block, sizeof block, &used, &e);
    ck_assert_uint_eq(e, NARVAL_E_STATE);
    rd.initialise(r, &e);
    rd.start(r, &e);
    rd.pause(r, &e);
    ck_assert_uint_eq(e, 0);
    rd.produce(r, block, sizeof block, &used, &e);
    ck_assert_uint_eq(e, NARVAL_E_STATE);
    rd.resume(r, &e);
    rd.produce(r, block, sizeof block, &used, &e);
    ck_assert_uint_eq(e, 0);
    ck_assert_uint_eq(used, n + EOF_SIZE);
    rd.stop(r, &e);
    rd.reset(r, &e);
    ck_assert_uint_eq(e, 0);
    rd.start(r, &e); /* a second run, straight after reset, reads the data again */
    rd.produce(r, block, sizeof block, &used, &e);
    ck_assert_uint_eq(used, n + EOF_SIZE);
    rd.stop(r, &e);
    rd.reset(r, &e);
    rd.initialise(r, &e); /* as NARVAL does after a reset */
    ck_assert_uint_eq(e, 0);
    rd.start(r, &e);
    ck_assert_uint_eq(e, 0);
    rd.produce(r, block, sizeof block, &used, &e);
    ck_assert_uint_eq(e, 0);
    ck_assert_uint_eq(used, n + EOF_SIZE);
    end_instance(&rd, r);
    ck_assert_ptr_nonnull(strstr(rd.describe(), "ADFReader (producer)"));
    ck_assert_ptr_nonnull(strstr(rd.describe(), "  File       list     (mandatory)"));
    ck_assert_ptr_null(dlsym(rd.so, "kit_config"));
    ck_assert_ptr_null(dlsym(rd.so, "kit_filter_block"));
}
END_TEST

START_TEST(reader_instances_interleaved)
{
    size_t n;
    uint8_t *a = make_file("a.adf", 200, 7, &n);
    snprintf(logged, sizeof logged, "File %s\n", in_tmp("a.adf"));
    conf("ADFReader", logged);
    configure(&rd);
    void *r1 = new_instance(&rd), *r2 = new_instance(&rd);
    uint8_t *out1 = malloc(n + EOF_SIZE), *out2 = malloc(n + EOF_SIZE), block[3000];
    size_t got1 = 0, got2 = 0;
    unsigned used1 = 1, used2 = 1, e;
    while (used1 || used2) {
        rd.produce(r1, block, sizeof block, &used1, &e);
        ck_assert_uint_eq(e, 0);
        ck_assert_uint_le(got1 + used1, n + EOF_SIZE);
        memcpy(out1 + got1, block, used1);
        got1 += used1;
        rd.produce(r2, block, 1500, &used2, &e);
        ck_assert_uint_eq(e, 0);
        ck_assert_uint_le(got2 + used2, n + EOF_SIZE);
        memcpy(out2 + got2, block, used2);
        got2 += used2;
    }
    ck_assert_uint_eq(data_before_eof(out1, got1, 200), n);
    ck_assert_uint_eq(data_before_eof(out2, got2, 200), n);
    ck_assert_mem_eq(out1, a, n);
    ck_assert_mem_eq(out2, a, n);
    end_instance(&rd, r1);
    end_instance(&rd, r2);
    free(out1);
    free(out2);
    free(a);
}
END_TEST

/* Each run ends with one meta:eof and the next run, after stop, reset and
 * initialise, or after a reset in the middle of a run, reads the same frames. */
START_TEST(reader_every_run_reads_the_files_again)
{
    size_t n;
    uint8_t *a = make_file("a.adf", 300, 13, &n);
    snprintf(logged, sizeof logged, "File %s\n", in_tmp("a.adf"));
    conf("ADFReader", logged);
    configure(&rd);
    void *r = new_instance(&rd);
    drained first = drain(r, 5000);
    ck_assert_uint_eq(data_before_eof(first.bytes, first.size, 300), n);
    ck_assert_mem_eq(first.bytes, a, n);
    unsigned e = 99, used = 0;
    rd.stop(r, &e);
    ck_assert_uint_eq(e, 0);
    rd.reset(r, &e);
    ck_assert_uint_eq(e, 0);
    rd.initialise(r, &e);
    ck_assert_uint_eq(e, 0);
    rd.start(r, &e);
    ck_assert_uint_eq(e, 0);
    drained second = drain(r, 5000);
    ck_assert_uint_eq(second.size, first.size);
    ck_assert_mem_eq(second.bytes, first.bytes, first.size);
    /* a reset in the middle of a run (paused, no stop): the next run starts from the first frame */
    uint8_t block[5000];
    rd.stop(r, &e);
    rd.start(r, &e);
    rd.produce(r, block, sizeof block, &used, &e);
    ck_assert_uint_eq(e, 0);
    ck_assert_uint_gt(used, 0);
    rd.pause(r, &e);
    rd.reset(r, &e);
    ck_assert_uint_eq(e, 0);
    rd.start(r, &e);
    ck_assert_uint_eq(e, 0);
    drained third = drain(r, 5000);
    ck_assert_uint_eq(third.size, first.size);
    ck_assert_mem_eq(third.bytes, first.bytes, first.size);
    end_instance(&rd, r);
    free(first.bytes);
    free(second.bytes);
    free(third.bytes);
    free(a);
}
END_TEST

/* A file that ends with a meta:eof (as the writer's do), read twice: its own
 * meta:eof frames are left out, and the data ends with exactly one. */
/* Frames the reader leaves out never need the block to hold them: with a
 * 200-byte block, a file's 500-byte meta:eof and a 500-byte data:crystal of a
 * crystal not selected are read past, the frames kept come out, no call asks
 * for a larger buffer (a NARVAL host would stop the run), and the stop log
 * counts both. */
START_TEST(reader_reads_past_large_frames_it_leaves_out)
{
    uint8_t file[1200], payload[480] = { 0 }, want[200];
    adf_writer w;
    const struct {
        uint32_t id;
        uint16_t crystal;
        size_t bytes;
    } frames[] = { { ADF_ID_META_SYNC, 3, 80 }, { ADF_ID_META_EOF, 0, 480 }, { ADF_ID_NW_CRYSTAL, 7, 480 },
                   { ADF_ID_NW_CRYSTAL, 3, 80 } };
    adf_writer_init(&w, file, sizeof file);
    for (uint32_t i = 0; i < 4; i++) {
        adf_put_u16(payload, frames[i].crystal);
        adf_begin(&w, frames[i].id, i + 1, 10 * (i + 1));
        adf_put(&w, payload, frames[i].bytes);
        ck_assert_int_eq(adf_end(&w), ADF_OK);
    }
    ck_assert_uint_eq(w.used, 1200);
    memcpy(want, file, 100);
    memcpy(want + 100, file + 1100, 100);
    tk_write_bytes(in_tmp("left_out.adf"), file, w.used);
    snprintf(logged, sizeof logged, "File %s\nCrystals 3\n", in_tmp("left_out.adf"));
    conf("ADFReader", logged);
    configure(&rd);
    void *r = new_instance(&rd);
    drained d = drain(r, 200);
    ck_assert_uint_eq(data_before_eof(d.bytes, d.size, 2), 200);
    ck_assert_mem_eq(d.bytes, want, 200);
    unsigned e = 99;
    stopped(r);
    ck_assert_ptr_nonnull(strstr(logged, "1 meta:eof frames of the files not passed on"));
    ck_assert_ptr_nonnull(strstr(logged, "1 frames not of crystals 3 left out"));
    rd.unload(r, &e);
    free(d.bytes);
}
END_TEST

START_TEST(reader_leaves_out_the_files_meta_eof)
{
    uint8_t *data = malloc(600u * 40 + 64);
    ck_assert_ptr_nonnull(data);
    size_t n = make_frames(data, 600u * 40 + 64, 40, 14);
    uint8_t file[600u * 40 + 64 + 2 * EOF_SIZE];
    adf_writer w;
    adf_eof mid = { 20, 0 }, end = { 40, n };
    adf_writer_init(&w, file, sizeof file);
    adf_iter it;
    adf_frame f;
    adf_iter_init(&it, data, n);
    for (int i = 0; adf_iter_next(&it, &f) > 0; i++) {
        if (i == 20)
            ck_assert_int_eq(adf_eof_write(&w, 1, 1, &mid), ADF_OK); /* one in the middle, too */
        ck_assert_int_eq(adf_put_frame(&w, f.data, f.key.length), ADF_OK);
    }
    ck_assert_int_eq(adf_eof_write(&w, 2, 2, &end), ADF_OK);
    tk_write_bytes(in_tmp("eof.adf"), file, w.used);
    snprintf(logged, sizeof logged, "File %s\nRepeat 2\n", in_tmp("eof.adf"));
    conf("ADFReader", logged);
    configure(&rd);
    void *r = new_instance(&rd);
    drained d = drain(r, 3000);
    ck_assert_uint_eq(data_before_eof(d.bytes, d.size, 80), 2 * n);
    ck_assert_mem_eq(d.bytes, data, n);
    ck_assert_mem_eq(d.bytes + n, data, n);
    unsigned e = 99;
    stopped(r);
    ck_assert_ptr_nonnull(strstr(logged, "[ADFReader] 4 meta:eof frames of the files not passed on\n"));
    rd.unload(r, &e);
    free(d.bytes);
    free(data);
}
END_TEST

/* A recorded stream that ends with its meta:eof (tests/mkadf's, as the
 * writer records a chain's) comes out byte for byte: the file's meta:eof is
 * left out and the reader's own, made the same way, takes its place. */
START_TEST(reader_replays_a_recorded_stream_byte_for_byte)
{
    char mkadf[PATH_MAX + 16];
    snprintf(mkadf, sizeof mkadf, "%s/tests/mkadf", tk_build());
    char *argv[] = { mkadf, (char *)in_tmp("rec.adf"), "250", NULL };
    ck_assert_int_eq(tk_run_command(argv, tmp), 0);
    size_t n;
    uint8_t *rec = tk_read_file(in_tmp("rec.adf"), &n);
    snprintf(logged, sizeof logged, "File %s\n", in_tmp("rec.adf"));
    conf("ADFReader", logged);
    configure(&rd);
    void *r = new_instance(&rd);
    drained d = drain(r, 1u << 18);
    ck_assert_uint_eq(d.size, n);
    ck_assert_mem_eq(d.bytes, rec, n);
    end_instance(&rd, r);
    free(d.bytes);
    free(rec);
}
END_TEST

/* A run stopped before the end of the data: no meta:eof, and the log says so. */
START_TEST(reader_stopped_early_sends_no_eof)
{
    size_t n;
    uint8_t *a = make_file("a.adf", 300, 15, &n);
    snprintf(logged, sizeof logged, "File %s\n", in_tmp("a.adf"));
    conf("ADFReader", logged);
    configure(&rd);
    void *r = new_instance(&rd);
    uint8_t block[2000];
    unsigned used = 0, e = 99;
    rd.produce(r, block, sizeof block, &used, &e);
    ck_assert_uint_eq(e, 0);
    ck_assert_uint_lt(used, n);
    ck_assert_mem_eq(block, a, used);
    stopped(r);
    ck_assert_ptr_nonnull(strstr(logged, ", no meta:eof: the run was stopped before the end of the data\n"));
    rd.unload(r, &e);
    ck_assert_uint_eq(e, 0);
    free(a);
}
END_TEST

/* ---- the replay topology under the emulator ------------------------------------ */

START_TEST(replay_topology_end_to_end)
{
    char narwhal[PATH_MAX + 16], topology[PATH_MAX], actors[PATH_MAX + 16];
    snprintf(narwhal, sizeof narwhal, "%s/bin/narwhal", tk_build());
    if (access(narwhal, X_OK) != 0)
        TK_SKIP("%s is not built", narwhal);
    ck_assert_ptr_nonnull(realpath("topologies/replay.xml", topology));
    snprintf(actors, sizeof actors, "%s/actors", tk_build());
    size_t n;
    uint8_t *a = make_file("replay-input.adf", 3000, 12, &n);
    conf("ADFReader", "# relative to the directory narwhal runs in\nFile replay-input.adf\n");
    conf("ADFWriter", "File replay-output.adf\n");
    char *argv[] = { narwhal, "run", topology, "--actors", actors, "--conf", conf_dir, NULL };
    ck_assert_int_eq(tk_run_command(argv, tmp), 0);
    size_t m;
    uint8_t *b = tk_slurp(in_tmp("replay-output.adf"), &m);
    ck_assert_msg(b != NULL, "narwhal wrote no replay-output.adf");
    ck_assert_uint_eq(data_before_eof(b, m, 3000), n); /* the reader's meta:eof is written like any frame */
    ck_assert_mem_eq(a, b, n);
    ck_assert(!tk_exists(in_tmp("replay-output.adf.part")));
    free(a);
    free(b);
}
END_TEST

/* A topology's own conf/NAME/ comes before the shared conf/, by default and with --conf A:B. */
START_TEST(topology_conf_overlay)
{
    char narwhal[PATH_MAX + 16], topology[PATH_MAX], actors[PATH_MAX + 16], list[3 * PATH_MAX];
    snprintf(narwhal, sizeof narwhal, "%s/bin/narwhal", tk_build());
    if (access(narwhal, X_OK) != 0)
        TK_SKIP("%s is not built", narwhal);
    ck_assert_ptr_nonnull(realpath("topologies/replay.xml", topology));
    size_t n, m;
    char *xml = (char *)tk_slurp(topology, &n);
    ck_assert_ptr_nonnull(xml);
    FILE *fp = fopen(in_tmp("chain.xml"), "w");
    ck_assert_ptr_nonnull(fp);
    fwrite(xml, 1, n, fp);
    fclose(fp);
    free(xml);
    snprintf(actors, sizeof actors, "%s/actors", tk_build());
    uint8_t *a = make_file("in.adf", 500, 5, &n);
    ck_assert_int_eq(mkdir(in_tmp("conf/chain"), 0700), 0);
    conf("ADFReader", "File in.adf\n");
    conf("ADFWriter", "File shared-out.adf\n");
    tk_write_text(in_tmp("conf/chain/ADFWriter.conf"), "File own-out.adf\n");
    char *by_default[] = { narwhal, "run", "chain.xml", "--actors", actors, NULL };
    ck_assert_int_eq(tk_run_command(by_default, tmp), 0);
    uint8_t *b = tk_slurp(in_tmp("own-out.adf"), &m);
    ck_assert_msg(b != NULL, "the topology's own ADFWriter.conf was not used");
    ck_assert_uint_eq(data_before_eof(b, m, 500), n);
    ck_assert_mem_eq(a, b, n);
    ck_assert(!tk_exists(in_tmp("shared-out.adf")));
    free(b);
    unlink(in_tmp("own-out.adf"));
    snprintf(list, sizeof list, "%s/conf/chain:%s/conf", tmp, tmp);
    char *listed[] = { narwhal, "run", "chain.xml", "--actors", actors, "--conf", list, NULL };
    ck_assert_int_eq(tk_run_command(listed, tmp), 0);
    ck_assert(tk_exists(in_tmp("own-out.adf")));
    ck_assert(!tk_exists(in_tmp("shared-out.adf")));
    snprintf(list, sizeof list, "%s/conf:%s/nowhere", tmp, tmp);
    char *bad[] = { narwhal, "run", "chain.xml", "--actors", actors, "--conf", list, NULL };
    ck_assert_int_eq(tk_run_command(bad, tmp), 2);
    free(a);
}
END_TEST

/* ---- a crystal's own stream: adf-split and the reader's Crystals ------------------ */

/* A producer's stream of 60 events at 1000 ticks each: a truth frame, then
 * data:psa frames of crystals 3, 5 and 7 (event i: those of i % 4 != c % 4),
 * then the producer's meta:eof. */
static size_t make_stream(uint8_t *buf, size_t cap)
{
    adf_writer w;
    uint8_t payload[40];
    adf_writer_init(&w, buf, cap);
    for (unsigned i = 0; i < 60; i++) {
        memset(payload, (int)i, sizeof payload);
        adf_begin(&w, ADF_ID_NW_TRUTH, i, 1000u * i);
        adf_put(&w, payload, 8);
        ck_assert_int_eq(adf_end(&w), ADF_OK);
        for (unsigned c = 3; c <= 7; c += 2) {
            if (i % 4 == c % 4)
                continue;
            adf_put_u16(payload, (uint16_t)c);
            adf_begin(&w, ADF_ID_DATA_PSA, i, 1000u * i);
            adf_put(&w, payload, 24);
            ck_assert_int_eq(adf_end(&w), ADF_OK);
        }
    }
    adf_eof e = {0, 0};
    ck_assert_int_eq(adf_eof_write(&w, 60, 59000, &e), ADF_OK);
    return w.used;
}

static int adf_split(const char *const *args)
{
    char tool[PATH_MAX + 32];
    snprintf(tool, sizeof tool, "%s/bin/adf-split", tk_build());
    if (access(tool, X_OK) != 0)
        return -1;
    char *argv[8] = {tool};
    for (int i = 0; args[i] && i < 6; i++)
        argv[i + 1] = (char *)args[i];
    return tk_run_command(argv, tmp);
}

/* crystal-C.adf: the stream's frames of crystal C in order, byte for byte,
 * with a meta:sync before the first frame at or past each multiple of 5000
 * (of any crystal) and one after the last frame, then its meta:eof. */
static void check_crystal_file(const uint8_t *in, size_t n, unsigned c)
{
    char name[32];
    snprintf(name, sizeof name, "split/crystal-%u.adf", c);
    size_t size;
    uint8_t *out = tk_read_file(in_tmp(name), &size);
    adf_iter a, b;
    adf_frame f, g;
    uint64_t next = 0;
    uint32_t since = 0, frames = 0, syncs = 0;
    adf_iter_init(&a, in, n);
    adf_iter_init(&b, out, size);
    while (adf_iter_next(&a, &f) > 0 && f.key.id != ADF_ID_META_EOF) {
        if (f.key.timestamp >= next) {
            adf_sync y;
            ck_assert_int_eq(adf_iter_next(&b, &g), 1);
            ck_assert_int_eq(adf_sync_read(&g, &y), ADF_OK);
            ck_assert_uint_eq(y.crystal_id, c);
            ck_assert_uint_eq(y.frames, since);
            ck_assert_uint_eq(g.key.timestamp, f.key.timestamp);
            since = 0;
            syncs++;
            frames++;
            next = (f.key.timestamp / 5000 + 1) * 5000;
        }
        if (f.key.id != ADF_ID_DATA_PSA || adf_get_u16(f.data + ADF_KEY_SIZE) != c)
            continue;
        ck_assert_int_eq(adf_iter_next(&b, &g), 1);
        ck_assert_uint_eq(g.key.length, f.key.length);
        ck_assert_mem_eq(g.data, f.data, f.key.length);
        since++;
        frames++;
    }
    adf_sync y;
    ck_assert_int_eq(adf_iter_next(&b, &g), 1);
    ck_assert_int_eq(adf_sync_read(&g, &y), ADF_OK);
    ck_assert_uint_eq(y.frames, since);
    ck_assert_uint_eq(g.key.event, 59);
    ck_assert_uint_eq(g.key.timestamp, 59000);
    ck_assert_uint_eq(syncs, 12);
    ck_assert_uint_eq(data_before_eof(out, size, frames + 1), g.offset + g.key.length);
    free(out);
}

START_TEST(split_a_stream_per_crystal)
{
    uint8_t in[60 * 200];
    size_t n = make_stream(in, sizeof in);
    tk_write_bytes(in_tmp("all.adf"), in, n);
    ck_assert_int_eq(mkdir(in_tmp("split"), 0700), 0);
    const char *args[] = {"--sync-every", "5000", "all.adf", "split", NULL};
    int rc = adf_split(args);
    if (rc < 0)
        TK_SKIP("%s/bin/adf-split is not built", tk_build());
    ck_assert_int_eq(rc, 0);
    for (unsigned c = 3; c <= 7; c += 2)
        check_crystal_file(in, n, c);
    ck_assert_int_ne(access(in_tmp("split/crystal-4.adf"), F_OK), 0);
    /* the truth alone, in order, then its meta:eof */
    size_t size;
    uint8_t *truth = tk_read_file(in_tmp("split/truth.adf"), &size);
    adf_iter it;
    adf_frame f;
    unsigned k = 0;
    adf_iter_init(&it, truth, data_before_eof(truth, size, 60));
    while (adf_iter_next(&it, &f) > 0) {
        ck_assert_uint_eq(f.key.id, ADF_ID_NW_TRUTH);
        ck_assert_uint_eq(f.key.event, k++);
    }
    free(truth);
}
END_TEST

START_TEST(split_refuses_what_is_no_crystals)
{
    uint8_t in[60 * 200];
    size_t n = make_stream(in, sizeof in);
    /* an event (a composite) after the stream, then a frame earlier than the last */
    adf_writer w;
    adf_writer_init(&w, in + n, sizeof in - n);
    adf_begin(&w, ADF_ID_EVENT_DATA_PSA, 61, 61000);
    ck_assert_int_eq(adf_end(&w), ADF_OK);
    tk_write_bytes(in_tmp("event.adf"), in, n + w.used);
    adf_writer_init(&w, in + n, sizeof in - n);
    adf_begin(&w, ADF_ID_NW_TRUTH, 61, 100);
    ck_assert_int_eq(adf_end(&w), ADF_OK);
    tk_write_bytes(in_tmp("late.adf"), in, n + w.used);
    ck_assert_int_eq(mkdir(in_tmp("out"), 0700), 0);
    const char *event[] = {"event.adf", "out", NULL}, *late[] = {"late.adf", "out", NULL},
               *late_unsynced[] = {"--sync-every", "0", "late.adf", "out", NULL}, *usage[] = {"late.adf", NULL},
               *no_dir[] = {"late.adf", "nowhere", NULL};
    int rc = adf_split(event);
    if (rc < 0)
        TK_SKIP("%s/bin/adf-split is not built", tk_build());
    ck_assert_int_eq(rc, 1);
    ck_assert_int_eq(adf_split(late), 1);
    ck_assert_int_eq(adf_split(no_dir), 1);
    ck_assert_int_eq(adf_split(usage), 2);
    ck_assert_int_eq(adf_split(late_unsynced), 0);
    size_t size;
    uint8_t *truth = tk_read_file(in_tmp("out/truth.adf"), &size);
    ck_assert_uint_eq(adf_get_u64(truth + size - ADF_EOF_PAYLOAD + 4), size - EOF_SIZE);
    ck_assert_uint_eq(adf_get_u32(truth + size - ADF_EOF_PAYLOAD), 61);
    free(truth);
}
END_TEST

/* A crystal's file replays byte for byte (its meta:sync frames pass on, the
 * reader's meta:eof is the file's); a Crystals selection on the whole stream
 * keeps that crystal's frames only and says how many it left out. */
START_TEST(reader_takes_one_crystal)
{
    uint8_t in[60 * 200];
    size_t n = make_stream(in, sizeof in);
    tk_write_bytes(in_tmp("all.adf"), in, n);
    ck_assert_int_eq(mkdir(in_tmp("split"), 0700), 0);
    const char *args[] = {"all.adf", "split", NULL};
    if (adf_split(args) < 0)
        TK_SKIP("%s/bin/adf-split is not built", tk_build());
    size_t size;
    uint8_t *five = tk_read_file(in_tmp("split/crystal-5.adf"), &size);
    snprintf(logged, sizeof logged, "File %s\nCrystals 5\n", in_tmp("split/crystal-5.adf"));
    conf("ADFReader", logged);
    configure(&rd);
    void *r = new_instance(&rd);
    drained d = drain(r, 300);
    ck_assert_uint_eq(d.size, size);
    ck_assert_mem_eq(d.bytes, five, size);
    end_instance(&rd, r);
    free(d.bytes);
    snprintf(logged, sizeof logged, "File %s\nCrystals 4-6\n", in_tmp("all.adf"));
    conf("ADFReader", logged);
    configure(&rd);
    r = new_instance(&rd);
    d = drain(r, 1000);
    adf_iter it;
    adf_frame f;
    unsigned kept = 0;
    adf_iter_init(&it, d.bytes, data_before_eof(d.bytes, d.size, 45));
    while (adf_iter_next(&it, &f) > 0) {
        ck_assert_uint_eq(f.key.id, ADF_ID_DATA_PSA);
        ck_assert_uint_eq(adf_get_u16(f.data + ADF_KEY_SIZE), 5);
        kept++;
    }
    ck_assert_uint_eq(kept, 45);
    int saved;
    unsigned e = 99;
    capture_begin(&saved);
    rd.stop(r, &e);
    capture_end(saved);
    ck_assert_ptr_nonnull(strstr(logged, "[ADFReader] 150 frames not of crystals 4-6 left out\n"));
    rd.unload(r, &e);
    free(d.bytes);
    free(five);
    conf_refused("File x.adf\nCrystals 9-1\n", "ADFReader.conf:2: key 'Crystals': the range '9-1' is empty");
}
END_TEST

/* A run stopped after its first 4 MiB block, the next read ahead: the log
 * counts the frames and bytes emitted, not those read ahead. */
static void stop_after_one_block(const char *file)
{
    enum { CAP = 4u << 20 };
    void *r = new_instance(&rd);
    uint8_t *block = malloc(CAP);
    unsigned used = 0, e = 99;
    size_t frames;
    rd.produce(r, block, CAP, &used, &e);
    ck_assert_uint_eq(e, 0);
    ck_assert_int_eq(adf_validate(block, used, NULL, &frames), ADF_OK);
    char want[160];
    snprintf(want, sizeof want, "%s: %zu frames, %u bytes\n", file, frames, used);
    stopped(r);
    ck_assert_msg(strstr(logged, want) != NULL, "no '%s' in: %s", want, logged);
    snprintf(want, sizeof want, "emitted %zu frames (%u bytes), no meta:eof", frames, used);
    ck_assert_msg(strstr(logged, want) != NULL, "no '%s' in: %s", want, logged);
    rd.unload(r, &e);
    free(block);
}

/* NARVAL's reset in the middle of a run, the next block read ahead in
 * flight, then initialise and a new run (and, a second time, start with no
 * initialise): each new run emits the whole file from its first frame. */
static void reset_with_a_read_ahead(const char *file)
{
    enum { CAP = 4u << 20 };
    size_t n;
    uint8_t *want = tk_read_file(file, &n), *block = malloc(CAP);
    void *r = new_instance(&rd);
    for (int again = 0; again < 2; again++) {
        unsigned used = 0, e = 99;
        if (again) { /* the run before ended with its data: a new one */
            rd.reset(r, &e);
            rd.start(r, &e);
            ck_assert_uint_eq(e, 0);
        }
        rd.produce(r, block, CAP, &used, &e);
        ck_assert_uint_eq(e, 0);
        ck_assert_msg(used > 0, "run %d: no first block", again);
        rd.reset(r, &e);
        ck_assert_uint_eq(e, 0);
        if (!again) {
            rd.initialise(r, &e);
            ck_assert_uint_eq(e, 0);
        }
        rd.start(r, &e);
        ck_assert_uint_eq(e, 0);
        drained d = drain(r, CAP);
        ck_assert_uint_eq(data_before_eof(d.bytes, d.size, 40000), n);
        ck_assert_mem_eq(d.bytes, want, n);
        free(d.bytes);
    }
    end_instance(&rd, r);
    free(block);
    free(want);
}

/* Bulk reads (blocks of 4 MiB and more) by any number of threads, read
 * ahead or not, deliver the file's frames unchanged, block for block;
 * Threads out of range or not a number, and ReadAhead not on or off, are
 * refused with the file, the line and the key. */
START_TEST(reader_threads)
{
    size_t n;
    free(make_file("big.adf", 40000, 7, &n));
    ck_assert_uint_gt(n, 2 * (4u << 20)); /* several 4 MiB blocks, each read in parts */
    uint8_t *want = tk_read_file(in_tmp("big.adf"), &n);
    drained first = { 0 };
    const char *counts[] = { "1", "3", "64", "auto" }, *ahead[] = { "off", "on" };
    for (size_t i = 0; i < 2 * sizeof counts / sizeof *counts; i++) {
        snprintf(logged, sizeof logged, "File %s\nThreads %s\nReadAhead %s\n", in_tmp("big.adf"), counts[i / 2],
                 ahead[i % 2]);
        conf("ADFReader", logged);
        configure(&rd);
        void *r = new_instance(&rd);
        drained d = drain(r, 4u << 20);
        end_instance(&rd, r);
        ck_assert_uint_eq(data_before_eof(d.bytes, d.size, 40000), n);
        ck_assert_mem_eq(d.bytes, want, n);
        if (i == 0)
            first = d;
        else {
            ck_assert_uint_eq(d.blocks, first.blocks);
            free(d.bytes);
        }
    }
    free(first.bytes);
    free(want);
    snprintf(logged, sizeof logged, "File %s\n", in_tmp("big.adf")); /* ReadAhead on by default */
    conf("ADFReader", logged);
    configure(&rd);
    stop_after_one_block(in_tmp("big.adf"));
    reset_with_a_read_ahead(in_tmp("big.adf"));
    const char *bad[] = { "0", "65", "many" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(logged, sizeof logged, "File %s\nThreads %s\n", in_tmp("big.adf"), bad[i]);
        conf_refused(logged, "ADFReader.conf:2: key 'Threads'");
    }
    snprintf(logged, sizeof logged, "File %s\nReadAhead maybe\n", in_tmp("big.adf"));
    conf_refused(logged, "ADFReader.conf:2: key 'ReadAhead'");
}
END_TEST

static Suite *io_suite(void)
{
    Suite *s = suite_create("io");
    TCase *tc = tcase_create("reader");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, reader_whole_file_any_buffer);
    tcase_add_test(tc, reader_buffer_smaller_than_a_frame);
    tcase_add_test(tc, reader_reads_past_large_frames_it_leaves_out);
    tcase_add_test(tc, reader_files_in_order_repeated);
    tcase_add_test(tc, reader_max_frames);
    tcase_add_test(tc, reader_truncated_file);
    tcase_add_test(tc, reader_corrupt_length);
    tcase_add_test(tc, reader_bad_configuration);
    tcase_add_test(tc, reader_call_sequence);
    tcase_add_test(tc, reader_instances_interleaved);
    tcase_add_test(tc, reader_every_run_reads_the_files_again);
    tcase_add_test(tc, reader_leaves_out_the_files_meta_eof);
    tcase_add_test(tc, reader_stopped_early_sends_no_eof);
    tcase_add_test(tc, reader_replays_a_recorded_stream_byte_for_byte);
    tcase_add_test(tc, split_a_stream_per_crystal);
    tcase_add_test(tc, split_refuses_what_is_no_crystals);
    tcase_add_test(tc, reader_takes_one_crystal);
    tcase_add_test(tc, reader_threads);
    suite_add_tcase(s, tc);

    tc = tcase_create("replay");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, replay_topology_end_to_end);
    tcase_add_test(tc, topology_conf_overlay);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(io_suite()); }

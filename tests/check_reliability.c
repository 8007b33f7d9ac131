/* check_reliability.c: Check suite for issue 17's fixes across actors and the emulator: bad frames named by file and byte, impossible frame lengths, empty inputs repeated, validate finding missing files, a full disk's errno, a builder block without data. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>

#include "adf.h"
#include "array.h"
#include "narwhal_exec.h"
#include "publish.h"
#include "testkit.h"

static char tmp[PATH_MAX], conf_dir[PATH_MAX + 8];
static uint8_t buf[1 << 20];

static void setup(void)
{
    tk_make_tmpdir(tmp, sizeof tmp, "check_reliability");
    snprintf(conf_dir, sizeof conf_dir, "%s/conf", tmp);
    ck_assert_int_eq(mkdir(conf_dir, 0700), 0);
}

static void teardown(void) { tk_remove_tree(tmp); }

static const char *in_tmp(const char *name) { return tk_path(tmp, name); }

/* The library configured from conf_dir, one instance registered, initialised and started. */
static void *started(tk_actor *a, const char *file)
{
    unsigned e;
    tk_load_actor(a, file);
    a->config(conf_dir, &e);
    ck_assert_uint_eq(e, 0);
    void *inst = a->reg(&e);
    a->initialise(inst, &e);
    a->start(inst, &e);
    ck_assert_uint_eq(e, 0);
    return inst;
}

/* reader -> builder -> tracker -> writer, or reader -> writer (short); the reader's buffer `reader_size` bytes. */
static void write_topology(const char *path, bool short_chain, unsigned reader_size)
{
    static const char head[] =
        "<configuration>\n"
        "<producer><name>reader</name><hostname>localhost</hostname><binary_code>generic_producer</binary_code>\n"
        "<library>adf_reader.so</library><output_buffer_name>d1</output_buffer_name>"
        "<size output_buffer=\"d1\">%u</size></producer>\n";
    static const char chain[] =
        "<intermediary input_buffers=\"1\" output_buffers=\"1\"><name>builder</name>"
        "<binary_code>generic_filter</binary_code><library>builder.so</library>\n"
        "<data_source source_buffer=\"d1\">reader</data_source><output_buffer_name>d2</output_buffer_name>"
        "<size output_buffer=\"d2\">65536</size></intermediary>\n"
        "<intermediary input_buffers=\"1\" output_buffers=\"1\"><name>tracker</name>"
        "<binary_code>generic_filter</binary_code><library>tracker.so</library>\n"
        "<data_source source_buffer=\"d2\">builder</data_source><output_buffer_name>d3</output_buffer_name>"
        "<size output_buffer=\"d3\">65536</size></intermediary>\n"
        "<consumer><name>writer</name><binary_code>generic_consumer</binary_code><library>adf_writer.so</library>\n"
        "<data_source source_buffer=\"d3\">tracker</data_source></consumer>\n</configuration>\n";
    static const char direct[] =
        "<consumer><name>writer</name><binary_code>generic_consumer</binary_code><library>adf_writer.so</library>\n"
        "<data_source source_buffer=\"d1\">reader</data_source></consumer>\n</configuration>\n";
    char sized[sizeof head + 16];
    snprintf(sized, sizeof sized, head, reader_size);
    tk_write_textf(path, "%s%s", sized, short_chain ? direct : chain);
}

static int narwhal(nw_result *r, const char *cmd, const char *topology, bool pipeline)
{
    char actors[PATH_MAX + 16];
    snprintf(actors, sizeof actors, "%s/actors", tk_build());
    const char *args[] = { cmd, topology, "--actors", actors, "--conf", conf_dir, pipeline ? "--pipeline" : NULL,
                           NULL };
    ck_assert_int_eq(nw_run_timed(r, args, NULL, 120, 0, 0), 0);
    return r->status;
}

/* One data:psa frame of crystal `crystal` with one hit at (x, 1, 1) mm, 300 keV. */
static void put_psa(adf_writer *w, uint32_t event, uint16_t crystal, float x)
{
    adf_psa p = { .crystal_id = crystal, .n_hits = 1, .e0 = 300 };
    p.hit[0] = (adf_psa_hit){ .crystal_id = (int16_t)crystal, .x = x, .y = 1, .z = 1, .e = 300 };
    ck_assert_int_eq(adf_psa_write(w, event, 1000u * event, &p), ADF_OK);
}

/* The id of the AGATA array's first crystal (one the tracker knows). */
static uint16_t first_crystal(void)
{
    char msg[256];
    det_array arr;
    ck_assert_msg(det_array_load(&arr, "detector/arrays/agata180.txt", msg, sizeof msg) == 0, "%s", msg);
    uint16_t id = (uint16_t)arr.crystal[0].id;
    det_array_free(&arr);
    return id;
}

/* A bad frame far into a file is named by that file and its byte offset in
 * it, by the actor that rejects it however far down the chain (the builder
 * gets it as the reader read it, the tracker as the builder's event made of
 * it), sequentially and pipelined; the run goes on without it. */
START_TEST(bad_frames_named_by_file_and_byte)
{
    uint16_t id = first_crystal();
    adf_writer w;
    adf_writer_init(&w, buf, sizeof buf);
    size_t short_at = 0, absurd_at = 0;
    for (uint32_t e = 1; e <= 300; e++) {
        if (e == 120) {
            short_at = w.used;
            ck_assert_int_eq(adf_begin(&w, ADF_ID_DATA_PSA, e, 1000u * e), ADF_OK);
            ck_assert_int_eq(adf_put(&w, (uint8_t[4]){ 1, 2, 3, 4 }, 4), ADF_OK);
            ck_assert_int_eq(adf_end(&w), ADF_OK);
            continue;
        }
        if (e == 250)
            absurd_at = w.used;
        put_psa(&w, e, id, e == 250 ? 1e30f : 10);
    }
    tk_write_bytes(in_tmp("in.adf"), buf, w.used);
    tk_write_textf(tk_path(conf_dir, "ADFReader.conf"), "File %s\n", in_tmp("in.adf"));
    tk_write_textf(tk_path(conf_dir, "ADFWriter.conf"), "File %s\n", in_tmp("out.adf"));
    write_topology(in_tmp("chain.xml"), false, 4096);
    char builder_line[PATH_MAX + 256], tracker_line[PATH_MAX + 256];
    snprintf(builder_line, sizeof builder_line, " of the input block, read from %s at byte %zu: payload of 4 bytes, "
             "shorter than the 24-byte global part", in_tmp("in.adf"), short_at);
    snprintf(tracker_line, sizeof tracker_line, " of the input block, made from data:psa read from %s at byte %zu: "
             "crystal %u: a hit at (1e+30, 1, 1) mm", in_tmp("in.adf"), absurd_at, id);
    for (int pipelined = 0; pipelined < 2; pipelined++) {
        static nw_result r;
        ck_assert_msg(narwhal(&r, "run", in_tmp("chain.xml"), pipelined) == 0, "%s", r.err);
        ck_assert_msg(strstr(r.err, "[Builder] warning: bad frame rejected: event 120 (data:psa of crystal 513) at "
                                    "byte "), "%s", r.err);
        ck_assert_msg(strstr(r.err, builder_line), "no '%s' in\n%s", builder_line, r.err);
        ck_assert_msg(strstr(r.err, "[Tracker] warning: bad frame rejected: event 250 (event:data:psa) at byte "),
                      "%s", r.err);
        ck_assert_msg(strstr(r.err, tracker_line), "no '%s' in\n%s", tracker_line, r.err);
        ck_assert_msg(strstr(r.err, "[Tracker] warning: 1 bad frames rejected in this run (MaxBadFrames 100)"), "%s",
                      r.err);
    }
}
END_TEST

/* The same deep in a block of 8 MB read on 8 threads: the offsets the
 * reader tells the host for one large read, and the origin index's fetches
 * ahead by them, still name the right byte. */
START_TEST(bad_frame_named_in_a_large_block)
{
    enum { EVENTS = 60000, BAD = 50000 };
    uint16_t id = first_crystal();
    size_t cap = (size_t)EVENTS * 128;
    uint8_t *big = malloc(cap);
    ck_assert_ptr_nonnull(big);
    adf_writer w;
    adf_writer_init(&w, big, cap);
    size_t short_at = 0;
    for (uint32_t e = 1; e <= EVENTS; e++) {
        if (e != BAD) {
            put_psa(&w, e, id, 10);
            continue;
        }
        short_at = w.used;
        ck_assert_int_eq(adf_begin(&w, ADF_ID_DATA_PSA, e, 1000u * e), ADF_OK);
        ck_assert_int_eq(adf_put(&w, (uint8_t[4]){ 1, 2, 3, 4 }, 4), ADF_OK);
        ck_assert_int_eq(adf_end(&w), ADF_OK);
    }
    ck_assert_uint_gt(short_at, 4u << 20); /* deep in the block: past its first 4 MiB */
    tk_write_bytes(in_tmp("in.adf"), big, w.used);
    free(big);
    tk_write_textf(tk_path(conf_dir, "ADFReader.conf"), "File %s\nThreads 8\n", in_tmp("in.adf"));
    tk_write_textf(tk_path(conf_dir, "ADFWriter.conf"), "File %s\n", in_tmp("out.adf"));
    write_topology(in_tmp("chain.xml"), false, 8000000);
    char line[PATH_MAX + 256];
    snprintf(line, sizeof line, "event %u (data:psa of crystal 513) at byte %zu of the input block, read from %s at byte "
             "%zu: payload of 4 bytes", BAD, short_at, in_tmp("in.adf"), short_at);
    static nw_result r;
    ck_assert_msg(narwhal(&r, "run", in_tmp("chain.xml"), false) == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, line), "no '%s' in\n%s", line, r.err);
}
END_TEST

/* A key claiming 4 GiB: the reader names the file, the frame's byte, its
 * kind and event, and says the length is impossible, instead of asking the
 * host for a buffer of 4294967295 bytes. */
START_TEST(impossible_length_is_named)
{
    adf_writer w;
    adf_writer_init(&w, buf, sizeof buf);
    for (uint32_t e = 1; e <= 10; e++)
        put_psa(&w, e, 3, 10);
    size_t at = w.used;
    put_psa(&w, 11, 3, 10);
    adf_put_u32(buf + at, UINT32_MAX);
    tk_write_bytes(in_tmp("in.adf"), buf, w.used);
    tk_write_textf(tk_path(conf_dir, "ADFReader.conf"), "File %s\n", in_tmp("in.adf"));
    tk_write_textf(tk_path(conf_dir, "ADFWriter.conf"), "File %s\n", in_tmp("out.adf"));
    write_topology(in_tmp("replay.xml"), true, 4096);
    static nw_result r;
    ck_assert_int_ne(narwhal(&r, "run", in_tmp("replay.xml"), false), 0);
    char line[PATH_MAX + 256];
    snprintf(line, sizeof line, "[ADFReader] error: %s: the frame at byte %zu (data:psa, event 11) claims 4294967295 "
             "bytes, but the file has %zu bytes from there: an impossible length (a corrupt key) (malformed input "
             "frame)", in_tmp("in.adf"), at, w.used - at);
    ck_assert_msg(strstr(r.err, line), "no '%s' in\n%s", line, r.err);
    ck_assert_msg(!strstr(r.err, "needs an output buffer"), "%s", r.err);
    ck_assert(!tk_exists(in_tmp("out.adf")));
}
END_TEST

/* An empty file read Repeat 10^9 times: the run ends in the first call
 * (Check's timeout of a few seconds stops a reader that reads it 10^9 times
 * in one call, deaf to the host), with a warning that says why. */
START_TEST(empty_input_repeated_ends_at_once)
{
    tk_actor rd;
    tk_write_bytes(in_tmp("empty.adf"), "", 0);
    tk_write_textf(tk_path(conf_dir, "ADFReader.conf"), "File %s\nRepeat 1000000000\n", in_tmp("empty.adf"));
    void *r = started(&rd, "adf_reader.so");
    unsigned e, used = 1;
    char log[4096];
    int saved = tk_capture_begin(in_tmp("stderr.txt"));
    rd.produce(r, buf, sizeof buf, &used, &e);
    tk_capture_end(saved, in_tmp("stderr.txt"), log, sizeof log);
    ck_assert_uint_eq(e, 0);
    ck_assert_uint_eq(used, ADF_KEY_SIZE + ADF_EOF_PAYLOAD); /* the run's meta:eof alone */
    ck_assert_uint_eq(adf_get_u32(buf + 4), ADF_ID_META_EOF);
    ck_assert_msg(strstr(log, "pass 1 over the files gave no frame to emit: the 999999999 passes left are skipped"),
                  "%s", log);
    rd.produce(r, buf, sizeof buf, &used, &e);
    ck_assert_uint_eq(used, 0);
    rd.stop(r, &e);
    rd.unload(r, &e);
}
END_TEST

/* validate runs every actor's process_config, which now checks the files
 * the configuration names: a missing input, a missing array, an output that
 * cannot be made are found before a run, with the file and the key. */
START_TEST(validate_finds_missing_files)
{
    static nw_result r;
    write_topology(in_tmp("chain.xml"), false, 4096);
    tk_write_bytes(in_tmp("in.adf"), "", 0);
    tk_write_textf(tk_path(conf_dir, "ADFReader.conf"), "File %s\n", in_tmp("in.adf"));
    tk_write_textf(tk_path(conf_dir, "ADFWriter.conf"), "File %s\n", in_tmp("out/run.adf"));
    ck_assert_msg(narwhal(&r, "validate", in_tmp("chain.xml"), false) == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, ": ok ("));

    char line[2 * PATH_MAX];
    tk_write_textf(tk_path(conf_dir, "ADFReader.conf"), "File %s\n", in_tmp("missing.adf"));
    ck_assert_int_ne(narwhal(&r, "validate", in_tmp("chain.xml"), false), 0);
    snprintf(line, sizeof line, "ADFReader.conf:1: key 'File': file '%s': No such file or directory",
             in_tmp("missing.adf"));
    ck_assert_msg(strstr(r.err, line), "no '%s' in\n%s", line, r.err);

    tk_write_textf(tk_path(conf_dir, "ADFReader.conf"), "File %s\n", in_tmp("in.adf"));
    tk_write_textf(tk_path(conf_dir, "Tracker.conf"), "Array %s\n", in_tmp("none.txt"));
    ck_assert_int_ne(narwhal(&r, "validate", in_tmp("chain.xml"), false), 0);
    snprintf(line, sizeof line, "Tracker.conf:1: key 'Array': file '%s': No such file or directory",
             in_tmp("none.txt"));
    ck_assert_msg(strstr(r.err, line), "no '%s' in\n%s", line, r.err);

    unlink(tk_path(conf_dir, "Tracker.conf"));
    tk_write_text(in_tmp("plain"), "x");
    tk_write_textf(tk_path(conf_dir, "ADFWriter.conf"), "File %s\n", in_tmp("plain/run.adf"));
    ck_assert_int_ne(narwhal(&r, "validate", in_tmp("chain.xml"), false), 0);
    snprintf(line, sizeof line, "ADFWriter.conf:1: key 'File': output '%s' cannot be made: '%s' is not a directory",
             in_tmp("plain/run.adf"), in_tmp("plain"));
    ck_assert_msg(strstr(r.err, line), "no '%s' in\n%s", line, r.err);
}
END_TEST

/* A full disk, made by a file size limit (EFBIG where a disk gives ENOSPC):
 * the writer's error names the file and the system's reason, never
 * "Success", and nothing is published; the kit's buffered outputs (histo,
 * SearchLog) say the same when they close.  The writer's thread writes a
 * block after the call that brought it: the error comes with the next call
 * or, at the latest, process_stop, before anything is published. */
START_TEST(full_disk_keeps_the_reason)
{
    signal(SIGXFSZ, SIG_IGN); /* the write fails with EFBIG instead (Check runs each test in its own process) */
    struct rlimit lim = { 4096, 4096 };
    adf_writer w;
    adf_writer_init(&w, buf, sizeof buf);
    for (uint32_t e = 1; e <= 400; e++)
        put_psa(&w, e, 3, 10);
    tk_actor wr;
    tk_write_textf(tk_path(conf_dir, "ADFWriter.conf"), "File %s\n", in_tmp("out.adf"));
    void *inst = started(&wr, "adf_writer.so");
    unsigned e;
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    char log[4096];
    int saved = tk_capture_begin(in_tmp("stderr.txt"));
    wr.consume(inst, buf, (unsigned)w.used, &e);
    ck_assert_uint_eq(e, 0);
    wr.stop(inst, &e);
    tk_capture_end(saved, in_tmp("stderr.txt"), log, sizeof log);
    ck_assert_uint_eq(e, NARVAL_E_IO);
    ck_assert_msg(strstr(log, strerror(EFBIG)) && strstr(log, "out.adf.") && !strstr(log, "Success"), "%s", log);
    wr.unload(inst, &e);
    ck_assert(!tk_exists(in_tmp("out.adf")));

    kit_output o = { .fd = -1 };
    char msg[PATH_MAX + 256];
    ck_assert_uint_eq(kit_output_open(&o, in_tmp("spectrum.csv"), msg, sizeof msg), 0);
    FILE *fp = kit_output_stream(&o, msg, sizeof msg);
    ck_assert_ptr_nonnull(fp);
    for (int i = 0; i < 2000; i++)
        fprintf(fp, "%d,%d\n", i, i * i);
    ck_assert_uint_eq(kit_output_publish(&o, true, msg, sizeof msg), NARVAL_E_IO);
    ck_assert_msg(strstr(msg, strerror(EFBIG)) && !strstr(msg, "Success"), "%s", msg);
    ck_assert(!tk_exists(in_tmp("spectrum.csv")));
}
END_TEST

/* Blocks without a data:psa frame (marks only, the end of data only, an
 * empty block) handed no NULL array to qsort: the sanitizer build
 * (SANITIZE=1) aborted on them. */
START_TEST(builder_blocks_without_data)
{
    tk_actor b;
    tk_write_text(tk_path(conf_dir, "Builder.conf"), "Crystals 1\n");
    void *inst = started(&b, "builder.so");
    unsigned e, used;
    adf_writer w;
    adf_writer_init(&w, buf, sizeof buf);
    adf_sync s = { .crystal_id = 1 };
    ck_assert_int_eq(adf_sync_write(&w, 0, 5, &s), ADF_OK);
    static uint8_t out[4096];
    b.filter(inst, buf, (unsigned)w.used, out, sizeof out, &used, &e);
    ck_assert_uint_eq(e, 0);
    ck_assert_uint_eq(used, 0);
    adf_writer_init(&w, buf, sizeof buf);
    adf_eof eof = { 0, 0 };
    ck_assert_int_eq(adf_eof_write(&w, 0, 6, &eof), ADF_OK);
    b.filter(inst, buf, (unsigned)w.used, out, sizeof out, &used, &e);
    ck_assert_uint_eq(e, 0);
    ck_assert_uint_eq(used, w.used); /* the meta:eof passes on, alone */
    b.filter(inst, NULL, 0, out, sizeof out, &used, &e);
    ck_assert_uint_eq(e, 0);
    ck_assert_uint_eq(used, 0);
    b.stop(inst, &e);
    b.unload(inst, &e);
}
END_TEST

static Suite *reliability_suite(void)
{
    Suite *s = suite_create("reliability");
    TCase *tc = tcase_create("actors");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, bad_frames_named_by_file_and_byte);
    tcase_add_test(tc, bad_frame_named_in_a_large_block);
    tcase_add_test(tc, impossible_length_is_named);
    tcase_add_test(tc, validate_finds_missing_files);
    tcase_add_test(tc, full_disk_keeps_the_reason);
    tcase_add_test(tc, builder_blocks_without_data);
    suite_add_tcase(s, tc);
    tc = tcase_create("repeat");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, empty_input_repeated_ends_at_once);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(reliability_suite()); }

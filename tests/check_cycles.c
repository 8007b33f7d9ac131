/* check_cycles.c: the shipped actors under NARVAL's call sequences: runs, reset anywhere, initialise again, pause, meta:eof through reader -> builder -> tracker with no flush call. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "adf.h"
#include "narval.h"
#include "testkit.h"

static char tmp[PATH_MAX];
static char conf_dir[PATH_MAX + 8];
static char detector[PATH_MAX]; /* the repository's detector/ (the tests run from the repository root) */

enum { CAP = 1 << 20, EOF_SIZE = ADF_KEY_SIZE + ADF_EOF_PAYLOAD, EVENTS = 300 };
static uint8_t input[CAP], block[CAP];

static void setup(void)
{
    ck_assert_msg(realpath("detector", detector) != NULL, "run from the repository root: no detector/ here");
    tk_make_tmpdir(tmp, sizeof tmp, "check_cycles");
    snprintf(conf_dir, sizeof conf_dir, "%s/conf", tmp);
    ck_assert_int_eq(mkdir(conf_dir, 0700), 0);
}

static void teardown(void) { tk_remove_tree(tmp); }

static void conf(const char *file, const char *text) { tk_write_text(tk_path(conf_dir, file), text); }

/* data:psa frames of EVENTS events 1000 ticks apart, 1 to 3 crystals each
 * within 10 ticks; the event number is the event's index.  Returns the bytes
 * and the frames (*frames). */
static size_t make_psa(uint8_t *buf, size_t cap, unsigned *frames)
{
    static adf_psa p;
    adf_writer w;
    adf_writer_init(&w, buf, cap);
    *frames = 0;
    for (uint32_t ev = 0; ev < EVENTS; ev++) {
        for (unsigned c = 0; c < 1 + ev % 3; c++) {
            memset(&p, 0, sizeof p);
            p.crystal_id = (uint16_t)(3 * c + ev % 2);
            p.n_hits = 1;
            p.e0 = 200.0f + (float)(ev % 7) * 100.0f;
            p.hit[0] = (adf_psa_hit){ .segment = 5, .crystal_id = (int16_t)p.crystal_id, .x = 10, .y = 5,
                                      .z = 30, .e = p.e0 };
            ck_assert_int_eq(adf_psa_write(&w, ev, 100000 + 1000 * (uint64_t)ev + 5 * c, &p), ADF_OK);
            ++*frames;
        }
    }
    return w.used;
}

/* ---- every actor takes every sequence a NARVAL host may make ---------------------- */

typedef enum role { PRODUCER, FILTER } role;

/* One process_block: a producer fills block, a filter takes `input`. */
static unsigned one_block(const tk_actor *a, role r, void *inst, size_t in_size, unsigned *used)
{
    unsigned e = 99;
    *used = 0;
    if (r == PRODUCER)
        a->produce(inst, block, 4096, used, &e);
    else
        a->filter(inst, input, (unsigned)in_size, block, sizeof block, used, &e);
    return e;
}

static void call_ok(narval_lifecycle_fn *fn, void *inst, const char *what)
{
    unsigned e = 99;
    fn(inst, &e);
    ck_assert_msg(e == 0, "%s returned %u", what, e);
}

static void call_refused(narval_lifecycle_fn *fn, void *inst, const char *what)
{
    unsigned e = 0;
    fn(inst, &e);
    ck_assert_msg(e == NARVAL_E_STATE, "%s out of sequence returned %u, not NARVAL_E_STATE", what, e);
}

/* The NARVAL cycles, then calls out of sequence, on one instance of `file`. */
static void cycle_actor(const char *file, role r, size_t in_size)
{
    tk_actor a;
    unsigned e = 99, used;
    tk_load_actor(&a, file);
    a.config(conf_dir, &e);
    ck_assert_msg(e == 0, "%s: process_config returned %u", file, e);
    void *inst = a.reg(&e);
    ck_assert_uint_eq(e, 0);
    call_ok(a.initialise, inst, "initialise");
    for (int cycle = 0; cycle < 2; cycle++) { /* start, blocks, pause, resume, stop, reset, initialise */
        call_ok(a.start, inst, "start");
        ck_assert_uint_eq(one_block(&a, r, inst, in_size, &used), 0);
        call_ok(a.pause, inst, "pause");
        ck_assert_uint_eq(one_block(&a, r, inst, in_size, &used), NARVAL_E_STATE); /* paused */
        call_ok(a.resume, inst, "resume");
        ck_assert_uint_eq(one_block(&a, r, inst, in_size, &used), 0);
        call_ok(a.stop, inst, "stop");
        call_ok(a.reset, inst, "reset");
        call_ok(a.initialise, inst, "initialise after reset");
    }
    call_ok(a.start, inst, "start");
    ck_assert_uint_eq(one_block(&a, r, inst, in_size, &used), 0);
    call_ok(a.reset, inst, "reset while running");
    call_ok(a.start, inst, "start straight after reset");
    call_ok(a.pause, inst, "pause");
    call_ok(a.reset, inst, "reset while paused");
    call_ok(a.initialise, inst, "initialise after a reset in a run");
    call_ok(a.reset, inst, "reset after initialise");
    call_refused(a.stop, inst, "stop after reset");
    call_refused(a.resume, inst, "resume after reset");
    ck_assert_uint_eq(one_block(&a, r, inst, in_size, &used), NARVAL_E_STATE);
    call_ok(a.start, inst, "start");
    call_refused(a.initialise, inst, "initialise while running");
    call_refused(a.start, inst, "start while running");
    call_ok(a.stop, inst, "stop");
    call_refused(a.initialise, inst, "initialise after stop without reset");
    call_refused(a.stop, inst, "stop twice");
    ck_assert_uint_eq(one_block(&a, r, inst, in_size, &used), NARVAL_E_STATE);
    call_ok(a.start, inst, "start after stop");
    ck_assert_uint_eq(one_block(&a, r, inst, in_size, &used), 0);
    call_ok(a.unload, inst, "unload in a run (abort: no stop)");
    dlclose(a.so);
}

START_TEST(reader_takes_every_sequence)
{
    unsigned frames;
    size_t n = make_psa(input, sizeof input, &frames);
    tk_write_bytes(tk_path(tmp, "in.adf"), input, n);
    char text[PATH_MAX + 32];
    snprintf(text, sizeof text, "File %s\n", tk_path(tmp, "in.adf"));
    conf("ADFReader.conf", text);
    cycle_actor("adf_reader.so", PRODUCER, 0);
}
END_TEST

START_TEST(generator_takes_every_sequence)
{
    char text[3 * PATH_MAX];
    snprintf(text, sizeof text, "Output truth\nEvents 50\nArray %s/arrays/agata180.txt\nCrystal %s/geometry/agata.geo\n",
             detector, detector);
    conf("Generator.conf", text);
    cycle_actor("generator.so", PRODUCER, 0);
}
END_TEST

START_TEST(builder_takes_every_sequence)
{
    unsigned frames;
    size_t n = make_psa(input, sizeof input, &frames);
    conf("Builder.conf", "Window 20\nDelay 2000\n");
    cycle_actor("builder.so", FILTER, n);
}
END_TEST

START_TEST(tracker_takes_every_sequence)
{
    unsigned frames;
    size_t n = make_psa(input, sizeof input, &frames);
    char text[3 * PATH_MAX];
    snprintf(text, sizeof text, "Device cpu\nArray %s/arrays/agata180.txt\nGeometry %s/geometry/agata.geo\n", detector,
             detector);
    conf("Tracker.conf", text);
    cycle_actor("tracker.so", FILTER, n);
}
END_TEST

/* ---- the tracker: meta:eof passed on, re-initialisation, messages ----------------- */

/* The tracker passes the meta:eof on in place, and after reset and initialise
 * gives the same output for the same block: the re-initialisation sets
 * everything up again. */
START_TEST(tracker_passes_eof_on_and_initialises_again)
{
    unsigned frames;
    size_t n = make_psa(input, sizeof input - EOF_SIZE, &frames);
    adf_writer w;
    adf_writer_init(&w, input + n, EOF_SIZE);
    ck_assert_int_eq(adf_eof_write(&w, 299, 7, &(adf_eof){ frames, n }), ADF_OK);
    n += EOF_SIZE;
    char text[3 * PATH_MAX];
    snprintf(text, sizeof text, "Device cpu\nArray %s/arrays/agata180.txt\nGeometry %s/geometry/agata.geo\n", detector,
             detector);
    conf("Tracker.conf", text);
    tk_actor t;
    unsigned e = 99, used = 0;
    tk_load_actor(&t, "tracker.so");
    t.config(conf_dir, &e);
    ck_assert_uint_eq(e, 0);
    void *inst = t.reg(&e);
    call_ok(t.initialise, inst, "initialise");
    call_ok(t.start, inst, "start");
    t.filter(inst, input, (unsigned)n, block, sizeof block, &used, &e);
    ck_assert_uint_eq(e, 0);
    ck_assert_uint_gt(used, EOF_SIZE);
    ck_assert_mem_eq(block + used - EOF_SIZE, input + n - EOF_SIZE, EOF_SIZE);
    uint8_t *first = malloc(used);
    memcpy(first, block, used);
    unsigned first_used = used;
    call_ok(t.stop, inst, "stop");
    call_ok(t.reset, inst, "reset");
    call_ok(t.initialise, inst, "initialise after reset");
    call_ok(t.start, inst, "start");
    t.filter(inst, input, (unsigned)n, block, sizeof block, &used, &e);
    ck_assert_uint_eq(e, 0);
    ck_assert_uint_eq(used, first_used);
    ck_assert_mem_eq(block, first, used);
    call_ok(t.stop, inst, "stop");
    call_ok(t.unload, inst, "unload");
    free(first);
    dlclose(t.so);
}
END_TEST

/* With a ':'-list of directories, an error names the file read, not the list. */
START_TEST(tracker_errors_name_the_file_read)
{
    char other[PATH_MAX + 16], list[2 * PATH_MAX + 64], log[4096], expect[PATH_MAX + 128];
    snprintf(other, sizeof other, "%s/empty", tmp);
    ck_assert_int_eq(mkdir(other, 0700), 0);
    conf("Tracker.conf", "# a comment\nDevice fpga\n");
    snprintf(list, sizeof list, "%s:%s", other, conf_dir);
    tk_actor t;
    unsigned e = 0;
    tk_load_actor(&t, "tracker.so");
    int saved = tk_capture_begin(tk_path(tmp, "stderr.txt"));
    t.config(list, &e);
    tk_capture_end(saved, tk_path(tmp, "stderr.txt"), log, sizeof log);
    ck_assert_uint_eq(e, NARVAL_E_CONFIG);
    snprintf(expect, sizeof expect, "[Tracker] error: %s/Tracker.conf:2: key 'Device': value fpga is not auto or cpu or gpu",
             conf_dir);
    ck_assert_msg(strstr(log, expect) != NULL, "'%s' not in:\n%s", expect, log);
    dlclose(t.so);
}
END_TEST

/* ---- a chain with no flush call: reader -> builder -> tracker, two cycles ------------ */

typedef struct stage {
    tk_actor a;
    void *inst;
} stage;

static void stage_open(stage *s, const char *file)
{
    unsigned e = 99;
    tk_load_actor(&s->a, file);
    s->a.config(conf_dir, &e);
    ck_assert_msg(e == 0, "%s: process_config returned %u", file, e);
    s->inst = s->a.reg(&e);
    ck_assert_uint_eq(e, 0);
    call_ok(s->a.initialise, s->inst, file);
}

/* One run of the chain as NARVAL makes it: blocks while the reader has data,
 * each passed on in the call that brought it, no empty call at the end.
 * Returns the tracker's output (malloc'd) and its size. */
static uint8_t *chain_run(stage *st, size_t *size, unsigned reader_block)
{
    static uint8_t built[CAP], tracked[CAP];
    uint8_t *all = malloc(CAP);
    *size = 0;
    for (int i = 0; i < 3; i++)
        call_ok(st[i].a.start, st[i].inst, "start");
    for (;;) {
        unsigned used = 0, used_b = 0, used_t = 0, e = 99;
        st[0].a.produce(st[0].inst, block, reader_block, &used, &e);
        ck_assert_uint_eq(e, 0);
        if (used == 0)
            break;
        st[1].a.filter(st[1].inst, block, used, built, sizeof built, &used_b, &e);
        ck_assert_uint_eq(e, 0);
        if (used_b == 0)
            continue; /* a real host passes an empty block on to no one */
        st[2].a.filter(st[2].inst, built, used_b, tracked, sizeof tracked, &used_t, &e);
        ck_assert_uint_eq(e, 0);
        ck_assert_uint_le(*size + used_t, CAP);
        memcpy(all + *size, tracked, used_t);
        *size += used_t;
    }
    for (int i = 0; i < 3; i++)
        call_ok(st[i].a.stop, st[i].inst, "stop");
    return all;
}

/* What reached the end of the chain: data:tracked frames and meta:eof frames (the last one). */
static void count_out(const uint8_t *out, size_t size, unsigned *tracked, unsigned *eofs)
{
    adf_iter it;
    adf_frame f;
    *tracked = *eofs = 0;
    adf_iter_init(&it, out, size);
    while (adf_iter_next(&it, &f) > 0) {
        *tracked += f.key.id == ADF_ID_NW_TRACKED;
        *eofs += f.key.id == ADF_ID_META_EOF;
    }
    ck_assert_uint_eq(adf_get_u32(out + size - EOF_SIZE + 4), ADF_ID_META_EOF);
}

START_TEST(chain_without_flush_loses_nothing_over_two_cycles)
{
    unsigned frames;
    size_t n = make_psa(input, sizeof input, &frames);
    tk_write_bytes(tk_path(tmp, "in.adf"), input, n);
    char text[3 * PATH_MAX];
    snprintf(text, sizeof text, "File %s\n", tk_path(tmp, "in.adf"));
    conf("ADFReader.conf", text);
    conf("Builder.conf", "Window 20\nDelay 100000\n"); /* a delay longer than the data: all held till meta:eof */
    snprintf(text, sizeof text, "Device cpu\nArray %s/arrays/agata180.txt\nGeometry %s/geometry/agata.geo\n", detector,
             detector);
    conf("Tracker.conf", text);
    stage st[3];
    stage_open(&st[0], "adf_reader.so");
    stage_open(&st[1], "builder.so");
    stage_open(&st[2], "tracker.so");
    size_t size1, size2;
    char log[16384];
    int saved = tk_capture_begin(tk_path(tmp, "stderr.txt"));
    uint8_t *first = chain_run(st, &size1, 5000);
    for (int i = 0; i < 3; i++) {
        call_ok(st[i].a.reset, st[i].inst, "reset");
        call_ok(st[i].a.initialise, st[i].inst, "initialise after reset");
    }
    uint8_t *second = chain_run(st, &size2, 3000);
    tk_capture_end(saved, tk_path(tmp, "stderr.txt"), log, sizeof log);
    unsigned tracked, eofs;
    count_out(first, size1, &tracked, &eofs);
    ck_assert_uint_eq(tracked, EVENTS); /* every event built and tracked, with no flush call */
    ck_assert_uint_eq(eofs, 1);
    ck_assert_uint_eq(size2, size1);
    ck_assert_mem_eq(second, first, size1); /* the second cycle re-reads and rebuilds the same */
    ck_assert_ptr_null(strstr(log, "held at"));
    char expect[128];
    snprintf(expect, sizeof expect, "built %d events from %u data:psa frames", EVENTS, frames);
    ck_assert_msg(strstr(log, expect) != NULL, "'%s' not in:\n%s", expect, log);
    for (int i = 0; i < 3; i++) {
        call_ok(st[i].a.unload, st[i].inst, "unload");
        dlclose(st[i].a.so);
    }
    free(first);
    free(second);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cycles");
    TCase *tc = tcase_create("sequences");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, reader_takes_every_sequence);
    tcase_add_test(tc, generator_takes_every_sequence);
    tcase_add_test(tc, builder_takes_every_sequence);
    tcase_add_test(tc, tracker_takes_every_sequence);
    suite_add_tcase(s, tc);
    tc = tcase_create("tracker");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, tracker_passes_eof_on_and_initialises_again);
    tcase_add_test(tc, tracker_errors_name_the_file_read);
    suite_add_tcase(s, tc);
    tc = tcase_create("chain");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, chain_without_flush_loses_nothing_over_two_cycles);
    suite_add_tcase(s, tc);
    return tk_run_suite(s);
}

/* check_builder.c: builder.so through the NARVAL ABI: time window, out-of-order frames, one-crystal events, meta:eof, nothing dropped, counts, retries. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adf.h"
#include "narval.h"
#include "testkit.h"

static char tmp[PATH_MAX];
static char conf_dir[PATH_MAX + 8];
static tk_actor builder;

enum { CAP = 1 << 21, MAX_EVENTS = 20000 };
static uint8_t in[CAP], out[CAP];
static size_t out_used;
static adf_writer w;

static void setup(void)
{
    tk_load_actor(&builder, "builder.so");
    tk_make_tmpdir(tmp, sizeof tmp, "check_builder");
    snprintf(conf_dir, sizeof conf_dir, "%s/conf", tmp);
    ck_assert_int_eq(mkdir(conf_dir, 0700), 0);
    adf_writer_init(&w, in, sizeof in);
    out_used = 0;
}

static void teardown(void)
{
    dlclose(builder.so);
    tk_remove_tree(tmp);
}

static void *begin(const char *text)
{
    tk_write_text(tk_path(conf_dir, "Builder.conf"), text);
    unsigned code;
    builder.config(conf_dir, &code);
    ck_assert_uint_eq(code, 0);
    void *inst = builder.reg(&code);
    ck_assert_uint_eq(code, 0);
    builder.initialise(inst, &code);
    ck_assert_uint_eq(code, 0);
    builder.start(inst, &code);
    ck_assert_uint_eq(code, 0);
    return inst;
}

/* The frames written since the last feed, as one block; the output is appended to out. */
static void feed(void *inst)
{
    unsigned used = 0, code;
    builder.filter(inst, in, (unsigned)w.used, out + out_used, (unsigned)(CAP - out_used), &used, &code);
    ck_assert_uint_eq(code, 0);
    out_used += used;
    adf_writer_init(&w, in, sizeof in);
}

/* The host's end of data: an empty block, then stop; stderr is captured into log. */
static void finish(void *inst, char *log, size_t len)
{
    unsigned used = 0, code;
    builder.filter(inst, NULL, 0, out + out_used, (unsigned)(CAP - out_used), &used, &code);
    ck_assert_uint_eq(code, 0);
    out_used += used;
    const char *path = tk_path(tmp, "stderr.txt");
    int saved = tk_capture_begin(path);
    builder.stop(inst, &code);
    tk_capture_end(saved, path, log, len);
    ck_assert_uint_eq(code, 0);
    builder.unload(inst, &code);
    ck_assert_uint_eq(code, 0);
}

/* A data:psa frame of `crystal` at `ts` with one hit whose energy tags it. */
static void put_psa(uint16_t crystal, uint64_t ts, float tag)
{
    adf_psa p = { .crystal_id = crystal, .n_hits = 1 };
    p.hit[0].e = tag;
    p.e0 = tag;
    ck_assert_int_eq(adf_psa_write(&w, (uint32_t)ts, ts, &p), ADF_OK);
}

/* The built events: per event its timestamp, fold and member tags. */
typedef struct event {
    uint64_t ts;
    uint32_t number;
    int fold;
    float tag[64];
    uint16_t crystal[64];
} event;

static event events[MAX_EVENTS];

static int read_events(uint32_t *other_ids, int *n_other)
{
    adf_iter it, sub;
    adf_frame f, m;
    int n = 0, rc;
    if (n_other)
        *n_other = 0;
    adf_iter_init(&it, out, out_used);
    while ((rc = adf_iter_next(&it, &f)) > 0) {
        if (f.key.id != ADF_ID_EVENT_DATA_PSA) {
            ck_assert_ptr_nonnull(n_other);
            other_ids[(*n_other)++] = f.key.id;
            continue;
        }
        ck_assert_int_lt(n, MAX_EVENTS);
        event *e = &events[n++];
        e->ts = f.key.timestamp;
        e->number = f.key.event;
        e->fold = 0;
        ck_assert_int_eq(adf_iter_sub(&sub, &f), ADF_OK);
        while (adf_iter_next(&sub, &m) > 0) {
            adf_psa p;
            ck_assert_int_eq(adf_psa_read(&m, &p), ADF_OK);
            e->tag[e->fold] = p.hit[0].e;
            e->crystal[e->fold++] = p.crystal_id;
        }
    }
    ck_assert_int_eq(rc, 0);
    return n;
}

START_TEST(frames_within_the_window_make_one_event)
{
    char log[4096];
    void *inst = begin("Window 50\nDelay 1000\n");
    put_psa(1, 1000, 1);
    put_psa(2, 1010, 2);
    put_psa(3, 1050, 3); /* exactly at the edge: in */
    put_psa(4, 1051, 4); /* 51 ticks after the first: a new event */
    put_psa(5, 9000, 5);
    feed(inst);
    finish(inst, log, sizeof log);
    ck_assert_int_eq(read_events(NULL, NULL), 3);
    ck_assert_int_eq(events[0].fold, 3);
    ck_assert_uint_eq(events[0].ts, 1000);
    ck_assert_uint_eq(events[0].number, 1000);
    ck_assert_float_eq(events[0].tag[0], 1);
    ck_assert_float_eq(events[0].tag[2], 3);
    ck_assert_int_eq(events[1].fold, 1);
    ck_assert_float_eq(events[1].tag[0], 4);
    ck_assert_int_eq(events[2].fold, 1);
    ck_assert_uint_eq(events[2].ts, 9000);
    ck_assert_ptr_nonnull(strstr(log, "built 3 events from 5 data:psa frames"));
    ck_assert_ptr_nonnull(strstr(log, "fold of the events: 1: 2, 3: 1"));
}
END_TEST

START_TEST(out_of_order_frames_join_their_events_across_blocks)
{
    char log[4096];
    void *inst = begin("Window 20\nDelay 5000\n");
    put_psa(1, 1000, 1);
    put_psa(2, 3000, 2);
    feed(inst);
    ck_assert_uint_eq(out_used, 0); /* nothing is due yet */
    put_psa(3, 1015, 3);            /* 2000 ticks late: within the delay */
    put_psa(4, 2990, 4);
    feed(inst);
    put_psa(5, 9000, 5); /* closes the first two events (9000 > 3000 + 20 + 5000) */
    feed(inst);
    ck_assert_int_eq(read_events(NULL, NULL), 2);
    finish(inst, log, sizeof log);
    ck_assert_int_eq(read_events(NULL, NULL), 3);
    ck_assert_int_eq(events[0].fold, 2);
    ck_assert_float_eq(events[0].tag[0], 1);
    ck_assert_float_eq(events[0].tag[1], 3);
    ck_assert_int_eq(events[1].fold, 2);
    ck_assert_uint_eq(events[1].ts, 2990);
    ck_assert_float_eq(events[1].tag[0], 4);
    ck_assert_float_eq(events[1].tag[1], 2);
    ck_assert_int_eq(events[2].fold, 1);
    ck_assert_ptr_nonnull(strstr(log, "0 frames came after their time was closed"));
}
END_TEST

START_TEST(late_and_repeated_frames_still_become_events)
{
    char log[4096];
    void *inst = begin("Window 20\nDelay 100\n");
    put_psa(1, 1000, 1);
    put_psa(1, 1005, 2); /* the same crystal again: a new event */
    put_psa(2, 5000, 3); /* closes both */
    feed(inst);
    put_psa(3, 1010, 4); /* its time is closed: an event of its own, counted late */
    feed(inst);
    finish(inst, log, sizeof log);
    ck_assert_int_eq(read_events(NULL, NULL), 4);
    ck_assert_float_eq(events[0].tag[0], 1);
    ck_assert_int_eq(events[0].fold, 1);
    ck_assert_float_eq(events[1].tag[0], 2);
    ck_assert_float_eq(events[2].tag[0], 4);
    ck_assert_float_eq(events[3].tag[0], 3);
    ck_assert_ptr_nonnull(strstr(log, "built 4 events from 4 data:psa frames"));
    ck_assert_ptr_nonnull(strstr(log, "1 frames came after their time was closed"));
}
END_TEST

START_TEST(max_held_closes_the_oldest_events_early)
{
    char log[4096];
    void *inst = begin("Window 10\nDelay 1000000\nMaxHeld 3\n");
    for (int i = 0; i < 5; i++)
        put_psa((uint16_t)i, 100 * (uint64_t)i, (float)i);
    feed(inst);
    ck_assert_int_eq(read_events(NULL, NULL), 2);
    finish(inst, log, sizeof log);
    ck_assert_int_eq(read_events(NULL, NULL), 5);
    ck_assert_ptr_nonnull(strstr(log, "2 events closed early by MaxHeld"));
}
END_TEST

static uint64_t lcg = 99;
static uint32_t rnd(uint32_t n)
{
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)((lcg >> 33) % n);
}

START_TEST(nothing_is_dropped_and_folds_add_up)
{
    enum { EVENTS = 3000 };
    static uint8_t fold_of[EVENTS];
    static int seen[EVENTS * 8];
    char log[8192];
    void *inst = begin("Window 30\nDelay 20000\n");
    int frames = 0;
    /* events 1000 ticks apart, 1..8 crystals each, timestamps jittered by up to
     * 25 ticks, and frames shuffled within groups of 40 */
    static struct { uint16_t c; uint64_t ts; int tag; } pool[EVENTS * 8];
    for (int e = 0; e < EVENTS; e++) {
        fold_of[e] = (uint8_t)(1 + rnd(8));
        for (int k = 0; k < fold_of[e]; k++) {
            pool[frames].c = (uint16_t)(k * 20 + rnd(20));
            pool[frames].ts = 10000 + 1000 * (uint64_t)e + rnd(26);
            pool[frames].tag = frames;
            frames++;
        }
    }
    for (int i = 0; i < frames; i++) {
        int j = i - (i % 40) + (int)rnd(40);
        if (j < frames) {
            __typeof__(pool[0]) t = pool[i];
            pool[i] = pool[j];
            pool[j] = t;
        }
    }
    for (int i = 0; i < frames; i++) {
        put_psa(pool[i].c, pool[i].ts, (float)pool[i].tag);
        if (i % 500 == 499)
            feed(inst);
    }
    feed(inst);
    finish(inst, log, sizeof log);
    int n = read_events(NULL, NULL);
    ck_assert_int_eq(n, EVENTS);
    int members = 0;
    uint64_t fold_count[9] = { 0 };
    for (int e = 0; e < n; e++) {
        ck_assert_int_eq(events[e].fold, fold_of[e]);
        fold_count[events[e].fold]++;
        for (int k = 0; k < events[e].fold; k++) {
            int tag = (int)events[e].tag[k];
            ck_assert_int_eq(seen[tag]++, 0);
            members++;
        }
        if (e)
            ck_assert_uint_gt(events[e].ts, events[e - 1].ts);
    }
    ck_assert_int_eq(members, frames);
    char expect[256];
    snprintf(expect, sizeof expect, "built %d events from %d data:psa frames", EVENTS, frames);
    ck_assert_ptr_nonnull(strstr(log, expect));
    snprintf(expect, sizeof expect, "1: %llu, 2: %llu", (unsigned long long)fold_count[1],
             (unsigned long long)fold_count[2]);
    ck_assert_msg(strstr(log, expect) != NULL, "'%s' not in %s", expect, log);
}
END_TEST

/* Stops without the emulator's empty end-of-data call (as NARVAL does) and unloads; the stop's log into log. */
static void stop_only(void *inst, char *log, size_t len)
{
    unsigned code;
    const char *path = tk_path(tmp, "stderr.txt");
    int saved = tk_capture_begin(path);
    builder.stop(inst, &code);
    tk_capture_end(saved, path, log, len);
    ck_assert_uint_eq(code, 0);
    builder.unload(inst, &code);
    ck_assert_uint_eq(code, 0);
}

static void put_eof(uint32_t frames)
{
    adf_eof eof = { frames, 100 };
    ck_assert_int_eq(adf_eof_write(&w, 7, 7, &eof), ADF_OK);
}

/* The ids of the top-level frames of out, in order. */
static int frame_ids(uint32_t *ids, int cap)
{
    adf_iter it;
    adf_frame f;
    int n = 0;
    adf_iter_init(&it, out, out_used);
    while (adf_iter_next(&it, &f) > 0 && n < cap)
        ids[n++] = f.key.id;
    return n;
}

/* meta:eof closes every event held, in the call that brought it, and goes out
 * after them: no flush call is needed, nothing is held at stop. */
START_TEST(eof_emits_every_event_held_then_passes_on)
{
    char log[4096];
    uint32_t ids[16];
    void *inst = begin("Window 20\nDelay 100000\n");
    put_psa(1, 1000, 1);
    put_psa(2, 1010, 2);
    put_psa(1, 5000, 3);
    feed(inst);
    ck_assert_uint_eq(out_used, 0); /* the delay keeps all three */
    put_psa(3, 9000, 4);
    put_eof(4);
    adf_tracked t = { 0 };
    ck_assert_int_eq(adf_tracked_write(&w, 2, 2, &t), ADF_OK); /* after the eof: passes on after it */
    feed(inst);
    ck_assert_int_eq(frame_ids(ids, 16), 5);
    ck_assert_uint_eq(ids[0], ADF_ID_EVENT_DATA_PSA);
    ck_assert_uint_eq(ids[1], ADF_ID_EVENT_DATA_PSA);
    ck_assert_uint_eq(ids[2], ADF_ID_EVENT_DATA_PSA);
    ck_assert_uint_eq(ids[3], ADF_ID_META_EOF);
    ck_assert_uint_eq(ids[4], ADF_ID_DATA_TRACKED);
    uint32_t other[4];
    int n_other;
    ck_assert_int_eq(read_events(other, &n_other), 3);
    ck_assert_int_eq(events[0].fold, 2);
    ck_assert_float_eq(events[1].tag[0], 3);
    ck_assert_float_eq(events[2].tag[0], 4);
    /* the meta:eof passes on byte for byte */
    size_t eof_at = out_used - (ADF_KEY_SIZE + ADF_EOF_PAYLOAD) - (ADF_KEY_SIZE + ADF_TRACKED_HEADER);
    adf_iter it;
    adf_frame f;
    adf_eof e;
    adf_iter_init(&it, out + eof_at, ADF_KEY_SIZE + ADF_EOF_PAYLOAD);
    ck_assert_int_eq(adf_iter_next(&it, &f), 1);
    ck_assert_int_eq(adf_eof_read(&f, &e), ADF_OK);
    ck_assert_uint_eq(e.frames, 4);
    ck_assert_uint_eq(f.key.event, 7);
    stop_only(inst, log, sizeof log);
    ck_assert_ptr_nonnull(strstr(log, "built 3 events from 4 data:psa frames"));
    ck_assert_ptr_nonnull(strstr(log, "1 other frames passed on; 1 meta:eof passed on"));
    ck_assert_ptr_null(strstr(log, "held at stop"));
}
END_TEST

/* Frames after a meta:eof in the same block (another stream's) build on an empty builder. */
START_TEST(frames_after_eof_in_a_block_wait_for_their_own)
{
    char log[4096];
    uint32_t ids[16];
    void *inst = begin("Window 20\nDelay 100000\n");
    put_psa(1, 1000, 1);
    put_eof(1);
    put_psa(2, 990, 2); /* before the closed time: late, an event of its own */
    put_psa(3, 2000, 3);
    put_psa(4, 2010, 4);
    feed(inst);
    ck_assert_int_eq(frame_ids(ids, 16), 2);
    ck_assert_uint_eq(ids[0], ADF_ID_EVENT_DATA_PSA);
    ck_assert_uint_eq(ids[1], ADF_ID_META_EOF);
    put_eof(3);
    feed(inst);
    ck_assert_int_eq(frame_ids(ids, 16), 5);
    ck_assert_uint_eq(ids[4], ADF_ID_META_EOF);
    ck_assert_int_eq(read_events(ids, &(int){ 0 }), 3);
    ck_assert_int_eq(events[1].fold, 1);
    ck_assert_float_eq(events[1].tag[0], 2);
    ck_assert_int_eq(events[2].fold, 2);
    stop_only(inst, log, sizeof log);
    ck_assert_ptr_nonnull(strstr(log, "built 3 events from 4 data:psa frames"));
    ck_assert_ptr_nonnull(strstr(log, "1 frames came after their time was closed"));
    ck_assert_ptr_nonnull(strstr(log, "2 meta:eof passed on"));
}
END_TEST

/* A run stopped without meta:eof (an operator's stop): the frames held are counted and named. */
START_TEST(frames_held_at_stop_are_named)
{
    char log[4096];
    void *inst = begin("Window 20\nDelay 100000\n");
    put_psa(1, 1000, 1); /* event numbers are the timestamps */
    put_psa(2, 1010, 2);
    put_psa(1, 3000, 3);
    feed(inst);
    ck_assert_uint_eq(out_used, 0);
    stop_only(inst, log, sizeof log);
    ck_assert_msg(strstr(log, "[Builder] warning: 3 frames held at stop (events 1000..3000)") != NULL, "%s", log);
    ck_assert_ptr_nonnull(strstr(log, "0 meta:eof passed on"));
}
END_TEST

/* Reset in a run: the held frames are named and dropped; initialise after
 * reset works and the next run starts from nothing. */
START_TEST(reset_in_a_run_then_initialise_and_run_again)
{
    char log[4096];
    unsigned code;
    void *inst = begin("Window 20\nDelay 100000\n");
    put_psa(1, 1000, 1);
    put_psa(2, 4000, 2);
    feed(inst);
    const char *path = tk_path(tmp, "stderr.txt");
    int saved = tk_capture_begin(path);
    builder.pause(inst, &code);
    ck_assert_uint_eq(code, 0);
    builder.reset(inst, &code);
    tk_capture_end(saved, path, log, sizeof log);
    ck_assert_uint_eq(code, 0);
    ck_assert_msg(strstr(log, "[Builder] warning: 2 frames held at reset (events 1000..4000)") != NULL, "%s", log);
    builder.initialise(inst, &code);
    ck_assert_uint_eq(code, 0);
    builder.start(inst, &code);
    ck_assert_uint_eq(code, 0);
    put_psa(3, 7000, 3);
    put_eof(1);
    feed(inst);
    ck_assert_int_eq(read_events((uint32_t[8]){ 0 }, &(int){ 0 }), 1);
    ck_assert_float_eq(events[0].tag[0], 3);
    stop_only(inst, log, sizeof log);
    ck_assert_ptr_nonnull(strstr(log, "built 1 events from 1 data:psa frames"));
    ck_assert_ptr_null(strstr(log, "held at"));
}
END_TEST

/* A block with a meta:eof that does not fit: asking again with the size it
 * named gives what a builder that never saw the small buffer gives. */
START_TEST(eof_block_retried_after_output_size)
{
    char log[4096];
    void *inst = begin("Window 10\nDelay 100000\n");
    put_psa(1, 1000, 1);
    put_psa(2, 1005, 2);
    put_psa(3, 2000, 3);
    put_eof(3);
    put_psa(4, 3000, 4);
    unsigned used = 0, code;
    builder.filter(inst, in, (unsigned)w.used, out, 40, &used, &code);
    ck_assert_uint_eq(code, NARVAL_E_OUTPUT_SIZE);
    unsigned event2 = ADF_KEY_SIZE + 2 * (ADF_KEY_SIZE + ADF_PSA_GLOBAL + ADF_PSA_HIT);
    unsigned event1 = ADF_KEY_SIZE + ADF_KEY_SIZE + ADF_PSA_GLOBAL + ADF_PSA_HIT;
    ck_assert_uint_eq(used, event2 + event1 + ADF_KEY_SIZE + ADF_EOF_PAYLOAD);
    unsigned need = used;
    builder.filter(inst, in, (unsigned)w.used, out, need, &used, &code);
    ck_assert_uint_eq(code, 0);
    ck_assert_uint_eq(used, need);
    out_used = used;
    adf_writer_init(&w, in, sizeof in);
    put_eof(1);
    feed(inst);
    ck_assert_int_eq(read_events((uint32_t[8]){ 0 }, &(int){ 0 }), 3);
    ck_assert_float_eq(events[2].tag[0], 4);
    stop_only(inst, log, sizeof log);
    ck_assert_ptr_nonnull(strstr(log, "built 3 events from 4 data:psa frames"));
    ck_assert_ptr_nonnull(strstr(log, "2 meta:eof passed on"));
}
END_TEST

/* The emulator's empty end-of-data call still flushes (a convenience). */
START_TEST(other_frames_pass_and_the_flush_call_still_works)
{
    char log[4096];
    uint32_t ids[8];
    int n_other;
    void *inst = begin("");
    put_psa(1, 1000, 1);
    adf_tracked t = { 0 };
    ck_assert_int_eq(adf_tracked_write(&w, 2, 2, &t), ADF_OK);
    feed(inst);
    ck_assert_int_eq(read_events(ids, &n_other), 0);
    ck_assert_int_eq(n_other, 1);
    ck_assert_uint_eq(ids[0], ADF_ID_DATA_TRACKED);
    finish(inst, log, sizeof log);
    ck_assert_int_eq(read_events(ids, &n_other), 1);
    ck_assert_int_eq(n_other, 1);
    ck_assert_ptr_nonnull(strstr(log, "1 other frames passed on"));
    ck_assert_ptr_null(strstr(log, "held at stop"));
}
END_TEST

START_TEST(output_too_small_leaves_the_state_untouched)
{
    char log[4096];
    void *inst = begin("Window 10\nDelay 10\n");
    put_psa(1, 1000, 1);
    put_psa(2, 1005, 2);
    put_psa(3, 2000, 3);
    unsigned used = 0, code;
    builder.filter(inst, in, (unsigned)w.used, out, 30, &used, &code);
    ck_assert_uint_eq(code, NARVAL_E_OUTPUT_SIZE);
    unsigned need = used;
    ck_assert_uint_eq(need, ADF_KEY_SIZE + 2 * (ADF_KEY_SIZE + ADF_PSA_GLOBAL + ADF_PSA_HIT));
    builder.filter(inst, in, (unsigned)w.used, out, need, &used, &code);
    ck_assert_uint_eq(code, 0);
    ck_assert_uint_eq(used, need);
    out_used = used;
    adf_writer_init(&w, in, sizeof in);
    finish(inst, log, sizeof log);
    ck_assert_int_eq(read_events(NULL, NULL), 2);
    ck_assert_int_eq(events[0].fold, 2);
    ck_assert_ptr_nonnull(strstr(log, "built 2 events from 3 data:psa frames"));
}
END_TEST

START_TEST(short_psa_frame_is_refused)
{
    void *inst = begin("");
    uint8_t junk[4] = { 1, 2, 3, 4 };
    ck_assert_int_eq(adf_begin(&w, ADF_ID_DATA_PSA, 1, 1), ADF_OK);
    ck_assert_int_eq(adf_put(&w, junk, sizeof junk), ADF_OK);
    ck_assert_int_eq(adf_end(&w), ADF_OK);
    unsigned used = 0, code;
    builder.filter(inst, in, (unsigned)w.used, out, CAP, &used, &code);
    ck_assert_uint_eq(code, NARVAL_E_INPUT);
    ck_assert_uint_eq(used, 0);
    builder.stop(inst, &code);
    builder.unload(inst, &code);
}
END_TEST

static Suite *builder_suite(void)
{
    Suite *s = suite_create("builder");
    TCase *tc = tcase_create("building");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, frames_within_the_window_make_one_event);
    tcase_add_test(tc, out_of_order_frames_join_their_events_across_blocks);
    tcase_add_test(tc, late_and_repeated_frames_still_become_events);
    tcase_add_test(tc, max_held_closes_the_oldest_events_early);
    tcase_add_test(tc, nothing_is_dropped_and_folds_add_up);
    suite_add_tcase(s, tc);
    tc = tcase_create("contract");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, eof_emits_every_event_held_then_passes_on);
    tcase_add_test(tc, frames_after_eof_in_a_block_wait_for_their_own);
    tcase_add_test(tc, frames_held_at_stop_are_named);
    tcase_add_test(tc, reset_in_a_run_then_initialise_and_run_again);
    tcase_add_test(tc, eof_block_retried_after_output_size);
    tcase_add_test(tc, other_frames_pass_and_the_flush_call_still_works);
    tcase_add_test(tc, output_too_small_leaves_the_state_untouched);
    tcase_add_test(tc, short_psa_frame_is_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(builder_suite()); }

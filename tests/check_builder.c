/* check_builder.c: builder.so through the NARVAL ABI: time window, out-of-order frames, one-crystal events, meta:eof, nothing dropped, counts, retries, merging skewed streams. */
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
    ck_assert_uint_eq(ids[4], ADF_ID_NW_TRACKED);
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
    ck_assert_uint_eq(ids[0], ADF_ID_NW_TRACKED);
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

/* The bad-frame policy (kit.h): a data:psa too short for its global part is
 * rejected, counted and named (event, block offset), the frames around it
 * build their events; past MaxBadFrames the block fails. */
START_TEST(short_psa_frame_is_a_bad_frame)
{
    char log[8192];
    void *inst = begin("");
    uint8_t junk[4] = { 1, 2, 3, 4 };
    put_psa(3, 100, 1);
    size_t at = w.used;
    ck_assert_int_eq(adf_begin(&w, ADF_ID_DATA_PSA, 7, 200), ADF_OK);
    ck_assert_int_eq(adf_put(&w, junk, sizeof junk), ADF_OK);
    ck_assert_int_eq(adf_end(&w), ADF_OK);
    put_psa(4, 300, 2);
    const char *path = tk_path(tmp, "stderr.txt");
    int saved = tk_capture_begin(path);
    feed(inst);
    tk_capture_end(saved, path, log, sizeof log);
    char line[256];
    snprintf(line, sizeof line, "[Builder] warning: bad frame rejected: event 7 (data:psa of crystal 513) at byte "
             "%zu of the input block: payload of 4 bytes, shorter than the 24-byte global part", at);
    ck_assert_msg(strstr(log, line) != NULL, "%s", log);
    finish(inst, log, sizeof log);
    ck_assert_msg(strstr(log, "[Builder] warning: 1 bad frames rejected in this run (MaxBadFrames 100)") != NULL,
                  "%s", log);
    ck_assert_int_eq(read_events(NULL, NULL), 2);
    ck_assert_float_eq(events[0].tag[0], 1);
    ck_assert_float_eq(events[1].tag[0], 2);

    inst = begin("MaxBadFrames 0\n");
    adf_writer_init(&w, in, sizeof in);
    ck_assert_int_eq(adf_begin(&w, ADF_ID_DATA_PSA, 7, 200), ADF_OK);
    ck_assert_int_eq(adf_put(&w, junk, sizeof junk), ADF_OK);
    ck_assert_int_eq(adf_end(&w), ADF_OK);
    unsigned used = 5, code;
    saved = tk_capture_begin(path);
    builder.filter(inst, in, (unsigned)w.used, out, CAP, &used, &code);
    tk_capture_end(saved, path, log, sizeof log);
    ck_assert_uint_eq(code, NARVAL_E_INPUT);
    ck_assert_uint_eq(used, 0);
    ck_assert_msg(strstr(log, "1 bad frames in this run, more than MaxBadFrames 0: the run stops; the last: event 7 "
                              "(data:psa of crystal 513) at byte 0 of the input block") != NULL, "%s", log);
    builder.unload(inst, &code);
}
END_TEST



/* ---- merging several crystals' streams ---------------------------------------------------
 * Three crystals' streams, each in time order with a meta:sync every MS_SYNC
 * ticks and a last one at its end, cut into blocks at random and delivered
 * in adversarial orders; the merged events must be, byte for byte, those
 * that the frames sorted by time build as one stream (which has no marks). */
enum { MS_N = 3, MS_EVENTS = 700, MS_ITEMS = MS_EVENTS + 64, MS_SYNC = 5000, MS_WINDOW = 50 };

typedef struct ms_item {
    uint64_t ts;
    uint16_t crystal;
    bool sync;
    float tag;
} ms_item;

typedef struct ms_stream {
    ms_item item[MS_ITEMS];
    int n, block_end[MS_ITEMS], n_blocks, next_block;
    uint64_t next_sync;
} ms_stream;

static ms_stream streams[MS_N];
static ms_item frames_sorted[MS_N * MS_EVENTS];
static int n_frames;
static uint64_t ms_end, early_end;
static uint8_t ref[CAP];
static size_t ref_used;

static void ms_push(int c, uint64_t ts, bool sync, float tag)
{
    ms_stream *s = &streams[c];
    ck_assert_int_lt(s->n, MS_ITEMS);
    s->item[s->n++] = (ms_item){ ts, (uint16_t)c, sync, tag };
}

/* The marks of stream c up to ts: one at each multiple of MS_SYNC. */
static void ms_sync_upto(int c, uint64_t ts)
{
    for (; streams[c].next_sync <= ts; streams[c].next_sync += MS_SYNC)
        ms_push(c, streams[c].next_sync, true, 0);
}

static int by_ts_crystal_tag(const void *pa, const void *pb)
{
    const ms_item *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    if (a->crystal != b->crystal)
        return a->crystal < b->crystal ? -1 : 1;
    return (a->tag > b->tag) - (a->tag < b->tag);
}

/* Events 1..3000 ticks apart (one in ten closer than the window), each
 * firing every crystal with probability 1/2, jittered by up to 30 ticks.
 * Crystal `silent` only sends marks; crystal `early` stops firing halfway
 * and its stream ends there, with a last mark at its last frame, or at
 * UINT64_MAX (end_mark: "this stream has ended"). */
static void ms_make(int silent, int early, bool end_mark)
{
    memset(streams, 0, sizeof streams);
    n_frames = 0;
    uint64_t clock = 1000, last[MS_N] = { 0 };
    for (int e = 0; e < MS_EVENTS; e++) {
        clock += rnd(10) ? 1 + rnd(3000) : rnd(60);
        for (int c = 0; c < MS_N; c++) {
            if (c == silent || (c == early && e >= MS_EVENTS / 2) || rnd(2))
                continue;
            uint64_t ts = clock + rnd(31);
            ts = ts < last[c] ? last[c] : ts;
            last[c] = ts;
            ms_sync_upto(c, ts);
            ms_push(c, ts, false, (float)n_frames);
            frames_sorted[n_frames++] = streams[c].item[streams[c].n - 1];
        }
    }
    ms_end = clock + 30;
    for (int c = 0; c < MS_N; c++) {
        if (c == early) {
            early_end = last[c];
            ms_push(c, end_mark ? UINT64_MAX : last[c], true, 0);
            continue;
        }
        ms_sync_upto(c, ms_end);
        ms_push(c, ms_end, true, 0);
    }
    qsort(frames_sorted, (size_t)n_frames, sizeof *frames_sorted, by_ts_crystal_tag);
    /* the first block of a stream: its first mark alone (a producer's start) */
    for (int c = 0; c < MS_N; c++)
        for (int at = 0; at < streams[c].n;) {
            at += at ? 1 + (int)rnd(30) : 1;
            streams[c].block_end[streams[c].n_blocks++] = at < streams[c].n ? at : streams[c].n;
        }
}

static void put_sync(uint16_t crystal, uint64_t ts)
{
    adf_sync sync = { crystal, 0 };
    ck_assert_int_eq(adf_sync_write(&w, 0, ts, &sync), ADF_OK);
}

/* The single-stream build of the frames sorted by time, cut at random, into ref. */
static void ms_reference(void)
{
    char log[4096];
    out_used = 0;
    void *inst = begin("Window 50\nDelay 0\n");
    for (int i = 0; i < n_frames; i++) {
        put_psa(frames_sorted[i].crystal, frames_sorted[i].ts, frames_sorted[i].tag);
        if (rnd(40) == 0)
            feed(inst);
    }
    put_eof(0);
    feed(inst);
    stop_only(inst, log, sizeof log);
    ck_assert_ptr_nonnull(strstr(log, "0 frames came after their time was closed"));
    memcpy(ref, out, out_used);
    ref_used = out_used;
    out_used = 0;
}

/* Stream c's next block, as one call; false when it has none left. */
static bool ms_block(void *inst, int c)
{
    ms_stream *s = &streams[c];
    if (s->next_block == s->n_blocks)
        return false;
    int from = s->next_block ? s->block_end[s->next_block - 1] : 0, to = s->block_end[s->next_block++];
    for (int i = from; i < to; i++) {
        if (s->item[i].sync)
            put_sync(s->item[i].crystal, s->item[i].ts);
        else
            put_psa(s->item[i].crystal, s->item[i].ts, s->item[i].tag);
    }
    feed(inst);
    return true;
}

typedef int ms_pick_fn(int step);

/* Delivers every stream's blocks in the order pick gives (the next stream
 * with blocks left when the one picked has none); after_block, if set,
 * checks the builder after each block. */
static void ms_deliver(void *inst, ms_pick_fn *pick, void (*after_block)(int c))
{
    for (int step = 0;; step++) {
        int c = pick(step), tries = 0;
        while (tries < MS_N && !ms_block(inst, c)) {
            c = (c + 1) % MS_N;
            tries++;
        }
        if (tries == MS_N)
            return;
        if (after_block)
            after_block(c);
    }
}

/* The merged build of the streams under conf, delivered in pick's order,
 * ended by one meta:eof; the builder's log from start to unload into log. */
static void ms_merge(const char *conf, ms_pick_fn *pick, void (*after_block)(int c), char *log, size_t len)
{
    unsigned code;
    out_used = 0;
    for (int c = 0; c < MS_N; c++)
        streams[c].next_block = 0;
    void *inst = begin(conf);
    const char *path = tk_path(tmp, "merge-stderr.txt");
    int saved = tk_capture_begin(path);
    ms_deliver(inst, pick, after_block);
    put_eof(0);
    feed(inst);
    builder.stop(inst, &code);
    tk_capture_end(saved, path, log, len);
    ck_assert_uint_eq(code, 0);
    builder.unload(inst, &code);
    ck_assert_uint_eq(code, 0);
}

static void same_as_reference(const char *log)
{
    ck_assert_msg(out_used == ref_used && memcmp(out, ref, ref_used) == 0,
                  "merged output (%zu bytes) differs from the single-stream build (%zu bytes)", out_used, ref_used);
    char expect[128];
    snprintf(expect, sizeof expect, "from %d data:psa frames", n_frames);
    ck_assert_ptr_nonnull(strstr(log, expect));
    ck_assert_ptr_nonnull(strstr(log, "0 frames came after their time was closed, 0 events closed early"));
}

/* The builder's configuration for the merges: it waits for the three crystals from the start. */
static const char merge_conf[] = "Window 50\nDelay 0\nCrystals 0-2\n";

static int pick_random(int step) { return (void)step, (int)rnd(MS_N); }
/* The first block of each stream (its first mark: the builder meets all
 * three), then stream 2 falls 10 blocks behind the two others, then all go
 * in turn. */
static int pick_late(int step) { return step < MS_N ? step : step < MS_N + 20 ? step % 2 : step % MS_N; }
/* Stream 2's blocks only after 10 blocks of each other stream, then all in turn. */
static int pick_late_start(int step) { return step < 20 ? step % 2 : step % MS_N; }
/* One whole stream after the other: the largest skew there is. */
static int pick_whole(int step) { return (void)step, 0; }

/* Met through their first blocks, the sources need no Crystals key. */
START_TEST(merged_streams_one_late_by_ten_blocks_build_the_single_stream_events)
{
    char log[4096];
    ms_make(-1, -1, false);
    ms_reference();
    ck_assert_int_gt(ref_used, 0);
    ms_merge("Window 50\nDelay 0\n", pick_late, NULL, log, sizeof log);
    same_as_reference(log);
    ck_assert_ptr_nonnull(strstr(log, "1 meta:eof passed on"));
    ms_merge(merge_conf, pick_late_start, NULL, log, sizeof log);
    same_as_reference(log);
}
END_TEST

START_TEST(merged_streams_in_random_blocks_and_orders_build_the_single_stream_events)
{
    char log[4096];
    for (int round = 0; round < 6; round++) {
        ms_make(-1, -1, false);
        ms_reference();
        ms_merge(merge_conf, round % 3 ? pick_random : pick_whole, NULL, log, sizeof log);
        same_as_reference(log);
    }
}
END_TEST

/* The silent crystal's marks: how far its stream has come so far. */
static uint64_t silent_progress;

static void events_before_the_silent_progress(int c)
{
    int n = read_events(NULL, NULL);
    if (c == 2)
        for (int i = streams[2].block_end[streams[2].next_block - 1] - 1; i >= 0; i--)
            if (streams[2].item[i].sync) {
                silent_progress = streams[2].item[i].ts;
                break;
            }
    /* closed only once the silent stream is past the event's window */
    if (n)
        ck_assert_uint_lt(events[n - 1].ts + MS_WINDOW, silent_progress);
}

/* Stream 2, silent, gets one block in four turns: its marks hold the events back. */
static int pick_silent_lagging(int step) { return step % 4 == 3 ? 2 : step % 2; }

START_TEST(a_silent_source_holds_events_until_its_marks_pass_them)
{
    char log[4096];
    ms_make(2, -1, false);
    ms_reference();
    silent_progress = 0;
    ms_merge(merge_conf, pick_silent_lagging, events_before_the_silent_progress, log, sizeof log);
    same_as_reference(log);
    char expect[64];
    int syncs = 0;
    for (int c = 0; c < MS_N; c++)
        for (int i = 0; i < streams[c].n; i++)
            syncs += streams[c].item[i].sync;
    snprintf(expect, sizeof expect, "1 meta:eof passed on; %d meta:sync taken", syncs);
    ck_assert_msg(strstr(log, expect) != NULL, "'%s' not in %s", expect, log);
}
END_TEST

/* The events the builder may close once every source is at floor (Delay 0). */
static int events_closed_at(uint64_t floor)
{
    int n = 0;
    adf_iter it;
    adf_frame f;
    adf_iter_init(&it, ref, ref_used);
    while (adf_iter_next(&it, &f) > 0)
        n += f.key.id == ADF_ID_EVENT_DATA_PSA && floor > f.key.timestamp && floor - f.key.timestamp > MS_WINDOW;
    return n;
}

static int events_out;
static void count_events(int c) { (void)c, events_out = read_events(NULL, NULL); }

/* Stream 2 ends halfway, delivered first: its last mark, at its last frame,
 * holds the rest until the meta:eof; a last mark at UINT64_MAX ("ended")
 * lets the others' events out as they come.  Both build the same events. */
START_TEST(a_source_ending_early_holds_nothing_back_once_it_says_it_ended)
{
    char log[4096];
    for (int end_mark = 0; end_mark < 2; end_mark++) {
        ms_make(-1, 2, end_mark);
        ms_reference();
        events_out = 0;
        ms_merge(merge_conf, pick_late_start, count_events, log, sizeof log);
        same_as_reference(log);
        ck_assert_int_eq(events_out, events_closed_at(end_mark ? ms_end : early_end));
        ck_assert_int_lt(events_closed_at(early_end), events_closed_at(ms_end) - MS_EVENTS / 4);
    }
}
END_TEST

/* Without Crystals, a crystal whose stream comes last is not waited for: its
 * frames come after their time; with Crystals 0-2 the builder waits for it. */
START_TEST(crystals_key_waits_for_a_crystal_silent_at_the_start)
{
    char log[4096];
    ms_make(-1, -1, false);
    ms_reference();
    ms_merge("Window 50\nDelay 0\n", pick_whole, NULL, log, sizeof log);
    ck_assert_ptr_null(strstr(log, " 0 frames came after their time was closed"));
    ck_assert(out_used != ref_used || memcmp(out, ref, ref_used) != 0);
    out_used = 0;
    for (int c = 0; c < MS_N; c++)
        streams[c].next_block = 0;
    void *inst = begin(merge_conf);
    while (ms_block(inst, 0) || ms_block(inst, 1))
        ;
    ck_assert_uint_eq(out_used, 0); /* crystal 2 has said nothing yet: everything waits */
    while (ms_block(inst, 2))
        ;
    put_eof(0);
    feed(inst);
    stop_only(inst, log, sizeof log);
    same_as_reference(log);
}
END_TEST

/* One stream whole before the others, with MaxHeld small: the oldest events
 * go out early, said once in the log; every frame is in an event. */
START_TEST(max_held_bounds_the_frames_held_and_loses_nothing)
{
    char log[4096];
    static int seen[MS_N * MS_EVENTS];
    ms_make(-1, -1, false);
    ms_merge("Window 50\nDelay 0\nCrystals 0-2\nMaxHeld 40\n", pick_whole, NULL, log, sizeof log);
    const char warning[] = "[Builder] warning: MaxHeld 40 reached";
    const char *said = strstr(log, warning);
    ck_assert_msg(said != NULL, "%s", log);
    ck_assert_ptr_null(strstr(said + sizeof warning - 1, "MaxHeld 40 reached")); /* once */
    char expect[128];
    snprintf(expect, sizeof expect, "from %d data:psa frames", n_frames);
    ck_assert_ptr_nonnull(strstr(log, expect));
    ck_assert_ptr_null(strstr(log, " 0 events closed early by MaxHeld"));
    int n = read_events((uint32_t[4]){ 0 }, &(int){ 0 }), members = 0;
    memset(seen, 0, sizeof seen);
    for (int e = 0; e < n; e++)
        for (int k = 0; k < events[e].fold; k++, members++)
            ck_assert_int_eq(seen[(int)events[e].tag[k]]++, 0);
    ck_assert_int_eq(members, n_frames);
}
END_TEST

START_TEST(crystals_all_and_bad_marks_are_refused)
{
    unsigned code;
    char log[4096];
    tk_write_text(tk_path(conf_dir, "Builder.conf"), "Crystals all\n");
    const char *path = tk_path(tmp, "stderr.txt");
    int saved = tk_capture_begin(path);
    builder.config(conf_dir, &code);
    tk_capture_end(saved, path, log, sizeof log);
    ck_assert_uint_eq(code, NARVAL_E_CONFIG);
    ck_assert_msg(strstr(log, "Builder.conf:1: key 'Crystals': 'all' cannot be waited for") != NULL, "%s", log);
    void *inst = begin("MaxBadFrames 0\n"); /* a bad mark is a bad frame, and this run has no room for one */
    ck_assert_int_eq(adf_begin(&w, ADF_ID_META_SYNC, 0, 5), ADF_OK);
    ck_assert_int_eq(adf_put(&w, (uint8_t[4]){ 1, 0, 0, 0 }, 4), ADF_OK);
    ck_assert_int_eq(adf_end(&w), ADF_OK);
    unsigned used = 0;
    builder.filter(inst, in, (unsigned)w.used, out, CAP, &used, &code);
    ck_assert_uint_eq(code, NARVAL_E_INPUT);
    ck_assert_uint_eq(used, 0);
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
    tcase_add_test(tc, short_psa_frame_is_a_bad_frame);
    suite_add_tcase(s, tc);
    tc = tcase_create("merging");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, merged_streams_one_late_by_ten_blocks_build_the_single_stream_events);
    tcase_add_test(tc, merged_streams_in_random_blocks_and_orders_build_the_single_stream_events);
    tcase_add_test(tc, a_silent_source_holds_events_until_its_marks_pass_them);
    tcase_add_test(tc, a_source_ending_early_holds_nothing_back_once_it_says_it_ended);
    tcase_add_test(tc, crystals_key_waits_for_a_crystal_silent_at_the_start);
    tcase_add_test(tc, max_held_bounds_the_frames_held_and_loses_nothing);
    tcase_add_test(tc, crystals_all_and_bad_marks_are_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(builder_suite()); }

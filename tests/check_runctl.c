/* check_runctl.c: Check suite for `narwhal run`'s run control: abort, --strict, --cycles, pauses, every call in order. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adf.h"
#include "narwhal_exec.h"
#include "testkit.h"

#define CHAIN4 "tests/topologies/good/chain4.xml"
#define GROW "tests/topologies/good/grow.xml"
#define TIMEOUT 20.0 /* seconds any one narwhal run may take before the test calls it a deadlock */

/* Every test runs sequentially (ring 0) and pipelined (rings of 2). */
static const unsigned modes[] = {0, 2};
#define N_MODES (sizeof modes / sizeof modes[0])

static char log_path[256];
static char log_text[1 << 20];

static void set_log_path(void)
{
    snprintf(log_path, sizeof log_path, "/tmp/narwhal-runctl-%d.log", (int)getpid());
    unlink(log_path);
}

/* args: "run", topology, the test actors' directory, extra (NULL-terminated),
 * --pipeline --ring N when ring is not 0.  env: LIFECYCLE_LOG and env. */
static void build_command(const char *topology, const char *const *extra, unsigned ring, const char **args,
                          char *depth, size_t depth_len)
{
    size_t n = 0;
    args[n++] = "run";
    args[n++] = topology;
    args[n++] = "--actors";
    args[n++] = nw_build_path("/tests/actors");
    for (size_t i = 0; extra && extra[i] && n < 26; i++)
        args[n++] = extra[i];
    if (ring) {
        snprintf(depth, depth_len, "%u", ring);
        args[n++] = "--pipeline";
        args[n++] = "--ring";
        args[n++] = depth;
    }
    args[n] = NULL;
}

static void build_env(const char *const *env, const char **full, char *env_log, size_t len)
{
    size_t e = 0;
    snprintf(env_log, len, "LIFECYCLE_LOG=%s", log_path);
    full[e++] = env_log;
    for (size_t i = 0; env && env[i] && e < 15; i++)
        full[e++] = env[i];
    full[e] = NULL;
}

/* Runs narwhal on a test-actor topology with every call logged into log_text. */
static void run_logged(nw_result *r, const char *topology, const char *const *extra, const char *const *env,
                       unsigned ring)
{
    const char *args[32], *full_env[16];
    char depth[16], env_log[300];
    set_log_path();
    build_command(topology, extra, ring, args, depth, sizeof depth);
    build_env(env, full_env, env_log, sizeof env_log);
    ck_assert_int_eq(nw_run_timed(r, args, full_env, TIMEOUT, 0, 0), 0);
    ck_assert_msg(!r->timed_out, "no end after %.0f s (ring %u): deadlock?", TIMEOUT, ring);
    tk_read_text(log_path, log_text, sizeof log_text);
    unlink(log_path);
}

/* ---- the calls of one actor, in a few words ---- */

/* One log line of `who` as a word: the call without "process_", "flush" for
 * a filter's call with an empty input, a '!' when the actor found it out of
 * sequence. */
static void word_of(const char *line, size_t len, char *word, size_t cap)
{
    const char *call = strstr(line, "process_");
    size_t n = strcspn(call + 8, " \n");
    int flush = strncmp(call, "process_block in=0 seq= out=", 28) == 0;
    int refused = strstr(line, "out of sequence") != NULL && (size_t)(strstr(line, "out of sequence") - line) < len;
    snprintf(word, cap, "%.*s%s", flush ? 5 : (int)n, flush ? "flush" : call + 8, refused ? "!" : "");
}

/* The calls the log holds for `who` (P, F, F0, F1, C), in order, as words
 * separated by blanks; with counted, a word repeated N > 1 times in a row
 * is written "word*N", else once:
 * "config register initialise start block*3 flush stop unload". */
static void put_word(char *out, size_t *n, size_t cap, const char *word, unsigned repeat, int counted)
{
    if (counted && repeat > 1)
        *n += (size_t)snprintf(out + *n, cap - *n, "%s%s*%u", *n ? " " : "", word, repeat);
    else
        *n += (size_t)snprintf(out + *n, cap - *n, "%s%s", *n ? " " : "", word);
    ck_assert_uint_lt(*n, cap);
}

static void calls_of(const char *log, const char *who, int counted, char *out, size_t cap)
{
    char word[64], last[64] = "";
    size_t n = 0, len = strlen(who);
    unsigned repeat = 0;
    out[0] = '\0';
    for (const char *line = log;;) {
        const char *end = strchr(line, '\n');
        size_t size = end ? (size_t)(end - line) : strlen(line);
        if (size > len && strncmp(line, who, len) == 0 && line[len] == ' ') {
            word_of(line, size, word, sizeof word);
            if (repeat && strcmp(word, last) != 0) {
                put_word(out, &n, cap, last, repeat, counted);
                repeat = 0;
            }
            snprintf(last, sizeof last, "%s", word);
            repeat++;
        }
        if (!end)
            break;
        line = end + 1;
    }
    if (repeat)
        put_word(out, &n, cap, last, repeat, counted);
}

static void expect_calls(const char *who, const char *expected, unsigned ring)
{
    char got[4096];
    calls_of(log_text, who, 1, got, sizeof got);
    ck_assert_msg(strcmp(got, expected) == 0, "ring %u: %s's calls are\n  %s\nnot\n  %s\nlog:\n%s", ring, who, got,
                  expected, log_text);
}

/* The same without the counts, for pipelined runs where how far the
 * producer ran ahead of an error is the threads' business. */
static void expect_shape(const char *who, const char *expected, unsigned ring)
{
    char got[4096];
    calls_of(log_text, who, 0, got, sizeof got);
    ck_assert_msg(strcmp(got, expected) == 0, "ring %u: %s's calls are\n  %s\nnot\n  %s\nlog:\n%s", ring, who, got,
                  expected, log_text);
}


#define EVERY(call) "P " call "\nF0 " call "\nF1 " call "\nC " call "\n"
#define PAUSE_GROUP EVERY("process_pause") EVERY("process_resume")
#define UNLOAD_ALL EVERY("process_unload")

/* ---- a normal run: every actor, every call ---- */

START_TEST(a_normal_run_makes_every_call_in_order)
{
    nw_result r;
    for (size_t m = 0; m < N_MODES; m++) {
        run_logged(&r, CHAIN4, NULL, NULL, modes[m]);
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        /* 10 frames, 4 a block: 3 blocks and the producer's empty end-of-data call. */
        expect_calls("P", "config register initialise start block*4 stop unload", modes[m]);
        expect_calls("F", "config", modes[m]);
        expect_calls("F0", "register initialise start block*3 flush stop unload", modes[m]);
        expect_calls("F1", "register initialise start block*3 flush stop unload", modes[m]);
        expect_calls("C", "config register initialise start block*3 stop unload", modes[m]);
        tk_expect_tail(log_text, EVERY("process_stop") UNLOAD_ALL);
        ck_assert_uint_eq(tk_count(log_text, "out of sequence"), 0);
    }
}
END_TEST

START_TEST(verbose_traces_every_call_with_its_sizes)
{
    const char *extra[] = {"-v", "--cycles", "2", "--pause-every", "3", NULL};
    nw_result r;
    for (size_t m = 0; m < N_MODES; m++) {
        run_logged(&r, CHAIN4, extra, NULL, modes[m]);
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        static const char *const lines[] = {
            "narwhal: source: process_register\n",  "narwhal: source: process_initialise\n",
            "narwhal: source: process_start\n",     "narwhal: source: process_block out=4096\n",
            "narwhal: first: process_block in=96 out=4096\n",
            "narwhal: second: process_block in=0 out=4096 (flush: empty input)\n",
            "narwhal: sink: process_block in=48\n", "narwhal: sink: process_pause\n",
            "narwhal: sink: process_resume\n",      "narwhal: first: process_stop\n",
            "narwhal: first: process_reset\n",      "narwhal: sink: process_unload\n"};
        for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
            ck_assert_msg(strstr(r.err, lines[i]) != NULL, "no '%s' in:\n%s", lines[i], r.err);
        /* One trace line per call the actors logged (process_config is the loader's). */
        ck_assert_uint_eq(tk_count(r.err, ": process_block "), tk_count(log_text, " process_block "));
        ck_assert_uint_eq(tk_count(r.err, ": process_reset"), 4);
        ck_assert_uint_eq(tk_count(r.err, ": process_pause"), tk_count(log_text, " process_pause"));
    }
}
END_TEST

/* ---- --strict ---- */

START_TEST(strict_makes_no_flush_call_and_meta_eof_loses_nothing)
{
    const char *extra[] = {"--strict", NULL};
    const char *env[] = {"LIFECYCLE_EOF=1", "LIFECYCLE_HOLD=F0", NULL};
    nw_result r;
    for (size_t m = 0; m < N_MODES; m++) {
        run_logged(&r, CHAIN4, extra, env, modes[m]);
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        expect_calls("F0", "register initialise start block*3 stop unload", modes[m]);
        expect_calls("F1", "register initialise start block stop unload", modes[m]);
        expect_calls("C", "config register initialise start block stop unload", modes[m]);
        /* F0 held everything until the meta:eof the producer put after frame 9. */
        ck_assert_ptr_nonnull(strstr(log_text, "F0 process_block in=80 seq=8-9,eof out=4096\n"));
        ck_assert_ptr_nonnull(strstr(log_text, "C process_block in=272 frames=11 seq=0-9,eof\n"));
        ck_assert_ptr_nonnull(strstr(r.out, "under --strict: 11 producer frames"));
        ck_assert_uint_eq(tk_count(log_text, "in=0 "), 0);
    }
}
END_TEST

START_TEST(strict_without_meta_eof_leaves_held_frames_held)
{
    const char *strict[] = {"--strict", NULL};
    const char *env[] = {"LIFECYCLE_HOLD=F0", NULL};
    nw_result r;
    for (size_t m = 0; m < N_MODES; m++) {
        /* The convenience: the flush call brings them out. */
        run_logged(&r, CHAIN4, NULL, env, modes[m]);
        ck_assert_int_eq(r.status, 0);
        ck_assert_ptr_nonnull(strstr(log_text, "C process_block in=240 frames=10 seq=0-9\n"));
        /* NARVAL makes no such call: nothing reaches F1 or the consumer. */
        run_logged(&r, CHAIN4, strict, env, modes[m]);
        ck_assert_int_eq(r.status, 0);
        expect_calls("F0", "register initialise start block*3 stop unload", modes[m]);
        expect_calls("F1", "register initialise start stop unload", modes[m]);
        expect_calls("C", "config register initialise start stop unload", modes[m]);
    }
}
END_TEST

START_TEST(strict_output_size_aborts_naming_the_topology_size)
{
    const char *extra[] = {"--strict", NULL};
    const char *env[] = {"LIFECYCLE_NEED=F1:5000", NULL};
    nw_result r;
    for (size_t m = 0; m < N_MODES; m++) {
        run_logged(&r, CHAIN4, extra, env, modes[m]);
        ck_assert_int_eq(r.status, 1);
        ck_assert_str_eq(r.err, "narwhal: actor 'second' (lifecycle_filter.so): process_block needs an output buffer "
                                "of 5000 bytes, more than the 4096 of its <size output_buffer=\"second_out\"> "
                                "(tests/topologies/good/chain4.xml:15); --strict keeps the topology's sizes: raise "
                                "that <size> to at least 5000\n");
        /* One call, no retry; abort: no stop, every actor unloaded. */
        expect_calls("F1", "register initialise start block unload", modes[m]);
        ck_assert_uint_eq(tk_count(log_text, "process_stop"), 0);
        tk_expect_tail(log_text, UNLOAD_ALL);
        ck_assert_ptr_nonnull(strstr(r.out, "stopped by an error\n"));
        ck_assert_ptr_null(strstr(r.out, "grown"));
    }
}
END_TEST

START_TEST(strict_keeps_a_producer_to_its_size)
{
    const char *extra[] = {"--strict", NULL};
    nw_result r;
    for (size_t m = 0; m < N_MODES; m++) {
        run_logged(&r, GROW, extra, NULL, modes[m]);
        ck_assert_int_eq(r.status, 1);
        ck_assert_str_eq(r.err, "narwhal: actor 'source' (lifecycle_producer.so): process_block needs an output "
                                "buffer of 96 bytes, more than the 10 of its <size output_buffer=\"data\"> "
                                "(tests/topologies/good/grow.xml:9); --strict keeps the topology's sizes: raise that "
                                "<size> to at least 96\n");
        expect_calls("P", "config register initialise start block unload", modes[m]);
        expect_calls("C", "config register initialise start unload", modes[m]);
    }
}
END_TEST

/* ---- --cycles ---- */

#define BETWEEN_RUNS EVERY("process_stop") EVERY("process_reset") EVERY("process_initialise") EVERY("process_start")

START_TEST(cycles_stop_reset_initialise_and_start_again)
{
    const char *extra[] = {"--cycles", "2", NULL};
    nw_result r;
    for (size_t m = 0; m < N_MODES; m++) {
        run_logged(&r, CHAIN4, extra, NULL, modes[m]);
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        expect_calls("P", "config register initialise start block*4 stop reset initialise start block*4 stop unload",
                     modes[m]);
        expect_calls("F0",
                     "register initialise start block*3 flush stop reset initialise start block*3 flush stop unload",
                     modes[m]);
        expect_calls("F1",
                     "register initialise start block*3 flush stop reset initialise start block*3 flush stop unload",
                     modes[m]);
        expect_calls("C", "config register initialise start block*3 stop reset initialise start block*3 stop unload",
                     modes[m]);
        ck_assert_uint_eq(tk_count(log_text, BETWEEN_RUNS), 1);
        tk_expect_tail(log_text, EVERY("process_stop") UNLOAD_ALL);
        /* Each run its data: the producer starts again from frame 0. */
        ck_assert_uint_eq(tk_count(log_text, "C process_block in=96 frames=4 seq=0-3\n"), 2);
        ck_assert_uint_eq(tk_count(log_text, "C process_block in=48 frames=2 seq=8-9\n"), 2);
        ck_assert_ptr_nonnull(strstr(r.out, "\nrun 1: 3 producer blocks, 10 frames produced, 10 consumed, ended at "
                                            "the end of the data\nrun 2: 3 producer blocks, 10 frames produced, 10 "
                                            "consumed, ended at the end of the data\nwall time "));
        ck_assert_ptr_nonnull(strstr(r.out, " s, 6 producer blocks, 2 of 2 runs, ended at the end of the data\n"));
        /* The table sums the runs. */
        ck_assert_ptr_nonnull(strstr(r.out, ": 20 producer frames, "));
        ck_assert_uint_eq(tk_count(log_text, "out of sequence"), 0);
    }
}
END_TEST

START_TEST(blocks_limits_each_run_of_the_cycles)
{
    const char *extra[] = {"--cycles", "3", "--blocks", "2", NULL};
    const char *env[] = {"LIFECYCLE_FRAMES=100", NULL};
    nw_result r;
    for (size_t m = 0; m < N_MODES; m++) {
        run_logged(&r, CHAIN4, extra, env, modes[m]);
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        expect_calls("P",
                     "config register initialise start block*2 stop reset initialise start block*2 stop reset "
                     "initialise start block*2 stop unload",
                     modes[m]);
        ck_assert_uint_eq(tk_count(log_text, "C process_block in=96 frames=4 seq=4-7\n"), 3);
        ck_assert_ptr_nonnull(strstr(r.out, " s, 6 producer blocks, 3 of 3 runs, ended after the requested number of "
                                            "blocks\n"));
    }
}
END_TEST

START_TEST(a_signal_ends_the_cycles_after_the_run_in_hand)
{
    const char *extra[] = {"--cycles", "3", NULL};
    const char *env[] = {"LIFECYCLE_FRAMES=1000", "LIFECYCLE_SIGNAL=2", NULL};
    nw_result r;
    for (size_t m = 0; m < N_MODES; m++) {
        run_logged(&r, CHAIN4, extra, env, modes[m]);
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        expect_calls("P", "config register initialise start block*2 stop unload", modes[m]);
        expect_calls("F1", "register initialise start block*2 flush stop unload", modes[m]);
        ck_assert_ptr_nonnull(strstr(r.out, "\nrun 1: 2 producer blocks, 8 frames produced, 8 consumed, stopped by "
                                            "SIGINT\n"));
        ck_assert_ptr_nonnull(strstr(r.out, " s, 2 producer blocks, 1 of 3 runs, stopped by SIGINT\n"));
    }
}
END_TEST

START_TEST(an_error_between_runs_aborts)
{
    const char *extra[] = {"--cycles", "2", NULL};
    const char *reset_env[] = {"LIFECYCLE_FAIL=F1:process_reset:1:5", NULL};
    const char *init_env[] = {"LIFECYCLE_FAIL=C:process_initialise:2:1", NULL};
    nw_result r;
    for (size_t m = 0; m < N_MODES; m++) {
        run_logged(&r, CHAIN4, extra, reset_env, modes[m]);
        ck_assert_int_eq(r.status, 1);
        ck_assert_str_eq(r.err, "narwhal: actor 'second' (lifecycle_filter.so): process_reset returned error code 5: "
                                "input/output error\n");
        expect_calls("F0", "register initialise start block*3 flush stop reset unload", modes[m]);
        expect_calls("F1", "register initialise start block*3 flush stop reset unload", modes[m]);
        expect_calls("C", "config register initialise start block*3 stop unload", modes[m]);
        tk_expect_tail(log_text, "F1 process_reset\n" UNLOAD_ALL);

        run_logged(&r, CHAIN4, extra, init_env, modes[m]);
        ck_assert_int_eq(r.status, 1);
        expect_calls("C", "config register initialise start block*3 stop reset initialise unload", modes[m]);
        tk_expect_tail(log_text, "C process_initialise\n" UNLOAD_ALL);
        ck_assert_ptr_nonnull(strstr(r.out, "\nrun 1: 3 producer blocks, 10 frames produced, 10 consumed, ended at "
                                            "the end of the data\n"));
        ck_assert_ptr_nonnull(strstr(r.out, " s, 3 producer blocks, 1 of 2 runs, stopped by an error\n"));
    }
}
END_TEST

/* ---- pauses ---- */

START_TEST(pause_every_pairs_pause_and_resume_between_blocks)
{
    const char *every1[] = {"--pause-every", "1", NULL};
    const char *every2[] = {"--pause-every=2", NULL};
    const char *env20[] = {"LIFECYCLE_FRAMES=20", NULL};
    nw_result r;
    for (size_t m = 0; m < N_MODES; m++) {
        run_logged(&r, CHAIN4, every1, NULL, modes[m]);
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        expect_calls("P", "config register initialise start block pause resume block pause resume block pause resume "
                          "block stop unload",
                     modes[m]);
        expect_calls("F0", "register initialise start block pause resume block pause resume block pause resume flush "
                           "stop unload",
                     modes[m]);
        expect_calls("C", "config register initialise start block pause resume block pause resume block pause resume "
                          "stop unload",
                     modes[m]);
        /* Every actor pauses, in chain order, then every actor resumes: no block between. */
        ck_assert_uint_eq(tk_count(log_text, PAUSE_GROUP), 3);
        ck_assert_ptr_nonnull(strstr(r.out, " s, 3 producer blocks, 3 pause(s), ended at the end of the data\n"));

        /* 20 frames: 5 blocks, a pause after the 2nd and the 4th. */
        run_logged(&r, CHAIN4, every2, env20, modes[m]);
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        expect_calls("P", "config register initialise start block*2 pause resume block*2 pause resume block*2 stop "
                          "unload",
                     modes[m]);
        expect_calls("F1", "register initialise start block*2 pause resume block*2 pause resume block flush stop "
                           "unload",
                     modes[m]);
        ck_assert_uint_eq(tk_count(log_text, PAUSE_GROUP), 2);
    }
}
END_TEST

/* Pipelined with a slow consumer, blocks are in flight when a pause is due:
 * the pipeline drains first, so that every actor pauses after the blocks
 * before the pause and before those after it, as sequentially. */
START_TEST(a_pipelined_pause_waits_for_the_blocks_in_flight)
{
    const char *extra[] = {"--pause-every", "3", "--cycles", "2", NULL};
    const char *env[] = {"LIFECYCLE_FRAMES=28", "LIFECYCLE_SLOW=C:3000", NULL};
    nw_result r;
    for (unsigned ring = 1; ring <= 4; ring += 3) {
        run_logged(&r, CHAIN4, extra, env, ring);
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        /* 7 blocks a run, pauses after the 3rd and the 6th. */
        expect_calls("C", "config register initialise start block*3 pause resume block*3 pause resume block stop "
                          "reset initialise start block*3 pause resume block*3 pause resume block stop unload",
                     ring);
        expect_calls("F0", "register initialise start block*3 pause resume block*3 pause resume block flush stop "
                           "reset initialise start block*3 pause resume block*3 pause resume block flush stop unload",
                     ring);
        ck_assert_uint_eq(tk_count(log_text, PAUSE_GROUP), 4);
        ck_assert_ptr_nonnull(strstr(r.out, "\nrun 2: 7 producer blocks, 28 frames produced, 28 consumed, 2 pause(s), "
                                            "ended at the end of the data\n"));
        ck_assert_ptr_nonnull(strstr(r.out, " s, 14 producer blocks, 2 of 2 runs, 4 pause(s), ended at the end of the "
                                            "data\n"));
    }
}
END_TEST

START_TEST(an_error_in_a_pause_aborts)
{
    const char *extra[] = {"--pause-every", "1", NULL};
    const char *env[] = {"LIFECYCLE_FAIL=F1:process_pause:2:6", NULL};
    nw_result r;
    for (size_t m = 0; m < N_MODES; m++) {
        run_logged(&r, CHAIN4, extra, env, modes[m]);
        ck_assert_int_eq(r.status, 1);
        ck_assert_str_eq(r.err, "narwhal: actor 'second' (lifecycle_filter.so): process_pause returned error code 6: "
                                "GPU error\n");
        expect_calls("P", "config register initialise start block pause resume block pause unload", modes[m]);
        expect_calls("F1", "register initialise start block pause resume block pause unload", modes[m]);
        expect_calls("C", "config register initialise start block pause resume block unload", modes[m]);
        tk_expect_tail(log_text, "F1 process_pause\n" UNLOAD_ALL);
    }
}
END_TEST

/* The state field of /proc/PID/stat: 'T' when stopped. */
static char process_state(pid_t pid)
{
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (!tk_read_text(path, text, sizeof text))
        return '?';
    const char *paren = strrchr(text, ')');
    return paren && paren[1] == ' ' ? paren[2] : '?';
}

/* Polls the log until it holds `what` at least n times; false after 10 s. */
static int wait_for_log(const char *what, size_t n)
{
    for (int i = 0; i < 2000; i++) {
        tk_read_text(log_path, log_text, sizeof log_text);
        if (tk_count(log_text, what) >= n)
            return 1;
        usleep(5000);
    }
    return 0;
}

/* Ctrl-Z on an endless chain: every actor pauses between blocks, the
 * process stops itself, nothing is called until SIGCONT, then every actor
 * resumes and the run goes on until SIGINT. */
static void tstp_then_cont(unsigned ring)
{
    const char *env[] = {"LIFECYCLE_FRAMES=4000000000", "LIFECYCLE_SLOW=P:2000", NULL};
    const char *args[32], *full_env[16];
    char depth[16], env_log[300];
    nw_result r;
    set_log_path();
    build_command(CHAIN4, NULL, ring, args, depth, sizeof depth);
    build_env(env, full_env, env_log, sizeof env_log);
    int out = nw_tempfile(), err = nw_tempfile();
    ck_assert(out >= 0 && err >= 0);
    pid_t pid = nw_spawn(args, full_env, out, err);
    ck_assert_int_gt(pid, 0);
    ck_assert(wait_for_log("C process_block", 5));
    kill(pid, SIGTSTP);
    ck_assert_msg(wait_for_log("C process_pause", 1), "no pause after SIGTSTP:\n%s", log_text);
    for (int i = 0; i < 1000 && process_state(pid) != 'T'; i++)
        usleep(5000);
    ck_assert_int_eq(process_state(pid), 'T');
    size_t paused_at = strlen(log_text);
    usleep(100000);
    tk_read_text(log_path, log_text, sizeof log_text);
    ck_assert_uint_eq(strlen(log_text), paused_at);
    kill(pid, SIGCONT);
    ck_assert(wait_for_log("C process_resume", 1));
    size_t blocks = tk_count(log_text, "C process_block");
    ck_assert(wait_for_log("C process_block", blocks + 3));
    kill(pid, SIGINT);
    ck_assert_int_eq(nw_wait(&r, pid, TIMEOUT, 0, 0), 0);
    ck_assert(!r.timed_out);
    nw_slurp(out, r.out, sizeof r.out);
    nw_slurp(err, r.err, sizeof r.err);
    tk_read_text(log_path, log_text, sizeof log_text);
    unlink(log_path);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "narwhal: paused at SIGTSTP after "));
    expect_shape("P", "config register initialise start block pause resume block stop unload", ring);
    expect_shape("F0", "register initialise start block pause resume block flush stop unload", ring);
    expect_shape("C", "config register initialise start block pause resume block stop unload", ring);
    ck_assert_uint_eq(tk_count(log_text, PAUSE_GROUP), 1);
    ck_assert_ptr_nonnull(strstr(r.out, " producer blocks, 1 pause(s), stopped by SIGINT\n"));
}

START_TEST(sigtstp_pauses_until_sigcont_sequentially)
{
    tstp_then_cont(0);
}
END_TEST

START_TEST(sigtstp_pauses_until_sigcont_pipelined)
{
    tstp_then_cont(3);
}
END_TEST

/* ---- abort is not stop ---- */

START_TEST(an_actor_error_unloads_every_actor_without_stop)
{
    const char *env[] = {"LIFECYCLE_FAIL=F0:process_block:2:8", NULL};
    nw_result r;
    for (size_t m = 0; m < N_MODES; m++) {
        run_logged(&r, CHAIN4, NULL, env, modes[m]);
        ck_assert_int_eq(r.status, 1);
        ck_assert_str_eq(r.err, "narwhal: actor 'first' (lifecycle_filter.so): process_block returned error code 8: "
                                "input inconsistent with configuration\n");
        ck_assert_uint_eq(tk_count(log_text, "process_stop"), 0);
        ck_assert_uint_eq(tk_count(log_text, "in=0 "), 0);
        tk_expect_tail(log_text, UNLOAD_ALL);
        if (modes[m] == 0) {
            expect_calls("P", "config register initialise start block*2 unload", 0);
            expect_calls("F0", "register initialise start block*2 unload", 0);
            expect_calls("F1", "register initialise start block unload", 0);
            expect_calls("C", "config register initialise start block unload", 0);
        } else {
            /* How far the producer ran ahead, and whether block 0 reached the
             * consumer, is the threads' business. */
            expect_shape("P", "config register initialise start block unload", modes[m]);
            expect_calls("F0", "register initialise start block*2 unload", modes[m]);
        }
        ck_assert_ptr_nonnull(strstr(r.out, "stopped by an error\n"));
    }
}
END_TEST

START_TEST(a_start_error_unloads_every_actor_without_stop)
{
    const char *env[] = {"LIFECYCLE_FAIL=F1:process_start:1:7", NULL};
    nw_result r;
    for (size_t m = 0; m < N_MODES; m++) {
        run_logged(&r, CHAIN4, NULL, env, modes[m]);
        ck_assert_int_eq(r.status, 1);
        expect_calls("P", "config register initialise start unload", modes[m]);
        expect_calls("F1", "register initialise start unload", modes[m]);
        expect_calls("C", "config register initialise unload", modes[m]);
        tk_expect_tail(log_text, "F1 process_start\n" UNLOAD_ALL);
    }
}
END_TEST

START_TEST(a_stop_error_still_stops_the_others)
{
    const char *env[] = {"LIFECYCLE_FAIL=F0:process_stop:1:5", NULL};
    nw_result r;
    for (size_t m = 0; m < N_MODES; m++) {
        run_logged(&r, CHAIN4, NULL, env, modes[m]);
        ck_assert_int_eq(r.status, 1);
        tk_expect_tail(log_text, EVERY("process_stop") UNLOAD_ALL);
        ck_assert_ptr_nonnull(strstr(r.out, "stopped by an error\n"));
    }
}
END_TEST

/* ---- the shipped reader and writer under run control ---- */

static char dir[128];

static const char *in_dir(const char *name) { return tk_path(dir, name); }

/* reader -> [filter ->] writer in a scratch directory with its conf/;
 * the input is mkadf's (frames, then a meta:eof the reader replaces by its own). */
static void make_replay(int with_filter, const char *writer_file)
{
    char command[1024];
    tk_make_tmpdir(dir, sizeof dir, "narwhal-runctl");
    ck_assert_int_eq(mkdir(in_dir("conf"), 0700), 0);
    snprintf(command, sizeof command, "'%s' '%s' 200 >/dev/null", nw_build_path("/tests/mkadf"), in_dir("in.adf"));
    ck_assert_int_eq(system(command), 0);
    tk_write_textf(in_dir("conf/ADFReader.conf"), "File \"%s\"\n", in_dir("in.adf"));
    tk_write_textf(in_dir("conf/ADFWriter.conf"), "File \"%s\"\n", in_dir(writer_file));
    tk_write_textf(in_dir("replay.xml"),
                   "<configuration>\n"
                   "  <producer><name>reader</name><library>adf_reader.so</library>\n"
                   "    <output_buffer_name>read</output_buffer_name><size output_buffer=\"read\">65536</size>"
                   "</producer>\n"
                   "%s"
                   "  <consumer><name>writer</name><library>adf_writer.so</library>\n"
                   "    <data_source source_buffer=\"%s\">%s</data_source></consumer>\n"
                   "</configuration>\n",
                   with_filter ? "  <intermediary><name>pass</name><library>lifecycle_filter.so</library>\n"
                                 "    <data_source source_buffer=\"read\">reader</data_source>\n"
                                 "    <output_buffer_name>passed</output_buffer_name>"
                                 "<size output_buffer=\"passed\">65536</size></intermediary>\n"
                               : "",
                   with_filter ? "passed" : "read", with_filter ? "pass" : "reader");
}

/* `narwhal run` on the scratch chain with both actor directories. */
static void run_replay(nw_result *r, const char *const *extra, const char *const *env, unsigned ring)
{
    const char *args[32];
    char depth[16];
    size_t n = 0;
    args[n++] = "run";
    args[n++] = in_dir("replay.xml");
    args[n++] = "--actors";
    args[n++] = nw_build_path("/actors");
    args[n++] = "--actors";
    args[n++] = nw_build_path("/tests/actors");
    args[n++] = "--conf";
    args[n++] = in_dir("conf");
    for (size_t i = 0; extra && extra[i]; i++)
        args[n++] = extra[i];
    if (ring) {
        snprintf(depth, sizeof depth, "%u", ring);
        args[n++] = "--pipeline";
        args[n++] = "--ring";
        args[n++] = depth;
    }
    args[n] = NULL;
    ck_assert_int_eq(nw_run_timed(r, args, env, TIMEOUT, 0, 0), 0);
    ck_assert(!r->timed_out);
}

/* A written file holds the input's frames, byte for byte, then one meta:eof. */
static void expect_replayed(const char *name)
{
    size_t n_in, n_out;
    uint8_t *in = tk_read_file(in_dir("in.adf"), &n_in), *out = tk_read_file(in_dir(name), &n_out);
    size_t eof = ADF_KEY_SIZE + ADF_EOF_PAYLOAD, data = n_in - eof; /* mkadf ends with its own meta:eof */
    adf_iter it;
    adf_frame f, last = {0};
    ck_assert_uint_eq(n_out, n_in);
    ck_assert_int_eq(memcmp(in, out, data), 0);
    adf_iter_init(&it, out, n_out);
    while (adf_iter_next(&it, &f) > 0)
        last = f;
    ck_assert_uint_eq(last.key.id, ADF_ID_META_EOF);
    free(in);
    free(out);
}

START_TEST(the_reader_reads_its_file_again_each_run_under_strict)
{
    const char *extra[] = {"--cycles", "2", "--strict", "--pause-every", "5", NULL};
    nw_result r;
    for (size_t m = 0; m < N_MODES; m++) {
        make_replay(0, "run%d.adf");
        run_replay(&r, extra, NULL, modes[m]);
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        expect_replayed("run1.adf");
        expect_replayed("run2.adf");
        ck_assert_ptr_nonnull(strstr(r.out, " producer blocks, 2 of 2 runs, "));
        ck_assert_int_eq(tk_remove_tree(dir), 0);
    }
}
END_TEST

START_TEST(an_aborted_run_publishes_no_file)
{
    const char *env[] = {"LIFECYCLE_FAIL=F0:process_block:3:8", NULL};
    nw_result r;
    for (size_t m = 0; m < N_MODES; m++) {
        make_replay(1, "out.adf");
        run_replay(&r, NULL, env, modes[m]);
        ck_assert_int_eq(r.status, 1);
        ck_assert_ptr_nonnull(strstr(r.err, "process_block returned error code 8"));
        ck_assert_msg(!tk_exists(in_dir("out.adf")), "an aborted run published out.adf");
        /* Nor is a temporary left: the directory holds what the test put there. */
        char command[512];
        snprintf(command, sizeof command, "test \"$(ls '%s')\" = \"$(printf 'conf\\nin.adf\\nreplay.xml')\"", dir);
        ck_assert_msg(system(command) == 0, "files left in %s", dir);
        ck_assert_int_eq(tk_remove_tree(dir), 0);
    }
}
END_TEST

/* ---- the report file and the options ---- */

START_TEST(the_report_file_counts_runs_pauses_and_strictness)
{
    char path[128], text[16384], mode[32], end[32];
    unsigned ring, runs;
    unsigned long long blocks, pauses;
    double wall, block_s;
    int strict;
    snprintf(path, sizeof path, "/tmp/narwhal-runctl-%d.tsv", (int)getpid());
    const char *extra[] = {"--cycles", "2", "--pause-every", "1", "--strict", "--report", path, NULL};
    nw_result r;
    run_logged(&r, CHAIN4, extra, NULL, 0);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert(tk_read_text(path, text, sizeof text));
    unlink(path);
    const char *line = strstr(text, "\nrun\t");
    ck_assert_ptr_nonnull(line);
    ck_assert_int_eq(sscanf(line + 1, "run\t%31s\t%u\t%lf\t%lf\t%31s\t%llu\t%u\t%llu\t%d", mode, &ring, &wall,
                            &block_s, end, &blocks, &runs, &pauses, &strict),
                     9);
    ck_assert_str_eq(mode, "sequential");
    ck_assert_str_eq(end, "data");
    ck_assert_uint_eq(blocks, 6);
    ck_assert_uint_eq(runs, 2);
    ck_assert_uint_eq(pauses, 6);
    ck_assert_int_eq(strict, 1);
    ck_assert_ptr_nonnull(strstr(text, "\ntable\trun 2: 3 producer blocks, 10 frames produced, 10 consumed, 3 pause(s), "
                                       "ended at the end of the data\n"));
    /* The actor rows sum the runs: the consumer's 6 blocks, 20 frames. */
    ck_assert_ptr_nonnull(strstr(text, "\nactor\tsink\tlifecycle_consumer.so\t6\t20\t0\t480\t0\t"));
}
END_TEST

START_TEST(run_control_options_are_checked)
{
    static const char *const bad[][8] = {
        {"run", CHAIN4, "--cycles", "0", NULL},
        {"run", CHAIN4, "--cycles", "100001", NULL},
        {"run", CHAIN4, "--pause-every", NULL},
        {"run", CHAIN4, "--pause-every", "-1", NULL},
        {"validate", CHAIN4, "--strict", NULL},
        {"validate", CHAIN4, "--cycles", "2", NULL},
        {"validate", CHAIN4, "--pause-every", "2", NULL},
    };
    static const char *const message[] = {
        "narwhal: --cycles needs a positive whole number (see narwhal --help)\n",
        "narwhal: --cycles 100001 is more than the limit of 100000 (see narwhal --help)\n",
        "narwhal: --pause-every needs a value (see narwhal --help)\n",
        "narwhal: --pause-every needs a positive whole number (see narwhal --help)\n",
        "narwhal: 'validate' takes no --strict (see narwhal --help)\n",
        "narwhal: 'validate' takes no --cycles (see narwhal --help)\n",
        "narwhal: 'validate' takes no --pause-every (see narwhal --help)\n",
    };
    nw_result r;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(nw_run(&r, bad[i], NULL), 0);
        ck_assert_int_eq(r.status, 2);
        ck_assert_str_eq(r.err, message[i]);
    }
    const char *help[] = {"--help", NULL};
    ck_assert_int_eq(nw_run(&r, help, NULL), 0);
    ck_assert_int_eq(r.status, 0);
    static const char *const documented[] = {"[--strict] [--cycles N] [--pause-every K]", "\n  --strict ",
                                             "\n  --cycles N ", "\n  --pause-every K ", "An actor's error aborts: no "
                                             "flush, no process_stop"};
    for (size_t i = 0; i < sizeof documented / sizeof documented[0]; i++)
        ck_assert_msg(strstr(r.out, documented[i]) != NULL, "the usage lacks '%s'", documented[i]);
}
END_TEST

/* ---- the test actors themselves: they refuse what NARVAL never does ---- */

typedef void lc_call_fn(void *, unsigned *);

START_TEST(the_test_actors_check_narval_sequence)
{
    void *so = dlopen(nw_build_path("/tests/actors/lifecycle_filter.so"), RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(so != NULL, "%s", dlerror());
    narval_config_fn *config;
    narval_register_fn *reg;
    lc_call_fn *fn[7];
    static const char *const names[7] = {"process_initialise", "process_start", "process_pause", "process_resume",
                                         "process_stop",       "process_reset", "process_unload"};
    enum { INIT, START, PAUSE, RESUME, STOP, RESET, UNLOAD };
    *(void **)&config = dlsym(so, "process_config");
    *(void **)&reg = dlsym(so, "process_register");
    for (int i = 0; i < 7; i++) {
        *(void **)&fn[i] = dlsym(so, names[i]);
        ck_assert_msg(fn[i] != NULL, "lifecycle_filter.so lacks %s", names[i]);
    }
    unsetenv("LIFECYCLE_LOG");
    unsetenv("LIFECYCLE_FAIL");
    unsigned code = 1;
    config("/tmp", &code);
    ck_assert_uint_eq(code, 0);
    void *in = reg(&code);
    ck_assert_ptr_nonnull(in);
    /* Each call, and the code it must get in the state the calls before left. */
    static const struct {
        int call;
        unsigned code;
    } steps[] = {
        {START, NARVAL_E_STATE}, {INIT, 0},  {INIT, NARVAL_E_STATE}, {RESET, 0},
        {RESET, NARVAL_E_STATE}, {INIT, 0},  {START, 0},             {RESUME, NARVAL_E_STATE},
        {PAUSE, 0},              {PAUSE, NARVAL_E_STATE},            {RESUME, 0},
        {PAUSE, 0},              {STOP, 0},  {START, 0},             {RESET, 0},
        {START, 0},              {STOP, 0},  {STOP, NARVAL_E_STATE}, {UNLOAD, 0},
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        code = 99;
        fn[steps[i].call](in, &code);
        ck_assert_msg(code == steps[i].code, "step %zu (%s): code %u, not %u", i, names[steps[i].call], code,
                      steps[i].code);
    }
}
END_TEST

static Suite *runctl_suite(void)
{
    Suite *s = suite_create("runctl");
    TCase *tc = tcase_create("calls");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_normal_run_makes_every_call_in_order);
    tcase_add_test(tc, verbose_traces_every_call_with_its_sizes);
    tcase_add_test(tc, the_test_actors_check_narval_sequence);
    suite_add_tcase(s, tc);
    tc = tcase_create("strict");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, strict_makes_no_flush_call_and_meta_eof_loses_nothing);
    tcase_add_test(tc, strict_without_meta_eof_leaves_held_frames_held);
    tcase_add_test(tc, strict_output_size_aborts_naming_the_topology_size);
    tcase_add_test(tc, strict_keeps_a_producer_to_its_size);
    suite_add_tcase(s, tc);
    tc = tcase_create("cycles");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, cycles_stop_reset_initialise_and_start_again);
    tcase_add_test(tc, blocks_limits_each_run_of_the_cycles);
    tcase_add_test(tc, a_signal_ends_the_cycles_after_the_run_in_hand);
    tcase_add_test(tc, an_error_between_runs_aborts);
    suite_add_tcase(s, tc);
    tc = tcase_create("pauses");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, pause_every_pairs_pause_and_resume_between_blocks);
    tcase_add_test(tc, a_pipelined_pause_waits_for_the_blocks_in_flight);
    tcase_add_test(tc, an_error_in_a_pause_aborts);
    tcase_add_test(tc, sigtstp_pauses_until_sigcont_sequentially);
    tcase_add_test(tc, sigtstp_pauses_until_sigcont_pipelined);
    suite_add_tcase(s, tc);
    tc = tcase_create("abort");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, an_actor_error_unloads_every_actor_without_stop);
    tcase_add_test(tc, a_start_error_unloads_every_actor_without_stop);
    tcase_add_test(tc, a_stop_error_still_stops_the_others);
    suite_add_tcase(s, tc);
    tc = tcase_create("shipped actors");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, the_reader_reads_its_file_again_each_run_under_strict);
    tcase_add_test(tc, an_aborted_run_publishes_no_file);
    suite_add_tcase(s, tc);
    tc = tcase_create("options");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, the_report_file_counts_runs_pauses_and_strictness);
    tcase_add_test(tc, run_control_options_are_checked);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(runctl_suite()); }

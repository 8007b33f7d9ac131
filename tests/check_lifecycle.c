/* check_lifecycle.c: Check suite for `narwhal run`: NARVAL's call order, end of data, flush, errors, buffer growth, report. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu.h"
#include "loader.h"
#include "narwhal_exec.h"
#include "run.h"
#include "testkit.h"
#include "topology.h"

#define CHAIN4 "tests/topologies/good/chain4.xml"
#define DIRECT "tests/topologies/good/direct.xml"
#define GROW "tests/topologies/good/grow.xml"

static char log_path[256];
static char log_text[65536];

/* Runs `narwhal run TOPOLOGY --actors BUILD/tests/actors [extra]` with the
 * test actors logging to a fresh file, and reads that log into log_text. */
static void run_logged(nw_result *r, const char *topology, const char *const *extra, const char *const *env)
{
    const char *args[16] = {"run", topology, "--actors", nw_build_path("/tests/actors")};
    const char *full_env[16];
    char env_log[300];
    size_t n = 4, e = 0;
    for (size_t i = 0; extra && extra[i] && n < 15; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    snprintf(log_path, sizeof log_path, "/tmp/narwhal-lifecycle-%d.log", (int)getpid());
    unlink(log_path);
    snprintf(env_log, sizeof env_log, "LIFECYCLE_LOG=%s", log_path);
    full_env[e++] = env_log;
    for (size_t i = 0; env && env[i] && e < 15; i++)
        full_env[e++] = env[i];
    full_env[e] = NULL;
    ck_assert_int_eq(nw_run(r, args, full_env), 0);
    tk_read_text(log_path, log_text, sizeof log_text);
    unlink(log_path);
}

#define CONFIGS                                                                                                        \
    "P process_config tests/topologies/good/conf\n"                                                                    \
    "F process_config tests/topologies/good/conf\n"                                                                    \
    "C process_config tests/topologies/good/conf\n"
#define BRING_UP                                                                                                       \
    "P process_register\nP process_initialise\nF0 process_register\nF0 process_initialise\n"                          \
    "F1 process_register\nF1 process_initialise\nC process_register\nC process_initialise\n"                          \
    "P process_start\nF0 process_start\nF1 process_start\nC process_start\n"
#define UNLOAD_ALL "P process_unload\nF0 process_unload\nF1 process_unload\nC process_unload\n"
#define WIND_DOWN "P process_stop\nF0 process_stop\nF1 process_stop\nC process_stop\n" UNLOAD_ALL
#define BLOCK(first, last, bytes)                                                                                      \
    "P process_block size=4096\n"                                                                                      \
    "F0 process_block in=" #bytes " seq=" #first "-" #last " out=4096\n"                                              \
    "F1 process_block in=" #bytes " seq=" #first "-" #last " out=4096\n"                                              \
    "C process_block in=" #bytes " frames=" "%d" " seq=" #first "-" #last "\n"
#define FLUSH "F0 process_block in=0 seq= out=4096\nF1 process_block in=0 seq= out=4096\n"

static void expect_log(const char *format, ...)
{
    char expected[8192];
    va_list ap;
    va_start(ap, format);
    vsnprintf(expected, sizeof expected, format, ap);
    va_end(ap);
    ck_assert_str_eq(log_text, expected);
}

START_TEST(calls_follow_narval_order_through_the_whole_run)
{
    nw_result r;
    run_logged(&r, CHAIN4, NULL, NULL);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_str_eq(r.err, "");
    /* 10 frames, 4 per block: 3 blocks, the end-of-data call, the flush of
     * each filter (nothing held, nothing passed on), stop, unload. */
    expect_log(CONFIGS BRING_UP BLOCK(0, 3, 96) BLOCK(4, 7, 96) BLOCK(8, 9, 48) "P process_block size=4096\n" FLUSH
                   WIND_DOWN,
               4, 4, 2);
}
END_TEST

START_TEST(the_conf_option_reaches_process_config)
{
    nw_result r;
    const char *extra[] = {"--conf", "tests/topologies", NULL};
    run_logged(&r, DIRECT, extra, NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_eq(strstr(log_text, "P process_config tests/topologies\nC process_config tests/topologies\n"),
                     log_text);
}
END_TEST

/* The report row of one actor: its numbers, in the table's order. */
static void expect_row(const char *out, const char *actor, const char *library, unsigned long long blocks,
                       unsigned long long frames_in, unsigned long long frames_out, unsigned long long bytes_in,
                       unsigned long long bytes_out)
{
    char want[256], name[64], lib[64];
    unsigned long long v[5];
    unsigned long long b;
    double seconds, share;
    snprintf(want, sizeof want, "\n%s ", actor);
    const char *row = strstr(out, want);
    ck_assert_msg(row != NULL, "no row for %s in:\n%s", actor, out);
    int got = sscanf(row + 1, "%63s %63s %llu %llu %llu %llu %llu %lf %lf%%", name, lib, &b, &v[0], &v[1], &v[2],
                     &v[3], &seconds, &share);
    ck_assert_int_eq(got, 9);
    ck_assert_str_eq(lib, library);
    ck_assert_uint_eq(b, blocks);
    ck_assert_uint_eq(v[0], frames_in);
    ck_assert_uint_eq(v[1], frames_out);
    ck_assert_uint_eq(v[2], bytes_in);
    ck_assert_uint_eq(v[3], bytes_out);
    ck_assert(seconds >= 0 && share >= 0 && share <= 100.0001);
}

/* The same counts whether the outputs are counted on the loop's thread or beside the calls. */
START_TEST(the_report_counts_blocks_frames_and_bytes_per_actor)
{
    static const char *const count_thread[2][2] = {{"NARWHAL_COUNT_THREAD=off", NULL},
                                                   {"NARWHAL_COUNT_THREAD=on", NULL}};
    nw_result r;
    run_logged(&r, CHAIN4, NULL, count_thread[_i]);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_eq(strstr(r.out, "actor "), r.out);
    /* Producer: 3 blocks + the end-of-data call; filters: 3 + the flush; consumer: 3. */
    expect_row(r.out, "source", "lifecycle_producer.so", 4, 0, 10, 0, 240);
    expect_row(r.out, "first", "lifecycle_filter.so", 4, 10, 10, 240, 240);
    expect_row(r.out, "second", "lifecycle_filter.so", 4, 10, 10, 240, 240);
    expect_row(r.out, "sink", "lifecycle_consumer.so", 3, 10, 0, 240, 0);
    ck_assert_ptr_nonnull(strstr(r.out, " s, 3 producer blocks, ended at the end of the data\n"));
    ck_assert_ptr_nonnull(strstr(r.out, " s sequentially: 10 producer frames, "));
    ck_assert_ptr_nonnull(strstr(r.out, "\nbusiest actor: '"));
    ck_assert_ptr_null(strstr(r.out, "wait in"));
    /* sequentially, the time outside the actors' calls and the part of it counting their frames */
    ck_assert_ptr_nonnull(strstr(r.out, "\nthe emulator's own: "));
    ck_assert_ptr_nonnull(strstr(r.out, " s on the count of their output's frames"));
    ck_assert_int_eq(nw_lines(r.out), 9);
}
END_TEST

START_TEST(blocks_option_stops_after_n_producer_blocks_then_flushes)
{
    nw_result r;
    const char *extra[] = {"--blocks", "2", NULL};
    const char *env[] = {"LIFECYCLE_FRAMES=100", NULL};
    run_logged(&r, CHAIN4, extra, env);
    ck_assert_int_eq(r.status, 0);
    expect_log(CONFIGS BRING_UP BLOCK(0, 3, 96) BLOCK(4, 7, 96) FLUSH WIND_DOWN, 4, 4);
    ck_assert_ptr_nonnull(strstr(r.out, " s, 2 producer blocks, ended after the requested number of blocks\n"));
}
END_TEST

START_TEST(producer_end_of_data_ends_the_run)
{
    nw_result r;
    const char *env[] = {"LIFECYCLE_FRAMES=6", "LIFECYCLE_PER_BLOCK=3", NULL};
    run_logged(&r, DIRECT, NULL, env);
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(log_text, "P process_config tests/topologies/good/conf\n"
                               "C process_config tests/topologies/good/conf\n"
                               "P process_register\nP process_initialise\nC process_register\nC process_initialise\n"
                               "P process_start\nC process_start\n"
                               "P process_block size=1000\nC process_block in=72 frames=3 seq=0-2\n"
                               "P process_block size=1000\nC process_block in=72 frames=3 seq=3-5\n"
                               "P process_block size=1000\n"
                               "P process_stop\nC process_stop\nP process_unload\nC process_unload\n");
    ck_assert_ptr_nonnull(strstr(r.out, " s, 2 producer blocks, ended at the end of the data\n"));
}
END_TEST

START_TEST(the_flush_call_passes_held_frames_down_the_chain)
{
    nw_result r;
    const char *env[] = {"LIFECYCLE_HOLD=F0", NULL};
    run_logged(&r, CHAIN4, NULL, env);
    ck_assert_int_eq(r.status, 0);
    /* F0 keeps everything; its flush emits all 10 frames, which F1 and the
     * consumer get before F1's own flush. */
    ck_assert_str_eq(log_text, CONFIGS BRING_UP "P process_block size=4096\nF0 process_block in=96 seq=0-3 out=4096\n"
                                                "P process_block size=4096\nF0 process_block in=96 seq=4-7 out=4096\n"
                                                "P process_block size=4096\nF0 process_block in=48 seq=8-9 out=4096\n"
                                                "P process_block size=4096\n"
                                                "F0 process_block in=0 seq= out=4096\n"
                                                "F1 process_block in=240 seq=0-9 out=4096\n"
                                                "C process_block in=240 frames=10 seq=0-9\n"
                                                "F1 process_block in=0 seq= out=4096\n" WIND_DOWN);
    expect_row(r.out, "first", "lifecycle_filter.so", 4, 10, 10, 240, 240);
    expect_row(r.out, "sink", "lifecycle_consumer.so", 1, 10, 0, 240, 0);
}
END_TEST

START_TEST(output_size_retry_loses_and_repeats_no_frame)
{
    nw_result r;
    run_logged(&r, GROW, NULL, NULL);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    /* The producer's 10-byte buffer holds no 24-byte frame: it asks for 96
     * and gets them; the filter's 30 bytes take one frame of four: it asks
     * for 96 and is called again with the same input. */
    ck_assert_str_eq(log_text, "P process_config tests/topologies/good/conf\n"
                               "F process_config tests/topologies/good/conf\n"
                               "C process_config tests/topologies/good/conf\n"
                               "P process_register\nP process_initialise\nF0 process_register\nF0 process_initialise\n"
                               "C process_register\nC process_initialise\n"
                               "P process_start\nF0 process_start\nC process_start\n"
                               "P process_block size=10\nP process_block size=96\n"
                               "F0 process_block in=96 seq=0-3 out=30\nF0 process_block in=96 seq=0-3 out=96\n"
                               "C process_block in=96 frames=4 seq=0-3\n"
                               "P process_block size=96\nF0 process_block in=96 seq=4-7 out=96\n"
                               "C process_block in=96 frames=4 seq=4-7\n"
                               "P process_block size=96\nF0 process_block in=48 seq=8-9 out=96\n"
                               "C process_block in=48 frames=2 seq=8-9\n"
                               "P process_block size=96\nF0 process_block in=0 seq= out=96\n"
                               "P process_stop\nF0 process_stop\nC process_stop\n"
                               "P process_unload\nF0 process_unload\nC process_unload\n");
    ck_assert_ptr_nonnull(strstr(r.out, "output buffer of 'source' grown 1 time(s) to 96 bytes (the topology gives 10)\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "output buffer of 'pass' grown 1 time(s) to 96 bytes (the topology gives 30)\n"));
    expect_row(r.out, "pass", "lifecycle_filter.so", 4, 10, 10, 240, 240);
    expect_row(r.out, "sink", "lifecycle_consumer.so", 3, 10, 0, 240, 0);
}
END_TEST

START_TEST(an_actor_error_mid_run_unloads_everyone_without_stop)
{
    nw_result r;
    const char *env[] = {"LIFECYCLE_FAIL=F0:process_block:2:8", NULL};
    run_logged(&r, CHAIN4, NULL, env);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "narwhal: actor 'first' (lifecycle_filter.so): process_block returned error code 8: "
                            "input inconsistent with configuration\n");
    /* Abort: no flush, no stop; unload for every actor. */
    expect_log(CONFIGS BRING_UP BLOCK(0, 3, 96) "P process_block size=4096\nF0 process_block in=96 seq=4-7 out=4096\n"
                   UNLOAD_ALL,
               4);
    ck_assert_ptr_nonnull(strstr(r.out, "stopped by an error\n"));
}
END_TEST

START_TEST(an_initialise_error_unloads_the_registered_actors_only)
{
    nw_result r;
    const char *env[] = {"LIFECYCLE_FAIL=F1:process_initialise:1:1", NULL};
    run_logged(&r, CHAIN4, NULL, env);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "narwhal: actor 'second' (lifecycle_filter.so): process_initialise returned error code 1: "
                            "configuration error\n");
    ck_assert_str_eq(log_text, CONFIGS "P process_register\nP process_initialise\nF0 process_register\n"
                                       "F0 process_initialise\nF1 process_register\nF1 process_initialise\n"
                                       "P process_unload\nF0 process_unload\nF1 process_unload\n");
}
END_TEST

START_TEST(a_start_error_unloads_all_without_stop)
{
    nw_result r;
    const char *env[] = {"LIFECYCLE_FAIL=C:process_start:1:7", NULL};
    run_logged(&r, CHAIN4, NULL, env);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "narwhal: actor 'sink' (lifecycle_consumer.so): process_start returned error code 7: "
                            "call out of sequence\n");
    ck_assert_str_eq(log_text, CONFIGS BRING_UP UNLOAD_ALL);
}
END_TEST

START_TEST(a_config_error_registers_nothing)
{
    nw_result r;
    const char *env[] = {"LIFECYCLE_FAIL=F:process_config:1:1", NULL};
    run_logged(&r, CHAIN4, NULL, env);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "narwhal: actor 'first' (lifecycle_filter.so): process_config returned error code 1: "
                            "configuration error\n");
    ck_assert_str_eq(log_text, "P process_config tests/topologies/good/conf\n"
                               "F process_config tests/topologies/good/conf\n");

    const char *args[] = {"validate", CHAIN4, "--actors", nw_build_path("/tests/actors"), NULL};
    ck_assert_int_eq(nw_run(&r, args, env), 0);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "narwhal: actor 'first' (lifecycle_filter.so): process_config returned error code 1: "
                            "configuration error\n");
}
END_TEST

START_TEST(a_stop_error_still_stops_and_unloads_the_others)
{
    nw_result r;
    const char *env[] = {"LIFECYCLE_FAIL=F0:process_stop:1:5", NULL};
    run_logged(&r, CHAIN4, NULL, env);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "narwhal: actor 'first' (lifecycle_filter.so): process_stop returned error code 5: "
                            "input/output error\n");
    ck_assert_ptr_nonnull(strstr(log_text, FLUSH WIND_DOWN));
}
END_TEST

START_TEST(an_actor_claiming_more_than_its_buffer_is_stopped)
{
    nw_result r;
    const char *env[] = {"LIFECYCLE_OVERCLAIM=F0", NULL};
    run_logged(&r, CHAIN4, NULL, env);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "narwhal: actor 'first' (lifecycle_filter.so): process_block reported 4097 bytes used in "
                            "its 4096-byte output buffer\n");
    /* Nothing of the bad block reached the next actor; abort. */
    ck_assert_ptr_null(strstr(log_text, "F1 process_block"));
    ck_assert_ptr_null(strstr(log_text, "process_stop"));
    ck_assert_ptr_nonnull(strstr(log_text, UNLOAD_ALL));
}
END_TEST

START_TEST(sigint_finishes_the_block_in_hand_then_winds_down)
{
    nw_result r;
    const char *env[] = {"LIFECYCLE_FRAMES=1000", "LIFECYCLE_SIGNAL=2", NULL};
    run_logged(&r, CHAIN4, NULL, env);
    ck_assert_int_eq(r.status, 0);
    expect_log(CONFIGS BRING_UP BLOCK(0, 3, 96) BLOCK(4, 7, 96) FLUSH WIND_DOWN, 4, 4);
    ck_assert_ptr_nonnull(strstr(r.out, " s, 2 producer blocks, stopped by SIGINT\n"));
}
END_TEST

START_TEST(sigterm_is_handled_like_sigint)
{
    nw_result r;
    const char *env[] = {"LIFECYCLE_FRAMES=1000", "LIFECYCLE_SIGNAL=1:TERM", NULL};
    run_logged(&r, CHAIN4, NULL, env);
    ck_assert_int_eq(r.status, 0);
    expect_log(CONFIGS BRING_UP BLOCK(0, 3, 96) FLUSH WIND_DOWN, 4);
    ck_assert_ptr_nonnull(strstr(r.out, " s, 1 producer blocks, stopped by SIGTERM\n"));
}
END_TEST

START_TEST(a_buffer_request_above_1_gib_stops_the_run)
{
    nw_result r;
    const char *env[] = {"LIFECYCLE_NEED=F1:1073741825", NULL};
    run_logged(&r, CHAIN4, NULL, env);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "narwhal: actor 'second' (lifecycle_filter.so): process_block needs an output buffer of "
                            "1073741825 bytes, more than the emulator's limit of 1073741824 (1 GiB)\n");
    ck_assert_ptr_null(strstr(log_text, "process_stop"));
    ck_assert_ptr_nonnull(strstr(log_text, UNLOAD_ALL));
}
END_TEST

START_TEST(a_buffer_request_that_is_no_larger_stops_the_run)
{
    nw_result r;
    const char *env[] = {"LIFECYCLE_NEED=F0:4096", NULL};
    run_logged(&r, CHAIN4, NULL, env);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "narwhal: actor 'first' (lifecycle_filter.so): process_block asked for a larger output "
                            "buffer but needs 4096 bytes, no more than the 4096 it has\n");
}
END_TEST

/* ---- the same through the library, numbers read from emu_run_result ---- */

START_TEST(emu_run_reports_growth_and_counts)
{
    char err[1024];
    emu_topology *t = NULL;
    emu_chain *c = NULL;
    emu_run_result res;
    const char *dirs[] = {nw_build_path("/tests/actors")};
    unsetenv("LIFECYCLE_LOG");
    ck_assert_int_eq(emu_topology_read(GROW, NULL, &t, err, sizeof err), EMU_OK);
    ck_assert_int_eq(emu_chain_load(t, dirs, 1, &c, err, sizeof err), EMU_OK);
    ck_assert_uint_eq(c->n_libraries, 3);
    ck_assert_int_eq(emu_run_result_init(&res, t->n_actors), EMU_OK);
    emu_run_options o = {.max_blocks = 2};
    ck_assert_int_eq(emu_run(c, &o, &res, err, sizeof err), EMU_OK);
    ck_assert_int_eq(res.end, EMU_END_LIMIT);
    ck_assert_uint_eq(res.blocks, 2);
    ck_assert_uint_eq(res.actors[0].grown, 1);
    ck_assert_uint_eq(res.actors[0].buffer_size, 96);
    ck_assert_uint_eq(res.actors[1].grown, 1);
    ck_assert_uint_eq(res.actors[1].buffer_size, 96);
    ck_assert_uint_eq(res.actors[2].grown, 0);
    ck_assert_uint_eq(res.actors[0].frames_out, 8);
    ck_assert_uint_eq(res.actors[1].frames_in, 8);
    ck_assert_uint_eq(res.actors[1].blocks, 3); /* two blocks and the flush */
    ck_assert_uint_eq(res.actors[2].frames_in, 8);
    ck_assert_uint_eq(res.actors[2].bytes_in, 192);
    ck_assert(res.wall_seconds >= res.actors[0].seconds + res.actors[1].seconds + res.actors[2].seconds);
    emu_run_result_free(&res);
    emu_chain_free(c);
    emu_topology_free(t);
}
END_TEST

START_TEST(one_library_serves_two_instances_with_one_config)
{
    char err[1024];
    emu_topology *t = NULL;
    emu_chain *c = NULL;
    const char *dirs[] = {nw_build_path("/tests/actors")};
    ck_assert_int_eq(emu_topology_read(CHAIN4, NULL, &t, err, sizeof err), EMU_OK);
    ck_assert_int_eq(emu_chain_load(t, dirs, 1, &c, err, sizeof err), EMU_OK);
    ck_assert_uint_eq(c->n_libraries, 3);
    ck_assert_uint_eq(c->library_of[1], c->library_of[2]);
    ck_assert_uint_ne(c->library_of[0], c->library_of[1]);
    emu_chain_free(c);
    emu_topology_free(t);
}
END_TEST

/* In a child: loads omp_consumer.so, runs one parallel block, closes it,
 * and lives on while libgomp's workers spin (OMP_WAIT_POLICY=active).
 * Returns 0, or where it went wrong. */
static int run_openmp_actor_then_close(void)
{
    static uint8_t block[1 << 20];
    char err[1024];
    char path[1024];
    emu_library lib;
    unsigned code = 0;
    snprintf(path, sizeof path, "%s", nw_build_path("/tests/actors/omp_consumer.so"));
    /* Were libgomp in the test program already, unloading the actor could
     * not unload it, and the test would prove nothing. */
    if (dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD))
        return 2;
    if (emu_library_open(path, &lib, err, sizeof err) != EMU_OK)
        return 3;
    narval_consumer_block_fn *block_fn;
    memcpy(&block_fn, &lib.block, sizeof block_fn);
    void *instance = lib.register_instance(&code);
    block_fn(instance, block, sizeof block, &code);
    lib.unload(instance, &code);
    emu_library_close(&lib);
    usleep(200000);
    return dlopen(path, RTLD_NOW | RTLD_NOLOAD) ? 0 : 4;
}

START_TEST(an_openmp_actor_and_libgomp_stay_mapped_after_close)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        setenv("OMP_WAIT_POLICY", "active", 1);
        setenv("OMP_NUM_THREADS", "4", 1);
        _exit(run_openmp_actor_then_close());
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(!WIFSIGNALED(status), "the process died of signal %d after closing an OpenMP actor",
                  WTERMSIG(status));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
        TK_SKIP("libgomp is part of this test program (a sanitizer build?): unloading an OpenMP actor cannot "
                "unload it, so RTLD_NODELETE is not tested");
    ck_assert_msg(WEXITSTATUS(status) != 3, "omp_consumer.so could not be loaded");
    ck_assert_msg(WEXITSTATUS(status) != 4, "omp_consumer.so was unmapped by emu_library_close");
    ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

static Suite *lifecycle_suite(void)
{
    Suite *s = suite_create("lifecycle");
    TCase *tc = tcase_create("order");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, calls_follow_narval_order_through_the_whole_run);
    tcase_add_test(tc, the_conf_option_reaches_process_config);
    tcase_add_loop_test(tc, the_report_counts_blocks_frames_and_bytes_per_actor, 0, 2);
    tcase_add_test(tc, blocks_option_stops_after_n_producer_blocks_then_flushes);
    tcase_add_test(tc, producer_end_of_data_ends_the_run);
    tcase_add_test(tc, the_flush_call_passes_held_frames_down_the_chain);
    tcase_add_test(tc, output_size_retry_loses_and_repeats_no_frame);
    suite_add_tcase(s, tc);
    tc = tcase_create("errors");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, an_actor_error_mid_run_unloads_everyone_without_stop);
    tcase_add_test(tc, an_initialise_error_unloads_the_registered_actors_only);
    tcase_add_test(tc, a_start_error_unloads_all_without_stop);
    tcase_add_test(tc, a_config_error_registers_nothing);
    tcase_add_test(tc, a_stop_error_still_stops_and_unloads_the_others);
    tcase_add_test(tc, an_actor_claiming_more_than_its_buffer_is_stopped);
    tcase_add_test(tc, sigint_finishes_the_block_in_hand_then_winds_down);
    tcase_add_test(tc, sigterm_is_handled_like_sigint);
    tcase_add_test(tc, a_buffer_request_above_1_gib_stops_the_run);
    tcase_add_test(tc, a_buffer_request_that_is_no_larger_stops_the_run);
    suite_add_tcase(s, tc);
    tc = tcase_create("library");
    tcase_add_test(tc, emu_run_reports_growth_and_counts);
    tcase_add_test(tc, one_library_serves_two_instances_with_one_config);
    tcase_add_test(tc, an_openmp_actor_and_libgomp_stay_mapped_after_close);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(lifecycle_suite()); }

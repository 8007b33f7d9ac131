/* check_graph.c: Check suite for topologies that are graphs: fan-out, shared instances, fan-in, diamonds, stream ends, both run modes. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "narwhal_exec.h"
#include "testkit.h"

/* ---- topologies, written to a temporary directory ---- */

#define PRODUCER(name) \
    "<producer><name>" name "</name><library>graph_producer.so</library>" \
    "<output_buffer_name>data</output_buffer_name><size output_buffer=\"data\">4096</size></producer>\n"
#define FILTER(name, sources) \
    "<intermediary><name>" name "</name><library>graph_filter.so</library>" sources \
    "<output_buffer_name>out</output_buffer_name><size output_buffer=\"out\">4096</size></intermediary>\n"
#define FILTER_N(n, name, sources) \
    "<intermediary input_buffers=\"" n "\"><name>" name "</name><library>graph_filter.so</library>" sources \
    "<output_buffer_name>out</output_buffer_name><size output_buffer=\"out\">4096</size></intermediary>\n"
#define CONSUMER(name, sources) \
    "<consumer><name>" name "</name><library>graph_consumer.so</library>" sources "</consumer>\n"
#define CONSUMER_N(n, name, sources) \
    "<consumer input_buffers=\"" n "\"><name>" name "</name><library>graph_consumer.so</library>" sources \
    "</consumer>\n"
#define SRC(buffer, actor) "<data_source source_buffer=\"" buffer "\">" actor "</data_source>"
#define SHARED(how, buffer, actor) "<data_source source_buffer=\"" buffer "\" share=\"" how "\">" actor "</data_source>"

/* One producer, two readers of its buffer, each getting every block. */
static const char fan_out[] = "<configuration>\n" PRODUCER("source") CONSUMER("monitor", SRC("data", "source"))
    CONSUMER("writer", SRC("data", "source")) "</configuration>\n";

/* One producer, two instances sharing its buffer, a builder reading both. */
#define SHARED_TOPOLOGY(how)                                                                                           \
    "<configuration>\n" PRODUCER("source") FILTER("psa1", SHARED(how, "data", "source"))                              \
        FILTER("psa2", SHARED(how, "data", "source"))                                                                 \
            CONSUMER_N("2", "builder", SRC("out", "psa1") SRC("out", "psa2")) "</configuration>\n"
static const char round_robin[] = SHARED_TOPOLOGY("round-robin");
static const char first_free[] = SHARED_TOPOLOGY("first-free");

/* Two producers into one consumer with two inputs. */
static const char fan_in[] = "<configuration>\n" PRODUCER("a") PRODUCER("b")
    CONSUMER_N("2", "sink", SRC("data", "a") SRC("data", "b")) "</configuration>\n";

/* a feeds left and right, b feeds left too; sink reads left and right. */
static const char diamond[] = "<configuration>\n" PRODUCER("a") PRODUCER("b")
    FILTER_N("2", "left", SRC("data", "a") SRC("data", "b")) FILTER("right", SRC("data", "a"))
    CONSUMER_N("2", "sink", SRC("out", "left") SRC("out", "right")) "</configuration>\n";

/* Every feature at once: a crystal's PSA split round-robin over two
 * instances, another crystal's on one, a builder merging the three, its
 * output read by two consumers, and a monitor tapping the first crystal. */
static const char cluster[] = "<configuration>\n" PRODUCER("crystal1") PRODUCER("crystal2")
    FILTER("psa1a", SHARED("round-robin", "data", "crystal1")) FILTER("psa1b", SHARED("round-robin", "data", "crystal1"))
    FILTER("psa2", SRC("data", "crystal2"))
    FILTER_N("3", "builder", SRC("out", "psa1a") SRC("out", "psa1b") SRC("out", "psa2"))
    CONSUMER("histo", SRC("out", "builder")) CONSUMER("writer", SRC("out", "builder"))
    CONSUMER("monitor", SRC("data", "crystal1")) "</configuration>\n";

/* ---- running them ---- */

typedef struct graph_run {
    nw_result r;
    char log[NW_OUTPUT_MAX];
} graph_run;

/* Runs narwhal run on the topology xml with extra arguments (NULL-ended)
 * and GRAPH_* settings (NULL-ended), and reads the actors' call log. */
static void run_graph(graph_run *g, const char *xml, const char *const *extra, const char *const *settings)
{
    char dir[256], topology[512], log[512], env_log[600];
    tk_make_tmpdir(dir, sizeof dir, "check_graph");
    snprintf(topology, sizeof topology, "%s/graph.xml", dir);
    snprintf(log, sizeof log, "%s/calls.log", dir);
    snprintf(env_log, sizeof env_log, "GRAPH_LOG=%s", log);
    tk_write_text(topology, xml);
    const char *args[24] = {"run", topology, "--actors", nw_build_path("/tests/actors")};
    size_t n = 4;
    for (size_t i = 0; extra && extra[i] && n < 23; i++)
        args[n++] = extra[i];
    const char *env[16] = {env_log};
    size_t m = 1;
    for (size_t i = 0; settings && settings[i] && m < 15; i++)
        env[m++] = settings[i];
    ck_assert_int_eq(nw_run(&g->r, args, env), 0);
    g->log[0] = '\0';
    if (!tk_read_text(log, g->log, sizeof g->log))
        g->log[0] = '\0';
    tk_remove_tree(dir);
}

/* The lines of the log that instance who wrote for call, details only,
 * each ending in '\n' (who "*" for every instance, with its name). */
static void calls_of(const graph_run *g, const char *who, const char *call, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (const char *line = g->log; *line;) {
        size_t len = strcspn(line, "\n");
        char w[16] = "", c[32] = "";
        int skip = 0;
        if (sscanf(line, "%15s %31s %n", w, c, &skip) >= 2 && (strcmp(who, "*") == 0 || strcmp(w, who) == 0) &&
            strcmp(c, call) == 0) {
            const char *details = skip ? line + skip : line + len;
            size_t dlen = (size_t)(line + len - details);
            if (strcmp(who, "*") == 0)
                n += (size_t)snprintf(out + n, cap - n, "%s ", w);
            n += (size_t)snprintf(out + n, cap - n, "%.*s\n", (int)dlen, details);
        }
        line += len + (line[len] == '\n');
    }
}

static void assert_blocks(const graph_run *g, const char *who, const char *expected)
{
    char got[NW_OUTPUT_MAX];
    calls_of(g, who, "process_block", got, sizeof got);
    ck_assert_msg(strcmp(got, expected) == 0, "%s was handed:\n%sexpected:\n%s", who, got, expected);
}

static unsigned count_lines(const char *text, const char *needle)
{
    unsigned n = 0;
    for (const char *at = text; (at = strstr(at, needle)); at += strlen(needle))
        n++;
    return n;
}

static void assert_ok(const graph_run *g)
{
    ck_assert_msg(g->r.status == 0, "exit %d: %s", g->r.status, g->r.err);
}

/* No filter was handed an empty input (a flush call). */
static void assert_no_flush(const graph_run *g)
{
    ck_assert_msg(!strstr(g->log, "F0 process_block -") && !strstr(g->log, "F1 process_block -"), "a flush:\n%s",
                  g->log);
}

static const char *const sequential[] = {NULL};
static const char *const pipelined[] = {"--pipeline", NULL};
static const char *const pipelined_1[] = {"--pipeline", "--ring", "1", NULL};
static const char *const *const modes[] = {sequential, pipelined, pipelined_1};
#define N_MODES 3

/* ---- what each actor is handed ---- */

START_TEST(fan_out_gives_every_reader_every_block_and_its_own_eof)
{
    graph_run g;
    run_graph(&g, fan_out, modes[_i], NULL);
    assert_ok(&g);
    const char *every = "P0.0 P0.1\nP0.2 P0.3\nP0.4 P0.5 eof\n";
    assert_blocks(&g, "C0", every);
    assert_blocks(&g, "C1", every);
}
END_TEST

/* 7 frames, 2 a block: four blocks, the last holding frame 6 and the
 * meta:eof; round-robin gives blocks 1 and 3 to psa1, 2 and 4 to psa2. */
START_TEST(round_robin_instances_take_turns_and_each_gets_one_eof)
{
    static const char *const frames[] = {"GRAPH_FRAMES=7", NULL};
    graph_run g;
    run_graph(&g, round_robin, modes[_i], frames);
    assert_ok(&g);
    assert_blocks(&g, "F0", "P0.0 P0.1\nP0.4 P0.5\neof\n-\n");
    assert_blocks(&g, "F1", "P0.2 P0.3\nP0.6 eof\n-\n");
    /* The builder: every block once, in the producer's order, and one
     * meta:eof, psa1's, after both instances' streams ended (psa2's,
     * which came first, is taken out of its block). */
    assert_blocks(&g, "C0", "P0.0 P0.1\nP0.2 P0.3\nP0.4 P0.5\nP0.6\neof\n");
}
END_TEST

/* first-free: which instance takes a block depends on which is idle, but
 * each block goes to exactly one, each instance sees one meta:eof, and
 * the builder gets every frame once and one meta:eof, last. */
START_TEST(first_free_instances_take_each_block_once)
{
    static const char *const frames[] = {"GRAPH_FRAMES=40", "GRAPH_PER_BLOCK=3", NULL};
    graph_run g;
    char f0[NW_OUTPUT_MAX], f1[NW_OUTPUT_MAX], c0[NW_OUTPUT_MAX];
    run_graph(&g, first_free, modes[_i], frames);
    assert_ok(&g);
    calls_of(&g, "F0", "process_block", f0, sizeof f0);
    calls_of(&g, "F1", "process_block", f1, sizeof f1);
    calls_of(&g, "C0", "process_block", c0, sizeof c0);
    for (unsigned seq = 0; seq < 40; seq++) {
        char frame[32];
        snprintf(frame, sizeof frame, "P0.%u\n", seq);
        unsigned in_f = count_lines(f0, frame) + count_lines(f1, frame), in_c = count_lines(c0, frame);
        snprintf(frame, sizeof frame, "P0.%u ", seq);
        in_f += count_lines(f0, frame) + count_lines(f1, frame);
        in_c += count_lines(c0, frame);
        ck_assert_msg(in_f == 1 && in_c == 1, "frame %u: %u times to the instances, %u to the builder", seq, in_f,
                      in_c);
    }
    ck_assert_uint_eq(count_lines(f0, "eof"), 1);
    ck_assert_uint_eq(count_lines(f1, "eof"), 1);
    ck_assert_uint_eq(count_lines(c0, "eof"), 1);
    size_t len = strlen(c0);
    ck_assert_msg(len > 4 && strcmp(c0 + len - 4, "eof\n") == 0, "the builder's meta:eof is not last:\n%s", c0);
}
END_TEST

/* b ends after one block; sink still gets one meta:eof, when a ends. */
START_TEST(fan_in_gives_both_streams_and_one_eof_at_the_end)
{
    static const char *const frames[] = {"GRAPH_FRAMES_P1=2", NULL};
    graph_run g;
    run_graph(&g, fan_in, modes[_i], frames);
    assert_ok(&g);
    assert_blocks(&g, "C0", "P0.0 P0.1\nP1.0 P1.1\nP0.2 P0.3\nP0.4 P0.5 eof\n");
    assert_blocks(&g, "P1", "P1.0 P1.1 eof\n-\n");
}
END_TEST

/* Round r: a's block to left then right, each through to sink, then b's
 * block to left and on; sink's meta:eof comes from the input ending last. */
START_TEST(a_diamond_delivers_depth_first_in_topology_order)
{
    graph_run g;
    run_graph(&g, diamond, modes[_i], NULL);
    assert_ok(&g);
    assert_blocks(&g, "F0", "P0.0 P0.1\nP1.0 P1.1\nP0.2 P0.3\nP1.2 P1.3\nP0.4 P0.5\nP1.4 P1.5 eof\n-\n");
    assert_blocks(&g, "F1", "P0.0 P0.1\nP0.2 P0.3\nP0.4 P0.5 eof\n-\n");
    assert_blocks(&g, "C0", "P0.0 P0.1\nP0.0 P0.1\nP1.0 P1.1\nP0.2 P0.3\nP0.2 P0.3\nP1.2 P1.3\nP0.4 P0.5\nP0.4 P0.5\n"
                            "P1.4 P1.5 eof\n");
}
END_TEST

/* Every instance's calls, in its own order, for the cluster topology. */
static void cluster_calls(const char *const *mode, char *out, size_t cap)
{
    static const char *const frames[] = {"GRAPH_FRAMES=23", "GRAPH_FRAMES_P1=11", "GRAPH_PER_BLOCK=3", NULL};
    static const char *const who[] = {"P0", "P1", "F0", "F1", "F2", "F3", "C0", "C1", "C2"};
    graph_run g;
    size_t n = 0;
    run_graph(&g, cluster, mode, frames);
    assert_ok(&g);
    for (size_t i = 0; i < sizeof who / sizeof who[0]; i++) {
        char blocks[NW_OUTPUT_MAX];
        calls_of(&g, who[i], "process_block", blocks, sizeof blocks);
        ck_assert_msg(blocks[0] != '\0', "%s was not called", who[i]);
        n += (size_t)snprintf(out + n, cap - n, "%s:\n%s", who[i], blocks);
    }
}

START_TEST(pipelined_runs_hand_every_actor_what_the_sequential_run_does)
{
    static char expected[NW_OUTPUT_MAX], got[NW_OUTPUT_MAX];
    cluster_calls(sequential, expected, sizeof expected);
    /* The writer and the histogrammer: everything, one meta:eof, last. */
    ck_assert_ptr_nonnull(strstr(expected, "C0:\n"));
    for (int run = 0; run < 3; run++) {
        cluster_calls(run == 2 ? pipelined_1 : pipelined, got, sizeof got);
        ck_assert_str_eq(got, expected);
    }
}
END_TEST

/* ---- run control on a graph ---- */

START_TEST(strict_makes_no_flush_call_on_a_graph)
{
    static const char *const strict[][3] = {{"--strict", NULL}, {"--strict", "--pipeline", NULL}};
    graph_run g;
    run_graph(&g, diamond, strict[_i], NULL);
    assert_ok(&g);
    assert_no_flush(&g);
    assert_blocks(&g, "F1", "P0.0 P0.1\nP0.2 P0.3\nP0.4 P0.5 eof\n");
    ck_assert_uint_eq(count_lines(g.log, "process_stop"), 5);
}
END_TEST

/* Two runs: the second repeats the first (turns start again at the first
 * instance), after a reset and an initialise of every actor. */
START_TEST(cycles_repeat_a_graph_run_exactly)
{
    static const char *const twice[][4] = {{"--cycles", "2", NULL}, {"--cycles", "2", "--pipeline", NULL}};
    static const char *const frames[] = {"GRAPH_FRAMES=7", NULL};
    graph_run g;
    run_graph(&g, round_robin, twice[_i], frames);
    assert_ok(&g);
    assert_blocks(&g, "F0", "P0.0 P0.1\nP0.4 P0.5\neof\n-\nP0.0 P0.1\nP0.4 P0.5\neof\n-\n");
    assert_blocks(&g, "C0", "P0.0 P0.1\nP0.2 P0.3\nP0.4 P0.5\nP0.6\neof\nP0.0 P0.1\nP0.2 P0.3\nP0.4 P0.5\nP0.6\neof\n");
    ck_assert_uint_eq(count_lines(g.log, "process_reset"), 4);
    ck_assert_uint_eq(count_lines(g.log, "process_start"), 8);
}
END_TEST

/* A pause after every round: every actor pauses and resumes, no block in
 * between; a has three blocks, b one (it then ends): three pauses. */
START_TEST(pauses_fall_between_rounds_with_every_actor_idle)
{
    static const char *const every[][4] = {{"--pause-every", "1", NULL}, {"--pause-every", "1", "--pipeline", NULL}};
    static const char *const frames[] = {"GRAPH_FRAMES_P1=2", NULL};
    graph_run g;
    char calls[NW_OUTPUT_MAX];
    run_graph(&g, fan_in, every[_i], frames);
    assert_ok(&g);
    ck_assert_uint_eq(count_lines(g.log, "process_pause"), 9);
    ck_assert_uint_eq(count_lines(g.log, "process_resume"), 9);
    /* Between a pause's first call and its last resume: pause and resume calls only. */
    const char *at = g.log;
    for (int pause = 0; pause < 3; pause++) {
        const char *first = strstr(at, "process_pause"), *last = first;
        ck_assert_ptr_nonnull(first);
        for (int i = 0; i < 3; i++)
            last = strstr(last + 1, "process_resume");
        ck_assert_ptr_nonnull(last);
        snprintf(calls, sizeof calls, "%.*s", (int)(last - first), first);
        ck_assert_msg(!strstr(calls, "process_block"), "a block during a pause:\n%s", calls);
        at = last;
    }
    assert_blocks(&g, "C0", "P0.0 P0.1\nP1.0 P1.1\nP0.2 P0.3\nP0.4 P0.5 eof\n");
    ck_assert_ptr_nonnull(strstr(g.r.out, "3 pause(s)"));
}
END_TEST

/* right fails on its second block: the run aborts, every instance is
 * unloaded and none stopped. */
START_TEST(an_error_in_one_branch_aborts_every_actor_without_stop)
{
    static const char *const fail[] = {"GRAPH_FAIL=F1:2:8", NULL};
    graph_run g;
    run_graph(&g, diamond, modes[_i], fail);
    ck_assert_int_eq(g.r.status, 1);
    ck_assert_ptr_nonnull(strstr(g.r.err, "actor 'right' (graph_filter.so): process_block returned error code 8"));
    ck_assert_uint_eq(count_lines(g.log, "process_stop"), 0);
    ck_assert_uint_eq(count_lines(g.log, "process_unload"), 5);
    ck_assert_uint_eq(count_lines(g.log, "F1 process_block"), 2);
    assert_no_flush(&g);
}
END_TEST

/* The table has a row per instance; -v traces each instance's calls. */
START_TEST(the_table_and_the_traces_name_every_instance)
{
    static const char *const verbose[] = {"-v", NULL};
    static const char *const frames[] = {"GRAPH_FRAMES=7", NULL};
    graph_run g;
    run_graph(&g, round_robin, verbose, frames);
    assert_ok(&g);
    /* psa1: 2 blocks, the eof-only one and its flush; 5 frames in (4 and the meta:eof). */
    ck_assert_msg(strstr(g.r.out, "\npsa1     graph_filter.so           4           5           5"), "%s", g.r.out);
    ck_assert_msg(strstr(g.r.out, "\npsa2     graph_filter.so           3           4           4"), "%s", g.r.out);
    /* builder: psa2's block "P0.6 eof" without its meta:eof, then psa1's. */
    ck_assert_msg(strstr(g.r.out, "\nbuilder  graph_consumer.so         5           8           0"), "%s", g.r.out);
    /* psa1's meta:eof alone (32 bytes), then psa2's last block (a frame, 24 bytes, and the meta:eof). */
    ck_assert_ptr_nonnull(strstr(g.r.err, "narwhal: psa1: process_block in=32 out=4096\n"));
    ck_assert_ptr_nonnull(strstr(g.r.err, "narwhal: psa2: process_block in=56 out=4096\n"));
    ck_assert_ptr_nonnull(strstr(g.r.err, "narwhal: builder: process_block in=32\n"));
    ck_assert_uint_eq(count_lines(g.r.err, "narwhal: psa1: process_stop\n"), 1);
}
END_TEST

static Suite *graph_suite(void)
{
    Suite *s = suite_create("graph");
    TCase *tc = tcase_create("flow");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, fan_out_gives_every_reader_every_block_and_its_own_eof, 0, N_MODES);
    tcase_add_loop_test(tc, round_robin_instances_take_turns_and_each_gets_one_eof, 0, N_MODES);
    tcase_add_loop_test(tc, first_free_instances_take_each_block_once, 0, N_MODES);
    tcase_add_loop_test(tc, fan_in_gives_both_streams_and_one_eof_at_the_end, 0, N_MODES);
    tcase_add_loop_test(tc, a_diamond_delivers_depth_first_in_topology_order, 0, N_MODES);
    tcase_add_test(tc, pipelined_runs_hand_every_actor_what_the_sequential_run_does);
    suite_add_tcase(s, tc);
    tc = tcase_create("control");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, strict_makes_no_flush_call_on_a_graph, 0, 2);
    tcase_add_loop_test(tc, cycles_repeat_a_graph_run_exactly, 0, 2);
    tcase_add_loop_test(tc, pauses_fall_between_rounds_with_every_actor_idle, 0, 2);
    tcase_add_loop_test(tc, an_error_in_one_branch_aborts_every_actor_without_stop, 0, N_MODES);
    tcase_add_test(tc, the_table_and_the_traces_name_every_instance);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(graph_suite()); }

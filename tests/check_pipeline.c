/* check_pipeline.c: Check suite for `narwhal run --pipeline`: sequential's output, back-pressure, stops, rings. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "adf.h"
#include "emu.h"
#include "loader.h"
#include "narwhal_exec.h"
#include "ring.h"
#include "run.h"
#include "testkit.h"
#include "topology.h"

#define CHAIN4 "tests/topologies/good/chain4.xml"
#define GROW "tests/topologies/good/grow.xml"
#define TIMEOUT 10.0 /* seconds any one narwhal run may take before the test calls it a deadlock */

/* ---- a scratch directory per test, with its conf/ ---- */

static char dir[128];

static const char *in_dir(const char *name) { return tk_path(dir, name); }

static void make_dir(void)
{
    tk_make_tmpdir(dir, sizeof dir, "narwhal-pipeline");
    ck_assert_int_eq(mkdir(in_dir("conf"), 0700), 0);
}

static void remove_dir(void) { ck_assert_int_eq(tk_remove_tree(dir), 0); }

static void expect_same_file(const char *a, const char *b)
{
    size_t na, nb;
    uint8_t *da = tk_read_file(a, &na), *db = tk_read_file(b, &nb);
    ck_assert_msg(na == nb, "%s has %zu bytes, %s %zu", a, na, b, nb);
    ck_assert_msg(memcmp(da, db, na) == 0, "%s and %s differ", a, b);
    free(da);
    free(db);
}

/* A file of the test producer's frames must hold 0, 1, ..., n - 1 in order. */
static void expect_sequence(const char *path, unsigned long long n)
{
    size_t size;
    uint8_t *data = tk_read_file(path, &size);
    adf_iter it;
    adf_frame f;
    unsigned long long seq = 0;
    int rc;
    adf_iter_init(&it, data, size);
    while ((rc = adf_iter_next(&it, &f)) > 0) {
        ck_assert_msg(f.key.event == seq, "%s: frame %llu has sequence number %u", path, seq, f.key.event);
        seq++;
    }
    ck_assert_int_eq(rc, 0);
    ck_assert_uint_eq(seq, n);
    free(data);
}

/* ---- chains written for a test: producer, intermediaries, consumer ---- */

typedef struct stage {
    const char *name, *library;
    unsigned size; /* output buffer; unused for the consumer */
} stage;

static void write_chain(const char *path, const stage *a, size_t n)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("<configuration>\n", f);
    for (size_t k = 0; k < n; k++) {
        const char *role = k == 0 ? "producer" : k + 1 == n ? "consumer" : "intermediary";
        fprintf(f, "  <%s>\n    <name>%s</name>\n    <library>%s</library>\n", role, a[k].name, a[k].library);
        if (k > 0)
            fprintf(f, "    <data_source source_buffer=\"%s_out\">%s</data_source>\n", a[k - 1].name, a[k - 1].name);
        if (k + 1 < n)
            fprintf(f,
                    "    <output_buffer_name>%s_out</output_buffer_name>\n"
                    "    <size output_buffer=\"%s_out\">%u</size>\n",
                    a[k].name, a[k].name, a[k].size);
        fprintf(f, "  </%s>\n", role);
    }
    fputs("</configuration>\n", f);
    ck_assert_int_eq(fclose(f), 0);
}

/* `narwhal run TOPOLOGY` with both actor directories and the scratch conf/;
 * ring 0 runs sequentially, N pipelined with rings of N. */
static void run_chain(nw_result *r, const char *topology, unsigned ring, const char *const *env)
{
    char depth[16];
    const char *args[16] = {"run", topology, "--actors", nw_build_path("/actors"), "--actors",
                            nw_build_path("/tests/actors"), "--conf", in_dir("conf")};
    size_t n = 8;
    snprintf(depth, sizeof depth, "%u", ring);
    if (ring) {
        args[n++] = "--pipeline";
        args[n++] = "--ring";
        args[n++] = depth;
    }
    args[n] = NULL;
    ck_assert_int_eq(nw_run_timed(r, args, env, TIMEOUT, 0, 0), 0);
    ck_assert_msg(!r->timed_out, "no end after %.0f s (ring %u): deadlock?", TIMEOUT, ring);
}

/* The numbers of an actor's report row: blocks, frames in, frames out. */
static void row(const char *out, const char *actor, unsigned long long v[3])
{
    char want[64], name[64], lib[64];
    snprintf(want, sizeof want, "\n%s ", actor);
    const char *line = strstr(out, want);
    ck_assert_msg(line != NULL, "no row for %s in:\n%s", actor, out);
    ck_assert_int_eq(sscanf(line + 1, "%63s %63s %llu %llu %llu", name, lib, &v[0], &v[1], &v[2]), 5);
}

static void writer_conf(const char *output) { tk_write_textf(in_dir("conf/ADFWriter.conf"), "File \"%s\"\n", output); }

static void make_sample(const char *path, unsigned events)
{
    char command[1024];
    snprintf(command, sizeof command, "'%s' '%s' %u >/dev/null", nw_build_path("/tests/mkadf"), path, events);
    ck_assert_int_eq(system(command), 0);
    tk_write_textf(in_dir("conf/ADFReader.conf"), "File \"%s\"\n", path);
}

/* ---- the same bytes in both modes ---- */

static const unsigned modes[] = {0, 4, 1}; /* sequential, pipelined, pipelined with one buffer per ring */
#define N_MODES (sizeof modes / sizeof modes[0])

START_TEST(replay_writes_the_same_bytes_sequential_and_pipelined)
{
    const stage chain[] = {{"reader", "adf_reader.so", 65536}, {"writer", "adf_writer.so", 0}};
    nw_result r;
    make_dir();
    make_sample(in_dir("in.adf"), 300);
    write_chain(in_dir("replay.xml"), chain, 2);
    for (size_t m = 0; m < N_MODES; m++) {
        unsigned long long reader[3], writer[3];
        writer_conf(in_dir("out.adf"));
        run_chain(&r, in_dir("replay.xml"), modes[m], NULL);
        ck_assert_msg(r.status == 0, "ring %u: exit %d: %s", modes[m], r.status, r.err);
        expect_same_file(in_dir("in.adf"), in_dir("out.adf"));
        row(r.out, "reader", reader);
        row(r.out, "writer", writer);
        ck_assert_uint_eq(reader[2], 1759); /* mkadf: 1758 frames and meta:eof */
        ck_assert_uint_eq(writer[1], reader[2]);
        ck_assert_uint_gt(reader[0], 50); /* 6.7 MB in blocks of at most 64 KiB */
        ck_assert_int_eq(strstr(r.out, "wait in") != NULL, modes[m] != 0);
        unlink(in_dir("out.adf"));
    }
    remove_dir();
}
END_TEST

START_TEST(histo_chain_writes_the_same_frames_and_spectra_in_both_modes)
{
    const stage chain[] = {
        {"reader", "adf_reader.so", 65536}, {"histo", "histo.so", 65536}, {"writer", "adf_writer.so", 0}};
    nw_result r;
    char out[N_MODES][32], spectra[N_MODES][32];
    make_dir();
    make_sample(in_dir("in.adf"), 200);
    write_chain(in_dir("histo.xml"), chain, 3);
    for (size_t m = 0; m < N_MODES; m++) {
        snprintf(out[m], sizeof out[m], "out%zu.adf", m);
        snprintf(spectra[m], sizeof spectra[m], "spectra%zu", m);
        writer_conf(in_dir(out[m]));
        tk_write_textf(in_dir("conf/Histo.conf"),
                   "OutputDir %s\nDevice cpu\nFormats csv\nPlot none\nWriteEvery 0\n"
                   "Histogram core crystal.core sum 4096 0 4096\nHistogram hit psa.e sum 1024 0 2048\n",
                   in_dir(spectra[m]));
        run_chain(&r, in_dir("histo.xml"), modes[m], NULL);
        ck_assert_msg(r.status == 0, "ring %u: exit %d: %s", modes[m], r.status, r.err);
    }
    for (size_t m = 0; m < N_MODES; m++) {
        char a[160], b[160];
        expect_same_file(in_dir("in.adf"), in_dir(out[m]));
        snprintf(a, sizeof a, "%s/core.csv", spectra[0]);
        snprintf(b, sizeof b, "%s/core.csv", spectra[m]);
        expect_same_file(in_dir(a), in_dir(b));
        snprintf(a, sizeof a, "%s/hit.csv", spectra[0]);
        snprintf(b, sizeof b, "%s/hit.csv", spectra[m]);
        expect_same_file(in_dir(a), in_dir(b));
    }
    remove_dir();
}
END_TEST

/* A basis on a 6 mm grid with 2 mm fields into the scratch directory (a
 * fraction of a second; the default one takes 20 s and 708 MB, and `make
 * check` does not build it).  0, or -1 with why when basisgen is not built. */
static int coarse_basis(const char *path, char *why, size_t len)
{
    const char *basisgen = nw_build_path("/bin/basisgen");
    char cmd[3 * PATH_MAX];
    if (access(basisgen, X_OK) != 0) {
        snprintf(why, len, "%s is not built", basisgen);
        return -1;
    }
    snprintf(cmd, sizeof cmd, "'%s' --quiet --geometry detector/geometry/agata.geo --grid 6 --field-grid 2 -o '%s'",
             basisgen, path);
    ck_assert_msg(system(cmd) == 0, "basisgen failed: %s", cmd);
    return 0;
}

/* The generator's configuration of the repository, but for its number of events and its basis. */
static void generator_conf(unsigned events, const char *basis)
{
    char line[1024];
    FILE *in = fopen("topologies/conf/Generator.conf", "r"), *out = fopen(in_dir("conf/Generator.conf"), "w");
    ck_assert_ptr_nonnull(in);
    ck_assert_ptr_nonnull(out);
    while (fgets(line, sizeof line, in)) {
        if (strncmp(line, "Events", 6) == 0)
            fprintf(out, "Events %u\n", events);
        else if (strncmp(line, "Basis", 5) == 0)
            fprintf(out, "Basis \"%s\"\n", basis);
        else
            fputs(line, out);
    }
    fclose(in);
    ck_assert_int_eq(fclose(out), 0);
}

START_TEST(simulated_events_of_one_seed_are_the_same_bytes_in_both_modes)
{
    const stage chain[] = {{"generator", "generator.so", 65536}, {"writer", "adf_writer.so", 0}};
    nw_result r;
    char why[PATH_MAX + 64];
    make_dir();
    if (coarse_basis(in_dir("coarse.basis"), why, sizeof why) != 0) {
        remove_dir();
        TK_SKIP("no basis for the generator: %s", why);
    }
    generator_conf(1500, in_dir("coarse.basis"));
    write_chain(in_dir("simulate.xml"), chain, 2);
    for (size_t m = 0; m < N_MODES; m++) {
        char out[32];
        unsigned long long generator[3], writer[3];
        snprintf(out, sizeof out, "out%zu.adf", m);
        writer_conf(in_dir(out));
        run_chain(&r, in_dir("simulate.xml"), modes[m], NULL);
        ck_assert_msg(r.status == 0, "ring %u: exit %d: %s", modes[m], r.status, r.err);
        row(r.out, "generator", generator);
        row(r.out, "writer", writer);
        ck_assert_uint_gt(generator[0], 10);
        ck_assert_uint_gt(generator[2], 1500); /* a truth frame per event, data:crystal per crystal hit, meta:eof */
        ck_assert_uint_eq(writer[1], generator[2]);
        expect_same_file(in_dir("out0.adf"), in_dir(out));
    }
    remove_dir();
}
END_TEST

/* The test producer's frames through a filter that holds all of them until
 * its flush (which then needs far more than its 4096 bytes) and one that
 * passes them on, into adf_writer. */
START_TEST(held_frames_and_grown_buffers_give_the_same_file_in_both_modes)
{
    const stage chain[] = {{"source", "lifecycle_producer.so", 4096},
                          {"hold", "lifecycle_filter.so", 4096},
                          {"pass", "lifecycle_filter.so", 4096},
                          {"writer", "adf_writer.so", 0}};
    const char *env[] = {"LIFECYCLE_FRAMES=3000", "LIFECYCLE_HOLD=F0", NULL};
    nw_result r;
    make_dir();
    write_chain(in_dir("hold.xml"), chain, 4);
    for (size_t m = 0; m < N_MODES; m++) {
        char out[32];
        unsigned long long pass[3];
        snprintf(out, sizeof out, "out%zu.adf", m);
        writer_conf(in_dir(out));
        run_chain(&r, in_dir("hold.xml"), modes[m], env);
        ck_assert_msg(r.status == 0, "ring %u: exit %d: %s", modes[m], r.status, r.err);
        expect_sequence(in_dir(out), 3000);
        expect_same_file(in_dir("out0.adf"), in_dir(out));
        ck_assert_ptr_nonnull(strstr(r.out, "output buffer of 'hold' grown 1 time(s) to 72000 bytes"));
        ck_assert_ptr_nonnull(strstr(r.out, "output buffer of 'pass' grown 1 time(s) to 72000 bytes"));
        row(r.out, "pass", pass);
        ck_assert_uint_eq(pass[0], 2); /* one block (everything hold emitted at its flush) and its own flush */
        ck_assert_uint_eq(pass[1], 3000);
    }
    remove_dir();
}
END_TEST

START_TEST(thousands_of_blocks_through_five_actors_end_without_deadlock)
{
    const stage chain[] = {{"source", "lifecycle_producer.so", 4096},
                          {"a", "lifecycle_filter.so", 4096},
                          {"b", "lifecycle_filter.so", 4096},
                          {"c", "lifecycle_filter.so", 4096},
                          {"writer", "adf_writer.so", 0}};
    const char *env[] = {"LIFECYCLE_FRAMES=24000", NULL};
    const unsigned rings[] = {1, 3};
    nw_result r;
    make_dir();
    write_chain(in_dir("long.xml"), chain, 5);
    writer_conf(in_dir("out.adf"));
    for (size_t i = 0; i < 2; i++) {
        unsigned long long c[3], writer[3];
        run_chain(&r, in_dir("long.xml"), rings[i], env);
        ck_assert_msg(r.status == 0, "ring %u: exit %d: %s", rings[i], r.status, r.err);
        ck_assert_ptr_nonnull(strstr(r.out, " s, 6000 producer blocks, ended at the end of the data\n"));
        row(r.out, "c", c);
        row(r.out, "writer", writer);
        ck_assert_uint_eq(c[0], 6001);
        ck_assert_uint_eq(writer[0], 6000);
        ck_assert_uint_eq(writer[1], 24000);
        expect_sequence(in_dir("out.adf"), 24000);
    }
    remove_dir();
}
END_TEST

/* ---- the test actors' call logs ---- */

static char log_text[2][65536];

/* Runs a test-actor topology sequentially (into log_text[0]) or pipelined
 * (into log_text[1]) with the actors logging every call. */
static void run_logged(nw_result *r, const char *topology, unsigned ring, const char *const *env)
{
    char log_path[256], env_log[300];
    const char *full_env[16];
    size_t e = 0;
    snprintf(log_path, sizeof log_path, "/tmp/narwhal-pipeline-%d.log", (int)getpid());
    unlink(log_path);
    snprintf(env_log, sizeof env_log, "LIFECYCLE_LOG=%s", log_path);
    full_env[e++] = env_log;
    for (size_t i = 0; env && env[i] && e < 15; i++)
        full_env[e++] = env[i];
    full_env[e] = NULL;
    const char *args[] = {"run", topology, "--actors", nw_build_path("/tests/actors"), ring ? "--pipeline" : NULL,
                          "--ring", NULL, NULL};
    char depth[16];
    snprintf(depth, sizeof depth, "%u", ring);
    args[6] = depth;
    ck_assert_int_eq(nw_run_timed(r, args, full_env, TIMEOUT, 0, 0), 0);
    ck_assert(!r->timed_out);
    ck_assert(tk_read_text(log_path, log_text[ring != 0], sizeof log_text[0]));
    unlink(log_path);
}

/* The lines of a log that start with "who ", in order. */
static void lines_of(const char *log, const char *who, char *out, size_t cap)
{
    size_t n = 0, len = strlen(who);
    out[0] = '\0';
    for (const char *line = log; *line;) {
        const char *end = strchr(line, '\n');
        size_t size = end ? (size_t)(end - line) + 1 : strlen(line);
        if (strncmp(line, who, len) == 0 && line[len] == ' ' && n + size < cap) {
            memcpy(out + n, line, size);
            n += size;
            out[n] = '\0';
        }
        line += size;
    }
}

/* Everything before the first process_block line, or after the last. */
static void edge(const char *log, int tail, char *out, size_t cap)
{
    const char *first = strstr(log, " process_block"), *last = first;
    for (const char *p = first; p; p = strstr(p + 1, " process_block"))
        last = p;
    ck_assert_ptr_nonnull(first);
    if (tail) {
        const char *after = strchr(last, '\n');
        snprintf(out, cap, "%s", after ? after + 1 : "");
    } else {
        while (first > log && first[-1] != '\n')
            first--;
        snprintf(out, cap, "%.*s", (int)(first - log), log);
    }
}

/* Each actor got the same calls in both logs, and the calls before the
 * first block and after the last (all on the main thread) came in the same
 * order. */
static void expect_same_calls(const char *const *who)
{
    static char a[65536], b[65536];
    for (size_t i = 0; who[i]; i++) {
        lines_of(log_text[0], who[i], a, sizeof a);
        lines_of(log_text[1], who[i], b, sizeof b);
        ck_assert_msg(a[0] != '\0', "no call of %s", who[i]);
        ck_assert_str_eq(b, a);
    }
    for (int tail = 0; tail < 2; tail++) {
        edge(log_text[0], tail, a, sizeof a);
        edge(log_text[1], tail, b, sizeof b);
        ck_assert_str_eq(b, a);
    }
}

static const char *const chain4_actors[] = {"P", "F", "F0", "F1", "C", NULL};

START_TEST(every_actor_gets_the_calls_of_a_sequential_run)
{
    const char *const envs[][3] = {{"LIFECYCLE_FRAMES=50", NULL},
                                   {"LIFECYCLE_FRAMES=50", "LIFECYCLE_HOLD=F0", NULL},
                                   {"LIFECYCLE_FRAMES=50", "LIFECYCLE_HOLD=F1", NULL}};
    nw_result r;
    for (size_t i = 0; i < sizeof envs / sizeof envs[0]; i++)
        for (unsigned ring = 1; ring <= 4; ring += 3) {
            run_logged(&r, CHAIN4, 0, envs[i]);
            ck_assert_int_eq(r.status, 0);
            run_logged(&r, CHAIN4, ring, envs[i]);
            ck_assert_int_eq(r.status, 0);
            expect_same_calls(chain4_actors);
        }
}
END_TEST

START_TEST(buffers_grow_per_slot_to_the_size_of_a_sequential_run)
{
    static const char *const who[] = {"P", "F", "F0", "C", NULL};
    const char *env[] = {"LIFECYCLE_FRAMES=30", NULL};
    nw_result r;
    run_logged(&r, GROW, 0, env);
    ck_assert_int_eq(r.status, 0);
    run_logged(&r, GROW, 3, env);
    ck_assert_int_eq(r.status, 0);
    expect_same_calls(who);
    /* Once grown, every slot of the three is handed over at the grown size. */
    const char *grown = strstr(log_text[1], "size=96");
    ck_assert_ptr_nonnull(grown);
    ck_assert_ptr_null(strstr(grown, "size=10\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "output buffer of 'source' grown 1 time(s) to 96 bytes (the topology gives"));
    ck_assert_ptr_nonnull(strstr(r.out, "output buffer of 'pass' grown 1 time(s) to 96 bytes (the topology gives"));
}
END_TEST

/* The largest lead of the producer over the consumer, in blocks: P block
 * lines logged before each C block line, minus the C lines so far. */
static int producer_lead(const char *log)
{
    int p = 0, c = 0, lead = 0;
    for (const char *line = log; *line;) {
        if (strncmp(line, "P process_block", 15) == 0)
            p++;
        if (strncmp(line, "C process_block", 15) == 0) {
            c++;
            if (p - c > lead)
                lead = p - c;
        }
        const char *end = strchr(line, '\n');
        if (!end)
            break;
        line = end + 1;
    }
    return lead;
}

START_TEST(a_slow_consumer_holds_the_producer_back)
{
    const char *env[] = {"LIFECYCLE_FRAMES=240", "LIFECYCLE_SLOW=C:3000", NULL};
    nw_result r;
    unsigned long long sink[3];
    run_logged(&r, CHAIN4, 2, env);
    ck_assert_int_eq(r.status, 0);
    row(r.out, "sink", sink);
    ck_assert_uint_eq(sink[1], 240);
    /* Three rings of two, a block in each filter's hands and one in the
     * producer's; without back-pressure the producer would lead by 59. */
    int lead = producer_lead(log_text[1]);
    ck_assert_msg(lead <= 3 * 2 + 3, "the producer ran %d blocks ahead of the consumer", lead);
    ck_assert_int_ge(lead, 3);
    /* 60 blocks of 3 ms in the consumer: the producer waited most of it. */
    double wait_out = 0;
    const char *source = strstr(r.out, "\nsource ");
    ck_assert_ptr_nonnull(source);
    ck_assert_int_eq(sscanf(source, "%*s %*s %*u %*u %*u %*u %*u %*f %*f%% - %lf", &wait_out), 1);
    ck_assert_msg(wait_out > 0.09, "the producer waited %.3f s", wait_out);
    ck_assert_ptr_nonnull(strstr(r.out, "\nbusiest actor: 'sink', "));
}
END_TEST

/* ---- errors and signals ---- */

/* After an error the run aborts: no process_stop, every actor unloaded. */
#define UNLOAD_ALL "P process_unload\nF0 process_unload\nF1 process_unload\nC process_unload\n"


START_TEST(an_actor_error_stops_every_thread_and_everyone_is_unloaded_without_stop)
{
    const char *env[] = {"LIFECYCLE_FAIL=F0:process_block:2:8", NULL};
    nw_result r;
    run_logged(&r, CHAIN4, 4, env);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "narwhal: actor 'first' (lifecycle_filter.so): process_block returned error code 8: "
                            "input inconsistent with configuration\n");
    tk_expect_tail(log_text[1], UNLOAD_ALL);
    ck_assert_uint_eq(tk_count(log_text[1], "process_stop"), 0);
    ck_assert_uint_eq(tk_count(log_text[1], "in=0 "), 0); /* no flush after an error */
    ck_assert_uint_eq(tk_count(log_text[1], "F0 process_block"), 2);
    /* Block 0 may or may not have reached the consumer: threads downstream
     * of a failure drop what their rings hold rather than finish it. */
    ck_assert_uint_le(tk_count(log_text[1], "C process_block"), 1);
    ck_assert_ptr_nonnull(strstr(r.out, "stopped by an error\n"));
}
END_TEST

START_TEST(an_error_downstream_of_an_endless_producer_ends_the_run_promptly)
{
    const char *env[] = {"LIFECYCLE_FRAMES=4000000000", "LIFECYCLE_FAIL=C:process_block:3:5", NULL};
    nw_result r;
    run_logged(&r, CHAIN4, 2, env);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "narwhal: actor 'sink' (lifecycle_consumer.so): process_block returned error code 5: "
                            "input/output error\n");
    tk_expect_tail(log_text[1], UNLOAD_ALL);
    ck_assert_uint_eq(tk_count(log_text[1], "process_stop"), 0);
    /* The consumer's 3 blocks, at most 2 per ring and one in each thread's hands. */
    size_t produced = tk_count(log_text[1], "P process_block");
    ck_assert_msg(produced <= 3 + 3 * 2 + 3, "the producer ran %zu blocks", produced);
}
END_TEST

START_TEST(errors_in_a_flush_and_in_the_producer_stop_the_pipelined_run)
{
    const char *flush_env[] = {"LIFECYCLE_FAIL=F1:process_block:4:5", NULL};
    const char *producer_env[] = {"LIFECYCLE_FAIL=P:process_block:2:9", NULL};
    nw_result r;
    run_logged(&r, CHAIN4, 3, flush_env);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "narwhal: actor 'second' (lifecycle_filter.so): process_block returned error code 5: "
                            "input/output error\n");
    ck_assert_ptr_nonnull(strstr(log_text[1], "F1 process_block in=0 seq= out=4096\n"));
    ck_assert_uint_le(tk_count(log_text[1], "C process_block"), 3);
    tk_expect_tail(log_text[1], UNLOAD_ALL);
    ck_assert_uint_eq(tk_count(log_text[1], "process_stop"), 0);

    run_logged(&r, CHAIN4, 3, producer_env);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "narwhal: actor 'source' (lifecycle_producer.so): process_block returned error code 9: "
                            "internal error\n");
    ck_assert_uint_le(tk_count(log_text[1], "C process_block"), 1);
    ck_assert_uint_eq(tk_count(log_text[1], "in=0 "), 0);
    tk_expect_tail(log_text[1], UNLOAD_ALL);
    ck_assert_uint_eq(tk_count(log_text[1], "process_stop"), 0);
}
END_TEST

START_TEST(a_signal_raised_in_the_producer_ends_the_run_as_sequentially)
{
    const char *const envs[][3] = {{"LIFECYCLE_FRAMES=1000", "LIFECYCLE_SIGNAL=2", NULL},
                                   {"LIFECYCLE_FRAMES=1000", "LIFECYCLE_SIGNAL=3:TERM", NULL}};
    const char *const ends[] = {" s, 2 producer blocks, stopped by SIGINT\n",
                                " s, 3 producer blocks, stopped by SIGTERM\n"};
    nw_result r;
    for (size_t i = 0; i < 2; i++) {
        run_logged(&r, CHAIN4, 0, envs[i]);
        ck_assert_int_eq(r.status, 0);
        run_logged(&r, CHAIN4, 4, envs[i]);
        ck_assert_int_eq(r.status, 0);
        ck_assert_ptr_nonnull(strstr(r.out, ends[i]));
        expect_same_calls(chain4_actors);
    }
}
END_TEST

/* Ctrl-C from outside while the producer never ends: the blocks in hand are
 * finished and flushed, the writer's file is complete and holds exactly the
 * frames the producer emitted. */
static void interrupt_endless_chain(int sig, const char *end)
{
    const stage chain[] = {{"source", "lifecycle_producer.so", 4096},
                          {"a", "lifecycle_filter.so", 4096},
                          {"b", "lifecycle_filter.so", 4096},
                          {"writer", "adf_writer.so", 0}};
    const char *env[] = {"LIFECYCLE_FRAMES=4000000000", NULL};
    char topology[512], conf[512];
    nw_result r;
    unsigned long long source[3], writer[3];
    make_dir();
    snprintf(topology, sizeof topology, "%s", in_dir("endless.xml"));
    snprintf(conf, sizeof conf, "%s", in_dir("conf"));
    write_chain(topology, chain, 4);
    writer_conf(in_dir("out.adf"));
    const char *args[] = {"run",    topology, "--actors",   nw_build_path("/actors"), "--actors",
                          nw_build_path("/tests/actors"), "--conf", conf, "--pipeline", "--ring", "2", NULL};
    ck_assert_int_eq(nw_run_timed(&r, args, env, TIMEOUT, sig, 0.3), 0);
    ck_assert(!r.timed_out);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, end));
    row(r.out, "source", source);
    row(r.out, "writer", writer);
    ck_assert_uint_gt(source[2], 0);
    ck_assert_uint_eq(writer[1], source[2]);
    expect_sequence(in_dir("out.adf"), source[2]);
    remove_dir();
}

START_TEST(sigint_from_outside_loses_no_frame)
{
    interrupt_endless_chain(SIGINT, "stopped by SIGINT\n");
}
END_TEST

START_TEST(sigterm_from_outside_loses_no_frame)
{
    interrupt_endless_chain(SIGTERM, "stopped by SIGTERM\n");
}
END_TEST

START_TEST(blocks_option_counts_producer_blocks_when_pipelined)
{
    const char *env[] = {"LIFECYCLE_FRAMES=1000", NULL};
    const char *args[] = {"run", CHAIN4, "--actors", nw_build_path("/tests/actors"), "--pipeline", "--blocks", "7",
                          NULL};
    nw_result r;
    unsigned long long sink[3];
    ck_assert_int_eq(nw_run_timed(&r, args, env, TIMEOUT, 0, 0), 0);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, " s, 7 producer blocks, ended after the requested number of blocks\n"));
    row(r.out, "sink", sink);
    ck_assert_uint_eq(sink[0], 7);
    ck_assert_uint_eq(sink[1], 28);
}
END_TEST

START_TEST(pipeline_options_are_checked)
{
    static const char *const bad[][8] = {
        {"run", CHAIN4, "--ring", "2", NULL},
        {"run", CHAIN4, "--pipeline", "--ring", "0", NULL},
        {"run", CHAIN4, "--pipeline", "--ring", "1025", NULL},
        {"run", CHAIN4, "--pipeline", "--ring", NULL},
        {"validate", CHAIN4, "--pipeline", NULL},
    };
    static const char *const message[] = {
        "narwhal: --ring sets the depth of --pipeline's rings; add --pipeline (see narwhal --help)\n",
        "narwhal: --ring needs a positive whole number (see narwhal --help)\n",
        "narwhal: --ring 1025 is deeper than the limit of 1024 (see narwhal --help)\n",
        "narwhal: --ring needs a value (see narwhal --help)\n",
        "narwhal: 'validate' takes no --pipeline (see narwhal --help)\n",
    };
    nw_result r;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(nw_run(&r, bad[i], NULL), 0);
        ck_assert_int_eq(r.status, 2);
        ck_assert_str_eq(r.err, message[i]);
    }
    const char *good[] = {"run", CHAIN4, "--actors", nw_build_path("/tests/actors"), "--pipeline", "--ring=1024", NULL};
    ck_assert_int_eq(nw_run(&r, good, NULL), 0);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "pipelined (a thread per actor, rings of 1024 buffers): 10 producer frames, "));
}
END_TEST

/* ---- the library: emu_run and the ring ---- */

static void run_grow(unsigned ring, emu_run_result *res)
{
    char err[1024];
    emu_topology *t = NULL;
    emu_chain *c = NULL;
    const char *dirs[] = {nw_build_path("/tests/actors")};
    unsetenv("LIFECYCLE_LOG");
    setenv("LIFECYCLE_FRAMES", "40", 1);
    ck_assert_int_eq(emu_topology_read(GROW, NULL, &t, err, sizeof err), EMU_OK);
    ck_assert_int_eq(emu_chain_load(t, dirs, 1, &c, err, sizeof err), EMU_OK);
    ck_assert_int_eq(emu_run_result_init(res, t->n_actors), EMU_OK);
    emu_run_options o = {.ring_depth = ring};
    ck_assert_int_eq(emu_run(c, &o, res, err, sizeof err), EMU_OK);
    emu_chain_free(c);
    emu_topology_free(t);
}

START_TEST(emu_run_pipelined_counts_what_sequential_counts)
{
    emu_run_result seq, pipe;
    run_grow(0, &seq);
    run_grow(1, &pipe);
    ck_assert_uint_eq(pipe.ring_depth, 1);
    ck_assert_int_eq(pipe.end, EMU_END_DATA);
    ck_assert_uint_eq(pipe.blocks, seq.blocks);
    ck_assert_uint_eq(pipe.blocks, 10);
    for (size_t k = 0; k < 3; k++) {
        const emu_actor_stats *a = &seq.actors[k], *b = &pipe.actors[k];
        ck_assert_uint_eq(b->blocks, a->blocks);
        ck_assert_uint_eq(b->frames_in, a->frames_in);
        ck_assert_uint_eq(b->frames_out, a->frames_out);
        ck_assert_uint_eq(b->bytes_in, a->bytes_in);
        ck_assert_uint_eq(b->bytes_out, a->bytes_out);
        ck_assert_uint_eq(b->grown, a->grown);
        ck_assert_uint_eq(b->buffer_size, a->buffer_size);
        ck_assert(a->wait_input == 0 && a->wait_output == 0);
        ck_assert(b->wait_input >= 0 && b->wait_output >= 0);
        ck_assert(b->block_seconds <= b->seconds);
    }
    ck_assert(pipe.actors[0].wait_input == 0 && pipe.actors[2].wait_output == 0);
    ck_assert(pipe.block_seconds > 0 && pipe.block_seconds <= pipe.wall_seconds);
    emu_run_result_free(&seq);
    emu_run_result_free(&pipe);
}
END_TEST

#define RING_ITEMS 100000u

static void *read_ring(void *arg)
{
    emu_ring *r = arg;
    double waited = 0;
    for (unsigned long long i = 0;; i++) {
        emu_slot *s = emu_ring_peek(r, &waited);
        if (!s || s->mark == EMU_MARK_END)
            return (void *)(uintptr_t)(s && i == RING_ITEMS);
        if (s->frames != i || s->buf.data[0] != (uint8_t)i)
            return NULL;
        emu_ring_release(r);
    }
}

START_TEST(a_ring_keeps_order_between_two_threads)
{
    for (unsigned depth = 1; depth <= 3; depth += 2) {
        emu_ring r;
        pthread_t reader;
        void *ok = NULL;
        double waited = 0;
        int same_slot = 1;
        ck_assert_int_eq(emu_ring_init(&r, depth), EMU_OK);
        for (unsigned i = 0; i < depth; i++) /* the emulator's own allocation: emu_ring_destroy releases it */
            ck_assert_int_eq(emu_buffer_fit(&r.slot[i].buf, 1), 0);
        ck_assert_int_eq(pthread_create(&reader, NULL, read_ring, &r), 0);
        for (unsigned long long i = 0; i <= RING_ITEMS; i++) {
            emu_slot *s = emu_ring_acquire(&r, &waited);
            same_slot &= emu_ring_acquire(&r, &waited) == s; /* the same slot until published */
            s->frames = i;
            s->mark = i == RING_ITEMS ? EMU_MARK_END : EMU_MARK_NONE;
            s->buf.data[0] = (uint8_t)i;
            emu_ring_publish(&r);
        }
        ck_assert_int_eq(pthread_join(reader, &ok), 0);
        ck_assert(same_slot);
        ck_assert_msg(ok != NULL, "depth %u: the reader saw the items out of order or not all of them", depth);
        ck_assert(waited >= 0);
        emu_ring_destroy(&r);
    }
}
END_TEST

/* A thread that peeks (reader) or acquires (writer) once, and what it got. */
typedef struct ring_waiter {
    emu_ring *r;
    int writer;
    emu_slot *got;
    double waited;
} ring_waiter;

static void *wait_on_ring(void *arg)
{
    ring_waiter *w = arg;
    w->got = w->writer ? emu_ring_acquire(w->r, &w->waited) : emu_ring_peek(w->r, &w->waited);
    return NULL;
}

/* True once exactly n threads are blocked on r (given 5 s). */
static int ring_has_waiters(emu_ring *r, unsigned n)
{
    for (int i = 0; i < 5000; i++) {
        if (emu_ring_waiting(r) == n)
            return 1;
        usleep(1000);
    }
    return 0;
}

/* A reader on an empty ring, then a writer on a full one: each is seen
 * blocked on the ring before the abort, which must wake it with NULL. */
START_TEST(aborting_a_ring_wakes_its_waiting_threads)
{
    for (int writer = 0; writer <= 1; writer++) {
        emu_ring r;
        pthread_t thread;
        double waited = 0;
        ring_waiter w = {.r = &r, .writer = writer, .got = (emu_slot *)&r};
        ck_assert_int_eq(emu_ring_init(&r, 1), EMU_OK);
        if (writer) {
            ck_assert_ptr_nonnull(emu_ring_acquire(&r, &waited));
            emu_ring_publish(&r);
        }
        ck_assert_uint_eq(emu_ring_waiting(&r), 0);
        ck_assert_int_eq(pthread_create(&thread, NULL, wait_on_ring, &w), 0);
        ck_assert_msg(ring_has_waiters(&r, 1), "the %s never waited on the ring", writer ? "writer" : "reader");
        emu_ring_abort(&r);
        ck_assert_int_eq(pthread_join(thread, NULL), 0);
        ck_assert_ptr_null(w.got);
        ck_assert(w.waited > 0);
        ck_assert_uint_eq(emu_ring_waiting(&r), 0);
        ck_assert_ptr_null(emu_ring_acquire(&r, &waited));
        ck_assert_ptr_null(emu_ring_peek(&r, &waited));
        emu_ring_destroy(&r);
    }
}
END_TEST

static Suite *pipeline_suite(void)
{
    Suite *s = suite_create("pipeline");
    TCase *tc = tcase_create("same output");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, replay_writes_the_same_bytes_sequential_and_pipelined);
    tcase_add_test(tc, histo_chain_writes_the_same_frames_and_spectra_in_both_modes);
    tcase_add_test(tc, simulated_events_of_one_seed_are_the_same_bytes_in_both_modes);
    tcase_add_test(tc, held_frames_and_grown_buffers_give_the_same_file_in_both_modes);
    tcase_add_test(tc, thousands_of_blocks_through_five_actors_end_without_deadlock);
    tcase_add_test(tc, every_actor_gets_the_calls_of_a_sequential_run);
    tcase_add_test(tc, buffers_grow_per_slot_to_the_size_of_a_sequential_run);
    tcase_add_test(tc, a_slow_consumer_holds_the_producer_back);
    suite_add_tcase(s, tc);
    tc = tcase_create("stops");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, an_actor_error_stops_every_thread_and_everyone_is_unloaded_without_stop);
    tcase_add_test(tc, an_error_downstream_of_an_endless_producer_ends_the_run_promptly);
    tcase_add_test(tc, errors_in_a_flush_and_in_the_producer_stop_the_pipelined_run);
    tcase_add_test(tc, a_signal_raised_in_the_producer_ends_the_run_as_sequentially);
    tcase_add_test(tc, sigint_from_outside_loses_no_frame);
    tcase_add_test(tc, sigterm_from_outside_loses_no_frame);
    tcase_add_test(tc, blocks_option_counts_producer_blocks_when_pipelined);
    tcase_add_test(tc, pipeline_options_are_checked);
    suite_add_tcase(s, tc);
    tc = tcase_create("library");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, emu_run_pipelined_counts_what_sequential_counts);
    tcase_add_test(tc, a_ring_keeps_order_between_two_threads);
    tcase_add_test(tc, aborting_a_ring_wakes_its_waiting_threads);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(pipeline_suite()); }

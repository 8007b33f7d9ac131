/* check_topology.c: Check suite for topology reading and checking, `narwhal validate`, `inspect` and the command line. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "emu.h"
#include "narwhal_exec.h"
#include "topology.h"

#define GOOD "tests/topologies/good/"
#define BAD "tests/topologies/bad/"

/* ---- good topologies: the chain order comes from the data_source links ---- */

typedef struct good_case {
    const char *file;
    const char *chain[6];
    unsigned sizes[6]; /* output buffer sizes, 0 for the consumer */
    size_t sharer;     /* the actor that shares the library of the one before it; 0: none */
} good_case;

static const good_case goods[] = {
    {"chain4.xml", {"source", "first", "second", "sink"}, {4096, 4096, 4096, 0}, 2},
    {"direct.xml", {"source", "sink"}, {1000, 0}, 0},
    {"grow.xml", {"source", "pass", "sink"}, {10, 30, 0}, 0},
    {"listing1.xml",
     {"crystal_producer", "preprocessing_filter", "psa_filter", "psa_writer"},
     {10000000, 10000000, 1000000, 0},
     2},
};
#define N_GOODS (int)(sizeof goods / sizeof goods[0])

static size_t chain_length(const good_case *g)
{
    size_t n = 0;
    while (n < 6 && g->chain[n])
        n++;
    return n;
}

START_TEST(good_topologies_give_the_chain_in_data_flow_order)
{
    const good_case *g = &goods[_i];
    char path[256], err[1024] = "";
    emu_topology *t = NULL;
    snprintf(path, sizeof path, GOOD "%s", g->file);
    ck_assert_int_eq(emu_topology_read(path, NULL, &t, err, sizeof err), EMU_OK);
    ck_assert_ptr_nonnull(t);
    size_t n = chain_length(g);
    ck_assert_uint_eq(t->n_actors, n);
    for (size_t k = 0; k < n; k++) {
        ck_assert_str_eq(t->actors[k].name, g->chain[k]);
        ck_assert_int_eq(t->actors[k].role, k == 0 ? EMU_PRODUCER : k + 1 == n ? EMU_CONSUMER : EMU_FILTER);
        ck_assert_uint_eq(t->actors[k].output_size, g->sizes[k]);
        if (k > 0) {
            ck_assert_uint_eq(t->actors[k].n_sources, 1);
            ck_assert_str_eq(t->actors[k].sources[0].actor, t->actors[k - 1].name);
            ck_assert_str_eq(t->actors[k].sources[0].buffer, t->actors[k - 1].output);
            ck_assert_uint_eq(t->actors[k].sources[0].from, k - 1);
            ck_assert_int_eq(t->actors[k].sources[0].share, EMU_SHARE_NONE);
        }
    }
    ck_assert_str_eq(t->dir, "tests/topologies/good");
    emu_topology_free(t);
}
END_TEST

START_TEST(validate_accepts_good_topologies_and_configures_each_library_once)
{
    const good_case *g = &goods[_i];
    char path[256], log[] = "/tmp/narwhal-validate-XXXXXX", env_log[300], expected[8192], text[4096] = "";
    int fd = mkstemp(log);
    ck_assert_int_ge(fd, 0);
    close(fd);
    snprintf(path, sizeof path, GOOD "%s", g->file);
    snprintf(env_log, sizeof env_log, "LIFECYCLE_LOG=%s", log);
    const char *args[] = {"validate", path, "--actors", nw_build_path("/tests/actors"), NULL};
    const char *env[] = {env_log, NULL};
    nw_result r;
    ck_assert_int_eq(nw_run(&r, args, env), 0);
    ck_assert_msg(r.status == 0, "%s: exit %d, stderr: %s", path, r.status, r.err);
    /* Each actor's directory: conf/ beside them, the only one of the layout
     * that exists, given as it is; its files listed for the first actor. */
    char readme[4096];
    size_t n = chain_length(g), len = 0;
    ck_assert_ptr_nonnull(realpath(GOOD "conf/README", readme));
    for (size_t k = 0; k < n; k++)
        if (k == g->sharer && k > 0)
            len += (size_t)snprintf(expected + len, sizeof expected - len,
                                    "narwhal: %s: shares the library and the configuration of '%s'\n", g->chain[k],
                                    g->chain[k - 1]);
        else if (k == 0)
            len += (size_t)snprintf(expected + len, sizeof expected - len,
                                    "narwhal: %s: process_config gets " GOOD "conf\nnarwhal: %s:   README <- %s\n",
                                    g->chain[k], g->chain[k], readme);
        else
            len += (size_t)snprintf(expected + len, sizeof expected - len,
                                    "narwhal: %s: process_config gets " GOOD "conf: the files '%s' sees\n", g->chain[k],
                                    g->chain[0]);
    len += (size_t)snprintf(expected + len, sizeof expected - len, "%s: ok (%zu actors: ", path, n);
    for (size_t k = 0; k < n; k++)
        len += (size_t)snprintf(expected + len, sizeof expected - len, "%s%s", k ? " -> " : "", g->chain[k]);
    snprintf(expected + len, sizeof expected - len, ")\n");
    ck_assert_str_eq(r.out, expected);
    ck_assert_str_eq(r.err, "");
    FILE *f = fopen(log, "r");
    ck_assert_ptr_nonnull(f);
    size_t got = fread(text, 1, sizeof text - 1, f);
    text[got] = '\0';
    fclose(f);
    unlink(log);
    /* One process_config per library (both intermediaries share one), nothing registered. */
    snprintf(expected, sizeof expected, "P process_config tests/topologies/good/conf\n%s"
             "C process_config tests/topologies/good/conf\n",
             n > 2 ? "F process_config tests/topologies/good/conf\n" : "");
    ck_assert_str_eq(text, expected);
}
END_TEST

/* ---- bad topologies: one line FILE:LINE: message, exit 2, no actor called ---- */

typedef struct bad_case {
    const char *file;
    int line;
    const char *message; /* the whole text after "FILE:LINE: " */
} bad_case;

static const bad_case bads[] = {
    {"malformed.xml", 9, "malformed XML: Opening and ending tag mismatch: producer line 4 and produce"},
    {"empty.xml", 1, "malformed XML: Document is empty"},
    {"encoding.xml", 3, "malformed XML: input conversion failed due to input error, bytes 0xFF 0xFF 0x1B 0x28"},
    {"wrong_root.xml", 3, "the root element is <topology>; a NARVAL topology starts with <configuration>"},
    {"entity.xml", 12, "<name> uses the entity &secret;: topologies are read without entity expansion"},
    {"no_name.xml", 10, "<intermediary> without <name>"},
    {"empty_name.xml", 11, "<name> is empty"},
    {"duplicate_name.xml", 17, "two actors named 'psa' (the first on line 10)"},
    {"unknown_source_actor.xml", 13, "<data_source> of 'sink' names no actor 'nobody'"},
    {"unknown_source_buffer.xml", 13,
     "<data_source> of 'sink' names buffer 'other', but 'source' has no such buffer (its output is 'data')"},
    {"no_source_buffer.xml", 13, "<data_source> of 'sink' has no source_buffer attribute naming the buffer it reads"},
    {"cycle.xml", 13, "'left' reads 'right', which depends on the output of 'left': the actors form a cycle"},
    {"self_loop.xml", 13, "'loop' reads its own output: the actors form a cycle"},
    {"producer_input.xml", 7, "producer 'source' has an input (<data_source>): a producer only writes"},
    {"consumer_output.xml", 14, "consumer 'sink' has an output buffer: a consumer only reads"},
    {"filter_no_input.xml", 10, "intermediary 'psa' has no input: it needs a <data_source source_buffer=\"...\">"},
    {"two_sources.xml", 10, "consumer 'sink' declares input_buffers=\"1\" (or none) but has 2 <data_source> elements"},
    {"two_outputs.xml", 10,
     "intermediary 'psa' declares output_buffers=\"2\": the emulator supports one output buffer per actor"},
    {"size_zero.xml", 8, "buffer size '0' is not a positive whole number of bytes"},
    {"size_text.xml", 8, "buffer size '4 kB' is not a positive whole number of bytes"},
    {"size_negative.xml", 8, "buffer size '-4096' is not a positive whole number of bytes"},
    {"size_huge.xml", 8, "buffer size 2_000_000_000 exceeds the emulator's limit of 1073741824 bytes (1 GiB)"},
    {"size_wrong_buffer.xml", 8, "<size> names buffer 'date' but the output of 'source' is 'data'"},
    {"no_size.xml", 4, "producer 'source' gives no <size output_buffer=\"data\"> for its output buffer"},
    /* Found when the libraries are loaded: a main configuration file may name it. */
    {"no_library.xml", 10,
     "consumer 'sink' has no <library>: name its shared object there, or in a main configuration file (set library "
     "LIB INSTANCE sink) given with --main"},
    {"no_producer.xml", 3, "no <producer>: a topology needs one"},
    {"no_consumer.xml", 3, "no <consumer>: a topology needs one"},
    /* Graphs (issue 13): two producers and a buffer read twice are fine; what is not: */
    {"two_producers.xml", 10, "producer 'source2': nothing reads its output buffer 'data'"},
    {"not_connected.xml", 10, "intermediary 'side': nothing reads its output buffer 'side_out'"},
    {"fan_out.xml", 13, "'left' reads 'right', which depends on the output of 'left': the actors form a cycle"},
    {"graph_cycle.xml", 13, "'back' reads 'mix', which depends on the output of 'back': the actors form a cycle"},
    {"input_count.xml", 16, "intermediary 'mix' declares input_buffers=\"3\" but has 2 <data_source> elements"},
    {"input_count_text.xml", 16,
     "intermediary 'mix' declares input_buffers=\"two\": not a whole number from 1 to 1024"},
    {"reads_twice.xml", 14, "'sink' reads buffer 'data' of 'source' twice (first on line 13)"},
    {"share_unknown.xml", 12,
     "<data_source> of 'psa1' has share=\"random\": it is \"round-robin\" or \"first-free\" (instances sharing the "
     "blocks), or absent (every block)"},
    {"share_mixed.xml", 20,
     "'psa2' shares buffer 'data' of 'source' first-free, but 'psa1' (line 13) shares it round-robin: the instances "
     "sharing a buffer share it one way"},
    {"graph_unread.xml", 15, "intermediary 'monitor': nothing reads its output buffer 'seen'"},
    {"graph_unknown_source.xml", 32, "<data_source> of 'builder' names no actor 'psa3'"},
    {"stand_alone.xml", 15,
     "<stand_alone_actor> is not supported: the emulator runs producer-to-consumer graphs"},
    /* Found only once the libraries are looked for: the actor directory is in the message. */
    {"library_not_found.xml", 12, "consumer 'sink': library 'no_such_actor.so' not found in @ACTORS@"},
    {"library_not_elf.xml", 12, "cannot load library tests/topologies/bad/not_a_library.so: invalid ELF header"},
    {"missing_symbol.xml", 12,
     "library @ACTORS@/bad_no_block.so of 'sink' lacks process_block, which every actor must export"},
    {"two_roles.xml", 12,
     "library 'lifecycle_producer.so' serves producer 'source' and consumer 'sink': its process_block has one "
     "role's signature"},
};
#define N_BADS (int)(sizeof bads / sizeof bads[0])

/* The expected message with @ACTORS@ replaced by the test actors' directory. */
static void expected_message(const bad_case *b, char *out, size_t len)
{
    const char *at = strstr(b->message, "@ACTORS@");
    if (!at) {
        snprintf(out, len, BAD "%s:%d: %s\n", b->file, b->line, b->message);
        return;
    }
    snprintf(out, len, BAD "%s:%d: %.*s%s%s\n", b->file, b->line, (int)(at - b->message), b->message,
             nw_build_path("/tests/actors"), at + strlen("@ACTORS@"));
}

START_TEST(validate_refuses_bad_topologies_with_one_line_and_status_2)
{
    const bad_case *b = &bads[_i];
    char path[256], log[256], env_log[300], expected[1024];
    struct stat st;
    snprintf(path, sizeof path, BAD "%s", b->file);
    snprintf(log, sizeof log, "/tmp/narwhal-bad-%d.log", (int)getpid());
    snprintf(env_log, sizeof env_log, "LIFECYCLE_LOG=%s", log);
    unlink(log);
    expected_message(b, expected, sizeof expected);
    const char *args[] = {"validate", path, "--actors", nw_build_path("/tests/actors"), NULL};
    const char *env[] = {env_log, NULL};
    nw_result r;
    ck_assert_int_eq(nw_run(&r, args, env), 0);
    ck_assert_msg(r.status == 2, "%s: exit %d", path, r.status);
    ck_assert_str_eq(r.err, expected);
    ck_assert_str_eq(r.out, "");
    /* Refused before any process_* call. */
    ck_assert_msg(stat(log, &st) != 0, "%s: an actor was called", path);

    const char *run_args[] = {"run", path, "--actors", nw_build_path("/tests/actors"), NULL};
    ck_assert_int_eq(nw_run(&r, run_args, env), 0);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, expected);
    ck_assert_msg(stat(log, &st) != 0, "%s: run called an actor", path);
}
END_TEST

START_TEST(every_bad_topology_file_is_tested)
{
    DIR *d = opendir(BAD);
    struct dirent *e;
    int files = 0;
    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 4, ".xml") != 0)
            continue;
        files++;
        int listed = 0;
        for (int i = 0; i < N_BADS; i++)
            listed |= strcmp(bads[i].file, e->d_name) == 0;
        ck_assert_msg(listed, "%s has no expected message in check_topology.c", e->d_name);
    }
    closedir(d);
    ck_assert_int_eq(files, N_BADS);
    ck_assert_int_ge(files, 15);
}
END_TEST

/* ---- the parser on text in memory ---- */

static int parse(const char *xml, emu_topology **t, char *err, size_t errlen)
{
    return emu_topology_parse("mem.xml", xml, strlen(xml), NULL, t, err, errlen);
}

/* A producer -> consumer topology whose producer buffer size is `size`. */
static int parse_size(const char *size, unsigned *out, char *err, size_t errlen)
{
    char xml[1024];
    emu_topology *t = NULL;
    snprintf(xml, sizeof xml,
             "<configuration>\n"
             "<producer><name>p</name><library>p.so</library><output_buffer_name>b</output_buffer_name>\n"
             "<size output_buffer='b'>%s</size></producer>\n"
             "<consumer><name>c</name><library>c.so</library><data_source source_buffer='b'>p</data_source>"
             "</consumer>\n"
             "</configuration>\n",
             size);
    int rc = parse(xml, &t, err, errlen);
    if (rc == EMU_OK)
        *out = t->actors[0].output_size;
    emu_topology_free(t);
    return rc;
}

START_TEST(sizes_are_whole_numbers_with_ada_underscores_up_to_1_gib)
{
    char err[512];
    unsigned size = 0;
    ck_assert_int_eq(parse_size("1_000_000", &size, err, sizeof err), EMU_OK);
    ck_assert_uint_eq(size, 1000000);
    ck_assert_int_eq(parse_size("  42\n", &size, err, sizeof err), EMU_OK);
    ck_assert_uint_eq(size, 42);
    ck_assert_int_eq(parse_size("1073741824", &size, err, sizeof err), EMU_OK);
    ck_assert_uint_eq(size, 1073741824u);
    ck_assert_int_eq(parse_size("1073741825", &size, err, sizeof err), EMU_E_TOPOLOGY);
    ck_assert_str_eq(err, "mem.xml:3: buffer size 1073741825 exceeds the emulator's limit of 1073741824 bytes (1 GiB)");
    ck_assert_int_eq(parse_size("99999999999999999999999", &size, err, sizeof err), EMU_E_TOPOLOGY);
    ck_assert_ptr_nonnull(strstr(err, "exceeds the emulator's limit"));
    static const char *const refused[] = {"1__000", "_1", "1_", "0x10", "1e6", "+5", "4096 4096", "0_000", ""};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        ck_assert_msg(parse_size(refused[i], &size, err, sizeof err) == EMU_E_TOPOLOGY, "'%s' accepted", refused[i]);
        ck_assert_msg(strstr(err, "mem.xml:3: ") == err, "'%s': %s", refused[i], err);
    }
}
END_TEST

/* A producer, n - 2 intermediaries and a consumer, one per line after the first. */
static char *long_chain(int n)
{
    size_t cap = (size_t)n * 256 + 64, len = 0;
    char *xml = malloc(cap);
    ck_assert_ptr_nonnull(xml);
    len += (size_t)snprintf(xml + len, cap - len, "<configuration>\n<producer><name>a0</name><library>p.so</library>"
                            "<output_buffer_name>b</output_buffer_name><size output_buffer='b'>64</size></producer>\n");
    for (int i = 1; i + 1 < n; i++)
        len += (size_t)snprintf(xml + len, cap - len, "<intermediary><name>a%d</name><library>f.so</library>"
                                "<data_source source_buffer='b'>a%d</data_source><output_buffer_name>b"
                                "</output_buffer_name><size output_buffer='b'>64</size></intermediary>\n", i, i - 1);
    snprintf(xml + len, cap - len, "<consumer><name>z</name><library>c.so</library><data_source source_buffer='b'>"
             "a%d</data_source></consumer>\n</configuration>\n", n - 2);
    return xml;
}

START_TEST(a_chain_may_hold_up_to_1024_actors)
{
    char err[512];
    emu_topology *t = NULL;
    char *xml = long_chain(1024);
    ck_assert_int_eq(parse(xml, &t, err, sizeof err), EMU_OK);
    ck_assert_uint_eq(t->n_actors, 1024);
    ck_assert_str_eq(t->actors[1022].name, "a1022");
    ck_assert_str_eq(t->actors[1023].name, "z");
    emu_topology_free(t);
    free(xml);
    xml = long_chain(1025);
    ck_assert_int_eq(parse(xml, &t, err, sizeof err), EMU_E_TOPOLOGY);
    ck_assert_str_eq(err, "mem.xml:1026: more than 1024 actors: the emulator's limit for one topology");
    free(xml);
}
END_TEST

START_TEST(unknown_elements_are_ignored_with_a_note_each)
{
    static const char xml[] = "<configuration>\n"
                              "  <watcher>on</watcher>\n"
                              "  <producer><name>p</name><library>p.so</library>\n"
                              "    <binary_code>generic_producer</binary_code>\n"
                              "    <output_buffer_name>b</output_buffer_name><size output_buffer='b'>64</size>\n"
                              "  </producer>\n"
                              "  <consumer><name>c</name><library>c.so</library>\n"
                              "    <data_source source_buffer='b' source_port='fifo'>p</data_source><debug>info</debug>\n"
                              "  </consumer>\n"
                              "</configuration>\n";
    char *notes = NULL, err[512];
    size_t len = 0;
    FILE *mem = open_memstream(&notes, &len);
    emu_topology *t = NULL;
    ck_assert_int_eq(emu_topology_parse("mem.xml", xml, strlen(xml), mem, &t, err, sizeof err), EMU_OK);
    fclose(mem);
    ck_assert_str_eq(notes, "mem.xml:2: note: <watcher> in <configuration> ignored by the emulator\n"
                            "mem.xml:4: note: <binary_code> in 'p' ignored by the emulator\n"
                            "mem.xml:8: note: <debug> in 'c' ignored by the emulator\n");
    ck_assert_uint_eq(t->n_actors, 2);
    free(notes);
    emu_topology_free(t);
}
END_TEST

/* NARVAL's own topologies have no <library>: its main configuration file names the code. */
START_TEST(a_topology_without_libraries_is_read_for_a_main_file_to_complete)
{
    static const char xml[] = "<configuration>\n"
                              "<producer><name>p</name><output_buffer_name>b</output_buffer_name>"
                              "<size output_buffer='b'>64</size></producer>\n"
                              "<consumer><name>c</name><library>c.so</library><data_source source_buffer='b'>p"
                              "</data_source></consumer>\n"
                              "</configuration>\n";
    char err[512];
    emu_topology *t = NULL;
    ck_assert_int_eq(parse(xml, &t, err, sizeof err), EMU_OK);
    ck_assert_ptr_null(t->actors[0].library);
    ck_assert_str_eq(t->actors[1].library, "c.so");
    ck_assert_str_eq(t->actors[1].library_file, "mem.xml");
    ck_assert_str_eq(t->actors[1].library_dir, ".");
    ck_assert_int_eq(t->actors[1].library_line, 3);
    ck_assert_ptr_null(t->actors[1].conf_dir);
    ck_assert_ptr_null(t->main_path);
    emu_topology_free(t);
}
END_TEST

START_TEST(malformed_memory_input_never_yields_a_topology)
{
    static const char *const inputs[] = {
        "", "<", "<configuration>", "<configuration><producer></configuration>", "\xff\xfe<\x00",
        "<?xml version='1.0'?><!DOCTYPE c [<!ENTITY a 'aaaa'><!ENTITY b '&a;&a;&a;&a;'>]><configuration>&b;"
        "</configuration>",
        /* libxml2 describes this one on two lines; the message must stay one. */
        "<?xml version='1.0'?>\n<configuration>\x9d\x99</configuration>",
        "<configuration><producer><name>a\tb</name></producer></configuration>",
    };
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        char err[512] = "";
        emu_topology *t = (emu_topology *)1;
        size_t len = i == 4 ? 4 : strlen(inputs[i]);
        ck_assert_int_eq(emu_topology_parse("mem.xml", inputs[i], len, NULL, &t, err, sizeof err), EMU_E_TOPOLOGY);
        ck_assert_ptr_null(t);
        ck_assert_msg(strncmp(err, "mem.xml:", 8) == 0 && strchr(err, '\n') == NULL, "%s", err);
    }
}
END_TEST

/* ---- the command line ---- */

START_TEST(a_missing_topology_file_is_status_2)
{
    nw_result r;
    const char *args[] = {"validate", "tests/topologies/none.xml", NULL};
    ck_assert_int_eq(nw_run(&r, args, NULL), 0);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "tests/topologies/none.xml: cannot open: No such file or directory\n");
}
END_TEST

START_TEST(libraries_are_looked_for_beside_the_program_then_beside_the_topology)
{
    nw_result r;
    char bin[4096], expected[8400];
    ck_assert_ptr_nonnull(realpath(nw_build_path("/bin"), bin));
    const char *args[] = {"validate", BAD "library_not_found.xml", NULL};
    ck_assert_int_eq(nw_run(&r, args, NULL), 0);
    ck_assert_int_eq(r.status, 2);
    snprintf(expected, sizeof expected,
             BAD "library_not_found.xml:6: producer 'source': library 'lifecycle_producer.so' not found in "
                 "%s/../actors, %s/../lib/narwhal/actors, tests/topologies/bad\n",
             bin, bin);
    ck_assert_str_eq(r.err, expected);
}
END_TEST

START_TEST(bad_usage_is_status_2_with_a_message)
{
    static const struct {
        const char *args[6];
        const char *message;
    } cases[] = {
        {{NULL}, "usage: narwhal COMMAND"},
        {{"frobnicate", "x", NULL}, "narwhal: unknown command 'frobnicate' (see narwhal --help)\n"},
        {{"run", NULL}, "narwhal: 'run' needs a file (see narwhal --help)\n"},
        {{"run", "a.xml", "b.xml", NULL}, "narwhal: one file only; unexpected 'b.xml' (see narwhal --help)\n"},
        {{"run", "a.xml", "--blocks", "0", NULL}, "narwhal: --blocks needs a positive whole number (see narwhal --help)\n"},
        {{"run", "a.xml", "--blocks", "-3", NULL}, "narwhal: --blocks needs a positive whole number (see narwhal --help)\n"},
        {{"run", "a.xml", "--blocks", NULL}, "narwhal: --blocks needs a value (see narwhal --help)\n"},
        {{"run", "a.xml", "--bogus", NULL}, "narwhal: unknown option '--bogus' (see narwhal --help)\n"},
        {{"validate", "a.xml", "--blocks=3", NULL}, "narwhal: 'validate' takes no --blocks (see narwhal --help)\n"},
        {{"dump", "a.adf", "--conf", "x", NULL}, "narwhal: 'dump' takes no --conf (see narwhal --help)\n"},
        {{"run", GOOD "direct.xml", "--conf", "/nonexistent", NULL},
         "narwhal: --conf /nonexistent is not a directory (see narwhal --help)\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        nw_result r;
        ck_assert_int_eq(nw_run(&r, cases[i].args, NULL), 0);
        ck_assert_msg(r.status == 2, "case %zu: exit %d", i, r.status);
        ck_assert_msg(strncmp(r.err, cases[i].message, strlen(cases[i].message)) == 0, "case %zu: %s", i, r.err);
    }
}
END_TEST

START_TEST(help_goes_to_stdout_with_status_0)
{
    static const char *const forms[] = {"--help", "help"};
    for (size_t i = 0; i < 2; i++) {
        nw_result r;
        const char *args[] = {forms[i], NULL};
        ck_assert_int_eq(nw_run(&r, args, NULL), 0);
        ck_assert_int_eq(r.status, 0);
        ck_assert_ptr_nonnull(strstr(r.out, "narwhal run TOPOLOGY.xml"));
        ck_assert_ptr_nonnull(strstr(r.out, "narwhal dump FILE.adf"));
        ck_assert_str_eq(r.err, "");
    }
}
END_TEST

START_TEST(inspect_lists_symbols_and_the_description)
{
    nw_result r;
    char lib[512];
    snprintf(lib, sizeof lib, "%s", nw_build_path("/tests/actors/lifecycle_producer.so"));
    const char *args[] = {"inspect", lib, NULL};
    ck_assert_int_eq(nw_run(&r, args, NULL), 0);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "  process_block        mandatory          present\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "  process_describe     narwhal extension  present\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "\nlifecycle_producer (producer): test actor; logs every call to $LIFECYCLE_LOG\n"));
    /* The foreign filter has NARVAL's calls but pause, resume and reset, and none of ours. */
    snprintf(lib, sizeof lib, "%s", nw_build_path("/tests/actors/foreign_filter.so"));
    ck_assert_int_eq(nw_run(&r, args, NULL), 0);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "  process_stop         optional           present\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "  process_pause        optional           absent\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "  process_describe     narwhal extension  absent\n"));
}
END_TEST

START_TEST(inspect_refuses_a_library_without_a_mandatory_symbol)
{
    nw_result r;
    const char *args[] = {"inspect", "bad_no_block.so", "--actors", nw_build_path("/tests/actors"), NULL};
    char expected[512];
    ck_assert_int_eq(nw_run(&r, args, NULL), 0);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.out, "  process_block        mandatory          absent\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "  process_config       mandatory          present\n"));
    snprintf(expected, sizeof expected, "%s/bad_no_block.so lacks process_block, which every actor must export: it "
             "cannot run\n", nw_build_path("/tests/actors"));
    ck_assert_str_eq(r.err, expected);

    const char *text[] = {"inspect", BAD "not_a_library.so", NULL};
    ck_assert_int_eq(nw_run(&r, text, NULL), 0);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "cannot load library " BAD "not_a_library.so: invalid ELF header\n");
}
END_TEST

static Suite *topology_suite(void)
{
    Suite *s = suite_create("topology");
    TCase *tc = tcase_create("good");
    tcase_add_loop_test(tc, good_topologies_give_the_chain_in_data_flow_order, 0, N_GOODS);
    tcase_add_loop_test(tc, validate_accepts_good_topologies_and_configures_each_library_once, 0, N_GOODS);
    suite_add_tcase(s, tc);
    tc = tcase_create("bad");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, validate_refuses_bad_topologies_with_one_line_and_status_2, 0, N_BADS);
    tcase_add_test(tc, every_bad_topology_file_is_tested);
    suite_add_tcase(s, tc);
    tc = tcase_create("parser");
    tcase_add_test(tc, sizes_are_whole_numbers_with_ada_underscores_up_to_1_gib);
    tcase_add_test(tc, unknown_elements_are_ignored_with_a_note_each);
    tcase_add_test(tc, a_chain_may_hold_up_to_1024_actors);
    tcase_add_test(tc, malformed_memory_input_never_yields_a_topology);
    tcase_add_test(tc, a_topology_without_libraries_is_read_for_a_main_file_to_complete);
    suite_add_tcase(s, tc);
    tc = tcase_create("command");
    tcase_add_test(tc, a_missing_topology_file_is_status_2);
    tcase_add_test(tc, libraries_are_looked_for_beside_the_program_then_beside_the_topology);
    tcase_add_test(tc, bad_usage_is_status_2_with_a_message);
    tcase_add_test(tc, help_goes_to_stdout_with_status_0);
    tcase_add_test(tc, inspect_lists_symbols_and_the_description);
    tcase_add_test(tc, inspect_refuses_a_library_without_a_mandatory_symbol);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(topology_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed != 0;
}

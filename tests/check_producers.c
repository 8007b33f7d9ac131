/* check_producers.c: `narwhal summary` of chains with several producers (triple.xml's three generators) sums every producer's frames and counts each event once. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adf.h"
#include "narwhal_exec.h"
#include "summary.h"
#include "testkit.h"

enum { EVENTS = 150 };

static char tmp[PATH_MAX];

static const char *at(const char *name) { return tk_path(tmp, name); }

/* tmp/conf: triple.xml's settings over a coarse basis (nw_triple_confs), each producer but the
 * first writing `output`, and full_chain.xml's one generator simulating the same events for all
 * three crystals (as check_cluster); 0, or -1 with why when basisgen is not built (the test skips). */
static int prepare(const char *test, const char *output, char *why, size_t len)
{
    char from[PATH_MAX], to[2 * PATH_MAX], set[2 * PATH_MAX];
    tk_make_tmpdir(tmp, sizeof tmp, test);
    int basis = nw_coarse_basis(at("coarse.basis"), why, len);
    ck_assert_msg(basis <= 0, "%s", why);
    if (basis < 0)
        return -1;
    ck_assert_msg(nw_triple_confs(tmp, at("coarse.basis"), EVENTS, "", test, why, len) == 0, "%s", why);
    for (int k = 0; k < 3; k++) {
        snprintf(from, sizeof from, "topologies/conf/triple/gen%d/Generator.conf", nw_triple_crystals[k]);
        snprintf(to, sizeof to, "%s/gen%d/Generator.conf", at("conf"), nw_triple_crystals[k]);
        snprintf(set, sizeof set, "Basis %s\nEvents %d\nOutput %s\n", at("coarse.basis"), EVENTS,
                 k == 0 ? "crystal truth" : output);
        ck_assert_int_eq(nw_derive_conf(from, to, set, test), 0);
    }
    snprintf(from, sizeof from, "topologies/conf/triple/gen%d/Generator.conf", nw_triple_crystals[0]);
    snprintf(to, sizeof to, "%s/Generator.conf", at("conf"));
    snprintf(set, sizeof set, "Basis %s\nEvents %d\nCrystals all\nOutput crystal truth\n", at("coarse.basis"), EVENTS);
    ck_assert_int_eq(nw_derive_conf(from, to, set, test), 0);
    return 0;
}

/* narwhal run TOPOLOGY --strict --report REPORT over tmp/conf, then the summary of its output
 * (tmp/out.adf and its Narwhal file) with that report into s. */
static void run_and_summarise(const char *topology, const char *report, ana_summary *s)
{
    char conf[2 * PATH_MAX], err[1024];
    snprintf(conf, sizeof conf, "%s:topologies/conf", at("conf"));
    const char *args[] = {"run", topology, "--strict", "--conf", conf, "--report", report, NULL};
    nw_result r;
    ck_assert_int_eq(nw_run_timed(&r, args, NULL, 300, 0, 0), 0);
    ck_assert_msg(r.status == 0, "narwhal run %s exited %d:\n%s", topology, r.status, r.err);
    ana_summary_options o = {.report = report};
    ck_assert_msg(ana_summary_compute(at("out.adf"), &o, s, err, sizeof err) == ANA_OK, "%s", err);
}

/* What the report says actor `name` emitted of key id (its kind record), -1 when none. */
static long long report_kind(const char *report, const char *name, uint32_t id)
{
    char *text = (char *)tk_read_file(report, NULL), head[128];
    snprintf(head, sizeof head, "\nkind\t%s\t0x%08x\t", name, id);
    const char *l = strstr(text, head);
    unsigned long long frames = 0, inside = 0;
    long long n = l && sscanf(strchr(l + strlen(head), '\t'), "\t%llu\t%llu", &frames, &inside) == 2
                      ? (long long)(frames + inside)
                      : -1;
    free(text);
    return n;
}

/* The report without its source records, as `narwhal run` wrote it before it wrote them. */
static void strip_sources(const char *from, const char *to)
{
    FILE *in = fopen(from, "r"), *out = fopen(to, "w");
    ck_assert(in && out);
    char line[8192];
    int dropped = 0;
    while (fgets(line, sizeof line, in)) {
        if (strncmp(line, "source\t", 7) == 0)
            dropped++;
        else
            fputs(line, out);
    }
    fclose(in);
    ck_assert_int_eq(fclose(out), 0);
    ck_assert_int_eq(dropped, 3 + 3 + 1 + 1 + 1); /* a PSA each, the builder's three, tracker, histo, writer */
}

START_TEST(three_producers_add_up_to_the_one_that_simulates_the_same_events)
{
    char why[4 * PATH_MAX];
    if (prepare("check_producers", "crystal", why, sizeof why) != 0)
        TK_SKIP("%s", why);
    ana_summary one, three, old;
    run_and_summarise("topologies/full_chain.xml", at("one.tsv"), &one);
    run_and_summarise("topologies/triple.xml", at("three.tsv"), &three);
    ck_assert_int_eq(one.balanced, 1);
    ck_assert_uint_eq(one.n_producers, 1);
    /* the report names each actor's source */
    char *text = (char *)tk_read_file(at("three.tsv"), NULL);
    ck_assert_ptr_nonnull(strstr(text, "\nsource\tpsa176\tgen176\n"));
    ck_assert_ptr_nonnull(strstr(text, "\nsource\tbuilder\tpsa170\n"));
    ck_assert_ptr_null(strstr(text, "\nsource\tgen176\t"));
    free(text);
    /* every producer's crystal frames counted: the three generators' in the report, and the one's */
    long long crystals = 0;
    for (int k = 0; k < 3; k++) {
        char name[16];
        snprintf(name, sizeof name, "gen%d", nw_triple_crystals[k]);
        long long n = report_kind(at("three.tsv"), name, ADF_ID_NW_CRYSTAL);
        ck_assert_int_gt(n, 0);
        crystals += n;
    }
    ck_assert_uint_eq(three.produced_crystal, (unsigned long long)crystals);
    ck_assert_uint_eq(three.produced_crystal, one.produced_crystal);
    ck_assert_uint_eq(three.psa, one.psa);
    ck_assert_uint_eq(three.n_producers, 3);
    ck_assert_str_eq(three.producers, "'gen175', 'gen176', 'gen170'");
    for (int i = 0; i < three.n_checks; i++)
        ck_assert_msg(three.check[i].ok, "check %d failed: %s", i, three.check[i].text);
    ck_assert_int_eq(three.balanced, 1);
    ck_assert_ptr_nonnull(strstr(three.check[2].text, "rejected by 'psa175', 'psa176', 'psa170'"));
    ck_assert_ptr_nonnull(strstr(three.check[4].text, "meta:eof: 1 produced by each of the 3 producers"));
    /* the per-source figures: the same events, γ rays and efficiency denominators as the one producer's */
    ck_assert_uint_eq(three.events, EVENTS);
    ck_assert_uint_eq(three.events, one.events);
    ck_assert_uint_eq(three.gammas_emitted, one.gammas_emitted);
    ck_assert_int_eq(three.n_lines, 3);
    ck_assert_int_eq(three.n_lines, one.n_lines);
    for (int i = 0; i < three.n_lines; i++) {
        ck_assert_uint_eq(three.line[i].emitted, one.line[i].emitted);
        ck_assert_double_eq(three.line[i].peak[ANA_SPEC_TRACKED].efficiency,
                            one.line[i].peak[ANA_SPEC_TRACKED].efficiency);
    }
    /* a report from before the source records: a producer is an actor that took no frame in */
    strip_sources(at("three.tsv"), at("old.tsv"));
    char err[1024];
    ana_summary_options o = {.report = at("old.tsv")};
    ck_assert_msg(ana_summary_compute(at("out.adf"), &o, &old, err, sizeof err) == ANA_OK, "%s", err);
    ck_assert_int_eq(old.balanced, 1);
    ck_assert_uint_eq(old.n_producers, 3);
    ck_assert_uint_eq(old.produced_crystal, three.produced_crystal);
    ana_summary_free(&one);
    ana_summary_free(&three);
    ana_summary_free(&old);
    tk_remove_tree(tmp);
}
END_TEST

/* triple.xml with its producers listed first (the run's order: gen175, gen176, gen170, then
 * their PSAs), written into tmp/first.xml. */
static void write_producers_first(void)
{
    FILE *f = fopen(at("first.xml"), "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<configuration>\n");
    for (int k = 0; k < 3; k++)
        fprintf(f, "  <producer><name>gen%d</name><library>generator.so</library>"
                   "<output_buffer_name>t%d</output_buffer_name><size output_buffer=\"t%d\">4000000</size></producer>\n",
                nw_triple_crystals[k], k, k);
    for (int k = 0; k < 3; k++)
        fprintf(f, "  <intermediary input_buffers=\"1\" output_buffers=\"1\"><name>psa%d</name>"
                   "<library>psa.so</library><data_source source_buffer=\"t%d\">gen%d</data_source>"
                   "<output_buffer_name>h%d</output_buffer_name><size output_buffer=\"h%d\">4000000</size>"
                   "</intermediary>\n", nw_triple_crystals[k], k, nw_triple_crystals[k], k, k);
    fprintf(f, "  <intermediary input_buffers=\"3\" output_buffers=\"1\"><name>builder</name><library>builder.so</library>");
    for (int k = 0; k < 3; k++)
        fprintf(f, "<data_source source_buffer=\"h%d\">psa%d</data_source>", k, nw_triple_crystals[k]);
    fprintf(f, "<output_buffer_name>ev</output_buffer_name><size output_buffer=\"ev\">4000000</size></intermediary>\n"
               "  <intermediary input_buffers=\"1\" output_buffers=\"1\"><name>tracker</name><library>tracker.so</library>"
               "<data_source source_buffer=\"ev\">builder</data_source><output_buffer_name>g</output_buffer_name>"
               "<size output_buffer=\"g\">4000000</size></intermediary>\n"
               "  <consumer><name>writer</name><library>adf_writer.so</library>"
               "<data_source source_buffer=\"g\">tracker</data_source></consumer>\n</configuration>\n");
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(producers_that_each_write_the_truth_count_each_event_once)
{
    char why[4 * PATH_MAX];
    if (prepare("check_producers", "crystal truth", why, sizeof why) != 0)
        TK_SKIP("%s", why);
    write_producers_first();
    ana_summary s;
    run_and_summarise(at("first.xml"), at("first.tsv"), &s);
    for (int i = 0; i < s.n_checks; i++)
        ck_assert_msg(s.check[i].ok, "check %d failed: %s", i, s.check[i].text);
    ck_assert_int_eq(s.balanced, 1);
    ck_assert_uint_eq(s.n_producers, 3);
    ck_assert_ptr_nonnull(strstr(s.check[2].text, "rejected by 'psa175', 'psa176', 'psa170'"));
    /* every frame of the three is in the file and produced; each event once in the physics */
    ck_assert_uint_eq(s.truth, 3 * EVENTS);
    ck_assert_uint_eq(s.produced_truth, 3 * EVENTS);
    ck_assert_uint_eq(s.truth_repeated, 2 * EVENTS);
    ck_assert_uint_eq(s.events, EVENTS);
    ck_assert_uint_eq(s.gammas_emitted, EVENTS); /* Source lines: one γ ray per event */
    unsigned long long emitted = 0;
    for (int i = 0; i < s.n_lines; i++)
        emitted += s.line[i].emitted;
    ck_assert_uint_eq(emitted, EVENTS);
    ck_assert_uint_eq(s.multiplicity[1], EVENTS);
    ana_summary_free(&s);
    tk_remove_tree(tmp);
}
END_TEST

static Suite *producers_suite(void)
{
    Suite *s = suite_create("producers");
    TCase *tc = tcase_create("summary");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, three_producers_add_up_to_the_one_that_simulates_the_same_events);
    tcase_add_test(tc, producers_that_each_write_the_truth_count_each_event_once);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(producers_suite()); }

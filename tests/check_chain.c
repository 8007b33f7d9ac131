/* check_chain.c: full_chain.xml on a coarse basis: every frame written or rejected, the summary, both modes equal. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adf.h"
#include "emu.h"
#include "narwhal_exec.h"
#include "summary.h"
#include "testkit.h"

enum { EVENTS = 300 };

static char tmp[PATH_MAX];
static int chain_ready; /* setup built the basis and ran the chain once */
static char not_ready[PATH_MAX * 4]; /* why not, when it did not */

/* tmp/NAME (tk_path: a small ring of buffers). */
static const char *at(const char *name) { return tk_path(tmp, name); }

static void write_file(const char *name, const char *text) { tk_write_text(at(name), text); }

static void write_confs(void)
{
    char text[2048];
    ck_assert_int_eq(mkdir(at("conf"), 0700), 0);
    snprintf(text, sizeof text,
             "Basis %s\nSeed 7\nEvents %d\nSource lines\nLines 661.657 1 1332.492 1\nRate 10000\n"
             "Output crystal truth\n",
             at("coarse.basis"), EVENTS);
    write_file("conf/Generator.conf", text);
    snprintf(text, sizeof text, "Basis %s\nDevice cpu\n", at("coarse.basis"));
    write_file("conf/PSA.conf", text);
    write_file("conf/Tracker.conf", "KeepInput true\nDevice cpu\n");
    snprintf(text, sizeof text, "OutputDir %s\nDevice cpu\nFormats csv\nHistogram gamma tracked.e sum 2048 0 2048\n",
             at("histo"));
    write_file("conf/Histo.conf", text);
    snprintf(text, sizeof text, "File %s\n", at("out.adf"));
    write_file("conf/ADFWriter.conf", text);
}

/* A basis on a 6 mm grid with 2 mm fields: a fraction of a second, where
 * the default one takes 20 s and 708 MB.  -1 with why when basisgen is not
 * built (the tests skip); basisgen failing fails the case. */
static int build_basis(char *why, size_t len)
{
    const char *basisgen = nw_build_path("/bin/basisgen");
    if (access(basisgen, X_OK) != 0) {
        snprintf(why, len, "%s is not built", basisgen);
        return -1;
    }
    char cmd[3 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "%s --quiet --geometry detector/geometry/agata.geo --grid 6 --field-grid 2 -o %s",
             basisgen, at("coarse.basis"));
    ck_assert_msg(system(cmd) == 0, "basisgen failed: %s", cmd); /* a failure, not a reason to skip */
    return 0;
}

/* The main chain as NARVAL would run it (--strict: the topology's buffer
 * sizes, no end-of-data call): the balance below shows nothing is lost. */
static void run_chain(nw_result *r, const char *report, int pipelined)
{
    char conf[2 * PATH_MAX];
    snprintf(conf, sizeof conf, "%s:topologies/conf", at("conf"));
    const char *args[] = {"run", "topologies/full_chain.xml", "--strict", "--conf", conf, "--report", report,
                          pipelined ? "--pipeline" : NULL, NULL};
    ck_assert_int_eq(nw_run_timed(r, args, NULL, 300, 0, 0), 0);
    ck_assert_msg(r->status == 0, "narwhal run exited %d:\n%s", r->status, r->err);
}

static nw_result result;

static void setup(void)
{
    tk_make_tmpdir(tmp, sizeof tmp, "check_chain");
    chain_ready = 0;
    if (build_basis(not_ready, sizeof not_ready) != 0)
        return;
    write_confs();
    run_chain(&result, at("report.tsv"), 0);
    chain_ready = 1;
}

static void teardown(void) { tk_remove_tree(tmp); }

static void summarise(ana_summary *s, const char *file, const char *report)
{
    char err[1024];
    ana_summary_options o = {.report = report};
    int rc = ana_summary_compute(file, &o, s, err, sizeof err);
    ck_assert_msg(rc == ANA_OK, "summary: %s", err);
}

/* ---- the chain's output, followed frame by frame ------------------------------- */

START_TEST(every_produced_frame_is_written_or_rejected)
{
    if (!chain_ready)
        TK_SKIP("the chain was not run: %s", not_ready);
    ana_summary s;
    summarise(&s, at("out.adf"), at("report.tsv"));
    ck_assert_int_eq(s.have_report, 1);
    ck_assert_str_eq(s.producer, "generator");
    ck_assert_uint_eq(s.produced_truth, EVENTS);
    ck_assert_uint_eq(s.truth, EVENTS);
    ck_assert_uint_eq(s.events, EVENTS);
    ck_assert_uint_gt(s.produced_crystal, EVENTS / 2);
    ck_assert_uint_le(s.psa, s.produced_crystal);
    ck_assert_uint_eq(s.writer_frames, s.frames);
    ck_assert_uint_eq(s.eof, 1);
    ck_assert_int_eq(s.ends_with_eof, 1);
    ck_assert_uint_eq(s.frames, s.truth + s.built + s.tracked + s.eof);
    ck_assert_uint_eq(s.built, s.tracked);
    ck_assert_uint_eq(s.unpaired, 0);
    ck_assert_uint_eq(s.crystal, 0);
    ck_assert_uint_eq(s.other, 0);
    ck_assert_int_eq(s.n_checks, 5);
    for (int i = 0; i < s.n_checks; i++)
        ck_assert_msg(s.check[i].ok, "check %d failed: %s", i, s.check[i].text);
    ck_assert_int_eq(s.balanced, 1);
    /* each generator event has exactly one fate */
    ck_assert_uint_eq(s.events, s.ev_tracked + s.ev_not_tracked + s.ev_untracked + s.ev_no_psa);
    ck_assert_uint_eq(s.ev_untracked, 0);
    ck_assert_uint_gt(s.ev_tracked, EVENTS / 2);
    ck_assert_uint_le(s.ev_missed, s.ev_no_psa);
    ck_assert_ptr_nonnull(s.table);
    ck_assert_ptr_nonnull(strstr(s.table, "generator  generator.so"));
    ana_summary_free(&s);
}
END_TEST

START_TEST(summary_figures_are_physical)
{
    if (!chain_ready)
        TK_SKIP("the chain was not run: %s", not_ready);
    ana_summary s;
    summarise(&s, at("out.adf"), at("report.tsv"));
    ck_assert_int_eq(s.continuum, 0);
    ck_assert_int_eq(s.n_lines, 2);
    ck_assert_double_eq_tol(s.line[0].e, 661.657, 1e-3);
    ck_assert_double_eq_tol(s.line[1].e, 1332.492, 1e-3);
    ck_assert_uint_eq(s.line[0].emitted + s.line[1].emitted, s.gammas_emitted);
    ck_assert_uint_eq(s.gammas_emitted, EVENTS);
    /* every PSA hit lies in a segment the truth deposited energy in (one γ per event) */
    ck_assert_uint_gt(s.hits, EVENTS / 2);
    ck_assert_uint_eq(s.matched + s.unmatched_hits, s.hits);
    ck_assert_uint_gt(s.matched, s.hits * 9 / 10);
    for (int a = 0; a < 3; a++) {
        ck_assert_msg(s.rms[a] > 0.3 && s.rms[a] < 15, "rms axis %d: %g mm", a, s.rms[a]);
        ck_assert(s.sigma68[a] > 0 && s.sigma68[a] <= s.rms[a] * 1.5);
    }
    unsigned long long by_energy = 0;
    for (int b = 0; b < ANA_SUMMARY_EBINS; b++)
        by_energy += s.ebin[b].n;
    ck_assert_uint_eq(by_energy, s.matched);
    /* the spectra: entries, photopeaks within them, the event sum holds the most of a line */
    ck_assert_uint_eq(s.total[ANA_SPEC_TRACKED], s.gammas);
    ck_assert_uint_eq(s.total[ANA_SPEC_CRYSTAL], s.psa);
    ck_assert_uint_eq(s.total[ANA_SPEC_SUM], s.events - s.ev_no_psa);
    for (int i = 0; i < s.n_lines; i++) {
        const ana_summary_line *l = &s.line[i];
        ck_assert_double_gt(l->peak[ANA_SPEC_TRACKED].area, 0);
        ck_assert_double_ge(l->peak[ANA_SPEC_SUM].area, l->peak[ANA_SPEC_CRYSTAL].area);
        ck_assert_double_le(l->peak[ANA_SPEC_SUM].area, (double)l->emitted);
        for (int k = 0; k < ANA_SPECTRA; k++)
            ck_assert_msg(fabs(l->peak[k].centroid - l->e) < 1, "line %g, spectrum %d: centroid %g", l->e, k,
                          l->peak[k].centroid);
    }
    unsigned long long in_bins = 0;
    for (unsigned b = 0; b < s.n_bins; b++)
        in_bins += s.spectrum[ANA_SPEC_SUM][b];
    ck_assert_uint_eq(in_bins, s.total[ANA_SPEC_SUM]);
    ana_summary_free(&s);
}
END_TEST

/* ---- where each actor computed (process_device) --------------------------------- */

/* The report's actor record of `name`: its fields, tab-separated, into field[]; their count. */
static int actor_record(const char *report, const char *name, char field[][64], int max)
{
    char head[96];
    snprintf(head, sizeof head, "\nactor\t%s\t", name);
    const char *p = strstr(report, head);
    ck_assert_msg(p != NULL, "no actor record of '%s'", name);
    int n = 0;
    for (p++; *p && *p != '\n'; n++) {
        size_t len = strcspn(p, "\t\n");
        if (n < max)
            snprintf(field[n], sizeof field[n], "%.*s", (int)len, p);
        p += len + (p[len] == '\t');
    }
    return n;
}

/* Whether the line of text that starts with start ends with end. */
static int line_ends_with(const char *text, const char *start, const char *end)
{
    const char *line = strstr(text, start);
    ck_assert_msg(line != NULL, "no line '%s'", start + 1);
    size_t len = strcspn(line + 1, "\n"), n = strlen(end);
    return len >= n && strncmp(line + 1 + len - n, end, n) == 0;
}

/* The GPU actors, kept on the CPU by Device cpu (on any machine), say CPU in
 * the report's last field and the table's device column; the others, which
 * choose no device, "-".  The field comes last: the 12 before it are as they
 * were (scripts read them by number). */
START_TEST(the_table_says_where_each_actor_computed)
{
    if (!chain_ready)
        TK_SKIP("the chain was not run: %s", not_ready);
    static const char *const rows[][2] = {
        {"generator", "-"}, {"psa", "CPU"}, {"builder", "-"}, {"tracker", "CPU"}, {"histo", "CPU"}, {"writer", "-"},
    };
    static char report[1 << 16];
    char field[16][64];
    ck_assert(tk_read_text(at("report.tsv"), report, sizeof report));
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        ck_assert_int_eq(actor_record(report, rows[i][0], field, 16), 13);
        ck_assert_msg(strcmp(field[12], rows[i][1]) == 0, "%s: device '%s', not '%s'", rows[i][0], field[12],
                      rows[i][1]);
    }
    ck_assert(line_ends_with(report, "\ntable\tactor ", "  device"));
    ck_assert(line_ends_with(report, "\ntable\ttracker ", "  CPU"));
    ck_assert(line_ends_with(report, "\ntable\twriter ", "  -"));
}
END_TEST

/* ---- the balance fails when frames are lost ------------------------------------ */

/* Copies the chain's output without the top-level frame number `drop`. */
static void copy_without(const char *to, unsigned long long drop, uint32_t *dropped_id)
{
    FILE *in = fopen(at("out.adf"), "rb");
    ck_assert_ptr_nonnull(in);
    fseek(in, 0, SEEK_END);
    long size = ftell(in);
    rewind(in);
    uint8_t *buf = malloc((size_t)size);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)size, in), (size_t)size);
    fclose(in);
    FILE *out = fopen(to, "wb");
    ck_assert_ptr_nonnull(out);
    adf_iter it;
    adf_frame f;
    unsigned long long n = 0;
    adf_iter_init(&it, buf, (size_t)size);
    while (adf_iter_next(&it, &f) > 0) {
        if (n++ == drop)
            *dropped_id = f.key.id;
        else
            ck_assert_uint_eq(fwrite(f.data, 1, f.key.length, out), f.key.length);
    }
    ck_assert_int_eq(fclose(out), 0);
    free(buf);
}

START_TEST(a_missing_frame_breaks_the_balance)
{
    if (!chain_ready)
        TK_SKIP("the chain was not run: %s", not_ready);
    ana_summary whole;
    summarise(&whole, at("out.adf"), at("report.tsv"));
    /* the last frame is the meta:eof, the one before it a data:tracked; one near the start is a truth frame */
    unsigned long long drops[2] = {whole.frames - 2, 0};
    ana_summary_free(&whole);
    for (int i = 0; i < 2; i++) {
        uint32_t id = 0;
        copy_without(at("short.adf"), drops[i], &id);
        ana_summary s;
        summarise(&s, at("short.adf"), at("report.tsv"));
        ck_assert_int_eq(s.balanced, 0);
        ck_assert_int_eq(s.check[0].ok, 0); /* the writer received one more than the file holds */
        ck_assert_uint_eq(s.writer_frames, s.frames + 1);
        if (id == ADF_ID_NW_TRUTH)
            ck_assert_int_eq(s.check[1].ok, 0);
        else
            ck_assert_uint_eq(id, ADF_ID_NW_TRACKED);
        if (id == ADF_ID_NW_TRACKED)
            ck_assert_int_eq(s.check[3].ok, 0);
        ana_summary_free(&s);
    }
    const char *args[] = {"summary", at("short.adf"), "--report", at("report.tsv"), NULL};
    nw_result r;
    ck_assert_int_eq(nw_run(&r, args, NULL), 0);
    ck_assert_int_eq(r.status, EMU_E_RUN);
    ck_assert_ptr_nonnull(strstr(r.out, "[FAILED] the writer 'writer' received"));
    ck_assert_ptr_nonnull(strstr(r.err, "the frames do not balance"));
}
END_TEST

START_TEST(a_producer_count_the_file_lacks_breaks_the_balance)
{
    if (!chain_ready)
        TK_SKIP("the chain was not run: %s", not_ready);
    /* the report claims one data:crystal frame more than the generator emitted:
     * it is neither written nor rejected by the PSA (which made as many as before) */
    FILE *in = fopen(at("report.tsv"), "r"), *out = fopen(at("more.tsv"), "w");
    ck_assert(in && out);
    char line[4096];
    int changed = 0;
    while (fgets(line, sizeof line, in)) {
        unsigned long long n, inside;
        if (sscanf(line, "kind\tgenerator\t0x4e570101\tnarwhal:crystal\t%llu\t%llu", &n, &inside) == 2) {
            fprintf(out, "kind\tgenerator\t0x4e570101\tnarwhal:crystal\t%llu\t%llu\n", n - 1, inside);
            changed = 1;
        } else {
            fputs(line, out);
        }
    }
    fclose(in);
    fclose(out);
    ck_assert_int_eq(changed, 1);
    ana_summary s;
    summarise(&s, at("out.adf"), at("more.tsv"));
    ck_assert_int_eq(s.balanced, 0);
    ck_assert_int_eq(s.check[2].ok, 0);
    ck_assert_ptr_nonnull(strstr(s.check[2].text, "data:crystal"));
    ana_summary_free(&s);
}
END_TEST

/* ---- run modes, the command line, bad input ------------------------------------ */

START_TEST(pipelined_chain_writes_the_same_bytes)
{
    if (!chain_ready)
        TK_SKIP("the chain was not run: %s", not_ready);
    size_t n_seq, n_pipe;
    uint8_t *seq = tk_read_file(at("out.adf"), &n_seq);
    nw_result r;
    run_chain(&r, at("report-pipelined.tsv"), 1);
    uint8_t *pipe = tk_read_file(at("out.adf"), &n_pipe);
    ck_assert_uint_eq(n_pipe, n_seq);
    ck_assert_int_eq(memcmp(seq, pipe, n_seq), 0);
    free(seq);
    free(pipe);
    ana_summary s;
    summarise(&s, at("out.adf"), at("report-pipelined.tsv"));
    ck_assert_int_eq(s.balanced, 1);
    ana_summary_free(&s);
}
END_TEST

START_TEST(summary_command_prints_the_sections_and_plots)
{
    if (!chain_ready)
        TK_SKIP("the chain was not run: %s", not_ready);
    const char *args[] = {"summary", at("out.adf"), "--report", at("report.tsv"), "--plots", at("plots"),
                          "--histo", at("histo"), "--window", "4", NULL};
    nw_result r;
    ck_assert_int_eq(nw_run(&r, args, NULL), 0);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    static const char *const parts[] = {"Physics: ", "(+-4.0 keV, then +-2 FWHM", "peak-to-total", "PSA position resolution",
                                        "Events and frames", "balance: every frame the producer emitted", "Files",
                                        "0 .spe, 0 .spe.txt (each .spe's calibration and counts per keV), 1 .csv, "
                                        "0 .m4b", "Per actor (narwhal run)"};
    const char *from = r.out; /* the sections in this order: the physics first, the table once, last */
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        const char *at_part = strstr(from, parts[i]);
        ck_assert_msg(at_part != NULL, "no '%s' after the previous sections in:\n%s", parts[i], r.out);
        from = at_part;
    }
    ck_assert_ptr_null(strstr(from + 1, "Per actor (narwhal run)"));
    size_t n;
    free(tk_read_file(at("plots/spectra.csv"), &n));
    ck_assert_uint_gt(n, 1000);
    free(tk_read_file(at("plots/resolution.csv"), &n));
    ck_assert_uint_gt(n, 50);
}
END_TEST

START_TEST(summary_refuses_bad_input)
{
    nw_result r;
    const char *missing[] = {"summary", "/tmp/narwhal-no-such-file.adf", NULL};
    ck_assert_int_eq(nw_run(&r, missing, NULL), 0);
    ck_assert_int_eq(r.status, EMU_E_TOPOLOGY);
    ck_assert_ptr_nonnull(strstr(r.err, "/tmp/narwhal-no-such-file.adf: cannot open"));
    const char *window[] = {"summary", "x.adf", "--window", "-3", NULL};
    ck_assert_int_eq(nw_run(&r, window, NULL), 0);
    ck_assert_int_eq(r.status, EMU_E_TOPOLOGY);
    ck_assert_ptr_nonnull(strstr(r.err, "--window needs a half-width"));
    const char *report_on_dump[] = {"dump", "x.adf", "--report", "r.tsv", NULL};
    ck_assert_int_eq(nw_run(&r, report_on_dump, NULL), 0);
    ck_assert_int_eq(r.status, EMU_E_TOPOLOGY);
    if (!chain_ready)
        TK_SKIP("the chain was not run: %s", not_ready);
    /* a report with a line of another kind names the line */
    write_file("bad.tsv", "narwhal-report\t1\nactor\tgenerator\tgenerator.so\t1\t0\t2\t0\t10\t0\t0\t0\t0\n"
                          "actor\twriter\tadf_writer.so\t1\t2\t0\t10\t0\t0\t0\t0\t0\nkind\tnobody\t0x1\t?\t1\t0\n");
    ana_summary s;
    char err[1024];
    ana_summary_options o = {.report = at("bad.tsv")};
    ck_assert_int_eq(ana_summary_compute(at("out.adf"), &o, &s, err, sizeof err), ANA_E_INPUT);
    ck_assert_msg(strstr(err, "bad.tsv:4: not a line of a narwhal run report") != NULL, "%s", err);
    /* a file cut inside a frame names the offset */
    size_t n;
    uint8_t *buf = tk_read_file(at("out.adf"), &n);
    FILE *fp = fopen(at("cut.adf"), "wb");
    ck_assert_ptr_nonnull(fp);
    fwrite(buf, 1, n - 7, fp);
    fclose(fp);
    free(buf);
    o.report = NULL;
    ck_assert_int_eq(ana_summary_compute(at("cut.adf"), &o, &s, err, sizeof err), ANA_E_INPUT);
    ck_assert_msg(strstr(err, "cut.adf") != NULL && strstr(err, "offset") != NULL, "%s", err);
}
END_TEST

static Suite *chain_suite(void)
{
    Suite *s = suite_create("chain");
    TCase *tc = tcase_create("full_chain");
    /* once for the case: the tests read the same run (each in its own child) */
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, every_produced_frame_is_written_or_rejected);
    tcase_add_test(tc, summary_figures_are_physical);
    tcase_add_test(tc, the_table_says_where_each_actor_computed);
    tcase_add_test(tc, a_missing_frame_breaks_the_balance);
    tcase_add_test(tc, a_producer_count_the_file_lacks_breaks_the_balance);
    tcase_add_test(tc, pipelined_chain_writes_the_same_bytes);
    tcase_add_test(tc, summary_command_prints_the_sections_and_plots);
    tcase_add_test(tc, summary_refuses_bad_input);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(chain_suite()); }

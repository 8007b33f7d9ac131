/* check_analysis.c: the analysis library: the summary (corrupt truth, cascades, no truth, bad energies) and the one gnuplot runner, shell-free. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adf.h"
#include "gnuplot.h"
#include "narwhal_exec.h"
#include "summary.h"
#include "testkit.h"

enum { EVENTS = 40, CORRUPT = 17 };
#define LINE_KEV 661.657f

/* A directory name no shell command line could take unquoted, nor quoted with ''. */
#define AWKWARD "it's a \"$HOME\" dir"

static char tmp[PATH_MAX];

static const char *at(const char *name) { return tk_path(tmp, name); }

static void setup(void) { tk_make_tmpdir(tmp, sizeof tmp, "check_analysis"); }
static void teardown(void) { tk_remove_tree(tmp); }

/* The bytes of one event's truth frame, then its data:psa frame. */
static size_t event_bytes(void)
{
    return 2 * ADF_KEY_SIZE + adf_truth_payload_size(1, 1) + adf_psa_payload_size(1);
}

/* One event: a γ of e0 keV absorbed at one point of crystal 0, segment 3,
 * and the PSA's answer for it (the same point, its core energy 661.657). */
static void write_event(adf_writer *w, uint32_t event, float e0, adf_truth *t, adf_psa *p)
{
    memset(t, 0, sizeof *t);
    t->n_gammas = 1;
    t->n_interactions = 1;
    t->gamma[0] = (adf_truth_gamma){.e0 = e0, .e = e0, .dir = {0, 0, 1}, .flags = ADF_TRUTH_ABSORBED,
                                    .n_interactions = 1};
    t->hit[0] = (adf_truth_hit){.crystal_id = 0, .segment = 3, .process = ADF_TRUTH_PHOTO, .deposits = 1,
                                .e = LINE_KEV, .pos = {10, -5, 30}};
    ck_assert_int_eq(adf_truth_write(w, event, 1000u * event, t), ADF_OK);
    memset(p, 0, sizeof *p);
    p->e0 = LINE_KEV;
    p->n_hits = 1;
    p->hit[0] = (adf_psa_hit){.segment = 3, .x = 11, .y = -5, .z = 29, .e = LINE_KEV};
    ck_assert_int_eq(adf_psa_write(w, event, 1000u * event, p), ADF_OK);
}

/* EVENTS events; the truth frame of event CORRUPT claims `bad` keV. */
static void write_file(const char *path, float bad)
{
    size_t cap = EVENTS * event_bytes();
    uint8_t *buf = malloc(cap);
    adf_truth *t = malloc(sizeof *t);
    adf_psa *p = malloc(sizeof *p);
    ck_assert(buf && t && p);
    adf_writer w;
    adf_writer_init(&w, buf, cap);
    for (uint32_t e = 0; e < EVENTS; e++)
        write_event(&w, e, e == CORRUPT ? bad : LINE_KEV, t, p);
    ck_assert_uint_eq(w.used, cap);
    tk_write_bytes(path, buf, w.used);
    free(buf);
    free(t);
    free(p);
}

/* ---- the summary of a file with a corrupt truth frame ------------------------------ */

static void check_corrupt_frame_ignored(float bad)
{
    write_file(at("one-bad.adf"), bad);
    ana_summary s;
    char err[1024], offset[64];
    ana_summary_options o = {.window = 0};
    ck_assert_msg(ana_summary_compute(at("one-bad.adf"), &o, &s, err, sizeof err) == ANA_OK, "%s", err);
    ck_assert_uint_eq(s.frames, 2 * EVENTS);
    ck_assert_uint_eq(s.truth, EVENTS); /* it is in the file */
    ck_assert_uint_eq(s.truth_ignored, 1);
    ck_assert_uint_eq(s.events, EVENTS - 1); /* its contents are not used */
    ck_assert_uint_eq(s.gammas_emitted, EVENTS - 1);
    ck_assert_int_eq(s.continuum, 0);
    ck_assert_int_eq(s.n_lines, 1);
    ck_assert_double_eq_tol(s.line[0].e, LINE_KEV, 1e-3);
    ck_assert_uint_le(s.n_bins, 800); /* sized by the good frames: 661.657 * 1.1 + 50 */
    snprintf(offset, sizeof offset, "event %d at offset %zu", CORRUPT, CORRUPT * event_bytes());
    ck_assert_msg(strstr(s.first_ignored, offset) != NULL, "'%s' lacks '%s'", s.first_ignored, offset);
    /* the PSA's hits are compared with the good frames' truth; the corrupt one's has none */
    ck_assert_uint_eq(s.matched, EVENTS - 1);
    ck_assert_uint_eq(s.unmatched_hits, 1);
    ana_summary_free(&s);
}

START_TEST(a_truth_frame_claiming_5e9_keV_is_named_and_ignored)
{
    check_corrupt_frame_ignored(5e9f); /* beyond 2^32 keV: the old bin index overflowed */
}
END_TEST

START_TEST(a_truth_frame_claiming_nan_or_a_negative_energy_is_ignored)
{
    check_corrupt_frame_ignored(NAN);
    check_corrupt_frame_ignored(-1.0f);
    check_corrupt_frame_ignored((float)ANA_SUMMARY_MAX_KEV * 1.01f);
}
END_TEST

START_TEST(summary_plots_of_a_file_with_a_corrupt_frame_stay_small)
{
    write_file(at("one-bad.adf"), 5e9f);
    const char *args[] = {"summary", at("one-bad.adf"), "--plots", at("plots"), NULL};
    nw_result r;
    ck_assert_int_eq(nw_run(&r, args, NULL), 0);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    char named[128];
    snprintf(named, sizeof named, "ignored: 1 narwhal:truth frame(s) claiming a γ energy outside 0 to 100000 keV");
    ck_assert_msg(strstr(r.out, named) != NULL, "no '%s' in:\n%s", named, r.out);
    snprintf(named, sizeof named, "the narwhal:truth frame of event %d at offset %zu: γ 0 of 1 claims 5e+09 keV",
             CORRUPT, CORRUPT * event_bytes());
    ck_assert_msg(strstr(r.out, named) != NULL, "no '%s' in:\n%s", named, r.out);
    struct stat st;
    ck_assert_int_eq(stat(at("plots/spectra.csv"), &st), 0);
    ck_assert_int_lt(st.st_size, 16 * 1024); /* 800 lines of 1 keV bins, not 5e9 */
    ck_assert_int_gt(st.st_size, 800 * 8);
}
END_TEST

/* ---- files built frame by frame: cascades, no truth, bad energies ---------------------- */

/* A file being written: frames appended to a buffer of BUILD_CAP bytes. */
enum { BUILD_CAP = 1 << 22 };
typedef struct built_file {
    uint8_t *buf;
    adf_writer w;
    adf_truth *t;
    adf_psa *p;
    adf_tracked *g;
} built_file;

static void begin_file(built_file *f)
{
    f->buf = malloc(BUILD_CAP);
    f->t = calloc(1, sizeof *f->t);
    f->p = calloc(1, sizeof *f->p);
    f->g = calloc(1, sizeof *f->g);
    ck_assert(f->buf && f->t && f->p && f->g);
    adf_writer_init(&f->w, f->buf, BUILD_CAP);
}

static void end_file(built_file *f, const char *path)
{
    tk_write_bytes(path, f->buf, f->w.used);
    free(f->buf);
    free(f->t);
    free(f->p);
    free(f->g);
}

/* The truth of an event that emitted n γ rays of energies e[], none of which interacted. */
static void put_truth(built_file *f, uint32_t event, int n, const float *e)
{
    memset(f->t, 0, sizeof *f->t);
    f->t->n_gammas = (uint16_t)n;
    for (int i = 0; i < n; i++)
        f->t->gamma[i] = (adf_truth_gamma){.e0 = e[i], .e = e[i], .dir = {0, 0, 1}, .flags = ADF_TRUTH_ABSORBED};
    ck_assert_int_eq(adf_truth_write(&f->w, event, 1000u * event, f->t), ADF_OK);
}

/* A crystal of event `event` that measured e0 keV. */
static void put_psa(built_file *f, uint32_t event, uint16_t crystal, float e0)
{
    memset(f->p, 0, sizeof *f->p);
    f->p->crystal_id = crystal;
    f->p->e0 = e0;
    ck_assert_int_eq(adf_psa_write(&f->w, event, 1000u * event, f->p), ADF_OK);
}

/* The tracker's answer for event `event`: n γ rays of energies e[]. */
static void put_tracked(built_file *f, uint32_t event, int n, const float *e)
{
    memset(f->g, 0, sizeof *f->g);
    f->g->n_gammas = (uint16_t)n;
    for (int i = 0; i < n; i++)
        f->g->gamma[i] = (adf_gamma){.e = e[i], .e_dc = e[i], .n_points = 1, .n_crystals = 1};
    ck_assert_int_eq(adf_tracked_write(&f->w, event, 1000u * event, f->g), ADF_OK);
}

/* A 60Co decay in each event: 1173.228 and 1332.492 keV, each caught whole by one crystal and tracked. */
static void write_cobalt(const char *path, int events)
{
    static const float co60[2] = {1173.228f, 1332.492f};
    built_file f;
    begin_file(&f);
    for (uint32_t e = 0; e < (uint32_t)events; e++) {
        put_truth(&f, e, 2, co60);
        put_psa(&f, e, (uint16_t)(e % 7), co60[0]);
        put_psa(&f, e, (uint16_t)(7 + e % 5), co60[1]);
        put_tracked(&f, e, 2, co60);
    }
    end_file(&f, path);
}

/* Efficiency is per emitted γ ray: a cascade of two, both tracked, is 100 % for each, not 200 %. */
START_TEST(a_cascade_is_measured_per_emitted_gamma)
{
    write_cobalt(at("co60.adf"), 200);
    ana_summary s;
    char err[1024], title[160];
    ana_summary_options o = {.window = 0};
    ck_assert_msg(ana_summary_compute(at("co60.adf"), &o, &s, err, sizeof err) == ANA_OK, "%s", err);
    ck_assert_str_eq(s.source, "60Co");
    ck_assert_int_eq(s.n_lines, 2);
    ck_assert_uint_eq(s.gammas_emitted, 400);
    ck_assert_uint_eq(s.multiplicity[2], 200);
    ck_assert_uint_eq(s.crystals, 12);
    for (int i = 0; i < 2; i++) {
        ck_assert_uint_eq(s.line[i].emitted, 200);
        for (int k = ANA_SPEC_TRACKED; k <= ANA_SPEC_CRYSTAL; k++) {
            ck_assert_double_eq_tol(s.line[i].peak[k].area, 200, 1e-9);
            ck_assert_double_eq_tol(s.line[i].peak[k].efficiency, 1.0, 1e-9);
            ck_assert_double_eq_tol(s.line[i].peak[k].centroid, s.line[i].e, 1e-6);
        }
        ck_assert_double_eq_tol(s.line[i].peak[ANA_SPEC_SUM].area, 0, 1e-9); /* the sums lie at 2505.7 */
    }
    /* the sum spectrum reaches the sum peak: the old one stopped at 1.1 x 1332.5 + 50 keV */
    ck_assert_uint_ge(s.n_bins, 2506);
    ck_assert_uint_eq(s.spectrum[ANA_SPEC_SUM][2505], 200);
    ck_assert_uint_eq(s.sum_events, 200);
    ck_assert_uint_eq(s.sum_full, 200);
    ana_summary_title(&s, title, sizeof title);
    ck_assert_str_eq(title, "60Co, 12 crystals, 200 events");
    ana_summary_free(&s);
    const char *args[] = {"summary", at("co60.adf"), NULL};
    nw_result r;
    ck_assert_int_eq(nw_run(&r, args, NULL), 0);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "   1173.228        200 |    1173.23   ") != NULL, "%s", r.out);
    ck_assert_msg(strstr(r.out, "200 100.00% |") != NULL, "%s", r.out);
    ck_assert_msg(strstr(r.out, "peak-to-total (the measured lines' areas over all entries): tracked 100.0 % of 400")
                      != NULL, "%s", r.out);
}
END_TEST

/* A file without any narwhal:truth frame says so, and its empty vectors are not sorted (qsort's
 * pointer may not be NULL, even for no elements: the sanitizer build aborted here). */
START_TEST(a_file_without_truth_says_so)
{
    static const float e[1] = {661.657f};
    built_file f;
    begin_file(&f);
    ck_assert_int_eq(adf_eof_write(&f.w, 0, 0, &(adf_eof){0, 0}), ADF_OK);
    end_file(&f, at("eof-only.adf"));
    begin_file(&f);
    for (uint32_t k = 0; k < 10; k++) {
        put_psa(&f, k, 3, e[0]);
        put_tracked(&f, k, 1, e);
    }
    end_file(&f, at("no-truth.adf"));
    static const char *const files[] = {"eof-only.adf", "no-truth.adf"};
    for (int i = 0; i < 2; i++) {
        const char *args[] = {"summary", at(files[i]), "--plots", at("plots"), NULL};
        nw_result r;
        ck_assert_int_eq(nw_run(&r, args, NULL), 0);
        ck_assert_msg(r.status == 0, "%s: exit %d: %s", files[i], r.status, r.err);
        ck_assert_msg(strstr(r.out, "this file has no simulation truth") != NULL, "%s", r.out);
        ck_assert_msg(strstr(r.out, "matched a true deposit") == NULL, "%s", r.out);
    }
    ana_summary s;
    char err[1024];
    ana_summary_options o = {.window = 0};
    ck_assert_msg(ana_summary_compute(at("no-truth.adf"), &o, &s, err, sizeof err) == ANA_OK, "%s", err);
    ck_assert_uint_eq(s.truth, 0);
    ck_assert_uint_eq(s.total[ANA_SPEC_TRACKED], 10);
    ck_assert_uint_eq(s.spectrum[ANA_SPEC_CRYSTAL][661], 10);
    ana_summary_free(&s);
}
END_TEST

/* Energies that are not finite or are negative are left out of the spectra, counted, and the
 * first frame named; a finite energy above the spectra's cap is counted, not binned. */
START_TEST(bad_energies_are_rejected_and_large_ones_capped)
{
    static const float line[1] = {661.657f}, bad[3] = {NAN, INFINITY, 30000.0f};
    built_file f;
    begin_file(&f);
    for (uint32_t k = 0; k < 4; k++) {
        put_truth(&f, k, 1, line);
        put_psa(&f, k, 0, k == 1 ? -5.0f : line[0]);
        put_tracked(&f, k, k == 2 ? 3 : 1, k == 2 ? bad : line);
    }
    end_file(&f, at("bad.adf"));
    ana_summary s;
    char err[1024];
    ana_summary_options o = {.window = 0};
    ck_assert_msg(ana_summary_compute(at("bad.adf"), &o, &s, err, sizeof err) == ANA_OK, "%s", err);
    ck_assert_uint_eq(s.rejected[ANA_SPEC_CRYSTAL], 1);
    ck_assert_uint_eq(s.rejected[ANA_SPEC_TRACKED], 2);
    ck_assert_msg(strstr(s.first_rejected, "the data:psa frame of event 1 at offset ") != NULL &&
                      strstr(s.first_rejected, ": core energy -5 keV") != NULL, "%s", s.first_rejected);
    ck_assert_uint_eq(s.total[ANA_SPEC_CRYSTAL], 3);
    ck_assert_uint_eq(s.total[ANA_SPEC_TRACKED], 4); /* three lines and the 30 MeV one */
    ck_assert_uint_eq(s.n_bins, (unsigned)ANA_SUMMARY_SPECTRUM_KEV);
    ck_assert_uint_eq(s.beyond[ANA_SPEC_TRACKED], 1);
    ck_assert_double_eq_tol(s.highest, 30000, 1e-3);
    ana_summary_free(&s);
    const char *args[] = {"summary", at("bad.adf"), NULL};
    nw_result r;
    ck_assert_int_eq(nw_run(&r, args, NULL), 0);
    ck_assert_msg(strstr(r.out, "capped at 20000 keV: 1 entries above it") != NULL, "%s", r.out);
    ck_assert_msg(strstr(r.out, "rejected: 3 energies that are not finite or are negative") != NULL, "%s", r.out);
}
END_TEST

/* ---- the gnuplot runner ------------------------------------------------------------ */

static int gnuplot_on_path(void)
{
    const char *path = getenv("PATH");
    char file[PATH_MAX];
    for (const char *d = path ? path : ""; *d;) {
        size_t n = strcspn(d, ":");
        snprintf(file, sizeof file, "%.*s/gnuplot", (int)n, n ? d : ".");
        if (access(file, X_OK) == 0)
            return 1;
        d += n + (d[n] == ':');
    }
    return 0;
}

/* A stand-in gnuplot first on the PATH: prints its directory, copies its
 * standard input to its standard output, and exits with $FAKE_EXIT. */
static void fake_gnuplot(void)
{
    char path[2 * PATH_MAX];
    ck_assert_int_eq(mkdir(at("bin"), 0700), 0);
    tk_write_text(at("bin/gnuplot"), "#!/bin/sh\npwd -P\ncat\nexit \"${FAKE_EXIT:-0}\"\n");
    ck_assert_int_eq(chmod(at("bin/gnuplot"), 0700), 0);
    snprintf(path, sizeof path, "%s:/usr/bin:/bin", at("bin"));
    ck_assert_int_eq(setenv("PATH", path, 1), 0);
}

/* The script in a regular file, at its start. */
static int script_fd(const char *text)
{
    tk_write_text(at("script.gp"), text);
    int fd = open(at("script.gp"), O_RDONLY);
    ck_assert_int_ge(fd, 0);
    return fd;
}

START_TEST(runner_gives_gnuplot_the_script_the_output_and_the_directory_without_a_shell)
{
    fake_gnuplot();
    char dir[PATH_MAX + 64], real[PATH_MAX], expect[2 * PATH_MAX], msg[512];
    snprintf(dir, sizeof dir, "%s", at(AWKWARD));
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    ck_assert_ptr_nonnull(realpath(dir, real));
    int in = script_fd("plot 'data.csv'\n"), out = open(at("out.png"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(out, 0);
    ck_assert_msg(ana_gnuplot_run(in, out, dir, msg, sizeof msg) == ANA_OK, "%s", msg);
    close(in);
    close(out);
    char got[2 * PATH_MAX];
    ck_assert(tk_read_text(at("out.png"), got, sizeof got));
    snprintf(expect, sizeof expect, "%s\nplot 'data.csv'\n", real);
    ck_assert_str_eq(got, expect);
}
END_TEST

START_TEST(runner_reports_a_failing_gnuplot)
{
    fake_gnuplot();
    setenv("FAKE_EXIT", "3", 1);
    char msg[512];
    int in = script_fd("plot x\n"), out = open(at("out.png"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_eq(ana_gnuplot_run(in, out, NULL, msg, sizeof msg), ANA_E_PLOT);
    ck_assert_msg(strstr(msg, "gnuplot failed (exit 3") != NULL, "%s", msg);
    close(in);
    close(out);
}
END_TEST

START_TEST(runner_says_gnuplot_is_missing)
{
    ck_assert_int_eq(mkdir(at("empty"), 0700), 0);
    ck_assert_int_eq(setenv("PATH", at("empty"), 1), 0);
    char msg[512];
    int in = script_fd("plot x\n"), out = open(at("out.png"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    /* with a directory too: the child's chdir must not pass for a missing gnuplot */
    ck_assert_int_eq(ana_gnuplot_run(in, out, tmp, msg, sizeof msg), ANA_E_NO_GNUPLOT);
    ck_assert_str_eq(msg, "gnuplot is not installed (apt-get install gnuplot-nox)");
    close(in);
    close(out);
}
END_TEST

START_TEST(runner_names_a_directory_it_cannot_enter)
{
    fake_gnuplot();
    char msg[512];
    int in = script_fd("plot x\n"), out = open(at("out.png"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_eq(ana_gnuplot_run(in, out, at("no such dir"), msg, sizeof msg), ANA_E_PLOT);
    ck_assert_msg(strstr(msg, "no such dir: cannot run gnuplot there") != NULL, "%s", msg);
    close(in);
    close(out);
}
END_TEST

/* The summary's plots, by the real gnuplot, in a directory whose name has a
 * quote, a double quote, blanks and a '$' (the old runner refused quotes). */
START_TEST(summary_plots_in_an_awkward_directory)
{
    write_file(at("good.adf"), LINE_KEV);
    char plots[PATH_MAX + 64];
    snprintf(plots, sizeof plots, "%s/plots", at(AWKWARD));
    const char *args[] = {"summary", at("good.adf"), "--plots", plots, NULL};
    nw_result r;
    ck_assert_int_eq(nw_run(&r, args, NULL), 0);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert(tk_exists(tk_path(plots, "spectra.csv")));
    ck_assert(tk_exists(tk_path(plots, "position.gp")));
    if (!gnuplot_on_path()) {
        ck_assert_ptr_nonnull(strstr(r.out, "gnuplot is not installed"));
        TK_SKIP("gnuplot is not installed: the PNGs are not drawn (the CSV files and scripts are checked)");
    }
    static const char *const pngs[] = {"spectra.png", "position.png"};
    for (int i = 0; i < 2; i++) {
        size_t n;
        uint8_t *png = tk_slurp(tk_path(plots, pngs[i]), &n);
        ck_assert_msg(png != NULL, "no %s; summary said:\n%s\n%s", pngs[i], r.out, r.err);
        ck_assert_uint_gt(n, 1000);
        ck_assert_mem_eq(png, "\x89PNG\r\n\x1a\n", 8);
        free(png);
    }
    ck_assert_ptr_nonnull(strstr(r.out, "/spectra.png (tracked against untracked)"));
}
END_TEST

START_TEST(summary_without_gnuplot_keeps_the_data_and_says_so)
{
    write_file(at("good.adf"), LINE_KEV);
    ck_assert_int_eq(mkdir(at("empty"), 0700), 0);
    char path_env[PATH_MAX + 8];
    snprintf(path_env, sizeof path_env, "PATH=%s", at("empty"));
    const char *env[] = {path_env, NULL};
    const char *args[] = {"summary", at("good.adf"), "--plots", at("plots"), NULL};
    nw_result r;
    ck_assert_int_eq(nw_run(&r, args, env), 0);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "(gnuplot is not installed (apt-get install gnuplot-nox): run them in that "
                                "directory where there is one)") != NULL, "%s", r.out);
    ck_assert(tk_exists(at("plots/spectra.gp")));
    ck_assert(!tk_exists(at("plots/spectra.png"))); /* no empty picture left behind */
}
END_TEST

static Suite *analysis_suite(void)
{
    Suite *s = suite_create("analysis");
    TCase *tc = tcase_create("summary");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_truth_frame_claiming_5e9_keV_is_named_and_ignored);
    tcase_add_test(tc, a_truth_frame_claiming_nan_or_a_negative_energy_is_ignored);
    tcase_add_test(tc, summary_plots_of_a_file_with_a_corrupt_frame_stay_small);
    tcase_add_test(tc, a_cascade_is_measured_per_emitted_gamma);
    tcase_add_test(tc, a_file_without_truth_says_so);
    tcase_add_test(tc, bad_energies_are_rejected_and_large_ones_capped);
    tcase_add_test(tc, summary_plots_in_an_awkward_directory);
    tcase_add_test(tc, summary_without_gnuplot_keeps_the_data_and_says_so);
    suite_add_tcase(s, tc);
    tc = tcase_create("gnuplot");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, runner_gives_gnuplot_the_script_the_output_and_the_directory_without_a_shell);
    tcase_add_test(tc, runner_reports_a_failing_gnuplot);
    tcase_add_test(tc, runner_says_gnuplot_is_missing);
    tcase_add_test(tc, runner_names_a_directory_it_cannot_enter);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(analysis_suite()); }

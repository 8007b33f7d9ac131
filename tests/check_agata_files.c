/* check_agata_files.c: the chain's AGATA-readable file, read back by tests/agata_reader (AGATA's layouts, not adf/): every frame known, every value libadf's; its Narwhal file holds the rest; the writer's Keys and OtherFile; the summary of the pair. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adf.h"
#include "agata_reader.h"
#include "narwhal_exec.h"
#include "summary.h"
#include "testkit.h"

enum { EVENTS = 150, MKADF_EVENTS = 20 };

static char tmp[PATH_MAX];
static char not_ready[4 * PATH_MAX]; /* why the chain did not run ("" when it did) */
static char writer_log[NW_OUTPUT_MAX];
static nw_result result; /* large: not on the stack */

/* tmp/NAME (tk_path: a small ring of buffers). */
static const char *at(const char *name) { return tk_path(tmp, name); }

/* ---- the chain: full_chain.xml on a coarse basis, writing the pair --------------------------- */

static void write_chain_confs(void)
{
    ck_assert_int_eq(mkdir(at("conf"), 0700), 0);
    tk_write_textf(at("conf/Generator.conf"),
                   "Basis %s\nSeed 11\nEvents %d\nSource lines\nLines 661.657 1 1332.492 1\nRate 10000\n"
                   "Output crystal truth\n", at("coarse.basis"), EVENTS);
    tk_write_textf(at("conf/PSA.conf"), "Basis %s\nDevice cpu\n", at("coarse.basis"));
    tk_write_text(at("conf/Tracker.conf"), "KeepInput true\nDevice cpu\n");
    tk_write_textf(at("conf/Histo.conf"), "OutputDir %s\nDevice cpu\nFormats csv\n"
                   "Histogram gamma tracked.e sum 2048 0 2048\n", at("histo"));
    /* the shipped chain's choice (topologies/conf/full_chain/ADFWriter.conf), into tmp */
    tk_write_textf(at("conf/ADFWriter.conf"), "File %s\nKeys data:psa event:data:psa\nOtherFile beside\n",
                   at("out.adf"));
}

static void setup(void)
{
    tk_make_tmpdir(tmp, sizeof tmp, "check_agata_files");
    not_ready[0] = '\0';
    int basis = nw_coarse_basis(at("coarse.basis"), not_ready, sizeof not_ready);
    ck_assert_msg(basis <= 0, "%s", not_ready);
    if (basis < 0)
        return;
    write_chain_confs();
    char conf[2 * PATH_MAX];
    snprintf(conf, sizeof conf, "%s:topologies/conf", at("conf"));
    const char *args[] = {"run", "topologies/full_chain.xml", "--strict", "--conf", conf, "--report",
                          at("report.tsv"), NULL};
    ck_assert_int_eq(nw_run_timed(&result, args, NULL, 300, 0, 0), 0);
    ck_assert_msg(result.status == 0, "narwhal run exited %d:\n%s", result.status, result.err);
    snprintf(writer_log, sizeof writer_log, "%s", result.err);
}

static void teardown(void) { tk_remove_tree(tmp); }

#define NEED_CHAIN()                                                                               \
    do {                                                                                           \
        if (not_ready[0])                                                                          \
            TK_SKIP("the chain was not run: %s", not_ready);                                       \
    } while (0)

static long long file_size(const char *path)
{
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    return (long long)st.st_size;
}

/* Frames of a file by key id, top level: id -> count for the ids asked, and all. */
typedef struct tally {
    unsigned long long frames, truth, tracked, eof, event_psa, psa, other;
    uint32_t last_id;
} tally;

static void count(const char *path, tally *t)
{
    size_t n;
    uint8_t *buf = tk_read_file(path, &n);
    adf_iter it;
    adf_frame f;
    int rc;
    *t = (tally){0};
    adf_iter_init(&it, buf, n);
    while ((rc = adf_iter_next(&it, &f)) > 0) {
        t->frames++;
        t->last_id = f.key.id;
        t->truth += f.key.id == ADF_ID_NW_TRUTH;
        t->tracked += f.key.id == ADF_ID_NW_TRACKED;
        t->eof += f.key.id == ADF_ID_META_EOF;
        t->event_psa += f.key.id == ADF_ID_EVENT_DATA_PSA;
        t->psa += f.key.id == ADF_ID_DATA_PSA;
    }
    ck_assert_msg(rc == 0, "%s does not validate: %s", path, adf_strerror(rc));
    t->other = t->frames - t->truth - t->tracked - t->eof - t->event_psa - t->psa;
    free(buf);
}

/* One data:psa as the independent reader has it against libadf's decoding of the same frame. */
static void same_psa(const agr_psa *a, const adf_frame *f, size_t i)
{
    adf_psa p;
    ck_assert_int_eq(adf_psa_read(f, &p), ADF_OK);
    ck_assert_msg(a->event == f->key.event && a->timestamp == f->key.timestamp, "data:psa %zu: key differs", i);
    ck_assert_uint_eq(a->crystal, p.crystal_id);
    ck_assert_uint_eq(a->status, p.status);
    ck_assert_uint_eq(a->psa_status, p.psa_status);
    ck_assert_uint_eq(a->n_hits, p.n_hits);
    const float ga[] = {a->e0, a->e1, a->t0, a->t1}, gp[] = {p.e0, p.e1, p.t0, p.t1};
    ck_assert_msg(memcmp(ga, gp, sizeof ga) == 0, "data:psa %zu: e0, e1, t0, t1 differ", i);
    for (unsigned h = 0; h < p.n_hits; h++) {
        const agr_hit *x = &a->hit[h];
        const adf_psa_hit *y = &p.hit[h];
        ck_assert_uint_eq(x->status, y->status);
        ck_assert_int_eq(x->segment, y->segment);
        ck_assert_int_eq(x->crystal, y->crystal_id);
        const float va[] = {x->x, x->y, x->z, x->e, x->t, x->t_cc_e, x->t_cc_h, x->t_sg_e, x->t_sg_h};
        const float vp[] = {y->x, y->y, y->z, y->e, y->t, y->t_cc_e, y->t_cc_h, y->t_sg_e, y->t_sg_h};
        ck_assert_msg(memcmp(va, vp, sizeof va) == 0, "data:psa %zu, hit %u: a value differs", i, h);
    }
}

START_TEST(agata_file_is_read_whole_with_libadfs_values)
{
    NEED_CHAIN();
    agr_file a;
    ck_assert_msg(agr_read(at("out.adf"), &a) == AGR_WHOLE, "the AGATA reader stopped: %s", a.why);
    size_t n;
    uint8_t *buf = tk_read_file(at("out.adf"), &n);
    adf_iter it, sub;
    adf_frame f, m;
    size_t frames = 0, events = 0, psa = 0;
    adf_iter_init(&it, buf, n);
    while (adf_iter_next(&it, &f) > 0) {
        frames++;
        ck_assert_msg(f.key.id == ADF_ID_EVENT_DATA_PSA, "frame %zu: 0x%08x in the AGATA file", frames, f.key.id);
        ck_assert_int_eq(adf_iter_sub(&sub, &f), ADF_OK);
        while (adf_iter_next(&sub, &m) > 0) {
            ck_assert_uint_lt(psa, a.n_psa);
            ck_assert_int_eq(a.psa[psa].in_event, (long)events);
            same_psa(&a.psa[psa], &m, psa);
            psa++;
        }
        events++;
    }
    ck_assert_uint_eq(a.frames, frames);
    ck_assert_uint_eq(a.events, events);
    ck_assert_uint_eq(a.n_psa, psa);
    ck_assert_uint_gt(events, EVENTS / 2);
    free(buf);
    agr_free(&a);
}
END_TEST

START_TEST(narwhal_file_holds_the_rest_and_stops_an_agata_reader)
{
    NEED_CHAIN();
    tally d, o;
    count(at("out.adf"), &d);
    count(at("out.narwhal.adf"), &o);
    ck_assert_uint_eq(d.frames, d.event_psa);
    ck_assert_uint_eq(o.truth, EVENTS);
    ck_assert_uint_eq(o.tracked, d.event_psa); /* KeepInput: one tracked frame per event */
    ck_assert_uint_eq(o.eof, 1);
    ck_assert_uint_eq(o.last_id, ADF_ID_META_EOF);
    ck_assert_uint_eq(o.psa + o.event_psa + o.other, 0);
    /* what the writer says of its run: both files, and what went to the second by key id */
    char line[2048];
    snprintf(line, sizeof line,
             "[ADFWriter] run 1: wrote %llu frames (%lld bytes) to %s and %llu frames (%lld bytes) that Keys "
             "leaves out to %s (narwhal:truth %d, narwhal:tracked %llu, meta:eof 1), ending with meta:eof "
             "(the data is complete)\n",
             d.frames, file_size(at("out.adf")), at("out.adf"), o.frames,
             file_size(at("out.narwhal.adf")), at("out.narwhal.adf"), EVENTS, o.tracked);
    ck_assert_msg(strstr(writer_log, line), "no line\n%s\nin the log:\n%s", line, writer_log);
    /* the Narwhal file begins with a narwhal:truth: an AGATA reader goes no further */
    agr_file a;
    ck_assert_int_eq(agr_read(at("out.narwhal.adf"), &a), AGR_UNKNOWN);
    ck_assert_uint_eq(a.stop_id, ADF_ID_NW_TRUTH);
    ck_assert_uint_eq(a.stop_offset, 0);
    ck_assert_uint_eq(a.frames, 0);
    agr_free(&a);
}
END_TEST

static void summarise(ana_summary *s, const char *file, const char *narwhal)
{
    char err[1024];
    ana_summary_options o = {.report = at("report.tsv"), .narwhal = narwhal};
    ck_assert_msg(ana_summary_compute(file, &o, s, err, sizeof err) == ANA_OK, "summary: %s", err);
}

START_TEST(summary_reads_the_pair)
{
    NEED_CHAIN();
    ana_summary s;
    summarise(&s, at("out.adf"), NULL);
    ck_assert_str_eq(s.narwhal_file, at("out.narwhal.adf"));
    ck_assert_uint_eq(s.truth, EVENTS);
    ck_assert_uint_eq(s.events, EVENTS);
    ck_assert_uint_gt(s.built, 0);
    ck_assert_uint_eq(s.tracked, s.built);
    ck_assert_uint_eq(s.unpaired, 0);
    ck_assert_uint_eq(s.ev_untracked, 0);
    ck_assert_uint_eq(s.eof, 1);
    ck_assert_int_eq(s.ends_with_eof, 1);
    ck_assert_uint_eq(s.writer_frames, s.frames);
    ck_assert_uint_eq(s.frames, s.truth + s.built + s.tracked + s.eof);
    for (int i = 0; i < s.n_checks; i++)
        ck_assert_msg(s.check[i].ok, "check %d failed: %s", i, s.check[i].text);
    ck_assert_int_eq(s.balanced, 1);
    unsigned long long tracked = s.ev_tracked, frames = s.frames;
    ana_summary_free(&s);

    /* --narwhal names the second file wherever it is */
    ck_assert_int_eq(rename(at("out.narwhal.adf"), at("elsewhere.adf")), 0);
    summarise(&s, at("out.adf"), at("elsewhere.adf"));
    ck_assert_str_eq(s.narwhal_file, at("elsewhere.adf"));
    ck_assert_uint_eq(s.ev_tracked, tracked);
    ck_assert_uint_eq(s.frames, frames);
    ana_summary_free(&s);

    /* without it, the data file alone: no truth, and the summary says whose file it read */
    summarise(&s, at("out.adf"), NULL);
    ck_assert_str_eq(s.narwhal_file, "");
    ck_assert_uint_eq(s.truth, 0);
    ck_assert_uint_eq(s.tracked, 0);
    ana_summary_free(&s);
    ck_assert_int_eq(rename(at("elsewhere.adf"), at("out.narwhal.adf")), 0);
}
END_TEST

/* ---- the writer's Keys and OtherFile, on mkadf's stream through replay.xml ------------------- */

/* Runs replay.xml on mkadf's stream with the writer's settings `writer`; the exit status. */
static int replay(const char *writer, const char *dir)
{
    const char *mkadf = nw_build_path("/tests/mkadf");
    char cmd[3 * PATH_MAX], conf[PATH_MAX + 16];
    if (!tk_exists(at("in.adf"))) {
        snprintf(cmd, sizeof cmd, "%s %s %d > /dev/null", mkadf, at("in.adf"), MKADF_EVENTS);
        ck_assert_msg(system(cmd) == 0, "mkadf failed: %s", cmd);
    }
    snprintf(conf, sizeof conf, "%s", at(dir));
    ck_assert_int_eq(mkdir(conf, 0700), 0);
    tk_write_textf(tk_path(conf, "ADFReader.conf"), "File %s\n", at("in.adf"));
    tk_write_text(tk_path(conf, "ADFWriter.conf"), writer);
    const char *args[] = {"run", "topologies/replay.xml", "--conf", conf, NULL};
    ck_assert_int_eq(nw_run_timed(&result, args, NULL, 60, 0, 0), 0);
    return result.status;
}

/* The frames of in.adf, each in `kept` or in `rest` (in order in each), with the ids in
 * `left` (a 0-ended list) exactly in rest; the last meta:eof is the reader's own. */
static void split_as_asked(const char *kept, const char *rest, const uint32_t *left)
{
    size_t n[3];
    uint8_t *buf[3] = {tk_read_file(at("in.adf"), &n[0]), tk_read_file(kept, &n[1]),
                       rest ? tk_read_file(rest, &n[2]) : NULL};
    adf_iter it[3];
    adf_frame f, g;
    for (int i = 0; i < 3; i++)
        adf_iter_init(&it[i], buf[i], buf[i] ? n[i] : 0);
    while (adf_iter_next(&it[0], &f) > 0) {
        int out = 0;
        for (const uint32_t *id = left; *id; id++)
            out |= f.key.id == *id;
        if (out && !rest)
            continue;
        ck_assert_msg(adf_iter_next(&it[out ? 2 : 1], &g) > 0, "frame at %zu (0x%08x) is missing", f.offset,
                      f.key.id);
        ck_assert_uint_eq(g.key.id, f.key.id);
        ck_assert_uint_eq(g.key.event, f.key.event);
        if (f.key.id != ADF_ID_META_EOF)
            ck_assert_msg(g.key.length == f.key.length && memcmp(g.data, f.data, f.key.length) == 0,
                          "frame at %zu differs", f.offset);
    }
    ck_assert_int_eq(adf_iter_next(&it[1], &g), 0);
    if (rest)
        ck_assert_int_eq(adf_iter_next(&it[2], &g), 0);
    for (int i = 0; i < 3; i++)
        free(buf[i]);
}

START_TEST(keys_with_minus_leave_frames_to_other_file)
{
    char writer[3 * PATH_MAX];
    snprintf(writer, sizeof writer, "File %s\nKeys all -narwhal:crystal -0x4E570105\nOtherFile %s\n",
             at("kept.adf"), at("rest.adf"));
    ck_assert_msg(replay(writer, "minus") == 0, "narwhal run exited %d:\n%s", result.status, result.err);
    const uint32_t left[] = {ADF_ID_NW_CRYSTAL, ADF_ID_NW_TRACKED, 0};
    split_as_asked(at("kept.adf"), at("rest.adf"), left);
    ck_assert_ptr_nonnull(strstr(result.err, "that Keys leaves out to "));
    ck_assert_ptr_nonnull(strstr(result.err, "(narwhal:crystal "));
    ck_assert_ptr_null(strstr(result.err, "warning"));
}
END_TEST

START_TEST(frames_left_without_other_file_are_counted_in_a_warning)
{
    char writer[2 * PATH_MAX];
    snprintf(writer, sizeof writer, "File %s\nKeys data:psa event:data:psa meta:eof\n", at("psa.adf"));
    ck_assert_msg(replay(writer, "none") == 0, "narwhal run exited %d:\n%s", result.status, result.err);
    const uint32_t left[] = {ADF_ID_NW_CRYSTAL, ADF_ID_NW_TRACKED, 0};
    split_as_asked(at("psa.adf"), NULL, left);
    tally t;
    count(at("in.adf"), &t);
    size_t n;
    uint8_t *buf = tk_read_file(at("in.adf"), &n);
    unsigned long long crystals = 0, bytes = 0;
    adf_iter it;
    adf_frame f;
    adf_iter_init(&it, buf, n);
    while (adf_iter_next(&it, &f) > 0)
        if (f.key.id == ADF_ID_NW_CRYSTAL || f.key.id == ADF_ID_NW_TRACKED) {
            crystals += f.key.id == ADF_ID_NW_CRYSTAL;
            bytes += f.key.length;
        }
    free(buf);
    char line[512];
    snprintf(line, sizeof line, "[ADFWriter] warning: run 1: %llu frames (%llu bytes) not written: Keys leaves "
             "them out and OtherFile is none: narwhal:crystal %llu, narwhal:tracked %llu\n",
             crystals + t.tracked, bytes, crystals, t.tracked);
    ck_assert_msg(strstr(result.err, line), "no line\n%s\nin the log:\n%s", line, result.err);
}
END_TEST

/* Settings the writer refuses in process_config, and the words that say why. */
START_TEST(bad_keys_and_other_files_are_refused_by_name)
{
    static const struct {
        const char *settings, *says; /* formats: %s is File */
    } bad[] = {
        {"Keys data:psa data:nothing\n", ":2: key 'Keys': value 'data:nothing': neither a key name"},
        {"Keys data:psa -narwhal:truth\n", ":2: key 'Keys': value '-narwhal:truth': Keys lists the frames"},
        {"Keys 0x1234567890\n", ":2: key 'Keys': value '0x1234567890': neither"},
        {"OtherFile beside\n", "key 'OtherFile': value 'beside': OtherFile gets the frames Keys leaves out, "
                               "and Keys leaves none out"},
        {"Keys -meta:eof\nOtherFile %s\n", "key 'OtherFile': value '%s': the same file as File"},
    };
    char file[PATH_MAX];
    snprintf(file, sizeof file, "%s", at("never.adf")); /* at()'s buffers are reused */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char writer[3 * PATH_MAX], dir[32], settings[PATH_MAX + 64], says[PATH_MAX + 256];
        snprintf(settings, sizeof settings, bad[i].settings, file);
        snprintf(says, sizeof says, bad[i].says, file);
        snprintf(writer, sizeof writer, "File %s\n%s", file, settings);
        snprintf(dir, sizeof dir, "bad%zu", i);
        ck_assert_msg(replay(writer, dir) != 0, "settings %zu were accepted:\n%s", i, settings);
        ck_assert_msg(strstr(result.err, says), "settings %zu: no '%s' in:\n%s", i, says, result.err);
        ck_assert_msg(!tk_exists(file), "settings %zu: %s was written:\n%s", i, file, result.err);
    }
}
END_TEST

static Suite *agata_suite(void)
{
    Suite *s = suite_create("agata_files");
    TCase *tc = tcase_create("pair");
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, agata_file_is_read_whole_with_libadfs_values);
    tcase_add_test(tc, narwhal_file_holds_the_rest_and_stops_an_agata_reader);
    tcase_add_test(tc, summary_reads_the_pair);
    tcase_add_test(tc, keys_with_minus_leave_frames_to_other_file);
    tcase_add_test(tc, frames_left_without_other_file_are_counted_in_a_warning);
    tcase_add_test(tc, bad_keys_and_other_files_are_refused_by_name);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(agata_suite()); }

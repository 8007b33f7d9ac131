/* check_shipped.c: every shipped topology but full_chain.xml (check_chain's) runs under `narwhal run --strict`, sequential and pipelined, and loses nothing. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adf.h"
#include "narwhal_exec.h"
#include "testkit.h"

/* Inputs sized so that the data take several blocks of the topologies' buffers: a generator
 * event is about 8 kB, so 600 of them pass 4 MB (simulate.xml's and psa.xml's <size>);
 * mkadf's 200 events are 4.6 MB, five blocks of replay.xml's and histo.xml's 1 MB;
 * listing1's 300 events are about 2.4 MB, three of its 1_000_000 bytes. */
enum { SIM_EVENTS = 600, ADF_EVENTS = 200, LISTING1_EVENTS = 300 };

static char tmp[PATH_MAX];
/* Why the inputs could not be made ("" when they were).  A tool that is not built makes the
 * tests that need it skip (basisgen_missing, mkadf_missing); a tool or a shipped topology that fails makes them fail. */
static char no_basis[4 * PATH_MAX], no_adf[4 * PATH_MAX], no_sim[NW_OUTPUT_MAX + 512];
static int basisgen_missing, mkadf_missing;

static nw_result result; /* 128 kB: not on the stack */

/* tmp/NAME (tk_path: a small ring of buffers). */
static const char *at(const char *name) { return tk_path(tmp, name); }

static const char *mode_name(int pipelined) { return pipelined ? "pipelined" : "sequential"; }

/* ---- configuration overlays --------------------------------------------------- */

/* Whether `set` ("Key value" lines) sets the key that starts `line` (after blanks). */
static int sets_key(const char *set, const char *line)
{
    line += strspn(line, " \t");
    size_t n = strcspn(line, " \t\r\n");
    for (const char *s = set; n && *s; s += strcspn(s, "\n"), s += *s == '\n') {
        size_t m = strcspn(s, " \t\r\n");
        if (m == n && strncmp(s, line, n) == 0)
            return 1;
    }
    return 0;
}

/* Writes DIR/<the file name of FROM>: the shipped file FROM without the lines of the keys
 * `set` sets, then `set`.  The shipped settings stay (frame layouts, sources, devices); only
 * paths into tmp and the size of the run change.  A key that appears twice is an error for
 * the actors, so every line of a key that `set` gives (Histogram, File) goes. */
static void derive_conf(const char *dir, const char *from, const char *set)
{
    FILE *in = fopen(from, "r");
    ck_assert_msg(in != NULL, "cannot read the shipped %s", from);
    const char *name = strrchr(from, '/') ? strrchr(from, '/') + 1 : from;
    char path[PATH_MAX + 256], line[4096];
    ck_assert_int_eq(mkdir(dir, 0700) == 0 || tk_exists(dir), 1);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *out = fopen(path, "w");
    ck_assert_msg(out != NULL, "cannot write %s", path);
    while (fgets(line, sizeof line, in))
        if (!sets_key(set, line))
            fputs(line, out);
    fprintf(out, "\n# check_shipped: the test's run\n%s", set);
    fclose(in);
    ck_assert_int_eq(fclose(out), 0);
}

/* The file a shipped topology STEM.xml reads: topologies/conf/STEM/FILE, else topologies/conf/FILE. */
static const char *shipped_conf(const char *stem, const char *file)
{
    static char path[2][PATH_MAX];
    static int next;
    char *p = path[next++ % 2];
    snprintf(p, sizeof path[0], "topologies/conf/%s/%s", stem, file);
    if (!tk_exists(p))
        snprintf(p, sizeof path[0], "topologies/conf/%s", file);
    return p;
}

/* tmp/STEM/conf, the overlay directory of topology STEM (made on first use). */
static const char *overlay(const char *stem)
{
    static char dir[PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s/%s", tmp, stem);
    ck_assert_int_eq(mkdir(dir, 0700) == 0 || tk_exists(dir), 1);
    snprintf(dir, sizeof dir, "%s/%s/conf", tmp, stem);
    return dir;
}

/* Derives FILE of topology STEM into its overlay with the lines of `fmt`. */
static void overlay_conf(const char *stem, const char *file, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void overlay_conf(const char *stem, const char *file, const char *fmt, ...)
{
    char set[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(set, sizeof set, fmt, ap);
    va_end(ap);
    derive_conf(overlay(stem), shipped_conf(stem, file), set);
}

/* tmp/STEM/NAME-MODE.EXT: a run's output, one per mode so that the two can be compared. */
static const char *output(const char *stem, const char *name, int pipelined, const char *ext)
{
    static char path[4][PATH_MAX + 128];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof path[0], "%s/%s/%s-%s%s", tmp, stem, name, mode_name(pipelined), ext);
    return p;
}

/* ---- running, and what the run report says ---------------------------------- */

/* The line of the report that starts with `prefix` (at a line start), or NULL. */
static const char *report_line(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
        if (strncmp(l, prefix, n) == 0)
            return l;
    return NULL;
}

/* FRAMES_IN and FRAMES_OUT of actor NAME (emulator/report.h). */
static void report_actor(const char *text, const char *name, unsigned long long *in, unsigned long long *out)
{
    char prefix[128];
    snprintf(prefix, sizeof prefix, "actor\t%s\t", name);
    const char *l = report_line(text, prefix);
    ck_assert_msg(l != NULL, "no actor '%s' in the report", name);
    ck_assert_int_eq(sscanf(l + strlen(prefix), "%*s\t%*u\t%llu\t%llu", in, out), 2);
}

/* The frames of key id that actor NAME emitted, top-level and inside composites (0: none). */
static void report_kind_counts(const char *text, const char *name, uint32_t id, unsigned long long *frames,
                               unsigned long long *inside)
{
    char prefix[128];
    *frames = *inside = 0;
    snprintf(prefix, sizeof prefix, "kind\t%s\t0x%08x\t", name, id);
    const char *l = report_line(text, prefix);
    if (l)
        ck_assert_int_eq(sscanf(l + strlen(prefix), "%*s\t%llu\t%llu", frames, inside), 2);
}

/* The top-level frames of key id that actor NAME emitted (0: none). */
static unsigned long long report_kind(const char *text, const char *name, uint32_t id)
{
    unsigned long long frames, inside;
    report_kind_counts(text, name, id, &frames, &inside);
    return frames;
}

/* The frames of key id inside composites that actor NAME emitted (0: none). */
static unsigned long long report_inside(const char *text, const char *name, uint32_t id)
{
    unsigned long long frames, inside;
    report_kind_counts(text, name, id, &frames, &inside);
    return inside;
}

/* Every file name under dir that ends in ".part" (a temporary left behind) fails the test. */
static void no_temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot list %s", dir);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        ck_assert_msg(n < 5 || strcmp(e->d_name + n - 5, ".part") != 0, "%s/%s left behind", dir, e->d_name);
    }
    closedir(d);
}

/* Runs narwhal with args (a `run ... --strict --report REPORT` line) and asserts what every
 * shipped topology must show under --strict: exit 0, no warning (no frame held at stop), a single run
 * ended by the end of the data (in-band: there is no end-of-data call), in the mode asked.
 * Returns the report's text (free it); *blocks: the producer's blocks that held data. */
static char *run_strict(const char *what, const char *const *args, const char *report, int pipelined,
                        unsigned *blocks)
{
    unlink(report);
    ck_assert_int_eq(nw_run_timed(&result, args, NULL, 120, 0, 0), 0);
    ck_assert_msg(!result.timed_out, "%s (%s): narwhal run --strict timed out:\n%s", what, mode_name(pipelined),
                  result.err);
    ck_assert_msg(result.status == 0, "%s (%s): narwhal run --strict exited %d:\n%s", what, mode_name(pipelined),
                  result.status, result.err);
    /* an actor's warning is something a user must act on (frames held at stop, say): none here */
    ck_assert_msg(strstr(result.err, "warning: ") == NULL, "%s (%s): a warning:\n%s", what, mode_name(pipelined),
                  result.err);
    char *text = (char *)tk_read_file(report, NULL);
    const char *l = report_line(text, "run\t");
    char mode[32], end[32];
    unsigned runs, strict;
    ck_assert_msg(l != NULL, "%s: no run line in %s", what, report);
    ck_assert_int_eq(sscanf(l, "run\t%31s\t%*u\t%*f\t%*f\t%31s\t%u\t%u\t%*u\t%u", mode, end, blocks, &runs,
                            &strict),
                     5);
    ck_assert_str_eq(mode, mode_name(pipelined));
    ck_assert_str_eq(end, "data");
    ck_assert_uint_eq(runs, 1);
    ck_assert_uint_eq(strict, 1);
    return text;
}

/* narwhal run topologies/STEM.xml --strict, its configuration the overlay, then the shipped
 * directories the topology reads without one (conf/STEM/ only where it exists). */
static char *run_topology(const char *stem, int pipelined, unsigned *blocks)
{
    char topology[PATH_MAX], conf[3 * PATH_MAX], own[PATH_MAX];
    snprintf(topology, sizeof topology, "topologies/%s.xml", stem);
    snprintf(own, sizeof own, "topologies/conf/%s", stem);
    snprintf(conf, sizeof conf, "%s%s%s:topologies/conf", overlay(stem), tk_exists(own) ? ":" : "",
             tk_exists(own) ? own : "");
    const char *report = output(stem, "report", pipelined, ".tsv");
    const char *args[] = {"run", topology, "--strict", "--conf", conf, "--report", report,
                          pipelined ? "--pipeline" : NULL, NULL};
    char *text = run_strict(topology, args, report, pipelined, blocks);
    no_temporaries(tk_path(tmp, stem));
    return text;
}

/* ---- what a file holds ------------------------------------------------------ */

typedef struct frame_key {
    uint32_t event;
    uint64_t timestamp;
    uint16_t crystal;
} frame_key;

typedef struct tally {
    unsigned long long frames, bytes; /* top-level */
    unsigned long long crystal, psa, tracked, truth, eof, events; /* top-level, by id (events: event:data:psa) */
    unsigned long long psa_in_events;  /* data:psa inside an event:data:psa */
    unsigned long long tracked_paired; /* data:tracked with the event and timestamp of the next event:data:psa
                                        * not yet tracked (KeepInput), in its file or its pair's data file */
    adf_key *event_keys;               /* of the event:data:psa frames, in order */
    size_t n_event_keys, next_tracked;
    unsigned long long hits, gammas;   /* in every data:psa, every data:tracked, members included */
    int eof_last;
    adf_eof eof_says; /* the last meta:eof's count of what came before it in its producer's stream */
    uint32_t key_id; /* the frames whose keys are kept (any depth), 0: none */
    frame_key *keys;
    size_t n_keys;
} tally;

static void keep_key(tally *t, const adf_frame *f)
{
    t->keys = realloc(t->keys, (t->n_keys + 1) * sizeof *t->keys);
    ck_assert_ptr_nonnull(t->keys);
    ck_assert_uint_ge(f->payload_size, 2);
    t->keys[t->n_keys++] = (frame_key){f->key.event, f->key.timestamp, adf_get_u16(f->payload)};
}

static void tally_frame(tally *t, const adf_frame *f)
{
    if (f->key.id == t->key_id)
        keep_key(t, f);
    if (f->key.id == ADF_ID_DATA_PSA) {
        static adf_psa p;
        ck_assert_int_eq(adf_psa_read(f, &p), ADF_OK);
        t->hits += p.n_hits;
    } else if (f->key.id == ADF_ID_NW_TRACKED) {
        static adf_tracked g;
        ck_assert_int_eq(adf_tracked_read(f, &g), ADF_OK);
        t->gammas += g.n_gammas;
    } else if (adf_id_is_composite(f->key.id)) {
        adf_iter sub;
        adf_frame m;
        int rc;
        ck_assert_int_eq(adf_iter_sub(&sub, f), ADF_OK);
        while ((rc = adf_iter_next(&sub, &m)) > 0) {
            t->psa_in_events += f->key.id == ADF_ID_EVENT_DATA_PSA && m.key.id == ADF_ID_DATA_PSA;
            tally_frame(t, &m);
        }
        ck_assert_int_eq(rc, 0);
    }
}

/* Counts the frames of the ADF file at path into t (t->key_id set by the caller). */
/* Each event:data:psa's key, and whether a data:tracked tracks the next one not yet tracked. */
static void pair_tracked(tally *t, const adf_frame *f)
{
    if (f->key.id == ADF_ID_EVENT_DATA_PSA) {
        t->event_keys = realloc(t->event_keys, (t->n_event_keys + 1) * sizeof *t->event_keys);
        ck_assert_ptr_nonnull(t->event_keys);
        t->event_keys[t->n_event_keys++] = f->key;
    } else if (f->key.id == ADF_ID_NW_TRACKED && t->next_tracked < t->n_event_keys) {
        const adf_key *e = &t->event_keys[t->next_tracked];
        if (e->event == f->key.event && e->timestamp == f->key.timestamp) {
            t->tracked_paired++;
            t->next_tracked++;
        }
    }
}

/* Adds a file's frames to t (for a pair: the data file, then its Narwhal file). */
static void count_frames(const char *path, tally *t)
{
    size_t size;
    uint8_t *buf = tk_read_file(path, &size);
    adf_iter it;
    adf_frame f;
    int rc;
    adf_iter_init(&it, buf, size);
    t->bytes += size;
    while ((rc = adf_iter_next(&it, &f)) > 0) {
        t->frames++;
        t->crystal += f.key.id == ADF_ID_NW_CRYSTAL;
        t->psa += f.key.id == ADF_ID_DATA_PSA;
        t->tracked += f.key.id == ADF_ID_NW_TRACKED;
        t->truth += f.key.id == ADF_ID_NW_TRUTH;
        t->events += f.key.id == ADF_ID_EVENT_DATA_PSA;
        t->eof += f.key.id == ADF_ID_META_EOF;
        if (f.key.id == ADF_ID_META_EOF)
            ck_assert_int_eq(adf_eof_read(&f, &t->eof_says), ADF_OK);
        t->eof_last = f.key.id == ADF_ID_META_EOF;
        pair_tracked(t, &f);
        tally_frame(t, &f);
    }
    ck_assert_msg(rc == 0, "%s: not whole ADF frames", path);
    free(buf);
}

/* The stream ends with its producer's meta:eof, once, last. */
static void tally_free(tally *t)
{
    free(t->keys);
    free(t->event_keys);
}

/* An AGATA-readable file and its Narwhal file (adf_narwhal_file) into t: the writer's OtherFile beside. */
static void count_pair(const char *path, tally *t)
{
    char *narwhal = adf_narwhal_file(path);
    ck_assert_ptr_nonnull(narwhal);
    count_frames(path, t);
    count_frames(narwhal, t);
    free(narwhal);
}

static void ends_with_one_eof(const char *path, const tally *t)
{
    ck_assert_msg(t->eof == 1, "%s: %llu meta:eof frames", path, t->eof);
    ck_assert_msg(t->eof_last, "%s: the meta:eof is not the last frame", path);
}

static int key_order(const void *a, const void *b)
{
    const frame_key *x = a, *y = b;
    if (x->timestamp != y->timestamp)
        return x->timestamp < y->timestamp ? -1 : 1;
    if (x->event != y->event)
        return x->event < y->event ? -1 : 1;
    return (x->crystal > y->crystal) - (x->crystal < y->crystal);
}

/* The two files hold the same bytes. */
static void same_bytes(const char *a, const char *b)
{
    size_t na, nb;
    uint8_t *x = tk_read_file(a, &na), *y = tk_read_file(b, &nb);
    ck_assert_msg(na == nb && memcmp(x, y, na) == 0, "%s (%zu bytes) and %s (%zu bytes) differ", a, na, b, nb);
    free(x);
    free(y);
}

/* The entries of a histo CSV file: the count column of every bin, underflow, overflow and nan. */
static unsigned long long csv_entries(const char *path)
{
    FILE *fp = fopen(path, "r");
    ck_assert_msg(fp != NULL, "%s was not written", path);
    char line[256];
    unsigned long long total = 0;
    ck_assert_ptr_nonnull(fgets(line, sizeof line, fp));
    ck_assert_str_eq(line, "bin,low,high,count\n");
    while (fgets(line, sizeof line, fp)) {
        const char *count = strrchr(line, ',');
        ck_assert_ptr_nonnull(count);
        total += strtoull(count + 1, NULL, 10);
    }
    fclose(fp);
    return total;
}

/* The histograms the overlays of histo.xml and histo_sink.xml ask for: one per kind of frame,
 * few bins, so that a run writes six small files where the shipped Histo.conf writes 230 MB. */
#define SMALL_HISTOGRAMS                                                                                           \
    "Formats spe csv\nPlot none\nHistogram core crystal.core sum 1024 0 8192\n"                                   \
    "Histogram hit psa.e sum 1024 0 4096\nHistogram gamma tracked.e sum 1024 0 4096\n"

/* Each histogram counted every entry of the input once: a crystal's core, a hit, a γ ray. */
static void histograms_count(const char *dir, const tally *in)
{
    ck_assert_uint_eq(csv_entries(tk_path(dir, "core.csv")), in->crystal);
    ck_assert_uint_eq(csv_entries(tk_path(dir, "hit.csv")), in->hits);
    ck_assert_uint_eq(csv_entries(tk_path(dir, "gamma.csv")), in->gammas);
    static const char *const spe[] = {"core.spe", "hit.spe", "gamma.spe"};
    for (size_t i = 0; i < 3; i++) {
        struct stat st;
        ck_assert_msg(stat(tk_path(dir, spe[i]), &st) == 0 && st.st_size > 1024 * 4, "%s/%s: missing or short", dir,
                      spe[i]);
    }
    no_temporaries(dir);
}

/* ---- the inputs, made once ---------------------------------------------------- */

/* A basis on a 6 mm grid with 2 mm fields, as check_chain's: seconds, where the default one
 * takes 20 s and 708 MB. */
static void make_basis(void)
{
    const char *basisgen = nw_build_path("/bin/basisgen");
    char cmd[3 * PATH_MAX];
    if (access(basisgen, X_OK) != 0) {
        snprintf(no_basis, sizeof no_basis, "%s is not built", basisgen);
        basisgen_missing = 1;
        return;
    }
    snprintf(cmd, sizeof cmd, "%s --quiet --geometry detector/geometry/agata.geo --grid 6 --field-grid 2 -o %s",
             basisgen, at("coarse.basis"));
    if (system(cmd) != 0)
        snprintf(no_basis, sizeof no_basis, "basisgen failed: %s", cmd);
}

/* mkadf's sample stream (data:crystal, data:psa, event:data:psa, data:tracked, meta:eof), as make run-replay makes it. */
static void make_adf(void)
{
    char count[16];
    snprintf(count, sizeof count, "%d", ADF_EVENTS);
    char *const argv[] = {(char *)nw_build_path("/tests/mkadf"), (char *)at("input.adf"), count, NULL};
    if (access(argv[0], X_OK) != 0) {
        snprintf(no_adf, sizeof no_adf, "%s is not built", argv[0]);
        mkadf_missing = 1;
    } else if (tk_run_command(argv, ".") != 0)
        snprintf(no_adf, sizeof no_adf, "%s %s %s failed", argv[0], argv[1], argv[2]);
}

/* The generator's settings for simulate.xml (the shipped ones, a coarse basis, SIM_EVENTS) and
 * where its writer writes. */
static void simulate_conf(const char *file)
{
    overlay_conf("simulate", "Generator.conf", "Basis %s\nEvents %d\n", at("coarse.basis"), SIM_EVENTS);
    overlay_conf("simulate", "ADFWriter.conf", "File %s\n", file);
}

/* The generator's crystals and truth, as sample_runs/full_chain/throughput.sh makes replay_chain.xml's
 * input: simulate.xml, under --strict too (the simulate test checks this mode's output as well). */
static void make_sim(void)
{
    if (*no_basis)
        return;
    simulate_conf(at("simulated.adf"));
    char conf[2 * PATH_MAX];
    snprintf(conf, sizeof conf, "%s:topologies/conf/simulate:topologies/conf", overlay("simulate"));
    const char *args[] = {"run", "topologies/simulate.xml", "--strict", "--conf", conf, NULL};
    if (nw_run_timed(&result, args, NULL, 120, 0, 0) != 0 || result.status != 0)
        snprintf(no_sim, sizeof no_sim, "topologies/simulate.xml --strict exited %d:\n%s", result.status,
                 result.err);
}

static void setup(void)
{
    tk_make_tmpdir(tmp, sizeof tmp, "check_shipped");
    no_basis[0] = no_adf[0] = no_sim[0] = '\0';
    basisgen_missing = mkadf_missing = 0;
    make_basis();
    make_adf();
    make_sim();
}

static void teardown(void) { tk_remove_tree(tmp); }

/* ---- replay.xml, histo.xml, histo_sink.xml: mkadf's stream --------------------- */

START_TEST(replay_writes_its_input_byte_for_byte)
{
    if (mkadf_missing)
        TK_SKIP("%s", no_adf);
    ck_assert_msg(!*no_adf, "no input: %s", no_adf);
    tally in = {0};
    count_frames(at("input.adf"), &in);
    overlay_conf("replay", "ADFReader.conf", "File %s\n", at("input.adf"));
    for (int pipelined = 0; pipelined < 2; pipelined++) {
        const char *out = output("replay", "out", pipelined, ".adf");
        unsigned blocks;
        unsigned long long fin, fout;
        overlay_conf("replay", "ADFWriter.conf", "File %s\n", out);
        char *report = run_topology("replay", pipelined, &blocks);
        ck_assert_uint_gt(blocks, 1);
        same_bytes(at("input.adf"), out);
        report_actor(report, "reader", &fin, &fout);
        ck_assert_uint_eq(fout, in.frames);
        report_actor(report, "writer", &fin, &fout);
        ck_assert_uint_eq(fin, in.frames);
        free(report);
    }
    tally_free(&in);
}
END_TEST

START_TEST(histo_passes_every_frame_on_and_counts_it)
{
    if (mkadf_missing)
        TK_SKIP("%s", no_adf);
    ck_assert_msg(!*no_adf, "no input: %s", no_adf);
    tally in = {0};
    count_frames(at("input.adf"), &in);
    overlay_conf("histo", "ADFReader.conf", "File %s\n", at("input.adf"));
    for (int pipelined = 0; pipelined < 2; pipelined++) {
        const char *out = output("histo", "out", pipelined, ".adf"), *spectra = output("histo", "spectra", pipelined, "");
        unsigned blocks;
        unsigned long long fin, fout;
        overlay_conf("histo", "ADFWriter.conf", "File %s\n", out);
        overlay_conf("histo", "Histo.conf", "OutputDir %s\n" SMALL_HISTOGRAMS, spectra);
        char *report = run_topology("histo", pipelined, &blocks);
        ck_assert_uint_gt(blocks, 1);
        same_bytes(at("input.adf"), out);
        report_actor(report, "histo", &fin, &fout);
        ck_assert_uint_eq(fin, in.frames);
        ck_assert_uint_eq(fout, in.frames);
        histograms_count(spectra, &in);
        free(report);
    }
    tally_free(&in);
}
END_TEST

START_TEST(histo_sink_receives_every_frame)
{
    if (mkadf_missing)
        TK_SKIP("%s", no_adf);
    ck_assert_msg(!*no_adf, "no input: %s", no_adf);
    tally in = {0};
    count_frames(at("input.adf"), &in);
    overlay_conf("histo_sink", "ADFReader.conf", "File %s\n", at("input.adf"));
    for (int pipelined = 0; pipelined < 2; pipelined++) {
        const char *spectra = output("histo_sink", "spectra", pipelined, "");
        unsigned blocks;
        unsigned long long fin, fout;
        overlay_conf("histo_sink", "Histo.conf", "OutputDir %s\n" SMALL_HISTOGRAMS, spectra);
        char *report = run_topology("histo_sink", pipelined, &blocks);
        ck_assert_uint_gt(blocks, 1);
        report_actor(report, "reader", &fin, &fout);
        ck_assert_uint_eq(fout, in.frames);
        report_actor(report, "histo", &fin, &fout);
        ck_assert_uint_eq(fin, in.frames);
        ck_assert_uint_eq(fout, 0);
        histograms_count(spectra, &in);
        free(report);
    }
    tally_free(&in);
}
END_TEST

/* ---- simulate.xml, psa.xml, replay_chain.xml: the generator's stream ------------ */

START_TEST(simulate_writes_every_event_then_one_eof)
{
    if (basisgen_missing)
        TK_SKIP("%s", no_basis);
    ck_assert_msg(!*no_basis, "no basis: %s", no_basis);
    for (int pipelined = 0; pipelined < 2; pipelined++) {
        const char *out = output("simulate", "out", pipelined, ".adf");
        unsigned blocks;
        unsigned long long fin, fout;
        tally t = {0};
        simulate_conf(out);
        char *report = run_topology("simulate", pipelined, &blocks);
        ck_assert_uint_gt(blocks, 1);
        count_frames(out, &t);
        ck_assert_uint_eq(t.truth, SIM_EVENTS);
        ck_assert_uint_gt(t.crystal, SIM_EVENTS / 2);
        ends_with_one_eof(out, &t);
        ck_assert_uint_eq(t.frames, t.truth + t.crystal + t.eof);
        ck_assert_uint_eq(t.eof_says.frames, t.frames - 1);
        ck_assert_uint_eq(t.eof_says.bytes, t.bytes - ADF_KEY_SIZE - ADF_EOF_PAYLOAD);
        ck_assert_uint_eq(report_kind(report, "generator", ADF_ID_NW_TRUTH), SIM_EVENTS);
        ck_assert_uint_eq(report_kind(report, "generator", ADF_ID_NW_CRYSTAL), t.crystal);
        report_actor(report, "generator", &fin, &fout);
        ck_assert_uint_eq(fout, t.frames);
        report_actor(report, "writer", &fin, &fout);
        ck_assert_uint_eq(fin, t.frames);
        free(report);
    }
    same_bytes(output("simulate", "out", 0, ".adf"), output("simulate", "out", 1, ".adf"));
    /* the other tests' input: the same settings, the same seed */
    ck_assert_msg(!*no_sim, "the input of psa.xml and replay_chain.xml: %s", no_sim);
    same_bytes(output("simulate", "out", 0, ".adf"), at("simulated.adf"));
}
END_TEST

/* Frame by frame: each narwhal:crystal became one data:psa in the AGATA-readable file, with its
 * event, timestamp and crystal; every other frame, the meta:eof included, passed on unchanged, in
 * order, to the Narwhal file beside it. */
static void psa_output_follows_input(const char *in_path, const char *out_path)
{
    size_t n_in, n_out, n_rest;
    char *rest_path = adf_narwhal_file(out_path);
    uint8_t *in = tk_read_file(in_path, &n_in), *out = tk_read_file(out_path, &n_out);
    uint8_t *rest = tk_read_file(rest_path, &n_rest);
    adf_iter a, b, c;
    adf_frame f, g;
    unsigned long long i = 0;
    adf_iter_init(&a, in, n_in);
    adf_iter_init(&b, out, n_out);
    adf_iter_init(&c, rest, n_rest);
    for (; adf_iter_next(&a, &f) > 0; i++) {
        int psa = f.key.id == ADF_ID_NW_CRYSTAL;
        ck_assert_msg(adf_iter_next(psa ? &b : &c, &g) > 0, "%s ends at frame %llu of %s", psa ? out_path : rest_path,
                      i, in_path);
        if (!psa) {
            ck_assert_msg(f.key.length == g.key.length && memcmp(f.data, g.data, f.key.length) == 0,
                          "frame %llu (%s) did not pass unchanged", i, adf_id_name(f.key.id));
            continue;
        }
        ck_assert_msg(g.key.id == ADF_ID_DATA_PSA, "frame %llu: a data:crystal became 0x%08x", i, g.key.id);
        ck_assert_uint_eq(g.key.event, f.key.event);
        ck_assert_uint_eq(g.key.timestamp, f.key.timestamp);
        ck_assert_uint_eq(adf_get_u16(g.payload), adf_get_u16(f.payload));
    }
    ck_assert_msg(adf_iter_next(&b, &g) == 0 && adf_iter_next(&c, &g) == 0, "%s or %s has frames past the %llu "
                  "of its input", out_path, rest_path, i);
    free(in);
    free(out);
    free(rest);
    free(rest_path);
}

START_TEST(psa_turns_each_crystal_into_one_psa)
{
    if (basisgen_missing)
        TK_SKIP("%s", no_basis);
    ck_assert_msg(!*no_basis, "no basis: %s", no_basis);
    ck_assert_msg(!*no_sim, "no input: %s", no_sim);
    overlay_conf("psa", "ADFReader.conf", "File %s\n", at("simulated.adf"));
    overlay_conf("psa", "PSA.conf", "Basis %s\n", at("coarse.basis"));
    for (int pipelined = 0; pipelined < 2; pipelined++) {
        const char *out = output("psa", "out", pipelined, ".adf");
        unsigned blocks;
        tally t = {0};
        overlay_conf("psa", "ADFWriter.conf", "File %s\n", out);
        free(run_topology("psa", pipelined, &blocks));
        ck_assert_uint_gt(blocks, 1);
        psa_output_follows_input(at("simulated.adf"), out);
        count_pair(out, &t);
        ck_assert_uint_eq(t.crystal, 0);
        ck_assert_uint_eq(t.truth, SIM_EVENTS);
        ends_with_one_eof(out, &t);
        ck_assert_uint_eq(t.eof_says.frames, t.frames - 1); /* the reader's, passed on: one frame out per frame in */
    }
    same_bytes(output("psa", "out", 0, ".adf"), output("psa", "out", 1, ".adf"));
}
END_TEST

/* Same keys, in any order: the builder orders a crystal's frames by time. */
static void same_keys(tally *a, tally *b)
{
    ck_assert_uint_eq(a->n_keys, b->n_keys);
    qsort(a->keys, a->n_keys, sizeof *a->keys, key_order);
    qsort(b->keys, b->n_keys, sizeof *b->keys, key_order);
    for (size_t i = 0; i < a->n_keys; i++)
        ck_assert_msg(key_order(&a->keys[i], &b->keys[i]) == 0, "event %u, timestamp %llu, crystal %u is not in both",
                      a->keys[i].event, (unsigned long long)a->keys[i].timestamp, a->keys[i].crystal);
}

/* Runs replay chain STEM (replay_chain or replay_chain_wide) on the simulated input, sequentially
 * and pipelined, and asserts that every crystal reached the builder's events and was tracked, that
 * histo counted what reached the file, and that both modes wrote the same bytes.  The wide chain's
 * 64 MB blocks hold the whole input: psa1 works it, psa2-psa4 and tracker2 see only meta:eof, which
 * must still end the merging actors' streams (the round robin itself: split_psa's test). */
static void replay_tracks_every_crystal(const char *stem)
{
    if (basisgen_missing)
        TK_SKIP("%s", no_basis);
    ck_assert_msg(!*no_basis, "no basis: %s", no_basis);
    ck_assert_msg(!*no_sim, "no input: %s", no_sim);
    tally in = {.key_id = ADF_ID_NW_CRYSTAL};
    count_frames(at("simulated.adf"), &in);
    overlay_conf(stem, "ADFReader.conf", "File %s\n", at("simulated.adf"));
    overlay_conf(stem, "PSA.conf", "Basis %s\n", at("coarse.basis"));
    for (int pipelined = 0; pipelined < 2; pipelined++) {
        const char *out = output(stem, "out", pipelined, ".adf");
        const char *spectra = output(stem, "spectra", pipelined, "");
        unsigned blocks;
        tally t = {.key_id = ADF_ID_DATA_PSA};
        overlay_conf(stem, "ADFWriter.conf", "File %s\n", out);
        overlay_conf(stem, "Histo.conf", "OutputDir %s\n", spectra);
        char *report = run_topology(stem, pipelined, &blocks);
        count_pair(out, &t);
        /* every crystal's data:psa is in the builder's events, none outside */
        ck_assert_uint_eq(t.crystal, 0);
        ck_assert_uint_eq(t.psa, 0);
        ck_assert_uint_eq(t.psa_in_events, in.crystal);
        /* the emulator's count of the builder's output, composites and their members */
        ck_assert_uint_eq(report_kind(report, "builder", ADF_ID_EVENT_DATA_PSA), t.events);
        ck_assert_uint_eq(report_inside(report, "builder", ADF_ID_DATA_PSA), t.psa_in_events);
        ck_assert_uint_eq(report_kind(report, "builder", ADF_ID_DATA_PSA), 0);
        free(report);
        same_keys(&in, &t);
        /* each event followed by its data:tracked (KeepInput), the truth passed on */
        ck_assert_uint_gt(t.events, 0);
        ck_assert_uint_eq(t.tracked, t.events);
        ck_assert_uint_eq(t.tracked_paired, t.events);
        ck_assert_uint_eq(t.truth, SIM_EVENTS);
        ends_with_one_eof(out, &t);
        ck_assert_uint_eq(t.frames, t.truth + t.events + t.tracked + t.eof);
        /* histo, before the writer, counted what reached the file */
        ck_assert_uint_eq(csv_entries(tk_path(spectra, "hit.csv")), t.hits);
        ck_assert_uint_eq(csv_entries(tk_path(spectra, "gamma.csv")), t.gammas);
        no_temporaries(spectra);
        tally_free(&t);
    }
    tally_free(&in);
    same_bytes(output(stem, "out", 0, ".adf"), output(stem, "out", 1, ".adf"));
}

START_TEST(replay_chain_tracks_every_crystal)
{
    replay_tracks_every_crystal("replay_chain");
}
END_TEST

START_TEST(replay_chain_wide_tracks_every_crystal)
{
    replay_tracks_every_crystal("replay_chain_wide");
}
END_TEST

/* ---- narval/listing1.xml, from NARVAL's main file -------------------------------- */

/* Copies the shipped file topologies/narval/NAME into dir unchanged. */
static void copy_shipped(const char *dir, const char *name)
{
    char from[PATH_MAX];
    size_t n;
    snprintf(from, sizeof from, "topologies/narval/%s", name);
    uint8_t *text = tk_read_file(from, &n);
    tk_write_bytes(tk_path(dir, name), text, n);
    free(text);
}

START_TEST(listing1_runs_from_its_main_file)
{
    if (basisgen_missing)
        TK_SKIP("%s", no_basis);
    ck_assert_msg(!*no_basis, "no basis: %s", no_basis);
    /* listing1.main and listing1.xml as shipped; the actors' directories it names (conf/<actor>,
     * beside it) hold the shipped files with the test's paths and a smaller run */
    char dir[PATH_MAX + 64], conf[PATH_MAX + 128], actor[PATH_MAX + 256];
    snprintf(dir, sizeof dir, "%s/narval", tmp);
    snprintf(conf, sizeof conf, "%s/conf", dir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    ck_assert_int_eq(mkdir(conf, 0700), 0);
    copy_shipped(dir, "listing1.main");
    copy_shipped(dir, "listing1.xml");
    char set[2 * PATH_MAX];
    snprintf(set, sizeof set, "Basis %s\nEvents %d\n", at("coarse.basis"), LISTING1_EVENTS);
    snprintf(actor, sizeof actor, "%s/crystal_producer", conf);
    derive_conf(actor, "topologies/narval/conf/crystal_producer/Generator.conf", set);
    snprintf(set, sizeof set, "Basis %s\n", at("coarse.basis"));
    snprintf(actor, sizeof actor, "%s/psa_filter", conf);
    derive_conf(actor, "topologies/narval/conf/psa_filter/PSA.conf", set);
    snprintf(actor, sizeof actor, "%s/psa_consumer", conf);
    for (int pipelined = 0; pipelined < 2; pipelined++) {
        const char *out = output("narval", "out", pipelined, ".adf");
        const char *report_path = output("narval", "report", pipelined, ".tsv");
        unsigned blocks;
        tally t = {0};
        snprintf(set, sizeof set, "File %s\n", out);
        derive_conf(actor, "topologies/narval/conf/psa_consumer/ADFWriter.conf", set);
        const char *args[] = {"run", "--main", tk_path(dir, "listing1.main"), "--strict", "--report", report_path,
                              pipelined ? "--pipeline" : NULL, NULL};
        char *report = run_strict("listing1.main", args, report_path, pipelined, &blocks);
        no_temporaries(dir);
        ck_assert_uint_gt(blocks, 1);
        count_pair(out, &t);
        unsigned long long crystals = report_kind(report, "crystal_producer", ADF_ID_NW_CRYSTAL);
        ck_assert_uint_gt(crystals, LISTING1_EVENTS / 2);
        ck_assert_uint_eq(report_kind(report, "psa_filter", ADF_ID_DATA_PSA), crystals);
        ck_assert_uint_eq(t.psa, crystals);
        ends_with_one_eof(out, &t);
        ck_assert_uint_eq(t.frames, t.psa + t.eof);
        free(report);
    }
    same_bytes(output("narval", "out", 0, ".adf"), output("narval", "out", 1, ".adf"));
}
END_TEST

static Suite *shipped_suite(void)
{
    Suite *s = suite_create("shipped");
    TCase *tc = tcase_create("strict");
    /* once for the case: the basis and the inputs the tests share (each test in its own child) */
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, replay_writes_its_input_byte_for_byte);
    tcase_add_test(tc, histo_passes_every_frame_on_and_counts_it);
    tcase_add_test(tc, histo_sink_receives_every_frame);
    tcase_add_test(tc, simulate_writes_every_event_then_one_eof);
    tcase_add_test(tc, psa_turns_each_crystal_into_one_psa);
    tcase_add_test(tc, replay_chain_tracks_every_crystal);
    tcase_add_test(tc, replay_chain_wide_tracks_every_crystal);
    tcase_add_test(tc, listing1_runs_from_its_main_file);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(shipped_suite()); }

/* check_host.c: reader → psa → builder → tracker → histo → writer under tests/narval_host (NARVAL's calls only) with 1 and 3 instances of each filter, 2 cycles: no error, every frame accounted for, the output equal to narwhal run's. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adf.h"
#include "narwhal_exec.h"
#include "testkit.h"

/*
 * The input: mkadf's events, data:crystal frames only (adf_keep), so that
 * every frame of the input has one fate: a data:psa (the test basis is coarse
 * but every trace has an edge, so the PSA rejects none), built into an
 * event:data:psa, tracked (KeepInput: the event passes on before its
 * data:tracked), histogrammed and written.  The host's report counts every
 * stage's frames by kind in and out, and the data:psa frames at any depth
 * with a digest of their bytes; the tests read it and the files kept after
 * each cycle.  The PSA runs on the CPU (Device cpu); sample_runs/host/run.sh
 * is the same run with the PSA's default Device, for a GPU machine.
 */

enum { EVENTS = 100, READ_SIZE = 65536, FILTER_SIZE = 262144, CYCLES = 2, N_STAGES = 6, MAX_K = 16 };
enum { K_CRYSTAL, K_PSA, K_EVENT_PSA, K_TRACKED, K_EOF, K_OTHER, N_KINDS };

static const char *const stage[N_STAGES] = {"reader", "psa", "builder", "tracker", "histo", "writer"};
static const char *const library[N_STAGES] = {"adf_reader.so", "psa.so",   "builder.so",
                                              "tracker.so",    "histo.so", "adf_writer.so"};

static char tmp[PATH_MAX];
static char not_ready[4 * PATH_MAX + 64]; /* why the input could not be made (empty: it was) */
static uint64_t input_crystals;

/* tmp/NAME (tk_path: a small ring of buffers). */
static const char *at(const char *name) { return tk_path(tmp, name); }

/* ---- what a file holds ------------------------------------------------------------ */

typedef struct psa_frame {
    const uint8_t *data;
    uint32_t length;
} psa_frame;

typedef struct contents {
    uint8_t *bytes;
    size_t size;
    uint64_t kind[N_KINDS], frames;
    psa_frame *psa; /* data:psa at any depth, sorted by their bytes */
    size_t n_psa;
} contents;

static int kind_of(uint32_t id)
{
    switch (id) {
    case ADF_ID_NW_CRYSTAL: return K_CRYSTAL;
    case ADF_ID_DATA_PSA: return K_PSA;
    case ADF_ID_EVENT_DATA_PSA: return K_EVENT_PSA;
    case ADF_ID_NW_TRACKED: return K_TRACKED;
    case ADF_ID_META_EOF: return K_EOF;
    default: return K_OTHER;
    }
}

static void collect_psa(contents *c, adf_iter *it)
{
    adf_frame f;
    int rc;
    while ((rc = adf_iter_next(it, &f)) > 0) {
        if (f.key.id == ADF_ID_DATA_PSA) {
            c->psa = realloc(c->psa, (c->n_psa + 1) * sizeof *c->psa);
            ck_assert_ptr_nonnull(c->psa);
            c->psa[c->n_psa++] = (psa_frame){f.data, f.key.length};
        } else if (adf_id_is_composite(f.key.id)) {
            adf_iter sub;
            ck_assert_int_eq(adf_iter_sub(&sub, &f), ADF_OK);
            collect_psa(c, &sub);
        }
    }
    ck_assert_int_eq(rc, 0);
}

static int by_bytes(const void *a, const void *b)
{
    const psa_frame *x = a, *y = b;
    if (x->length != y->length)
        return x->length < y->length ? -1 : 1;
    return memcmp(x->data, y->data, x->length);
}

static void read_contents(contents *c, const char *path)
{
    adf_iter it;
    adf_frame f;
    int rc;
    memset(c, 0, sizeof *c);
    c->bytes = tk_read_file(path, &c->size);
    adf_iter_init(&it, c->bytes, c->size);
    while ((rc = adf_iter_next(&it, &f)) > 0) {
        c->kind[kind_of(f.key.id)]++;
        c->frames++;
    }
    ck_assert_msg(rc == 0, "%s is not a valid ADF file", path);
    adf_iter_init(&it, c->bytes, c->size);
    collect_psa(c, &it);
    if (c->n_psa)
        qsort(c->psa, c->n_psa, sizeof *c->psa, by_bytes);
}

static void free_contents(contents *c)
{
    free(c->bytes);
    free(c->psa);
}

/* ---- the input, made once for the suite --------------------------------------------- */

static int shell(const char *cmd)
{
    if (system(cmd) == 0)
        return 0;
    snprintf(not_ready, sizeof not_ready, "failed: %s", cmd);
    return -1;
}

/* A 6 mm basis (a fraction of a second), mkadf's events and their data:crystal frames alone. */
static void make_input(void)
{
    char cmd[4 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "%s --quiet --geometry detector/geometry/agata.geo --grid 6 --field-grid 2 -o %s",
             nw_build_path("/bin/basisgen"), at("coarse.basis"));
    if (shell(cmd) != 0)
        return;
    snprintf(cmd, sizeof cmd, "%s %s %d > /dev/null && %s %s %s 0x%08X > /dev/null", nw_build_path("/tests/mkadf"),
             at("mixed.adf"), EVENTS, nw_build_path("/tests/adf_keep"), at("mixed.adf"), at("input.adf"),
             ADF_ID_NW_CRYSTAL);
    if (shell(cmd) != 0)
        return;
    contents in;
    read_contents(&in, at("input.adf"));
    input_crystals = in.kind[K_CRYSTAL];
    if (in.frames != input_crystals || input_crystals < 2 * EVENTS)
        snprintf(not_ready, sizeof not_ready, "input.adf holds %" PRIu64 " frames, %" PRIu64 " data:crystal",
                 in.frames, input_crystals);
    free_contents(&in);
}

static void setup(void)
{
    tk_make_tmpdir(tmp, sizeof tmp, "check_host");
    not_ready[0] = '\0';
    make_input();
}

static void teardown(void) { tk_remove_tree(tmp); }

static void require_input(void) { ck_assert_msg(not_ready[0] == '\0', "no test input: %s", not_ready); }

/* ---- configurations ------------------------------------------------------------------- */

/* The configuration file of stage i; out: the directory of the run's outputs. */
static void conf_text(int i, const char *out, char *text, size_t cap)
{
    switch (i) {
    case 0: snprintf(text, cap, "File %s\n", at("input.adf")); break;
    case 1: snprintf(text, cap, "Basis %s\nDevice cpu\n", at("coarse.basis")); break;
    case 2: snprintf(text, cap, "Window 50\nDelay 100000\n"); break;
    case 3: snprintf(text, cap, "KeepInput true\nDevice cpu\n"); break;
    case 4:
        snprintf(text, cap,
                 "OutputDir %s/spectra\nDevice cpu\nFormats csv\nPlot none\n"
                 "Histogram gamma tracked.e sum 2048 0 2048\nHistogram hit psa.e sum 2048 0 2048\n",
                 out);
        break;
    default: snprintf(text, cap, "File %s/out.adf\n", out); break;
    }
}

static const char *const conf_file[N_STAGES] = {"ADFReader.conf", "PSA.conf",   "Builder.conf",
                                                "Tracker.conf",   "Histo.conf", "ADFWriter.conf"};

/* run/<stage>/<Actor>.conf: each library its own directory, as NARVAL gives it. */
static void write_host_confs(const char *run)
{
    char dir[PATH_MAX + 16], text[2048], path[PATH_MAX + 64];
    for (int i = 0; i < N_STAGES; i++) {
        snprintf(dir, sizeof dir, "%s/%s", run, stage[i]);
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        conf_text(i, run, text, sizeof text);
        snprintf(path, sizeof path, "%s/%s", dir, conf_file[i]);
        tk_write_text(path, text);
    }
}

/* ---- the host ------------------------------------------------------------------------- */

typedef struct side {
    uint64_t blocks, frames, bytes, kind[N_KINDS], psa_any;
    char digest[17];
} side;

typedef struct report {
    side s[CYCLES + 1][N_STAGES][2]; /* [cycle][stage][0 in, 1 out] */
    uint64_t inst[CYCLES + 1][N_STAGES][MAX_K];
    int violations[CYCLES + 1], cycles, aborted; /* aborted: the cycle an actor's error ended, or 0 */
    int status;
    char log[NW_OUTPUT_MAX], table[NW_OUTPUT_MAX];
} report;

static int stage_index(const char *name)
{
    for (int i = 0; i < N_STAGES; i++)
        if (strcmp(name, stage[i]) == 0)
            return i;
    ck_abort_msg("report names an unknown stage '%s'", name);
    return -1;
}

static void parse_line(report *r, char *line)
{
    char name[64], dir[8], digest[17];
    side v;
    int c, n, i;
    uint64_t blocks;
    if (sscanf(line, "frames\t%d\t%63s\t%7s\t%" SCNu64 "\t%" SCNu64 "\t%" SCNu64 "\t%" SCNu64 "\t%" SCNu64
                     "\t%" SCNu64 "\t%" SCNu64 "\t%" SCNu64 "\t%" SCNu64 "\t%" SCNu64 "\t%16s",
               &c, name, dir, &v.blocks, &v.frames, &v.bytes, &v.kind[0], &v.kind[1], &v.kind[2], &v.kind[3],
               &v.kind[4], &v.kind[5], &v.psa_any, digest) == 14) {
        ck_assert(c >= 1 && c <= CYCLES);
        memcpy(v.digest, digest, sizeof v.digest);
        r->s[c][stage_index(name)][strcmp(dir, "out") == 0] = v;
    } else if (sscanf(line, "instance\t%d\t%63s\t%d\t%" SCNu64, &c, name, &i, &blocks) == 4) {
        ck_assert(c >= 1 && c <= CYCLES && i >= 1 && i <= MAX_K);
        r->inst[c][stage_index(name)][i - 1] = blocks;
    } else if (sscanf(line, "violations\t%d\t%d", &c, &n) == 2) {
        ck_assert(c >= 1 && c <= CYCLES);
        r->violations[c] = n;
        r->cycles = c;
    } else if (sscanf(line, "aborted\t%d", &c) == 1)
        r->aborted = c;
    else
        ck_assert_msg(line[0] == '#', "not a line of the host's report: %s", line);
}

static void read_report(report *r, const char *path)
{
    char line[1024];
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "the host wrote no report %s (exit %d):\n%s", path, r->status, r->log);
    /* the kinds' columns, in the order parse_line reads them */
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_msg(strstr(line, "data:crystal data:psa event:data:psa data:tracked meta:eof other data:psa(any "
                               "depth) data:psa-digest") != NULL,
                  "report header: %s", line);
    while (fgets(line, sizeof line, f))
        parse_line(r, line);
    fclose(f);
}

/* Runs the host on the chain with k instances per filter, outputs under tmp/run; sizes[i]: stage i's buffer. */
static void run_host(report *r, const char *run, int k, const unsigned sizes[N_STAGES], int keep_histo)
{
    char dir[PATH_MAX], args[N_STAGES + 16][PATH_MAX + 256], kk[16];
    const char *argv[N_STAGES + 32];
    int n = 0;
    snprintf(dir, sizeof dir, "%s", at(run));
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    write_host_confs(dir);
    snprintf(kk, sizeof kk, "%d", k);
    argv[n++] = nw_build_path("/tests/narval_host");
    const char *opts[] = {"--instances", kk, "--cycles", "2", "--pause-every", "3"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        argv[n++] = opts[i];
    snprintf(args[0], sizeof args[0], "%s/report.tsv", dir);
    snprintf(args[1], sizeof args[1], "%s/out.adf", dir);
    snprintf(args[2], sizeof args[2], "%s/spectra/gamma.csv", dir);
    snprintf(args[3], sizeof args[3], "%s/spectra/hit.csv", dir);
    argv[n++] = "--report";
    argv[n++] = args[0];
    for (int i = 1; i < (keep_histo ? 4 : 2); i++) {
        argv[n++] = "--keep";
        argv[n++] = args[i];
    }
    for (int i = 0; i < N_STAGES; i++) {
        char *a = args[4 + i];
        int len = snprintf(a, sizeof args[0], "%s=%s/actors/%s,%s/%s", stage[i], tk_build(), library[i], dir, stage[i]);
        if (sizes[i])
            snprintf(a + len, sizeof args[0] - (size_t)len, ",%u", sizes[i]);
        argv[n++] = a;
    }
    argv[n] = NULL;
    int out = nw_tempfile(), err = nw_tempfile();
    ck_assert(out >= 0 && err >= 0);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(out, 1);
        dup2(err, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    static nw_result child;
    ck_assert_int_eq(nw_wait(&child, pid, 120, 0, 0), 0);
    ck_assert_msg(!child.timed_out, "narval_host ran over 120 s");
    r->status = child.status;
    nw_slurp(out, r->table, sizeof r->table);
    nw_slurp(err, r->log, sizeof r->log);
}

static const unsigned chain_sizes[N_STAGES] = {READ_SIZE, FILTER_SIZE, FILTER_SIZE, FILTER_SIZE, FILTER_SIZE, 0};

/* The host's run with k instances per filter, which must end with no error and no breach. */
static void run_chain(report *r, const char *run, int k)
{
    char path[PATH_MAX + 32];
    memset(r, 0, sizeof *r);
    run_host(r, run, k, chain_sizes, k == 1);
    ck_assert_msg(r->status == 0, "narval_host exited %d (1: contract breached, 2: an actor's error):\n%s\n%s",
                  r->status, r->table, r->log);
    snprintf(path, sizeof path, "%s/report.tsv", at(run));
    read_report(r, path);
    ck_assert_int_eq(r->cycles, CYCLES);
}

/* ---- what every cycle must show ----------------------------------------------------------- */

static void assert_sides_equal(const side *a, const side *b, const char *what, int c)
{
    ck_assert_msg(a->frames == b->frames && a->bytes == b->bytes && a->psa_any == b->psa_any &&
                      memcmp(a->kind, b->kind, sizeof a->kind) == 0 && strcmp(a->digest, b->digest) == 0,
                  "cycle %d: %s: %" PRIu64 " frames / %" PRIu64 " bytes against %" PRIu64 " / %" PRIu64, c, what,
                  a->frames, a->bytes, b->frames, b->bytes);
}

/* Every data:crystal of the input gives one data:psa, which the builder's events hold once, and
 * which reaches the writer with its event's data:tracked; the end of data reaches every instance. */
static void assert_accounted(const report *r, int c, int k)
{
    const side *reader = &r->s[c][0][1], *psa_in = &r->s[c][1][0], *psa = &r->s[c][1][1],
               *built = &r->s[c][2][1], *tracked = &r->s[c][3][1], *histo_in = &r->s[c][4][0],
               *histo = &r->s[c][4][1], *writer = &r->s[c][5][0];
    uint64_t n = input_crystals;
    ck_assert_int_eq(r->violations[c], 0);
    /* the producer: the whole file, then one meta:eof */
    ck_assert_uint_eq(reader->kind[K_CRYSTAL], n);
    ck_assert_uint_eq(reader->kind[K_EOF], 1);
    ck_assert_uint_eq(reader->frames, n + 1);
    /* the PSA: one data:psa per data:crystal, none rejected; every instance passes the meta:eof it got */
    ck_assert_uint_eq(psa_in->kind[K_CRYSTAL], n);
    ck_assert_uint_eq(psa_in->kind[K_EOF], (uint64_t)k);
    ck_assert_msg(psa->kind[K_PSA] == n, "cycle %d: %" PRIu64 " data:crystal gave %" PRIu64 " data:psa", c, n,
                  psa->kind[K_PSA]);
    ck_assert_uint_eq(psa->kind[K_EOF], (uint64_t)k);
    ck_assert_uint_eq(psa->frames, n + (uint64_t)k);
    /* the builder: every data:psa once in an event (the same bytes: digest), nothing held back */
    ck_assert_msg(built->psa_any == n, "cycle %d: the builder's output holds %" PRIu64 " of the %" PRIu64 " data:psa",
                  c, built->psa_any, n);
    ck_assert_str_eq(built->digest, psa->digest);
    ck_assert_uint_gt(built->kind[K_EVENT_PSA], 0);
    ck_assert_uint_eq(built->kind[K_EOF], (uint64_t)k);
    ck_assert_uint_eq(built->kind[K_CRYSTAL] + built->kind[K_TRACKED] + built->kind[K_OTHER], 0);
    /* the tracker: each event passes on (KeepInput) with its data:tracked */
    ck_assert_uint_eq(tracked->kind[K_EVENT_PSA], built->kind[K_EVENT_PSA]);
    ck_assert_uint_eq(tracked->kind[K_TRACKED], built->kind[K_EVENT_PSA]);
    ck_assert_uint_eq(tracked->psa_any, n);
    ck_assert_str_eq(tracked->digest, psa->digest);
    ck_assert_uint_eq(tracked->kind[K_EOF], (uint64_t)k);
    /* histo passes everything on; the writer takes it all with one meta:eof */
    assert_sides_equal(histo, histo_in, "histo's output and input", c);
    ck_assert_uint_eq(writer->kind[K_EOF], 1);
    ck_assert_uint_eq(writer->frames, histo->frames - (uint64_t)k + 1);
    ck_assert_uint_eq(writer->psa_any, n);
    ck_assert_str_eq(writer->digest, psa->digest);
}

/* Round robin: every instance of a filter took blocks, and a cycle is the same as the first. */
static void assert_spread(const report *r, int k)
{
    for (int i = 1; i < N_STAGES - 1; i++)
        for (int j = 0; j < k; j++)
            ck_assert_msg(r->inst[1][i][j] > 0, "%s#%d took no block", stage[i], j + 1);
    for (int c = 2; c <= CYCLES; c++)
        for (int i = 0; i < N_STAGES; i++) {
            assert_sides_equal(&r->s[c][i][0], &r->s[1][i][0], stage[i], c);
            assert_sides_equal(&r->s[c][i][1], &r->s[1][i][1], stage[i], c);
        }
}

/* The file the writer published in cycle c holds exactly what reached it. */
static void assert_written(const report *r, const char *run, int c, contents *file)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/out.adf.cycle%d", at(run), c);
    read_contents(file, path);
    const side *w = &r->s[c][5][0];
    ck_assert_uint_eq(file->size, w->bytes);
    ck_assert_uint_eq(file->frames, w->frames);
    ck_assert_mem_eq(file->kind, w->kind, sizeof file->kind);
    ck_assert_uint_eq(file->n_psa, input_crystals);
}

/* ---- narwhal run on the same input and configuration ------------------------------------- */

static const char topology[] =
    "<configuration>\n"
    "  <producer><name>reader</name><library>adf_reader.so</library>\n"
    "    <output_buffer_name>b0</output_buffer_name><size output_buffer=\"b0\">%u</size></producer>\n"
    "%s"
    "  <consumer><name>writer</name><library>adf_writer.so</library>\n"
    "    <data_source source_buffer=\"b4\">histo</data_source></consumer>\n"
    "</configuration>\n";

/* tmp/ref: the chain under `narwhal run --strict` (NARVAL's buffers and calls), once per suite run. */
static void reference(void)
{
    char filters[4096], text[2048], path[PATH_MAX + 64];
    size_t n = 0;
    if (tk_exists(at("ref/out.adf")))
        return;
    if (!tk_exists(at("ref")))
        ck_assert_int_eq(mkdir(at("ref"), 0700), 0);
    ck_assert(tk_exists(at("ref/conf")) || mkdir(at("ref/conf"), 0700) == 0);
    for (int i = 1; i < N_STAGES - 1; i++)
        n += (size_t)snprintf(filters + n, sizeof filters - n,
                              "  <intermediary input_buffers=\"1\" output_buffers=\"1\"><name>%s</name>"
                              "<library>%s</library>\n    <data_source source_buffer=\"b%d\">%s</data_source>"
                              "<output_buffer_name>b%d</output_buffer_name><size output_buffer=\"b%d\">%u</size>"
                              "</intermediary>\n",
                              stage[i], library[i], i - 1, stage[i - 1], i, i, FILTER_SIZE);
    tk_write_textf(at("ref/chain.xml"), topology, READ_SIZE, filters);
    for (int i = 0; i < N_STAGES; i++) {
        conf_text(i, at("ref"), text, sizeof text);
        snprintf(path, sizeof path, "%s/%s", at("ref/conf"), conf_file[i]);
        tk_write_text(path, text);
    }
    static nw_result r;
    char actors[PATH_MAX + 16];
    snprintf(actors, sizeof actors, "%s/actors", tk_build());
    const char *args[] = {"run", at("ref/chain.xml"), "--strict", "--actors", actors, "--conf", at("ref/conf"), NULL};
    ck_assert_int_eq(nw_run_timed(&r, args, NULL, 120, 0, 0), 0);
    ck_assert_msg(r.status == 0, "narwhal run --strict exited %d:\n%s", r.status, r.err);
}

static void assert_same_file(const char *a, const char *b)
{
    size_t na, nb;
    uint8_t *x = tk_read_file(a, &na), *y = tk_read_file(b, &nb);
    ck_assert_msg(na == nb && memcmp(x, y, na) == 0, "%s (%zu bytes) differs from %s (%zu bytes)", a, na, b, nb);
    free(x);
    free(y);
}

/* ---- the tests ---------------------------------------------------------------------------- */

START_TEST(one_instance_two_cycles_account_for_every_frame)
{
    static report r;
    contents file[CYCLES + 1];
    require_input();
    run_chain(&r, "k1", 1);
    for (int c = 1; c <= CYCLES; c++) {
        assert_accounted(&r, c, 1);
        assert_written(&r, "k1", c, &file[c]);
    }
    assert_spread(&r, 1);
    ck_assert_uint_eq(file[2].size, file[1].size);
    ck_assert_mem_eq(file[2].bytes, file[1].bytes, file[1].size);
    for (int c = 1; c <= CYCLES; c++)
        free_contents(&file[c]);
}
END_TEST

START_TEST(one_instance_writes_what_narwhal_run_writes)
{
    static report r;
    char mine[PATH_MAX + 64];
    require_input();
    reference();
    run_chain(&r, "k1-ref", 1);
    for (int c = 1; c <= CYCLES; c++) {
        snprintf(mine, sizeof mine, "%s.cycle%d", at("k1-ref/out.adf"), c);
        assert_same_file(mine, at("ref/out.adf"));
        snprintf(mine, sizeof mine, "%s.cycle%d", at("k1-ref/spectra/gamma.csv"), c);
        assert_same_file(mine, at("ref/spectra/gamma.csv"));
        snprintf(mine, sizeof mine, "%s.cycle%d", at("k1-ref/spectra/hit.csv"), c);
        assert_same_file(mine, at("ref/spectra/hit.csv"));
    }
}
END_TEST

START_TEST(three_instances_two_cycles_account_for_every_frame)
{
    static report r;
    contents file[CYCLES + 1];
    require_input();
    run_chain(&r, "k3", 3);
    for (int c = 1; c <= CYCLES; c++) {
        assert_accounted(&r, c, 3);
        assert_written(&r, "k3", c, &file[c]);
    }
    assert_spread(&r, 3);
    ck_assert_uint_eq(file[2].size, file[1].size);
    ck_assert_mem_eq(file[2].bytes, file[1].bytes, file[1].size);
    for (int c = 1; c <= CYCLES; c++)
        free_contents(&file[c]);
}
END_TEST

/* Round robin gives a builder only every third block: an event whose crystals straddle a block
 * boundary is built as two, so the events differ from narwhal's; the data:psa frames (key and
 * payload, at any depth) are the same multiset, one data:tracked goes with each event, one meta:eof ends the file. */
START_TEST(three_instances_write_the_hits_narwhal_run_writes)
{
    static report r;
    contents mine, ref;
    char path[PATH_MAX + 64];
    require_input();
    reference();
    run_chain(&r, "k3-ref", 3);
    read_contents(&ref, at("ref/out.adf"));
    for (int c = 1; c <= CYCLES; c++) {
        snprintf(path, sizeof path, "%s.cycle%d", at("k3-ref/out.adf"), c);
        read_contents(&mine, path);
        ck_assert_uint_eq(mine.n_psa, ref.n_psa);
        for (size_t i = 0; i < ref.n_psa; i++)
            ck_assert_msg(by_bytes(&mine.psa[i], &ref.psa[i]) == 0, "cycle %d: the data:psa frames differ", c);
        ck_assert_uint_eq(mine.kind[K_EOF], 1);
        ck_assert_uint_eq(ref.kind[K_EOF], 1);
        ck_assert_uint_eq(mine.kind[K_PSA] + mine.kind[K_CRYSTAL] + mine.kind[K_OTHER], 0);
        ck_assert_uint_eq(mine.kind[K_TRACKED], mine.kind[K_EVENT_PSA]);
        ck_assert_uint_eq(ref.kind[K_TRACKED], ref.kind[K_EVENT_PSA]);
        /* splitting can only add events: at most one per block boundary the builder saw */
        ck_assert_uint_ge(mine.kind[K_EVENT_PSA], ref.kind[K_EVENT_PSA]);
        ck_assert_uint_le(mine.kind[K_EVENT_PSA], ref.kind[K_EVENT_PSA] + r.s[c][2][0].blocks);
        free_contents(&mine);
    }
    free_contents(&ref);
}
END_TEST

/* NARVAL's buffers are fixed: a tracker whose output does not fit fails the run; the host unloads
 * every instance without stop, and the writer publishes nothing (no final-named file, no temp left). */
START_TEST(an_actor_error_aborts_and_nothing_is_published)
{
    static report r;
    static const unsigned small[N_STAGES] = {READ_SIZE, FILTER_SIZE, FILTER_SIZE, 2048, FILTER_SIZE, 0};
    require_input();
    memset(&r, 0, sizeof r);
    run_host(&r, "abort", 1, small, 0);
    ck_assert_msg(r.status == 2, "narval_host exited %d, not 2:\n%s", r.status, r.log);
    ck_assert_msg(strstr(r.log, "host: tracker#1: process_block: error 4") != NULL, "%s", r.log);
    ck_assert_msg(strstr(r.log, "unloaded without process_stop") != NULL, "%s", r.log);
    read_report(&r, at("abort/report.tsv"));
    ck_assert_int_eq(r.aborted, 1);
    /* the tracker's output fitted until the block that failed, so the writer held frames when it was unloaded */
    ck_assert_uint_gt(r.s[1][3][1].blocks, 0);
    ck_assert_uint_eq(r.s[1][3][1].blocks, r.s[1][3][0].blocks - 1);
    ck_assert_uint_gt(r.s[1][5][0].frames, 0);
    DIR *d = opendir(at("abort"));
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d));)
        ck_assert_msg(strncmp(e->d_name, "out.adf", 7) != 0, "abort/%s is left after the abort", e->d_name);
    closedir(d);
}
END_TEST

/* ---- the host itself: NARVAL's calls, and no other ------------------------------------------ */

/* One cycle of the lifecycle test actors under the host: 10 frames in blocks of 4, the third
 * with the meta:eof; 3 filter instances (F1 holds its frames until the meta:eof), a pause/resume
 * pair after every second producer block; "who call [seq=frames]", one per line. */
#define LC_CYCLE                                                                                                   \
    "C process_start\nF0 process_start\nF1 process_start\nF2 process_start\nP process_start\n"                   \
    "P process_block\nF0 process_block seq=0-3\nC process_block seq=0-3\n"                                         \
    "P process_block\nF1 process_block seq=4-7\n"                                                                  \
    "P process_pause\nF0 process_pause\nF1 process_pause\nF2 process_pause\nC process_pause\n"                   \
    "C process_resume\nF0 process_resume\nF1 process_resume\nF2 process_resume\nP process_resume\n"              \
    "P process_block\nF2 process_block seq=8-9\nC process_block seq=8-9\n"                                         \
    "F0 process_block seq=eof\nF1 process_block seq=eof\nC process_block seq=4-7\n"                                \
    "F2 process_block seq=eof\nC process_block seq=eof\n"                                                          \
    "P process_block\n"                                                                                            \
    "P process_stop\nF0 process_stop\nF1 process_stop\nF2 process_stop\nC process_stop\n"

static const char expected_calls[] =
    "P process_config\nP process_register\nF process_config\nF0 process_register\nF1 process_register\n"
    "F2 process_register\nC process_config\nC process_register\n"
    "P process_initialise\nF0 process_initialise\nF1 process_initialise\nF2 process_initialise\n"
    "C process_initialise\n" LC_CYCLE
    "P process_reset\nF0 process_reset\nF1 process_reset\nF2 process_reset\nC process_reset\n"
    "P process_initialise\nF0 process_initialise\nF1 process_initialise\nF2 process_initialise\n"
    "C process_initialise\n" LC_CYCLE
    "P process_unload\nF0 process_unload\nF1 process_unload\nF2 process_unload\nC process_unload\n";

/* The log's lines cut to "who call [seq=...]" (the rest, sizes and paths, is the actors' detail);
 * a call the test actors found out of NARVAL's sequence fails the test. */
static void calls_of(char *log, char *out, size_t cap)
{
    char who[16], call[32], *save;
    size_t n = 0;
    for (char *line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        const char *seq = strstr(line, " seq=");
        ck_assert_msg(strstr(line, "out of sequence") == NULL, "%s", line);
        ck_assert_int_eq(sscanf(line, "%15s %31s", who, call), 2);
        n += (size_t)snprintf(out + n, cap - n, "%s %s", who, call);
        if (seq)
            n += (size_t)snprintf(out + n, cap - n, " seq=%.*s", (int)strcspn(seq + 5, " "), seq + 5);
        n += (size_t)snprintf(out + n, cap - n, "\n");
        ck_assert_uint_lt(n, cap);
    }
}

START_TEST(host_makes_narvals_calls_and_no_other)
{
    char dir[PATH_MAX], spec[3][3 * PATH_MAX], log[PATH_MAX + 16];
    char *text, calls[8192];
    static nw_result child;
    snprintf(dir, sizeof dir, "%s", at("calls"));
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(log, sizeof log, "%s/calls.log", dir);
    const char *who[3] = {"P", "F", "C"}, *lib[3] = {"producer", "filter", "consumer"};
    for (int i = 0; i < 3; i++)
        snprintf(spec[i], sizeof spec[i], "%s=%s/tests/actors/lifecycle_%s.so,%s%s", who[i], tk_build(), lib[i], dir,
                 i < 2 ? ",4096" : "");
    const char *argv[] = {nw_build_path("/tests/narval_host"), "--instances", "3", "--pause-every", "2",
                          spec[0], spec[1], spec[2], NULL};
    int out = nw_tempfile(), err = nw_tempfile();
    ck_assert(out >= 0 && err >= 0);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        setenv("LIFECYCLE_LOG", log, 1);
        setenv("LIFECYCLE_FRAMES", "10", 1);
        setenv("LIFECYCLE_PER_BLOCK", "4", 1);
        setenv("LIFECYCLE_EOF", "1", 1);
        setenv("LIFECYCLE_HOLD", "F1", 1);
        dup2(out, 1);
        dup2(err, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    ck_assert_int_eq(nw_wait(&child, pid, 60, 0, 0), 0);
    nw_slurp(out, child.out, sizeof child.out);
    nw_slurp(err, child.err, sizeof child.err);
    ck_assert_msg(child.status == 0, "narval_host exited %d:\n%s\n%s", child.status, child.out, child.err);
    text = (char *)tk_read_file(log, NULL);
    calls_of(text, calls, sizeof calls);
    ck_assert_str_eq(calls, expected_calls);
    free(text);
}
END_TEST

static Suite *host_suite(void)
{
    Suite *s = suite_create("host");
    TCase *tc = tcase_create("narval_host");
    /* once for the case: the basis and the input (each test runs in its own child) */
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, one_instance_two_cycles_account_for_every_frame);
    tcase_add_test(tc, one_instance_writes_what_narwhal_run_writes);
    tcase_add_test(tc, three_instances_two_cycles_account_for_every_frame);
    tcase_add_test(tc, three_instances_write_the_hits_narwhal_run_writes);
    tcase_add_test(tc, an_actor_error_aborts_and_nothing_is_published);
    tcase_add_test(tc, host_makes_narvals_calls_and_no_other);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(host_suite()); }

/* check_histo.c: histo.so and histo_sink.so through the NARVAL ABI: exact counts, file bytes, instances and aborts, configuration errors, GPU equal to CPU. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "adf.h"
#include "narval.h"
#include "testkit.h"
#ifdef NARWHAL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static char tmp[PATH_MAX];
static char conf_dir[PATH_MAX + 8];
static char out_dir[PATH_MAX + 8];
static tk_actor histo, sink;

enum { BLOCK = 1 << 20 };
static uint8_t block[BLOCK];
static adf_writer w;

/* ---- helpers ----------------------------------------------------------------- */

static void setup(void)
{
    tk_make_tmpdir(tmp, sizeof tmp, "check_histo");
    snprintf(conf_dir, sizeof conf_dir, "%s/conf", tmp);
    snprintf(out_dir, sizeof out_dir, "%s/out", tmp);
    ck_assert_int_eq(mkdir(conf_dir, 0700), 0);
    tk_load_actor(&histo, "histo.so");
    tk_load_actor(&sink, "histo_sink.so");
    adf_writer_init(&w, block, sizeof block);
}

static void teardown(void)
{
    dlclose(histo.so);
    dlclose(sink.so);
    tk_remove_tree(tmp);
}

/* <cdir>/Histo.conf = OutputDir odir + text; process_config of a on cdir. */
static unsigned configure_in(tk_actor *a, const char *cdir, const char *odir, const char *text)
{
    char full[PATH_MAX + 4096];
    unsigned code;
    snprintf(full, sizeof full, "OutputDir %s\n%s", odir, text);
    tk_write_text(tk_path(cdir, "Histo.conf"), full);
    a->config(cdir, &code);
    return code;
}

/* Histo.conf = the common keys (output directory, no plots unless asked) + text. */
static unsigned configure(tk_actor *a, const char *text)
{
    return configure_in(a, conf_dir, out_dir, text);
}

/* process_config with stderr captured into log. */
static unsigned configure_logged(tk_actor *a, const char *text, char *log, size_t len)
{
    const char *path = tk_path(tmp, "stderr.txt");
    int saved = tk_capture_begin(path);
    unsigned code = configure(a, text);
    tk_capture_end(saved, path, log, len);
    return code;
}

static void *begin(tk_actor *a)
{
    unsigned code;
    void *inst = a->reg(&code);
    ck_assert_uint_eq(code, 0);
    a->initialise(inst, &code);
    ck_assert_uint_eq(code, 0);
    a->start(inst, &code);
    ck_assert_uint_eq(code, 0);
    return inst;
}

static void end(tk_actor *a, void *inst)
{
    unsigned code;
    a->stop(inst, &code);
    ck_assert_uint_eq(code, 0);
    a->unload(inst, &code);
    ck_assert_uint_eq(code, 0);
}

/* The filter on the frames written so far; its output must equal its input. */
static unsigned feed(tk_actor *a, void *inst)
{
    uint8_t *out = malloc(w.used + 1);
    unsigned used = 0, code;
    ck_assert_ptr_nonnull(out);
    a->filter(inst, block, (unsigned)w.used, out, (unsigned)w.used, &used, &code);
    if (code == 0) {
        ck_assert_uint_eq(used, w.used);
        ck_assert_int_eq(memcmp(out, block, w.used), 0);
    }
    free(out);
    adf_writer_init(&w, block, sizeof block);
    return code;
}

static void put_tracked(const float *e, unsigned n)
{
    adf_tracked t = { .n_gammas = (uint16_t)n };
    for (unsigned i = 0; i < n; i++) {
        t.gamma[i].e = e[i];
        t.gamma[i].e_dc = e[i] * 2;
    }
    ck_assert_int_eq(adf_tracked_write(&w, 1, 100, &t), ADF_OK);
}

static void put_crystal(unsigned id, const float *energy, unsigned channels)
{
    static adf_crystal c;
    memset(&c, 0, sizeof c);
    c.crystal_id = (uint16_t)id;
    c.n_channels = (uint16_t)channels;
    c.n_samples = 4;
    c.gain = 1;
    memcpy(c.energy, energy, channels * sizeof *energy);
    ck_assert_int_eq(adf_crystal_write(&w, 2, 200, &c), ADF_OK);
}

static void put_psa(unsigned id, float e0, const adf_psa_hit *hits, unsigned n)
{
    static adf_psa p;
    memset(&p, 0, sizeof p);
    p.crystal_id = (uint16_t)id;
    p.e0 = e0;
    p.n_hits = (uint16_t)n;
    memcpy(p.hit, hits, n * sizeof *hits);
    ck_assert_int_eq(adf_psa_write(&w, 3, 300, &p), ADF_OK);
}

typedef struct csv {
    uint64_t bins[256];
    uint64_t under, over, nan, rows;
} csv;

/* Reads a 1D CSV of at most 256 bins (only non-zero bins have rows). */
static void read_csv(const char *path, csv *c)
{
    size_t n;
    char *text = (char *)tk_slurp(path, &n);
    ck_assert_msg(text != NULL, "missing %s", path);
    memset(c, 0, sizeof *c);
    ck_assert_msg(strncmp(text, "bin,low,high,count\n", 19) == 0, "%s: header", path);
    for (char *line = strtok(text + 19, "\n"); line; line = strtok(NULL, "\n")) {
        unsigned long long bin, count;
        if (sscanf(line, "underflow,,,%llu", &count) == 1)
            c->under = count;
        else if (sscanf(line, "overflow,,,%llu", &count) == 1)
            c->over = count;
        else if (sscanf(line, "nan,,,%llu", &count) == 1)
            c->nan = count;
        else {
            ck_assert_msg(sscanf(line, "%llu,%*[^,],%*[^,],%llu", &bin, &count) == 2 && bin < 256,
                          "%s: bad row '%s'", path, line);
            c->bins[bin] = count;
        }
        c->rows++;
    }
    free(text);
}

static uint64_t csv_total(const csv *c)
{
    uint64_t t = c->under + c->over + c->nan;
    for (int i = 0; i < 256; i++)
        t += c->bins[i];
    return t;
}

/* The files under dir (not below) whose names end with ".part": unpublished temporaries. */
static int count_temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    ck_assert_msg(d != NULL, "no directory %s", dir);
    while ((e = readdir(d)) != NULL) {
        size_t k = strlen(e->d_name);
        n += k > 5 && strcmp(e->d_name + k - 5, ".part") == 0;
    }
    closedir(d);
    return n;
}

/* ---- exact counts ------------------------------------------------------------ */

START_TEST(edges_under_over_nan)
{
    ck_assert_uint_eq(configure(&histo, "Histogram e tracked.e sum 8 0 8\nPlot none\n"), 0);
    void *inst = begin(&histo);
    const float e[] = { 0.0f, -0.0f, 1.0f, 2.5f, 7.999f, 7.0f, 8.0f, INFINITY, -0.001f,
                        -INFINITY, NAN, 0.99999994f };
    put_tracked(e, 6);
    put_tracked(e + 6, 6);
    ck_assert_uint_eq(feed(&histo, inst), 0);
    end(&histo, inst);
    csv c;
    read_csv(tk_path(out_dir, "e.csv"), &c);
    const uint64_t want[8] = { 3, 1, 1, 0, 0, 0, 0, 2 }; /* 0.99999994 < 1: bin 0 */
    for (int i = 0; i < 8; i++)
        ck_assert_msg(c.bins[i] == want[i], "bin %d: %llu, want %llu", i,
                      (unsigned long long)c.bins[i], (unsigned long long)want[i]);
    ck_assert_uint_eq(c.under, 2);
    ck_assert_uint_eq(c.over, 2);
    ck_assert_uint_eq(c.nan, 1);
    ck_assert_uint_eq(c.rows, 4 + 3); /* non-zero bins, then the three counters */
}
END_TEST

START_TEST(inexact_edges_follow_the_float_rule)
{
    /* 3 bins over [0, 0.3): scale = float(10); 0.1f * 10 rounds to exactly 1. */
    ck_assert_uint_eq(configure(&histo, "Histogram e tracked.e sum 3 0 0.3\nPlot none\n"), 0);
    void *inst = begin(&histo);
    const float e[] = { 0.1f, 0.2f, nextafterf(0.3f, 0), 0.3f, nextafterf(0.1f, 0) };
    put_tracked(e, 5);
    ck_assert_uint_eq(feed(&histo, inst), 0);
    end(&histo, inst);
    csv c;
    read_csv(tk_path(out_dir, "e.csv"), &c);
    float scale = (float)(3.0 / (double)0.3f);
    uint64_t want[3] = { 0 }, over = 0;
    for (int i = 0; i < 5; i++) {
        if (e[i] >= 0.3f) {
            over++;
            continue;
        }
        unsigned b = (unsigned)(e[i] * scale);
        want[b < 3 ? b : 2]++;
    }
    for (int i = 0; i < 3; i++)
        ck_assert_uint_eq(c.bins[i], want[i]);
    ck_assert_uint_eq(c.over, over);
}
END_TEST

START_TEST(doppler_and_gamma_gamma_pairs)
{
    ck_assert_uint_eq(configure(&histo, "Histogram dc tracked.e_dc sum 16 0 16\n"
                                        "Histogram gg gg.e sum 8 0 8 8 0 8\nPlot none\n"),
                      0);
    void *inst = begin(&histo);
    const float e[] = { 1.5f, 2.5f, 3.5f, NAN };
    put_tracked(e, 3);     /* 6 ordered pairs */
    put_tracked(e + 2, 2); /* (3.5, NaN) and (NaN, 3.5) */
    ck_assert_uint_eq(feed(&histo, inst), 0);
    end(&histo, inst);
    csv c;
    read_csv(tk_path(out_dir, "dc.csv"), &c);
    ck_assert_uint_eq(c.bins[3], 1); /* e_dc = 2 e */
    ck_assert_uint_eq(c.bins[5], 1);
    ck_assert_uint_eq(c.bins[7], 2);
    ck_assert_uint_eq(c.nan, 1);
    size_t n;
    char *text = (char *)tk_slurp(tk_path(out_dir, "gg.csv"), &n);
    ck_assert_ptr_nonnull(text);
    ck_assert_str_eq(text, "x_bin,y_bin,x_low,y_low,count\n"
                           "1,2,1,2,1\n1,3,1,3,1\n2,1,2,1,1\n2,3,2,3,1\n3,1,3,1,1\n3,2,3,2,1\n"
                           "underflow,,,,0\noverflow,,,,0\nnan,,,,2\n");
    free(text);
}
END_TEST

START_TEST(crystal_families)
{
    ck_assert_uint_eq(configure(&histo, "Crystals 4\nSegments 36\n"
                                        "Histogram seg crystal.segment segment 64 0 64\n"
                                        "Histogram segc crystal.segment crystal 64 0 64\n"
                                        "Histogram core crystal.core crystal 256 0 256\n"
                                        "Histogram total crystal.core sum 256 0 256\nPlot none\n"),
                      0);
    void *inst = begin(&histo);
    float energy[37];
    for (int s = 0; s < 36; s++)
        energy[s] = s + 0.5f;
    energy[36] = 100.5f;
    put_crystal(3, energy, 37);
    put_crystal(3, energy, 37);
    energy[36] = 200.5f;
    put_crystal(0, energy, 37);
    ck_assert_uint_eq(feed(&histo, inst), 0);
    end(&histo, inst);
    csv c;
    read_csv(tk_path(out_dir, "seg/seg_c003_s05.csv"), &c);
    ck_assert_uint_eq(c.bins[5], 2);
    ck_assert_uint_eq(csv_total(&c), 2);
    read_csv(tk_path(out_dir, "seg/seg_c002_s05.csv"), &c);
    ck_assert_uint_eq(csv_total(&c), 0);
    read_csv(tk_path(out_dir, "segc/segc_c003.csv"), &c);
    for (int s = 0; s < 36; s++)
        ck_assert_uint_eq(c.bins[s], 2);
    read_csv(tk_path(out_dir, "core/core_c003.csv"), &c);
    ck_assert_uint_eq(c.bins[100], 2);
    ck_assert_uint_eq(csv_total(&c), 2);
    read_csv(tk_path(out_dir, "core/core_c000.csv"), &c);
    ck_assert_uint_eq(c.bins[200], 1);
    read_csv(tk_path(out_dir, "total.csv"), &c);
    ck_assert_uint_eq(c.bins[100], 2);
    ck_assert_uint_eq(c.bins[200], 1);
    ck_assert_int_eq(access(tk_path(out_dir, "seg/seg_c003_s35.spe"), F_OK), 0);
    ck_assert_int_eq(access(tk_path(out_dir, "seg/seg_c004_s00.spe"), F_OK), -1);
}
END_TEST

START_TEST(psa_hits_and_maps_inside_composites)
{
    ck_assert_uint_eq(configure(&histo, "Crystals 2\nSegments 36\n"
                                        "Histogram e psa.e segment 100 0 100\n"
                                        "Histogram x psa.x crystal 100 -50 50\n"
                                        "Histogram z psa.z sum 100 0 100\n"
                                        "Histogram e0 psa.core crystal 100 0 100\n"
                                        "Histogram xy psa.xy crystal 10 -50 50 10 -50 50\n"
                                        "Plot none\n"),
                      0);
    void *inst = begin(&histo);
    adf_psa_hit hits[2] = { { .segment = 7, .x = -12.5f, .y = 33.0f, .z = 40.5f, .e = 60.5f },
                            { .segment = 8, .x = 20.0f, .y = -50.0f, .z = 99.5f, .e = 30.5f } };
    put_psa(1, 91.0f, hits, 2);
    ck_assert_int_eq(adf_begin(&w, ADF_ID_EVENT_DATA_PSA, 4, 400), ADF_OK);
    put_psa(1, 91.0f, hits, 1);
    ck_assert_int_eq(adf_end(&w), ADF_OK);
    ck_assert_uint_eq(feed(&histo, inst), 0);
    end(&histo, inst);
    csv c;
    read_csv(tk_path(out_dir, "e/e_c001_s07.csv"), &c);
    ck_assert_uint_eq(c.bins[60], 2);
    read_csv(tk_path(out_dir, "e/e_c001_s08.csv"), &c);
    ck_assert_uint_eq(c.bins[30], 1);
    read_csv(tk_path(out_dir, "x/x_c001.csv"), &c);
    ck_assert_uint_eq(c.bins[37], 2); /* -12.5 + 50 */
    ck_assert_uint_eq(c.bins[70], 1);
    read_csv(tk_path(out_dir, "z.csv"), &c);
    ck_assert_uint_eq(c.bins[40], 2);
    ck_assert_uint_eq(c.bins[99], 1);
    read_csv(tk_path(out_dir, "e0/e0_c001.csv"), &c);
    ck_assert_uint_eq(c.bins[91], 2);
    size_t n;
    char *text = (char *)tk_slurp(tk_path(out_dir, "xy/xy_c001.csv"), &n);
    ck_assert_ptr_nonnull(text);
    ck_assert_str_eq(text, "x_bin,y_bin,x_low,y_low,count\n3,8,-20,30,2\n"
                           "7,0,20,-50,1\nunderflow,,,,0\noverflow,,,,0\nnan,,,,0\n");
    free(text);
}
END_TEST

/* ---- file bytes -------------------------------------------------------------- */

static void le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

START_TEST(spe_bytes)
{
    ck_assert_uint_eq(configure(&histo, "Histogram spec4 tracked.e sum 4 0 4\nFormats spe\n"
                                        "Plot none\n"),
                      0);
    void *inst = begin(&histo);
    const float e[] = { 0.5f, 1.5f, 1.7f, 3.2f, 3.0f, 3.9f, 9.0f };
    put_tracked(e, 7);
    ck_assert_uint_eq(feed(&histo, inst), 0);
    end(&histo, inst);
    uint8_t want[32 + 8 + 16];
    const float counts[4] = { 1, 2, 0, 3 };
    le32(want, 24);
    memcpy(want + 4, "spec4   ", 8);
    le32(want + 12, 4);
    le32(want + 16, 1);
    le32(want + 20, 1);
    le32(want + 24, 1);
    le32(want + 28, 24);
    le32(want + 32, 16);
    for (int i = 0; i < 4; i++) {
        uint32_t bits;
        memcpy(&bits, &counts[i], 4);
        le32(want + 36 + 4 * i, bits);
    }
    le32(want + 52, 16);
    size_t n;
    uint8_t *got = tk_slurp(tk_path(out_dir, "spec4.spe"), &n);
    ck_assert_ptr_nonnull(got);
    ck_assert_uint_eq(n, sizeof want);
    ck_assert_mem_eq(got, want, sizeof want);
    free(got);
    ck_assert_int_eq(access(tk_path(out_dir, "spec4.csv"), F_OK), -1); /* Formats spe only */
    ck_assert_int_eq(count_temporaries(out_dir), 0);
}
END_TEST

START_TEST(m4b_bytes)
{
    /* gg.e without axes: 4096 x 4096 bins of 1 keV */
    ck_assert_uint_eq(configure(&histo, "Histogram gg gg.e sum\nFormats m4b\nPlot none\n"), 0);
    void *inst = begin(&histo);
    const float e[] = { 10.5f, 20.5f, 4095.5f };
    put_tracked(e, 3);
    put_tracked(e, 2);
    ck_assert_uint_eq(feed(&histo, inst), 0);
    end(&histo, inst);
    size_t n;
    uint8_t *got = tk_slurp(tk_path(out_dir, "gg.m4b"), &n);
    ck_assert_ptr_nonnull(got);
    ck_assert_uint_eq(n, (size_t)4096 * 4096 * 4);
    uint8_t *want = calloc(n, 1);
    ck_assert_ptr_nonnull(want);
    le32(want + 4 * (10 * 4096 + 20), 2);
    le32(want + 4 * (20 * 4096 + 10), 2);
    le32(want + 4 * (10 * 4096 + 4095), 1);
    le32(want + 4 * (4095 * 4096 + 10), 1);
    le32(want + 4 * (20 * 4096 + 4095), 1);
    le32(want + 4 * (4095 * 4096 + 20), 1);
    ck_assert_int_eq(memcmp(got, want, n), 0);
    free(want);
    free(got);
}
END_TEST

/* ---- the filter contract ------------------------------------------------------- */

START_TEST(output_too_small_changes_nothing)
{
    ck_assert_uint_eq(configure(&histo, "Histogram e tracked.e sum 8 0 8\nPlot none\n"), 0);
    void *inst = begin(&histo);
    const float e[] = { 1.5f, 2.5f };
    put_tracked(e, 2);
    put_tracked(e, 1);
    uint8_t out[64];
    unsigned used = 0, code;
    histo.filter(inst, block, (unsigned)w.used, out, sizeof out, &used, &code);
    ck_assert_uint_eq(code, NARVAL_E_OUTPUT_SIZE);
    ck_assert_uint_eq(used, w.used);
    ck_assert_uint_eq(feed(&histo, inst), 0); /* the same block again, room enough */
    end(&histo, inst);
    csv c;
    read_csv(tk_path(out_dir, "e.csv"), &c);
    ck_assert_uint_eq(c.bins[1], 2);
    ck_assert_uint_eq(c.bins[2], 1);
}
END_TEST

START_TEST(malformed_block_counts_nothing)
{
    ck_assert_uint_eq(configure(&histo, "Histogram e tracked.e sum 8 0 8\nPlot none\n"), 0);
    void *inst = begin(&histo);
    const float e[] = { 1.5f };
    put_tracked(e, 1);
    size_t good = w.used;
    put_tracked(e, 1);
    le32(block + good, 5000); /* the second frame's length runs past the block */
    ck_assert_uint_eq(feed(&histo, inst), NARVAL_E_INPUT);
    put_tracked(e, 1);
    ck_assert_uint_eq(feed(&histo, inst), 0);
    end(&histo, inst);
    csv c;
    read_csv(tk_path(out_dir, "e.csv"), &c);
    ck_assert_uint_eq(csv_total(&c), 1);
}
END_TEST

/* The bad-frame policy (kit.h): a frame beyond the configuration (a crystal
 * id, a segment) is rejected whole, counted and named; none of its entries
 * is counted, not even those before the one at fault, and it is not passed
 * on; past MaxBadFrames the block fails. */
START_TEST(frames_beyond_the_configuration_are_bad_frames)
{
    ck_assert_uint_eq(configure(&histo, "Crystals 4\nHistogram c crystal.core crystal 8 0 8\n"
                                        "Histogram h psa.e segment 8 0 8\nPlot none\n"),
                      0);
    void *inst = begin(&histo);
    float energy[2] = { 1, 2 };
    put_crystal(4, energy, 2);
    size_t second = w.used;
    adf_psa_hit hits[2] = { { .segment = 0, .e = 3 }, { .segment = 36, .e = 4 } };
    put_psa(1, 7, hits, 2);
    size_t good = w.used;
    put_crystal(1, energy, 2);
    uint8_t out[BLOCK];
    unsigned used = 0, code;
    char log[8192];
    const char *path = tk_path(tmp, "stderr.txt");
    int saved = tk_capture_begin(path);
    histo.filter(inst, block, (unsigned)w.used, out, sizeof out, &used, &code);
    tk_capture_end(saved, path, log, sizeof log);
    ck_assert_uint_eq(code, 0);
    ck_assert_uint_eq(used, w.used - good); /* only the good frame passes on */
    ck_assert_int_eq(memcmp(out, block + good, used), 0);
    ck_assert_msg(strstr(log, "bad frame rejected: event 2 (narwhal:crystal of crystal 4) at byte 0 of the input "
                              "block: narwhal:crystal at byte 0: crystal id 4, but Crystals is 4 (histogram 'c')"),
                  "%s", log);
    char line[256];
    snprintf(line, sizeof line, "bad frame rejected: event 3 (data:psa of crystal 1) at byte %zu of the input block: "
             "data:psa at byte %zu: crystal 1 segment 36, but Segments is 36 (histogram 'h')", second, second);
    ck_assert_msg(strstr(log, line), "%s", log);
    saved = tk_capture_begin(path);
    end(&histo, inst);
    tk_capture_end(saved, path, log, sizeof log);
    ck_assert_msg(strstr(log, "2 bad frames rejected in this run (MaxBadFrames 100)"), "%s", log);
    csv c;
    read_csv(tk_path(out_dir, "h/h_c001_s00.csv"), &c);
    ck_assert_uint_eq(csv_total(&c), 0); /* hit 0 of the rejected frame was not counted */
    read_csv(tk_path(out_dir, "c/c_c001.csv"), &c);
    ck_assert_uint_eq(csv_total(&c), 1);

    ck_assert_uint_eq(configure(&histo, "Crystals 4\nHistogram c crystal.core crystal 8 0 8\nPlot none\n"
                                        "MaxBadFrames 0\n"), 0);
    inst = begin(&histo);
    put_crystal(4, energy, 2);
    ck_assert_uint_eq(feed(&histo, inst), NARVAL_E_INPUT);
    histo.unload(inst, &code);
}
END_TEST

/* A block of many frames is decoded by several threads (histo_block.c, Threads 4):
 * the same counts, the same frames passed on, and its bad frames rejected
 * and logged in their order, wherever they fall among the threads' runs. */
START_TEST(many_frames_on_threads_count_as_one)
{
    enum { FRAMES = 1200, CRYSTALS = 4 };
    const unsigned bad[] = { 5, 400, 700, 1199 };
    uint64_t want_c[CRYSTALS] = { 0 }, want_h[8] = { 0 };
    uint8_t *expect = malloc(BLOCK), *out = malloc(BLOCK);
    size_t expect_used = 0, offset[4];
    ck_assert_ptr_nonnull(expect);
    ck_assert_ptr_nonnull(out);
    ck_assert_uint_eq(configure(&histo, "Crystals 4\nHistogram c psa.core crystal 8 0 8\n"
                                        "Histogram h psa.e sum 8 0 8\nPlot none\nThreads 4\n"), 0);
    void *inst = begin(&histo);
    static adf_psa p;
    for (unsigned i = 0, b = 0; i < FRAMES; i++) {
        bool rejected = b < 4 && bad[b] == i;
        size_t at = w.used;
        memset(&p, 0, sizeof p);
        p.crystal_id = (uint16_t)(rejected ? CRYSTALS : i % CRYSTALS);
        p.e0 = (float)(i % 8) + 0.5f;
        p.n_hits = (uint16_t)(i % 3);
        for (unsigned h = 0; h < p.n_hits; h++)
            p.hit[h] = (adf_psa_hit){ .segment = (int16_t)h, .e = (float)((i + h) % 8) + 0.5f };
        ck_assert_int_eq(adf_psa_write(&w, 1000 + i, 10u * i, &p), ADF_OK);
        if (rejected) {
            offset[b++] = at;
            continue;
        }
        memcpy(expect + expect_used, block + at, w.used - at);
        expect_used += w.used - at;
        want_c[p.crystal_id]++;
        for (unsigned h = 0; h < p.n_hits; h++)
            want_h[(i + h) % 8]++;
    }
    unsigned used = 0, code;
    char log[8192];
    const char *path = tk_path(tmp, "stderr.txt");
    int saved = tk_capture_begin(path);
    histo.filter(inst, block, (unsigned)w.used, out, BLOCK, &used, &code);
    tk_capture_end(saved, path, log, sizeof log);
    ck_assert_uint_eq(code, 0);
    ck_assert_uint_eq(used, expect_used);
    ck_assert_int_eq(memcmp(out, expect, used), 0);
    const char *last = log;
    for (unsigned b = 0; b < 4; b++) {
        char line[160];
        snprintf(line, sizeof line, "event %u (data:psa of crystal 4) at byte %zu of the input block", 1000 + bad[b],
                 offset[b]);
        const char *at = strstr(log, line);
        ck_assert_msg(at && at >= last, "%s not logged after the previous bad frame:\n%s", line, log);
        last = at;
    }
    end(&histo, inst);
    csv c;
    for (unsigned k = 0; k < CRYSTALS; k++) {
        char name[32];
        snprintf(name, sizeof name, "c/c_c%03u.csv", k);
        read_csv(tk_path(out_dir, name), &c);
        ck_assert_uint_eq(csv_total(&c), want_c[k]);
    }
    read_csv(tk_path(out_dir, "h.csv"), &c);
    for (unsigned bin = 0; bin < 8; bin++)
        ck_assert_uint_eq(c.bins[bin], want_h[bin]);
    free(expect);
    free(out);
}
END_TEST

START_TEST(sink_counts_like_the_filter)
{
    ck_assert_uint_eq(configure(&sink, "Histogram e tracked.e sum 8 0 8\nPlot none\n"), 0);
    ck_assert_ptr_nonnull(strstr(sink.describe(), "consumer"));
    void *inst = begin(&sink);
    const float e[] = { 1.5f, 6.5f, 6.5f };
    put_tracked(e, 3);
    unsigned code;
    sink.consume(inst, block, (unsigned)w.used, &code);
    ck_assert_uint_eq(code, 0);
    sink.consume(inst, block, 0, &code);
    ck_assert_uint_eq(code, 0);
    end(&sink, inst);
    csv c;
    read_csv(tk_path(out_dir, "e.csv"), &c);
    ck_assert_uint_eq(c.bins[1], 1);
    ck_assert_uint_eq(c.bins[6], 2);
}
END_TEST

/* The snapshots of a run go to OutputDir/live/; OutputDir gets the run's files only at stop. */
START_TEST(written_every_interval_and_plotted)
{
    char live[PATH_MAX + 16];
    snprintf(live, sizeof live, "%s/live", out_dir);
    ck_assert_uint_eq(configure(&histo, "WriteEvery 0.3\nHistogram e tracked.e sum 64 0 64\n"
                                        "Plot e\n"),
                      0);
    void *inst = begin(&histo);
    const float e[] = { 10.5f, 11.5f, 11.5f, 40.5f };
    put_tracked(e, 4);
    ck_assert_uint_eq(feed(&histo, inst), 0);
    ck_assert_int_eq(access(tk_path(live, "e.spe"), F_OK), -1);
    struct timespec pause = { 0, 350 * 1000 * 1000 };
    nanosleep(&pause, NULL);
    put_tracked(e, 1);
    ck_assert_uint_eq(feed(&histo, inst), 0);
    csv c;
    read_csv(tk_path(live, "e.csv"), &c); /* a snapshot before stop */
    ck_assert_uint_eq(csv_total(&c), 5);
    ck_assert_int_eq(access(tk_path(out_dir, "e.csv"), F_OK), -1);
    ck_assert_int_eq(access(tk_path(out_dir, "e.spe"), F_OK), -1);
    put_tracked(e, 3);
    ck_assert_uint_eq(feed(&histo, inst), 0);
    end(&histo, inst);
    read_csv(tk_path(out_dir, "e.csv"), &c);
    ck_assert_uint_eq(csv_total(&c), 8);
    ck_assert_int_eq(count_temporaries(out_dir), 0);
    ck_assert_int_eq(count_temporaries(live), 0);
    size_t n;
    uint8_t *png = tk_slurp(tk_path(out_dir, "e.png"), &n);
    if (access("/usr/bin/gnuplot", X_OK) != 0 && !png)
        TK_SKIP("gnuplot is not installed, e.png not checked");
    ck_assert_ptr_nonnull(png);
    ck_assert_uint_gt(n, 1000);
    ck_assert_mem_eq(png, "\x89PNG\r\n\x1a\n", 8);
    free(png);
}
END_TEST

START_TEST(missing_gnuplot_is_a_warning)
{
    ck_assert_uint_eq(configure(&histo, "Histogram e tracked.e sum 16384 0 16384\nPlot e\n"), 0);
    void *inst = begin(&histo);
    float e[64];
    for (int i = 0; i < 64; i++)
        e[i] = 256.0f * i + 0.5f; /* a plot script far larger than a pipe's buffer */
    put_tracked(e, 64);
    ck_assert_uint_eq(feed(&histo, inst), 0);
    char *path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    setenv("PATH", "/nonexistent", 1);
    end(&histo, inst);
    setenv("PATH", path, 1);
    free(path);
    ck_assert_int_eq(access(tk_path(out_dir, "e.spe"), F_OK), 0);
    ck_assert_int_eq(access(tk_path(out_dir, "e.png"), F_OK), -1);
    ck_assert_int_eq(count_temporaries(out_dir), 0);
}
END_TEST

/* ---- instances, runs and aborts ------------------------------------------------ */

/* Two copies of histo.so, as the emulator gives two actors with their own
 * configuration directories: each writes its own OutputDir, at the same time. */
START_TEST(copies_with_their_own_directories_both_write)
{
    char conf2[PATH_MAX + 8], out2[PATH_MAX + 8], copies[PATH_MAX + 8];
    snprintf(conf2, sizeof conf2, "%s/conf2", tmp);
    snprintf(out2, sizeof out2, "%s/out2", tmp);
    snprintf(copies, sizeof copies, "%s/copy", tmp);
    ck_assert_int_eq(mkdir(conf2, 0700), 0);
    ck_assert_int_eq(mkdir(copies, 0700), 0);
    tk_actor histo2;
    tk_load_actor_copy(&histo2, "histo.so", copies);
    ck_assert_uint_eq(configure(&histo, "Histogram e tracked.e sum 8 0 8\nPlot none\n"), 0);
    ck_assert_uint_eq(configure_in(&histo2, conf2, out2, "Histogram e tracked.e sum 8 0 8\n"
                                                         "Plot none\n"),
                      0);
    void *one = begin(&histo), *two = begin(&histo2);
    const float e[] = { 1.5f, 2.5f, 5.5f };
    put_tracked(e, 1);
    ck_assert_uint_eq(feed(&histo, one), 0);
    put_tracked(e + 1, 2);
    ck_assert_uint_eq(feed(&histo2, two), 0);
    put_tracked(e, 1);
    ck_assert_uint_eq(feed(&histo, one), 0);
    end(&histo2, two);
    end(&histo, one);
    csv c;
    read_csv(tk_path(out_dir, "e.csv"), &c);
    ck_assert_uint_eq(c.bins[1], 2);
    ck_assert_uint_eq(csv_total(&c), 2);
    read_csv(tk_path(out2, "e.csv"), &c);
    ck_assert_uint_eq(c.bins[2], 1);
    ck_assert_uint_eq(c.bins[5], 1);
    ck_assert_uint_eq(csv_total(&c), 2);
    ck_assert_int_eq(access(tk_path(out_dir, ".narwhal.lock"), F_OK), -1); /* released at unload */
    dlclose(histo2.so);
}
END_TEST

/* One configuration, several instances (a NARVAL host registers K instances of a
 * library it configured once): instance 1 writes into OutputDir, instance k into
 * OutputDir/instance-k, each its own counts, the log saying which.  (Before, the
 * second instance was refused OutputDir: the same library, the same configuration.) */
START_TEST(instances_of_one_configuration_write_their_own_directories)
{
    char log[4096], want[3 * PATH_MAX], dir2[PATH_MAX + 32], dir3[PATH_MAX + 32];
    snprintf(dir2, sizeof dir2, "%s/instance-2", out_dir);
    snprintf(dir3, sizeof dir3, "%s/instance-3", out_dir);
    ck_assert_uint_eq(configure(&histo, "Histogram e tracked.e sum 8 0 8\nPlot none\n"), 0);
    void *one = begin(&histo);
    const char *path = tk_path(tmp, "stderr.txt");
    int saved = tk_capture_begin(path);
    void *two = begin(&histo), *three = begin(&histo);
    tk_capture_end(saved, path, log, sizeof log);
    snprintf(want, sizeof want, "[Histo#2] instance 2 of this configuration writes '%s' (key "
             "'OutputDir' names '%s', which instance 1 writes)\n", dir2, out_dir);
    ck_assert_msg(strstr(log, want) != NULL, "no '%s' in: %s", want, log);
    ck_assert_ptr_nonnull(strstr(log, "[Histo#3] instance 3 of this configuration writes"));
    const float e[] = { 1.5f, 2.5f, 5.5f };
    put_tracked(e, 1);
    ck_assert_uint_eq(feed(&histo, one), 0);
    put_tracked(e + 1, 1);
    ck_assert_uint_eq(feed(&histo, two), 0);
    put_tracked(e + 1, 2);
    ck_assert_uint_eq(feed(&histo, three), 0);
    put_tracked(e, 1);
    ck_assert_uint_eq(feed(&histo, one), 0);
    end(&histo, three);
    end(&histo, one);
    end(&histo, two);
    csv c;
    read_csv(tk_path(out_dir, "e.csv"), &c);
    ck_assert_uint_eq(c.bins[1], 2);
    ck_assert_uint_eq(csv_total(&c), 2);
    read_csv(tk_path(dir2, "e.csv"), &c);
    ck_assert_uint_eq(c.bins[2], 1);
    ck_assert_uint_eq(csv_total(&c), 1);
    read_csv(tk_path(dir3, "e.csv"), &c);
    ck_assert_uint_eq(c.bins[2], 1);
    ck_assert_uint_eq(c.bins[5], 1);
    ck_assert_uint_eq(csv_total(&c), 2);
    ck_assert_int_eq(count_temporaries(out_dir) + count_temporaries(dir2) + count_temporaries(dir3), 0);
    ck_assert_int_eq(access(tk_path(dir2, ".narwhal.lock"), F_OK), -1); /* released at unload */
}
END_TEST

/* Another actor's configuration (a second copy of histo.so, as the emulator gives
 * an actor with its own configuration directory) that names a directory a live
 * instance writes, OutputDir itself or an instance's directory derived from it,
 * fails at initialise, naming the directory and the key. */
START_TEST(one_directory_is_refused_to_another_configuration)
{
    char copies[PATH_MAX + 8], conf2[PATH_MAX + 8], dir2[PATH_MAX + 32], log[4096], want[3 * PATH_MAX];
    snprintf(copies, sizeof copies, "%s/copy", tmp);
    snprintf(conf2, sizeof conf2, "%s/conf2", tmp);
    snprintf(dir2, sizeof dir2, "%s/instance-2", out_dir);
    ck_assert_int_eq(mkdir(copies, 0700), 0);
    ck_assert_int_eq(mkdir(conf2, 0700), 0);
    ck_assert_uint_eq(configure(&histo, "Histogram e tracked.e sum 8 0 8\nPlot none\n"), 0);
    void *one = begin(&histo);
    tk_actor histo2;
    tk_load_actor_copy(&histo2, "histo.so", copies);
    ck_assert_uint_eq(configure_in(&histo2, conf2, out_dir, "Histogram e tracked.e sum 8 0 8\nPlot none\n"), 0);
    unsigned code;
    void *two = histo2.reg(&code);
    ck_assert_uint_eq(code, 0);
    const char *path = tk_path(tmp, "stderr.txt");
    int saved = tk_capture_begin(path);
    histo2.initialise(two, &code);
    tk_capture_end(saved, path, log, sizeof log);
    ck_assert_uint_eq(code, NARVAL_E_CONFIG);
    snprintf(want, sizeof want, "[Histo] error: output directory '%s' is already being written "
             "by another live instance: change key 'OutputDir' in %s/Histo.conf", out_dir, conf2);
    ck_assert_msg(strstr(log, want) != NULL, "no '%s' in: %s", want, log);
    histo2.unload(two, &code);

    void *second = begin(&histo); /* writes OutputDir/instance-2 */
    ck_assert_uint_eq(configure_in(&histo2, conf2, dir2, "Histogram e tracked.e sum 8 0 8\nPlot none\n"), 0);
    two = histo2.reg(&code);
    saved = tk_capture_begin(path);
    histo2.initialise(two, &code);
    tk_capture_end(saved, path, log, sizeof log);
    ck_assert_uint_eq(code, NARVAL_E_CONFIG);
    snprintf(want, sizeof want, "[Histo] error: output directory '%s' is already being written "
             "by another live instance: change key 'OutputDir' in %s/Histo.conf", dir2, conf2);
    ck_assert_msg(strstr(log, want) != NULL, "no '%s' in: %s", want, log);
    histo2.unload(two, &code);
    end(&histo, second);
    end(&histo, one);
    two = begin(&histo2); /* free once the first is gone */
    end(&histo2, two);
    dlclose(histo2.so);
}
END_TEST

/* The host's abort (unload without stop) publishes nothing and says what was lost. */
START_TEST(abort_publishes_nothing)
{
    char log[4096], want[PATH_MAX + 200];
    ck_assert_uint_eq(configure(&histo, "Histogram e tracked.e sum 8 0 8\nPlot e\n"), 0);
    void *inst = begin(&histo);
    const float e[] = { 1.5f, 2.5f, 3.5f };
    put_tracked(e, 3);
    put_tracked(e, 2);
    ck_assert_uint_eq(feed(&histo, inst), 0);
    const char *path = tk_path(tmp, "stderr.txt");
    int saved = tk_capture_begin(path);
    unsigned code;
    histo.unload(inst, &code);
    tk_capture_end(saved, path, log, sizeof log);
    ck_assert_uint_eq(code, 0);
    snprintf(want, sizeof want, "[Histo] warning: unloaded without process_stop: discarded 2 "
             "frames (5 entries) of an unfinished run: its histograms were not written to %s/",
             out_dir);
    ck_assert_msg(strstr(log, want) != NULL, "no '%s' in: %s", want, log);
    DIR *d = opendir(out_dir);
    struct dirent *ent;
    ck_assert_ptr_nonnull(d);
    while ((ent = readdir(d)) != NULL)
        ck_assert_msg(strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0,
                      "an aborted run left %s in %s", ent->d_name, out_dir);
    closedir(d);
}
END_TEST

/* Reset in a run discards it; initialise again (NARVAL's order) or start straight
 * away; each run's files hold that run's counts; meta:eof passes through. */
START_TEST(runs_after_reset_and_meta_eof_passes)
{
    char log[4096];
    ck_assert_uint_eq(configure(&histo, "Histogram e tracked.e sum 8 0 8\nPlot none\n"), 0);
    void *inst = begin(&histo);
    const float e[] = { 1.5f, 2.5f, 3.5f };
    unsigned code;
    put_tracked(e, 3);
    ck_assert_uint_eq(feed(&histo, inst), 0);
    histo.reset(inst, &code); /* in the middle of the run */
    ck_assert_uint_eq(code, 0);
    ck_assert_int_eq(access(tk_path(out_dir, "e.csv"), F_OK), -1);
    histo.initialise(inst, &code);
    ck_assert_uint_eq(code, 0);
    histo.start(inst, &code);
    ck_assert_uint_eq(code, 0);
    put_tracked(e + 2, 1);
    adf_eof eof = { 1, 0 };
    ck_assert_int_eq(adf_eof_write(&w, 9, 900, &eof), ADF_OK);
    ck_assert_uint_eq(feed(&histo, inst), 0); /* the output equals the input, meta:eof included */
    const char *path = tk_path(tmp, "stderr.txt");
    int saved = tk_capture_begin(path);
    histo.stop(inst, &code);
    tk_capture_end(saved, path, log, sizeof log);
    ck_assert_uint_eq(code, 0);
    ck_assert_msg(strstr(log, "[Histo] run 2: 2 frames: 0 data:crystal, 0 data:psa, 1 "
                              "data:tracked, 1 others (not histogrammed); 1 entries counted; "
                              "the data ended with meta:eof"), "%s", log);
    csv c;
    read_csv(tk_path(out_dir, "e.csv"), &c);
    ck_assert_uint_eq(c.bins[3], 1);
    ck_assert_uint_eq(csv_total(&c), 1);
    histo.reset(inst, &code);
    ck_assert_uint_eq(code, 0);
    histo.start(inst, &code); /* a host that does not initialise again */
    ck_assert_uint_eq(code, 0);
    put_tracked(e, 2);
    ck_assert_uint_eq(feed(&histo, inst), 0);
    end(&histo, inst);
    read_csv(tk_path(out_dir, "e.csv"), &c);
    ck_assert_uint_eq(c.bins[1], 1);
    ck_assert_uint_eq(c.bins[2], 1);
    ck_assert_uint_eq(csv_total(&c), 2);
}
END_TEST

/* ---- configuration errors ----------------------------------------------------- */

static void expect_error(const char *text, const char *where, const char *what)
{
    char log[4096];
    unsigned code = configure_logged(&histo, text, log, sizeof log);
    ck_assert_msg(code == NARVAL_E_CONFIG, "'%s' accepted", text);
    char at[64];
    snprintf(at, sizeof at, "Histo.conf:%s:", where);
    ck_assert_msg(strstr(log, at) != NULL, "no '%s' in: %s", at, log);
    ck_assert_msg(strstr(log, what) != NULL, "no '%s' in: %s", what, log);
}

/* Line 1 of every file is OutputDir (configure adds it). */
START_TEST(configuration_errors_name_file_and_line)
{
    expect_error("Histogram a crystal.core sum 16 0 16\nHistogram b crystal.energy sum 16 0 16\n",
                 "3", "unknown quantity 'crystal.energy'");
    expect_error("Histogram a tracked.e crystal 16 0 16\n", "2", "scope 'crystal'");
    expect_error("\nHistogram a tracked.e sum 0 0 16\n", "3", "bins '0'");
    expect_error("Histogram a tracked.e sum 16 5 5\n", "2", "range [5, 5) is empty");
    expect_error("Histogram a tracked.e sum 16 0 x16\n", "2", "'x16' is not a finite number");
    expect_error("Histogram a tracked.e sum 16 0 16\nHistogram a tracked.e sum 8 0 8\n", "3",
                 "already declared on line 2");
    expect_error("Histogram g gg.e sum 16 0 16\n", "2", "needs 6 values");
    expect_error("Histogram a tracked.e sum 16 0 16 b tracked.e sum 16 0 16\n", "2",
                 "one declaration per line");
    expect_error("Histogram a/b tracked.e sum 16 0 16\n", "2", "name 'a/b'");
    expect_error("Histogram a tracked.e sum 16 0 16\nPlot b\n", "3", "'b' is not a declared");
    expect_error("Histogram g gg.e sum 4 0 4 4 0 4\nPlot g\n", "3", "matrix");
    expect_error("Crystals 2\nHistogram a crystal.core crystal 4 0 4\nPlot a:c2\n", "4",
                 "beyond Crystals 2");
    expect_error("Histogram a tracked.e sum 16 0 16\nFormats spe gif\n", "3", "format 'gif'");
    expect_error("Histogram a tracked.e sum 16 0 16\nDevice tpu\n", "3", "'tpu'");
    expect_error("Crystals 0\n", "2", "below the minimum 1");
    expect_error("Histogram a tracked.e sum 16 0 16\nThreads 0\n", "3", "key 'Threads'");
    expect_error("Histogram a tracked.e sum 16 0 16\nThreads many\n", "3", "key 'Threads'");
    expect_error("Histogram a tracked.e sum 16 0 16\nThreads 65\n", "3", "key 'Threads'");
    /* ranges whose bins are not floats apart: every entry landed in bin 0, the edges were inf */
    expect_error("Histogram a tracked.e sum 10 0 1e39\n", "2", "range [0, 1e39) is empty or not finite");
    expect_error("Histogram a tracked.e sum 1000000 10000000 10000001\n", "2",
                 "1000000 bins over [10000000, 10000001) are narrower than a float's step there (1)");
}
END_TEST

/* True when a CUDA device is usable; else false with why. */
static bool gpu_present(char *why, size_t len)
{
    snprintf(why, len, "built without CUDA");
#ifdef NARWHAL_HAVE_CUDA
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaSuccess && count > 0)
        return true;
    snprintf(why, len, "%s", err == cudaSuccess ? "no CUDA device" : cudaGetErrorString(err));
#endif
    return false;
}

START_TEST(gpu_forced_without_gpu_fails_at_initialise)
{
    char why[160];
    if (gpu_present(why, sizeof why))
        TK_SKIP("a GPU is present: the refusal of Device gpu is not tested");
    ck_assert_uint_eq(configure(&histo, "Device gpu\nHistogram e tracked.e sum 8 0 8\n"), 0);
    unsigned code;
    void *inst = histo.reg(&code);
    ck_assert_uint_eq(code, 0);
    histo.initialise(inst, &code);
    ck_assert_uint_eq(code, NARVAL_E_DEVICE);
    histo.unload(inst, &code);
    ck_assert_uint_eq(code, 0);
}
END_TEST

/* ---- GPU equal to CPU ---------------------------------------------------------- */

/* Every family, every kernel plan (shared memory with 32 copies and with one,
 * global atomics), bins with inexact edges, and values on edges, out of
 * range, infinite and NaN. */
static const char *const mixed_conf =
    "Crystals 4\nSegments 36\nPlot none\n"
    "Histogram t tracked.e sum 8192 0 4096\n"
    "Histogram tdc tracked.e_dc sum 1000 -5 3000.3\n"
    "Histogram gg gg.e sum 4096 0 4096 4096 0 4096\n"
    "Histogram seg crystal.segment segment 16384 0 8192\n"
    "Histogram core crystal.core crystal 4096 0 4096\n"
    "Histogram small psa.e crystal 64 0 2000\n"
    "Histogram xy psa.xy crystal 50 -40 40 50 -40 40\n"
    "Histogram z psa.z segment 100 0 90\n";

static float random_value(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    unsigned r = (unsigned)(*s >> 33);
    switch (r % 16) {
    case 0: return NAN;
    case 1: return (r & 32) ? INFINITY : -INFINITY;
    case 2: return (float)(r % 8192) * 0.5f; /* bin edges */
    case 3: return -(float)(r % 100);
    default: return (float)(r % 4200000) * 0.001f - 5.0f;
    }
}

static void random_block(uint64_t *s, unsigned events)
{
    float e[6], energy[37];
    adf_psa_hit hits[4];
    for (unsigned ev = 0; ev < events; ev++) {
        unsigned n = 1 + ev % 6;
        for (unsigned i = 0; i < n; i++)
            e[i] = random_value(s);
        put_tracked(e, n);
        for (unsigned i = 0; i < 37; i++)
            energy[i] = random_value(s);
        put_crystal(ev % 4, energy, 37);
        for (unsigned i = 0; i < 4; i++)
            hits[i] = (adf_psa_hit){ .segment = (int16_t)((ev + i) % 36), .x = random_value(s) / 50,
                                     .y = random_value(s) / 50, .z = random_value(s) / 40,
                                     .e = random_value(s) };
        put_psa(ev % 4, random_value(s), hits, 1 + ev % 4);
    }
}

static void run_mixed(const char *device, const char *dir)
{
    char text[2048];
    snprintf(out_dir, sizeof out_dir, "%s/%s", tmp, dir);
    snprintf(text, sizeof text, "Device %s\n%s", device, mixed_conf);
    ck_assert_uint_eq(configure(&histo, text), 0);
    void *inst = begin(&histo);
    uint64_t s = 12345;
    for (int b = 0; b < 12; b++) {
        random_block(&s, 40);
        ck_assert_uint_eq(feed(&histo, inst), 0);
    }
    end(&histo, inst);
}

static const char *other_dir;
static int compared;

static int compare_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    if (flag != FTW_F)
        return 0;
    char twin[PATH_MAX + 64];
    snprintf(twin, sizeof twin, "%s/%s", other_dir, strstr(path, "/cpu/") + 5);
    size_t n1, n2;
    uint8_t *a = tk_slurp(path, &n1), *b = tk_slurp(twin, &n2);
    ck_assert_msg(b != NULL, "GPU run lacks %s", twin);
    ck_assert_msg(n1 == n2 && memcmp(a, b, n1) == 0, "%s differs between CPU and GPU", twin);
    free(a);
    free(b);
    compared++;
    return 0;
}

START_TEST(gpu_counts_equal_cpu_counts)
{
    char why[160], gpu_dir[PATH_MAX + 8];
    run_mixed("cpu", "cpu"); /* the CPU half runs everywhere */
    if (!gpu_present(why, sizeof why))
        TK_SKIP("GPU equal to CPU not tested: %s", why);
    run_mixed("gpu", "gpu");
    snprintf(gpu_dir, sizeof gpu_dir, "%s/gpu", tmp);
    other_dir = gpu_dir;
    ck_assert_int_eq(nftw(tk_path(tmp, "cpu"), compare_entry, 16, FTW_PHYS), 0);
    ck_assert_int_eq(compared, 900); /* every histogram file of mixed_conf, each .spe with its .spe.txt */
}
END_TEST

static Suite *histo_suite(void)
{
    Suite *s = suite_create("histo");
    TCase *tc = tcase_create("counts");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, edges_under_over_nan);
    tcase_add_test(tc, inexact_edges_follow_the_float_rule);
    tcase_add_test(tc, doppler_and_gamma_gamma_pairs);
    tcase_add_test(tc, crystal_families);
    tcase_add_test(tc, psa_hits_and_maps_inside_composites);
    suite_add_tcase(s, tc);

    tc = tcase_create("files");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, spe_bytes);
    tcase_add_test(tc, m4b_bytes);
    tcase_add_test(tc, written_every_interval_and_plotted);
    tcase_add_test(tc, missing_gnuplot_is_a_warning);
    suite_add_tcase(s, tc);

    tc = tcase_create("contract");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, output_too_small_changes_nothing);
    tcase_add_test(tc, malformed_block_counts_nothing);
    tcase_add_test(tc, frames_beyond_the_configuration_are_bad_frames);
    tcase_add_test(tc, many_frames_on_threads_count_as_one);
    tcase_add_test(tc, sink_counts_like_the_filter);
    tcase_add_test(tc, configuration_errors_name_file_and_line);
    tcase_add_test(tc, gpu_forced_without_gpu_fails_at_initialise);
    suite_add_tcase(s, tc);

    tc = tcase_create("instances");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, copies_with_their_own_directories_both_write);
    tcase_add_test(tc, instances_of_one_configuration_write_their_own_directories);
    tcase_add_test(tc, one_directory_is_refused_to_another_configuration);
    tcase_add_test(tc, abort_publishes_nothing);
    tcase_add_test(tc, runs_after_reset_and_meta_eof_passes);
    suite_add_tcase(s, tc);

    tc = tcase_create("gpu");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, gpu_counts_equal_cpu_counts);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(histo_suite()); }

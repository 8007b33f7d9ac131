/* check_sim.c: generator.so through the NARVAL ABI: attenuation, Klein-Nishina, energy conservation, traces against the basis, determinism, GammaEvents, configuration errors. */
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
#include <unistd.h>

#include "adf.h"
#include "basis.h"
#include "geometry.h"
#include "narval.h"
#include "testkit.h"
#include "xs_ge.h"

enum { TEXT_MAX = 4 * PATH_MAX }; /* a configuration text naming up to three paths */

static char detector[PATH_MAX]; /* the repository's detector/ (the tests run from the repository root) */
static char tmp[PATH_MAX];
static char conf_dir[PATH_MAX + 8];
static tk_actor gen;

/* ---- helpers: files, the actor ------------------------------------------------ */

static const char *in_tmp(const char *name) { return tk_path(tmp, name); }

/* One crystal of the default shape on the +z axis, front face 235 mm from the target, unrotated. */
static const char one_crystal[] = "narwhal-array 1\n0 0 0 0 235 1 0 0 0 1 0 0 0 1\n";

static void setup(void)
{
    ck_assert_msg(realpath("detector", detector) != NULL, "run from the repository root: no detector/ here");
    tk_make_tmpdir(tmp, sizeof tmp, "check_sim");
    snprintf(conf_dir, sizeof conf_dir, "%s/conf", tmp);
    ck_assert_int_eq(mkdir(conf_dir, 0700), 0);
    tk_write_text(in_tmp("one.txt"), one_crystal);
    tk_load_actor(&gen, "generator.so");
}

static void teardown(void)
{
    dlclose(gen.so);
    tk_remove_tree(tmp);
}

/* The crystal and array paths are absolute so that the tests run from any directory. */
static void conf(const char *text)
{
    char path[PATH_MAX + 64], body[TEXT_MAX + PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/Generator.conf", conf_dir);
    snprintf(body, sizeof body, "Crystal %s/geometry/agata.geo\n%s", detector, text);
    tk_write_text(path, body);
}

/* What a run produced: the frames back to back. */
typedef struct stream {
    uint8_t *bytes;
    size_t size;
} stream;

/* Configures, registers and initialises an instance. */
static void *open_generator(const char *text)
{
    unsigned e;
    conf(text);
    gen.config(conf_dir, &e);
    ck_assert_msg(e == 0, "process_config: %u", e);
    void *g = gen.reg(&e);
    ck_assert_uint_eq(e, 0);
    gen.initialise(g, &e);
    ck_assert_msg(e == 0, "process_initialise: %u", e);
    return g;
}

static void append(stream *s, size_t *cap, const uint8_t *data, size_t n)
{
    if (s->size + n > *cap) {
        *cap = 2 * (s->size + n);
        s->bytes = realloc(s->bytes, *cap);
        ck_assert_ptr_nonnull(s->bytes);
    }
    memcpy(s->bytes + s->size, data, n);
    s->size += n;
}

/* The data of a run ends with exactly one meta:eof, whose payload counts the
 * frames and bytes before it and whose key follows the last event's: checks it and
 * takes it off the stream. */
static void strip_eof(stream *s)
{
    adf_iter it;
    adf_frame f, eof = {0};
    adf_key last = {0};
    unsigned frames = 0, eofs = 0;
    adf_iter_init(&it, s->bytes, s->size);
    while (adf_iter_next(&it, &f) == 1) {
        if (f.key.id == ADF_ID_META_EOF) {
            eof = f;
            eofs++;
            continue;
        }
        last = f.key;
        frames++;
    }
    ck_assert_uint_eq(eofs, 1);
    ck_assert_uint_eq(eof.offset, s->size - ADF_KEY_SIZE - ADF_EOF_PAYLOAD);
    adf_eof e;
    ck_assert_int_eq(adf_eof_read(&eof, &e), ADF_OK);
    ck_assert_uint_eq(e.frames, frames);
    ck_assert_uint_eq(e.bytes, eof.offset);
    ck_assert_uint_eq(eof.key.event, last.event + 1);
    ck_assert_uint_eq(eof.key.timestamp, last.timestamp);
    s->size = eof.offset;
}

/* One run: start, blocks of `block` bytes to the end of the data, stop; the data as emitted. */
static stream run_raw(void *g, unsigned block)
{
    unsigned e;
    stream s = {NULL, 0};
    size_t cap = 0;
    gen.start(g, &e);
    ck_assert_uint_eq(e, 0);
    uint8_t *buf = malloc(block);
    for (;;) {
        unsigned used = 0;
        gen.produce(g, buf, block, &used, &e);
        ck_assert_msg(e == 0, "process_block: %u", e);
        ck_assert_uint_le(used, block);
        if (used == 0)
            break;
        append(&s, &cap, buf, used);
    }
    free(buf);
    gen.stop(g, &e);
    ck_assert_uint_eq(e, 0);
    return s;
}

/* One run (run_raw); the data without its meta:eof. */
static stream run_once(void *g, unsigned block)
{
    stream s = run_raw(g, block);
    strip_eof(&s);
    return s;
}

/* Configures, runs to the end of the data with blocks of `block` bytes, stops, unloads. */
static stream run_blocks(const char *text, unsigned block)
{
    unsigned e;
    void *g = open_generator(text);
    stream s = run_once(g, block);
    gen.unload(g, &e);
    ck_assert_uint_eq(e, 0);
    return s;
}

static stream run(const char *text) { return run_blocks(text, 1u << 20); }

/* The truth frames of a stream, in order; *n of them. */
static adf_truth *truths(const stream *s, size_t *n)
{
    adf_iter it;
    adf_frame f;
    size_t cap = 1024;
    adf_truth *t = malloc(cap * sizeof *t);
    *n = 0;
    adf_iter_init(&it, s->bytes, s->size);
    while (adf_iter_next(&it, &f) == 1) {
        if (f.key.id != ADF_ID_NW_TRUTH)
            continue;
        if (*n == cap)
            t = realloc(t, (cap *= 2) * sizeof *t);
        ck_assert_int_eq(adf_truth_read(&f, &t[*n]), ADF_OK);
        ++*n;
    }
    return t;
}

/* ---- attenuation: a pencil beam along a crystal ---------------------------------- */

START_TEST(test_pencil_attenuation)
{
    char text[TEXT_MAX];
    const double e = 1332.492;
    const unsigned n = 200000;
    snprintf(text, sizeof text,
             "Array %s\nOutput truth\nEvents %u\nSource lines\nLines %g 1\nOrigin 15 0 0\nDirection 0 0 1\n"
             "Packing none\nSeed 7\n",
             in_tmp("one.txt"), n, e);
    stream s = run(text);
    size_t count;
    adf_truth *t = truths(&s, &count);
    ck_assert_uint_eq(count, n);
    static const double depth[] = {5, 10, 20, 40, 60, 80, 90};
    unsigned deeper[7] = {0};
    for (size_t i = 0; i < count; i++) {
        ck_assert_uint_eq(t[i].n_gammas, 1);
        double z = t[i].gamma[0].n_interactions ? t[i].hit[0].lab[2] - 235.0 : INFINITY;
        ck_assert(z >= -1e-3);
        for (int k = 0; k < 7; k++)
            deeper[k] += z > depth[k];
    }
    double mu = xs_ge_mu(e).total;
    ck_assert(mu > 1 / 45.0 && mu < 1 / 35.0); /* mean free path about 38 mm at 1.3 MeV */
    for (int k = 0; k < 7; k++) {
        double seen = (double)deeper[k] / n, expect = exp(-mu * depth[k]);
        ck_assert_msg(fabs(seen / expect - 1) < 0.02, "deeper than %g mm: %g, exp(-mu d) = %g", depth[k], seen,
                      expect);
    }
    free(t);
    free(s.bytes);
}
END_TEST

/* ---- Klein-Nishina: angles of first Compton scatterings ---------------------------- */

/* dsigma/dcos(theta), Klein-Nishina, arbitrary units. */
static double kn_density(double e, double c)
{
    double r = 1 / (1 + e / XS_ME_KEV * (1 - c));
    return r * r * (r + 1 / r - (1 - c * c));
}

static double thomson_density(double e, double c) { return 1 + c * c; }

/* Chi-square of the histogram h (n bins in cos theta) against a density. */
static double chi2(const unsigned *h, int bins, unsigned total, double e, double (*density)(double, double))
{
    double norm = 0, expect[64], x2 = 0;
    for (int b = 0; b < bins; b++) {
        double lo = -1 + 2.0 * b / bins, step = 2.0 / bins / 100, sum = 0;
        for (int k = 0; k < 100; k++)
            sum += density(e, lo + (k + 0.5) * step) * step;
        expect[b] = sum;
        norm += sum;
    }
    for (int b = 0; b < bins; b++) {
        double m = expect[b] / norm * total;
        x2 += (h[b] - m) * (h[b] - m) / m;
    }
    return x2;
}

START_TEST(test_klein_nishina)
{
    char text[TEXT_MAX];
    const double e = 661.657;
    enum { BINS = 20 };
    unsigned h[BINS] = {0}, total = 0;
    snprintf(text, sizeof text,
             "Array %s\nOutput truth\nEvents 60000\nSource cs137\nOrigin 15 0 0\nDirection 0 0 1\nPacking none\n"
             "Seed 11\n",
             in_tmp("one.txt"));
    stream s = run(text);
    size_t count;
    adf_truth *t = truths(&s, &count);
    for (size_t i = 0; i < count; i++) {
        if (t[i].n_interactions == 0 || t[i].hit[0].process != ADF_TRUTH_COMPTON)
            continue;
        double out = e - t[i].hit[0].e, c = 1 - XS_ME_KEV * (1 / out - 1 / e);
        ck_assert(c >= -1 - 1e-4 && c <= 1 + 1e-4);
        int b = (int)((c + 1) / 2 * BINS);
        h[b < 0 ? 0 : b >= BINS ? BINS - 1 : b]++;
        total++;
    }
    ck_assert_uint_gt(total, 30000);
    double kn = chi2(h, BINS, total, e, kn_density), thomson = chi2(h, BINS, total, e, thomson_density);
    /* 19 degrees of freedom: 43.8 is the 0.1 % tail */
    ck_assert_msg(kn < 43.8, "chi2 against Klein-Nishina %g", kn);
    ck_assert_msg(thomson > 1000, "chi2 against Thomson only %g: the test cannot tell them apart", thomson);
    free(t);
    free(s.bytes);
}
END_TEST

/* ---- energy conservation ------------------------------------------------------------ */

static void check_conservation(const adf_truth *t, size_t count, unsigned *absorbed, unsigned *paired)
{
    for (size_t i = 0; i < count; i++) {
        unsigned k = 0;
        for (unsigned g = 0; g < t[i].n_gammas; g++) {
            const adf_truth_gamma *x = &t[i].gamma[g];
            double sum = 0;
            for (unsigned j = 0; j < x->n_interactions; j++, k++) {
                ck_assert(t[i].hit[k].e >= 0);
                sum += t[i].hit[k].e;
            }
            ck_assert_msg(sum <= x->e * (1 + 1e-6) + 1e-3, "event %zu γ %u: %g keV deposited of %g", i, g, sum, x->e);
            bool full = fabs(sum - x->e) <= 1e-3 * x->e;
            ck_assert_msg(full == !!(x->flags & ADF_TRUTH_ABSORBED), "event %zu γ %u: sum %g, e %g, flags %u", i, g,
                          sum, x->e, x->flags);
            if (x->flags & ADF_TRUTH_MISSED)
                ck_assert_uint_eq(x->n_interactions, 0);
            *absorbed += full;
            *paired += !!(x->flags & ADF_TRUTH_PAIRED);
        }
        ck_assert_uint_eq(k, t[i].n_interactions);
    }
}

START_TEST(test_energy_conservation)
{
    char text[TEXT_MAX];
    unsigned absorbed = 0, paired = 0;
    snprintf(text, sizeof text, "Output truth\nEvents 3000\nSource cascade\nCascade 4000 1332.492 300\nSeed 3\n"
                                "Array %s/arrays/agata180.txt\n",
             detector);
    stream s = run(text);
    size_t count;
    adf_truth *t = truths(&s, &count);
    ck_assert_uint_eq(count, 3000);
    check_conservation(t, count, &absorbed, &paired);
    ck_assert_uint_gt(absorbed, 3000);
    ck_assert_uint_gt(paired, 50);
    free(t);
    free(s.bytes);
}
END_TEST

/* The same array as a CrystalPositionLookUpTable: the same physics, to the table's 9 digits. */
START_TEST(test_lookup_table_array)
{
    char text[TEXT_MAX];
    const char *common = "Output truth\nEvents 300\nSource co60\nArray %s/arrays/%s\nPacking none\n";
    snprintf(text, sizeof text, common, detector, "agata180.txt");
    stream a = run(text);
    snprintf(text, sizeof text, common, detector, "CrystalPositionLookUpTable");
    stream b = run(text);
    size_t na, nb, hits = 0;
    adf_truth *ta = truths(&a, &na), *tb = truths(&b, &nb);
    ck_assert_uint_eq(na, 300);
    ck_assert_uint_eq(nb, 300);
    for (size_t i = 0; i < na; i++) {
        ck_assert_uint_eq(ta[i].n_interactions, tb[i].n_interactions);
        for (unsigned h = 0; h < ta[i].n_interactions; h++, hits++) {
            ck_assert_uint_eq(ta[i].hit[h].crystal_id, tb[i].hit[h].crystal_id);
            ck_assert(fabs(ta[i].hit[h].lab[2] - tb[i].hit[h].lab[2]) < 1e-3);
        }
    }
    ck_assert_uint_gt(hits, 500);
    free(ta);
    free(tb);
    free(a.bytes);
    free(b.bytes);
}
END_TEST

/* ---- decay schemes: the γ rays per decay against the evaluations --------------------- */

/* A line of a scheme as evaluated (γ rays per decay) and what the generator emitted. */
typedef struct emitted_line {
    double e, per_decay;
    unsigned long n;
} emitted_line;

enum { CO60_1173, CO60_1332 };
enum { EU_122, EU_344, EU_1408 };

/* Runs `events` decays of nuclide (one crystal: little transport) and counts each line of
 * lines[] in the truth (every emitted γ, by its e0); coincident[i][j]: events with both. */
static unsigned long count_decays(const char *nuclide, unsigned events, emitted_line *lines, int n,
                                  unsigned long coincident[][5])
{
    char text[TEXT_MAX];
    snprintf(text, sizeof text, "Array %s\nOutput truth\nEvents %u\nSource %s\nSeed 5\n", in_tmp("one.txt"), events,
             nuclide);
    stream s = run(text);
    adf_truth *t = malloc(sizeof *t);
    adf_iter it;
    adf_frame f;
    unsigned long decays = 0;
    adf_iter_init(&it, s.bytes, s.size);
    while (adf_iter_next(&it, &f) == 1) {
        if (f.key.id != ADF_ID_NW_TRUTH)
            continue;
        ck_assert_int_eq(adf_truth_read(&f, t), ADF_OK);
        decays++;
        bool seen[5] = {false};
        for (unsigned g = 0; g < t->n_gammas; g++)
            for (int i = 0; i < n; i++)
                if (fabs(t->gamma[g].e0 - lines[i].e) < 1e-3) {
                    lines[i].n++;
                    seen[i] = true;
                }
        for (int i = 0; i < n && coincident; i++)
            for (int j = 0; j < n; j++)
                coincident[i][j] += seen[i] && seen[j];
    }
    free(t);
    free(s.bytes);
    return decays;
}

/* Each line's γ rays per decay within 4 standard deviations (binomial) and `rel` of the evaluation. */
static void assert_per_decay(const char *nuclide, const emitted_line *lines, int n, unsigned long decays, double rel)
{
    for (int i = 0; i < n; i++) {
        double p = lines[i].per_decay, got = (double)lines[i].n / (double)decays;
        double sigma = sqrt(p * (1 - p) / (double)decays);
        ck_assert_msg(fabs(got - p) <= 4 * sigma + rel * p, "%s %.3f keV: %.4f γ per decay, evaluated %.4f", nuclide,
                      lines[i].e, got, p);
    }
}

START_TEST(test_decay_schemes)
{
    /* 60Co: 1173 and 1332 keV each about once per decay, in coincidence (ENSDF 2013: 99.85 %, 99.98 %) */
    emitted_line co60[] = {{1173.228, 0.9985, 0}, {1332.492, 0.999826, 0}};
    unsigned long both[5][5] = {{0}};
    unsigned long decays = count_decays("60Co", 20000, co60, 2, both);
    ck_assert_uint_eq(decays, 20000);
    assert_per_decay("60Co", co60, 2, decays, 0.002);
    ck_assert_uint_ge(both[CO60_1173][CO60_1332], (unsigned long)(0.995 * decays));
    /* 152Eu: 121.8, 344.3 and 1408.0 keV (ENSDF 2013); 344.3 (152Gd, β-) never with 121.8 or 1408
     * (152Sm, EC); 1408 feeds the 121.8 keV level, whose γ ray comes 1 / (1 + 1.14) of the time */
    emitted_line eu152[] = {{121.7817, 0.2853, 0}, {344.2785, 0.2659, 0}, {1408.013, 0.2087, 0},
                            {964.057, 0.1451, 0},  {1112.076, 0.1367, 0}};
    memset(both, 0, sizeof both);
    decays = count_decays("152Eu", 40000, eu152, 5, both);
    assert_per_decay("152Eu", eu152, 5, decays, 0.01);
    ck_assert_uint_eq(both[EU_344][EU_122], 0);
    ck_assert_uint_eq(both[EU_344][EU_1408], 0);
    double given_1408 = (double)both[EU_1408][EU_122] / (double)eu152[EU_1408].n;
    ck_assert_msg(fabs(given_1408 - 1 / 2.14) < 0.03, "121.8 keV with 1408: %.3f of the time", given_1408);
    /* 133Ba (ENSDF 2011) and 56Co (ENSDF 2011), their strongest lines; 137Cs: 85.1 % */
    emitted_line ba133[] = {{356.0129, 0.6205, 0}, {80.9979, 0.3331, 0}, {302.8508, 0.1834, 0}};
    assert_per_decay("133Ba", ba133, 3, count_decays("133Ba", 20000, ba133, 3, NULL), 0.03);
    emitted_line co56[] = {{846.770, 0.999399, 0}, {1238.288, 0.6641, 0}, {2598.500, 0.1696, 0}};
    assert_per_decay("56Co", co56, 3, count_decays("56Co", 20000, co56, 3, NULL), 0.01);
    emitted_line cs137[] = {{661.657, 0.8510, 0}};
    assert_per_decay("137Cs", cs137, 1, count_decays("cs137", 20000, cs137, 1, NULL), 0.002);
}
END_TEST

START_TEST(test_doppler)
{
    char text[TEXT_MAX];
    const double e0 = 1000, beta = 0.2, gamma = 1 / sqrt(1 - beta * beta);
    snprintf(text, sizeof text, "Output truth\nEvents 2000\nLines %g 1\nBeta %g\nArray %s\n", e0, beta,
             in_tmp("one.txt"));
    stream s = run(text);
    size_t count;
    unsigned forward = 0;
    adf_truth *t = truths(&s, &count);
    for (size_t i = 0; i < count; i++) {
        const adf_truth_gamma *x = &t[i].gamma[0];
        ck_assert(fabs(t[i].beta - beta) < 1e-6);
        ck_assert(fabs(x->e0 - e0) < 1e-3);
        ck_assert(fabs(x->e - e0 / (gamma * (1 - beta * x->dir[2]))) < 1e-2);
        forward += x->dir[2] > 0;
    }
    /* aberration: the fraction emitted forward is (1 + beta) / 2 */
    ck_assert_msg(fabs(forward / (double)count - 0.6) < 0.03, "forward fraction %g", forward / (double)count);
    free(t);
    free(s.bytes);
}
END_TEST

/* ---- traces against the basis -------------------------------------------------------- */

enum { BASIS_SAMPLES = 40, BASIS_PRE = 5 };
#define GRID_MM 6.0

/* A basis of sector A on a 6 mm grid whose signals are linear in x, y, z (so
 * trilinear interpolation reproduces them exactly) and different for every
 * channel and sample. */
static float linear_signal(int ch, int k, const double p[3])
{
    return (float)(0.0005 * (ch + 1) * k - 0.3 + 0.001 * (ch % 7) * p[0] - 0.001 * (k % 5) * p[1] +
                   0.0005 * ((ch + k) % 3) * p[2]);
}

/* The label of a test basis point: its geometric segment, or with `moved` the
 * segment in front (ring 1) for the ring-2 points at z <= 30 mm, as if the
 * field carried their holes across the ring boundary at z = 22 mm. */
static int test_label(const det_crystal *c, const double p[3], bool moved)
{
    int seg = det_crystal_segment(c, p);
    return moved && seg % DET_RINGS == 2 && p[2] <= 30 ? seg - 1 : seg;
}

static void write_basis_labelled(const char *path, bool moved)
{
    det_basis b;
    memset(&b, 0, sizeof b);
    det_crystal_default(&b.crystal);
    b.n_channels = DET_CHANNELS;
    b.n_samples = BASIS_SAMPLES;
    b.pretrigger = BASIS_PRE;
    b.sample_ns = 10;
    b.grid_mm = GRID_MM;
    int n = 0;
    for (int pass = 0; pass < 2; pass++) {
        n = 0;
        for (int k = 0; k * GRID_MM <= b.crystal.length; k++)
            for (int j = -8; j <= 8; j++)
                for (int i = -8; i <= 8; i++) {
                    double p[3] = {i * GRID_MM, j * GRID_MM, k * GRID_MM};
                    if (!det_crystal_contains(&b.crystal, p) || det_sector_of(p[0], p[1]) != 0)
                        continue;
                    if (pass) {
                        for (int c = 0; c < 3; c++)
                            b.pos[3 * n + c] = (float)p[c];
                        b.segment[n] = test_label(&b.crystal, p, moved);
                        float *sig = det_basis_point(&b, (size_t)n);
                        for (int ch = 0; ch < DET_CHANNELS; ch++)
                            for (int s = 0; s < BASIS_SAMPLES; s++)
                                sig[ch * BASIS_SAMPLES + s] = linear_signal(ch, s, p);
                    }
                    n++;
                }
        if (!pass) {
            b.n_points = (uint32_t)n;
            ck_assert_int_eq(det_basis_alloc(&b), 0);
        }
    }
    char msg[512];
    ck_assert_msg(det_basis_save(&b, path, msg, sizeof msg) == 0, "%s", msg);
    det_basis_free(&b);
}

static void write_basis(const char *path) { write_basis_labelled(path, false); }

/* A GammaEvents file of one event: one γ of energy e with one interaction at lab point p. */
static void write_one_interaction(const char *path, double e, const double p[3], int segment)
{
    char text[512];
    snprintf(text, sizeof text,
             "SUMMARY 235 325 1 0 36\n$\n-1 %.3f 0 0 1 0\n0 %.3f %.3f %.3f %.3f %d\n", e, e, p[0], p[1], p[2] + 235,
             segment);
    tk_write_text(path, text);
}

/* Runs one interaction of energy e at crystal point p through the traces; returns the data:crystal. */
static void one_trace(double e, const double p[3], double noise, const char *extra, adf_crystal *c, adf_truth *truth)
{
    char text[TEXT_MAX];
    det_crystal shape;
    det_crystal_default(&shape);
    write_one_interaction(in_tmp("one.ge"), e, p, det_crystal_segment(&shape, p));
    snprintf(text, sizeof text,
             "Array %s\nBasis %s\nSource gammaevents\nGammaEventsInput %s\nNoiseKeV %g\nSubSample false\n"
             "FWHMConstant 0\nFWHMSlope 0\nSamples 60\nPreTrigger 10\nGain 2\n%s",
             in_tmp("one.txt"), in_tmp("test.basis"), in_tmp("one.ge"), noise, extra);
    stream s = run(text);
    adf_iter it;
    adf_frame f;
    int crystals = 0, truths_seen = 0;
    adf_iter_init(&it, s.bytes, s.size);
    while (adf_iter_next(&it, &f) == 1) {
        if (f.key.id == ADF_ID_NW_CRYSTAL) {
            ck_assert_int_eq(adf_crystal_read(&f, c), ADF_OK);
            crystals++;
        } else {
            ck_assert_int_eq(adf_truth_read(&f, truth), ADF_OK);
            ck_assert_int_eq(crystals, 0); /* the truth comes first */
            truths_seen++;
        }
    }
    ck_assert_int_eq(crystals, 1);
    ck_assert_int_eq(truths_seen, 1);
    free(s.bytes);
}

/* The expected ADC value of trace sample s for a basis value taken at fractional basis index x. */
static long expected_adc(double e, double gain, double baseline, int ch, double x, const double basis_p[3])
{
    double idx = x < 0 ? 0 : x > BASIS_SAMPLES - 1 ? BASIS_SAMPLES - 1 : x;
    int i = (int)idx;
    double f = idx - i, v0 = linear_signal(ch, i, basis_p),
           v1 = i + 1 < BASIS_SAMPLES ? linear_signal(ch, i + 1, basis_p) : v0;
    return lround(baseline + gain * e * (v0 + f * (v1 - v0)));
}

/* The basis channel that feeds output channel ch for a point turned `turn` sectors from sector A. */
static int source_channel(int ch, int turn) { return ch == DET_CORE ? ch : (ch - DET_RINGS * turn + 36) % 36; }

static void check_trace(const adf_crystal *c, double e, const double basis_p[3], int turn, long offset,
                        double tolerance)
{
    ck_assert_uint_eq(c->n_channels, DET_CHANNELS);
    ck_assert_uint_eq(c->n_samples, 60);
    ck_assert(c->gain == 2.0f);
    ck_assert_uint_eq(c->status, 0);
    for (int ch = 0; ch < DET_CHANNELS; ch++)
        for (int s = 0; s < 60; s++) {
            long want = expected_adc(e, 2, 8192, source_channel(ch, turn), BASIS_PRE + (s - 10), basis_p) - offset;
            ck_assert_msg(labs(c->trace[ch][s] - want) <= tolerance, "channel %d sample %d: %d, expected %ld", ch, s,
                          c->trace[ch][s], want);
        }
}

START_TEST(test_trace_at_basis_point)
{
    adf_crystal *c = malloc(sizeof *c);
    adf_truth *t = malloc(sizeof *t);
    write_basis(in_tmp("test.basis"));
    const double node[3] = {18, 0, 30}, turned[3] = {-18, 0, 30}; /* turned: sector D, 3 sectors on */
    one_trace(1000, node, 0, "", c, t);
    check_trace(c, 1000, node, 0, 8192, 0);
    ck_assert_uint_eq(c->crystal_id, 0);
    ck_assert(fabs(t->hit[0].t - 100.0f) < 1e-4); /* PreTrigger 10 samples of 10 ns */
    for (int ch = 0; ch < DET_CHANNELS; ch++)
        ck_assert(c->energy[ch] == (ch == 2 || ch == DET_CORE ? 1000.0f : 0.0f));
    one_trace(1000, turned, 0, "SubtractBaseline false\n", c, t);
    check_trace(c, 1000, node, 3, 0, 0);
    ck_assert(c->energy[20] == 1000.0f && c->energy[2] == 0.0f);
    free(c);
    free(t);
}
END_TEST

START_TEST(test_trace_trilinear)
{
    adf_crystal *c = malloc(sizeof *c);
    adf_truth *t = malloc(sizeof *t);
    write_basis(in_tmp("test.basis"));
    const double inside[3] = {20.5, 1.25, 31.75}, turned[3] = {-20.5, -1.25, 31.75};
    /* linear signals: the blend of the 8 corners is the signal at the point (float rounding: 1 count) */
    one_trace(700, inside, 0, "", c, t);
    check_trace(c, 700, inside, 0, 8192, 1);
    one_trace(700, turned, 0, "", c, t);
    check_trace(c, 700, inside, 3, 8192, 1);
    free(c);
    free(t);
}
END_TEST

/* Where the basis says another segment collects the charge than the one whose
 * volume holds the point, the energy goes to the collecting segment, the truth
 * names both, and the traces blend only that segment's basis points (issue 15). */
START_TEST(test_energy_in_collecting_segment)
{
    adf_crystal *c = malloc(sizeof *c);
    adf_truth *t = malloc(sizeof *t);
    write_basis_labelled(in_tmp("test.basis"), true);
    static const struct {
        double p[3], signal_at[3];
        int turn, collecting, geometric;
    } cases[] = {
        {{18, 0, 30}, {18, 0, 30}, 0, 1, 2},  /* a node whose holes cross into ring 1 */
        {{18, 0, 32}, {18, 0, 30}, 0, 1, 2},  /* 2/3 of the weight on the z = 30 nodes: only they are blended */
        {{18, 0, 34}, {18, 0, 36}, 0, 2, 2},  /* 2/3 on the z = 36 nodes, collected by ring 2 itself */
        {{-18, 0, 30}, {18, 0, 30}, 3, 19, 20}, /* sector D, by the basis's 60° symmetry */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        one_trace(1000, cases[i].p, 0, "", c, t);
        ck_assert_uint_eq(t->n_interactions, 1);
        ck_assert_msg(t->hit[0].segment == cases[i].collecting, "case %zu: segment %u", i, t->hit[0].segment);
        ck_assert_uint_eq(t->hit[0].geo_segment, cases[i].geometric);
        for (int ch = 0; ch < DET_CHANNELS; ch++)
            ck_assert_msg(c->energy[ch] == (ch == cases[i].collecting || ch == DET_CORE ? 1000.0f : 0.0f),
                          "case %zu: channel %d has %g keV", i, ch, c->energy[ch]);
        check_trace(c, 1000, cases[i].signal_at, cases[i].turn, 8192, 1);
    }
    free(c);
    free(t);
}
END_TEST

START_TEST(test_trace_clipping_and_noise)
{
    adf_crystal *c = malloc(sizeof *c);
    adf_truth *t = malloc(sizeof *t);
    write_basis(in_tmp("test.basis"));
    const double node[3] = {18, 0, 30};
    one_trace(9000, node, 0, "ADCBits 12\nBaseline 2000\n", c, t);
    ck_assert_uint_eq(c->status, 1);
    for (int ch = 0; ch < DET_CHANNELS; ch++)
        for (int s = 0; s < 60; s++)
            ck_assert(c->trace[ch][s] >= -2000 && c->trace[ch][s] <= 4095 - 2000);
    /* noise of 5 keV at gain 2: 10 counts rms about the noiseless trace */
    adf_crystal *quiet = malloc(sizeof *quiet);
    one_trace(500, node, 0, "", quiet, t);
    one_trace(500, node, 5, "", c, t);
    double sum2 = 0;
    for (int ch = 0; ch < DET_CHANNELS; ch++)
        for (int s = 0; s < 60; s++)
            sum2 += (double)(c->trace[ch][s] - quiet->trace[ch][s]) * (c->trace[ch][s] - quiet->trace[ch][s]);
    double rms = sqrt(sum2 / (DET_CHANNELS * 60));
    ck_assert_msg(rms > 9.0 && rms < 11.0, "noise rms %g counts", rms);
    free(quiet);
    free(c);
    free(t);
}
END_TEST

/* ---- crystal producers: a Crystals selection ----------------------------------------- */

/* The crystal id of a data:crystal frame; -1 for any other frame. */
static int crystal_of(const adf_frame *f)
{
    return f->key.id == ADF_ID_NW_CRYSTAL ? adf_get_u16(f->data + ADF_KEY_SIZE) : -1;
}

/* The frames of whole that `keep` keeps (truth: the truth frames; crystals ids lo..hi), in order, byte for byte. */
static void expect_subsequence(const stream *whole, const stream *part, bool truth, int lo, int hi)
{
    adf_iter a, b;
    adf_frame f, g;
    size_t n = 0;
    adf_iter_init(&a, whole->bytes, whole->size);
    adf_iter_init(&b, part->bytes, part->size);
    while (adf_iter_next(&a, &f) == 1) {
        int id = crystal_of(&f);
        if (!(truth && f.key.id == ADF_ID_NW_TRUTH) && !(id >= lo && id <= hi))
            continue;
        ck_assert_msg(adf_iter_next(&b, &g) == 1, "the part ends after %zu frames", n);
        ck_assert_uint_eq(g.key.length, f.key.length);
        ck_assert_msg(memcmp(f.data, g.data, f.key.length) == 0, "frame %zu differs", n);
        n++;
    }
    ck_assert_int_eq(adf_iter_next(&b, &g), 0);
    ck_assert_uint_gt(n, 100);
}

/* Three producers of disjoint selections emit together what one emits for
 * every crystal, frame for frame; only the one whose Output has truth emits it. */
START_TEST(test_crystal_producers_split_one_stream)
{
    char text[TEXT_MAX];
    write_basis(in_tmp("test.basis"));
    const char *common = "Source co60\nEvents 300\nSamples 40\nArray %s/arrays/agata180.txt\nBasis %s\nSeed 3\n"
                         "Threads %d\nSyncEvery 0\n%s";
    snprintf(text, sizeof text, common, detector, in_tmp("test.basis"), 2, "");
    stream whole = run(text);
    void *g = open_generator(text);
    stream with_eof = run_raw(g, 1u << 20);
    unsigned e;
    gen.unload(g, &e);
    ck_assert_uint_eq(with_eof.size, whole.size + ADF_KEY_SIZE + ADF_EOF_PAYLOAD);
    static const struct {
        const char *select;
        bool truth;
        int lo, hi;
    } part[] = {{"Crystals 0-59\nOutput truth crystal\n", true, 0, 59},
                {"Crystals 60-100 101-119\nOutput crystal\n", false, 60, 119},
                {"Crystals 120-179\nOutput crystal\n", false, 120, 179}};
    for (int k = 0; k < 3; k++) {
        snprintf(text, sizeof text, common, detector, in_tmp("test.basis"), k + 1, part[k].select);
        g = open_generator(text);
        stream s = run_raw(g, 1u << 20);
        gen.unload(g, &e);
        /* its meta:eof: the key of the whole stream's (the run's last event, emitted or not), its own counts */
        size_t at = s.size - ADF_KEY_SIZE - ADF_EOF_PAYLOAD;
        ck_assert_int_eq(memcmp(s.bytes + at, with_eof.bytes + whole.size, ADF_KEY_SIZE), 0);
        ck_assert_uint_eq(adf_get_u64(s.bytes + at + ADF_KEY_SIZE + 4), at);
        s.size = at;
        expect_subsequence(&whole, &s, part[k].truth, part[k].lo, part[k].hi);
        free(s.bytes);
    }
    free(with_eof.bytes);
    free(whole.bytes);
}
END_TEST

/* A selection's meta:sync frames: a round (one per crystal, by id) before the
 * first event and before each event at or past a multiple of SyncEvery, one
 * just before the meta:eof; each counts its crystal's frames since the last
 * and no later frame is earlier than it; the meta:eof counts them. */
START_TEST(test_crystal_producer_syncs)
{
    enum { N = 31, EVERY = 50000 };
    char text[TEXT_MAX];
    write_basis(in_tmp("test.basis"));
    snprintf(text, sizeof text,
             "Source co60\nEvents 400\nSamples 40\nArray %s/arrays/agata180.txt\nBasis %s\nRate 1e5\n"
             "Crystals 0-29 100\nOutput crystal\nSyncEvery %d\n",
             detector, in_tmp("test.basis"), EVERY);
    void *g = open_generator(text);
    stream s = run_raw(g, 20000);
    unsigned e;
    gen.unload(g, &e);
    uint32_t since[N] = {0};
    uint64_t progress = 0, last_data = 0;
    unsigned rounds = 0, in_round = 0, frames = 0, data = 0;
    adf_iter it;
    adf_frame f;
    adf_iter_init(&it, s.bytes, s.size);
    while (adf_iter_next(&it, &f) == 1) {
        ck_assert_uint_ge(f.key.timestamp, progress);
        if (f.key.id == ADF_ID_META_EOF) {
            adf_eof eof;
            ck_assert_int_eq(adf_eof_read(&f, &eof), ADF_OK);
            ck_assert_uint_eq(eof.frames, frames);
            ck_assert_uint_eq(f.offset + f.key.length, s.size);
            break;
        }
        frames++;
        if (f.key.id == ADF_ID_META_SYNC) {
            adf_sync y;
            ck_assert_int_eq(adf_sync_read(&f, &y), ADF_OK);
            ck_assert_uint_eq(y.crystal_id, in_round < 30 ? in_round : 100);
            ck_assert_uint_eq(y.frames, since[in_round]);
            since[in_round] = 0;
            ck_assert(in_round == 0 || f.key.timestamp == progress);
            progress = f.key.timestamp;
            if (++in_round == N) {
                in_round = 0;
                rounds++;
            }
            continue;
        }
        ck_assert_uint_eq(in_round, 0);
        ck_assert_uint_gt(rounds, 0);
        /* no multiple of SyncEvery between the last round and this frame */
        ck_assert_uint_eq(f.key.timestamp / EVERY, progress / EVERY);
        int id = crystal_of(&f);
        ck_assert(id == 100 || (id >= 0 && id < 30));
        since[id == 100 ? 30 : id]++;
        last_data = f.key.timestamp;
        data++;
    }
    ck_assert_uint_eq(in_round, 0);
    ck_assert_uint_ge(progress, last_data);
    /* 400 events at 1e5/s: about 400000 ticks, a round in each of about 8 intervals, then the last one */
    ck_assert_msg(rounds >= 7 && rounds <= 11, "%u rounds", rounds);
    ck_assert_uint_gt(data, 20);
    free(s.bytes);
}
END_TEST

/* ---- determinism ------------------------------------------------------------------------ */

START_TEST(test_same_seed_same_bytes)
{
    char text[TEXT_MAX];
    write_basis(in_tmp("test.basis"));
    const char *common = "Source co60\nEvents 1500\nSamples 60\nArray %s/arrays/agata180.txt\n"
                         "Basis %s\nThreads %d\nSeed %d\n";
    snprintf(text, sizeof text, common, detector, in_tmp("test.basis"), 1, 5);
    stream a = run_blocks(text, 1u << 20);
    snprintf(text, sizeof text, common, detector, in_tmp("test.basis"), 2, 5);
    stream b = run_blocks(text, 100000);
    snprintf(text, sizeof text, common, detector, in_tmp("test.basis"), 2, 6);
    stream c = run_blocks(text, 1u << 20);
    ck_assert_uint_gt(a.size, 1500 * 7000);
    ck_assert_uint_eq(a.size, b.size);
    ck_assert_int_eq(memcmp(a.bytes, b.bytes, a.size), 0);
    ck_assert(c.size != a.size || memcmp(a.bytes, c.bytes, a.size) != 0);
    size_t frames = 0, bad = 0;
    ck_assert_int_eq(adf_validate(a.bytes, a.size, &bad, &frames), ADF_OK);
    ck_assert_uint_eq(bad, a.size);
    ck_assert_uint_gt(frames, 1500);
    free(a.bytes);
    free(b.bytes);
    free(c.bytes);
}
END_TEST

/* Every event: truth first, then its crystals by increasing id, all with the event's number and timestamp. */
START_TEST(test_event_layout)
{
    char text[TEXT_MAX];
    write_basis(in_tmp("test.basis"));
    snprintf(text, sizeof text, "Source co60\nEvents 400\nSamples 60\nArray %s/arrays/agata180.txt\n"
                                "Basis %s\nRate 1e5\n",
             detector, in_tmp("test.basis"));
    stream s = run(text);
    adf_iter it;
    adf_frame f;
    adf_truth *t = malloc(sizeof *t);
    adf_crystal *c = malloc(sizeof *c);
    uint32_t event = 0;
    uint64_t stamp = 0;
    int last_id = -1, truths_seen = 0;
    adf_iter_init(&it, s.bytes, s.size);
    while (adf_iter_next(&it, &f) == 1) {
        if (f.key.id == ADF_ID_NW_TRUTH) {
            ck_assert_int_eq(adf_truth_read(&f, t), ADF_OK);
            ck_assert_uint_eq(f.key.event, (uint32_t)truths_seen);
            ck_assert(f.key.timestamp > stamp || truths_seen == 0);
            event = f.key.event;
            stamp = f.key.timestamp;
            last_id = -1;
            truths_seen++;
            continue;
        }
        ck_assert_uint_eq(f.key.id, ADF_ID_NW_CRYSTAL);
        ck_assert_int_eq(adf_crystal_read(&f, c), ADF_OK);
        ck_assert_uint_eq(f.key.event, event);
        ck_assert_uint_eq(f.key.timestamp, stamp);
        ck_assert_int_gt(c->crystal_id, last_id);
        last_id = c->crystal_id;
        bool in_truth = false;
        for (unsigned i = 0; i < t->n_interactions; i++)
            in_truth |= t->hit[i].crystal_id == c->crystal_id;
        ck_assert(in_truth);
    }
    ck_assert_int_eq(truths_seen, 400);
    /* 400 events at 1e5 per second: about 4 ms, 400000 ticks of 10 ns */
    ck_assert_msg(stamp > 300000 && stamp < 500000, "last timestamp %llu", (unsigned long long)stamp);
    free(t);
    free(c);
    free(s.bytes);
}
END_TEST

/* A buffer smaller than one event: the size it needs, then the event whole. */
START_TEST(test_output_size)
{
    unsigned e, used = 0;
    char text[TEXT_MAX];
    write_basis(in_tmp("test.basis"));
    snprintf(text, sizeof text, "Events 3\nSamples 60\nArray %s\nBasis %s\nOrigin 15 0 0\nDirection 0 0 1\n"
                                "Lines 5000 1\n",
             in_tmp("one.txt"), in_tmp("test.basis"));
    conf(text);
    gen.config(conf_dir, &e);
    ck_assert_uint_eq(e, 0);
    void *g = gen.reg(&e);
    gen.initialise(g, &e);
    gen.start(g, &e);
    ck_assert_uint_eq(e, 0);
    uint8_t *buf = malloc(1 << 16);
    gen.produce(g, buf, 100, &used, &e);
    ck_assert_uint_eq(e, NARVAL_E_OUTPUT_SIZE);
    unsigned need = used;
    ck_assert_uint_gt(need, 100);
    gen.produce(g, buf, need, &used, &e);
    ck_assert_uint_eq(e, 0);
    ck_assert_uint_eq(used, need);
    size_t frames = 0, bad = 0;
    ck_assert_int_eq(adf_validate(buf, used, &bad, &frames), ADF_OK);
    ck_assert_uint_ge(frames, 1);
    gen.stop(g, &e);
    gen.unload(g, &e);
    free(buf);
}
END_TEST

/* ---- GammaEvents: written, read back as the source ------------------------------------------ */

START_TEST(test_gammaevents_round_trip)
{
    char text[TEXT_MAX];
    snprintf(text, sizeof text, "Output truth\nEvents 500\nSource co60\nGammaEvents %s\nArray %s/arrays/agata180.txt\n",
             in_tmp("out.ge"), detector);
    stream a = run(text);
    size_t size;
    char *file = (char *)tk_read_file(in_tmp("out.ge"), &size);
    ck_assert_msg(strstr(file, "\nSUMMARY 235.000 ") != NULL, "%.200s", file);
    ck_assert_ptr_nonnull(strstr(file, "\n$\n-1 "));
    free(file);
    snprintf(text, sizeof text, "Output truth\nSource gammaevents\nGammaEventsInput %s\nArray %s/arrays/agata180.txt\n",
             in_tmp("out.ge"), detector);
    stream b = run(text);
    size_t na, nb;
    adf_truth *ta = truths(&a, &na), *tb = truths(&b, &nb);
    ck_assert_uint_eq(na, 500);
    ck_assert_uint_eq(nb, 500);
    for (size_t i = 0; i < na; i++) {
        ck_assert_uint_eq(ta[i].n_gammas, tb[i].n_gammas);
        ck_assert_uint_eq(ta[i].n_interactions, tb[i].n_interactions);
        for (unsigned g = 0; g < ta[i].n_gammas; g++) {
            ck_assert(fabs(ta[i].gamma[g].e - tb[i].gamma[g].e) < 1e-3);
            ck_assert_uint_eq(ta[i].gamma[g].flags, tb[i].gamma[g].flags);
        }
        for (unsigned h = 0; h < ta[i].n_interactions; h++) {
            const adf_truth_hit *x = &ta[i].hit[h], *y = &tb[i].hit[h];
            ck_assert_uint_eq(x->crystal_id, y->crystal_id);
            ck_assert_uint_eq(x->segment, y->segment);
            ck_assert_uint_eq(x->process, y->process);
            ck_assert(fabs(x->e - y->e) < 1e-3);
            for (int k = 0; k < 3; k++) {
                ck_assert(fabs(x->lab[k] - y->lab[k]) < 1e-3);
                ck_assert(fabs(x->pos[k] - y->pos[k]) < 2e-3);
            }
        }
    }
    free(ta);
    free(tb);
    free(a.bytes);
    free(b.bytes);
}
END_TEST

/* ---- configuration errors ----------------------------------------------------------------- */

/* stderr goes to a file between capture_begin and capture_end, which returns what was written. */
static int saved_stderr = -1;

static void capture_begin(void) { saved_stderr = tk_capture_begin(in_tmp("stderr.txt")); }

static void capture_end(char *log, size_t len) { tk_capture_end(saved_stderr, in_tmp("stderr.txt"), log, len); }

/* Runs process_config with stderr captured; returns the code, the log in log. */
static unsigned config_log(const char *text, char *log, size_t len)
{
    unsigned e;
    capture_begin();
    conf(text);
    gen.config(conf_dir, &e);
    capture_end(log, len);
    return e;
}

START_TEST(test_config_errors)
{
    /* the conf file's first line is Crystal (added by conf()): the key under test is on line 2 */
    static const struct {
        const char *text, *expect;
    } bad[] = {
        {"Lines 1332\n", "Generator.conf:2: key 'Lines': needs 1..64 pairs"},
        {"Lines 1332 x\n", "Generator.conf:2: key 'Lines': 'x' is not a number"},
        {"Lines 5 1\n", "Generator.conf:2: key 'Lines': 5 is outside [10, 20000]"},
        {"Source fusion\n", "Generator.conf:2: key 'Source': 'fusion' is not one of"},
        {"Source gammaevents\n", "Generator.conf:2: key 'Source': gammaevents needs a GammaEventsInput"},
        {"Source cascade\nCascade 100 100 100 100 100 100 100 100 100 100 100 100 100 100 100 100 100 100 100 100 "
         "100 100 100 100 100 100 100 100 100 100 100\n",
         "Generator.conf:3: key 'Cascade': needs 1..30 energies, got 31"},
        {"Origin 1 2\n", "Generator.conf:2: key 'Origin': needs x y z"},
        {"Direction 0 0 0\n", "Generator.conf:2: key 'Direction': the vector is zero"},
        {"Direction up\n", "Generator.conf:2: key 'Direction': is 'isotropic' or dx dy dz"},
        {"Packing both\n", "Generator.conf:2: key 'Packing': 'both' is not one of"},
        {"Output crystal\nOutput traces\n", "Generator.conf:3: key 'Output': 'traces' is neither crystal nor truth"},
        {"Samples 50\nPreTrigger 50\n", "key 'PreTrigger': 50 samples leave no room"},
        {"ADCBits 12\nBaseline 5000\n", "key 'Baseline': 5000 is beyond the 12-bit ADC's range"},
        {"Source continuum\nContinuumMin 900\nContinuumMax 800\n", "key 'ContinuumMin': 900 keV is above ContinuumMax"},
        {"Multiplicity 31\n", "Generator.conf:2: key 'Multiplicity'"},
        {"ADCBits 16\nSubtractBaseline false\n", "key 'ADCBits': 16-bit values less 0 do not fit"},
        {"Beta 1\n", "Generator.conf:2: key 'Beta'"},
        {"Seeds 4\n", "Generator.conf:2: key 'Seeds': unknown key"},
        {"Crystals 5-2\n", "Generator.conf:2: key 'Crystals': the range '5-2' is empty"},
        {"Crystals 1\nCrystals all\n", "Generator.conf:3: key 'Crystals': 'all' is neither an id 0..65535 nor a "
                                       "range A-B ('all' stands alone)"},
        {"Crystals 0-3 2\n", "Generator.conf:2: key 'Crystals': crystal 2 is listed twice"},
        {"Crystals 65536\n", "Generator.conf:2: key 'Crystals': '65536' is neither an id"},
        {"Crystals 4\nOutput truth\n", "Generator.conf:2: key 'Crystals': selects data:crystal frames, but Output"},
    };
    char log[4096];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        unsigned e = config_log(bad[i].text, log, sizeof log);
        ck_assert_msg(e == NARVAL_E_CONFIG, "case %zu: code %u", i, e);
        ck_assert_msg(strstr(log, bad[i].expect) != NULL, "case %zu: expected '%s' in: %s", i, bad[i].expect, log);
    }
    ck_assert_uint_eq(config_log("Source co60\n", log, sizeof log), 0);
}
END_TEST

/* The Array and Basis files are checked by process_config (issue 17): a missing one is a
 * configuration error there.  The GammaEvents input is opened at start: an I/O error then. */
START_TEST(test_initialise_errors)
{
    static const char *const missing[] = {"Array /nonexistent/array.txt\nOutput truth\n", "Basis /nonexistent/b.basis\n"};
    static const char *const named[] = {"/nonexistent/array.txt", "/nonexistent/b.basis"};
    for (size_t i = 0; i < 2; i++) {
        char log[4096];
        unsigned e;
        conf(missing[i]);
        capture_begin();
        gen.config(conf_dir, &e);
        capture_end(log, sizeof log);
        ck_assert_msg(e == NARVAL_E_CONFIG, "case %zu: code %u", i, e);
        ck_assert_msg(strstr(log, named[i]) != NULL, "case %zu: %s", i, log);
    }
    static const char *const cases[] = {"Output truth\nSource gammaevents\nGammaEventsInput /nonexistent/g\n"};
    for (size_t i = 0; i < 1; i++) {
        unsigned e;
        conf(cases[i]);
        gen.config(conf_dir, &e);
        ck_assert_uint_eq(e, 0);
        void *g = gen.reg(&e);
        gen.initialise(g, &e);
        if (e == 0)
            gen.start(g, &e);
        ck_assert_msg(e == NARVAL_E_IO, "case %zu: code %u", i, e);
        gen.unload(g, &e);
    }
}
END_TEST

/* A selected crystal the array lacks is a configuration error at initialise, naming the key. */
START_TEST(test_crystal_not_in_array)
{
    char text[TEXT_MAX], log[4096];
    unsigned e;
    write_basis(in_tmp("test.basis"));
    snprintf(text, sizeof text, "Array %s\nCrystals 0 7\nBasis %s\n", in_tmp("one.txt"), in_tmp("test.basis"));
    conf(text);
    gen.config(conf_dir, &e);
    ck_assert_uint_eq(e, 0);
    void *g = gen.reg(&e);
    capture_begin();
    gen.initialise(g, &e);
    capture_end(log, sizeof log);
    ck_assert_uint_eq(e, NARVAL_E_CONFIG);
    ck_assert_msg(strstr(log, "Generator.conf: key 'Crystals': crystal 7 is not in the array") != NULL, "%s", log);
    gen.unload(g, &e);
}
END_TEST

START_TEST(test_bad_gammaevents_input)
{
    static const struct {
        const char *text, *expect;
    } bad[] = {
        {"$\n-1 500 0 0 1 0\n0 500 0 0 250 36\n", "bad.ge:3: the segment is not an integer 0..35"},
        {"$\n-1 500 0 0 1 0\n7 500 0 0 250 3\n", "bad.ge:3: a crystal id the array does not have"},
        {"$\n0 500 0 0 250 3\n", "bad.ge:2: an interaction line before any γ line"},
        {"$\n-1 500 0 0 1\n", "bad.ge:2: a γ line needs -1 E dx dy dz n"},
        {"$\n-1 500 0 0 1 0\n0 500 0 x 250 3\n", "bad.ge:3: 'x' is not a number"},
        {"NARWHAL GammaEvents 1\n$\n-1 500 0 0 1 0\n0 500 0 0 250 3 4\n", "bad.ge:4: the process column is not 1, 2 or 3"},
    };
    char text[TEXT_MAX], log[4096];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tk_write_text(in_tmp("bad.ge"), bad[i].text);
        snprintf(text, sizeof text, "Output truth\nSource gammaevents\nGammaEventsInput %s\nArray %s\n",
                 in_tmp("bad.ge"), in_tmp("one.txt"));
        conf(text);
        unsigned e, used = 1;
        gen.config(conf_dir, &e);
        void *g = gen.reg(&e);
        gen.initialise(g, &e);
        gen.start(g, &e);
        ck_assert_uint_eq(e, 0);
        uint8_t buf[4096];
        capture_begin();
        gen.produce(g, buf, sizeof buf, &used, &e);
        capture_end(log, sizeof log);
        ck_assert_msg(e == NARVAL_E_DATA, "case %zu: code %u", i, e);
        ck_assert_uint_eq(used, 0);
        ck_assert_msg(strstr(log, bad[i].expect) != NULL, "case %zu: expected '%s' in: %s", i, bad[i].expect, log);
        gen.stop(g, &e);
        gen.unload(g, &e);
    }
}
END_TEST

/* A file as other codes write it: AGATA's extra header lines and codes, no Narwhal columns. */
START_TEST(test_gammaevents_foreign)
{
    char text[TEXT_MAX];
    tk_write_text(in_tmp("agata.ge"), "AGATA 10.2\nGENERATOR 0\nSUMMARY 235.0 329.0 1 0 36\n$\n"
                                   "-100 0.0 0.0 0.0\n"
                                   "-1 1000.000 0.0 0.0 1.0 0\n"
                                   "# a comment\n"
                                   "0 400.000 15.0 0.0 250.0 2 17.5\n"
                                   "0 600.000 20.0 5.0 270.0 3 18.0\n"
                                   "-1 300.000 0.0 0.0 1.0 0\n"
                                   "0 100.000 -15.0 0.0 300.0 20\n"
                                   "-1 500.000 0.0 0.0 1.0 4\n");
    snprintf(text, sizeof text, "Output truth\nSource gammaevents\nGammaEventsInput %s\nArray %s\n",
             in_tmp("agata.ge"), in_tmp("one.txt"));
    stream s = run(text);
    size_t n;
    adf_truth *t = truths(&s, &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(t[0].n_gammas, 2);
    ck_assert_uint_eq(t[0].n_interactions, 3);
    ck_assert_uint_eq(t[0].gamma[0].flags, ADF_TRUTH_ABSORBED);
    ck_assert_uint_eq(t[0].gamma[1].flags, 0);
    ck_assert(t[0].gamma[0].e0 == 1000.0f && t[0].beta == 0.0f);
    ck_assert_uint_eq(t[0].hit[0].process, ADF_TRUTH_COMPTON);
    ck_assert_uint_eq(t[0].hit[1].process, ADF_TRUTH_PHOTO);
    ck_assert_uint_eq(t[0].hit[1].deposits, 1);
    ck_assert(t[0].hit[1].pos[0] == 20.0f && t[0].hit[1].pos[1] == 5.0f && t[0].hit[1].pos[2] == 35.0f);
    ck_assert_uint_eq(t[1].n_interactions, 0);
    ck_assert_uint_eq(t[1].gamma[0].flags, ADF_TRUTH_MISSED);
    free(t);
    free(s.bytes);
}
END_TEST

/* ---- runs: NARVAL's cycles, the end of the data ------------------------------------------------ */

/* The event number of the first or last truth frame of a stream. */
static uint32_t truth_number(const stream *s, bool last)
{
    adf_iter it;
    adf_frame f;
    uint32_t n = UINT32_MAX;
    adf_iter_init(&it, s->bytes, s->size);
    while (adf_iter_next(&it, &f) == 1)
        if (f.key.id == ADF_ID_NW_TRUTH && (last || n == UINT32_MAX))
            n = f.key.event;
    ck_assert_uint_ne(n, UINT32_MAX);
    return n;
}

/* A second run (stop, reset, initialise, start: NARVAL's cycle) continues the
 * first: its events are the next numbers, and the two runs together are the
 * bytes of one run twice as long.  A reset in the middle of a run, then a
 * start without initialise, continues after the last event emitted. */
START_TEST(test_runs_continue_the_events)
{
    char text[TEXT_MAX];
    unsigned e;
    const char *common = "Output truth\nSource co60\nEvents %d\nArray %s/arrays/agata180.txt\n";
    snprintf(text, sizeof text, common, 400, detector);
    stream whole = run_blocks(text, 1u << 20);
    snprintf(text, sizeof text, common, 200, detector);
    void *g = open_generator(text);
    stream first = run_once(g, 50000);
    gen.reset(g, &e);
    ck_assert_uint_eq(e, 0);
    gen.initialise(g, &e);
    ck_assert_uint_eq(e, 0);
    stream second = run_once(g, 50000);
    ck_assert_uint_eq(truth_number(&first, true), 199);
    ck_assert_uint_eq(truth_number(&second, false), 200);
    ck_assert_uint_eq(first.size + second.size, whole.size);
    ck_assert_int_eq(memcmp(first.bytes, whole.bytes, first.size), 0);
    ck_assert_int_eq(memcmp(second.bytes, whole.bytes + first.size, second.size), 0);

    gen.reset(g, &e);
    ck_assert_uint_eq(e, 0);
    gen.start(g, &e); /* straight after reset */
    ck_assert_uint_eq(e, 0);
    stream part = {malloc(3000), 0};
    unsigned used = 0;
    gen.produce(g, part.bytes, 3000, &used, &e);
    ck_assert_uint_eq(e, 0);
    part.size = used;
    uint32_t last = truth_number(&part, true);
    ck_assert_uint_gt(last, 400);
    gen.pause(g, &e);
    gen.reset(g, &e); /* paused, no stop */
    ck_assert_uint_eq(e, 0);
    stream third = run_once(g, 50000);
    ck_assert_uint_eq(truth_number(&third, false), last + 1);
    ck_assert_uint_eq(truth_number(&third, true), last + 200);
    gen.unload(g, &e);
    ck_assert_uint_eq(e, 0);
    free(whole.bytes);
    free(first.bytes);
    free(second.bytes);
    free(part.bytes);
    free(third.bytes);
}
END_TEST

/* No room after the last event: the meta:eof comes alone in the next block, which may ask for its size. */
START_TEST(test_eof_alone_when_no_room)
{
    char text[TEXT_MAX];
    unsigned e, used = 0;
    snprintf(text, sizeof text, "Output truth\nEvents 1\nArray %s\nOrigin 15 0 0\nDirection 0 0 1\nLines 1000 1\n",
             in_tmp("one.txt"));
    void *g = open_generator(text);
    gen.start(g, &e);
    uint8_t buf[4096];
    gen.produce(g, buf, ADF_KEY_SIZE, &used, &e);
    ck_assert_uint_eq(e, NARVAL_E_OUTPUT_SIZE);
    unsigned event = used;
    gen.produce(g, buf, event, &used, &e);
    ck_assert_uint_eq(e, 0);
    ck_assert_uint_eq(used, event);
    ck_assert_uint_eq(adf_get_u32(buf + 4), ADF_ID_NW_TRUTH);
    gen.produce(g, buf, ADF_KEY_SIZE + ADF_EOF_PAYLOAD - 1, &used, &e);
    ck_assert_uint_eq(e, NARVAL_E_OUTPUT_SIZE);
    ck_assert_uint_eq(used, ADF_KEY_SIZE + ADF_EOF_PAYLOAD);
    gen.produce(g, buf, sizeof buf, &used, &e);
    ck_assert_uint_eq(e, 0);
    ck_assert_uint_eq(used, ADF_KEY_SIZE + ADF_EOF_PAYLOAD);
    adf_iter it;
    adf_frame f;
    adf_eof eof;
    adf_iter_init(&it, buf, used);
    ck_assert_int_eq(adf_iter_next(&it, &f), 1);
    ck_assert_int_eq(adf_eof_read(&f, &eof), ADF_OK);
    ck_assert_uint_eq(eof.frames, 1);
    ck_assert_uint_eq(eof.bytes, event);
    gen.produce(g, buf, sizeof buf, &used, &e);
    ck_assert_uint_eq(e, 0);
    ck_assert_uint_eq(used, 0);
    char log[4096];
    capture_begin();
    gen.stop(g, &e);
    capture_end(log, sizeof log);
    ck_assert_ptr_nonnull(strstr(log, "emitted 1 events, 1 frames (0 data:crystal), "));
    ck_assert_ptr_nonnull(strstr(log, " bytes, then meta:eof; simulated 1 events"));
    gen.unload(g, &e);
}
END_TEST

/* The number of entries of tmp whose name starts with prefix and ends with suffix. */
static int count_files(const char *prefix, const char *suffix)
{
    int n = 0;
    DIR *d = opendir(tmp);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name), sl = strlen(suffix);
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0 && len >= sl && strcmp(e->d_name + len - sl, suffix) == 0;
    }
    closedir(d);
    return n;
}

/* GammaEvents is published only at stop: a run reset in its middle leaves
 * neither the file nor its temporary.  A second instance of the configuration
 * writes out.2.ge (before, it was refused out.ge); another configuration (a
 * copy of the library) naming out.ge is refused while an instance writes it. */
START_TEST(test_gammaevents_published_at_stop_only)
{
    char text[TEXT_MAX], log[4096], want[3 * PATH_MAX];
    unsigned e, used = 0;
    snprintf(text, sizeof text, "Output truth\nEvents 300\nSource co60\nGammaEvents %s\nArray %s/arrays/agata180.txt\n",
             in_tmp("out.ge"), detector);
    void *g = open_generator(text);
    void *other = gen.reg(&e);
    ck_assert_uint_eq(e, 0);
    capture_begin();
    gen.initialise(other, &e);
    capture_end(log, sizeof log);
    ck_assert_uint_eq(e, 0);
    snprintf(want, sizeof want, "[Generator#2] instance 2 of this configuration writes '%s' (key 'GammaEvents' "
             "names '%s', which instance 1 writes)", in_tmp("out.2.ge"), in_tmp("out.ge"));
    ck_assert_msg(strstr(log, want) != NULL, "no '%s' in: %s", want, log);
    stream s2 = run_once(other, 1u << 20);
    size_t size2;
    free(tk_read_file(in_tmp("out.2.ge"), &size2));
    ck_assert_uint_gt(size2, 0);
    ck_assert(!tk_exists(in_tmp("out.ge")));
    gen.unload(other, &e);
    free(s2.bytes);
    tk_actor copy;
    tk_load_actor_copy(&copy, "generator.so", tmp);
    copy.config(conf_dir, &e);
    ck_assert_uint_eq(e, 0);
    other = copy.reg(&e);
    capture_begin();
    copy.initialise(other, &e);
    capture_end(log, sizeof log);
    ck_assert_uint_eq(e, NARVAL_E_CONFIG);
    snprintf(want, sizeof want, "output '%s' is already being written by another live instance: change key "
             "'GammaEvents' in %s/Generator.conf", in_tmp("out.ge"), conf_dir);
    ck_assert_msg(strstr(log, want) != NULL, "no '%s' in: %s", want, log);
    copy.unload(other, &e);
    dlclose(copy.so);
    gen.start(g, &e);
    ck_assert_uint_eq(e, 0);
    uint8_t buf[2000];
    gen.produce(g, buf, sizeof buf, &used, &e);
    ck_assert_uint_eq(e, 0);
    ck_assert_uint_gt(used, 0);
    ck_assert(!tk_exists(in_tmp("out.ge")));
    ck_assert_int_eq(count_files("out.ge.", ".part"), 1);
    capture_begin();
    gen.reset(g, &e); /* in the middle of the run */
    capture_end(log, sizeof log);
    ck_assert_uint_eq(e, 0);
    ck_assert_ptr_nonnull(strstr(log, "reset before the end of the run: "));
    ck_assert_ptr_nonnull(strstr(log, "out.ge not written (its "));
    ck_assert(!tk_exists(in_tmp("out.ge")));
    ck_assert_int_eq(count_files("out.ge.", ".part"), 0);
    stream s = run_once(g, 1u << 20);
    ck_assert(tk_exists(in_tmp("out.ge")));
    ck_assert_int_eq(count_files("out.ge.", ".part"), 0);
    gen.start(g, &e); /* unloaded in a run: an abort, nothing published over the last file */
    gen.produce(g, buf, sizeof buf, &used, &e);
    ck_assert_uint_eq(e, 0);
    size_t before, after;
    free(tk_read_file(in_tmp("out.ge"), &before));
    capture_begin();
    gen.unload(g, &e);
    capture_end(log, sizeof log);
    ck_assert_uint_eq(e, 0);
    ck_assert_ptr_nonnull(strstr(log, "unloaded before the end of the run: "));
    free(tk_read_file(in_tmp("out.ge"), &after));
    ck_assert_uint_eq(after, before);
    ck_assert_int_eq(count_files("out.ge.", ".part"), 0);
    free(s.bytes);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sim");
    TCase *physics = tcase_create("physics");
    tcase_add_checked_fixture(physics, setup, teardown);
    tcase_set_timeout(physics, 60);
    tcase_add_test(physics, test_pencil_attenuation);
    tcase_add_test(physics, test_klein_nishina);
    tcase_add_test(physics, test_energy_conservation);
    tcase_add_test(physics, test_doppler);
    tcase_add_test(physics, test_lookup_table_array);
    tcase_add_test(physics, test_decay_schemes);
    suite_add_tcase(s, physics);
    TCase *frames = tcase_create("frames");
    tcase_add_checked_fixture(frames, setup, teardown);
    tcase_set_timeout(frames, 60);
    tcase_add_test(frames, test_trace_at_basis_point);
    tcase_add_test(frames, test_trace_trilinear);
    tcase_add_test(frames, test_trace_clipping_and_noise);
    tcase_add_test(frames, test_energy_in_collecting_segment);
    tcase_add_test(frames, test_same_seed_same_bytes);
    tcase_add_test(frames, test_event_layout);
    tcase_add_test(frames, test_output_size);
    tcase_add_test(frames, test_gammaevents_round_trip);
    tcase_add_test(frames, test_crystal_producers_split_one_stream);
    tcase_add_test(frames, test_crystal_producer_syncs);
    suite_add_tcase(s, frames);
    TCase *config = tcase_create("config");
    tcase_add_checked_fixture(config, setup, teardown);
    tcase_add_test(config, test_config_errors);
    tcase_add_test(config, test_initialise_errors);
    tcase_add_test(config, test_crystal_not_in_array);
    tcase_add_test(config, test_bad_gammaevents_input);
    tcase_add_test(config, test_gammaevents_foreign);
    suite_add_tcase(s, config);
    TCase *runs = tcase_create("runs");
    tcase_add_checked_fixture(runs, setup, teardown);
    tcase_set_timeout(runs, 60);
    tcase_add_test(runs, test_runs_continue_the_events);
    tcase_add_test(runs, test_eof_alone_when_no_room);
    tcase_add_test(runs, test_gammaevents_published_at_stop_only);
    suite_add_tcase(s, runs);
    return tk_run_suite(s);
}

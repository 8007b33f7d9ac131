/* check_fault.c: the replay chain with its N-th allocation, file write or CUDA call failing (tests/fault/libfault.so), for N over a clean run's calls: a clean error and nothing published, or the complete output. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "narwhal_exec.h"
#include "testkit.h"

/*
 * The chain is topologies/replay_chain.xml (reader -> psa -> builder -> tracker -> histo ->
 * writer) on 20 generator events and a coarse basis, with the PSA's search log and histo's
 * spectra as outputs beside the writer's file, run sequentially with OpenMP on one thread so
 * that two runs make the same calls in the same order.  A clean run under NARWHAL_FAULT=count
 * gives the number of calls of each kind; then for N from 1 to that number the run with the
 * N-th call failing must (N: every one of the first 300 allocations, the emulator's start-up
 * and the actors' configuration, each run a fraction of a second; past them every k-th, so
 * that about NARWHAL_FAULT_RUNS runs more are made, default 25; 0: every N):
 *  - end by itself (no signal, no timeout), the failure injected where the count said;
 *  - leave no file but complete ones: every file under the outputs' folder (but the emulator's
 *    --report) is one the clean run wrote, with the same bytes: no partial file under a final
 *    name, no temporary; an actor the failure did not touch may publish its own output;
 *  - and either fail (non-zero status, stderr saying why: an error, out of memory, cannot...)
 *    or succeed with every output written (the failure was absorbed): never a success with an
 *    output missing or different, which would be a silent loss.
 * The stride and the number of calls of each kind are printed.  sample_runs/fault/ records
 * the sweep with every N.
 */

enum { EVENTS = 20 };

static char tmp[PATH_MAX];
static char not_ready[PATH_MAX * 4]; /* why the chain cannot run here, when it cannot */
static int ready;

static const char *at(const char *name) { return tk_path(tmp, name); }

static void run_or_fail(const char *const *args, const char *what)
{
    nw_result *r = malloc(sizeof *r);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(nw_run_timed(r, args, NULL, 120, 0, 0), 0);
    ck_assert_msg(r->status == 0, "%s failed (%d):\n%s", what, r->status, r->err);
    free(r);
}

/* The chain's settings; device "cpu", or "auto" for the CUDA case (the GPU where there is one). */
static void write_confs(const char *device)
{
    char text[4 * PATH_MAX];
    tk_remove_tree(at("conf"));
    ck_assert_int_eq(mkdir(at("conf"), 0700), 0);
    snprintf(text, sizeof text, "File %s\n", at("input.adf"));
    tk_write_text(at("conf/ADFReader.conf"), text);
    snprintf(text, sizeof text, "Basis %s\nDevice %s\nThreads 1\nSearchLog %s\n", at("coarse.basis"), device,
             at("out/search.log"));
    tk_write_text(at("conf/PSA.conf"), text);
    snprintf(text, sizeof text, "Device %s\nKeepInput true\n", device);
    tk_write_text(at("conf/Tracker.conf"), text);
    snprintf(text, sizeof text,
             "OutputDir %s\nDevice %s\nThreads 1\nFormats spe csv\nPlot none\nHistogram gamma tracked.e sum 512 0 2048\n"
             "Histogram hit psa.e sum 512 0 2048\nHistogram core crystal.core sum 512 0 2048\n",
             at("out/histo"), device);
    tk_write_text(at("conf/Histo.conf"), text);
    snprintf(text, sizeof text, "File %s\n", at("out/output.adf"));
    tk_write_text(at("conf/ADFWriter.conf"), text);
}

static const char *preload_env(void)
{
    static char preload[PATH_MAX + 16];
    char path[PATH_MAX];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", realpath(nw_build_path("/tests/libfault.so"), path));
    return preload;
}

/* narwhal runs with libfault.so preloaded; not in a sanitizer build (SANITIZE=1), whose runtime must
 * come first and does its own interposing: then not_ready says so. */
static int preload_works(void)
{
    nw_result *r = malloc(sizeof *r);
    ck_assert_ptr_nonnull(r);
    const char *env[] = {preload_env(), "NARWHAL_FAULT=count", NULL};
    const char *args[] = {"--version", NULL};
    ck_assert_int_eq(nw_run_timed(r, args, env, 60, 0, 0), 0);
    int works = r->status == 0;
    if (!works)
        snprintf(not_ready, sizeof not_ready, "narwhal does not run with libfault.so preloaded (a sanitizer "
                 "build?): %.200s", r->err);
    free(r);
    return works;
}

/* The basis and the input (the generator through simulate.xml), once for the suite. */
static void setup(void)
{
    char text[2 * PATH_MAX];
    tk_make_tmpdir(tmp, sizeof tmp, "check_fault");
    if (access(nw_build_path("/tests/libfault.so"), R_OK) != 0) {
        snprintf(not_ready, sizeof not_ready, "%s is not built", nw_build_path("/tests/libfault.so"));
        return;
    }
    if (!preload_works())
        return;
    int rc = nw_coarse_basis(at("coarse.basis"), not_ready, sizeof not_ready);
    ck_assert_msg(rc <= 0, "%s", not_ready);
    if (rc < 0)
        return;
    ck_assert_int_eq(mkdir(at("gen"), 0700), 0);
    snprintf(text, sizeof text, "Basis %s\nSeed 11\nEvents %d\nSource cascade\nOutput crystal truth\nThreads 1\n",
             at("coarse.basis"), EVENTS);
    tk_write_text(at("gen/Generator.conf"), text);
    snprintf(text, sizeof text, "File %s\n", at("input.adf"));
    tk_write_text(at("gen/ADFWriter.conf"), text);
    const char *args[] = {"run", "topologies/simulate.xml", "--actors", nw_build_path("/actors"), "--conf", at("gen"), NULL};
    run_or_fail(args, "the generator");
    ready = 1;
}

static void teardown(void) { tk_remove_tree(tmp); }

/* ---- one run ------------------------------------------------------------------ */

typedef struct outcome {
    nw_result r;
    unsigned long long calls[3]; /* alloc, write, cuda: counted by libfault */
    char injected[700];          /* its "injected ..." line, or "" */
} outcome;

static const char *const kinds[] = {"alloc", "write", "cuda"};

/* The chain under NARWHAL_FAULT=spec; what it did and what libfault counted. */
static void run_chain(const char *spec, outcome *o)
{
    static char fault[64], report[PATH_MAX + 32];
    snprintf(fault, sizeof fault, "NARWHAL_FAULT=%s", spec);
    snprintf(report, sizeof report, "NARWHAL_FAULT_REPORT=%s", at("fault.txt"));
    const char *env[] = {preload_env(), fault, report, "OMP_NUM_THREADS=1", NULL};
    const char *args[] = {"run",    "topologies/replay_chain.xml", "--actors", nw_build_path("/actors"), "--conf",
                          at("conf"), "--report", at("out/report.tsv"), NULL};
    tk_remove_tree(at("out"));
    ck_assert_int_eq(mkdir(at("out"), 0700), 0);
    unlink(at("fault.txt"));
    ck_assert_int_eq(nw_run_timed(&o->r, args, env, 120, 0, 0), 0);
    memset(o->calls, 0, sizeof o->calls);
    o->injected[0] = '\0';
    FILE *fp = fopen(at("fault.txt"), "r");
    ck_assert_msg(fp != NULL, "NARWHAL_FAULT=%s: libfault wrote no report (status %d):\n%s", spec, o->r.status, o->r.err);
    char line[700];
    while (fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\n")] = '\0';
        for (int k = 0; k < 3; k++)
            if (strncmp(line, kinds[k], strlen(kinds[k])) == 0 && line[strlen(kinds[k])] == ' ')
                o->calls[k] = strtoull(line + strlen(kinds[k]) + 1, NULL, 10);
        if (strncmp(line, "injected ", 9) == 0)
            snprintf(o->injected, sizeof o->injected, "%s", line);
    }
    fclose(fp);
}

/* What a run left under out/ but the emulator's report: one path per line. */
static void left_behind(const char *dir, const char *prefix, char *list, size_t len)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d)
        return;
    while ((e = readdir(d))) {
        char sub[PATH_MAX + 256], name[PATH_MAX];
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || strcmp(e->d_name, "report.tsv") == 0)
            continue;
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        snprintf(name, sizeof name, "%s%s", prefix, e->d_name);
        if (stat(sub, &st) == 0 && S_ISDIR(st.st_mode)) {
            snprintf(name + strlen(name), sizeof name - strlen(name), "/");
            left_behind(sub, name, list, len);
        } else {
            snprintf(list + strlen(list), len - strlen(list), "%s\n", name);
        }
    }
    closedir(d);
}

/* True when the two files have the same bytes. */
static int same_file(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    uint8_t *pa = tk_slurp(a, &na), *pb = tk_slurp(b, &nb);
    int same = pa && pb && na == nb && memcmp(pa, pb, na) == 0;
    free(pa);
    free(pb);
    return same;
}

/* tmp/dir/name, in one of four buffers of its own (tk_path's ring holds at()'s paths). */
static const char *in_dir(const char *dir, const char *name)
{
    static char paths[4][2 * PATH_MAX];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, sizeof paths[0], "%s/%s/%s", tmp, dir, name);
    return p;
}

/* A failed run's stderr names the failure. */
static int said_why(const char *err)
{
    static const char *const words[] = {"error", "out of memory", "cannot", "failed"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strstr(err, words[i]))
            return 1;
    return 0;
}

/* The outputs a successful run must write, as the clean run did (under out/ and clean/). */
static const char *const outputs[] = {"output.adf", "search.log", "histo/gamma.spe", "histo/hit.csv"};

/* ---- the sweep ------------------------------------------------------------------ */

/* Runs the chain once per N of kind k (all, or a stride) and checks each outcome; -1 when a clean
 * run makes no call of that kind (CUDA without a GPU or without FAULT=1: the test skips). */
static int sweep(int k, const char *device)
{
    outcome *o = malloc(sizeof *o);
    char spec[64], cmd[3 * PATH_MAX];
    ck_assert_ptr_nonnull(o);
    write_confs(device);
    run_chain("count", o);
    ck_assert_msg(o->r.status == 0, "the clean run failed (%d):\n%s", o->r.status, o->r.err);
    unsigned long long total = o->calls[k];
    if (k == 2 && total == 0) {
        free(o);
        return -1;
    }
    ck_assert_msg(total > 0, "the clean run made no %s call that libfault saw", kinds[k]);
    snprintf(cmd, sizeof cmd, "rm -rf %s && cp -r %s %s", at("clean"), at("out"), at("clean"));
    ck_assert_int_eq(system(cmd), 0);
    for (size_t i = 0; i < sizeof outputs / sizeof outputs[0]; i++)
        ck_assert_msg(access(in_dir("clean", outputs[i]), R_OK) == 0, "the clean run wrote no %s", outputs[i]);

    const char *runs_env = getenv("NARWHAL_FAULT_RUNS");
    unsigned long long runs = runs_env ? strtoull(runs_env, NULL, 10) : 25;
    unsigned long long head = k == 0 ? 300 : 0;
    unsigned long long stride = runs == 0 || total <= head + runs ? 1 : (total - head + runs - 1) / runs;
    unsigned long long failed = 0, absorbed = 0;
    for (unsigned long long n = 1; n <= total; n += n < head ? 1 : stride) {
        snprintf(spec, sizeof spec, "%s:%llu", kinds[k], n);
        run_chain(spec, o);
        ck_assert_msg(!o->r.timed_out && o->r.status < 125, "%s: the run did not end by itself (status %d):\n%s", spec,
                      o->r.status, o->r.err);
        ck_assert_msg(o->injected[0], "%s: nothing was injected (%llu calls this time): the runs differ", spec,
                      o->calls[k]);
        char left[8192] = "";
        left_behind(at("out"), "", left, sizeof left);
        for (char *name = strtok(left, "\n"); name; name = strtok(NULL, "\n"))
            ck_assert_msg(same_file(in_dir("out", name), in_dir("clean", name)),
                          "%s (%s): %s is not what the clean run wrote (a partial file or a temporary left "
                          "behind; status %d)\n%s", spec, o->injected, name, o->r.status, o->r.err);
        if (o->r.status != 0) {
            ck_assert_msg(said_why(o->r.err), "%s (%s): status %d without a message saying why:\n%s", spec,
                          o->injected, o->r.status, o->r.err);
            failed++;
        } else {
            for (size_t i = 0; i < sizeof outputs / sizeof outputs[0]; i++)
                ck_assert_msg(access(in_dir("out", outputs[i]), R_OK) == 0,
                              "%s (%s): the run succeeded without writing %s: a silent loss\n%s", spec,
                              o->injected, outputs[i], o->r.err);
            absorbed++;
        }
    }
    fprintf(stderr, "check_fault: %s: %llu runs (N from 1, every one up to %llu, then in steps of %llu, of %llu calls): "
            "%llu failed cleanly, %llu absorbed with the output complete\n", kinds[k], failed + absorbed,
            head < total ? head : total, stride, total, failed, absorbed);
    free(o);
    return 0;
}

START_TEST(allocations)
{
    if (!ready)
        TK_SKIP("%s", not_ready);
    sweep(0, "cpu");
}
END_TEST

START_TEST(file_writes)
{
    if (!ready)
        TK_SKIP("%s", not_ready);
    sweep(1, "cpu");
}
END_TEST

START_TEST(cuda_calls)
{
    if (!ready)
        TK_SKIP("%s", not_ready);
    if (sweep(2, "auto") < 0)
        TK_SKIP("no CUDA call counted: no usable GPU here, or not a FAULT=1 build (make FAULT=1 BUILD=build/fault)");
}
END_TEST

static Suite *fault_suite(void)
{
    Suite *s = suite_create("fault");
    TCase *tc = tcase_create("replay_chain");
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 900);
    tcase_add_test(tc, allocations);
    tcase_add_test(tc, file_writes);
    tcase_add_test(tc, cuda_calls);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(fault_suite()); }

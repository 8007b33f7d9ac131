/* check_cluster.c: triple.xml (a producer and a PSA per crystal, the builder merging three streams) tracks the same γ rays as full_chain.xml on the same events, sequential and pipelined. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adf.h"
#include "narwhal_exec.h"
#include "testkit.h"

enum { EVENTS = 300 };

static char tmp[PATH_MAX];

static const char *at(const char *name) { return tk_path(tmp, name); }

/* Writes tmp/conf/TO: the shipped FROM without the lines of the keys `set`
 * gives, then `set` (the shipped physics stays; paths, devices and the
 * size of the run change). */
static void derive(const char *from, const char *to, const char *set)
{
    char path[PATH_MAX + 80];
    snprintf(path, sizeof path, "%s/conf/%s", tmp, to);
    ck_assert_msg(nw_derive_conf(from, path, set, "check_cluster") == 0, "cannot derive %s from the shipped %s", path,
                  from);
}

/* The shipped triple.xml's settings over a coarse basis, on the CPU; full_chain.xml's generator
 * simulates the same events for every crystal of the triple (Crystals all, one stream). */
static void write_confs(void)
{
    char set[2 * PATH_MAX], from[PATH_MAX], why[2 * PATH_MAX];
    ck_assert_msg(nw_triple_confs(tmp, at("coarse.basis"), EVENTS, "", "check_cluster", why, sizeof why) == 0, "%s", why);
    snprintf(from, sizeof from, "topologies/conf/triple/gen%d/Generator.conf", nw_triple_crystals[0]);
    snprintf(set, sizeof set, "Basis %s\nEvents %d\nCrystals all\nOutput crystal truth\n", at("coarse.basis"), EVENTS);
    derive(from, "Generator.conf", set);
}

/* narwhal run TOPOLOGY --strict over the test's settings; the writer's pair (the shipped
 * OtherFile beside: the AGATA-readable file, then its Narwhal file), read whole, back to back. */
static uint8_t *run(const char *topology, int pipelined, size_t *size)
{
    char conf[2 * PATH_MAX];
    snprintf(conf, sizeof conf, "%s:topologies/conf", at("conf"));
    const char *args[] = {"run", topology, "--strict", "--conf", conf, pipelined ? "--pipeline" : NULL, NULL};
    nw_result r;
    ck_assert_int_eq(nw_run_timed(&r, args, NULL, 300, 0, 0), 0);
    ck_assert_msg(r.status == 0, "narwhal run %s%s exited %d:\n%s", topology, pipelined ? " --pipeline" : "",
                  r.status, r.err);
    ck_assert_msg(strstr(r.err, "warning") == NULL, "%s logged a warning:\n%s", topology, r.err);
    size_t n;
    uint8_t *data = tk_read_file(at("out.adf"), size), *rest = tk_read_file(at("out.narwhal.adf"), &n);
    uint8_t *both = realloc(data, *size + n + 1);
    ck_assert_ptr_nonnull(both);
    memcpy(both + *size, rest, n);
    *size += n;
    free(rest);
    return both;
}

/* The frames of kind id in a file, back to back in its order; *n of them. */
static uint8_t *frames_of(const uint8_t *file, size_t size, uint32_t id, size_t *bytes, unsigned *n)
{
    uint8_t *out = malloc(size ? size : 1);
    adf_iter it;
    adf_frame f;
    *bytes = 0;
    *n = 0;
    adf_iter_init(&it, file, size);
    int rc;
    while ((rc = adf_iter_next(&it, &f)) == 1) {
        if (f.key.id != id)
            continue;
        memcpy(out + *bytes, f.data, f.key.length);
        *bytes += f.key.length;
        ++*n;
    }
    ck_assert_int_eq(rc, 0);
    return out;
}

/* The same frames of kind id, in the same order, byte for byte. */
static void expect_same(const uint8_t *a, size_t na, const uint8_t *b, size_t nb, uint32_t id, const char *what,
                        unsigned at_least)
{
    size_t ba, bb;
    unsigned fa, fb;
    uint8_t *x = frames_of(a, na, id, &ba, &fa), *y = frames_of(b, nb, id, &bb, &fb);
    ck_assert_msg(fa == fb, "%s: %u frames 0x%08x in the single stream's output, %u in the cluster's", what, fa, id,
                  fb);
    ck_assert_uint_eq(ba, bb);
    ck_assert_msg(memcmp(x, y, ba) == 0, "%s: the frames 0x%08x differ", what, id);
    ck_assert_uint_ge(fa, at_least);
    free(x);
    free(y);
}

START_TEST(cluster_tracks_what_the_single_stream_tracks)
{
    char why[4 * PATH_MAX];
    tk_make_tmpdir(tmp, sizeof tmp, "check_cluster");
    int basis = nw_coarse_basis(at("coarse.basis"), why, sizeof why);
    ck_assert_msg(basis <= 0, "%s", why);
    if (basis < 0)
        TK_SKIP("%s", why);
    write_confs();
    size_t n_single, n_seq, n_pipe;
    uint8_t *single = run("topologies/full_chain.xml", 0, &n_single);
    uint8_t *seq = run("topologies/triple.xml", 0, &n_seq);
    uint8_t *pipe = run("topologies/triple.xml", 1, &n_pipe);
    /* most of the beam's events fire the cluster; a γ ray or more tracked in most */
    expect_same(single, n_single, seq, n_seq, ADF_ID_NW_TRACKED, "sequential", EVENTS / 2);
    expect_same(single, n_single, pipe, n_pipe, ADF_ID_NW_TRACKED, "pipelined", EVENTS / 2);
    /* the events the tracker took (KeepInput), the truth from gen175 alone, one meta:eof */
    expect_same(single, n_single, seq, n_seq, ADF_ID_EVENT_DATA_PSA, "sequential", EVENTS / 2);
    expect_same(single, n_single, pipe, n_pipe, ADF_ID_EVENT_DATA_PSA, "pipelined", EVENTS / 2);
    expect_same(single, n_single, seq, n_seq, ADF_ID_NW_TRUTH, "sequential", EVENTS);
    expect_same(single, n_single, pipe, n_pipe, ADF_ID_NW_TRUTH, "pipelined", EVENTS);
    size_t b;
    unsigned eofs;
    free(frames_of(seq, n_seq, ADF_ID_META_EOF, &b, &eofs));
    ck_assert_uint_eq(eofs, 1);
    free(single);
    free(seq);
    free(pipe);
    tk_remove_tree(tmp);
}
END_TEST

static Suite *cluster_suite(void)
{
    Suite *s = suite_create("cluster");
    TCase *tc = tcase_create("triple");
    tcase_set_timeout(tc, 900);
    tcase_add_test(tc, cluster_tracks_what_the_single_stream_tracks);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(cluster_suite()); }

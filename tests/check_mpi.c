/* check_mpi.c: topologies across MPI ranks: placement, triple_mpi.xml under mpirun -np 3 writing what one process writes, a mapping file, an abort, a dead rank, Ctrl-C. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu.h"
#include "mpi.h"
#include "mpi_place.h"
#include "narwhal_exec.h"
#include "testkit.h"
#include "topology.h"

enum { EVENTS = 200 };


/* ---- placement (no MPI needed) */

static emu_topology *read_topology(const char *path)
{
    emu_topology *t = NULL;
    char err[1024];
    ck_assert_msg(emu_topology_read(path, NULL, &t, err, sizeof err) == EMU_OK, "%s", err);
    return t;
}

static size_t actor(const emu_topology *t, const char *name)
{
    for (size_t k = 0; k < t->n_actors; k++)
        if (strcmp(t->actors[k].name, name) == 0)
            return k;
    ck_abort_msg("no actor '%s'", name);
    return 0;
}

static int rank_of(const emu_topology *t, const int *ranks, const char *name) { return ranks[actor(t, name)]; }

START_TEST(a_rank_per_hostname_in_order_of_appearance)
{
    emu_topology *t = read_topology("topologies/triple_mpi.xml");
    int ranks[16];
    char err[1024];
    ck_assert_uint_le(t->n_actors, 16);
    ck_assert_int_eq(emu_place(t, 3, NULL, ranks, err, sizeof err), EMU_OK);
    for (int c = 0; c < 3; c++) {
        char name[16];
        snprintf(name, sizeof name, "gen%d", nw_triple_crystals[c]);
        ck_assert_int_eq(rank_of(t, ranks, name), 0);
        snprintf(name, sizeof name, "psa%d", nw_triple_crystals[c]);
        ck_assert_int_eq(rank_of(t, ranks, name), 1);
    }
    ck_assert_int_eq(rank_of(t, ranks, "builder"), 2);
    ck_assert_int_eq(rank_of(t, ranks, "tracker"), 2);
    ck_assert_int_eq(rank_of(t, ranks, "writer"), 2);
    ck_assert_int_eq(emu_place(t, 2, NULL, ranks, err, sizeof err), EMU_E_TOPOLOGY);
    ck_assert_str_eq(err, "topologies/triple_mpi.xml: its actors name 3 hosts (daq1, daq2, daq3), a rank each in "
                          "that order, but 2 ranks were started: run it with mpirun -np 3, or place the actors with "
                          "--place FILE");
    ck_assert_int_eq(emu_place(t, 1, NULL, ranks, err, sizeof err), EMU_OK);
    for (size_t k = 0; k < t->n_actors; k++)
        ck_assert_int_eq(ranks[k], 0);
    emu_topology_free(t);
}
END_TEST

/* All on localhost: producers dealt in turn, each PSA with its producer, the join and after on rank 0. */
START_TEST(a_localhost_topology_is_spread_by_producer)
{
    emu_topology *t = read_topology("topologies/triple.xml");
    int ranks[16];
    char err[1024];
    ck_assert_int_eq(emu_place(t, 2, NULL, ranks, err, sizeof err), EMU_OK);
    ck_assert_int_eq(rank_of(t, ranks, "gen175"), 0);
    ck_assert_int_eq(rank_of(t, ranks, "psa175"), 0);
    ck_assert_int_eq(rank_of(t, ranks, "gen176"), 1);
    ck_assert_int_eq(rank_of(t, ranks, "psa176"), 1);
    ck_assert_int_eq(rank_of(t, ranks, "gen170"), 0);
    ck_assert_int_eq(rank_of(t, ranks, "psa170"), 0);
    ck_assert_int_eq(rank_of(t, ranks, "builder"), 0);
    ck_assert_int_eq(rank_of(t, ranks, "histo"), 0);
    ck_assert_int_eq(emu_place(t, 4, NULL, ranks, err, sizeof err), EMU_OK);
    ck_assert_int_eq(rank_of(t, ranks, "psa170"), 2);
    ck_assert_int_eq(rank_of(t, ranks, "writer"), 0);
    emu_topology_free(t);
}
END_TEST

START_TEST(a_mapping_file_places_by_actor_then_by_host)
{
    emu_topology *t = read_topology("topologies/triple_mpi.xml");
    int ranks[16];
    char err[1024], tmp[PATH_MAX];
    ck_assert_int_eq(emu_place(t, 3, "topologies/triple_mpi.place", ranks, err, sizeof err), EMU_OK);
    ck_assert_int_eq(rank_of(t, ranks, "gen176"), 0);
    ck_assert_int_eq(rank_of(t, ranks, "psa176"), 1);
    ck_assert_int_eq(rank_of(t, ranks, "tracker"), 1);
    ck_assert_int_eq(rank_of(t, ranks, "histo"), 2);
    tk_make_tmpdir(tmp, sizeof tmp, "check_mpi_place");
    const char *map = tk_path(tmp, "map");
    tk_write_text(map, "# no daq3\ndaq1 0\ndaq2 1\n");
    ck_assert_int_eq(emu_place(t, 3, map, ranks, err, sizeof err), EMU_E_TOPOLOGY);
    ck_assert_msg(strstr(err, "names neither actor 'builder' (topologies/triple_mpi.xml:") &&
                      strstr(err, ") nor its host 'daq3'"),
                  "%s", err);
    tk_write_text(map, "daq1 0\ndaq2 1\ndaq3 3\n");
    ck_assert_int_eq(emu_place(t, 3, map, ranks, err, sizeof err), EMU_E_TOPOLOGY);
    ck_assert_msg(strstr(err, ":3: rank '3' of 'daq3': the ranks started are 0 to 2"), "%s", err);
    tk_write_text(map, "daq1 0\ndaq1 1\n");
    ck_assert_int_eq(emu_place(t, 3, map, ranks, err, sizeof err), EMU_E_TOPOLOGY);
    ck_assert_msg(strstr(err, ":2: 'daq1' is placed twice"), "%s", err);
    tk_write_text(map, "daq1 0 extra\n");
    ck_assert_int_eq(emu_place(t, 3, map, ranks, err, sizeof err), EMU_E_TOPOLOGY);
    ck_assert_msg(strstr(err, ":1: expected \"NAME RANK\""), "%s", err);
    tk_remove_tree(tmp);
    emu_topology_free(t);
}
END_TEST

/* ---- runs under mpirun: triple.xml's settings over a coarse basis, on the CPU */

static char tmp[PATH_MAX];
static char unusable[4 * PATH_MAX]; /* why mpirun runs cannot be made here (no MPI); empty: they can */
static char broken[4 * PATH_MAX];   /* why the triple cluster's basis could not be made: a failure */

static const char *at(const char *name) { return tk_path(tmp, name); }

static void derive(const char *from, const char *to, const char *set)
{
    char path[PATH_MAX + 80];
    snprintf(path, sizeof path, "%s/conf/%s", tmp, to);
    ck_assert_msg(nw_derive_conf(from, path, set, "check_mpi") == 0, "cannot derive %s from the shipped %s", path,
                  from);
}

/* Once per test case: a tree, the basis, the settings; or why mpirun runs cannot be made. */
static void ranks_setup(void)
{
    unusable[0] = broken[0] = '\0';
    tk_make_tmpdir(tmp, sizeof tmp, "check_mpi");
    if (!emu_mpi_available)
        snprintf(unusable, sizeof unusable, "narwhal was built without MPI (no mpicc or pkg-config ompi-c)");
    else if (system("command -v mpirun >/dev/null 2>&1") != 0)
        snprintf(unusable, sizeof unusable, "no mpirun on the PATH");
    else if (nw_coarse_basis(at("coarse.basis"), broken, sizeof broken) < 0)
        snprintf(unusable, sizeof unusable, "%s", broken);
    else if (!broken[0]) /* settings that cannot be written are a failure too: broken says why */
        nw_triple_confs(tmp, at("coarse.basis"), EVENTS, "Threads 1\n", "check_mpi", broken, sizeof broken);
}

static void ranks_teardown(void) { tk_remove_tree(tmp); }

/* mpirun -np ranks narwhal ARGS (env: NAME=value strings, NULL-terminated or NULL).  Each rank's
 * exit status is logged on stderr as "check_mpi: rank R exit S" by a shell around it, which leaves
 * SIGINT and SIGTERM to narwhal (Open MPI signals every process of a rank). */
static void mpirun(nw_result *r, int ranks, const char *const *args, const char *const *env, double timeout, int sig,
                   double sig_after)
{
    static const char wrapper[] = "trap '' INT TERM; \"$0\" \"$@\"; s=$?; echo \"check_mpi: rank $OMPI_COMM_WORLD_RANK exit $s\" >&2; "
                                  "exit $s";
    char np[16];
    snprintf(np, sizeof np, "%d", ranks);
    const char *argv[48];
    size_t n = 0;
    argv[n++] = "mpirun";
    argv[n++] = "--oversubscribe";
    if (geteuid() == 0)
        argv[n++] = "--allow-run-as-root";
    for (const char *const *p = (const char *const[]){"-np", np, "sh", "-c", wrapper, NULL}; *p; p++)
        argv[n++] = *p;
    argv[n++] = nw_build_path("/bin/narwhal");
    for (size_t i = 0; args[i] && n < 47; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    int out = nw_tempfile(), err = nw_tempfile();
    ck_assert(out >= 0 && err >= 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        for (size_t i = 0; env && env[i]; i++)
            putenv((char *)env[i]);
        dup2(out, 1);
        dup2(err, 2);
        execvp("mpirun", (char *const *)argv);
        _exit(127);
    }
    ck_assert_int_eq(nw_wait(r, pid, timeout, sig, sig_after), 0);
    nw_slurp(out, r->out, sizeof r->out);
    nw_slurp(err, r->err, sizeof r->err);
}

/* The conf list every run of the triple cluster gets. */
static const char *conf_list(void)
{
    static char list[2 * PATH_MAX];
    snprintf(list, sizeof list, "%s:topologies/conf", at("conf"));
    return list;
}

/* The run's outputs renamed to NAME.adf, NAME.narwhal.adf, NAME-histo/. */
static void keep_outputs(const char *name)
{
    char to[PATH_MAX + 64];
    snprintf(to, sizeof to, "%s/%s.adf", tmp, name);
    ck_assert_msg(rename(at("out.adf"), to) == 0, "no %s", at("out.adf"));
    snprintf(to, sizeof to, "%s/%s.narwhal.adf", tmp, name);
    ck_assert_msg(rename(at("out.narwhal.adf"), to) == 0, "no %s", at("out.narwhal.adf"));
    snprintf(to, sizeof to, "%s/%s-histo", tmp, name);
    ck_assert_msg(rename(at("histo"), to) == 0, "no %s", at("histo"));
}

/* The single-process run of triple.xml, made once and kept as "single". */
static void single_run(void)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/single.adf", tmp);
    if (tk_exists(path))
        return;
    const char *args[] = {"run", "topologies/triple.xml", "--strict", "--conf", conf_list(), NULL};
    nw_result r;
    ck_assert_int_eq(nw_run_timed(&r, args, NULL, 300, 0, 0), 0);
    ck_assert_msg(r.status == 0, "narwhal run topologies/triple.xml exited %d:\n%s", r.status, r.err);
    keep_outputs("single");
}

static void expect_same_file(const char *a, const char *b)
{
    char pa[PATH_MAX + 64], pb[PATH_MAX + 64];
    snprintf(pa, sizeof pa, "%s/%s", tmp, a);
    snprintf(pb, sizeof pb, "%s/%s", tmp, b);
    size_t na, nb;
    uint8_t *x = tk_read_file(pa, &na), *y = tk_read_file(pb, &nb);
    ck_assert_msg(na == nb && memcmp(x, y, na) == 0, "%s (%zu bytes) and %s (%zu bytes) differ", a, na, b, nb);
    ck_assert_uint_gt(na, 0);
    free(x);
    free(y);
}

/* Every file under tmp/a (its folders too), the same under tmp/b; how many. */
static int expect_same_tree(const char *a, const char *b)
{
    char dir[PATH_MAX + 64], fa[128], fb[128];
    snprintf(dir, sizeof dir, "%s/%s", tmp, a);
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "no %s", dir);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(fa, sizeof fa, "%.60s/%.60s", a, e->d_name);
        snprintf(fb, sizeof fb, "%.60s/%.60s", b, e->d_name);
        struct stat st;
        ck_assert_int_eq(stat(tk_path(tmp, fa), &st), 0);
        if (S_ISDIR(st.st_mode)) {
            files += expect_same_tree(fa, fb);
        } else {
            expect_same_file(fa, fb);
            files++;
        }
    }
    closedir(d);
    return files;
}

/* This machine's name, as MPI gives every rank's here. */
static const char *host(void)
{
    static char name[256];
    ck_assert_int_eq(gethostname(name, sizeof name - 1), 0);
    return name;
}

/* Actor NAME's row of the table ends with its rank and host. */
static void expect_place(const char *table, const char *name, int rank)
{
    char tail[300];
    snprintf(tail, sizeof tail, "  %4d  %s\n", rank, host());
    size_t n = strlen(name), t = strlen(tail);
    for (const char *line = table, *end; (end = strchr(line, '\n')); line = end + 1)
        if (strncmp(line, name, n) == 0 && line[n] == ' ') {
            ck_assert_msg((size_t)(end + 1 - line) >= t && strncmp(end + 1 - t, tail, t) == 0,
                          "the row of %s does not end with rank %d and host %s:\n%s", name, rank, host(), table);
            return;
        }
    ck_abort_msg("no row for %s in:\n%s", name, table);
}

static void expect_every_rank_exits(const nw_result *r, int ranks, int status)
{
    for (int rank = 0; rank < ranks; rank++) {
        char line[64];
        snprintf(line, sizeof line, "check_mpi: rank %d exit %d\n", rank, status);
        ck_assert_msg(strstr(r->err, line), "no '%.*s' in:\n%s", (int)strlen(line) - 1, line, r->err);
    }
}

START_TEST(three_ranks_write_what_one_process_writes)
{
    if (unusable[0])
        TK_SKIP("%s", unusable);
    ck_assert_msg(!broken[0], "%s", broken);
    single_run();
    const char *args[] = {"run", "topologies/triple_mpi.xml", "--strict", "--conf", conf_list(), NULL};
    nw_result r;
    mpirun(&r, 3, args, NULL, 300, 0, 0);
    ck_assert_msg(r.status == 0 && !r.timed_out, "mpirun exited %d:\n%s", r.status, r.err);
    expect_every_rank_exits(&r, 3, 0);
    keep_outputs("mpi");
    expect_same_file("single.adf", "mpi.adf");
    expect_same_file("single.narwhal.adf", "mpi.narwhal.adf");
    ck_assert_int_gt(expect_same_tree("single-histo", "mpi-histo"), 3);
    /* the table, once, from rank 0, each actor with the rank that ran it */
    ck_assert_uint_eq(tk_count(r.out, "blocks ran "), 1);
    ck_assert_msg(strstr(r.out, "pipelined across 3 MPI ranks"), "%s", r.out);
    expect_place(r.out, "gen176", 0);
    expect_place(r.out, "psa176", 1);
    expect_place(r.out, "builder", 2);
    expect_place(r.out, "writer", 2);
}
END_TEST

START_TEST(a_mapping_file_moves_an_actor_and_the_output_stays)
{
    if (unusable[0])
        TK_SKIP("%s", unusable);
    ck_assert_msg(!broken[0], "%s", broken);
    single_run();
    const char *args[] = {"run",  "topologies/triple_mpi.xml", "--strict", "--conf", conf_list(),
                          "--place", "topologies/triple_mpi.place", NULL};
    nw_result r;
    mpirun(&r, 3, args, NULL, 300, 0, 0);
    ck_assert_msg(r.status == 0 && !r.timed_out, "mpirun exited %d:\n%s", r.status, r.err);
    keep_outputs("mapped");
    expect_same_file("single.adf", "mapped.adf");
    expect_same_file("single.narwhal.adf", "mapped.narwhal.adf");
    expect_place(r.out, "tracker", 1);
    expect_place(r.out, "histo", 2);
}
END_TEST

/* psa176 (rank 1) finds every frame absurd and allows no bad frame: its first block fails.  Every
 * rank aborts (unload without stop): no output is published on any, each exits 1 and says why. */
START_TEST(an_actor_failing_on_one_rank_aborts_every_rank)
{
    if (unusable[0])
        TK_SKIP("%s", unusable);
    ck_assert_msg(!broken[0], "%s", broken);
    char set[PATH_MAX + 64], dir[PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s/conf/psa176", tmp);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(set, sizeof set, "Basis %s\nDevice cpu\nThreads 1\nMaxEnergy 1\nMaxBadFrames 0\n", at("coarse.basis"));
    derive("topologies/conf/PSA.conf", "psa176/PSA.conf", set);
    const char *args[] = {"run", "topologies/triple_mpi.xml", "--strict", "--conf", conf_list(), NULL};
    nw_result r;
    double t0 = nw_seconds();
    mpirun(&r, 3, args, NULL, 120, 0, 0);
    double took = nw_seconds() - t0;
    snprintf(set, sizeof set, "%s/psa176/PSA.conf", at("conf"));
    ck_assert_int_eq(unlink(set), 0);
    ck_assert_int_eq(rmdir(dir), 0);
    ck_assert_msg(!r.timed_out && r.status == EMU_E_RUN, "mpirun exited %d after %.1f s:\n%s", r.status, took, r.err);
    expect_every_rank_exits(&r, 3, EMU_E_RUN);
    char line[600];
    snprintf(line, sizeof line, "narwhal: rank 1 (%s): actor 'psa176' (psa.so): process_block returned error code",
             host());
    ck_assert_msg(strstr(r.err, line), "no '%s' in:\n%s", line, r.err);
    for (int rank = 0; rank < 3; rank += 2) {
        snprintf(line, sizeof line, "narwhal: rank %d (%s): aborting: rank 1 (host %s) failed: actor 'psa176'", rank,
                 host(), host());
        ck_assert_msg(strstr(r.err, line), "no '%s' in:\n%s", line, r.err);
    }
    ck_assert_msg(!tk_exists(at("out.adf")) && !tk_exists(at("out.narwhal.adf")), "the writer published:\n%s", r.err);
    DIR *d = opendir(at("histo"));
    for (struct dirent *e; d && (e = readdir(d));)
        ck_assert_msg(e->d_name[0] == '.', "the histogrammer left %s", e->d_name);
    if (d)
        closedir(d);
    ck_assert_int_eq(tk_count(r.out, "stopped by an error"), 1);
}
END_TEST

/* The lifecycle test actors' chain4.xml over 3 ranks, each actor placed (the producer on
 * rank 0), with one more narwhal option (or NULL). */
static void chain_across_ranks(nw_result *r, const char *option, const char *value, const char *const *env,
                               double timeout, int sig, double sig_after)
{
    const char *map = at("chain.place");
    tk_write_text(map, "source 0\nfirst 1\nsecond 2\nsink 1\n");
    char actors[PATH_MAX];
    snprintf(actors, sizeof actors, "%s", nw_build_path("/tests/actors"));
    const char *args[] = {"run", "tests/topologies/good/chain4.xml", "--actors", actors, "--place", map, option,
                          value, NULL};
    mpirun(r, 3, args, env, timeout, sig, sig_after);
}

/* A rank that stops answering (SIGSTOP in its producer's third block): the others report it
 * after --mpi-timeout and the job ends; nobody waits for it. */
START_TEST(a_silent_rank_is_reported_within_the_timeout)
{
    if (unusable[0])
        TK_SKIP("%s", unusable);
    const char *env[] = {"LIFECYCLE_FRAMES=400", "LIFECYCLE_SIGNAL=3:STOP", NULL};
    nw_result r;
    double t0 = nw_seconds();
    chain_across_ranks(&r, "--mpi-timeout", "2", env, 60, 0, 0);
    double took = nw_seconds() - t0;
    ck_assert_msg(!r.timed_out && r.status != 0, "mpirun exited %d after %.1f s:\n%s", r.status, took, r.err);
    ck_assert_msg(took < 30, "%.1f s", took);
    char line[600];
    snprintf(line, sizeof line, "rank 0 (host %s) has sent nothing for ", host());
    ck_assert_msg(strstr(r.err, line) && strstr(r.err, "presumed dead"), "no '%s' in:\n%s", line, r.err);
}
END_TEST

/* Ctrl-C on mpirun: Open MPI sends every rank SIGCONT, SIGTERM odls_base_sigkill_timeout
 * seconds later (default 1) and SIGKILL as long again after that: within that time every actor
 * is stopped, none aborted. */
START_TEST(sigint_on_mpirun_stops_every_rank)
{
    if (unusable[0])
        TK_SKIP("%s", unusable);
    char log[PATH_MAX + 64];
    snprintf(log, sizeof log, "LIFECYCLE_LOG=%s", at("calls.log"));
    const char *env[] = {"LIFECYCLE_FRAMES=100000", "LIFECYCLE_SLOW=P:20000", log,
                         "OMPI_MCA_odls_base_sigkill_timeout=5", NULL};
    nw_result r;
    chain_across_ranks(&r, NULL, NULL, env, 90, SIGINT, 4);
    ck_assert_msg(!r.timed_out, "%s", r.err);
    expect_every_rank_exits(&r, 3, 0);
    ck_assert_msg(strstr(r.out, "stopped by SIGTERM"), "%s\n%s", r.out, r.err);
    size_t size;
    char *calls = (char *)tk_read_file(at("calls.log"), &size);
    ck_assert_uint_eq(tk_count(calls, "process_stop"), 4);
    ck_assert_uint_eq(tk_count(calls, "process_unload"), 4);
    free(calls);
}
END_TEST

static Suite *mpi_suite(void)
{
    Suite *s = suite_create("mpi");
    TCase *place = tcase_create("place");
    tcase_add_test(place, a_rank_per_hostname_in_order_of_appearance);
    tcase_add_test(place, a_localhost_topology_is_spread_by_producer);
    tcase_add_test(place, a_mapping_file_places_by_actor_then_by_host);
    suite_add_tcase(s, place);
    TCase *ranks = tcase_create("ranks");
    tcase_set_timeout(ranks, 900);
    tcase_add_unchecked_fixture(ranks, ranks_setup, ranks_teardown);
    tcase_add_test(ranks, three_ranks_write_what_one_process_writes);
    tcase_add_test(ranks, a_mapping_file_moves_an_actor_and_the_output_stays);
    tcase_add_test(ranks, an_actor_failing_on_one_rank_aborts_every_rank);
    tcase_add_test(ranks, a_silent_rank_is_reported_within_the_timeout);
    tcase_add_test(ranks, sigint_on_mpirun_stops_every_rank);
    suite_add_tcase(s, ranks);
    return s;
}

/* In a sanitizer build the ranks' leak check is off (their ASan and UBSan
 * checks stay on): Open MPI's libraries keep allocations to the end of the
 * process on purpose, in components dlopened and closed again, which
 * LeakSanitizer reports as leaks of unknown modules that no suppression can
 * name, and every rank then exits non-zero.  Our code's leaks are checked by
 * every other suite of that build and by valgrind (make memcheck). */
int main(void)
{
    setenv("ASAN_OPTIONS", "detect_leaks=0", 0);
    return tk_run_suite(mpi_suite());
}

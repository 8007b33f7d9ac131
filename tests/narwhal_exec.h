/* narwhal_exec.h: runs $BUILD/bin/narwhal in a child (timed, signalled) and captures its status, stdout and stderr. */
#ifndef NARWHAL_TESTS_EXEC_H
#define NARWHAL_TESTS_EXEC_H

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NW_OUTPUT_MAX 65536

typedef struct nw_result {
    int status;    /* exit status, or 128 + signal */
    int timed_out; /* it was killed at the timeout */
    char out[NW_OUTPUT_MAX];
    char err[NW_OUTPUT_MAX];
} nw_result;

/* $BUILD (default "build") followed by suffix, e.g. nw_build_path("/bin/narwhal"). */
static inline const char *nw_build_path(const char *suffix)
{
    static char path[4][1024];
    static int next;
    const char *build = getenv("BUILD");
    char *p = path[next++ % 4];
    snprintf(p, sizeof path[0], "%s%s", build && *build ? build : "build", suffix);
    return p;
}

static inline void nw_slurp(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    ssize_t got;
    lseek(fd, 0, SEEK_SET);
    while (n + 1 < cap && (got = read(fd, buf + n, cap - 1 - n)) > 0)
        n += (size_t)got;
    buf[n] = '\0';
    close(fd);
}

static inline int nw_tempfile(void)
{
    char name[] = "/tmp/narwhal-test-XXXXXX";
    int fd = mkstemp(name);
    if (fd >= 0)
        unlink(name);
    return fd;
}

/* Starts narwhal with args (NULL-terminated, without argv[0]), its stdout
 * and stderr going to the files out and err; env holds "NAME=value" strings
 * set in the child (NULL-terminated, may be NULL).  The LIFECYCLE_*
 * variables of the test actors are cleared first. */
static inline pid_t nw_spawn(const char *const *args, const char *const *env, int out, int err)
{
    const char *argv[32];
    size_t n = 0;
    argv[n++] = nw_build_path("/bin/narwhal");
    for (size_t i = 0; args[i] && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        static const char *const cleared[] = {"LIFECYCLE_LOG",    "LIFECYCLE_FRAMES", "LIFECYCLE_PER_BLOCK",
                                              "LIFECYCLE_FAIL",   "LIFECYCLE_HOLD",   "LIFECYCLE_OVERCLAIM",
                                              "LIFECYCLE_SIGNAL", "LIFECYCLE_NEED",   "LIFECYCLE_SLOW",
                                              "LIFECYCLE_EOF"};
        for (size_t i = 0; i < sizeof cleared / sizeof cleared[0]; i++)
            unsetenv(cleared[i]);
        for (size_t i = 0; env && env[i]; i++)
            putenv((char *)env[i]);
        dup2(out, 1);
        dup2(err, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

static inline double nw_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Waits for pid; after sig_after seconds (if sig is not 0) sends it sig,
 * and after timeout seconds (if not 0) kills it and sets
 * r->timed_out. */
static inline int nw_wait(nw_result *r, pid_t pid, double timeout, int sig, double sig_after)
{
    int status = 0, sent = 0;
    double t0 = nw_seconds();
    r->timed_out = 0;
    for (;;) {
        pid_t got = waitpid(pid, &status, timeout || sig ? WNOHANG : 0);
        if (got == pid)
            break;
        if (got != 0)
            return -1;
        double elapsed = nw_seconds() - t0;
        if (sig && !sent && elapsed >= sig_after) {
            kill(pid, sig);
            sent = 1;
        }
        if (timeout && elapsed >= timeout && !r->timed_out) {
            kill(pid, SIGKILL);
            r->timed_out = 1;
        }
        usleep(1000);
    }
    r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return 0;
}

/* Runs narwhal (see nw_spawn and nw_wait) and captures what it printed. */
static inline int nw_run_timed(nw_result *r, const char *const *args, const char *const *env, double timeout,
                               int sig, double sig_after)
{
    int out = nw_tempfile(), err = nw_tempfile();
    if (out < 0 || err < 0)
        return -1;
    pid_t pid = nw_spawn(args, env, out, err);
    if (pid < 0 || nw_wait(r, pid, timeout, sig, sig_after) != 0)
        return -1;
    nw_slurp(out, r->out, sizeof r->out);
    nw_slurp(err, r->err, sizeof r->err);
    return 0;
}

static inline int nw_run(nw_result *r, const char *const *args, const char *const *env)
{
    return nw_run_timed(r, args, env, 0, 0, 0);
}

/* Lines in a string. */
static inline int nw_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Writes to: the shipped file `from` without the lines of the keys `set` gives, then a comment
 * naming `who` and `set` (a test keeps the shipped physics and changes paths, devices and the
 * size of the run).  0, or -1 when from cannot be read or to written. */
static inline int nw_derive_conf(const char *from, const char *to, const char *set, const char *who)
{
    char line[4096];
    FILE *in = fopen(from, "r"), *out = in ? fopen(to, "w") : NULL;
    if (!out) {
        if (in)
            fclose(in);
        return -1;
    }
    while (fgets(line, sizeof line, in)) {
        size_t n = strcspn(line, " \t\r\n");
        int replaced = 0;
        for (const char *s = set; n && *s && !replaced; s += strcspn(s, "\n"), s += *s == '\n')
            replaced = strcspn(s, " \t\n") == n && strncmp(s, line, n) == 0;
        if (!replaced)
            fputs(line, out);
    }
    fprintf(out, "\n# %s\n%s", who, set);
    fclose(in);
    return fclose(out) == 0 ? 0 : -1;
}

/* triple.xml's producers gen<ID>, in its order. */
static const int nw_triple_crystals[3] = {175, 176, 170};

/* DIR/conf: triple.xml's shipped settings over `basis`, on the CPU, for check_cluster and
 * check_mpi: gen<ID>/Generator.conf for each producer (`events` events), PSA.conf (then the
 * lines of psa_set), Builder, Tracker, Histo (csv into DIR/histo) and ADFWriter (DIR/out.adf).
 * 0, or -1 naming in why what could not be made. */
static inline int nw_triple_confs(const char *dir, const char *basis, int events, const char *psa_set,
                                  const char *who, char *why, size_t len)
{
    char set[4096 + 80], from[4096], to[4096 + 80], psa[4096 + 256], histo[4096 + 80], writer[4096 + 16];
    snprintf(psa, sizeof psa, "Basis %s\nDevice cpu\n%s", basis, psa_set);
    snprintf(histo, sizeof histo, "OutputDir %s/histo\nDevice cpu\nFormats csv\nPlot none\n", dir);
    snprintf(writer, sizeof writer, "File %s/out.adf\n", dir);
    const struct { const char *shipped, *set; } files[] = {
        {"PSA.conf", psa}, {"triple/Builder.conf", ""}, {"triple/Tracker.conf", "Device cpu\n"},
        {"triple/Histo.conf", histo}, {"triple/ADFWriter.conf", writer}};
    snprintf(to, sizeof to, "%s/conf", dir);
    if (mkdir(to, 0700) != 0)
        return snprintf(why, len, "cannot make %s", to), -1;
    for (int k = 0; k < 3; k++) {
        snprintf(to, sizeof to, "%s/conf/gen%d", dir, nw_triple_crystals[k]);
        if (mkdir(to, 0700) != 0)
            return snprintf(why, len, "cannot make %s", to), -1;
        snprintf(from, sizeof from, "topologies/conf/triple/gen%d/Generator.conf", nw_triple_crystals[k]);
        snprintf(to, sizeof to, "%s/conf/gen%d/Generator.conf", dir, nw_triple_crystals[k]);
        snprintf(set, sizeof set, "Basis %s\nEvents %d\n", basis, events);
        if (nw_derive_conf(from, to, set, who) != 0)
            return snprintf(why, len, "cannot derive %s from the shipped settings", to), -1;
    }
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        const char *slash = strrchr(files[i].shipped, '/');
        snprintf(from, sizeof from, "topologies/conf/%s", files[i].shipped);
        snprintf(to, sizeof to, "%s/conf/%s", dir, slash ? slash + 1 : files[i].shipped);
        if (nw_derive_conf(from, to, files[i].set, who) != 0)
            return snprintf(why, len, "cannot derive %s from the shipped settings", to), -1;
    }
    return 0;
}

/* A PSA basis on a 6 mm grid with 2 mm fields at path: a fraction of a second, where the
 * default one takes 20 s and 708 MB.  -1 with why when basisgen is not built (the tests
 * skip), 1 with why when it fails (a failure, not a reason to skip), 0 when made. */
static inline int nw_coarse_basis(const char *path, char *why, size_t len)
{
    const char *basisgen = nw_build_path("/bin/basisgen");
    char cmd[3 * 1024 + 128];
    if (access(basisgen, X_OK) != 0) {
        snprintf(why, len, "%s is not built", basisgen);
        return -1;
    }
    snprintf(cmd, sizeof cmd, "%s --quiet --geometry detector/geometry/agata.geo --grid 6 --field-grid 2 -o %s",
             basisgen, path);
    if (system(cmd) != 0) {
        snprintf(why, len, "basisgen failed: %s", cmd);
        return 1;
    }
    return 0;
}

#endif

/* testkit.h: helpers the Check suites share: temp trees, files, actors from $BUILD/actors, stderr, children. */
#ifndef NARWHAL_TESTKIT_H
#define NARWHAL_TESTKIT_H

#if !defined(_XOPEN_SOURCE) || _XOPEN_SOURCE < 500
#error "define _XOPEN_SOURCE 700 before the first #include: tk_remove_tree needs nftw"
#endif

#include <check.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "narval.h"

/* A test that cannot run here (no GPU, no MPI, a tool missing) says why on
 * one line and returns; tests/run-checks.sh counts these lines as skipped,
 * not passed (Check itself has no skip state):
 *   if (!gpu) TK_SKIP("no usable GPU: %s", why);
 * Only in the test's own function (it returns from it); a helper that finds
 * the test cannot run reports it to the test, which skips. */
#define TK_SKIP(...)                                                                               \
    do {                                                                                           \
        tk_skip_line(__func__, __VA_ARGS__);                                                       \
        return;                                                                                    \
    } while (0)

static inline void tk_skip_line(const char *fn, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void tk_skip_line(const char *fn, const char *fmt, ...)
{
    char why[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    size_t n = strlen(fn);
    int name = n > 3 && strcmp(fn + n - 3, "_fn") == 0 ? (int)(n - 3) : (int)n; /* START_TEST's suffix */
    fprintf(stderr, "SKIP %.*s: %s\n", name, fn, why);
    fflush(stderr);
}

/* How many times `what` occurs in text (overlapping occurrences counted). */
static inline size_t tk_count(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

/* Fails the test unless text ends with tail. */
static inline void tk_expect_tail(const char *text, const char *tail)
{
    size_t n = strlen(text), m = strlen(tail);
    ck_assert_msg(n >= m && strcmp(text + n - m, tail) == 0, "the log does not end with\n%s\nit is\n%s", tail, text);
}

/* An actor library and every process_* entry point, typed as narval.h declares them. */
typedef struct tk_actor {
    void *so;
    narval_config_fn *config;
    narval_register_fn *reg;
    narval_lifecycle_fn *initialise, *start, *stop, *pause, *resume, *reset, *unload;
    narval_producer_block_fn *produce;
    narval_filter_block_fn *filter;
    narval_consumer_block_fn *consume;
    narval_describe_fn *describe;
} tk_actor;

/* dir/name in one of eight rotating buffers, so that a call may take several paths at once. */
static inline const char *tk_path(const char *dir, const char *name)
{
    static char paths[8][PATH_MAX + 128];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    return p;
}

/* The absolute path of $BUILD (default "build"); fails the test when it does not exist. */
static inline const char *tk_build(void)
{
    static char build[PATH_MAX];
    const char *b = getenv("BUILD");
    ck_assert_msg(realpath(b && *b ? b : "build", build) != NULL, "no build directory");
    return build;
}

/* Makes a fresh directory /tmp/<prefix>.XXXXXX into dir (cap bytes). */
static inline void tk_make_tmpdir(char *dir, size_t cap, const char *prefix)
{
    snprintf(dir, cap, "/tmp/%s.XXXXXX", prefix);
    ck_assert_msg(mkdtemp(dir) != NULL, "cannot make %s", dir);
}

/* The nftw callback of tk_remove_tree: removes one entry, the deepest first. */
static inline int tk_remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path);
}

/* Removes dir and everything below it, links not followed; 0 when all went. */
static inline int tk_remove_tree(const char *dir)
{
    return nftw(dir, tk_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Writes text to path, replacing it; fails the test when it cannot. */
static inline void tk_write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    ck_assert_msg(fp != NULL, "cannot write %s", path);
    fputs(text, fp);
    ck_assert_int_eq(fclose(fp), 0);
}

/* tk_write_text with the text formatted as printf does. */
static inline void tk_write_textf(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void tk_write_textf(const char *path, const char *fmt, ...)
{
    FILE *fp = fopen(path, "w");
    ck_assert_msg(fp != NULL, "cannot write %s", path);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(fp, fmt, ap);
    va_end(ap);
    ck_assert_int_eq(fclose(fp), 0);
}

/* The whole file, NUL-terminated, its size in *size (when size is not NULL); NULL when it cannot be opened. */
static inline uint8_t *tk_slurp(const char *path, size_t *size)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    rewind(fp);
    uint8_t *buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, fp), (size_t)n);
    buf[n] = 0;
    fclose(fp);
    if (size)
        *size = (size_t)n;
    return buf;
}

/* tk_slurp for a file that must be there: fails the test when it cannot be opened. */
static inline uint8_t *tk_read_file(const char *path, size_t *size)
{
    uint8_t *buf = tk_slurp(path, size);
    ck_assert_msg(buf != NULL, "cannot read %s", path);
    return buf;
}

/* The file at path into out (cap bytes, NUL-terminated, cut if longer); false, out empty, when it cannot be opened. */
static inline bool tk_read_text(const char *path, char *out, size_t cap)
{
    out[0] = '\0';
    FILE *fp = fopen(path, "r");
    if (!fp)
        return false;
    size_t got = fread(out, 1, cap - 1, fp);
    out[got] = '\0';
    fclose(fp);
    return true;
}

/* Writes n bytes of data to path, replacing it; fails the test when it cannot. */
static inline void tk_write_bytes(const char *path, const void *data, size_t n)
{
    FILE *fp = fopen(path, "wb");
    ck_assert_msg(fp != NULL, "cannot write %s", path);
    ck_assert_uint_eq(fwrite(data, 1, n, fp), n);
    ck_assert_int_eq(fclose(fp), 0);
}

static inline bool tk_exists(const char *path) { return access(path, F_OK) == 0; }

/* dlsym that fails the test, naming the library, when the symbol is missing. */
static inline void *tk_sym(void *so, const char *file, const char *name)
{
    void *p = dlsym(so, name);
    ck_assert_msg(p != NULL, "%s lacks %s", file, name);
    return p;
}

/* Opens the actor library at path and resolves all eleven process_* symbols (every actor exports them). */
static inline void tk_load_actor_at(tk_actor *a, const char *path)
{
    const char *file = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    /* as the emulator does: libgomp's threads outlive an OpenMP actor, so never unmap it */
    a->so = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    ck_assert_msg(a->so != NULL, "dlopen %s: %s", path, dlerror());
    *(void **)&a->config = tk_sym(a->so, file, "process_config");
    *(void **)&a->reg = tk_sym(a->so, file, "process_register");
    *(void **)&a->initialise = tk_sym(a->so, file, "process_initialise");
    *(void **)&a->start = tk_sym(a->so, file, "process_start");
    *(void **)&a->stop = tk_sym(a->so, file, "process_stop");
    *(void **)&a->pause = tk_sym(a->so, file, "process_pause");
    *(void **)&a->resume = tk_sym(a->so, file, "process_resume");
    *(void **)&a->reset = tk_sym(a->so, file, "process_reset");
    *(void **)&a->unload = tk_sym(a->so, file, "process_unload");
    *(void **)&a->produce = tk_sym(a->so, file, "process_block");
    *(void **)&a->filter = tk_sym(a->so, file, "process_block");
    *(void **)&a->consume = tk_sym(a->so, file, "process_block");
    *(void **)&a->describe = tk_sym(a->so, file, "process_describe");
}

/* Opens $BUILD/actors/<file> (tk_load_actor_at). */
static inline void tk_load_actor(tk_actor *a, const char *file)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/actors/%s", tk_build(), file);
    tk_load_actor_at(a, path);
}

/* Copies $BUILD/actors/<file> into dir and opens the copy: a second copy of a
 * library in the process, with its own configuration and state, as the
 * emulator gives each actor that has its own configuration directory. */
static inline void tk_load_actor_copy(tk_actor *a, const char *file, const char *dir)
{
    char from[PATH_MAX + 64], to[PATH_MAX + 64];
    size_t n;
    snprintf(from, sizeof from, "%s/actors/%s", tk_build(), file);
    snprintf(to, sizeof to, "%s/%s", dir, file);
    uint8_t *so = tk_read_file(from, &n);
    tk_write_bytes(to, so, n);
    free(so);
    tk_load_actor_at(a, to);
}

/* Sends stderr to the file path until tk_capture_end; returns the descriptor to restore. */
static inline int tk_capture_begin(const char *path)
{
    fflush(stderr);
    int saved = dup(2);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    dup2(fd, 2);
    close(fd);
    return saved;
}

/* Restores stderr and copies what went to path into out (cap bytes, NUL-terminated, cut if longer). */
static inline void tk_capture_end(int saved, const char *path, char *out, size_t cap)
{
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ck_assert_msg(tk_read_text(path, out, cap), "cannot read %s", path);
}

/* Runs argv[0] with argv in directory cwd and waits; its exit status, or 128 + signal. */
static inline int tk_run_command(char *const argv[], const char *cwd)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (chdir(cwd) != 0)
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Runs every test of s (forked, as Check does by default) and returns the exit status: 0 when all passed. */
static inline int tk_run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed != 0;
}

#endif

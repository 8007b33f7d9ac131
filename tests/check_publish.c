/* check_publish.c: the kit's publishing (claims, unique temporaries, publish and discard) and adf_writer.so, which publishes its file only at stop. */
#define _XOPEN_SOURCE 700
#define _GNU_SOURCE /* RTLD_NEXT */
#include <check.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adf.h"
#include "narval.h"
#include "publish.h"
#include "testkit.h"

static char tmp[PATH_MAX];
static char conf_dir[PATH_MAX + 8];
static tk_actor wr;
static char msg[PATH_MAX * 2];
static char logged[8192];

/* ---- a predictable first temporary name -------------------------------------
 * The kit draws the six letters of a temporary's name from getrandom().  This
 * executable's own getrandom (found before libc's, by the kit linked in and by
 * the actors dlopen'ed here: -rdynamic exports it, given default visibility
 * against the build's -fvisibility=hidden) returns zero bytes for
 * the next `fixed_draws` calls, so that a test knows the name ("AAAAAA") the
 * next temporary would take and can plant something there first. */
static int fixed_draws;

__attribute__((visibility("default"))) ssize_t getrandom(void *buf, size_t n, unsigned int flags)
{
    static ssize_t (*real)(void *, size_t, unsigned int);
    if (fixed_draws > 0) {
        fixed_draws--;
        memset(buf, 0, n);
        return (ssize_t)n;
    }
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "getrandom");
    return real(buf, n, flags);
}

/* ---- helpers ------------------------------------------------------------------ */

static const char *in_tmp(const char *name) { return tk_path(tmp, name); }

static void setup(void)
{
    tk_make_tmpdir(tmp, sizeof tmp, "check_publish");
    snprintf(conf_dir, sizeof conf_dir, "%s/conf", tmp);
    ck_assert_int_eq(mkdir(conf_dir, 0700), 0);
    tk_load_actor(&wr, "adf_writer.so");
    fixed_draws = 0;
}

static void teardown(void)
{
    dlclose(wr.so);
    tk_remove_tree(tmp);
}

/* The names in dir that end with `suffix`, counted; the last one into last. */
static int count_ending(const char *dir, const char *suffix, char *last, size_t cap)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL) {
        size_t k = strlen(e->d_name), s = strlen(suffix);
        if (k >= s && strcmp(e->d_name + k - s, suffix) == 0) {
            n++;
            if (last)
                snprintf(last, cap, "%s/%s", dir, e->d_name);
        }
    }
    closedir(d);
    return n;
}

static bool is_link(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

static bool is_regular(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* "PATH.XXXXXX.part" with six letters or digits. */
static void assert_temp_name(const char *temp, const char *path)
{
    size_t n = strlen(path);
    ck_assert_msg(strncmp(temp, path, n) == 0 && temp[n] == '.' && strlen(temp) == n + 12 &&
                      strcmp(temp + n + 7, ".part") == 0,
                  "temporary '%s' of '%s'", temp, path);
    for (size_t i = n + 1; i < n + 7; i++)
        ck_assert_msg((temp[i] >= 'A' && temp[i] <= 'Z') || (temp[i] >= 'a' && temp[i] <= 'z') ||
                          (temp[i] >= '0' && temp[i] <= '9'),
                      "temporary '%s'", temp);
}

/* n frames (data:crystal-sized payloads of varied lengths), then a meta:eof when with_eof. */
static size_t make_frames(uint8_t *buf, size_t cap, unsigned n, unsigned seed, bool with_eof)
{
    adf_writer w;
    uint8_t payload[300];
    adf_writer_init(&w, buf, cap);
    for (unsigned i = 0; i < n; i++) {
        for (unsigned j = 0; j < sizeof payload; j++)
            payload[j] = (uint8_t)(seed + i * 7u + j);
        ck_assert_int_eq(adf_begin(&w, ADF_ID_DATA_PSA, i, 100u * i), ADF_OK);
        ck_assert_int_eq(adf_put(&w, payload, (i * 37u + seed) % sizeof payload), ADF_OK);
        ck_assert_int_eq(adf_end(&w), ADF_OK);
    }
    if (with_eof) {
        adf_eof e = { n, w.used };
        ck_assert_int_eq(adf_eof_write(&w, n, 100u * n, &e), ADF_OK);
    }
    return w.used;
}

/* Writes <conf_dir>/ADFWriter.conf with "File PATH" and configures the library. */
static void configure_file(tk_actor *a, const char *dir, const char *file)
{
    unsigned e = 99;
    tk_write_textf(tk_path(dir, "ADFWriter.conf"), "File %s\n", file);
    a->config(dir, &e);
    ck_assert_uint_eq(e, 0);
}

static void *registered(tk_actor *a)
{
    unsigned e = 99;
    void *inst = a->reg(&e);
    ck_assert_uint_eq(e, 0);
    ck_assert_ptr_nonnull(inst);
    return inst;
}

static void call(narval_lifecycle_fn *fn, void *inst, unsigned want)
{
    unsigned e = 99;
    fn(inst, &e);
    ck_assert_uint_eq(e, want);
}

static void *started(tk_actor *a)
{
    void *inst = registered(a);
    call(a->initialise, inst, 0);
    call(a->start, inst, 0);
    return inst;
}

static void consume(tk_actor *a, void *inst, const void *buf, size_t n, unsigned want)
{
    unsigned e = 99;
    a->consume(inst, (void *)buf, (unsigned)n, &e);
    ck_assert_uint_eq(e, want);
}

static int capture_begin(void) { return tk_capture_begin(in_tmp("stderr.log")); }

static void capture_end(int saved)
{
    tk_capture_end(saved, in_tmp("stderr.log"), logged, sizeof logged);
    fputs(logged, stderr);
}

static void assert_logged(const char *line)
{
    ck_assert_msg(strstr(logged, line) != NULL, "log lacks '%s':\n%s", line, logged);
}

/* The file holds exactly n bytes equal to want. */
static void assert_file(const char *path, const uint8_t *want, size_t n)
{
    size_t m;
    uint8_t *got = tk_slurp(path, &m);
    ck_assert_msg(got != NULL, "%s was not written", path);
    ck_assert_uint_eq(m, n);
    ck_assert_mem_eq(got, want, n);
    free(got);
}

/* ---- the kit: temporaries -------------------------------------------------------- */

START_TEST(temporaries_are_unique_and_published_by_rename)
{
    const char *path = in_tmp("out.dat");
    kit_output a = { .fd = -1 }, b = { .fd = -1 };
    ck_assert_uint_eq(kit_output_open(&a, path, msg, sizeof msg), 0);
    ck_assert_uint_eq(kit_output_open(&b, path, msg, sizeof msg), 0);
    assert_temp_name(a.temp, path);
    assert_temp_name(b.temp, path);
    ck_assert_str_ne(a.temp, b.temp);
    ck_assert(is_regular(a.temp) && is_regular(b.temp));
    ck_assert(!tk_exists(path));
    ck_assert_uint_eq(kit_output_write(&a, "first", 5, msg, sizeof msg), 0);
    FILE *fp = kit_output_stream(&b, msg, sizeof msg);
    ck_assert_ptr_nonnull(fp);
    fprintf(fp, "second %d", 2);
    char a_temp[PATH_MAX], b_temp[PATH_MAX];
    snprintf(a_temp, sizeof a_temp, "%s", a.temp);
    snprintf(b_temp, sizeof b_temp, "%s", b.temp);
    ck_assert_uint_eq(kit_output_publish(&a, true, msg, sizeof msg), 0);
    ck_assert_ptr_null(a.temp);
    ck_assert(!tk_exists(a_temp));
    assert_file(path, (const uint8_t *)"first", 5);
    ck_assert_uint_eq(kit_output_close(&b, false, msg, sizeof msg), 0); /* written, not published */
    assert_file(b_temp, (const uint8_t *)"second 2", 8);
    kit_output_discard(&b);
    ck_assert(!tk_exists(b_temp));
    ck_assert_ptr_null(b.temp);
    assert_file(path, (const uint8_t *)"first", 5); /* the discarded one changed nothing */
    int nul = open("/dev/null", O_RDONLY);
    ck_assert_int_eq(dup2(nul, 0), 0); /* descriptor 0 open, whatever the runner gave */
    close(nul);
    kit_output_discard(&b); /* twice, and on a zeroed struct (its fd 0 is no descriptor): nothing */
    kit_output zeroed = { 0 };
    kit_output_discard(&zeroed);
    ck_assert_int_ne(fcntl(0, F_GETFD), -1);
    ck_assert_uint_eq(kit_output_publish(&zeroed, false, msg, sizeof msg), NARVAL_E_INTERNAL);
}
END_TEST

START_TEST(temporaries_never_follow_a_planted_link)
{
    const char *path = in_tmp("out.dat"), *victim = in_tmp("victim");
    char planted[PATH_MAX + 32];
    snprintf(planted, sizeof planted, "%s.AAAAAA.part", path);
    tk_write_text(victim, "precious");
    ck_assert_int_eq(symlink(victim, planted), 0);
    ck_assert_int_eq(symlink(victim, path), 0); /* and one at the final name */
    kit_output o = { .fd = -1 };
    fixed_draws = 1; /* the first name drawn is the planted one */
    ck_assert_uint_eq(kit_output_open(&o, path, msg, sizeof msg), 0);
    ck_assert_int_eq(fixed_draws, 0);
    ck_assert_str_ne(o.temp, planted);
    assert_temp_name(o.temp, path);
    ck_assert_uint_eq(kit_output_write(&o, "new", 3, msg, sizeof msg), 0);
    ck_assert_uint_eq(kit_output_publish(&o, false, msg, sizeof msg), 0);
    assert_file(victim, (const uint8_t *)"precious", 8);
    ck_assert(is_link(planted));
    ck_assert(is_regular(path)); /* the link at the final name was replaced, not followed */
    assert_file(path, (const uint8_t *)"new", 3);

    fixed_draws = 1000; /* every draw gives the planted name: refused, nothing created */
    ck_assert_uint_eq(kit_output_open(&o, path, msg, sizeof msg), NARVAL_E_IO);
    ck_assert_msg(strstr(msg, "every name drawn exists"), "%s", msg);
    ck_assert_ptr_null(o.temp);
    ck_assert_int_eq(count_ending(tmp, ".part", NULL, 0), 1);
    assert_file(victim, (const uint8_t *)"precious", 8);
}
END_TEST

START_TEST(temporary_in_a_missing_directory_is_an_io_error)
{
    kit_output o = { .fd = -1 };
    ck_assert_uint_eq(kit_output_open(&o, in_tmp("no/such/out.dat"), msg, sizeof msg), NARVAL_E_IO);
    ck_assert_msg(strstr(msg, "no/such/out.dat") && strstr(msg, "No such file or directory"), "%s",
                  msg);
    ck_assert_ptr_null(o.temp);
}
END_TEST

/* ---- the kit: claims -------------------------------------------------------------- */

/* In a child process: claims path and exits with the code (the claim dies with it). */
static int claim_in_child(const char *path, bool directory)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        kit_claim c = { 0 };
        _exit((int)kit_claim_output(&c, path, directory, "File", "x.conf", msg, sizeof msg));
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

START_TEST(claims_exclude_within_and_across_processes)
{
    const char *path = in_tmp("out.adf"), *conf = in_tmp("conf/ADFWriter.conf");
    char other_spelling[PATH_MAX + 16], want[PATH_MAX * 2];
    snprintf(other_spelling, sizeof other_spelling, "%s/./out.adf", tmp);
    kit_claim a = { 0 }, b = { 0 };
    ck_assert_uint_eq(kit_claim_output(&a, path, false, "File", conf, msg, sizeof msg), 0);
    ck_assert(is_regular(in_tmp(".out.adf.lock")));
    ck_assert_uint_eq(kit_claim_output(&b, path, false, "File", conf, msg, sizeof msg),
                      NARVAL_E_CONFIG);
    snprintf(want, sizeof want, "output '%s' is already being written by another live instance: "
             "change key 'File' in %s", path, conf);
    ck_assert_str_eq(msg, want);
    ck_assert_ptr_null(b.lock);
    ck_assert_uint_eq(kit_claim_output(&b, other_spelling, false, "File", conf, msg, sizeof msg),
                      NARVAL_E_CONFIG);
    ck_assert_int_eq(claim_in_child(path, false), NARVAL_E_CONFIG);
    ck_assert_uint_eq(kit_claim_output(&b, in_tmp("other.adf"), false, "File", conf, msg,
                                       sizeof msg), 0); /* another file is free */
    kit_claim_release(&b);
    ck_assert(!tk_exists(in_tmp(".other.adf.lock")));

    kit_claim_release(&a);
    ck_assert(!tk_exists(in_tmp(".out.adf.lock")));
    ck_assert_int_eq(claim_in_child(path, false), 0);
    ck_assert_uint_eq(kit_claim_output(&b, path, false, "File", conf, msg, sizeof msg), 0);
    ck_assert_int_eq(claim_in_child(path, false), NARVAL_E_CONFIG);
    kit_claim_release(&b);
    kit_claim_release(&b); /* twice: nothing */
}
END_TEST

START_TEST(directory_claims_find_one_lock_for_every_spelling)
{
    char dir[PATH_MAX + 8], slash[PATH_MAX + 16], want[PATH_MAX * 2];
    snprintf(dir, sizeof dir, "%s/histo", tmp);
    snprintf(slash, sizeof slash, "%s/histo/", tmp);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    kit_claim a = { 0 }, b = { 0 };
    ck_assert_uint_eq(kit_claim_output(&a, slash, true, "OutputDir", "Histo.conf", msg,
                                       sizeof msg), 0);
    ck_assert(is_regular(in_tmp("histo/.narwhal.lock")));
    ck_assert_uint_eq(kit_claim_output(&b, dir, true, "OutputDir", "Histo.conf", msg, sizeof msg),
                      NARVAL_E_CONFIG);
    snprintf(want, sizeof want, "output directory '%s' is already being written by another live "
             "instance: change key 'OutputDir' in Histo.conf", dir);
    ck_assert_str_eq(msg, want);
    ck_assert_int_eq(claim_in_child(dir, true), NARVAL_E_CONFIG);
    kit_claim_release(&a);
    ck_assert(!tk_exists(in_tmp("histo/.narwhal.lock")));
    ck_assert_uint_eq(kit_claim_output(&b, dir, true, "OutputDir", "Histo.conf", msg, sizeof msg),
                      0);
    kit_claim_release(&b);
}
END_TEST

START_TEST(a_lock_file_left_by_a_dead_process_blocks_nothing)
{
    const char *path = in_tmp("out.adf");
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        kit_claim c = { 0 };
        _exit(kit_claim_output(&c, path, false, "File", "x.conf", msg, sizeof msg) == 0 ? 0 : 1);
    } /* exits holding the claim, as a crash would: the lock file stays */
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_int_eq(WEXITSTATUS(status), 0);
    ck_assert(tk_exists(in_tmp(".out.adf.lock")));
    kit_claim c = { 0 };
    ck_assert_uint_eq(kit_claim_output(&c, path, false, "File", "x.conf", msg, sizeof msg), 0);
    kit_claim_release(&c);
}
END_TEST

START_TEST(claim_errors_name_the_output)
{
    kit_claim c = { 0 };
    /* missing folders are made: an output may name a folder the run is the first to write */
    ck_assert_uint_eq(kit_claim_output(&c, in_tmp("no/such/out.adf"), false, "File", "x.conf",
                                       msg, sizeof msg), 0);
    ck_assert(tk_exists(in_tmp("no/such/.out.adf.lock")));
    kit_claim_release(&c);
    ck_assert(!tk_exists(in_tmp("no/such/.out.adf.lock")));
    /* a folder that cannot be made (a file is in the way) */
    tk_write_text(in_tmp("plain"), "x");
    ck_assert_uint_eq(kit_claim_output(&c, in_tmp("plain/sub/out.adf"), false, "File", "x.conf",
                                       msg, sizeof msg), NARVAL_E_IO);
    ck_assert_msg(strstr(msg, "cannot claim output") && strstr(msg, "plain/sub/.out.adf.lock") &&
                      strstr(msg, "Not a directory"), "%s", msg);
    ck_assert_uint_eq(kit_claim_output(&c, in_tmp("dir/"), false, "File", "x.conf", msg,
                                       sizeof msg), NARVAL_E_CONFIG);
    ck_assert_msg(strstr(msg, "names a directory, not a file"), "%s", msg);
    ck_assert_int_eq(symlink(in_tmp("victim"), in_tmp(".out.adf.lock")), 0);
    ck_assert_uint_eq(kit_claim_output(&c, in_tmp("out.adf"), false, "File", "x.conf", msg,
                                       sizeof msg), NARVAL_E_IO); /* a planted link is not followed */
    ck_assert(!tk_exists(in_tmp("victim")));
    ck_assert_ptr_null(c.lock);
}
END_TEST

/* ---- the kit: instance outputs ------------------------------------------------------ */

static void assert_instance_output(const char *configured, bool directory, unsigned number,
                                   const char *want)
{
    char note[PATH_MAX * 3];
    char *got = kit_instance_output(configured, directory, number, "Key", note, sizeof note);
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got, want);
    if (number == 1)
        ck_assert_str_eq(note, "");
    else
        ck_assert_msg(strstr(note, want) && strstr(note, configured) && strstr(note, "'Key'"),
                      "note: %s", note);
    free(got);
}

START_TEST(instance_outputs_are_derived_from_the_configured_one)
{
    assert_instance_output("out.adf", false, 1, "out.adf");
    assert_instance_output("out.adf", false, 2, "out.2.adf");
    assert_instance_output("data/run%03d.adf", false, 12, "data/run%03d.12.adf");
    assert_instance_output("a.b/c.tar.gz", false, 3, "a.b/c.tar.3.gz");
    assert_instance_output("a.b/log", false, 2, "a.b/log.2");
    assert_instance_output(".hidden", false, 2, ".hidden.2");
    assert_instance_output("d/.hidden", false, 2, "d/.hidden.2");
    assert_instance_output("spectra", true, 1, "spectra");
    assert_instance_output("spectra", true, 2, "spectra/instance-2");
    assert_instance_output("out/spectra//", true, 3, "out/spectra/instance-3");
    assert_instance_output(".", true, 2, "./instance-2");
    assert_instance_output("/", true, 2, "/instance-2");
}
END_TEST

/* ---- adf_writer.so ----------------------------------------------------------------- */

START_TEST(writer_publishes_only_at_stop)
{
    uint8_t data[40000];
    size_t n = make_frames(data, sizeof data, 100, 1, true), half = 0;
    const char *path = in_tmp("out.adf");
    char temp[PATH_MAX + 64], line[PATH_MAX + 200];
    adf_iter it;
    adf_frame f;
    adf_iter_init(&it, data, n);
    for (int i = 0; i < 50; i++)
        ck_assert_int_eq(adf_iter_next(&it, &f), 1);
    half = it.pos;
    configure_file(&wr, conf_dir, path);
    void *w = registered(&wr);
    call(wr.initialise, w, 0);
    ck_assert(tk_exists(in_tmp(".out.adf.lock")));
    call(wr.start, w, 0);
    ck_assert_int_eq(count_ending(tmp, ".part", temp, sizeof temp), 1);
    assert_temp_name(temp, path);
    ck_assert(!tk_exists(path));
    consume(&wr, w, data, half, 0);
    call(wr.pause, w, 0);
    call(wr.resume, w, 0);
    consume(&wr, w, data + half, n - half, 0);
    ck_assert(!tk_exists(path));
    int saved = capture_begin();
    call(wr.stop, w, 0);
    capture_end(saved);
    assert_file(path, data, n);
    ck_assert(!tk_exists(temp));
    snprintf(line, sizeof line, "[ADFWriter] run 1: wrote 101 frames (%zu bytes) to %s, ending "
             "with meta:eof (the data is complete)\n", n, path);
    assert_logged(line);
    assert_logged("[ADFWriter] run 1: the I/O thread wrote for "); /* its time, and the calls' waits for it */
    call(wr.unload, w, 0);
    ck_assert(!tk_exists(in_tmp(".out.adf.lock")));
    ck_assert_int_eq(count_ending(tmp, ".part", NULL, 0), 0);
}
END_TEST

/* A first block of which Keys writes nothing, and no OtherFile: nothing to
 * stage, which is not a failure (it was reported as out of memory). */
START_TEST(writer_first_block_all_left_out)
{
    uint8_t data[40000];
    size_t n = make_frames(data, sizeof data, 20, 3, true), eof = n - (ADF_KEY_SIZE + ADF_EOF_PAYLOAD);
    const char *path = in_tmp("out.adf");
    unsigned e = 99;
    tk_write_textf(tk_path(conf_dir, "ADFWriter.conf"), "File %s\nKeys meta:eof\n", path);
    wr.config(conf_dir, &e);
    ck_assert_uint_eq(e, 0);
    void *w = started(&wr);
    consume(&wr, w, data, eof, 0);
    consume(&wr, w, data + eof, n - eof, 0);
    call(wr.stop, w, 0);
    assert_file(path, data + eof, n - eof);
    call(wr.unload, w, 0);
}
END_TEST

START_TEST(writer_stop_without_eof_says_so)
{
    uint8_t data[20000];
    size_t n = make_frames(data, sizeof data, 30, 2, false);
    configure_file(&wr, conf_dir, in_tmp("out.adf"));
    void *w = started(&wr);
    consume(&wr, w, data, n, 0);
    int saved = capture_begin();
    call(wr.stop, w, 0);
    capture_end(saved);
    assert_logged("wrote 30 frames");
    assert_logged("without meta:eof at the end (the run was stopped before the end of its data)");
    assert_file(in_tmp("out.adf"), data, n);
    call(wr.unload, w, 0);
}
END_TEST

START_TEST(writer_abort_publishes_nothing)
{
    uint8_t data[20000];
    size_t n = make_frames(data, sizeof data, 20, 3, false);
    const char *path = in_tmp("out.adf");
    char line[PATH_MAX + 200];
    tk_write_text(path, "the previous run's file"); /* an abort leaves it as it was */
    configure_file(&wr, conf_dir, path);
    void *w = started(&wr);
    consume(&wr, w, data, n, 0);
    consume(&wr, w, data, n, 0);
    int saved = capture_begin();
    call(wr.unload, w, 0); /* the host's abort: unload without stop */
    capture_end(saved);
    snprintf(line, sizeof line, "[ADFWriter] warning: unloaded without process_stop: discarded "
             "40 frames (%zu bytes) of an unfinished run: %s was not written\n", 2 * n, path);
    assert_logged(line);
    assert_file(path, (const uint8_t *)"the previous run's file", 23);
    ck_assert_int_eq(count_ending(tmp, ".part", NULL, 0), 0);
    ck_assert(!tk_exists(in_tmp(".out.adf.lock")));
}
END_TEST

START_TEST(writer_reset_in_a_run_discards_it_and_runs_again)
{
    uint8_t a[20000], b[20000];
    size_t na = make_frames(a, sizeof a, 10, 4, false), nb = make_frames(b, sizeof b, 12, 5, true);
    const char *path = in_tmp("out.adf");
    configure_file(&wr, conf_dir, path);
    void *w = started(&wr);
    consume(&wr, w, a, na, 0);
    call(wr.pause, w, 0);
    int saved = capture_begin();
    call(wr.reset, w, 0); /* an operator's reset while paused */
    capture_end(saved);
    assert_logged("reset before process_stop: discarded 10 frames");
    ck_assert(!tk_exists(path));
    ck_assert_int_eq(count_ending(tmp, ".part", NULL, 0), 0);
    call(wr.initialise, w, 0); /* NARVAL initialises again after a reset */
    call(wr.start, w, 0);
    consume(&wr, w, b, nb, 0);
    call(wr.stop, w, 0);
    assert_file(path, b, nb);
    call(wr.reset, w, 0);
    call(wr.start, w, 0); /* a host may also start straight after reset */
    consume(&wr, w, a, na, 0);
    call(wr.stop, w, 0);
    assert_file(path, a, na);
    call(wr.unload, w, 0);
}
END_TEST

START_TEST(writer_runs_replace_the_file_or_are_numbered)
{
    uint8_t a[20000], b[20000];
    size_t na = make_frames(a, sizeof a, 10, 6, true), nb = make_frames(b, sizeof b, 15, 7, true);
    const char *path = in_tmp("run.adf");
    configure_file(&wr, conf_dir, path);
    void *w = started(&wr);
    consume(&wr, w, a, na, 0);
    call(wr.stop, w, 0);
    assert_file(path, a, na);
    call(wr.reset, w, 0);
    call(wr.initialise, w, 0);
    call(wr.start, w, 0);
    consume(&wr, w, b, nb, 0);
    int saved = capture_begin();
    call(wr.stop, w, 0);
    capture_end(saved);
    assert_logged("run 2: wrote 16 frames");
    assert_logged("it replaces the file of the previous run");
    assert_file(path, b, nb);
    call(wr.unload, w, 0);

    configure_file(&wr, conf_dir, in_tmp("run%03d.adf"));
    w = started(&wr);
    ck_assert(tk_exists(in_tmp(".run%03d.adf.lock")));
    consume(&wr, w, a, na, 0);
    call(wr.stop, w, 0);
    call(wr.reset, w, 0);
    call(wr.initialise, w, 0);
    call(wr.start, w, 0);
    consume(&wr, w, b, nb, 0);
    call(wr.stop, w, 0);
    call(wr.start, w, 0); /* a third run, after stop without reset */
    call(wr.stop, w, 0);
    call(wr.unload, w, 0);
    assert_file(in_tmp("run001.adf"), a, na);
    assert_file(in_tmp("run002.adf"), b, nb);
    assert_file(in_tmp("run003.adf"), a, 0);
    ck_assert(!tk_exists(in_tmp("run004.adf")));
}
END_TEST

START_TEST(writer_never_follows_planted_links)
{
    uint8_t data[20000];
    size_t n = make_frames(data, sizeof data, 25, 8, true);
    const char *path = in_tmp("out.adf"), *victim = in_tmp("victim");
    char planted[PATH_MAX + 32];
    snprintf(planted, sizeof planted, "%s.AAAAAA.part", path);
    tk_write_text(victim, "precious");
    ck_assert_int_eq(symlink(victim, planted), 0);
    ck_assert_int_eq(symlink(victim, path), 0);
    configure_file(&wr, conf_dir, path);
    fixed_draws = 1;
    void *w = started(&wr);
    ck_assert_int_eq(fixed_draws, 0); /* the writer's temporary tried the planted name first */
    consume(&wr, w, data, n, 0);
    call(wr.stop, w, 0);
    call(wr.unload, w, 0);
    assert_file(victim, (const uint8_t *)"precious", 8);
    ck_assert(is_link(planted));
    ck_assert(is_regular(path));
    assert_file(path, data, n);
}
END_TEST

/* One configuration, several instances (a NARVAL host registers K instances of a
 * library it configured once): instance 1 writes File, instance k File with .k
 * before its extension, each its own frames, the log saying so; a number given
 * back at unload is taken again, so a lone instance writes File.  (Before, the
 * second instance was refused File: the same library, the same configuration.) */
START_TEST(writer_instances_of_one_configuration_write_their_own_files)
{
    uint8_t a[20000], b[20000], c[20000];
    size_t na = make_frames(a, sizeof a, 9, 9, true), nb = make_frames(b, sizeof b, 7, 21, true),
           nc = make_frames(c, sizeof c, 5, 33, true);
    char line[PATH_MAX * 3];
    configure_file(&wr, conf_dir, in_tmp("out.adf"));
    void *w1 = started(&wr), *w2 = registered(&wr);
    int saved = capture_begin();
    call(wr.initialise, w2, 0);
    capture_end(saved);
    snprintf(line, sizeof line, "[ADFWriter#2] instance 2 of this configuration writes '%s' (key "
             "'File' names '%s', which instance 1 writes)\n", in_tmp("out.2.adf"), in_tmp("out.adf"));
    assert_logged(line);
    ck_assert(tk_exists(in_tmp(".out.2.adf.lock")));
    call(wr.start, w2, 0);
    consume(&wr, w2, b, nb, 0);
    consume(&wr, w1, a, na, 0);
    call(wr.stop, w1, 0);
    call(wr.stop, w2, 0);
    assert_file(in_tmp("out.adf"), a, na);
    assert_file(in_tmp("out.2.adf"), b, nb);
    call(wr.unload, w1, 0);
    void *w3 = started(&wr); /* number 1 again: the configured file */
    consume(&wr, w3, c, nc, 0);
    call(wr.stop, w3, 0);
    assert_file(in_tmp("out.adf"), c, nc);
    assert_file(in_tmp("out.2.adf"), b, nb);
    call(wr.unload, w3, 0);
    call(wr.unload, w2, 0);
    ck_assert_int_eq(count_ending(tmp, ".part", NULL, 0), 0);
    ck_assert_int_eq(count_ending(tmp, ".lock", NULL, 0), 0);
}
END_TEST

/* With run numbers in File, instance k's .k goes before the extension, after the number. */
START_TEST(writer_numbered_instances_keep_the_run_number)
{
    uint8_t a[20000], b[20000];
    size_t na = make_frames(a, sizeof a, 4, 5, true), nb = make_frames(b, sizeof b, 6, 6, true);
    configure_file(&wr, conf_dir, in_tmp("run%03d.adf"));
    void *w1 = started(&wr), *w2 = started(&wr);
    for (int run = 1; run <= 2; run++) {
        if (run == 2) {
            call(wr.start, w1, 0);
            call(wr.start, w2, 0);
        }
        consume(&wr, w1, a, na, 0);
        consume(&wr, w2, b, nb, 0);
        call(wr.stop, w2, 0);
        call(wr.stop, w1, 0);
    }
    assert_file(in_tmp("run001.adf"), a, na);
    assert_file(in_tmp("run002.adf"), a, na);
    assert_file(in_tmp("run001.2.adf"), b, nb);
    assert_file(in_tmp("run002.2.adf"), b, nb);
    ck_assert_int_eq(count_ending(tmp, ".adf", NULL, 0), 4);
    call(wr.unload, w2, 0);
    call(wr.unload, w1, 0);
}
END_TEST

/* Two copies of the library, as the emulator gives two actors with their own
 * configuration directories: different files are both published; one file
 * (configured, or an instance's derived from it) is refused to the second,
 * across the copies. */
START_TEST(writer_copies_with_their_own_files_both_publish)
{
    uint8_t a[20000], b[20000];
    size_t na = make_frames(a, sizeof a, 11, 10, true), nb = make_frames(b, sizeof b, 13, 11, true);
    char conf2[PATH_MAX + 8], copies[PATH_MAX + 8];
    snprintf(conf2, sizeof conf2, "%s/conf2", tmp);
    snprintf(copies, sizeof copies, "%s/copy", tmp);
    ck_assert_int_eq(mkdir(conf2, 0700), 0);
    ck_assert_int_eq(mkdir(copies, 0700), 0);
    tk_actor wr2;
    tk_load_actor_copy(&wr2, "adf_writer.so", copies);
    ck_assert_ptr_ne(wr2.so, wr.so);
    configure_file(&wr, conf_dir, in_tmp("a.adf"));
    configure_file(&wr2, conf2, in_tmp("b.adf"));
    void *w1 = started(&wr), *w2 = started(&wr2);
    consume(&wr, w1, a, na, 0);
    consume(&wr2, w2, b, nb, 0);
    call(wr2.stop, w2, 0);
    call(wr.stop, w1, 0);
    assert_file(in_tmp("a.adf"), a, na);
    assert_file(in_tmp("b.adf"), b, nb);
    call(wr2.unload, w2, 0);

    configure_file(&wr2, conf2, in_tmp("a.adf"));
    w2 = registered(&wr2);
    int saved = capture_begin();
    call(wr2.initialise, w2, NARVAL_E_CONFIG);
    capture_end(saved);
    char line[PATH_MAX * 3];
    snprintf(line, sizeof line, "[ADFWriter] error: output '%s' is already being written by another "
             "live instance: change key 'File' in %s/ADFWriter.conf (configuration error)\n",
             in_tmp("a.adf"), conf2);
    assert_logged(line);
    call(wr2.unload, w2, 0);

    /* the second instance of the first copy writes a.2.adf: another configuration naming it is refused */
    void *w1b = started(&wr);
    configure_file(&wr2, conf2, in_tmp("a.2.adf"));
    w2 = registered(&wr2);
    saved = capture_begin();
    call(wr2.initialise, w2, NARVAL_E_CONFIG);
    capture_end(saved);
    snprintf(line, sizeof line, "[ADFWriter] error: output '%s' is already being written by another "
             "live instance: change key 'File' in %s/ADFWriter.conf", in_tmp("a.2.adf"), conf2);
    assert_logged(line);
    call(wr2.unload, w2, 0);
    call(wr.unload, w1b, 0);
    call(wr.unload, w1, 0);
    ck_assert(!tk_exists(in_tmp("a.2.adf")));
    dlclose(wr2.so);
}
END_TEST

START_TEST(writer_refuses_malformed_block)
{
    uint8_t good[4000], bad[4000];
    size_t n = make_frames(good, sizeof good, 8, 12, false);
    memcpy(bad, good, n);
    adf_put_u32(bad + adf_get_u32(bad), 3); /* the second frame claims 3 bytes */
    configure_file(&wr, conf_dir, in_tmp("out.adf"));
    void *w = started(&wr);
    consume(&wr, w, good, n, 0);
    int saved = capture_begin();
    consume(&wr, w, bad, n, NARVAL_E_INPUT);
    capture_end(saved);
    char line[300];
    snprintf(line, sizeof line, "[ADFWriter] error: input block of %zu bytes: event 1 (data:psa of crystal %u) at "
             "byte %u of the input block; its key claims 3 bytes: frame at offset %u: length 3 is below the 20-byte "
             "key; nothing of it written", n, adf_get_u16(good + adf_get_u32(good) + ADF_KEY_SIZE), adf_get_u32(good),
             adf_get_u32(good));
    assert_logged(line);
    consume(&wr, w, good, n - 1, NARVAL_E_INPUT); /* the last frame runs past the block */
    consume(&wr, w, NULL, 0, 0);
    consume(&wr, w, good, n, 0);
    call(wr.stop, w, 0);
    call(wr.unload, w, 0);
    size_t m;
    uint8_t *out = tk_read_file(in_tmp("out.adf"), &m);
    ck_assert_uint_eq(m, 2 * n); /* the two good blocks, nothing of the bad ones */
    ck_assert_mem_eq(out, good, n);
    ck_assert_mem_eq(out + n, good, n);
    free(out);
}
END_TEST

/* A configuration that failed leaves the library unconfigured: register is refused. */
static void registered_fails(tk_actor *a, unsigned *e)
{
    ck_assert_ptr_null(a->reg(e));
    ck_assert_uint_eq(*e, NARVAL_E_STATE);
}

static void expect_config_error(const char *text, const char *what)
{
    unsigned e = 99;
    tk_write_text(tk_path(conf_dir, "ADFWriter.conf"), text);
    int saved = capture_begin();
    wr.config(conf_dir, &e);
    capture_end(saved);
    ck_assert_msg(e == NARVAL_E_CONFIG, "'%s' accepted", text);
    assert_logged(what);
}

START_TEST(writer_bad_configuration)
{
    unsigned e = 0;
    wr.config(conf_dir, &e);
    ck_assert_uint_eq(e, NARVAL_E_CONFIG); /* File is mandatory */
    expect_config_error("File a.adf b.adf\n", "File");
    expect_config_error("File run%s.adf\n", "key 'File': value 'run%s.adf': '%' may only write "
                        "the run number, once, as %d or %0Nd (N from 1 to 9)");
    expect_config_error("File run%d-%d.adf\n", "value 'run%d-%d.adf'");
    expect_config_error("File 100%.adf\n", "value '100%.adf'");
    expect_config_error("File run%10d.adf\n", "value 'run%10d.adf'");
    /* outputs that cannot be written are refused by process_config (and so by validate), not at stop */
    char text[PATH_MAX + 64], what[2 * PATH_MAX + 64];
    tk_write_text(in_tmp("plain"), "x");
    snprintf(text, sizeof text, "File %s\n", in_tmp("plain/dir/out.adf")); /* a file where a folder should be */
    snprintf(what, sizeof what, "ADFWriter.conf:1: key 'File': output '%s' cannot be made: '%s' is not a directory",
             in_tmp("plain/dir/out.adf"), in_tmp("plain"));
    expect_config_error(text, what);
    unsigned e2 = 0;
    registered_fails(&wr, &e2);
    expect_config_error("File \"\"\n", "ADFWriter.conf:1: key 'File': names no file (an empty name)");
    snprintf(text, sizeof text, "File %s\n", tmp);
    snprintf(what, sizeof what, "ADFWriter.conf:1: key 'File': output '%s' is a directory, not a file", tmp);
    expect_config_error(text, what);
    snprintf(text, sizeof text, "File %s/\n", in_tmp("new"));
    expect_config_error(text, "is a directory, not a file");
    ck_assert_ptr_nonnull(strstr(wr.describe(), "ADFWriter (consumer)"));
}
END_TEST

static Suite *publish_suite(void)
{
    Suite *s = suite_create("publish");
    TCase *tc = tcase_create("kit");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, temporaries_are_unique_and_published_by_rename);
    tcase_add_test(tc, temporaries_never_follow_a_planted_link);
    tcase_add_test(tc, temporary_in_a_missing_directory_is_an_io_error);
    tcase_add_test(tc, claims_exclude_within_and_across_processes);
    tcase_add_test(tc, directory_claims_find_one_lock_for_every_spelling);
    tcase_add_test(tc, a_lock_file_left_by_a_dead_process_blocks_nothing);
    tcase_add_test(tc, claim_errors_name_the_output);
    tcase_add_test(tc, instance_outputs_are_derived_from_the_configured_one);
    suite_add_tcase(s, tc);

    tc = tcase_create("writer");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, writer_publishes_only_at_stop);
    tcase_add_test(tc, writer_stop_without_eof_says_so);
    tcase_add_test(tc, writer_first_block_all_left_out);
    tcase_add_test(tc, writer_abort_publishes_nothing);
    tcase_add_test(tc, writer_reset_in_a_run_discards_it_and_runs_again);
    tcase_add_test(tc, writer_runs_replace_the_file_or_are_numbered);
    tcase_add_test(tc, writer_never_follows_planted_links);
    tcase_add_test(tc, writer_instances_of_one_configuration_write_their_own_files);
    tcase_add_test(tc, writer_numbered_instances_keep_the_run_number);
    tcase_add_test(tc, writer_copies_with_their_own_files_both_publish);
    tcase_add_test(tc, writer_refuses_malformed_block);
    tcase_add_test(tc, writer_bad_configuration);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(publish_suite()); }

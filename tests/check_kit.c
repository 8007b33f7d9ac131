/* check_kit.c: the actor kit: configuration parser, describe text, logging, instance states, filter frame loop. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kit.h"
#include "testkit.h"

/* ---- a settings struct with one key of each type -------------------------- */

typedef struct tconf {
    int64_t count;
    double gain;
    char *name;
    bool fast;
    kit_list files;
    int64_t threshold;
} tconf;

static const kit_key tkeys[] = {
    { "Count", KIT_INT, offsetof(tconf, count), "10", KIT_RANGE(0, 100), .help = "how many" },
    { "Gain", KIT_REAL, offsetof(tconf, gain), "1.5", KIT_MIN(0), .help = "gain, keV/ch" },
    { "Name", KIT_STRING, offsetof(tconf, name), "none", .help = "a label" },
    { "Fast", KIT_BOOL, offsetof(tconf, fast), "no", .help = "go fast" },
    { "File", KIT_LIST, offsetof(tconf, files), "a.adf b.adf", .help = "input files" },
    { "Threshold", KIT_INT, offsetof(tconf, threshold), NULL, KIT_MIN(0), .help = "must be set" },
};
static const kit_spec tspec = { "Test", "filter", "a test actor", tkeys, KIT_COUNT(tkeys),
                                sizeof(tconf), NULL };
/* The same keys without the mandatory one: a missing file is then all defaults. */
static const kit_spec tspec_optional = { "Test", "filter", "a test actor", tkeys,
                                         KIT_COUNT(tkeys) - 1, sizeof(tconf), NULL };

static char dir[64];
static char path[128];
static char msg[1024];
static char expect[1024];

static void make_dir(void)
{
    tk_make_tmpdir(dir, sizeof dir, "check_kit");
    snprintf(path, sizeof path, "%s/Test.conf", dir);
}

static void remove_dir(void) { tk_remove_tree(dir); }

static void write_conf(const char *text) { tk_write_text(path, text); }

static unsigned load_text(const char *text, tconf *c)
{
    write_conf(text);
    memset(c, 0, sizeof *c);
    msg[0] = '\0';
    return kit_config_load(&tspec, dir, c, msg, sizeof msg);
}

/* Loads a bad file and checks the code and the whole message ("<path>" stands for the file). */
static void assert_error(const char *text, unsigned code, const char *fmt_after_path)
{
    tconf c;
    ck_assert_uint_eq(load_text(text, &c), code);
    snprintf(expect, sizeof expect, "%s%s", path, fmt_after_path);
    ck_assert_str_eq(msg, expect);
    for (size_t i = 0; i < sizeof c; i++)
        ck_assert_uint_eq(((unsigned char *)&c)[i], 0); /* nothing stored on failure */
}

START_TEST(config_every_type)
{
    tconf c;
    ck_assert_uint_eq(load_text("# a comment line\n"
                                "\n"
                                "Count 42   # trailing comment\n"
                                "  Gain\t-0.0e0 \n"
                                "Name \"two words # not a comment\"\n"
                                "Fast YES\n"
                                "File r1.adf r2.adf\n"
                                "File \"r 3.adf\"#comment right after\n"
                                "Threshold 0x1F\r\n",
                                &c),
                      0);
    ck_assert_int_eq(c.count, 42);
    ck_assert(c.gain == 0.0);
    ck_assert_str_eq(c.name, "two words # not a comment");
    ck_assert(c.fast);
    ck_assert_uint_eq(c.files.n, 3);
    ck_assert_str_eq(c.files.v[0], "r1.adf");
    ck_assert_str_eq(c.files.v[1], "r2.adf");
    ck_assert_str_eq(c.files.v[2], "r 3.adf");
    ck_assert_int_eq(c.threshold, 31);
    kit_config_free(&tspec, &c);
    ck_assert_ptr_null(c.name);
    ck_assert_uint_eq(c.files.n, 0);
}
END_TEST

START_TEST(config_defaults)
{
    tconf c;
    ck_assert_uint_eq(load_text("Threshold -0\n", &c), 0);
    ck_assert_int_eq(c.count, 10);
    ck_assert(c.gain == 1.5);
    ck_assert_str_eq(c.name, "none");
    ck_assert(!c.fast);
    ck_assert_uint_eq(c.files.n, 2);
    ck_assert_str_eq(c.files.v[0], "a.adf");
    ck_assert_str_eq(c.files.v[1], "b.adf");
    ck_assert_int_eq(c.threshold, 0);
    kit_config_free(&tspec, &c);
}
END_TEST

START_TEST(config_bounds_inclusive)
{
    tconf c;
    ck_assert_uint_eq(load_text("Count 100\nGain 0\nThreshold 9223372036854775807\n", &c), 0);
    ck_assert_int_eq(c.count, 100);
    ck_assert_int_eq(c.threshold, INT64_MAX);
    kit_config_free(&tspec, &c);
    ck_assert_uint_eq(load_text("Count 0\nFast off\nName \"\"\nThreshold 1\n", &c), 0);
    ck_assert_int_eq(c.count, 0);
    ck_assert(!c.fast);
    ck_assert_str_eq(c.name, "");
    kit_config_free(&tspec, &c);
}
END_TEST

START_TEST(config_missing_file_defaults)
{
    tconf c = { 0 };
    ck_assert_uint_eq(kit_config_load(&tspec_optional, dir, &c, msg, sizeof msg), 0);
    ck_assert_int_eq(c.count, 10);
    ck_assert_uint_eq(c.files.n, 2);
    kit_config_free(&tspec_optional, &c);
}
END_TEST

START_TEST(config_error_unknown_key)
{
    assert_error("Count 1\n\n  Cuont 2\n", NARVAL_E_CONFIG,
                 ":3: key 'Cuont': unknown key (Test takes: Count, Gain, Name, Fast, File, "
                 "Threshold)");
}
END_TEST

START_TEST(config_error_not_a_number)
{
    assert_error("Threshold 1\nCount abc\n", NARVAL_E_CONFIG,
                 ":2: key 'Count': value 'abc' is not an integer");
    assert_error("Gain x1\n", NARVAL_E_CONFIG, ":1: key 'Gain': value 'x1' is not a number");
    assert_error("Gain nan\n", NARVAL_E_CONFIG,
                 ":1: key 'Gain': value 'nan' is not a finite number in double range");
    assert_error("Gain 1e999\n", NARVAL_E_CONFIG,
                 ":1: key 'Gain': value '1e999' is not a finite number in double range");
    assert_error("Count 99999999999999999999\n", NARVAL_E_CONFIG,
                 ":1: key 'Count': value '99999999999999999999' is out of the 64-bit integer range");
    assert_error("Fast maybe\n", NARVAL_E_CONFIG,
                 ":1: key 'Fast': value 'maybe' is not a boolean (true/false, yes/no, on/off, 1/0)");
}
END_TEST

START_TEST(config_error_range)
{
    assert_error("Threshold -3\n", NARVAL_E_CONFIG,
                 ":1: key 'Threshold': value '-3' is below the minimum 0");
    assert_error("# c\nCount 101\n", NARVAL_E_CONFIG,
                 ":2: key 'Count': value '101' is above the maximum 100");
    assert_error("Gain -0.25\n", NARVAL_E_CONFIG,
                 ":1: key 'Gain': value '-0.25' is below the minimum 0");
}
END_TEST

START_TEST(config_error_trailing_junk)
{
    assert_error("Count 12abc\n", NARVAL_E_CONFIG,
                 ":1: key 'Count': value '12abc' has trailing characters 'abc' after the number");
    assert_error("Count 1.5\n", NARVAL_E_CONFIG,
                 ":1: key 'Count': value '1.5' has trailing characters '.5' after the number");
    assert_error("Gain 2.5keV\n", NARVAL_E_CONFIG,
                 ":1: key 'Gain': value '2.5keV' has trailing characters 'keV' after the number");
    assert_error("Count 12 keV\n", NARVAL_E_CONFIG,
                 ":1: key 'Count': takes one value, but 'keV' follows '12'");
    assert_error("Name \"a b\"c\n", NARVAL_E_CONFIG,
                 ":1: a double quote is not closed, or not at the edge of a value");
    assert_error("Name \"a b\n", NARVAL_E_CONFIG,
                 ":1: a double quote is not closed, or not at the edge of a value");
}
END_TEST

START_TEST(config_error_duplicate)
{
    assert_error("Count 1\nThreshold 2\nCount 1\n", NARVAL_E_CONFIG,
                 ":3: key 'Count': set twice (first on line 1)");
}
END_TEST

START_TEST(config_error_no_value)
{
    assert_error("Threshold 1\nFile\n", NARVAL_E_CONFIG, ":2: key 'File': no value");
    assert_error("Count # a comment, no value\n", NARVAL_E_CONFIG, ":1: key 'Count': no value");
}
END_TEST

START_TEST(config_error_mandatory)
{
    assert_error("Count 1\n", NARVAL_E_CONFIG, ": key 'Threshold': mandatory, but not set");
    tconf c = { 0 };
    unlink(path);
    ck_assert_uint_eq(kit_config_load(&tspec, dir, &c, msg, sizeof msg), NARVAL_E_CONFIG);
    snprintf(expect, sizeof expect, "%s: key 'Threshold': mandatory, but the file does not exist",
             path);
    ck_assert_str_eq(msg, expect);
}
END_TEST

START_TEST(config_error_unreadable)
{
    tconf c = { 0 };
    ck_assert_int_eq(mkdir(path, 0700), 0); /* a directory: opens, but cannot be read, even as root */
    ck_assert_uint_eq(kit_config_load(&tspec, dir, &c, msg, sizeof msg), NARVAL_E_CONFIG);
    snprintf(expect, sizeof expect, "%s: cannot read: %s", path, strerror(EISDIR));
    ck_assert_str_eq(msg, expect);
    ck_assert_uint_eq(kit_config_load(&tspec, NULL, &c, msg, sizeof msg), NARVAL_E_CONFIG);
    ck_assert_str_eq(msg, "Test: no configuration directory given");
}
END_TEST

START_TEST(config_error_nul_byte)
{
    tconf c = { 0 };
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fwrite("Threshold 1\nCount 1\0 2\n", 1, 23, fp);
    fclose(fp);
    ck_assert_uint_eq(kit_config_load(&tspec, dir, &c, msg, sizeof msg), NARVAL_E_CONFIG);
    snprintf(expect, sizeof expect, "%s:2: the line holds a NUL byte", path);
    ck_assert_str_eq(msg, expect);
}
END_TEST

START_TEST(config_directory_forms)
{
    tconf c = { 0 };
    char slash[80];
    write_conf("Threshold 3\nCount x\n");
    snprintf(slash, sizeof slash, "%s/", dir);
    ck_assert_uint_eq(kit_config_load(&tspec, slash, &c, msg, sizeof msg), NARVAL_E_CONFIG);
    snprintf(expect, sizeof expect, "%s:2: key 'Count': value 'x' is not an integer", path);
    ck_assert_str_eq(msg, expect);
    ck_assert_int_eq(chdir(dir), 0);
    ck_assert_uint_eq(kit_config_load(&tspec, "", &c, msg, sizeof msg), NARVAL_E_CONFIG);
    ck_assert_str_eq(msg, "Test.conf:2: key 'Count': value 'x' is not an integer");
}
END_TEST

START_TEST(config_directory_list)
{
    tconf c = { 0 };
    char list[200], other[64], other_path[160];
    snprintf(other, sizeof other, "/tmp/check_kit_other.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(other));
    snprintf(other_path, sizeof other_path, "%s/Test.conf", other);
    write_conf("Threshold 3\nCount 7\n");
    /* the first directory lacks the file: the second one's is read */
    snprintf(list, sizeof list, "%s:%s", other, dir);
    ck_assert_uint_eq(kit_config_load(&tspec, list, &c, msg, sizeof msg), 0);
    ck_assert_int_eq(c.count, 7);
    char *found = kit_conf_path(list, "Test");
    ck_assert_str_eq(found, path);
    free(found);
    /* once the first directory has one, it wins */
    FILE *fp = fopen(other_path, "w");
    ck_assert_ptr_nonnull(fp);
    fputs("Threshold 3\nCount 9\n", fp);
    fclose(fp);
    ck_assert_uint_eq(kit_config_load(&tspec, list, &c, msg, sizeof msg), 0);
    ck_assert_int_eq(c.count, 9);
    unlink(other_path);
    /* in none of them: the first names the missing file */
    rmdir(other);
    unlink(path);
    snprintf(list, sizeof list, "%s:%s", other, dir);
    ck_assert_uint_eq(kit_config_load(&tspec, list, &c, msg, sizeof msg), NARVAL_E_CONFIG);
    snprintf(expect, sizeof expect, "%s/Test.conf: key 'Threshold': mandatory, but the file does not exist", other);
    ck_assert_str_eq(msg, expect);
    kit_config_free(&tspec, &c);
}
END_TEST

/* A host's private directory of links (the emulator's): the messages name
 * the file the link points to, the one the user edits. */
START_TEST(config_link_named_by_its_file)
{
    tconf c = { 0 };
    char links[64], link[160];
    snprintf(links, sizeof links, "/tmp/check_kit_links.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(links));
    snprintf(link, sizeof link, "%s/Test.conf", links);
    write_conf("Threshold 3\nCuont 2\n");
    ck_assert_int_eq(symlink(path, link), 0);
    ck_assert_uint_eq(kit_config_load(&tspec, links, &c, msg, sizeof msg), NARVAL_E_CONFIG);
    snprintf(expect, sizeof expect, "%s:2: key 'Cuont': unknown key (Test takes: Count, Gain, Name, Fast, File, "
             "Threshold)", path);
    ck_assert_str_eq(msg, expect);
    char *found = kit_conf_path(links, "Test");
    ck_assert_str_eq(found, path);
    free(found);
    unlink(link);
    rmdir(links);
}
END_TEST

START_TEST(config_failure_keeps_previous)
{
    tconf c;
    ck_assert_uint_eq(load_text("Threshold 7\nName first\n", &c), 0);
    write_conf("Threshold 8\nName second\nCount -1\n");
    ck_assert_uint_eq(kit_config_load(&tspec, dir, &c, msg, sizeof msg), NARVAL_E_CONFIG);
    ck_assert_int_eq(c.threshold, 7);
    ck_assert_str_eq(c.name, "first");
    write_conf("Threshold 9\nName third\n");
    ck_assert_uint_eq(kit_config_load(&tspec, dir, &c, msg, sizeof msg), 0);
    ck_assert_int_eq(c.threshold, 9);
    ck_assert_str_eq(c.name, "third");
    kit_config_free(&tspec, &c);
}
END_TEST

START_TEST(config_bad_default_is_internal)
{
    static const kit_key bad[] = { { "Level", KIT_INT, 0, "high", .help = "" } };
    static const kit_spec bspec = { "Test", "filter", "", bad, 1, sizeof(int64_t), NULL };
    int64_t v = 0;
    unlink(path);
    ck_assert_uint_eq(kit_config_load(&bspec, dir, &v, msg, sizeof msg), NARVAL_E_INTERNAL);
    snprintf(expect, sizeof expect,
             "%s: key 'Level': the actor's default 'high' is invalid: value 'high' is not an integer",
             path);
    ck_assert_str_eq(msg, expect);
}
END_TEST

/* ---- describe ------------------------------------------------------------- */

START_TEST(describe_text)
{
    const char *want =
        "Test (filter): a test actor\n"
        "configuration file: Test.conf\n"
        "  key        type     default      range     description\n"
        "  Count      integer  10           [0, 100]  how many\n"
        "  Gain       real     1.5          >= 0      gain, keV/ch\n"
        "  Name       string   none         -         a label\n"
        "  Fast       boolean  no           -         go fast\n"
        "  File       list     a.adf b.adf  -         input files\n"
        "  Threshold  integer  (mandatory)  >= 0      must be set\n";
    ck_assert_str_eq(kit_describe(&tspec), want);
}
END_TEST

/* ---- logging: stderr is captured in a file -------------------------------- */

static char captured[4096];

static void capture_begin(int *saved) { *saved = tk_capture_begin(path); }

static void capture_end(int saved) { tk_capture_end(saved, path, captured, sizeof captured); }

START_TEST(log_levels)
{
    int saved;
    unsetenv("NARWHAL_VERBOSE");
    capture_begin(&saved);
    kit_log("ADFReader", KIT_INFO, "read %d frames", 2000);
    kit_log("ADFReader", KIT_DEBUG, "hidden");
    kit_log("ADFReader", KIT_WARN, "odd");
    unsigned code = kit_fail("ADFReader#2", NARVAL_E_IO, "cannot open '%s'", "x.adf");
    capture_end(saved);
    ck_assert_uint_eq(code, NARVAL_E_IO);
    ck_assert_str_eq(captured, "[ADFReader] read 2000 frames\n"
                               "[ADFReader] warning: odd\n"
                               "[ADFReader#2] error: cannot open 'x.adf' (input/output error)\n");
}
END_TEST

/* What a fresh process logs at the debug level with NARWHAL_VERBOSE at
 * `first` (NULL: unset) when its first line is written, then at "1" and at
 * "0": the kit reads the variable once, so the later settings change nothing. */
static void debug_lines(const char *first, char *out, size_t cap)
{
    int saved = tk_capture_begin(path);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (first)
            setenv("NARWHAL_VERBOSE", first, 1);
        else
            unsetenv("NARWHAL_VERBOSE");
        kit_log("ADFReader", KIT_DEBUG, "first");
        setenv("NARWHAL_VERBOSE", "1", 1);
        kit_log("ADFReader", KIT_DEBUG, "after 1");
        setenv("NARWHAL_VERBOSE", "0", 1);
        kit_log("ADFReader", KIT_DEBUG, "after 0");
        _exit(0);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    tk_capture_end(saved, path, out, cap);
}

START_TEST(log_debug_follows_verbose_read_once)
{
    debug_lines(NULL, captured, sizeof captured);
    ck_assert_str_eq(captured, "");
    debug_lines("0", captured, sizeof captured);
    ck_assert_str_eq(captured, "");
    debug_lines("", captured, sizeof captured);
    ck_assert_str_eq(captured, "");
    debug_lines("1", captured, sizeof captured);
    ck_assert_str_eq(captured, "[ADFReader] debug: first\n[ADFReader] debug: after 1\n[ADFReader] debug: after 0\n");
}
END_TEST

START_TEST(log_long_line_cut)
{
    int saved;
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    capture_begin(&saved);
    kit_log("A", KIT_ERROR, "%s", big);
    capture_end(saved);
    size_t n = strlen(captured);
    ck_assert_uint_eq(n, 1024);
    ck_assert_str_eq(captured + n - 4, "...\n");
    ck_assert(strncmp(captured, "[A] error: xxx", 14) == 0);
}
END_TEST

START_TEST(adf_codes)
{
    ck_assert_uint_eq(kit_adf_code(ADF_OK), NARVAL_OK);
    ck_assert_uint_eq(kit_adf_code(ADF_E_SHORT), NARVAL_E_INPUT);
    ck_assert_uint_eq(kit_adf_code(ADF_E_PAST_END), NARVAL_E_INPUT);
    ck_assert_uint_eq(kit_adf_code(ADF_E_PAYLOAD), NARVAL_E_INPUT);
    ck_assert_uint_eq(kit_adf_code(ADF_E_NOSPACE), NARVAL_E_OUTPUT_SIZE);
    ck_assert_uint_eq(kit_adf_code(ADF_E_TOO_BIG), NARVAL_E_OUTPUT_SIZE);
    ck_assert_uint_eq(kit_adf_code(ADF_E_TRUNCATED), NARVAL_E_IO);
    ck_assert_uint_eq(kit_adf_code(ADF_E_IO), NARVAL_E_IO);
    ck_assert_uint_eq(kit_adf_code(ADF_E_NOMEM), NARVAL_E_NOMEM);
    ck_assert_uint_eq(kit_adf_code(ADF_E_NESTING), NARVAL_E_INTERNAL);
}
END_TEST

/* ---- instances and the call sequence -------------------------------------- */

static tconf lib_conf;

typedef struct tinst {
    kit_instance k;
    int started;
} tinst;

static unsigned t_start(void *algo_data)
{
    ((tinst *)algo_data)->started++;
    return 0;
}

static unsigned t_fail(void *algo_data) { return NARVAL_E_IO; }

START_TEST(instance_sequence)
{
    unsigned e = 99;
    ck_assert_ptr_null(kit_register(sizeof(tinst), &e)); /* before process_config */
    ck_assert_uint_eq(e, NARVAL_E_STATE);
    write_conf("Threshold 5\n");
    ck_assert_uint_eq(kit_config(&tspec, dir, &lib_conf), 0);
    ck_assert_int_eq(lib_conf.threshold, 5);
    tinst *a = kit_register(sizeof(tinst), &e);
    ck_assert_uint_eq(e, 0);
    tinst *b = kit_register(sizeof(tinst), &e);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_str_eq(kit_name(a), "Test");
    ck_assert_str_eq(kit_name(b), "Test#2");
    ck_assert_uint_eq(a->k.number, 1);
    ck_assert_uint_eq(b->k.number, 2);
    ck_assert_uint_eq(kit_config(&tspec, dir, &lib_conf), NARVAL_E_STATE); /* instances live */

    ck_assert_uint_eq(kit_step(a, KIT_START, t_start), NARVAL_E_STATE); /* not initialised */
    ck_assert_int_eq(a->started, 0);
    ck_assert_uint_eq(kit_enter(a, KIT_BLOCK), NARVAL_E_STATE);
    ck_assert_uint_eq(kit_step(a, KIT_INITIALISE, NULL), 0);
    ck_assert_uint_eq(kit_step(a, KIT_INITIALISE, NULL), NARVAL_E_STATE);
    ck_assert_uint_eq(kit_step(a, KIT_START, t_fail), NARVAL_E_IO);
    ck_assert_int_eq(a->k.state, KIT_INITIALISED); /* a failed start does not start */
    ck_assert_uint_eq(kit_step(a, KIT_START, t_start), 0);
    ck_assert_int_eq(a->started, 1);
    ck_assert_uint_eq(kit_enter(a, KIT_BLOCK), 0);
    ck_assert_uint_eq(kit_step(a, KIT_RESUME, NULL), NARVAL_E_STATE);
    ck_assert_uint_eq(kit_step(a, KIT_PAUSE, NULL), 0);
    ck_assert_uint_eq(kit_enter(a, KIT_BLOCK), NARVAL_E_STATE);
    ck_assert_uint_eq(kit_step(a, KIT_START, NULL), NARVAL_E_STATE);
    ck_assert_uint_eq(kit_step(a, KIT_INITIALISE, NULL), NARVAL_E_STATE);
    ck_assert_uint_eq(kit_step(a, KIT_RESUME, NULL), 0);
    ck_assert_uint_eq(kit_step(a, KIT_STOP, NULL), 0);
    ck_assert_uint_eq(kit_enter(a, KIT_BLOCK), NARVAL_E_STATE);
    ck_assert_uint_eq(kit_step(a, KIT_RESET, NULL), 0);
    ck_assert_int_eq(a->k.state, KIT_AFTER_RESET);
    ck_assert_uint_eq(kit_step(a, KIT_START, t_start), 0); /* start straight after reset */
    ck_assert_int_eq(a->started, 2);
    ck_assert_int_eq(b->k.state, KIT_REGISTERED); /* instances are independent */

    ck_assert_uint_eq(kit_enter(NULL, KIT_BLOCK), NARVAL_E_STATE);
    int foreign[16] = { 0 };
    ck_assert_uint_eq(kit_enter(foreign, KIT_START), NARVAL_E_STATE);
    ck_assert_uint_eq(kit_unload(NULL, NULL), NARVAL_E_STATE);
    ck_assert_uint_eq(kit_unload(foreign, NULL), NARVAL_E_STATE);
    ck_assert_uint_eq(kit_unload(a, NULL), 0);
    ck_assert_uint_eq(kit_config(&tspec, dir, &lib_conf), NARVAL_E_STATE);
    /* the smallest number no live instance has: a's 1, then 3 */
    tinst *c = kit_register(sizeof(tinst), &e), *d = kit_register(sizeof(tinst), &e);
    ck_assert_uint_eq(c->k.number, 1);
    ck_assert_str_eq(kit_name(c), "Test");
    ck_assert_uint_eq(d->k.number, 3);
    ck_assert_str_eq(kit_name(d), "Test#3");
    ck_assert_uint_eq(kit_unload(c, NULL), 0);
    ck_assert_uint_eq(kit_unload(d, NULL), 0);
    ck_assert_uint_eq(kit_unload(b, NULL), 0);
    write_conf("Threshold 6\n");
    ck_assert_uint_eq(kit_config(&tspec, dir, &lib_conf), 0); /* no instance left */
    ck_assert_int_eq(lib_conf.threshold, 6);
}
END_TEST

/* Hooks that record the calls that reached the actor, in order. */
static char hooks[512];

static unsigned record(const char *what)
{
    size_t n = strlen(hooks);
    snprintf(hooks + n, sizeof hooks - n, "%s%s", n ? " " : "", what);
    return 0;
}

static unsigned h_initialise(void *algo_data) { return record("initialise"); }
static unsigned h_start(void *algo_data) { return record("start"); }
static unsigned h_stop(void *algo_data) { return record("stop"); }
static unsigned h_pause(void *algo_data) { return record("pause"); }
static unsigned h_resume(void *algo_data) { return record("resume"); }

/* The reset hook sees the state before the call: it tells a reset in a run from one after stop. */
static unsigned h_reset(void *algo_data)
{
    static const char *const names[] = { "registered", "initialised", "running", "paused", "stopped",
                                         "reset" };
    char what[32];
    snprintf(what, sizeof what, "reset(%s)", names[((kit_instance *)algo_data)->state]);
    return record(what);
}

static unsigned h_fail(void *algo_data)
{
    record("fail");
    return NARVAL_E_IO;
}

typedef unsigned hook_fn(void *);

/* One call through kit_step with the recording hook of that call. */
static unsigned call(void *inst, kit_call c)
{
    static hook_fn *const hook_of[] = { [KIT_INITIALISE] = h_initialise, [KIT_START] = h_start,
                                        [KIT_BLOCK] = NULL, [KIT_PAUSE] = h_pause, [KIT_RESUME] = h_resume,
                                        [KIT_STOP] = h_stop, [KIT_RESET] = h_reset };
    if (c == KIT_BLOCK)
        return kit_leave(inst, c, kit_enter(inst, c) ? NARVAL_E_STATE : record("block"));
    return kit_step(inst, c, hook_of[c]);
}

/* Every sequence a NARVAL host may make, each call accepted and reaching its hook. */
START_TEST(instance_narval_sequences)
{
    unsigned e = 99;
    write_conf("Threshold 5\n");
    ck_assert_uint_eq(kit_config(&tspec, dir, &lib_conf), 0);
    tinst *a = kit_register(sizeof(tinst), &e);
    ck_assert_ptr_nonnull(a);
    hooks[0] = '\0';
    /* run, stop, reset, initialise again, run again */
    static const kit_call cycles[] = { KIT_INITIALISE, KIT_START, KIT_BLOCK, KIT_BLOCK, KIT_STOP, KIT_RESET,
                                       KIT_INITIALISE, KIT_START, KIT_BLOCK, KIT_PAUSE, KIT_RESUME, KIT_BLOCK,
                                       KIT_STOP, KIT_RESET, KIT_INITIALISE };
    for (size_t i = 0; i < KIT_COUNT(cycles); i++)
        ck_assert_msg(call(a, cycles[i]) == 0, "call %zu of the cycles refused", i);
    ck_assert_str_eq(hooks, "initialise start block block stop reset(stopped) initialise start block pause "
                            "resume block stop reset(stopped) initialise");
    ck_assert_int_eq(a->k.state, KIT_INITIALISED);
    /* reset in a run, running or paused, with no stop; start straight after reset */
    hooks[0] = '\0';
    static const kit_call in_run[] = { KIT_START, KIT_BLOCK, KIT_RESET, KIT_START, KIT_PAUSE, KIT_RESET,
                                       KIT_START, KIT_STOP, KIT_START, KIT_STOP, KIT_RESET, KIT_RESET,
                                       KIT_INITIALISE, KIT_RESET, KIT_START };
    for (size_t i = 0; i < KIT_COUNT(in_run); i++)
        ck_assert_msg(call(a, in_run[i]) == 0, "call %zu of the resets in a run refused", i);
    /* the second reset in a row has nothing to release: its hook is not called */
    ck_assert_str_eq(hooks, "start block reset(running) start pause reset(paused) start stop start stop "
                            "reset(stopped) initialise reset(initialised) start");
    ck_assert_int_eq(a->k.state, KIT_RUNNING);
    ck_assert_uint_eq(kit_unload(a, NULL), 0); /* unload in a run: no stop */
}
END_TEST

/* Calls out of the sequence are NARVAL_E_STATE and reach no hook; the state stays. */
START_TEST(instance_out_of_sequence)
{
    static const struct {
        kit_call prepare[4];
        size_t n;
        kit_call refused[6];
        size_t n_refused;
    } cases[] = {
        { { 0 }, 0, { KIT_START, KIT_BLOCK, KIT_PAUSE, KIT_RESUME, KIT_STOP, KIT_RESET }, 6 },
        { { KIT_INITIALISE }, 1, { KIT_INITIALISE, KIT_BLOCK, KIT_PAUSE, KIT_RESUME, KIT_STOP }, 5 },
        { { KIT_INITIALISE, KIT_START }, 2, { KIT_INITIALISE, KIT_START, KIT_RESUME }, 3 },
        { { KIT_INITIALISE, KIT_START, KIT_PAUSE }, 3, { KIT_INITIALISE, KIT_START, KIT_BLOCK, KIT_PAUSE }, 4 },
        { { KIT_INITIALISE, KIT_START, KIT_STOP }, 3,
          { KIT_INITIALISE, KIT_BLOCK, KIT_PAUSE, KIT_RESUME, KIT_STOP }, 5 },
        { { KIT_INITIALISE, KIT_RESET }, 2, { KIT_BLOCK, KIT_PAUSE, KIT_RESUME, KIT_STOP }, 4 },
    };
    unsigned e = 99;
    char log[4096];
    write_conf("Threshold 5\n");
    ck_assert_uint_eq(kit_config(&tspec, dir, &lib_conf), 0);
    for (size_t c = 0; c < KIT_COUNT(cases); c++) {
        tinst *a = kit_register(sizeof(tinst), &e);
        ck_assert_ptr_nonnull(a);
        ck_assert_uint_eq(a->k.number, 1); /* the previous case's instance gave its number back */
        for (size_t i = 0; i < cases[c].n; i++)
            ck_assert_uint_eq(call(a, cases[c].prepare[i]), 0);
        kit_state before = a->k.state;
        hooks[0] = '\0';
        int saved = tk_capture_begin(tk_path(dir, "stderr.txt"));
        for (size_t i = 0; i < cases[c].n_refused; i++)
            ck_assert_msg(call(a, cases[c].refused[i]) == NARVAL_E_STATE, "case %zu: call %zu accepted", c, i);
        tk_capture_end(saved, tk_path(dir, "stderr.txt"), log, sizeof log);
        ck_assert_str_eq(hooks, "");
        ck_assert_int_eq(a->k.state, before);
        ck_assert_ptr_nonnull(strstr(log, "] error: process_"));
        ck_assert_ptr_nonnull(strstr(log, " called while the instance is "));
        ck_assert_uint_eq(kit_unload(a, NULL), 0);
    }
    tinst *a = kit_register(sizeof(tinst), &e);
    ck_assert_uint_eq(call(a, KIT_INITIALISE), 0);
    ck_assert_uint_eq(call(a, KIT_RESET), 0);
    int saved = tk_capture_begin(tk_path(dir, "stderr.txt"));
    ck_assert_uint_eq(call(a, KIT_STOP), NARVAL_E_STATE);
    tk_capture_end(saved, tk_path(dir, "stderr.txt"), log, sizeof log);
    ck_assert_str_eq(log, "[Test] error: process_stop called while the instance is reset (call out of sequence)\n");
    ck_assert_uint_eq(kit_unload(a, NULL), 0);
}
END_TEST

/* A failed hook changes no state, except a failed initialise: the instance is
 * then registered again, since the hook may have freed what a run needs. */
START_TEST(instance_failed_hooks)
{
    unsigned e = 99;
    write_conf("Threshold 5\n");
    ck_assert_uint_eq(kit_config(&tspec, dir, &lib_conf), 0);
    tinst *a = kit_register(sizeof(tinst), &e);
    ck_assert_uint_eq(kit_step(a, KIT_INITIALISE, h_fail), NARVAL_E_IO);
    ck_assert_int_eq(a->k.state, KIT_REGISTERED);
    ck_assert_uint_eq(call(a, KIT_INITIALISE), 0);
    ck_assert_uint_eq(call(a, KIT_START), 0);
    ck_assert_uint_eq(kit_step(a, KIT_PAUSE, h_fail), NARVAL_E_IO);
    ck_assert_int_eq(a->k.state, KIT_RUNNING);
    ck_assert_uint_eq(kit_step(a, KIT_RESET, h_fail), NARVAL_E_IO);
    ck_assert_int_eq(a->k.state, KIT_RUNNING);
    ck_assert_uint_eq(call(a, KIT_RESET), 0);
    ck_assert_uint_eq(kit_step(a, KIT_INITIALISE, h_fail), NARVAL_E_IO);
    ck_assert_int_eq(a->k.state, KIT_REGISTERED); /* not "reset": a start now would find half a set-up */
    ck_assert_uint_eq(call(a, KIT_START), NARVAL_E_STATE);
    ck_assert_uint_eq(call(a, KIT_INITIALISE), 0);
    ck_assert_uint_eq(call(a, KIT_START), 0);
    ck_assert_uint_eq(kit_unload(a, NULL), 0);
}
END_TEST

START_TEST(instance_config_error)
{
    unsigned e = 0;
    write_conf("Threshold x\n");
    ck_assert_uint_eq(kit_config(&tspec, dir, &lib_conf), NARVAL_E_CONFIG);
    ck_assert_ptr_null(kit_register(sizeof(tinst), &e));
    ck_assert_uint_eq(e, NARVAL_E_STATE);
    write_conf("Threshold 1\n");
    ck_assert_uint_eq(kit_config(&tspec, dir, &lib_conf), 0);
    ck_assert_ptr_null(kit_register(sizeof(kit_instance) - 1, &e)); /* no room for the header */
    ck_assert_uint_eq(e, NARVAL_E_INTERNAL);
}
END_TEST

/* The actor's own checks (kit_spec.check) decide too: a file the kit reads
 * well but the actor refuses leaves the library unconfigured. */
static unsigned check_verdict;
static unsigned t_check(const char *d) { return d ? check_verdict : NARVAL_E_INTERNAL; }

START_TEST(instance_actor_check_decides_configured)
{
    static const kit_spec checked = { "Test", "filter", "a test actor", tkeys, KIT_COUNT(tkeys), sizeof(tconf),
                                      t_check };
    unsigned e = 0;
    write_conf("Threshold 1\n");
    check_verdict = NARVAL_E_CONFIG;
    ck_assert_uint_eq(kit_config(&checked, dir, &lib_conf), NARVAL_E_CONFIG);
    ck_assert_ptr_null(kit_register(sizeof(tinst), &e));
    ck_assert_uint_eq(e, NARVAL_E_STATE);
    check_verdict = 0;
    ck_assert_uint_eq(kit_config(&checked, dir, &lib_conf), 0);
    tinst *a = kit_register(sizeof(tinst), &e);
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(kit_unload(a, NULL), 0);
}
END_TEST

/* What configurations' file names must be: readable inputs, writable outputs. */
START_TEST(config_paths_checked)
{
    char why[1024], sub[128], file[128];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(file, sizeof file, "%s/f.txt", dir);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    FILE *fp = fopen(file, "w");
    ck_assert_ptr_nonnull(fp);
    fclose(fp);
    ck_assert_uint_eq(kit_check_input(file, "Basis", "T.conf", 3, why, sizeof why), 0);
    ck_assert_uint_eq(kit_check_input(sub, "Basis", "T.conf", 3, why, sizeof why), NARVAL_E_CONFIG);
    ck_assert_str_eq(strstr(why, "T.conf:3: key 'Basis': file '"), why);
    ck_assert_ptr_nonnull(strstr(why, "/sub' is a directory"));
    ck_assert_uint_eq(kit_check_input("/nonexistent/b", "Basis", "T.conf", 0, why, sizeof why), NARVAL_E_CONFIG);
    ck_assert_str_eq(why, "T.conf: key 'Basis' (its default): file '/nonexistent/b': No such file or directory");
    ck_assert_uint_eq(kit_check_input("", "Basis", "T.conf", 2, why, sizeof why), NARVAL_E_CONFIG);
    ck_assert_str_eq(why, "T.conf:2: key 'Basis': names no file (an empty name)");
    ck_assert_uint_eq(kit_check_output(file, false, "File", "T.conf", 1, why, sizeof why), 0);
    ck_assert_uint_eq(kit_check_output("new/dirs/out.adf", false, "File", "T.conf", 1, why, sizeof why), 0);
    ck_assert_uint_eq(kit_check_output(sub, false, "File", "T.conf", 1, why, sizeof why), NARVAL_E_CONFIG);
    ck_assert_ptr_nonnull(strstr(why, "/sub' is a directory, not a file"));
    ck_assert_uint_eq(kit_check_output(file, true, "OutputDir", "T.conf", 1, why, sizeof why), NARVAL_E_CONFIG);
    ck_assert_ptr_nonnull(strstr(why, "/f.txt' is a file"));
    ck_assert_uint_eq(kit_check_output(sub, true, "OutputDir", "T.conf", 1, why, sizeof why), 0);
    ck_assert_uint_eq(kit_check_output("", false, "File", "T.conf", 4, why, sizeof why), NARVAL_E_CONFIG);
    ck_assert_str_eq(why, "T.conf:4: key 'File': names no file (an empty name)");
    char below_file[160];
    snprintf(below_file, sizeof below_file, "%s/x/out.adf", file);
    ck_assert_uint_eq(kit_check_output(below_file, false, "File", "T.conf", 1, why, sizeof why), NARVAL_E_CONFIG);
    ck_assert_ptr_nonnull(strstr(why, "cannot be made: '"));
    ck_assert_ptr_nonnull(strstr(why, "/f.txt' is not a directory"));
}
END_TEST

/* ---- the filter frame loop ------------------------------------------------- */

#define ID_DOUBLE 0x4E57F001u /* frames the test filter doubles; others pass or are dropped */
#define ID_DROP 0x4E57F002u
#define CANARY 0xA5

typedef struct tfilter {
    unsigned seen, doubled, flushes;
    unsigned fail_at;   /* frame number (1-based) that returns NARVAL_E_DATA; 0 = none */
    bool leave_open;
} tfilter;

static unsigned t_frame(void *ctx, const adf_frame *f, adf_writer *w)
{
    tfilter *t = ctx;
    t->seen++;
    if (t->fail_at == t->seen)
        return NARVAL_E_DATA;
    if (f->key.id == ID_DROP)
        return 0;
    if (f->key.id != ID_DOUBLE)
        return KIT_PASS;
    t->doubled++;
    adf_begin(w, ID_DOUBLE, f->key.event, f->key.timestamp);
    adf_put(w, f->payload, f->payload_size);
    adf_put(w, f->payload, f->payload_size);
    if (!t->leave_open)
        adf_end(w);
    return 0;
}

static unsigned t_end(void *ctx, bool flush, adf_writer *w)
{
    tfilter *t = ctx;
    if (!flush)
        return 0;
    t->flushes++;
    adf_begin(w, ADF_ID_META_EOF, 0, 0);
    adf_put_le32(w, t->seen);
    adf_put_le64(w, 0);
    return adf_end(w) == ADF_OK || w->status == ADF_E_NOSPACE ? 0 : NARVAL_E_INTERNAL;
}

static const kit_filter_ops t_ops = { t_frame, t_end };

/* Appends a frame with `n` payload bytes valued 1..n. */
static size_t put_test_frame(uint8_t *buf, size_t at, uint32_t id, uint32_t event, unsigned n)
{
    adf_key key = { ADF_KEY_SIZE + n, id, event, 1000u + event };
    adf_key_encode(buf + at, &key);
    for (unsigned i = 0; i < n; i++)
        buf[at + ADF_KEY_SIZE + i] = (uint8_t)(i + 1);
    return at + ADF_KEY_SIZE + n;
}

static uint8_t in[512], out[1024];

/* Input: a frame that passes (30 B), one doubled (20 + 8 -> 36 B), one dropped, one passing. */
static size_t make_input(void)
{
    size_t n = put_test_frame(in, 0, ADF_ID_DATA_PSA, 1, 10);
    n = put_test_frame(in, n, ID_DOUBLE, 2, 8);
    n = put_test_frame(in, n, ID_DROP, 3, 4);
    return put_test_frame(in, n, ADF_ID_META_SYNC, 4, 0);
}

START_TEST(frames_transform_and_pass)
{
    size_t n = make_input();
    tfilter t = { 0 };
    unsigned used = 0;
    memset(out, CANARY, sizeof out);
    ck_assert_uint_eq(kit_filter_block(NULL, &t_ops, &t, in, (unsigned)n, out, sizeof out, &used), 0);
    ck_assert_uint_eq(used, 30 + 36 + 20);
    ck_assert_mem_eq(out, in, 30);
    ck_assert_uint_eq(adf_get_u32(out + 30), 36);
    ck_assert_uint_eq(adf_get_u32(out + 34), ID_DOUBLE);
    ck_assert_uint_eq(adf_get_u32(out + 38), 2);
    ck_assert_mem_eq(out + 50, in + 50, 8);
    ck_assert_mem_eq(out + 58, in + 50, 8);
    ck_assert_mem_eq(out + 66, in + 82, 20);
    ck_assert_uint_eq(out[86], CANARY);
    ck_assert_uint_eq(t.seen, 4);
    ck_assert_uint_eq(t.flushes, 0);
}
END_TEST

START_TEST(frames_output_size_exact)
{
    size_t n = make_input();
    const unsigned need = 30 + 36 + 20;
    for (unsigned cap = 0; cap < need; cap++) {
        tfilter t = { 0 };
        unsigned used = 12345;
        memset(out, CANARY, sizeof out);
        ck_assert_uint_eq(kit_filter_block(NULL, &t_ops, &t, in, (unsigned)n, out, cap, &used),
                          NARVAL_E_OUTPUT_SIZE);
        ck_assert_uint_eq(used, need);
        for (size_t i = cap; i < sizeof out; i++)
            ck_assert_uint_eq(out[i], CANARY); /* nothing at or past the capacity */
    }
    tfilter t = { 0 };
    unsigned used = 0;
    ck_assert_uint_eq(kit_filter_block(NULL, &t_ops, &t, in, (unsigned)n, out, need, &used), 0);
    ck_assert_uint_eq(used, need);
}
END_TEST

START_TEST(frames_malformed_input)
{
    size_t n = make_input();
    adf_put_u32(in + 30, 12); /* the second frame's length below the key */
    tfilter t = { 0 };
    unsigned used = 5;
    ck_assert_uint_eq(kit_filter_block(NULL, &t_ops, &t, in, (unsigned)n, out, sizeof out, &used),
                      NARVAL_E_INPUT);
    ck_assert_uint_eq(used, 0);
    ck_assert_uint_eq(t.seen, 1);
    n = make_input();
    ck_assert_uint_eq(kit_filter_block(NULL, &t_ops, &t, in, (unsigned)n - 1, out, sizeof out,
                                       &used),
                      NARVAL_E_INPUT); /* the last frame runs past the block */
    ck_assert_uint_eq(used, 0);
}
END_TEST

START_TEST(frames_actor_error)
{
    size_t n = make_input();
    tfilter t = { .fail_at = 3 };
    unsigned used = 5;
    ck_assert_uint_eq(kit_filter_block(NULL, &t_ops, &t, in, (unsigned)n, out, sizeof out, &used),
                      NARVAL_E_DATA);
    ck_assert_uint_eq(used, 0);
    tfilter open = { .leave_open = true };
    ck_assert_uint_eq(kit_filter_block(NULL, &t_ops, &open, in, (unsigned)n, out, sizeof out, &used),
                      NARVAL_E_INTERNAL);
    kit_filter_ops no_frame = { NULL, NULL };
    ck_assert_uint_eq(kit_filter_block(NULL, &no_frame, &t, in, (unsigned)n, out, sizeof out, &used),
                      NARVAL_E_INTERNAL);
}
END_TEST

START_TEST(frames_flush_on_empty_input)
{
    tfilter t = { .seen = 7 };
    unsigned used = 0;
    memset(out, CANARY, sizeof out);
    ck_assert_uint_eq(kit_filter_block(NULL, &t_ops, &t, NULL, 0, out, sizeof out, &used), 0);
    ck_assert_uint_eq(used, ADF_KEY_SIZE + ADF_EOF_PAYLOAD);
    ck_assert_uint_eq(t.flushes, 1);
    ck_assert_uint_eq(adf_get_u32(out + 4), ADF_ID_META_EOF);
    ck_assert_uint_eq(adf_get_u32(out + 20), 7);
    t.flushes = 0;
    memset(out, CANARY, sizeof out);
    ck_assert_uint_eq(kit_filter_block(NULL, &t_ops, &t, NULL, 0, out, 10, &used),
                      NARVAL_E_OUTPUT_SIZE);
    ck_assert_uint_eq(used, ADF_KEY_SIZE + ADF_EOF_PAYLOAD);
    ck_assert_uint_eq(out[10], CANARY);
}
END_TEST

static Suite *kit_suite(void)
{
    Suite *s = suite_create("kit");
    TCase *tc = tcase_create("config");
    tcase_add_checked_fixture(tc, make_dir, remove_dir);
    tcase_add_test(tc, config_every_type);
    tcase_add_test(tc, config_defaults);
    tcase_add_test(tc, config_bounds_inclusive);
    tcase_add_test(tc, config_missing_file_defaults);
    tcase_add_test(tc, config_error_unknown_key);
    tcase_add_test(tc, config_error_not_a_number);
    tcase_add_test(tc, config_error_range);
    tcase_add_test(tc, config_error_trailing_junk);
    tcase_add_test(tc, config_error_duplicate);
    tcase_add_test(tc, config_error_no_value);
    tcase_add_test(tc, config_error_mandatory);
    tcase_add_test(tc, config_error_unreadable);
    tcase_add_test(tc, config_error_nul_byte);
    tcase_add_test(tc, config_directory_forms);
    tcase_add_test(tc, config_directory_list);
    tcase_add_test(tc, config_link_named_by_its_file);
    tcase_add_test(tc, config_failure_keeps_previous);
    tcase_add_test(tc, config_bad_default_is_internal);
    tcase_add_test(tc, config_paths_checked);
    tcase_add_test(tc, describe_text);
    tcase_add_test(tc, log_levels);
    tcase_add_test(tc, log_debug_follows_verbose_read_once);
    tcase_add_test(tc, log_long_line_cut);
    tcase_add_test(tc, adf_codes);
    suite_add_tcase(s, tc);

    tc = tcase_create("instances");
    tcase_add_checked_fixture(tc, make_dir, remove_dir);
    tcase_add_test(tc, instance_sequence);
    tcase_add_test(tc, instance_narval_sequences);
    tcase_add_test(tc, instance_out_of_sequence);
    tcase_add_test(tc, instance_failed_hooks);
    tcase_add_test(tc, instance_config_error);
    tcase_add_test(tc, instance_actor_check_decides_configured);
    suite_add_tcase(s, tc);

    tc = tcase_create("frames");
    tcase_add_test(tc, frames_transform_and_pass);
    tcase_add_test(tc, frames_output_size_exact);
    tcase_add_test(tc, frames_malformed_input);
    tcase_add_test(tc, frames_actor_error);
    tcase_add_test(tc, frames_flush_on_empty_input);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(kit_suite()); }

/* check_monitor.c: Check suite for the live view of `narwhal run`: the progress line, Ctrl-C's word, the --monitor page (JSON and headless Chromium), --version and help. */
#define _XOPEN_SOURCE 700
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "narwhal_exec.h"
#include "testkit.h"

static char tmp[PATH_MAX];
static char not_ready[PATH_MAX * 2]; /* why the chain cannot run, when it cannot */

static const char *at(const char *name) { return tk_path(tmp, name); }

/* generator (a coarse basis, 180 crystals) -> histo_sink: the smallest chain that fills spectra. */
static const char topology[] =
    "<configuration>\n"
    "  <producer><name>generator</name><binary_code>generic_producer</binary_code>\n"
    "    <library>generator.so</library><output_buffer_name>data1</output_buffer_name>\n"
    "    <size output_buffer=\"data1\">200000</size></producer>\n"
    "  <consumer><name>histo</name><binary_code>generic_consumer</binary_code>\n"
    "    <library>histo_sink.so</library>\n"
    "    <data_source source_buffer=\"data1\">generator</data_source></consumer>\n"
    "</configuration>\n";

/* Events 0: until stopped. */
static void write_chain(unsigned events)
{
    tk_write_text(at("chain.xml"), topology);
    tk_write_textf(at("conf/Generator.conf"),
                   "Array detector/arrays/agata180.txt\nCrystal detector/geometry/agata.geo\nBasis %s\nSeed 3\n"
                   "Events %u\nSource lines\nLines 661.657 1 1332.492 1\nSamples 40\nThreads 1\n",
                   at("coarse.basis"), events);
    tk_write_textf(at("conf/Histo.conf"),
                   "OutputDir %s\nDevice cpu\nFormats csv\nPlot none\n"
                   "Histogram core crystal.core sum 2048 0 2048\nHistogram cores crystal.core crystal 512 0 2048\n",
                   at("histo"));
}

static void setup(void)
{
    tk_make_tmpdir(tmp, sizeof tmp, "check_monitor");
    ck_assert_int_eq(mkdir(at("conf"), 0700), 0);
    not_ready[0] = '\0';
    const char *basisgen = nw_build_path("/bin/basisgen");
    if (access(basisgen, X_OK) != 0) {
        snprintf(not_ready, sizeof not_ready, "%s is not built", basisgen);
        return;
    }
    char cmd[3 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "%s --quiet --geometry detector/geometry/agata.geo --grid 6 --field-grid 2 -o %s",
             basisgen, at("coarse.basis"));
    ck_assert_msg(system(cmd) == 0, "basisgen failed: %s", cmd);
}

static void teardown(void) { tk_remove_tree(tmp); }

static void run(nw_result *r, const char *const *args)
{
    ck_assert_int_eq(nw_run_timed(r, args, NULL, 120, 0, 0), 0);
    ck_assert(!r->timed_out);
}

/* ---- the command line ------------------------------------------------------------------------- */

START_TEST(version_and_help_for_every_command)
{
    static const char *const commands[] = {"run", "validate", "inspect", "dump", "summary", "help"};
    nw_result r;
    const char *version[] = {"--version", NULL}, *version_word[] = {"version", NULL};
    run(&r, version);
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strncmp(r.out, "narwhal 0.", 10) == 0, "%s", r.out);
    ck_assert_ptr_nonnull(strstr(r.out, "\nCUDA: "));
    ck_assert_ptr_nonnull(strstr(r.out, "\n--monitor: "));
    char first[sizeof r.out];
    snprintf(first, sizeof first, "%s", r.out);
    run(&r, version_word);
    ck_assert_str_eq(r.out, first);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        char synopsis[64];
        const char *as_option[] = {commands[i], "--help", NULL}, *as_help[] = {"help", commands[i], NULL};
        snprintf(synopsis, sizeof synopsis, "\n  narwhal %s ", commands[i]);
        run(&r, strcmp(commands[i], "help") ? as_option : as_help);
        ck_assert_msg(r.status == 0, "%s --help: exit %d: %s", commands[i], r.status, r.err);
        ck_assert_msg(strstr(r.out, synopsis) != NULL, "no '%s' in:\n%s", synopsis + 1, r.out);
        ck_assert_uint_eq(tk_count(r.out, "\n  narwhal "), 1); /* that command's part only */
        ck_assert_ptr_nonnull(strstr(r.out, "\nexit status: 0 success;"));
        run(&r, as_help);
        ck_assert_int_eq(r.status, 0);
        ck_assert_ptr_nonnull(strstr(r.out, synopsis));
    }
    const char *run_help[] = {"help", "run", NULL}, *dump_help[] = {"dump", "--help", NULL};
    run(&r, run_help);
    ck_assert_ptr_nonnull(strstr(r.out, "\n  --monitor PORT "));
    ck_assert_ptr_nonnull(strstr(r.out, "\n  --progress S "));
    ck_assert_ptr_nonnull(strstr(r.out, "\n  --pipeline "));
    run(&r, dump_help);
    ck_assert_ptr_nonnull(strstr(r.out, "\n  --max N "));
    ck_assert_ptr_null(strstr(r.out, "--monitor"));
    const char *unknown[] = {"help", "frobnicate", NULL};
    run(&r, unknown);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "narwhal: unknown command 'frobnicate' (see narwhal --help)\n");
}
END_TEST

START_TEST(live_options_are_checked)
{
    static const struct {
        const char *args[8];
        const char *err;
    } bad[] = {
        {{"run", "x.xml", "--monitor-linger", "2", NULL},
         "narwhal: --monitor-linger goes with --monitor PORT (see narwhal --help)\n"},
        {{"run", "x.xml", "--monitor-bind", "0.0.0.0", NULL},
         "narwhal: --monitor-bind goes with --monitor PORT (see narwhal --help)\n"},
        {{"run", "x.xml", "--monitor", "65536", NULL},
         "narwhal: --monitor needs a port, from 0 (any free one) to 65535 (see narwhal --help)\n"},
        {{"run", "x.xml", "--progress", "-1", NULL},
         "narwhal: --progress needs seconds, from 0 to 86400 (see narwhal --help)\n"},
        {{"run", "x.xml", "--quiet", "--progress", "2", NULL},
         "narwhal: --quiet and --progress 2 say opposite things (see narwhal --help)\n"},
        {{"validate", "x.xml", "-q", NULL}, "narwhal: 'validate' takes no --quiet (see narwhal --help)\n"},
        {{"dump", "x.adf", "--monitor", "0", NULL}, "narwhal: 'dump' takes no --monitor (see narwhal --help)\n"},
    };
    nw_result r;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run(&r, bad[i].args);
        ck_assert_int_eq(r.status, 2);
        ck_assert_str_eq(r.err, bad[i].err);
    }
}
END_TEST

/* ---- the progress line and Ctrl-C ------------------------------------------------------------- */

START_TEST(progress_lines_go_to_a_pipe_every_interval)
{
    if (not_ready[0])
        TK_SKIP("%s", not_ready);
    nw_result r;
    write_chain(20000);
    const char *args[] = {"run", at("chain.xml"), "--conf", at("conf"), "--progress", "0.1", NULL};
    run(&r, args);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    /* Lines, not a terminal's rewritten one: no carriage return, no escape. */
    ck_assert_ptr_null(strchr(r.err, '\r'));
    ck_assert_ptr_null(strchr(r.err, '\033'));
    const char *line = strstr(r.err, "narwhal: running ");
    ck_assert_msg(line != NULL, "no progress line in:\n%s", r.err);
    ck_assert_ptr_nonnull(strstr(line, " crystal-events ("));
    ck_assert_ptr_nonnull(strstr(line, "/s); busiest '"));
    ck_assert_ptr_nonnull(strstr(line, "% of 20,000 events"));
    const char *quiet[] = {"run", at("chain.xml"), "--conf", at("conf"), "--quiet", NULL};
    run(&r, quiet);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_null(strstr(r.err, "crystal-events"));
}
END_TEST

START_TEST(ctrl_c_says_the_run_is_stopping)
{
    if (not_ready[0])
        TK_SKIP("%s", not_ready);
    nw_result r;
    write_chain(0);
    const char *args[] = {"run", at("chain.xml"), "--conf", at("conf"), "--quiet", NULL};
    ck_assert_int_eq(nw_run_timed(&r, args, NULL, 120, SIGINT, 1.5), 0);
    ck_assert(!r.timed_out);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "\nnarwhal: stopping: finishing the block in hand\xe2\x80\xa6 (a second Ctrl-C "
                                        "quits at once)\n"));
    ck_assert_ptr_nonnull(strstr(r.out, ", stopped by SIGINT\n"));
}
END_TEST

/* ---- the monitor -------------------------------------------------------------------------------- */

typedef struct monitored {
    pid_t pid;
    int out, err;
    unsigned port;
} monitored;

/* Whether this narwhal serves --monitor (built with libmicrohttpd). */
static int have_monitor(void)
{
    nw_result r;
    const char *version[] = {"--version", NULL};
    run(&r, version);
    return strstr(r.out, "\n--monitor: built in\n") != NULL;
}

/* stderr so far, into buf. */
static void read_err(const monitored *m, char *buf, size_t cap)
{
    ssize_t n = pread(m->err, buf, cap - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
}

/* Waits (up to `seconds`) for `what` on stderr. */
static int wait_err(const monitored *m, const char *what, double seconds, char *buf, size_t cap)
{
    for (double t0 = nw_seconds(); nw_seconds() - t0 < seconds; usleep(50 * 1000)) {
        read_err(m, buf, cap);
        if (strstr(buf, what))
            return 1;
    }
    return 0;
}

/* An endless pipelined chain serving its monitor on a free port, lingering after its end. */
static void start_monitored(monitored *m)
{
    static char err[NW_OUTPUT_MAX];
    write_chain(0);
    const char *args[] = {"run", at("chain.xml"), "--conf", at("conf"), "--pipeline", "--quiet", "--monitor", "0",
                          "--monitor-linger", "60", NULL};
    m->out = nw_tempfile();
    m->err = nw_tempfile();
    m->pid = nw_spawn(args, NULL, m->out, m->err);
    ck_assert_int_gt(m->pid, 0);
    ck_assert_msg(wait_err(m, "narwhal: monitor: http://127.0.0.1:", 30, err, sizeof err), "no address in:\n%s", err);
    const char *p = strstr(err, "http://127.0.0.1:");
    ck_assert_int_eq(sscanf(p, "http://127.0.0.1:%u/", &m->port), 1);
    ck_assert_uint_gt(m->port, 0);
}

/* SIGINT ends the run (the monitor then says it is done), a second one the lingering. */
static void stop_monitored(monitored *m, char *err, size_t cap)
{
    nw_result r;
    kill(m->pid, SIGINT);
    ck_assert_msg(wait_err(m, "narwhal: monitor: the session is done;", 60, err, cap), "no end in:\n%s", err);
    kill(m->pid, SIGINT);
    ck_assert_int_eq(nw_wait(&r, m->pid, 30, 0, 0), 0);
    ck_assert(!r.timed_out);
    ck_assert_int_eq(r.status, 0);
    close(m->out);
    close(m->err);
}

/* GET path from the monitor: the HTTP status, and the body in body. */
static int http_get(unsigned port, const char *path, char *body, size_t cap)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct timeval limit = {.tv_sec = 10};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char request[512];
    int n = snprintf(request, sizeof request, "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
    ck_assert_int_eq(write(fd, request, (size_t)n), n);
    static char reply[1 << 20];
    size_t got = 0;
    ssize_t k;
    while (got + 1 < sizeof reply && (k = read(fd, reply + got, sizeof reply - 1 - got)) > 0)
        got += (size_t)k;
    reply[got] = '\0';
    close(fd);
    int status = 0;
    ck_assert_int_eq(sscanf(reply, "HTTP/1.%*d %d", &status), 1);
    const char *start = strstr(reply, "\r\n\r\n");
    ck_assert_ptr_nonnull(start);
    snprintf(body, cap, "%s", start + 4);
    return status;
}

/* A number field of a JSON document ("key":N). */
static double json_number(const char *doc, const char *key)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *p = strstr(doc, pattern);
    ck_assert_msg(p != NULL, "no %s in %s", key, doc);
    return strtod(p + strlen(pattern), NULL);
}

START_TEST(the_json_endpoints_follow_the_run)
{
    if (not_ready[0])
        TK_SKIP("%s", not_ready);
    if (!have_monitor())
        TK_SKIP("this narwhal was built without libmicrohttpd: no --monitor");
    monitored m;
    static char body[1 << 20], err[NW_OUTPUT_MAX];
    start_monitored(&m);
    usleep(1500 * 1000);
    ck_assert_int_eq(http_get(m.port, "/api/status", body, sizeof body), 200);
    ck_assert_ptr_nonnull(strstr(body, "\"state\":\"running\""));
    ck_assert_ptr_nonnull(strstr(body, "\"mode\":\"pipelined\",\"ring\":4"));
    ck_assert_ptr_nonnull(strstr(body, "\"rings\":[{\"from\":\"generator\",\"to\":\"histo\",\"input\":0,"));
    double first = json_number(body, "crystal_events");
    usleep(1500 * 1000);
    ck_assert_int_eq(http_get(m.port, "/api/status", body, sizeof body), 200);
    ck_assert_double_gt(json_number(body, "crystal_events"), first);
    ck_assert_double_gt(json_number(body, "crystal_rate"), 0);
    ck_assert_ptr_nonnull(strstr(body, "\"busiest\":\""));
    ck_assert_int_eq(http_get(m.port, "/api/actors", body, sizeof body), 200);
    ck_assert_ptr_nonnull(strstr(body, "{\"name\":\"generator\",\"library\":\"generator.so\",\"role\":\"producer\""));
    ck_assert_ptr_nonnull(strstr(body, "\"progress\":{\"done\":"));
    ck_assert_ptr_nonnull(strstr(body, ",\"total\":0,\"unit\":\"events\"}")); /* Events 0: no total */
    /* Spectra come with the histogrammer's blocks, at most a second apart. */
    for (double t0 = nw_seconds(); !strstr(body, "\"name\":\"cores\"") && nw_seconds() - t0 < 10; usleep(200 * 1000))
        ck_assert_int_eq(http_get(m.port, "/api/spectra", body, sizeof body), 200);
    ck_assert_ptr_nonnull(strstr(body, "{\"actor\":\"histo\",\"name\":\"core\",\"title\":\"crystal.core\","));
    ck_assert_ptr_nonnull(strstr(body, "\"name\":\"cores\",\"title\":\"crystal.core, sum of 180 crystals\""));
    ck_assert_int_eq(http_get(m.port, "/api/spectrum?name=core&actor=histo", body, sizeof body), 200);
    ck_assert_double_eq(json_number(body, "bins"), 2048);
    ck_assert_double_eq(json_number(body, "group"), 1);
    double entries = json_number(body, "entries"), sum = 0;
    ck_assert_double_gt(entries, 0);
    for (const char *p = strstr(body, "\"counts\":[") + 10; *p && *p != ']'; p++)
        sum += strtod(p, (char **)&p);
    ck_assert_double_eq(sum, entries);
    ck_assert_int_eq(http_get(m.port, "/api/spectrum?name=cores&bins=100", body, sizeof body), 200);
    ck_assert_double_eq(json_number(body, "group"), 6);
    ck_assert_double_eq(json_number(body, "shown_bins"), 86);
    ck_assert_int_eq(http_get(m.port, "/api/spectrum?name=nothing", body, sizeof body), 404);
    ck_assert_int_eq(http_get(m.port, "/api/spectrum", body, sizeof body), 400);
    ck_assert_int_eq(http_get(m.port, "/nowhere", body, sizeof body), 404);
    ck_assert_int_eq(http_get(m.port, "/", body, sizeof body), 200);
    ck_assert_ptr_nonnull(strstr(body, "<svg id=\"spectrum\""));
    /* Self-contained: nothing fetched from elsewhere (the one URL names SVG's namespace). */
    ck_assert_uint_eq(tk_count(body, "http://"), tk_count(body, "http://www.w3.org/2000/svg"));
    ck_assert_ptr_null(strstr(body, "https://"));
    ck_assert_ptr_null(strstr(body, " src="));
    ck_assert_ptr_null(strstr(body, "<link"));
    stop_monitored(&m, err, sizeof err);
}
END_TEST

/* After the run, the linger keeps its final state. */
START_TEST(the_final_state_stays_while_it_lingers)
{
    if (not_ready[0])
        TK_SKIP("%s", not_ready);
    if (!have_monitor())
        TK_SKIP("this narwhal was built without libmicrohttpd: no --monitor");
    monitored m;
    static char body[1 << 20], err[NW_OUTPUT_MAX];
    nw_result r;
    start_monitored(&m);
    usleep(1000 * 1000);
    kill(m.pid, SIGINT);
    ck_assert_msg(wait_err(&m, "narwhal: monitor: the session is done;", 60, err, sizeof err), "%s", err);
    ck_assert_int_eq(http_get(m.port, "/api/status", body, sizeof body), 200);
    ck_assert_ptr_nonnull(strstr(body, "\"state\":\"done\""));
    ck_assert_ptr_nonnull(strstr(body, "\"rings\":[]"));
    ck_assert_int_eq(http_get(m.port, "/api/spectra", body, sizeof body), 200);
    ck_assert_ptr_nonnull(strstr(body, "\"name\":\"core\"")); /* the final snapshot */
    kill(m.pid, SIGINT);
    ck_assert_int_eq(nw_wait(&r, m.pid, 30, 0, 0), 0);
    ck_assert_int_eq(r.status, 0);
    close(m.out);
    close(m.err);
}
END_TEST

/* The page as headless Chromium renders it, its script run. */
static int dump_dom(unsigned port, char *dom, size_t cap)
{
    char cmd[PATH_MAX + 256];
    snprintf(cmd, sizeof cmd,
             "timeout 90 chromium --headless --no-sandbox --disable-gpu --user-data-dir=%s "
             "--virtual-time-budget=4000 --dump-dom http://127.0.0.1:%u/ 2>/dev/null",
             at("chromium"), port);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = fread(dom, 1, cap - 1, p);
    dom[n] = '\0';
    return pclose(p);
}

/* The text of the element with this id (up to the next tag). */
static void element_text(const char *dom, const char *id, char *out, size_t cap)
{
    char pattern[96];
    snprintf(pattern, sizeof pattern, "id=\"%s\"", id);
    const char *p = strstr(dom, pattern);
    ck_assert_msg(p != NULL, "no #%s in the page", id);
    p = strchr(p, '>') + 1;
    size_t n = strcspn(p, "<");
    snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
}

static double attribute_number(const char *dom, const char *attribute)
{
    const char *p = strstr(dom, attribute);
    ck_assert_msg(p != NULL, "no %s in the page", attribute);
    return strtod(p + strlen(attribute), NULL);
}

/* What one rendering shows: the spectrum drawn, the rates filled in. */
static void check_page(const char *dom, double *entries, char *crystal_events, size_t cap)
{
    char text[128];
    ck_assert_ptr_nonnull(strstr(dom, "data-refreshes=\""));
    ck_assert_double_gt(attribute_number(dom, "data-refreshes=\""), 0);
    element_text(dom, "state", text, sizeof text);
    ck_assert_str_eq(text, "running");
    *entries = attribute_number(dom, "data-entries=\"");
    ck_assert_double_gt(*entries, 0);
    ck_assert_double_eq(attribute_number(dom, "data-bins=\""), 683); /* 2048 bins, 3 to a point */
    /* The path climbs off the axis (y 340) somewhere: counts were drawn. */
    const char *d = strstr(dom, "id=\"spectrum-path\" d=\"M70 340");
    ck_assert_msg(d != NULL, "no spectrum path");
    const char *end = strchr(d + strlen("id=\"spectrum-path\" d=\""), '"');
    int drawn = 0;
    for (const char *v = strchr(d, 'V'); v && v < end; v = strchr(v + 1, 'V'))
        drawn |= strtod(v + 1, NULL) < 339;
    ck_assert(drawn);
    const char *row = strstr(dom, "data-actor=\"generator\"");
    ck_assert_ptr_nonnull(row);
    const char *rate = strstr(row, "class=\"rate-out\">");
    ck_assert_ptr_nonnull(rate);
    ck_assert_double_gt(strtod(rate + strlen("class=\"rate-out\">"), NULL), 0);
    element_text(dom, "crystal-events", crystal_events, cap);
    ck_assert_str_ne(crystal_events, "0");
}

START_TEST(the_page_shows_the_spectrum_and_rates_in_chromium)
{
    if (not_ready[0])
        TK_SKIP("%s", not_ready);
    if (!have_monitor())
        TK_SKIP("this narwhal was built without libmicrohttpd: no --monitor");
    if (system("command -v chromium >/dev/null 2>&1") != 0)
        TK_SKIP("no chromium here (apt-get install chromium)");
    monitored m;
    static char dom[1 << 20], err[NW_OUTPUT_MAX];
    char first[64], second[64];
    double before, after;
    start_monitored(&m);
    usleep(1000 * 1000);
    ck_assert_int_eq(dump_dom(m.port, dom, sizeof dom), 0);
    check_page(dom, &before, first, sizeof first);
    /* The page follows the run: a later rendering shows more.  On a loaded
     * machine (or under the sanitizers) one rendering may come before the
     * run has moved on, so up to ten more are allowed, each a whole chromium
     * start, until both the entries and the crystal-events count moved. */
    int tries = 0;
    do {
        ck_assert_int_eq(dump_dom(m.port, dom, sizeof dom), 0);
        check_page(dom, &after, second, sizeof second);
    } while ((after <= before || strcmp(first, second) == 0) && ++tries < 10 && usleep(500 * 1000) == 0);
    ck_assert_double_gt(after, before);
    ck_assert_str_ne(first, second);
    stop_monitored(&m, err, sizeof err);
}
END_TEST

static Suite *monitor_suite(void)
{
    Suite *s = suite_create("monitor");
    TCase *cli = tcase_create("cli");
    tcase_add_test(cli, version_and_help_for_every_command);
    tcase_add_test(cli, live_options_are_checked);
    suite_add_tcase(s, cli);
    TCase *live = tcase_create("live");
    tcase_add_checked_fixture(live, setup, teardown);
    tcase_set_timeout(live, 240);
    tcase_add_test(live, progress_lines_go_to_a_pipe_every_interval);
    tcase_add_test(live, ctrl_c_says_the_run_is_stopping);
    tcase_add_test(live, the_json_endpoints_follow_the_run);
    tcase_add_test(live, the_final_state_stays_while_it_lingers);
    tcase_add_test(live, the_page_shows_the_spectrum_and_rates_in_chromium);
    suite_add_tcase(s, live);
    return s;
}

int main(void) { return tk_run_suite(monitor_suite()); }

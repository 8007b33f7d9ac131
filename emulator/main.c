/* main.c: the `narwhal` command line: run, validate, inspect and dump, with their options. */
#include "dump.h"
#include "emu.h"
#include "inspect.h"
#include "calls.h"
#include "live.h"
#include "loader.h"
#include "mainconf.h"
#include "monitor.h"
#include "mpi.h"
#include "progress.h"
#include "report.h"
#include "run.h"
#include "summary.h"
#include "topology.h"

#include <errno.h>
#include <libxml/parser.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_ACTOR_DIRS 16

typedef struct options {
    const char *command;
    const char *target; /* the topology, library or ADF file */
    const char *dirs[MAX_ACTOR_DIRS];
    size_t n_dirs;
    const char *conf_dir;
    const char *main_file; /* --main: NARVAL's main configuration file, naming the topology */
    unsigned long long blocks;
    unsigned long long max_frames;
    unsigned long long ring;
    unsigned long long cycles;
    unsigned long long pause_every;
    int strict;
    int pipeline;
    int verbose;
    const char *report;
    const char *plots;
    const char *histo;
    const char *narwhal;
    double window;
    int help;        /* COMMAND --help */
    double progress; /* --progress seconds; -1: the default (1 on a terminal, else 10) */
    int quiet;
    long monitor;    /* --monitor port; -1: none */
    const char *monitor_bind;
    double linger;   /* --monitor-linger seconds; -1: not given */
    const char *place;  /* --place FILE: which rank runs each actor under mpirun (mpi_place.h) */
    double mpi_timeout; /* --mpi-timeout seconds; 0: not given (EMU_MPI_TIMEOUT) */
} options;

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("narwhal: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(" (see narwhal --help)\n", stderr);
    va_end(ap);
    return EMU_E_TOPOLOGY;
}

static int parse_count(const char *text, const char *option, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (!text[0] || *end || errno || text[0] == '-' || v == 0)
        return usage_error("%s needs a positive whole number", option);
    *out = v;
    return EMU_OK;
}

/* Seconds: a number from 0 to a day. */
static int parse_seconds(const char *text, const char *option, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (!text[0] || *end || errno || !(v >= 0 && v <= 86400))
        return usage_error("%s needs seconds, from 0 to 86400", option);
    *out = v;
    return EMU_OK;
}

static int parse_port(const char *text, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (!text[0] || *end || errno || v < 0 || v > 65535)
        return usage_error("--monitor needs a port, from 0 (any free one) to 65535");
    *out = v;
    return EMU_OK;
}

static int parse_window(const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (!text[0] || *end || errno || !(v > 0 && v <= 1000))
        return usage_error("--window needs a half-width in keV, above 0 and at most 1000");
    *out = v;
    return EMU_OK;
}

/* The option's value: "--opt VALUE" or "--opt=VALUE". */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] != '\0' || *i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

static int is_option(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

static int parse_option(int argc, char **argv, int *i, options *o)
{
    const char *arg = argv[*i], *value;
    if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0) {
        o->verbose = 1;
        return EMU_OK;
    }
    if (strcmp(arg, "--pipeline") == 0) {
        o->pipeline = 1;
        return EMU_OK;
    }
    if (strcmp(arg, "--strict") == 0) {
        o->strict = 1;
        return EMU_OK;
    }
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
        o->help = 1;
        return EMU_OK;
    }
    if (strcmp(arg, "--quiet") == 0 || strcmp(arg, "-q") == 0) {
        o->quiet = 1;
        return EMU_OK;
    }
    if (is_option(arg, "--progress") && (value = option_value(argc, argv, i, "--progress")))
        return parse_seconds(value, "--progress", &o->progress);
    if (is_option(arg, "--monitor") && (value = option_value(argc, argv, i, "--monitor")))
        return parse_port(value, &o->monitor);
    if (is_option(arg, "--monitor-bind") && (value = option_value(argc, argv, i, "--monitor-bind"))) {
        o->monitor_bind = value;
        return EMU_OK;
    }
    if (is_option(arg, "--monitor-linger") && (value = option_value(argc, argv, i, "--monitor-linger")))
        return parse_seconds(value, "--monitor-linger", &o->linger);
    if (is_option(arg, "--cycles") && (value = option_value(argc, argv, i, "--cycles")))
        return parse_count(value, "--cycles", &o->cycles);
    if (is_option(arg, "--pause-every") && (value = option_value(argc, argv, i, "--pause-every")))
        return parse_count(value, "--pause-every", &o->pause_every);
    if (is_option(arg, "--actors") && (value = option_value(argc, argv, i, "--actors"))) {
        if (o->n_dirs == MAX_ACTOR_DIRS)
            return usage_error("at most %d --actors directories", MAX_ACTOR_DIRS);
        o->dirs[o->n_dirs++] = value;
        return EMU_OK;
    }
    if (is_option(arg, "--conf") && (value = option_value(argc, argv, i, "--conf"))) {
        o->conf_dir = value;
        return EMU_OK;
    }
    if (is_option(arg, "--main") && (value = option_value(argc, argv, i, "--main"))) {
        o->main_file = value;
        return EMU_OK;
    }
    if (is_option(arg, "--blocks") && (value = option_value(argc, argv, i, "--blocks")))
        return parse_count(value, "--blocks", &o->blocks);
    if (is_option(arg, "--max") && (value = option_value(argc, argv, i, "--max")))
        return parse_count(value, "--max", &o->max_frames);
    if (is_option(arg, "--ring") && (value = option_value(argc, argv, i, "--ring")))
        return parse_count(value, "--ring", &o->ring);
    if (is_option(arg, "--report") && (value = option_value(argc, argv, i, "--report"))) {
        o->report = value;
        return EMU_OK;
    }
    if (is_option(arg, "--plots") && (value = option_value(argc, argv, i, "--plots"))) {
        o->plots = value;
        return EMU_OK;
    }
    if (is_option(arg, "--histo") && (value = option_value(argc, argv, i, "--histo"))) {
        o->histo = value;
        return EMU_OK;
    }
    if (is_option(arg, "--window") && (value = option_value(argc, argv, i, "--window")))
        return parse_window(value, &o->window);
    if (is_option(arg, "--place") && (value = option_value(argc, argv, i, "--place"))) {
        o->place = value;
        return EMU_OK;
    }
    if (is_option(arg, "--mpi-timeout") && (value = option_value(argc, argv, i, "--mpi-timeout"))) {
        if (parse_seconds(value, "--mpi-timeout", &o->mpi_timeout) != EMU_OK)
            return EMU_E_TOPOLOGY;
        return o->mpi_timeout > 0 ? EMU_OK : usage_error("--mpi-timeout needs more than 0 seconds");
    }
    if (is_option(arg, "--narwhal") && (value = option_value(argc, argv, i, "--narwhal"))) {
        o->narwhal = value;
        return EMU_OK;
    }
    if (is_option(arg, "--actors") || is_option(arg, "--conf") || is_option(arg, "--main") ||
        is_option(arg, "--blocks") ||
        is_option(arg, "--max") || is_option(arg, "--ring") || is_option(arg, "--report") ||
        is_option(arg, "--plots") || is_option(arg, "--histo") || is_option(arg, "--window") ||
        is_option(arg, "--narwhal") ||
        is_option(arg, "--cycles") || is_option(arg, "--pause-every") || is_option(arg, "--progress") ||
        is_option(arg, "--monitor") || is_option(arg, "--monitor-bind") || is_option(arg, "--monitor-linger") ||
        is_option(arg, "--place") || is_option(arg, "--mpi-timeout"))
        return usage_error("%s needs a value", arg);
    return usage_error("unknown option '%s'", arg);
}

/* Which options each command takes. */
enum {
    TAKES_ACTORS = 1,
    TAKES_CONF = 2, /* --conf, --main */
    TAKES_BLOCKS = 4,
    TAKES_MAX = 8,
    TAKES_PIPELINE = 16,
    TAKES_REPORT = 32,
    TAKES_SUMMARY = 64, /* --plots, --histo, --window, --narwhal */
    TAKES_RUN_CONTROL = 128, /* --strict, --cycles, --pause-every */
    TAKES_LIVE = 256,        /* --progress, --quiet, --monitor, --monitor-bind, --monitor-linger */
};

/* The first live option given, for a message; NULL: none. */
static const char *live_option(const options *o)
{
    return o->progress >= 0 ? "progress"
           : o->quiet       ? "quiet"
           : o->monitor >= 0 ? "monitor"
           : o->monitor_bind ? "monitor-bind"
           : o->linger >= 0  ? "monitor-linger"
                             : NULL;
}

static int check_allowed(const options *o, unsigned takes)
{
    if (o->n_dirs && !(takes & TAKES_ACTORS))
        return usage_error("'%s' takes no --actors", o->command);
    if (o->conf_dir && !(takes & TAKES_CONF))
        return usage_error("'%s' takes no --conf", o->command);
    if (o->main_file && !(takes & TAKES_CONF))
        return usage_error("'%s' takes no --main", o->command);
    if (o->blocks && !(takes & TAKES_BLOCKS))
        return usage_error("'%s' takes no --blocks", o->command);
    if (o->max_frames && !(takes & TAKES_MAX))
        return usage_error("'%s' takes no --max", o->command);
    if ((o->pipeline || o->ring) && !(takes & TAKES_PIPELINE))
        return usage_error("'%s' takes no --%s", o->command, o->pipeline ? "pipeline" : "ring");
    if (o->report && !(takes & TAKES_REPORT))
        return usage_error("'%s' takes no --report", o->command);
    if ((o->plots || o->histo || o->window || o->narwhal) && !(takes & TAKES_SUMMARY))
        return usage_error("'%s' takes no --%s", o->command,
                           o->plots ? "plots" : o->histo ? "histo" : o->window ? "window" : "narwhal");
    if (o->ring && !o->pipeline)
        return usage_error("--ring sets the depth of --pipeline's rings; add --pipeline");
    if (o->ring > EMU_MAX_RING)
        return usage_error("--ring %llu is deeper than the limit of %u", o->ring, EMU_MAX_RING);
    if ((o->strict || o->cycles || o->pause_every) && !(takes & TAKES_RUN_CONTROL))
        return usage_error("'%s' takes no --%s", o->command,
                           o->strict ? "strict" : o->cycles ? "cycles" : "pause-every");
    if (o->cycles > EMU_MAX_CYCLES)
        return usage_error("--cycles %llu is more than the limit of %u", o->cycles, EMU_MAX_CYCLES);
    if ((o->place || o->mpi_timeout) && !(takes & TAKES_RUN_CONTROL))
        return usage_error("'%s' takes no --%s", o->command, o->place ? "place" : "mpi-timeout");
    if (live_option(o) && !(takes & TAKES_LIVE))
        return usage_error("'%s' takes no --%s", o->command, live_option(o));
    if ((o->monitor_bind || o->linger >= 0) && o->monitor < 0)
        return usage_error("--%s goes with --monitor PORT", o->monitor_bind ? "monitor-bind" : "monitor-linger");
    if (o->quiet && o->progress > 0)
        return usage_error("--quiet and --progress %g say opposite things", o->progress);
    return EMU_OK;
}

static int parse_args(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->command = argv[1];
    o->progress = o->linger = -1;
    o->monitor = -1;
    for (int i = 2; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1] != '\0') {
            if (parse_option(argc, argv, &i, o) != EMU_OK)
                return EMU_E_TOPOLOGY;
        } else if (o->target) {
            return usage_error("one file only; unexpected '%s'", argv[i]);
        } else {
            o->target = argv[i];
        }
    }
    if (o->help)
        return EMU_OK;
    if (o->target && o->main_file)
        return usage_error("--main %s names the topology: give no '%s'", o->main_file, o->target);
    if (!o->target && !o->main_file)
        return usage_error("'%s' needs a file", o->command);
    return EMU_OK;
}

typedef struct session {
    options o;
    char *own_dirs[2]; /* the default actor directories, freed at the end */
    emu_topology *t;
    emu_chain *c;
    emu_run_result res;
    char err[2048];
    emu_mpi *mpi; /* under mpirun, `run`: the session across ranks */
} session;

/* A directory relative to this program's: "../actors" finds build/actors
 * from build/bin/narwhal, "../lib/narwhal/actors" an installed tree. */
static char *beside_program(const char *relative)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash || (size_t)(slash - exe) + 1 + strlen(relative) >= sizeof exe)
        return NULL;
    strcpy(slash + 1, relative);
    return strdup(exe);
}

/* The default --actors directories, before the topology's own. */
static void default_actor_dirs(session *s)
{
    static const char *const relative[] = {"../actors", "../lib/narwhal/actors"};
    for (size_t i = 0; i < 2; i++) {
        s->own_dirs[i] = beside_program(relative[i]);
        if (s->own_dirs[i])
            s->o.dirs[s->o.n_dirs++] = s->own_dirs[i];
    }
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* --conf may list directories separated by ':', most specific first (the
 * kit reads each actor's file from the first that has one); each must exist. */
static int check_conf_dirs(const char *list)
{
    char dir[PATH_MAX];
    for (const char *d = list;; d++) {
        size_t n = strcspn(d, ":");
        snprintf(dir, sizeof dir, "%.*s", (int)n, d);
        if (!is_dir(n ? dir : "."))
            return usage_error("--conf %s is not a directory", n ? dir : ".");
        d += n;
        if (!*d)
            return EMU_OK;
    }
}

static int prepare_dirs(session *s)
{
    if (s->o.n_dirs == 0) {
        default_actor_dirs(s);
        s->o.dirs[s->o.n_dirs++] = s->t->dir;
    }
    s->t->conf_list = s->o.conf_dir;
    return s->o.conf_dir ? check_conf_dirs(s->o.conf_dir) : EMU_OK;
}

/* Everything up to the first process_* call: topology, libraries, symbols. */
static int load(session *s)
{
    FILE *notes = s->o.verbose ? stderr : NULL;
    int rc = s->o.main_file ? emu_main_read(s->o.main_file, notes, &s->t, s->err, sizeof s->err)
                            : emu_topology_read(s->o.target, notes, &s->t, s->err, sizeof s->err);
    if (rc == EMU_OK && s->mpi) /* before the libraries: a rank that cannot load one still has its links */
        rc = emu_mpi_place(s->mpi, s->t, s->o.place, s->err, sizeof s->err);
    if (rc == EMU_OK)
        rc = prepare_dirs(s);
    if (rc == EMU_OK)
        rc = emu_chain_load(s->t, s->o.dirs, s->o.n_dirs, &s->c, s->err, sizeof s->err);
    if (rc == EMU_OK && s->mpi)
        rc = emu_mpi_claim(s->mpi, s->c);
    if (rc == EMU_OK && emu_run_result_init(&s->res, s->t->n_actors) != EMU_OK)
        rc = emu_fail(s->err, sizeof s->err, EMU_E_RUN, "%s: out of memory for the counts of %zu actors",
                      s->o.main_file ? s->o.main_file : s->o.target, s->t->n_actors);
    return rc;
}

static int command_validate(session *s)
{
    int rc = load(s);
    if (rc != EMU_OK)
        return rc;
    if (s->o.verbose)
        emu_chain_print_conf(stderr, s->c);
    rc = emu_configure(s->c, &s->res, s->o.verbose ? stderr : NULL, s->err, sizeof s->err);
    if (rc != EMU_OK) {
        fprintf(stderr, "narwhal: %s\n", s->err);
        s->err[0] = '\0';
        return rc;
    }
    emu_chain_print_conf(stdout, s->c);
    printf("%s: ok (%zu actors: ", s->t->path, s->t->n_actors);
    emu_report_chain(stdout, s->t);
    printf(")\n");
    return EMU_OK;
}

/* The report is written whatever became of the run: a failed run's counts
 * say how far its frames got. */
static int write_report(session *s)
{
    FILE *fp = fopen(s->o.report, "w");
    int ok = fp && emu_report_write(fp, s->c, &s->res) == 0;
    if (fp && fclose(fp) != 0)
        ok = 0;
    if (!ok)
        fprintf(stderr, "narwhal: --report %s: cannot write: %s\n", s->o.report, strerror(errno));
    return ok ? EMU_OK : EMU_E_RUN;
}

/* The live view of a run (live.h): the progress line, the monitor. */
typedef struct live_view {
    int on;
    emu_live live;
    emu_progress progress;
    emu_monitor *monitor;
    unsigned port;
} live_view;

static const char *monitor_host(const options *o) { return o->monitor_bind ? o->monitor_bind : "127.0.0.1"; }

/* "http://HOST:PORT/", an IPv6 host in brackets. */
static void monitor_url(char *url, size_t len, const options *o, unsigned port)
{
    const char *host = monitor_host(o);
    snprintf(url, len, strchr(host, ':') ? "http://[%s]:%u/" : "http://%s:%u/", host, port);
}

/* Started before the first process_config, so that the page shows the run
 * from its start; nothing at all with --quiet and no --monitor. */
static int live_begin(session *s, live_view *v, unsigned ring_depth)
{
    const options *o = &s->o;
    int tty = isatty(STDERR_FILENO);
    double every = o->quiet ? 0 : o->progress >= 0 ? o->progress : tty ? 1 : 10;
    char url[128];
    memset(v, 0, sizeof *v);
    if (every == 0 && o->monitor < 0)
        return EMU_OK;
    if (emu_live_init(&v->live, s->c, stderr) != EMU_OK) {
        emu_live_free(&v->live);
        return emu_fail(s->err, sizeof s->err, EMU_E_RUN, "narwhal: out of memory");
    }
    v->on = 1;
    v->live.ring_depth = ring_depth;
    v->live.spectra_on = o->monitor >= 0;
    v->progress = (emu_progress){.out = stderr, .tty = tty, .every = every, .last_print = emu_now()};
    if (o->monitor >= 0) {
        int rc = emu_monitor_start(&v->monitor, &v->live, o->monitor_bind, (unsigned)o->monitor, &v->port, s->err,
                                   sizeof s->err);
        if (rc != EMU_OK) {
            emu_live_free(&v->live);
            v->on = 0;
            return rc;
        }
        monitor_url(url, sizeof url, o, v->port);
        fprintf(stderr, "narwhal: monitor: %s (for scripts: %sapi/status, api/actors, api/spectra, "
                        "api/spectrum?name=NAME)\n", url, url);
    }
    double period = every > 0 && every < 1 ? every : 1;
    if (emu_live_start_ticker(&v->live, period, emu_progress_tick, &v->progress) != EMU_OK)
        fprintf(stderr, "narwhal: warning: cannot start the progress thread: no progress line, no rates\n");
    return EMU_OK;
}

/* Before the table: the last line goes, so that the table starts clean. */
static void live_stop_ticking(live_view *v)
{
    if (!v->on)
        return;
    emu_live_stop_ticker(&v->live);
    emu_progress_end(&v->progress);
}

static volatile sig_atomic_t linger_ended;

static void end_linger(int sig) { linger_ended = 1; }

/* --monitor-linger: the page keeps showing the session's final state. */
static void linger(const options *o, unsigned port, const char *state)
{
    struct sigaction act, old_int, old_term;
    const struct timespec step = {.tv_nsec = 100 * 1000 * 1000};
    char url[128];
    monitor_url(url, sizeof url, o, port);
    fprintf(stderr, "narwhal: monitor: the session is %s; %s shows it for %g s more (Ctrl-C ends that)\n", state,
            url, o->linger);
    fflush(stderr);
    memset(&act, 0, sizeof act);
    act.sa_handler = end_linger;
    sigemptyset(&act.sa_mask);
    sigaction(SIGINT, &act, &old_int);
    sigaction(SIGTERM, &act, &old_term);
    for (double until = emu_now() + o->linger; !linger_ended && emu_now() < until;)
        nanosleep(&step, NULL);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
}

static void live_end(session *s, live_view *v)
{
    if (!v->on)
        return;
    if (v->monitor && s->o.linger > 0) {
        fflush(stdout);
        linger(&s->o, v->port, emu_state_name((enum emu_state)atomic_load(&v->live.state)));
    }
    emu_monitor_stop(v->monitor);
    emu_live_free(&v->live);
}

/* Under mpirun: the session across ranks, and what a run across ranks
 * cannot do or does by default (README.md, "Running across hosts"). */
static int begin_across_ranks(session *s)
{
    options *o = &s->o;
    int ranks = emu_mpi_launched();
    if (ranks == 0 || (ranks == 1 && !emu_mpi_available))
        return EMU_OK;
    if (o->cycles > 1 || o->pause_every)
        return usage_error("--%s cannot run under mpirun: every rank would have to pause or reset together",
                           o->cycles > 1 ? "cycles" : "pause-every");
    if (o->monitor >= 0)
        return usage_error("--monitor cannot run under mpirun: each rank sees only its own actors");
    o->pipeline = 1;
    if (o->progress < 0) /* a rank's progress line would count its own actors only */
        o->quiet = 1;
    return emu_mpi_start(&s->mpi, o->mpi_timeout > 0 ? o->mpi_timeout : EMU_MPI_TIMEOUT, s->err, sizeof s->err);
}

static int command_run(session *s)
{
    int rc = begin_across_ranks(s);
    if (rc == EMU_OK)
        rc = load(s);
    if (rc != EMU_OK)
        return rc;
    if (s->o.verbose)
        emu_chain_print_conf(stderr, s->c);
    FILE *log = s->mpi ? emu_mpi_log(s->mpi) : stderr;
    emu_run_options ro = {.max_blocks = s->o.blocks,
                          .cycles = (unsigned)s->o.cycles,
                          .pause_every = s->o.pause_every,
                          .strict = s->o.strict,
                          .log = log,
                          .trace = s->o.verbose ? log : NULL,
                          .mpi = s->mpi,
                          .ring_depth = s->o.pipeline ? (s->o.ring ? (unsigned)s->o.ring : 4) : 0};
    live_view v;
    if ((rc = live_begin(s, &v, ro.ring_depth)) != EMU_OK)
        return rc;
    ro.live = v.on ? &v.live : NULL;
    rc = emu_run(s->c, &ro, &s->res, s->err, sizeof s->err);
    /* The failures were logged as they happened. */
    s->err[0] = '\0';
    live_stop_ticking(&v);
    fflush(stderr);
    if (s->mpi && emu_mpi_gather(s->mpi, &s->res) != EMU_OK)
        rc = EMU_E_RUN;
    int prints = !s->mpi || emu_mpi_rank(s->mpi) == 0; /* rank 0 prints every rank's rows */
    if (prints)
        emu_report_print(stdout, s->c, &s->res);
    if (prints && s->o.report && write_report(s) != EMU_OK && rc == EMU_OK)
        rc = EMU_E_RUN;
    live_end(s, &v);
    return rc;
}

/* The analysis library reads the reports the emulator writes: every kind of frame it lists per actor. */
_Static_assert(EMU_MAX_KINDS <= ANA_REPORT_KINDS, "narwhal summary must read every kind line of a run report");

/* The analysis library's outcome as the command's exit status: an input that
 * cannot be opened is a usage error (nothing was summarised), anything else a
 * failed summary. */
static int command_summary(session *s)
{
    ana_summary_options so = {.report = s->o.report, .plots = s->o.plots, .histo = s->o.histo, .window = s->o.window,
                              .narwhal = s->o.narwhal};
    int rc = ana_summary_run(s->o.target, &so, stdout, s->err, sizeof s->err);
    return rc == ANA_OK ? EMU_OK : rc == ANA_E_OPEN ? EMU_E_TOPOLOGY : EMU_E_RUN;
}

/* Each command's part of the help: synopsis and what it does (`narwhal help COMMAND`). */
typedef struct command_help {
    const char *name;
    const char *text;
} command_help;

static const command_help commands[] = {
    {"run",
     "  narwhal run TOPOLOGY.xml | --main FILE [--actors DIR] [--conf DIR] [--blocks N]\n"
     "              [--pipeline [--ring N]]\n"
     "              [--strict] [--cycles N] [--pause-every K] [--report FILE] [-v]\n"
     "              [--progress S | --quiet] [--monitor PORT [--monitor-bind ADDR] [--monitor-linger S]]\n"
     "  mpirun -np N narwhal run TOPOLOGY.xml [--place FILE] [--mpi-timeout S] ...\n"
     "      Loads every actor of the topology (any acyclic graph: README.md) and drives it as\n"
     "      NARVAL does, every lifecycle call going to the actors in topological order:\n"
     "      process_config, then process_register and process_initialise per actor, then a\n"
     "      run: process_start, the blocks (each producer fills a buffer, each intermediary\n"
     "      turns what it reads into its own, consumers take theirs), round after round (one\n"
     "      block of each producer in topology order, each through the whole graph, depth\n"
     "      first, before the next) until the producers' data end, each made N blocks\n"
     "      (--blocks), or SIGINT or SIGTERM arrives (the blocks in hand are finished);\n"
     "      then every intermediary gets one call with an empty input (its flush: what it\n"
     "      emits goes on; not with --strict), and process_stop.  With --cycles N,\n"
     "      N runs, each after the first preceded by process_reset and process_initialise, as\n"
     "      NARVAL's GUI makes them; a signal ends the session after the run in hand.\n"
     "      process_unload last.  Between two blocks a run pauses (process_pause, then\n"
     "      process_resume) at SIGTSTP (Ctrl-Z: the process then stops itself until SIGCONT,\n"
     "      as `fg` sends) and with --pause-every K after every K rounds of a run.\n"
     "      An actor's error aborts: no flush, no process_stop, no further run, only\n"
     "      process_unload of every registered actor (a failed process_stop still lets the\n"
     "      others stop: the run was ending).  By default every call is made on one thread\n"
     "      (gdb, valgrind); with --pipeline each actor's blocks run on its own thread, with a\n"
     "      ring of N buffers (--ring, default 4) per input: same blocks, same order, same\n"
     "      output, the actors working at the same time; a pause first drains the graph\n"
     "      (every block before it reaches the consumers), then a producer's thread makes\n"
     "      every pause and resume call while the others wait; after an error every thread\n"
     "      stops after its call in hand and the blocks still in the rings are dropped.\n"
     "      Prints a table per actor, summed over the runs: blocks (successful process_block\n"
     "      calls, end-of-data and flush calls included), top-level ADF frames and bytes in and\n"
     "      out, seconds in its calls and their share of the wall time; with --pipeline also\n"
     "      the seconds its thread waited for input and for room in its output ring.  Then the\n"
     "      producer's frames per second while blocks ran, the actor that spent the most time\n"
     "      in process_block, with --cycles a line per run, and the wall time.\n"
     "      An actor that answers NARVAL_E_OUTPUT_SIZE gets its output buffer enlarged (to what\n"
     "      it needs, at least twice the old size, at most 1 GiB) and the same call again.\n"
     "      --strict gives NARVAL's behaviour exactly: the topology's sizes, no flush call, and\n"
     "      NARVAL_E_OUTPUT_SIZE aborts the run, naming the <size> to raise (end of data\n"
     "      travels in-band, as a meta:eof frame).  Without it, where an actor runs on a GPU,\n"
     "      the blocks lie in pinned memory, which GPU actors upload without copying it first.\n"
     "      --report FILE also writes the table, and the frames each actor emitted by key id,\n"
     "      to FILE (tab-separated records, emulator/report.h) for `narwhal summary`.\n"},
    {"validate",
     "  narwhal validate TOPOLOGY.xml | --main FILE [--actors DIR] [--conf DIR] [-v]\n"
     "      Every check of `run` (XML, graph, libraries, symbols) and each library's\n"
     "      process_config; registers nothing.  Then prints, per actor, the directory its\n"
     "      process_config got and the file each configuration file there comes from, and\n"
     "      \"FILE: ok (N actors: a -> b -> c)\" (a graph: its edges, \"a -> b, a -> c, ...\"; with\n"
     "      -v the directories come first, on stderr).\n"},
    {"inspect",
     "  narwhal inspect ACTOR.so [--actors DIR]\n"
     "      The process_* symbols the library exports and its process_describe() text.\n"},
    {"dump",
     "  narwhal dump FILE.adf [--max N]\n"
     "      One line per frame (offset, length, id, name, event, timestamp), sub-frames\n"
     "      indented, known payloads summarised (data:psa, narwhal:crystal, narwhal:tracked,\n"
     "      narwhal:truth, meta:eof); at most N top-level frames.\n"},
    {"summary",
     "  narwhal summary FILE.adf [--narwhal FILE] [--report FILE] [--plots DIR] [--histo DIR]\n"
     "                  [--window KEV]\n"
     "      What a chain's output file says, for a physicist, physics first: the source by the\n"
     "      truth; per emitted line the tracked and untracked photopeak (centroid, FWHM, area,\n"
     "      efficiency per emitted gamma ray; a window of --window KEV, default 5, then 2 FWHM)\n"
     "      and the peak-to-total; the PSA's hits against the truth (rms per axis, against\n"
     "      energy); the events and frames, followed from the producer (--report of its run)\n"
     "      to the file, with what was rejected and by whom; the spectra and plots (--plots\n"
     "      DIR: CSV, gnuplot PNGs; --histo DIR: histo's files counted); the run's table.\n"
     "      Exit status 1 when the frames do not balance.  An AGATA-readable FILE.adf is read\n"
     "      with its Narwhal file (truth, tracked gamma rays, meta:eof): --narwhal FILE, else\n"
     "      FILE.narwhal.adf beside it when it exists (adf_writer's OtherFile beside).\n"},
    {"help",
     "  narwhal help [COMMAND] | COMMAND --help | --version\n"
     "      This text, or one command's part of it (what it does, the options it takes);\n"
     "      --version (or `narwhal version`): the version and what this build has (CUDA,\n"
     "      libmicrohttpd for --monitor).\n"},
};

/* The options, each with the names of the commands that take it. */
typedef struct option_help {
    const char *commands;
    const char *text;
} option_help;

static const option_help option_helps[] = {
    {"run validate inspect",
     "  --actors DIR  where libraries named in <library> are looked for (repeatable); default:\n"
     "                ../actors and ../lib/narwhal/actors beside the narwhal program (the build\n"
     "                tree, an installed tree), then the topology's directory.\n"
     "                A <library> with a '/' is relative to the topology's directory.\n"},
    {"run validate",
     "  --conf DIR    where each actor's configuration files are looked for: DIR/<actor>/, then\n"
     "                DIR; several DIRs separated by ':', most specific first.  Default, beside\n"
     "                the topology NAME.xml: conf/NAME/<actor>/, conf/<actor>/, conf/NAME/, conf/.\n"
     "                The actor sees the first file of each name along that list: process_config\n"
     "                gets the one of those directories that exists when only one does, else a\n"
     "                private directory of links to those files (removed at exit).  Actors of one\n"
     "                library that see different files each get their own copy of the library\n"
     "                (docs/HOSTING.md).\n"},
    {"run validate",
     "  --main FILE   NARVAL's main configuration file instead of TOPOLOGY.xml: a script naming\n"
     "                the instance (launch), the topology (set configuration_file), each actor's\n"
     "                library (set library) and directory (set directory_path); README.md.\n"},
    {"run",
     "  --blocks N    end each run after N blocks of each producer.\n"},
    {"run",
     "  --pipeline    one thread per actor, rings of buffers between them.\n"},
    {"run",
     "  --ring N      buffers per ring with --pipeline (1 to 1024; default 4).  An actor holds\n"
     "                its input buffer while it works on it: with 1 its neighbours wait for it,\n"
     "                from 2 on they overlap.\n"},
    {"run",
     "  --strict      NARVAL's host exactly: fixed buffers in plain (not pinned) memory, no flush\n"
     "                call, no retry.\n"},
    {"run",
     "  --cycles N    N runs (at most 100000; default 1): start, blocks, stop; then reset and\n"
     "                initialise before the next.\n"},
    {"run",
     "  --pause-every K  a pause/resume pair on every actor after every K rounds of a run (a\n"
     "                round: one block of each producer; for tests of pause and resume).\n"},
    {"run",
     "  --place FILE  under mpirun: which rank runs each actor, \"NAME RANK\" lines (NAME an actor\n"
     "                or a <hostname>).  Without it: a rank per distinct <hostname> in order of\n"
     "                appearance; a topology all on localhost is spread (producers dealt to the\n"
     "                ranks in turn, an actor with one input on its source's rank, joins on rank\n"
     "                0).  Under mpirun actors run as with --pipeline, blocks between ranks travel\n"
     "                as MPI messages, rank 0 prints the table with each actor's rank and host;\n"
     "                --cycles, --pause-every and --monitor are refused, SIGTSTP is ignored\n"
     "                (README.md, \"Running across hosts\").\n"},
    {"run",
     "  --mpi-timeout S  under mpirun: a rank that sends nothing (not even its heartbeat, one a\n"
     "                second) for S seconds (default 15) is presumed dead: every other rank\n"
     "                reports it and aborts.\n"},
    {"dump",
     "  --max N       dump at most N top-level frames.\n"},
    {"run validate",
     "  -v            notes on ignored topology elements, every call (process_block with its\n"
     "                sizes), buffer growth.\n"},
    {"run",
     "  --progress S  a line on stderr while blocks run: crystal-events (the producers' narwhal:crystal\n"
     "                and data:psa frames) and events (event-level frames of the last actor that makes\n"
     "                them) so far and per second, the busiest actor and, when every producer knows its\n"
     "                total (process_progress: the generator's Events, the reader's file sizes), how\n"
     "                far it is and the time left; on a terminal rewritten in place every S seconds\n"
     "                (default 1), otherwise a line every S seconds (default 10); 0: none.  The first\n"
     "                SIGINT (Ctrl-C) or SIGTERM says at once that the run stops.\n"},
    {"run",
     "  --quiet, -q   no progress line (--progress 0).\n"},
    {"run",
     "  --monitor PORT  serve a web page and JSON endpoints from inside the run (libmicrohttpd):\n"
     "                the spectra the histogrammer fills, refreshed while it runs, each actor's rates\n"
     "                and busy share, the rings (--pipeline), the run's state; on\n"
     "                http://127.0.0.1:PORT/ (0: a free port, printed on stderr).  /api/status,\n"
     "                /api/actors, /api/spectra and /api/spectrum?name=NAME for scripts (README.md).\n"},
    {"run",
     "  --monitor-bind ADDR  the address to listen on instead of 127.0.0.1 (0.0.0.0 or ::, every\n"
     "                interface: whoever reaches this host sees the run).\n"},
    {"run",
     "  --monitor-linger S  after the session, serve its final state S seconds more before exiting\n"
     "                (SIGINT ends the wait); default 0.\n"},
};

static const char exit_help[] =
    "exit status: 0 success; 1 an actor failed (run, validate's process_config) or a frame is\n"
    "bad (dump); 2 bad usage, topology, library or missing file: nothing was started, and the\n"
    "message is one line \"FILE:LINE: message\".\n";

static int takes_option(const option_help *h, const char *command)
{
    size_t n = strlen(command);
    for (const char *p = strstr(h->commands, command); p; p = strstr(p + 1, command))
        if ((p == h->commands || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

/* The whole help (command NULL), or one command's part and its options. */
static void print_help(FILE *out, const char *command)
{
    fputs("usage: narwhal COMMAND ...\n\n", out);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!command || strcmp(command, commands[i].name) == 0)
            fputs(commands[i].text, out);
    const char *heading = "\noptions:\n";
    for (size_t i = 0; i < sizeof option_helps / sizeof option_helps[0]; i++)
        if (!command || takes_option(&option_helps[i], command)) {
            fputs(heading, out);
            fputs(option_helps[i].text, out);
            heading = "";
        }
    fprintf(out, "\n%s", exit_help);
}

static const command_help *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i].name) == 0)
            return &commands[i];
    return NULL;
}

#ifndef NARWHAL_VERSION
#define NARWHAL_VERSION "(a build without the Makefile's version)"
#endif

static void print_version(void)
{
#ifdef NARWHAL_HAVE_CUDA
    const char *cuda = "built in (the GPU actors use a CUDA device when one is usable)";
#else
    const char *cuda = "not built (nvcc was not found): the actors run on the CPU";
#endif
#ifdef NARWHAL_HAVE_MHD
    const char *mhd = "built in";
#else
    const char *mhd = "not built (libmicrohttpd was not found)";
#endif
    printf("narwhal %s\nCUDA: %s\n--monitor: %s\n", NARWHAL_VERSION, cuda, mhd);
}

/* `narwhal help [COMMAND]`, `--help`, `--version`, `version`: -1 when argv is none of them. */
static int help_command(int argc, char **argv)
{
    const char *first = argv[1];
    if (strcmp(first, "--version") == 0 || strcmp(first, "version") == 0) {
        print_version();
        return EMU_OK;
    }
    if (strcmp(first, "help") != 0 && strcmp(first, "--help") != 0 && strcmp(first, "-h") != 0)
        return -1;
    if (argc > 3)
        return usage_error("help takes one command at most");
    if (argc == 3 && !find_command(argv[2]))
        return usage_error("unknown command '%s'", argv[2]);
    print_help(stdout, argc == 3 ? argv[2] : NULL);
    return EMU_OK;
}

static int run_command(session *s, int argc, char **argv)
{
    if (parse_args(argc, argv, &s->o) != EMU_OK)
        return EMU_E_TOPOLOGY;
    const char *cmd = s->o.command;
    if (s->o.help) {
        if (!find_command(cmd))
            return usage_error("unknown command '%s'", cmd);
        print_help(stdout, cmd);
        return EMU_OK;
    }
    if (strcmp(cmd, "run") == 0)
        return check_allowed(&s->o, TAKES_ACTORS | TAKES_CONF | TAKES_BLOCKS | TAKES_PIPELINE | TAKES_REPORT |
                                        TAKES_RUN_CONTROL | TAKES_LIVE)
                   ? EMU_E_TOPOLOGY
                   : command_run(s);
    if (strcmp(cmd, "validate") == 0)
        return check_allowed(&s->o, TAKES_ACTORS | TAKES_CONF) ? EMU_E_TOPOLOGY : command_validate(s);
    if (strcmp(cmd, "summary") == 0)
        return check_allowed(&s->o, TAKES_REPORT | TAKES_SUMMARY) ? EMU_E_TOPOLOGY : command_summary(s);
    if (strcmp(cmd, "inspect") == 0) {
        if (check_allowed(&s->o, TAKES_ACTORS))
            return EMU_E_TOPOLOGY;
        if (s->o.n_dirs == 0)
            default_actor_dirs(s);
        return emu_inspect(s->o.target, s->o.dirs, s->o.n_dirs, stdout, s->err, sizeof s->err);
    }
    if (strcmp(cmd, "dump") == 0)
        return check_allowed(&s->o, TAKES_MAX) ? EMU_E_TOPOLOGY
                                               : emu_dump(s->o.target, s->o.max_frames, stdout, s->err, sizeof s->err);
    return usage_error("unknown command '%s'", cmd);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_help(stderr, NULL);
        return EMU_E_TOPOLOGY;
    }
    int rc = help_command(argc, argv);
    if (rc >= 0)
        return rc;
    session s;
    memset(&s, 0, sizeof s);
    xmlInitParser();
    rc = run_command(&s, argc, argv);
    fflush(stdout);
    if (rc != EMU_OK && s.err[0])
        fprintf(s.mpi ? emu_mpi_log(s.mpi) : stderr, "%s\n", s.err);
    if (s.mpi)
        rc = emu_mpi_finish(s.mpi, rc, s.err);
    emu_run_result_free(&s.res);
    emu_chain_free(s.c);
    emu_topology_free(s.t);
    free(s.own_dirs[0]);
    free(s.own_dirs[1]);
    xmlCleanupParser();
    return rc;
}

/* narval_host.c: a NARVAL-like host for tests: a chain of actor libraries, K instances of each filter, NARVAL's calls and nothing else, frames counted per stage and cycle. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "host.h"

/*
 * The calls, as NARVAL makes them (the AGATA GPU-PSA thesis, 2.3.1):
 *   process_config once per library, with one directory;  process_register
 *   and process_initialise once per instance;  per cycle: process_start on
 *   every instance, blocks with process_pause/process_resume pairs between
 *   some of them, process_stop on every instance;  between cycles
 *   process_reset then process_initialise;  process_unload last.
 * Buffers have fixed sizes: NARVAL_E_OUTPUT_SIZE is an error like any other,
 * and process_block is only called with data (no empty end-of-data call).
 * The data ends in-band: the producer emits meta:eof, then answers used = 0.
 * After an actor's error every instance gets process_unload, without stop.
 *
 * Exit status: 0 all went as the contract says, 1 the run ended but the
 * contract was breached (logged "host: contract: ..."), 2 an actor returned
 * an error (the run was aborted), 3 the host could not start (usage, dlopen).
 */

enum { MAX_PRODUCER_BLOCKS = 1 << 24 };

static const char usage[] =
    "usage: narval_host [--instances K] [--cycles N] [--pause-every P] [--keep FILE]... [--report FILE]\n"
    "                   NAME=PRODUCER.so,CONFDIR,SIZE [NAME=FILTER.so,CONFDIR,SIZE]... NAME=CONSUMER.so,CONFDIR\n"
    "  K instances of each filter (default 1), fed round robin block by block; N cycles (default 2);\n"
    "  a pause/resume pair after every P-th producer block (default 3, 0: none); SIZE: the stage's\n"
    "  output buffer in bytes; --keep: a file the chain publishes at stop, moved to FILE.cycleN after\n"
    "  each cycle (it must not exist before the stop); --report: counts per cycle, stage and kind (TSV).\n"
    "  The frames-in/frames-out table of each cycle goes to stdout.\n";

/* NAME=LIBRARY,CONFDIR[,SIZE] */
static int parse_stage(host_stage *s, char *arg)
{
    char *eq = strchr(arg, '='), *comma, *end;
    if (!eq)
        return -1;
    *eq = '\0';
    s->name = arg;
    s->path = eq + 1;
    if (!(comma = strchr(eq + 1, ',')))
        return -1;
    *comma = '\0';
    s->conf = comma + 1;
    if ((comma = strchr(comma + 1, ','))) {
        *comma = '\0';
        errno = 0;
        unsigned long v = strtoul(comma + 1, &end, 0);
        if (errno || *end || v == 0 || v > 0xFFFFFFFFul)
            return -1;
        s->size = (unsigned)v;
    }
    return 0;
}

static int positive(const char *s, int *out, int min)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || end == s || v < min || v > HOST_MAX_INSTANCES * 1000000L)
        return -1;
    *out = (int)v;
    return 0;
}

static int parse_options(host *h, int argc, char **argv)
{
    static const struct option opts[] = {{"instances", 1, NULL, 'k'}, {"cycles", 1, NULL, 'c'},
                                         {"pause-every", 1, NULL, 'p'}, {"keep", 1, NULL, 'K'},
                                         {"report", 1, NULL, 'r'},      {NULL, 0, NULL, 0}};
    int o;
    h->instances = 1;
    h->cycles = 2;
    h->pause_every = 3;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if ((o == 'k' && (positive(optarg, &h->instances, 1) || h->instances > HOST_MAX_INSTANCES)) ||
            (o == 'c' && positive(optarg, &h->cycles, 1)) || (o == 'p' && positive(optarg, &h->pause_every, 0)) ||
            (o == 'K' && h->n_keep == HOST_MAX_KEEP) || o == '?')
            return -1;
        if (o == 'K')
            h->keep[h->n_keep++] = optarg;
        if (o == 'r' && !(h->report = fopen(optarg, "w"))) {
            fprintf(stderr, "host: cannot write %s: %s\n", optarg, strerror(errno));
            return -1;
        }
    }
    h->n_stages = argc - optind;
    if (h->n_stages < 2 || h->n_stages > HOST_MAX_STAGES)
        return -1;
    for (int i = 0; i < h->n_stages; i++) {
        host_stage *s = &h->st[i];
        s->role = i == 0 ? HOST_PRODUCER : i == h->n_stages - 1 ? HOST_CONSUMER : HOST_FILTER;
        s->n = s->role == HOST_FILTER ? h->instances : 1;
        if (parse_stage(s, argv[optind + i]) != 0 || (s->role != HOST_CONSUMER) != (s->size != 0))
            return -1;
    }
    return 0;
}

/* Loads every library (each once: NARVAL configures a library once per process) and its output buffer. */
static int load_all(host *h)
{
    for (int i = 0; i < h->n_stages; i++) {
        host_stage *s = &h->st[i];
        if (host_load(s) != 0)
            return -1;
        for (int j = 0; j < i; j++)
            if (h->st[j].lib.so == s->lib.so) {
                fprintf(stderr, "host: %s and %s load the same library %s\n", h->st[j].name, s->name, s->path);
                return -1;
            }
        if (s->size && !(s->buffer = malloc(s->size))) {
            fprintf(stderr, "host: no memory for %s's buffer of %u bytes\n", s->name, s->size);
            return -1;
        }
    }
    return 0;
}

/* The same call on every instance: producer first (order 1) or consumer first (-1); stops at the first error. */
static unsigned each(host *h, size_t hook, const char *what, int order)
{
    for (int k = 0; k < h->n_stages; k++) {
        host_stage *s = &h->st[order > 0 ? k : h->n_stages - 1 - k];
        narval_lifecycle_fn *fn = *(narval_lifecycle_fn **)((char *)&s->lib + hook);
        for (int i = 0; i < s->n; i++) {
            unsigned code = host_call(h, s, i, fn, what);
            if (code)
                return code;
        }
    }
    return 0;
}

#define EACH(h, field, order) each(h, offsetof(host_lib, field), "process_" #field, order)

static unsigned configure_and_register(host *h)
{
    unsigned code;
    for (int k = 0; k < h->n_stages; k++) {
        host_stage *s = &h->st[k];
        code = HOST_UNSET_CODE;
        s->lib.config(s->conf, &code);
        if (host_checked(s, 0, "process_config", code) != 0)
            return code;
        for (int i = 0; i < s->n; i++) {
            code = HOST_UNSET_CODE;
            s->inst[i] = s->lib.reg(&code);
            if (host_checked(s, i, "process_register", code) != 0)
                return code;
            if (!s->inst[i]) {
                fprintf(stderr, "host: %s#%d: process_register returned no instance and code 0\n", s->name, i + 1);
                return NARVAL_E_INTERNAL;
            }
        }
    }
    return EACH(h, initialise, 1);
}

/* process_unload on every registered instance (after an actor's error: without process_stop); the errors. */
static int unload_all(host *h)
{
    int errors = 0;
    for (int k = 0; k < h->n_stages; k++) {
        host_stage *s = &h->st[k];
        for (int i = 0; i < s->n; i++)
            if (s->inst[i]) {
                errors += host_call(h, s, i, s->lib.unload, "process_unload") != 0;
                s->inst[i] = NULL;
            }
    }
    return errors;
}

static void clear_counts(host *h)
{
    for (int k = 0; k < h->n_stages; k++) {
        host_stage *s = &h->st[k];
        memset(&s->in, 0, sizeof s->in);
        memset(&s->out, 0, sizeof s->out);
        memset(s->inst_blocks, 0, sizeof s->inst_blocks);
        s->next = 0;
        s->eof_from = 0;
    }
    h->eof_blocks = 0;
    h->after_eof = false;
}

/* One producer block down the chain; 0, or the error code that aborts the run. */
static int produce(host *h, unsigned *used)
{
    host_stage *p = &h->st[0];
    unsigned code = HOST_UNSET_CODE;
    *used = 0;
    p->lib.produce(p->inst[0], p->buffer, p->size, used, &code);
    if (host_checked(p, 0, "process_block", code) != 0)
        return (int)code;
    if (*used > p->size) {
        fprintf(stderr, "host: %s#1: process_block used %u bytes of a buffer of %u\n", p->name, *used, p->size);
        return NARVAL_E_INTERNAL;
    }
    if (*used == 0)
        return 0;
    if (host_count_block(&p->out, p->buffer, *used, p->name) != 0)
        return NARVAL_E_INTERNAL;
    if (h->after_eof)
        host_violation(h, "%s emitted data after its meta:eof", p->name);
    h->after_eof = h->after_eof || host_eofs(p->buffer, *used) > 0;
    return host_pass(h, 0, 0, p->buffer, *used);
}

static int blocks(host *h)
{
    unsigned used;
    int rc;
    for (long n = 1; n <= MAX_PRODUCER_BLOCKS; n++) {
        if ((rc = produce(h, &used)) != 0 || used == 0)
            return rc;
        if (h->pause_every && n % h->pause_every == 0 &&
            ((rc = (int)EACH(h, pause, 1)) != 0 || (rc = (int)EACH(h, resume, -1)) != 0))
            return rc;
    }
    fprintf(stderr, "host: %s never answered used = 0 in %d blocks\n", h->st[0].name, MAX_PRODUCER_BLOCKS);
    return NARVAL_E_INTERNAL;
}

/* Files the chain publishes appear at the stop, not before; each cycle's is kept under its own name. */
static void keep_files(host *h, bool stopped)
{
    char kept[4096];
    struct stat st;
    for (int i = 0; i < h->n_keep; i++) {
        bool there = stat(h->keep[i], &st) == 0;
        if (!stopped) {
            if (there)
                host_violation(h, "%s exists before the stop", h->keep[i]);
            continue;
        }
        snprintf(kept, sizeof kept, "%s.cycle%d", h->keep[i], h->cycle);
        if (!there)
            host_violation(h, "%s was not published at the stop", h->keep[i]);
        else if (rename(h->keep[i], kept) != 0)
            host_violation(h, "cannot move %s to %s: %s", h->keep[i], kept, strerror(errno));
    }
}

static int cycle(host *h)
{
    int rc;
    const host_stage *last = &h->st[h->n_stages - 1];
    clear_counts(h);
    h->started = true;
    if ((rc = (int)EACH(h, start, -1)) != 0 || (rc = blocks(h)) != 0)
        return rc;
    if (!h->after_eof)
        host_violation(h, "%s answered used = 0 without a meta:eof before", h->st[0].name);
    if (last->in.kind[HK_EOF] != 1)
        host_violation(h, "meta:eof reached %s %llu times", last->name, (unsigned long long)last->in.kind[HK_EOF]);
    keep_files(h, false);
    if ((rc = (int)EACH(h, stop, 1)) != 0)
        return rc;
    keep_files(h, true);
    host_report_cycle(h, h->report, stdout);
    return 0;
}

static int run(host *h)
{
    int rc = (int)configure_and_register(h);
    for (h->cycle = 1; rc == 0; h->cycle++) {
        if (h->cycle > 1 && ((rc = (int)EACH(h, reset, 1)) != 0 || (rc = (int)EACH(h, initialise, 1)) != 0))
            break;
        if ((rc = cycle(h)) != 0 || h->cycle == h->cycles)
            break;
    }
    if (rc != 0) {
        fprintf(stderr, "host: aborted in cycle %d: every instance unloaded without process_stop\n", h->cycle);
        h->aborted = true;
        if (h->started)
            host_report_cycle(h, h->report, stdout);
    }
    int unload_errors = unload_all(h);
    return rc || unload_errors ? 2 : h->violations ? 1 : 0;
}

int main(int argc, char **argv)
{
    static host h;
    if (parse_options(&h, argc, argv) != 0) {
        fputs(usage, stderr);
        return 3;
    }
    if (load_all(&h) != 0)
        return 3;
    int status = run(&h);
    fprintf(stderr, "host: %s: %d cycle%s, %d instance%s of each filter, %d contract breach%s\n",
            status == 0 ? "ok" : status == 1 ? "contract breached" : "aborted", h.cycles, h.cycles > 1 ? "s" : "",
            h.instances, h.instances > 1 ? "s" : "", h.violations, h.violations == 1 ? "" : "es");
    if (h.report)
        fclose(h.report);
    for (int k = 0; k < h.n_stages; k++)
        free(h.st[k].buffer);
    return status;
}

/* summary_report.c: `narwhal summary` reads the run's report and follows the producers' frames to the output file. */
#include "summary_data.h"
#include "ana.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define REPORT_FIELDS 14

/* Splits line at tabs, in place; returns the number of fields. */
static int split(char *line, char **field, int max)
{
    int n = 0;
    for (char *p = line;; p++) {
        if (n < max)
            field[n] = p;
        n++;
        p += strcspn(p, "\t");
        if (!*p)
            return n;
        *p = '\0';
    }
}

static int count(const char *text, unsigned long long *out)
{
    char *end;
    errno = 0;
    *out = strtoull(text, &end, 0);
    return *text && !*end && !errno && text[0] != '-' ? 0 : -1;
}

static sum_actor *find_actor(sum_report *r, const char *name)
{
    sum_actor *a = r->actors.p;
    for (size_t i = 0; i < r->actors.n; i++)
        if (strcmp(a[i].name, name) == 0)
            return &a[i];
    return NULL;
}

static int add_actor(sum_report *r, char **field, int n)
{
    sum_actor *a;
    unsigned long long skip;
    if (n < 6 || find_actor(r, field[1]) || strlen(field[1]) >= sizeof a->name || count(field[3], &skip) ||
        !(a = sum_push(&r->actors, sizeof *a)))
        return -1;
    snprintf(a->name, sizeof a->name, "%s", field[1]);
    return count(field[4], &a->frames_in) || count(field[5], &a->frames_out) ? -1 : 0;
}

static int add_kind(sum_report *r, char **field, int n)
{
    sum_actor *a = n == 6 ? find_actor(r, field[1]) : NULL;
    unsigned long long id;
    if (!a || a->n_kinds == ANA_REPORT_KINDS || count(field[2], &id) || id > UINT32_MAX)
        return -1;
    sum_kind *k = &a->kinds[a->n_kinds++];
    k->id = (uint32_t)id;
    return count(field[4], &k->frames) || count(field[5], &k->inside) ? -1 : 0;
}

/* "source NAME FROM": NAME reads FROM, both actors already read (FROM runs before NAME). */
static int add_source(sum_report *r, char **field, int n)
{
    if (n != 3)
        return -1;
    sum_actor *to = find_actor(r, field[1]), *from = find_actor(r, field[2]);
    sum_edge *e = to && from && from != to ? sum_push(&r->edges, sizeof *e) : NULL;
    if (!e)
        return -1;
    to->n_sources++;
    *e = (sum_edge){.from = (size_t)(from - (sum_actor *)r->actors.p), .to = (size_t)(to - (sum_actor *)r->actors.p)};
    return 0;
}

static int add_table_line(sum_report *r, const char *text)
{
    for (const char *p = text;; p++) {
        char *c = sum_push(&r->table, 1);
        if (!c)
            return -1;
        *c = *p ? *p : '\n';
        if (!*p)
            return 0;
    }
}

static int parse_line(sum_report *r, char *line, unsigned number)
{
    char *field[REPORT_FIELDS];
    char *table = strncmp(line, "table\t", 6) == 0 ? line + 6 : NULL;
    if (table)
        return add_table_line(r, table);
    int n = split(line, field, REPORT_FIELDS);
    if (number == 1)
        return n == 2 && strcmp(field[0], "narwhal-report") == 0 && strcmp(field[1], "1") == 0 ? 0 : -1;
    if (strcmp(field[0], "actor") == 0)
        return n == 12 || n == 13 ? add_actor(r, field, n) : -1; /* 13: with DEVICE (emulator/report.h) */
    if (strcmp(field[0], "kind") == 0)
        return add_kind(r, field, n);
    if (strcmp(field[0], "source") == 0)
        return add_source(r, field, n);
    return strcmp(field[0], "topology") == 0 || strcmp(field[0], "run") == 0 || strcmp(field[0], "other") == 0
               ? 0
               : -1;
}

/* A report without source records (written before they were): an actor that took no frame in is
 * a producer (the first one, and those of topologies that list a producer before its PSA), each
 * other actor reads the one before it. */
static int as_chain(sum_report *r)
{
    for (size_t k = 1; k < r->actors.n; k++) {
        const sum_actor *a = &((const sum_actor *)r->actors.p)[k];
        if (a->frames_in == 0)
            continue;
        sum_edge *e = sum_push(&r->edges, sizeof *e);
        if (!e)
            return -1;
        *e = (sum_edge){.from = k - 1, .to = k};
        ((sum_actor *)r->actors.p)[k].n_sources = 1;
    }
    return 0;
}

int sum_read_report(const char *path, sum_report *r, char *err, size_t errlen)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return ana_fail(err, errlen, ANA_E_OPEN, "%s: cannot open: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    unsigned number = 0;
    int rc = ANA_OK;
    while (rc == ANA_OK && (len = getline(&line, &cap, fp)) >= 0) {
        number++;
        if (len > 0 && line[len - 1] == '\n')
            line[--len] = '\0';
        if (parse_line(r, line, number) != 0)
            rc = ana_fail(err, errlen, ANA_E_INPUT, "%s:%u: not a line of a narwhal run report", path, number);
    }
    if (rc == ANA_OK && ferror(fp))
        rc = ana_fail(err, errlen, ANA_E_INPUT, "%s: read error: %s", path, strerror(errno));
    if (rc == ANA_OK && r->actors.n < 2)
        rc = ana_fail(err, errlen, ANA_E_INPUT, "%s: %s", path,
                      number ? "fewer than two actors: not the report of a chain" : "empty");
    if (rc == ANA_OK && !r->edges.n && as_chain(r) != 0)
        rc = ana_fail(err, errlen, ANA_E_MEMORY, "%s: out of memory", path);
    free(line);
    fclose(fp);
    return rc;
}

void sum_report_free(sum_report *r)
{
    sum_vec_free(&r->actors);
    sum_vec_free(&r->edges);
    sum_vec_free(&r->table);
}

unsigned long long sum_emitted(const sum_actor *a, uint32_t id)
{
    for (unsigned i = 0; i < a->n_kinds; i++)
        if (a->kinds[i].id == id)
            return a->kinds[i].frames + a->kinds[i].inside;
    return 0;
}

static void check(ana_summary *s, int ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void check(ana_summary *s, int ok, const char *fmt, ...)
{
    if (s->n_checks == ANA_SUMMARY_CHECKS)
        return;
    ana_summary_check *c = &s->check[s->n_checks++];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->text, sizeof c->text, fmt, ap);
    va_end(ap);
    c->ok = ok;
    s->balanced &= ok;
}

/* An actor that reads no other: a producer. */
static int is_producer(const sum_report *r, size_t k) { return ((const sum_actor *)r->actors.p)[k].n_sources == 0; }

/* An actor that makes data:psa from a producer's crystal frames: a PSA. */
static int is_psa(const sum_report *r, size_t k)
{
    const sum_actor *a = r->actors.p;
    const sum_edge *e = r->edges.p;
    if (!sum_emitted(&a[k], ADF_ID_DATA_PSA))
        return 0;
    for (size_t i = 0; i < r->edges.n; i++)
        if (e[i].to == k && is_producer(r, e[i].from) && sum_emitted(&a[e[i].from], ADF_ID_NW_CRYSTAL))
            return 1;
    return 0;
}

/* The quoted names of the actors that pick() takes, into out: "'a', 'b', 'c'", from the fourth
 * on "'a', 'b', 'c' and 5 more"; and their count. */
static unsigned name_list(const sum_report *r, int (*pick)(const sum_report *, size_t), char *out, size_t len)
{
    const sum_actor *a = r->actors.p;
    unsigned n = 0;
    size_t used = 0;
    out[0] = '\0';
    for (size_t k = 0; k < r->actors.n; k++)
        if (pick(r, k) && ++n <= 3 && used < len)
            used += (size_t)snprintf(out + used, len - used, "%s'%s'", n > 1 ? ", " : "", a[k].name);
    if (n > 3 && used < len)
        snprintf(out + used, len - used, " and %u more", n - 3);
    return n;
}

/* Sums what the actors that pick() takes emitted of id. */
static unsigned long long emitted_by(const sum_report *r, int (*pick)(const sum_report *, size_t), uint32_t id)
{
    const sum_actor *a = r->actors.p;
    unsigned long long n = 0;
    for (size_t k = 0; k < r->actors.n; k++)
        n += pick(r, k) ? sum_emitted(&a[k], id) : 0;
    return n;
}

/* The first actor that reads another and emits id, or NULL. */
static const sum_actor *first_emitting(const sum_report *r, uint32_t id)
{
    const sum_actor *a = r->actors.p;
    for (size_t k = 0; k < r->actors.n; k++)
        if (!is_producer(r, k) && sum_emitted(&a[k], id))
            return &a[k];
    return NULL;
}

/* data:crystal turned into data:psa by the PSAs the producers feed: each frame is written or rejected there. */
static void check_crystals(ana_summary *s, const sum_report *r)
{
    char psas[200];
    unsigned n = name_list(r, is_psa, psas, sizeof psas);
    unsigned long long made = emitted_by(r, is_psa, ADF_ID_DATA_PSA);
    if (!n) {
        check(s, s->crystal == s->produced_crystal,
              "data:crystal: %llu produced, %llu written (no actor made data:psa)", s->produced_crystal, s->crystal);
        return;
    }
    unsigned long long rejected = s->produced_crystal > made ? s->produced_crystal - made : 0;
    check(s, made + rejected == s->produced_crystal && s->psa == made,
          "data:crystal: %llu produced = %llu written as data:psa + %llu rejected by %s (%s log%s the reasons); %s "
          "made %llu data:psa, %llu reached the file",
          s->produced_crystal, s->psa, rejected, psas, n > 1 ? "their" : "its", n > 1 ? "s give" : " gives",
          n > 1 ? "they" : psas, made, s->psa);
}

/* Each event the builder made is tracked: one data:tracked each. */
static void check_events(ana_summary *s, const sum_report *r)
{
    const sum_actor *tracker = first_emitting(r, ADF_ID_NW_TRACKED);
    const sum_actor *builder = first_emitting(r, ADF_ID_EVENT_DATA_PSA);
    if (!tracker)
        return;
    unsigned long long built = builder ? sum_emitted(builder, ADF_ID_EVENT_DATA_PSA) : 0;
    unsigned long long made = sum_emitted(tracker, ADF_ID_NW_TRACKED);
    check(s, made == s->tracked && (!builder || built == made),
          "events built by '%s': %llu; data:tracked made by '%s': %llu, in the file: %llu (%llu tracked, %llu not "
          "tracked: over 256 points, %llu with γ rays left out: over 64)",
          builder ? builder->name : "-", built, tracker->name, made, s->tracked, s->tracked_status[0],
          s->tracked_status[1], s->tracked_status[2]);
}

/* Each producer ends its data with a meta:eof per run, and a join (the builder) passes one end of
 * the data once all its inputs have ended: the file holds as many as each producer emitted. */
static void check_eof(ana_summary *s, const sum_report *r, const char *producers)
{
    const sum_actor *a = r->actors.p;
    unsigned long long least = ~0ull, most = 0;
    for (size_t k = 0; k < r->actors.n; k++)
        if (is_producer(r, k)) {
            unsigned long long n = sum_emitted(&a[k], ADF_ID_META_EOF);
            least = n < least ? n : least;
            most = n > most ? n : most;
        }
    char each[128];
    if (least != most)
        snprintf(each, sizeof each, "%llu to %llu produced (not every producer ended its data) by ", least, most);
    else
        snprintf(each, sizeof each, "%llu produced by %s", most, s->n_producers > 1 ? "each of " : "");
    check(s, least == most && s->eof == most && (most == 0 || s->ends_with_eof),
          "meta:eof: %s%s, %llu in the file%s", each, producers, s->eof,
          most == 0 ? " (the run was stopped before the end of its data)"
          : s->ends_with_eof ? ", last: the data is complete" : ", not last: frames came after the end of the data");
}

void sum_check_balance(ana_summary *s, const sum_report *r)
{
    const sum_actor *a = r->actors.p;
    const sum_edge *e = r->edges.p;
    size_t writer = r->actors.n - 1;
    char producers[sizeof s->producers + 32];
    s->n_producers = name_list(r, is_producer, s->producers, sizeof s->producers);
    snprintf(s->producer, sizeof s->producer, "%s", a[0].name); /* the run's order starts with a producer */
    if (s->n_producers > 1)
        snprintf(producers, sizeof producers, "the %u producers (%s)", s->n_producers, s->producers);
    else
        snprintf(producers, sizeof producers, "%s", s->producers);
    s->produced_truth = emitted_by(r, is_producer, ADF_ID_NW_TRUTH);
    s->produced_crystal = emitted_by(r, is_producer, ADF_ID_NW_CRYSTAL);
    for (size_t i = 0; i < r->edges.n; i++)
        s->writer_frames += e[i].to == writer ? a[e[i].from].frames_out : 0;
    check(s, s->writer_frames == s->frames, "the writer '%s' received %llu frames; the file holds %llu",
          a[writer].name, s->writer_frames, s->frames);
    check(s, s->produced_truth == s->truth, "narwhal:truth: %llu produced by %s, %llu in the file",
          s->produced_truth, producers, s->truth);
    if (s->produced_crystal)
        check_crystals(s, r);
    check_events(s, r);
    check_eof(s, r, producers);
}

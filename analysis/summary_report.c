/* summary_report.c: `narwhal summary` reads the run's report and follows the producer's frames to the output file. */
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
    return strcmp(field[0], "topology") == 0 || strcmp(field[0], "run") == 0 || strcmp(field[0], "other") == 0
               ? 0
               : -1;
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
    free(line);
    fclose(fp);
    return rc;
}

void sum_report_free(sum_report *r)
{
    sum_vec_free(&r->actors);
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

/* The first actor after the producer that emits id, or NULL. */
static const sum_actor *first_emitting(const sum_report *r, uint32_t id)
{
    const sum_actor *a = r->actors.p;
    for (size_t k = 1; k < r->actors.n; k++)
        if (sum_emitted(&a[k], id))
            return &a[k];
    return NULL;
}

/* data:crystal turned into data:psa by the PSA: each frame is written or rejected there. */
static void check_crystals(ana_summary *s, const sum_report *r)
{
    const sum_actor *psa = first_emitting(r, ADF_ID_DATA_PSA);
    unsigned long long made = psa ? sum_emitted(psa, ADF_ID_DATA_PSA) : 0;
    if (!psa) {
        check(s, s->crystal == s->produced_crystal,
              "data:crystal: %llu produced, %llu written (no actor made data:psa)", s->produced_crystal, s->crystal);
        return;
    }
    unsigned long long rejected = s->produced_crystal > made ? s->produced_crystal - made : 0;
    check(s, made + rejected == s->produced_crystal && s->psa == made,
          "data:crystal: %llu produced = %llu written as data:psa + %llu rejected by '%s' (its log gives the "
          "reasons); '%s' made %llu data:psa, %llu reached the file",
          s->produced_crystal, s->psa, rejected, psa->name, psa->name, made, s->psa);
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

void sum_check_balance(ana_summary *s, const sum_report *r)
{
    const sum_actor *a = r->actors.p, *producer = &a[0], *last = &a[r->actors.n - 2];
    snprintf(s->producer, sizeof s->producer, "%s", producer->name);
    s->produced_truth = sum_emitted(producer, ADF_ID_NW_TRUTH);
    s->produced_crystal = sum_emitted(producer, ADF_ID_NW_CRYSTAL);
    s->writer_frames = last->frames_out;
    check(s, s->writer_frames == s->frames, "the writer '%s' received %llu frames; the file holds %llu",
          a[r->actors.n - 1].name, s->writer_frames, s->frames);
    check(s, s->produced_truth == s->truth, "narwhal:truth: %llu produced by '%s', %llu in the file",
          s->produced_truth, producer->name, s->truth);
    if (s->produced_crystal)
        check_crystals(s, r);
    check_events(s, r);
    unsigned long long produced_eof = sum_emitted(producer, ADF_ID_META_EOF);
    check(s, s->eof == produced_eof && (produced_eof == 0 || s->ends_with_eof),
          "meta:eof: %llu produced by '%s', %llu in the file%s", produced_eof, producer->name, s->eof,
          produced_eof == 0 ? " (the run was stopped before the end of its data)"
          : s->ends_with_eof ? ", last: the data is complete" : ", not last: frames came after the end of the data");
}

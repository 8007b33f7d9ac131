/* mpi_place.c: which MPI rank runs each actor of a topology: by <hostname>, spread over any number of ranks, or a mapping file. */
#include "mpi_place.h"
#include "emu.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *emu_place_hostname(const emu_actor_spec *a) { return a->hostname ? a->hostname : "localhost"; }

/* The actors' indices in document order (emu_topology keeps them in
 * topological order); NULL when out of memory. */
static size_t *document_order(const emu_topology *t)
{
    size_t n = t->n_actors, *order = malloc((n ? n : 1) * sizeof *order);
    if (!order)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        for (; j > 0 && t->actors[order[j - 1]].line > t->actors[i].line; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    return order;
}

static int all_localhost(const emu_topology *t)
{
    for (size_t k = 0; k < t->n_actors; k++)
        if (strcmp(emu_place_hostname(&t->actors[k]), "localhost") != 0)
            return 0;
    return 1;
}

/* Producers dealt in turn, one-input actors with their source, joins on
 * rank 0; topological order places every source before its readers. */
static int spread(const emu_topology *t, int ranks, int *rank_of, char *err, size_t errlen)
{
    size_t *order = document_order(t);
    if (!order)
        return emu_fail(err, errlen, EMU_E_TOPOLOGY, "out of memory");
    int next = 0;
    for (size_t i = 0; i < t->n_actors; i++)
        if (t->actors[order[i]].role == EMU_PRODUCER) {
            rank_of[order[i]] = next;
            next = (next + 1) % ranks;
        }
    free(order);
    for (size_t k = 0; k < t->n_actors; k++) {
        const emu_actor_spec *a = &t->actors[k];
        if (a->role != EMU_PRODUCER)
            rank_of[k] = a->n_sources == 1 ? rank_of[a->sources[0].from] : 0;
    }
    return EMU_OK;
}

/* A rank per distinct <hostname>, in order of first appearance. */
static int by_hostname(const emu_topology *t, int ranks, int *rank_of, char *err, size_t errlen)
{
    size_t *order = document_order(t);
    const char **names = calloc(t->n_actors ? t->n_actors : 1, sizeof *names);
    if (!order || !names) {
        free(order);
        free(names);
        return emu_fail(err, errlen, EMU_E_TOPOLOGY, "out of memory");
    }
    int hosts = 0;
    for (size_t i = 0; i < t->n_actors; i++) {
        const char *host = emu_place_hostname(&t->actors[order[i]]);
        int h = 0;
        while (h < hosts && strcmp(names[h], host) != 0)
            h++;
        if (h == hosts)
            names[hosts++] = host;
        rank_of[order[i]] = h;
    }
    int rc = EMU_OK;
    if (hosts != ranks) {
        char list[512] = "";
        for (int h = 0, n = 0; h < hosts && n < (int)sizeof list; h++)
            n += snprintf(list + n, sizeof list - (size_t)n, "%s%s", h ? ", " : "", names[h]);
        rc = emu_fail(err, errlen, EMU_E_TOPOLOGY,
                      "%s: its actors name %d hosts (%s), a rank each in that order, but %d ranks were started: "
                      "run it with mpirun -np %d, or place the actors with --place FILE",
                      t->path, hosts, list, ranks, hosts);
    }
    free(order);
    free(names);
    return rc;
}

typedef struct map_entry {
    char *name;
    int rank;
} map_entry;

typedef struct mapping {
    map_entry *e;
    size_t n;
} mapping;

static void mapping_free(mapping *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->e[i].name);
    free(m->e);
}

static const map_entry *mapping_find(const mapping *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->e[i].name, name) == 0)
            return &m->e[i];
    return NULL;
}

/* One line of a mapping file: blank, a comment, or "NAME RANK". */
static int map_line(mapping *m, char *line, const char *path, long number, int ranks, char *err, size_t errlen)
{
    line[strcspn(line, "#\r\n")] = '\0';
    char name[256], rank[32], extra[2];
    int fields = sscanf(line, "%255s %31s %1s", name, rank, extra);
    if (fields <= 0)
        return EMU_OK;
    if (fields != 2)
        return emu_fail_at(err, errlen, path, number, "expected \"NAME RANK\" (an actor or a <hostname>, then a rank)");
    char *end;
    errno = 0;
    long r = strtol(rank, &end, 10);
    if (*end || errno || !isdigit((unsigned char)rank[0]) || r >= ranks)
        return emu_fail_at(err, errlen, path, number, "rank '%s' of '%s': the ranks started are 0 to %d", rank, name,
                           ranks - 1);
    if (mapping_find(m, name))
        return emu_fail_at(err, errlen, path, number, "'%s' is placed twice", name);
    map_entry *grown = realloc(m->e, (m->n + 1) * sizeof *grown);
    char *copy = strdup(name);
    if (grown)
        m->e = grown;
    if (!grown || !copy) {
        free(copy);
        return emu_fail_at(err, errlen, path, number, "out of memory");
    }
    m->e[m->n++] = (map_entry){.name = copy, .rank = (int)r};
    return EMU_OK;
}

static int read_mapping(const char *path, int ranks, mapping *m, char *err, size_t errlen)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return emu_fail(err, errlen, EMU_E_TOPOLOGY, "--place %s: cannot open: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    long number = 0;
    int rc = EMU_OK;
    while (rc == EMU_OK && getline(&line, &cap, fp) >= 0)
        rc = map_line(m, line, path, ++number, ranks, err, errlen);
    free(line);
    fclose(fp);
    return rc;
}

static int by_mapping(const emu_topology *t, int ranks, const char *path, int *rank_of, char *err, size_t errlen)
{
    mapping m = {0};
    int rc = read_mapping(path, ranks, &m, err, errlen);
    for (size_t k = 0; rc == EMU_OK && k < t->n_actors; k++) {
        const emu_actor_spec *a = &t->actors[k];
        const map_entry *e = mapping_find(&m, a->name);
        if (!e)
            e = mapping_find(&m, emu_place_hostname(a));
        if (e)
            rank_of[k] = e->rank;
        else
            rc = emu_fail(err, errlen, EMU_E_TOPOLOGY, "--place %s names neither actor '%s' (%s:%ld) nor its host '%s'",
                          path, a->name, t->path, a->line, emu_place_hostname(a));
    }
    mapping_free(&m);
    return rc;
}

int emu_place(const emu_topology *t, int ranks, const char *map_file, int *rank_of, char *err, size_t errlen)
{
    if (ranks < 1)
        return emu_fail(err, errlen, EMU_E_TOPOLOGY, "%d ranks: at least one is needed", ranks);
    if (map_file)
        return by_mapping(t, ranks, map_file, rank_of, err, errlen);
    if (ranks == 1) {
        for (size_t k = 0; k < t->n_actors; k++)
            rank_of[k] = 0;
        return EMU_OK;
    }
    return all_localhost(t) ? spread(t, ranks, rank_of, err, errlen) : by_hostname(t, ranks, rank_of, err, errlen);
}

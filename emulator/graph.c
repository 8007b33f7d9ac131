/* graph.c: checks how a topology's actors connect and orders them into one producer-to-consumer chain. */
#include "emu.h"
#include "topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long find_actor(const emu_topology *t, const char *name)
{
    for (size_t i = 0; i < t->n_actors; i++)
        if (strcmp(t->actors[i].name, name) == 0)
            return (long)i;
    return -1;
}

static int check_unique_names(const emu_topology *t, char *err, size_t errlen)
{
    for (size_t i = 1; i < t->n_actors; i++) {
        long first = find_actor(t, t->actors[i].name);
        if (first != (long)i)
            return emu_fail_at(err, errlen, t->path, t->actors[i].line, "two actors named '%s' (the first on line %ld)",
                             t->actors[i].name, t->actors[first].line);
    }
    return EMU_OK;
}

/* Exactly one actor of the role; returns its index in *at. */
static int check_single(const emu_topology *t, enum emu_role role, size_t *at, char *err, size_t errlen)
{
    const char *word = emu_role_name(role);
    long found = -1;
    for (size_t i = 0; i < t->n_actors; i++) {
        if (t->actors[i].role != role)
            continue;
        if (found >= 0)
            return emu_fail_at(err, errlen, t->path, t->actors[i].line,
                             "second %s '%s' (the first is '%s'): the emulator runs one chain with one %s", word,
                             t->actors[i].name, t->actors[found].name, word);
        found = (long)i;
    }
    if (found < 0)
        return emu_fail_at(err, errlen, t->path, t->root_line, "no <%s>: a chain needs one", word);
    *at = (size_t)found;
    return EMU_OK;
}

/* upstream[i]: the actor whose output actor i reads, -1 for the producer. */
static int resolve_sources(const emu_topology *t, long *upstream, char *err, size_t errlen)
{
    for (size_t i = 0; i < t->n_actors; i++) {
        const emu_actor_spec *a = &t->actors[i];
        upstream[i] = -1;
        if (a->role == EMU_PRODUCER)
            continue;
        long u = find_actor(t, a->source);
        if (u < 0)
            return emu_fail_at(err, errlen, t->path, a->source_line, "<data_source> of '%s' names no actor '%s'", a->name,
                             a->source);
        const emu_actor_spec *src = &t->actors[u];
        if (!src->output)
            return emu_fail_at(err, errlen, t->path, a->source_line,
                             "<data_source> of '%s' names buffer '%s' of '%s', a consumer without output buffers",
                             a->name, a->source_buffer, src->name);
        if (strcmp(src->output, a->source_buffer) != 0)
            return emu_fail_at(err, errlen, t->path, a->source_line,
                             "<data_source> of '%s' names buffer '%s', but '%s' has no such buffer (its output is '%s')",
                             a->name, a->source_buffer, src->name, src->output);
        upstream[i] = u;
    }
    return EMU_OK;
}

/* reader[i]: the actor that reads actor i's output, or -1.  An intermediary
 * nobody reads is reported before a buffer read twice: a branch hanging off
 * the chain is the likelier mistake. */
static int check_readers(const emu_topology *t, const long *upstream, long *reader, char *err, size_t errlen)
{
    for (size_t i = 0; i < t->n_actors; i++)
        reader[i] = -1;
    for (size_t i = 0; i < t->n_actors; i++)
        if (upstream[i] >= 0 && reader[upstream[i]] < 0)
            reader[upstream[i]] = (long)i;
    for (size_t i = 0; i < t->n_actors; i++)
        if (t->actors[i].role == EMU_FILTER && reader[i] < 0)
            return emu_fail_at(err, errlen, t->path, t->actors[i].line,
                               "intermediary '%s' is not connected to the chain: nothing reads its output '%s'",
                               t->actors[i].name, t->actors[i].output);
    for (size_t i = 0; i < t->n_actors; i++) {
        long u = upstream[i], first = u >= 0 ? reader[u] : -1;
        if (u >= 0 && first != (long)i)
            return emu_fail_at(err, errlen, t->path, t->actors[i].source_line,
                               "buffer '%s' of '%s' is already read by '%s' (line %ld): the emulator runs one chain, "
                               "one reader per buffer",
                               t->actors[u].output, t->actors[u].name, t->actors[first].name,
                               t->actors[first].source_line);
    }
    return EMU_OK;
}

/* A cycle can only run through intermediaries: each has one input, so
 * walking upstream from one either reaches the producer or comes back. */
static int check_cycles(const emu_topology *t, const long *upstream, char *err, size_t errlen)
{
    for (size_t i = 0; i < t->n_actors; i++) {
        long at = upstream[i];
        for (size_t steps = 0; at >= 0 && steps < t->n_actors; steps++) {
            if (at == (long)i && upstream[i] == (long)i)
                return emu_fail_at(err, errlen, t->path, t->actors[i].source_line,
                                 "'%s' reads its own output: the actors form a cycle", t->actors[i].name);
            if (at == (long)i)
                return emu_fail_at(err, errlen, t->path, t->actors[i].source_line,
                                 "'%s' reads '%s', which depends on the output of '%s': the actors form a cycle",
                                 t->actors[i].name, t->actors[i].source, t->actors[i].name);
            at = upstream[at];
        }
    }
    return EMU_OK;
}

/* Walks from the producer and rewrites t->actors in data-flow order. */
static int walk_chain(emu_topology *t, size_t producer, size_t consumer, const long *reader, char *err,
                      size_t errlen)
{
    emu_actor_spec *ordered = malloc(t->n_actors * sizeof *ordered);
    char *taken = calloc(t->n_actors, 1);
    size_t n = 0;
    int rc = EMU_E_TOPOLOGY;
    if (!ordered || !taken) {
        rc = emu_fail(err, errlen, EMU_E_TOPOLOGY, "%s: out of memory", t->path);
        goto fail;
    }
    for (long at = (long)producer; at >= 0 && n < t->n_actors; at = reader[at]) {
        ordered[n++] = t->actors[at];
        taken[at] = 1;
    }
    for (size_t i = 0; i < t->n_actors; i++)
        if (!taken[i]) {
            rc = emu_fail_at(err, errlen, t->path, t->actors[i].line, "%s '%s' is not connected to the chain from '%s' to '%s'",
                           emu_role_name(t->actors[i].role), t->actors[i].name, t->actors[producer].name,
                           t->actors[consumer].name);
            goto fail;
        }
    memcpy(t->actors, ordered, n * sizeof *ordered);
    rc = EMU_OK;
fail:
    free(ordered);
    free(taken);
    return rc;
}

int emu_graph_order(emu_topology *t, char *err, size_t errlen)
{
    size_t producer = 0, consumer = 0;
    long *upstream = calloc(t->n_actors + 1, sizeof *upstream);
    long *reader = calloc(t->n_actors + 1, sizeof *reader);
    int rc = (upstream && reader) ? EMU_OK : emu_fail(err, errlen, EMU_E_TOPOLOGY, "%s: out of memory", t->path);
    if (rc == EMU_OK)
        rc = check_unique_names(t, err, errlen);
    if (rc == EMU_OK)
        rc = check_single(t, EMU_PRODUCER, &producer, err, errlen);
    if (rc == EMU_OK)
        rc = check_single(t, EMU_CONSUMER, &consumer, err, errlen);
    if (rc == EMU_OK)
        rc = resolve_sources(t, upstream, err, errlen);
    if (rc == EMU_OK)
        rc = check_readers(t, upstream, reader, err, errlen);
    if (rc == EMU_OK)
        rc = check_cycles(t, upstream, err, errlen);
    if (rc == EMU_OK)
        rc = walk_chain(t, producer, consumer, reader, err, errlen);
    free(upstream);
    free(reader);
    return rc;
}

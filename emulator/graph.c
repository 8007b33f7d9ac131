/* graph.c: checks how a topology's actors connect (an acyclic graph) and puts them in topological order. */
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

/* At least one actor of the role. */
static int check_present(const emu_topology *t, enum emu_role role, char *err, size_t errlen)
{
    for (size_t i = 0; i < t->n_actors; i++)
        if (t->actors[i].role == role)
            return EMU_OK;
    return emu_fail_at(err, errlen, t->path, t->root_line, "no <%s>: a topology needs one", emu_role_name(role));
}

/* One source: the actor it names exists, writes that buffer, and is not
 * read twice by the same actor. */
static int resolve_source(emu_topology *t, emu_actor_spec *a, size_t i, char *err, size_t errlen)
{
    emu_source *s = &a->sources[i];
    long u = find_actor(t, s->actor);
    if (u < 0)
        return emu_fail_at(err, errlen, t->path, s->line, "<data_source> of '%s' names no actor '%s'", a->name,
                           s->actor);
    const emu_actor_spec *src = &t->actors[u];
    if (!src->output)
        return emu_fail_at(err, errlen, t->path, s->line,
                           "<data_source> of '%s' names buffer '%s' of '%s', a consumer without output buffers",
                           a->name, s->buffer, src->name);
    if (strcmp(src->output, s->buffer) != 0)
        return emu_fail_at(err, errlen, t->path, s->line,
                           "<data_source> of '%s' names buffer '%s', but '%s' has no such buffer (its output is '%s')",
                           a->name, s->buffer, src->name, src->output);
    for (size_t j = 0; j < i; j++)
        if (a->sources[j].from == (size_t)u)
            return emu_fail_at(err, errlen, t->path, s->line,
                               "'%s' reads buffer '%s' of '%s' twice (first on line %ld)", a->name, s->buffer,
                               src->name, a->sources[j].line);
    s->from = (size_t)u;
    return EMU_OK;
}

static int resolve_sources(emu_topology *t, char *err, size_t errlen)
{
    for (size_t k = 0; k < t->n_actors; k++)
        for (size_t i = 0; i < t->actors[k].n_sources; i++)
            if (resolve_source(t, &t->actors[k], i, err, errlen) != EMU_OK)
                return EMU_E_TOPOLOGY;
    return EMU_OK;
}

/* Depth-first search from actor k upstream; state 1: on the path (via:
 * the source it is being left by), 2: done.  A cycle is reported at the
 * actor the path came back to, by the source it had left by. */
static int find_cycle(const emu_topology *t, size_t k, char *state, size_t *via, char *err, size_t errlen)
{
    const emu_actor_spec *a = &t->actors[k];
    state[k] = 1;
    for (size_t i = 0; i < a->n_sources; i++) {
        size_t u = a->sources[i].from;
        via[k] = i;
        if (u == k)
            return emu_fail_at(err, errlen, t->path, a->sources[i].line,
                               "'%s' reads its own output: the actors form a cycle", a->name);
        if (state[u] == 1) {
            const emu_actor_spec *back = &t->actors[u];
            const emu_source *left_by = &back->sources[via[u]];
            return emu_fail_at(err, errlen, t->path, left_by->line,
                               "'%s' reads '%s', which depends on the output of '%s': the actors form a cycle",
                               back->name, left_by->actor, back->name);
        }
        if (state[u] == 0 && find_cycle(t, u, state, via, err, errlen) != EMU_OK)
            return EMU_E_TOPOLOGY;
    }
    state[k] = 2;
    return EMU_OK;
}

/* A cycle can only run through intermediaries (producers read nothing,
 * consumers are read by nothing).  Searched in document order, so the
 * message names the first actor of the file on a cycle.  Recursion depth
 * is bounded by EMU_MAX_ACTORS. */
static int check_cycles(const emu_topology *t, char *err, size_t errlen)
{
    char *state = calloc(t->n_actors + 1, 1);
    size_t *via = calloc(t->n_actors + 1, sizeof *via);
    int rc = state && via ? EMU_OK : emu_fail(err, errlen, EMU_E_TOPOLOGY, "%s: out of memory", t->path);
    for (size_t k = 0; k < t->n_actors && rc == EMU_OK; k++)
        if (state[k] == 0)
            rc = find_cycle(t, k, state, via, err, errlen);
    free(state);
    free(via);
    return rc;
}

/* Every buffer is read by someone: an output nobody reads is a branch
 * left hanging, most likely a misspelt <data_source>. */
static int check_read(const emu_topology *t, char *err, size_t errlen)
{
    for (size_t k = 0; k < t->n_actors; k++) {
        const emu_actor_spec *a = &t->actors[k];
        int read = a->role == EMU_CONSUMER;
        for (size_t j = 0; j < t->n_actors && !read; j++)
            for (size_t i = 0; i < t->actors[j].n_sources && !read; i++)
                read = t->actors[j].sources[i].from == k;
        if (!read)
            return emu_fail_at(err, errlen, t->path, a->line, "%s '%s': nothing reads its output buffer '%s'",
                               emu_role_name(a->role), a->name, a->output);
    }
    return EMU_OK;
}

/* The readers of one buffer that share its blocks use one way of sharing. */
static int check_shares(const emu_topology *t, char *err, size_t errlen)
{
    for (size_t k = 0; k < t->n_actors; k++) {
        const emu_actor_spec *first = NULL;
        const emu_source *first_src = NULL;
        for (size_t j = 0; j < t->n_actors; j++)
            for (size_t i = 0; i < t->actors[j].n_sources; i++) {
                const emu_source *s = &t->actors[j].sources[i];
                if (s->from != k || s->share == EMU_SHARE_NONE)
                    continue;
                if (first && s->share != first_src->share)
                    return emu_fail_at(err, errlen, t->path, s->line,
                                       "'%s' shares buffer '%s' of '%s' %s, but '%s' (line %ld) shares it %s: the "
                                       "instances sharing a buffer share it one way",
                                       t->actors[j].name, s->buffer, t->actors[k].name, emu_share_name(s->share),
                                       first->name, first_src->line, emu_share_name(first_src->share));
                if (!first) {
                    first = &t->actors[j];
                    first_src = s;
                }
            }
    }
    return EMU_OK;
}

/* Kahn's algorithm, always taking the first ready actor in document order,
 * so that a chain comes out in data-flow order and any topology in one
 * fixed order; every emu_source.from is renumbered to match. */
static int order(emu_topology *t, char *err, size_t errlen)
{
    size_t n = t->n_actors;
    emu_actor_spec *ordered = malloc(n * sizeof *ordered);
    size_t *new_index = malloc(n * sizeof *new_index);
    char *placed = calloc(n, 1);
    if (!ordered || !new_index || !placed) {
        free(ordered);
        free(new_index);
        free(placed);
        return emu_fail(err, errlen, EMU_E_TOPOLOGY, "%s: out of memory", t->path);
    }
    for (size_t m = 0; m < n; m++) {
        size_t k = 0;
        for (;; k++) {
            int ready = !placed[k];
            for (size_t i = 0; ready && i < t->actors[k].n_sources; i++)
                ready = placed[t->actors[k].sources[i].from];
            if (ready)
                break;
        }
        placed[k] = 1;
        new_index[k] = m;
        ordered[m] = t->actors[k];
    }
    for (size_t m = 0; m < n; m++)
        for (size_t i = 0; i < ordered[m].n_sources; i++)
            ordered[m].sources[i].from = new_index[ordered[m].sources[i].from];
    memcpy(t->actors, ordered, n * sizeof *ordered);
    free(ordered);
    free(new_index);
    free(placed);
    return EMU_OK;
}

int emu_graph_order(emu_topology *t, char *err, size_t errlen)
{
    int rc = check_unique_names(t, err, errlen);
    if (rc == EMU_OK)
        rc = check_present(t, EMU_PRODUCER, err, errlen);
    if (rc == EMU_OK)
        rc = check_present(t, EMU_CONSUMER, err, errlen);
    if (rc == EMU_OK)
        rc = resolve_sources(t, err, errlen);
    if (rc == EMU_OK)
        rc = check_cycles(t, err, errlen);
    if (rc == EMU_OK)
        rc = check_read(t, err, errlen);
    if (rc == EMU_OK)
        rc = check_shares(t, err, errlen);
    if (rc == EMU_OK)
        rc = order(t, err, errlen);
    return rc;
}

int emu_topology_is_chain(const emu_topology *t)
{
    for (size_t k = 0; k < t->n_actors; k++) {
        const emu_actor_spec *a = &t->actors[k];
        if (a->role != (k == 0 ? EMU_PRODUCER : k + 1 == t->n_actors ? EMU_CONSUMER : EMU_FILTER))
            return 0;
        if (k > 0 && (a->n_sources != 1 || a->sources[0].from != k - 1))
            return 0;
    }
    return 1;
}

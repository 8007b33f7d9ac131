/* mpi_session.c: a rank's side of a session across MPI ranks: placement, the run's hooks, the failure rule, the gathered table; the backend does the messages. */
#include "mpi_int.h"
#include "mpi_log.h"
#include "mpi_place.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int emu_mpi_launched(void)
{
    static const char *const sizes[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        const char *v = getenv(sizes[i]);
        if (v && atoi(v) > 0)
            return atoi(v);
    }
    /* PMIx without a size variable still names the rank. */
    return getenv("PMIX_RANK") ? 1 : 0;
}

int emu_mpi_rank(const emu_mpi *m) { return m->rank; }
int emu_mpi_size(const emu_mpi *m) { return m->size; }
FILE *emu_mpi_log(emu_mpi *m) { return m->log ? m->log : stderr; }

static void session_free(emu_mpi *m)
{
    if (m->log)
        fclose(m->log);
    for (int r = 0; m->host && r < m->size; r++)
        free(m->host[r]);
    for (int r = 0; m->counts_in && r < m->size; r++)
        free(m->counts_in[r]);
    free(m->host);
    free(m->counts_in);
    free(m->counts_in_size);
    free(m->counts_out);
    free(m->rank_of);
    free(m->actor_host);
    free(m->here);
    free(m->links);
    pthread_mutex_destroy(&m->lock);
    pthread_cond_destroy(&m->changed);
    free(m);
}

int emu_mpi_start(emu_mpi **out, double timeout, char *err, size_t errlen)
{
    *out = NULL;
    emu_mpi *m = calloc(1, sizeof *m);
    if (!m)
        return emu_fail(err, errlen, EMU_E_TOPOLOGY, "out of memory");
    m->timeout = timeout;
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->changed, NULL);
    if (emu_mpi_backend_start(m, err, errlen) != EMU_OK) {
        session_free(m);
        return EMU_E_TOPOLOGY;
    }
    m->log = emu_mpi_log_open(m->rank, m->host[m->rank]);
    m->counts_in = calloc((size_t)m->size, sizeof *m->counts_in);
    m->counts_in_size = calloc((size_t)m->size, sizeof *m->counts_in_size);
    *out = m;
    if (!m->log || !m->counts_in || !m->counts_in_size)
        return emu_fail(err, errlen, EMU_E_TOPOLOGY, "out of memory");
    return EMU_OK;
}

void emu_mpi_fail(emu_mpi *m, int announce, int quiet, const char *fmt, ...)
{
    if (m->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->why, sizeof m->why, fmt, ap);
    va_end(ap);
    m->failed = 1;
    m->announce = announce;
    if (m->watched)
        emu_calls_fail(m->watched, "%s", m->why);
    else if (!quiet)
        fprintf(emu_mpi_log(m), "narwhal: %s\n", m->why);
    for (size_t i = 0; i < m->n_rings; i++)
        emu_ring_abort(&m->rings[i]);
    pthread_cond_broadcast(&m->changed);
}

/* The links of this rank: every input whose writer runs on another rank,
 * numbered alike on every rank. */
static int make_links(emu_mpi *m, const emu_topology *t, char *err, size_t errlen)
{
    size_t number = 0;
    for (size_t k = 0; k < t->n_actors; k++)
        for (size_t i = 0; i < t->actors[k].n_sources; i++) {
            size_t w = t->actors[k].sources[i].from;
            int from = m->rank_of[w], to = m->rank_of[k];
            if (from == to)
                continue;
            long tag = EMU_MPI_TAG_LINK0 + (long)number++;
            if (tag > m->tag_ub)
                return emu_fail(err, errlen, EMU_E_TOPOLOGY,
                                "%s: more links between ranks than MPI has tags (%d): place fewer apart", t->path,
                                m->tag_ub - EMU_MPI_TAG_LINK0 + 1);
            if (from != m->rank && to != m->rank)
                continue;
            emu_mpi_link *grown = realloc(m->links, (m->n_links + 1) * sizeof *grown);
            if (!grown)
                return emu_fail(err, errlen, EMU_E_TOPOLOGY, "out of memory");
            m->links = grown;
            m->links[m->n_links++] = (emu_mpi_link){.out = from == m->rank, .peer = from == m->rank ? to : from,
                                                    .tag = (int)tag, .writer = w, .reader = k, .input = i};
        }
    return EMU_OK;
}

int emu_mpi_place(emu_mpi *m, const emu_topology *t, const char *map_file, char *err, size_t errlen)
{
    size_t n = t->n_actors ? t->n_actors : 1;
    m->n_actors = t->n_actors;
    m->rank_of = calloc(n, sizeof *m->rank_of);
    m->actor_host = calloc(n, sizeof *m->actor_host);
    m->here = calloc(n, 1);
    if (!m->rank_of || !m->actor_host || !m->here)
        return emu_fail(err, errlen, EMU_E_TOPOLOGY, "out of memory");
    int rc = emu_place(t, m->size, map_file, m->rank_of, err, errlen);
    for (size_t k = 0; rc == EMU_OK && k < t->n_actors; k++) {
        m->actor_host[k] = m->host[m->rank_of[k]];
        m->here[k] = m->rank_of[k] == m->rank;
    }
    pthread_mutex_lock(&m->lock);
    if (rc == EMU_OK)
        rc = make_links(m, t, err, errlen);
    pthread_mutex_unlock(&m->lock);
    return rc;
}

int emu_mpi_claim(emu_mpi *m, emu_chain *c)
{
    c->here = m->here;
    return EMU_OK;
}

int emu_mpi_watch(emu_mpi *m, emu_calls *s)
{
    pthread_mutex_lock(&m->lock);
    m->watched = s;
    int failed = m->failed;
    if (failed)
        emu_calls_fail(s, "%s", m->why);
    pthread_mutex_unlock(&m->lock);
    return failed ? EMU_E_RUN : EMU_OK;
}

void emu_mpi_notice(emu_mpi *m)
{
    if (m->failed || !m->watched)
        return;
    emu_calls *s = m->watched;
    pthread_mutex_lock(&s->lock);
    if (s->failed) {
        snprintf(m->why, sizeof m->why, "%s", s->err);
        m->failed = m->announce = 1;
    }
    pthread_mutex_unlock(&s->lock);
    for (size_t i = 0; m->failed && i < m->n_rings; i++)
        emu_ring_abort(&m->rings[i]);
    if (m->failed)
        pthread_cond_broadcast(&m->changed);
}

void emu_mpi_unwatch(emu_mpi *m)
{
    pthread_mutex_lock(&m->lock);
    emu_mpi_notice(m);
    m->watched = NULL;
    pthread_mutex_unlock(&m->lock);
}

int emu_mpi_attach(emu_mpi *m, emu_ring *rings, size_t n_rings, const size_t *ring_of)
{
    pthread_mutex_lock(&m->lock);
    m->rings = rings;
    m->n_rings = n_rings;
    for (size_t l = 0; l < m->n_links; l++) {
        m->links[l].ring = &rings[ring_of[m->links[l].reader] + m->links[l].input];
        m->links[l].done = 0;
    }
    if (m->failed)
        for (size_t i = 0; i < n_rings; i++)
            emu_ring_abort(&rings[i]);
    pthread_cond_broadcast(&m->changed);
    pthread_mutex_unlock(&m->lock);
    return EMU_OK;
}

static int links_done(const emu_mpi *m)
{
    for (size_t l = 0; l < m->n_links; l++)
        if (!m->links[l].done)
            return 0;
    return 1;
}

int emu_mpi_detach(emu_mpi *m)
{
    pthread_mutex_lock(&m->lock);
    while (!m->failed && !links_done(m))
        pthread_cond_wait(&m->changed, &m->lock);
    int rc = m->failed ? EMU_E_RUN : EMU_OK;
    for (size_t l = 0; l < m->n_links; l++)
        m->links[l].ring = NULL;
    m->rings = NULL;
    m->n_rings = 0;
    pthread_mutex_unlock(&m->lock);
    return rc;
}

int emu_mpi_agree(emu_mpi *m, enum emu_mpi_phase phase)
{
    pthread_mutex_lock(&m->lock);
    m->ready = (int)phase;
    pthread_cond_broadcast(&m->changed);
    while (!m->failed && m->agreed < (int)phase)
        pthread_cond_wait(&m->changed, &m->lock);
    int rc = m->agreed >= (int)phase ? EMU_OK : EMU_E_RUN;
    pthread_mutex_unlock(&m->lock);
    return rc;
}

/* This rank's counts, and the rows of its actors, as sent to rank 0. */
static void *pack(const emu_mpi *m, const emu_run_result *res, size_t *size)
{
    size_t rows = res ? res->n_actors : 0;
    *size = sizeof(emu_mpi_counts) + rows * sizeof(emu_actor_stats);
    emu_mpi_counts *c = calloc(1, *size);
    if (!c || !res)
        return c;
    *c = (emu_mpi_counts){.ran = 1, .end = (int)res->end, .signal = res->signal, .runs = res->runs,
                          .blocks = res->blocks, .pauses = res->pauses, .wall_seconds = res->wall_seconds,
                          .block_seconds = res->block_seconds, .n_actors = rows};
    if (res->runs)
        c->cycle = res->cycle[0];
    emu_actor_stats *row = (emu_actor_stats *)(c + 1);
    for (size_t k = 0; k < rows; k++)
        if (m->here[k])
            row[k] = res->actors[k];
    return c;
}

/* The worse of two ends: an error, then a signal, then a limit, then the data. */
static enum emu_end worse(enum emu_end a, enum emu_end b)
{
    static const int rank[] = {[EMU_END_DATA] = 0, [EMU_END_LIMIT] = 1, [EMU_END_SIGNAL] = 2, [EMU_END_ERROR] = 3};
    return rank[b] > rank[a] ? b : a;
}

static double longer(double a, double b) { return a > b ? a : b; }

/* Rank r's counts into rank 0's result. */
static void merge(const emu_mpi *m, int r, emu_run_result *res)
{
    const emu_mpi_counts *c = m->counts_in[r];
    if (!c || !c->ran || m->counts_in_size[r] != sizeof *c + res->n_actors * sizeof(emu_actor_stats) ||
        c->n_actors != res->n_actors)
        return;
    const emu_actor_stats *row = (const emu_actor_stats *)(c + 1);
    for (size_t k = 0; k < res->n_actors; k++)
        if (m->rank_of[k] == r)
            res->actors[k] = row[k];
    res->blocks += c->blocks;
    res->pauses += c->pauses;
    res->wall_seconds = longer(res->wall_seconds, c->wall_seconds);
    res->block_seconds = longer(res->block_seconds, c->block_seconds);
    if (worse(res->end, (enum emu_end)c->end) != res->end) {
        res->end = (enum emu_end)c->end;
        res->signal = c->signal;
    }
    if (res->runs && c->runs) {
        emu_cycle_stats *mine = &res->cycle[0];
        mine->blocks += c->cycle.blocks;
        mine->produced += c->cycle.produced;
        mine->consumed += c->cycle.consumed;
        mine->end = worse(mine->end, c->cycle.end);
    }
}

int emu_mpi_gather(emu_mpi *m, emu_run_result *res)
{
    pthread_mutex_lock(&m->lock);
    int rc = EMU_OK;
    if (m->rank != 0) {
        m->counts_out = pack(m, res, &m->counts_out_size);
        rc = m->counts_out ? EMU_OK : EMU_E_RUN;
        while (rc == EMU_OK && !m->counts_sent && !m->dead)
            pthread_cond_wait(&m->changed, &m->lock);
    } else {
        m->counts_wanted = 1;
        pthread_cond_broadcast(&m->changed);
        while (m->counts_received < m->size - 1 && !m->dead)
            pthread_cond_wait(&m->changed, &m->lock);
        for (int r = 1; r < m->size; r++)
            merge(m, r, res);
        res->rank_of = m->rank_of;
        res->host_of = m->actor_host;
        res->ranks = (unsigned)m->size;
    }
    pthread_cond_broadcast(&m->changed);
    pthread_mutex_unlock(&m->lock);
    return rc;
}

int emu_mpi_finish(emu_mpi *m, int status, const char *err)
{
    pthread_mutex_lock(&m->lock);
    if (status != EMU_OK)
        emu_mpi_fail(m, 1, 1, "%s", err && *err ? err : "it failed before its run");
    else if (m->agreed < EMU_MPI_ENDED)
        emu_mpi_fail(m, 1, 0, "its session ended before its run did (a signal before the run began?)");
    m->status = status != EMU_OK ? status : m->failed ? EMU_E_RUN : EMU_OK;
    m->finishing = 1;
    pthread_cond_broadcast(&m->changed);
    while (!m->finished)
        pthread_cond_wait(&m->changed, &m->lock);
    pthread_mutex_unlock(&m->lock);
    int rc = emu_mpi_backend_end(m);
    session_free(m);
    return rc;
}

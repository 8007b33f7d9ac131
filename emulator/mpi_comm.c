/* mpi_comm.c: the MPI backend of a session across ranks: MPI_Init, the one thread that calls MPI (links, control messages, heartbeats, the end), MPI_Finalize. */
#include "mpi_int.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Control messages: a kind, a phase (emu_mpi_agree's) and, for an abort,
 * the failure's text. */
enum ctl_kind { CTL_BEAT, CTL_ABORT, CTL_READY, CTL_AGREED };

typedef struct ctl_msg {
    int kind;
    int phase;
    char text[1536];
} ctl_msg;

#define CTL_HEAD offsetof(ctl_msg, text)

typedef struct pending {
    ctl_msg msg;
    MPI_Request req;
} pending;

/* What precedes a block's bytes on a link: where it stands in the
 * sequential order and what it is (ring.h). */
typedef struct wire_head {
    emu_key key;
    uint32_t used;
    uint32_t mark;
    uint64_t frames;
} wire_head;

/* A block or mark sent and not yet complete: its header (synchronous) and
 * its bytes, in the buffer taken from the outbox. */
typedef struct flight {
    wire_head head;
    emu_buffer buf;
    MPI_Request req[2];
} flight;

enum { IN_IDLE, IN_HEAD, IN_BODY };

typedef struct wire_link {
    flight *fl; /* out: the blocks in flight, oldest at first */
    unsigned window, first, count;
    int end_taken;
    int state; /* in: what is posted */
    wire_head head;
    emu_buffer rx;
    MPI_Request req;
} wire_link;

enum { FIN_WAIT, FIN_AGREE, FIN_DONE };

struct emu_mpi_wire {
    MPI_Comm comm;
    pthread_t thread;
    double beat_every, next_beat, last_pass, dead_at, finish_began;
    double *last_seen;
    MPI_Request *beat_req;
    ctl_msg beat;
    MPI_Request ctl_req;
    ctl_msg ctl_in;
    pending **sends;
    size_t n_sends;
    wire_link *links;
    int announced, ready_sent;
    int ready_count[EMU_MPI_ENDED + 1]; /* rank 0: per phase, the ranks that reached it */
    MPI_Request counts_req;
    int counts_posted;
    emu_mpi_counts nothing; /* sent by a rank that reached no run */
    int stage;
    MPI_Request agree_req;
    int agree_in, agree_out;
    int unclean; /* a message could not be completed: MPI_Finalize could wait for it forever */
};

/* An MPI call's result: a failure of the session when it is not success. */
static int mpi_ok(emu_mpi *m, int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return 1;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    emu_mpi_fail(m, 1, 0, "MPI: %s: %s", what, text);
    return 0;
}

static int tested(emu_mpi *m, MPI_Request *req, const char *what)
{
    int flag = 0;
    return mpi_ok(m, MPI_Test(req, &flag, MPI_STATUS_IGNORE), what) && flag;
}

static void send_control(emu_mpi *m, int dest, int kind, int phase, const char *text)
{
    struct emu_mpi_wire *w = m->wire;
    pending **grown = realloc(w->sends, (w->n_sends + 1) * sizeof *grown);
    pending *p = calloc(1, sizeof *p);
    if (grown)
        w->sends = grown;
    if (!grown || !p) {
        free(p);
        emu_mpi_fail(m, 0, 0, "out of memory for a control message to rank %d", dest);
        return;
    }
    p->msg.kind = kind;
    p->msg.phase = phase;
    snprintf(p->msg.text, sizeof p->msg.text, "%s", text);
    int size = (int)(CTL_HEAD + strlen(p->msg.text) + 1);
    if (!mpi_ok(m, MPI_Isend(&p->msg, size, MPI_BYTE, dest, EMU_MPI_TAG_CONTROL, w->comm, &p->req), "a control send")) {
        free(p);
        return;
    }
    w->sends[w->n_sends++] = p;
}

static int sends_progress(emu_mpi *m)
{
    struct emu_mpi_wire *w = m->wire;
    int busy = 0;
    for (size_t i = 0; i < w->n_sends;) {
        if (!tested(m, &w->sends[i]->req, "a control send")) {
            i++;
            continue;
        }
        free(w->sends[i]);
        w->sends[i] = w->sends[--w->n_sends];
        busy = 1;
    }
    return busy;
}

static void post_control(emu_mpi *m)
{
    struct emu_mpi_wire *w = m->wire;
    mpi_ok(m, MPI_Irecv(&w->ctl_in, sizeof w->ctl_in, MPI_BYTE, MPI_ANY_SOURCE, EMU_MPI_TAG_CONTROL, w->comm, &w->ctl_req),
           "a control receive");
}

static void handle_control(emu_mpi *m, int from)
{
    ctl_msg *c = &m->wire->ctl_in;
    c->text[sizeof c->text - 1] = '\0';
    if (c->kind == CTL_ABORT)
        emu_mpi_fail(m, 0, 0, "aborting: rank %d (host %s) failed: %s", from, m->host[from], c->text);
    else if (c->kind == CTL_READY && c->phase > 0 && c->phase <= EMU_MPI_ENDED)
        m->wire->ready_count[c->phase]++;
    else if (c->kind == CTL_AGREED && c->phase > m->agreed)
        m->agreed = c->phase;
}

static int control_progress(emu_mpi *m, double now)
{
    struct emu_mpi_wire *w = m->wire;
    int busy = 0;
    for (;;) {
        int flag = 0;
        MPI_Status st;
        if (w->ctl_req == MPI_REQUEST_NULL || !mpi_ok(m, MPI_Test(&w->ctl_req, &flag, &st), "a control receive") ||
            !flag)
            return busy;
        w->last_seen[st.MPI_SOURCE] = now;
        handle_control(m, st.MPI_SOURCE);
        post_control(m);
        busy = 1;
    }
}

/* READY(phase) to rank 0 once this rank reached a phase (and has not
 * failed); rank 0 sends AGREED(phase) to every rank once all did. */
static int agree_progress(emu_mpi *m)
{
    struct emu_mpi_wire *w = m->wire;
    if (m->ready > w->ready_sent && !m->failed) {
        w->ready_sent = m->ready;
        if (m->rank == 0)
            w->ready_count[m->ready]++;
        else
            send_control(m, 0, CTL_READY, m->ready, "");
    }
    int next = m->agreed + 1;
    if (m->rank != 0 || m->failed || next > EMU_MPI_ENDED || w->ready_count[next] < m->size)
        return 0;
    m->agreed = next;
    for (int r = 1; r < m->size; r++)
        send_control(m, r, CTL_AGREED, next, "");
    return 1;
}

static int announce_progress(emu_mpi *m)
{
    struct emu_mpi_wire *w = m->wire;
    if (!m->failed || !m->announce || w->announced)
        return 0;
    w->announced = 1;
    for (int r = 0; r < m->size; r++)
        if (r != m->rank)
            send_control(m, r, CTL_ABORT, 0, m->why);
    return 1;
}

static void beats(emu_mpi *m, double now)
{
    struct emu_mpi_wire *w = m->wire;
    if (now < w->next_beat)
        return;
    w->next_beat = now + w->beat_every;
    for (int r = 0; r < m->size; r++) {
        if (r == m->rank || (w->beat_req[r] != MPI_REQUEST_NULL && !tested(m, &w->beat_req[r], "a heartbeat")))
            continue;
        mpi_ok(m, MPI_Isend(&w->beat, (int)CTL_HEAD + 1, MPI_BYTE, r, EMU_MPI_TAG_CONTROL, w->comm, &w->beat_req[r]),
               "a heartbeat");
    }
}

/* A rank silent for the timeout is presumed dead.  A pass of this thread
 * that came late by half the timeout means this process itself was not
 * running (stopped, suspended): the others' silence is then not theirs. */
static void silence(emu_mpi *m, double now)
{
    struct emu_mpi_wire *w = m->wire;
    if (now - w->last_pass > m->timeout / 2)
        for (int r = 0; r < m->size; r++)
            w->last_seen[r] = now;
    w->last_pass = now;
    for (int r = 0; r < m->size && !m->dead; r++)
        if (r != m->rank && now - w->last_seen[r] > m->timeout) {
            m->dead = 1;
            w->dead_at = now;
            if (m->failed) /* already aborting: the death is said all the same */
                fprintf(emu_mpi_log(m), "narwhal: rank %d (host %s) has sent nothing for %.1f s: presumed dead\n", r,
                        m->host[r], now - w->last_seen[r]);
            emu_mpi_fail(m, 1, 0, "rank %d (host %s) has sent nothing for %.1f s (--mpi-timeout %g): presumed dead; "
                         "aborting", r, m->host[r], now - w->last_seen[r], m->timeout);
        }
    if (m->dead && !m->finished && now - w->dead_at > m->timeout) {
        fprintf(emu_mpi_log(m), "narwhal: this rank did not end within %g s of a rank's death: MPI_Abort\n",
                m->timeout);
        fflush(emu_mpi_log(m));
        MPI_Abort(w->comm, EMU_E_RUN);
    }
}

static int counts_progress(emu_mpi *m, double now)
{
    struct emu_mpi_wire *w = m->wire;
    if (m->rank != 0) {
        if (!w->counts_posted && (m->counts_out || m->finishing)) {
            const void *buf = m->counts_out ? m->counts_out : &w->nothing;
            int size = (int)(m->counts_out ? m->counts_out_size : sizeof w->nothing);
            w->counts_posted = mpi_ok(m, MPI_Isend(buf, size, MPI_BYTE, 0, EMU_MPI_TAG_COUNTS, w->comm, &w->counts_req),
                                      "sending the counts");
        }
        if (w->counts_posted && !m->counts_sent && tested(m, &w->counts_req, "sending the counts")) {
            m->counts_sent = 1;
            return 1;
        }
        return 0;
    }
    int busy = 0;
    while ((m->counts_wanted || m->finishing) && m->counts_received < m->size - 1) {
        int flag = 0, n = 0;
        MPI_Status st;
        /* Only this thread receives: what the probe saw is what the receive gets. */
        if (!mpi_ok(m, MPI_Iprobe(MPI_ANY_SOURCE, EMU_MPI_TAG_COUNTS, w->comm, &flag, &st), "the counts") || !flag)
            break;
        MPI_Get_count(&st, MPI_BYTE, &n);
        int from = st.MPI_SOURCE;
        void *buf = malloc(n > 0 ? (size_t)n : 1);
        if (!buf || !mpi_ok(m, MPI_Recv(buf, n, MPI_BYTE, from, EMU_MPI_TAG_COUNTS, w->comm, MPI_STATUS_IGNORE),
                            "receiving the counts")) {
            free(buf);
            break;
        }
        free(m->counts_in[from]);
        m->counts_in[from] = buf;
        m->counts_in_size[from] = (size_t)n;
        m->counts_received++;
        w->last_seen[from] = now;
        busy = 1;
    }
    return busy;
}

/* Out: the blocks in flight complete in order (the end mark's completion
 * ends the link), then new ones leave the outbox while the window has room:
 * the slot's buffer is swapped for the flight's, so the block is sent from
 * where the writer put it. */
static int send_link(emu_mpi *m, emu_mpi_link *l, wire_link *wl)
{
    int busy = 0;
    while (wl->count > 0) {
        flight *f = &wl->fl[wl->first];
        int flag = 0;
        if (!mpi_ok(m, MPI_Testall(2, f->req, &flag, MPI_STATUSES_IGNORE), "a link's send") || !flag)
            break;
        l->done |= f->head.mark == EMU_MARK_END;
        wl->first = (wl->first + 1) % wl->window;
        wl->count--;
        busy = 1;
    }
    if (!l->ring || wl->end_taken)
        return busy;
    if (!wl->fl) {
        wl->window = l->ring->depth;
        wl->fl = calloc(wl->window, sizeof *wl->fl);
        if (!wl->fl) {
            emu_mpi_fail(m, 1, 0, "out of memory for a link's %u blocks in flight", l->ring->depth);
            return busy;
        }
    }
    double unused = 0;
    while (wl->count < wl->window && emu_ring_count(l->ring) > 0) {
        emu_slot *slot = emu_ring_peek(l->ring, &unused);
        if (!slot)
            break;
        flight *f = &wl->fl[(wl->first + wl->count) % wl->window];
        f->head = (wire_head){.key = slot->key, .used = slot->used, .mark = slot->mark, .frames = slot->frames};
        emu_buffer mine = f->buf;
        f->buf = slot->buf;
        slot->buf = mine;
        emu_ring_release(l->ring);
        f->req[1] = MPI_REQUEST_NULL;
        if (!mpi_ok(m, MPI_Issend(&f->head, sizeof f->head, MPI_BYTE, l->peer, l->tag, m->wire->comm, &f->req[0]),
                    "a link's header") ||
            (f->head.used && !mpi_ok(m, MPI_Isend(f->buf.data, (int)f->head.used, MPI_BYTE, l->peer, l->tag,
                                                  m->wire->comm, &f->req[1]),
                                     "a link's block")))
            return busy;
        wl->count++;
        busy = 1;
        if (f->head.mark == EMU_MARK_END) {
            wl->end_taken = 1;
            break;
        }
    }
    return busy;
}

/* In: a received block goes into the reader's ring, its buffer swapped in;
 * after a failure (or without a ring) it is dropped, so that the writer's
 * sends complete. */
static void deliver(emu_mpi *m, emu_mpi_link *l, wire_link *wl)
{
    double unused = 0;
    emu_slot *slot = l->ring && !m->failed ? emu_ring_acquire(l->ring, &unused) : NULL;
    if (slot) {
        if (wl->head.used) {
            emu_buffer mine = slot->buf;
            slot->buf = wl->rx;
            wl->rx = mine;
        }
        slot->used = wl->head.used;
        slot->frames = wl->head.frames;
        slot->mark = (enum emu_mark)wl->head.mark;
        slot->key = wl->head.key;
        emu_ring_publish(l->ring);
    }
    l->done |= wl->head.mark == EMU_MARK_END;
    wl->state = IN_IDLE;
}

/* A header is received only when the reader's ring has room for its block
 * (the writer's synchronous header waits until then: back-pressure), or
 * when everything is dropped after a failure. */
static int receive_link(emu_mpi *m, emu_mpi_link *l, wire_link *wl, double now)
{
    MPI_Comm comm = m->wire->comm;
    if (wl->state == IN_IDLE) {
        int room = l->ring && emu_ring_count(l->ring) < l->ring->depth;
        if (l->done || !(room || m->failed))
            return 0;
        if (mpi_ok(m, MPI_Irecv(&wl->head, sizeof wl->head, MPI_BYTE, l->peer, l->tag, comm, &wl->req),
                   "a link's header receive"))
            wl->state = IN_HEAD;
        return 0;
    }
    if (!tested(m, &wl->req, wl->state == IN_HEAD ? "a link's header" : "a link's block"))
        return 0;
    m->wire->last_seen[l->peer] = now;
    if (wl->state == IN_HEAD && wl->head.used) {
        if (emu_buffer_fit(&wl->rx, wl->head.used)) {
            emu_mpi_fail(m, 1, 0, "out of memory for a %u-byte block from rank %d", wl->head.used, l->peer);
            return 1;
        }
        if (mpi_ok(m, MPI_Irecv(wl->rx.data, (int)wl->head.used, MPI_BYTE, l->peer, l->tag, comm, &wl->req),
                   "a link's block receive"))
            wl->state = IN_BODY;
        return 1;
    }
    deliver(m, l, wl);
    return 1;
}

static int links_progress(emu_mpi *m, double now, int *in_flight)
{
    struct emu_mpi_wire *w = m->wire;
    if (!w->links && m->n_links && !(w->links = calloc(m->n_links, sizeof *w->links))) {
        emu_mpi_fail(m, 1, 0, "out of memory for %zu links", m->n_links);
        return 0;
    }
    int busy = 0;
    for (size_t i = 0; i < m->n_links; i++) {
        emu_mpi_link *l = &m->links[i];
        wire_link *wl = &w->links[i];
        busy |= l->out ? send_link(m, l, wl) : receive_link(m, l, wl, now);
        *in_flight |= wl->count > 0 || wl->state != IN_IDLE;
    }
    return busy;
}

static int links_quiet(const emu_mpi *m)
{
    for (size_t i = 0; m->wire->links && i < m->n_links; i++)
        if (m->wire->links[i].count > 0)
            return 0;
    return 1;
}

/* Receives still posted at the end: a header already matched brings its
 * block (it was sent before the sender agreed to end), the others are
 * cancelled. */
static void close_receive(emu_mpi *m, wire_link *wl)
{
    MPI_Status st;
    int cancelled = 0;
    if (wl->state == IN_HEAD) {
        MPI_Cancel(&wl->req);
        MPI_Wait(&wl->req, &st);
        MPI_Test_cancelled(&st, &cancelled);
        if (!cancelled && wl->head.used && emu_buffer_fit(&wl->rx, wl->head.used) == 0)
            MPI_Recv(wl->rx.data, (int)wl->head.used, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, m->wire->comm,
                     MPI_STATUS_IGNORE);
    } else if (wl->state == IN_BODY) {
        MPI_Wait(&wl->req, MPI_STATUS_IGNORE);
    }
    wl->state = IN_IDLE;
}

/* Whether req completes within a second. */
static int completes(MPI_Request *req)
{
    for (int i = 0; i < 1000 && *req != MPI_REQUEST_NULL; i++) {
        int flag = 0;
        MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        if (!flag)
            nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
    return *req == MPI_REQUEST_NULL;
}

/* Every rank agreed to end: no heartbeat or block will come; what is still
 * posted is completed or cancelled, stray control messages dropped. */
static void close_all(emu_mpi *m)
{
    struct emu_mpi_wire *w = m->wire;
    for (int r = 0; r < m->size; r++)
        w->unclean |= !completes(&w->beat_req[r]);
    for (size_t i = 0; i < w->n_sends; i++)
        w->unclean |= !completes(&w->sends[i]->req);
    if (w->ctl_req != MPI_REQUEST_NULL) {
        MPI_Cancel(&w->ctl_req);
        MPI_Wait(&w->ctl_req, MPI_STATUS_IGNORE);
    }
    for (size_t i = 0; w->links && i < m->n_links; i++) {
        if (!m->links[i].out)
            close_receive(m, &w->links[i]);
        w->unclean |= w->links[i].count > 0;
    }
    for (int flag = 1; flag;) {
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, EMU_MPI_TAG_CONTROL, w->comm, &flag, &st);
        if (flag)
            MPI_Recv(&w->ctl_in, sizeof w->ctl_in, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, w->comm, MPI_STATUS_IGNORE);
    }
}

/* The end: once this rank's messages went (its abort, its counts; rank 0:
 * every rank's counts; the blocks in flight, bounded by the timeout),
 * every rank agrees on the worst status; then the rest is closed.  After a
 * death there is no agreeing: the status is a failure. */
static int finish_progress(emu_mpi *m, double now)
{
    struct emu_mpi_wire *w = m->wire;
    if (!m->finishing)
        return 0;
    if (m->dead) {
        m->status = m->status != EMU_OK ? m->status : EMU_E_RUN;
        w->stage = FIN_DONE;
    } else if (w->stage == FIN_WAIT) {
        if (w->finish_began == 0)
            w->finish_began = now;
        int sent = w->n_sends == 0 && (!m->announce || w->announced) &&
                   (m->rank == 0 ? m->counts_received == m->size - 1 : m->counts_sent);
        int quiet = links_quiet(m);
        if (!sent || (!quiet && now - w->finish_began < m->timeout))
            return 0;
        w->unclean |= !quiet;
        w->agree_in = m->status;
        if (!mpi_ok(m, MPI_Iallreduce(&w->agree_in, &w->agree_out, 1, MPI_INT, MPI_MAX, w->comm, &w->agree_req),
                    "the end's agreement"))
            return 0;
        w->stage = FIN_AGREE;
        return 1;
    } else if (w->stage == FIN_AGREE) {
        if (!tested(m, &w->agree_req, "the end's agreement"))
            return 0;
        m->status = w->agree_out;
        close_all(m);
        w->stage = FIN_DONE;
    }
    m->finished = 1;
    return 1;
}

static void pause_for(double seconds)
{
    struct timespec t = {.tv_sec = (time_t)seconds, .tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&t, NULL);
}

/* The thread's passes: each under the session's lock; between passes that
 * moved nothing it sleeps, briefly while messages are in flight (MPI
 * progresses them only when called), longer when idle. */
static void *communicate(void *arg)
{
    emu_mpi *m = arg;
    double idle = 0;
    pthread_mutex_lock(&m->lock);
    post_control(m);
    while (!m->finished) {
        double now = emu_now();
        int in_flight = 0;
        emu_mpi_notice(m);
        silence(m, now);
        int busy = control_progress(m, now);
        beats(m, now);
        busy |= links_progress(m, now, &in_flight);
        busy |= agree_progress(m);
        busy |= announce_progress(m);
        busy |= sends_progress(m);
        busy |= counts_progress(m, now);
        busy |= finish_progress(m, now);
        if (busy)
            pthread_cond_broadcast(&m->changed);
        pthread_mutex_unlock(&m->lock);
        idle = busy ? 0 : in_flight ? 20e-6 : idle < 50e-6 ? 50e-6 : idle < 2e-3 ? 2 * idle : 2e-3;
        if (idle > 0)
            pause_for(idle);
        pthread_mutex_lock(&m->lock);
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

static int host_names(emu_mpi *m, char *err, size_t errlen)
{
    char mine[MPI_MAX_PROCESSOR_NAME] = "";
    int len = 0;
    MPI_Get_processor_name(mine, &len);
    char *all = calloc((size_t)m->size, MPI_MAX_PROCESSOR_NAME);
    m->host = calloc((size_t)m->size, sizeof *m->host);
    if (!all || !m->host ||
        MPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, m->wire->comm) !=
            MPI_SUCCESS) {
        free(all);
        return emu_fail(err, errlen, EMU_E_TOPOLOGY, "MPI: cannot learn the ranks' hosts");
    }
    for (int r = 0; r < m->size; r++) {
        all[(size_t)(r + 1) * MPI_MAX_PROCESSOR_NAME - 1] = '\0';
        m->host[r] = strdup(all + (size_t)r * MPI_MAX_PROCESSOR_NAME);
        if (!m->host[r]) {
            free(all);
            return emu_fail(err, errlen, EMU_E_TOPOLOGY, "out of memory");
        }
    }
    free(all);
    return EMU_OK;
}

static int wire_init(emu_mpi *m, char *err, size_t errlen)
{
    struct emu_mpi_wire *w = m->wire;
    int *ub = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    m->tag_ub = flag && ub ? *ub : 32767;
    w->last_seen = calloc((size_t)m->size, sizeof *w->last_seen);
    w->beat_req = calloc((size_t)m->size, sizeof *w->beat_req);
    if (!w->last_seen || !w->beat_req)
        return emu_fail(err, errlen, EMU_E_TOPOLOGY, "out of memory");
    double now = emu_now();
    for (int r = 0; r < m->size; r++) {
        w->last_seen[r] = now;
        w->beat_req[r] = MPI_REQUEST_NULL;
    }
    w->beat_every = m->timeout / 4 < 1.0 ? m->timeout / 4 : 1.0;
    w->last_pass = now;
    w->ctl_req = MPI_REQUEST_NULL;
    w->beat.kind = CTL_BEAT;
    return pthread_create(&w->thread, NULL, communicate, m) == 0
               ? EMU_OK
               : emu_fail(err, errlen, EMU_E_TOPOLOGY, "cannot start the MPI communication thread");
}

static void wire_free(emu_mpi *m)
{
    struct emu_mpi_wire *w = m->wire;
    if (!w)
        return;
    for (size_t i = 0; w->links && i < m->n_links; i++) {
        for (unsigned j = 0; w->links[i].fl && j < w->links[i].window; j++)
            emu_buffer_release(&w->links[i].fl[j].buf);
        free(w->links[i].fl);
        emu_buffer_release(&w->links[i].rx);
    }
    for (size_t i = 0; i < w->n_sends; i++)
        free(w->sends[i]);
    free(w->sends);
    free(w->links);
    free(w->last_seen);
    free(w->beat_req);
    free(w);
    m->wire = NULL;
}

const int emu_mpi_available = 1;

int emu_mpi_backend_start(emu_mpi *m, char *err, size_t errlen)
{
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
        return emu_fail(err, errlen, EMU_E_TOPOLOGY, "MPI_Init_thread failed");
    m->wire = calloc(1, sizeof *m->wire);
    int rc = m->wire ? EMU_OK : emu_fail(err, errlen, EMU_E_TOPOLOGY, "out of memory");
    if (rc == EMU_OK && provided < MPI_THREAD_SERIALIZED)
        rc = emu_fail(err, errlen, EMU_E_TOPOLOGY,
                      "this MPI gives thread level %d: narwhal needs MPI_THREAD_SERIALIZED (%d) or more", provided,
                      MPI_THREAD_SERIALIZED);
    if (rc == EMU_OK) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
        MPI_Comm_size(MPI_COMM_WORLD, &m->size);
        if (MPI_Comm_dup(MPI_COMM_WORLD, &m->wire->comm) != MPI_SUCCESS)
            rc = emu_fail(err, errlen, EMU_E_TOPOLOGY, "MPI: cannot make the session's communicator");
        else
            MPI_Comm_set_errhandler(m->wire->comm, MPI_ERRORS_RETURN);
    }
    if (rc == EMU_OK)
        rc = host_names(m, err, errlen);
    if (rc == EMU_OK)
        rc = wire_init(m, err, errlen);
    if (rc != EMU_OK) {
        wire_free(m);
        MPI_Finalize();
    }
    return rc;
}

int emu_mpi_backend_end(emu_mpi *m)
{
    struct emu_mpi_wire *w = m->wire;
    pthread_join(w->thread, NULL);
    int status = m->status;
    if (m->dead || w->unclean) {
        fflush(NULL);
        MPI_Abort(w->comm, status != EMU_OK ? status : EMU_E_RUN);
    }
    MPI_Comm_free(&w->comm);
    wire_free(m);
    MPI_Finalize();
    return status;
}

/* mpi_int.h: what the rank's side of a session (mpi_session.c) and its MPI backend (mpi_comm.c, or mpi_none.c without MPI) share. */
#ifndef NARWHAL_MPI_INT_H
#define NARWHAL_MPI_INT_H

#include <pthread.h>

#include "calls.h"
#include "mpi.h"
#include "ring.h"

/* One input of an actor whose writer runs on another rank, seen from one
 * of its two ranks.  Every rank numbers the topology's links alike (actors
 * in topology order, inputs in order), and link number L has tag
 * EMU_MPI_TAG_LINK0 + L on both. */
typedef struct emu_mpi_link {
    int out;          /* this rank runs the writer: its ring is the writer's outbox */
    int peer;         /* the other end's rank */
    int tag;
    size_t writer, reader, input;
    emu_ring *ring;   /* input `input` of `reader`, while attached; NULL otherwise */
    int done;         /* its end mark went through this run */
} emu_mpi_link;

enum { EMU_MPI_TAG_CONTROL = 1, EMU_MPI_TAG_COUNTS = 2, EMU_MPI_TAG_LINK0 = 16 };

/* What a rank sends rank 0 after its run, followed by n_actors
 * emu_actor_stats (the rows of the actors it ran; the others zero). */
typedef struct emu_mpi_counts {
    int ran;          /* 0: this rank reached no run (it failed before); nothing follows */
    int end, signal;  /* enum emu_end, and the signal with EMU_END_SIGNAL */
    unsigned runs;
    unsigned long long blocks, pauses;
    double wall_seconds, block_seconds;
    emu_cycle_stats cycle;
    unsigned long long n_actors;
} emu_mpi_counts;

struct emu_mpi_wire; /* the backend's own state */

struct emu_mpi {
    int rank, size;
    char **host;      /* per rank: its processor name */
    int tag_ub;       /* the largest tag MPI allows */
    double timeout;   /* seconds of silence after which a rank is presumed dead */
    FILE *log;
    int *rank_of;     /* per actor, once placed */
    const char **actor_host; /* per actor: its rank's host */
    unsigned char *here;     /* per actor: run by this rank */
    size_t n_actors;
    emu_mpi_link *links;
    size_t n_links;

    /* Everything below is shared with the communication thread: under lock. */
    pthread_mutex_t lock;
    pthread_cond_t changed; /* broadcast whenever one of these changed */
    emu_calls *watched;
    emu_ring *rings;        /* the run's every ring, while attached */
    size_t n_rings;
    int failed;             /* the session failed, here or elsewhere: nothing is to be stopped */
    int announce;           /* this rank's failure is to be sent to every rank (why) */
    char why[1536];
    int dead;               /* a rank fell silent */
    int ready, agreed;      /* emu_mpi_agree: the phase this rank reached; the last every rank reached */
    void *counts_out;       /* what this rank sends rank 0, once set */
    size_t counts_out_size;
    int counts_sent;
    int counts_wanted;      /* rank 0: gather asked for the others' counts */
    void **counts_in;       /* rank 0: per rank, what it sent (NULL: nothing yet) */
    size_t *counts_in_size;
    int counts_received;
    int finishing, finished;
    int status;             /* this rank's status at emu_mpi_finish; the worst of all once finished */
    struct emu_mpi_wire *wire;
};

/* The session failed (m->lock held): the first failure is kept in why,
 * logged (through the watched calls when a run is on, so that it fails,
 * else on m->log) unless `quiet`, every ring of the run is aborted, and,
 * with announce, sent to every rank.  Later ones are ignored. */
void emu_mpi_fail(emu_mpi *m, int announce, int quiet, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A failure of the watched calls (an actor's error on this rank), when
 * the session has none yet, becomes the session's, to be sent to every
 * rank (m->lock held; it was logged when it happened). */
void emu_mpi_notice(emu_mpi *m);

/* The backend: start sets rank, size, host and tag_ub and starts the
 * communication thread; end, once the thread set finished, joins it and
 * leaves MPI (MPI_Finalize, or MPI_Abort after a dead rank or a message
 * that could not be completed) and returns m->status. */
int emu_mpi_backend_start(emu_mpi *m, char *err, size_t errlen);
int emu_mpi_backend_end(emu_mpi *m);

#endif

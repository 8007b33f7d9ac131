/* mpi.h: `mpirun -np N narwhal run`: a topology's actors spread over MPI ranks, blocks carried between them, one abort and one table for all. */
#ifndef NARWHAL_MPI_H
#define NARWHAL_MPI_H

#include <stddef.h>
#include <stdio.h>

#include "emu.h"
#include "loader.h"
#include "run.h"

struct emu_calls;
struct emu_ring;

/*
 * A session across ranks (README.md, "Running across hosts").  Every rank
 * reads the whole topology and places every actor the same way
 * (mpi_place.h); each runs its own actors as --pipeline does, a thread per
 * actor and a ring per input.  An input whose writer is on another rank is
 * a link: the writer's rank has a ring (its outbox) that a communication
 * thread empties into MPI messages, the reader's rank a ring that the same
 * kind of thread fills, so the actors see the rings and keys (ring.h) they
 * see in one process, and every message (block, skip, end) arrives in
 * order.  Each link has one MPI tag; a block is a header (its key, mark,
 * size) sent with MPI_Issend and its bytes sent from the ring's own buffer,
 * received into a buffer that is swapped into the reader's ring: no copy on
 * either side.  At most the ring's depth of blocks is in flight per link
 * (the synchronous header completes only once the reader's rank has room),
 * so a slow reader holds its writer back as in one process.
 *
 * The communication thread is the only one that calls MPI between
 * emu_mpi_start and emu_mpi_finish (MPI_THREAD_SERIALIZED).  It also sends
 * a heartbeat to every rank each second (a quarter of the timeout when
 * shorter) and watches for:
 * - a failure on its rank (an actor's error, a load that failed): it sends
 *   every rank an abort naming the actor, the rank and the host, and every
 *   rank aborts as the host contract says (process_unload without
 *   process_stop: no output is published anywhere);
 * - a rank silent for the timeout (--mpi-timeout, default 15 s): presumed
 *   dead, reported, this rank aborts, and the job ends with MPI_Abort.
 * No rank calls process_stop before every rank reported that its part of
 * the run ended without error (emu_mpi_agree), so that a stop publishes
 * the outputs everywhere or nowhere.
 */

typedef struct emu_mpi emu_mpi;

/* The default --mpi-timeout, seconds. */
#define EMU_MPI_TIMEOUT 15.0

/* 1 when this narwhal was built with MPI (mpi_comm.c), 0 without (mpi_none.c). */
extern const int emu_mpi_available;

/* The number of processes mpirun started when this one is one of them
 * (OMPI_COMM_WORLD_SIZE, or PMIx's/PMI's size), 0 when it was not started
 * by mpirun.  Reads the environment only: MPI is not initialised. */
int emu_mpi_launched(void);

/* MPI_Init_thread, every rank's host, the communication thread.  Returns
 * EMU_OK, or EMU_E_TOPOLOGY with err (this narwhal was built without MPI,
 * or MPI gave less than MPI_THREAD_SERIALIZED). */
int emu_mpi_start(emu_mpi **out, double timeout, char *err, size_t errlen);

int emu_mpi_rank(const emu_mpi *m);
int emu_mpi_size(const emu_mpi *m);

/* Where this rank writes its messages: stderr, every line saying
 * "narwhal: rank R (HOST): ...". */
FILE *emu_mpi_log(emu_mpi *m);

/* Places the topology's actors on the ranks (mpi_place.h, map_file from
 * --place or NULL) and sets up the links between them; the same on every
 * rank.  EMU_E_TOPOLOGY with err when the placement is refused. */
int emu_mpi_place(emu_mpi *m, const emu_topology *t, const char *map_file, char *err, size_t errlen);

/* Marks the chain's actors this rank runs (emu_chain.here); after
 * emu_mpi_place. */
int emu_mpi_claim(emu_mpi *m, emu_chain *c);

/* run.c: the session's calls, watched for failures from emu_calls_init to
 * emu_calls_free (another rank's abort fails it through emu_calls_fail).
 * emu_mpi_watch returns EMU_E_RUN when another rank already failed. */
int emu_mpi_watch(emu_mpi *m, struct emu_calls *s);
void emu_mpi_unwatch(emu_mpi *m);

/* pipeline.c: the run's n_rings rings (ring ring_of[k] + i carries input
 * i of actor k) given to the links for the run (and aborted, every one,
 * when the run fails on any rank); detach, once this rank's threads
 * ended, waits until every link has carried its end mark (EMU_OK) or the
 * run failed anywhere (EMU_E_RUN), and takes the rings back. */
int emu_mpi_attach(emu_mpi *m, struct emu_ring *rings, size_t n_rings, const size_t *ring_of);
int emu_mpi_detach(emu_mpi *m);

/* The points of a run every rank reaches before any goes on (run.c): every
 * actor started (so that no rank's blocks wait for another's
 * initialisation, and the time blocks run is theirs), and, before
 * process_stop, this rank's part of the run ended without error. */
enum emu_mpi_phase { EMU_MPI_STARTED = 1, EMU_MPI_ENDED = 2 };

/* This rank reached phase; waits until every rank did (EMU_OK) or one
 * failed (EMU_E_RUN).  Phases come in order, once each. */
int emu_mpi_agree(emu_mpi *m, enum emu_mpi_phase phase);

/* After the run: rank 0 receives every rank's counts into res (each actor's
 * row from the rank that ran it; blocks summed; wall and block time the
 * longest; the end the worst) and where each actor ran (res->rank_of,
 * res->host_of, valid until emu_mpi_finish); the other ranks send theirs. */
int emu_mpi_gather(emu_mpi *m, emu_run_result *res);

/* The end of the session on this rank.  A failure outside a run (status not
 * EMU_OK, err its message) is sent to every rank; then every rank agrees on
 * the worst status, MPI_Finalize, and that status is returned.  After a
 * rank fell silent: MPI_Abort (the job cannot end cleanly without it).
 * Frees m. */
int emu_mpi_finish(emu_mpi *m, int status, const char *err);

#endif

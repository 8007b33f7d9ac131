/* mpi_log.h: a rank's log: stderr, every line naming the rank and its host, written whole so that ranks' lines do not mix. */
#ifndef NARWHAL_MPI_LOG_H
#define NARWHAL_MPI_LOG_H

#include <stdio.h>

/* A stream whose every line reaches stderr as "narwhal: rank R (HOST): ..."
 * (a line's own leading "narwhal: " is not repeated), in one write(2) per
 * line; NULL when out of memory.  fclose flushes it. */
FILE *emu_mpi_log_open(int rank, const char *host);

#endif

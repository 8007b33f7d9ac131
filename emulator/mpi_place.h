/* mpi_place.h: which MPI rank runs each actor of a topology: by <hostname>, spread over any number of ranks, or a mapping file. */
#ifndef NARWHAL_MPI_PLACE_H
#define NARWHAL_MPI_PLACE_H

#include <stddef.h>

#include "topology.h"

/*
 * The rules, in this order (README.md, "Running across hosts"):
 *
 * - A mapping file (`narwhal run --place FILE`): one "NAME RANK" per line,
 *   '#' starting a comment; NAME is an actor's name or a <hostname> value.
 *   An actor goes to the rank of its own name's line, else to its
 *   hostname's (an actor without <hostname> is on "localhost"); an actor
 *   neither names is an error, and so is a rank outside 0..ranks-1 or a
 *   name given twice.
 * - One rank: every actor on it.
 * - Every actor on "localhost" (or without <hostname>): spread.  Producers
 *   are dealt to ranks 0, 1, ..., ranks-1, 0, ... in document order; an
 *   actor with one input goes to its source's rank (a crystal's PSA stays
 *   with its producer, so that its traces never cross a link); an actor
 *   with several inputs (a join: the event builder) goes to rank 0, and
 *   what reads it follows it.
 * - Otherwise a rank per distinct <hostname>, in order of first appearance
 *   in the file ("localhost" is one name among the others); there must be
 *   as many ranks as names.
 *
 * rank_of gets t->n_actors entries.  Returns EMU_OK, or EMU_E_TOPOLOGY with
 * one line in err ("FILE:LINE: message" for a mapping file's line).
 */
int emu_place(const emu_topology *t, int ranks, const char *map_file, int *rank_of, char *err, size_t errlen);

/* The <hostname> an actor is placed by: "localhost" when it has none. */
const char *emu_place_hostname(const emu_actor_spec *a);

#endif

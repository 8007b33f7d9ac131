/* topology.h: a NARVAL XML topology read into a checked chain of actor specifications. */
#ifndef NARWHAL_TOPOLOGY_H
#define NARWHAL_TOPOLOGY_H

#include <stddef.h>
#include <stdio.h>

enum emu_role { EMU_PRODUCER, EMU_FILTER, EMU_CONSUMER };

/* One actor as the topology describes it.  Line numbers point into the
 * topology file so that every later error (a library not found, a missing
 * symbol) can name the element at fault. */
typedef struct emu_actor_spec {
    char *name;
    enum emu_role role;
    long line;            /* the <producer>/<intermediary>/<consumer> element */
    char *library;        /* <library> as written */
    long library_line;
    char *output;         /* <output_buffer_name>; NULL for a consumer */
    long output_line;
    unsigned output_size; /* <size output_buffer="..."> in bytes */
    char *size_buffer;    /* the output_buffer attribute of <size> */
    long size_line;
    char *source;         /* <data_source> text: the upstream actor; NULL for a producer */
    char *source_buffer;  /* its source_buffer attribute */
    long source_line;
} emu_actor_spec;

/* A topology that passed every check: actors[0] is the producer,
 * actors[n_actors - 1] the consumer, and each actor reads the output of the
 * one before it. */
typedef struct emu_topology {
    char *path;           /* as given, used in messages */
    char *dir;            /* the directory holding it */
    long root_line;
    emu_actor_spec *actors;
    size_t n_actors;
} emu_topology;

/* Reads and checks a topology file.  On failure returns EMU_E_TOPOLOGY with
 * one line "FILE:LINE: message" in err and sets *out to NULL.  notes, when
 * not NULL, receives one line per element the emulator ignores. */
int emu_topology_read(const char *path, FILE *notes, emu_topology **out, char *err, size_t errlen);

/* The same from memory; path only names the text in messages.  Loads
 * nothing: safe to call on untrusted bytes (the fuzz target does). */
int emu_topology_parse(const char *path, const char *xml, size_t len, FILE *notes,
                       emu_topology **out, char *err, size_t errlen);

void emu_topology_free(emu_topology *t);

/* "producer", "intermediary" or "consumer", as the topology spells them. */
const char *emu_role_name(enum emu_role role);

/* Checks how the actors connect and puts them in data-flow order (graph.c).
 * Called by emu_topology_parse; exposed for the tests. */
int emu_graph_order(emu_topology *t, char *err, size_t errlen);

#endif

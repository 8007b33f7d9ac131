/* topology.h: a NARVAL XML topology read into a checked, acyclic graph of actor specifications. */
#ifndef NARWHAL_TOPOLOGY_H
#define NARWHAL_TOPOLOGY_H

#include <stddef.h>
#include <stdio.h>

enum emu_role { EMU_PRODUCER, EMU_FILTER, EMU_CONSUMER };

/* How the readers of one buffer divide its blocks.  Without a `share`
 * attribute on its <data_source>, a reader gets every block (a monitor
 * tapping a stream); the readers of one buffer that carry share="..." are
 * instances of one stage and split its blocks between them (NARVAL ignores
 * the attribute). */
enum emu_share {
    EMU_SHARE_NONE,        /* every block */
    EMU_SHARE_ROUND_ROBIN, /* share="round-robin": block i to instance i mod K, in topology order */
    EMU_SHARE_FIRST_FREE,  /* share="first-free": the first idle instance after the last one chosen */
};

/* One <data_source> of an actor: one input stream. */
typedef struct emu_source {
    char *actor;          /* its text: the upstream actor */
    char *buffer;         /* its source_buffer attribute */
    enum emu_share share; /* its share attribute */
    long line;
    size_t from;          /* the upstream actor's index in emu_topology.actors, once checked */
} emu_source;

/* One actor as the topology describes it.  Line numbers point into the
 * topology file so that every later error (a library not found, a missing
 * symbol) can name the element at fault. */
typedef struct emu_actor_spec {
    char *name;
    enum emu_role role;
    long line;            /* the <producer>/<intermediary>/<consumer> element */
    char *library;        /* <library> as written, or the main file's `set library`; NULL: neither gave one */
    const char *library_file; /* the file that named it (the topology or the main file), for messages */
    const char *library_dir;  /* the directory a library path with a '/' is relative to: that file's */
    long library_line;
    char *conf_dir;       /* the main file's `set directory_path`, relative to the working directory;
                             NULL: the configuration layout beside the topology (confdir.h) */
    long conf_line;
    char *hostname;       /* <hostname>; NULL when absent (read as localhost) */
    long hostname_line;
    char *output;         /* <output_buffer_name>; NULL for a consumer */
    long output_line;
    unsigned output_size; /* <size output_buffer="..."> in bytes */
    char *size_buffer;    /* the output_buffer attribute of <size> */
    long size_line;
    emu_source *sources;  /* its <data_source> elements, in document order: input i is sources[i] */
    size_t n_sources;     /* 0 for a producer */
    unsigned input_buffers; /* the input_buffers attribute (1 when absent): must equal n_sources */
} emu_actor_spec;

/* A topology that passed every check (graph.c): an acyclic graph whose
 * actors are in topological order, every actor after the actors it reads
 * (ties kept in document order, so a chain is in data-flow order).  What
 * the command line and a main configuration file add to the XML
 * (libraries, configuration directories) is kept here too. */
typedef struct emu_topology {
    char *path;           /* as given, used in messages */
    char *dir;            /* the directory holding it */
    char *main_path;      /* the main configuration file that named it (mainconf.h); NULL: none */
    char *main_dir;       /* the directory holding that file */
    const char *conf_list; /* --conf: directories separated by ':', most specific first (not owned);
                              NULL: the layout beside the topology (confdir.h) */
    long root_line;
    emu_actor_spec *actors;
    size_t n_actors;
} emu_topology;

/* Reads and checks a topology file.  On failure returns EMU_E_TOPOLOGY with
 * one line "FILE:LINE: message" in err and sets *out to NULL.  notes, when
 * not NULL, receives one line per element the emulator ignores.  An actor
 * without <library> is accepted here (NARVAL's own topologies have none: its
 * main configuration file names the libraries); loading refuses it. */
int emu_topology_read(const char *path, FILE *notes, emu_topology **out, char *err, size_t errlen);

/* The same from memory; path only names the text in messages.  Loads
 * nothing: safe to call on untrusted bytes (the fuzz target does). */
int emu_topology_parse(const char *path, const char *xml, size_t len, FILE *notes,
                       emu_topology **out, char *err, size_t errlen);

void emu_topology_free(emu_topology *t);

/* The directory part of path ("." when it has none; malloc'd, NULL when out of memory). */
char *emu_directory_of(const char *path);

/* "producer", "intermediary" or "consumer", as the topology spells them. */
const char *emu_role_name(enum emu_role role);

/* "round-robin" or "first-free" as the attribute spells them; "every block" for EMU_SHARE_NONE. */
const char *emu_share_name(enum emu_share share);

/* Whether every actor reads the one before it: a producer-to-consumer chain. */
int emu_topology_is_chain(const emu_topology *t);

/* Checks how the actors connect (names, sources, counts, cycles, unread
 * buffers, shares) and puts them in topological order, setting every
 * emu_source.from (graph.c).  Called by emu_topology_parse; exposed for
 * the tests. */
int emu_graph_order(emu_topology *t, char *err, size_t errlen);

#endif

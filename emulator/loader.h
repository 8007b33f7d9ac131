/* loader.h: finds actor libraries, loads them with dlopen and resolves their process_* symbols. */
#ifndef NARWHAL_LOADER_H
#define NARWHAL_LOADER_H

#include <stddef.h>
#include <stdio.h>

#include "confdir.h"
#include "narval.h"
#include "topology.h"

/* One loaded actor library.  Optional symbols it lacks are NULL. */
typedef struct emu_library {
    char *path;     /* the file dlopen was given: the library, or a private copy of it */
    char *identity; /* the library's real path (a copy's original) */
    const char *conf_dir; /* what its process_config gets (owned by the chain's emu_confs) */
    int private_copy;     /* path is a copy made for actors whose configuration differs */
    void *handle;
    narval_config_fn *config;
    narval_register_fn *register_instance;
    narval_lifecycle_fn *initialise, *start, *stop, *pause, *resume, *reset, *unload;
    void *block; /* a narval_{producer,filter,consumer}_block_fn, by the role of its actors */
    narval_describe_fn *describe;
    narval_progress_fn *progress; /* the live view's (narval.h) */
    narval_spectra_fn *spectra;
    narval_device_fn *device;     /* the table's device column */
} emu_library;

/* The process_* symbols in the order `inspect` lists them. */
enum emu_symbol_kind {
    EMU_SYM_MANDATORY, /* process_config, process_register, process_initialise, process_block */
    EMU_SYM_OPTIONAL,  /* NARVAL's other calls: a missing one succeeds and does nothing */
    EMU_SYM_EXTENSION, /* process_describe, process_progress, process_spectra, process_device: Narwhal's,
                          ignored by NARVAL */
};
typedef struct emu_symbol {
    const char *name;
    enum emu_symbol_kind kind;
    size_t offset; /* of its pointer within emu_library */
} emu_symbol;
extern const emu_symbol emu_symbols[];
extern const size_t emu_n_symbols;

/* Where the library `name` of a topology is: a name with a '/' is taken
 * relative to base_dir (the topology's directory; NULL: the current
 * directory) unless absolute; a bare
 * name is looked up in dirs, in order.  On failure err says where it looked. */
int emu_library_locate(const char *name, const char *base_dir, const char *const *dirs, size_t n_dirs, char **path,
                       char *err, size_t errlen);

/* dlopen (RTLD_NOW, RTLD_LOCAL, RTLD_NODELETE: emu_library_close leaves the
 * library and what it brought in mapped) and resolve every process_* symbol. */
int emu_library_open(const char *path, emu_library *lib, char *err, size_t errlen);
/* Whether symbol emu_symbols[i] was found in lib. */
int emu_library_has(const emu_library *lib, size_t i);
/* The first mandatory symbol lib lacks, or NULL. */
const char *emu_library_missing(const emu_library *lib);
void emu_library_close(emu_library *lib);

/* A topology with its libraries loaded; nothing called yet.  In NARVAL
 * every actor is its own process: a library's process-wide state (what
 * process_config read, its counters) is never shared between actors that
 * see different configuration files.  Actors naming one library share one
 * load only when they see the same files (emu_confs_same); the first load
 * is of the library itself, each further configuration gets a private copy
 * of the file (docs/HOSTING.md tells why not dlmopen). */
typedef struct emu_chain {
    const emu_topology *topology;
    emu_library *libraries;
    size_t n_libraries;
    size_t *library_of; /* per actor, in chain order: its index in libraries */
    emu_confs *confs;   /* every actor's configuration; its private tree goes with the chain */
    const unsigned char *here; /* per actor: this process runs it (mpi.h: placed on its rank); NULL: every actor */
} emu_chain;

/* Whether this process makes actor k's calls: every actor in one process,
 * under mpirun those of its rank (the others' libraries are loaded, never
 * called). */
static inline int emu_chain_runs(const emu_chain *c, size_t k) { return !c->here || c->here[k]; }

/* Resolves every actor's configuration (confdir.h), then locates, loads and
 * checks the library of every actor: the library named by <library> or by
 * the main configuration file, looked for in dirs.  Every failure is
 * EMU_E_TOPOLOGY with "FILE:LINE: message" naming the element or the line
 * at fault; an actor without a library is one. */
int emu_chain_load(const emu_topology *t, const char *const *dirs, size_t n_dirs, emu_chain **out, char *err,
                   size_t errlen);
/* The first actor of library lib, in chain order: the one whose name the
 * library's process_config is reported under. */
size_t emu_chain_first_actor(const emu_chain *c, size_t lib);
/* Per actor: the directory its process_config gets and where each file it
 * sees there comes from, or the actor whose library and configuration it
 * shares; one "narwhal: " line each (validate, and run with -v). */
void emu_chain_print_conf(FILE *out, const emu_chain *c);
/* Unloads nothing (RTLD_NODELETE) but closes the handles, frees the chain and
 * removes its private directories. */
void emu_chain_free(emu_chain *c);

#endif

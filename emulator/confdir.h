/* confdir.h: each actor's configuration: the directories searched, the files found, the one directory process_config gets. */
#ifndef NARWHAL_CONFDIR_H
#define NARWHAL_CONFDIR_H

#include <stddef.h>

#include "topology.h"

/*
 * Where an actor's configuration files are looked for, most specific first:
 *   - the main configuration file gave the actor a directory
 *     (`set directory_path DIR`): DIR alone;
 *   - else --conf D1:D2:...: D1/<actor>/, D1, D2/<actor>/, D2, ...;
 *   - else beside the topology NAME.xml: conf/NAME/<actor>/, conf/<actor>/,
 *     conf/NAME/, conf/.
 * (<actor>/ is looked for only when the actor's name can be a directory's:
 * no '/', not starting with '.'.)  The actor sees the first entry of each
 * name along that list; names starting with '.' are not looked at.
 *
 * NARVAL hands process_config ONE existing directory, so the actor gets:
 * the one searched directory that exists, when only one does (the files it
 * sees are then those of that directory); otherwise a private directory made
 * for it, $TMPDIR/narwhal-XXXXXX/<actor>/, holding a symbolic link (absolute
 * target) to each file it sees, or nothing when no searched directory exists.
 * emu_confs_free removes the private tree.  docs/HOSTING.md tells why.
 */

/* One configuration file as the actor sees it. */
typedef struct emu_conf_file {
    char *name;   /* its name in the directory process_config gets */
    char *source; /* the file itself: absolute, every link resolved */
} emu_conf_file;

typedef struct emu_conf {
    char **search;        /* the directories looked in, most specific first */
    size_t n_search;
    const char *only;     /* the one of them that exists, when exactly one does; else NULL */
    emu_conf_file *files; /* what the actor sees, sorted by name */
    size_t n_files;
    char *dir;            /* what process_config gets, once emu_confs_dir made it; else NULL */
    int is_private;       /* dir is a directory of links made for this actor */
} emu_conf;

typedef struct emu_confs {
    char *root;       /* $TMPDIR/narwhal-XXXXXX, made when first needed; else NULL */
    emu_conf *actors; /* one per actor, in chain order */
    size_t n;
} emu_confs;

/* Finds every actor's search list and files; makes nothing on disk.  A
 * searched directory that exists but cannot be read is EMU_E_TOPOLOGY. */
int emu_confs_resolve(const emu_topology *t, emu_confs **out, char *err, size_t errlen);

/* Whether actors a and b see the same files (same names, same real files):
 * then they may share one library and one process_config. */
int emu_confs_same(const emu_confs *c, size_t a, size_t b);

/* Gives actor k its directory (c->actors[k].dir), making the private one
 * when it needs one.  Failures are EMU_E_TOPOLOGY naming the path. */
int emu_confs_dir(emu_confs *c, const emu_topology *t, size_t k, char *err, size_t errlen);

/* Copies the library at path into the private tree (.libs/<k>/, the same
 * file name) for actor k, so that dlopen loads a second, independent copy;
 * *copy is the new file's path (malloc'd). */
int emu_confs_copy(emu_confs *c, size_t k, const char *path, char **copy, char *err, size_t errlen);

/* Removes the private tree and frees everything. */
void emu_confs_free(emu_confs *c);

#endif

/* mainconf.h: reads NARVAL's plain-text main configuration file: the instance, its topology, each actor's library and directory. */
#ifndef NARWHAL_MAINCONF_H
#define NARWHAL_MAINCONF_H

#include <stddef.h>
#include <stdio.h>

#include "topology.h"

/*
 * NARVAL starts a sub-system from a script of shell commands: it names the
 * instance, the topology file, then the library (and here the configuration
 * directory) of each actor; NARVAL's topology XML has no <library> element.
 * `narwhal run --main FILE` reads such a script, one command per line, words
 * separated by blanks, '#' to the end of the line a comment:
 *
 *   launch INSTANCE HOST [local]                 the instance (sub-system) name; first
 *   set configuration_file TOPOLOGY.xml INSTANCE the topology
 *   set library LIB INSTANCE ACTOR               the actor's shared object (as <library>)
 *   set directory_path DIR INSTANCE ACTOR        the directory its process_config gets
 *   set action STATE INSTANCE                    NARVAL's state changes (configure, load,
 *                                                initialise, start, stop, reset_com,
 *                                                unload, unconfigure, finish): the
 *                                                emulator makes them itself; noted only
 *
 * INSTANCE may be written $1, as in NARVAL's scripts that take it as their
 * first argument.  Relative paths are relative to the main file's directory;
 * a LIB without '/' is looked for like a <library>.  `set library` replaces
 * the actor's <library>; an actor without `set directory_path` has the
 * configuration layout beside the topology (confdir.h).
 */

/* Reads the main file at path and the topology it names, and gives the
 * topology's actors the libraries and directories the file sets.  Failures
 * are EMU_E_TOPOLOGY with one line "FILE:LINE: message" (the main file's, or
 * the topology's); *out is then NULL.  notes, when not NULL, receives a line
 * per command the emulator does not act on and per element it ignores. */
int emu_main_read(const char *path, FILE *notes, emu_topology **out, char *err, size_t errlen);

#endif

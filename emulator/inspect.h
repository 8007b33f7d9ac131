/* inspect.h: `narwhal inspect`: which process_* symbols an actor library exports, and its own description. */
#ifndef NARWHAL_INSPECT_H
#define NARWHAL_INSPECT_H

#include <stddef.h>
#include <stdio.h>

/* Loads the library `name` (a path, or a bare name looked up in dirs) and
 * prints its symbols and process_describe() text to out.  A library that
 * cannot be loaded or lacks a mandatory symbol is EMU_E_TOPOLOGY. */
int emu_inspect(const char *name, const char *const *dirs, size_t n_dirs, FILE *out, char *err, size_t errlen);

#endif

/* emu.h: status codes, limits and error formatting shared by the narwhal emulator's modules. */
#ifndef NARWHAL_EMU_H
#define NARWHAL_EMU_H

#include <stdarg.h>
#include <stddef.h>

/* Every emulator function that can fail returns one of these; they are also
 * the process exit statuses of `narwhal`. */
enum emu_status {
    EMU_OK = 0,
    EMU_E_RUN = 1,      /* an actor reported an error, or the run could not go on */
    EMU_E_TOPOLOGY = 2, /* bad usage, topology, library or input file: nothing was started */
};

/* The largest output buffer: a <size> above it is refused, and an actor that
 * asks for more (NARVAL_E_OUTPUT_SIZE) stops the run.  1 GiB keeps every size
 * within the ABI's unsigned int and within what one host can lend a chain. */
#define EMU_MAX_BUFFER (1u << 30)

/* The most actors one chain may have; the chain checks are quadratic in it. */
#define EMU_MAX_ACTORS 1024

/* A topology file larger than this is refused before libxml2 sees it. */
#define EMU_MAX_TOPOLOGY_BYTES (16u << 20)

/* Writes a printf-style message into err (always terminated, truncated to
 * errlen, control characters turned into blanks so that it is one line) and
 * returns code, so that a failure reads `return emu_fail(...)`. */
int emu_fail(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The same for a topology error: "FILE:LINE: message"; returns EMU_E_TOPOLOGY. */
int emu_fail_at(char *err, size_t errlen, const char *file, long line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
int emu_vfail_at(char *err, size_t errlen, const char *file, long line, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));

#endif

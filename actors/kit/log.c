/* log.c: the kit's logging to stderr with the actor's name, and the mapping of libadf statuses to NARVAL codes. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit.h"

/* NARWHAL_VERBOSE, read at the first call and kept (-1 until then): the
 * environment is not searched per log line.  Threads that race to the first
 * call read the same value. */
static atomic_int verbose = -1;

bool kit_verbose(void)
{
    int v = atomic_load_explicit(&verbose, memory_order_relaxed);
    if (v < 0) {
        const char *e = getenv("NARWHAL_VERBOSE");
        v = e && *e && strcmp(e, "0") != 0;
        atomic_store_explicit(&verbose, v, memory_order_relaxed);
    }
    return v;
}

static const char *level_tag(kit_level level)
{
    switch (level) {
    case KIT_DEBUG: return "debug: ";
    case KIT_WARN: return "warning: ";
    case KIT_ERROR: return "error: ";
    default: return "";
    }
}

/* Formats the whole line first so that it reaches stderr in one write. */
static void log_line(const char *who, kit_level level, const char *suffix, const char *fmt,
                     va_list ap)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "[%s] %s", who ? who : "actor", level_tag(level));
    if (n < 0)
        return;
    size_t at = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    vsnprintf(line + at, sizeof line - at, fmt, ap);
    at = strlen(line);
    snprintf(line + at, sizeof line - at, "%s", suffix);
    at = strlen(line);
    if (at == sizeof line - 1)
        memcpy(line + at - 3, "...", 3);
    line[at] = '\n';
    fwrite(line, 1, at + 1, stderr);
}

void kit_log(const char *who, kit_level level, const char *fmt, ...)
{
    if (level == KIT_DEBUG && !kit_verbose())
        return;
    va_list ap;
    va_start(ap, fmt);
    log_line(who, level, "", fmt, ap);
    va_end(ap);
}

unsigned kit_fail(const char *who, unsigned code, const char *fmt, ...)
{
    char suffix[64];
    snprintf(suffix, sizeof suffix, " (%s)", narval_strerror(code));
    va_list ap;
    va_start(ap, fmt);
    log_line(who, KIT_ERROR, suffix, fmt, ap);
    va_end(ap);
    return code;
}

unsigned kit_adf_code(int adf_status)
{
    switch (adf_status) {
    case ADF_OK: return NARVAL_OK;
    case ADF_E_SHORT:
    case ADF_E_PAST_END:
    case ADF_E_SUB_OVERRUN:
    case ADF_E_TOO_DEEP:
    case ADF_E_WRONG_ID:
    case ADF_E_PAYLOAD:
    case ADF_E_LIMIT: return NARVAL_E_INPUT;
    case ADF_E_NOSPACE:
    case ADF_E_TOO_BIG: return NARVAL_E_OUTPUT_SIZE;
    case ADF_E_IO:
    case ADF_E_TRUNCATED: return NARVAL_E_IO;
    case ADF_E_NOMEM: return NARVAL_E_NOMEM;
    default: return NARVAL_E_INTERNAL;
    }
}

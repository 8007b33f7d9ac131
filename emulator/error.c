/* error.c: formats the emulator's error messages into the caller's buffer. */
#include "emu.h"

#include <stdio.h>

/* A message is one line: control characters (a newline inside libxml2's
 * text, say) become blanks. */
static void one_line(char *err)
{
    for (; *err; err++)
        if ((unsigned char)*err < 0x20 || *err == 0x7f)
            *err = ' ';
}

int emu_fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    if (err && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
        one_line(err);
    }
    return code;
}

int emu_vfail_at(char *err, size_t errlen, const char *file, long line, const char *fmt, va_list ap)
{
    int n = snprintf(err, errlen, "%s:%ld: ", file, line);
    if (n >= 0 && (size_t)n < errlen)
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    if (errlen > 0)
        one_line(err);
    return EMU_E_TOPOLOGY;
}

int emu_fail_at(char *err, size_t errlen, const char *file, long line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emu_vfail_at(err, errlen, file, line, fmt, ap);
    va_end(ap);
    return EMU_E_TOPOLOGY;
}

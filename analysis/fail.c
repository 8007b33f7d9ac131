/* fail.c: formats the analysis library's error messages into the caller's buffer. */
#include "ana.h"

#include <stdarg.h>
#include <stdio.h>

int ana_fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    for (unsigned char *c = (unsigned char *)err; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            *c = ' ';
    return code;
}

/* pair.c: the naming rule that puts Narwhal's own frames in a file beside an AGATA-readable one (out.adf, out.narwhal.adf). */
#include "adf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *adf_narwhal_file(const char *path)
{
    if (!path)
        return NULL;
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t at = dot && dot != base ? (size_t)(dot - path) : strlen(path);
    size_t n = strlen(path) + sizeof ADF_NARWHAL_SUFFIX;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%.*s%s%s", (int)at, path, ADF_NARWHAL_SUFFIX, path + at);
    return out;
}

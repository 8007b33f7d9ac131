/* scan.c: reads an ADF file from start to end in chunks of whole frames, for the programs that look at every frame. */
#include "adf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SCAN_CHUNK (1u << 20) /* the first read buffer; grown for a larger frame */

static uint64_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : UINT64_MAX;
}

/* After ADF_E_TOO_BIG: a buffer as large as the next frame, unless the file
 * is too short to hold it (then it is truncated: no allocation of a length
 * read from a broken file) or it exceeds max_frame. */
static int grow_for_frame(adf_file *f, const char *path, size_t max_frame, uint8_t **buf, size_t *cap, char *msg,
                          size_t len)
{
    size_t need = adf_file_next_length(f);
    uint64_t at = adf_file_offset(f), size = file_size(path);
    if (size != UINT64_MAX && at + need > size) {
        snprintf(msg, len, "%s: the file ends inside the frame at offset %llu: length %zu, only %llu bytes left", path,
                 (unsigned long long)at, need, (unsigned long long)(size - at));
        return ADF_E_TRUNCATED;
    }
    if (need > max_frame) {
        snprintf(msg, len, "%s: the frame at offset %llu is %zu bytes, above the %zu-byte limit", path,
                 (unsigned long long)at, need, max_frame);
        return ADF_E_LIMIT;
    }
    uint8_t *grown = realloc(*buf, need);
    if (!grown) {
        snprintf(msg, len, "%s: out of memory for a %zu-byte frame", path, need);
        return ADF_E_NOMEM;
    }
    *buf = grown;
    *cap = need;
    return ADF_OK;
}

static int scan(adf_file *f, const char *path, size_t max_frame, adf_scan_fn *fn, void *ctx, char *msg, size_t len)
{
    size_t cap = SCAN_CHUNK, used = 0;
    uint8_t *buf = malloc(cap);
    int rc = ADF_OK;
    if (!buf) {
        snprintf(msg, len, "%s: out of memory", path);
        return ADF_E_NOMEM;
    }
    for (;;) {
        uint64_t base = adf_file_offset(f);
        int st = adf_file_read(f, buf, cap, &used, NULL);
        if (st == ADF_E_TOO_BIG) {
            rc = grow_for_frame(f, path, max_frame, &buf, &cap, msg, len);
            if (rc != ADF_OK)
                break;
            continue;
        }
        if (st != ADF_OK) {
            adf_file_describe(f, st, msg, len);
            rc = st;
            break;
        }
        if (used == 0 || fn(ctx, buf, used, base))
            break;
    }
    free(buf);
    return rc;
}

int adf_file_scan(const char *path, size_t max_frame, adf_scan_fn *fn, void *ctx, char *msg, size_t len)
{
    adf_file *f = NULL;
    if (adf_file_open_read(&f, path) != ADF_OK) {
        int saved = errno;
        snprintf(msg, len, "%s: cannot open: %s", path, strerror(saved));
        errno = saved;
        return ADF_E_IO;
    }
    int rc = scan(f, path, max_frame, fn, ctx, msg, len);
    adf_file_close(f);
    return rc;
}

/* scan.c: reads an ADF file from start to end in chunks of whole frames, for the commands that look at every frame. */
#include "scan.h"
#include "adf.h"
#include "emu.h"

#include <errno.h>
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
 * is too short to hold it (then it is truncated) or it exceeds the limit. */
static int grow_for_frame(adf_file *f, const char *path, uint8_t **buf, size_t *cap, char *err, size_t errlen)
{
    size_t need = adf_file_next_length(f);
    uint64_t at = adf_file_offset(f), size = file_size(path);
    if (size != UINT64_MAX && at + need > size)
        return emu_fail(err, errlen, EMU_E_RUN,
                        "%s: the file ends inside the frame at offset %llu: length %zu, only %llu bytes left", path,
                        (unsigned long long)at, need, (unsigned long long)(size - at));
    if (need > EMU_MAX_BUFFER)
        return emu_fail(err, errlen, EMU_E_RUN, "%s: the frame at offset %llu is %zu bytes, above the %u-byte limit",
                        path, (unsigned long long)at, need, EMU_MAX_BUFFER);
    uint8_t *grown = realloc(*buf, need);
    if (!grown)
        return emu_fail(err, errlen, EMU_E_RUN, "%s: out of memory for a %zu-byte frame", path, need);
    *buf = grown;
    *cap = need;
    return EMU_OK;
}

static int scan(adf_file *f, const char *path, emu_scan_fn *fn, void *ctx, char *err, size_t errlen)
{
    size_t cap = SCAN_CHUNK, used = 0;
    uint8_t *buf = malloc(cap);
    int rc = EMU_OK;
    if (!buf)
        return emu_fail(err, errlen, EMU_E_RUN, "%s: out of memory", path);
    for (;;) {
        uint64_t base = adf_file_offset(f);
        int st = adf_file_read(f, buf, cap, &used, NULL);
        if (st == ADF_E_TOO_BIG) {
            rc = grow_for_frame(f, path, &buf, &cap, err, errlen);
            if (rc != EMU_OK)
                break;
            continue;
        }
        if (st != ADF_OK) {
            adf_file_describe(f, st, err, errlen);
            rc = EMU_E_RUN;
            break;
        }
        if (used == 0 || fn(ctx, buf, used, base))
            break;
    }
    free(buf);
    return rc;
}

int emu_scan_file(const char *path, emu_scan_fn *fn, void *ctx, char *err, size_t errlen)
{
    adf_file *f = NULL;
    if (adf_file_open_read(&f, path) != ADF_OK)
        return emu_fail(err, errlen, EMU_E_TOPOLOGY, "%s: cannot open: %s", path, strerror(errno));
    int rc = scan(f, path, fn, ctx, err, errlen);
    adf_file_close(f);
    return rc;
}

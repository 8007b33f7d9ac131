/* scan.h: reads an ADF file from start to end in chunks of whole frames, for the commands that look at every frame. */
#ifndef NARWHAL_SCAN_H
#define NARWHAL_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* Called with each chunk: whole top-level frames, already checked by the
 * file reader (composites included), and the file offset of the first.
 * Returns 0 to go on, anything else to stop the scan. */
typedef int emu_scan_fn(void *ctx, const uint8_t *buf, size_t used, uint64_t base);

/* Opens path and hands its frames to fn.  A file that cannot be opened is
 * EMU_E_TOPOLOGY; a bad or truncated frame, or one over EMU_MAX_BUFFER, is
 * EMU_E_RUN with libadf's message naming the file and the offset, after the
 * frames before it were handed over. */
int emu_scan_file(const char *path, emu_scan_fn *fn, void *ctx, char *err, size_t errlen);

#endif

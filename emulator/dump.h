/* dump.h: `narwhal dump`: an ADF file as one line per frame, sub-frames indented, known payloads summarised. */
#ifndef NARWHAL_DUMP_H
#define NARWHAL_DUMP_H

#include <stdio.h>

/* Prints the frames of the file at path to out, at most max_frames
 * top-level ones (0: all).  A bad or truncated frame ends the dump with
 * EMU_E_RUN and libadf's message naming the offset in err; so does a known
 * payload that does not decode, after the rest of the file was printed. */
int emu_dump(const char *path, unsigned long long max_frames, FILE *out, char *err, size_t errlen);

#endif

/* mpi_log.c: a rank's log: stderr, every line naming the rank and its host, written whole so that ranks' lines do not mix. */
#define _GNU_SOURCE /* fopencookie */
#include "mpi_log.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct prefixed {
    char prefix[320]; /* "rank R (HOST): " */
    char line[4096];
    size_t used;
} prefixed;

/* One line, with the prefix after its "narwhal: " (or before it when it
 * has none), in one write: lines of at most PIPE_BUF bytes from several
 * processes never interleave. */
static void emit(prefixed *p)
{
    static const char head[] = "narwhal: ";
    size_t n = strlen(head);
    char out[sizeof p->prefix + sizeof p->line + sizeof head];
    const char *rest = p->line;
    size_t rest_len = p->used;
    if (rest_len >= n && memcmp(rest, head, n) == 0) {
        rest += n;
        rest_len -= n;
    }
    size_t len = (size_t)snprintf(out, sizeof out, "%s%s", head, p->prefix);
    memcpy(out + len, rest, rest_len);
    len += rest_len;
    for (size_t done = 0; done < len;) {
        ssize_t w = write(STDERR_FILENO, out + done, len - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    p->used = 0;
}

static ssize_t log_write(void *cookie, const char *buf, size_t size)
{
    prefixed *p = cookie;
    for (size_t i = 0; i < size; i++) {
        p->line[p->used++] = buf[i];
        if (buf[i] == '\n' || p->used == sizeof p->line)
            emit(p);
    }
    return (ssize_t)size;
}

static int log_close(void *cookie)
{
    prefixed *p = cookie;
    if (p->used)
        emit(p);
    free(p);
    return 0;
}

FILE *emu_mpi_log_open(int rank, const char *host)
{
    prefixed *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    snprintf(p->prefix, sizeof p->prefix, "rank %d (%s): ", rank, host);
    cookie_io_functions_t io = {.write = log_write, .close = log_close};
    FILE *fp = fopencookie(p, "w", io);
    if (!fp) {
        free(p);
        return NULL;
    }
    setvbuf(fp, NULL, _IOLBF, 0);
    return fp;
}

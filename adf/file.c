/* file.c: ADF files, read whole frames at a time into a caller's buffer and appended from validated buffers. */
#include "adf.h"
#include "ahead.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ADF_FILE_IOBUF (1u << 20) /* one syscall per MiB for the small keys and frames */
#define ADF_FILE_BULK (4u << 20)  /* requests this large are read straight into the caller's buffer */

/* What went wrong, kept so that adf_file_describe can say where. */
typedef struct file_error {
    int status;
    int err_no;           /* for ADF_E_IO */
    const char *op;       /* for ADF_E_IO: "read", "write", ... */
    uint64_t offset;      /* of the bad frame in the file */
    uint32_t length;      /* its length field */
    uint64_t have;        /* bytes the file or buffer had for it */
    adf_iter frame_check; /* for errors inside a frame (sub-frames) or a refused buffer */
    int refused;          /* adf_file_write refused a bad buffer */
} file_error;

struct adf_file {
    FILE *fp;
    char *path;
    char *iobuf;
    int writing;
    uint64_t offset; /* reading: of the next frame to deliver; writing: of the end of the file */
    uint8_t key[ADF_KEY_SIZE];
    int have_key; /* the key at `offset` was read but its frame not yet delivered */
    int stream_off; /* after bulk reads: the stream is not yet where the frame-by-frame path reads next */
    unsigned threads; /* of a bulk read (adf_file_set_read_threads) */
    adf_ahead *ahead; /* the next bulk read's bytes, read by a thread (adf_file_set_read_ahead); NULL: off */
    double copying, checking; /* seconds of bulk reads (adf_file_read_stats) */
    int status;   /* sticky: the file cannot go on */
    file_error err;
};

static int open_file(adf_file **out, const char *path, const char *mode, int writing)
{
    if (!out || !path)
        return ADF_E_ARG;
    *out = NULL;
    adf_file *f = calloc(1, sizeof *f);
    if (!f)
        return ADF_E_NOMEM;
    int rc = ADF_E_NOMEM;
    f->path = strdup(path);
    f->iobuf = malloc(ADF_FILE_IOBUF);
    if (!f->path || !f->iobuf)
        goto fail;
    rc = ADF_E_IO;
    f->fp = fopen(path, mode);
    if (!f->fp)
        goto fail;
    setvbuf(f->fp, f->iobuf, _IOFBF, ADF_FILE_IOBUF);
    f->writing = writing;
    f->threads = ADF_FILE_READ_THREADS;
    *out = f;
    return ADF_OK;
fail:;
    int saved = errno;
    free(f->iobuf);
    free(f->path);
    free(f);
    errno = saved;
    return rc;
}

int adf_file_open_read(adf_file **f, const char *path) { return open_file(f, path, "rb", 0); }

int adf_file_open_write(adf_file **f, const char *path, int append)
{
    int rc = open_file(f, path, append ? "ab" : "wb", 1);
    if (rc != ADF_OK || !append)
        return rc;
    /* In append mode the stream position is unspecified until the first write. */
    off_t end;
    if (fseeko((*f)->fp, 0, SEEK_END) != 0 || (end = ftello((*f)->fp)) < 0) {
        int saved = errno;
        adf_file_close(*f);
        *f = NULL;
        errno = saved;
        return ADF_E_IO;
    }
    (*f)->offset = (uint64_t)end;
    return ADF_OK;
}

static int record(adf_file *f, int status, uint64_t offset, uint32_t length, uint64_t have)
{
    f->err = (file_error){.status = status, .offset = offset, .length = length, .have = have};
    return status;
}

static int record_io(adf_file *f, const char *op)
{
    int saved = errno;
    record(f, ADF_E_IO, f->offset, 0, 0);
    f->err.err_no = saved;
    f->err.op = op;
    return f->status = ADF_E_IO;
}

static int record_check(adf_file *f, const adf_iter *it, int refused)
{
    record(f, it->status, it->err_offset, it->err_length, it->err_room);
    f->err.frame_check = *it;
    f->err.refused = refused;
    return it->status;
}

/* Puts the stream where the frame-by-frame path reads next (after the key
 * held, else at `offset`), once bulk reads have moved on without it: a seek
 * on a stdio stream refills its buffer, so bulk reads leave the stream
 * alone and only this path, when it is taken, pays for one. */
static int place_stream(adf_file *f)
{
    if (!f->stream_off)
        return ADF_OK;
    if (fseeko(f->fp, (off_t)(f->offset + (f->have_key ? ADF_KEY_SIZE : 0)), SEEK_SET) != 0)
        return record_io(f, "seek");
    f->stream_off = 0;
    return ADF_OK;
}

/* Reads the key at the current offset unless it is already held: 1 when held, 0 at a clean end. */
static int load_key(adf_file *f)
{
    if (f->have_key)
        return 1;
    if (place_stream(f) != ADF_OK)
        return f->status;
    size_t got = fread(f->key, 1, ADF_KEY_SIZE, f->fp);
    if (got == ADF_KEY_SIZE) {
        f->have_key = 1;
        return 1;
    }
    if (ferror(f->fp))
        return record_io(f, "read");
    if (got == 0)
        return 0;
    return f->status = record(f, ADF_E_TRUNCATED, f->offset, 0, got);
}

/* Reads the rest of the frame whose key is held into dst (the key included) and checks its sub-frames. */
static int load_frame(adf_file *f, uint8_t *dst, uint32_t length)
{
    if (place_stream(f) != ADF_OK)
        return f->status;
    memcpy(dst, f->key, ADF_KEY_SIZE);
    size_t want = length - ADF_KEY_SIZE;
    size_t got = fread(dst + ADF_KEY_SIZE, 1, want, f->fp);
    if (got < want) {
        if (ferror(f->fp))
            return record_io(f, "read");
        return f->status = record(f, ADF_E_TRUNCATED, f->offset, length, ADF_KEY_SIZE + (uint64_t)got);
    }
    if (adf_id_is_composite(adf_get_u32(dst + 4))) {
        adf_iter it;
        adf_frame frame;
        adf_iter_init(&it, dst, length);
        it.base_offset = (size_t)f->offset;
        if (adf_iter_next(&it, &frame) < 0)
            return f->status = record_check(f, &it, 0);
    }
    return ADF_OK;
}

/* A large request: the file's bytes read in parallel straight into buf,
 * then the whole frames among them delivered as the frame-by-frame path
 * would (the same frames, the same checks) and the next key held as that
 * path holds it (pread reads from the frame at `offset`, so a key already
 * held is read again).  The next key is most often among the bytes read
 * already: taken from there; and the stream is left where it is
 * (place_stream moves it when the frame-by-frame path needs it): a seek
 * and a key read through stdio would refill its whole buffer, 1 MiB, 6 %
 * more bytes for a 16 MB block.  Returns 0 when it delivered nothing: the
 * frame-by-frame path then handles the request (a frame too big, a bad or
 * truncated one, the end, a file pread refuses), with its own messages. */
static int read_bulk(adf_file *f, uint8_t *buf, size_t cap, size_t *used, size_t *frames)
{
    double t0 = adf_now();
    size_t n, u = SIZE_MAX; /* unless the read ahead checked them */
    long long got = f->ahead ? adf_ahead_take(f->ahead, f->offset, buf, cap, f->threads, &u, &n) : -1;
    if (got < 0)
        got = adf_read_parts(fileno(f->fp), buf, cap, f->offset, f->threads);
    double t1 = adf_now();
    f->copying += t1 - t0;
    if (got <= 0)
        return 0;
    if (u == SIZE_MAX)
        u = adf_whole_frames(buf, (size_t)got, cap, &n, NULL, 0);
    f->checking += adf_now() - t1;
    if (n == 0)
        return 0;
    f->have_key = (size_t)got - u >= ADF_KEY_SIZE; /* a key held before was read again, with its frame */
    if (f->have_key)
        memcpy(f->key, buf + u, ADF_KEY_SIZE);
    f->stream_off = 1;
    f->offset += u;
    *used = u;
    if (frames)
        *frames = n;
    load_key(f); /* a problem with the next frame is the next call's to report */
    if (f->ahead) /* unasked, the next call reads itself */
        adf_ahead_ask(f->ahead, fileno(f->fp), f->offset, cap, f->threads);
    return ADF_OK;
}

/* Delivers as many whole frames as fit; a problem found after the first frame is reported by the next call. */
int adf_file_read(adf_file *f, void *buf, size_t cap, size_t *used, size_t *frames)
{
    size_t u = 0, n = 0;
    int rc = ADF_OK;
    if (!f || f->writing || (!buf && cap > 0) || !used)
        return ADF_E_ARG;
    *used = 0;
    if (frames)
        *frames = 0;
    if (f->status != ADF_OK)
        return f->status;
    if (cap >= ADF_FILE_BULK) {
        rc = read_bulk(f, buf, cap, used, frames);
        if (rc != 0 || *used > 0)
            return rc;
    }
    for (;;) {
        rc = load_key(f);
        if (rc <= 0)
            break;
        uint32_t length = adf_get_u32(f->key);
        if (length < ADF_KEY_SIZE) {
            rc = f->status = record(f, ADF_E_SHORT, f->offset, length, 0);
            break;
        }
        if (length > cap - u) {
            rc = u == 0 ? record(f, ADF_E_TOO_BIG, f->offset, length, cap) : ADF_OK;
            break;
        }
        rc = load_frame(f, (uint8_t *)buf + u, length);
        if (rc != ADF_OK)
            break;
        f->have_key = 0;
        f->offset += length;
        u += length;
        n++;
    }
    *used = u;
    if (frames)
        *frames = n;
    return u > 0 ? ADF_OK : (rc < 0 ? rc : ADF_OK);
}

int adf_file_set_read_threads(adf_file *f, unsigned threads)
{
    if (!f || f->writing || threads < 1 || threads > ADF_FILE_MAX_READ_THREADS)
        return ADF_E_ARG;
    f->threads = threads;
    return ADF_OK;
}

/* Read-ahead off: its thread joined, its buffers freed. */
static void drop_ahead(adf_file *f)
{
    if (!f->ahead)
        return;
    adf_ahead_free(f->ahead);
    free(f->ahead);
    f->ahead = NULL;
}

int adf_file_set_read_ahead(adf_file *f, int on)
{
    if (!f || f->writing)
        return ADF_E_ARG;
    if (on && !f->ahead && !(f->ahead = calloc(1, sizeof *f->ahead)))
        return ADF_E_NOMEM;
    if (!on)
        drop_ahead(f);
    return ADF_OK;
}

void adf_file_read_stats(const adf_file *f, adf_read_stats *out)
{
    *out = (adf_read_stats){ 0 };
    if (!f)
        return;
    out->copying = f->copying;
    out->checking = f->checking;
    if (f->ahead) {
        out->taken = f->ahead->taken;
        out->missed = f->ahead->missed;
        out->waited = f->ahead->waited;
    }
}

size_t adf_file_next_length(const adf_file *f)
{
    return f && f->have_key && !f->writing ? adf_get_u32(f->key) : 0;
}

int adf_file_write(adf_file *f, const void *buf, size_t size)
{
    if (!f || !f->writing || (!buf && size > 0))
        return ADF_E_ARG;
    if (f->status != ADF_OK)
        return f->status;
    adf_iter it;
    adf_frame frame;
    int rc;
    adf_iter_init(&it, buf, size);
    it.base_offset = (size_t)f->offset;
    while ((rc = adf_iter_next(&it, &frame)) > 0)
        ;
    if (rc < 0)
        return record_check(f, &it, 1);
    if (size > 0 && fwrite(buf, 1, size, f->fp) != size)
        return record_io(f, "write");
    f->offset += size;
    return ADF_OK;
}

uint64_t adf_file_offset(const adf_file *f) { return f ? f->offset : 0; }

static void describe_frame_error(const adf_file *f, char *msg, size_t len)
{
    const file_error *e = &f->err;
    char inner[256];
    switch (e->status) {
    case ADF_E_TRUNCATED:
        if (e->length == 0)
            snprintf(msg, len, "%s: the file ends %llu bytes into the %u-byte key of the frame at offset %llu",
                     f->path, (unsigned long long)e->have, ADF_KEY_SIZE, (unsigned long long)e->offset);
        else
            snprintf(msg, len, "%s: the file ends inside the frame at offset %llu: length %u, only %llu bytes left",
                     f->path, (unsigned long long)e->offset, (unsigned)e->length, (unsigned long long)e->have);
        break;
    case ADF_E_TOO_BIG:
        snprintf(msg, len, "%s: the frame at offset %llu is %u bytes, larger than the whole buffer (%llu bytes)",
                 f->path, (unsigned long long)e->offset, (unsigned)e->length, (unsigned long long)e->have);
        break;
    case ADF_E_IO:
        snprintf(msg, len, "%s: %s failed near offset %llu: %s", f->path, e->op, (unsigned long long)e->offset,
                 strerror(e->err_no));
        break;
    default:
        if (e->frame_check.status != ADF_OK) {
            adf_iter_describe(&e->frame_check, inner, sizeof inner);
            snprintf(msg, len, "%s: %s%s", f->path, e->refused ? "refused to write a bad buffer: " : "", inner);
        } else {
            snprintf(msg, len, "%s: frame at offset %llu: length %u is below the %u-byte key", f->path,
                     (unsigned long long)e->offset, (unsigned)e->length, ADF_KEY_SIZE);
        }
        break;
    }
}

void adf_file_describe(const adf_file *f, int status, char *msg, size_t len)
{
    if (!msg || len == 0)
        return;
    if (!f)
        snprintf(msg, len, "(no file): %s", adf_strerror(status));
    else if (status != ADF_OK && status == f->err.status)
        describe_frame_error(f, msg, len);
    else
        snprintf(msg, len, "%s: %s (at offset %llu)", f->path, adf_strerror(status), (unsigned long long)f->offset);
}

int adf_file_close(adf_file *f)
{
    if (!f)
        return ADF_E_ARG;
    int rc = f->writing ? f->status : ADF_OK;
    if (f->writing && fflush(f->fp) != 0 && rc == ADF_OK)
        rc = record_io(f, "flush");
    drop_ahead(f); /* first: its thread reads the file */
    if (fclose(f->fp) != 0 && rc == ADF_OK && f->writing)
        rc = ADF_E_IO;
    free(f->iobuf);
    free(f->path);
    free(f);
    return rc;
}

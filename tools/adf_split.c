/* adf_split.c: adf-split: writes a crystal-split copy of a producer's ADF stream, one file per crystal (with meta:sync) and one for the truth. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "adf.h"

/*
 * Usage: adf-split [--sync-every TICKS] IN.adf OUTDIR
 *
 * What one producer (a generator for every crystal, a recorded run) emitted,
 * as the producers of single crystals would have: OUTDIR/crystal-ID.adf holds
 * the data:crystal and data:psa frames of crystal ID, OUTDIR/truth.adf the
 * narwhal:truth frames, each in IN's order, so that adf_reader actors can
 * replay each crystal as its own stream.
 *   --sync-every T  (default 100000 ticks, 1 ms; 0: none) each crystal's file
 *                   gets a meta:sync before the first frame of IN (of any
 *                   crystal) at or past each multiple of T, at that frame's
 *                   timestamp, and one after its last frame, with the key of
 *                   IN's last frame: a crystal silent for a while still tells an
 *                   event builder how far its stream has come.  The payload
 *                   counts the crystal's frames since its previous meta:sync.
 *                   IN's timestamps must then never decrease (a producer's do
 *                   not): a sync would otherwise be false.
 * Every file ends with one meta:eof counting the frames and bytes before it,
 * its key the one after IN's last frame (the generator's convention, so a
 * split file ends as a generator of that crystal would have ended it).  IN's
 * own meta:eof and meta:sync frames are not copied; any other frame (a built
 * event, tracked γ rays) belongs to no crystal and is an error.
 * Exit status: 0 done, 1 bad input or a write error (named), 2 usage.
 */

enum { MAX_FRAME = 64 << 20 };

typedef struct output {
    adf_file *file;
    uint64_t frames, bytes;
    uint32_t since_sync;
} output;

typedef struct split {
    const char *in, *dir;
    uint64_t every;
    uint8_t seen[8192];       /* crystal ids with frames in IN (pass 1) */
    output *crystal[65536];   /* pass 2: the open files, by id */
    output truth;
    uint16_t *ids;            /* the crystals, ascending */
    size_t n_ids;
    bool any_truth, any;
    adf_key last;             /* IN's last data frame */
    uint64_t next_sync, progress;
    int pass;
    char msg[1024];
} split;

static int usage(void)
{
    fprintf(stderr, "usage: adf-split [--sync-every TICKS] IN.adf OUTDIR\n");
    return 2;
}

/* The crystal of a single-crystal frame (data:crystal, data:psa: a u16 first in the payload); -1 for others. */
static int crystal_of(const adf_frame *f)
{
    if ((f->key.id != ADF_ID_NW_CRYSTAL && f->key.id != ADF_ID_DATA_PSA) || f->key.length < ADF_KEY_SIZE + 2)
        return -1;
    return adf_get_u16(f->data + ADF_KEY_SIZE);
}

static int fail(split *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(split *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->msg, sizeof s->msg, fmt, ap);
    va_end(ap);
    return -1;
}

static int write_frame(split *s, output *o, const uint8_t *bytes, size_t n)
{
    int rc = adf_file_write(o->file, bytes, n);
    if (rc != ADF_OK) {
        adf_file_describe(o->file, rc, s->msg, sizeof s->msg);
        return -1;
    }
    o->frames++;
    o->bytes += n;
    return 0;
}

/* One meta:sync per crystal file at (event, timestamp). */
static int sync_round(split *s, uint32_t event, uint64_t timestamp)
{
    uint8_t buf[ADF_KEY_SIZE + ADF_SYNC_PAYLOAD];
    for (size_t i = 0; i < s->n_ids; i++) {
        output *o = s->crystal[s->ids[i]];
        adf_writer w;
        adf_writer_init(&w, buf, sizeof buf);
        adf_sync y = {s->ids[i], o->since_sync};
        if (adf_sync_write(&w, event, timestamp, &y) != ADF_OK || write_frame(s, o, buf, w.used))
            return -1;
        o->since_sync = 0;
    }
    return 0;
}

/* Pass 1 notes the crystals and checks the frames; pass 2 writes them. */
static int one_frame(split *s, const adf_frame *f, uint64_t offset)
{
    if (f->key.id == ADF_ID_META_EOF || f->key.id == ADF_ID_META_SYNC)
        return 0;
    int id = crystal_of(f);
    if (id < 0 && f->key.id != ADF_ID_NW_TRUTH)
        return fail(s, "%s: the frame at offset %llu (id 0x%08x) belongs to no crystal: adf-split takes what "
                       "producers emit (data:crystal, data:psa, narwhal:truth)",
                    s->in, (unsigned long long)offset, f->key.id);
    if (s->every && s->any && f->key.timestamp < s->progress)
        return fail(s, "%s: the frame at offset %llu has timestamp %llu, earlier than %llu before it: meta:sync "
                       "would be false (--sync-every 0 splits without them)",
                    s->in, (unsigned long long)offset, (unsigned long long)f->key.timestamp,
                    (unsigned long long)s->progress);
    s->any = true;
    s->progress = f->key.timestamp;
    s->last = f->key;
    if (s->pass == 1) {
        if (id >= 0)
            s->seen[id >> 3] |= (uint8_t)(1u << (id & 7));
        else
            s->any_truth = true;
        return 0;
    }
    if (s->every && f->key.timestamp >= s->next_sync) {
        if (sync_round(s, f->key.event, f->key.timestamp))
            return -1;
        s->next_sync = (f->key.timestamp / s->every + 1) * s->every;
    }
    output *o = id >= 0 ? s->crystal[id] : &s->truth;
    o->since_sync += id >= 0;
    return write_frame(s, o, f->data, f->key.length);
}

static int on_chunk(void *ctx, const uint8_t *buf, size_t used, uint64_t base)
{
    split *s = ctx;
    adf_iter it;
    adf_frame f;
    adf_iter_init(&it, buf, used);
    while (adf_iter_next(&it, &f) == 1)
        if (one_frame(s, &f, base + f.offset))
            return -1;
    return 0;
}

static int scan(split *s, int pass)
{
    s->pass = pass;
    s->any = false;
    s->progress = s->next_sync = 0;
    s->msg[0] = '\0';
    int rc = adf_file_scan(s->in, MAX_FRAME, on_chunk, s, s->msg, sizeof s->msg);
    return rc != ADF_OK || s->msg[0] ? -1 : 0;
}

static int open_output(split *s, output *o, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", s->dir, name);
    if (adf_file_open_write(&o->file, path, 0) != ADF_OK)
        return fail(s, "%s: cannot create: %s", path, strerror(errno));
    return 0;
}

static int open_outputs(split *s)
{
    char name[64];
    for (unsigned id = 0; id < 65536u; id++)
        s->n_ids += s->seen[id >> 3] >> (id & 7) & 1;
    if (!(s->ids = malloc((s->n_ids ? s->n_ids : 1) * sizeof *s->ids)))
        return fail(s, "out of memory");
    size_t k = 0;
    for (unsigned id = 0; id < 65536u; id++)
        if (s->seen[id >> 3] >> (id & 7) & 1)
            s->ids[k++] = (uint16_t)id;
    for (k = 0; k < s->n_ids; k++) {
        unsigned id = s->ids[k];
        snprintf(name, sizeof name, "crystal-%u.adf", id);
        if (!(s->crystal[id] = calloc(1, sizeof(output))))
            return fail(s, "out of memory");
        if (open_output(s, s->crystal[id], name))
            return -1;
    }
    return s->any_truth ? open_output(s, &s->truth, "truth.adf") : 0;
}

/* After a pass 2 that went well (rc 0): the last sync round and each
 * file's meta:eof; in every case the closes. */
static int finish(split *s, int rc)
{
    if (rc == 0 && s->every && s->any)
        rc = sync_round(s, s->last.event, s->last.timestamp); /* adf_reader's meta:eof after it is the file's */
    uint8_t buf[ADF_KEY_SIZE + ADF_EOF_PAYLOAD];
    for (size_t i = 0; i <= s->n_ids; i++) {
        output *o = i < s->n_ids ? s->crystal[s->ids[i]] : &s->truth;
        if (!o || !o->file)
            continue;
        adf_writer w;
        adf_writer_init(&w, buf, sizeof buf);
        adf_eof e = {o->frames > UINT32_MAX ? UINT32_MAX : (uint32_t)o->frames, o->bytes};
        if (rc == 0 && (adf_eof_write(&w, s->any ? s->last.event + 1 : 0, s->last.timestamp, &e) != ADF_OK ||
                        write_frame(s, o, buf, w.used)))
            rc = -1;
        if (adf_file_close(o->file) != ADF_OK && rc == 0)
            rc = fail(s, "%s: writing: %s", s->dir, strerror(errno));
        o->file = NULL;
    }
    return rc;
}

static int parse(int argc, char **argv, split *s)
{
    s->every = 100000;
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        char *end;
        if (strcmp(argv[i], "--sync-every") != 0 || i + 1 >= argc)
            return -1;
        errno = 0;
        s->every = strtoull(argv[++i], &end, 10);
        if (*end || end == argv[i] || errno || argv[i][0] == '-')
            return -1;
    }
    if (argc - i != 2)
        return -1;
    s->in = argv[i];
    s->dir = argv[i + 1];
    return 0;
}

int main(int argc, char **argv)
{
    split *s = calloc(1, sizeof *s);
    if (!s)
        return 1;
    if (parse(argc, argv, s)) {
        free(s);
        return usage();
    }
    struct stat st;
    int rc = stat(s->dir, &st) != 0 || !S_ISDIR(st.st_mode) ? fail(s, "%s: not a directory", s->dir) : 0;
    if (rc == 0)
        rc = scan(s, 1);
    if (rc == 0)
        rc = open_outputs(s);
    if (rc == 0)
        rc = scan(s, 2);
    rc = finish(s, rc);
    if (rc)
        fprintf(stderr, "adf-split: %s\n", s->msg);
    else
        printf("adf-split: %s: %zu crystal files%s in %s\n", s->in, s->n_ids, s->any_truth ? " and truth.adf" : "",
               s->dir);
    for (size_t i = 0; i < s->n_ids; i++)
        free(s->crystal[s->ids[i]]);
    free(s->ids);
    free(s);
    return rc ? 1 : 0;
}

/* adf_keep.c: copies the top-level frames of the given key ids from one ADF file to another (test inputs of one kind of frame). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adf.h"

#define BLOCK (1u << 20)
#define MAX_IDS 16

typedef struct copy {
    adf_file *in, *out;
    uint8_t *block, *kept;
    uint32_t ids[MAX_IDS];
    int n_ids;
    uint64_t frames, kept_frames;
} copy;

static int wanted(const copy *c, uint32_t id)
{
    for (int i = 0; i < c->n_ids; i++)
        if (c->ids[i] == id)
            return 1;
    return 0;
}

/* Appends the wanted frames of one block read from the file (whole, already validated frames). */
static int keep_block(copy *c, size_t size)
{
    adf_iter it;
    adf_frame f;
    size_t used = 0;
    int rc;
    adf_iter_init(&it, c->block, size);
    while ((rc = adf_iter_next(&it, &f)) > 0) {
        c->frames++;
        if (!wanted(c, f.key.id))
            continue;
        memcpy(c->kept + used, f.data, f.key.length);
        used += f.key.length;
        c->kept_frames++;
    }
    return rc < 0 ? rc : used ? adf_file_write(c->out, c->kept, used) : ADF_OK;
}

static int copy_all(copy *c, char *msg, size_t len)
{
    size_t got, frames;
    int rc;
    while ((rc = adf_file_read(c->in, c->block, BLOCK, &got, &frames)) == ADF_OK && got > 0)
        if ((rc = keep_block(c, got)) != ADF_OK) {
            adf_file_describe(c->out, rc, msg, len);
            return rc;
        }
    if (rc != ADF_OK)
        adf_file_describe(c->in, rc, msg, len);
    return rc;
}

static int parse_id(const char *s, uint32_t *id)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 0);
    if (errno || end == s || *end || v > UINT32_MAX)
        return -1;
    *id = (uint32_t)v;
    return 0;
}

int main(int argc, char **argv)
{
    static copy c;
    char msg[512] = "";
    if (argc < 4 || argc - 3 > MAX_IDS) {
        fprintf(stderr, "usage: adf_keep IN.adf OUT.adf ID... (key ids, e.g. 0x4E570101; at most %d)\n", MAX_IDS);
        return 2;
    }
    for (int i = 3; i < argc; i++)
        if (parse_id(argv[i], &c.ids[c.n_ids++]) != 0) {
            fprintf(stderr, "adf_keep: '%s' is not a key id\n", argv[i]);
            return 2;
        }
    c.block = malloc(BLOCK);
    c.kept = malloc(BLOCK);
    if (!c.block || !c.kept) {
        fprintf(stderr, "adf_keep: out of memory\n");
        return 1;
    }
    if (adf_file_open_read(&c.in, argv[1]) != ADF_OK || adf_file_open_write(&c.out, argv[2], 0) != ADF_OK) {
        fprintf(stderr, "adf_keep: cannot open '%s': %s\n", c.in ? argv[2] : argv[1], strerror(errno));
        return 1;
    }
    int rc = copy_all(&c, msg, sizeof msg);
    adf_file_close(c.in);
    if (adf_file_close(c.out) != ADF_OK && rc == ADF_OK) {
        snprintf(msg, sizeof msg, "%s: closing failed: %s", argv[2], strerror(errno));
        rc = ADF_E_IO;
    }
    free(c.block);
    free(c.kept);
    if (rc != ADF_OK) {
        fprintf(stderr, "adf_keep: %s\n", msg);
        return 1;
    }
    printf("adf_keep: %s: %" PRIu64 " of the %" PRIu64 " frames of %s\n", argv[2], c.kept_frames, c.frames, argv[1]);
    return 0;
}

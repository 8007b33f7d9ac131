/* host_frames.c: the host's own reading of ADF keys: frames counted by kind (data:psa at any depth), meta:eof found and set apart, the cycle's report. */
#include <inttypes.h>
#include <string.h>

#include "host.h"

enum { MAX_DEPTH = 8 };

static const char *const kind_names[HK_COUNT] = {"data:crystal", "data:psa", "event:data:psa",
                                                 "data:tracked", "meta:eof", "other"};

static uint32_t le32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

static enum host_kind kind_of(uint32_t id)
{
    switch (id) {
    case HOST_ID_DATA_CRYSTAL: return HK_CRYSTAL;
    case HOST_ID_DATA_PSA: return HK_PSA;
    case HOST_ID_EVENT_DATA_PSA: return HK_EVENT_PSA;
    case HOST_ID_DATA_TRACKED: return HK_TRACKED;
    case HOST_ID_META_EOF: return HK_EOF;
    default: return HK_OTHER;
    }
}

/* ADF's composites (0xCA......) hold complete sub-frames after their key. */
static bool composite(uint32_t id) { return (id >> 24) == 0xCAu; }

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* The length of the frame at buf[pos], or 0 when it is malformed (short, or past the end). */
static uint32_t frame_length(const uint8_t *buf, size_t size, size_t pos)
{
    if (size - pos < HOST_KEY_SIZE)
        return 0;
    uint32_t len = le32(buf + pos);
    return len < HOST_KEY_SIZE || len > size - pos ? 0 : len;
}

/* Counts the data:psa frames of buf (a block or a composite's payload) and below; -1 when a frame is malformed. */
static int count_psa(host_count *c, const uint8_t *buf, size_t size, int depth)
{
    for (size_t pos = 0; pos < size;) {
        uint32_t len = frame_length(buf, size, pos), id;
        if (len == 0 || depth > MAX_DEPTH)
            return -1;
        id = le32(buf + pos + 4);
        if (id == HOST_ID_DATA_PSA) {
            c->psa_any++;
            c->psa_digest += fnv1a(buf + pos, len);
        } else if (composite(id) && count_psa(c, buf + pos + HOST_KEY_SIZE, len - HOST_KEY_SIZE, depth + 1) != 0)
            return -1;
        pos += len;
    }
    return 0;
}

int host_count_block(host_count *c, const uint8_t *buf, unsigned size, const char *stage)
{
    size_t pos = 0;
    while (pos < size) {
        uint32_t len = frame_length(buf, size, pos);
        if (len == 0) {
            fprintf(stderr, "host: %s: malformed frame at offset %zu of a block of %u bytes\n", stage, pos, size);
            return -1;
        }
        c->kind[kind_of(le32(buf + pos + 4))]++;
        c->frames++;
        pos += len;
    }
    if (count_psa(c, buf, size, 0) != 0) {
        fprintf(stderr, "host: %s: malformed sub-frame in a block of %u bytes\n", stage, size);
        return -1;
    }
    c->blocks++;
    c->bytes += size;
    return 0;
}

int host_eofs(const uint8_t *buf, unsigned size)
{
    int n = 0;
    for (size_t pos = 0; pos < size; pos += le32(buf + pos))
        n += le32(buf + pos + 4) == HOST_ID_META_EOF;
    return n;
}

unsigned host_strip_eof(uint8_t *buf, unsigned size, uint8_t *eof, unsigned cap, unsigned *eof_len, int *n)
{
    size_t pos = 0, kept = 0;
    *n = 0;
    while (pos < size) {
        uint32_t len = le32(buf + pos);
        if (le32(buf + pos + 4) == HOST_ID_META_EOF) {
            (*n)++;
            *eof_len = len <= cap ? len : 0;
            if (len <= cap)
                memcpy(eof, buf + pos, len);
        } else {
            memmove(buf + kept, buf + pos, len);
            kept += len;
        }
        pos += len;
    }
    return (unsigned)kept;
}

/* "299 data:crystal, 1 meta:eof" (the kinds present), with the data:psa frames inside composites. */
static void describe(const host_count *c, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (int k = 0; k < HK_COUNT && n < cap; k++)
        if (c->kind[k])
            n += (size_t)snprintf(out + n, cap - n, "%s%" PRIu64 " %s", n ? ", " : "", c->kind[k], kind_names[k]);
    if (n < cap && c->psa_any != c->kind[HK_PSA])
        snprintf(out + n, cap - n, " (%" PRIu64 " data:psa inside)", c->psa_any - c->kind[HK_PSA]);
    if (!c->frames)
        snprintf(out, cap, "-");
}

static void tsv_row(const host *h, FILE *f, const host_stage *s, const char *side, const host_count *c)
{
    fprintf(f, "frames\t%d\t%s\t%s\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64, h->cycle, s->name, side, c->blocks,
            c->frames, c->bytes);
    for (int k = 0; k < HK_COUNT; k++)
        fprintf(f, "\t%" PRIu64, c->kind[k]);
    fprintf(f, "\t%" PRIu64 "\t%016" PRIx64 "\n", c->psa_any, c->psa_digest);
}

static void tsv_cycle(const host *h, FILE *f)
{
    if (h->cycle == 1) {
        fprintf(f, "# frames CYCLE STAGE in|out BLOCKS FRAMES BYTES");
        for (int k = 0; k < HK_COUNT; k++)
            fprintf(f, " %s", kind_names[k]);
        fprintf(f, " data:psa(any depth) data:psa-digest\n# instance CYCLE STAGE INSTANCE BLOCKS-IN\n"
                   "# violations CYCLE N\n# aborted CYCLE (an actor's error ended it: the counts up to there)\n");
    }
    for (int i = 0; i < h->n_stages; i++) {
        const host_stage *s = &h->st[i];
        tsv_row(h, f, s, "in", &s->in);
        tsv_row(h, f, s, "out", &s->out);
        for (int j = 0; j < s->n; j++)
            fprintf(f, "instance\t%d\t%s\t%d\t%" PRIu64 "\n", h->cycle, s->name, j + 1, s->inst_blocks[j]);
    }
    fprintf(f, "violations\t%d\t%d\n", h->cycle, h->violations);
    if (h->aborted)
        fprintf(f, "aborted\t%d\n", h->cycle);
    fflush(f);
}

static void table_cycle(const host *h, FILE *f)
{
    char in[256], out[256];
    fprintf(f, "cycle %d of %d%s, %d instance%s of each filter%s\n", h->cycle, h->cycles,
            h->aborted ? " (ABORTED by an actor's error: the counts up to there)" : "", h->instances,
            h->instances > 1 ? "s" : "", h->pause_every ? "" : ", no pauses");
    fprintf(f, "| stage | instances | blocks in | frames in | blocks out | frames out |\n|---|---|---|---|---|---|\n");
    for (int i = 0; i < h->n_stages; i++) {
        const host_stage *s = &h->st[i];
        describe(&s->in, in, sizeof in);
        describe(&s->out, out, sizeof out);
        fprintf(f, "| %s | %d | %" PRIu64 " | %s | %" PRIu64 " | %s |\n", s->name, s->n, s->in.blocks, in,
                s->out.blocks, out);
    }
    fprintf(f, "contract breaches so far: %d\n\n", h->violations);
    fflush(f);
}

void host_report_cycle(const host *h, FILE *tsv, FILE *table)
{
    if (tsv)
        tsv_cycle(h, tsv);
    table_cycle(h, table);
}

/* detector basis: the basis file (streamed writing, validating loading, CRC-32 of our own) and the plain import format. */
#include "basis.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "adf.h"

/* ---- CRC-32, reflected polynomial 0xEDB88320, eight bytes per table round ---- */

static uint32_t crc_table[8][256];

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++) crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xFF];
}

uint32_t det_crc32(uint32_t crc, const void *data, size_t n)
{
    if (!crc_table[0][1])
#pragma omp critical(det_crc_init)
        crc_init();
    const uint8_t *p = data;
    uint32_t c = ~crc;
    while (n >= 8) {
        uint32_t lo = c ^ adf_get_u32(p), hi = adf_get_u32(p + 4);
        c = crc_table[7][lo & 0xFF] ^ crc_table[6][(lo >> 8) & 0xFF] ^ crc_table[5][(lo >> 16) & 0xFF] ^
            crc_table[4][lo >> 24] ^ crc_table[3][hi & 0xFF] ^ crc_table[2][(hi >> 8) & 0xFF] ^
            crc_table[1][(hi >> 16) & 0xFF] ^ crc_table[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n--) c = crc_table[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    return ~c;
}

/* ---- little-endian floats in bulk ---- */

static int host_is_little(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

/* Converts n 4-byte words between file order and host order, in place (a no-op on little-endian hosts). */
static void swap_words(void *data, size_t n)
{
    if (host_is_little()) return;
    uint8_t *p = data;
    for (size_t i = 0; i < n; i++, p += 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        adf_put_u32(p, v);
    }
}

static void put_f64(uint8_t *p, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    adf_put_u64(p, u);
}
static double get_f64(const uint8_t *p)
{
    uint64_t u = adf_get_u64(p);
    double v;
    memcpy(&v, &u, 8);
    return v;
}

/* ---- header ---- */

enum { GEO_DOUBLES = 18, OFF_GEO = 48, OFF_SOURCE = OFF_GEO + 8 * GEO_DOUBLES };
_Static_assert(OFF_SOURCE + sizeof(((det_basis *)0)->source) == DET_BASIS_HEADER, "the source text ends the header");

static void geometry_doubles(const det_basis *b, double v[GEO_DOUBLES])
{
    const det_crystal *c = &b->crystal;
    double head[6] = {c->length, c->radius, c->hex_front, c->hex_back, c->bore_radius, c->bore_depth};
    memcpy(v, head, sizeof head);
    memcpy(v + 6, c->ring, sizeof c->ring);
    v[12] = c->bias;
    v[13] = c->impurity_front;
    v[14] = c->impurity_back;
    v[15] = c->preamp_rise;
    v[16] = b->field_grid_mm;
    v[17] = b->step_ns;
}

static uint32_t record_floats(const det_basis *b) { return 4 + b->n_channels * b->n_samples; }

enum { HEADER_MAX = DET_BASIS_HEADER + DET_BASIS_CORNER_BYTES };

/* The header's size for these flags: the corners of an irregular crystal follow the fixed part. */
static uint32_t header_size(uint32_t flags)
{
    return DET_BASIS_HEADER + (flags & DET_BASIS_CORNERS ? DET_BASIS_CORNER_BYTES : 0);
}

/* Encodes the header into h (HEADER_MAX bytes); its size. */
static uint32_t encode_header(const det_basis *b, uint8_t h[HEADER_MAX])
{
    uint32_t flags = b->flags | (b->crystal.irregular ? DET_BASIS_CORNERS : 0);
    memset(h, 0, HEADER_MAX);
    memcpy(h, DET_BASIS_MAGIC, 8);
    adf_put_u32(h + 8, DET_BASIS_VERSION);
    adf_put_u32(h + 12, header_size(flags));
    adf_put_u32(h + 16, b->n_points);
    adf_put_u32(h + 20, b->n_channels);
    adf_put_u32(h + 24, b->n_samples);
    adf_put_u32(h + 28, b->pretrigger);
    adf_put_f32(h + 32, (float)b->sample_ns);
    adf_put_f32(h + 36, (float)b->grid_mm);
    adf_put_u32(h + 40, flags);
    adf_put_u32(h + 44, 4 * record_floats(b));
    double v[GEO_DOUBLES];
    geometry_doubles(b, v);
    for (int i = 0; i < GEO_DOUBLES; i++) put_f64(h + OFF_GEO + 8 * i, v[i]);
    if (b->flags & DET_BASIS_IMPORTED) memcpy(h + OFF_SOURCE, b->source, strnlen(b->source, sizeof b->source - 1));
    else if (b->flags & DET_BASIS_ANISOTROPIC) put_f64(h + OFF_SOURCE, b->crystal.phi110);
    const double *corner = &b->crystal.corner[0][0][0];
    for (int i = 0; flags & DET_BASIS_CORNERS && i < DET_BASIS_CORNER_BYTES / 8; i++)
        put_f64(h + DET_BASIS_HEADER + 8 * i, corner[i]);
    return header_size(flags);
}

/* An imported basis's electrical figures are what its import gave (0: not given). */
static int validate_crystal(const det_basis *b, char *why, size_t len)
{
    const det_crystal *c = &b->crystal;
    if (!(b->flags & DET_BASIS_IMPORTED)) return det_crystal_validate(c, why, len);
    if (det_crystal_validate_shape(c, why, len)) return -1;
    if (!(c->bias >= 0 && c->preamp_rise >= 0 && c->impurity_front >= 0 && c->impurity_back >= 0))
        return snprintf(why, len, "negative bias, preamplifier rise or impurity"), -1;
    return 0;
}

/* Decodes and checks the header (header_size(flags) bytes at h) against the file size; 0 or -1 with the reason. */
static int decode_header(det_basis *b, const uint8_t *h, uint64_t file_size, char *why, size_t len)
{
    if (memcmp(h, DET_BASIS_MAGIC, 8)) return snprintf(why, len, "not a Narwhal basis file (bad magic)"), -1;
    uint32_t version = adf_get_u32(h + 8);
    if (version != DET_BASIS_VERSION)
        return snprintf(why, len, "format version %u, this build reads version %d", version, DET_BASIS_VERSION), -1;
    uint32_t hsize = header_size(adf_get_u32(h + 40));
    if (adf_get_u32(h + 12) != hsize)
        return snprintf(why, len, "header size %u, expected %u", adf_get_u32(h + 12), hsize), -1;
    b->n_points = adf_get_u32(h + 16);
    b->n_channels = adf_get_u32(h + 20);
    b->n_samples = adf_get_u32(h + 24);
    b->pretrigger = adf_get_u32(h + 28);
    b->sample_ns = adf_get_f32(h + 32);
    b->grid_mm = adf_get_f32(h + 36);
    b->flags = adf_get_u32(h + 40);
    if (b->n_points == 0) return snprintf(why, len, "no points"), -1;
    if (b->n_channels < 2 || b->n_channels > DET_BASIS_MAX_CHANNELS)
        return snprintf(why, len, "%u channels (must be 2..%d)", b->n_channels, DET_BASIS_MAX_CHANNELS), -1;
    if (b->n_samples < 1 || b->n_samples > DET_BASIS_MAX_SAMPLES)
        return snprintf(why, len, "%u samples (must be 1..%d)", b->n_samples, DET_BASIS_MAX_SAMPLES), -1;
    if (b->pretrigger >= b->n_samples) return snprintf(why, len, "pretrigger %u >= samples", b->pretrigger), -1;
    if (!(b->sample_ns > 0 && b->sample_ns < 1e6)) return snprintf(why, len, "bad sampling period %g ns", b->sample_ns), -1;
    if (!(b->grid_mm >= 0 && b->grid_mm < 100)) return snprintf(why, len, "bad grid spacing %g mm", b->grid_mm), -1;
    if (b->flags & ~(uint32_t)(DET_BASIS_IMPORTED | DET_BASIS_ANISOTROPIC | DET_BASIS_CORNERS) ||
        (b->flags & (DET_BASIS_IMPORTED | DET_BASIS_ANISOTROPIC)) == (DET_BASIS_IMPORTED | DET_BASIS_ANISOTROPIC))
        return snprintf(why, len, "unknown flags 0x%x", b->flags), -1;
    if (adf_get_u32(h + 44) != 4 * record_floats(b))
        return snprintf(why, len, "record size %u does not match %u channels x %u samples", adf_get_u32(h + 44),
                        b->n_channels, b->n_samples), -1;
    if (b->flags & DET_BASIS_IMPORTED) {
        if (h[DET_BASIS_HEADER - 1]) return snprintf(why, len, "the source text is not terminated"), -1;
        memcpy(b->source, h + OFF_SOURCE, sizeof b->source);
    } else {
        int lattice = b->flags & DET_BASIS_ANISOTROPIC ? 8 : 0;
        for (int i = OFF_SOURCE + lattice; i < DET_BASIS_HEADER; i++)
            if (h[i]) return snprintf(why, len, "reserved header byte %d is not zero", i), -1;
    }
    uint64_t expect = hsize + (uint64_t)b->n_points * 4 * record_floats(b) + 4;
    if (expect != file_size)
        return snprintf(why, len, "size %llu bytes, but the header's %u points of %u channels x %u samples need %llu",
                        (unsigned long long)file_size, b->n_points, b->n_channels, b->n_samples,
                        (unsigned long long)expect), -1;
    double v[GEO_DOUBLES];
    for (int i = 0; i < GEO_DOUBLES; i++) v[i] = get_f64(h + OFF_GEO + 8 * i);
    det_crystal *c = &b->crystal;
    c->length = v[0], c->radius = v[1], c->hex_front = v[2], c->hex_back = v[3];
    c->bore_radius = v[4], c->bore_depth = v[5];
    memcpy(c->ring, v + 6, sizeof c->ring);
    c->bias = v[12], c->impurity_front = v[13], c->impurity_back = v[14], c->preamp_rise = v[15];
    b->field_grid_mm = v[16];
    b->step_ns = v[17];
    c->anisotropic = b->flags & DET_BASIS_ANISOTROPIC ? 1 : 0;
    c->phi110 = c->anisotropic ? get_f64(h + OFF_SOURCE) : 0;
    if (b->flags & DET_BASIS_CORNERS) {
        double corner[2][DET_SECTORS][2], *v2 = &corner[0][0][0];
        for (int i = 0; i < DET_BASIS_CORNER_BYTES / 8; i++) v2[i] = get_f64(h + DET_BASIS_HEADER + 8 * i);
        det_crystal_set_corners(c, corner[0], corner[1]);
        b->flags &= ~(uint32_t)DET_BASIS_CORNERS; /* the crystal says it: irregular */
    }
    char geo[160];
    if (validate_crystal(b, geo, sizeof geo)) return snprintf(why, len, "geometry in the header: %s", geo), -1;
    return 0;
}

/* ---- memory ---- */

int det_basis_alloc(det_basis *b)
{
    size_t n = b->n_points;
    b->pos = malloc(n * 3 * sizeof *b->pos);
    b->segment = malloc(n * sizeof *b->segment);
    b->signal = malloc(n * b->n_channels * b->n_samples * sizeof *b->signal);
    if (b->pos && b->segment && b->signal) return 0;
    det_basis_free(b);
    return -1;
}

void det_basis_free(det_basis *b)
{
    free(b->pos);
    free(b->segment);
    free(b->signal);
    b->pos = NULL;
    b->segment = NULL;
    b->signal = NULL;
}

/* ---- writing ---- */

int det_basis_writer_open(det_basis_writer *w, const det_basis *hb, const char *path, char *msg, size_t len)
{
    memset(w, 0, sizeof *w);
    if (strlen(path) >= sizeof w->path) return snprintf(msg, len, "%s: path too long", path), -1;
    snprintf(w->path, sizeof w->path, "%s", path);
    snprintf(w->tmp, sizeof w->tmp, "%s.tmp", path);
    w->f = fopen(w->tmp, "wb");
    if (!w->f) return snprintf(msg, len, "%s: cannot create: %s", w->tmp, strerror(errno)), -1;
    uint8_t h[HEADER_MAX];
    uint32_t hsize = encode_header(hb, h);
    w->crc = det_crc32(0, h, hsize);
    w->promised = hb->n_points;
    w->record_floats = record_floats(hb);
    if (fwrite(h, 1, hsize, w->f) != hsize) {
        snprintf(msg, len, "%s: write error: %s", w->tmp, strerror(errno));
        det_basis_writer_abort(w);
        return -1;
    }
    return 0;
}

int det_basis_writer_put(det_basis_writer *w, const float pos[3], int32_t segment, const float *samples, char *msg,
                         size_t len)
{
    if (w->written == w->promised) return snprintf(msg, len, "%s: more points than the %u promised", w->path, w->promised), -1;
    uint8_t head[16];
    for (int i = 0; i < 3; i++) adf_put_f32(head + 4 * i, pos[i]);
    adf_put_u32(head + 12, (uint32_t)segment);
    size_t n = w->record_floats - 4;
    float *le = malloc(n * sizeof *le);
    if (!le) return snprintf(msg, len, "%s: out of memory", w->path), -1;
    memcpy(le, samples, n * sizeof *le);
    swap_words(le, n);
    w->crc = det_crc32(w->crc, head, sizeof head);
    w->crc = det_crc32(w->crc, le, n * sizeof *le);
    int bad = fwrite(head, 1, sizeof head, w->f) != sizeof head || fwrite(le, sizeof *le, n, w->f) != n;
    free(le);
    if (bad) return snprintf(msg, len, "%s: write error: %s", w->tmp, strerror(errno)), -1;
    w->written++;
    return 0;
}

int det_basis_writer_close(det_basis_writer *w, char *msg, size_t len)
{
    if (w->written != w->promised) {
        snprintf(msg, len, "%s: %u points written, %u promised", w->path, w->written, w->promised);
        det_basis_writer_abort(w);
        return -1;
    }
    uint8_t t[4];
    adf_put_u32(t, w->crc);
    int bad = fwrite(t, 1, 4, w->f) != 4;
    bad |= fclose(w->f) != 0;
    w->f = NULL;
    if (bad || rename(w->tmp, w->path)) {
        snprintf(msg, len, "%s: cannot finish the file: %s", w->path, strerror(errno));
        remove(w->tmp);
        return -1;
    }
    return 0;
}

void det_basis_writer_abort(det_basis_writer *w)
{
    if (w->f) fclose(w->f);
    w->f = NULL;
    remove(w->tmp);
}

int det_basis_save(const det_basis *b, const char *path, char *msg, size_t len)
{
    det_basis_writer w;
    if (det_basis_writer_open(&w, b, path, msg, len)) return -1;
    for (size_t i = 0; i < b->n_points; i++)
        if (det_basis_writer_put(&w, b->pos + 3 * i, b->segment[i], det_basis_point(b, i), msg, len)) {
            det_basis_writer_abort(&w);
            return -1;
        }
    return det_basis_writer_close(&w, msg, len);
}

/* ---- reading ---- */

int det_basis_check_points(const det_basis *b, char *why, size_t len)
{
    const size_t per = (size_t)b->n_channels * b->n_samples;
    for (size_t i = 0; i < b->n_points; i++) {
        const float *p = b->pos + 3 * i;
        double q[3] = {p[0], p[1], p[2]};
        if (!isfinite(q[0]) || !isfinite(q[1]) || !isfinite(q[2]) || !det_crystal_contains(&b->crystal, q))
            return snprintf(why, len, "point %zu at (%g, %g, %g) mm is not inside the crystal", i, q[0], q[1], q[2]), -1;
        if (b->segment[i] < 0 || b->segment[i] > (int32_t)b->n_channels - 2)
            return snprintf(why, len, "point %zu: segment %d is outside 0..%u", i, b->segment[i], b->n_channels - 2), -1;
        const float *s = det_basis_point(b, i);
        for (size_t k = 0; k < per; k++)
            if (!isfinite(s[k]))
                return snprintf(why, len, "point %zu: sample %zu of channel %zu is not a finite number", i,
                                k % b->n_samples, k / b->n_samples), -1;
    }
    return 0;
}

/* Reads the records, checksumming as it goes; 0 or -1 with the reason. */
static int read_records(det_basis *b, FILE *f, uint32_t *crc, char *why, size_t len)
{
    enum { CHUNK = 64 };
    const size_t rec = 4 * (size_t)record_floats(b), per = (size_t)b->n_channels * b->n_samples;
    uint8_t *buf = malloc(CHUNK * rec);
    if (!buf) return snprintf(why, len, "out of memory"), -1;
    for (size_t done = 0; done < b->n_points;) {
        size_t n = b->n_points - done < CHUNK ? b->n_points - done : CHUNK;
        if (fread(buf, rec, n, f) != n) {
            free(buf);
            return snprintf(why, len, "read error or early end near point %zu", done), -1;
        }
        *crc = det_crc32(*crc, buf, n * rec);
        for (size_t i = 0; i < n; i++) {
            const uint8_t *r = buf + i * rec;
            for (int a = 0; a < 3; a++) b->pos[3 * (done + i) + a] = adf_get_f32(r + 4 * a);
            b->segment[done + i] = (int32_t)adf_get_u32(r + 12);
            float *s = det_basis_point(b, done + i);
            memcpy(s, r + 16, per * sizeof *s);
            swap_words(s, per);
        }
        done += n;
    }
    free(buf);
    return 0;
}

/* Ends a load or an import and closes its file; why != NULL: it failed for that reason, b is freed and msg names the
   file. */
static int end_read(FILE *f, det_basis *b, const char *why, const char *path, char *msg, size_t len)
{
    fclose(f);
    if (!why) return 0;
    snprintf(msg, len, "%s: %s", path, why);
    det_basis_free(b);
    return -1;
}

int det_basis_load(det_basis *b, const char *path, char *msg, size_t len)
{
    char why[400];
    uint8_t h[HEADER_MAX], t[4];
    struct stat st;
    memset(b, 0, sizeof *b);
    FILE *f = fopen(path, "rb");
    if (!f) return snprintf(msg, len, "%s: cannot open: %s", path, strerror(errno)), -1;
    if (fstat(fileno(f), &st) || st.st_size < DET_BASIS_HEADER + 4) {
        snprintf(why, sizeof why, "only %lld bytes: too short for a basis file", (long long)st.st_size);
        goto fail;
    }
    if (fread(h, 1, DET_BASIS_HEADER, f) != DET_BASIS_HEADER) {
        snprintf(why, sizeof why, "cannot read the header");
        goto fail;
    }
    uint32_t hsize = header_size(adf_get_u32(h + 40));
    size_t rest = hsize - DET_BASIS_HEADER;
    if (rest && (st.st_size < hsize + 4 || fread(h + DET_BASIS_HEADER, 1, rest, f) != rest)) {
        snprintf(why, sizeof why, "cannot read the crystal's corners after the header");
        goto fail;
    }
    if (decode_header(b, h, (uint64_t)st.st_size, why, sizeof why)) goto fail;
    if (det_basis_alloc(b)) {
        snprintf(why, sizeof why, "out of memory for %u points", b->n_points);
        goto fail;
    }
    uint32_t crc = det_crc32(0, h, hsize);
    if (read_records(b, f, &crc, why, sizeof why)) goto fail;
    if (fread(t, 1, 4, f) != 4) {
        snprintf(why, sizeof why, "cannot read the checksum");
        goto fail;
    }
    if (adf_get_u32(t) != crc) {
        snprintf(why, sizeof why, "checksum mismatch (stored 0x%08x, contents give 0x%08x): the file is damaged",
                 adf_get_u32(t), crc);
        goto fail;
    }
    if (det_basis_check_points(b, why, sizeof why)) goto fail;
    return end_read(f, b, NULL, path, msg, len);
fail:
    return end_read(f, b, why, path, msg, len);
}

/* ---- the plain import format ---- */

typedef struct import_header {
    long points, channels, samples, pretrigger;
    double sampling_ns, grid_mm, preamp_ns, bias_v;
    char source[64];
} import_header;

/* "source TEXT": the rest of the line, trimmed; 0, or -1 when it is empty or too long. */
static int read_source(const char *line, char *out, size_t cap)
{
    const char *p = strstr(line, "source") + strlen("source");
    while (*p == ' ' || *p == '\t') p++;
    size_t n = strlen(p);
    while (n && (p[n - 1] == '\n' || p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
    if (n == 0 || n >= cap) return -1;
    memcpy(out, p, n);
    out[n] = 0;
    return 0;
}

/* One "key number" line of the header; -1 for an unknown key or a value out of range. */
static int import_number(import_header *ih, const char *key, double v, int *seen)
{
    int whole = v == floor(v);
    if (!strcmp(key, "points") && v >= 1 && v <= 1e8 && whole) ih->points = (long)v, *seen |= 1;
    else if (!strcmp(key, "channels") && v >= 2 && v <= DET_BASIS_MAX_CHANNELS && whole) ih->channels = (long)v, *seen |= 2;
    else if (!strcmp(key, "samples") && v >= 1 && v <= DET_BASIS_MAX_SAMPLES && whole) ih->samples = (long)v, *seen |= 4;
    else if (!strcmp(key, "sampling_ns") && v > 0 && v < 1e6) ih->sampling_ns = v, *seen |= 8;
    else if (!strcmp(key, "pretrigger") && v >= 0 && whole) ih->pretrigger = (long)v;
    else if (!strcmp(key, "grid_mm") && v > 0 && v < 100) ih->grid_mm = v;
    else if (!strcmp(key, "preamp_ns") && v >= 0 && v < 1e4) ih->preamp_ns = v;
    else if (!strcmp(key, "bias_v") && v >= 0 && v < 1e5) ih->bias_v = v;
    else return -1;
    return 0;
}

/* Parses the text header up to "end"; -1 with the reason (and line). */
static int read_import_header(FILE *f, import_header *ih, char *why, size_t len)
{
    char line[256];
    int lineno = 0, seen = 0; /* bits: points, channels, samples, sampling_ns, first line */
    memset(ih, 0, sizeof *ih);
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (lineno > 64) break;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char key[64], extra[8];
        double v;
        int n = sscanf(line, " %63s %lf %7s", key, &v, extra);
        if (n <= 0) continue;
        if (!(seen & 16)) {
            if (strcmp(key, "narwhal-basis-import") || n != 2 || v != 1)
                return snprintf(why, len, "line %d: expected 'narwhal-basis-import 1'", lineno), -1;
            seen |= 16;
            continue;
        }
        if (!strcmp(key, "end") && n == 1) {
            if ((seen & 15) != 15)
                return snprintf(why, len, "line %d: 'end' before all of points, channels, samples, sampling_ns", lineno), -1;
            return 0;
        }
        if (!strcmp(key, "source")) {
            if (read_source(line, ih->source, sizeof ih->source))
                return snprintf(why, len, "line %d: 'source' wants a text of 1 to %zu bytes", lineno,
                                sizeof ih->source - 1), -1;
            continue;
        }
        if (n != 2) return snprintf(why, len, "line %d: expected 'key number'", lineno), -1;
        if (import_number(ih, key, v, &seen))
            return snprintf(why, len, "line %d: unknown key or value out of range: '%s'", lineno, key), -1;
    }
    return snprintf(why, len, "no 'end' line within the first 64 lines"), -1;
}

/* The header's figures into b: the shape of c, the signals' figures as the import gave them. */
static void import_describe(det_basis *b, const import_header *ih, const det_crystal *c, const char *path)
{
    b->crystal = *c;
    b->crystal.bias = ih->bias_v;
    b->crystal.preamp_rise = ih->preamp_ns;
    b->crystal.impurity_front = b->crystal.impurity_back = 0;
    b->n_points = (uint32_t)ih->points;
    b->n_channels = (uint32_t)ih->channels;
    b->n_samples = (uint32_t)ih->samples;
    b->pretrigger = (uint32_t)ih->pretrigger;
    b->sample_ns = ih->sampling_ns;
    b->flags = DET_BASIS_IMPORTED;
    if (ih->source[0]) {
        memcpy(b->source, ih->source, sizeof b->source);
    } else {
        const char *base = strrchr(path, '/');
        snprintf(b->source, sizeof b->source, "%s", base ? base + 1 : path);
    }
}

/* Leaves out the points outside the crystal (or not finite), keeping the order; counts them in r. */
static void drop_outside(det_basis *b, det_import_report *r)
{
    const size_t per = (size_t)b->n_channels * b->n_samples;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < b->n_points; i++) {
        const float *p = b->pos + 3 * (size_t)i;
        double q[3] = {p[0], p[1], p[2]};
        if (!isfinite(q[0]) || !isfinite(q[1]) || !isfinite(q[2]) || !det_crystal_contains(&b->crystal, q)) {
            if (r->outside < DET_IMPORT_LISTED) {
                r->outside_record[r->outside] = i;
                memcpy(r->outside_pos[r->outside], p, sizeof r->outside_pos[0]);
            }
            r->outside++;
            continue;
        }
        if (kept != i) {
            memcpy(b->pos + 3 * (size_t)kept, p, 3 * sizeof *p);
            b->segment[kept] = b->segment[i];
            memcpy(det_basis_point(b, kept), det_basis_point(b, i), per * sizeof *b->signal);
        }
        kept++;
    }
    b->n_points = kept;
}

/* The grid: the import's or the option's spacing, checked, else the detected one. */
static int import_grid(det_basis *b, double given, det_import_report *r, char *why, size_t len)
{
    if (given > 0) {
        b->grid_mm = given;
        return det_basis_check_grid(b, given, why, len);
    }
    b->grid_mm = det_basis_detect_grid(b, r->grid_note, sizeof r->grid_note);
    r->grid_detected = b->grid_mm > 0;
    return 0;
}

int det_basis_import(det_basis *b, const char *path, const det_crystal *c, const det_import_options *o,
                     det_import_report *r, char *msg, size_t len)
{
    char why[400];
    import_header ih;
    struct stat st;
    memset(b, 0, sizeof *b);
    memset(r, 0, sizeof *r);
    FILE *f = fopen(path, "rb");
    if (!f) return snprintf(msg, len, "%s: cannot open: %s", path, strerror(errno)), -1;
    if (read_import_header(f, &ih, why, sizeof why)) goto fail;
    if (ih.pretrigger >= ih.samples) {
        snprintf(why, sizeof why, "pretrigger %ld must be below samples %ld", ih.pretrigger, ih.samples);
        goto fail;
    }
    import_describe(b, &ih, c, path);
    r->records = b->n_points;
    long start = ftell(f);
    uint64_t need = (uint64_t)b->n_points * 4 * record_floats(b);
    if (start < 0 || fstat(fileno(f), &st) || (uint64_t)(st.st_size - start) != need) {
        snprintf(why, sizeof why, "the binary part has %lld bytes, the header's %u points of %u x %u samples need %llu",
                 (long long)(st.st_size - start), b->n_points, b->n_channels, b->n_samples, (unsigned long long)need);
        goto fail;
    }
    if (det_basis_alloc(b)) {
        snprintf(why, sizeof why, "out of memory for %u points", b->n_points);
        goto fail;
    }
    uint32_t unused = 0;
    if (read_records(b, f, &unused, why, sizeof why)) goto fail;
    if (!o->strict) drop_outside(b, r);
    if (b->n_points == 0) {
        snprintf(why, sizeof why, "none of its %u points lies inside the crystal", r->records);
        goto fail;
    }
    if (det_basis_check_points(b, why, sizeof why) ||
        import_grid(b, o->grid_mm > 0 ? o->grid_mm : ih.grid_mm, r, why, sizeof why))
        goto fail;
    return end_read(f, b, NULL, path, msg, len);
fail:
    return end_read(f, b, why, path, msg, len);
}

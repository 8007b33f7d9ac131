/* mkadf.c: writes a deterministic sample ADF stream: crystal traces, PSA hits, built events, tracked γ rays, meta:eof. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adf.h"

#define BLOCK (1u << 20)
#define MAX_EVENT_BYTES (64u << 10) /* 4 crystals of 7,580 bytes and the rest stay well below */
#define N_CHANNELS 37
#define N_SAMPLES 100
#define GAIN 5.0f  /* ADC counts per keV */
#define MAX_CRYSTALS 4
#define MAX_HITS 5

typedef struct rng {
    uint64_t s;
} rng;

/* splitmix64: tiny, fast, and every seed gives a full-period stream */
static uint64_t next_u64(rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double uniform(rng *r) { return (double)(next_u64(r) >> 11) * 0x1.0p-53; }
static unsigned below(rng *r, unsigned n) { return (unsigned)(next_u64(r) % n); }

/* Irwin-Hall approximation of a unit normal: plenty for noise on traces. */
static double normal(rng *r)
{
    double s = 0;
    for (int i = 0; i < 12; i++)
        s += uniform(r);
    return s - 6.0;
}

typedef struct hit {
    int segment;
    float x, y, z, e;
} hit;

typedef struct crystal_event {
    uint16_t id;
    uint64_t timestamp;
    int n_hits;
    hit hits[MAX_HITS];
    float energy;
} crystal_event;

/* AGATA ring boundaries along the crystal axis, mm (front to back). */
static const float ring_edge[7] = {0, 8, 21, 36, 53, 72, 90};

static int segment_of(float x, float y, float z)
{
    double phi = atan2(y, x);
    int sector = (int)((phi + M_PI) / (M_PI / 3.0)) % 6;
    int ring = 5;
    for (int r = 0; r < 6; r++)
        if (z < ring_edge[r + 1]) {
            ring = r;
            break;
        }
    return 6 * sector + ring;
}

static void make_hits(rng *r, crystal_event *c, float energy)
{
    c->n_hits = 1 + (int)below(r, MAX_HITS);
    c->energy = energy;
    float left = energy;
    for (int h = 0; h < c->n_hits; h++) {
        hit *x = &c->hits[h];
        double radius = 5.0 + 30.0 * sqrt(uniform(r)), phi = 2 * M_PI * uniform(r);
        x->x = (float)(radius * cos(phi));
        x->y = (float)(radius * sin(phi));
        x->z = (float)(89.9 * uniform(r));
        x->segment = segment_of(x->x, x->y, x->z);
        x->e = h == c->n_hits - 1 ? left : left * (float)(0.2 + 0.5 * uniform(r));
        left -= x->e;
    }
}

/* A charge-collection step: net charge rises over `rise` samples and decays with the preamplifier. */
static double step(double t, double t0, double rise)
{
    if (t <= t0)
        return 0;
    return (1 - exp(-(t - t0) / rise)) * exp(-(t - t0) / 5000.0);
}

/* The transient a neighbour sees: induced while the charge drifts, gone once it is collected. */
static double transient(double t, double t0, double rise)
{
    if (t <= t0)
        return 0;
    double u = (t - t0) / rise;
    return u * exp(1 - u);
}

static int16_t clamp16(double v) { return (int16_t)(v > 32767 ? 32767 : v < -32768 ? -32768 : lrint(v)); }

static void make_traces(rng *r, const crystal_event *c, adf_crystal *out)
{
    memset(out, 0, sizeof *out);
    out->crystal_id = c->id;
    out->n_channels = N_CHANNELS;
    out->n_samples = N_SAMPLES;
    out->gain = GAIN;
    double t0 = 20 + 10 * uniform(r);
    double wave[N_CHANNELS][N_SAMPLES] = {{0}};
    for (int h = 0; h < c->n_hits; h++) {
        const hit *x = &c->hits[h];
        double rise = 3 + 12 * sqrt(x->x * x->x + x->y * x->y) / 35.0, amp = x->e * GAIN;
        int sector = x->segment / 6, ring = x->segment % 6;
        int neighbour[4] = {6 * ((sector + 1) % 6) + ring, 6 * ((sector + 5) % 6) + ring,
                            ring > 0 ? x->segment - 1 : -1, ring < 5 ? x->segment + 1 : -1};
        out->energy[x->segment] += x->e;
        for (int s = 0; s < N_SAMPLES; s++) {
            wave[x->segment][s] += amp * step(s, t0, rise);
            wave[N_CHANNELS - 1][s] += amp * step(s, t0, 0.8 * rise);
            for (int k = 0; k < 4; k++)
                if (neighbour[k] >= 0)
                    wave[neighbour[k]][s] += 0.08 * amp * transient(s, t0, rise);
        }
    }
    out->energy[N_CHANNELS - 1] = c->energy;
    for (int ch = 0; ch < N_CHANNELS; ch++) {
        out->energy[ch] += (float)(0.7 * normal(r));
        for (int s = 0; s < N_SAMPLES; s++)
            out->trace[ch][s] = clamp16(wave[ch][s] + 3.0 * normal(r));
    }
}

static void make_psa(rng *r, const crystal_event *c, adf_psa *p)
{
    memset(p, 0, sizeof *p);
    p->crystal_id = c->id;
    p->e0 = c->energy;
    p->e1 = c->energy + (float)(0.3 * normal(r));
    p->t0 = (float)(200 + 30 * uniform(r));
    p->t1 = (float)(2 * normal(r));
    p->n_hits = (uint16_t)c->n_hits;
    for (int h = 0; h < c->n_hits; h++) {
        const hit *x = &c->hits[h];
        p->hit[h] = (adf_psa_hit){.segment = (int16_t)x->segment, .crystal_id = (int16_t)c->id,
                                  .x = x->x, .y = x->y, .z = x->z, .e = x->e, .t = p->t0};
    }
}

/* One γ per crystal of the event, placed on the array's inner surface (about 235 mm from the target). */
static void make_tracked(rng *r, const crystal_event *c, int n, adf_tracked *t)
{
    memset(t, 0, sizeof *t);
    t->n_gammas = (uint16_t)below(r, (unsigned)n + 1);
    for (int g = 0; g < t->n_gammas; g++) {
        adf_gamma *gm = &t->gamma[g];
        double theta = acos(1 - 2 * uniform(r)), phi = 2 * M_PI * uniform(r), rad = 235 + 30 * uniform(r);
        gm->e = gm->e_dc = c[g].energy;
        gm->fom = (float)uniform(r);
        gm->x1 = gm->x2 = (float)(rad * sin(theta) * cos(phi));
        gm->y1 = gm->y2 = (float)(rad * sin(theta) * sin(phi));
        gm->z1 = gm->z2 = (float)(rad * cos(theta));
        gm->n_points = (uint16_t)c[g].n_hits;
        gm->n_crystals = 1;
        gm->first_crystal = c[g].id;
        gm->flags = c[g].n_hits == 1 ? ADF_TRACKED_SINGLE : 0;
        if (c[g].n_hits > 1) {
            gm->x2 += c[g].hits[1].x - c[g].hits[0].x;
            gm->y2 += c[g].hits[1].y - c[g].hits[0].y;
            gm->z2 += c[g].hits[1].z - c[g].hits[0].z;
        }
    }
}

/* A 60Co-like source: the two lines, sometimes only part of the energy stays (Compton escape). */
static float deposit(rng *r)
{
    static const float lines[] = {1173.2f, 1332.5f, 661.7f, 344.3f};
    float e = lines[below(r, 4)];
    return uniform(r) < 0.3 ? e * (float)(0.1 + 0.8 * uniform(r)) : e;
}

typedef struct stream {
    adf_writer w;
    uint8_t *block;
    adf_file *file;
    uint32_t frames;
    uint64_t bytes;
    adf_crystal crystal;
    adf_psa psa;
    adf_tracked tracked;
} stream;

static void write_event(rng *r, stream *st, uint32_t event, uint64_t ts)
{
    crystal_event c[MAX_CRYSTALS];
    int n = 2 + (int)below(r, MAX_CRYSTALS - 1);
    for (int i = 0; i < n; i++) {
        c[i].id = (uint16_t)below(r, 180);
        c[i].timestamp = ts + below(r, 4);
        make_hits(r, &c[i], deposit(r));
        make_traces(r, &c[i], &st->crystal);
        adf_crystal_write(&st->w, event, c[i].timestamp, &st->crystal);
    }
    make_psa(r, &c[0], &st->psa);
    adf_psa_write(&st->w, event, c[0].timestamp, &st->psa);
    adf_begin(&st->w, ADF_ID_EVENT_DATA_PSA, event, ts);
    for (int i = 0; i < (n < 3 ? n : 3); i++) {
        make_psa(r, &c[i], &st->psa);
        adf_psa_write(&st->w, event, c[i].timestamp, &st->psa);
    }
    adf_end(&st->w);
    make_tracked(r, c, n, &st->tracked);
    adf_tracked_write(&st->w, event, ts, &st->tracked);
    st->frames += (uint32_t)n + 3;
}

static int flush(stream *st)
{
    int rc = adf_file_write(st->file, st->block, st->w.used);
    st->bytes += st->w.used;
    adf_writer_init(&st->w, st->block, BLOCK);
    return rc;
}

static int parse_u64(const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (errno || end == s || *end || s[0] == '-')
        return -1;
    *v = x;
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t n_events, seed = 1;
    if (argc < 3 || argc > 4 || parse_u64(argv[2], &n_events) || n_events > UINT32_MAX ||
        (argc == 4 && parse_u64(argv[3], &seed))) {
        fprintf(stderr, "usage: mkadf OUT.adf NEVENTS [SEED]\n");
        return 2;
    }
    static stream st;
    rng r = {seed};
    char msg[300];
    int rc = adf_file_open_write(&st.file, argv[1], 0);
    if (rc != ADF_OK) {
        fprintf(stderr, "mkadf: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    st.block = malloc(BLOCK);
    if (!st.block) {
        fprintf(stderr, "mkadf: out of memory\n");
        adf_file_close(st.file);
        return 1;
    }
    adf_writer_init(&st.w, st.block, BLOCK);
    uint64_t ts = 1000000;
    for (uint32_t ev = 0; ev < n_events && rc == ADF_OK; ev++) {
        ts += 200 + below(&r, 5000);
        write_event(&r, &st, ev, ts);
        if (st.w.status != ADF_OK)
            break;
        if (BLOCK - st.w.used < MAX_EVENT_BYTES)
            rc = flush(&st);
    }
    adf_eof eof = {st.frames, st.bytes + st.w.used};
    if (rc == ADF_OK && st.w.status == ADF_OK)
        adf_eof_write(&st.w, (uint32_t)n_events, ts, &eof);
    if (rc == ADF_OK && (rc = st.w.status) == ADF_OK)
        rc = flush(&st);
    if (rc != ADF_OK)
        adf_file_describe(st.file, rc, msg, sizeof msg);
    int rc_close = adf_file_close(st.file);
    if (rc == ADF_OK && rc_close != ADF_OK)
        snprintf(msg, sizeof msg, "%s: closing failed: %s", argv[1], strerror(errno));
    free(st.block);
    if (rc != ADF_OK || rc_close != ADF_OK) {
        fprintf(stderr, "mkadf: %s\n", msg);
        return 1;
    }
    printf("mkadf: %s: %" PRIu64 " events, %" PRIu32 " frames + meta:eof, %" PRIu64 " bytes\n", argv[1], n_events,
           eof.frames, eof.bytes + ADF_KEY_SIZE + ADF_EOF_PAYLOAD);
    return 0;
}

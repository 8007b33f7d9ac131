/* graph.h: what the graph test actors share: instance names, the call log, tagged test frames, injected failures. */
#ifndef NARWHAL_TESTS_GRAPH_H
#define NARWHAL_TESTS_GRAPH_H

/*
 * Three test actors for topologies that are graphs (tests/check_graph.c):
 * graph_producer.so, graph_filter.so and graph_consumer.so.  Instances are
 * named by library and registration order: P0, P1, ...; F0, F1, ...; C0,
 * C1, ... (the emulator registers in topology order).  Each call appends
 * one line to the file named by GRAPH_LOG: "<who> <call>", and for
 * process_block the frames the actor emitted (producer) or was handed
 * (filter, consumer): "P0 process_block P0.0 P0.1", "C0 process_block
 * P1.4 eof" ("eof" for a meta:eof frame, "-" for an empty input: a flush).
 *
 * A test frame: key id GR_FRAME_ID, event = its sequence number in its
 * producer's run (0, 1, ...), timestamp = 1000 x that, payload one u32:
 * the producer's number (1 for P1).  24 bytes.  Steered by environment
 * variables, read when called:
 *
 *   GRAPH_FRAMES=N         frames per run of every producer (default 6)
 *   GRAPH_FRAMES_P1=N      frames per run of P1 (any instance name)
 *   GRAPH_PER_BLOCK=K      at most K frames per producer block (default 2)
 *   GRAPH_FAIL=WHO:NTH:CODE  the NTH process_block (1-based) of WHO returns CODE
 *
 * A producer ends each run's frames with one meta:eof (in the last block
 * if it fits, else alone), then answers used = 0.  A filter passes every
 * frame on unchanged.  process_reset starts a producer's frames again.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adf.h"
#include "narval.h"

#define GR_FRAME_ID 0x4E57FF01u
#define GR_FRAME_SIZE (ADF_KEY_SIZE + 4u)

typedef struct gr_instance {
    char who[16];
    unsigned blocks;   /* process_block calls */
    unsigned next_seq; /* producer: the next frame of the run */
    int eof_sent;      /* producer: this run's meta:eof went out */
} gr_instance;

static inline void gr_log(const char *who, const char *call, const char *details)
{
    const char *path = getenv("GRAPH_LOG");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (!f)
        return;
    fprintf(f, "%s %s%s%s\n", who, call, details && *details ? " " : "", details ? details : "");
    fclose(f);
}

static inline unsigned gr_env(const char *name, unsigned fallback)
{
    const char *v = getenv(name);
    return v && *v ? (unsigned)strtoul(v, NULL, 10) : fallback;
}

/* GRAPH_FRAMES_<who>, else GRAPH_FRAMES, else 6. */
static inline unsigned gr_frames(const char *who)
{
    char name[64];
    snprintf(name, sizeof name, "GRAPH_FRAMES_%s", who);
    return gr_env(name, gr_env("GRAPH_FRAMES", 6));
}

/* The code GRAPH_FAIL injects into the nth process_block of who, or 0. */
static inline unsigned gr_injected(const char *who, unsigned nth)
{
    const char *v = getenv("GRAPH_FAIL");
    char spec_who[16];
    unsigned spec_nth, code;
    if (!v || sscanf(v, "%15[^:]:%u:%u", spec_who, &spec_nth, &code) != 3)
        return 0;
    return strcmp(spec_who, who) == 0 && spec_nth == nth ? code : 0;
}

static inline gr_instance *gr_register(char prefix, unsigned *counter, unsigned *error_code)
{
    gr_instance *in = calloc(1, sizeof *in);
    *error_code = in ? NARVAL_OK : NARVAL_E_NOMEM;
    if (!in)
        return NULL;
    snprintf(in->who, sizeof in->who, "%c%u", prefix, (*counter)++);
    gr_log(in->who, "process_register", NULL);
    return in;
}

static inline void gr_call(void *algo_data, const char *call, unsigned *error_code)
{
    gr_instance *in = algo_data;
    *error_code = in ? NARVAL_OK : NARVAL_E_STATE;
    if (!in)
        return;
    gr_log(in->who, call, NULL);
    if (strcmp(call, "process_reset") == 0) {
        in->next_seq = 0;
        in->eof_sent = 0;
    }
}

static inline void gr_unload(void *algo_data, unsigned *error_code)
{
    gr_call(algo_data, "process_unload", error_code);
    free(algo_data);
}

/* The frames of a buffer as the log writes them. */
static inline void gr_describe(const uint8_t *buf, size_t size, char *out, size_t len)
{
    adf_iter it;
    adf_frame f;
    size_t n = 0;
    out[0] = '\0';
    if (size == 0)
        snprintf(out, len, "-");
    adf_iter_init(&it, buf, size);
    while (adf_iter_next(&it, &f) > 0 && n < len) {
        const char *sep = n ? " " : "";
        if (f.key.id == ADF_ID_META_EOF)
            n += (size_t)snprintf(out + n, len - n, "%seof", sep);
        else if (f.key.id == GR_FRAME_ID && f.key.length == GR_FRAME_SIZE)
            n += (size_t)snprintf(out + n, len - n, "%sP%u.%u", sep, adf_get_u32(f.payload), f.key.event);
        else
            n += (size_t)snprintf(out + n, len - n, "%s?", sep);
    }
}

/* Logs a process_block with the frames of buf; returns the injected code. */
static inline unsigned gr_block(gr_instance *in, const uint8_t *buf, size_t size)
{
    char frames[4096];
    gr_describe(buf, size, frames, sizeof frames);
    gr_log(in->who, "process_block", frames);
    return gr_injected(in->who, ++in->blocks);
}

/* The calls every graph test actor answers alike: config, register and the
 * lifecycle, each logged under the library's letter (P, F or C). */
#define GR_ACTOR(letter)                                                                           \
    static unsigned instances;                                                                     \
    void process_config(const char *directory_path, unsigned int *error_code)                      \
    {                                                                                              \
        gr_log(#letter, "process_config", directory_path);                                         \
        *error_code = NARVAL_OK;                                                                   \
    }                                                                                              \
    void *process_register(unsigned int *error_code)                                               \
    {                                                                                              \
        return gr_register(#letter[0], &instances, error_code);                                    \
    }                                                                                              \
    void process_initialise(void *a, unsigned int *e) { gr_call(a, "process_initialise", e); }     \
    void process_start(void *a, unsigned int *e) { gr_call(a, "process_start", e); }               \
    void process_pause(void *a, unsigned int *e) { gr_call(a, "process_pause", e); }               \
    void process_resume(void *a, unsigned int *e) { gr_call(a, "process_resume", e); }             \
    void process_stop(void *a, unsigned int *e) { gr_call(a, "process_stop", e); }                 \
    void process_reset(void *a, unsigned int *e) { gr_call(a, "process_reset", e); }               \
    void process_unload(void *a, unsigned int *e) { gr_unload(a, e); }

#endif

/* host.h: the NARVAL-like test host's shared types: a chain of stages, each a library with K instances, and the frame counts of a cycle. */
#ifndef NARWHAL_TESTS_HOST_H
#define NARWHAL_TESTS_HOST_H

/*
 * The host is written against actors/narval.h alone, as a NARVAL host built
 * from NARVAL's published C interface would be: no libadf, no kit, no code of
 * the emulator.  It reads the 20-byte ADF keys itself (host_frames.c) to
 * count what flows between the stages.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "narval.h"

enum { HOST_MAX_STAGES = 16, HOST_MAX_INSTANCES = 16, HOST_MAX_KEEP = 16 }; /* instances: a bit each in eof_from */

/* The frame kinds counted apart; everything else is "other". */
enum host_kind { HK_CRYSTAL, HK_PSA, HK_EVENT_PSA, HK_TRACKED, HK_EOF, HK_OTHER, HK_COUNT };

#define HOST_ID_DATA_CRYSTAL 0x4E570101u /* narwhal:crystal */
#define HOST_ID_DATA_PSA 0xFA010102u
#define HOST_ID_EVENT_DATA_PSA 0xCA010102u
#define HOST_ID_DATA_TRACKED 0x4E570105u /* narwhal:tracked */
#define HOST_ID_META_EOF 0xFA001100u
#define HOST_KEY_SIZE 20u

/* What the host stores in *error_code before a call: an actor that returns without setting it is caught. */
#define HOST_UNSET_CODE 0xA5A5A5A5u

typedef enum host_role { HOST_PRODUCER, HOST_FILTER, HOST_CONSUMER } host_role;

/* What went through one side (in or out) of a stage during a cycle. */
typedef struct host_count {
    uint64_t blocks, frames, bytes;
    uint64_t kind[HK_COUNT];  /* top-level frames by kind */
    uint64_t psa_any;         /* data:psa frames at any depth (inside composites too) */
    uint64_t psa_digest;      /* sum of their FNV-1a hashes (key and payload): the same multiset, the same sum */
} host_count;

/* A library's entry points; the optional ones are NULL when the library lacks them. */
typedef struct host_lib {
    void *so;
    narval_config_fn *config;
    narval_register_fn *reg;
    narval_lifecycle_fn *initialise, *start, *stop, *pause, *resume, *reset, *unload;
    narval_producer_block_fn *produce;
    narval_filter_block_fn *filter;
    narval_consumer_block_fn *consume;
} host_lib;

typedef struct host_stage {
    const char *name, *path, *conf; /* as given: NAME=LIBRARY,CONFDIR[,SIZE] */
    unsigned size;                  /* output buffer bytes (producer and filters), fixed */
    host_role role;
    int n;                          /* instances */
    host_lib lib;
    void *inst[HOST_MAX_INSTANCES]; /* NULL until registered, and again once unloaded */
    uint8_t *buffer;                /* the output buffer every instance of the stage writes into */
    unsigned next;                  /* round robin: blocks given so far (the next goes to next % n) */
    /* the link from the previous stage, this cycle */
    uint32_t eof_from;              /* the instances of the previous stage that emitted their meta:eof */
    uint8_t eof[256];               /* the last of them, passed on once all have come */
    unsigned eof_len;
    host_count in, out;
    uint64_t inst_blocks[HOST_MAX_INSTANCES];
} host_stage;

typedef struct host {
    host_stage st[HOST_MAX_STAGES];
    int n_stages;
    int instances, cycles, pause_every;
    const char *keep[HOST_MAX_KEEP];
    int n_keep;
    FILE *report;
    int cycle;        /* 1-based, the cycle running */
    int violations;   /* contract breaches seen (not error codes: those abort) */
    int eof_blocks;   /* producer blocks holding meta:eof this cycle */
    bool after_eof;   /* the producer emitted meta:eof this cycle */
    bool started;     /* this cycle's counts exist (it got to process_start) */
    bool aborted;     /* an actor's error ended this cycle */
} host;

/* ---- host_load.c */
/* dlopens the stage's library and resolves the process_* symbols by name; 0, or -1 with a message on stderr. */
int host_load(host_stage *s);

/* ---- host_frames.c */
/* Counts the frames of a block into c; -1 with a message naming the stage when a frame is malformed. */
int host_count_block(host_count *c, const uint8_t *buf, unsigned size, const char *stage);
/* Removes the meta:eof frames of a (valid) block in place, the last copied to eof (cap bytes);
 * returns the bytes left, the number removed in *n. */
unsigned host_strip_eof(uint8_t *buf, unsigned size, uint8_t *eof, unsigned cap, unsigned *eof_len, int *n);
/* The meta:eof frames at the top level of a (valid) block. */
int host_eofs(const uint8_t *buf, unsigned size);
/* The report's rows and the human table of one cycle. */
void host_report_cycle(const host *h, FILE *tsv, FILE *table);

/* ---- host_flow.c */
/* Gives the output of instance i of stage `from` (the producer's block too) to the next stage;
 * 0, or the error code that aborts. */
int host_pass(host *h, int from, int i, uint8_t *buf, unsigned size);
/* Calls fn on instance i of stage s, checking the code; 0 or the code (logged). A NULL fn succeeds. */
unsigned host_call(host *h, host_stage *s, int i, narval_lifecycle_fn *fn, const char *what);
/* 0, or the code of `what` on instance i (0-based) of s, logged with the stage and the instance. */
unsigned host_checked(const host_stage *s, int i, const char *what, unsigned code);
/* Logs a breach of the contract (the run goes on, the exit status says it). */
void host_violation(host *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

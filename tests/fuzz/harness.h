/* harness.h: the libFuzzer harness every actor target includes: a real process_config, one instance, each input a run of its own. */
#ifndef NARWHAL_FUZZ_HARNESS_H
#define NARWHAL_FUZZ_HARNESS_H

/*
 * A target defines NARVAL_FILTER or NARVAL_CONSUMER and FZ_ACTOR (the actor's
 * name, which names its <name>.conf), defines fz_conf() (its configuration)
 * and, for a consumer that writes a file, fz_published(); then it includes
 * this file.  It is linked with the actor's own objects and libraries rather
 * than dlopen'ing its .so, so that the fuzzer's coverage and the sanitizers
 * see every line of the actor and llvm-cov reports them from one binary;
 * the actor's process_* entry points are still the only calls made.
 *
 * Each input is one run: process_start, the input as one block, then (the
 * input's hash chooses) a block holding one meta:eof, an empty block (the
 * emulator's flush, a Narwhal extension) or nothing, then process_stop (the
 * run published: one run in FZ_STOPS, default 2) or process_reset (discarded).  So an input reproduces
 * alone, whatever ran before it.  Asserted for every block, from narval.h:
 *  - the code is 0 or a documented NARVAL_E_* code, never NARVAL_E_INTERNAL;
 *  - a filter's *used is at most its output's size and the output is whole,
 *    valid frames; a meta:eof block comes out ending with that meta:eof;
 *  - NARVAL_E_OUTPUT_SIZE names more than the buffer held, and the same call
 *    with exactly that size succeeds (the actor did not commit the first);
 *  - an output buffer has exactly the size given (ASan sees a write past it),
 *    and the input is never written (libFuzzer checks its input after the call).
 * Blocks are also given small output buffers (one input in eight) so that
 * the NARVAL_E_OUTPUT_SIZE path runs.
 *
 * The actors log to stderr: run the targets with -close_fd_mask=2 (make fuzz
 * does) to keep libFuzzer's own lines readable; sanitizer reports still show.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adf.h"
#include "common.h"
#include "narval.h"

#if !defined(NARVAL_FILTER) && !defined(NARVAL_CONSUMER)
#error "define NARVAL_FILTER or NARVAL_CONSUMER before including harness.h"
#endif

/* Writes the actor's configuration file to fp; dir is a private directory for the
 * actor's outputs, basis the small PSA basis (make fuzz builds it). */
static void fz_conf(FILE *fp, const char *dir, const char *basis);

#ifndef FZ_STOPS
#define FZ_STOPS 2
#endif

static void *fz_inst;

static void fz_call(void (*fn)(void *, unsigned *), const char *what)
{
    unsigned code = 1;
    fn(fz_inst, &code);
    if (code) {
        fprintf(stderr, "fuzz %s: %s failed with %u (%s)\n", FZ_ACTOR, what, code, narval_strerror(code));
        abort();
    }
}

/* One directory, one configuration, one instance for the whole process; OpenMP on one thread
 * (what the fuzzer measures is the input, not the scheduling). */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *basis = getenv("NARWHAL_FUZZ_BASIS");
    char conf[PATH_MAX + 64], abs_basis[PATH_MAX];
    unsigned code = 1;
    setenv("OMP_NUM_THREADS", "1", 1);
    fz_make_dir(FZ_ACTOR);
    if (!realpath(basis && *basis ? basis : "build/fuzz/fuzz.basis", abs_basis))
        snprintf(abs_basis, sizeof abs_basis, "%s", basis && *basis ? basis : "build/fuzz/fuzz.basis");
    snprintf(conf, sizeof conf, "%s/%s.conf", fz_dir, FZ_ACTOR);
    FILE *fp = fopen(conf, "w");
    FZ_CHECK(fp != NULL);
    fz_conf(fp, fz_dir, abs_basis);
    FZ_CHECK(fclose(fp) == 0);
    process_config(fz_dir, &code);
    if (code) {
        fprintf(stderr, "fuzz %s: process_config of %s failed (%s): is the basis built (make fuzz)?\n",
                FZ_ACTOR, conf, narval_strerror(code));
        abort();
    }
    fz_inst = process_register(&code);
    FZ_CHECK(code == 0 && fz_inst != NULL);
    fz_call(process_initialise, "process_initialise");
    return 0;
}

/* A documented code a block may return on bad or unexpected input. */
static bool fz_block_code(unsigned code)
{
    return code == 0 || code == NARVAL_E_INPUT || code == NARVAL_E_OUTPUT_SIZE ||
           code == NARVAL_E_DATA || code == NARVAL_E_IO;
}

#ifdef NARVAL_FILTER
/* Checks a successful filter output: whole frames within the buffer, ending with
 * the meta:eof the block brought. */
static void fz_check_output(const uint8_t *out, unsigned used, unsigned cap, bool eof_in)
{
    adf_iter it;
    adf_frame f;
    size_t frames = 0;
    uint32_t last = 0;
    FZ_CHECK(used <= cap);
    adf_iter_init(&it, out, used);
    while (adf_iter_next(&it, &f) > 0) {
        frames++;
        last = f.key.id;
    }
    FZ_CHECK(adf_validate(out, used, NULL, NULL) == 0);
    if (eof_in)
        FZ_CHECK(frames > 0 && last == ADF_ID_META_EOF);
}

/* One block through the filter with an output of cap bytes; on NARVAL_E_OUTPUT_SIZE the
 * same call again with exactly the size it asked for.  The code. */
static unsigned fz_block(const uint8_t *in, size_t size, unsigned cap, bool eof_in)
{
    unsigned used = 0, code = 1;
    uint8_t *out = malloc(cap ? cap : 1);
    FZ_CHECK(out != NULL);
    process_block(fz_inst, (void *)in, (unsigned)size, out, cap, &used, &code);
    FZ_CHECK(fz_block_code(code));
    if (code == NARVAL_E_OUTPUT_SIZE) {
        unsigned need = used;
        FZ_CHECK(need > cap);
        free(out);
        out = malloc(need);
        FZ_CHECK(out != NULL);
        used = 0;
        code = 1;
        process_block(fz_inst, (void *)in, (unsigned)size, out, need, &used, &code);
        FZ_CHECK(code != NARVAL_E_OUTPUT_SIZE && fz_block_code(code));
        cap = need;
    }
    if (code == 0)
        fz_check_output(out, used, cap, eof_in);
    free(out);
    return code;
}
#else
static unsigned fz_block(const uint8_t *in, size_t size, unsigned cap, bool eof_in)
{
    unsigned code = 1;
    process_block(fz_inst, (void *)in, (unsigned)size, &code);
    FZ_CHECK(fz_block_code(code) && code != NARVAL_E_OUTPUT_SIZE);
    return code;
}
#endif

#ifdef FZ_PUBLISHES
/* After a stop: checks what the run published, given the blocks it accepted (the input, then tail). */
static void fz_published(const char *dir, const uint8_t *in, size_t size, const uint8_t *tail, size_t tail_size);
#else
static void fz_published(const char *dir, const uint8_t *in, size_t size, const uint8_t *tail, size_t tail_size) {}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t eof[64];
    adf_writer w;
    adf_eof counts = { 0 };
    uint64_t h = fz_hash(data, size);
    /* most blocks get room for everything; one in eight a buffer that is likely too small */
    unsigned cap = (h & 7) == 0 ? (unsigned)((h >> 8) % (size + 1)) : (unsigned)(2 * size + 65536);
    unsigned end = (h >> 3) % 3; /* 0: a meta:eof block, 1: an empty block, 2: nothing */
    bool stop = (h >> 5) % FZ_STOPS == 0;
    unsigned code;

    if (size > UINT_MAX / 4)
        return 0;
    fz_call(process_start, "process_start");
    code = fz_block(data, size, cap, false);
    const uint8_t *tail = NULL;
    size_t tail_size = 0;
    if (code == 0 && end == 0) {
        adf_writer_init(&w, eof, sizeof eof);
        FZ_CHECK(adf_eof_write(&w, 1, 0, &counts) == ADF_OK);
        tail = eof;
        tail_size = w.used;
        code = fz_block(eof, w.used, 4096, true);
    } else if (code == 0 && end == 1) {
        code = fz_block(eof, 0, 65536, false);
    }
    if (code == 0 && stop) {
        fz_call(process_stop, "process_stop");
        fz_published(fz_dir, data, size, tail, tail_size);
    } else {
        fz_call(process_reset, "process_reset");
    }
    return 0;
}

#endif

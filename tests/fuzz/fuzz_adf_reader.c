/* fuzz_adf_reader.c: libFuzzer target: the adf_reader actor (producer) reading a mutated ADF file: blocks of whole frames, the file's frames in order, or an error. */
#define NARVAL_PRODUCER
#include <stdbool.h>
#include <string.h>

#include "adf.h"
#include "common.h"
#include "narval.h"

/*
 * Each input is written to the file ADFReader.conf names and read in one run:
 * process_start, blocks until one ends with meta:eof or fails (at most MAX_BLOCKS),
 * process_reset.  Output buffers have a size the input's hash chooses (often
 * smaller than a frame, so that NARVAL_E_OUTPUT_SIZE and the retry at the size
 * asked run).  Asserted, beside the sanitizers:
 *  - every code is 0, NARVAL_E_INPUT or NARVAL_E_IO (a malformed or truncated file) or
 *    NARVAL_E_OUTPUT_SIZE (naming more than the buffer held; the same call with that
 *    size succeeds);
 *  - every block is whole, valid frames within its buffer;
 *  - a run that ends with meta:eof emitted exactly the file's top-level frames in
 *    order, the file's own meta:eof frames left out; one that fails emitted a prefix
 *    of them, and the file holds a malformed frame.
 */
enum { MAX_BLOCKS = 4096 };

static void *inst;
static char path[PATH_MAX + 32];

static void call(void (*fn)(void *, unsigned *), const char *what)
{
    unsigned code = 1;
    fn(inst, &code);
    if (code) {
        fprintf(stderr, "fuzz ADFReader: %s failed with %u\n", what, code);
        abort();
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char conf[PATH_MAX + 32];
    unsigned code = 1;
    fz_make_dir("ADFReader");
    snprintf(path, sizeof path, "%s/input.adf", fz_dir);
    snprintf(conf, sizeof conf, "%s/ADFReader.conf", fz_dir);
    FILE *fp = fopen(conf, "w");
    FZ_CHECK(fp != NULL);
    fprintf(fp, "File %s\n", path);
    FZ_CHECK(fclose(fp) == 0);
    fz_input_file((const uint8_t *)"", 0); /* process_config checks that the file exists */
    process_config(fz_dir, &code);
    FZ_CHECK(code == 0);
    inst = process_register(&code);
    FZ_CHECK(code == 0 && inst != NULL);
    call(process_initialise, "process_initialise");
    return 0;
}

/* The file's top-level frames but its meta:eof ones, copied to out; how many bytes, and
 * whether the file is malformed somewhere. */
static size_t expected(const uint8_t *data, size_t size, uint8_t *out, bool *malformed)
{
    adf_iter it;
    adf_frame f;
    size_t n = 0;
    int rc;
    adf_iter_init(&it, data, size);
    while ((rc = adf_iter_next(&it, &f)) > 0)
        if (f.key.id != ADF_ID_META_EOF) {
            memcpy(out + n, f.data, f.key.length);
            n += f.key.length;
        }
    *malformed = rc < 0;
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t h = fz_hash(data, size);
    unsigned cap = (h & 3) == 0 ? 64 + (unsigned)((h >> 8) % 4096) : 65536;
    uint8_t *want = malloc(size + 1), *out = NULL;
    size_t n_want, n_got = 0;
    bool malformed, ended = false, failed = false;
    FZ_CHECK(want != NULL);
    n_want = expected(data, size, want, &malformed);
    fz_input_file(data, size);
    call(process_start, "process_start");
    for (int b = 0; b < MAX_BLOCKS && !ended && !failed; b++) {
        unsigned used = 0, code = 1, room = cap;
        out = realloc(out, room);
        FZ_CHECK(out != NULL);
        process_block(inst, out, room, &used, &code);
        if (code == NARVAL_E_OUTPUT_SIZE) {
            FZ_CHECK(used > room);
            room = used;
            out = realloc(out, room);
            FZ_CHECK(out != NULL);
            used = 0;
            process_block(inst, out, room, &used, &code);
            FZ_CHECK(code != NARVAL_E_OUTPUT_SIZE);
        }
        FZ_CHECK(code == 0 || code == NARVAL_E_INPUT || code == NARVAL_E_IO);
        if (code) {
            failed = true;
            break;
        }
        FZ_CHECK(used <= room && adf_validate(out, used, NULL, NULL) == 0);
        adf_iter it;
        adf_frame f;
        adf_iter_init(&it, out, used);
        while (adf_iter_next(&it, &f) > 0) {
            FZ_CHECK(!ended); /* nothing after the meta:eof */
            if (f.key.id == ADF_ID_META_EOF) {
                ended = true;
                continue;
            }
            FZ_CHECK(n_got + f.key.length <= n_want && memcmp(want + n_got, f.data, f.key.length) == 0);
            n_got += f.key.length;
        }
    }
    FZ_CHECK(ended || failed);
    if (ended)
        FZ_CHECK(n_got == n_want && !malformed);
    else
        FZ_CHECK(malformed);
    call(process_reset, "process_reset");
    free(out);
    free(want);
    return 0;
}

/* fuzz_adf_writer.c: libFuzzer target: adf_writer's process_block on mutated blocks; a published file holds exactly the blocks accepted. */
#define NARVAL_CONSUMER
#define FZ_ACTOR "ADFWriter"
#define FZ_PUBLISHES
#include "harness.h"

static void fz_conf(FILE *fp, const char *dir, const char *basis)
{
    fprintf(fp, "File %s/out.adf\n", dir);
}

/* The run stopped after the input (and a meta:eof block) were accepted: out.adf is
 * those bytes, in order, and nothing else. */
static void fz_published(const char *dir, const uint8_t *in, size_t size, const uint8_t *tail, size_t tail_size)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/out.adf", dir);
    FILE *fp = fopen(path, "rb");
    FZ_CHECK(fp != NULL);
    uint8_t *got = malloc(size + tail_size + 1);
    FZ_CHECK(got != NULL);
    size_t n = fread(got, 1, size + tail_size + 1, fp);
    fclose(fp);
    FZ_CHECK(n == size + tail_size);
    FZ_CHECK(memcmp(got, in, size) == 0 && (tail_size == 0 || memcmp(got + size, tail, tail_size) == 0));
    free(got);
}

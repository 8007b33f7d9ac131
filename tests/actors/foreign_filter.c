/* foreign_filter.c: a NARVAL filter written without Narwhal's headers: reads <dir>/ForeignFilter.conf, announces its Tag in a frame, fails when told. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * What any third-party C actor would be: NARVAL's C interface declared by
 * hand, its own configuration file read from the one directory NARVAL gives
 * process_config (no ':'-list, no kit), process-wide settings in static
 * variables (config is once per library and process).  ForeignFilter.conf:
 *
 *   Tag WORD          announced once per run in a frame of its own (id
 *                     0x46460001, payload the word), before the first block's frames
 *   FailAtBlock N     the Nth process_block call of an instance returns error code 99
 *   CutAtBlock N      the Nth process_block call's output is one byte short (its last frame
 *                     runs past the end: an actor's bug that the host names)
 *
 * The file is mandatory: without it process_config returns 1, so a test
 * that runs it knows the file was found.  It passes every frame on unchanged.
 */

#define EXPORT __attribute__((visibility("default")))
#define TAG_ID 0x46460001u
#define KEY_SIZE 20u
#define FAIL_CODE 99u

EXPORT void process_config(const char *directory_path, unsigned int *error_code);
EXPORT void *process_register(unsigned int *error_code);
EXPORT void process_initialise(void *algo_data, unsigned int *error_code);
EXPORT void process_start(void *algo_data, unsigned int *error_code);
EXPORT void process_stop(void *algo_data, unsigned int *error_code);
EXPORT void process_unload(void *algo_data, unsigned int *error_code);
EXPORT void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer, void *output_buffer,
                          unsigned int size_of_output_buffer, unsigned int *used_size_of_output_buffer,
                          unsigned int *error_code);

static char tag[64];
static unsigned fail_at_block, cut_at_block;

struct instance {
    unsigned blocks;
    int announced; /* this run's tag frame was emitted */
};

static int read_line(const char *path, unsigned line, const char *key, const char *value)
{
    if (strcmp(key, "Tag") == 0 && strlen(value) < sizeof tag) {
        strcpy(tag, value);
        return 0;
    }
    if (strcmp(key, "FailAtBlock") == 0) {
        fail_at_block = (unsigned)strtoul(value, NULL, 10);
        return 0;
    }
    if (strcmp(key, "CutAtBlock") == 0) {
        cut_at_block = (unsigned)strtoul(value, NULL, 10);
        return 0;
    }
    fprintf(stderr, "ForeignFilter: %s:%u: unknown key '%s'\n", path, line, key);
    return 1;
}

void process_config(const char *directory_path, unsigned int *error_code)
{
    char path[4096], text[256], key[64], value[64];
    unsigned line = 0;
    snprintf(path, sizeof path, "%s/ForeignFilter.conf", directory_path);
    FILE *fp = fopen(path, "r");
    *error_code = 0;
    if (!fp) {
        fprintf(stderr, "ForeignFilter: cannot open %s\n", path);
        *error_code = 1;
        return;
    }
    while (!*error_code && fgets(text, sizeof text, fp)) {
        line++;
        if (sscanf(text, "%63s %63s", key, value) == 2 && key[0] != '#')
            *error_code = (unsigned)read_line(path, line, key, value);
    }
    fclose(fp);
    fprintf(stderr, "ForeignFilter: read %s: Tag %s, FailAtBlock %u\n", path, tag, fail_at_block);
}

void *process_register(unsigned int *error_code)
{
    struct instance *in = calloc(1, sizeof *in);
    *error_code = in ? 0 : 2;
    return in;
}

void process_initialise(void *algo_data, unsigned int *error_code) { *error_code = 0; }

void process_start(void *algo_data, unsigned int *error_code)
{
    ((struct instance *)algo_data)->announced = 0;
    *error_code = 0;
}

void process_stop(void *algo_data, unsigned int *error_code) { *error_code = 0; }

void process_unload(void *algo_data, unsigned int *error_code)
{
    free(algo_data);
    *error_code = 0;
}

static void put_u32(uint8_t *at, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        at[i] = (uint8_t)(v >> (8 * i));
}

/* The tag frame: a 20-byte ADF key (length, id, event 0, timestamp 0), then the tag's bytes. */
static unsigned put_tag(uint8_t *out)
{
    unsigned length = KEY_SIZE + (unsigned)strlen(tag);
    memset(out, 0, KEY_SIZE);
    put_u32(out, length);
    put_u32(out + 4, TAG_ID);
    memcpy(out + KEY_SIZE, tag, strlen(tag));
    return length;
}

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer, void *output_buffer,
                   unsigned int size_of_output_buffer, unsigned int *used_size_of_output_buffer,
                   unsigned int *error_code)
{
    struct instance *in = algo_data;
    unsigned used = 0, tag_size = KEY_SIZE + (unsigned)strlen(tag);
    *used_size_of_output_buffer = 0;
    *error_code = 0;
    if (++in->blocks == fail_at_block) {
        fprintf(stderr, "ForeignFilter: failing at block %u, as configured\n", in->blocks);
        *error_code = FAIL_CODE;
        return;
    }
    if (size_of_input_buffer == 0)
        return;
    if (size_of_input_buffer + (in->announced ? 0 : tag_size) > size_of_output_buffer) {
        *error_code = 4; /* NARVAL's "output buffer too small", by its number */
        *used_size_of_output_buffer = size_of_input_buffer + tag_size;
        return;
    }
    if (!in->announced) {
        used = put_tag(output_buffer);
        in->announced = 1;
    }
    memcpy((uint8_t *)output_buffer + used, input_buffer, size_of_input_buffer);
    *used_size_of_output_buffer = used + size_of_input_buffer - (in->blocks == cut_at_block);
}

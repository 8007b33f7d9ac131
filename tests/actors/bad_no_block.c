/* bad_no_block.c: test library that lacks process_block, which the emulator must refuse to load. */
#include "narval.h"

#include <stdlib.h>

void process_config(const char *directory_path, unsigned int *error_code) { *error_code = 0; }

void *process_register(unsigned int *error_code)
{
    *error_code = 0;
    return malloc(1);
}

void process_initialise(void *algo_data, unsigned int *error_code) { *error_code = 0; }

void process_unload(void *algo_data, unsigned int *error_code)
{
    free(algo_data);
    *error_code = 0;
}

/* omp_consumer.c: test consumer whose blocks run an OpenMP loop, so that libgomp's threads outlive its unloading. */
#define NARVAL_CONSUMER
#include "narval.h"

#include <stdint.h>
#include <stdlib.h>

typedef struct omp_sum {
    unsigned long long bytes; /* the sum of every input byte: work worth a parallel loop */
} omp_sum;

void process_config(const char *directory_path, unsigned int *error_code) { *error_code = NARVAL_OK; }

void *process_register(unsigned int *error_code)
{
    omp_sum *s = calloc(1, sizeof *s);
    *error_code = s ? NARVAL_OK : NARVAL_E_NOMEM;
    return s;
}

void process_initialise(void *algo_data, unsigned int *error_code)
{
    *error_code = algo_data ? NARVAL_OK : NARVAL_E_STATE;
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    free(algo_data);
    *error_code = NARVAL_OK;
}

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer, unsigned int *error_code)
{
    omp_sum *s = algo_data;
    const uint8_t *in = input_buffer;
    unsigned long long sum = 0;
#pragma omp parallel for reduction(+ : sum)
    for (unsigned i = 0; i < size_of_input_buffer; i++)
        sum += in[i];
    s->bytes += sum;
    *error_code = NARVAL_OK;
}

/* generator.c: the NARVAL producer generator.so: simulated γ-ray events as data:crystal traces and narwhal:truth frames. */
#define NARVAL_PRODUCER
#include "gen.h"

static unsigned initialise(void *algo_data) { return gen_initialise(algo_data); }
static unsigned start(void *algo_data) { return gen_start(algo_data); }
static unsigned stop(void *algo_data) { return gen_stop(algo_data); }
static unsigned reset(void *algo_data) { return gen_reset(algo_data); }
static void release(void *algo_data) { gen_release(algo_data); }

void process_config(const char *directory_path, unsigned int *error_code)
{
    *error_code = kit_config(&gen_spec, directory_path, &gen_settings);
}

const char *process_describe(void) { return kit_describe(&gen_spec); }

/* Narwhal's live view (narval.h): the run's events so far, of Events (0: a
 * run until stopped, or a GammaEvents file's, whose length is not known). */
void process_progress(void *algo_data, unsigned long long *done, unsigned long long *total, const char **unit)
{
    const gen *g = algo_data;
    *done = g->next_event;
    *total = (unsigned long long)gen_settings.events;
    *unit = "events";
}

void *process_register(unsigned int *error_code) { return kit_register(sizeof(gen), error_code); }

KIT_LIFECYCLE(initialise, start, stop, reset, release)

void process_block(void *algo_data, void *output_buffer, unsigned int size_of_output_buffer,
                   unsigned int *used_size_of_output_buffer, unsigned int *error_code)
{
    *used_size_of_output_buffer = 0;
    if ((*error_code = kit_enter(algo_data, KIT_BLOCK)) == 0)
        *error_code = gen_block(algo_data, output_buffer, size_of_output_buffer, used_size_of_output_buffer);
}

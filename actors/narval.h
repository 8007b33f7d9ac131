/* narval.h: the C interface between a NARVAL host (or the narwhal emulator) and an actor library. */
#ifndef NARWHAL_NARVAL_H
#define NARWHAL_NARVAL_H

/*
 * An actor library is a shared object that exports the process_* functions
 * below with C linkage and exactly these signatures.  NARVAL's generic
 * producer, filter and consumer binaries load it with dlopen and resolve the
 * functions by name; the narwhal emulator does the same.  An actor has one
 * role, fixed by where the topology puts it: producer (no input buffer),
 * filter ("intermediary": one input, one output) or consumer (no output).
 *
 * Define exactly one of NARVAL_PRODUCER, NARVAL_FILTER or NARVAL_CONSUMER
 * before including this header in an actor's source, so that the compiler
 * checks the definition of process_block against the right prototype.
 * A host includes it without any of them and uses the typedefs.
 *
 * Sequence of calls (the host must keep it; an actor may rely on it):
 *
 *   process_config        once per library, before anything else
 *   process_register      once per instance; returns the instance (algo_data)
 *   process_initialise    once per instance, after register
 *   process_start         once per run, before the first block
 *   process_block         any number of times
 *   process_pause / process_resume   in pairs, between blocks
 *   process_stop          once per run, after the last block
 *   process_reset         between runs: back to the state after initialise
 *   process_unload        once per instance, last; frees algo_data
 *
 * Every call reports through *error_code: 0 is success, anything else is one
 * of the NARVAL_E_* codes below.  A host that receives a non-zero code from
 * process_config, process_register or process_initialise must not call
 * process_block on that instance; after a non-zero code from any other call
 * it stops the run: process_stop (if start succeeded) and process_unload on
 * every instance, in that order.  The host never calls two functions of one
 * instance at the same time; it may call different instances from different
 * threads, so an actor keeps its state in algo_data, not in globals (the
 * configuration read by process_config excepted: it is shared, read-only).
 */

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes.  An actor also logs a sentence naming the cause. */
enum narval_error {
    NARVAL_OK = 0,
    NARVAL_E_CONFIG = 1,       /* configuration file missing, unreadable, unknown key or bad value */
    NARVAL_E_NOMEM = 2,        /* an allocation (host or device) failed */
    NARVAL_E_INPUT = 3,        /* the input buffer holds a malformed frame; nothing was emitted for it */
    NARVAL_E_OUTPUT_SIZE = 4,  /* the output buffer is too small: *used_size_of_output_buffer is
                                  the size needed; nothing was consumed, call again */
    NARVAL_E_IO = 5,           /* a file could not be opened, read or written */
    NARVAL_E_DEVICE = 6,       /* the GPU failed (a CUDA error) */
    NARVAL_E_STATE = 7,        /* a call out of the sequence above, or a null algo_data */
    NARVAL_E_DATA = 8,         /* the input is well formed but inconsistent with the configuration
                                  (a crystal id the geometry does not know, say) */
    NARVAL_E_INTERNAL = 9,     /* a broken invariant: a bug to report */
};

/* One line describing a NARVAL_E_* code. */
static inline const char *narval_strerror(unsigned int code)
{
    switch (code) {
    case NARVAL_OK: return "success";
    case NARVAL_E_CONFIG: return "configuration error";
    case NARVAL_E_NOMEM: return "out of memory";
    case NARVAL_E_INPUT: return "malformed input frame";
    case NARVAL_E_OUTPUT_SIZE: return "output buffer too small";
    case NARVAL_E_IO: return "input/output error";
    case NARVAL_E_DEVICE: return "GPU error";
    case NARVAL_E_STATE: return "call out of sequence";
    case NARVAL_E_DATA: return "input inconsistent with configuration";
    case NARVAL_E_INTERNAL: return "internal error";
    default: return "unknown error code";
    }
}

/*
 * process_config(directory_path, error_code)
 *   Host: calls it once per library, first, with the directory that holds
 *   the configuration files (a path without trailing slash is fine).
 *   Actor: reads <ActorName>.conf from that directory (AGAPRO style: "Key
 *   value" lines, '#' starts a comment), checks every key and value, and
 *   keeps the result for process_register.  A missing file means "all
 *   defaults" unless the actor has a key without default, which is then
 *   NARVAL_E_CONFIG.  An unknown key or a bad value is NARVAL_E_CONFIG, with a
 *   log line naming the file, the line and the key.
 */
typedef void narval_config_fn(const char *directory_path, unsigned int *error_code);

/*
 * process_register(error_code) -> algo_data
 *   Host: once per instance, after process_config.  It keeps the returned
 *   pointer and passes it to every later call of this instance; it never
 *   looks inside it.
 *   Actor: allocates an instance; returns NULL with a non-zero code on
 *   failure.  A library may be registered several times.
 */
typedef void *narval_register_fn(unsigned int *error_code);

/*
 * process_initialise(algo_data, error_code)
 *   Actor: acquires what the instance needs for its whole life: files named
 *   in its configuration, lookup tables, the GPU and its resident tables.
 *   Slow work belongs here, not in process_block.
 */
typedef void narval_lifecycle_fn(void *algo_data, unsigned int *error_code);

/*
 * process_block: the three roles.
 *
 * Buffers hold whole ADF frames back to back (adf/adf.h).
 *
 * Producer: fills output_buffer with whole frames and sets
 *   *used_size_of_output_buffer.  Setting it to 0 with error code 0 means
 *   "no more data": the host ends the run.  A producer never writes past
 *   size_of_output_buffer; if a single frame would not fit in an empty buffer
 *   it returns NARVAL_E_OUTPUT_SIZE with the size needed.
 *
 * Filter: consumes the whole input block and writes its output frames.
 *   If they do not fit, it returns NARVAL_E_OUTPUT_SIZE, sets
 *   *used_size_of_output_buffer to the size needed and leaves its own state
 *   as if the call had not happened; the host then calls again with the
 *   same input and a buffer at least that large.  It never writes past
 *   size_of_output_buffer and never drops a frame without counting it in
 *   its log.  An empty output (*used = 0) is allowed (a builder waiting for
 *   more crystals, say).  The input buffer is read-only for the actor.
 *
 * Consumer: takes every frame of the input block.
 */
typedef void narval_producer_block_fn(void *algo_data, void *output_buffer,
                                      unsigned int size_of_output_buffer,
                                      unsigned int *used_size_of_output_buffer,
                                      unsigned int *error_code);
typedef void narval_filter_block_fn(void *algo_data, void *input_buffer,
                                    unsigned int size_of_input_buffer, void *output_buffer,
                                    unsigned int size_of_output_buffer,
                                    unsigned int *used_size_of_output_buffer,
                                    unsigned int *error_code);
typedef void narval_consumer_block_fn(void *algo_data, void *input_buffer,
                                      unsigned int size_of_input_buffer,
                                      unsigned int *error_code);

/*
 * process_start / process_stop
 *   start: a run begins (open output files, reset counters).  stop: the run
 *   ends after the last block: flush and close outputs, log the counts.
 *   At the end of the data, before process_stop, the host calls every
 *   filter's process_block once more with an empty input (size 0): a filter
 *   that holds frames back (an event builder) emits them then, and the host
 *   passes them on down the chain.  After stop nothing more is emitted.
 * process_pause / process_resume
 *   The run pauses between two blocks; an actor may release devices.
 * process_reset
 *   Between runs: return to the state right after process_initialise.
 * process_unload
 *   Last call of an instance: free everything, algo_data included.
 *
 * Mandatory symbols: process_config, process_register, process_initialise,
 * process_block.  The others are optional; a host treats a missing one as a
 * call that succeeds and does nothing.
 */

/* Narwhal extension, optional and ignored by NARVAL: a static text that
 * `narwhal inspect` prints: the actor's role, its configuration file name,
 * and one line per key "Key  type  default  range  description". */
typedef const char *narval_describe_fn(void);

#define NARVAL_EXPORT __attribute__((visibility("default")))

NARVAL_EXPORT void process_config(const char *directory_path, unsigned int *error_code);
NARVAL_EXPORT void *process_register(unsigned int *error_code);
NARVAL_EXPORT void process_initialise(void *algo_data, unsigned int *error_code);
NARVAL_EXPORT void process_start(void *algo_data, unsigned int *error_code);
NARVAL_EXPORT void process_stop(void *algo_data, unsigned int *error_code);
NARVAL_EXPORT void process_pause(void *algo_data, unsigned int *error_code);
NARVAL_EXPORT void process_resume(void *algo_data, unsigned int *error_code);
NARVAL_EXPORT void process_reset(void *algo_data, unsigned int *error_code);
NARVAL_EXPORT void process_unload(void *algo_data, unsigned int *error_code);
NARVAL_EXPORT const char *process_describe(void);

#if defined(NARVAL_PRODUCER)
NARVAL_EXPORT void process_block(void *algo_data, void *output_buffer,
                                 unsigned int size_of_output_buffer,
                                 unsigned int *used_size_of_output_buffer,
                                 unsigned int *error_code);
#elif defined(NARVAL_FILTER)
NARVAL_EXPORT void process_block(void *algo_data, void *input_buffer,
                                 unsigned int size_of_input_buffer, void *output_buffer,
                                 unsigned int size_of_output_buffer,
                                 unsigned int *used_size_of_output_buffer,
                                 unsigned int *error_code);
#elif defined(NARVAL_CONSUMER)
NARVAL_EXPORT void process_block(void *algo_data, void *input_buffer,
                                 unsigned int size_of_input_buffer, unsigned int *error_code);
#endif

#ifdef __cplusplus
}
#endif
#endif

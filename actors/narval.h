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
 * This header states NARVAL's host contract as the AGATA GPU-PSA thesis
 * (section 2.3.1) and NARVAL's C actors describe it: what a host MUST and
 * MUST NOT do, and what an actor MAY rely on.  Everything marked "Narwhal
 * extension" is ours: a NARVAL host does not do it, and an actor MUST work
 * without it.  The narwhal emulator follows this contract; its extensions
 * are conveniences, all of them absent under `narwhal run --strict`.
 *
 * THE SEQUENCE OF CALLS
 *
 *   process_config        once per library and process, first
 *   process_register      once per instance; returns the instance (algo_data)
 *   process_initialise    once per instance after register, and again after
 *                         every process_reset
 *   then any number of runs, each:
 *     process_start       the run begins
 *     process_block       any number of times
 *     process_pause / process_resume    in pairs, between two blocks
 *     process_stop        the run ends (from running or paused)
 *   process_reset         in any state after initialise, a run included
 *   process_unload        once per instance, last; frees algo_data
 *
 * The host MUST keep to this sequence per instance.  In particular, after
 * process_reset it MAY call process_initialise (NARVAL does: "any further
 * call will follow a process_reset") or go straight to process_start; it
 * MAY call process_start again after process_stop without a reset.  An
 * actor MUST accept every such sequence; a call outside it is answered
 * with NARVAL_E_STATE and changes nothing.
 *
 * ERRORS AND ABORT
 *
 * Every call reports through *error_code: 0 is success, anything else is one
 * of the NARVAL_E_* codes below, and the actor logs a sentence naming the
 * cause.  After a non-zero code from any call of any instance the host
 * aborts: it calls process_unload on every registered instance, and MUST
 * NOT call process_stop (nor process_block) first.  Abort is not stop: an
 * actor therefore MUST NOT leave a file with its final name on abort
 * (see process_stop).
 *
 * THREADS
 *
 * The host MUST NOT call two functions of one instance at the same time.
 * It MAY call different instances of one library from different threads,
 * so an actor keeps its state in algo_data, not in globals (the
 * configuration read by process_config excepted: it is read-only once
 * process_register has been called).
 */

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes.  An actor also logs a sentence naming the cause.  The values
 * are part of the ABI and never change. */
enum narval_error {
    NARVAL_OK = 0,
    NARVAL_E_CONFIG = 1,       /* configuration file missing, unreadable, unknown key or bad value */
    NARVAL_E_NOMEM = 2,        /* an allocation (host or device) failed */
    NARVAL_E_INPUT = 3,        /* the input buffer holds a malformed frame; nothing was emitted for it */
    NARVAL_E_OUTPUT_SIZE = 4,  /* the output buffer is too small: *used_size_of_output_buffer is
                                  the size needed and nothing was consumed; NARVAL stops the run
                                  (raise the topology's <size>), the emulator calls again with a
                                  larger buffer unless --strict */
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
 *   Host: MUST call it once per library and process, before any other
 *   call, with ONE existing directory: the one that holds this actor's
 *   configuration files (a trailing slash is allowed).  In NARVAL every
 *   actor is its own process and gets its own directory (each AGATA
 *   crystal's PSA has its own basis and crystal id there).
 *   Narwhal extension: the emulator builds that directory for each actor
 *   (links to the first file of each name along the actor's search list,
 *   conf/<actor name>/ first) and gives every actor with its own directory
 *   its own copy of the library, so that process-wide state is never
 *   shared between actors with different directories.
 *   Actor: reads <ActorName>.conf from that directory (AGAPRO style: "Key
 *   value" lines, '#' starts a comment), checks every key and value, and
 *   keeps the result for its instances.  A missing file means "all
 *   defaults" unless the actor has a key without default, which is then
 *   NARVAL_E_CONFIG.  An unknown key, a bad value or a referenced file that
 *   is missing is NARVAL_E_CONFIG, with a log line naming the file, the
 *   line and the key.  Narwhal's actors also accept a ':'-separated list of
 *   directories, most specific first (the file comes from the first that
 *   holds one, and messages name that file); a NARVAL host never gives one.
 *   The configuration is read here only: process_initialise after a reset
 *   does not read a changed file again.
 */
typedef void narval_config_fn(const char *directory_path, unsigned int *error_code);

/*
 * process_register(error_code) -> algo_data
 *   Host: MUST call it once per instance, after a successful
 *   process_config.  It keeps the returned pointer, passes it to every
 *   later call of this instance and never looks inside it.
 *   Actor: allocates an instance; returns NULL with a non-zero code on
 *   failure.  A library MAY be registered several times (NARVAL splits
 *   one stream over several instances of a filter, fed round-robin); the
 *   instances MUST NOT write the same output file: an actor that finds its
 *   output already claimed by another live instance fails process_initialise
 *   (or process_start) with NARVAL_E_CONFIG, naming the file and the key
 *   to change.
 */
typedef void *narval_register_fn(unsigned int *error_code);

/*
 * process_initialise(algo_data, error_code)
 *   Host: MUST call it after process_register, and MAY call it again after
 *   every process_reset (NARVAL does).
 *   Actor: acquires what the instance needs for its whole life: files named
 *   in its configuration, lookup tables, the GPU and its resident tables.
 *   Slow work and the checks that can fail belong here, not in
 *   process_block.  Called again after a reset, it is a real
 *   re-initialisation: the actor frees what the previous initialise set up
 *   and sets it up again, and everything is then valid as after the first.
 */
typedef void narval_lifecycle_fn(void *algo_data, unsigned int *error_code);

/*
 * process_block: the three roles.
 *
 * Buffers hold whole ADF frames back to back (adf/adf.h).  Their sizes are
 * fixed by the topology (<size>): a NARVAL host MUST NOT grow a buffer.
 * The host calls process_block only when it has data for the actor (a
 * filter or consumer) or room for its output (a producer): it makes no
 * extra call at the end of the data.
 *
 * Producer: fills output_buffer with whole frames and sets
 *   *used_size_of_output_buffer.  It ends each run's data with exactly one
 *   meta:eof frame (ADF_ID_META_EOF; its payload counts the run's frames and
 *   bytes before it; Narwhal's producers give it the event number after the
 *   last frame's and that frame's timestamp), after the last data frame in
 *   the same block when it fits,
 *   else alone in the next block.  The call after that sets *used to 0 with
 *   error code 0: "no more data", and the host ends the run (process_stop).
 *   A producer never writes past size_of_output_buffer; if a single frame
 *   does not fit in an empty buffer it returns NARVAL_E_OUTPUT_SIZE with
 *   *used set to the size needed.
 *
 * Filter: consumes the whole input block and MUST emit the frames it makes
 *   of it in the same call: the host MAY never call again (no flush call),
 *   so a filter MUST NOT hold a block for a later call.  An actor that
 *   overlaps its work (GPU searches of one part while the host decodes the
 *   next) does so inside the call.  A filter that holds frames by nature
 *   (an event builder waiting for a time window) emits them all when a
 *   meta:eof frame arrives, then passes the meta:eof on; a filter that holds
 *   nothing passes meta:eof on untouched, as every frame it does not handle.
 *   Frames still held when process_stop comes without meta:eof (an
 *   operator's stop) are counted and named in the log ("N frames held at
 *   stop (events A..B)"), never dropped silently.
 *   If its output does not fit, the filter returns NARVAL_E_OUTPUT_SIZE,
 *   sets *used_size_of_output_buffer to the size needed and leaves its own
 *   state as if the call had not happened.  Under NARVAL the host stops the
 *   run then (the topology's <size> must be raised).  Narwhal extension:
 *   the emulator (not under --strict) calls again with the same input and a
 *   buffer at least that large.  A filter never writes past
 *   size_of_output_buffer.  An empty output (*used = 0) is allowed (a
 *   builder waiting for more crystals, say).  The input buffer is
 *   read-only for the actor.
 *   Narwhal extension: without --strict, the emulator calls each filter once
 *   more at the end of the data with an empty input (size 0); a filter
 *   treats it as it treats meta:eof, except that there is no meta:eof to
 *   pass on.  Nothing may depend on that call.
 *
 * Consumer: takes every frame of the input block.  It knows the data is
 *   complete when meta:eof arrives (a run stopped without it is not).
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
 * process_start(algo_data, error_code)
 *   Host: MUST call it before the first block of a run; MAY call it after
 *   process_initialise, after process_stop, or straight after process_reset.
 *   Actor: a run begins: counters start from zero, output files are opened
 *   (under a temporary name, see process_stop).  A producer decides what a
 *   new run emits and says so in its description (Narwhal's adf_reader
 *   reads its files again from the beginning; the generator continues its
 *   event numbers and random streams).
 *
 * process_stop(algo_data, error_code)
 *   Host: MUST call it to end a run that started, after its last block (from
 *   running or paused), and only then: never after an error (see ABORT).
 *   Actor: the run ends: it logs its counts, and publishes its files.  An
 *   actor that writes files writes each into a unique temporary file in the
 *   destination's directory (created with O_EXCL) and renames it to the
 *   final name here and only here, so that a file with its final name is
 *   always complete.  Nothing is emitted after stop.
 *
 * process_pause / process_resume(algo_data, error_code)
 *   Host: MAY call them, in pairs, between two blocks of a run; no block
 *   comes between a pause and its resume, but process_stop or
 *   process_reset MAY come instead of the resume.
 *   Actor: MAY release a device at pause and acquire it again at resume.
 *
 * process_reset(algo_data, error_code)
 *   Host: MAY call it in any state after process_initialise: after stop,
 *   and also in the middle of a run (running or paused) without stop.
 *   Actor: returns to the state right after process_initialise, releasing
 *   the run's state only (held frames, counters), so that both
 *   process_initialise and process_start may follow.  A reset in the middle
 *   of a run ends it without publishing: temporary files are removed, with a
 *   log line saying what they held, and held frames are named in the log.
 *
 * process_unload(algo_data, error_code)
 *   Host: MUST call it last for every registered instance, in any state
 *   (after stop, after reset, or on abort in the middle of a run).
 *   Actor: frees everything, algo_data included.  Unload in the middle of a
 *   run is an abort: nothing is published, temporary files are removed.
 *
 * Mandatory symbols: process_config, process_register, process_initialise,
 * process_block.  The others are optional; a host treats a missing one as a
 * call that succeeds and does nothing.
 */

/* Narwhal extension, optional and ignored by NARVAL: a static text that
 * `narwhal inspect` prints: the actor's role, its configuration file name,
 * and one line per key "Key  type  default  range  description". */
typedef const char *narval_describe_fn(void);

/*
 * The live view (Narwhal extensions, optional and ignored by NARVAL): what
 * `narwhal run` shows while a run goes (its progress line, the --monitor
 * page).  The host calls them only between two calls of the instance, on
 * the thread that makes its process_block calls (never at the same time as
 * another call of this instance), and only while a run is started; so an
 * actor answers from its own state, without a lock.
 *
 * process_progress(algo_data, done, total, unit)
 *   A producer says how far it has got through the run's data: *done of
 *   *total, counted in *unit (a static string: "events", "bytes",
 *   "frames"); *total 0 when it cannot know (a run until stopped).  The
 *   host makes an estimate of the time left from it.
 *
 * process_spectra(algo_data, put, ctx, error_code)
 *   An actor that fills spectra calls put(ctx, &spectrum) once per 1D
 *   spectrum with its counts so far; put copies what it needs before it
 *   returns (nothing passed to it stays valid after).  A failure (the GPU
 *   could not copy its counts back) is a non-zero code: the host stops
 *   asking, and the run goes on.
 */
typedef void narval_progress_fn(void *algo_data, unsigned long long *done, unsigned long long *total,
                                const char **unit);

typedef struct narval_spectrum {
    const char *name;    /* as the actor's configuration names it */
    const char *title;   /* what it holds, in words ("tracked.e, sum of 180 crystals") */
    const char *x_label; /* the axis ("energy (keV)") */
    unsigned int bins;
    double lo, hi;       /* bin i covers [lo + i (hi - lo) / bins, lo + (i + 1) (hi - lo) / bins) */
    const unsigned long long *counts; /* bins values */
    unsigned long long underflow, overflow;
} narval_spectrum;
typedef void narval_spectrum_put_fn(void *ctx, const narval_spectrum *spectrum);
typedef void narval_spectra_fn(void *algo_data, narval_spectrum_put_fn *put, void *ctx, unsigned int *error_code);

/*
 * The device an instance computes on (Narwhal extension, optional and
 * ignored by NARVAL), for the host's closing table (which GPU each of 45
 * PSAs used under GPU auto, say).
 *
 * process_device(algo_data, text, len)
 *   The actor writes into text (len bytes, terminated) where the instance
 *   computes, as its last successful process_initialise chose: "GPU 1
 *   (NVIDIA H200)" or "CPU"; "" (the host shows "-") for an actor that
 *   chooses no device.  The host calls it after a successful
 *   process_initialise and before the instance's next call, on the thread
 *   that made the initialise.
 */
typedef void narval_device_fn(void *algo_data, char *text, unsigned int len);

/*
 * Where frames come from (Narwhal extension, optional and ignored by NARVAL).
 * An actor that rejects a frame names it by its event number and its byte
 * offset in the input block under any host.  A host that knows more says
 * where the frame was read: the emulator calls process_host(host) once per
 * loaded library, before process_config, with a table that outlives the
 * library's use; a NARVAL host never calls it, and the actor then names the
 * event and the offset within its block only.
 *
 *   origin(ctx, file, frames, size, offsets, n)
 *     A producer that reads files says, for the n whole frames it has just
 *     put back to back at `frames` (size bytes) in its output block, the
 *     byte offset in `file` each was read from.  Called from the producer's
 *     process_block; the host copies what it keeps before it returns.
 *   locate(ctx, id, event, crystal, out, len)
 *     Any actor asks where the frame with key id `id`, event number `event`
 *     and crystal id `crystal` (NARWHAL_NO_CRYSTAL for a frame without one)
 *     was read, or, for a frame an actor made (a data:psa), the frame it was
 *     made from (its data:crystal: same event, same crystal).  Returns 1 with
 *     a phrase in out ("data:crystal read from run1.adf at byte 23076708"),
 *     0 when the host does not know (a generator's frame, one read too long
 *     ago, one read in another process).  Callable from any thread.
 */
#define NARWHAL_NO_CRYSTAL 0xffffffffu

typedef struct narwhal_host {
    void *ctx;
    void (*origin)(void *ctx, const char *file, const void *frames, size_t size,
                   const unsigned long long *offsets, size_t n);
    int (*locate)(void *ctx, unsigned int id, unsigned int event, unsigned int crystal, char *out,
                  size_t len);
} narwhal_host;
typedef void narval_host_fn(const narwhal_host *host);

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
NARVAL_EXPORT void process_progress(void *algo_data, unsigned long long *done, unsigned long long *total,
                                    const char **unit);
NARVAL_EXPORT void process_spectra(void *algo_data, narval_spectrum_put_fn *put, void *ctx,
                                   unsigned int *error_code);
NARVAL_EXPORT void process_host(const narwhal_host *host);
NARVAL_EXPORT void process_device(void *algo_data, char *text, unsigned int len);

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

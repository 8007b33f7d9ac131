/* kit.h: helpers every actor links statically: configuration files, logging, instance lifecycle, frame loops. */
#ifndef NARWHAL_KIT_H
#define NARWHAL_KIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adf.h"
#include "narval.h"

/*
 * The kit is a static library: each actor .so gets its own copy, built with
 * -fvisibility=hidden, so the state the kit keeps per library (the loaded
 * configuration, the count of live instances) belongs to that actor alone.
 *
 * A typical actor:
 *
 *   struct my_conf { int64_t threshold; kit_list files; };
 *   static const kit_key my_keys[] = {
 *       { "Threshold", KIT_INT, offsetof(struct my_conf, threshold), "20",
 *         KIT_MIN(0), .help = "energy threshold, keV" },
 *       ...
 *   };
 *   static const kit_spec my_spec = { "PSA", "filter", "one line about it",
 *       my_keys, KIT_COUNT(my_keys) };
 *   static struct my_conf conf;
 *
 *   void process_config(const char *dir, unsigned int *e) { *e = kit_config(&my_spec, dir, &conf); }
 *   const char *process_describe(void) { return kit_describe(&my_spec); }
 *   void *process_register(unsigned int *e) { return kit_register(sizeof(my_instance), e); }
 *   KIT_LIFECYCLE(my_initialise, my_start, my_stop, my_reset, my_release)
 *
 * my_initialise runs again after every process_reset (see "instances" below
 * for what each hook may rely on).
 */

#define KIT_COUNT(array) (sizeof(array) / sizeof((array)[0]))

/* ---- logging ----------------------------------------------------------------
 * One line on stderr per call, prefixed with the actor's (or instance's) name:
 *   [ADFReader] read 2000 frames
 *   [ADFReader] warning: ...      [ADFReader] error: ...      [ADFReader] debug: ...
 * Debug lines appear only when the environment variable NARWHAL_VERBOSE is set
 * to something other than "" or "0"; it is read once, at the first debug line
 * of the library's copy, not per line.  A line is written with a single call,
 * so lines of actors on different threads do not mix.
 */
typedef enum kit_level { KIT_DEBUG, KIT_INFO, KIT_WARN, KIT_ERROR } kit_level;

void kit_log(const char *who, kit_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool kit_verbose(void);
/* Logs "error: <message> (<narval_strerror(code)>)" and returns code, so that
 * a failure is reported and returned in one statement:
 *   return kit_fail(who, NARVAL_E_IO, "cannot open '%s': %s", path, strerror(errno)); */
unsigned kit_fail(const char *who, unsigned code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The NARVAL_E_* code for a libadf status: malformed frames -> NARVAL_E_INPUT,
 * no space -> NARVAL_E_OUTPUT_SIZE, files -> NARVAL_E_IO, allocation ->
 * NARVAL_E_NOMEM, misuse of the API -> NARVAL_E_INTERNAL; ADF_OK -> 0. */
unsigned kit_adf_code(int adf_status);

/* ---- configuration ----------------------------------------------------------
 * <Actor>.conf, AGAPRO style:
 *
 *   # comment to the end of the line
 *   Threshold  20          # keys are case-sensitive
 *   File  run1.adf run2.adf
 *   File  "with space.adf"
 *
 * A line is a key followed by its values, separated by blanks.  A value that
 * holds blanks or '#' is written between double quotes (a value cannot hold
 * a double quote).  A scalar key takes exactly one value and may appear once;
 * a list key accumulates every value of every line where it appears.
 * Relative file paths in values are NOT resolved against the configuration
 * directory: they are used as given, i.e. against the current working
 * directory of the host process (the emulator runs in the directory it was
 * started from, so `make run` paths are relative to the repository root).
 *
 * Types and the field each writes (at `offset` in the settings struct):
 *   KIT_INT     int64_t   decimal, or hexadecimal with 0x
 *   KIT_REAL    double    strtod syntax, finite
 *   KIT_STRING  char *    owned by the settings, freed by kit_config_free
 *   KIT_BOOL    bool      true/false, yes/no, on/off, 1/0 (any case)
 *   KIT_LIST    kit_list  strings; repeated keys and several values accumulate
 *
 * Errors name the file, the line and the key, e.g.
 *   topologies/conf/PSA.conf:12: key 'Threshold': value '-3' is below the minimum 0
 * A missing file means every key takes its default (the kit logs it), unless
 * some key has no default (def == NULL): that key is mandatory.
 */
typedef enum kit_type { KIT_INT, KIT_REAL, KIT_STRING, KIT_BOOL, KIT_LIST } kit_type;

typedef struct kit_list {
    size_t n;
    char **v;
    unsigned *line; /* the file line of each value (0: the default), for an actor's own errors */
} kit_list;

typedef struct kit_key {
    const char *name;
    kit_type type;
    size_t offset;    /* offsetof(settings struct, field) */
    const char *def;  /* default as it would be written in the file; NULL: mandatory */
    bool has_min, has_max;
    double min, max;  /* inclusive range of KIT_INT and KIT_REAL values */
    const char *help; /* one line for `narwhal inspect` */
    /* KIT_INT only: a word the value may be instead of a number, stored as
     * word_value (outside the range): the GPU key's "auto" (KIT_GPU_RANGE). */
    const char *word;
    int64_t word_value;
} kit_key;

#define KIT_MIN(x) .has_min = true, .min = (x)
#define KIT_MAX(x) .has_max = true, .max = (x)
#define KIT_RANGE(lo, hi) KIT_MIN(lo), KIT_MAX(hi)

typedef struct kit_spec {
    const char *actor;   /* names the file (<actor>.conf) and prefixes the log */
    const char *role;    /* "producer", "filter" or "consumer" */
    const char *summary; /* one line: what the actor does */
    const kit_key *keys;
    size_t n_keys;
    size_t size;         /* sizeof the settings struct */
    /* The actor's own checks of what the file said (values that depend on
     * each other, files it names), run by kit_config after the keys are read;
     * NULL: none.  Returns 0 or a NARVAL_E_* code it has logged.  The library
     * counts as configured (process_register allowed) only when they pass. */
    unsigned (*check)(const char *dir);
} kit_spec;

/* Reads <dir>/<actor>.conf into *settings (a struct of spec->size bytes).
 * dir may be a ':'-separated list of directories, most specific first: the
 * file comes from the first directory that holds one.
 * On success the previous contents of *settings are freed and replaced; on
 * failure *settings is left as it was, msg holds the reason and the return is
 * NARVAL_E_CONFIG (NARVAL_E_INTERNAL for a default in the spec that does not
 * parse, NARVAL_E_NOMEM).  *settings must start zeroed. */
unsigned kit_config_load(const kit_spec *spec, const char *dir, void *settings, char *msg,
                         size_t len);
/* The path of <actor>.conf for dir as kit_config_load finds it: in the first
 * directory of a ':'-list that holds one (the first directory when none
 * does).  An actor's own configuration messages name this path, never dir
 * (which may be a list).  A symbolic link (the emulator gives each actor a
 * private directory of links) is named by the file it points to, the one
 * the user edits.  malloc'd; NULL when out of memory. */
char *kit_conf_path(const char *dir, const char *actor);
/* A file a key names and the actor reads: 0 when `path` is a readable
 * regular file, else NARVAL_E_CONFIG with "CONF:LINE: key 'KEY': file 'PATH'
 * ..." in msg (missing, a directory, unreadable), so that process_config
 * (and `narwhal validate`) finds it, not a run.  line 0: the key's default. */
unsigned kit_check_input(const char *path, const char *key, const char *conf, unsigned line, char *msg,
                         size_t len);
/* A file (or, with directory, a folder) a key names and the actor writes:
 * NARVAL_E_CONFIG with such a message for an empty name, a file name that is
 * a directory (or ends with '/'), a folder name that is a file, and a path
 * whose nearest existing folder is not a folder this process can write in
 * (the missing folders below it are made when the output is claimed). */
unsigned kit_check_output(const char *path, bool directory, const char *key, const char *conf, unsigned line,
                          char *msg, size_t len);
/* The line of `key` in the file kit_config read last (0: its default, or
 * a key the file does not set), for an actor's own messages. */
unsigned kit_key_line(const char *key);

/* A bound or value as the key's type shows it: "-3" for KIT_INT, "%g" for KIT_REAL. */
void kit_format_number(const kit_key *k, double v, char *out, size_t len);
/* Frees the strings and lists of *settings and zeroes it. */
void kit_config_free(const kit_spec *spec, void *settings);

/* The body of process_config: kit_config_load, then spec->check, the error
 * logged, and the settings remembered as this library's configuration (freed
 * when the library is unloaded).  Refused with NARVAL_E_STATE while
 * instances exist, since they read the settings without locks.  Until a call
 * succeeds in full (the actor's checks included), process_register fails. */
unsigned kit_config(const kit_spec *spec, const char *dir, void *settings);

/* The text of process_describe: role, summary, file name and one line per key
 * (key, type, default, range, help).  The text lives in a buffer of the kit,
 * valid until the next call in the same library. */
const char *kit_describe(const kit_spec *spec);

/* ---- instances --------------------------------------------------------------
 * An actor's instance struct starts with a kit_instance (first member), so
 * that the kit can check calls on the algo_data pointer the host passes:
 * a null pointer, an instance of another library or a call out of the
 * sequence of narval.h is NARVAL_E_STATE, logged, and the actor's code is
 * not run.  The state only advances when the actor's code succeeds.
 *
 * The states and the calls each allows (the state after the call in brackets):
 *
 *   registered    initialise [initialised]
 *   initialised   start [running], reset [reset]
 *   running       block [running], pause [paused], stop [stopped], reset [reset]
 *   paused        resume [running], stop [stopped], reset [reset]
 *   stopped       start [running], reset [reset]
 *   reset         initialise [initialised], start [running], reset [reset]
 *
 * Why each edge exists (NARVAL's host contract, narval.h):
 * - NARVAL calls process_initialise "at first, and again after every
 *   process_reset", so initialise is allowed after reset and runs the
 *   actor's initialise hook again.  That hook must therefore be re-runnable:
 *   it frees what a previous initialise of this instance set up (tables, the
 *   GPU, files), then sets it up again.  The configuration is not re-read
 *   (process_config is once per process).
 * - A host may also start straight after reset without re-initialising:
 *   the reset hook therefore releases only the run's state (held frames,
 *   counters, an unpublished output) and leaves what initialise set up valid.
 * - Reset may come in any state after initialise, a run included (an
 *   operator's reset while running or paused, without stop).  The reset hook
 *   then ends the run itself without publishing anything: during every hook,
 *   the instance's `state` is still the state before the call, so the hook
 *   can tell "reset after stop" from "reset in the middle of a run".  A reset
 *   of an instance already reset succeeds without calling the hook.
 * - Start is allowed after stop as well (several runs without a reset).
 * - An initialise hook that fails leaves the instance registered (it may
 *   have freed what a start needs half-way): only initialise or unload then.
 * Pause and resume come between blocks; their hooks (KIT_LIFECYCLE_EX) may
 * release and re-acquire a device.  Unload is allowed in every state and
 * never calls the stop hook: after an error the host unloads without stop,
 * so the release hook discards anything unpublished.
 */
typedef enum kit_call {
    KIT_INITIALISE, KIT_START, KIT_BLOCK, KIT_PAUSE, KIT_RESUME, KIT_STOP, KIT_RESET
} kit_call;

typedef enum kit_state {
    KIT_REGISTERED, KIT_INITIALISED, KIT_RUNNING, KIT_PAUSED, KIT_STOPPED,
    KIT_AFTER_RESET /* process_reset succeeded: initialise or start next */
} kit_state;

/* Instance numbers: a library numbers its live instances 1, 2, ...; a new
 * instance takes the smallest number no live instance of this library has (an
 * instance unloaded gives its number back), so that the numbers a host's
 * instances get depend only on its own register and unload calls, the same in
 * every run.  The number names the instance in the log and, for an actor that
 * writes files, which output it writes: instances of one library share one
 * configuration, instance 1 writes the output it names, instance k > 1 one
 * derived from it (kit_instance_output in publish.h). */
/* The bad frames of an instance's run (see "bad frames" below). */
enum { KIT_BAD_LOGGED = 10, KIT_BAD_TEXT = 400 };
typedef struct kit_bad {
    uint64_t run;         /* bad frames of the run, in blocks that succeeded */
    uint64_t block;       /* of the block being processed, until it succeeds */
    uint64_t limit;       /* MaxBadFrames, from the configuration at register */
    const uint8_t *in;    /* the block being processed */
    size_t in_size;
    char last[KIT_BAD_TEXT]; /* the last bad frame, for the message that stops a run */
    char text[KIT_BAD_LOGGED][KIT_BAD_TEXT]; /* the block's bad frames still to be logged */
} kit_bad;

/* The node-wide GPU slot an instance holds under GPU auto (gpu_pick.c). */
typedef struct kit_gpu_slot {
    bool held;
    int fd;   /* the slot's lock file, locked (flock) while held */
    int slot; /* 0, 1, ...: the device is slot mod the devices present */
} kit_gpu_slot;

typedef struct kit_instance {
    const void *library; /* this library's kit state: tells our instances from others */
    kit_state state;
    char name[48];       /* "ADFReader" for number 1, "ADFReader#2" for number 2, ... */
    unsigned number;     /* 1, 2, ...: see above */
    kit_bad bad;
    kit_gpu_slot gpu;    /* GPU auto's slot, from the first initialise that needs one to unload */
    char device[64];     /* process_device's answer ("GPU 1 (NVIDIA H200)", "CPU"); "": none chosen */
} kit_instance;

/* The body of process_register: a zeroed instance of `size` bytes (>= sizeof
 * kit_instance) in state KIT_REGISTERED; NARVAL_E_STATE before a successful
 * kit_config, NARVAL_E_NOMEM. */
void *kit_register(size_t size, unsigned *error_code);
/* 0 when `call` is allowed now, else NARVAL_E_STATE (logged). */
unsigned kit_enter(void *algo_data, kit_call call);
/* Records the transition of `call` when code is 0; returns code. */
unsigned kit_leave(void *algo_data, kit_call call, unsigned code);
/* kit_enter, then fn (NULL: nothing to do), then kit_leave. */
unsigned kit_step(void *algo_data, kit_call call, unsigned (*fn)(void *algo_data));
/* The body of process_unload: release (may be NULL) frees what the instance
 * holds, then the kit frees the instance. */
unsigned kit_unload(void *algo_data, void (*release)(void *algo_data));
/* The instance's log name, or the actor's name for a null/foreign pointer. */
const char *kit_name(const void *algo_data);
/* algo_data as an instance of this library, or NULL (a null or foreign pointer). */
kit_instance *kit_instance_of(void *algo_data);

/* Defines an actor's process_initialise, process_start, process_stop,
 * process_pause, process_resume, process_reset and process_unload from its
 * hooks (each may be NULL): the kit checks the sequence, the hooks do the
 * work; and process_host (narval.h), which hands the kit the host's table.
 * Pause and resume only change the state; KIT_LIFECYCLE_EX also takes
 * their hooks. */
#define KIT_LIFECYCLE(initialise, start, stop, reset, release)                                  \
    KIT_LIFECYCLE_EX(initialise, start, stop, reset, release, NULL, NULL)

#define KIT_LIFECYCLE_EX(initialise, start, stop, reset, release, pause, resume)                \
    void process_initialise(void *algo_data, unsigned int *error_code)                         \
    {                                                                                          \
        *error_code = kit_step(algo_data, KIT_INITIALISE, initialise);                         \
    }                                                                                          \
    void process_start(void *algo_data, unsigned int *error_code)                              \
    {                                                                                          \
        *error_code = kit_step(algo_data, KIT_START, start);                                   \
    }                                                                                          \
    void process_stop(void *algo_data, unsigned int *error_code)                               \
    {                                                                                          \
        *error_code = kit_step(algo_data, KIT_STOP, stop);                                     \
    }                                                                                          \
    void process_pause(void *algo_data, unsigned int *error_code)                              \
    {                                                                                          \
        *error_code = kit_step(algo_data, KIT_PAUSE, pause);                                   \
    }                                                                                          \
    void process_resume(void *algo_data, unsigned int *error_code)                             \
    {                                                                                          \
        *error_code = kit_step(algo_data, KIT_RESUME, resume);                                 \
    }                                                                                          \
    void process_reset(void *algo_data, unsigned int *error_code)                              \
    {                                                                                          \
        *error_code = kit_step(algo_data, KIT_RESET, reset);                                   \
    }                                                                                          \
    void process_unload(void *algo_data, unsigned int *error_code)                             \
    {                                                                                          \
        *error_code = kit_unload(algo_data, release);                                          \
    }                                                                                          \
    void process_host(const narwhal_host *host) { kit_set_host(host); }                        \
    void process_device(void *algo_data, char *text, unsigned int len) { kit_device(algo_data, text, len); }

/* ---- GPU auto: the instances of a node spread over its GPUs -----------------
 * Every GPU actor's GPU key takes a device number or `auto` (KIT_GPU_RANGE in
 * its key table: the value is then KIT_GPU_AUTO).  With auto, instance k of
 * the node runs on device k mod n, n the CUDA devices the process sees
 * (CUDA_VISIBLE_DEVICES restricts them).  k must mean the same under every
 * host that may run the instance: the emulator (every instance in one
 * process, each configuration its own copy of a library, so no static
 * counter is shared), a NARVAL host (an actor per process, or K instances of
 * a library in one), and MPI ranks of one node.  So k is a slot of a
 * node-wide registry, kept by the kernel rather than by any process:
 *
 *   - the registry is a directory of lock files, slot-0, slot-1, ...:
 *     $NARWHAL_GPU_SLOTS when set (tests), else $XDG_RUNTIME_DIR/narwhal-gpu,
 *     else /tmp/narwhal-gpu-UID; made 0700, and refused unless it is a
 *     directory of this user that nobody else may write;
 *   - an instance takes, at its first process_initialise that needs one, the
 *     lowest slot whose file it can lock (flock, LOCK_EX | LOCK_NB) and
 *     holds it until process_unload.  Not released at reset: a host may
 *     start again without initialising, on the device it set up.  The kernel
 *     drops the lock of a process that dies, so a crash leaks no slot;
 *   - under MPI the ranks of a node share the slots out: local rank r of L
 *     (Open MPI's OMPI_COMM_WORLD_LOCAL_RANK/_SIZE, MPICH's MPI_LOCALRANKID/
 *     MPI_LOCALNRANKS) takes only the slots r, r + L, r + 2L, ..., so with one
 *     rank per GPU (L = n) every instance of rank r runs on device r: a GPU
 *     is never shared between processes (CUDA time-slices the contexts of
 *     several processes), and with fewer ranks than GPUs (L < n) rank r's
 *     instances spread over the devices r, r + L, ...
 *
 * In one process the slots follow the order of the initialise calls: the
 * emulator initialises in topology order, so every run of a topology puts
 * every instance on the same device (45 PSAs then the tracker and histo on
 * 4 GPUs: psa k on GPU k mod 4, tracker on 1, histo on 2).  Processes that
 * start together take slots in the order they get there: the spread is as
 * even, which instance gets which device is not fixed.  Two runs on one node
 * at once share the registry, so they spread over the GPUs together.  No
 * answer depends on the device: outputs are the same whichever it is. */
#define KIT_GPU_AUTO (-1)
/* The GPU key's range (kit_key fields): 0..63 or auto. */
#define KIT_GPU_RANGE KIT_RANGE(0, 63), .word = "auto", .word_value = KIT_GPU_AUTO

/* The device instance algo_data runs on for its GPU key's value `configured`:
 * that number, or with KIT_GPU_AUTO its slot (taken now if it holds none)
 * mod `devices`.  devices: the CUDA devices the instance may use (gpu_devices()
 * in kernels/gpu_device.h), 0 when its Device key keeps it on the CPU; with
 * 0 or 1, device 0 and no slot.  0, or NARVAL_E_IO when the registry cannot
 * be used (logged, naming its directory), NARVAL_E_STATE for a foreign
 * instance. */
unsigned kit_gpu_device(void *algo_data, int64_t configured, int devices, int *device);

/* The registry's two steps, for kit_gpu_device and the tests: the lowest
 * free slot of this process's local rank (0, or -1 with msg), and giving it
 * back (nothing when none is held). */
int kit_gpu_slot_take(kit_gpu_slot *s, char *msg, size_t len);
void kit_gpu_slot_release(kit_gpu_slot *s);

/* process_device (narval.h), which KIT_LIFECYCLE defines: the instance's
 * `device` text, which its initialise wrote; "" when it wrote none. */
void kit_device(void *algo_data, char *text, unsigned len);

/* ---- bad frames: one policy for every actor ------------------------------
 * A frame whose framing is sound (its length, its sub-frames) but whose
 * content an actor cannot use (a payload too short for its counts, a crystal
 * the configuration lacks, a position or an energy that is not a sensible
 * number) is a bad frame.  Every actor treats it the same way:
 *
 *   - the frame is rejected: nothing is emitted for it, the rest of the block
 *     goes on as if it had not come (its event is not built, tracked, nor
 *     histogrammed);
 *   - it is counted, and the first KIT_BAD_LOGGED of a run are logged one
 *     line each with their position (kit_where: the event number, the byte
 *     offset in the input block and, under the emulator, the file and byte
 *     offset it was read from) and the reason; the rest are only counted;
 *   - a run with more than MaxBadFrames bad frames stops: the block that
 *     passes the limit fails with NARVAL_E_INPUT, its message giving the
 *     count, the limit and the last bad frame (the host then aborts);
 *   - process_stop logs the run's count when it is not zero.
 *
 * An actor opts in with KIT_MAX_BAD_FRAMES in its key table (default
 * KIT_BAD_DEFAULT; 0 turns the first bad frame into the run's end); an
 * actor without the key stops at the first.  A framing error is not a bad
 * frame: nothing after it can be found, so the block fails (NARVAL_E_INPUT,
 * its position named).  Counts follow the block: a block answered with
 * NARVAL_E_OUTPUT_SIZE and given again counts its bad frames once.
 */
#define KIT_BAD_DEFAULT "100"
#define KIT_MAX_BAD_FRAMES(settings, field)                                                        \
    { "MaxBadFrames", KIT_INT, offsetof(settings, field), KIT_BAD_DEFAULT, KIT_RANGE(0, 1e15),      \
      .help = "bad frames (sound framing, content unusable: rejected, counted, the first 10 logged "  \
              "with their event and position) a run may have; one more stops it with an error" }

/* A Threads key for an actor's host-side decoding: a count, or auto (0):
 * kit_host_threads's choice. */
#define KIT_HOST_THREADS(settings, field, what)                                                    \
    { "Threads", KIT_INT, offsetof(settings, field), "auto", KIT_RANGE(1, 64), .word = "auto",     \
      .word_value = 0, .help = "threads that " what "; auto: half the CPUs, at most 8" }
/* `configured` threads, or for 0 (auto) half the CPUs this process may run
 * on, at least 1 and at most 8: in a sequential chain the other CPUs sit
 * idle while the actor works; pipelined, the other actors' threads want
 * them; and an OpenMP team's threads spin a while after each block. */
int kit_host_threads(int64_t configured);

enum { KIT_BAD = 0x200 }; /* a frame function's answer: the frame was bad (kit_bad_frame) */

/* Frame f of the block being processed is bad, for the reason fmt says;
 * returns KIT_BAD, which a frame function returns in turn.  An actor that
 * walks its blocks itself (not through kit_filter_block) brackets each with
 * kit_bad_begin and kit_bad_commit (or kit_bad_discard). */
unsigned kit_bad_frame(void *algo_data, const adf_frame *f, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void kit_bad_begin(void *algo_data, const void *in, unsigned in_size);
/* The block succeeded: its bad frames join the run's and are logged; past
 * MaxBadFrames, NARVAL_E_INPUT (logged). */
unsigned kit_bad_commit(void *algo_data);
void kit_bad_discard(void *algo_data);

/* ---- positions --------------------------------------------------------------
 * Where a frame of the input block is, in words, for every message about it:
 *   "event 1234 (data:psa of crystal 3) at byte 5678 of the input block,
 *    made from data:crystal read from run1.adf at byte 23076708"
 * The part after the comma comes from the host (narval.h: process_host);
 * without one (NARVAL) the event and the block offset stand alone. */
void kit_where(const adf_frame *f, char *out, size_t len);
/* The same for the frame that starts at byte `offset` of a block whose framing
 * is bad there: its key is read when one lies there whole. */
void kit_where_at(const void *block, size_t size, size_t offset, char *out, size_t len);
/* The host's table (narval.h), NULL under a host that gives none;
 * process_host (KIT_LIFECYCLE defines it) sets it. */
const narwhal_host *kit_host(void);
void kit_set_host(const narwhal_host *host);

/* ---- frame loops for filters ----------------------------------------------
 * kit_filter_block runs a filter's process_block for instance algo_data
 * (its name prefixes the log, its bad frames are counted): it walks the
 * input with the validating iterator and calls ops->frame for every
 * top-level frame with an adf_writer on the output buffer.  The frame
 * function writes what it emits through the writer and returns 0, KIT_PASS
 * to have the frame copied to the output unchanged (frames the actor does
 * not handle), KIT_BAD (kit_bad_frame: nothing may have been written for
 * it), or a NARVAL_E_* code that ends the block (logged by the kit with the
 * frame's position; the function logs the detail).  ops->end, if set, runs
 * after the last frame; flush is true for an empty input: the emulator's
 * end-of-data call, a Narwhal convenience that NARVAL never makes.  Under
 * NARVAL the end of the data arrives in-band, as a meta:eof frame
 * (ADF_ID_META_EOF) given to the frame function like any other: a filter
 * that holds frames emits them there.
 *
 * When the output does not fit, the kit keeps calling the frame function to
 * learn the size the whole block needs, then returns NARVAL_E_OUTPUT_SIZE with
 * *used = that size; the host calls again with the same input.  So the frame
 * and end functions must be re-runnable: they accumulate into ctx and the
 * actor commits (counters, held frames) only after kit_filter_block returned
 * 0.  Nothing is ever written at or past out + out_size.  Malformed framing
 * is NARVAL_E_INPUT, logged with the position of the bad frame; *used is
 * then 0.  algo_data may be NULL (a test's loop): bad frames then end the
 * block.
 */
enum { KIT_PASS = 0x100 };

typedef unsigned kit_frame_fn(void *ctx, const adf_frame *frame, adf_writer *out);
typedef unsigned kit_end_fn(void *ctx, bool flush, adf_writer *out);

typedef struct kit_filter_ops {
    kit_frame_fn *frame;
    kit_end_fn *end;
} kit_filter_ops;

unsigned kit_filter_block(void *algo_data, const kit_filter_ops *ops, void *ctx, const void *in,
                          unsigned in_size, void *out, unsigned out_size, unsigned *used);

#endif

/* library.c: what the kit keeps per actor library: its configuration, its instances and their call sequence. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit.h"

static struct {
    const kit_spec *spec;   /* set by kit_config, which the library calls first */
    void *settings;
    bool configured;        /* the last kit_config succeeded */
    atomic_uint live;       /* instances registered and not yet unloaded */
    pthread_mutex_t numbering;
    bool *taken;            /* taken[n - 1]: a live instance has number n */
    unsigned n_taken;
} lib = { .numbering = PTHREAD_MUTEX_INITIALIZER };

static const char *const call_names[] = {
    [KIT_INITIALISE] = "process_initialise", [KIT_START] = "process_start",
    [KIT_BLOCK] = "process_block",           [KIT_PAUSE] = "process_pause",
    [KIT_RESUME] = "process_resume",         [KIT_STOP] = "process_stop",
    [KIT_RESET] = "process_reset",
};

static const char *const state_names[] = {
    [KIT_REGISTERED] = "registered", [KIT_INITIALISED] = "initialised",
    [KIT_RUNNING] = "running",       [KIT_PAUSED] = "paused",
    [KIT_STOPPED] = "stopped",       [KIT_AFTER_RESET] = "reset",
};

/* Bit s set: the call is allowed in state s.  `to` is the state after it.
 * The table is narval.h's sequence; kit.h says why each edge exists. */
#define IN(s) (1u << (s))
static const struct {
    unsigned from;
    kit_state to;
} transitions[] = {
    [KIT_INITIALISE] = { IN(KIT_REGISTERED) | IN(KIT_AFTER_RESET), KIT_INITIALISED },
    [KIT_START] = { IN(KIT_INITIALISED) | IN(KIT_STOPPED) | IN(KIT_AFTER_RESET), KIT_RUNNING },
    [KIT_BLOCK] = { IN(KIT_RUNNING), KIT_RUNNING },
    [KIT_PAUSE] = { IN(KIT_RUNNING), KIT_PAUSED },
    [KIT_RESUME] = { IN(KIT_PAUSED), KIT_RUNNING },
    [KIT_STOP] = { IN(KIT_RUNNING) | IN(KIT_PAUSED), KIT_STOPPED },
    [KIT_RESET] = { IN(KIT_INITIALISED) | IN(KIT_RUNNING) | IN(KIT_PAUSED) | IN(KIT_STOPPED) |
                        IN(KIT_AFTER_RESET),
                    KIT_AFTER_RESET },
};
#undef IN

/* The configuration of a library lives until the library is unloaded (dlclose). */
__attribute__((destructor)) static void free_configuration(void)
{
    if (lib.spec)
        kit_config_free(lib.spec, lib.settings);
    free(lib.taken);
}

static const char *actor_name(void) { return lib.spec ? lib.spec->actor : "actor"; }

unsigned kit_config(const kit_spec *spec, const char *dir, void *settings)
{
    char msg[1024];
    if (atomic_load(&lib.live) > 0)
        return kit_fail(spec->actor, NARVAL_E_STATE,
                        "process_config called while %u instance(s) exist",
                        atomic_load(&lib.live));
    lib.spec = spec;
    lib.settings = settings;
    lib.configured = false;
    unsigned code = kit_config_load(spec, dir, settings, msg, sizeof msg);
    if (code)
        return kit_fail(spec->actor, code, "%s", msg);
    if (spec->check && (code = spec->check(dir)) != 0)
        return code;
    lib.configured = true;
    kit_log(spec->actor, KIT_DEBUG, "configuration read from %s", dir);
    return 0;
}

/* MaxBadFrames (KIT_MAX_BAD_FRAMES) from the settings; 0 for an actor without the key. */
static uint64_t bad_limit(void)
{
    for (size_t i = 0; i < lib.spec->n_keys; i++)
        if (strcmp(lib.spec->keys[i].name, "MaxBadFrames") == 0 && lib.spec->keys[i].type == KIT_INT)
            return (uint64_t)*(const int64_t *)((const char *)lib.settings + lib.spec->keys[i].offset);
    return 0;
}

/* The smallest number no live instance has (kit.h: why not a count of
 * registrations); 0 when out of memory. */
static unsigned take_number(void)
{
    unsigned n = 0;
    pthread_mutex_lock(&lib.numbering);
    while (n < lib.n_taken && lib.taken[n])
        n++;
    if (n == lib.n_taken) {
        unsigned cap = lib.n_taken ? 2 * lib.n_taken : 8;
        bool *taken = realloc(lib.taken, cap * sizeof *taken);
        if (taken) {
            for (unsigned i = lib.n_taken; i < cap; i++)
                taken[i] = false;
            lib.taken = taken;
            lib.n_taken = cap;
        }
    }
    if (n < lib.n_taken)
        lib.taken[n++] = true;
    else
        n = 0;
    pthread_mutex_unlock(&lib.numbering);
    return n;
}

static void give_number(unsigned n)
{
    pthread_mutex_lock(&lib.numbering);
    if (n >= 1 && n <= lib.n_taken)
        lib.taken[n - 1] = false;
    pthread_mutex_unlock(&lib.numbering);
}

void *kit_register(size_t size, unsigned *error_code)
{
    if (!lib.configured) {
        *error_code = kit_fail(actor_name(), NARVAL_E_STATE,
                               "process_register called before a successful process_config");
        return NULL;
    }
    kit_instance *inst = size >= sizeof *inst ? calloc(1, size) : NULL;
    unsigned number = inst ? take_number() : 0;
    if (!number) {
        free(inst);
        *error_code = kit_fail(actor_name(), size >= sizeof *inst ? NARVAL_E_NOMEM : NARVAL_E_INTERNAL,
                               "cannot allocate an instance of %zu bytes", size);
        return NULL;
    }
    inst->number = number;
    if (number == 1)
        snprintf(inst->name, sizeof inst->name, "%s", actor_name());
    else
        snprintf(inst->name, sizeof inst->name, "%s#%u", actor_name(), number);
    inst->library = &lib;
    inst->state = KIT_REGISTERED;
    inst->bad.limit = bad_limit();
    atomic_fetch_add(&lib.live, 1);
    *error_code = 0;
    return inst;
}

static kit_instance *ours(void *algo_data)
{
    kit_instance *inst = algo_data;
    return inst && inst->library == &lib ? inst : NULL;
}

kit_instance *kit_instance_of(void *algo_data) { return ours(algo_data); }

const char *kit_name(const void *algo_data)
{
    const kit_instance *inst = ours((void *)algo_data);
    return inst ? inst->name : actor_name();
}

unsigned kit_enter(void *algo_data, kit_call call)
{
    kit_instance *inst = ours(algo_data);
    if ((unsigned)call >= KIT_COUNT(transitions))
        return kit_fail(actor_name(), NARVAL_E_INTERNAL, "unknown call %d", (int)call);
    if (!inst)
        return kit_fail(actor_name(), NARVAL_E_STATE, "%s called with %s", call_names[call],
                        algo_data ? "an instance of another library" : "a null instance");
    if (!(transitions[call].from & 1u << inst->state))
        return kit_fail(inst->name, NARVAL_E_STATE, "%s called while the instance is %s",
                        call_names[call], state_names[inst->state]);
    return 0;
}

unsigned kit_leave(void *algo_data, kit_call call, unsigned code)
{
    kit_instance *inst = ours(algo_data);
    if (!inst || (unsigned)call >= KIT_COUNT(transitions))
        return code;
    if (code == 0)
        inst->state = transitions[call].to;
    else if (call == KIT_INITIALISE)
        inst->state = KIT_REGISTERED; /* a hook that failed half-way may have freed what a start needs */
    return code;
}

/* The run's bad frames (kit.h): counted from each start, and said at stop. */
static void count_bad_frames(kit_instance *inst, kit_call call)
{
    if (call == KIT_STOP && inst->bad.run)
        kit_log(inst->name, KIT_WARN, "%llu bad frames rejected in this run (MaxBadFrames %llu)",
                (unsigned long long)inst->bad.run, (unsigned long long)inst->bad.limit);
    if (call == KIT_START || call == KIT_RESET)
        inst->bad.run = inst->bad.block = 0;
}

unsigned kit_step(void *algo_data, kit_call call, unsigned (*fn)(void *algo_data))
{
    unsigned code = kit_enter(algo_data, call);
    if (code)
        return code;
    /* A second reset finds no run state left to release. */
    bool nothing_to_do = call == KIT_RESET && ((kit_instance *)algo_data)->state == KIT_AFTER_RESET;
    if (fn && !nothing_to_do)
        code = fn(algo_data);
    if (code == 0)
        count_bad_frames(algo_data, call);
    return kit_leave(algo_data, call, code);
}

unsigned kit_unload(void *algo_data, void (*release)(void *algo_data))
{
    kit_instance *inst = ours(algo_data);
    if (!inst)
        return kit_fail(actor_name(), NARVAL_E_STATE, "process_unload called with %s",
                        algo_data ? "an instance of another library" : "a null instance");
    if (release)
        release(inst);
    kit_gpu_slot_release(&inst->gpu);
    inst->library = NULL;
    give_number(inst->number);
    free(inst);
    atomic_fetch_sub(&lib.live, 1);
    return 0;
}

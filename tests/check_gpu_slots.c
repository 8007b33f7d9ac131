/* check_gpu_slots.c: GPU auto's node-wide slot registry (actors/kit/gpu_pick.c) with a given device count: the GPU key's word, devices of slots 0..5 over 1, 2 and 4 GPUs, a released slot reused, two processes apart, MPI local ranks, a registry refused, process_device's text. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kit.h"
#include "testkit.h"

typedef struct gconf {
    int64_t gpu;
} gconf;

static const kit_key gkeys[] = {
    { "GPU", KIT_INT, offsetof(gconf, gpu), "0", KIT_GPU_RANGE, .help = "the device" },
};
static const kit_spec gspec = { "Gpu", "filter", "a GPU actor's key", gkeys, KIT_COUNT(gkeys), sizeof(gconf), NULL };

static char dir[64], slots[128];
static gconf conf;

/* A fresh registry for each test: NARWHAL_GPU_SLOTS names it, so that no other process's slots count. */
static void setup(void)
{
    tk_make_tmpdir(dir, sizeof dir, "check_gpu_slots");
    snprintf(slots, sizeof slots, "%s/slots", dir);
    ck_assert_int_eq(setenv("NARWHAL_GPU_SLOTS", slots, 1), 0);
    unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
    unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    unsetenv("MPI_LOCALRANKID");
    unsetenv("MPI_LOCALNRANKS");
    tk_write_text(tk_path(dir, "Gpu.conf"), "GPU auto\n");
    ck_assert_uint_eq(kit_config(&gspec, dir, &conf), 0);
}

static void teardown(void) { tk_remove_tree(dir); }

static void *instance(void)
{
    unsigned e;
    void *inst = kit_register(sizeof(kit_instance), &e);
    ck_assert_uint_eq(e, 0);
    return inst;
}

static void unload(void *inst) { ck_assert_uint_eq(kit_unload(inst, NULL), 0); }

/* The device kit_gpu_device gives inst for GPU auto over `devices`. */
static int device_of(void *inst, int devices)
{
    int d = -2;
    ck_assert_uint_eq(kit_gpu_device(inst, KIT_GPU_AUTO, devices, &d), 0);
    return d;
}

/* The key reads auto as KIT_GPU_AUTO beside its numbers; inspect shows the word. */
START_TEST(the_gpu_key_takes_auto)
{
    char msg[512];
    gconf c = { 0 };
    ck_assert_int_eq(conf.gpu, KIT_GPU_AUTO);
    tk_write_text(tk_path(dir, "Gpu.conf"), "GPU 3\n");
    ck_assert_uint_eq(kit_config_load(&gspec, dir, &c, msg, sizeof msg), 0);
    ck_assert_int_eq(c.gpu, 3);
    tk_write_text(tk_path(dir, "Gpu.conf"), "GPU -1\n");
    ck_assert_uint_eq(kit_config_load(&gspec, dir, &c, msg, sizeof msg), NARVAL_E_CONFIG);
    ck_assert_msg(strstr(msg, "key 'GPU': value '-1' is below the minimum 0"), "%s", msg);
    tk_write_text(tk_path(dir, "Gpu.conf"), "GPU Auto\n");
    ck_assert_uint_eq(kit_config_load(&gspec, dir, &c, msg, sizeof msg), NARVAL_E_CONFIG);
    ck_assert_msg(strstr(msg, "key 'GPU': value 'Auto' is not an integer"), "%s", msg);
    ck_assert_ptr_nonnull(strstr(kit_describe(&gspec), "[0, 63] or auto"));
}
END_TEST

/* Instances 0..5, each taking the lowest free slot, on n = 1, 2, 4 devices:
 * device k mod n; with one device (or none) no slot is taken at all. */
START_TEST(slots_spread_over_the_devices)
{
    static const int want[3][6] = { { 0, 0, 0, 0, 0, 0 }, { 0, 1, 0, 1, 0, 1 }, { 0, 1, 2, 3, 0, 1 } };
    static const int devices[3] = { 1, 2, 4 };
    for (int c = 0; c < 3; c++) {
        void *inst[6];
        for (int k = 0; k < 6; k++) {
            inst[k] = instance();
            ck_assert_int_eq(device_of(inst[k], devices[c]), want[c][k]);
        }
        ck_assert_int_eq(tk_exists(tk_path(slots, "slot-0")), devices[c] > 1);
        for (int k = 0; k < 6; k++)
            unload(inst[k]);
    }
}
END_TEST

/* A number is used as it is, with no slot; auto with the Device key on the CPU (0 devices) is device 0. */
START_TEST(a_number_takes_no_slot)
{
    void *inst = instance();
    int d = -2;
    ck_assert_uint_eq(kit_gpu_device(inst, 3, 4, &d), 0);
    ck_assert_int_eq(d, 3);
    ck_assert_int_eq(device_of(inst, 0), 0);
    ck_assert(!tk_exists(slots));
    unload(inst);
}
END_TEST

/* An unloaded instance's slot goes to the next instance; an instance
 * initialised again keeps its own (its device does not move). */
START_TEST(a_released_slot_is_reused)
{
    void *a = instance(), *b = instance(), *c = instance();
    ck_assert_int_eq(device_of(a, 4), 0);
    ck_assert_int_eq(device_of(b, 4), 1);
    ck_assert_int_eq(device_of(c, 4), 2);
    unload(b);
    void *d = instance();
    ck_assert_int_eq(device_of(d, 4), 1);
    ck_assert_int_eq(device_of(a, 4), 0);
    ck_assert_int_eq(device_of(c, 4), 2);
    void *e = instance();
    ck_assert_int_eq(device_of(e, 4), 3);
    unload(a);
    unload(c);
    unload(d);
    unload(e);
}
END_TEST

/* Another process's slot is not taken; it is free again once that process
 * is gone (the kernel drops a dead process's locks: here it is killed). */
START_TEST(two_processes_take_different_slots)
{
    int up[2], hold[2];
    ck_assert_int_eq(pipe(up), 0);
    ck_assert_int_eq(pipe(hold), 0);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        kit_gpu_slot s;
        char msg[256], c;
        int slot = kit_gpu_slot_take(&s, msg, sizeof msg) == 0 ? s.slot : -1;
        if (write(up[1], &slot, sizeof slot) != sizeof slot)
            _exit(1);
        while (read(hold[0], &c, 1) < 0) /* until killed */
            ;
        _exit(0);
    }
    int theirs = -1;
    ck_assert_int_eq(read(up[0], &theirs, sizeof theirs), (ssize_t)sizeof theirs);
    ck_assert_int_eq(theirs, 0);
    void *mine = instance();
    ck_assert_int_eq(device_of(mine, 2), 1);
    kill(child, SIGKILL);
    ck_assert_int_eq(waitpid(child, NULL, 0), child);
    void *next = instance();
    ck_assert_int_eq(device_of(next, 2), 0);
    unload(mine);
    unload(next);
}
END_TEST

/* Under MPI local rank r of L takes only slots r, r + L, ...: with one rank
 * per GPU every instance of a rank is on its GPU, with fewer ranks than
 * GPUs a rank's instances spread over r, r + L, ... (Open MPI's variables,
 * then MPICH's). */
START_TEST(local_ranks_share_the_slots_out)
{
    void *inst[3];
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "4", 1);
    for (int k = 0; k < 3; k++) {
        inst[k] = instance();
        ck_assert_int_eq(device_of(inst[k], 4), 1);
        ck_assert(tk_exists(tk_path(slots, k == 0 ? "slot-1" : k == 1 ? "slot-5" : "slot-9")));
    }
    for (int k = 0; k < 3; k++)
        unload(inst[k]);
    unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
    unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    setenv("MPI_LOCALRANKID", "1", 1);
    setenv("MPI_LOCALNRANKS", "2", 1);
    static const int spread[3] = { 1, 3, 1 };
    for (int k = 0; k < 3; k++) {
        inst[k] = instance();
        ck_assert_int_eq(device_of(inst[k], 4), spread[k]);
    }
    for (int k = 0; k < 3; k++)
        unload(inst[k]);
}
END_TEST

/* A registry others may write in, or that is not a directory, is refused with NARVAL_E_IO naming it. */
START_TEST(a_registry_others_may_write_is_refused)
{
    char log[2048];
    int d = -2;
    ck_assert_int_eq(mkdir(slots, 0700), 0);
    ck_assert_int_eq(chmod(slots, 0777), 0);
    void *inst = instance();
    int saved = tk_capture_begin(tk_path(dir, "log"));
    unsigned code = kit_gpu_device(inst, KIT_GPU_AUTO, 2, &d);
    tk_capture_end(saved, tk_path(dir, "log"), log, sizeof log);
    ck_assert_uint_eq(code, NARVAL_E_IO);
    ck_assert_msg(strstr(log, slots) && strstr(log, "only this user may write"), "%s", log);
    ck_assert_int_eq(rmdir(slots), 0);
    tk_write_text(slots, "a file\n");
    saved = tk_capture_begin(tk_path(dir, "log"));
    code = kit_gpu_device(inst, KIT_GPU_AUTO, 2, &d);
    tk_capture_end(saved, tk_path(dir, "log"), log, sizeof log);
    ck_assert_uint_eq(code, NARVAL_E_IO);
    ck_assert_msg(strstr(log, slots), "%s", log);
    unload(inst);
}
END_TEST

/* process_device's text is the instance's own, empty until its actor writes one. */
START_TEST(process_device_answers_the_instance_text)
{
    kit_instance *inst = instance();
    char text[16] = "x";
    kit_device(inst, text, sizeof text);
    ck_assert_str_eq(text, "");
    snprintf(inst->device, sizeof inst->device, "GPU 1 (Test GPU with a long name)");
    kit_device(inst, text, sizeof text);
    ck_assert_str_eq(text, "GPU 1 (Test GPU"); /* cut to the host's buffer, terminated */
    unload(inst);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gpu_slots");
    TCase *t = tcase_create("registry");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, the_gpu_key_takes_auto);
    tcase_add_test(t, slots_spread_over_the_devices);
    tcase_add_test(t, a_number_takes_no_slot);
    tcase_add_test(t, a_released_slot_is_reused);
    tcase_add_test(t, two_processes_take_different_slots);
    tcase_add_test(t, local_ranks_share_the_slots_out);
    tcase_add_test(t, a_registry_others_may_write_is_refused);
    tcase_add_test(t, process_device_answers_the_instance_text);
    suite_add_tcase(s, t);
    return tk_run_suite(s);
}

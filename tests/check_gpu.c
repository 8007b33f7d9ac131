/* check_gpu.c: the GPU layer: gpu_choose's reading of the Device and GPU keys, and psa, tracker and histo on it — the one no-GPU sentence, Device gpu refused without a GPU, a GPU number without its device refused naming the key, the configured device used where there is one, GPU auto (device 0 with one GPU, the instances spread with two) and process_device's answer. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpu_device.h"
#include "narval.h"
#include "narwhal_exec.h"
#include "testkit.h"

/* ---- gpu_choose, with probes that stand for the hosts it may meet ----------------- */

/* A host with two devices, 0 and 1, where device 1 does not answer. */
static int two_devices(int device, int *present, char *msg, size_t len)
{
    *present = 2;
    if (device == 0) {
        snprintf(msg, len, "Test GPU, 1 SMs, compute 9.0, 1.0 GiB");
        return GPU_OK;
    }
    if (device == 1)
        snprintf(msg, len, "CUDA device 1: unknown error");
    else
        snprintf(msg, len, "no CUDA device %d (2 present)", device);
    return GPU_NODEV;
}

/* A build with CUDA on a host without a device. */
static int no_device(int device, int *present, char *msg, size_t len)
{
    *present = 0;
    gpu_none(msg, len, "no CUDA-capable device is detected");
    return GPU_NODEV;
}

/* What gpu_choose answers for a probe (NULL: a build without CUDA), Device gpu
 * or not, and a GPU number.  A number past the devices is the configuration's
 * error whatever Device says; a device that is there but does not answer is
 * the device's. */
typedef struct choice_case {
    gpu_probe_fn *probe;
    bool required;
    int device;
    gpu_choice want;
    const char *msg;
} choice_case;

static const choice_case choice_cases[] = {
    { two_devices, false, 0, GPU_CHOICE_GPU, "Test GPU, 1 SMs, compute 9.0, 1.0 GiB" },
    { two_devices, true, 0, GPU_CHOICE_GPU, "Test GPU, 1 SMs, compute 9.0, 1.0 GiB" },
    { NULL, false, 0, GPU_CHOICE_CPU, "no usable GPU: " GPU_NOT_BUILT },
    { NULL, true, 0, GPU_CHOICE_NONE, "Device gpu is configured but no usable GPU: " GPU_NOT_BUILT },
    { NULL, false, 7, GPU_CHOICE_NUMBER, "GPU 7 is configured but no usable GPU: " GPU_NOT_BUILT },
    { no_device, false, 0, GPU_CHOICE_CPU, "no usable GPU: no CUDA-capable device is detected" },
    { no_device, true, 0, GPU_CHOICE_NONE,
      "Device gpu is configured but no usable GPU: no CUDA-capable device is detected" },
    { no_device, true, 3, GPU_CHOICE_NUMBER,
      "GPU 3 is configured but no usable GPU: no CUDA-capable device is detected" },
    { two_devices, false, 2, GPU_CHOICE_NUMBER, "GPU 2 is configured but no CUDA device 2 (2 present)" },
    { two_devices, true, 7, GPU_CHOICE_NUMBER, "GPU 7 is configured but no CUDA device 7 (2 present)" },
    { two_devices, false, 1, GPU_CHOICE_CPU, "CUDA device 1: unknown error" },
    { two_devices, true, 1, GPU_CHOICE_NONE, "Device gpu is configured but CUDA device 1: unknown error" },
};

START_TEST(choose_reads_the_keys)
{
    const choice_case *c = &choice_cases[_i];
    char msg[256];
    ck_assert_int_eq(gpu_choose(c->probe, c->required, c->device, msg, sizeof msg), c->want);
    ck_assert_str_eq(msg, c->msg);
}
END_TEST

/* ---- the three GPU actors ------------------------------------------------------------ */

/*
 * Each actor is configured with its own keys plus the test's, registered and
 * initialised (its log captured), then unloaded.  The PSA reads a small basis
 * built once (10 mm grid); the tracker its shipped defaults; histo writes
 * into a directory of its own.
 */
enum { PSA, TRACKER, HISTO, ACTORS };
static const char *const library[ACTORS] = { "psa.so", "tracker.so", "histo.so" };
static const char *const conf_name[ACTORS] = { "PSA.conf", "Tracker.conf", "Histo.conf" };
static char dir[PATH_MAX], basis_path[PATH_MAX + 32];
static char device_said[64]; /* process_device's answer after the last initialise that succeeded */

static int build_basis(void)
{
    char cmd[3 * PATH_MAX];
    snprintf(dir, sizeof dir, "/tmp/check_gpu.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(basis_path, sizeof basis_path, "%s/test.basis", dir);
    snprintf(cmd, sizeof cmd, "%s --quiet --grid 10 --field-grid 2 --samples 60 -o %s > %s/basisgen.log",
             nw_build_path("/bin/basisgen"), basis_path, dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "check_gpu: the test basis could not be built (%s)\n", cmd);
        return -1;
    }
    return 0;
}

/* Actor `which` configured with `keys` added to its configuration and
 * registered `n` times (a, inst[n]), from a configuration directory of its own under dir. */
static void configure(int which, const char *keys, tk_actor *a, void **inst, int n)
{
    char conf_dir[PATH_MAX + 64], base[2 * PATH_MAX + 128] = "";
    unsigned code;
    snprintf(conf_dir, sizeof conf_dir, "%s/conf.XXXXXX", dir);
    ck_assert_ptr_nonnull(mkdtemp(conf_dir));
    if (which == PSA)
        snprintf(base, sizeof base, "Basis %s\nCoarseGrid 15\nAdaptiveRadius 16\n", basis_path);
    else if (which == HISTO)
        snprintf(base, sizeof base, "OutputDir %s/histo\nPlot none\n", conf_dir);
    tk_write_textf(tk_path(conf_dir, conf_name[which]), "%s%s\n", base, keys);
    tk_load_actor(a, library[which]);
    a->config(conf_dir, &code);
    ck_assert_uint_eq(code, 0);
    for (int i = 0; i < n; i++) {
        inst[i] = a->reg(&code);
        ck_assert_uint_eq(code, 0);
    }
}

/* inst's initialise: its code, its log into log, and process_device's answer into device_said. */
static unsigned initialise_instance(const tk_actor *a, void *inst, char *log, size_t cap)
{
    char path[PATH_MAX + 64];
    unsigned code;
    narval_device_fn *device = (narval_device_fn *)dlsym(a->so, "process_device");
    ck_assert_ptr_nonnull(device);
    snprintf(path, sizeof path, "%s/log.XXXXXX", dir);
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    int saved = tk_capture_begin(path);
    a->initialise(inst, &code);
    tk_capture_end(saved, path, log, cap);
    unlink(path);
    if (code == 0)
        device(inst, device_said, sizeof device_said);
    return code;
}

/* initialise's code for actor `which` with `keys` added to its configuration; its log into log. */
static unsigned initialise(int which, const char *keys, char *log, size_t cap)
{
    tk_actor a;
    void *inst;
    unsigned e;
    configure(which, keys, &a, &inst, 1);
    unsigned code = initialise_instance(&a, inst, log, cap);
    a.unload(inst, &e);
    ck_assert_uint_eq(e, 0);
    return code;
}

/* Whether CUDA device n is usable here (histo, the quickest to set up, asked for it). */
static bool usable(int n)
{
    char keys[64], log[4096];
    snprintf(keys, sizeof keys, "Device gpu\nGPU %d", n);
    return initialise(HISTO, keys, log, sizeof log) == 0;
}

/* Each actor's initialise with keys returns code and logs text. */
static void each_actor(const char *keys, unsigned code, const char *text)
{
    char log[8192];
    for (int k = 0; k < ACTORS; k++) {
        unsigned got = initialise(k, keys, log, sizeof log);
        ck_assert_msg(got == code, "%s with '%s': code %u, not %u", library[k], keys, got, code);
        ck_assert_msg(strstr(log, text), "%s with '%s' does not log '%s': %s", library[k], keys, text, log);
    }
}

/* Without a GPU: Device gpu refused with the one sentence, each actor. */
START_TEST(device_gpu_refused_without_a_gpu)
{
    if (usable(0))
        TK_SKIP("a GPU is usable: the refusal is not tested");
    each_actor("Device gpu", NARVAL_E_DEVICE, "Device gpu is configured but no usable GPU: ");
}
END_TEST

/* Without a GPU: Device auto runs on the CPU, saying why with the same sentence. */
START_TEST(auto_on_the_cpu_without_a_gpu)
{
    if (usable(0))
        TK_SKIP("a GPU is usable: the CPU is not chosen");
    each_actor("Device auto", 0, " OpenMP threads (no usable GPU: ");
}
END_TEST

/* GPU 7 where there is no device 7 (every host these tests run on, GPU or not):
 * initialise refuses it as a configuration error naming the key, with Device
 * auto as with Device gpu. */
START_TEST(gpu_number_without_its_device_refused)
{
    if (usable(7))
        TK_SKIP("this host has a CUDA device 7");
    each_actor("GPU 7", NARVAL_E_CONFIG, "GPU 7 is configured but ");
    each_actor("Device gpu\nGPU 7", NARVAL_E_CONFIG, "GPU 7 is configured but ");
}
END_TEST

/* Device cpu asks for no device: its GPU number is not looked at. */
START_TEST(device_cpu_ignores_the_gpu_number)
{
    each_actor("Device cpu\nGPU 7", 0, "OpenMP threads (Device cpu is configured)");
}
END_TEST

/* With a GPU: each actor runs on the device its GPU key names, and says which. */
static void uses_device(int n)
{
    char keys[64], want[32];
    snprintf(keys, sizeof keys, "Device gpu\nGPU %d", n);
    snprintf(want, sizeof want, "on the GPU %d: ", n);
    each_actor(keys, 0, want);
}

START_TEST(configured_device_used)
{
    if (!usable(0))
        TK_SKIP("no usable GPU");
    uses_device(0);
}
END_TEST

START_TEST(second_device_used)
{
    if (!usable(1))
        TK_SKIP("no second usable GPU");
    uses_device(1);
}
END_TEST

/* GPU auto: accepted by each actor; with a GPU, the instance (the only one:
 * the test's registry is its own) on device 0 and process_device saying so;
 * without one, on the CPU saying CPU. */
START_TEST(gpu_auto_takes_device_0_alone)
{
    char log[8192];
    bool gpu = usable(0);
    for (int k = 0; k < ACTORS; k++) {
        ck_assert_uint_eq(initialise(k, "GPU auto", log, sizeof log), 0);
        ck_assert_msg(strstr(log, gpu ? "on the GPU 0: " : " OpenMP threads (no usable GPU: "), "%s: %s", library[k],
                      log);
        if (gpu)
            ck_assert_msg(strncmp(device_said, "GPU 0 (", 7) == 0, "%s: %s", library[k], device_said);
        else
            ck_assert_str_eq(device_said, "CPU");
    }
}
END_TEST

/* Device cpu keeps an instance on the CPU whatever GPU says, and process_device says CPU. */
START_TEST(device_cpu_answers_cpu)
{
    char log[8192];
    for (int k = 0; k < ACTORS; k++) {
        ck_assert_uint_eq(initialise(k, "Device cpu\nGPU auto", log, sizeof log), 0);
        ck_assert_str_eq(device_said, "CPU");
    }
}
END_TEST

/* With two GPUs: two live instances of each actor under GPU auto on devices
 * 0 and 1, in the order they were initialised. */
START_TEST(gpu_auto_spreads_two_instances)
{
    if (!usable(1))
        TK_SKIP("no second usable GPU");
    char log[8192], want[16];
    for (int k = 0; k < ACTORS; k++) {
        tk_actor a;
        void *inst[2];
        unsigned e;
        configure(k, "Device gpu\nGPU auto", &a, inst, 2);
        for (int i = 0; i < 2; i++) {
            ck_assert_uint_eq(initialise_instance(&a, inst[i], log, sizeof log), 0);
            snprintf(want, sizeof want, "GPU %d (", i);
            ck_assert_msg(strncmp(device_said, want, strlen(want)) == 0, "%s #%d: %s", library[k], i + 1,
                          device_said);
        }
        for (int i = 0; i < 2; i++) {
            a.unload(inst[i], &e);
            ck_assert_uint_eq(e, 0);
        }
    }
}
END_TEST

static Suite *gpu_suite(void)
{
    Suite *s = suite_create("gpu");
    TCase *t = tcase_create("choose");
    tcase_add_loop_test(t, choose_reads_the_keys, 0, (int)(sizeof choice_cases / sizeof *choice_cases));
    suite_add_tcase(s, t);
    t = tcase_create("actors");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, device_gpu_refused_without_a_gpu);
    tcase_add_test(t, auto_on_the_cpu_without_a_gpu);
    tcase_add_test(t, gpu_number_without_its_device_refused);
    tcase_add_test(t, device_cpu_ignores_the_gpu_number);
    tcase_add_test(t, configured_device_used);
    tcase_add_test(t, second_device_used);
    tcase_add_test(t, gpu_auto_takes_device_0_alone);
    tcase_add_test(t, device_cpu_answers_cpu);
    tcase_add_test(t, gpu_auto_spreads_two_instances);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    if (build_basis())
        return 1;
    /* GPU auto's registry (actors/kit/kit.h): the suite's own, so that other processes' slots do not count */
    char slots[PATH_MAX + 16];
    snprintf(slots, sizeof slots, "%s/slots", dir);
    setenv("NARWHAL_GPU_SLOTS", slots, 1);
    int failed = tk_run_suite(gpu_suite());
    if (tk_remove_tree(dir) != 0)
        fprintf(stderr, "check_gpu: could not remove %s\n", dir);
    return failed;
}

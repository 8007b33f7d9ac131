/* check_gpu.c: the GPU layer: gpu_choose's reading of the Device and GPU keys, and psa, tracker and histo on it — the one no-GPU sentence, Device gpu refused without a GPU, a GPU number without its device refused naming the key, the configured device used where there is one. */
#define _XOPEN_SOURCE 700
#include <check.h>
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

/* initialise's code for actor `which` with `keys` added to its configuration; its log into log. */
static unsigned initialise(int which, const char *keys, char *log, size_t cap)
{
    char conf_dir[PATH_MAX + 64], base[2 * PATH_MAX + 128] = "";
    tk_actor a;
    unsigned code, e;
    snprintf(conf_dir, sizeof conf_dir, "%s/conf.XXXXXX", dir);
    ck_assert_ptr_nonnull(mkdtemp(conf_dir));
    if (which == PSA)
        snprintf(base, sizeof base, "Basis %s\nCoarseGrid 15\nAdaptiveRadius 16\n", basis_path);
    else if (which == HISTO)
        snprintf(base, sizeof base, "OutputDir %s/histo\nPlot none\n", conf_dir);
    tk_write_textf(tk_path(conf_dir, conf_name[which]), "%s%s\n", base, keys);
    tk_load_actor(&a, library[which]);
    a.config(conf_dir, &code);
    ck_assert_uint_eq(code, 0);
    void *inst = a.reg(&code);
    ck_assert_uint_eq(code, 0);
    int saved = tk_capture_begin(tk_path(conf_dir, "log"));
    a.initialise(inst, &code);
    tk_capture_end(saved, tk_path(conf_dir, "log"), log, cap);
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
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    if (build_basis())
        return 1;
    int failed = tk_run_suite(gpu_suite());
    if (tk_remove_tree(dir) != 0)
        fprintf(stderr, "check_gpu: could not remove %s\n", dir);
    return failed;
}

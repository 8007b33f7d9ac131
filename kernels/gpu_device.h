/* gpu_device.h: the one GPU layer every GPU actor uses: device probe and selection by number, one status, one sentence for "no GPU", the device choice of the Device and GPU keys, and (CUDA C++) the error check naming file and line. */
#ifndef NARWHAL_GPU_DEVICE_H
#define NARWHAL_GPU_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What every call of the CUDA sources of kernels/ returns. */
typedef enum gpu_status {
    GPU_OK = 0,
    GPU_NODEV = 1, /* no usable CUDA device of that number (or a build without CUDA) */
    GPU_NOMEM = 2, /* a device or pinned-host allocation failed */
    GPU_FAIL = 3,  /* any other CUDA error, or a request the kernels cannot take */
} gpu_status;

/* Why a build without CUDA has no GPU. */
#define GPU_NOT_BUILT "built without CUDA"

/* The one sentence a GPU actor gives when no GPU is present, whatever the
 * reason (a build without CUDA, no driver, no device): "no usable GPU: why". */
static inline void gpu_none(char *msg, size_t len, const char *why)
{
    snprintf(msg, len, "no usable GPU: %s", why);
}

/* GPU_OK and a description of device `device` ("NVIDIA H100 80GB HBM3, 132
 * SMs, compute 9.0, 79.1 GiB"), or GPU_NODEV and why not: gpu_none's
 * sentence when no device is present at all, else "no CUDA device 7 (2
 * present)" or CUDA's reason.  *present: the devices the runtime sees. */
int gpu_probe(int device, int *present, char *msg, size_t len);
typedef int gpu_probe_fn(int device, int *present, char *msg, size_t len);

/* Makes `device` the calling thread's device.  CUDA's current device is per
 * host thread and a pipelined host calls an actor from threads of its own,
 * so every entry point of kernels/ selects its object's device again.
 * GPU_OK, or a gpu_status with CUDA's reason. */
int gpu_select(int device, char *msg, size_t len);

/*
 * The device an actor's Device and GPU keys ask for (the same meaning in
 * every GPU actor).  probe: gpu_probe, or NULL in a build without CUDA.
 *   GPU_CHOICE_GPU   device `device` is usable; msg: its description.
 *   GPU_CHOICE_CPU   Device auto without a usable GPU; msg: the no-GPU sentence.
 *   GPU_CHOICE_NUMBER  GPU names a device other than 0 that this host does
 *                    not have (GPU 0, the default, is the first device when
 *                    there is one; another number must exist): a
 *                    configuration error; msg: "GPU 7 is configured but ...".
 *   GPU_CHOICE_NONE  Device gpu without a usable GPU; msg: "Device gpu is
 *                    configured but ...".
 */
typedef enum gpu_choice { GPU_CHOICE_GPU, GPU_CHOICE_CPU, GPU_CHOICE_NUMBER, GPU_CHOICE_NONE } gpu_choice;

/* The GPU key's line in `narwhal inspect`, the same in every GPU actor. */
#define GPU_KEY_HELP                                                                               \
    "the CUDA device number: 0, the default, is the first device when there is one (Device auto "  \
    "runs on the CPU without one); another number must name a device of this host, else "         \
    "initialise fails (Device cpu ignores it); auto: the node's GPU instances spread over its "    \
    "devices, the k-th on device k mod n (actors/kit/kit.h: GPU auto)"

/* Page-locked host memory (portable: pinned for every device and context of
 * the process, whichever library's CUDA runtime allocated it), from which a
 * GPU's uploads run at the bus's rate and asynchronously; NULL without a
 * usable device or when the allocation fails.  gpu_host_free takes NULL. */
void *gpu_host_alloc(size_t bytes);
void gpu_host_free(void *p);

/* Whether bytes [p, p + bytes) are page-locked host memory: their first and
 * last byte are (an upload from them then goes straight to the device; a
 * range that is not one allocation is still copied right, only staged).
 * false without a usable device (CUDA builds only: callers sit under NARWHAL_HAVE_CUDA). */
bool gpu_host_pinned(const void *p, size_t bytes);

/* The CUDA devices this process sees (CUDA_VISIBLE_DEVICES applies): what
 * GPU auto spreads the instances over.  0 without a device, a driver, or
 * a build with CUDA. */
static inline int gpu_devices(void)
{
    int present = 0;
#ifdef NARWHAL_HAVE_CUDA
    char why[200];
    gpu_probe(0, &present, why, sizeof why);
#endif
    return present;
}

/* process_device's answer (actors/narval.h) for an instance that computes
 * on CUDA device `device` (on_gpu) or on the host's cores: "GPU 1 (NVIDIA
 * H200)" (the device's name, gpu_probe's description up to its first comma),
 * or "CPU". */
static inline void gpu_device_text(bool on_gpu, int device, char *out, size_t len)
{
    char desc[200] = "";
#ifdef NARWHAL_HAVE_CUDA
    int present;
    if (on_gpu && gpu_probe(device, &present, desc, sizeof desc) != GPU_OK)
        snprintf(desc, sizeof desc, "not answering");
#endif
    desc[strcspn(desc, ",")] = '\0';
    if (on_gpu)
        snprintf(out, len, "GPU %d (%s)", device, desc);
    else
        snprintf(out, len, "CPU");
}

static inline gpu_choice gpu_choose(gpu_probe_fn *probe, bool required, int device, char *msg, size_t len)
{
    char why[200]; /* with the longest sentence around it, a 256-byte msg holds it */
    int present = 0;
    if (probe && probe(device, &present, why, sizeof why) == GPU_OK) {
        snprintf(msg, len, "%s", why);
        return GPU_CHOICE_GPU;
    }
    if (!probe)
        gpu_none(why, sizeof why, GPU_NOT_BUILT);
    if (device > 0 && device >= present) {
        snprintf(msg, len, "GPU %d is configured but %s", device, why);
        return GPU_CHOICE_NUMBER;
    }
    if (required) {
        snprintf(msg, len, "Device gpu is configured but %s", why);
        return GPU_CHOICE_NONE;
    }
    snprintf(msg, len, "%s", why);
    return GPU_CHOICE_CPU;
}

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
#include <cuda_runtime.h>

/* err as a gpu_status (GPU_NOMEM for an allocation, GPU_FAIL otherwise),
 * with "what: CUDA's message (file:line)" in msg. */
int gpu_error(cudaError_t err, const char *what, const char *file, int line, char *msg, size_t len);

/* gpu_error for err, in a function that has msg and len. */
#define GPU_ERROR(err, what) gpu_error((err), (what), __FILE__, __LINE__, msg, len)

/* Returns gpu_error's status from the calling function (which has msg and len) when call fails. */
#define GPU_CHECK(call, what)                                                                      \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess)                                                                   \
            return gpu_error(err_, what, __FILE__, __LINE__, msg, len);                            \
    } while (0)

/* Selects device (gpu_select) or returns its status from the calling function (which has msg and len). */
#define GPU_SELECT(device)                                                                         \
    do {                                                                                           \
        int rc_ = gpu_select((device), msg, len);                                                  \
        if (rc_ != GPU_OK)                                                                         \
            return rc_;                                                                            \
    } while (0)

/* bytes of src into a new device allocation at *dst (16 bytes when empty). */
int gpu_upload(void **dst, const void *src, size_t bytes, const char *what, char *msg, size_t len);
#endif

#endif

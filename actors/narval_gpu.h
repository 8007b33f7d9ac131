/* narval_gpu.h: the GPU layer's outcomes (kernels/gpu_device.h) as NARVAL's error codes, written once for the three GPU actors. */
#ifndef NARWHAL_NARVAL_GPU_H
#define NARWHAL_NARVAL_GPU_H

#include <stdio.h>

#include "gpu_device.h"
#include "narval.h"

/* A gpu_status: 0, NARVAL_E_NOMEM for an allocation, NARVAL_E_DEVICE for any other failure. */
static inline unsigned narval_gpu_code(int status)
{
    return status == GPU_OK ? 0 : status == GPU_NOMEM ? NARVAL_E_NOMEM : NARVAL_E_DEVICE;
}

/* A refusing gpu_choose (GPU_CHOICE_NUMBER: the GPU key names no device of
 * this host, NARVAL_E_CONFIG; GPU_CHOICE_NONE: Device gpu without a usable
 * GPU, NARVAL_E_DEVICE), with why, gpu_choose's sentence, into msg. */
static inline unsigned narval_gpu_refuse(gpu_choice c, const char *why, char *msg, size_t len)
{
    snprintf(msg, len, "%s", why);
    return c == GPU_CHOICE_NUMBER ? NARVAL_E_CONFIG : NARVAL_E_DEVICE;
}

#endif

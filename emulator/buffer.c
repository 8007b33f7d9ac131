/* buffer.c: block buffers (buffer.h): page-locked through the GPU layer when a CUDA device is usable, plain memory otherwise. */
#include "buffer.h"
#include "adf.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

/* set by the main thread before each run's blocks, read by MPI's communication thread too */
static atomic_int plain = 1;

void emu_buffer_plain(int yes)
{
    plain = yes;
}

#ifdef NARWHAL_HAVE_CUDA
#include "gpu_device.h"

static pthread_once_t probed = PTHREAD_ONCE_INIT;
static int usable;

/* Once per process: whether there is a device to pin memory for (without
 * one, or a driver, every allocation would ask CUDA again and fail). */
static void probe(void)
{
    usable = gpu_devices() > 0;
}

static void *pinned_alloc(size_t size)
{
    pthread_once(&probed, probe);
    return usable ? gpu_host_alloc(size) : NULL;
}

static void pinned_free(void *p)
{
    gpu_host_free(p);
}
#else
static void *pinned_alloc(size_t size)
{
    (void)size;
    return NULL;
}

static void pinned_free(void *p)
{
    (void)p;
}
#endif

int emu_buffer_fit(emu_buffer *b, size_t size)
{
    if (b->data && b->cap >= size)
        return 0;
    emu_buffer_release(b);
    if (!plain && (b->data = pinned_alloc(size)))
        b->pinned = 1;
    else if (!(b->data = adf_block_alloc(size ? size : 1)))
        return -1;
    b->cap = (unsigned)size;
    return 0;
}

void emu_buffer_release(emu_buffer *b)
{
    if (b->pinned)
        pinned_free(b->data);
    else
        adf_block_free(b->data);
    b->data = NULL;
    b->cap = 0;
    b->pinned = 0;
}

/* block.c: memory for large blocks of frames, on the kernel's 2 MiB pages where it gives them (adf_block_alloc). */
#include "adf.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HUGE_PAGE ((size_t)2 << 20)

/* Just below each block: the mapping to give back. */
typedef struct head {
    void *base;
    size_t length;
    uint64_t magic; /* BLOCK_MAGIC: adf_block_free was handed a block of adf_block_alloc's */
} head;

#define BLOCK_MAGIC 0x6164662d626c6b31ull

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

/* NARWHAL_HUGE_PAGES=off keeps every block on the base pages (read at each allocation: a process may change it). */
static int huge_wanted(void)
{
    const char *v = getenv("NARWHAL_HUGE_PAGES");
    return !v || strcmp(v, "off") != 0;
}

void *adf_block_alloc(size_t size)
{
    size_t page = page_size();
    int huge = size >= HUGE_PAGE && huge_wanted();
    size_t align = huge ? HUGE_PAGE : page;
    if (size > SIZE_MAX - 2 * align - page)
        return NULL;
    size_t length = size + align + page; /* a page before the block for its head, then the block aligned */
    void *base = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return NULL;
    uintptr_t at = ((uintptr_t)base + page + align - 1) & ~(uintptr_t)(align - 1);
#ifdef MADV_HUGEPAGE
    /* advice only: without transparent huge pages the block stays on base pages */
    if (huge)
        madvise((void *)at, (size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1), MADV_HUGEPAGE);
#endif
    head *h = (head *)at - 1;
    h->base = base;
    h->length = length;
    h->magic = BLOCK_MAGIC;
    return (void *)at;
}

void adf_block_free(void *p)
{
    if (!p)
        return;
    const head *h = (const head *)p - 1;
    assert(h->magic == BLOCK_MAGIC);
    munmap(h->base, h->length);
}

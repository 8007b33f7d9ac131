/* fault.c: libfault.so, an LD_PRELOAD interposer that makes the N-th allocation, file write or CUDA call of Narwhal's own code fail. */
/*
 * NARWHAL_FAULT, read once when the library loads:
 *   alloc:N   the N-th allocation fails (malloc, calloc, realloc, posix_memalign, aligned_alloc,
 *             memalign, strdup, strndup return NULL with errno ENOMEM)
 *   write:N   the N-th write to a file fails with ENOSPC (write, fwrite, fputs, fputc, fprintf,
 *             vfprintf, fflush, fclose, fsync, ftruncate; rename with EIO): what a full disk does
 *   cuda:N    the N-th CUDA runtime call of a build made with FAULT=1 fails (kernels/gpu_fault.h
 *             asks narwhal_fault_cuda() before each call)
 *   count     nothing fails; the calls are only counted
 * Only the N-th call fails; the ones after it succeed, so that the code's clean-up and its
 * error message have what they need, as after a transient failure.
 * NARWHAL_FAULT_REPORT=FILE: at exit, "alloc A", "write W" and "cuda C" (the calls counted) on
 * three lines, then "injected KIND N at OBJECT(SYMBOL+OFFSET)" when a failure was injected.
 *
 * Which calls count.  Only those made from Narwhal's code: the caller's return address lies in
 * an object that is not a system library (the executable, the actors' .so files, anything
 * outside /usr, /lib, /bin, /sbin, /opt and /etc), never in the C library, libxml2, libgomp or
 * the dynamic loader, whose internal allocations (fopen's buffer, OpenMP's pool) are theirs to
 * handle; and not while a library loads (dlopen) nor before main: the static CUDA runtime linked
 * into a GPU actor, and into narwhal (its pinned buffers), allocates in its constructors, inside
 * our objects but not our code, and does not check.  Writes count only on files: not on descriptors 0-2 (the log), pipes,
 * sockets or terminals.  A run counts the same calls in the same order when it is sequential
 * (narwhal run without --pipeline) and OpenMP has one thread (OMP_NUM_THREADS=1); the fault
 * tests run it so.  Child processes (gnuplot) do not inherit the library: it removes itself
 * from LD_PRELOAD when it loads.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

enum fault_kind { FAULT_ALLOC, FAULT_WRITE, FAULT_CUDA, FAULT_KINDS };
static const char *const kind_names[FAULT_KINDS] = { "alloc", "write", "cuda" };

static struct {
    int kind;              /* the kind that fails, or -1: none (count) */
    unsigned long long at; /* its call number that fails (1: the first) */
    atomic_ullong calls[FAULT_KINDS];
    char injected[512];    /* where the failure went, for the report */
    const char *report;
} fault = { .kind = -1 };

static __thread int busy; /* inside our own bookkeeping: the calls it makes do not count */

/* glibc's allocator under its own names: no dlsym (which allocates) needed for these. */
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t align, size_t n);

/* ---- whose call is it ------------------------------------------------------ */

static bool system_path(const char *path)
{
    static const char *const prefixes[] = { "/usr/", "/lib", "/bin/", "/sbin/", "/opt/", "/etc/" };
    if (!path || !*path || strstr(path, "linux-vdso") || strstr(path, "ld-linux"))
        return true;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(path, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

/* True when the code at `caller` is Narwhal's (see above).  Each object's verdict is
 * remembered by its load address: a run loads a few dozen. */
static bool ours(const void *caller)
{
    static struct {
        const void *base;
        bool ours;
    } seen[64];
    static atomic_int n_seen;
    static const void *self;
    Dl_info info;
    if (!dladdr(caller, &info))
        return false;
    if (!self) {
        Dl_info me;
        if (dladdr((void *)ours, &me))
            self = me.dli_fbase;
    }
    if (info.dli_fbase == self)
        return false;
    int n = atomic_load(&n_seen);
    for (int i = 0; i < n && i < 64; i++)
        if (seen[i].base == info.dli_fbase)
            return seen[i].ours;
    bool verdict = !system_path(info.dli_fname);
    int k = atomic_fetch_add(&n_seen, 1);
    if (k < 64) {
        seen[k].ours = verdict;
        seen[k].base = info.dli_fbase;
    }
    return verdict;
}

/* Counts a call of `kind` from caller; true when it is the one that fails. */
static bool hit(int kind, const void *caller)
{
    if (busy || fault.kind == -2)
        return false;
    busy = 1;
    bool fail = false;
    if (ours(caller)) {
        unsigned long long n = atomic_fetch_add(&fault.calls[kind], 1) + 1;
        if (kind == fault.kind && n == fault.at) {
            Dl_info info;
            fail = true;
            if (dladdr(caller, &info))
                snprintf(fault.injected, sizeof fault.injected, "injected %s %llu at %s(%s+0x%lx)", kind_names[kind], n,
                         info.dli_fname, info.dli_sname ? info.dli_sname : "?",
                         (unsigned long)((const char *)caller - (const char *)(info.dli_saddr ? info.dli_saddr : info.dli_fbase)));
            else
                snprintf(fault.injected, sizeof fault.injected, "injected %s %llu at %p", kind_names[kind], n, caller);
        }
    }
    busy = 0;
    return fail;
}

#define CALLER __builtin_return_address(0)

/* ---- set-up and report ------------------------------------------------------- */

/* Removes this library from LD_PRELOAD, so that programs the run starts are left alone. */
static void leave_children(void)
{
    const char *pre = getenv("LD_PRELOAD");
    if (pre && strstr(pre, "libfault"))
        unsetenv("LD_PRELOAD");
}

__attribute__((constructor)) static void fault_init(void)
{
    const char *spec = getenv("NARWHAL_FAULT");
    fault.report = getenv("NARWHAL_FAULT_REPORT");
    leave_children();
    if (!spec || !*spec) {
        fault.kind = -2; /* not even counted */
        return;
    }
    for (int k = 0; k < FAULT_KINDS; k++) {
        size_t len = strlen(kind_names[k]);
        if (strncmp(spec, kind_names[k], len) == 0 && spec[len] == ':') {
            char *end;
            fault.at = strtoull(spec + len + 1, &end, 10);
            if (*end == '\0' && fault.at > 0)
                fault.kind = k;
        }
    }
    if (fault.kind == -1 && strcmp(spec, "count") != 0) {
        fprintf(stderr, "libfault: NARWHAL_FAULT='%s' is not alloc:N, write:N, cuda:N (N >= 1) or count\n", spec);
        _exit(125);
    }
}

__attribute__((destructor)) static void fault_report(void)
{
    if (!fault.report || fault.kind == -2)
        return;
    busy = 1;
    FILE *fp = fopen(fault.report, "w");
    if (!fp)
        return;
    for (int k = 0; k < FAULT_KINDS; k++)
        fprintf(fp, "%s %llu\n", kind_names[k], (unsigned long long)atomic_load(&fault.calls[k]));
    if (fault.injected[0])
        fprintf(fp, "%s\n", fault.injected);
    fclose(fp);
}

/* For kernels/gpu_fault.h: true when this CUDA call is to fail. */
EXPORT bool narwhal_fault_cuda(void) { return hit(FAULT_CUDA, CALLER); }

/* A library's constructors are not our code (see above). */
EXPORT void *dlopen(const char *file, int mode)
{
    static __typeof__(dlopen) *real_dlopen;
    if (!real_dlopen)
        real_dlopen = (__typeof__(dlopen) *)dlsym(RTLD_NEXT, "dlopen");
    int was = busy;
    busy = 1;
    void *handle = real_dlopen(file, mode);
    busy = was;
    return handle;
}

/* The program's constructors are not our code either (see above): nothing counts until main. */
static int (*program_main)(int, char **, char **);

static int counted_main(int argc, char **argv, char **envp)
{
    busy = 0;
    return program_main(argc, argv, envp);
}

EXPORT int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv, void (*init)(void),
                             void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
    __typeof__(__libc_start_main) *real = (__typeof__(__libc_start_main) *)dlsym(RTLD_NEXT, "__libc_start_main");
    program_main = main;
    busy = 1;
    return real(counted_main, argc, argv, init, fini, rtld_fini, stack_end);
}

/* ---- allocations ---------------------------------------------------------- */

static void *no_memory(void)
{
    errno = ENOMEM;
    return NULL;
}

EXPORT void *malloc(size_t n) { return hit(FAULT_ALLOC, CALLER) ? no_memory() : __libc_malloc(n); }
EXPORT void *calloc(size_t n, size_t size) { return hit(FAULT_ALLOC, CALLER) ? no_memory() : __libc_calloc(n, size); }
EXPORT void *realloc(void *p, size_t n) { return hit(FAULT_ALLOC, CALLER) ? no_memory() : __libc_realloc(p, n); }
EXPORT void *memalign(size_t align, size_t n) { return hit(FAULT_ALLOC, CALLER) ? no_memory() : __libc_memalign(align, n); }
EXPORT void *aligned_alloc(size_t align, size_t n) { return hit(FAULT_ALLOC, CALLER) ? no_memory() : __libc_memalign(align, n); }

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (hit(FAULT_ALLOC, CALLER))
        return ENOMEM;
    void *p = __libc_memalign(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

static char *copy(const char *s, size_t n)
{
    char *p = __libc_malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

EXPORT char *strdup(const char *s) { return hit(FAULT_ALLOC, CALLER) ? no_memory() : copy(s, strlen(s)); }
EXPORT char *strndup(const char *s, size_t n) { return hit(FAULT_ALLOC, CALLER) ? no_memory() : copy(s, strnlen(s, n)); }

/* ---- writes ------------------------------------------------------------------- */

/* The C library's own function of that name, found once. */
#define REAL(name)                                                                                 \
    static __typeof__(name) *real_##name;                                                          \
    if (!real_##name)                                                                              \
        real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

/* A descriptor of a file (not the log's 0-2, a pipe, a socket or a terminal). */
static bool on_file(int fd)
{
    struct stat st;
    return fd > 2 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

static bool write_fails(int fd, const void *caller) { return on_file(fd) && hit(FAULT_WRITE, caller); }

/* A stream whose write failed: as after a real one, ferror() says so. */
static void stream_error(FILE *fp)
{
    fp->_flags |= _IO_ERR_SEEN;
    errno = ENOSPC;
}

EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    REAL(write);
    if (write_fails(fd, CALLER)) {
        errno = ENOSPC;
        return -1;
    }
    return real_write(fd, buf, n);
}

EXPORT size_t fwrite(const void *buf, size_t size, size_t n, FILE *fp)
{
    REAL(fwrite);
    if (write_fails(fileno(fp), CALLER)) {
        stream_error(fp);
        return 0;
    }
    return real_fwrite(buf, size, n, fp);
}

EXPORT int fputs(const char *s, FILE *fp)
{
    REAL(fputs);
    if (write_fails(fileno(fp), CALLER)) {
        stream_error(fp);
        return EOF;
    }
    return real_fputs(s, fp);
}

EXPORT int fputc(int c, FILE *fp)
{
    REAL(fputc);
    if (write_fails(fileno(fp), CALLER)) {
        stream_error(fp);
        return EOF;
    }
    return real_fputc(c, fp);
}

EXPORT int vfprintf(FILE *fp, const char *fmt, va_list ap)
{
    REAL(vfprintf);
    if (write_fails(fileno(fp), CALLER)) {
        stream_error(fp);
        return -1;
    }
    return real_vfprintf(fp, fmt, ap);
}

EXPORT int fprintf(FILE *fp, const char *fmt, ...)
{
    REAL(vfprintf);
    if (write_fails(fileno(fp), CALLER)) {
        stream_error(fp);
        return -1;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = real_vfprintf(fp, fmt, ap);
    va_end(ap);
    return n;
}

EXPORT int fflush(FILE *fp)
{
    REAL(fflush);
    if (fp && write_fails(fileno(fp), CALLER)) {
        stream_error(fp);
        return EOF;
    }
    return real_fflush(fp);
}

/* A close whose last flush failed: the stream is gone all the same. */
EXPORT int fclose(FILE *fp)
{
    REAL(fclose);
    bool fails = write_fails(fileno(fp), CALLER);
    int rc = real_fclose(fp);
    if (fails) {
        errno = ENOSPC;
        return EOF;
    }
    return rc;
}

EXPORT int fsync(int fd)
{
    REAL(fsync);
    if (write_fails(fd, CALLER)) {
        errno = EIO;
        return -1;
    }
    return real_fsync(fd);
}

EXPORT int ftruncate(int fd, off_t len)
{
    REAL(ftruncate);
    if (write_fails(fd, CALLER)) {
        errno = ENOSPC;
        return -1;
    }
    return real_ftruncate(fd, len);
}

EXPORT int rename(const char *from, const char *to)
{
    REAL(rename);
    if (hit(FAULT_WRITE, CALLER)) {
        errno = EIO;
        return -1;
    }
    return real_rename(from, to);
}

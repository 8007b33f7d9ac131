/* publish.c: claims on outputs (OFD locks on lock files) and outputs written under unique temporary names, renamed at the end of a run. */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include "publish.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "narval.h"

enum {
    LOCK_TRIES = 16,  /* a claimant that keeps finding a lock file just released gives up */
    TEMP_TRIES = 100, /* names drawn before concluding the directory is full of them */
};

static const char temp_letters[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/* printf into a new string; NULL when out of memory. */
static char *dup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *dup_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s) {
        va_start(ap, fmt);
        vsnprintf(s, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return s;
}

/* The lock file of a claim on path (see publish.h) into *lock; NARVAL_E_CONFIG
 * for a file path that ends with '/', NARVAL_E_NOMEM. */
static unsigned lock_path(const char *path, bool directory, char **lock, char *msg, size_t len)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    if (!directory && (n == 0 || path[n - 1] == '/' || path[n] == '/')) {
        snprintf(msg, len, "output '%s' names a directory, not a file", path);
        return NARVAL_E_CONFIG;
    }
    const char *slash = memrchr(path, '/', n);
    int dir = slash ? (int)(slash - path) : 0, name = (int)n - (slash ? dir + 1 : 0);
    if (directory)
        *lock = dup_printf("%.*s/.narwhal.lock", (int)n, path);
    else if (slash)
        *lock = dup_printf("%.*s/.%.*s.lock", dir, path, name, slash + 1);
    else
        *lock = dup_printf(".%.*s.lock", name, path);
    if (*lock)
        return 0;
    snprintf(msg, len, "out of memory claiming '%s'", path);
    return NARVAL_E_NOMEM;
}

/* Opens and locks the lock file: 0, EWOULDBLOCK when another holds it, or an errno.
 * A holder that releases removes the file before it closes it, so a lock won on
 * a file that no longer has the name is worthless: the loop opens the name again. */
static int lock_file(const char *lock, int *fd_out)
{
    for (int attempt = 0; attempt < LOCK_TRIES; attempt++) {
        int fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0)
            return errno;
        struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET }; /* the whole file */
        if (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
            int err = errno;
            close(fd);
            return err == EAGAIN || err == EACCES ? EWOULDBLOCK : err;
        }
        struct stat held, named;
        if (fstat(fd, &held) == 0 && lstat(lock, &named) == 0 && held.st_dev == named.st_dev &&
            held.st_ino == named.st_ino) {
            *fd_out = fd;
            return 0;
        }
        close(fd);
    }
    return EWOULDBLOCK;
}

/* The directories leading to file (mkdir -p of its folder), so that an
 * output may name a folder the run is the first to write; 0 or an errno. */
static int make_parents(const char *file)
{
    char *p = strdup(file);
    if (!p)
        return ENOMEM;
    int err = 0;
    for (char *s = strchr(p + 1, '/'); s && !err; s = strchr(s + 1, '/')) {
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            err = errno;
        *s = '/';
    }
    free(p);
    return err;
}

unsigned kit_claim_output(kit_claim *c, const char *path, bool directory, const char *key,
                          const char *conf_file, char *msg, size_t len)
{
    char *lock = NULL;
    kit_claim_release(c);
    unsigned code = lock_path(path, directory, &lock, msg, len);
    if (code)
        return code;
    int fd = -1, err = lock_file(lock, &fd);
    if (err == ENOENT && (err = make_parents(lock)) == 0)
        err = lock_file(lock, &fd);
    if (err == 0) {
        c->lock = lock;
        c->fd = fd;
        return 0;
    }
    if (err == EWOULDBLOCK)
        snprintf(msg, len, "output%s '%s' is already being written by another live instance: "
                 "change key '%s' in %s", directory ? " directory" : "", path, key, conf_file);
    else
        snprintf(msg, len, "cannot claim output%s '%s': lock file '%s': %s",
                 directory ? " directory" : "", path, lock, strerror(err));
    free(lock);
    return err == EWOULDBLOCK ? NARVAL_E_CONFIG : NARVAL_E_IO;
}

void kit_claim_release(kit_claim *c)
{
    if (!c->lock)
        return;
    unlink(c->lock); /* before the lock drops: see lock_file */
    close(c->fd);
    free(c->lock);
    c->lock = NULL;
    c->fd = -1;
}

char *kit_instance_output(const char *configured, bool directory, unsigned number, const char *key,
                          char *note, size_t len)
{
    if (len)
        note[0] = '\0';
    if (number <= 1)
        return strdup(configured);
    char *out;
    if (directory) {
        size_t n = strlen(configured);
        while (n > 1 && configured[n - 1] == '/')
            n--;
        bool root = n == 1 && configured[0] == '/';
        out = dup_printf("%.*s/instance-%u", root ? 0 : (int)n, configured, number);
    } else {
        const char *slash = strrchr(configured, '/'), *base = slash ? slash + 1 : configured;
        const char *dot = strrchr(base, '.');
        size_t at = dot && dot != base ? (size_t)(dot - configured) : strlen(configured);
        out = dup_printf("%.*s.%u%s", (int)at, configured, number, configured + at);
    }
    if (out)
        snprintf(note, len, "instance %u of this configuration writes '%s' (key '%s' names '%s', "
                 "which instance 1 writes)", number, out, key, configured);
    return out;
}

/* Replaces the six X before ".part" at the end of temp with random letters and digits. */
static int draw_name(char *temp)
{
    unsigned char r[6];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
        return errno ? errno : EIO;
    char *x = temp + strlen(temp) - sizeof ".part" + 1 - sizeof r;
    for (size_t i = 0; i < sizeof r; i++)
        x[i] = temp_letters[r[i] % (sizeof temp_letters - 1)];
    return 0;
}

unsigned kit_output_open(kit_output *o, const char *path, char *msg, size_t len)
{
    if (o->temp) {
        snprintf(msg, len, "'%s' is opened while '%s' is still being written", path, o->temp);
        return NARVAL_E_INTERNAL;
    }
    char *final = strdup(path), *temp = dup_printf("%s.XXXXXX.part", path);
    int err = final && temp ? EEXIST : ENOMEM, fd = -1;
    for (int tries = 0; fd < 0 && err == EEXIST && tries < TEMP_TRIES; tries++) {
        if ((err = draw_name(temp)) != 0)
            break;
        fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        err = fd < 0 ? errno : 0;
    }
    if (fd < 0) {
        if (err == ENOMEM)
            snprintf(msg, len, "out of memory opening '%s'", path);
        else
            snprintf(msg, len, "cannot create a temporary file for '%s' (%s): %s", path,
                     temp, err == EEXIST ? "every name drawn exists" : strerror(err));
        free(final);
        free(temp);
        return err == ENOMEM ? NARVAL_E_NOMEM : NARVAL_E_IO;
    }
    *o = (kit_output){ .path = final, .temp = temp, .fd = fd, .fp = NULL };
    return 0;
}

unsigned kit_output_write(kit_output *o, const void *buf, size_t n, char *msg, size_t len)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t done = o->temp && o->fd >= 0 ? write(o->fd, p, n) : (errno = EBADF, -1);
        if (done < 0 && errno == EINTR)
            continue;
        if (done < 0) {
            snprintf(msg, len, "cannot write '%s': %s", o->temp ? o->temp : "(no file)",
                     strerror(errno));
            return NARVAL_E_IO;
        }
        p += done;
        n -= (size_t)done;
    }
    return 0;
}

FILE *kit_output_stream(kit_output *o, char *msg, size_t len)
{
    if (o->fp)
        return o->fp;
    if (!o->temp || o->fd < 0) {
        snprintf(msg, len, "no temporary file is open for '%s'", o->path ? o->path : "(none)");
        return NULL;
    }
    if (!(o->fp = fdopen(o->fd, "wb"))) {
        snprintf(msg, len, "cannot write '%s': %s", o->temp, strerror(errno));
        return NULL;
    }
    o->fd = -1;
    return o->fp;
}

unsigned kit_output_close(kit_output *o, bool sync, char *msg, size_t len)
{
    int err = 0;
    if (!o->temp)
        return 0;
    if (o->fp) {
        errno = 0;
        if (fflush(o->fp) != 0 || ferror(o->fp))
            err = errno ? errno : EIO;
        if (!err && sync && fsync(fileno(o->fp)) != 0)
            err = errno;
        if (fclose(o->fp) != 0 && !err)
            err = errno;
        o->fp = NULL;
    } else if (o->fd >= 0) {
        if (sync && fsync(o->fd) != 0)
            err = errno;
        if (close(o->fd) != 0 && !err && errno != EINTR)
            err = errno;
        o->fd = -1;
    }
    if (err)
        snprintf(msg, len, "cannot write '%s': %s", o->temp, strerror(err));
    return err ? NARVAL_E_IO : 0;
}

unsigned kit_output_publish(kit_output *o, bool sync, char *msg, size_t len)
{
    if (!o->temp) {
        snprintf(msg, len, "nothing to publish as '%s'", o->path ? o->path : "(no file)");
        return NARVAL_E_INTERNAL;
    }
    unsigned code = kit_output_close(o, sync, msg, len);
    if (!code && rename(o->temp, o->path) != 0) {
        snprintf(msg, len, "cannot rename '%s' to '%s': %s", o->temp, o->path, strerror(errno));
        code = NARVAL_E_IO;
    }
    if (!code) {
        free(o->temp);
        o->temp = NULL;
    }
    kit_output_discard(o);
    return code;
}

void kit_output_discard(kit_output *o)
{
    char ignored[1];
    kit_output_close(o, false, ignored, sizeof ignored);
    if (o->temp)
        unlink(o->temp);
    free(o->temp);
    free(o->path);
    *o = (kit_output){ .fd = -1 };
}

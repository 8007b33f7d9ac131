/* paths.c: what the files a configuration names must be before a run: inputs readable, outputs writable. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kit.h"

/* "CONF:LINE: key 'KEY': " (no line for a default) into msg; returns the length written. */
static size_t where_key(char *msg, size_t len, const char *conf, unsigned line, const char *key)
{
    int n = line ? snprintf(msg, len, "%s:%u: key '%s': ", conf, line, key)
                 : snprintf(msg, len, "%s: key '%s' (its default): ", conf, key);
    return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

unsigned kit_check_input(const char *path, const char *key, const char *conf, unsigned line, char *msg,
                         size_t len)
{
    struct stat st;
    size_t at = where_key(msg, len, conf, line, key);
    if (!path || !*path)
        snprintf(msg + at, len - at, "names no file (an empty name)");
    else if (stat(path, &st) != 0 || (!S_ISDIR(st.st_mode) && access(path, R_OK) != 0))
        snprintf(msg + at, len - at, "file '%s': %s", path, strerror(errno));
    else if (S_ISDIR(st.st_mode))
        snprintf(msg + at, len - at, "file '%s' is a directory", path);
    else
        return 0;
    return NARVAL_E_CONFIG;
}

/* The nearest folder of path that exists (path itself excluded) into dir. */
static void existing_folder(const char *path, char *dir, size_t len)
{
    snprintf(dir, len, "%s", path);
    for (;;) {
        char *slash = strrchr(dir, '/');
        while (slash && slash > dir && slash[1] == '\0') { /* trailing slashes */
            *slash = '\0';
            slash = strrchr(dir, '/');
        }
        if (!slash) {
            snprintf(dir, len, ".");
            return;
        }
        slash[slash == dir] = '\0'; /* "/x" -> "/" */
        struct stat st;
        if (stat(dir, &st) == 0 || slash == dir)
            return;
    }
}

unsigned kit_check_output(const char *path, bool directory, const char *key, const char *conf, unsigned line,
                          char *msg, size_t len)
{
    struct stat st;
    char dir[PATH_MAX];
    size_t at = where_key(msg, len, conf, line, key);
    if (!path || !*path) {
        snprintf(msg + at, len - at, "names no %s (an empty name)", directory ? "directory" : "file");
        return NARVAL_E_CONFIG;
    }
    bool exists = stat(path, &st) == 0;
    if (!directory && (path[strlen(path) - 1] == '/' || (exists && S_ISDIR(st.st_mode)))) {
        snprintf(msg + at, len - at, "output '%s' is a directory, not a file", path);
        return NARVAL_E_CONFIG;
    }
    if (directory && exists && !S_ISDIR(st.st_mode)) {
        snprintf(msg + at, len - at, "output directory '%s' is a file", path);
        return NARVAL_E_CONFIG;
    }
    if (directory && exists) {
        snprintf(dir, sizeof dir, "%s", path);
    } else {
        existing_folder(path, dir, sizeof dir);
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            snprintf(msg + at, len - at, "output '%s' cannot be made: '%s' is not a directory", path, dir);
            return NARVAL_E_CONFIG;
        }
    }
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(msg + at, len - at, "output '%s' cannot be written: directory '%s': %s", path, dir,
                 strerror(errno));
        return NARVAL_E_CONFIG;
    }
    return 0;
}

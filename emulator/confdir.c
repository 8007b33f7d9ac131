/* confdir.c: each actor's configuration: the directories searched, the files found, the one directory process_config gets. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "confdir.h"
#include "emu.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int out_of_memory(char *err, size_t errlen) { return emu_fail(err, errlen, EMU_E_TOPOLOGY, "out of memory"); }

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    if (path)
        snprintf(path, n, "%s/%s", dir, name);
    return path;
}

/* A name that is one directory entry of our own making: no '/', no "..",
 * not hidden (the private tree keeps its own entries under '.' names). */
static int is_plain_name(const char *name)
{
    return name[0] != '\0' && name[0] != '.' && !strchr(name, '/') && strlen(name) <= NAME_MAX;
}

/* Appends dir (taken over) to a's search list unless it is there already. */
static int add_search(emu_conf *a, char *dir)
{
    if (!dir)
        return -1;
    for (size_t i = 0; i < a->n_search; i++)
        if (strcmp(a->search[i], dir) == 0) {
            free(dir);
            return 0;
        }
    char **grown = realloc(a->search, (a->n_search + 1) * sizeof *grown);
    if (!grown) {
        free(dir);
        return -1;
    }
    a->search = grown;
    a->search[a->n_search++] = dir;
    return 0;
}

/* dir/actor (when the actor's name can be a directory's), then dir. */
static int add_pair(emu_conf *a, const char *dir, const char *actor)
{
    if (is_plain_name(actor) && add_search(a, join(dir, actor)) != 0)
        return -1;
    return add_search(a, strdup(dir));
}

/* conf/NAME/<actor>/, conf/<actor>/, conf/NAME/, conf/ beside the topology NAME.xml. */
static int default_search(const emu_topology *t, const char *actor, emu_conf *a)
{
    const char *base = strrchr(t->path, '/');
    base = base ? base + 1 : t->path;
    char *stem = strndup(base, strcspn(base, "."));
    char *conf = join(t->dir, "conf");
    char *own = stem && conf && is_plain_name(stem) ? join(conf, stem) : NULL;
    int rc = stem && conf ? 0 : -1;
    if (rc == 0 && own && is_plain_name(actor))
        rc = add_search(a, join(own, actor));
    if (rc == 0 && is_plain_name(actor))
        rc = add_search(a, join(conf, actor));
    if (rc == 0 && own)
        rc = add_search(a, strdup(own));
    if (rc == 0)
        rc = add_search(a, strdup(conf));
    free(stem);
    free(conf);
    free(own);
    return rc;
}

/* D1/<actor>/, D1, D2/<actor>/, D2, ... for the ':'-separated list; an empty item is ".". */
static int listed_search(const char *list, const char *actor, emu_conf *a)
{
    for (const char *d = list;; d++) {
        size_t n = strcspn(d, ":");
        char *dir = n ? strndup(d, n) : strdup(".");
        int rc = dir ? add_pair(a, dir, actor) : -1;
        free(dir);
        if (rc != 0)
            return rc;
        d += n;
        if (!*d)
            return 0;
    }
}

static int search_list(const emu_topology *t, const emu_actor_spec *spec, emu_conf *a)
{
    if (spec->conf_dir)
        return add_search(a, strdup(spec->conf_dir));
    if (t->conf_list)
        return listed_search(t->conf_list, spec->name, a);
    return default_search(t, spec->name, a);
}

static int has_file(const emu_conf *a, const char *name)
{
    for (size_t i = 0; i < a->n_files; i++)
        if (strcmp(a->files[i].name, name) == 0)
            return 1;
    return 0;
}

/* Adds dir/name unless a more specific directory gave that name already; an
 * entry whose target does not exist (a dangling link) is not a file to see. */
static int add_file(emu_conf *a, const char *dir, const char *name)
{
    if (has_file(a, name))
        return 0;
    char *path = join(dir, name);
    if (!path)
        return -1;
    char *source = realpath(path, NULL);
    free(path);
    if (!source)
        return errno == ENOMEM ? -1 : 0;
    emu_conf_file *grown = realloc(a->files, (a->n_files + 1) * sizeof *grown);
    if (grown)
        a->files = grown;
    char *copy = grown ? strdup(name) : NULL;
    if (!copy) {
        free(source);
        return -1;
    }
    a->files[a->n_files++] = (emu_conf_file){.name = copy, .source = source};
    return 0;
}

/* The entries of one searched directory; a directory that does not exist is
 * skipped, one that exists and cannot be read is an error. */
static int scan_dir(emu_conf *a, const char *dir, size_t *found, char *err, size_t errlen)
{
    DIR *dp = opendir(dir);
    if (!dp) {
        if (errno == ENOENT || errno == ENOTDIR)
            return EMU_OK;
        return emu_fail(err, errlen, EMU_E_TOPOLOGY, "configuration directory %s: cannot read: %s", dir,
                        strerror(errno));
    }
    if (++*found == 1)
        a->only = dir;
    struct dirent *e;
    int rc = EMU_OK;
    while (rc == EMU_OK && (e = readdir(dp)))
        if (e->d_name[0] != '.' && add_file(a, dir, e->d_name) != 0)
            rc = out_of_memory(err, errlen);
    closedir(dp);
    return rc;
}

static int by_name(const void *x, const void *y)
{
    return strcmp(((const emu_conf_file *)x)->name, ((const emu_conf_file *)y)->name);
}

static int resolve_actor(const emu_topology *t, size_t k, emu_conf *a, char *err, size_t errlen)
{
    size_t found = 0;
    if (search_list(t, &t->actors[k], a) != 0)
        return out_of_memory(err, errlen);
    for (size_t i = 0; i < a->n_search; i++) {
        int rc = scan_dir(a, a->search[i], &found, err, errlen);
        if (rc != EMU_OK)
            return rc;
    }
    if (found != 1)
        a->only = NULL;
    if (a->n_files > 1)
        qsort(a->files, a->n_files, sizeof *a->files, by_name);
    return EMU_OK;
}

int emu_confs_resolve(const emu_topology *t, emu_confs **out, char *err, size_t errlen)
{
    emu_confs *c = calloc(1, sizeof *c);
    *out = NULL;
    if (!c || !(c->actors = calloc(t->n_actors ? t->n_actors : 1, sizeof *c->actors))) {
        free(c);
        return out_of_memory(err, errlen);
    }
    c->n = t->n_actors;
    for (size_t k = 0; k < c->n; k++) {
        int rc = resolve_actor(t, k, &c->actors[k], err, errlen);
        if (rc != EMU_OK) {
            emu_confs_free(c);
            return rc;
        }
    }
    *out = c;
    return EMU_OK;
}

int emu_confs_same(const emu_confs *c, size_t a, size_t b)
{
    const emu_conf *x = &c->actors[a], *y = &c->actors[b];
    if (x->n_files != y->n_files)
        return 0;
    for (size_t i = 0; i < x->n_files; i++)
        if (strcmp(x->files[i].name, y->files[i].name) != 0 || strcmp(x->files[i].source, y->files[i].source) != 0)
            return 0;
    return 1;
}

static int make_root(emu_confs *c, char *err, size_t errlen)
{
    if (c->root)
        return EMU_OK;
    const char *tmp = getenv("TMPDIR");
    char *root = join(tmp && *tmp ? tmp : "/tmp", "narwhal-XXXXXX");
    if (!root)
        return out_of_memory(err, errlen);
    if (!mkdtemp(root)) {
        int rc = emu_fail(err, errlen, EMU_E_TOPOLOGY, "cannot make the private directory %s: %s", root,
                          strerror(errno));
        free(root);
        return rc;
    }
    c->root = root;
    return EMU_OK;
}

/* root/name, made; the path in *out (malloc'd). */
static int make_dir(const char *root, const char *name, char **out, char *err, size_t errlen)
{
    *out = join(root, name);
    if (!*out)
        return out_of_memory(err, errlen);
    if (mkdir(*out, 0700) == 0 || errno == EEXIST)
        return EMU_OK;
    int rc = emu_fail(err, errlen, EMU_E_TOPOLOGY, "cannot make the private directory %s: %s", *out, strerror(errno));
    free(*out);
    *out = NULL;
    return rc;
}

static int link_files(const emu_conf *a, const char *dir, char *err, size_t errlen)
{
    for (size_t i = 0; i < a->n_files; i++) {
        char *at = join(dir, a->files[i].name);
        if (!at)
            return out_of_memory(err, errlen);
        int ok = symlink(a->files[i].source, at) == 0;
        int rc = ok ? EMU_OK
                    : emu_fail(err, errlen, EMU_E_TOPOLOGY, "cannot link %s to %s: %s", at, a->files[i].source,
                               strerror(errno));
        free(at);
        if (rc != EMU_OK)
            return rc;
    }
    return EMU_OK;
}

int emu_confs_dir(emu_confs *c, const emu_topology *t, size_t k, char *err, size_t errlen)
{
    emu_conf *a = &c->actors[k];
    if (a->dir)
        return EMU_OK;
    if (a->only) {
        a->dir = strdup(a->only);
        return a->dir ? EMU_OK : out_of_memory(err, errlen);
    }
    char fallback[32];
    const char *name = t->actors[k].name;
    if (!is_plain_name(name)) {
        snprintf(fallback, sizeof fallback, ".actor%zu", k);
        name = fallback;
    }
    char *dir = NULL;
    int rc = make_root(c, err, errlen);
    if (rc == EMU_OK)
        rc = make_dir(c->root, name, &dir, err, errlen);
    if (rc == EMU_OK)
        rc = link_files(a, dir, err, errlen);
    if (rc != EMU_OK) {
        free(dir);
        return rc;
    }
    a->dir = dir;
    a->is_private = 1;
    return EMU_OK;
}

/* Copies from into the new file to (created, never overwritten). */
static int copy_file(const char *from, const char *to, char *err, size_t errlen)
{
    char buf[65536];
    int in = open(from, O_RDONLY | O_CLOEXEC);
    int out = in < 0 ? -1 : open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
    ssize_t n = 0;
    while (out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n) {
            n = -1;
            break;
        }
    int saved = errno;
    int ok = in >= 0 && out >= 0 && n == 0;
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    if (ok)
        return EMU_OK;
    return emu_fail(err, errlen, EMU_E_TOPOLOGY, "cannot copy library %s to %s: %s", from, to, strerror(saved));
}

int emu_confs_copy(emu_confs *c, size_t k, const char *path, char **copy, char *err, size_t errlen)
{
    char slot[32];
    char *libs = NULL, *dir = NULL;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(slot, sizeof slot, "%zu", k);
    *copy = NULL;
    int rc = make_root(c, err, errlen);
    if (rc == EMU_OK)
        rc = make_dir(c->root, ".libs", &libs, err, errlen);
    if (rc == EMU_OK)
        rc = make_dir(libs, slot, &dir, err, errlen);
    if (rc == EMU_OK && !(*copy = join(dir, base)))
        rc = out_of_memory(err, errlen);
    if (rc == EMU_OK)
        rc = copy_file(path, *copy, err, errlen);
    if (rc != EMU_OK) {
        free(*copy);
        *copy = NULL;
    }
    free(libs);
    free(dir);
    return rc;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) { return remove(path); }

void emu_confs_free(emu_confs *c)
{
    if (!c)
        return;
    if (c->root)
        nftw(c->root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    for (size_t k = 0; k < c->n; k++) {
        emu_conf *a = &c->actors[k];
        for (size_t i = 0; i < a->n_search; i++)
            free(a->search[i]);
        for (size_t i = 0; i < a->n_files; i++) {
            free(a->files[i].name);
            free(a->files[i].source);
        }
        free(a->search);
        free(a->files);
        free(a->dir);
    }
    free(c->actors);
    free(c->root);
    free(c);
}

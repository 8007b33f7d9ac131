/* loader.c: finds actor libraries, loads them with dlopen and resolves their process_* symbols. */
#include "loader.h"
#include "origin.h"
#include "emu.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SYMBOL(name, kind, field) {name, kind, offsetof(emu_library, field)}
const emu_symbol emu_symbols[] = {
    SYMBOL("process_config", EMU_SYM_MANDATORY, config),
    SYMBOL("process_register", EMU_SYM_MANDATORY, register_instance),
    SYMBOL("process_initialise", EMU_SYM_MANDATORY, initialise),
    SYMBOL("process_block", EMU_SYM_MANDATORY, block),
    SYMBOL("process_start", EMU_SYM_OPTIONAL, start),
    SYMBOL("process_stop", EMU_SYM_OPTIONAL, stop),
    SYMBOL("process_pause", EMU_SYM_OPTIONAL, pause),
    SYMBOL("process_resume", EMU_SYM_OPTIONAL, resume),
    SYMBOL("process_reset", EMU_SYM_OPTIONAL, reset),
    SYMBOL("process_unload", EMU_SYM_OPTIONAL, unload),
    SYMBOL("process_describe", EMU_SYM_EXTENSION, describe),
    SYMBOL("process_progress", EMU_SYM_EXTENSION, progress),
    SYMBOL("process_spectra", EMU_SYM_EXTENSION, spectra),
    SYMBOL("process_device", EMU_SYM_EXTENSION, device),
};
const size_t emu_n_symbols = sizeof emu_symbols / sizeof emu_symbols[0];

static char *join(const char *dir, const char *name)
{
    while (name[0] == '.' && name[1] == '/')
        name += 2;
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    if (path)
        snprintf(path, n, "%s/%s", dir, name);
    return path;
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int emu_library_locate(const char *name, const char *base_dir, const char *const *dirs, size_t n_dirs, char **path,
                       char *err, size_t errlen)
{
    *path = NULL;
    if (strchr(name, '/')) {
        *path = name[0] == '/' || !base_dir ? strdup(name) : join(base_dir, name);
        if (!*path)
            return emu_fail(err, errlen, EMU_E_TOPOLOGY, "out of memory");
        if (is_file(*path))
            return EMU_OK;
        int rc = emu_fail(err, errlen, EMU_E_TOPOLOGY, "library '%s' not found (no file %s)", name, *path);
        free(*path);
        *path = NULL;
        return rc;
    }
    for (size_t i = 0; i < n_dirs; i++) {
        char *candidate = join(dirs[i], name);
        if (!candidate)
            return emu_fail(err, errlen, EMU_E_TOPOLOGY, "out of memory");
        if (is_file(candidate)) {
            *path = candidate;
            return EMU_OK;
        }
        free(candidate);
    }
    int n = snprintf(err, errlen, "library '%s' not found in", name);
    for (size_t i = 0; i < n_dirs && n >= 0 && (size_t)n < errlen; i++)
        n += snprintf(err + n, errlen - (size_t)n, "%s %s", i ? "," : "", dirs[i]);
    if (n_dirs == 0)
        snprintf(err, errlen, "library '%s' not found: no actor directory to look in", name);
    return EMU_E_TOPOLOGY;
}

int emu_library_open(const char *path, emu_library *lib, char *err, size_t errlen)
{
    char real[PATH_MAX];
    memset(lib, 0, sizeof *lib);
    lib->path = strdup(path);
    lib->identity = strdup(realpath(path, real) ? real : path);
    if (!lib->path || !lib->identity) {
        emu_library_close(lib);
        return emu_fail(err, errlen, EMU_E_TOPOLOGY, "out of memory");
    }
    dlerror();
    /* RTLD_NODELETE: an actor may bring in a library whose threads outlive
     * it (libgomp's OpenMP workers); unmapping their code under them at
     * dlclose would crash the process. */
    lib->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib->handle) {
        const char *why = dlerror();
        size_t n = strlen(path);
        /* dlerror() starts with the path we already name. */
        if (why && strncmp(why, path, n) == 0 && strncmp(why + n, ": ", 2) == 0)
            why += n + 2;
        int rc = emu_fail(err, errlen, EMU_E_TOPOLOGY, "cannot load library %s: %s", path,
                          why ? why : "dlopen failed");
        emu_library_close(lib);
        return rc;
    }
    for (size_t i = 0; i < emu_n_symbols; i++) {
        /* POSIX lets a data pointer from dlsym hold a function's address;
         * memcpy moves it into the typed pointer without a cast C forbids. */
        void *address = dlsym(lib->handle, emu_symbols[i].name);
        memcpy((char *)lib + emu_symbols[i].offset, &address, sizeof address);
    }
    narval_host_fn *host;
    void *address = dlsym(lib->handle, "process_host"); /* where frames come from (origin.h) */
    memcpy(&host, &address, sizeof host);
    if (host)
        host(emu_origin_host());
    return EMU_OK;
}

int emu_library_has(const emu_library *lib, size_t i)
{
    void *address;
    memcpy(&address, (const char *)lib + emu_symbols[i].offset, sizeof address);
    return address != NULL;
}

const char *emu_library_missing(const emu_library *lib)
{
    for (size_t i = 0; i < emu_n_symbols; i++)
        if (emu_symbols[i].kind == EMU_SYM_MANDATORY && !emu_library_has(lib, i))
            return emu_symbols[i].name;
    return NULL;
}

void emu_library_close(emu_library *lib)
{
    if (lib->handle)
        dlclose(lib->handle);
    free(lib->path);
    free(lib->identity);
    memset(lib, 0, sizeof *lib);
}

size_t emu_chain_first_actor(const emu_chain *c, size_t lib)
{
    size_t k = 0;
    while (c->library_of[k] != lib)
        k++;
    return k;
}

/* A library has one process_block, so every actor naming one file (copies
 * included) has one role. */
static int check_same_role(const emu_chain *c, size_t actor, char *err, size_t errlen)
{
    const emu_topology *t = c->topology;
    const emu_actor_spec *a = &t->actors[actor];
    const char *identity = c->libraries[c->library_of[actor]].identity;
    for (size_t i = 0; i < actor; i++)
        if (strcmp(c->libraries[c->library_of[i]].identity, identity) == 0 && t->actors[i].role != a->role)
            return emu_fail_at(err, errlen, a->library_file, a->library_line,
                               "library '%s' serves %s '%s' and %s '%s': its process_block has one role's signature",
                               a->library, emu_role_name(t->actors[i].role), t->actors[i].name,
                               emu_role_name(a->role), a->name);
    return EMU_OK;
}

/* Opens path (the library, or its copy) as the chain's next library, for actor k. */
static int load_new(emu_chain *c, size_t k, const char *path, const char *identity, char *err, size_t errlen)
{
    const emu_actor_spec *a = &c->topology->actors[k];
    char why[1024];
    emu_library *lib = &c->libraries[c->n_libraries];
    if (emu_library_open(path, lib, why, sizeof why) != EMU_OK)
        return emu_fail_at(err, errlen, a->library_file, a->library_line, "%s", why);
    const char *missing = emu_library_missing(lib);
    char *own = strdup(identity);
    if (missing || !own) {
        emu_library_close(lib);
        free(own);
        if (!own)
            return emu_fail(err, errlen, EMU_E_TOPOLOGY, "out of memory");
        return emu_fail_at(err, errlen, a->library_file, a->library_line,
                           "library %s of '%s' lacks %s, which every actor must export", path, a->name, missing);
    }
    free(lib->identity);
    lib->identity = own;
    c->n_libraries++;
    return EMU_OK;
}

/* The library loaded for an earlier actor that k may share (same file, same
 * configuration files), or -1; *same_file tells whether the file is loaded
 * already, for another configuration. */
static long find_shared(const emu_chain *c, size_t k, const char *identity, int *same_file)
{
    *same_file = 0;
    for (size_t lib = 0; lib < c->n_libraries; lib++) {
        if (strcmp(c->libraries[lib].identity, identity) != 0)
            continue;
        *same_file = 1;
        if (emu_confs_same(c->confs, emu_chain_first_actor(c, lib), k))
            return (long)lib;
    }
    return -1;
}

/* Loads the library of actor k, or a private copy of it when the file is
 * loaded already for actors that see other configuration files. */
static int load_library(emu_chain *c, size_t k, const char *path, const char *identity, char *err, size_t errlen)
{
    const emu_actor_spec *a = &c->topology->actors[k];
    int same_file;
    long shared = find_shared(c, k, identity, &same_file);
    if (shared >= 0) {
        c->library_of[k] = (size_t)shared;
        return EMU_OK;
    }
    char *copy = NULL, why[1024];
    if (same_file && emu_confs_copy(c->confs, k, path, &copy, why, sizeof why) != EMU_OK)
        return emu_fail_at(err, errlen, a->library_file, a->library_line, "%s '%s': %s", emu_role_name(a->role),
                           a->name, why);
    int rc = load_new(c, k, copy ? copy : path, identity, err, errlen);
    free(copy);
    if (rc != EMU_OK)
        return rc;
    c->library_of[k] = c->n_libraries - 1;
    c->libraries[c->n_libraries - 1].private_copy = same_file;
    if (emu_confs_dir(c->confs, c->topology, k, why, sizeof why) != EMU_OK)
        return emu_fail(err, errlen, EMU_E_TOPOLOGY, "%s '%s': %s", emu_role_name(a->role), a->name, why);
    c->libraries[c->n_libraries - 1].conf_dir = c->confs->actors[k].dir;
    return EMU_OK;
}

static int load_actor(emu_chain *c, size_t actor, const char *const *dirs, size_t n_dirs, char *err, size_t errlen)
{
    const emu_topology *t = c->topology;
    const emu_actor_spec *a = &t->actors[actor];
    char why[1024], real[PATH_MAX];
    char *path = NULL;
    if (!a->library)
        return emu_fail_at(err, errlen, t->path, a->line,
                           "%s '%s' has no <library>: name its shared object there, or in a main configuration file "
                           "(set library LIB INSTANCE %s) given with --main",
                           emu_role_name(a->role), a->name, a->name);
    if (emu_library_locate(a->library, a->library_dir, dirs, n_dirs, &path, why, sizeof why) != EMU_OK)
        return emu_fail_at(err, errlen, a->library_file, a->library_line, "%s '%s': %s", emu_role_name(a->role),
                           a->name, why);
    int rc = load_library(c, actor, path, realpath(path, real) ? real : path, err, errlen);
    free(path);
    return rc == EMU_OK ? check_same_role(c, actor, err, errlen) : rc;
}

int emu_chain_load(const emu_topology *t, const char *const *dirs, size_t n_dirs, emu_chain **out, char *err,
                   size_t errlen)
{
    int rc = EMU_OK;
    emu_chain *c = calloc(1, sizeof *c);
    *out = NULL;
    if (!c)
        return emu_fail(err, errlen, EMU_E_TOPOLOGY, "out of memory");
    c->topology = t;
    c->libraries = calloc(t->n_actors, sizeof *c->libraries);
    c->library_of = calloc(t->n_actors, sizeof *c->library_of);
    if (!c->libraries || !c->library_of) {
        rc = emu_fail(err, errlen, EMU_E_TOPOLOGY, "out of memory");
        goto fail;
    }
    rc = emu_confs_resolve(t, &c->confs, err, errlen);
    for (size_t i = 0; i < t->n_actors && rc == EMU_OK; i++)
        rc = load_actor(c, i, dirs, n_dirs, err, errlen);
    if (rc != EMU_OK)
        goto fail;
    *out = c;
    return EMU_OK;
fail:
    emu_chain_free(c);
    return rc;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void print_files(FILE *out, const char *actor, const emu_conf *conf)
{
    for (size_t i = 0; i < conf->n_files; i++)
        fprintf(out, "narwhal: %s:   %s <- %s\n", actor, conf->files[i].name, conf->files[i].source);
    if (conf->n_files)
        return;
    fprintf(out, "narwhal: %s:   no configuration file in", actor);
    for (size_t i = 0; i < conf->n_search; i++)
        fprintf(out, "%s %s", i ? "," : "", conf->search[i]);
    fputc('\n', out);
}

void emu_chain_print_conf(FILE *out, const emu_chain *c)
{
    for (size_t k = 0; k < c->topology->n_actors; k++) {
        const char *name = c->topology->actors[k].name;
        size_t lib = c->library_of[k], first = emu_chain_first_actor(c, lib);
        const emu_library *l = &c->libraries[lib];
        if (first != k) {
            fprintf(out, "narwhal: %s: shares the library and the configuration of '%s'\n", name,
                    c->topology->actors[first].name);
            continue;
        }
        size_t like = 0;
        while (like < k && !emu_confs_same(c->confs, like, k))
            like++;
        fprintf(out, "narwhal: %s: process_config gets %s%s", name, l->conf_dir,
                c->confs->actors[k].is_private ? " (links made for it)" : "");
        if (like < k)
            fprintf(out, ": the files '%s' sees", c->topology->actors[like].name);
        fputc('\n', out);
        if (l->private_copy)
            fprintf(out, "narwhal: %s: its own copy of %s (other actors use the library with other files): %s\n", name,
                    base_name(l->identity), l->path);
        if (like == k)
            print_files(out, name, &c->confs->actors[k]);
    }
}

void emu_chain_free(emu_chain *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_libraries; i++)
        emu_library_close(&c->libraries[i]);
    emu_confs_free(c->confs);
    free(c->libraries);
    free(c->library_of);
    free(c);
}

/* host_load.c: opens an actor library with dlopen and resolves its process_* symbols by name, as NARVAL's generic binaries do. */
#include <dlfcn.h>
#include <stdio.h>

#include "host.h"

/* The symbol, or NULL; a missing mandatory one is reported by the caller. */
static void *symbol(void *so, const char *name)
{
    dlerror();
    return dlsym(so, name);
}

static int mandatory(const host_stage *s, void *p, const char *name)
{
    if (p)
        return 0;
    fprintf(stderr, "host: %s: %s does not export %s\n", s->name, s->path, name);
    return -1;
}

int host_load(host_stage *s)
{
    host_lib *l = &s->lib;
    /* never closed: an actor's threads (OpenMP's pool) may outlive its last call, and the host exits after unload */
    l->so = dlopen(s->path, RTLD_NOW | RTLD_LOCAL);
    if (!l->so) {
        fprintf(stderr, "host: %s: %s\n", s->name, dlerror());
        return -1;
    }
    *(void **)&l->config = symbol(l->so, "process_config");
    *(void **)&l->reg = symbol(l->so, "process_register");
    *(void **)&l->initialise = symbol(l->so, "process_initialise");
    *(void **)&l->start = symbol(l->so, "process_start");
    *(void **)&l->stop = symbol(l->so, "process_stop");
    *(void **)&l->pause = symbol(l->so, "process_pause");
    *(void **)&l->resume = symbol(l->so, "process_resume");
    *(void **)&l->reset = symbol(l->so, "process_reset");
    *(void **)&l->unload = symbol(l->so, "process_unload");
    void *block = symbol(l->so, "process_block");
    /* one symbol, three prototypes: the stage's place in the chain says which one the library implements */
    *(void **)&l->produce = block;
    *(void **)&l->filter = block;
    *(void **)&l->consume = block;
    if (mandatory(s, *(void **)&l->config, "process_config") || mandatory(s, *(void **)&l->reg, "process_register") ||
        mandatory(s, *(void **)&l->initialise, "process_initialise") || mandatory(s, block, "process_block"))
        return -1;
    return 0;
}

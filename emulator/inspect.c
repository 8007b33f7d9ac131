/* inspect.c: `narwhal inspect`: which process_* symbols an actor library exports, and its own description. */
#include "inspect.h"
#include "emu.h"
#include "loader.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A name that is a file here is taken as it is (with "./" so that dlopen
 * does not search the system's library path); otherwise dirs are searched. */
/* A bare name that is a file here is taken from here; anything else goes
 * through the usual search (a path with a '/' relative to the current directory). */
static int locate(const char *name, const char *const *dirs, size_t n_dirs, char **path, char *err, size_t errlen)
{
    struct stat st;
    if (!strchr(name, '/') && stat(name, &st) == 0) {
        const char *here[] = {"."};
        return emu_library_locate(name, NULL, here, 1, path, err, errlen);
    }
    return emu_library_locate(name, NULL, dirs, n_dirs, path, err, errlen);
}

static void print_symbols(FILE *out, const emu_library *lib)
{
    fprintf(out, "%s\n", lib->path);
    for (size_t i = 0; i < emu_n_symbols; i++) {
        const emu_symbol *sym = &emu_symbols[i];
        static const char *const kinds[] = {"mandatory", "optional", "narwhal extension"};
        const char *kind = kinds[sym->kind];
        fprintf(out, "  %-20s %-18s %s\n", sym->name, kind, emu_library_has(lib, i) ? "present" : "absent");
    }
}

static void print_description(FILE *out, const emu_library *lib)
{
    if (!lib->describe)
        return;
    const char *text = lib->describe();
    if (!text)
        return;
    size_t len = strlen(text);
    fprintf(out, "\n%s%s", text, len && text[len - 1] == '\n' ? "" : "\n");
}

int emu_inspect(const char *name, const char *const *dirs, size_t n_dirs, FILE *out, char *err, size_t errlen)
{
    char *path = NULL;
    emu_library lib;
    int rc = locate(name, dirs, n_dirs, &path, err, errlen);
    if (rc != EMU_OK)
        return rc;
    rc = emu_library_open(path, &lib, err, errlen);
    free(path);
    if (rc != EMU_OK)
        return rc;
    print_symbols(out, &lib);
    print_description(out, &lib);
    const char *missing = emu_library_missing(&lib);
    if (missing)
        rc = emu_fail(err, errlen, EMU_E_TOPOLOGY, "%s lacks %s, which every actor must export: it cannot run",
                      lib.path, missing);
    emu_library_close(&lib);
    return rc;
}

/* mainconf.c: reads NARVAL's plain-text main configuration file: the instance, its topology, each actor's library and directory. */
#include "mainconf.h"
#include "emu.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_WORDS 8
#define MAX_LINE 4096

/* One `set library` or `set directory_path`: a value for an actor. */
typedef struct setting {
    char *actor;
    char *value;
    long line;
} setting;

typedef struct settings {
    setting *v;
    size_t n;
} settings;

typedef struct main_reader {
    const char *path;
    char *dir;       /* the main file's directory */
    FILE *notes;
    char *instance;  /* from launch */
    long launch_line;
    char *topology;  /* from set configuration_file, relative to dir */
    long topology_line;
    settings libraries, directories;
    char *err;
    size_t errlen;
} main_reader;

static const char *const narval_states[] = {"configure", "load",        "initialise", "start", "stop",
                                            "reset_com", "unload",      "unconfigure", "finish"};

static int fail_line(main_reader *r, long line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail_line(main_reader *r, long line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emu_vfail_at(r->err, r->errlen, r->path, line, fmt, ap);
    va_end(ap);
    return EMU_E_TOPOLOGY;
}

/* path as written in the main file: relative to its directory. */
static char *beside_main(const main_reader *r, const char *path)
{
    if (path[0] == '/' || strcmp(r->dir, ".") == 0)
        return strdup(path);
    size_t n = strlen(r->dir) + strlen(path) + 2;
    char *joined = malloc(n);
    if (joined)
        snprintf(joined, n, "%s/%s", r->dir, path);
    return joined;
}

/* Splits a line in place into blank-separated words; '#' starts a comment. */
static int split(main_reader *r, long line, char *text, char **words, int *n)
{
    *n = 0;
    for (char *p = text;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
            p++;
        if (*p == '\0' || *p == '#')
            return EMU_OK;
        if (*n == MAX_WORDS)
            return fail_line(r, line, "more than %d words: not a command of a main configuration file", MAX_WORDS);
        words[(*n)++] = p;
        for (; *p && !isspace((unsigned char)*p); p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                return fail_line(r, line, "a control character (byte 0x%02x)", (unsigned char)*p);
        if (*p)
            *p++ = '\0';
    }
}

static int check_count(main_reader *r, long line, int n, int want, const char *form)
{
    return n == want ? EMU_OK : fail_line(r, line, "'%s' takes %d words, not %d", form, want, n);
}

/* The INSTANCE word of a set command: the launched one, or $1. */
static int check_instance(main_reader *r, long line, const char *word)
{
    if (!r->instance)
        return fail_line(r, line, "'set' before 'launch INSTANCE HOST': the instance is not named yet");
    if (strcmp(word, r->instance) != 0 && strcmp(word, "$1") != 0)
        return fail_line(r, line, "instance '%s' is not the one launched on line %ld, '%s'", word, r->launch_line,
                         r->instance);
    return EMU_OK;
}

static int launch(main_reader *r, long line, char **w, int n)
{
    if (n != 3 && !(n == 4 && strcmp(w[3], "local") == 0))
        return fail_line(r, line, "'launch' takes the instance and its host: launch INSTANCE HOST [local]");
    if (r->instance)
        return fail_line(r, line, "a second 'launch' (the first on line %ld): one instance per main file",
                         r->launch_line);
    if (!(r->instance = strdup(w[1])))
        return fail_line(r, line, "out of memory");
    r->launch_line = line;
    if (r->notes)
        fprintf(r->notes, "%s:%ld: note: host '%s' ignored: the emulator runs every actor here\n", r->path, line, w[2]);
    return EMU_OK;
}

static int add_setting(main_reader *r, settings *list, long line, const char *what, const char *actor,
                       const char *value)
{
    for (size_t i = 0; i < list->n; i++)
        if (strcmp(list->v[i].actor, actor) == 0)
            return fail_line(r, line, "a second 'set %s' for '%s' (the first on line %ld)", what, actor,
                             list->v[i].line);
    setting *grown = realloc(list->v, (list->n + 1) * sizeof *grown);
    if (!grown)
        return fail_line(r, line, "out of memory");
    list->v = grown;
    setting *s = &list->v[list->n];
    s->actor = strdup(actor);
    s->value = strdup(value);
    s->line = line;
    list->n++;
    return s->actor && s->value ? EMU_OK : fail_line(r, line, "out of memory");
}

static int set_topology(main_reader *r, long line, char **w, int n)
{
    int rc = check_count(r, line, n, 4, "set configuration_file TOPOLOGY.xml INSTANCE");
    if (rc == EMU_OK)
        rc = check_instance(r, line, w[3]);
    if (rc != EMU_OK)
        return rc;
    if (r->topology)
        return fail_line(r, line, "a second 'set configuration_file' (the first on line %ld)", r->topology_line);
    r->topology_line = line;
    return (r->topology = strdup(w[2])) ? EMU_OK : fail_line(r, line, "out of memory");
}

static int set_action(main_reader *r, long line, char **w, int n)
{
    int rc = check_count(r, line, n, 4, "set action STATE INSTANCE");
    if (rc == EMU_OK)
        rc = check_instance(r, line, w[3]);
    if (rc != EMU_OK)
        return rc;
    for (size_t i = 0; i < sizeof narval_states / sizeof narval_states[0]; i++)
        if (strcmp(w[2], narval_states[i]) == 0) {
            if (r->notes)
                fprintf(r->notes, "%s:%ld: note: 'set action %s' ignored: the emulator makes NARVAL's calls itself\n",
                        r->path, line, w[2]);
            return EMU_OK;
        }
    return fail_line(r, line, "'%s' is not one of NARVAL's actions (configure, load, initialise, start, stop, "
                              "reset_com, unload, unconfigure, finish)",
                     w[2]);
}

static int command(main_reader *r, long line, char **w, int n)
{
    if (strcmp(w[0], "launch") == 0)
        return launch(r, line, w, n);
    if (strcmp(w[0], "set") != 0 || n < 2)
        return fail_line(r, line, "'%s' is not a command of a main configuration file (launch, set)", w[0]);
    if (strcmp(w[1], "configuration_file") == 0)
        return set_topology(r, line, w, n);
    if (strcmp(w[1], "action") == 0)
        return set_action(r, line, w, n);
    int is_library = strcmp(w[1], "library") == 0;
    if (!is_library && strcmp(w[1], "directory_path") != 0)
        return fail_line(r, line, "'set %s' is not known (configuration_file, library, directory_path, action)", w[1]);
    int rc = check_count(r, line, n, 5,
                         is_library ? "set library LIB INSTANCE ACTOR" : "set directory_path DIR INSTANCE ACTOR");
    if (rc == EMU_OK)
        rc = check_instance(r, line, w[3]);
    if (rc == EMU_OK)
        rc = add_setting(r, is_library ? &r->libraries : &r->directories, line, w[1], w[4], w[2]);
    return rc;
}

static int read_commands(main_reader *r)
{
    FILE *fp = fopen(r->path, "r");
    if (!fp)
        return emu_fail(r->err, r->errlen, EMU_E_TOPOLOGY, "%s: cannot open: %s", r->path, strerror(errno));
    char text[MAX_LINE + 2];
    long line = 0;
    int rc = EMU_OK;
    while (rc == EMU_OK && fgets(text, sizeof text, fp)) {
        char *words[MAX_WORDS];
        int n;
        line++;
        if (!strchr(text, '\n') && !feof(fp)) {
            rc = fail_line(r, line, "longer than %d bytes", MAX_LINE);
            break;
        }
        rc = split(r, line, text, words, &n);
        if (rc == EMU_OK && n > 0)
            rc = command(r, line, words, n);
    }
    if (rc == EMU_OK && ferror(fp))
        rc = emu_fail(r->err, r->errlen, EMU_E_TOPOLOGY, "%s: cannot read: %s", r->path, strerror(errno));
    fclose(fp);
    if (rc == EMU_OK && !r->instance)
        rc = emu_fail(r->err, r->errlen, EMU_E_TOPOLOGY, "%s: no 'launch INSTANCE HOST' line naming the instance",
                      r->path);
    if (rc == EMU_OK && !r->topology)
        rc = emu_fail(r->err, r->errlen, EMU_E_TOPOLOGY,
                      "%s: no 'set configuration_file TOPOLOGY.xml INSTANCE' line naming the topology", r->path);
    return rc;
}

static emu_actor_spec *find_actor(main_reader *r, emu_topology *t, const setting *s)
{
    for (size_t k = 0; k < t->n_actors; k++)
        if (strcmp(t->actors[k].name, s->actor) == 0)
            return &t->actors[k];
    fail_line(r, s->line, "'%s' is not an actor of %s", s->actor, t->path);
    return NULL;
}

static int apply_library(main_reader *r, emu_topology *t, const setting *s)
{
    emu_actor_spec *a = find_actor(r, t, s);
    if (!a)
        return EMU_E_TOPOLOGY;
    char *library = strdup(s->value);
    if (!library)
        return fail_line(r, s->line, "out of memory");
    if (a->library && r->notes)
        fprintf(r->notes, "%s:%ld: note: 'set library' replaces the <library> of '%s' (%s:%ld)\n", r->path, s->line,
                a->name, a->library_file, a->library_line);
    free(a->library);
    a->library = library;
    a->library_file = t->main_path;
    a->library_dir = t->main_dir;
    a->library_line = s->line;
    return EMU_OK;
}

static int apply_directory(main_reader *r, emu_topology *t, const setting *s)
{
    struct stat st;
    emu_actor_spec *a = find_actor(r, t, s);
    if (!a)
        return EMU_E_TOPOLOGY;
    char *dir = beside_main(r, s->value);
    if (!dir)
        return fail_line(r, s->line, "out of memory");
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        int rc = fail_line(r, s->line, "the directory_path of '%s', %s, is not a directory", a->name, dir);
        free(dir);
        return rc;
    }
    a->conf_dir = dir;
    a->conf_line = s->line;
    return EMU_OK;
}

static int read_topology(main_reader *r, emu_topology **out)
{
    char *path = beside_main(r, r->topology);
    emu_topology *t = NULL;
    if (!path)
        return fail_line(r, r->topology_line, "out of memory");
    int rc = emu_topology_read(path, r->notes, &t, r->err, r->errlen);
    free(path);
    if (rc != EMU_OK)
        return rc;
    t->main_path = strdup(r->path);
    t->main_dir = strdup(r->dir);
    if (!t->main_path || !t->main_dir)
        rc = fail_line(r, r->topology_line, "out of memory");
    for (size_t i = 0; i < r->libraries.n && rc == EMU_OK; i++)
        rc = apply_library(r, t, &r->libraries.v[i]);
    for (size_t i = 0; i < r->directories.n && rc == EMU_OK; i++)
        rc = apply_directory(r, t, &r->directories.v[i]);
    if (rc != EMU_OK) {
        emu_topology_free(t);
        return rc;
    }
    *out = t;
    return EMU_OK;
}

static void free_settings(settings *list)
{
    for (size_t i = 0; i < list->n; i++) {
        free(list->v[i].actor);
        free(list->v[i].value);
    }
    free(list->v);
}

int emu_main_read(const char *path, FILE *notes, emu_topology **out, char *err, size_t errlen)
{
    main_reader r = {.path = path, .dir = emu_directory_of(path), .notes = notes, .err = err, .errlen = errlen};
    *out = NULL;
    int rc = r.dir ? read_commands(&r) : emu_fail(err, errlen, EMU_E_TOPOLOGY, "out of memory");
    if (rc == EMU_OK)
        rc = read_topology(&r, out);
    free(r.dir);
    free(r.instance);
    free(r.topology);
    free_settings(&r.libraries);
    free_settings(&r.directories);
    return rc;
}

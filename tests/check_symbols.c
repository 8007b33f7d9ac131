/* check_symbols.c: Check suite for the actor ABI of every built library: process_* symbols present, nothing else exported. */
#include <check.h>
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "narval.h"
#include "narwhal_exec.h"

#define MAX_LIBS 128

/* Every .so of build/actors (whatever is built so far) and of build/tests/actors. */
static char actor_libs[MAX_LIBS][512], test_libs[MAX_LIBS][512];
static int n_actor_libs, n_test_libs;

static int list_libraries(const char *dir, char libs[][512])
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d)
        return 0;
    while ((e = readdir(d)) && n < MAX_LIBS) {
        size_t len = strlen(e->d_name);
        if (len > 3 && strcmp(e->d_name + len - 3, ".so") == 0)
            snprintf(libs[n++], 512, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    return n;
}

/* The ABI's entry points, resolved by name into narval.h's types. */
typedef struct actor_symbols {
    narval_config_fn *config;
    narval_register_fn *register_instance;
    narval_lifecycle_fn *initialise, *start, *stop, *pause, *resume, *reset, *unload;
    union {
        narval_producer_block_fn *producer;
        narval_filter_block_fn *filter;
        narval_consumer_block_fn *consumer;
    } block;
    narval_describe_fn *describe;
} actor_symbols;

/* dlsym gives a data pointer; POSIX lets it hold a function's address. */
#define RESOLVE(handle, name, slot)                                                                                    \
    do {                                                                                                               \
        void *address_ = dlsym(handle, name);                                                                          \
        memcpy(&(slot), &address_, sizeof address_);                                                                   \
    } while (0)

static void resolve(void *h, actor_symbols *s)
{
    RESOLVE(h, "process_config", s->config);
    RESOLVE(h, "process_register", s->register_instance);
    RESOLVE(h, "process_initialise", s->initialise);
    RESOLVE(h, "process_start", s->start);
    RESOLVE(h, "process_stop", s->stop);
    RESOLVE(h, "process_pause", s->pause);
    RESOLVE(h, "process_resume", s->resume);
    RESOLVE(h, "process_reset", s->reset);
    RESOLVE(h, "process_unload", s->unload);
    RESOLVE(h, "process_block", s->block.filter);
    RESOLVE(h, "process_describe", s->describe);
}

static int is_deliberately_broken(const char *path)
{
    const char *base = strrchr(path, '/');
    return strncmp(base ? base + 1 : path, "bad_", 4) == 0;
}

static void check_library(const char *path)
{
    actor_symbols s;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(h != NULL, "%s: %s", path, dlerror());
    resolve(h, &s);
    ck_assert_msg(s.config != NULL, "%s lacks process_config", path);
    ck_assert_msg(s.register_instance != NULL, "%s lacks process_register", path);
    ck_assert_msg(s.initialise != NULL, "%s lacks process_initialise", path);
    if (is_deliberately_broken(path)) {
        ck_assert_msg(s.block.filter == NULL, "%s was meant to lack process_block", path);
    } else {
        ck_assert_msg(s.block.filter != NULL, "%s lacks process_block", path);
    }
    if (s.describe) {
        const char *text = s.describe();
        ck_assert_msg(text != NULL && text[0] != '\0', "%s: process_describe returns no text", path);
    }
    dlclose(h);
}

START_TEST(built_actors_export_the_mandatory_symbols)
{
    check_library(actor_libs[_i]);
}
END_TEST

START_TEST(test_actors_export_the_mandatory_symbols)
{
    check_library(test_libs[_i]);
}
END_TEST

/* The dynamic symbol table, by nm: every defined name must be process_*. */
START_TEST(built_actors_export_only_process_symbols)
{
    const char *path = actor_libs[_i];
    char command[700], line[512], name[256];
    int exported = 0;
    snprintf(command, sizeof command, "nm -D --defined-only '%s' 2>&1", path);
    FILE *p = popen(command, "r");
    ck_assert_ptr_nonnull(p);
    while (fgets(line, sizeof line, p)) {
        char address[64], type[8];
        ck_assert_msg(sscanf(line, "%63s %7s %255s", address, type, name) == 3, "%s: nm says: %s", path, line);
        ck_assert_msg(strncmp(name, "process_", 8) == 0, "%s exports %s: only process_* symbols may be visible",
                      path, name);
        exported++;
    }
    ck_assert_int_eq(pclose(p), 0);
    ck_assert_int_ge(exported, 4);
}
END_TEST

START_TEST(the_test_actors_are_built)
{
    static const char *const expected[] = {"lifecycle_producer.so", "lifecycle_filter.so", "lifecycle_consumer.so",
                                           "bad_no_block.so", "omp_consumer.so"};
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        int found = 0;
        for (int k = 0; k < n_test_libs; k++)
            found |= strstr(test_libs[k], expected[i]) != NULL;
        ck_assert_msg(found, "%s is not in %s", expected[i], nw_build_path("/tests/actors"));
    }
}
END_TEST

static Suite *symbols_suite(void)
{
    Suite *s = suite_create("symbols");
    TCase *tc = tcase_create("abi");
    n_actor_libs = list_libraries(nw_build_path("/actors"), actor_libs);
    n_test_libs = list_libraries(nw_build_path("/tests/actors"), test_libs);
    tcase_add_test(tc, the_test_actors_are_built);
    tcase_add_loop_test(tc, built_actors_export_the_mandatory_symbols, 0, n_actor_libs);
    tcase_add_loop_test(tc, test_actors_export_the_mandatory_symbols, 0, n_test_libs);
    tcase_add_loop_test(tc, built_actors_export_only_process_symbols, 0, n_actor_libs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(symbols_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed != 0;
}

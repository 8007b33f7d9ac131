/* check_confdirs.c: Check suite for each actor's configuration directory, private library copies, the foreign filter and NARVAL's main file. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adf.h"
#include "confdir.h"
#include "emu.h"
#include "loader.h"
#include "mainconf.h"
#include "narwhal_exec.h"
#include "testkit.h"
#include "topology.h"

#define DATA_FRAMES 50u
#define TAG_ID 0x46460001u /* the foreign filter's own frame */

static char tmp[PATH_MAX]; /* this test's directory, links resolved */

static const char *at(const char *name) { return tk_path(tmp, name); }

static void make_dirs(const char *const *names)
{
    for (size_t i = 0; names[i]; i++)
        ck_assert_int_eq(mkdir(at(names[i]), 0700), 0);
}

/* DATA_FRAMES meta:sync frames numbered 0, 1, ... (24 bytes each) into input.adf. */
static void write_input(void)
{
    uint8_t buf[DATA_FRAMES * 24];
    adf_writer w;
    adf_writer_init(&w, buf, sizeof buf);
    for (unsigned i = 0; i < DATA_FRAMES; i++) {
        adf_begin(&w, ADF_ID_META_SYNC, i, 10u * i);
        adf_put_le32(&w, i);
        ck_assert_int_eq(adf_end(&w), ADF_OK);
    }
    tk_write_bytes(at("input.adf"), buf, w.used);
}

/* reader -> the foreign filters named -> writer; 256-byte buffers, so that the data take several blocks. */
static void write_chain(const char *const *filters)
{
    char xml[4096], source[64] = "reader";
    size_t n = (size_t)snprintf(xml, sizeof xml,
                                "<configuration>\n<producer><name>reader</name><library>adf_reader.so</library>"
                                "<output_buffer_name>reader_out</output_buffer_name>"
                                "<size output_buffer=\"reader_out\">256</size></producer>\n");
    for (size_t i = 0; filters[i]; i++) {
        n += (size_t)snprintf(xml + n, sizeof xml - n,
                              "<intermediary><name>%s</name><library>foreign_filter.so</library>"
                              "<data_source source_buffer=\"%s_out\">%s</data_source>"
                              "<output_buffer_name>%s_out</output_buffer_name>"
                              "<size output_buffer=\"%s_out\">4096</size></intermediary>\n",
                              filters[i], source, source, filters[i], filters[i]);
        snprintf(source, sizeof source, "%s", filters[i]);
    }
    snprintf(xml + n, sizeof xml - n,
             "<consumer><name>writer</name><library>adf_writer.so</library>"
             "<data_source source_buffer=\"%s_out\">%s</data_source></consumer>\n</configuration>\n",
             source, source);
    tk_write_text(at("chain.xml"), xml);
}

/* The reader's and the writer's files in the shared conf/: absolute paths, whatever the working directory. */
static void write_io_conf(void)
{
    tk_write_textf(at("conf/ADFReader.conf"), "File %s\n", at("input.adf"));
    tk_write_textf(at("conf/ADFWriter.conf"), "File %s\n", at("out.adf"));
}

static void setup(void)
{
    char made[PATH_MAX];
    tk_make_tmpdir(made, sizeof made, "check_confdirs");
    ck_assert_ptr_nonnull(realpath(made, tmp));
    ck_assert_int_eq(mkdir(at("conf"), 0700), 0);
    write_input();
    write_io_conf();
}

static void teardown(void) { tk_remove_tree(tmp); }

/* narwhal COMMAND chain.xml with the build's actors and the test actors, then extra arguments; env: added to its environment. */
static void narwhal_env(nw_result *r, const char *command, const char *const *extra, const char *const *env)
{
    const char *args[16] = {command, at("chain.xml"), "--actors", nw_build_path("/actors"), "--actors",
                            nw_build_path("/tests/actors")};
    size_t n = 6;
    for (size_t i = 0; extra && extra[i] && n < 15; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    ck_assert_int_eq(nw_run_timed(r, args, env, 60, 0, 0), 0);
}

static void narwhal(nw_result *r, const char *command, const char *const *extra)
{
    narwhal_env(r, command, extra, NULL);
}

/* The tag frames of out.adf, in file order, joined by ' '; *data counts the other frames. */
static void read_output(char *tags, size_t cap, unsigned *data)
{
    size_t size;
    uint8_t *bytes = tk_read_file(at("out.adf"), &size);
    adf_iter it;
    adf_frame f;
    int rc;
    tags[0] = '\0';
    *data = 0;
    adf_iter_init(&it, bytes, size);
    while ((rc = adf_iter_next(&it, &f)) > 0) {
        if (f.key.id == ADF_ID_META_SYNC)
            (*data)++;
        if (f.key.id != TAG_ID)
            continue;
        size_t len = strlen(tags);
        snprintf(tags + len, cap - len, "%s%.*s", len ? " " : "", (int)(f.key.length - ADF_KEY_SIZE),
                 (const char *)f.data + ADF_KEY_SIZE);
    }
    ck_assert_int_eq(rc, 0);
    free(bytes);
}

/* ---- the foreign filter in the default layout --------------------------------- */

START_TEST(a_foreign_filter_reads_its_own_file_in_the_default_layout)
{
    static const char *const filters[] = {"filter", NULL};
    static const char *const dirs[] = {"conf/filter", NULL};
    char tags[256], line[PATH_MAX + 64];
    unsigned data;
    nw_result r;
    make_dirs(dirs);
    write_chain(filters);
    tk_write_text(at("conf/filter/ForeignFilter.conf"), "# the filter's own\nTag alpha\n");
    const char *verbose[] = {"-v", NULL};
    narwhal(&r, "run", verbose);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    read_output(tags, sizeof tags, &data);
    ck_assert_str_eq(tags, "alpha");
    ck_assert_uint_eq(data, DATA_FRAMES);
    /* It opened ForeignFilter.conf in the one directory it got, a link to its own file ... */
    ck_assert_ptr_nonnull(strstr(r.err, "/filter/ForeignFilter.conf: Tag alpha, FailAtBlock 0\n"));
    /* ... which -v maps to the real file. */
    snprintf(line, sizeof line, "narwhal: filter:   ForeignFilter.conf <- %s\n", at("conf/filter/ForeignFilter.conf"));
    ck_assert_msg(strstr(r.err, line), "no '%s' in: %s", line, r.err);
}
END_TEST

/* An actor whose output is not whole frames (the filter's second block one
 * byte short): the emulator names the actor, the frame's offset in that
 * block and the fault, once, and the writer refuses the block. */
START_TEST(the_host_names_an_actor_whose_output_is_not_adf)
{
    static const char *const filters[] = {"filter", NULL};
    static const char *const dirs[] = {"conf/filter", NULL};
    nw_result r;
    make_dirs(dirs);
    write_chain(filters);
    static const char *const count_thread[2][2] = {{"NARWHAL_COUNT_THREAD=off", NULL},
                                                   {"NARWHAL_COUNT_THREAD=on", NULL}};
    tk_write_text(at("conf/filter/ForeignFilter.conf"), "Tag beta\nCutAtBlock 2\n");
    narwhal_env(&r, "run", NULL, count_thread[_i]); /* the output counted on the loop's thread, then beside the calls */
    ck_assert_int_ne(r.status, 0);
    /* block 2 is the reader's 10 frames of 24 bytes (256-byte blocks): the last starts at 216 */
    const char *want = "narwhal: warning: the output of 'filter' is not well-formed ADF: frame at offset 216: "
                       "length 24 runs past the end of its buffer (23 bytes left)\n",
               *seen = strstr(r.err, want);
    ck_assert_msg(seen, "no '%s' in: %s", want, r.err);
    ck_assert_ptr_null(strstr(seen + strlen(want), "is not well-formed ADF"));
    const char *refused = strstr(r.err, "narwhal: actor 'writer' (adf_writer.so): process_block returned error code 3");
    ck_assert_ptr_nonnull(refused);
    ck_assert_msg(seen < refused, "the warning does not come before the error it explains: %s", r.err);
    /* counted up to the fault: its tag and 10 frames, then the 9 whole frames of block 2 */
    ck_assert_msg(strstr(r.out, "\nfilter  foreign_filter.so         2          20          20 "), "%s", r.out);
}
END_TEST

START_TEST(a_foreign_filter_without_its_file_fails_in_process_config)
{
    static const char *const filters[] = {"filter", NULL};
    nw_result r;
    write_chain(filters);
    narwhal(&r, "validate", NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.err, "narwhal: actor 'filter' (foreign_filter.so): process_config returned error "
                                        "code 1: configuration error\n"));
    ck_assert_str_eq(r.out, "");
}
END_TEST

/* Two actors of one library with their own directories: in NARVAL two processes,
 * here two copies of the library, each with the value its own file sets. */
START_TEST(two_actors_of_one_library_keep_their_own_configuration)
{
    static const char *const filters[] = {"first", "second", NULL};
    static const char *const dirs[] = {"conf/first", "conf/second", NULL};
    char tags[256], line[PATH_MAX + 128];
    unsigned data;
    nw_result r;
    make_dirs(dirs);
    write_chain(filters);
    tk_write_text(at("conf/first/ForeignFilter.conf"), "Tag one\n");
    tk_write_text(at("conf/second/ForeignFilter.conf"), "Tag two\n");
    narwhal(&r, "run", NULL);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    read_output(tags, sizeof tags, &data);
    ck_assert_str_eq(tags, "two one");
    ck_assert_uint_eq(data, DATA_FRAMES);
    narwhal(&r, "validate", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "narwhal: second: its own copy of foreign_filter.so (other actors use the "
                                        "library with other files): /tmp/narwhal-"));
    snprintf(line, sizeof line, "narwhal: second:   ForeignFilter.conf <- %s\n", at("conf/second/ForeignFilter.conf"));
    ck_assert_ptr_nonnull(strstr(r.out, line));
}
END_TEST

START_TEST(actors_that_see_the_same_files_share_one_library)
{
    static const char *const filters[] = {"first", "second", NULL};
    char tags[256];
    unsigned data;
    nw_result r;
    write_chain(filters);
    tk_write_text(at("conf/ForeignFilter.conf"), "Tag both\n");
    narwhal(&r, "run", NULL);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    read_output(tags, sizeof tags, &data);
    ck_assert_str_eq(tags, "both both");
    narwhal(&r, "validate", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "narwhal: second: shares the library and the configuration of 'first'\n"));
}
END_TEST

/* The same through the library: libraries loaded, copies, directories. */
START_TEST(the_chain_loads_a_copy_only_for_a_different_configuration)
{
    static const char *const filters[] = {"first", "second", "third", NULL};
    static const char *const dirs[] = {"conf/third", NULL};
    const char *actors[] = {nw_build_path("/actors"), nw_build_path("/tests/actors")};
    char err[1024];
    emu_topology *t = NULL;
    emu_chain *c = NULL;
    make_dirs(dirs);
    write_chain(filters);
    tk_write_text(at("conf/ForeignFilter.conf"), "Tag shared\n");
    tk_write_text(at("conf/third/ForeignFilter.conf"), "Tag own\n");
    ck_assert_int_eq(emu_topology_read(at("chain.xml"), NULL, &t, err, sizeof err), EMU_OK);
    ck_assert_msg(emu_chain_load(t, actors, 2, &c, err, sizeof err) == EMU_OK, "%s", err);
    ck_assert_uint_eq(c->n_libraries, 4); /* reader, foreign (first and second), its copy (third), writer */
    ck_assert_uint_eq(c->library_of[1], c->library_of[2]);
    const emu_library *shared = &c->libraries[c->library_of[1]], *own = &c->libraries[c->library_of[3]];
    ck_assert_int_eq(shared->private_copy, 0);
    ck_assert_int_eq(own->private_copy, 1);
    ck_assert_str_eq(shared->identity, own->identity);
    ck_assert_str_ne(shared->path, own->path);
    ck_assert_ptr_nonnull(strstr(own->path, "/.libs/3/foreign_filter.so"));
    ck_assert_str_eq(shared->conf_dir, at("conf")); /* the only directory of its list that exists */
    ck_assert_ptr_nonnull(strstr(own->conf_dir, "/third"));
    char root[PATH_MAX];
    snprintf(root, sizeof root, "%s", c->confs->root);
    ck_assert(tk_exists(own->path));
    emu_chain_free(c);
    ck_assert_msg(!tk_exists(root), "%s outlived the chain", root);
    emu_topology_free(t);
}
END_TEST

/* ---- the search order ------------------------------------------------------- */

/* The source of file `name` as the actor `actor` (index k) sees it, or NULL. */
static const char *source_of(const emu_confs *c, size_t k, const char *name)
{
    for (size_t i = 0; i < c->actors[k].n_files; i++)
        if (strcmp(c->actors[k].files[i].name, name) == 0)
            return c->actors[k].files[i].source;
    return NULL;
}

static emu_confs *resolve(emu_topology *t)
{
    char err[1024];
    emu_confs *c = NULL;
    ck_assert_msg(emu_confs_resolve(t, &c, err, sizeof err) == EMU_OK, "%s", err);
    return c;
}

START_TEST(the_default_layout_is_searched_most_specific_first)
{
    static const char *const filters[] = {"filter", NULL};
    static const char *const dirs[] = {"conf/chain", "conf/chain/filter", "conf/filter", NULL};
    static const char *const levels[] = {"conf/chain/filter", "conf/filter", "conf/chain", "conf"};
    char err[1024], path[128]; /* relative to tmp */
    emu_topology *t = NULL;
    make_dirs(dirs);
    write_chain(filters);
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/ForeignFilter.conf", levels[i]);
        tk_write_text(at(path), "Tag x\n");
        snprintf(path, sizeof path, "%s/Level%zu.conf", levels[i], i);
        tk_write_text(at(path), "\n");
    }
    tk_write_text(at("conf/.hidden"), "\n");
    ck_assert_int_eq(emu_topology_read(at("chain.xml"), NULL, &t, err, sizeof err), EMU_OK);
    for (size_t i = 0; i < 4; i++) {
        emu_confs *c = resolve(t);
        size_t k = 1; /* the filter */
        snprintf(path, sizeof path, "%s/ForeignFilter.conf", levels[i]);
        ck_assert_str_eq(source_of(c, k, "ForeignFilter.conf"), at(path));
        /* Every level adds its own files; dot files are not configuration. */
        /* ForeignFilter.conf, Level0-3.conf, ADFReader.conf, ADFWriter.conf, and the directories chain, filter */
        ck_assert_uint_eq(c->actors[k].n_files, 9);
        for (size_t j = 0; j < 4; j++) {
            char name[32];
            snprintf(name, sizeof name, "Level%zu.conf", j);
            snprintf(path, sizeof path, "%s/%s", levels[j], name);
            ck_assert_str_eq(source_of(c, k, name), at(path));
        }
        ck_assert_ptr_null(source_of(c, k, ".hidden"));
        /* The reader has no directory of its own: conf/chain/ then conf/, and so a private directory. */
        ck_assert_uint_eq(c->actors[0].n_search, 4);
        ck_assert_ptr_null(c->actors[0].only);
        emu_confs_free(c);
        snprintf(path, sizeof path, "%s/ForeignFilter.conf", levels[i]);
        ck_assert_int_eq(unlink(at(path)), 0);
    }
    emu_topology_free(t);
}
END_TEST

START_TEST(conf_lists_search_each_directory_for_the_actor_first)
{
    static const char *const filters[] = {"filter", NULL};
    static const char *const dirs[] = {"a", "a/filter", "b", "b/filter", NULL};
    char err[1024], list[2 * PATH_MAX + 2];
    emu_topology *t = NULL;
    make_dirs(dirs);
    write_chain(filters);
    tk_write_text(at("a/One.conf"), "\n");
    tk_write_text(at("b/filter/One.conf"), "\n");
    tk_write_text(at("b/filter/Two.conf"), "\n");
    tk_write_text(at("b/Two.conf"), "\n");
    tk_write_text(at("b/Three.conf"), "\n");
    ck_assert_int_eq(emu_topology_read(at("chain.xml"), NULL, &t, err, sizeof err), EMU_OK);
    snprintf(list, sizeof list, "%s:%s", at("a"), at("b"));
    t->conf_list = list;
    emu_confs *c = resolve(t);
    ck_assert_uint_eq(c->actors[1].n_search, 4);
    ck_assert_str_eq(c->actors[1].search[0], at("a/filter"));
    ck_assert_str_eq(c->actors[1].search[1], at("a"));
    ck_assert_str_eq(c->actors[1].search[2], at("b/filter"));
    ck_assert_str_eq(c->actors[1].search[3], at("b"));
    ck_assert_str_eq(source_of(c, 1, "One.conf"), at("a/One.conf"));
    ck_assert_str_eq(source_of(c, 1, "Two.conf"), at("b/filter/Two.conf"));
    ck_assert_str_eq(source_of(c, 1, "Three.conf"), at("b/Three.conf"));
    /* The reader has no directory of its own in either: a, then b. */
    ck_assert_str_eq(source_of(c, 0, "Two.conf"), at("b/Two.conf"));
    ck_assert_str_eq(source_of(c, 0, "One.conf"), at("a/One.conf"));
    emu_confs_free(c);
    emu_topology_free(t);
}
END_TEST

START_TEST(the_private_tree_is_gone_when_narwhal_exits)
{
    static const char *const filters[] = {"filter", NULL};
    static const char *const dirs[] = {"conf/filter", NULL};
    char dir[PATH_MAX];
    nw_result r;
    make_dirs(dirs);
    write_chain(filters);
    tk_write_text(at("conf/filter/ForeignFilter.conf"), "Tag x\n");
    narwhal(&r, "validate", NULL);
    ck_assert_int_eq(r.status, 0);
    const char *line = strstr(r.out, "narwhal: filter: process_config gets ");
    ck_assert_ptr_nonnull(line);
    ck_assert_int_eq(sscanf(line, "narwhal: filter: process_config gets %4095s (links made for it)", dir), 1);
    ck_assert_ptr_nonnull(strstr(dir, "/narwhal-"));
    ck_assert_msg(!tk_exists(dir), "%s is still there", dir);
    *strrchr(dir, '/') = '\0';
    ck_assert_msg(!tk_exists(dir), "%s is still there", dir);
}
END_TEST

/* ---- an actor's error: the run stops, nothing final-named is left ------------- */

/* Needs the abort without process_stop (emulator, "runctl") and the writer's
 * temp file published only at stop (kit, "publish"): issue 12. */
START_TEST(a_foreign_error_stops_the_run_and_leaves_no_final_output)
{
    static const char *const filters[] = {"filter", NULL};
    static const char *const dirs[] = {"conf/filter", NULL};
    nw_result r;
    make_dirs(dirs);
    write_chain(filters);
    tk_write_text(at("conf/filter/ForeignFilter.conf"), "Tag x\nFailAtBlock 3\n");
    narwhal(&r, "run", NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.err, "narwhal: actor 'filter' (foreign_filter.so): process_block returned error "
                                        "code 99: "));
    ck_assert_msg(!tk_exists(at("out.adf")), "an aborted run left out.adf");
    DIR *d = opendir(tmp);
    struct dirent *e;
    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)))
        ck_assert_msg(strncmp(e->d_name, "out.adf", 7) != 0, "the writer's temp file %s is left", e->d_name);
    closedir(d);
}
END_TEST

/* ---- NARVAL's main configuration file ------------------------------------------- */

#define LISTING1 "topologies/narval/listing1.xml"

START_TEST(listing1_without_a_main_file_asks_for_one)
{
    nw_result r;
    const char *args[] = {"validate", LISTING1, NULL};
    ck_assert_int_eq(nw_run(&r, args, NULL), 0);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, LISTING1 ":7: producer 'crystal_producer' has no <library>: name its shared object there, "
                            "or in a main configuration file (set library LIB INSTANCE crystal_producer) given "
                            "with --main\n");
}
END_TEST

/* Listing 1 verbatim, the test actors as its code: every actor gets the directory the main file names. */
START_TEST(listing1_runs_verbatim_with_a_main_file)
{
    static const char *const dirs[] = {"p", "f", "c", NULL};
    char topology[PATH_MAX], log[PATH_MAX + 16], env_log[PATH_MAX + 32], expected[4 * PATH_MAX], text[8192];
    nw_result r;
    make_dirs(dirs);
    ck_assert_ptr_nonnull(realpath(LISTING1, topology));
    tk_write_textf(at("listing1.main"),
                   "# Listing 1 under test actors\n"
                   "launch listing1 localhost local\n"
                   "set configuration_file %s listing1\n"
                   "set library lifecycle_producer.so $1 crystal_producer\n"
                   "set library lifecycle_filter.so listing1 psa_filter\n"
                   "set library lifecycle_consumer.so listing1 psa_consumer\n"
                   "set directory_path p listing1 crystal_producer\n"
                   "set directory_path f listing1 psa_filter\n"
                   "set directory_path %s listing1 psa_consumer\n"
                   "set action configure listing1\n"
                   "set action start listing1\n",
                   topology, at("c"));
    snprintf(log, sizeof log, "%s", at("calls.log"));
    snprintf(env_log, sizeof env_log, "LIFECYCLE_LOG=%s", log);
    const char *env[] = {env_log, NULL};
    const char *args[] = {"run", "--main", at("listing1.main"), "--actors", nw_build_path("/tests/actors"), NULL};
    ck_assert_int_eq(nw_run(&r, args, env), 0);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert(tk_read_text(log, text, sizeof text));
    snprintf(expected, sizeof expected, "P process_config %s\nF process_config %s\nC process_config %s\n", at("p"),
             at("f"), at("c"));
    ck_assert_msg(strncmp(text, expected, strlen(expected)) == 0, "%s", text);
    ck_assert_ptr_nonnull(strstr(r.out, "psa_filter"));

    const char *check[] = {"validate", "--main", at("listing1.main"), "--actors", nw_build_path("/tests/actors"), NULL};
    ck_assert_int_eq(nw_run(&r, check, NULL), 0);
    ck_assert_int_eq(r.status, 0);
    snprintf(expected, sizeof expected, "%s: ok (3 actors: crystal_producer -> psa_filter -> psa_consumer)\n", topology);
    ck_assert_ptr_nonnull(strstr(r.out, expected));
}
END_TEST

START_TEST(the_shipped_main_file_validates)
{
    nw_result r;
    const char *args[] = {"validate", "--main", "topologies/narval/listing1.main", NULL};
    ck_assert_int_eq(nw_run(&r, args, NULL), 0);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "narwhal: psa_filter: process_config gets "
                                        "topologies/narval/conf/psa_filter\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "topologies/narval/listing1.xml: ok (3 actors: crystal_producer -> psa_filter "
                                        "-> psa_consumer)\n"));
}
END_TEST

/* Listing 1 with the real actors: the generator's traces through the PSA into a file, on a coarse basis. */
START_TEST(listing1_runs_the_real_actors)
{
    static const char *const dirs[] = {"gen", "psa", "out", NULL};
    char topology[PATH_MAX], cmd[3 * PATH_MAX];
    nw_result r;
    const char *basisgen = nw_build_path("/bin/basisgen");
    if (access(basisgen, X_OK) != 0)
        TK_SKIP("%s is not built: Listing 1 not run with the real actors", basisgen);
    snprintf(cmd, sizeof cmd, "%s --quiet --geometry detector/geometry/agata.geo --grid 6 --field-grid 2 -o %s",
             basisgen, at("coarse.basis"));
    ck_assert_int_eq(system(cmd), 0);
    make_dirs(dirs);
    ck_assert_ptr_nonnull(realpath(LISTING1, topology));
    tk_write_textf(at("gen/Generator.conf"), "Basis %s\nSeed 3\nEvents 40\nSource lines\nLines 1332.492 1\nOutput crystal\n", at("coarse.basis"));
    tk_write_textf(at("psa/PSA.conf"), "Basis %s\nDevice cpu\n", at("coarse.basis"));
    tk_write_textf(at("out/ADFWriter.conf"), "File %s\n", at("psa.adf"));
    tk_write_textf(at("listing1.main"),
                   "launch l1 localhost\nset configuration_file %s l1\n"
                   "set library generator.so l1 crystal_producer\nset library psa.so l1 psa_filter\n"
                   "set library adf_writer.so l1 psa_consumer\nset directory_path gen l1 crystal_producer\n"
                   "set directory_path psa l1 psa_filter\nset directory_path out l1 psa_consumer\n",
                   topology);
    const char *args[] = {"run", "--main", at("listing1.main"), NULL};
    ck_assert_int_eq(nw_run_timed(&r, args, NULL, 120, 0, 0), 0);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    size_t size;
    uint8_t *bytes = tk_read_file(at("psa.adf"), &size);
    adf_iter it;
    adf_frame f;
    unsigned psa = 0;
    adf_iter_init(&it, bytes, size);
    while (adf_iter_next(&it, &f) > 0)
        psa += f.key.id == ADF_ID_DATA_PSA;
    ck_assert_uint_gt(psa, 0);
    free(bytes);
}
END_TEST

typedef struct main_case {
    const char *text;    /* the main file, %s the topology's absolute path */
    int line;            /* of the message; 0: the message names no line */
    const char *message; /* after "FILE:LINE: " (or "FILE: ") */
} main_case;

static const main_case main_cases[] = {
    {"set configuration_file %s x\n", 1, "'set' before 'launch INSTANCE HOST': the instance is not named yet"},
    {"launch x h\nset configuration_file %s y\n", 2, "instance 'y' is not the one launched on line 1, 'x'"},
    {"launch x h\nlaunch y h\n", 2, "a second 'launch' (the first on line 1): one instance per main file"},
    {"launch x h remote\n", 1, "'launch' takes the instance and its host: launch INSTANCE HOST [local]"},
    {"launch x h\nstart x\n", 2, "'start' is not a command of a main configuration file (launch, set)"},
    {"launch x h\nset colour red x\n", 2, "'set colour' is not known (configuration_file, library, directory_path, "
                                          "action)"},
    {"launch x h\nset library a.so x\n", 2, "'set library LIB INSTANCE ACTOR' takes 5 words, not 4"},
    {"launch x h\nset action dance x\n", 2, "'dance' is not one of NARVAL's actions (configure, load, initialise, "
                                            "start, stop, reset_com, unload, unconfigure, finish)"},
    {"launch x h\n", 0, "no 'set configuration_file TOPOLOGY.xml INSTANCE' line naming the topology"},
    {"# nothing\n", 0, "no 'launch INSTANCE HOST' line naming the instance"},
    {"launch x h\nset configuration_file %s x\nset library a.so x nobody\n", 3,
     "'nobody' is not an actor of @TOPOLOGY@"},
    {"launch x h\nset configuration_file %s x\nset library a.so x psa_filter\nset library b.so $1 psa_filter\n", 4,
     "a second 'set library' for 'psa_filter' (the first on line 3)"},
    {"launch x h\nset configuration_file %s x\nset directory_path nowhere x psa_filter\n", 3,
     "the directory_path of 'psa_filter', @TMP@/nowhere, is not a directory"},
};
#define N_MAIN_CASES (int)(sizeof main_cases / sizeof main_cases[0])

/* s with @TOPOLOGY@ and @TMP@ replaced. */
static void expand(const char *s, const char *topology, char *out, size_t cap)
{
    size_t n = 0;
    while (*s && n + 1 < cap) {
        if (strncmp(s, "@TOPOLOGY@", 10) == 0) {
            n += (size_t)snprintf(out + n, cap - n, "%s", topology);
            s += 10;
        } else if (strncmp(s, "@TMP@", 5) == 0) {
            n += (size_t)snprintf(out + n, cap - n, "%s", tmp);
            s += 5;
        } else {
            out[n++] = *s++;
        }
    }
    out[n < cap ? n : cap - 1] = '\0';
}

START_TEST(main_file_mistakes_are_one_line_naming_file_and_line)
{
    const main_case *m = &main_cases[_i];
    char topology[PATH_MAX], err[2048], message[2048], expected[4096];
    emu_topology *t = (emu_topology *)1;
    ck_assert_ptr_nonnull(realpath(LISTING1, topology));
    tk_write_textf(at("bad.main"), m->text, topology);
    expand(m->message, topology, message, sizeof message);
    if (m->line)
        snprintf(expected, sizeof expected, "%s:%d: %s", at("bad.main"), m->line, message);
    else
        snprintf(expected, sizeof expected, "%s: %s", at("bad.main"), message);
    ck_assert_int_eq(emu_main_read(at("bad.main"), NULL, &t, err, sizeof err), EMU_E_TOPOLOGY);
    ck_assert_ptr_null(t);
    ck_assert_str_eq(err, expected);
}
END_TEST

START_TEST(main_file_notes_what_the_emulator_does_not_act_on)
{
    char topology[PATH_MAX], err[1024], *notes = NULL;
    size_t len = 0;
    emu_topology *t = NULL;
    ck_assert_ptr_nonnull(realpath("tests/topologies/good/direct.xml", topology));
    tk_write_textf(at("n.main"), "launch x agata-node-01\nset configuration_file %s x\nset library other.so x sink\n"
                                 "set action load x\n",
                   topology);
    FILE *mem = open_memstream(&notes, &len);
    ck_assert_int_eq(emu_main_read(at("n.main"), mem, &t, err, sizeof err), EMU_OK);
    fclose(mem);
    ck_assert_ptr_nonnull(strstr(notes, ":1: note: host 'agata-node-01' ignored: the emulator runs every actor here\n"));
    ck_assert_ptr_nonnull(strstr(notes, ":3: note: 'set library' replaces the <library> of 'sink' ("));
    ck_assert_ptr_nonnull(strstr(notes, ":4: note: 'set action load' ignored: the emulator makes NARVAL's calls "
                                        "itself\n"));
    ck_assert_str_eq(t->actors[1].library, "other.so");
    ck_assert_str_eq(t->actors[1].library_file, at("n.main"));
    ck_assert_str_eq(t->actors[1].library_dir, tmp);
    ck_assert_str_eq(t->actors[0].library, "lifecycle_producer.so");
    ck_assert_ptr_null(t->actors[0].conf_dir);
    free(notes);
    emu_topology_free(t);
}
END_TEST

static Suite *confdirs_suite(void)
{
    Suite *s = suite_create("confdirs");
    TCase *tc = tcase_create("foreign");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, a_foreign_filter_reads_its_own_file_in_the_default_layout);
    tcase_add_test(tc, a_foreign_filter_without_its_file_fails_in_process_config);
    tcase_add_loop_test(tc, the_host_names_an_actor_whose_output_is_not_adf, 0, 2);
    tcase_add_test(tc, two_actors_of_one_library_keep_their_own_configuration);
    tcase_add_test(tc, actors_that_see_the_same_files_share_one_library);
    tcase_add_test(tc, the_chain_loads_a_copy_only_for_a_different_configuration);
    tcase_add_test(tc, the_private_tree_is_gone_when_narwhal_exits);
    tcase_add_test(tc, a_foreign_error_stops_the_run_and_leaves_no_final_output);
    suite_add_tcase(s, tc);
    tc = tcase_create("search");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, the_default_layout_is_searched_most_specific_first);
    tcase_add_test(tc, conf_lists_search_each_directory_for_the_actor_first);
    suite_add_tcase(s, tc);
    tc = tcase_create("main");
    tcase_set_timeout(tc, 180);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, listing1_without_a_main_file_asks_for_one);
    tcase_add_test(tc, listing1_runs_verbatim_with_a_main_file);
    tcase_add_test(tc, the_shipped_main_file_validates);
    tcase_add_test(tc, listing1_runs_the_real_actors);
    tcase_add_loop_test(tc, main_file_mistakes_are_one_line_naming_file_and_line, 0, N_MAIN_CASES);
    tcase_add_test(tc, main_file_notes_what_the_emulator_does_not_act_on);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(confdirs_suite()); }

/* fuzz_summary.c: libFuzzer target: `narwhal summary` (the analysis library) on a file holding the mutated input, sometimes with its plots. */
#include <string.h>

#include "common.h"
#include "summary.h"

static FILE *devnull;
static char plots[PATH_MAX + 16];

/* gnuplot is kept off the PATH: the plots' CSV files and scripts are written, never drawn. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fz_make_dir("summary");
    snprintf(plots, sizeof plots, "%s/plots", fz_dir);
    setenv("PATH", "/nonexistent", 1);
    devnull = fopen("/dev/null", "w");
    FZ_CHECK(devnull != NULL);
    return 0;
}

/* A file is summarised, or refused with one line naming it.  One input in eight also
 * writes the plots' files, whose sizes the truth's energies drive. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[1024] = "";
    ana_summary s;
    ana_summary_options o = { .window = ANA_SUMMARY_WINDOW };
    const char *path = fz_input_file(data, size);
    if ((fz_hash(data, size) & 7) == 0)
        o.plots = plots;
    int rc = ana_summary_compute(path, &o, &s, err, sizeof err);
    if (rc != ANA_OK) {
        FZ_CHECK(rc == ANA_E_INPUT && strncmp(err, path, strlen(path)) == 0 && !strchr(err, '\n'));
        return 0;
    }
    FZ_CHECK(s.n_bins <= ANA_SUMMARY_MAX_KEV + 2 && s.n_lines <= ANA_SUMMARY_LINES);
    ana_summary_print(devnull, path, &o, &s);
    ana_summary_free(&s);
    return 0;
}

/* histo_write.c: writes histograms as RadWare .spe (with a text companion: calibration, counts per unit) and .m4b files and as CSV, each into a file of the caller's (histo_files), which it publishes with the others. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adf.h"
#include "histo_write.h"

typedef struct out_file {
    const histo_files *files;
    FILE *fp;
} out_file;

static histo_status open_file(out_file *f, const histo_files *files, const char *path, char *msg, size_t len)
{
    f->files = files;
    return files->create(files->ctx, path, &f->fp, msg, len);
}

static histo_status close_file(out_file *f, bool ok, char *msg, size_t len)
{
    return f->files->finish(f->files->ctx, ok, msg, len);
}

static bool put(out_file *f, const void *p, size_t n) { return fwrite(p, 1, n, f->fp) == n; }

static bool put_u32(out_file *f, uint32_t v)
{
    uint8_t b[4];
    adf_put_u32(b, v);
    return put(f, b, 4);
}

histo_status histo_write_spe(const histo_files *files, const char *path, const char *name, const uint64_t *bins,
                             uint32_t n, char *msg, size_t len)
{
    out_file f;
    char title[8];
    uint8_t *rec = malloc((size_t)n * 4);
    histo_status code;
    if (!rec) {
        snprintf(msg, len, "out of memory writing '%s'", path);
        return HISTO_E_NOMEM;
    }
    if ((code = open_file(&f, files, path, msg, len)) != HISTO_OK) {
        free(rec);
        return code;
    }
    size_t k = strlen(name);
    memset(title, ' ', sizeof title);
    memcpy(title, name, k < sizeof title ? k : sizeof title);
    for (uint32_t i = 0; i < n; i++)
        adf_put_f32(rec + 4 * (size_t)i, (float)bins[i]);
    bool ok = put_u32(&f, 24) && put(&f, title, sizeof title) && put_u32(&f, n) &&
              put_u32(&f, 1) && put_u32(&f, 1) && put_u32(&f, 1) && put_u32(&f, 24) &&
              put_u32(&f, 4 * n) && put(&f, rec, (size_t)n * 4) && put_u32(&f, 4 * n);
    free(rec);
    return close_file(&f, ok, msg, len);
}

/* The unit inside the last parentheses of an axis label: "keV" of "core energy (keV)". */
static void unit_of(const char *label, char *out, size_t len)
{
    const char *open = strrchr(label, '('), *close = strrchr(label, ')');
    if (open && close > open)
        snprintf(out, len, "%.*s", (int)(close - open - 1), open + 1);
    else
        snprintf(out, len, "unit");
}

histo_status histo_write_spe_notes(const histo_files *files, const char *path, const char *spe, const char *name,
                                   const char *quantity, const char *label, const histo_axis *a,
                                   const uint64_t *slots, char *msg, size_t len)
{
    out_file f;
    histo_status code = open_file(&f, files, path, msg, len);
    if (code)
        return code;
    double width = ((double)a->hi - a->lo) / a->bins;
    char unit[32];
    unit_of(label, unit, sizeof unit);
    uint64_t in_range = 0;
    for (uint32_t i = 0; i < a->bins; i++)
        in_range += slots[i];
    const uint64_t *extra = slots + a->bins;
    bool ok = fprintf(f.fp,
                      "# %s: a RadWare gf3 spectrum (.spe) written by Narwhal's histo; this file says what its "
                      "channels are\n"
                      "spectrum     %s\n"
                      "quantity     %s: %s\n"
                      "channels     %u\n"
                      "calibration  %s = %.9g + %.9g * ch   (ch from 0 at the channel's low edge, its centre at "
                      "ch + 0.5; gf3's offset %.9g and gain %.9g)\n"
                      "bin width    %.9g %s: counts per %s = counts / %.9g\n"
                      "counts       %llu in the channels; underflow %llu, overflow %llu, NaN %llu (not in the "
                      ".spe)\n",
                      spe, name, quantity, label, a->bins, label, (double)a->lo, width, (double)a->lo, width, width,
                      unit, unit, width, (unsigned long long)in_range, (unsigned long long)extra[HISTO_UNDER],
                      (unsigned long long)extra[HISTO_OVER], (unsigned long long)extra[HISTO_NAN]) > 0;
    return close_file(&f, ok, msg, len);
}

histo_status histo_write_m4b(const histo_files *files, const char *path, const uint64_t *bins, char *msg,
                             size_t len)
{
    out_file f;
    uint8_t row[4 * HISTO_M4B_SIDE];
    histo_status code = open_file(&f, files, path, msg, len);
    bool ok = true;
    if (code)
        return code;
    for (size_t r = 0; r < HISTO_M4B_SIDE && ok; r++) {
        for (size_t c = 0; c < HISTO_M4B_SIDE; c++) {
            uint64_t v = bins[r * HISTO_M4B_SIDE + c];
            adf_put_u32(row + 4 * c, (uint32_t)(v > INT32_MAX ? INT32_MAX : v));
        }
        ok = put(&f, row, sizeof row);
    }
    return close_file(&f, ok, msg, len);
}

static double edge(const histo_axis *a, uint64_t i)
{
    return a->lo + (double)i * ((double)a->hi - a->lo) / a->bins;
}

static bool csv_extras(out_file *f, const uint64_t *extra, const char *blanks)
{
    static const char *const names[HISTO_EXTRA] = { "underflow", "overflow", "nan" };
    bool ok = true;
    for (int i = 0; i < HISTO_EXTRA && ok; i++)
        ok = fprintf(f->fp, "%s,%s%llu\n", names[i], blanks, (unsigned long long)extra[i]) > 0;
    return ok;
}

static bool csv_1d(out_file *f, const histo_axis *a, const uint64_t *slots)
{
    bool ok = fprintf(f->fp, "bin,low,high,count\n") > 0;
    for (uint64_t i = 0; i < a->bins && ok; i++)
        if (slots[i])
            ok = fprintf(f->fp, "%llu,%.9g,%.9g,%llu\n", (unsigned long long)i, edge(a, i),
                         edge(a, i + 1), (unsigned long long)slots[i]) > 0;
    return ok && csv_extras(f, slots + a->bins, ",,");
}

static bool csv_2d(out_file *f, const histo_axis *ax, const histo_axis *ay, const uint64_t *slots)
{
    bool ok = fprintf(f->fp, "x_bin,y_bin,x_low,y_low,count\n") > 0;
    for (uint64_t i = 0; i < ax->bins && ok; i++)
        for (uint64_t j = 0; j < ay->bins && ok; j++) {
            uint64_t v = slots[i * ay->bins + j];
            if (v)
                ok = fprintf(f->fp, "%llu,%llu,%.9g,%.9g,%llu\n", (unsigned long long)i,
                             (unsigned long long)j, edge(ax, i), edge(ay, j),
                             (unsigned long long)v) > 0;
        }
    return ok && csv_extras(f, slots + (uint64_t)ax->bins * ay->bins, ",,,");
}

histo_status histo_write_csv(const histo_files *files, const char *path, const histo_group *g,
                             const uint64_t *slots, char *msg, size_t len)
{
    out_file f;
    histo_status code = open_file(&f, files, path, msg, len);
    if (code)
        return code;
    bool ok = g->dims == 1 ? csv_1d(&f, &g->ax[0], slots) : csv_2d(&f, &g->ax[0], &g->ax[1], slots);
    return close_file(&f, ok, msg, len);
}

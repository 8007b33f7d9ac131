/* ge2adf.c: ge2adf: reads a GammaEvents interaction list (AGATA Geant4 format) into event:data:psa frames the tracker takes, optionally smeared. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "sim/gammaevents.h"
#include "tracker/tracker_truth.h"

/*
 * Usage: ge2adf [--array FILE] [--smear A B] [--seed S] [--truth] [--unbuilt] [--spacing TICKS] IN OUT.adf
 *
 * Each event of IN (its γ lines and their interactions, lab frame) becomes
 * one event:data:psa frame: a data:psa member per crystal, each interaction a
 * hit at its crystal-frame position (the array's placement of its crystal,
 * default detector/arrays/agata180.txt) with its energy and segment.
 *   --smear A B   smear each position by a Gaussian of FWHM A + B sqrt(100 keV / e) mm
 *                 on each axis (AGATA's usual model: 2.7 6.2); off by default
 *   --seed S      seed of the smearing (1)
 *   --truth       write the event's narwhal:truth frame before it, so that a
 *                 chain can compare its results with what happened
 *   --unbuilt     write the members as separate data:psa frames (what the
 *                 crystals would send, for the event builder)
 *   --spacing T   timestamps: the k-th event at k * T ticks (2000: 20 us)
 */

typedef struct options {
    const char *array, *in, *out;
    tracker_smear smear;
    int truth, unbuilt;
    unsigned long long spacing;
} options;

static int usage(void)
{
    fprintf(stderr, "usage: ge2adf [--array FILE] [--smear A B] [--seed S] [--truth] [--unbuilt] "
                    "[--spacing TICKS] IN OUT.adf\n");
    return 2;
}

static int number(const char *s, double *v)
{
    char *end;
    *v = strtod(s, &end);
    return *end || end == s || *v < 0 || *v > 1e15 ? -1 : 0;
}

static int parse(int argc, char **argv, options *o)
{
    *o = (options){ "detector/arrays/agata180.txt", NULL, NULL, { 0, 0, 1 }, 0, 0, 2000 };
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        const char *a = argv[i];
        double v = 0, v2 = 0;
        if (strcmp(a, "--truth") == 0)
            o->truth = 1;
        else if (strcmp(a, "--unbuilt") == 0)
            o->unbuilt = 1;
        else if (strcmp(a, "--array") == 0 && i + 1 < argc)
            o->array = argv[++i];
        else if (strcmp(a, "--smear") == 0 && i + 2 < argc && number(argv[i + 1], &v) == 0 &&
                 number(argv[i + 2], &v2) == 0) {
            o->smear.a = v;
            o->smear.b = v2;
            i += 2;
        } else if (strcmp(a, "--seed") == 0 && i + 1 < argc && number(argv[i + 1], &v) == 0) {
            o->smear.seed = (uint64_t)v;
            i++;
        } else if (strcmp(a, "--spacing") == 0 && i + 1 < argc && number(argv[i + 1], &v) == 0) {
            o->spacing = (unsigned long long)v;
            i++;
        } else {
            return usage();
        }
    }
    if (argc - i != 2)
        return usage();
    o->in = argv[i];
    o->out = argv[i + 1];
    return 0;
}

typedef struct output {
    adf_file *file;
    uint8_t *buf;
    size_t cap;
    adf_writer w;
} output;

/* Writes the frames gathered so far to the file. */
static int flush(output *o, char *msg, size_t len)
{
    int rc = adf_file_write(o->file, o->buf, o->w.used);
    if (rc != ADF_OK)
        adf_file_describe(o->file, rc, msg, len);
    adf_writer_init(&o->w, o->buf, o->cap);
    return rc == ADF_OK ? 0 : -1;
}

/* The members of an event:data:psa frame just written, moved to the top level. */
static void unwrap_last(output *o, size_t start)
{
    size_t key = ADF_KEY_SIZE;
    memmove(o->buf + start, o->buf + start + key, o->w.used - start - key);
    o->w.used -= key;
}

static int put_event(output *o, const options *opt, uint32_t event, uint64_t ts, const adf_truth *t,
                     tracker_truth_scratch *x, char *msg, size_t len)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        size_t start = o->w.used;
        int rc = opt->truth ? adf_truth_write(&o->w, event, ts, t) : ADF_OK;
        if (rc == ADF_OK) {
            size_t psa_at = o->w.used;
            rc = tracker_truth_write_psa(&o->w, event, ts, t, &opt->smear, x);
            if (rc == ADF_OK && opt->unbuilt)
                unwrap_last(o, psa_at);
        }
        if (rc == ADF_OK)
            return 0;
        if (rc != ADF_E_NOSPACE || attempt == 1 || start == 0) {
            snprintf(msg, len, "%s: event %u: %s%s", opt->in, event, adf_strerror(rc),
                     rc == ADF_E_LIMIT ? " (a crystal with more than 64 interactions)" : "");
            return -1;
        }
        adf_writer_clear_error(&o->w);
        o->w.used = start;
        if (flush(o, msg, len) != 0)
            return -1;
    }
    return -1;
}

static int convert(const options *opt, gev_reader *r, output *o, char *msg, size_t len)
{
    adf_truth *t = malloc(sizeof *t);
    tracker_truth_scratch *x = malloc(sizeof *x);
    uint32_t event;
    unsigned long long n = 0;
    int rc = t && x ? 0 : -1;
    if (rc)
        snprintf(msg, len, "out of memory");
    while (rc == 0 && (rc = gev_next(r, t, &event, msg, len)) == 1) {
        rc = put_event(o, opt, event, n * opt->spacing, t, x, msg, len);
        n++;
    }
    if (rc == 0)
        rc = flush(o, msg, len);
    if (rc == 0)
        fprintf(stderr, "ge2adf: %llu events from %s into %s%s%s\n", n, opt->in, opt->out,
                opt->smear.a > 0 || opt->smear.b > 0 ? ", positions smeared" : "",
                opt->unbuilt ? ", one data:psa frame per crystal" : "");
    free(t);
    free(x);
    return rc;
}

int main(int argc, char **argv)
{
    options opt;
    char msg[1024];
    det_array array = { 0 };
    gev_reader *r = NULL;
    output o = { .cap = 4 << 20 };
    int rc = 1;
    if (parse(argc, argv, &opt) != 0)
        return 2;
    if (det_array_load_any(&array, opt.array, msg, sizeof msg) != 0 || gev_open(&r, opt.in, &array, msg, sizeof msg) != 0)
        goto fail;
    if (!(o.buf = malloc(o.cap))) {
        snprintf(msg, sizeof msg, "out of memory");
        goto fail;
    }
    if (adf_file_open_write(&o.file, opt.out, 0) != ADF_OK) {
        snprintf(msg, sizeof msg, "cannot create %s: %s", opt.out, strerror(errno));
        goto fail;
    }
    adf_writer_init(&o.w, o.buf, o.cap);
    rc = convert(&opt, r, &o, msg, sizeof msg);
    if (adf_file_close(o.file) != ADF_OK && rc == 0) {
        snprintf(msg, sizeof msg, "writing %s failed: %s", opt.out, strerror(errno));
        rc = 1;
    }
fail:
    if (rc)
        fprintf(stderr, "ge2adf: %s\n", msg);
    if (r)
        gev_close_reader(r);
    det_array_free(&array);
    free(o.buf);
    return rc ? 1 : 0;
}

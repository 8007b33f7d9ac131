/* psa_truth.h: a PSA run's output read back for its accuracy: each data:psa frame with the narwhal:truth frame of its event before it (bench-psa --accuracy and psa-pairs score). */
#ifndef NARWHAL_TOOL_PSA_TRUTH_H
#define NARWHAL_TOOL_PSA_TRUTH_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adf.h"

typedef void tool_psa_fn(const adf_truth *t, const adf_psa *p, void *ctx);

/* Calls fn for every data:psa frame of the file at path whose event's truth
 * frame came before it.  0, or 1 with a message on stderr that names the
 * program (who) and the file. */
static inline int tool_psa_with_truth(const char *who, const char *path, tool_psa_fn *fn, void *ctx)
{
    adf_file *f;
    size_t cap = (size_t)64 << 20, used, frames;
    uint8_t *buf = malloc(cap);
    adf_truth *t = malloc(sizeof *t);
    adf_psa p;
    char msg[512];
    int rc = adf_file_open_read(&f, path), have = 0;
    uint32_t event = 0;
    if (rc || !buf || !t) {
        fprintf(stderr, "%s: cannot read %s: %s\n", who, path, rc ? strerror(errno) : "no memory");
        if (!rc)
            adf_file_close(f);
        free(buf);
        free(t);
        return 1;
    }
    while ((rc = adf_file_read(f, buf, cap, &used, &frames)) == ADF_OK && used) {
        adf_iter it;
        adf_frame fr;
        adf_iter_init(&it, buf, used);
        while (adf_iter_next(&it, &fr) > 0) {
            if (fr.key.id == ADF_ID_NW_TRUTH) {
                have = adf_truth_read(&fr, t) == ADF_OK;
                event = fr.key.event;
            } else if (fr.key.id == ADF_ID_DATA_PSA && have && fr.key.event == event &&
                       adf_psa_read(&fr, &p) == ADF_OK) {
                fn(t, &p, ctx);
            }
        }
    }
    if (rc != ADF_OK) {
        adf_file_describe(f, rc, msg, sizeof msg);
        fprintf(stderr, "%s: %s\n", who, msg);
    }
    adf_file_close(f);
    free(buf);
    free(t);
    return rc == ADF_OK ? 0 : 1;
}

#endif

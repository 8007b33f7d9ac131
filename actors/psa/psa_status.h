/* psa_status.h: what the PSA library's calls return: its own codes, which psa.c (the actor's glue) turns into NARVAL's. */
#ifndef NARWHAL_PSA_STATUS_H
#define NARWHAL_PSA_STATUS_H

/* Every call that can fail returns one of these (with a sentence in its msg where it takes one). */
typedef enum psa_status {
    PSA_OK = 0,
    PSA_E_NOMEM,       /* an allocation failed */
    PSA_E_OUTPUT_SIZE, /* the output does not fit its buffer (the size needed is given back) */
    PSA_E_INTERNAL,    /* a frame did not take its computed size */
    PSA_E_DEVICE,      /* the GPU failed, or Device gpu without a usable one */
    PSA_E_CONFIG,      /* the GPU key names no device of this host */
} psa_status;

/* Where the library's warnings go (the GPU given up, a batch moved to the
 * CPU): ctx is psa_setup's log_ctx, msg one sentence; NULL: nowhere. */
typedef void psa_warn_fn(void *ctx, const char *msg);

#endif

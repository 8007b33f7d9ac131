/* histo_status.h: what the histogram library's calls return: its own codes, which histo_actor.c (the actors' glue) turns into NARVAL's. */
#ifndef NARWHAL_HISTO_STATUS_H
#define NARWHAL_HISTO_STATUS_H

/* Every call that can fail returns one of these with a sentence in its msg. */
typedef enum histo_status {
    HISTO_OK = 0,
    HISTO_E_NOMEM,  /* an allocation failed */
    HISTO_E_INPUT,  /* a frame libadf rejects */
    HISTO_E_DATA,   /* a crystal id or segment beyond Crystals or Segments */
    HISTO_E_CONFIG, /* a declaration that cannot be, or a GPU key naming no device of this host */
    HISTO_E_IO,     /* a file or directory that cannot be written */
    HISTO_E_DEVICE, /* the GPU failed, or Device gpu without a usable one */
} histo_status;

#endif

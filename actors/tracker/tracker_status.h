/* tracker_status.h: what the tracker library's calls return: its own codes, which tracker.c (the actor's glue) turns into NARVAL's. */
#ifndef NARWHAL_TRACKER_STATUS_H
#define NARWHAL_TRACKER_STATUS_H

/* Every call that can fail returns one of these with a sentence in its msg. */
typedef enum tr_status {
    TR_OK = 0,
    TR_E_NOMEM,  /* an allocation failed */
    TR_E_INPUT,  /* a frame libadf rejects, or a member of the wrong type */
    TR_E_DATA,   /* a well-formed frame whose values the array cannot take */
    TR_E_DEVICE, /* the GPU failed, or Device gpu without a usable one */
    TR_E_CONFIG, /* the GPU key names no device of this host */
} tr_status;

#endif

/* kit_crystals.h: a `Crystals` key's value — "all", or crystal ids and ranges A-B — as a set the actors test ids against. */
#ifndef NARWHAL_KIT_CRYSTALS_H
#define NARWHAL_KIT_CRYSTALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kit.h"

/* The crystals a producer emits, an event builder waits for: every one
 * (all), or the ids listed.  Values: "all" alone, or ids 0..65535 and
 * ranges "A-B" (A <= B), several per line or on several lines; an id given
 * twice is an error (a typo is likelier than a wish). */
typedef struct kit_crystals {
    bool all;
    size_t n;        /* ids listed (0 with all) */
    uint16_t *id;    /* ascending */
    uint8_t on[8192]; /* bit id: listed */
} kit_crystals;

/* Reads list l (the values of key `key` in `file`); NARVAL_E_CONFIG with
 * "FILE:LINE: key 'K': why" in msg, NARVAL_E_NOMEM.  *c is set up only on
 * success (free it with kit_crystals_free). */
unsigned kit_crystals_read(const kit_list *l, const char *file, const char *key, kit_crystals *c, char *msg,
                           size_t len);
void kit_crystals_free(kit_crystals *c);
static inline bool kit_crystals_has(const kit_crystals *c, unsigned id)
{
    return c->all || (id < 65536u && (c->on[id >> 3] >> (id & 7) & 1));
}
/* "170 175-176": the ids, ranges folded, for messages (cut with "..." to fit). */
void kit_crystals_describe(const kit_crystals *c, char *out, size_t len);

#endif

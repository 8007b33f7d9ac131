/* summary_seen.c: `narwhal summary`'s set of the events whose truth it has read, by event number and timestamp. */
#include "summary_data.h"

#include <stdlib.h>

struct sum_seen_slot {
    uint64_t timestamp;
    uint32_t event;
    uint32_t used;
};

static size_t slot_of(uint32_t event, uint64_t timestamp, size_t cap)
{
    uint64_t h = (timestamp ^ ((uint64_t)event << 32 | event)) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h ^ h >> 29) & (cap - 1);
}

/* The slot holding (event, timestamp), or the empty one where it goes (linear probing). */
static struct sum_seen_slot *find(struct sum_seen_slot *slot, size_t cap, uint32_t event, uint64_t timestamp)
{
    for (size_t i = slot_of(event, timestamp, cap);; i = (i + 1) & (cap - 1))
        if (!slot[i].used || (slot[i].event == event && slot[i].timestamp == timestamp))
            return &slot[i];
}

/* Twice the room, every entry moved: the table stays at most half full. */
static int grow(sum_seen *s)
{
    size_t cap = s->cap ? 2 * s->cap : 1024;
    struct sum_seen_slot *slot = calloc(cap, sizeof *slot);
    if (!slot)
        return -1;
    for (size_t i = 0; i < s->cap; i++)
        if (s->slot[i].used)
            *find(slot, cap, s->slot[i].event, s->slot[i].timestamp) = s->slot[i];
    free(s->slot);
    s->slot = slot;
    s->cap = cap;
    return 0;
}

int sum_seen_add(sum_seen *s, uint32_t event, uint64_t timestamp)
{
    if (2 * (s->n + 1) > s->cap && grow(s) != 0)
        return -1;
    struct sum_seen_slot *at = find(s->slot, s->cap, event, timestamp);
    if (at->used)
        return 0;
    *at = (struct sum_seen_slot){.timestamp = timestamp, .event = event, .used = 1};
    s->n++;
    return 1;
}

void sum_seen_free(sum_seen *s)
{
    free(s->slot);
    s->slot = NULL;
    s->n = s->cap = 0;
}

/* spans.c: one buffer's top-level frames walked by several threads at once, each from a guessed frame start, checked against one walk from the start. */
#include "adf.h"

#include <stdbool.h>

#define SPAN_CHAIN 4          /* frames in a row that must look whole for a guessed start */
#define SPAN_SCAN (64u << 10) /* bytes a guess looks through before giving its span to the one before */
#define SPAN_MIN (1u << 20)   /* bytes a span should have at least: below that, fewer spans */
#define NO_CUT ((size_t)-1)

/* Whether SPAN_CHAIN frames in a row from `at` (or those up to the end of
 * the buffer, landing on it exactly) have a length that fits and an id the
 * library knows. */
static bool looks_whole(const uint8_t *buf, size_t size, size_t at)
{
    for (int i = 0; i < SPAN_CHAIN && at < size; i++) {
        if (size - at < ADF_KEY_SIZE)
            return false;
        uint32_t length = adf_get_u32(buf + at);
        if (length < ADF_KEY_SIZE || length > size - at || !adf_id_name(adf_get_u32(buf + at + 4)))
            return false;
        at += length;
    }
    return true;
}

static size_t guess_start(const uint8_t *buf, size_t size, size_t from)
{
    size_t until = size - from > SPAN_SCAN ? from + SPAN_SCAN : size;
    for (size_t at = from; at < until; at++)
        if (looks_whole(buf, size, at))
            return at;
    return NO_CUT;
}

int adf_spans_cut(adf_spans *s, const void *buf, size_t size, int n)
{
    int most = (int)(size / SPAN_MIN);
    n = n > most ? most : n;
    n = n > ADF_MAX_SPANS ? ADF_MAX_SPANS : n < 1 ? 1 : n;
    s->n = n;
    s->cut[0] = 0;
    s->cut[n] = size;
#pragma omp parallel for num_threads(n) schedule(static, 1) if (n > 1)
    for (int t = 1; t < n; t++)
        s->cut[t] = guess_start(buf, size, size / n * t);
    /* a span without a guess goes to the one before; the guesses never go back */
    for (int t = n - 1; t > 0; t--)
        if (s->cut[t] == NO_CUT)
            s->cut[t] = s->cut[t + 1];
    for (int t = 1; t < n; t++)
        if (s->cut[t] < s->cut[t - 1])
            s->cut[t] = s->cut[t - 1];
    for (int t = 0; t < n; t++) {
        adf_iter_init(&s->it[t], buf, size);
        s->it[t].pos = s->cut[t];
    }
    return n;
}

int adf_spans_next(adf_spans *s, int t, adf_frame *f)
{
    adf_iter *it = &s->it[t];
    if (it->status == ADF_OK && it->pos >= s->cut[t + 1])
        return 0;
    return adf_iter_next(it, f);
}

int adf_spans_agree(const adf_spans *s)
{
    int t = 0;
    while (t < s->n && s->it[t].status == ADF_OK && s->it[t].pos == s->cut[t + 1])
        t++;
    return t;
}

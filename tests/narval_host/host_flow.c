/* host_flow.c: how a block travels down the chain: round robin over a stage's instances, fixed output buffers, every error code checked, the end of data given to every instance. */
#include <stdarg.h>

#include "host.h"

void host_violation(host *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "host: contract: cycle %d: ", h->cycle);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    h->violations++;
}

unsigned host_checked(const host_stage *s, int i, const char *what, unsigned code)
{
    if (code == HOST_UNSET_CODE)
        fprintf(stderr, "host: %s#%d: %s returned without setting *error_code\n", s->name, i + 1, what);
    else if (code != 0)
        fprintf(stderr, "host: %s#%d: %s: error %u (%s)\n", s->name, i + 1, what, code, narval_strerror(code));
    return code;
}

unsigned host_call(host *h, host_stage *s, int i, narval_lifecycle_fn *fn, const char *what)
{
    unsigned code = HOST_UNSET_CODE;
    if (!fn)
        return 0; /* an optional call the library lacks succeeds */
    fn(s->inst[i], &code);
    return host_checked(s, i, what, code);
}

static int deliver(host *h, int d, int i, uint8_t *buf, unsigned size);

/* Notes that instance i of stage `from` emitted n meta:eof frames; true when that completes the set. */
static bool eof_seen(host *h, const host_stage *up, host_stage *down, int i, int n)
{
    uint32_t bit = 1u << i, all = (1u << up->n) - 1u;
    bool was_complete = down->eof_from == all;
    if (n == 0)
        return false;
    if (n > 1 || (down->eof_from & bit))
        host_violation(h, "%s#%d emitted more than one meta:eof", up->name, i + 1);
    down->eof_from |= bit;
    return !was_complete && down->eof_from == all;
}

/* The output of instance i of stage `from` goes on.  A stream that is neither split nor merged
 * passes as the actor produced it (NARVAL's case).  Where it is split over several instances, or
 * several instances' streams merge, each instance's stream must still end in-band: the host holds
 * back the meta:eof frames it finds and, once every instance of `from` has sent its own, gives one
 * to every instance of the next stage (so a filter that holds frames, an event builder, flushes in
 * every instance, and one meta:eof reaches the consumer). */
int host_pass(host *h, int from, int i, uint8_t *buf, unsigned size)
{
    host_stage *up = &h->st[from], *down = &h->st[from + 1];
    int n, rc = 0;
    if (up->n == 1 && down->n == 1) {
        eof_seen(h, up, down, i, host_eofs(buf, size));
        return deliver(h, from + 1, (int)(down->next++ % (unsigned)down->n), buf, size);
    }
    unsigned left = host_strip_eof(buf, size, down->eof, sizeof down->eof, &down->eof_len, &n);
    if (n > 0 && down->eof_len == 0)
        host_violation(h, "a meta:eof of %s#%d is over %zu bytes", up->name, i + 1, sizeof down->eof);
    if (left > 0 && (rc = deliver(h, from + 1, (int)(down->next++ % (unsigned)down->n), buf, left)) != 0)
        return rc;
    bool complete = eof_seen(h, up, down, i, n);
    for (int j = 0; complete && down->eof_len > 0 && j < down->n && rc == 0; j++)
        rc = deliver(h, from + 1, j, down->eof, down->eof_len);
    return rc;
}

/* Instance i of stage d takes a block; a filter's output goes on at once. */
static int deliver(host *h, int d, int i, uint8_t *buf, unsigned size)
{
    host_stage *s = &h->st[d];
    unsigned used = 0, code = HOST_UNSET_CODE;
    if (host_count_block(&s->in, buf, size, s->name) != 0)
        return NARVAL_E_INPUT;
    s->inst_blocks[i]++;
    if (s->role == HOST_CONSUMER) {
        s->lib.consume(s->inst[i], buf, size, &code);
        return (int)host_checked(s, i, "process_block", code);
    }
    s->lib.filter(s->inst[i], buf, size, s->buffer, s->size, &used, &code);
    if (host_checked(s, i, "process_block", code) != 0)
        return (int)code;
    if (used > s->size) {
        fprintf(stderr, "host: %s#%d: process_block used %u bytes of a buffer of %u\n", s->name, i + 1, used, s->size);
        return NARVAL_E_INTERNAL;
    }
    if (used == 0)
        return 0;
    if (host_count_block(&s->out, s->buffer, used, s->name) != 0)
        return NARVAL_E_INTERNAL;
    return host_pass(h, d, i, s->buffer, used);
}

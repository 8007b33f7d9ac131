/* progress.c: the progress line of `narwhal run`: events and crystal-events so far, rates, the busiest actor, the time left. */
#include "progress.h"

#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

double emu_busy_share(const emu_live_sample *prev, const emu_live_sample *last, size_t k)
{
    double window = last->t - prev->t;
    if (window <= 0)
        return 0;
    double busy = (double)(last->actor[k].busy_ns - prev->actor[k].busy_ns) * 1e-9 / window;
    return busy < 0 ? 0 : busy > 1 ? 1 : busy;
}

static double rate(unsigned long long before, unsigned long long after, double window)
{
    return window > 0 && after >= before ? (double)(after - before) / window : 0;
}

/* The least advanced producer's fraction, and the time left at the pace
 * each kept so far (the longest); unknown when a producer cannot tell. */
static void time_left(const emu_live *l, const emu_live_sample *last, emu_figures *f)
{
    int any = 0;
    f->fraction = f->eta = -1;
    for (size_t k = 0; k < l->n; k++) {
        const emu_live_counts *c = &last->actor[k];
        if (l->c->topology->actors[k].role != EMU_PRODUCER)
            continue;
        if (!c->unit || c->total == 0)
            return;
        double done = c->done > c->total ? 1 : (double)c->done / (double)c->total;
        double eta = done > 0 && f->elapsed > 0 ? f->elapsed * (1 - done) / done : -1;
        if (!any || done < f->fraction)
            f->fraction = done;
        if (eta < 0 || (any && f->eta < 0))
            f->eta = -1;
        else if (!any || eta > f->eta)
            f->eta = eta;
        any = 1;
    }
}

void emu_figures_of(const emu_live *l, const emu_live_sample *prev, const emu_live_sample *last, emu_figures *f)
{
    memset(f, 0, sizeof *f);
    f->window = last->t - prev->t;
    f->elapsed = last->run_t0 > 0 ? last->t - last->run_t0 : 0;
    f->event_actor = f->busiest = -1;
    unsigned long long crystals_before = 0;
    for (size_t k = 0; k < l->n; k++) {
        if (l->c->topology->actors[k].role == EMU_PRODUCER) {
            f->crystals += last->actor[k].crystals;
            crystals_before += prev->actor[k].crystals;
        }
        if (last->actor[k].events)
            f->event_actor = (long)k;
        double share = emu_busy_share(prev, last, k);
        if (share > 0 && (f->busiest < 0 || share > f->busiest_share)) {
            f->busiest = (long)k;
            f->busiest_share = share;
        }
    }
    f->crystal_rate = rate(crystals_before, f->crystals, f->window);
    if (f->event_actor >= 0) {
        f->events = last->actor[f->event_actor].events;
        f->event_rate = rate(prev->actor[f->event_actor].events, f->events, f->window);
    }
    time_left(l, last, f);
}

/* 1234567 as "1,234,567". */
static const char *grouped(char *buf, size_t len, unsigned long long v)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%llu", v), at = 0;
    for (int i = 0; i < n && (size_t)at + 2 < len; i++) {
        if (i && (n - i) % 3 == 0)
            buf[at++] = ',';
        buf[at++] = digits[i];
    }
    buf[at] = '\0';
    return buf;
}

static const char *duration(char *buf, size_t len, double s)
{
    if (s < 60)
        snprintf(buf, len, "%.0f s", s);
    else if (s < 3600)
        snprintf(buf, len, "%d min %02d s", (int)(s / 60), (int)s % 60);
    else
        snprintf(buf, len, "%d h %02d min", (int)(s / 3600), (int)(s / 60) % 60);
    return buf;
}

/* The producers' total when they all count one unit ("of 100,000 events"). */
static void total_of(char *buf, size_t len, const emu_live *l, const emu_live_sample *last)
{
    unsigned long long total = 0;
    const char *unit = NULL;
    char n[32];
    buf[0] = '\0';
    for (size_t k = 0; k < l->n; k++) {
        const emu_live_counts *c = &last->actor[k];
        if (l->c->topology->actors[k].role != EMU_PRODUCER || !c->unit)
            continue;
        if (unit && strcmp(unit, c->unit) != 0)
            return;
        unit = c->unit;
        total += c->total;
    }
    if (unit)
        snprintf(buf, len, " of %s %s", grouped(n, sizeof n, total), unit);
}

void emu_progress_format(char *buf, size_t len, const emu_live *l, const emu_figures *f,
                         const emu_live_sample *last)
{
    char a[32], b[32], c[32], d[32], of[96];
    size_t at = 0;
#define PUT(...) (at += (size_t)snprintf(buf + at, at < len ? len - at : 0, __VA_ARGS__))
    PUT("%s %s: %s crystal-events (%s/s)", emu_state_name(last->state), duration(a, sizeof a, f->elapsed),
        grouped(b, sizeof b, f->crystals), grouped(c, sizeof c, (unsigned long long)(f->crystal_rate + 0.5)));
    if (f->event_actor >= 0)
        PUT(", %s events (%s/s)", grouped(a, sizeof a, f->events),
            grouped(d, sizeof d, (unsigned long long)(f->event_rate + 0.5)));
    if (f->busiest >= 0)
        PUT("; busiest '%s' %.0f%%", l->c->topology->actors[f->busiest].name, 100 * f->busiest_share);
    if (f->fraction >= 0) {
        total_of(of, sizeof of, l, last);
        PUT("; %.0f%%%s", 100 * f->fraction, of);
    }
    if (f->eta >= 0)
        PUT(", about %s left", duration(a, sizeof a, f->eta));
#undef PUT
}

static int columns(FILE *out)
{
    struct winsize w;
    return ioctl(fileno(out), TIOCGWINSZ, &w) == 0 && w.ws_col > 20 ? w.ws_col : 80;
}

void emu_progress_tick(void *ctx, const emu_live *l, const emu_live_sample *prev, const emu_live_sample *last)
{
    emu_progress *p = ctx;
    char line[512];
    emu_figures f;
    if (p->every <= 0 || last->t - p->last_print < p->every - 0.05 || last->run_t0 <= 0)
        return;
    emu_figures_of(l, prev, last, &f);
    emu_progress_format(line, sizeof line, l, &f, last);
    p->last_print = last->t;
    if (p->tty) {
        /* One screen line, rewritten: longer ones would wrap and scroll. */
        fprintf(p->out, "\rnarwhal: %.*s\033[K", columns(p->out) - 10, line);
        p->open = 1;
    } else {
        fprintf(p->out, "narwhal: %s\n", line);
    }
    fflush(p->out);
}

void emu_progress_end(emu_progress *p)
{
    if (!p->open)
        return;
    fputs("\r\033[K", p->out);
    fflush(p->out);
    p->open = 0;
}

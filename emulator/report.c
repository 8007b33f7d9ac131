/* report.c: the table printed at the end of a run: per actor blocks, frames, bytes, time and share. */
#include "report.h"

#include <signal.h>
#include <string.h>

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static int column_width(const emu_chain *c, int library, int minimum)
{
    int width = minimum;
    for (size_t k = 0; k < c->topology->n_actors; k++) {
        const char *text = library ? base_name(c->libraries[c->library_of[k]].path) : c->topology->actors[k].name;
        int len = (int)strlen(text);
        if (len > width)
            width = len;
    }
    return width;
}

static void print_end(FILE *out, const emu_run_result *r)
{
    switch (r->end) {
    case EMU_END_DATA: fputs("ended at the end of the data", out); break;
    case EMU_END_LIMIT: fputs("ended after the requested number of blocks", out); break;
    case EMU_END_SIGNAL: fprintf(out, "stopped by %s", r->signal == SIGTERM ? "SIGTERM" : "SIGINT"); break;
    case EMU_END_ERROR: fputs("stopped by an error", out); break;
    }
}

void emu_report_print(FILE *out, const emu_chain *c, const emu_run_result *r)
{
    int wn = column_width(c, 0, 5), wl = column_width(c, 1, 7);
    fprintf(out, "%-*s  %-*s  %8s  %10s  %10s  %12s  %12s  %9s  %6s\n", wn, "actor", wl, "library", "blocks",
            "frames in", "frames out", "bytes in", "bytes out", "seconds", "share");
    for (size_t k = 0; k < c->topology->n_actors; k++) {
        const emu_actor_stats *st = &r->actors[k];
        double share = r->wall_seconds > 0 ? 100.0 * st->seconds / r->wall_seconds : 0.0;
        fprintf(out, "%-*s  %-*s  %8llu  %10llu  %10llu  %12llu  %12llu  %9.3f  %5.1f%%\n", wn,
                c->topology->actors[k].name, wl, base_name(c->libraries[c->library_of[k]].path), st->blocks,
                st->frames_in, st->frames_out, st->bytes_in, st->bytes_out, st->seconds, share);
    }
    for (size_t k = 0; k < c->topology->n_actors; k++)
        if (r->actors[k].grown)
            fprintf(out, "output buffer of '%s' grown %llu time(s) to %u bytes (the topology gives %u)\n",
                    c->topology->actors[k].name, r->actors[k].grown, r->actors[k].buffer_size,
                    c->topology->actors[k].output_size);
    fprintf(out, "wall time %.3f s, %llu producer blocks, ", r->wall_seconds, r->blocks);
    print_end(out, r);
    fputc('\n', out);
}

void emu_report_chain(FILE *out, const emu_topology *t)
{
    for (size_t k = 0; k < t->n_actors; k++)
        fprintf(out, "%s%s", k ? " -> " : "", t->actors[k].name);
}

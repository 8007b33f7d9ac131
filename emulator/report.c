/* report.c: the table printed at the end of a run: per actor blocks, frames, bytes, time, share and waits. */
#include "report.h"

#include "adf.h"

#include <signal.h>
#include <stdlib.h>
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

static void print_end(FILE *out, enum emu_end end, int signal)
{
    switch (end) {
    case EMU_END_DATA: fputs("ended at the end of the data", out); break;
    case EMU_END_LIMIT: fputs("ended after the requested number of blocks", out); break;
    case EMU_END_SIGNAL: fprintf(out, "stopped by %s", signal == SIGTERM ? "SIGTERM" : "SIGINT"); break;
    case EMU_END_ERROR: fputs("stopped by an error", out); break;
    }
}

/* With --cycles, one line per run: what went in at the top and came out at
 * the bottom of the chain (the table sums the runs). */
static void print_runs(FILE *out, const emu_run_result *r)
{
    if (r->cycles < 2)
        return;
    for (unsigned i = 0; i < r->runs; i++) {
        const emu_cycle_stats *c = &r->cycle[i];
        fprintf(out, "run %u: %llu producer blocks, %llu frames produced, %llu consumed, ", i + 1, c->blocks,
                c->produced, c->consumed);
        if (c->pauses)
            fprintf(out, "%llu pause(s), ", c->pauses);
        print_end(out, c->end, r->signal);
        fputc('\n', out);
    }
}

/* Pipelined: the seconds a thread waited, "-" where the actor has no such side. */
static void print_wait(FILE *out, int applies, double seconds)
{
    if (applies)
        fprintf(out, "  %9.3f", seconds);
    else
        fprintf(out, "  %9s", "-");
}

/* Across MPI ranks: the rank and host that ran the actor (a heading for k = n). */
static void print_place(FILE *out, const emu_run_result *r, size_t k, size_t n)
{
    if (!r->ranks)
        return;
    if (k == n)
        fprintf(out, "  %4s  %s", "rank", "host");
    else
        fprintf(out, "  %4d  %s", r->rank_of[k], r->host_of[k]);
}

/* process_device's answer, "-" for an actor that gave none. */
static const char *device_of(const emu_actor_stats *st)
{
    return st->device[0] ? st->device : "-";
}

/* The device column's width: 0 (no column) when no actor said where it computes. */
static int device_width(const emu_run_result *r)
{
    int width = 0;
    for (size_t k = 0; k < r->n_actors; k++)
        if (r->actors[k].device[0] && (int)strlen(r->actors[k].device) > width)
            width = (int)strlen(r->actors[k].device);
    return width && width < 6 ? 6 : width;
}

/* The device column, before the rank and host columns (which keep the end of
 * the line: the MPI tests read them there), padded only when they follow. */
static void print_device(FILE *out, const emu_run_result *r, int width, const char *text)
{
    if (width)
        fprintf(out, "  %-*s", r->ranks ? width : 0, text);
}

static void print_rows(FILE *out, const emu_chain *c, const emu_run_result *r)
{
    size_t n = c->topology->n_actors;
    int wn = column_width(c, 0, 5), wl = column_width(c, 1, 7), wd = device_width(r);
    fprintf(out, "%-*s  %-*s  %8s  %10s  %10s  %12s  %12s  %9s  %6s", wn, "actor", wl, "library", "blocks",
            "frames in", "frames out", "bytes in", "bytes out", "seconds", "share");
    if (r->ring_depth)
        fprintf(out, "  %9s  %9s", "wait in", "wait out");
    print_device(out, r, wd, "device");
    print_place(out, r, n, n);
    fputc('\n', out);
    for (size_t k = 0; k < n; k++) {
        const emu_actor_stats *st = &r->actors[k];
        double share = r->wall_seconds > 0 ? 100.0 * st->seconds / r->wall_seconds : 0.0;
        fprintf(out, "%-*s  %-*s  %8llu  %10llu  %10llu  %12llu  %12llu  %9.3f  %5.1f%%", wn,
                c->topology->actors[k].name, wl, base_name(c->libraries[c->library_of[k]].path), st->blocks,
                st->frames_in, st->frames_out, st->bytes_in, st->bytes_out, st->seconds, share);
        if (r->ring_depth) {
            enum emu_role role = c->topology->actors[k].role;
            print_wait(out, role != EMU_PRODUCER, st->wait_input);
            print_wait(out, role != EMU_CONSUMER, st->wait_output);
        }
        print_device(out, r, wd, device_of(st));
        print_place(out, r, k, n);
        fputc('\n', out);
    }
}

/* How fast the producer's frames went through while blocks ran, and which
 * actor took the most of that time: the one to speed up. */
static void print_throughput(FILE *out, const emu_chain *c, const emu_run_result *r)
{
    if (r->block_seconds <= 0)
        return;
    unsigned long long frames = 0;
    for (size_t k = 0; k < c->topology->n_actors; k++)
        if (c->topology->actors[k].role == EMU_PRODUCER)
            frames += r->actors[k].frames_out;
    if (r->ranks)
        fprintf(out, "blocks ran %.3f s pipelined across %u MPI ranks (a thread per actor, rings of %u buffers)",
                r->block_seconds, r->ranks, r->ring_depth);
    else if (r->ring_depth)
        fprintf(out, "blocks ran %.3f s pipelined (a thread per actor, rings of %u buffers)", r->block_seconds,
                r->ring_depth);
    else
        fprintf(out, "blocks ran %.3f s sequentially", r->block_seconds);
    if (r->strict)
        fputs(" under --strict", out);
    fprintf(out, ": %llu producer frames, %.1f frames/s\n", frames, (double)frames / r->block_seconds);
    size_t busiest = 0;
    for (size_t k = 1; k < c->topology->n_actors; k++)
        if (r->actors[k].block_seconds > r->actors[busiest].block_seconds)
            busiest = k;
    fprintf(out, "busiest actor: '%s', %.3f s in process_block (%.1f%% of the time blocks ran)\n",
            c->topology->actors[busiest].name, r->actors[busiest].block_seconds,
            100.0 * r->actors[busiest].block_seconds / r->block_seconds);
    double inside = 0, counting = 0;
    for (size_t k = 0; k < c->topology->n_actors; k++) {
        inside += r->actors[k].block_seconds;
        counting += r->actors[k].count_seconds;
    }
    if (r->ring_depth || r->ranks) /* pipelined, the actors' threads overlap and the difference means nothing */
        return;
    fprintf(out, "the emulator's own: %.3f s between the calls, of which %.3f s on the count of their output's frames",
            r->block_seconds - inside, counting);
    const char *sep = " (";
    for (size_t k = 0; k < c->topology->n_actors; k++)
        if (r->actors[k].count_seconds >= 0.0005) {
            fprintf(out, "%s'%s' %.3f", sep, c->topology->actors[k].name, r->actors[k].count_seconds);
            sep = ", ";
        }
    fputs(*sep == ',' ? ")\n" : "\n", out);
}

void emu_report_print(FILE *out, const emu_chain *c, const emu_run_result *r)
{
    print_rows(out, c, r);
    for (size_t k = 0; k < c->topology->n_actors; k++)
        if (r->actors[k].grown)
            fprintf(out, "output buffer of '%s' grown %llu time(s) to %u bytes (the topology gives %u)\n",
                    c->topology->actors[k].name, r->actors[k].grown, r->actors[k].buffer_size,
                    c->topology->actors[k].output_size);
    print_throughput(out, c, r);
    print_runs(out, r);
    fprintf(out, "wall time %.3f s, %llu producer blocks, ", r->wall_seconds, r->blocks);
    if (r->cycles > 1)
        fprintf(out, "%u of %u runs, ", r->runs, r->cycles);
    if (r->pauses)
        fprintf(out, "%llu pause(s), ", r->pauses);
    print_end(out, r->end, r->signal);
    fputc('\n', out);
}

void emu_report_chain(FILE *out, const emu_topology *t)
{
    if (emu_topology_is_chain(t)) {
        for (size_t k = 0; k < t->n_actors; k++)
            fprintf(out, "%s%s", k ? " -> " : "", t->actors[k].name);
        return;
    }
    const char *sep = "";
    for (size_t k = 0; k < t->n_actors; k++)
        for (size_t i = 0; i < t->actors[k].n_sources; i++) {
            const emu_source *src = &t->actors[k].sources[i];
            fprintf(out, "%s%s -> %s", sep, t->actors[src->from].name, t->actors[k].name);
            if (src->share != EMU_SHARE_NONE)
                fprintf(out, " (%s)", emu_share_name(src->share));
            sep = ", ";
        }
}

static const char *end_name(enum emu_end end)
{
    switch (end) {
    case EMU_END_DATA: return "data";
    case EMU_END_LIMIT: return "limit";
    case EMU_END_SIGNAL: return "signal";
    case EMU_END_ERROR: break;
    }
    return "error";
}

/* A field of a record: a tab or a line break in a name would split it. */
static void put_field(FILE *out, const char *text)
{
    fputc('\t', out);
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        fputc(*p < 0x20 ? ' ' : *p, out);
}

static void write_actor(FILE *out, const emu_chain *c, const emu_run_result *r, size_t k)
{
    const emu_actor_stats *st = &r->actors[k];
    const char *name = c->topology->actors[k].name;
    fputs("actor", out);
    put_field(out, name);
    put_field(out, base_name(c->libraries[c->library_of[k]].path));
    fprintf(out, "\t%llu\t%llu\t%llu\t%llu\t%llu\t%.6f\t%.6f\t%.6f\t%.6f", st->blocks, st->frames_in,
            st->frames_out, st->bytes_in, st->bytes_out, st->seconds, st->block_seconds, st->wait_input,
            st->wait_output);
    put_field(out, device_of(st));
    fputc('\n', out);
    for (size_t i = 0; i < c->topology->actors[k].n_sources; i++) {
        fputs("source", out);
        put_field(out, name);
        put_field(out, c->topology->actors[c->topology->actors[k].sources[i].from].name);
        fputc('\n', out);
    }
    for (unsigned i = 0; i < st->n_kinds; i++) {
        const char *id_name = adf_id_name(st->kinds[i].id);
        fputs("kind", out);
        put_field(out, name);
        fprintf(out, "\t0x%08x\t%s\t%llu\t%llu\n", st->kinds[i].id, id_name ? id_name : "?", st->kinds[i].frames,
                st->kinds[i].inside);
    }
    if (st->other_kinds) {
        fputs("other", out);
        put_field(out, name);
        fprintf(out, "\t%llu\n", st->other_kinds);
    }
}

/* The printed table, each of its lines as a "table" record. */
static int write_table(FILE *out, const emu_chain *c, const emu_run_result *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return -1;
    emu_report_print(mem, c, r);
    if (fclose(mem) != 0) {
        free(text);
        return -1;
    }
    for (char *line = text; *line;) {
        size_t n = strcspn(line, "\n");
        fprintf(out, "table\t%.*s\n", (int)n, line);
        line += n + (line[n] == '\n');
    }
    free(text);
    return 0;
}

int emu_report_write(FILE *out, const emu_chain *c, const emu_run_result *r)
{
    fputs("narwhal-report\t1\ntopology", out);
    put_field(out, c->topology->path);
    fputc('\n', out);
    fprintf(out, "run\t%s\t%u\t%.6f\t%.6f\t%s\t%llu\t%u\t%llu\t%d\n", r->ring_depth ? "pipelined" : "sequential",
            r->ring_depth, r->wall_seconds, r->block_seconds, end_name(r->end), r->blocks, r->runs, r->pauses,
            r->strict);
    for (size_t k = 0; k < c->topology->n_actors; k++)
        write_actor(out, c, r, k);
    if (write_table(out, c, r) != 0)
        return -1;
    return ferror(out) ? -1 : 0;
}

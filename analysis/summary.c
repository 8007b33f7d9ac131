/* summary.c: `narwhal summary`: a chain's output file and run report, printed as a physicist asks. */
#include "summary.h"
#include "ana.h"
#include "summary_data.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void ana_summary_free(ana_summary *s)
{
    for (int k = 0; k < ANA_SPECTRA; k++)
        free(s->spectrum[k]);
    free(s->table);
    memset(s, 0, sizeof *s);
}

/* The report's table, kept as one string for printing. */
static int keep_table(ana_summary *s, const sum_report *r)
{
    if (!r->table.n)
        return ANA_OK;
    if (!(s->table = malloc(r->table.n + 1)))
        return ANA_E_MEMORY;
    memcpy(s->table, r->table.p, r->table.n);
    s->table[r->table.n] = '\0';
    return ANA_OK;
}

int ana_summary_compute(const char *path, const ana_summary_options *o, ana_summary *s, char *err, size_t errlen)
{
    sum_data d = {.s = s, .path = path, .narwhal = o->narwhal, .err = err, .errlen = errlen};
    sum_report r;
    memset(&r, 0, sizeof r);
    memset(s, 0, sizeof *s);
    s->window = o->window > 0 ? o->window : ANA_SUMMARY_WINDOW;
    s->balanced = 1;
    int rc = o->report ? sum_read_report(o->report, &r, err, errlen) : ANA_OK;
    if (rc == ANA_OK)
        rc = sum_read_file(&d);
    if (rc == ANA_OK)
        rc = sum_physics(&d);
    if (rc == ANA_OK && o->report) {
        s->have_report = 1;
        sum_check_balance(s, &r);
        if (keep_table(s, &r) != ANA_OK)
            rc = ana_fail(err, errlen, ANA_E_MEMORY, "%s: out of memory", o->report);
    }
    sum_data_free(&d);
    sum_report_free(&r);
    if (rc != ANA_OK)
        ana_summary_free(s);
    return rc;
}

static double percent(unsigned long long part, unsigned long long whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void print_balance(FILE *out, const ana_summary *s)
{
    fprintf(out, "\nEvents and frames\n");
    if (s->have_report)
        fprintf(out, "  the producer '%s' emitted %llu events (narwhal:truth frames) and %llu data:crystal frames\n",
                s->producer, s->produced_truth, s->produced_crystal);
    else
        fprintf(out, "  no run report (narwhal run --report FILE): the producer's own counts are not known\n");
    for (int i = 0; i < s->n_checks; i++)
        fprintf(out, "  [%s] %s\n", s->check[i].ok ? "ok" : "FAILED", s->check[i].text);
    fprintf(out, "  events: %llu = %llu tracked + %llu refused by the tracker (over 256 points) + %llu without any "
                 "crystal in the file (%llu of them: every γ missed the germanium; the others left less than the "
                 "generator's threshold)",
            s->events, s->ev_tracked, s->ev_not_tracked, s->ev_no_psa, s->ev_missed);
    if (s->ev_untracked)
        fprintf(out, " + %llu whose crystals reached the file without a data:tracked", s->ev_untracked);
    fputc('\n', out);
    if (s->truth_ignored)
        fprintf(out, "  ignored: %llu narwhal:truth frame(s) claiming a γ energy outside 0 to %g keV (corrupt: "
                     "counted as frames, not as events); the first: %s\n",
                s->truth_ignored, ANA_SUMMARY_MAX_KEV, s->first_ignored);
    if (s->ev_piled)
        fprintf(out, "  %llu events shared a built event with another (within the builder's window: pile-up)\n",
                s->ev_piled);
    if (s->unpaired)
        fprintf(out, "  %llu data:tracked frames did not follow the event they track\n", s->unpaired);
    if (s->have_report)
        fprintf(out, "  balance: %s\n",
                s->balanced ? "every frame the producer emitted is in the file or counted as rejected, with the "
                              "actor that rejected it"
                            : "FAILED: frames were lost (see the checks above)");
}

static void print_positions(FILE *out, const ana_summary *s)
{
    fprintf(out, "\nPSA position resolution (each hit against the truth's deposits in its event, crystal and segment, "
                 "crystal frame)\n");
    if (!s->psa) {
        fprintf(out, "  the file holds no data:psa: set KeepInput true in Tracker.conf to compare the PSA with the "
                     "truth\n");
        return;
    }
    fprintf(out, "  %llu hits in %llu data:psa frames; %llu matched a true deposit, %llu lie in a segment without "
                 "one; %llu true deposits in an analysed crystal have no hit (most are under the PSA threshold)\n",
            s->hits, s->psa, s->matched, s->unmatched_hits, s->missed_deposits);
    if (!s->matched)
        return;
    fprintf(out, "  rms        x %5.2f  y %5.2f  z %5.2f mm   (mean distance %.2f mm)\n", s->rms[0], s->rms[1],
            s->rms[2], s->mean_distance);
    fprintf(out,
            "  sigma68    x %5.2f  y %5.2f  z %5.2f mm   (half the central 68 %%; FWHM ~ 2.35 x: %.1f %.1f %.1f mm)\n",
            s->sigma68[0], s->sigma68[1], s->sigma68[2], 2.355 * s->sigma68[0], 2.355 * s->sigma68[1],
            2.355 * s->sigma68[2]);
    fprintf(out, "  hit energy (keV)      hits   rms x   rms y   rms z (mm)\n");
    for (int b = 0; b < ANA_SUMMARY_EBINS; b++) {
        char range[32];
        if (isinf(s->ebin[b].hi))
            snprintf(range, sizeof range, "%g and above", s->ebin[b].lo);
        else
            snprintf(range, sizeof range, "%g to %g", s->ebin[b].lo, s->ebin[b].hi);
        fprintf(out, "  %-16s %10llu  %6.2f  %6.2f  %6.2f\n", range, s->ebin[b].n, s->ebin[b].rms[0],
                s->ebin[b].rms[1], s->ebin[b].rms[2]);
    }
}

static void print_spectra(FILE *out, const ana_summary *s)
{
    static const char *const names[ANA_SPECTRA] = {"tracked", "crystal", "event sum"};
    fprintf(out, "\nTracking: photopeak efficiency and peak-to-total (photopeak: within %.1f keV of the line)\n",
            s->window);
    fprintf(out, "  spectra: tracked = the tracker's γ rays; crystal = each crystal's core energy (no tracking);\n"
                 "           event sum = the crystals of each generator event added (all of the γ at M = 1)\n");
    if (s->continuum || !s->n_lines) {
        fprintf(out, "  the source has %s distinct energies: no photopeaks to count; entries: tracked %llu, crystal "
                     "%llu, event sum %llu\n",
                s->n_lines ? "too many" : "no", s->total[0], s->total[1], s->total[2]);
        return;
    }
    fprintf(out, "  %-12s %10s", "line (keV)", "emitted");
    for (int k = 0; k < ANA_SPECTRA; k++)
        fprintf(out, "  %10s", names[k]);
    fprintf(out, "  %s\n", "tracked / event sum");
    unsigned long long peaks[ANA_SPECTRA] = {0};
    for (int i = 0; i < s->n_lines; i++) {
        const ana_summary_line *l = &s->line[i];
        fprintf(out, "  %-12.3f %10llu", l->e, l->emitted);
        for (int k = 0; k < ANA_SPECTRA; k++) {
            fprintf(out, "  %9.1f%%", percent(l->peak[k], l->emitted));
            peaks[k] += l->peak[k];
        }
        fprintf(out, "  %9.1f%%\n", percent(l->peak[ANA_SPEC_TRACKED], l->peak[ANA_SPEC_SUM]));
    }
    fprintf(out, "  %-12s %10s", "peak/total", "");
    for (int k = 0; k < ANA_SPECTRA; k++)
        fprintf(out, "  %9.1f%%", percent(peaks[k], s->total[k]));
    fprintf(out, "\n  %-12s %10s", "entries", "");
    for (int k = 0; k < ANA_SPECTRA; k++)
        fprintf(out, "  %10llu", s->total[k]);
    fprintf(out, "\n  (efficiency: photopeak counts per γ emitted at that energy; peak-to-total: the counts in all "
                 "photopeaks over all counts of the spectrum)\n");
}

/* Histo's output directory: how many files of each kind, and its plots. */
static void print_histo(FILE *out, const char *dir)
{
    DIR *dp = opendir(dir);
    if (!dp) {
        fprintf(out, "  histo: %s is not there (the chain's Histo.conf names its OutputDir)\n", dir);
        return;
    }
    unsigned spe = 0, csv = 0, m4b = 0, png = 0;
    char pngs[512] = "";
    struct dirent *e;
    while ((e = readdir(dp))) {
        const char *dot = strrchr(e->d_name, '.');
        if (!dot)
            continue;
        spe += strcmp(dot, ".spe") == 0;
        csv += strcmp(dot, ".csv") == 0;
        m4b += strcmp(dot, ".m4b") == 0;
        if (strcmp(dot, ".png") == 0 && ++png <= 8)
            snprintf(pngs + strlen(pngs), sizeof pngs - strlen(pngs), "%s%s", png > 1 ? ", " : "", e->d_name);
    }
    closedir(dp);
    fprintf(out, "  histo's spectra: %s/ (%u .spe, %u .csv, %u .m4b); its plots: %s\n", dir, spe, csv, m4b,
            png ? pngs : "none");
}

static void print_files(FILE *out, const char *path, const ana_summary_options *o, const ana_summary *s)
{
    struct stat st;
    fprintf(out, "\nFiles\n");
    fprintf(out, "  output: %s (%.1f MB)", path, stat(path, &st) == 0 ? st.st_size / 1e6 : 0.0);
    if (s->narwhal_file[0])
        fprintf(out, " and its Narwhal file %s (%.1f MB)",
                s->narwhal_file, stat(s->narwhal_file, &st) == 0 ? st.st_size / 1e6 : 0.0);
    fprintf(out, ": %llu frames\n", s->frames);
    if (o->plots) {
        char msg[1024];
        sum_plot(s, o->plots, msg, sizeof msg);
        fprintf(out, "  summary plots: %s\n", msg);
    }
    if (o->histo)
        print_histo(out, o->histo);
    if (o->report)
        fprintf(out, "  run report: %s\n", o->report);
}

void ana_summary_print(FILE *out, const char *path, const ana_summary_options *o, ana_summary *s)
{
    fprintf(out, "== Summary of %s%s%s\n", path, s->narwhal_file[0] ? " and " : "", s->narwhal_file);
    print_balance(out, s);
    print_positions(out, s);
    print_spectra(out, s);
    print_files(out, path, o, s);
    if (s->table)
        fprintf(out, "\nPer actor (narwhal run)\n%s", s->table);
}

int ana_summary_run(const char *path, const ana_summary_options *o, FILE *out, char *err, size_t errlen)
{
    ana_summary s;
    int rc = ana_summary_compute(path, o, &s, err, errlen);
    if (rc != ANA_OK)
        return rc;
    ana_summary_print(out, path, o, &s);
    if (!s.balanced)
        rc = ana_fail(err, errlen, ANA_E_BALANCE, "%s: the frames do not balance (see the checks above)", path);
    ana_summary_free(&s);
    return rc;
}

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

void ana_summary_title(const ana_summary *s, char *out, size_t len)
{
    char what[96];
    if (!s->truth)
        snprintf(what, sizeof what, "no simulation truth");
    else if (s->source[0])
        snprintf(what, sizeof what, "%s", s->source);
    else if (s->continuum || !s->n_lines)
        snprintf(what, sizeof what, "a continuum source");
    else if (s->n_lines == 1)
        snprintf(what, sizeof what, "%.1f keV γ rays", s->line[0].e);
    else
        snprintf(what, sizeof what, "%d γ lines %.1f-%.1f keV", s->n_lines, s->line[0].e, s->line[s->n_lines - 1].e);
    snprintf(out, len, "%s, %u crystals, %llu events", what, s->crystals, s->truth ? s->events : s->built);
}

static void print_source(FILE *out, const ana_summary *s)
{
    if (s->source[0])
        fprintf(out, "  source: %s decays (the evaluated scheme of sim/decay.c), %d γ lines from %.1f to %.1f keV\n",
                s->source, s->n_lines, s->line[0].e, s->line[s->n_lines - 1].e);
    else if (s->continuum)
        fprintf(out, "  source: more than %d distinct γ energies (a continuum): no photopeaks to measure\n",
                ANA_SUMMARY_LINES);
    else
        fprintf(out, "  source: %d γ line(s) from %.1f to %.1f keV\n", s->n_lines, s->n_lines ? s->line[0].e : 0,
                s->n_lines ? s->line[s->n_lines - 1].e : 0);
    fprintf(out, "  %llu events, %llu γ rays emitted (%.3f per event; events by γ rays:", s->events, s->gammas_emitted,
            s->events ? (double)s->gammas_emitted / (double)s->events : 0.0);
    const char *sep = " ";
    for (int m = 0; m <= ANA_SUMMARY_MULTIPLICITY; m++)
        if (s->multiplicity[m]) {
            fprintf(out, "%s%d%s %.2f %%", sep, m, m == ANA_SUMMARY_MULTIPLICITY ? "+" : ":",
                    percent(s->multiplicity[m], s->events));
            sep = ", ";
        }
    fprintf(out, "); %u crystals reached the file\n", s->crystals);
}

static void print_peak(FILE *out, const ana_summary_peak *p)
{
    if (p->area <= 0) {
        fprintf(out, "  %9s %6s %9s %7s", "-", "-", "0", "-");
        return;
    }
    fprintf(out, "  %9.2f ", p->centroid);
    if (p->fwhm > 0)
        fprintf(out, "%6.2f", p->fwhm);
    else
        fprintf(out, "%6s", "-");
    fprintf(out, " %9.0f %6.2f%%", p->area, 100 * p->efficiency);
}

/* Peak-to-total: the lines' areas over all the entries of a spectrum. */
static double peak_to_total(const ana_summary *s, int k)
{
    double areas = 0;
    for (int i = 0; i < s->n_lines; i++)
        areas += !s->line[i].minor && s->line[i].peak[k].area > 0 ? s->line[i].peak[k].area : 0;
    return s->total[k] ? 100 * areas / (double)s->total[k] : 0;
}

static void print_lines(FILE *out, const ana_summary *s)
{
    int single = s->max_multiplicity <= 1, blends = 0;
    fprintf(out, "  photopeaks, no fit: the entries within a window (+-%.1f keV, then +-2 FWHM of the peak found) less "
                 "a linear background from bands as wide on either side; centroid and FWHM from the moments of the "
                 "net entries (unbinned); efficiency: net area per γ ray emitted at that energy (each γ of a cascade "
                 "counted)\n", s->window);
    fprintf(out, "  %-10s %9s | %-38s | %-38s%s\n", "", "", "tracked (the tracker's γ rays)",
            "untracked (each crystal, no add-back)", single ? " | sum" : "");
    fprintf(out, "  %-10s %9s |", "line (keV)", "emitted");
    for (int k = 0; k < 2; k++)
        fprintf(out, "  %9s %6s %9s %7s |", "centroid", "FWHM", "area", "eff.");
    fprintf(out, "%s\n", single ? " eff. (all crystals of the event)" : "");
    int minor = 0;
    unsigned long long minor_gammas = 0;
    for (int i = 0; i < s->n_lines; i++) {
        const ana_summary_line *l = &s->line[i];
        if (l->minor) {
            minor++;
            minor_gammas += l->emitted;
            continue;
        }
        blends |= l->blend;
        fprintf(out, "  %9.3f%s %9llu |", l->e, l->blend ? "*" : " ", l->emitted);
        for (int k = 0; k < 2; k++) {
            print_peak(out, &l->peak[k]);
            fprintf(out, " |");
        }
        if (single)
            fprintf(out, " %6.2f%%", 100 * l->peak[ANA_SPEC_SUM].efficiency);
        fputc('\n', out);
    }
    if (minor)
        fprintf(out, "  %d weaker line(s) not measured: %llu γ rays emitted in all (under %.1f %% of the γ rays, or "
                     "under 100, each)\n", minor, minor_gammas, 100 * ANA_SUMMARY_MINOR);
    if (blends)
        fprintf(out, "  * another line lies within the window or its bands: the area and efficiency hold both\n");
    fprintf(out, "  peak-to-total (the measured lines' areas over all entries): tracked %.1f %% of %llu, untracked %.1f %% of "
                 "%llu\n", peak_to_total(s, ANA_SPEC_TRACKED), s->total[ANA_SPEC_TRACKED],
            peak_to_total(s, ANA_SPEC_CRYSTAL), s->total[ANA_SPEC_CRYSTAL]);
}

static void print_spectra(FILE *out, const ana_summary *s)
{
    fprintf(out, "  spectra: 1 keV bins from 0 to %u keV (the highest energy in the file: %.1f keV)\n", s->n_bins,
            s->highest);
    unsigned long long beyond = s->beyond[0] + s->beyond[1] + s->beyond[2];
    if (beyond)
        fprintf(out, "  capped at %g keV: %llu entries above it are counted in the totals, not drawn (tracked %llu, "
                     "untracked %llu, sums %llu)\n", ANA_SUMMARY_SPECTRUM_KEV, beyond, s->beyond[0], s->beyond[1],
                s->beyond[2]);
    unsigned long long rejected = s->rejected[0] + s->rejected[1] + s->rejected[2];
    if (rejected)
        fprintf(out, "  rejected: %llu energies that are not finite or are negative (tracked %llu, crystal %llu), left "
                     "out of the spectra; the first: %s\n", rejected, s->rejected[0], s->rejected[1],
                s->first_rejected);
}

static void print_physics(FILE *out, const ana_summary *s)
{
    char title[160];
    ana_summary_title(s, title, sizeof title);
    fprintf(out, "\nPhysics: %s\n", title);
    if (!s->truth) {
        fprintf(out, "  this file has no simulation truth (no narwhal:truth frame): the emitted lines, efficiencies "
                     "and position resolution cannot be given; its spectra hold %llu tracked γ rays, %llu crystal "
                     "energies and %llu summed events\n",
                s->total[ANA_SPEC_TRACKED], s->total[ANA_SPEC_CRYSTAL], s->total[ANA_SPEC_SUM]);
        print_spectra(out, s);
        return;
    }
    print_source(out, s);
    if (s->n_lines && !s->continuum)
        print_lines(out, s);
    else
        fprintf(out, "  entries: tracked %llu, untracked %llu, summed events %llu\n", s->total[0], s->total[1],
                s->total[2]);
    fprintf(out, "  calorimeter: %.1f %% of the %llu events with γ rays left all of their energy in the array (the "
                 "event's crystals add up to the emitted sum within %.1f keV)\n",
            percent(s->sum_full, s->sum_events), s->sum_events, s->window);
    print_spectra(out, s);
}

static void print_balance(FILE *out, const ana_summary *s)
{
    fprintf(out, "\nEvents and frames\n");
    if (s->have_report && s->n_producers > 1)
        fprintf(out, "  the %u producers (%s) emitted %llu narwhal:truth frames and %llu crystal frames in all\n",
                s->n_producers, s->producers, s->produced_truth, s->produced_crystal);
    else if (s->have_report)
        fprintf(out, "  the producer '%s' emitted %llu events (narwhal:truth frames) and %llu crystal frames\n",
                s->producer, s->produced_truth, s->produced_crystal);
    else
        fprintf(out, "  no run report (narwhal run --report FILE): the producer's own counts are not known\n");
    for (int i = 0; i < s->n_checks; i++)
        fprintf(out, "  [%s] %s\n", s->check[i].ok ? "ok" : "FAILED", s->check[i].text);
    if (s->truth)
        fprintf(out, "  events: %llu = %llu tracked + %llu refused by the tracker (over 256 points) + %llu without any "
                     "crystal in the file (%llu of them: every γ missed the germanium; the others left less than the "
                     "generator's threshold, or emitted no γ ray)",
                s->events, s->ev_tracked, s->ev_not_tracked, s->ev_no_psa, s->ev_missed);
    else
        fprintf(out, "  events: without the truth, only what the file holds: %llu built events, %llu tracked (%llu "
                     "γ rays)", s->built, s->tracked, s->gammas);
    if (s->ev_untracked)
        fprintf(out, " + %llu whose crystals reached the file without a data:tracked", s->ev_untracked);
    fputc('\n', out);
    if (s->truth_repeated)
        fprintf(out, "  %llu narwhal:truth frames repeat an event already read (its number and timestamp: producers "
                     "simulating the same events each wrote its truth): each event is counted once\n",
                s->truth_repeated);
    if (s->truth_ignored)
        fprintf(out, "  ignored: %llu narwhal:truth frame(s) claiming a γ energy outside 0 to %g keV (corrupt: "
                     "counted as frames, not as events); the first: %s\n",
                s->truth_ignored, ANA_SUMMARY_MAX_KEV, s->first_ignored);
    if (s->ev_piled)
        fprintf(out, "  %llu events shared a built event with another (within the builder's window: pile-up)\n",
                s->ev_piled);
    if (s->unpaired)
        fprintf(out, "  %llu data:tracked frames did not follow the event they track\n", s->unpaired);
    if (s->have_report && !s->balanced)
        fprintf(out, "  balance: FAILED: frames were lost (see the checks above)\n");
    else if (s->have_report)
        fprintf(out, "  balance: every frame the producer%s emitted is in the file or counted as rejected, "
                     "with the actor that rejected it\n", s->n_producers > 1 ? "s" : "");
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
    if (!s->truth) {
        fprintf(out, "  no simulation truth to compare the %llu hits of %llu data:psa frames with\n", s->hits, s->psa);
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

/* What histo wrote, by kind, counted through its subdirectories. */
typedef struct histo_count {
    unsigned files, spe, spe_txt, csv, m4b, png, dirs;
    char pngs[400];
} histo_count;

static int ends_with(const char *name, const char *suffix)
{
    size_t n = strlen(name), k = strlen(suffix);
    return n > k && strcmp(name + n - k, suffix) == 0;
}

static void count_dir(const char *dir, histo_count *c, int depth)
{
    DIR *dp = depth < 8 ? opendir(dir) : NULL;
    struct dirent *e;
    while (dp && (e = readdir(dp))) {
        char path[4096];
        struct stat st;
        if (e->d_name[0] == '.' || (size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path ||
            stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            c->dirs++;
            count_dir(path, c, depth + 1);
            continue;
        }
        c->files++;
        c->spe += ends_with(e->d_name, ".spe");
        c->spe_txt += ends_with(e->d_name, ".spe.txt");
        c->csv += ends_with(e->d_name, ".csv");
        c->m4b += ends_with(e->d_name, ".m4b");
        if (ends_with(e->d_name, ".png") && ++c->png <= 8)
            snprintf(c->pngs + strlen(c->pngs), sizeof c->pngs - strlen(c->pngs), "%s%s", c->png > 1 ? ", " : "",
                     e->d_name);
    }
    if (dp)
        closedir(dp);
}

static void print_histo(FILE *out, const char *dir)
{
    histo_count c = {0};
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(out, "  histo: %s is not there (the chain's Histo.conf names its OutputDir)\n", dir);
        return;
    }
    count_dir(dir, &c, 0);
    unsigned other = c.files - c.spe - c.spe_txt - c.csv - c.m4b - c.png;
    fprintf(out, "  histo wrote %u files under %s/ (%u subdirectories included): %u .spe, %u .spe.txt (each .spe's "
                 "calibration and counts per keV), %u .csv, %u .m4b, %u .png%s%s%s",
            c.files, dir, c.dirs, c.spe, c.spe_txt, c.csv, c.m4b, c.png, c.png ? " (" : "", c.pngs,
            c.png > 8 ? ", ...)" : c.png ? ")" : "");
    if (other)
        fprintf(out, ", %u other", other);
    fputc('\n', out);
}

static void print_files(FILE *out, const char *path, const ana_summary_options *o, const ana_summary *s)
{
    struct stat st;
    fprintf(out, "\nFiles\n");
    fprintf(out, "  output: %s (%.1f MB, %llu frames)\n", path, stat(path, &st) == 0 ? st.st_size / 1e6 : 0.0,
            s->frames);
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
    fprintf(out, "== Summary of %s\n", path);
    print_physics(out, s);
    print_positions(out, s);
    print_balance(out, s);
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

/* psa_conf.c: PSA.conf's keys with their defaults and ranges, the choices and the Mask lines. */
#include "psa_conf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psa_pow.h"

static const kit_key keys[] = {
    { "Basis", KIT_STRING, offsetof(psa_settings, basis), "build/cache/default.basis",
      .help = "basis file (detector/README.md; basisgen writes it, --import brings another's)" },
    { "Device", KIT_LIST, offsetof(psa_settings, device), "auto",
      .help = "auto (the GPU when one is usable, else the CPU), gpu, cpu, or reference (the naive "
              "full search with libm powf, one thread: for checks)" },
    { "GPU", KIT_INT, offsetof(psa_settings, gpu), "0", KIT_GPU_RANGE, .help = GPU_KEY_HELP },
    { "GPUWork", KIT_LIST, offsetof(psa_settings, gpu_work), "block",
      .help = "block (on the GPU, the whole block: alignment, searches, refinement and "
              "subtraction; the host decodes and writes) or searches (only the searches, round by "
              "round; the rest on the host's cores)" },
    { "GPUPrune", KIT_LIST, offsetof(psa_settings, gpu_prune), "byte",
      .help = "byte, log, geo, fine, exponent or off: the GPU's full search skips the points whose lower bound "
              "already exceeds the best FoM found (byte: a 1-byte table by the sign, exponent and 4 mantissa bits "
              "of d; log: no table, Mitchell's logarithm of d x d, for p < 2, else fine; geo: the same logarithms "
              "summed over groups of four samples, one exponential a group (the means' inequality), for p < 2 and "
              "a window of whole groups, else fine; fine: a 2-byte table by its "
              "exponent and 3 mantissa bits; exponent: by its exponent alone): the same points and FoM bits, fewer "
              "FoMs computed (H200, 262,144 searches, host to host: 4.41 M searches/s unpruned, 7.26 M fine, 7.71 M "
              "byte, 8.24 M log, 8.70 M geo; in the replay chain's blocks byte was the fastest of log, byte and fine, "
              "geo was not run there); adaptive is never pruned" },
    { "GPUGuess", KIT_LIST, offsetof(psa_settings, gpu_guess), "off",
      .help = "on or off: where the GPU's pruned full search has no FoM yet for a search (a tile's first 128 "
              "points), it sums their lower bounds, computes the FoM of the point of least bound and bounds the "
              "others against it; off: those 128 points' FoMs are all computed. The same points and FoM bits "
              "either way; only the speed changes (H200: on is faster for large batches with GPUPrune log, "
              "slower in the replay chain's blocks with byte, docs/PERF.md)" },
    { "BlockParts", KIT_INT, offsetof(psa_settings, block_parts), "0", KIT_RANGE(0, 64),
      .help = "pieces each part of a block (Parts) is decoded in: with the whole block on the GPU, "
              "each piece's events (and, unless the host's block is pinned and went whole first, its "
              "traces) go there and are aligned while the host decodes the next (0: one where the "
              "block went whole, two where it is copied, one on the CPU)" },
    { "Parts", KIT_INT, offsetof(psa_settings, parts), "1", KIT_RANGE(1, 16),
      .help = "parts a block is cut into (at frame boundaries), each decoded and searched on a thread "
              "of its own, with the whole block on the GPU in a device stream of its own, while the "
              "next decodes: the output is the same (1: measured on the H200, three parts made the "
              "PSA slower, docs/PERF.md; the CPU's searches are already parallel)" },
    { "Search", KIT_LIST, offsetof(psa_settings, search), "full",
      .help = "full (every point of the segment: the exact minimum) or adaptive (the coarse grid, "
              "then the points near its best)" },
    { "Data", KIT_LIST, offsetof(psa_settings, data), "float",
      .help = "float, or int16 (signals and traces rounded to 1/4096: half the bytes)" },
    { "CPUKernel", KIT_LIST, offsetof(psa_settings, kernel), "auto",
      .help = "auto (the widest the processor has), avx512, avx2, portable (the full search pruned "
              "exactly with avx512 and portable: same answers), or thesis (the AGATA GPU-PSA thesis's "
              "CPU algorithm: int16 through a table of |d|^p, float through powf, a point abandoned "
              "channel by channel once above the best: the baseline of its speed ladder)" },
    { "Threads", KIT_INT, offsetof(psa_settings, threads), "0", KIT_RANGE(0, 1024),
      .help = "OpenMP threads of the host's loops (0: OpenMP's default, one per core; with the whole "
              "block on the GPU, half of them, at most 8: that work is bound by memory bandwidth)" },
    { "Threshold", KIT_REAL, offsetof(psa_settings, threshold), "20", KIT_RANGE(0, 1e6),
      .help = "keV a segment needs to count as a net-charge segment (searched)" },
    { "Exponent", KIT_REAL, offsetof(psa_settings, exponent), "0.3", KIT_RANGE(0.01, PSA_POW_MAX),
      .help = "p of the figure of merit, sum of |measured - basis|^p (AGATA: 0.3)" },
    { "WindowStart", KIT_INT, offsetof(psa_settings, window_start), "-1", KIT_RANGE(-511, 511),
      .help = "first sample of the FoM, basis samples from the signal's start" },
    { "WindowLength", KIT_INT, offsetof(psa_settings, window_length), "40", KIT_RANGE(1, 512),
      .help = "samples of the FoM per channel" },
    { "Mask", KIT_LIST, offsetof(psa_settings, masks), "default",
      .help = "SEGMENT CHANNEL... : the channels (0..35, core) in segment SEGMENT's FoM, one line "
              "per segment; segments without a line (and 'Mask default') take AGATA's "
              "neighbourhood: the ring's two neighbours and three of each adjacent ring, the "
              "whole ring for the front ring" },
    { "CoarseGrid", KIT_REAL, offsetof(psa_settings, coarse_mm), "6", KIT_RANGE(0.1, 100),
      .help = "mm: cube of the adaptive search's coarse grid (one point per cube and segment)" },
    { "AdaptiveRadius", KIT_REAL, offsetof(psa_settings, radius_mm), "8", KIT_RANGE(0, 100),
      .help = "mm: the adaptive search's fine stage takes the points this near its best coarse point" },
    { "Neighbours", KIT_LIST, offsetof(psa_settings, neighbours), "iterate",
      .help = "iterate (two net-charge segments that touch, one in the other's mask, are searched "
              "jointly on the coarse grid, then each again with the event's other hits subtracted and "
              "their channels compared, the start refined on all the hits, until nothing moves or "
              "NeighbourPasses passes) or off (each searched once, the other net-charge segments left "
              "out of its mask)" },
    { "NeighbourPasses", KIT_INT, offsetof(psa_settings, neighbour_passes), "2", KIT_RANGE(1, 16),
      .help = "Neighbours iterate: passes at most over the hits that touch another" },
    { "NeighbourRadius", KIT_REAL, offsetof(psa_settings, neighbour_mm), "6", KIT_RANGE(0, 100),
      .help = "mm, Neighbours iterate: a pass searches each touching hit's points this near its current "
              "point (0: the whole segment, as Search says)" },
    { "EdgeFraction", KIT_REAL, offsetof(psa_settings, fraction), "0.05", KIT_RANGE(0.01, 0.49),
      .help = "fraction of the amplitude (mean of the core and the first segment) where the edge "
              "gives the start time" },
    { "ShiftRange", KIT_REAL, offsetof(psa_settings, shift_range), "1", KIT_RANGE(0, 20),
      .help = "samples: the start time is refined by trying the best point this far either side "
              "of its own edge (0: no refinement)" },
    { "ShiftStep", KIT_REAL, offsetof(psa_settings, shift_step), "0.5", KIT_RANGE(0.01, 10),
      .help = "samples between the shifts tried (then halved twice around the best)" },
    { "MaxEnergy", KIT_REAL, offsetof(psa_settings, max_energy), "20000", KIT_RANGE(1, 1e9),
      .help = "keV: a frame with a channel energy beyond +-MaxEnergy is rejected as absurd" },
    { "SearchLog", KIT_STRING, offsetof(psa_settings, search_log), "none",
      .help = "file with one line per hit (point, FoM, shift), published at each run's stop, or none; one "
              "live instance per file: instance k > 1 of one configuration writes FILE with .k before "
              "its extension (search.log -> search.2.log)" },
    KIT_MAX_BAD_FRAMES(psa_settings, max_bad),
};

const kit_spec psa_spec = {
    "PSA", "filter",
    "pulse-shape analysis: data:crystal traces to data:psa hits by full or adaptive grid search "
    "against a basis (GPU or CPU); other frames pass through",
    keys, KIT_COUNT(keys), sizeof(psa_settings), psa_conf_resolve,
};

psa_settings psa_set;
psa_config psa_conf;

/* The file's name for messages, the message, and the configuration being built. */
typedef struct where {
    char path[1100];
    char msg[1400];
    psa_config c;
} where;

/* The index of a one-value list key's value in names[], or -1 with the error written. */
static int choice(where *w, const char *key, const kit_list *l, const char *const *names, int n)
{
    unsigned line = l->n ? l->line[0] : 0;
    if (l->n != 1) {
        snprintf(w->msg, sizeof w->msg, "%s:%u: key '%s': takes one value, found %zu", w->path,
                 line, key, l->n);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (strcmp(l->v[0], names[i]) == 0)
            return i;
    int at = snprintf(w->msg, sizeof w->msg, "%s:%u: key '%s': value '%s' is not", w->path, line,
                      key, l->v[0]);
    for (int i = 0; i < n && at > 0 && (size_t)at < sizeof w->msg; i++)
        at += snprintf(w->msg + at, sizeof w->msg - at, "%s %s", i ? (i == n - 1 ? " or" : ",") : "",
                       names[i]);
    return -1;
}

static int choices(where *w)
{
    static const char *const devices[] = { "auto", "cpu", "gpu", "reference" };
    static const char *const searches[] = { "full", "adaptive" };
    static const char *const datas[] = { "float", "int16" };
    static const char *const kernels[] = { "auto", "portable", "avx2", "avx512", "thesis" };
    static const char *const works[] = { "block", "searches" };
    static const char *const neighbours[] = { "off", "iterate" };
    static const char *const prunes[] = { "off", "exponent", "fine", "log", "byte", "geo" };
    static const char *const offs[] = { "off", "on" };
    int d = choice(w, "Device", &psa_set.device, devices, 4);
    int s = d < 0 ? -1 : choice(w, "Search", &psa_set.search, searches, 2);
    int t = s < 0 ? -1 : choice(w, "Data", &psa_set.data, datas, 2);
    int k = t < 0 ? -1 : choice(w, "CPUKernel", &psa_set.kernel, kernels, 5);
    int g = k < 0 ? -1 : choice(w, "GPUWork", &psa_set.gpu_work, works, 2);
    int nb = g < 0 ? -1 : choice(w, "Neighbours", &psa_set.neighbours, neighbours, 2);
    int pr = nb < 0 ? -1 : choice(w, "GPUPrune", &psa_set.gpu_prune, prunes, 6);
    int gu = pr < 0 ? -1 : choice(w, "GPUGuess", &psa_set.gpu_guess, offs, 2);
    if (gu < 0)
        return -1;
    static const psa_device dev[] = { PSA_DEVICE_AUTO, PSA_DEVICE_CPU, PSA_DEVICE_GPU,
                                      PSA_DEVICE_REFERENCE };
    static const psa_simd simd[] = { PSA_SIMD_AUTO, PSA_SIMD_SCALAR, PSA_SIMD_AVX2, PSA_SIMD_AVX512,
                                     PSA_SIMD_THESIS };
    static const int prune[] = { GS_PRUNE_OFF, GS_PRUNE_EXPONENT, GS_PRUNE_FINE, GS_PRUNE_LOG, GS_PRUNE_BYTE,
                                 GS_PRUNE_GEO };
    w->c.engine = (psa_engine_params){ dev[d], (int)psa_set.gpu, s ? PSA_ADAPTIVE : PSA_FULL,
                                           t ? PSA_I16 : PSA_F32, simd[k], (int)psa_set.threads, prune[pr], gu };
    w->c.gpu_block = g == 0;
    w->c.neighbour_passes = nb ? (int)psa_set.neighbour_passes : 0;
    return 0;
}

/* A Mask value: a segment number 0..35, or "core". */
static int channel(const char *v)
{
    if (strcmp(v, "core") == 0)
        return DET_CORE;
    char *end;
    long c = strtol(v, &end, 10);
    return *v && !*end && c >= 0 && c < DET_SEGMENTS ? (int)c : -1;
}

static int mask_line(where *w, const kit_list *l, size_t first, size_t end)
{
    unsigned line = l->line[first];
    int s = channel(l->v[first]);
    if (s < 0 || s == DET_CORE) {
        snprintf(w->msg, sizeof w->msg, "%s:%u: key 'Mask': '%s' is not a segment 0..35", w->path,
                 line, l->v[first]);
        return -1;
    }
    if (w->c.custom[s]) {
        snprintf(w->msg, sizeof w->msg, "%s:%u: key 'Mask': segment %d already has a mask (line %u)",
                 w->path, line, s, w->c.custom[s]);
        return -1;
    }
    size_t n = end - first - 1;
    if (n < 1 || n > PSA_MAX_MASK) {
        snprintf(w->msg, sizeof w->msg, "%s:%u: key 'Mask': segment %d lists %zu channels (1..%d)",
                 w->path, line, s, n, PSA_MAX_MASK);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        int c = channel(l->v[first + 1 + i]);
        for (size_t j = 0; c >= 0 && j < i; j++)
            if (w->c.mask[s][j] == c)
                c = -2;
        if (c == s) /* a net-charge segment, which the FoM never counts (README: Search) */
            c = -3;
        if (c < 0) {
            snprintf(w->msg, sizeof w->msg, "%s:%u: key 'Mask': channel '%s' is %s", w->path, line,
                     l->v[first + 1 + i], c == -2 ? "listed twice"
                                          : c == -3 ? "the segment itself: a mask lists the neighbours whose "
                                                      "transient signals the FoM compares, never a net-charge "
                                                      "segment"
                                                    : "not 0..35 or core");
            return -1;
        }
        w->c.mask[s][i] = (uint8_t)c;
    }
    w->c.n_mask[s] = (uint8_t)n;
    w->c.custom[s] = line;
    return 0;
}

/* Default masks, then one Mask line per configured segment (its values share a line number). */
static int masks(where *w)
{
    const kit_list *l = &psa_set.masks;
    memset(w->c.custom, 0, sizeof w->c.custom);
    for (unsigned s = 0; s < DET_SEGMENTS; s++)
        w->c.n_mask[s] = (uint8_t)psa_default_mask(s, w->c.mask[s]);
    for (size_t i = 0; i < l->n;) {
        size_t end = i + 1;
        while (end < l->n && l->line[end] == l->line[i])
            end++;
        if (!(end == i + 1 && strcmp(l->v[i], "default") == 0) && mask_line(w, l, i, end))
            return -1;
        i = end;
    }
    return 0;
}

unsigned psa_conf_resolve(const char *dir)
{
    static where w;
    char *path = kit_conf_path(dir, psa_spec.actor);
    if (!path)
        return kit_fail(psa_spec.actor, NARVAL_E_NOMEM, "no memory for a file name");
    snprintf(w.path, sizeof w.path, "%s", path);
    free(path);
    if (choices(&w) || masks(&w) ||
        kit_check_input(psa_set.basis, "Basis", w.path, kit_key_line("Basis"), w.msg, sizeof w.msg) ||
        (strcmp(psa_set.search_log, "none") != 0 &&
         kit_check_output(psa_set.search_log, false, "SearchLog", w.path, kit_key_line("SearchLog"), w.msg,
                          sizeof w.msg)))
        return kit_fail(psa_spec.actor, NARVAL_E_CONFIG, "%s", w.msg);
    w.c.window_start = (int)psa_set.window_start;
    w.c.window = (uint32_t)psa_set.window_length;
    psa_conf = w.c;
    return 0;
}

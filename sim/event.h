/* event.h: one simulated event: source, transport, packing into interactions, truth, per-crystal energies with resolution. */
#ifndef NARWHAL_SIM_EVENT_H
#define NARWHAL_SIM_EVENT_H

#include <stdint.h>

#include "adf.h"
#include "source.h"
#include "transport.h"

/*
 * An event's random numbers come from streams seeded by (seed, event number,
 * purpose), so the physics of an event is the same whatever else is switched
 * on: the transport (source and interactions) draws from SIM_STREAM_PHYSICS,
 * the energy resolution from SIM_STREAM_RESPONSE, the traces (start time,
 * noise) from SIM_STREAM_TRACES and the time since the previous event from
 * SIM_STREAM_TIME.
 *
 * Segments: with a basis (sim_physics.basis, traces.h) a deposit belongs to
 * the segment that collects its charge there, which is where its energy is
 * measured and where its traces carry the net charge; 13 % of the default
 * basis's points are collected by a segment other than the one whose volume
 * holds them (issue 15).  Without a basis, to the geometric segment.  A truth
 * hit records both: `segment` (collecting, at its position) and `geo_segment`.
 *
 * Packing (SIM_PACK_SEGMENT): the deposits a γ leaves in one segment become
 * one interaction at their energy-weighted centre, with the process of the
 * first of them and their count in `deposits`; the PSA finds one point per
 * segment, so this is what it can be compared with.  Two γ rays of one event
 * in the same segment stay two interactions (the truth keeps each γ's own).
 * SIM_PACK_NONE keeps every deposit.
 *
 * A crystal fires when its deposits sum to at least the threshold.  Its
 * measured energies (36 segments and the core, core = sum of the deposits)
 * are the true ones plus a Gaussian of FWHM sqrt(fwhm_a + fwhm_b * E / MeV)
 * keV each (segments without a deposit get the E = 0 width).
 */
enum { SIM_STREAM_PHYSICS = 1, SIM_STREAM_RESPONSE = 2, SIM_STREAM_TIME = 3, SIM_STREAM_TRACES = 4 };
enum { SIM_PACK_NONE = 0, SIM_PACK_SEGMENT = 1 };

struct sim_traces;

typedef struct sim_physics {
    const sim_world *world;
    const struct sim_traces *basis[DET_ARRAY_SHAPES]; /* per shape of the world; NULL: segments are geometric */
    sim_source source;
    int packing;
    double threshold;        /* keV */
    double fwhm_a, fwhm_b;   /* keV^2, keV^2 per MeV */
    uint64_t seed;
} sim_physics;

typedef struct sim_fired {
    int crystal;                    /* index in the array */
    double energy[DET_CHANNELS];    /* measured, keV; core last */
    double true_energy;             /* keV, deposited */
    int first, count;               /* its interactions: hit[order[first .. first+count-1]] */
} sim_fired;

typedef struct sim_event {
    uint32_t number;
    uint64_t timestamp;
    adf_truth truth;
    int hit_crystal[ADF_TRUTH_MAX_INTERACTIONS]; /* array index of each truth hit */
    int order[ADF_TRUTH_MAX_INTERACTIONS];       /* truth hits grouped by fired crystal */
    sim_fired *fired;                            /* n_crystals slots */
    struct sim_hit_sums *sums;                   /* private to event.c */
    int n_fired;
    sim_deposits deposits;
} sim_event;

/* Allocates an event workspace for a world of n crystals; NULL without memory. */
sim_event *sim_event_new(int n_crystals);
void sim_event_free(sim_event *ev);

/* Simulates event `number`: fills truth (t of each hit = 0), the fired crystals
 * sorted by crystal id, and their measured energies.  0, or -1 when the event
 * needs more than ADF_TRUTH_MAX_INTERACTIONS interactions or
 * SIM_MAX_DEPOSITS deposits (a message says which). */
int sim_event_run(const sim_physics *ph, uint32_t number, sim_event *ev, char *msg, size_t len);

/* The detector response to the interactions in ev->truth (ev->number set):
 * each hit's segments (with a basis: collecting and geometric at its
 * position; without: geo_segment = segment), the fired crystals and their
 * measured energies.  sim_event_run ends with it;
 * a caller that reads the truth from elsewhere (a GammaEvents file) calls it
 * alone.  0, or -1 when a hit names a crystal the array lacks. */
int sim_event_respond(const sim_physics *ph, sim_event *ev, char *msg, size_t len);

/* Ticks (10 ns) from the previous event to event `number` at `rate` events per
 * second: exponential (Poisson arrivals), at least 1. */
uint64_t sim_event_gap(uint64_t seed, uint32_t number, double rate);

#endif

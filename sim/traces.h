/* traces.h: a crystal's 37 digitised traces from its interactions: basis interpolation, time shift, baseline, noise, ADC. */
#ifndef NARWHAL_SIM_TRACES_H
#define NARWHAL_SIM_TRACES_H

#include <stddef.h>
#include <stdint.h>

#include "adf.h"
#include "event.h"

/* data:crystal status bit: some sample of some trace went past the ADC's range. */
enum { SIM_STATUS_CLIPPED = 1 };

typedef struct sim_trace_params {
    int samples;            /* per trace */
    int pre_trigger;        /* samples before the signal starts (plus the sub-sample shift) */
    int adc_bits;           /* the ADC's range is 0 .. 2^bits - 1 */
    double gain;            /* ADC counts per keV */
    double baseline;        /* ADC counts at zero signal */
    double noise;           /* sigma, keV equivalent (0: none) */
    int subtract_baseline;  /* the frame holds ADC - round(baseline) (data:crystal's convention) */
    int sub_sample;         /* draw each event's sub-sample start (0: signals start on a sample edge) */
} sim_trace_params;

typedef struct sim_traces sim_traces;

/* Loads the basis file and prepares the noise; 0, or -1 with a message naming the file. */
int sim_traces_open(sim_traces **t, const char *basis_path, const det_crystal *shape, const sim_trace_params *p,
                    uint64_t seed, char *msg, size_t len);
void sim_traces_close(sim_traces *t);
/* The segment that collects the charge of an interaction at p (crystal frame)
 * in the basis: the segment whose points carry most of the trilinear weight
 * there.  The traces of an interaction carry its net charge in this segment. */
int sim_traces_collecting(const sim_traces *t, const double p[3]);
/* Floats of scratch one thread needs for sim_traces_make. */
size_t sim_traces_scratch(const sim_traces *t);
/* Sets the t of the truth hits of ev's fired crystals: when their signals
 * start in the traces (PreTrigger plus the event's sub-sample start, drawn
 * first from its SIM_STREAM_TRACES stream: all crystals of an event share it). */
void sim_traces_start(const sim_traces *t, sim_event *ev);
/* Fills c's traces and gain for fired crystal f of ev, and sets the t of its
 * truth hits.  Draws the sub-sample start and the noise from ev's own
 * SIM_STREAM_TRACES stream. */
void sim_traces_make(const sim_traces *t, sim_event *ev, const sim_fired *f, adf_crystal *c, float *scratch);

#endif

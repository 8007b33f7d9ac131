/* report.h: the table printed at the end of a run: per actor blocks, frames, bytes, time, share and waits. */
#ifndef NARWHAL_REPORT_H
#define NARWHAL_REPORT_H

#include <stdio.h>

#include "loader.h"
#include "run.h"

void emu_report_print(FILE *out, const emu_chain *c, const emu_run_result *r);

/* The run as a file for `narwhal summary` and scripts: tab-separated
 * records, one per line, the first field naming the record:
 *   narwhal-report  1                        (format version)
 *   topology        PATH
 *   run             sequential|pipelined  RING  WALL_S  BLOCK_S  END  PRODUCER_BLOCKS  RUNS  PAUSES
 *                   STRICT(0|1)
 *   actor           NAME  LIBRARY  BLOCKS  FRAMES_IN  FRAMES_OUT  BYTES_IN  BYTES_OUT  SECONDS
 *                   BLOCK_SECONDS  WAIT_IN  WAIT_OUT  DEVICE
 *   source          NAME  FROM                   actor NAME reads FROM (one per input, in input
 *                                                order; a producer has none)
 *   kind            NAME  ID(0x%08x)  ID_NAME(or ?)  FRAMES  INSIDE   what actor NAME emitted
 *   other           NAME  FRAMES                     frames of ids past EMU_MAX_KINDS
 *   table           LINE                             the table emu_report_print prints
 * DEVICE is the actor's process_device ("GPU 1 (NVIDIA H200)", "CPU"), "-"
 * when it gave none; added last, so that readers taking fields by number
 * (sample_runs/ scripts) and of 12-field actor records keep working.
 * END is data, limit, signal or error (how the last run ended); RUNS the
 * runs started (--cycles), PAUSES the pause/resume pairs.  With several runs
 * every count is the sum over them, and the table has a line per run.
 * Returns 0, or -1 when writing failed. */
int emu_report_write(FILE *out, const emu_chain *c, const emu_run_result *r);

/* "a -> b -> c": a chain's actor names in data-flow order; for any other
 * graph its edges, "a -> b, a -> c (round-robin), ...", readers in topology
 * order; for messages. */
void emu_report_chain(FILE *out, const emu_topology *t);

#endif

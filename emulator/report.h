/* report.h: the table printed at the end of a run: per actor blocks, frames, bytes, time, share and waits. */
#ifndef NARWHAL_REPORT_H
#define NARWHAL_REPORT_H

#include <stdio.h>

#include "loader.h"
#include "run.h"

void emu_report_print(FILE *out, const emu_chain *c, const emu_run_result *r);

/* "a -> b -> c": the chain's actor names in data-flow order, for messages. */
void emu_report_chain(FILE *out, const emu_topology *t);

#endif

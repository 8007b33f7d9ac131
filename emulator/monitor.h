/* monitor.h: `narwhal run --monitor PORT`: a web page and JSON endpoints served from inside the emulator while a run goes. */
#ifndef NARWHAL_MONITOR_H
#define NARWHAL_MONITOR_H

#include <stddef.h>

#include "live.h"

/*
 * The server (monitor_http.c) is libmicrohttpd's, on its own thread; it
 * reads the run through emu_live (live.h) and nothing else, so it can
 * neither slow an actor down nor change what a run does.  It serves
 *   /                  the page (monitor_page.c): self-contained HTML, its
 *                      script drawing the spectra and the tables from the
 *                      endpoints below once a second (no CDN, no network)
 *   /api/status        the run: state, elapsed time, crystal-events and
 *                      events with their rates, the busiest actor, the
 *                      producers' progress and the time left, the rings
 *   /api/actors        per actor: counts, rates, busy share, progress
 *   /api/spectra       the spectra the actors' process_spectra gave
 *   /api/spectrum?name=NAME[&actor=ACTOR][&bins=N]
 *                      one of them with its counts, merged into at most
 *                      N bins (whole groups of adjacent bins) when asked
 * The spectra are the actors' latest copies, at most a second old while
 * their blocks come (live.h).
 * Built without libmicrohttpd, emu_monitor_start fails with one line
 * saying so.
 */
typedef struct emu_monitor emu_monitor;

/* Serves l on bind (an IPv4 or IPv6 address; NULL: 127.0.0.1) and port (0:
 * any free one); *bound is the port taken.  EMU_E_TOPOLOGY with err. */
int emu_monitor_start(emu_monitor **m, emu_live *l, const char *bind, unsigned port, unsigned *bound, char *err,
                      size_t errlen);
void emu_monitor_stop(emu_monitor *m);

/* The JSON documents (monitor_json.c): malloc'd, NULL when out of memory.
 * The spectrum's is NULL with *found 0 when no spectrum has that name (and
 * actor, when given). */
char *emu_monitor_status(emu_live *l);
char *emu_monitor_actors(emu_live *l);
char *emu_monitor_spectra(emu_live *l);
char *emu_monitor_spectrum(emu_live *l, const char *name, const char *actor, unsigned max_bins, int *found);

/* The page, NUL-terminated (monitor_page.c). */
extern const char emu_monitor_page[];

#endif

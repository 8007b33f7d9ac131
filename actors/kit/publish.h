/* publish.h: how an actor publishes files: one live instance per output, written under a unique temporary name, renamed only when the run stops. */
#ifndef NARWHAL_PUBLISH_H
#define NARWHAL_PUBLISH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * The host contract (DESIGN.md) asks two things of an actor that writes files:
 *
 *  - A file with its final name is complete.  A run writes into a temporary
 *    file beside the final one and renames it in process_stop; on abort
 *    (process_unload or process_reset without process_stop) it removes the
 *    temporary and logs what it held.
 *  - No two live instances write one output, whether they are instances of
 *    one library, of two copies of a library in one process, or of two
 *    processes.  Instances of one library, which share one configuration,
 *    each write their own output, derived from the configured one by the
 *    instance's number (kit_instance_output).  An instance claims its output
 *    at process_initialise (or process_start, before any block); a second
 *    claimant (another actor's configuration naming the same output) gets
 *    NARVAL_E_CONFIG and a message naming the output and the key to change.
 *
 * An actor's use, in its lifecycle hooks:
 *
 *   initialise: if (!inst->claim.lock) {
 *                   inst->file = kit_instance_output(conf.file, false, inst->k.number, "File",
 *                                                    note, sizeof note);
 *                   if (note[0]) kit_log(inst->k.name, KIT_INFO, "%s", note);
 *                   code = kit_claim_output(&inst->claim, inst->file, false, "File", conf_path,
 *                                           msg, len);
 *               }
 *   start:      code = kit_output_open(&inst->out, inst->file, msg, len);
 *   block:      code = kit_output_write(&inst->out, buf, n, msg, len);
 *   stop:       code = kit_output_publish(&inst->out, true, msg, len);
 *   reset/unload while running: kit_output_discard(&inst->out), and a log line;
 *   unload:     kit_claim_release(&inst->claim);
 *
 * Every function returns 0 or a NARVAL_E_* code with a sentence in msg that
 * names the path and the reason; none logs (the actor does, with its name).
 * A zeroed struct holds nothing: the release functions may be called on it.
 * Nothing here keeps process-wide state, so the functions may be called from
 * several threads on different structs.
 */

/* ---- claims ------------------------------------------------------------------
 * A claim is an open file description lock (fcntl F_OFD_SETLK) on a lock file:
 *   a file PATH:        DIR/.NAME.lock beside it (DIR/NAME being PATH);
 *   a directory PATH:   PATH/.narwhal.lock inside it (PATH must exist), so that
 *                       every spelling of the directory finds the same lock.
 * Such a lock belongs to one open() of the file, not to the process: two
 * claims in one process conflict as claims in two processes do, and the
 * kernel drops the lock of a process that dies, so a lock file left by a
 * crash does not block the next run.  The lock file is opened without
 * following a symbolic link, and removed when the claim is released.
 */
typedef struct kit_claim {
    char *lock; /* the lock file; NULL when nothing is claimed */
    int fd;     /* open on it, holding the lock */
} kit_claim;

/* Claims `path` for this instance.  Busy: NARVAL_E_CONFIG with
 *   "output 'PATH' is already being written by another live instance: change key 'KEY' in CONF"
 * ("output directory 'PATH' ..." when directory is set).  The folders
 * leading to the lock file are made when missing (an output may name a
 * folder the run is the first to write); a lock file that still cannot be
 * created (a read-only directory): NARVAL_E_IO.  A claim already held by c is
 * released first. */
unsigned kit_claim_output(kit_claim *c, const char *path, bool directory, const char *key,
                          const char *conf_file, char *msg, size_t len);
/* Removes the lock file and drops the lock; nothing when c holds no claim. */
void kit_claim_release(kit_claim *c);

/* ---- one configuration, several instances --------------------------------------
 * A NARVAL host calls process_config once per library and may then register
 * several instances of it (one filter split over K instances, fed round robin):
 * they share one configuration, so one configured output.  Each instance
 * writes its own, chosen by its number (kit_instance.number, kit.h):
 *   instance 1:             the output as configured;
 *   a file, instance k > 1: ".k" inserted before the extension of the file's
 *                           name (from its last '.', a leading '.' excepted), or
 *                           appended when it has none: out.adf -> out.2.adf,
 *                           run%03d.adf -> run%03d.2.adf, log -> log.2;
 *   a directory, k > 1:     DIR/instance-k, inside the configured directory
 *                           (spectra -> spectra/instance-2), so that one actor's
 *                           outputs stay together.
 * An instance then claims that output like any other.  Two actors with their
 * own configurations (two copies of a library, two processes) that name one
 * output still conflict: their first instances claim the same name.
 */

/* The output of instance `number` (malloc'd; NULL when out of memory).  For
 * number > 1, `note` gets the sentence the actor logs at INFO when it claims it:
 *   "instance 2 of this configuration writes 'out.2.adf' (key 'File' names
 *    'out.adf', which instance 1 writes)"
 * and "" for number 1. */
char *kit_instance_output(const char *configured, bool directory, unsigned number, const char *key,
                          char *note, size_t len);

/* ---- outputs -----------------------------------------------------------------
 * kit_output_open creates PATH.XXXXXX.part in PATH's directory: XXXXXX are six
 * random letters and digits, the file is created with O_CREAT | O_EXCL |
 * O_NOFOLLOW (mode 0666 less the umask), and another name is drawn when one
 * exists, so the temporary never replaces, truncates or follows anything
 * already there.  kit_output_publish renames it to PATH: rename() replaces
 * what PATH was (a symbolic link there is replaced, its target untouched).
 * A temporary that is never published is removed by kit_output_discard.
 */
typedef struct kit_output {
    char *path; /* the final name */
    char *temp; /* the temporary; NULL when none exists */
    int fd;     /* open for writing on temp; -1 once closed (or owned by fp) */
    FILE *fp;   /* set by kit_output_stream */
} kit_output;

/* Creates the temporary of `path` (o must hold none: discard or publish it first). */
unsigned kit_output_open(kit_output *o, const char *path, char *msg, size_t len);
/* Appends n bytes (all of them: short writes and EINTR are retried). */
unsigned kit_output_write(kit_output *o, const void *buf, size_t n, char *msg, size_t len);
/* The open temporary as a buffered stdio stream, for fprintf and fwrite; from
 * then on the stream owns the descriptor (write through it only).  NULL with
 * msg when it cannot be made. */
FILE *kit_output_stream(kit_output *o, char *msg, size_t len);
/* Ends the writing: flushes, with sync also fsync(), and closes; the temporary
 * stays, to be published or discarded.  A write error the stream kept, or one
 * that flushing or closing reveals, is NARVAL_E_IO.  Nothing when closed. */
unsigned kit_output_close(kit_output *o, bool sync, char *msg, size_t len);
/* kit_output_close, then the rename of the temporary to the final name.  On
 * failure the temporary is removed; either way o then holds nothing (as zeroed). */
unsigned kit_output_publish(kit_output *o, bool sync, char *msg, size_t len);
/* Closes and removes the temporary; o then holds nothing (as zeroed).  Nothing when it held none. */
void kit_output_discard(kit_output *o);

#endif

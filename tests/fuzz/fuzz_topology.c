/* fuzz_topology.c: libFuzzer target: bytes as a topology through the XML reader and the chain checks (nothing loaded). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>

#include "emu.h"
#include "topology.h"

static FILE *notes;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    xmlInitParser();
    notes = fopen("/dev/null", "w");
    return 0;
}

/* What emu_topology_parse promises about an accepted topology. */
static void check_chain(const emu_topology *t)
{
    size_t n = t->n_actors;
    if (n < 2 || t->actors[0].role != EMU_PRODUCER || t->actors[n - 1].role != EMU_CONSUMER)
        abort();
    for (size_t k = 0; k < n; k++) {
        const emu_actor_spec *a = &t->actors[k];
        /* No <library> is accepted: a main configuration file may name it. */
        if (!a->name || !a->name[0] || (a->library && !a->library[0]))
            abort();
        if (k > 0 && k + 1 < n && a->role != EMU_FILTER)
            abort();
        if (k + 1 < n && (!a->output || a->output_size == 0 || a->output_size > EMU_MAX_BUFFER))
            abort();
        if (k > 0 && (strcmp(a->source, t->actors[k - 1].name) != 0 ||
                      strcmp(a->source_buffer, t->actors[k - 1].output) != 0))
            abort();
        for (size_t j = 0; j < k; j++)
            if (strcmp(a->name, t->actors[j].name) == 0)
                abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    emu_topology *t = NULL;
    char err[1024] = "";
    int rc = emu_topology_parse("fuzz.xml", (const char *)data, size, notes, &t, err, sizeof err);
    if (rc == EMU_OK) {
        check_chain(t);
    } else if (rc != EMU_E_TOPOLOGY || t != NULL || strncmp(err, "fuzz.xml:", 9) != 0 || strchr(err, '\n')) {
        abort();
    }
    emu_topology_free(t);
    return 0;
}

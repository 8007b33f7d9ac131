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

/* What emu_topology_parse promises about an accepted topology: an acyclic
 * graph in topological order, every source resolved to an earlier actor's
 * buffer, input counts as declared. */
static void check_graph(const emu_topology *t)
{
    size_t n = t->n_actors;
    if (n < 2)
        abort();
    for (size_t k = 0; k < n; k++) {
        const emu_actor_spec *a = &t->actors[k];
        /* No <library> is accepted: a main configuration file may name it. */
        if (!a->name || !a->name[0] || (a->library && !a->library[0]))
            abort();
        if (a->role != EMU_CONSUMER && (!a->output || a->output_size == 0 || a->output_size > EMU_MAX_BUFFER))
            abort();
        if ((a->role == EMU_PRODUCER) != (a->n_sources == 0) || (a->n_sources && a->n_sources != a->input_buffers))
            abort();
        for (size_t i = 0; i < a->n_sources; i++) {
            const emu_actor_spec *src = &t->actors[a->sources[i].from];
            if (a->sources[i].from >= k || strcmp(a->sources[i].actor, src->name) != 0 ||
                strcmp(a->sources[i].buffer, src->output) != 0)
                abort();
        }
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
        check_graph(t);
    } else if (rc != EMU_E_TOPOLOGY || t != NULL || strncmp(err, "fuzz.xml:", 9) != 0 || strchr(err, '\n')) {
        abort();
    }
    emu_topology_free(t);
    return 0;
}

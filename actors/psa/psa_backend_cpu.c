/* psa_backend_cpu.c: the host's backends of the PSA engine: the optimised CPU search (psa_cpu.c) and the naive reference (psa_naive.c). */
#include "psa_backend.h"
#include "psa_naive.h"

static int cpu_search(psa_engine *e, psa_batch *b, char *msg, size_t len)
{
    return psa_cpu_search(&e->cpu, b, b->local ? PSA_LOCAL : e->p.mode);
}

static int reference_search(psa_engine *e, psa_batch *b, char *msg, size_t len)
{
    psa_naive_search(e->basis, e->layout, e->pw->p, b);
    return 0;
}

const psa_backend psa_backend_cpu = { .name = "CPU", .search = cpu_search };
const psa_backend psa_backend_reference = { .name = "reference", .search = reference_search };

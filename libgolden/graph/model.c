/* The graph model's own functions: lookups by id, kind names, freeing. What builds a model is
 * in rules.c (the rules) and the loaders (load*.c). */
#include "golden/graph.h"

#include <stdlib.h>
#include <string.h>

#include "graph/build.h"

static uint32_t find(const golden_strmap *m, const char *id)
{
    uint64_t v;
    return lg_strmap_get(m, id, strlen(id), &v) ? (uint32_t)v : GOLDEN_NONE;
}

uint32_t golden_graph_find_op(const golden_graph *g, const char *id)
{
    return find(&((const graph_index *)g->index)->ops, id);
}

uint32_t golden_graph_find_buffer(const golden_graph *g, const char *id)
{
    return find(&((const graph_index *)g->index)->buffers, id);
}

uint32_t golden_graph_find_queue(const golden_graph *g, const char *id)
{
    return find(&((const graph_index *)g->index)->queues, id);
}

const char *golden_op_kind_name(golden_op_kind k)
{
    switch (k) {
    case GOLDEN_OP_SIGNAL: return "signal";
    case GOLDEN_OP_WAIT: return "wait";
    case GOLDEN_OP_BARRIER: return "barrier";
    default: return "compute";
    }
}

void golden_graph_free(golden_graph *g)
{
    if (!g)
        return;
    for (uint32_t i = 0; i < g->nqueues; i++)
        free(g->queues[i].id);
    for (uint32_t i = 0; i < g->nbuffers; i++)
        free(g->buffers[i].id);
    for (uint32_t i = 0; i < g->nops; i++)
        free(g->ops[i].id);
    for (uint32_t i = 0; i < g->nevents; i++)
        free(g->events[i].id);
    for (uint32_t i = 0; i < g->nspaces; i++)
        free(g->spaces[i]);
    for (uint32_t i = 0; i < g->nfamilies; i++)
        free(g->families[i]);
    free(g->queues);
    free(g->buffers);
    free(g->ops);
    free(g->accesses);
    free(g->after);
    free(g->barrier_queues);
    free(g->events);
    free(g->spaces);
    free(g->families);
    free(g->domain_chip);
    free(g->domain_space);
    free(g->qops_first);
    free(g->qops_count);
    free(g->qops);
    graph_index *ix = g->index;
    if (ix) {
        lg_strmap_free(&ix->ops);
        lg_strmap_free(&ix->buffers);
        lg_strmap_free(&ix->queues);
        free(ix);
    }
    free(g->name);
    free(g);
}

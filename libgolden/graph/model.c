/* The graph model's own functions: lookups by id, kind names, freeing. What builds a model is
 * in rules.c (the rules) and the loaders (load*.c). */
#include "golden/graph.h"

#include <stdlib.h>
#include <string.h>

#include "graph/build.h"

static uint32_t find(const lg_idmap *m, const char *id)
{
    size_t n = strlen(id);
    return lg_idmap_find(m, id, n, lg_id_hash(id, n), NULL);
}

char *graph_name_copy(graph_index *ix, const char *s, size_t n)
{
    name_block *b = ix->names;
    if (!b || b->cap - b->used < n + 1) {
        size_t cap = n + 1 > (size_t)1 << 20 ? n + 1 : (size_t)1 << 20;
        if (n + 1 < n || !(b = malloc(sizeof *b + cap)))
            return NULL;
        b->next = ix->names;
        b->used = 0;
        b->cap = cap;
        ix->names = b;
    }
    char *c = b->bytes + b->used;
    memcpy(c, s, n);
    c[n] = '\0';
    b->used += n + 1;
    return c;
}

void graph_names_free(graph_index *ix)
{
    for (name_block *b = ix->names, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    ix->names = NULL;
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
    /* op and event ids live in the index's name blocks */
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
        lg_idmap_free(&ix->ops);
        lg_idmap_free(&ix->buffers);
        lg_idmap_free(&ix->queues);
        graph_names_free(ix);
        free(ix);
    }
    free(g->name);
    free(g);
}

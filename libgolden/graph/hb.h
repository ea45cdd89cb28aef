/* Private to libgolden/graph (not installed): dag.h exposes results through accessors.
 * Happens-before over a graph: queue program order + `after` + signal->wait + barriers, as
 * vector clocks over lanes (queues that run one after another share one) from one topological
 * pass, with O(1) ordering queries. */
#ifndef GOLDEN_GRAPH_HB_H
#define GOLDEN_GRAPH_HB_H
#include <stdbool.h>
#include <stdint.h>
#include "golden/error.h"
#include "golden/dag.h"
#include "golden/graph.h"

typedef enum { GOLDEN_EDGE_PROGRAM = 0, GOLDEN_EDGE_AFTER, GOLDEN_EDGE_SIGNAL } golden_edge_kind;

typedef struct {
    uint32_t node;   /* the other end */
    uint8_t kind;    /* golden_edge_kind */
    uint32_t ref;    /* PROGRAM: queue; AFTER: index into g->after; SIGNAL: event */
} golden_hb_edge;


struct golden_hb {
    uint32_t nnodes, K;   /* K = lanes: queues that run one after another share a column */
    uint32_t *clock;      /* nnodes x K: clock[n*K+l] = last position on lane l that is <= n;
                           * NULL when the graph has a cycle (found before clocks exist) */
    uint32_t *queue_lane; /* per queue: its lane (GOLDEN_NONE for a queue without ops) */
    uint8_t *link_op;     /* per op: 1 = a wait whose signal edge joins two queues' lanes */
    uint8_t *link_after;  /* per entry of g->after: 1 = this edge joins two queues' lanes */
    uint32_t *home_queue; /* per node: the lane it sits on (GOLDEN_NONE for a dropped barrier) */
    uint32_t *home_pos;   /* its 1-based position along that lane */
    uint32_t *order;      /* topological order (length norder) */
    uint32_t norder;
    uint32_t *topo_index; /* per node: position in order (GOLDEN_NONE when on a cycle) */
    uint32_t *cycle;      /* one cycle's nodes in order, when norder < nnodes */
    uint32_t ncycle;
    /* edges both ways, CSR */
    uint32_t *succ_first; golden_hb_edge *succ;
    uint32_t *pred_first; golden_hb_edge *pred;
};

/* Build edges, a topological order and clocks. A cycle is not an error: norder < nnodes,
 * cycle/ncycle hold one cycle and no clock is built (ordering queries must not be asked).
 * Memory: 4 bytes x ops x lanes (docs/dag-check.md). */
int lg_hb_build(const golden_graph *g, const golden_hb_drop *drop, golden_hb *h,
                    golden_error *err);
void lg_hb_free(golden_hb *h);

/* a happens strictly before b (a != b). */
static inline bool golden_hb_before(const golden_hb *h, uint32_t a, uint32_t b)
{
    uint32_t q = h->home_queue[a];
    if (a == b || q == UINT32_MAX)
        return false;
    return h->clock[(uint64_t)b * h->K + q] >= h->home_pos[a];
}

/* a == b or a happens before b. */
static inline bool golden_hb_le(const golden_hb *h, uint32_t a, uint32_t b)
{
    return a == b || golden_hb_before(h, a, b);
}

static inline bool golden_hb_ordered(const golden_hb *h, uint32_t a, uint32_t b)
{
    return golden_hb_before(h, a, b) || golden_hb_before(h, b, a);
}

#endif

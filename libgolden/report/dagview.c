/* The neighbourhood dag-check's HTML draws, taken from the checked result: a bounded set of ops
 * around each drawn racing pair, their lanes (chip, queue), happens-before columns and syncs. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_int.h"

typedef struct {
    const golden_graph *g;
    uint8_t *shown;        /* per op */
    uint8_t *drop_op;      /* per op: a removed wait or barrier (--remove) */
    uint8_t *drop_after;   /* per after entry: removed (--remove) */
    uint32_t *list;        /* shown ops in the order they were added */
    size_t n;
    uint32_t *wait_first, *waits; /* per event: its waits (CSR), built when a signal is shown */
} view_t;

static void add(view_t *v, uint32_t op)
{
    if (op == GOLDEN_NONE || op >= v->g->nops || v->shown[op] || v->drop_op[op] == 1)
        return;
    v->shown[op] = 1;
    v->list[v->n++] = op;
}

/* The ops within HTML_DAG_WINDOW program positions of op on its queue. */
static void window(view_t *v, uint32_t op)
{
    const golden_graph *g = v->g;
    uint32_t q = g->ops[op].queue, first = g->qops_first[q], count = g->qops_count[q];
    for (uint32_t i = 0; i < count; i++)
        if (g->qops[first + i] == op) {
            uint32_t lo = i > HTML_DAG_WINDOW ? i - HTML_DAG_WINDOW : 0;
            for (uint32_t k = lo; k < count && k <= i + HTML_DAG_WINDOW; k++)
                add(v, g->qops[first + k]);
            return;
        }
}

static int index_waits(view_t *v)
{
    const golden_graph *g = v->g;
    v->wait_first = calloc((size_t)g->nevents + 1, sizeof *v->wait_first);
    v->waits = malloc(sizeof *v->waits * ((size_t)g->nops + 1));
    if (!v->wait_first || !v->waits)
        return -1;
    for (uint32_t o = 0; o < g->nops; o++)
        if (g->ops[o].kind == GOLDEN_OP_WAIT)
            v->wait_first[g->ops[o].event + 1]++;
    for (uint32_t e = 0; e < g->nevents; e++)
        v->wait_first[e + 1] += v->wait_first[e];
    uint32_t *at = calloc((size_t)g->nevents + 1, sizeof *at);
    if (!at)
        return -1;
    for (uint32_t o = 0; o < g->nops; o++)
        if (g->ops[o].kind == GOLDEN_OP_WAIT) {
            uint32_t e = g->ops[o].event;
            v->waits[v->wait_first[e] + at[e]++] = o;
        }
    free(at);
    return 0;
}

/* One step out from the windows: a wait's signal, a signal's first waits, an op's first `after`
 * predecessors (not recursive, so the neighbourhood stays bounded). */
static int partners(view_t *v)
{
    const golden_graph *g = v->g;
    size_t n0 = v->n;
    for (size_t i = 0; i < n0; i++) {
        const golden_op *o = &g->ops[v->list[i]];
        if (o->kind == GOLDEN_OP_WAIT)
            add(v, g->events[o->event].signal);
        if (o->kind == GOLDEN_OP_SIGNAL) {
            if (!v->wait_first && index_waits(v) != 0)
                return -1;
            uint32_t a = v->wait_first[o->event], b = v->wait_first[o->event + 1];
            for (uint32_t k = a; k < b && k < a + HTML_DAG_PARTNERS; k++)
                add(v, v->waits[k]);
        }
        for (uint32_t k = 0; k < o->after_count && k < HTML_DAG_PARTNERS; k++)
            if (!v->drop_after[o->after_first + k])
                add(v, g->after[o->after_first + k]);
    }
    return 0;
}

/* --remove: the syncs the checked graph went without are neither drawn nor ordering anything. */
static void dropped(view_t *v, const golden_dag_result *r)
{
    if (r->base_g != r->g)
        return; /* a baseline comparison names syncs of the other graph */
    for (size_t i = 0; i < r->nremoved; i++) {
        const golden_sync *s = &r->removed[i];
        if (s->kind == GOLDEN_SYNC_AFTER)
            v->drop_after[s->after] = 1;
        else if (s->kind == GOLDEN_SYNC_WAIT)
            v->drop_op[s->op] = 2; /* the wait stays on its queue; its signal edge goes */
        else
            v->drop_op[s->op] = 1;
    }
}

static int by_rank(const void *x, const void *y)
{
    const uint64_t *a = x, *b = y;
    return *a < *b ? -1 : *a > *b;
}

/* Columns in happens-before order: ops sorted by how many shown ops precede them (a linear
 * extension: u before v gives v every predecessor of u, and u), then each op one column right
 * of its latest shown predecessor. Ops in one column are unordered. */
static int columns(view_t *v, const golden_dag_result *r, uint32_t *col)
{
    size_t n = v->n;
    uint64_t *key = malloc(sizeof *key * (n + 1));
    if (!key)
        return -1;
    for (size_t i = 0; i < n; i++) {
        uint64_t before = 0;
        for (size_t j = 0; j < n; j++)
            before += golden_dag_before(r, v->list[j], v->list[i]);
        key[i] = before << 32 | (uint64_t)i;
    }
    qsort(key, n, sizeof *key, by_rank);
    for (size_t k = 0; k < n; k++) {
        size_t i = (size_t)(key[k] & 0xffffffffu);
        uint32_t c = 0;
        for (size_t m = 0; m < k; m++) {
            size_t j = (size_t)(key[m] & 0xffffffffu);
            if (col[j] + 1 > c && golden_dag_before(r, v->list[j], v->list[i]))
                c = col[j] + 1;
        }
        col[i] = c;
    }
    free(key);
    return 0;
}

typedef struct {
    int64_t chip;
    uint32_t queue;
} lane_key;

static int lane_cmp(const void *x, const void *y)
{
    const lane_key *a = x, *b = y;
    if (a->chip != b->chip)
        return a->chip < b->chip ? -1 : 1;
    return (a->queue > b->queue) - (a->queue < b->queue);
}

/* Lanes: the queues of shown ops, then for a barrier none of whose queues is shown, its first
 * queue; sorted by chip, then queue order in the file. */
static json_t *lanes(view_t *v, uint32_t **lane_of_queue)
{
    const golden_graph *g = v->g;
    uint8_t *on = calloc((size_t)g->nqueues + 1, 1);
    lane_key *qs = malloc(sizeof *qs * ((size_t)g->nqueues + 1));
    *lane_of_queue = malloc(sizeof **lane_of_queue * ((size_t)g->nqueues + 1));
    json_t *arr = json_array();
    if (!on || !qs || !*lane_of_queue || !arr) {
        free(on), free(qs), json_decref(arr);
        return NULL;
    }
    size_t nq = 0;
    for (size_t i = 0; i < v->n; i++) {
        const golden_op *o = &g->ops[v->list[i]];
        if (o->kind != GOLDEN_OP_BARRIER && !on[o->queue])
            on[o->queue] = 1, qs[nq++] = (lane_key){g->queues[o->queue].chip, o->queue};
    }
    for (size_t i = 0; i < v->n; i++) {
        const golden_op *o = &g->ops[v->list[i]];
        if (o->kind != GOLDEN_OP_BARRIER || !o->bq_count)
            continue;
        bool any = false;
        for (uint32_t k = 0; k < o->bq_count; k++)
            any |= on[g->barrier_queues[o->bq_first + k]] != 0;
        uint32_t q0 = g->barrier_queues[o->bq_first];
        if (!any)
            on[q0] = 1, qs[nq++] = (lane_key){g->queues[q0].chip, q0};
    }
    qsort(qs, nq, sizeof *qs, lane_cmp);
    for (size_t i = 0; i < nq; i++) {
        (*lane_of_queue)[qs[i].queue] = (uint32_t)i;
        json_array_append_new(arr, json_pack("{s:s,s:I}", "queue", g->queues[qs[i].queue].id, "chip",
                                             (json_int_t)qs[i].chip));
    }
    for (uint32_t q = 0; q < g->nqueues; q++)
        if (!on[q])
            (*lane_of_queue)[q] = GOLDEN_NONE;
    free(on), free(qs);
    return arr;
}

static json_t *op_json(const view_t *v, uint32_t op, uint32_t col, const uint32_t *lane_of_queue)
{
    const golden_graph *g = v->g;
    const golden_op *o = &g->ops[op];
    json_t *ls = json_array();
    if (o->kind == GOLDEN_OP_BARRIER) {
        for (uint32_t k = 0; ls && k < o->bq_count; k++) {
            uint32_t l = lane_of_queue[g->barrier_queues[o->bq_first + k]];
            if (l != GOLDEN_NONE)
                json_array_append_new(ls, json_integer(l));
        }
    } else if (ls) {
        json_array_append_new(ls, json_integer(lane_of_queue[o->queue]));
    }
    return json_pack("{s:s,s:s,s:I,s:o,s:b}", "id", o->id, "kind", golden_op_kind_name(o->kind),
                     "col", (json_int_t)col, "lanes", ls ? ls : json_array(), "wait_removed",
                     v->drop_op[op] == 2);
}

/* The syncs between two shown ops: signal -> wait, and `after` predecessor -> op. */
static json_t *syncs(const view_t *v)
{
    const golden_graph *g = v->g;
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < v->n; i++) {
        uint32_t op = v->list[i];
        const golden_op *o = &g->ops[op];
        if (o->kind == GOLDEN_OP_WAIT && v->drop_op[op] != 2) {
            uint32_t s = g->events[o->event].signal;
            if (v->shown[s])
                json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:s}", "from", g->ops[s].id, "to",
                                                     o->id, "kind", "signal", "event",
                                                     g->events[o->event].id));
        }
        for (uint32_t k = 0; k < o->after_count; k++) {
            uint32_t p = g->after[o->after_first + k];
            if (!v->drop_after[o->after_first + k] && v->shown[p])
                json_array_append_new(arr, json_pack("{s:s,s:s,s:s}", "from", g->ops[p].id, "to",
                                                     o->id, "kind", "after"));
        }
    }
    return arr;
}

static json_t *assemble(view_t *v, const golden_dag_result *r, size_t drawn)
{
    uint32_t *col = calloc(v->n + 1, sizeof *col), *lane_of_queue = NULL;
    json_t *ls = col && columns(v, r, col) == 0 ? lanes(v, &lane_of_queue) : NULL;
    json_t *ops = ls ? json_array() : NULL;
    for (size_t i = 0; ops && i < v->n; i++)
        json_array_append_new(ops, op_json(v, v->list[i], col[i], lane_of_queue));
    json_t *out = ops ? json_pack("{s:I,s:I,s:I,s:I,s:o,s:o,s:o}", "pairs_drawn", (json_int_t)drawn,
                                  "pairs", (json_int_t)r->nraces, "window",
                                  (json_int_t)HTML_DAG_WINDOW, "partners",
                                  (json_int_t)HTML_DAG_PARTNERS, "lanes", ls, "ops", ops,
                                  "syncs", syncs(v))
                      : NULL;
    if (!out)
        json_decref(ls), json_decref(ops);
    free(col), free(lane_of_queue);
    return out;
}

json_t *html_dag_view(const golden_dag_result *r)
{
    const golden_graph *g = r->g;
    size_t drawn = r->cyclic ? 0 : (r->nraces < HTML_DAG_PAIRS ? r->nraces : HTML_DAG_PAIRS);
    view_t v = {g, NULL, NULL, NULL, NULL, 0, NULL, NULL};
    size_t cap = drawn * 2 * (2 * HTML_DAG_WINDOW + 1) * (1 + 2 * HTML_DAG_PARTNERS) + 1;
    v.shown = calloc((size_t)g->nops + 1, 1);
    v.drop_op = calloc((size_t)g->nops + 1, 1);
    v.drop_after = calloc((size_t)g->nafter + 1, 1);
    v.list = malloc(sizeof *v.list * cap);
    json_t *out = NULL;
    if (v.shown && v.drop_op && v.drop_after && v.list) {
        dropped(&v, r);
        for (size_t i = 0; i < drawn; i++) {
            window(&v, g->accesses[r->races[i].a].op);
            window(&v, g->accesses[r->races[i].b].op);
        }
        if (partners(&v) == 0)
            out = assemble(&v, r, drawn);
    }
    free(v.shown), free(v.drop_op), free(v.drop_after), free(v.list), free(v.wait_first), free(v.waits);
    return out;
}

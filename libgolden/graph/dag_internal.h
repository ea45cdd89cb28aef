/* Private to libgolden/graph: what the parts of dag-check's engine (dag_*.c) share: small
 * sets, the orderings a check relied on (witnesses), the race and alias sweeps. */
#ifndef GOLDEN_GRAPH_DAG_INTERNAL_H
#define GOLDEN_GRAPH_DAG_INTERNAL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "golden/dag.h"
#include "golden/report.h"
#include "graph/hb.h"
#include "graph/imap.h"

/* A set of 64-bit keys (never UINT64_MAX). */
typedef struct {
    uint64_t *keys;
    size_t cap, n;
} u64set;

/* Insert key; 1 = was new, 0 = present, -1 = no memory. */
int dag_set_add(u64set *s, uint64_t key);

/* Orderings a check relied on ("a before b", or "a before or equal b"): the sweeps visit the
 * same pairs whatever the clocks say, so a graph without one sync is race- and alias-free
 * exactly when each recorded ordering survives there (see golden_dag_redundant). */
typedef struct {
    u64set seen;
    uint32_t *a, *b;
    uint8_t *le;
    size_t n, cap;
    int oom;
} witness_set;

void dag_wit_add(witness_set *w, uint32_t a, uint32_t b, bool le);
void dag_wit_free(witness_set *w);

/* ---- races (dag_races.c) ---- */
/* A byte range where a check failed: [lo, hi) of a domain. */
typedef struct {
    uint32_t dom;
    uint64_t lo, hi;
} racy_range;

typedef struct {
    const golden_graph *g;
    const golden_hb *h;
    golden_race *v;
    size_t n, cap;
    u64set seen;
    uint32_t cur;
    int oom;
    witness_set *wit;
    /* with wit and racy: every byte range where a check failed (domain, [lo, hi)) */
    bool racy;
    uint64_t seg_lo, seg_hi;
    racy_range *rr;
    size_t nracy, capracy;
} race_acc;

/* One pair for every racing byte range (domains on separate cores unless witnesses are
 * recorded), or every racing pair: 0 or -1 (out of memory). */
int dag_sweep_races(race_acc *ra);
int dag_sweep_all_pairs(race_acc *ra);
/* After a sweep with wit and racy: witnesses for every ordered conflicting pair of accesses
 * that both touch racy bytes and overlap (all pairs there; see golden_dag_redundant).
 * Frees the racy ranges. 0 or -1 (out of memory). */
int dag_racy_pair_witnesses(race_acc *ra);
/* Races in report order (qsort_r with the graph as context). */
int dag_cmp_race(const void *x, const void *y, void *gp);

/* ---- memory plan (dag_aliases.c) ---- */
/* The sweep (at least one pair per aliased range) into r->aliases; witnesses to wit if any. */
int dag_check_aliases(golden_dag_result *r, witness_set *wit);
/* Every overlapping pair judged: aliases into r (when add), witnesses into wit. */
int dag_aliases_all_pairs(golden_dag_result *r, bool add, witness_set *wit);
/* A live range that ends before it starts is an error. */
int dag_check_live_ranges(const golden_graph *g, const golden_hb *h, golden_error *err);
bool dag_has_inplace(const golden_graph *g);

/* ---- syncs, removal, comparison (dag_removal.c, dag_compare.c) ---- */
/* Every wait, barrier and `after` entry of g. */
int dag_list_syncs(const golden_graph *g, golden_sync **out, size_t *n);
/* Add to rc->exposed_by each sync of set on a path x -> y in h. */
int dag_set_exposed(golden_race *rc, const golden_graph *g, const golden_hb *h,
                    const golden_sync *set, size_t n, uint32_t x, uint32_t y);
/* Mark cand's aliases that base lacks, over every aliasing pair of both. */
int dag_mark_new_aliases(const golden_dag_result *base, golden_dag_result *cand);
/* Position of op on queue q's program order. */
uint32_t dag_queue_index_of(const golden_graph *g, uint32_t q, uint32_t op);

#endif

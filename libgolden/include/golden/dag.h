/* dag-check's engine: races between queues (interval-map sweep with vector clocks), cycles,
 * memory-plan aliases, idle syncs, barrier-removal comparison, graph statistics and the report. */
#ifndef GOLDEN_DAG_H
#define GOLDEN_DAG_H
#include "golden/api.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "golden/error.h"
#include "golden/graph.h"
#include "golden/report.h"

/* Happens-before of a checked graph (private: ask through golden_dag_before/golden_dag_cycle). */
typedef struct golden_hb golden_hb;

/* Syncs left out when checking (to test a removal): may be NULL. */
typedef struct {
    const uint8_t *drop_op;    /* per op: 1 = drop this wait (its signal edge) or barrier */
    const uint8_t *drop_after; /* per entry of g->after: 1 = drop this edge */
} golden_hb_drop;

typedef enum { GOLDEN_RACE_RAW = 0, GOLDEN_RACE_WAR, GOLDEN_RACE_WAW } golden_race_kind;

typedef enum { GOLDEN_SYNC_WAIT = 0, GOLDEN_SYNC_BARRIER, GOLDEN_SYNC_AFTER } golden_sync_kind;

/* A sync that can be removed: a wait (its signal edge), a barrier, or one `after` entry. */
typedef struct {
    golden_sync_kind kind;
    uint32_t op;     /* the wait, the barrier, or the op that lists `after` */
    uint32_t after;  /* AFTER: index into g->after; else GOLDEN_NONE */
} golden_sync;

typedef struct {
    uint32_t a, b;           /* access indices; a's op comes first in the file */
    golden_race_kind kind;   /* by which of a, b writes */
    uint64_t lo, hi;         /* overlapping absolute bytes */
    bool is_new;             /* baseline/remove mode: not a race of the baseline */
    golden_sync *exposed_by; /* baseline/remove mode: removed syncs that ordered it (base graph) */
    uint32_t nexposed;
} golden_race;

typedef struct {
    uint32_t a, b;           /* buffer indices, a < b */
    uint64_t lo, hi;         /* overlapping absolute bytes */
    bool inplace;            /* one is declared inplace_of the other */
    const char *reason;
    bool is_new;
} golden_alias;

typedef enum { GOLDEN_IDLE_IMPLIED = 1, GOLDEN_IDLE_NO_CONFLICT = 2 } golden_idle_kind;

typedef struct {
    golden_sync sync;
    golden_idle_kind why;
} golden_idle_sync;

typedef struct {
    const golden_graph *g;
    golden_hb *hb;                  /* private; see golden_dag_before, golden_dag_cycle */
    bool cyclic;
    bool all;                       /* races hold every racing pair */
    golden_race *races;   size_t nraces;
    golden_alias *aliases; size_t naliases;
    golden_idle_sync *idle; size_t nidle;
    bool redundant_done;
    /* comparison (baseline or --remove): syncs of the base graph */
    bool compared;
    const golden_graph *base_g;     /* the graph removed, moved and exposed_by syncs index */
    golden_sync *removed; size_t nremoved;
    golden_sync *moved;   size_t nmoved;
    char **added;         size_t nadded;   /* names of syncs only the candidate has */
    size_t new_races, new_aliases, base_races;
} golden_dag_result;

/* Build happens-before (without the syncs in drop), look for a cycle, then (when acyclic)
 * races and memory-plan aliases. all = every racing pair; else at least one pair for every
 * racing byte range. The result keeps a pointer to g. */
GOLDEN_API int golden_dag_check(const golden_graph *g, const golden_hb_drop *drop, bool all,
                     golden_dag_result *r, golden_error *err);

/* Idle syncs of a checked acyclic graph: implied by others (transitive), or ordering no
 * conflicting pair (each found by re-checking without it; uses `threads` workers). */
GOLDEN_API int golden_dag_redundant(golden_dag_result *r, int threads, golden_progress *progress,
                         golden_error *err);

/* Parse "ID,ID,..." into syncs of g: a wait or barrier id, or "OP:after:PRED". */
GOLDEN_API int golden_dag_parse_syncs(const golden_graph *g, const char *list, golden_sync **out,
                           size_t *n, golden_error *err);

/* Verify removing `set` from the checked graph of base: fills cand (which must be zeroed) with
 * the check of the graph without them, new races marked with exposed_by. */
GOLDEN_API int golden_dag_verify_removal(golden_dag_result *base, const golden_sync *set, size_t n,
                              golden_dag_result *cand, golden_error *err);

/* Compare a checked candidate with a checked baseline (ops matched by id): removed, moved and
 * added syncs, new races (with exposed_by) and new aliases. */
GOLDEN_API int golden_dag_compare(const golden_dag_result *base, golden_dag_result *cand,
                       golden_error *err);

/* Pass/fail: no cycle, and no race or alias (compared: no new race or alias). */
GOLDEN_API bool golden_dag_passed(const golden_dag_result *r);

GOLDEN_API void golden_dag_result_free(golden_dag_result *r);

/* "wait0", "bar3" or "d2d0:after:mm0" into buf. */
GOLDEN_API void golden_sync_name(const golden_graph *g, const golden_sync *s, char *buf, size_t n);
GOLDEN_API const char *golden_race_kind_name(golden_race_kind k);
GOLDEN_API const char *golden_sync_kind_name(golden_sync_kind k);

/* First signal after op a on a's queue that b's queue can wait for (it does not come after
 * b), or GOLDEN_NONE. */
GOLDEN_API uint32_t golden_dag_fix_signal(const golden_dag_result *r, uint32_t a, uint32_t b);

/* The calculet-dag-report/v1 document of a result (graph = the path shown; baseline = the
 * baseline path or NULL; mode = "check", "baseline" or "remove"). */
GOLDEN_API json_t *golden_dag_report_json(const golden_dag_result *r, const char *graph,
                               const char *baseline, const char *mode);

/* Structural statistics of a graph (peak live memory in topological order, or file order when
 * the graph has a cycle): op counts per family x chip x queue, syncs by kind, D2D commands and
 * sizes, static data_size sum (structural, never traffic), per-chip peak live bytes. NULL when
 * out of memory. */
GOLDEN_API json_t *golden_dag_stats(const golden_graph *g);

/* Op a happens strictly before op b in a checked acyclic result. */
GOLDEN_API bool golden_dag_before(const golden_dag_result *r, uint32_t a, uint32_t b);

/* The ops of the cycle a cyclic result found, in order (*n of them; NULL and 0 when acyclic). */
GOLDEN_API const uint32_t *golden_dag_cycle(const golden_dag_result *r, size_t *n);

/* The diff report: both statistics and their differences (fused vs unfused op counts). */
GOLDEN_API json_t *golden_dag_diff_json(const char *base_path, json_t *base_stats, const char *cand_path,
                             json_t *cand_stats);

#endif

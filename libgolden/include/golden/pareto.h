/* exp-gate pareto: the handbook's section 16.2 layer sensitivity. Single-group fallback
 * experiments (one group of the quantised model back to BF16/W8 each) as points of quality
 * recovered against capacity and latency cost, their Pareto frontier, and the recommended
 * mixed-precision set (calculet-pareto/v1; docs/exp-gate.md "pareto"). */
#ifndef GOLDEN_PARETO_H
#define GOLDEN_PARETO_H
#include "golden/api.h"
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "golden/error.h"
#include "golden/gate.h"

typedef enum {
    GOLDEN_PARETO_TASK = 0, /* accuracy/result.json task: candidate - baseline (higher better) */
    GOLDEN_PARETO_TOP1,     /* logits.top1_match (higher better) */
    GOLDEN_PARETO_KL        /* the largest kl_mean of the golden-diff reports (lower better) */
} golden_pareto_quality;

#define GOLDEN_PARETO_OPTS_VERSION 1
typedef struct {
    unsigned version;               /* GOLDEN_PARETO_OPTS_VERSION */
    golden_pareto_quality quality;  /* the quality axis of the frontier */
    double capacity_budget;         /* bytes the recommended set may add (INFINITY: none) */
    double latency_budget_pct;      /* percent it may add (INFINITY: none) */
} golden_pareto_opts;
#define GOLDEN_PARETO_OPTS_INIT                                                                   \
    {GOLDEN_PARETO_OPTS_VERSION, GOLDEN_PARETO_TASK, __builtin_inf(), __builtin_inf()}

/* The frontier over n experiment folders. Each folder must pass manifest-verify's experiment
 * check with no error and no to-do (else -1, err naming the folder and the rule: it is
 * refused, never plotted); its latency cost comes from the summary recomputed from the raw
 * data (the decision's own path, nothing written), its capacity cost from the manifests'
 * weight_package_bytes, its quality from accuracy/result.json (KL from the golden-diff reports
 * it names). All folders must share one baseline calbin. */
GOLDEN_API int golden_gate_pareto(const char *const *dirs, size_t n, const golden_pareto_opts *po,
                                  const golden_gate_opts *o, json_t **out, golden_error *err);
/* The terminal table of a calculet-pareto/v1 document (free it). */
GOLDEN_API char *golden_gate_pareto_text(const json_t *pareto, golden_error *err);
/* A self-contained HTML page: the SVG picture (quality against capacity cost, frontier points
 * filled and named) and the table, the document embedded. */
GOLDEN_API int golden_html_pareto_report(const json_t *pareto, const char *path, bool force,
                                         golden_error *err);

#endif

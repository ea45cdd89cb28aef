/* exp-gate as a library: statistics of an experiment folder's raw performance data
 * (calculet-perf-summary/v1), the handbook's section 17 decision (calculet-decision/v1), and the
 * section 19 operator evidence matrix. See docs/exp-gate.md for every choice made here. */
#ifndef GOLDEN_GATE_H
#define GOLDEN_GATE_H
#include "golden/api.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "golden/error.h"
#include "golden/experiment.h"
#include "golden/gate_stats.h"


/* The per-request metrics: ttft_ms, tpot_ms, then each section 7 stage's duration in ms. */
#define GOLDEN_GATE_METRICS 11
extern const char *const lg_gate_metric_names[GOLDEN_GATE_METRICS];

/* Section 7's floor: 10 warm-ups and 30 measured steady runs per case and side. */
#define GOLDEN_GATE_MIN_WARMUPS 10
#define GOLDEN_GATE_MIN_MEASURED 30
#define GOLDEN_GATE_DEFAULT_SEED 20260802ull
#define GOLDEN_GATE_DEFAULT_BOOTSTRAP 10000ul

#define GOLDEN_GATE_OPTS_VERSION 3
typedef struct {
    unsigned version;        /* GOLDEN_GATE_OPTS_VERSION */
    uint64_t seed;           /* bootstrap seed */
    unsigned long bootstrap; /* resamples B (0: no interval, only for benchmarks) */
    int threads;             /* 0 = every core */
    size_t memory_budget;    /* bytes of samples held at once (0 = 256 MiB); one case and side
                                larger than this is still taken whole */
    double clock_band_pct;   /* steady band of clock readings, +- percent of the reference */
    double temp_band_c;      /* steady band of temperature readings, +- degrees C */
    bool seed_set, bootstrap_set; /* --check: false = take them from the stored summary */
    golden_gate_boot_gen generator; /* version 2: the bootstrap's generator (gate_stats.h);
                                       --check takes the stored summary's */
    const char *soak_path;   /* version 3: decide's soak result (NULL: DIR/stability/soak.json
                                when the folder has one; docs/exp-gate.md) */
    double power_band_pct;   /* version 3: steady band of power_w readings, +- percent of the
                                reference, also the largest drift over the run order (5) */
} golden_gate_opts;

/* Whether the hypothesis file at path gives what the section 17 decision needs (experiment_id,
 * acceptance.p99_regression_max_pct and target_metric_improvement_min_pct as numbers): 0, or
 * -1 with err naming the file and the field. For callers that hold a hypothesis of their own
 * (golden-accept's --hypothesis), so that its gap is "could not check", not a verdict. */
GOLDEN_API int golden_gate_hypothesis_check(const char *path, golden_error *err);

/* Defaults: seed 20260802, B 10000, the order-statistic generator, bands 2 % and 5 C. */
GOLDEN_API void golden_gate_opts_init(golden_gate_opts *o);

/* Compute DIR's summary from performance/raw-requests.jsonl, performance/raw-device-trace.*
 * and hypothesis.yaml. *out receives the calculet-perf-summary/v1 document (json_decref it). */
GOLDEN_API int golden_gate_summarize(const char *dir, const golden_gate_opts *o, json_t **out,
                          golden_error *err);

/* Validate a summary against calculet-perf-summary/v1 and write DIR/performance/summary.json
 * (temp file + rename; an existing one only with force). */
GOLDEN_API int golden_gate_summary_write(const char *dir, const json_t *summary, bool force,
                              golden_error *err);

/* Recompute DIR's summary and compare it with performance/summary.json: every number that does
 * not follow (beyond its printed rounding), every case or field missing on either side, is a
 * finding of rule "summary-follows" naming case and field. *checked is set when raw data was
 * there to check against (false: nothing done, no finding). -1 when inputs cannot be read. */
GOLDEN_API int golden_gate_check(const char *dir, const golden_gate_opts *o, golden_findings *out,
                      bool *checked, golden_error *err);

/* Whether DIR has both performance/raw-requests.jsonl and performance/summary.json: the case in
 * which manifest-verify runs golden_gate_check as its rule "summary-follows". */
GOLDEN_API bool golden_gate_summary_present(const char *dir);

/* Compare a stored summary with a recomputed one (the heart of golden_gate_check). */
GOLDEN_API int golden_gate_compare(const json_t *stored, const json_t *computed, const char *file,
                        golden_findings *out, golden_error *err);

/* Whether printed value `stored` follows from `computed` (a value exp-gate printed, so rounded
 * to 6 decimals or 6 significant digits): within half a unit in the last decimal place `stored`
 * prints with (its shortest round-trip form; at most 5e-5 relative, so a coarse "10.6" cannot
 * stand for 10.564), plus two units of exp-gate's own rounding (a delta carries two). */
GOLDEN_API bool golden_gate_number_follows(double stored, double computed);

/* The decision labels of section 17. */
typedef enum {
    GOLDEN_GATE_REJECT,
    GOLDEN_GATE_EXPERIMENT_ONLY,
    GOLDEN_GATE_INVESTIGATE,
    GOLDEN_GATE_SOAK_24H,
    GOLDEN_GATE_NO_MERGE,
    GOLDEN_GATE_MERGE /* soak_24h and a soak result that passes (decide's soak_result rule) */
} golden_gate_label;
GOLDEN_API const char *golden_gate_label_name(golden_gate_label l);

/* Decide DIR: the stored summary must follow from the raw data (else -1, EINVAL); when there is
 * none it is computed. *out receives the calculet-decision/v1 document, *label the label. */
GOLDEN_API int golden_gate_decide(const char *dir, const golden_gate_opts *o, json_t **out,
                       golden_gate_label *label, golden_error *err);
/* golden_gate_decide that also hands back (*summary, json_decref it) the summary the decision
 * rests on: recomputed with the stored summary's seed, resamples and generator (so a report
 * shows the numbers decided on, never a second computation under other settings). */
GOLDEN_API int golden_gate_decide_with_summary(const char *dir, const golden_gate_opts *o,
                                               json_t **out, json_t **summary,
                                               golden_gate_label *label, golden_error *err);

/* decision.md's text for a decision document (malloc'd, NUL-terminated). */
GOLDEN_API char *golden_gate_decision_markdown(const json_t *decision, golden_error *err);

/* Write DIR/decision.json and DIR/decision.md. An existing decision.md that differs from the
 * text is kept unless force: -1, EEXISTS, err saying the first line that differs. */
GOLDEN_API int golden_gate_decision_write(const char *dir, const json_t *decision, bool force,
                               golden_error *err);

/* The section 19 evidence matrix over experiment folders, sorted in section 19's order. Each
 * folder goes through the same verification as golden_gate_decide and its decision is
 * re-derived (a decision.json found there is never trusted; one that disagrees is named in the
 * row); a folder with status planned is checked and shown as pending. golden_gate_matrix uses
 * the default options. */
GOLDEN_API int golden_gate_matrix(const char *const *dirs, size_t n, json_t **out, golden_error *err);
GOLDEN_API int golden_gate_matrix_opts(const char *const *dirs, size_t n,
                                       const golden_gate_opts *o, json_t **out,
                                       golden_error *err);
/* For decide --html's drift and CDF pictures: per graph-level case of summary and side, the
 * latency of every measured request of dir's raw-requests.jsonl against its run, thinned to at
 * most max_points bins of consecutive runs (0: all), and 101 quantiles of all of them (failed
 * requests +inf, written null). *out: [{case_id, metric, baseline: {drift: [[run, ms]], cdf:
 * [[ms, p]], samples, failed}, candidate: {...}}]. */
GOLDEN_API int golden_gate_series(const char *dir, const json_t *summary, size_t max_points,
                                  json_t **out, golden_error *err);
GOLDEN_API char *golden_gate_matrix_markdown(const json_t *matrix, golden_error *err);

#endif

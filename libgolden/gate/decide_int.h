/* Private to libgolden/gate: the inputs of the section 17 decision, read once and then
 * evaluated rule by rule. */
#ifndef GOLDEN_GATE_DECIDE_INT_H
#define GOLDEN_GATE_DECIDE_INT_H
#include "gate/gate_int.h"
#include "golden/doc.h"

/* Section 8.4: "the related phase at least 3 %" is the default floor under which a phase or
 * the graph counts as not improved (acceptance.phase_improvement_min_pct overrides it). */
#define GATE_PHASE_MIN_PCT 3.0

typedef struct {
    golden_doc *hypothesis, *accuracy;
    const char *experiment_id, *family, *rollback; /* borrowed from the documents */
    double p99_max, target_min, graph_min, phase_min;
    bool keep_experiment;
    bool accuracy_pass;
    size_t accuracy_contradictions; /* numbers of accuracy/result.json that miss their bound */
    char accuracy_first[400];
    json_t *perplexity; /* per dataset, recomputed from the score files (perplexity.c) or NULL */
    long long near_tie_flips;
    size_t reports, reports_failed;
    char first_failed_report[512];
    bool faults_present;
    size_t faults, candidate_faults, candidate_faults_failed, candidate_faults_unretested;
    size_t candidate_faults_correctness; /* nan_output, crc_mismatch: a wrong answer */
    size_t fatal_unretested;             /* fatal faults (either side) not retested or failed */
    /* stability/soak-faults.jsonl, the soak's own fault lines (npu-replay soak --faults) */
    size_t soak_faults, soak_faults_correctness;
    double p99_ttft_max, p99_tpot_max;   /* absolute SLA budgets in ms (NaN: none) */
    json_t *deployment; /* {"baseline": {...}, "candidate": {...}} of the figures found */
    /* the soak result (soak.c): stability/soak.json or golden_gate_opts.soak_path */
    bool soak_present, soak_pass;
    char soak_why[900];  /* why it fails ("" when it passes) */
    json_t *soak;        /* decision.json's "soak" object */
    /* manifest-verify's experiment check (verify.c) */
    bool verified;
    size_t verify_failed;     /* correctness findings (accuracy-agrees) */
    char verify_first[2800];  /* the first, "where: message [rule]" */
} gate_inputs;

/* Run golden_experiment_check on dir: -1 with err naming the first failing non-correctness rule
 * (or to-do); correctness findings are counted into in (not zeroed: call before inputs_read
 * copies them, see golden_gate_decide). hook (or NULL) gets every parsed raw request line of
 * the check's own pass (exp/check_internal.h). */
struct lg_exp_raw_hook_s;
int gate_verify(const char *dir, int threads, gate_inputs *in, struct lg_exp_raw_hook_s *hook,
                golden_error *err);

/* golden_gate_decide; write_summary false: a folder without summary.json is left as it is
 * (the matrix writes nothing into the folders it reads). */
int gate_decide(const char *dir, const golden_gate_opts *o, bool write_summary, json_t **out,
                json_t **summary, golden_gate_label *label, golden_error *err);
/* The experiment check alone, for a folder still planned: errors fail, to-dos are expected. */
int gate_verify_planned(const char *dir, int threads, golden_error *err);

int gate_inputs_read(const char *dir, gate_inputs *in, golden_error *err);
/* The soak result at given (NULL: DIR/stability/soak.json when it exists) into in (after
 * gate_inputs_read): -1 with err for a malformed, foreign or mismatched one. */
int gate_soak_read(const char *dir, const char *given, gate_inputs *in, golden_error *err);
/* accuracy/result.json's perplexity against the score files it names and the hypothesis'
 * bound: misses counted as accuracy contradictions; -1 only when a file cannot be read. */
int gate_perplexity(const char *dir, gate_inputs *in, golden_error *err);
void gate_inputs_free(gate_inputs *in);

#endif

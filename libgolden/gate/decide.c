/* The section 17 rules in order (contracts.md section 9): correctness, P99 SLA, bottleneck
 * migration, graph gain with steady power and temperature, else no merge. First that fires. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <fcntl.h>

#include "gate/decide_int.h"
#include "exp/check_internal.h"
#include "golden/hash.h"
#include "util/pool.h"
#include "util/sha256_fd.h"

const char *golden_gate_label_name(golden_gate_label l)
{
    static const char *const n[] = {"reject", "experiment_only", "investigate", "soak_24h",
                                    "no_merge", "merge"};
    return (unsigned)l < 6 ? n[l] : "?";
}

typedef struct {
    json_t *doc, *rules, *uncertain, *cases;
    const json_t *summary;
    const gate_inputs *in;
    bool fired;
    bool chips_differ; /* the trace covers other chips on the two sides (no per-op attribution) */
    bool families_differ; /* a family besides the target's on one side only (issue 26) */
    golden_gate_label label;
    int oom;
} ev;

static void note(ev *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(ev *e, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    e->oom |= json_array_append_new(e->uncertain, json_string(buf));
}

/* Record one rule: whether it fired, the reason in words, its inputs. */
static void rule(ev *e, const char *name, bool fires, golden_gate_label label, json_t *inputs,
                 const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void rule(ev *e, const char *name, bool fires, golden_gate_label label, json_t *inputs,
                 const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    bool now = fires && !e->fired;
    json_t *r = json_pack("{s:s,s:b,s:b,s:s,s:s,s:o}", "rule", name, "holds", fires, "fired", now,
                          "label", golden_gate_label_name(label), "reason", buf, "inputs",
                          inputs ? inputs : json_object());
    e->oom |= !r || json_array_append_new(e->rules, r);
    if (now) {
        e->fired = true;
        e->label = label;
        e->oom |= json_object_set_new(e->doc, "rule", json_string(name));
    }
}

static double num(const json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static double side_num(const json_t *c, const char *side, const char *k)
{
    return num(json_object_get(c, side), k);
}

/* A case entry's concurrency level (absent: 1, a summary from before issue 33). */
static long long case_level(const json_t *c)
{
    json_t *v = json_object_get(c, "concurrency");
    return json_is_integer(v) ? json_integer_value(v) : 1;
}

/* How reasons name a case entry: the id, with its level when it is not 1. */
static const char *case_name(const json_t *c, char *buf, size_t n)
{
    gate_case_label(buf, n, json_string_value(json_object_get(c, "case_id")), case_level(c));
    return buf;
}

/* A stored summary without graph_level: TTFT, or TPOT for cases that have it. */
static bool is_graph_level(const json_t *c, const json_t *cases)
{
    json_t *g = json_object_get(c, "graph_level");
    if (g)
        return json_is_true(g);
    const char *m = json_string_value(json_object_get(c, "metric"));
    const char *id = json_string_value(json_object_get(c, "case_id"));
    if (!m || !id)
        return false;
    if (!strcmp(m, "tpot_ms"))
        return true;
    if (strcmp(m, "ttft_ms"))
        return false;
    size_t i;
    json_t *o;
    json_array_foreach((json_t *)cases, i, o)
        if (!strcmp(json_string_value(json_object_get(o, "metric")) ?: "", "tpot_ms") &&
            !strcmp(json_string_value(json_object_get(o, "case_id")) ?: "", id) &&
            case_level(o) == case_level(c))
            return false;
    return true;
}

static bool is_insufficient(const json_t *c)
{
    if (json_is_true(json_object_get(c, "insufficient")))
        return true;
    /* A summary written by hand may not say so: section 8's floor, on its own numbers. */
    return side_num(c, "baseline", "n") < GOLDEN_GATE_MIN_MEASURED ||
           side_num(c, "candidate", "n") < GOLDEN_GATE_MIN_MEASURED ||
           side_num(c, "baseline", "warmups") < GOLDEN_GATE_MIN_WARMUPS ||
           side_num(c, "candidate", "warmups") < GOLDEN_GATE_MIN_WARMUPS;
}

static double p99_regression(const json_t *c)
{
    double b = side_num(c, "baseline", "p99"), k = side_num(c, "candidate", "p99");
    return b != 0 ? 100.0 * (k - b) / b : NAN;
}

static double improvement(const json_t *c)
{
    double b = side_num(c, "baseline", "median"), k = side_num(c, "candidate", "median");
    return b != 0 ? 100.0 * (b - k) / b : NAN;
}

static void rule_correctness(ev *e)
{
    const gate_inputs *in = e->in;
    bool fails = !in->accuracy_pass || in->reports_failed > 0 || in->candidate_faults_failed > 0 ||
                 in->verify_failed > 0 || in->accuracy_contradictions > 0 ||
                 in->candidate_faults_correctness > 0 || in->soak_faults_correctness > 0;
    json_t *inputs = json_pack("{s:s,s:I,s:I,s:I,s:I}", "accuracy_verdict",
                               in->accuracy_pass ? "pass" : "fail", "golden_diff_reports",
                               (json_int_t)in->reports, "golden_diff_reports_failed",
                               (json_int_t)in->reports_failed, "candidate_faults",
                               (json_int_t)in->candidate_faults, "candidate_faults_unrecovered",
                               (json_int_t)in->candidate_faults_failed);
    if (inputs)
        e->oom |= json_object_set_new(inputs, "manifest_verify_correctness_findings",
                                      json_integer((json_int_t)in->verify_failed)) ||
                  json_object_set_new(inputs, "accuracy_numbers_failing",
                                      json_integer((json_int_t)in->accuracy_contradictions)) ||
                  json_object_set_new(inputs, "candidate_faults_correctness",
                                      json_integer((json_int_t)in->candidate_faults_correctness)) ||
                  json_object_set_new(inputs, "soak_faults_correctness",
                                      json_integer((json_int_t)in->soak_faults_correctness)) ||
                  (in->perplexity && json_object_set(inputs, "perplexity", in->perplexity));
    if (!in->accuracy_pass)
        rule(e, "correctness", true, GOLDEN_GATE_REJECT, inputs,
             "accuracy/result.json says fail");
    else if (in->candidate_faults_correctness)
        rule(e, "correctness", true, GOLDEN_GATE_REJECT, inputs,
             "%zu candidate fault(s) of a correctness class (nan_output, crc_mismatch) in "
             "stability/faults.jsonl: a wrong answer, whatever the recovery",
             in->candidate_faults_correctness);
    else if (in->soak_faults_correctness)
        rule(e, "correctness", true, GOLDEN_GATE_REJECT, inputs,
             "%zu fault(s) of a correctness class (nan_output, crc_mismatch) in "
             "stability/soak-faults.jsonl (the 24 h soak): a wrong answer",
             in->soak_faults_correctness);
    else if (in->accuracy_contradictions)
        rule(e, "correctness", true, GOLDEN_GATE_REJECT, inputs,
             "accuracy/result.json says pass but %zu of its numbers do not (first: %s)",
             in->accuracy_contradictions, in->accuracy_first);
    else if (in->verify_failed)
        rule(e, "correctness", true, GOLDEN_GATE_REJECT, inputs,
             "manifest-verify finds %zu correctness failure(s); first: %s", in->verify_failed,
             in->verify_first);
    else if (in->reports_failed)
        rule(e, "correctness", true, GOLDEN_GATE_REJECT, inputs,
             "%zu of %zu golden-diff reports fail (first: %s)", in->reports_failed, in->reports,
             in->first_failed_report);
    else if (in->candidate_faults_failed)
        rule(e, "correctness", true, GOLDEN_GATE_REJECT, inputs,
             "%zu candidate fault(s) not recovered or failing their retest after reset",
             in->candidate_faults_failed);
    else
        rule(e, "correctness", fails, GOLDEN_GATE_REJECT, inputs,
             "pass: accuracy verdict pass, %zu golden-diff report(s) pass, %zu candidate "
             "fault(s), each recovered and retested", in->reports, in->candidate_faults);
    if (in->candidate_faults_unretested)
        note(e, "%zu candidate fault(s) recovered without a retest after reset on record",
             in->candidate_faults_unretested);
    if (!in->faults_present)
        note(e, "no stability/faults.jsonl: faults unknown");
    if (in->near_tie_flips > 0)
        note(e, "%lld near-tie top-1 flip(s) in the logits (accuracy/result.json)",
             in->near_tie_flips);
}

/* A per-side count of both sides (absent or negative: 0). */
static long long count_of(const json_t *c, const char *k)
{
    double b = side_num(c, "baseline", k), d = side_num(c, "candidate", k);
    return (long long)(b > 0 ? b : 0) + (long long)(d > 0 ? d : 0);
}

/* The summary's throughput row of (case, level, side), or NULL. */
static const json_t *throughput_of(const ev *e, const json_t *c, const char *side)
{
    const char *id = json_string_value(json_object_get(c, "case_id")) ?: "";
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(e->summary, "throughput"), i, r)
        if (!strcmp(json_string_value(json_object_get(r, "case_id")) ?: "", id) &&
            !strcmp(json_string_value(json_object_get(r, "side")) ?: "", side) &&
            case_level(r) == case_level(c))
            return r;
    return NULL;
}

/* Both sides' requests/s and output tokens/s beside the case's latency (issue 33): reported,
 * no rule reads them. -1 out of memory. */
static int case_throughput(const ev *e, const json_t *c, json_t *o)
{
    static const char *const rate[2] = {"requests_per_s", "output_tokens_per_s"};
    const json_t *b = throughput_of(e, c, "baseline"), *k = throughput_of(e, c, "candidate");
    for (int r = 0; r < 2; r++) {
        char kb[64], kc[64], kp[64];
        snprintf(kb, sizeof kb, "baseline_%s", rate[r]);
        snprintf(kc, sizeof kc, "candidate_%s", rate[r]);
        snprintf(kp, sizeof kp, "%s_change_pct", rate[r]);
        double vb = num(b, rate[r]), vc = num(k, rate[r]);
        if (gate_set_real(o, kb, vb) || gate_set_real(o, kc, vc) ||
            gate_set_real(o, kp, vb != 0 ? 100.0 * (vc - vb) / vb : NAN))
            return -1;
    }
    return 0;
}

/* One line per case for the JSON and the text. */
static void add_case(ev *e, const json_t *c, bool graph, double impr, double p99r, bool ins)
{
    json_t *o = json_pack("{s:O,s:I,s:O,s:b,s:b}", "case_id", json_object_get(c, "case_id"),
                          "concurrency", (json_int_t)case_level(c), "metric",
                          json_object_get(c, "metric"), "graph_level", graph, "insufficient",
                          ins);
    if (!o) {
        e->oom = 1;
        return;
    }
    e->oom |= gate_set_real(o, "baseline_median", side_num(c, "baseline", "median")) ||
              gate_set_real(o, "candidate_median", side_num(c, "candidate", "median")) ||
              gate_set_real(o, "delta_abs", side_num(c, "candidate", "median") -
                                                side_num(c, "baseline", "median")) ||
              gate_set_real(o, "delta_pct", -impr) ||
              gate_set_real(o, "baseline_p99", side_num(c, "baseline", "p99")) ||
              gate_set_real(o, "candidate_p99", side_num(c, "candidate", "p99")) ||
              gate_set_real(o, "p99_regression_pct", p99r) ||
              gate_set_int(o, "unsteady", count_of(c, "unsteady")) ||
              gate_set_int(o, "failed", count_of(c, "failed")) ||
              (json_object_get(c, "delta_ci95") &&
               json_object_set(o, "delta_ci95", json_object_get(c, "delta_ci95"))) ||
              case_throughput(e, c, o) || json_array_append_new(e->cases, o);
}

/* Per-case figures the rules need. */
typedef struct {
    size_t graph_cases, insufficient, p99_fail, p99_fail_insufficient;
    double worst_p99, worst_p99_graph_impr, min_graph_impr;
    double worst_p99_b, worst_p99_c;           /* its P99s (ms) */
    double min_graph_b, min_graph_c;           /* the worst graph case's medians (ms) */
    size_t ins_unsteady;       /* insufficient graph cases that unsteady samples made so */
    const char *ins_unsteady_case;
    long long ins_unsteady_n, ins_unsteady_u;  /* that case's steady n and unsteady samples */
    char ins_names[600];                       /* the insufficient graph cases, by name */
    size_t sla_abs_fail;                       /* cases over an absolute P99 budget */
    size_t not_significant;                    /* graph cases whose difference CI holds 0 */
    size_t side_mismatch;                      /* graph cases whose sides' clock/temp differ */
    char mismatch[400];
    const char *ns_case;
    double ns_lo, ns_hi;
    double sla_abs_p99, sla_abs_budget;
    const char *worst_p99_case, *min_graph_case, *sla_abs_case, *sla_abs_metric;
    bool all_graph_pass;
    /* the names above point here: a case with its level (issue 33) */
    char lb_p99[300], lb_graph[300], lb_abs[300], lb_ns[300], lb_ins[300];
} case_facts;

static const char *keep_name(char *dst, size_t n, const char *name)
{
    snprintf(dst, n, "%s", name);
    return dst;
}

/* Append a case's name to a "; "-separated list; what does not fit ends it with "...". */
static void name_case(char *buf, size_t n, const char *id)
{
    size_t len = strlen(buf);
    if (len >= 3 && !strcmp(buf + len - 3, "..."))
        return;
    int w = snprintf(buf + len, n - len, "%s%s", len ? "; " : "", id ? id : "?");
    if (w < 0 || (size_t)w >= n - len)
        snprintf(buf + (len < n - 4 ? len : n - 4), n - (len < n - 4 ? len : n - 4), "...");
}

static void gather_cases(ev *e, case_facts *f)
{
    memset(f, 0, sizeof *f);
    f->worst_p99 = -INFINITY;
    f->min_graph_impr = INFINITY;
    f->all_graph_pass = true;
    const json_t *cases = json_object_get(e->summary, "cases");
    size_t i;
    json_t *c;
    json_array_foreach((json_t *)cases, i, c) {
        const char *m = json_string_value(json_object_get(c, "metric")) ?: "";
        bool sla = !strcmp(m, "ttft_ms") || !strcmp(m, "tpot_ms");
        bool graph = is_graph_level(c, cases), ins = is_insufficient(c);
        double p99r = p99_regression(c), impr = improvement(c);
        /* a side without one steady run has no P99 at all: not measured, not a regression
         * (null from failed requests is +inf and is one) */
        bool unmeasured = side_num(c, "baseline", "n") == 0 || side_num(c, "candidate", "n") == 0;
        char name[300];
        case_name(c, name, sizeof name);
        if (sla || graph)
            add_case(e, c, graph, impr, p99r, ins);
        if (sla && !unmeasured && !(p99r <= e->in->p99_max)) {
            if (ins)
                f->p99_fail_insufficient++;
            else
                f->p99_fail++;
            if (!ins && (isnan(p99r) || p99r > f->worst_p99)) {
                f->worst_p99 = isnan(p99r) ? INFINITY : p99r;
                f->worst_p99_case = keep_name(f->lb_p99, sizeof f->lb_p99, name);
                f->worst_p99_b = side_num(c, "baseline", "p99");
                f->worst_p99_c = side_num(c, "candidate", "p99");
            }
        }
        /* the absolute budget: a null P99 is +inf (failed requests), never within it */
        double budget = !strcmp(m, "ttft_ms") ? e->in->p99_ttft_max
                        : !strcmp(m, "tpot_ms") ? e->in->p99_tpot_max : NAN;
        double cp99 = side_num(c, "candidate", "p99");
        if (sla && !unmeasured && !isnan(budget) && !(cp99 <= budget)) {
            if (ins)
                f->p99_fail_insufficient++;
            else if (f->sla_abs_fail++ == 0 || !(cp99 <= f->sla_abs_p99)) {
                f->sla_abs_p99 = isnan(cp99) ? INFINITY : cp99;
                f->sla_abs_budget = budget;
                f->sla_abs_case = keep_name(f->lb_abs, sizeof f->lb_abs, name);
                f->sla_abs_metric = m;
            }
        }
        if (!graph)
            continue;
        f->graph_cases++;
        if (ins) {
            f->insufficient++;
            name_case(f->ins_names, sizeof f->ins_names, name);
            /* enough runs, too few steady ones: say so (issue 26), not only "insufficient" */
            for (int k = 0; k < 2; k++) {
                const char *sd = k ? "candidate" : "baseline";
                double n = side_num(c, sd, "n"), u = side_num(c, sd, "unsteady");
                if (n < GOLDEN_GATE_MIN_MEASURED && u > 0 && n + u >= GOLDEN_GATE_MIN_MEASURED &&
                    side_num(c, sd, "warmups") >= GOLDEN_GATE_MIN_WARMUPS) {
                    if (f->ins_unsteady++ == 0) {
                        f->ins_unsteady_case = keep_name(f->lb_ins, sizeof f->lb_ins, name);
                        f->ins_unsteady_n = (long long)n;
                        f->ins_unsteady_u = (long long)u;
                    }
                    break;
                }
            }
            f->all_graph_pass = false;
            continue;
        }
        if (!(impr >= f->min_graph_impr)) {
            f->min_graph_impr = isnan(impr) ? -INFINITY : impr;
            f->min_graph_case = keep_name(f->lb_graph, sizeof f->lb_graph, name);
            f->min_graph_b = side_num(c, "baseline", "median");
            f->min_graph_c = side_num(c, "candidate", "median");
        }
        if (!(impr >= e->in->graph_min))
            f->all_graph_pass = false;
        /* both sides at the same clock and within the temperature band of each other */
        const json_t *band = json_object_get(e->summary, "steady_band");
        double cb = side_num(c, "baseline", "clock_ref_mhz");
        double cc = side_num(c, "candidate", "clock_ref_mhz");
        double tb = side_num(c, "baseline", "temperature_ref_c");
        double tc = side_num(c, "candidate", "temperature_ref_c");
        double cpct = num(band, "clock_pct"), tband = num(band, "temperature_c");
        bool clock_off = isfinite(cb) && isfinite(cc) && isfinite(cpct) &&
                         fabs(cc - cb) > fabs(cb) * cpct / 100.0;
        bool temp_off = isfinite(tb) && isfinite(tc) && isfinite(tband) && fabs(tc - tb) > tband;
        if ((clock_off || temp_off) && f->side_mismatch++ == 0)
            snprintf(f->mismatch, sizeof f->mismatch,
                     clock_off ? "; the sides ran at different clocks in %.200s: %.3f -> %.3f MHz "
                                 "(%+.3f MHz, %+.2f %%; band %g %%)"
                               : "; the sides ran at different temperatures in %.200s: %.3f -> "
                                 "%.3f C (%+.3f C, %+.2f %%; band %g C)",
                     name, clock_off ? cb : tb, clock_off ? cc : tc,
                     clock_off ? cc - cb : tc - tb,
                     clock_off ? 100.0 * (cc - cb) / cb : 100.0 * (tc - tb) / tb,
                     clock_off ? cpct : tband);
        /* significance: the 95 % interval of candidate - baseline median must lie below 0 */
        const json_t *dci = json_object_get(c, "delta_ci95");
        double hi = json_is_number(json_array_get(dci, 1))
                        ? json_number_value(json_array_get(dci, 1)) : NAN;
        if (!(hi < 0)) {
            f->all_graph_pass = false;
            if (f->not_significant++ == 0) {
                f->ns_case = keep_name(f->lb_ns, sizeof f->lb_ns, name);
                f->ns_lo = json_is_number(json_array_get(dci, 0))
                               ? json_number_value(json_array_get(dci, 0)) : NAN;
                f->ns_hi = hi;
            }
        }
    }
    long long failed = 0;
    json_array_foreach((json_t *)cases, i, c)
        if (is_graph_level(c, cases))
            failed += count_of(c, "failed");
    if (failed)
        note(e, "%lld measured request(s) of graph-level cases without their latency (timeout "
                "or error): counted as the worst latency (+inf) in their case, not dropped",
             failed);
    const json_t *lone = json_object_get(e->summary, "one_sided");
    if (json_array_size(lone)) {
        char names[600] = "";
        json_t *l;
        char lname[300];
        json_array_foreach((json_t *)lone, i, l)
            name_case(names, sizeof names, case_name(l, lname, sizeof lname));
        note(e, "%zu case(s) measured on one side only: not compared (%s)",
             json_array_size(lone), names);
    }
    if (f->insufficient)
        note(e, "%zu case(s) insufficient (fewer than %d steady measured runs or %d warm-ups "
                "on a side): reported, nothing rests on them (%s)", f->insufficient,
             GOLDEN_GATE_MIN_MEASURED, GOLDEN_GATE_MIN_WARMUPS, f->ins_names);
    if (f->p99_fail_insufficient)
        note(e, "%zu insufficient case(s) show a P99 regression above %g %%: not decided on",
             f->p99_fail_insufficient, e->in->p99_max);
}

static void rule_p99(ev *e, const case_facts *f)
{
    golden_gate_label l = e->in->keep_experiment ? GOLDEN_GATE_EXPERIMENT_ONLY : GOLDEN_GATE_REJECT;
    json_t *in = json_pack("{s:f,s:I,s:I}", "p99_regression_max_pct", e->in->p99_max,
                           "cases_failing", (json_int_t)f->p99_fail, "cases_over_budget",
                           (json_int_t)f->sla_abs_fail);
    if (in)
        e->oom |= gate_set_real(in, "p99_ttft_ms_max", e->in->p99_ttft_max) ||
                  gate_set_real(in, "p99_tpot_ms_max", e->in->p99_tpot_max);
    const char *keep = e->in->keep_experiment ? "; the hypothesis asks to keep it as an experiment"
                                              : "";
    if (f->p99_fail)
        rule(e, "p99_sla", true, l, in,
             "P99 regression in %zu case(s); worst %s: %.3f -> %.3f ms (%+.3f ms, %+.3f %%; "
             "limit %g %%)%s", f->p99_fail, f->worst_p99_case ? f->worst_p99_case : "?",
             f->worst_p99_b, f->worst_p99_c, f->worst_p99_c - f->worst_p99_b, f->worst_p99,
             e->in->p99_max, keep);
    else if (f->sla_abs_fail)
        rule(e, "p99_sla", true, l, in,
             "%zu case(s) over the absolute P99 budget; worst %s %s: P99 %.3f ms, budget %g ms "
             "(%+.3f ms, %+.2f %% over)%s", f->sla_abs_fail,
             f->sla_abs_case ? f->sla_abs_case : "?", f->sla_abs_metric ? f->sla_abs_metric : "?",
             f->sla_abs_p99, f->sla_abs_budget, f->sla_abs_p99 - f->sla_abs_budget,
             100.0 * (f->sla_abs_p99 - f->sla_abs_budget) / f->sla_abs_budget, keep);
    else
        rule(e, "p99_sla", false, l, in, "no sufficient case regresses its P99 by more than %g %%%s",
             e->in->p99_max,
             isnan(e->in->p99_ttft_max) && isnan(e->in->p99_tpot_max)
                 ? "" : " or exceeds the absolute P99 budget");
}

/* Whether the trace has a row of the target family on side (a family absent on one side is not
 * measured there: it is never read as 0 cycles, whatever the trace format). */
static bool trace_has_family(const ev *e, const char *side)
{
    const json_t *rows = json_object_get(json_object_get(e->summary, "trace"), "per_chip");
    size_t i;
    json_t *r;
    if (!e->in->family)
        return false;
    json_array_foreach((json_t *)rows, i, r) {
        if (!strcmp(json_string_value(json_object_get(r, "side")) ?: "", side) &&
            !strcmp(json_string_value(json_object_get(r, "family")) ?: "", e->in->family))
            return true;
    }
    return false;
}

/* The chips side's trace rows cover, as a sorted list "0, 1" into buf; returns their count. */
static size_t trace_chips(const ev *e, const char *side, char *buf, size_t n)
{
    const json_t *rows = json_object_get(json_object_get(e->summary, "trace"), "per_chip");
    long long chips[64];
    size_t k = 0, i;
    json_t *r;
    json_array_foreach((json_t *)rows, i, r) {
        if (strcmp(json_string_value(json_object_get(r, "side")) ?: "", side))
            continue;
        long long c = json_integer_value(json_object_get(r, "chip"));
        size_t j = 0;
        while (j < k && chips[j] < c)
            j++;
        if ((j < k && chips[j] == c) || k == sizeof chips / sizeof chips[0])
            continue;
        memmove(chips + j + 1, chips + j, (k - j) * sizeof chips[0]);
        chips[j] = c;
        k++;
    }
    size_t off = 0;
    buf[0] = 0;
    for (i = 0; i < k && off < n; i++)
        off += (size_t)snprintf(buf + off, n - off, "%s%lld", i ? ", " : "", chips[i]);
    return k;
}

/* The target family's cycles on both sides, from the summary's trace (NaN when not sided). */
static double target_improvement(ev *e, json_t **target)
{
    *target = NULL;
    const json_t *tr = json_object_get(json_object_get(e->summary, "trace"), "target_share");
    const json_t *b = NULL, *c = NULL;
    size_t i;
    json_t *s;
    json_array_foreach((json_t *)tr, i, s) {
        const char *side = json_string_value(json_object_get(s, "side")) ?: "";
        if (!strcmp(side, "baseline"))
            b = s;
        else if (!strcmp(side, "candidate"))
            c = s;
    }
    if (e->chips_differ || !b || !c || num(b, "cycles") <= 0 ||
        !trace_has_family(e, "baseline") || !trace_has_family(e, "candidate"))
        return NAN;
    double bc = num(b, "cycles"), cc = num(c, "cycles");
    *target = json_pack("{s:s,s:f,s:f,s:f,s:f}", "family", e->in->family ? e->in->family : "",
                        "baseline_cycles", bc, "candidate_cycles", cc, "baseline_share",
                        num(b, "share"), "candidate_share", num(c, "share"));
    if (*target)
        e->oom |= gate_set_real(*target, "delta_abs", cc - bc) ||
                  gate_set_real(*target, "delta_pct", 100.0 * (cc - bc) / bc);
    return 100.0 * (bc - cc) / bc;
}

static bool whole_graph_only(const ev *e)
{
    const char *a = json_string_value(json_object_get(e->summary, "attribution"));
    return e->chips_differ || e->families_differ || !a || strcmp(a, "per_op") != 0;
}

static void rule_bottleneck(ev *e, const case_facts *f, double timpr)
{
    json_t *in = json_pack("{s:f,s:f}", "target_metric_improvement_min_pct", e->in->target_min,
                           "phase_improvement_min_pct", e->in->phase_min);
    if (whole_graph_only(e) || isnan(timpr)) {
        rule(e, "bottleneck_moved", false, GOLDEN_GATE_INVESTIGATE, in,
             "not evaluated: %s", whole_graph_only(e)
                 ? "whole-graph timing only, nothing is attributed to a kernel"
                 : "the device trace does not give the target family's cycles on both sides");
        return;
    }
    e->oom |= gate_set_real(in, "target_improvement_pct", timpr) ||
              gate_set_real(in, "worst_graph_improvement_pct",
                            f->graph_cases > f->insufficient ? f->min_graph_impr : NAN);
    bool target_ok = timpr >= e->in->target_min;
    bool graph_flat = f->graph_cases > f->insufficient && !(f->min_graph_impr >= e->in->phase_min);
    rule(e, "bottleneck_moved", target_ok && graph_flat, GOLDEN_GATE_INVESTIGATE, in,
         "target family %s %.3f %% fewer cycles (needs %g %%); worst graph-level case %s "
         "improves %.3f %% (phase floor %g %%)", e->in->family ? e->in->family : "?", timpr,
         e->in->target_min, f->min_graph_case ? f->min_graph_case : "-",
         f->graph_cases > f->insufficient ? f->min_graph_impr : NAN, e->in->phase_min);
}

static size_t total_unsteady(const ev *e)
{
    json_t *u = json_object_get(e->summary, "unsteady_samples");
    return json_is_integer(u) ? (size_t)json_integer_value(u) : 0;
}

/* Section 8.4's extra pass conditions for GEMM experiments. */
static bool family_conditions(ev *e, double timpr, const case_facts *f, char *why, size_t n)
{
    why[0] = 0;
    if (!e->in->family || strcmp(e->in->family, "fused_matmul_add"))
        return true;
    if (isnan(timpr) || timpr < 8.0) {
        snprintf(why, n, "; section 8.4: the target GEMM cycles must improve by 8 %% (%s)",
                 isnan(timpr) ? "not measured on both sides" : "less");
        return false;
    }
    if (!(f->min_graph_impr >= 3.0)) {
        snprintf(why, n, "; section 8.4: the related phase must improve by 3 %%");
        return false;
    }
    return true;
}

/* Why a graph gain, however large, is no soak: an incomplete comparison or an unsound side. */
static const char *soak_blocked(const ev *e, const case_facts *f, char *buf, size_t n)
{
    const json_t *lone = json_object_get(e->summary, "one_sided");
    if (json_array_size(lone)) {
        const json_t *l0 = json_array_get(lone, 0);
        char lname[300];
        snprintf(buf, n, "; the comparison is incomplete: %zu case(s) measured on one side only "
                 "(first: %.200s on the %s side)", json_array_size(lone),
                 case_name(l0, lname, sizeof lname),
                 json_string_value(json_object_get(l0, "side")) ?: "?");
        return buf;
    }
    if (f->side_mismatch) {
        snprintf(buf, n, "%s", f->mismatch);
        return buf;
    }
    if (f->not_significant) {
        snprintf(buf, n, "; not significant: the 95 %% bootstrap interval of the difference of "
                 "medians of %.200s, [%.3f, %.3f] ms, does not lie below zero (%zu case(s))",
                 f->ns_case ? f->ns_case : "?", f->ns_lo, f->ns_hi, f->not_significant);
        return buf;
    }
    if (e->in->fatal_unretested) {
        snprintf(buf, n, "; %zu fatal fault(s) whose retest after reset did not run or failed",
                 e->in->fatal_unretested);
        return buf;
    }
    return NULL;
}

static void rule_soak(ev *e, const case_facts *f, double timpr)
{
    size_t unsteady = total_unsteady(e);
    char fam[256], blockbuf[400];
    bool fam_ok = family_conditions(e, timpr, f, fam, sizeof fam);
    const char *blocked = soak_blocked(e, f, blockbuf, sizeof blockbuf);
    bool sufficient = f->graph_cases > 0 && f->insufficient == 0;
    bool holds = sufficient && f->all_graph_pass && unsteady == 0 && fam_ok && !blocked;
    json_t *in = json_pack("{s:f,s:I,s:I,s:I,s:I,s:I}", "graph_improvement_min_pct",
                           e->in->graph_min, "graph_cases", (json_int_t)f->graph_cases,
                           "insufficient_cases", (json_int_t)f->insufficient, "unsteady_samples",
                           (json_int_t)unsteady, "one_sided_cases",
                           (json_int_t)json_array_size(json_object_get(e->summary, "one_sided")),
                           "fatal_faults_unretested", (json_int_t)e->in->fatal_unretested);
    if (in)
        e->oom |= gate_set_real(in, "worst_graph_improvement_pct",
                                f->graph_cases > f->insufficient ? f->min_graph_impr : NAN);
    const char *subject = whole_graph_only(e) ? "the whole-graph candidate" : "the graph";
    char why[400] = "";
    if (f->ins_unsteady)
        snprintf(why, sizeof why, " (not steady: %zu of them ran enough runs but unsteady samples "
                 "leave fewer than %d steady ones; first: %.120s, %lld steady, %lld not steady)",
                 f->ins_unsteady, GOLDEN_GATE_MIN_MEASURED,
                 f->ins_unsteady_case ? f->ins_unsteady_case : "?", f->ins_unsteady_n,
                 f->ins_unsteady_u);
    if (!sufficient)
        rule(e, "graph_gain", false, GOLDEN_GATE_SOAK_24H, in,
             "not met: %s%s%s", f->graph_cases ? "insufficient cases cannot lead to a soak"
                                             : "no graph-level metric measured",
             why, blocked ? blocked : "");
    else
        rule(e, "graph_gain", holds, GOLDEN_GATE_SOAK_24H, in,
             "%s: worst case %s improves %.3f %% (%.3f -> %.3f ms, %+.3f ms; needs %g %%), "
             "%zu unsteady sample(s)%s%s%s",
             holds ? "met" : "not met", f->min_graph_case ? f->min_graph_case : "-",
             f->min_graph_impr, f->min_graph_b, f->min_graph_c, f->min_graph_c - f->min_graph_b,
             e->in->graph_min, unsteady, unsteady ? " (power/temperature not steady)" : "", fam,
             blocked ? blocked : "");
    if (holds && whole_graph_only(e))
        note(e, "whole-graph timing only: %s is faster; no gain is attributed to a kernel",
             subject);
}

/* After the 24 h soak (section 13.2): a decision that is soak_24h and a soak result that passes
 * on its own numbers (soak.c) is a merge; one that fails is no_merge, saying why. A soak result
 * never overrides an earlier rule. Recorded only when there is a soak result. */
static void rule_soak_result(ev *e)
{
    const gate_inputs *in = e->in;
    if (!in->soak_present && in->soak_faults)
        note(e, "stability/soak-faults.jsonl has %zu fault line(s) but there is no soak result: "
                "no merge rests on it", in->soak_faults);
    if (!in->soak_present)
        return;
    bool applies = e->fired && e->label == GOLDEN_GATE_SOAK_24H;
    json_t *s = in->soak;
    char buf[1400];
    const char *w = json_string_value(json_object_get(s, "waiver"));
    if (!applies)
        snprintf(buf, sizeof buf, "not applied: the decision is %s, not soak_24h (a soak result "
                 "never overrides an earlier rule)", golden_gate_label_name(e->label));
    else if (in->soak_pass && in->soak_faults)
        snprintf(buf, sizeof buf, "the soak's fault log stability/soak-faults.jsonl has %zu "
                 "fault line(s): no merge on a soak that faulted", in->soak_faults);
    else if (in->soak_pass)
        snprintf(buf, sizeof buf, "the soak passes: %.1f s (%.2f h; needs %.1f s%s%.300s%s), "
                 "%lld request(s) over %lld case(s), 0 mismatches, %lld fault(s) each retested "
                 "and passed, %s", num(s, "duration_s"),
                 num(s, "duration_s") / 3600, num(s, "required_s"), w ? ", waiver: " : "",
                 w ? w : "", w ? "" : ", section 13.2", (long long)num(s, "requests"),
                 (long long)num(s, "cases"), (long long)num(s, "faults"),
                 num(s, "hash_cases") > 0 ? "every case's hashes agree across chips and hosts"
                                          : "no per-chip or per-host hashes given");
    else
        snprintf(buf, sizeof buf, "the soak fails: %s", in->soak_why);
    bool pass = in->soak_pass && in->soak_faults == 0;
    golden_gate_label l = pass ? GOLDEN_GATE_MERGE : GOLDEN_GATE_NO_MERGE;
    json_t *r = json_pack("{s:s,s:b,s:b,s:s,s:s,s:O}", "rule", "soak_result", "holds",
                          applies && pass, "fired", applies, "label",
                          golden_gate_label_name(l), "reason", buf, "inputs", s);
    e->oom |= !r || json_array_append_new(e->rules, r) || json_object_set(e->doc, "soak", s);
    if (applies && pass && !(num(s, "hash_cases") > 0))
        note(e, "the soak result carries no per-chip or per-host hashes: agreement across chips "
                "and hosts is not shown");
    if (applies) {
        e->label = l;
        e->oom |= json_object_set_new(e->doc, "rule", json_string("soak_result"));
    } else {
        note(e, "a soak result is there (%s) but the decision is %s: not used",
             json_string_value(json_object_get(s, "path")), golden_gate_label_name(e->label));
    }
}

static int decision_head(ev *e, const char *source)
{
    const gate_inputs *in = e->in;
    return json_object_set_new(e->doc, "schema", json_string("calculet-decision/v1")) ||
           json_object_set_new(e->doc, "experiment_id", json_string(in->experiment_id)) ||
           json_object_set_new(e->doc, "operator_family",
                               in->family ? json_string(in->family) : json_null()) ||
           json_object_set_new(e->doc, "decision", json_string("no_merge")) ||
           json_object_set_new(e->doc, "rule", json_string("otherwise")) ||
           json_object_set_new(e->doc, "attribution",
                               json_string(whole_graph_only(e) ? "whole_graph_only" : "per_op")) ||
           json_object_set_new(e->doc, "summary_source", json_string(source)) ||
           json_object_set_new(e->doc, "thresholds",
                               json_pack("{s:f,s:f,s:f,s:f}", "p99_regression_max_pct",
                                         in->p99_max, "target_metric_improvement_min_pct",
                                         in->target_min, "graph_improvement_min_pct",
                                         in->graph_min, "phase_improvement_min_pct",
                                         in->phase_min)) ||
           json_object_set_new(e->doc, "rules", e->rules = json_array()) ||
           json_object_set_new(e->doc, "cases", e->cases = json_array()) ||
           json_object_set_new(e->doc, "uncertain", e->uncertain = json_array()) || !e->rules ||
           !e->cases || !e->uncertain;
}

/* Whether side's trace rows carry family. */
static bool side_has_family(const json_t *rows, const char *side, const char *family)
{
    size_t i;
    json_t *r;
    json_array_foreach((json_t *)rows, i, r)
        if (!strcmp(json_string_value(json_object_get(r, "side")) ?: "", side) &&
            !strcmp(json_string_value(json_object_get(r, "family")) ?: "", family))
            return true;
    return false;
}

/* The op families of the device trace present on one side only (issue 26), into the decision's
 * "one_sided_families" and a note each. A fusion legitimately adds or removes families: the
 * target family itself on one side only is the declared change (its cycles are then not
 * measured on both sides, said elsewhere); any other family on one side only means the two
 * graphs differ beyond the hypothesis, so no per-op attribution is made across it. */
static void one_sided_families(ev *e)
{
    const json_t *rows = json_object_get(json_object_get(e->summary, "trace"), "per_chip");
    json_t *lone = json_array();
    size_t i;
    json_t *r;
    e->oom |= !lone;
    json_array_foreach((json_t *)rows, i, r) {
        const char *side = json_string_value(json_object_get(r, "side")) ?: "";
        const char *fam = json_string_value(json_object_get(r, "family")) ?: "";
        bool base = !strcmp(side, "baseline");
        if (!lone || (!base && strcmp(side, "candidate")) ||
            side_has_family(rows, base ? "candidate" : "baseline", fam))
            continue;
        bool dup = false;
        for (size_t j = 0; j < json_array_size(lone) && !dup; j++)
            dup = !strcmp(json_string_value(json_object_get(json_array_get(lone, j), "family")),
                          fam);
        if (dup)
            continue;
        bool target = e->in->family && !strcmp(fam, e->in->family);
        e->oom |= json_array_append_new(lone, json_pack("{s:s,s:s,s:b}", "family", fam, "side",
                                                        side, "target", target));
        if (target)
            note(e, "the target family %s is in the device trace on the %s side only: the "
                    "declared fusion or replacement, its cycles are not compared", fam, side);
        else {
            e->families_differ = true;
            note(e, "op family %s is in the device trace on the %s side only: the graphs differ "
                    "beyond the target family (a fusion may remove or add one); no per-op "
                    "attribution across it", fam, side);
        }
    }
    if (lone)
        e->oom |= json_object_set_new(e->doc, "one_sided_families", lone);
}

/* Apply the rules to inputs and a summary; *out gets the decision document. */
static int evaluate(const gate_inputs *in, const json_t *summary, const char *source,
                    json_t **out, golden_gate_label *label, golden_error *err)
{
    ev e;
    memset(&e, 0, sizeof e);
    e.in = in;
    e.summary = summary;
    e.label = GOLDEN_GATE_NO_MERGE;
    char chips_b[256], chips_c[256];
    size_t nb = trace_chips(&e, "baseline", chips_b, sizeof chips_b);
    size_t nc = trace_chips(&e, "candidate", chips_c, sizeof chips_c);
    e.chips_differ = nb && nc && strcmp(chips_b, chips_c) != 0; /* issue 26 */
    if (!(e.doc = json_object()) || decision_head(&e, source)) {
        json_decref(e.doc);
        return gate_oom(err);
    }
    one_sided_families(&e);
    if (e.families_differ) /* decision_head wrote it before the families were known */
        e.oom |= json_object_set_new(e.doc, "attribution", json_string("whole_graph_only"));
    case_facts f;
    rule_correctness(&e);
    gather_cases(&e, &f);
    rule_p99(&e, &f);
    json_t *target;
    double timpr = target_improvement(&e, &target);
    e.oom |= json_object_set_new(e.doc, "target", target ? target : json_null());
    rule_bottleneck(&e, &f, timpr);
    rule_soak(&e, &f, timpr);
    rule_soak_result(&e);
    rule(&e, "otherwise", true, GOLDEN_GATE_NO_MERGE, NULL, "no earlier rule fired");
    if (e.chips_differ)
        note(&e, "the device trace covers chip(s) %s on the baseline and chip(s) %s on the "
                 "candidate: no per-op attribution across different chips", chips_b, chips_c);
    if (whole_graph_only(&e))
        note(&e, "whole-graph timing only (section 7): any gain belongs to the whole-graph "
                 "candidate, never to a kernel");
    else if (isnan(timpr))
        note(&e, "the device trace does not carry the %s family on both sides: its change is "
                 "not measured", in->family ? in->family : "target");
    if (in->family && !strcmp(in->family, "fused_matmul_add")) {
        if (json_object_size(json_object_get(in->deployment, "candidate")) < 3)
            note(&e, "section 8.4: weight package size, load time or DRAM reservation missing "
                     "from the manifests");
    }
    e.oom |= json_object_set(e.doc, "deployment", in->deployment) ||
             json_object_set_new(e.doc, "decision", json_string(golden_gate_label_name(e.label))) ||
             json_object_set_new(e.doc, "rollback",
                                 in->rollback ? json_string(in->rollback) : json_null());
    if (e.oom) {
        json_decref(e.doc);
        return gate_oom(err);
    }
    *out = e.doc;
    *label = e.label;
    return 0;
}

/* The summary to decide on: recomputed from the raw data, and the stored one must agree. */
static int decision_summary(const char *dir, const golden_gate_opts *o, bool write, gate_raw *pre,
                            json_t **sum, const char **source, golden_error *err)
{
    *sum = NULL;
    char *raw = gate_path(dir, "performance/raw-requests.jsonl");
    char *stored = gate_path(dir, "performance/summary.json");
    int rc = -1;
    if (!raw || !stored) {
        gate_oom(err);
        goto out;
    }
    bool have_raw = access(raw, F_OK) == 0, have_sum = access(stored, F_OK) == 0;
    char *seal = gate_path(dir, "SHA256SUMS");
    /* A sealed folder gets no new file: the seal would no longer hold. */
    if (!seal || access(seal, F_OK) == 0)
        write = false;
    free(seal);
    if (have_raw && have_sum) {
        /* the stored summary checked against the raw data, and the recomputed one (the stored
         * seed, resamples and generator: the numbers it shows) kept for the decision */
        golden_findings fs;
        golden_findings_init(&fs);
        bool checked;
        rc = gate_check_keep_raw(dir, o, pre, &fs, &checked, sum, err);
        if (rc == 0 && fs.errors) {
            char where[1200];
            golden_finding_where(&fs.items[0], where, sizeof where);
            rc = golden_fail_where(err, GOLDEN_EINVAL, fs.items[0].message,
                                   "%s (%zu finding(s); exp-gate summarize --check)", where,
                                   fs.errors);
        }
        golden_findings_free(&fs);
        if (rc != 0) {
            json_decref(*sum);
            *sum = NULL;
            goto out;
        }
    }
    if (!have_raw) {
        /* Section 18.8: raw data, not only slides. A stored summary never stands in for it. */
        rc = golden_fail_where(err, GOLDEN_ENOTFOUND,
                               have_sum ? "no raw requests: a stored summary.json is not "
                                          "evidence on its own (nothing decided)"
                                        : "no raw requests to compute the summary from",
                               "%s", raw);
        goto out;
    }
    if (!*sum)
        rc = gate_summarize_raw(dir, o, pre, sum, err);
    /* The same words whether the summary was written now, already matched or is not written:
     * the decision files are a function of the folder's evidence only, so deciding a folder
     * decide itself decided (and sealed) again changes nothing. */
    *source = "recomputed from performance/raw-requests.jsonl";
    /* A folder without a summary gets the one the decision rests on. */
    if (rc == 0 && !have_sum && write)
        rc = golden_gate_summary_write(dir, *sum, false, err);
out:
    if (pre)
        gate_raw_free(pre);
    free(raw);
    free(stored);
    return rc;
}

/* manifest-verify's experiment check with the summary's reader on its pass over
 * raw-requests.jsonl (issue 26): each line is read and parsed once, and the summary rests on
 * exactly the lines the check verified. The reader's failure is reported only when the check
 * passed (a folder the check refuses is refused for the check's reason). *pre is ready (true)
 * when the check read the file and the reader took every line; else it is freed and the
 * summary reads the file itself (the check did not read it: no such file). */
static int verify_and_read(const char *dir, const golden_gate_opts *o, gate_inputs *v,
                           gate_raw *pre, bool *ready, golden_error *err)
{
    *ready = false;
    golden_error rerr;
    golden_error_clear(&rerr);
    lg_exp_raw_hook hook = {gate_raw_line, pre, &rerr, false, false, gate_raw_prep,
                            gate_raw_line_pre};
    bool open = gate_raw_open(dir, pre, &rerr) == 0; /* its failure: the summary's, later */
    int rc = gate_verify(dir, o->threads, v, open ? &hook : NULL, err);
    if (rc == 0 && open && hook.read) {
        if (hook.failed) {
            *err = rerr;
            rc = -1;
        } else {
            rc = gate_raw_close(pre, err);
            *ready = rc == 0;
        }
    }
    if (!*ready)
        gate_raw_free(pre);
    return rc;
}

/* The pass of verify_and_read and, on its own thread beside it, the raw file's SHA-256 for the
 * summary's raw_requests reference (issue 26: the hash was 0.6 s of one core after the pass at
 * 10^6 lines). The hash is what file_ref would take after the pass: stat, then the file's
 * bytes; a file that is not a regular one, or any failure, leaves it to the summary, which
 * hashes (or refuses) the file as before. */
typedef struct {
    const char *dir;
    const golden_gate_opts *o;
    gate_inputs *v;
    gate_raw *pre;
    bool *ready;
    int rc;
    golden_error *err;
    bool hashed;
    char hex[65];
    long long bytes;
} pass_job;

static int pass_task(void *ctx, size_t item, int worker, golden_error *err)
{
    (void)worker;
    (void)err;
    pass_job *j = ctx;
    if (item == 0) {
        j->rc = verify_and_read(j->dir, j->o, j->v, j->pre, j->ready, j->err);
        return 0;
    }
    /* opened without following a link at either component: this runs before the pass has
     * checked the folder's paths, so a symlinked performance/ or raw file (which the check
     * refuses) is never read here; O_NONBLOCK: a FIFO must not hang the open (it is not regular,
     * so it is left to the pass, which refuses it); bytes and size are the descriptor's */
    char *d = gate_path(j->dir, "performance");
    int dfd = d ? open(d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    int fd = dfd >= 0 ? openat(dfd, "raw-requests.jsonl", O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK) : -1;
    struct stat st;
    golden_error herr;
    golden_error_clear(&herr);
    long long total = 0;
    j->hashed = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                lg_sha256_fd(fd, "raw-requests.jsonl", j->hex, &total, &herr) == 0 &&
                total == (long long)st.st_size;
    j->bytes = j->hashed ? total : 0;
    if (fd >= 0)
        close(fd);
    if (dfd >= 0)
        close(dfd);
    free(d);
    return 0;
}

/* verify_and_read with the hash beside it (one thread: one after the other). */
static int verify_read_hash(const char *dir, const golden_gate_opts *o, gate_inputs *v,
                            gate_raw *pre, bool *ready, golden_error *err)
{
    pass_job j = {dir, o, v, pre, ready, -1, err, false, "", 0};
    golden_error perr;
    golden_error_clear(&perr);
    if (lg_parallel_for(2, o->threads == 1 ? 1 : 2, pass_task, &j, &perr) != 0)
        return -1; /* not reached: the tasks report through j */
    if (j.rc == 0 && *ready && j.hashed) {
        pre->raw_hashed = true;
        memcpy(pre->raw_sha256, j.hex, sizeof j.hex);
        pre->raw_bytes = j.bytes;
    }
    return j.rc;
}

int gate_decide(const char *dir, const golden_gate_opts *o, bool write_summary, json_t **out,
                json_t **summary, golden_gate_label *label, golden_error *err)
{
    *out = NULL;
    if (summary)
        *summary = NULL;
    gate_inputs in, v;
    memset(&v, 0, sizeof v);
    gate_raw pre;
    memset(&pre, 0, sizeof pre);
    bool ready;
    /* manifest-verify's experiment check first: nothing is decided on a folder that fails it */
    if (verify_read_hash(dir, o, &v, &pre, &ready, err) != 0)
        return -1;
    if (gate_inputs_read(dir, &in, err) != 0) {
        gate_raw_free(&pre);
        return -1;
    }
    if (gate_soak_read(dir, o->version >= 3 ? o->soak_path : NULL, &in, err) != 0) {
        gate_inputs_free(&in);
        gate_raw_free(&pre);
        return -1;
    }
    in.verified = v.verified;
    in.verify_failed = v.verify_failed;
    memcpy(in.verify_first, v.verify_first, sizeof in.verify_first);
    json_t *sum = NULL;
    const char *source = "";
    int rc = decision_summary(dir, o, write_summary, ready ? &pre : NULL, &sum, &source, err);
    if (rc == 0) {
        rc = evaluate(&in, sum, source, out, label, err);
        if (rc == 0 && !json_is_string(json_object_get(sum, "attribution")))
            json_object_set_new(*out, "attribution", json_string("whole_graph_only"));
    }
    if (rc == 0 && summary)
        *summary = json_incref(sum);
    json_decref(sum);
    gate_inputs_free(&in);
    return rc;
}

int golden_gate_decide(const char *dir, const golden_gate_opts *o, json_t **out,
                       golden_gate_label *label, golden_error *err)
{
    return gate_decide(dir, o, true, out, NULL, label, err);
}

int golden_gate_decide_with_summary(const char *dir, const golden_gate_opts *o, json_t **out,
                                    json_t **summary, golden_gate_label *label, golden_error *err)
{
    return gate_decide(dir, o, true, out, summary, label, err);
}

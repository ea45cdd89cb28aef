/* The operator evidence matrix of handbook section 19: one row per experiment folder (hypothesis,
 * observation, conclusion, shapes where it holds, rollback, what is uncertain), in its order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/decide_int.h"
#include "golden/doc.h"

/* Section 19's first experiments, in order; a later experiment of a family sorts with it. */
static const char *const order19[] = {"HOST-LOGITS", "OP-D2D", "OP-MOE", "OP-KV",
                                      "OP-FA", "OP-GEMM", "OP-FUSION", "OP-TOPK"};

static int rank_of(const char *id)
{
    for (int i = 0; i < 8; i++) {
        size_t l = strlen(order19[i]);
        if (!strncmp(id, order19[i], l) && id[l] == '-')
            return i;
    }
    return 8;
}

static int cmp_rows(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    const char *ix = json_string_value(json_object_get(x, "experiment_id"));
    const char *iy = json_string_value(json_object_get(y, "experiment_id"));
    int rx = rank_of(ix), ry = rank_of(iy);
    return rx != ry ? rx - ry : strcmp(ix, iy);
}

static double num(const json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Observation and shapes from decision.json's graph-level cases. */
static int fill_from_decision(json_t *row, const json_t *d)
{
    json_t *obs = json_array(), *holds = json_array(), *unc = json_object_get(d, "uncertain");
    const json_t *th = json_object_get(d, "thresholds");
    double gmin = num(th, "graph_improvement_min_pct"), pmax = num(th, "p99_regression_max_pct");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(d, "cases"), i, c) {
        if (!json_is_true(json_object_get(c, "graph_level")))
            continue;
        json_t *lv = json_object_get(c, "concurrency");
        char id[300], buf[700];
        gate_case_label(id, sizeof id, json_string_value(json_object_get(c, "case_id")),
                        json_is_integer(lv) ? json_integer_value(lv) : 1); /* issue 33 */
        snprintf(buf, sizeof buf, "%s %s: %.3f -> %.3f ms (%+.3f ms, %+.2f %%)%s", id,
                 json_string_value(json_object_get(c, "metric")) ?: "?",
                 num(c, "baseline_median"), num(c, "candidate_median"), num(c, "delta_abs"),
                 num(c, "delta_pct"),
                 json_is_true(json_object_get(c, "insufficient")) ? " insufficient" : "");
        if (!obs || json_array_append_new(obs, json_string(buf)))
            return -1;
        if (!json_is_true(json_object_get(c, "insufficient")) && -num(c, "delta_pct") >= gmin &&
            num(c, "p99_regression_pct") <= pmax && json_array_append_new(holds, json_string(id)))
            return -1;
    }
    char concl[256];
    snprintf(concl, sizeof concl, "%s (rule %s)",
             json_string_value(json_object_get(d, "decision")) ?: "?",
             json_string_value(json_object_get(d, "rule")) ?: "?");
    return json_object_set_new(row, "observation", obs) ||
           json_object_set_new(row, "conclusion", json_string(concl)) ||
           json_object_set_new(row, "holds_for", holds) ||
           json_object_set_new(row, "uncertain", unc ? json_deep_copy(unc) : json_array());
}

/* A decision.json found in the folder is never trusted: the decision is re-derived from the
 * verified folder, and a stored file that says otherwise is named in the row. */
static int stored_disagrees(json_t *row, const char *dp, const json_t *derived, golden_error *err)
{
    if (access(dp, F_OK) != 0)
        return 0;
    golden_doc *d = NULL;
    if (golden_doc_load_file(dp, &d, err) != 0)
        return -1;
    json_t *r = golden_doc_root(d);
    const char *sd = json_string_value(json_object_get(r, "decision"));
    const char *sr = json_string_value(json_object_get(r, "rule"));
    const char *dd = json_string_value(json_object_get(derived, "decision"));
    const char *dr = json_string_value(json_object_get(derived, "rule"));
    int rc = 0;
    if (!sd || !sr || strcmp(sd, dd) || strcmp(sr, dr)) {
        char buf[700];
        snprintf(buf, sizeof buf, "decision.json in the folder says %.200s (rule %.200s); "
                 "re-derived from the verified folder: %s (rule %s), which this row shows",
                 sd ? sd : "nothing", sr ? sr : "none", dd, dr);
        json_t *unc = json_object_get(row, "uncertain");
        rc = json_array_append_new(unc, json_string(buf)) ? gate_oom(err) : 0;
        if (rc == 0)
            rc = json_object_set_new(row, "stored_decision_differs", json_true()) ? gate_oom(err)
                                                                                : 0;
    }
    golden_doc_free(d);
    return rc;
}

static json_t *matrix_row(const char *dir, const golden_gate_opts *o, golden_error *err)
{
    char *hp = gate_path(dir, "hypothesis.yaml"), *dp = gate_path(dir, "decision.json");
    golden_doc *h = NULL;
    json_t *row = NULL, *derived = NULL;
    if (!hp || !dp) {
        gate_oom(err);
        goto out;
    }
    if (golden_doc_load_file(hp, &h, err) != 0)
        goto out;
    json_t *hr = golden_doc_root(h);
    const char *id = json_string_value(json_object_get(hr, "experiment_id"));
    if (!id) {
        golden_fail_where(err, GOLDEN_EINVAL, "experiment_id is required", "%s", hp);
        goto out;
    }
    const char *status = json_string_value(json_object_get(hr, "status"));
    bool planned = status && !strcmp(status, "planned");
    golden_gate_label label;
    /* The same verification path as decide: a folder that fails it stops the matrix. */
    if (planned ? gate_verify_planned(dir, o->threads, err) != 0
                : gate_decide(dir, o, false, &derived, NULL, &label, err) != 0)
        goto out;
    json_t *hyp = json_object_get(hr, "hypothesis"), *rb = json_object_get(hr, "rollback");
    json_t *st = json_object_get(hr, "status");
    row = json_pack("{s:s,s:s,s:O,s:O,s:O}", "experiment_id", id, "folder", dir, "hypothesis",
                    hyp ? hyp : json_null(), "rollback", rb ? rb : json_null(), "status",
                    st ? st : json_null());
    if (!row) {
        gate_oom(err);
        goto out;
    }
    int bad;
    if (derived)
        bad = fill_from_decision(row, derived);
    else
        bad = json_object_set_new(row, "observation", json_array()) ||
              json_object_set_new(row, "conclusion", json_string("pending: status planned")) ||
              json_object_set_new(row, "holds_for", json_array()) ||
              json_object_set_new(row, "uncertain",
                                  json_pack("[s]", "not decided yet (exp-gate decide)"));
    if (bad) {
        json_decref(row);
        row = NULL;
        gate_oom(err);
    } else if (derived && stored_disagrees(row, dp, derived, err) != 0) {
        json_decref(row);
        row = NULL;
    }
out:
    json_decref(derived);
    golden_doc_free(h);
    free(hp);
    free(dp);
    return row;
}

int golden_gate_matrix(const char *const *dirs, size_t n, json_t **out, golden_error *err)
{
    golden_gate_opts o;
    golden_gate_opts_init(&o);
    return golden_gate_matrix_opts(dirs, n, &o, out, err);
}

int golden_gate_matrix_opts(const char *const *dirs, size_t n, const golden_gate_opts *o,
                            json_t **out, golden_error *err)
{
    *out = NULL;
    json_t **rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows)
        return gate_oom(err);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        if (!(rows[i] = matrix_row(dirs[i], o, err)))
            rc = -1;
    json_t *doc = NULL, *arr = NULL;
    if (rc == 0) {
        qsort(rows, n, sizeof *rows, cmp_rows);
        doc = json_pack("{s:s,s:o}", "schema", "calculet-evidence-matrix/v1", "experiments",
                        arr = json_array());
        for (size_t i = 0; doc && arr && i < n; i++) {
            if (json_array_append_new(arr, rows[i]))
                break;
            rows[i] = NULL;
        }
        if (!doc || !arr || json_array_size(arr) != n) {
            json_decref(doc);
            doc = NULL;
            rc = gate_oom(err);
        }
    }
    for (size_t i = 0; i < n; i++)
        json_decref(rows[i]);
    free(rows);
    *out = doc;
    return rc;
}

static void cell_list(FILE *f, const json_t *arr, const char *empty)
{
    if (json_array_size(arr) == 0) {
        fputs(empty, f);
        return;
    }
    size_t i;
    json_t *v;
    json_array_foreach((json_t *)arr, i, v) {
        fputs(i ? "; " : "", f);
        gate_md_escape(f, json_string_value(v)); /* a | or a newline would split the table */
    }
}

char *golden_gate_matrix_markdown(const json_t *m, golden_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = gate_memstream_open(&buf, &len, err);
    if (!f)
        return NULL;
    fputs("# Operator evidence matrix\n\n"
          "| experiment | hypothesis | observation | conclusion | holds for | rollback | "
          "uncertain |\n|---|---|---|---|---|---|---|\n", f);
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(m, "experiments"), i, r) {
        json_t *one = json_array();
        fputs("| ", f);
        gate_md_escape(f, json_string_value(json_object_get(r, "experiment_id")));
        fputs(" | ", f);
        json_array_append(one, json_object_get(r, "hypothesis"));
        cell_list(f, one, "-");
        fputs(" | ", f);
        cell_list(f, json_object_get(r, "observation"), "-");
        fputs(" | ", f);
        gate_md_escape(f, json_string_value(json_object_get(r, "conclusion")));
        fputs(" | ", f);
        cell_list(f, json_object_get(r, "holds_for"), "none");
        fputs(" | ", f);
        json_array_clear(one);
        json_array_append(one, json_object_get(r, "rollback"));
        cell_list(f, one, "-");
        fputs(" | ", f);
        cell_list(f, json_object_get(r, "uncertain"), "-");
        fputs(" |\n", f);
        json_decref(one);
    }
    return gate_memstream_close(f, &buf, err);
}

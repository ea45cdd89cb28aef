/* exp-gate pareto (handbook section 16.2): single-group fallback experiments as points of
 * quality recovered against capacity and latency cost, the exact Pareto frontier and the
 * recommended mixed-precision set. Every number is re-derived from the verified folder. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/decide_int.h"
#include "golden/doc.h"
#include "golden/experiment.h"
#include "golden/pareto.h"
#include "util/str.h"

typedef struct {
    json_t *row;
    const char *id;
    double quality, capacity, latency; /* quality oriented: higher is better */
    bool frontier;
} pt;

static double num(const json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* manifest-verify's experiment check, strictly: any error or to-do refuses the folder, except
 * the outputs exp-gate itself writes (summary.json, decision.*) being absent. */
static int verify_strict(const char *dir, int threads, golden_error *err)
{
    golden_findings fs;
    golden_findings_init(&fs);
    golden_experiment_opts eo;
    memset(&eo, 0, sizeof eo);
    eo.version = GOLDEN_EXPERIMENT_OPTS_VERSION;
    eo.threads = threads;
    int rc = golden_experiment_check(dir, &eo, &fs, err);
    for (size_t i = 0; rc == 0 && i < fs.count; i++) {
        const golden_finding *f = &fs.items[i];
        if (f->severity == GOLDEN_SEV_NOTE) /* a note (a recorded waiver): shown, decides nothing */
            continue;
        if (!strcmp(f->rule, "layout") && !strncmp(f->message, "missing", 7) &&
            (lg_path_has_suffix(f->file, "performance/summary.json") ||
             lg_path_has_suffix(f->file, "decision.md") ||
             lg_path_has_suffix(f->file, "decision.json")))
            continue;
        char where[1700];
        golden_finding_where(f, where, sizeof where);
        rc = golden_fail_where(err, GOLDEN_EINVAL, f->message,
                               "%s: manifest-verify rule %s%s (folder refused, not plotted)",
                               where, f->rule, f->severity == GOLDEN_SEV_TODO ? " (to-do)" : "");
    }
    golden_findings_free(&fs);
    return rc;
}

/* The largest kl_mean of any tensor of the golden-diff reports accuracy/result.json names
 * (NAN when none carries one). */
static int report_kl(const char *dir, const json_t *acc, double *kl, golden_error *err)
{
    *kl = NAN;
    size_t i, j;
    json_t *r, *t;
    json_array_foreach(json_object_get(acc, "reports"), i, r) {
        const char *rel = json_string_value(json_object_get(r, "path"));
        char *p = rel ? gate_path(dir, rel) : NULL;
        golden_doc *d = NULL;
        if (!p)
            return rel ? gate_oom(err) : 0;
        int rc = golden_doc_load_file(p, &d, err);
        free(p);
        if (rc != 0)
            return -1;
        json_array_foreach(json_object_get(golden_doc_root(d), "tensors"), j, t) {
            double v = num(t, "kl_mean");
            const char *k;
            json_t *sub;
            json_object_foreach(t, k, sub)
                if (isnan(v) && json_is_object(sub))
                    v = num(sub, "kl_mean");
            if (isfinite(v) && (isnan(*kl) || v > *kl))
                *kl = v;
        }
        golden_doc_free(d);
    }
    return 0;
}

/* The latency cost: the largest delta_pct of the graph-level cases of the re-derived decision
 * (the worst shape pays it). */
static int latency_cost(const char *dir, const json_t *d, json_t *row, double *pct,
                        golden_error *err)
{
    *pct = NAN;
    const char *worst = NULL;
    double ms = NAN;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(d, "cases"), i, c) {
        double v = num(c, "delta_pct");
        if (!json_is_true(json_object_get(c, "graph_level")) || !isfinite(v))
            continue;
        if (isnan(*pct) || v > *pct) {
            *pct = v;
            ms = num(c, "delta_abs");
            worst = json_string_value(json_object_get(c, "case_id"));
        }
    }
    if (isnan(*pct))
        return golden_fail_where(err, GOLDEN_EINVAL, "no graph-level case with a median delta",
                                 "%s/performance/summary.json: latency cost unknown", dir);
    return gate_set_real(row, "latency_cost_pct", *pct) ||
                   gate_set_real(row, "latency_cost_ms", ms) ||
                   gate_set_str(row, "latency_case", worst ? worst : "?")
               ? gate_oom(err)
               : 0;
}

static int capacity_cost(const char *dir, const json_t *d, json_t *row, double *bytes,
                         golden_error *err)
{
    const json_t *dep = json_object_get(d, "deployment");
    double b = num(json_object_get(dep, "baseline"), "weight_package_bytes");
    double c = num(json_object_get(dep, "candidate"), "weight_package_bytes");
    if (!isfinite(b) || !isfinite(c))
        return golden_fail_where(err, GOLDEN_EINVAL, "weight_package_bytes is required on both "
                                 "sides", "%s/%s/manifest.json: capacity cost unknown", dir,
                                 isfinite(b) ? "candidate" : "baseline");
    *bytes = c - b;
    double db = num(json_object_get(dep, "baseline"), "dram_reservation_bytes");
    double dc = num(json_object_get(dep, "candidate"), "dram_reservation_bytes");
    return gate_set_real(row, "capacity_cost_bytes", *bytes) ||
                   json_object_set_new(row, "dram_cost_bytes", isfinite(db) && isfinite(dc)
                                                                   ? json_real(dc - db)
                                                                   : json_null())
               ? gate_oom(err)
               : 0;
}

/* task, top1 and KL of the folder; the chosen one (oriented so higher is better) in *q. */
static int quality(const char *dir, const gate_inputs *in, golden_pareto_quality which,
                   json_t *row, double *q, golden_error *err)
{
    json_t *acc = golden_doc_root(in->accuracy), *task = json_object_get(acc, "task");
    double tb = num(task, "baseline"), tc = num(task, "candidate");
    double top1 = num(json_object_get(acc, "logits"), "top1_match"), kl;
    if (report_kl(dir, acc, &kl, err) != 0)
        return -1;
    double gain = tc - tb;
    const char *tn = json_string_value(json_object_get(task, "name"));
    if (json_object_set_new(row, "task", tn ? json_string(tn) : json_null()) ||
        gate_set_real(row, "task_baseline", tb) || gate_set_real(row, "task_candidate", tc) ||
        gate_set_real(row, "task_recovered", gain) || gate_set_real(row, "top1_match", top1) ||
        gate_set_real(row, "kl_mean", kl))
        return gate_oom(err);
    *q = which == GOLDEN_PARETO_TASK ? gain : which == GOLDEN_PARETO_TOP1 ? top1 : -kl;
    if (!isfinite(*q))
        return golden_fail_where(err, GOLDEN_EINVAL, "the quality figure is not there",
                                 "%s/accuracy/result.json: %s", dir,
                                 which == GOLDEN_PARETO_TASK   ? "task.baseline and task.candidate"
                                 : which == GOLDEN_PARETO_TOP1 ? "logits.top1_match"
                                                               : "no kl_mean in the reports it names");
    return 0;
}

/* "key=value, ..." of the hypothesis' candidate.changed_flags: what fell back. */
static int changed(const json_t *hyp, json_t *row, golden_error *err)
{
    char buf[512] = "";
    size_t at = 0;
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(json_object_get(hyp, "candidate"), "changed_flags"), k, v) {
        char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        if (at < sizeof buf)
            at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s=%s", at ? ", " : "", k,
                                   s ? s : "?");
        free(s);
    }
    return gate_set_str(row, "changed", buf) ? gate_oom(err) : 0;
}

static int point_of(const char *dir, const golden_pareto_opts *po, const golden_gate_opts *o,
                    const char **baseline, pt *p, golden_error *err)
{
    gate_inputs in;
    json_t *d = NULL;
    golden_gate_label label;
    int rc = -1;
    memset(p, 0, sizeof *p);
    if (verify_strict(dir, o->threads, err) != 0)
        return -1;
    if (gate_inputs_read(dir, &in, err) != 0)
        return -1;
    json_t *hyp = golden_doc_root(in.hypothesis);
    const char *base = json_string_value(
        json_object_get(json_object_get(hyp, "baseline"), "calbin_sha256"));
    if (!base || (*baseline && strcmp(base, *baseline))) {
        golden_fail_where(err, GOLDEN_EINVAL, "single-group fallbacks must share one baseline",
                          "%s/hypothesis.yaml: baseline.calbin_sha256 %.12s... differs from "
                          "the first folder's %.12s...", dir, base ? base : "(none)", *baseline);
        goto out;
    }
    if (gate_decide(dir, o, false, &d, NULL, &label, err) != 0)
        goto out;
    p->row = json_pack("{s:s,s:s,s:s}", "experiment_id", in.experiment_id, "folder", dir,
                       "decision", golden_gate_label_name(label));
    if (!p->row) {
        gate_oom(err);
        goto out;
    }
    if (changed(hyp, p->row, err) != 0 || quality(dir, &in, po->quality, p->row, &p->quality, err) ||
        capacity_cost(dir, d, p->row, &p->capacity, err) ||
        latency_cost(dir, d, p->row, &p->latency, err))
        goto out;
    if (!(p->id = json_string_value(json_object_get(p->row, "experiment_id"))))
        goto out;
    if (!*baseline && !(*baseline = strdup(base))) {
        gate_oom(err);
        goto out;
    }
    rc = 0;
out:
    if (rc != 0) {
        json_decref(p->row);
        p->row = NULL;
    }
    json_decref(d);
    gate_inputs_free(&in);
    return rc;
}

/* a dominates b: no worse on every axis, better on one. Equal points dominate neither. */
static bool dominates(const pt *a, const pt *b)
{
    return a->quality >= b->quality && a->capacity <= b->capacity && a->latency <= b->latency &&
           (a->quality > b->quality || a->capacity < b->capacity || a->latency < b->latency);
}

static int cmp_pick(const void *x, const void *y)
{
    const pt *a = *(pt *const *)x, *b = *(pt *const *)y;
    if (a->quality != b->quality)
        return a->quality > b->quality ? -1 : 1;
    if (a->capacity != b->capacity)
        return a->capacity < b->capacity ? -1 : 1;
    if (a->latency != b->latency)
        return a->latency < b->latency ? -1 : 1;
    return strcmp(a->id, b->id);
}

static int cmp_id(const void *x, const void *y)
{
    return strcmp(((const pt *)x)->id, ((const pt *)y)->id);
}

/* Frontier flags, dominated_by lists, then the recommendation: frontier points best quality
 * first (ties: less capacity, less latency, id), each taken while the summed costs stay within
 * the budgets; with the task axis a point that recovers nothing (gain <= 0) is not taken. */
static int frontier(pt *p, size_t n, const golden_pareto_opts *po, json_t *doc, golden_error *err)
{
    json_t *rec = json_array();
    pt **order = calloc(n ? n : 1, sizeof *order);
    if (!rec || !order) {
        json_decref(rec);
        free(order);
        return gate_oom(err);
    }
    int oom = 0;
    for (size_t i = 0; !oom && i < n; i++) {
        json_t *by = json_array();
        for (size_t j = 0; by && j < n; j++)
            if (j != i && dominates(&p[j], &p[i]))
                oom |= json_array_append_new(by, json_string(p[j].id));
        p[i].frontier = by && json_array_size(by) == 0;
        oom |= !by || json_object_set_new(p[i].row, "dominated_by", by) ||
               json_object_set_new(p[i].row, "frontier", json_boolean(p[i].frontier)) ||
               gate_set_real(p[i].row, "quality", p[i].quality);
    }
    size_t nf = 0;
    for (size_t i = 0; i < n; i++)
        if (p[i].frontier)
            order[nf++] = &p[i];
    qsort(order, nf, sizeof *order, cmp_pick);
    double cap = 0, lat = 0;
    for (size_t k = 0; !oom && k < nf; k++) {
        pt *q = order[k];
        const char *why = NULL;
        if (po->quality == GOLDEN_PARETO_TASK && q->quality <= 0)
            why = "recovers no task quality";
        else if (cap + q->capacity > po->capacity_budget)
            why = "over the capacity budget";
        else if (lat + q->latency > po->latency_budget_pct)
            why = "over the latency budget";
        if (!why) {
            cap += q->capacity;
            lat += q->latency;
            oom |= json_array_append_new(rec, json_string(q->id));
        }
        oom |= json_object_set_new(q->row, "recommended", json_boolean(!why)) ||
               (why && gate_set_str(q->row, "not_recommended", why));
    }
    free(order);
    if (oom) {
        json_decref(rec);
        return gate_oom(err);
    }
    if (json_object_set_new(doc, "recommended", rec) ||
        gate_set_real(doc, "recommended_capacity_bytes", cap) ||
        gate_set_real(doc, "recommended_latency_pct", lat)) {
        return gate_oom(err);
    }
    return 0;
}

static const char *quality_name(golden_pareto_quality q)
{
    return q == GOLDEN_PARETO_TASK ? "task" : q == GOLDEN_PARETO_TOP1 ? "top1" : "kl";
}

int golden_gate_pareto(const char *const *dirs, size_t n, const golden_pareto_opts *po,
                       const golden_gate_opts *o, json_t **out, golden_error *err)
{
    *out = NULL;
    if (!po || po->version != GOLDEN_PARETO_OPTS_VERSION)
        return golden_fail_what(err, GOLDEN_EINVAL, "pareto", "options version mismatch");
    if (n == 0)
        return golden_fail_what(err, GOLDEN_EINVAL, "pareto", "no experiment folder");
    pt *p = calloc(n, sizeof *p);
    char *baseline = NULL;
    if (!p)
        return gate_oom(err);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = point_of(dirs[i], po, o, (const char **)&baseline, &p[i], err);
    for (size_t i = 0; rc == 0 && i < n; i++)
        for (size_t j = 0; j < i; j++)
            if (!strcmp(p[i].id, p[j].id))
                rc = golden_fail_where(err, GOLDEN_EINVAL, "one experiment given twice",
                                       "%s: experiment %s is also %s", dirs[i], p[i].id,
                                       dirs[j]);
    json_t *doc = NULL, *pts = NULL;
    if (rc == 0) {
        qsort(p, n, sizeof *p, cmp_id);
        doc = json_pack("{s:s,s:s,s:s,s:o}", "schema", "calculet-pareto/v1", "quality_axis",
                        quality_name(po->quality), "baseline_calbin_sha256", baseline, "points",
                        pts = json_array());
        if (!doc || !pts || gate_set_real(doc, "capacity_budget_bytes", po->capacity_budget) ||
            gate_set_real(doc, "latency_budget_pct", po->latency_budget_pct))
            rc = gate_oom(err);
        else
            rc = frontier(p, n, po, doc, err);
        for (size_t i = 0; rc == 0 && i < n; i++)
            if (json_array_append(pts, p[i].row))
                rc = gate_oom(err);
    }
    for (size_t i = 0; i < n; i++)
        json_decref(p[i].row);
    free(p);
    free(baseline);
    if (rc != 0) {
        json_decref(doc);
        return -1;
    }
    *out = doc;
    return 0;
}

static double jnum(const json_t *o, const char *k)
{
    return num(o, k);
}

char *golden_gate_pareto_text(const json_t *pareto, golden_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = gate_memstream_open(&buf, &len, err);
    if (!f)
        return NULL;
    fprintf(f, "%-22s %-9s %12s %14s %10s %10s %10s  %s\n", "EXPERIMENT", "FRONTIER",
            "TASK_GAIN", "CAPACITY_B", "LATENCY_%", "TOP1", "KL_MEAN", "CHANGED / DOMINATED BY");
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(pareto, "points"), i, r) {
        bool fr = json_is_true(json_object_get(r, "frontier"));
        bool rec = json_is_true(json_object_get(r, "recommended"));
        fprintf(f, "%-22s %-9s %12.6g %14.0f %10.4g %10.6g %10.4g  %s",
                json_string_value(json_object_get(r, "experiment_id")),
                rec ? "yes, rec" : fr ? "yes" : "no", jnum(r, "task_recovered"),
                jnum(r, "capacity_cost_bytes"), jnum(r, "latency_cost_pct"), jnum(r, "top1_match"),
                jnum(r, "kl_mean"), json_string_value(json_object_get(r, "changed")) ?: "");
        size_t j;
        json_t *b;
        json_array_foreach(json_object_get(r, "dominated_by"), j, b)
            fprintf(f, "%s%s", j ? ", " : " / dominated by ", json_string_value(b));
        fputc('\n', f);
    }
    fprintf(f, "recommended (%s axis):", json_string_value(json_object_get(pareto, "quality_axis")));
    json_array_foreach(json_object_get(pareto, "recommended"), i, r)
        fprintf(f, "%s%s", i ? ", " : " ", json_string_value(r));
    if (!json_array_size(json_object_get(pareto, "recommended")))
        fputs(" none", f);
    fprintf(f, " (+%.0f bytes, +%.4g %% latency, costs summed)\n",
            jnum(pareto, "recommended_capacity_bytes"), jnum(pareto, "recommended_latency_pct"));
    return gate_memstream_close(f, &buf, err);
}

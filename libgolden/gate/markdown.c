/* decision.md from a calculet-decision/v1 document: the rule that fired, every rule with its
 * numbers (absolute and relative), what remains uncertain; and writing it beside decision.json. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gate/gate_int.h"
#include "golden/doc.h"
#include "golden/report.h"
#include "golden/schema.h"

static const char *label_text(const char *l)
{
    if (!strcmp(l, "merge"))
        return "**merge**: the 24 h soak passed on its own numbers";
    if (!strcmp(l, "soak_24h"))
        return "**24 h soak**, then merge if the soak shows no new fault";
    if (!strcmp(l, "reject"))
        return "**reject**";
    if (!strcmp(l, "experiment_only"))
        return "**keep as experiment only** (not merged)";
    if (!strcmp(l, "investigate"))
        return "**investigate**: the bottleneck moved";
    return "**no merge**";
}

static double num(const json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

void gate_md_escape(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        unsigned char c = *p;
        if (c < 0x20 || c == 0x7f)
            fputs(c == '\n' ? "\\n" : c == '\r' ? "\\r" : " ", f); /* no forged line */
        else if (c == '&')
            fputs("&amp;", f);
        else if (c == '<')
            fputs("&lt;", f);
        else if (strchr("\\`*_[]|~", c)) {
            fputc('\\', f);
            fputc(c, f);
        } else
            fputc(c, f);
    }
}

/* "%.3f ms", or n/a for a figure that is not finite (+inf when failed requests made it so) */
static void ms(FILE *f, double v, bool failed)
{
    if (isfinite(v))
        fprintf(f, "%.3f ms", v);
    else
        fputs(failed ? "+inf ms (failed requests)" : "n/a", f);
}

/* A throughput beside the latency (issue 33): "B -> C /s (+x.xx %)", n/a for a null. */
static void rate(FILE *f, const json_t *c, const char *key)
{
    char kb[64], kc[64], kp[64];
    snprintf(kb, sizeof kb, "baseline_%s", key);
    snprintf(kc, sizeof kc, "candidate_%s", key);
    snprintf(kp, sizeof kp, "%s_change_pct", key);
    double b = num(c, kb), k = num(c, kc), p = num(c, kp);
    for (int s = 0; s < 2; s++) {
        double v = s ? k : b;
        if (isfinite(v))
            fprintf(f, "%.3f", v);
        else
            fputs("n/a", f);
        fputs(s ? " /s" : " -> ", f);
    }
    if (isfinite(p))
        fprintf(f, " (%+.2f %%)", p);
}

static void cases_table(FILE *f, const json_t *d)
{
    fputs("\n| case | metric | concurrency | baseline median | candidate median | change | P99 "
          "baseline -> candidate | P99 change | failed requests | requests/s baseline -> "
          "candidate | output tokens/s baseline -> candidate |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|\n", f);
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(d, "cases"), i, c) {
        bool failed = num(c, "failed") > 0;
        fputs("| ", f);
        gate_md_escape(f, json_string_value(json_object_get(c, "case_id")));
        fputs(json_is_true(json_object_get(c, "insufficient")) ? " (insufficient) | " : " | ", f);
        gate_md_escape(f, json_string_value(json_object_get(c, "metric")));
        fputs(json_is_true(json_object_get(c, "graph_level")) ? " (graph) | " : " | ", f);
        json_t *lv = json_object_get(c, "concurrency");
        fprintf(f, "%lld | ", json_is_integer(lv) ? (long long)json_integer_value(lv) : 1LL);
        ms(f, num(c, "baseline_median"), failed);
        fputs(" | ", f);
        ms(f, num(c, "candidate_median"), failed);
        if (isfinite(num(c, "delta_abs")))
            fprintf(f, " | %+.3f ms (%+.2f %%) | ", num(c, "delta_abs"), num(c, "delta_pct"));
        else
            fputs(" | n/a | ", f);
        ms(f, num(c, "baseline_p99"), failed);
        fputs(" -> ", f);
        ms(f, num(c, "candidate_p99"), failed);
        if (isfinite(num(c, "p99_regression_pct")))
            fprintf(f, " | %+.2f %% | %.0f | ", num(c, "p99_regression_pct"),
                    failed ? num(c, "failed") : 0.0);
        else
            fprintf(f, " | %s | %.0f | ", failed ? "+inf %" : "n/a",
                    failed ? num(c, "failed") : 0.0);
        rate(f, c, "requests_per_s");
        fputs(" | ", f);
        rate(f, c, "output_tokens_per_s");
        fputs(" |\n", f);
    }
}

/* Section 8.4's figures, where the manifests carry them. */
static void deployment(FILE *f, const json_t *dep)
{
    static const char *const keys[3] = {"weight_package_bytes", "load_time_ms",
                                        "dram_reservation_bytes"};
    static const char *const names[3] = {"weight package", "load time", "DRAM reservation"};
    static const char *const units[3] = {"bytes", "ms", "bytes"};
    const json_t *b = json_object_get(dep, "baseline"), *c = json_object_get(dep, "candidate");
    int shown = 0;
    for (int k = 0; k < 3; k++) {
        double x = num(b, keys[k]), y = num(c, keys[k]);
        if (isnan(x) && isnan(y))
            continue;
        fprintf(f, "%s%s: %.17g -> %.17g %s", shown++ ? "; " : "\nSection 8.4: ", names[k], x,
                y, units[k]);
        if (!isnan(x) && !isnan(y)) { /* absolute and relative change, as the target line */
            fprintf(f, " (%+.17g", y - x);
            if (x != 0)
                fprintf(f, ", %+.2f %%", 100 * (y - x) / x);
            fputc(')', f);
        }
    }
    if (shown)
        fputs(".\n", f);
    /* section 10: the KV candidate's fields as its manifest gives them, the saving recomputed */
    const json_t *kv = json_object_get(c, "kv_cache"), *sv = json_object_get(dep, "kv_saving");
    if (!json_is_object(kv) && !json_is_object(sv))
        return;
    fputs(shown ? "" : "\n", f);
    fputs("Section 10 KV cache (candidate):", f);
    static const char *const kk[4] = {"compressed", "dtype", "scale_granularity", "dequant_at"};
    for (int k = 0; k < 4; k++) {
        const char *s = json_string_value(json_object_get(kv, kk[k]));
        fprintf(f, " %s ", kk[k]);
        gate_md_escape(f, s ? s : "not given");
        fputs(k < 3 ? ";" : "", f);
    }
    if (json_is_object(sv))
        fprintf(f, "; real saving %.0f -> %.0f bytes = %.0f bytes (%.2f %%)",
                num(sv, "baseline_bytes"), num(sv, "candidate_bytes"), num(sv, "saving_bytes"),
                num(sv, "saving_pct"));
    else
        fputs("; real saving not measured (kv_cache.bytes on both sides)", f);
    fputs(".\n", f);
}

/* The task-level metric per dataset, as the correctness rule recomputed it (gate/perplexity.c). */
static void perplexity_table(FILE *f, const json_t *d)
{
    size_t i;
    json_t *r, *p = NULL;
    json_array_foreach(json_object_get(d, "rules"), i, r)
        if (!strcmp(json_string_value(json_object_get(r, "rule")) ?: "", "correctness"))
            p = json_object_get(json_object_get(r, "inputs"), "perplexity");
    if (json_array_size(p) == 0)
        return;
    fputs("\n## Perplexity per dataset (recomputed from the score files)\n\n"
          "| dataset | cases | tokens | baseline | candidate | change |\n|---|---|---|---|---|---|\n",
          f);
    json_array_foreach(p, i, r) {
        fputs("| ", f);
        gate_md_escape(f, json_string_value(json_object_get(r, "dataset")));
        fprintf(f, " | %.0f | %.0f | ", num(r, "cases"), num(r, "scored_tokens"));
        if (json_is_number(json_object_get(r, "regression_pct")))
            fprintf(f, "%.6g | %.6g | %+.3f %% |\n", num(r, "baseline"), num(r, "candidate"),
                    num(r, "regression_pct"));
        else
            fprintf(f, "no number | no number | %.0f + %.0f case(s) with non-finite logits |\n",
                    num(r, "baseline_findings"), num(r, "candidate_findings"));
    }
}

char *golden_gate_decision_markdown(const json_t *d, golden_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = gate_memstream_open(&buf, &len, err);
    if (!f)
        return NULL;
    const char *id = json_string_value(json_object_get(d, "experiment_id")) ?: "?";
    const char *label = json_string_value(json_object_get(d, "decision")) ?: "no_merge";
    const char *fired = json_string_value(json_object_get(d, "rule")) ?: "?";
    fputs("# ", f);
    gate_md_escape(f, id);
    fputs(": decision\n\n", f);
    fputs("<!-- written by exp-gate decide from decision.json; edit neither by hand -->\n\n", f);
    fprintf(f, "Decision: %s.\nRule that fired: `%s` (handbook section 17, rules in order).\n",
            label_text(label), fired);
    if (!strcmp(json_string_value(json_object_get(d, "attribution")) ?: "", "whole_graph_only"))
        fputs("Timing is whole-graph only: a gain belongs to the whole-graph candidate, never to "
              "a kernel.\n", f);
    fputs("\n## Rules\n\n", f);
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(d, "rules"), i, r) {
        const char *name = json_string_value(json_object_get(r, "rule"));
        fprintf(f, "%zu. `%s` -> %s%s: ", i + 1, name,
                json_string_value(json_object_get(r, "label")),
                json_is_true(json_object_get(r, "fired")) ? " (**fired**)" : "");
        gate_md_escape(f, json_string_value(json_object_get(r, "reason")));
        fputs(".\n", f);
    }
    json_t *t = json_object_get(d, "target");
    if (json_is_object(t)) {
        fputs("\nTarget family ", f);
        gate_md_escape(f, json_string_value(json_object_get(t, "family")));
        fprintf(f, ": %.0f -> %.0f cycles (%+.0f, %+.2f %%); share of the "
                   "graph %.2f %% -> %.2f %%.\n", num(t, "baseline_cycles"),
                num(t, "candidate_cycles"), num(t, "delta_abs"), num(t, "delta_pct"),
                100 * num(t, "baseline_share"), 100 * num(t, "candidate_share"));
    }
    deployment(f, json_object_get(d, "deployment"));
    perplexity_table(f, d);
    cases_table(f, d);
    fputs("\n## Uncertain\n\n", f);
    json_t *u;
    if (json_array_size(json_object_get(d, "uncertain")) == 0)
        fputs("- nothing recorded\n", f);
    json_array_foreach(json_object_get(d, "uncertain"), i, u) {
        fputs("- ", f);
        gate_md_escape(f, json_string_value(u));
        fputs("\n", f);
    }
    const char *rb = json_string_value(json_object_get(d, "rollback"));
    fputs("\nRollback: ", f);
    gate_md_escape(f, rb ? rb : "not stated in hypothesis.yaml");
    fputs(".\n", f);
    return gate_memstream_close(f, &buf, err);
}

static char *slurp(const char *path, golden_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        golden_fail_where(err, golden_code_from_errno(errno), strerror(errno), "%s", path);
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    char chunk[8192];
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + got + 1 > cap) {
            cap = (len + got + 1) * 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                gate_oom(err);
                return NULL;
            }
            buf = nb;
        }
        memcpy(buf + len, chunk, got);
        len += got;
    }
    fclose(f);
    if (!buf && !(buf = calloc(1, 1)))
        gate_oom(err);
    else
        buf[len] = 0;
    return buf;
}

/* The first line where two texts differ, for the refusal message. */
static void first_difference(const char *a, const char *b, char *out, size_t n)
{
    size_t line = 1;
    const char *la = a, *lb = b;
    while (*a && *a == *b) {
        if (*a == '\n') {
            line++;
            la = a + 1;
            lb = b + 1;
        }
        a++;
        b++;
    }
    int wa = (int)strcspn(la, "\n"), wb = (int)strcspn(lb, "\n");
    snprintf(out, n, "line %zu is \"%.*s\", exp-gate would write \"%.*s\"", line,
             wa > 120 ? 120 : wa, la, wb > 120 ? 120 : wb, lb);
}

/* Both texts into temporary files, flushed before either is renamed into place, so that a
 * full disk leaves neither; should the second rename fail, the first file's old text (or its
 * absence) is put back: decision.json and decision.md are a pair or nothing changes. */
static int write_pair(const char *jp, const char *json, const char *mdp, const char *md,
                      const char *old_md, golden_error *err)
{
    golden_outfile *fj = NULL, *fm = NULL;
    if (golden_outfile_open(jp, true, &fj, err) != 0)
        return -1;
    if (golden_outfile_open(mdp, true, &fm, err) != 0) {
        golden_outfile_abort(fj);
        return -1;
    }
    FILE *sj = golden_outfile_stream(fj), *sm = golden_outfile_stream(fm);
    if (fputs(json, sj) < 0 || fputs(md, sm) < 0 || fflush(sj) != 0 || fflush(sm) != 0 ||
        ferror(sj) || ferror(sm)) {
        int e = errno;
        golden_outfile_abort(fj);
        golden_outfile_abort(fm);
        return golden_fail_where(err, golden_code_from_errno(e ? e : EIO), strerror(e ? e : EIO),
                                 "%s (neither decision.json nor decision.md written)", jp);
    }
    if (golden_outfile_commit(fm, err) != 0) {
        golden_outfile_abort(fj);
        return -1;
    }
    if (golden_outfile_commit(fj, err) != 0) {
        golden_error ignore;
        golden_error_clear(&ignore);
        if (old_md)
            gate_write_text(mdp, old_md, true, &ignore);
        else
            unlink(mdp);
        return -1;
    }
    return 0;
}

int golden_gate_decision_write(const char *dir, const json_t *decision, bool force,
                               golden_error *err)
{
    char *md = golden_gate_decision_markdown(decision, err);
    char *mdp = gate_path(dir, "decision.md"), *jp = gate_path(dir, "decision.json");
    char *sealp = gate_path(dir, "SHA256SUMS");
    char *json = gate_dumps(decision);
    char *old = NULL, *old_json = NULL;
    int rc = -1;
    if (!md || !mdp || !jp || !json || !sealp) {
        if (md)
            gate_oom(err);
        goto out;
    }
    if (gate_validate("calculet-decision/v1", jp, json, err) != 0)
        goto out;
    struct stat st;
    if (stat(mdp, &st) == 0 && !(old = slurp(mdp, err)))
        goto out;
    if (stat(jp, &st) == 0 && !(old_json = slurp(jp, err)))
        goto out;
    bool same_md = old && !strcmp(old, md), same_json = old_json && !strcmp(old_json, json);
    if (old && !same_md && !force) {
        char diff[400];
        first_difference(old, md, diff, sizeof diff);
        rc = golden_fail_where(err, GOLDEN_EEXISTS, diff,
                               "%s (differs from the computed decision; --force replaces it)",
                               mdp);
        goto out;
    }
    /* A sealed folder was verified as it is: changing its decision breaks SHA256SUMS. */
    if (stat(sealp, &st) == 0 && (!same_md || !same_json) && !force) {
        rc = golden_fail_where(err, GOLDEN_EEXISTS,
                               "the folder is sealed and the decision files would change "
                               "(--force writes them; then reseal with manifest-verify --seal "
                               "--force)", "%s", sealp);
        goto out;
    }
    rc = same_md && same_json ? 0 : write_pair(jp, json, mdp, md, old, err);
out:
    free(old);
    free(old_json);
    free(md);
    free(mdp);
    free(jp);
    free(sealp);
    free(json);
    return rc;
}

/* Step 8: the section 7 summary recomputed from the delivered raw data (the delivered summary
 * must follow from it, never the other way round), and the section 17 decision from it, the
 * accuracy step and the fault log, in a section 3 experiment folder assembled from the
 * hand-off. acc_assemble copies that folder to -o. */
#include "accept/accept_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "golden/gate.h"
#include "util/vec.h"

static bool exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static int assemble_inputs(acc_ctx *c);

/* The team's hypothesis is usually still "planned" when the vendor delivers; in the folder
 * assembled from the delivered measurements it is "measured" (section 3: a planned experiment
 * has no raw data to decide on). Only a top-level "status: planned" line is rewritten. */
static int measured_status(const char *path, golden_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return golden_fail_what(err, GOLDEN_EIO, path, "cannot reopen the copy");
    char *text = NULL;
    size_t n = 0, cap = 0;
    char buf[8192];
    for (size_t k; (k = fread(buf, 1, sizeof buf, f)) > 0;) {
        if (vec_reserve(&text, &cap, n + k + 1, 1, sizeof buf) != 0) {
            free(text);
            fclose(f);
            return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        }
        memcpy(text + n, buf, k);
        n += k;
    }
    fclose(f);
    if (!text)
        return 0;
    text[n] = '\0';
    char *at = NULL;
    for (char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncmp(p, "status: planned", 15) && (p[15] == '\n' || p[15] == '\r' || p[15] == ' ' ||
                                                    p[15] == '\0')) {
            at = p;
            break;
        }
    int rc = 0;
    if (at) {
        FILE *o = fopen(path, "wb");
        if (!o || fwrite(text, 1, (size_t)(at - text), o) != (size_t)(at - text) ||
            fputs("status: measured", o) < 0 ||
            fwrite(at + 15, 1, n - (size_t)(at - text) - 15, o) != n - (size_t)(at - text) - 15)
            rc = golden_fail_what(err, GOLDEN_EIO, path, "cannot write the copy");
        if (o && fclose(o) != 0 && rc == 0)
            rc = golden_fail_what(err, GOLDEN_EIO, path, "cannot write the copy");
    }
    free(text);
    return rc;
}


/* The delivered files the decision reads, at their section 3 places (the whole folder, so that
 * the decision is taken on a folder every rule of manifest-verify can check). */
static int stage(acc_ctx *c, golden_accept_step *s, bool *ready)
{
    char p[PATH_MAX], to[PATH_MAX + 64];
    *ready = false;
    snprintf(to, sizeof to, "%s/hypothesis.yaml", c->work);
    if (acc_copy(c->o->hypothesis, to, c->err) != 0 || measured_status(to, c->err) != 0)
        return -1;
    acc_origin(c, "hypothesis.yaml", c->o->hypothesis);
    const char *raw = acc_role_path(c, "performance", "raw", "calculet-raw-request/v1", p,
                                    sizeof p);
    if (!raw || !exists(raw))
        return acc_fail(s, c->err, "handoff-missing", "handoff.json",
                        "item performance lists no usable calculet-raw-request/v1 raw data");
    snprintf(to, sizeof to, "%s/performance/raw-requests.jsonl", c->work);
    if (acc_copy(raw, to, c->err) != 0)
        return -1;
    acc_origin(c, "performance/raw-requests.jsonl", raw);
    const char *faults = acc_role_path(c, "error_path", "faults", "calculet-fault/v1", p,
                                       sizeof p);
    if (faults && exists(faults)) {
        snprintf(to, sizeof to, "%s/stability/faults.jsonl", c->work);
        if (acc_copy(faults, to, c->err) != 0)
            return -1;
        acc_origin(c, "stability/faults.jsonl", faults);
    }
    /* the delivered trace is the decision's device trace when it has exp-gate's columns */
    const char *trace = acc_role_path(c, "trace", "trace", NULL, p, sizeof p);
    if (trace && exists(trace) && strstr(trace, ".csv")) {
        FILE *f = fopen(trace, "r");
        char head[1024] = "";
        if (f) {
            if (!fgets(head, sizeof head, f))
                head[0] = '\0';
            fclose(f);
        }
        bool cols = strstr(head, "side") && strstr(head, "chip") && strstr(head, "family") &&
                    strstr(head, "start_cycle") && strstr(head, "end_cycle");
        snprintf(to, sizeof to, "%s/performance/raw-device-trace.csv", c->work);
        if (cols && acc_copy(trace, to, c->err) != 0)
            return -1;
        if (cols)
            acc_origin(c, "performance/raw-device-trace.csv", trace);
        if (!cols)
            acc_note(s, "the delivered trace lacks exp-gate's device-trace columns (side, chip, "
                     "family, start_cycle, end_cycle): not used by the decision");
    }
    if (assemble_inputs(c) != 0)
        return -1;
    snprintf(to, sizeof to, "%s/accuracy/result.json", c->work);
    if (!exists(to)) {
        s->verdict = GOLDEN_STEP_SKIPPED;
        snprintf(s->why, sizeof s->why, "no accuracy result: step 3 could not compare the "
                 "goldens, so no decision is made");
        return 0;
    }
    *ready = true;
    return 0;
}

int acc_step_performance(acc_ctx *c, golden_accept_step *s)
{
    bool ready = false;
    if (stage(c, s, &ready) != 0)
        return -1;
    if (!ready)
        return 0;
    golden_gate_opts go;
    golden_gate_opts_init(&go);
    go.threads = c->o->threads;
    char sp[PATH_MAX];
    const char *stored = acc_role_path(c, "performance", "summary", NULL, sp, sizeof sp);
    golden_doc *d = NULL;
    golden_error e;
    golden_error_clear(&e);
    if (stored && golden_doc_load_file(stored, &d, &e) != 0)
        return acc_fail(s, c->err, "summary-follows", stored, "does not parse: %s", e.what);
    /* The delivered summary is recomputed with the team's seed and resamples, and with the
     * generator it names when that is one of the documented ones (both give the resampling
     * distribution; the decision below uses the team's default either way). */
    golden_gate_opts mine = go;
    golden_gate_boot_gen gen;
    if (d && golden_gate_boot_gen_parse(json_string_value(json_object_get(
                json_object_get(golden_doc_root(d), "bootstrap"), "generator")), &gen) == 0)
        mine.generator = gen;
    json_t *computed = NULL;
    golden_error_clear(&e);
    if (golden_gate_summarize(c->work, &mine, &computed, &e) != 0) {
        golden_doc_free(d);
        if (e.code == GOLDEN_ENOMEM) {
            *c->err = e;
            return -1;
        }
        char sw[PATH_MAX + 64];
        return acc_fail(s, c->err, "summary",
                        e.where[0] ? acc_delivered(c, e.where, sw, sizeof sw)
                                   : "raw-requests.jsonl",
                        "the raw data cannot be summarised: %s", e.what);
    }
    int rc = 0;
    if (d) {
        size_t before = s->findings.errors;
        if (golden_gate_compare(golden_doc_root(d), computed, stored, &s->findings, c->err) != 0)
            rc = -1;
        else if (s->findings.errors == before)
            acc_note(s, "the delivered summary follows from the delivered raw data");
        golden_doc_free(d);
    } else {
        acc_note(s, "no summary delivered: computed from the raw data");
    }
    json_decref(c->r->summary);
    c->r->summary = computed; /* the --html page's latency boxes */
    if (rc)
        return rc;
    golden_gate_label label;
    golden_error_clear(&e);
    if (golden_gate_decide(c->work, &go, &c->r->decision, &label, &e) != 0) {
        if (e.code == GOLDEN_ENOMEM) {
            *c->err = e;
            return -1;
        }
        char dw[PATH_MAX + 64];
        return acc_fail(s, c->err, "decision",
                        e.where[0] ? acc_delivered(c, e.where, dw, sizeof dw) : c->work,
                        "no section 17 decision: %s", e.what);
    }
    snprintf(c->r->decision_label, sizeof c->r->decision_label, "%s",
             golden_gate_label_name(label));
    const char *rule = json_string_value(json_object_get(c->r->decision, "rule"));
    char dp[PATH_MAX + 32];
    snprintf(dp, sizeof dp, "%s/decision.json", c->work);
    if (acc_write_json(dp, c->r->decision, c->err) != 0)
        return -1;
    json_array_append_new(s->reports, json_string("decision.json"));
    s->report = json_incref(c->r->decision);
    /* the correctness rule fires on the accuracy and error-path steps' evidence: theirs to fail */
    if (label == GOLDEN_GATE_SOAK_24H || label == GOLDEN_GATE_MERGE ||
        (rule && strcmp(rule, "correctness") == 0)) {
        acc_note(s, "section 17 decision: %s (rule %s)", c->r->decision_label,
                 rule ? rule : "?");
        return 0;
    }
    const char *why = NULL;
    json_t *rules = json_object_get(c->r->decision, "rules");
    size_t i;
    json_t *x;
    json_array_foreach(rules, i, x)
        if (json_is_true(json_object_get(x, "fired")))
            why = json_string_value(json_object_get(x, "reason"));
    return acc_fail(s, c->err, "decision", "decision.json", "section 17 decision %s (rule %s): %s",
                    c->r->decision_label, rule ? rule : "none", why ? why : "");
}

static int copy_tree(const char *from, const char *to, bool force, golden_error *err);

/* Copy a delivered file named by the index (relative path rel) to the folder's rel2. */
static int put(acc_ctx *c, const char *rel, const char *rel2)
{
    if (!rel || !rel2 || strstr(rel, "..") || strstr(rel2, "..") || rel[0] == '/' ||
        rel2[0] == '/')
        return 0;
    char from[PATH_MAX], to[PATH_MAX + 64];
    snprintf(from, sizeof from, "%s/%s", c->o->handoff, rel);
    snprintf(to, sizeof to, "%s/%s", c->work, rel2);
    return exists(from) ? acc_copy(from, to, c->err) : 0;
}

/* Each case's token file, named relative to the input manifest's folder (as npu-replay writes
 * and reads it, and as manifest-verify checks it), copied to the same place beside the
 * folder's golden/input-manifest.jsonl. A file that is not there is left for the folder's
 * check to name. */
typedef struct {
    acc_ctx *c;
    const char *mdir; /* the manifest's folder, relative to the hand-off ("" = its root) */
    bool failed;      /* a copy failed: c->err says why */
} token_copy;

static int copy_token_file(void *ctx, golden_doc *line, size_t line_no, golden_error *err)
{
    (void)line_no;
    (void)err;
    token_copy *t = ctx;
    const char *p = json_string_value(
        json_object_get(json_object_get(golden_doc_root(line), "input"), "path"));
    if (!p)
        return 0;
    char from[PATH_MAX], to[PATH_MAX + 16];
    snprintf(from, sizeof from, "%s%s%s", t->mdir, t->mdir[0] ? "/" : "", p);
    snprintf(to, sizeof to, "golden/%s", p);
    if (put(t->c, from, to) != 0) {
        t->failed = true;
        return -1;
    }
    return 0;
}

/* The section 3 places of the compile manifests (with the calbin and log each names at its
 * own path) and of the input manifest (with its token files). */
static int assemble_inputs(acc_ctx *c)
{
    static const char *const roles[2] = {"baseline", "candidate"};
    char p[PATH_MAX];
    for (int k = 0; k < 2; k++) {
        const char *m = acc_role_path(c, "compile", roles[k], "calculet-calbin-manifest/v1", p,
                                      sizeof p);
        golden_doc *d = NULL;
        golden_error e;
        golden_error_clear(&e);
        if (!m || golden_doc_load_file(m, &d, &e) != 0) {
            golden_doc_free(d);
            continue;
        }
        char to[PATH_MAX + 64];
        snprintf(to, sizeof to, "%s/%s/manifest.json", c->work, roles[k]);
        json_t *r = golden_doc_root(d);
        const char *cal = json_string_value(json_object_get(json_object_get(r, "calbin"), "path"));
        const char *log = json_string_value(
            json_object_get(json_object_get(json_object_get(r, "compile"), "log"), "path"));
        int rc = acc_copy(m, to, c->err);
        char wr[32];
        snprintf(wr, sizeof wr, "%s/manifest.json", roles[k]);
        acc_origin(c, wr, m);
        rc = rc ? rc : put(c, cal, cal);
        rc = rc ? rc : put(c, log, log);
        golden_doc_free(d);
        if (rc)
            return -1;
    }
    const char *im = acc_role_path(c, "goldens", "input_manifest", NULL, p, sizeof p);
    if (!im)
        return 0;
    char to[PATH_MAX + 64];
    snprintf(to, sizeof to, "%s/golden/input-manifest.jsonl", c->work);
    if (acc_copy(im, to, c->err) != 0)
        return -1;
    acc_origin(c, "golden/input-manifest.jsonl", im);
    /* the manifest's folder relative to the hand-off: im is HANDOFF/REL */
    char mdir[PATH_MAX];
    size_t hl = strlen(c->o->handoff);
    snprintf(mdir, sizeof mdir, "%s", im + hl + 1);
    char *slash = strrchr(mdir, '/');
    if (slash)
        *slash = '\0';
    else
        mdir[0] = '\0';
    char from_dir[PATH_MAX + 8];
    snprintf(from_dir, sizeof from_dir, "%s/%s%s", c->o->handoff, mdir, mdir[0] ? "/" : "");
    acc_origin(c, "golden/", from_dir);
    token_copy t = {c, mdir, false};
    golden_error e;
    golden_error_clear(&e);
    /* a manifest that does not parse is step 1's finding; only a failed copy stops here */
    if (golden_doc_each_jsonl(im, copy_token_file, &t, &e) != 0 && (t.failed || e.code == GOLDEN_ENOMEM)) {
        if (!t.failed)
            *c->err = e;
        return -1;
    }
    return 0;
}

int acc_assemble(acc_ctx *c)
{
    struct stat st;
    if (!c->out_made && stat(c->o->experiment_out, &st) == 0 && !c->o->force)
        return golden_fail_what(c->err, GOLDEN_EEXISTS, c->o->experiment_out,
                                "exists (use --force to replace its files)");
    if (c->r->decision && golden_gate_decision_write(c->work, c->r->decision, true, c->err) != 0)
        return -1;
    /* step 9 wrote the team's replay straight into EXPERIMENT_DIR/team-replay (so that its
     * findings and fault messages name the kept files); it is sealed with the rest */
    char tr[PATH_MAX + 16];
    snprintf(tr, sizeof tr, "%s/team-replay", c->work);
    if (c->team[0] && copy_tree(c->team, tr, true, c->err) != 0)
        return -1;
    /* sealed when every rule of the experiment check passes (SHA256SUMS over every asset) */
    golden_experiment_opts eo;
    memset(&eo, 0, sizeof eo);
    eo.threads = c->o->threads;
    eo.seal = true;
    golden_findings f;
    golden_findings_init(&f);
    int rc = golden_experiment_check(c->work, &eo, &f, c->err);
    bool sealed = f.sealed;
    size_t errors = f.errors;
    golden_findings_free(&f);
    if (rc != 0)
        return -1;
    if (copy_tree(c->work, c->o->experiment_out, c->o->force, c->err) != 0)
        return -1;
    snprintf(c->r->experiment_state, sizeof c->r->experiment_state, "%s",
             sealed ? "sealed" : errors ? "not sealed: manifest-verify finds errors"
                                        : "not sealed");
    return 0;
}

#include <dirent.h>
static int copy_tree(const char *from, const char *to, bool force, golden_error *err)
{
    (void)force;
    if (acc_mkdirs(to, err) != 0)
        return -1;
    DIR *d = opendir(from);
    if (!d)
        return golden_fail_what(err, golden_code_from_errno(errno), from, "cannot read: %s",
                                strerror(errno));
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char a[PATH_MAX], b[PATH_MAX];
        snprintf(a, sizeof a, "%s/%s", from, e->d_name);
        snprintf(b, sizeof b, "%s/%s", to, e->d_name);
        struct stat st;
        if (lstat(a, &st) != 0)
            continue;
        rc = S_ISDIR(st.st_mode) ? copy_tree(a, b, force, err) : acc_copy(a, b, err);
    }
    closedir(d);
    return rc;
}

/* Step 9 (with a backend): the delivered runtime run by the team. The conformance suite
 * (golden_conform_run) against it, then a replay of the delivered input manifest through it
 * (golden_replay_run) that writes the team's own candidate golden and raw requests; that golden
 * is judged against the team's reference under the team's policy (three-way against the
 * production golden when given) and must reproduce the vendor's delivered candidate golden. */
#include "accept/accept_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "golden/conform.h"
#include "golden/policy.h"
#include "golden/replay.h"
#include "golden/replay_run.h"

/* The isolation of the runtime: the caller's, with the host's log kept in team-replay/ when
 * the experiment folder is assembled (buf holds it); NULL = in this process. */
static const golden_backend_isolation *team_iso(const acc_ctx *c, golden_backend_isolation *buf,
                                                char *log, size_t n)
{
    if (!c->o->iso)
        return NULL;
    *buf = *c->o->iso;
    snprintf(log, n, "%s/backend-host.log", c->team);
    if (!buf->log && c->o->experiment_out)
        buf->log = log;
    return buf;
}

/* The conformance suite: one finding a check that failed or could not run. */
static int conformance(acc_ctx *c, golden_accept_step *s, json_t *rep)
{
    const golden_accept_opts *o = c->o;
    golden_conform_opts co;
    memset(&co, 0, sizeof co);
    co.version = GOLDEN_CONFORM_OPTS_VERSION;
    co.backend = o->backend;
    co.model_dir = o->model_dir;
    co.n_opts = o->n_backend_opts;
    co.opts = o->backend_opts;
    co.threads = o->threads;
    co.checks = o->conform_checks;
    co.scratch_dir = c->base;
    golden_backend_isolation iso;
    char log[PATH_MAX + 32];
    co.iso = team_iso(c, &iso, log, sizeof log);
    golden_conform_report cr;
    memset(&cr, 0, sizeof cr);
    golden_error e;
    golden_error_clear(&e);
    if (golden_conform_run(&co, &cr, &e) != 0) {
        golden_conform_report_free(&cr);
        if (e.code == GOLDEN_ENOMEM) {
            *c->err = e;
            return -1;
        }
        return acc_fail(s, c->err, "conform", o->backend, "the conformance suite cannot run "
                        "against the delivered runtime: %s", e.what);
    }
    size_t passed = 0;
    int rc = 0;
    for (size_t i = 0; i < cr.n && rc == 0; i++) {
        const golden_conform_check *k = &cr.checks[i];
        if (k->status == GOLDEN_CONFORM_PASS)
            passed++;
        else if (k->status == GOLDEN_CONFORM_FAIL)
            rc = acc_fail(s, c->err, "conform", k->name, "%zu finding(s) of %zu comparison(s)"
                          "%s%s%s%s", k->n_findings, k->comparisons,
                          k->n_findings ? ", first " : "",
                          k->n_findings ? k->findings[0].kase : "",
                          k->n_findings ? ": " : "", k->n_findings ? k->findings[0].what : "");
        else if (k->status != GOLDEN_CONFORM_SKIPPED) /* skipped: neither passed nor failed */
            rc = acc_fail(s, c->err, "conform", k->name, "could not run against the delivered "
                          "runtime: %s", k->error);
    }
    if (rc == 0 && passed == 0) /* none ran, or every one was skipped */
        rc = acc_fail(s, c->err, "conform", o->backend, "no conformance check ran");
    json_t *j = rc == 0 ? golden_conform_json(&cr) : NULL;
    if (j)
        json_object_set_new(rep, "conform", j);
    if (rc == 0)
        acc_note(s, "%zu of %zu conformance check(s) passed against %s", passed, cr.n,
                 o->backend);
    golden_conform_report_free(&cr);
    return rc;
}

/* The team's golden against ref (three-way against base) under the team's policy; the failing
 * tensors as findings. *diffed = tensors compared. */
static int judge(acc_ctx *c, golden_accept_step *s, const golden_policy *pol, const char *ref,
                 const char *base, const char *path, const char *what, size_t *diffed)
{
    golden_diff_opts d = GOLDEN_DIFF_OPTS_INIT;
    d.reference = ref;
    d.candidate = path;
    d.baseline = base;
    d.policy = pol;
    d.threads = c->o->threads;
    /* findings name a file the reader can open after the run: with -o the kept copy, else
     * say that it was temporary */
    const char *mine = c->o->experiment_out ? path
                                            : "the team's replay golden (temporary, not kept: "
                                              "-o EXPERIMENT_DIR keeps it in team-replay/)";
    golden_diff_result *r = NULL;
    golden_error e;
    golden_error_clear(&e);
    if (golden_diff_run(&d, &r, &e) != 0) {
        golden_diff_free(r);
        if (e.code == GOLDEN_ENOMEM) {
            *c->err = e;
            return -1;
        }
        return acc_fail(s, c->err, "replay-accuracy", mine, "the team's replay golden cannot "
                        "be compared with %s: %s", what, e.what);
    }
    size_t before = s->findings.errors;
    int rc = acc_diff_findings(c, s, r, mine);
    if (rc == 0 && s->findings.errors > before)
        rc = acc_fail(s, c->err, "replay-accuracy", mine, "the golden the team made with the "
                      "delivered runtime fails against %s (%zu of %zu tensor(s) failed)", what,
                      r->failed, r->n);
    *diffed = r->n;
    golden_diff_free(r);
    return rc;
}

/* The replay of the delivered input manifest through the runtime: the team's candidate golden
 * and raw requests in base/team/. */
static int replay(acc_ctx *c, golden_accept_step *s, const char *manifest, char *golden,
                  size_t gn, json_t *rep)
{
    const golden_accept_opts *o = c->o;
    char raw[PATH_MAX + 32], faults[PATH_MAX + 32], log[PATH_MAX + 32];
    snprintf(golden, gn, "%s/candidate.h5", c->team);
    snprintf(raw, sizeof raw, "%s/raw-requests.jsonl", c->team);
    snprintf(faults, sizeof faults, "%s/faults.jsonl", c->team);
    golden_backend_isolation iso;
    golden_backend_load_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.version = 2;
    lo.iso = team_iso(c, &iso, log, sizeof log);
    lo.spec = o->backend;
    lo.model_dir = o->model_dir;
    lo.n_opts = o->n_backend_opts;
    lo.opts = o->backend_opts;
    lo.threads = o->threads;
    golden_backend *b = NULL;
    golden_error e;
    golden_error_clear(&e);
    if (golden_backend_load(&lo, &b, &e) != 0) {
        if (e.code == GOLDEN_ENOMEM) {
            *c->err = e;
            return -1;
        }
        return acc_fail(s, c->err, "replay", o->backend, "the delivered runtime does not "
                        "load: %s", e.what);
    }
    golden_replay_run_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.version = 3;
    ro.backend = b;
    ro.manifest = manifest;
    ro.side = "candidate";
    ro.golden = golden;
    ro.raw = raw;
    ro.warmup = o->replay_warmup;
    ro.runs = o->replay_runs;
    ro.taps = "all";
    ro.force = true;
    ro.check_rejection = true;
    ro.producer = "golden-accept";
    ro.faults = faults;
    golden_replay_run_result res;
    memset(&res, 0, sizeof res);
    int rc = golden_replay_run(&ro, &res, &e);
    golden_backend_close(b);
    if (rc != 0) {
        if (e.code == GOLDEN_ENOMEM) {
            *c->err = e;
            return -1;
        }
        return acc_fail(s, c->err, "replay", manifest, "the replay through the delivered "
                        "runtime failed: %s", e.what);
    }
    if (res.cases == 0 || res.requests == 0)
        return acc_fail(s, c->err, "replay", manifest, "the replay ran no request");
    if (res.rejection_checked && !res.rejection_refused)
        return acc_fail(s, c->err, "replay", manifest, "the delivered runtime accepted "
                        "rejection case %s%s%s", res.rejection_case,
                        res.rejection_other[0] ? ": " : "", res.rejection_other);
    json_object_set_new(rep, "replay",
                        json_pack("{s:I,s:I,s:I,s:b}", "cases", (json_int_t)res.cases,
                                  "requests", (json_int_t)res.requests, "skipped_rejections",
                                  (json_int_t)res.skipped_rejections, "rejection_refused",
                                  res.rejection_refused));
    acc_note(s, "replay of %s through %s: %zu case(s), %zu request(s) of raw data, the team's "
             "own candidate golden", manifest, o->backend, res.cases, res.requests);
    return 0;
}

int acc_runtime_opts_check(const golden_accept_opts *o, golden_error *err)
{
    if (o->version < 2 || !o->backend)
        return 0;
    if (!o->model_dir)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "--backend needs --model DIR");
    if (strcmp(o->backend, "cpu") != 0 && !o->iso)
        return golden_fail_what(err, GOLDEN_EINVAL, o->backend, "a plug-in runs only in a "
                                "backend host (golden_accept_opts.iso)");
    /* the model is the team's input (the conformance suite's cpu reference runs it too): one
     * that the built-in cpu backend cannot open is "could not check", before any step runs,
     * never the vendor's step 9 failure */
    struct stat st;
    if (stat(o->model_dir, &st) != 0)
        return golden_fail_what(err, golden_code_from_errno(errno), o->model_dir,
                                "--model: cannot read: %s", strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return golden_fail_what(err, GOLDEN_EINVAL, o->model_dir, "--model: not a folder");
    golden_backend_load_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.version = 1;
    lo.spec = "cpu";
    lo.model_dir = o->model_dir;
    lo.threads = 1;
    golden_backend *b = NULL;
    golden_error e;
    golden_error_clear(&e);
    if (golden_backend_load(&lo, &b, &e) != 0)
        return golden_fail_what(err, e.code == GOLDEN_ENOMEM ? GOLDEN_ENOMEM : GOLDEN_EINVAL,
                                o->model_dir, "--model: not a model folder: %s", e.what);
    golden_backend_close(b);
    for (const char *p = o->conform_checks; p && *p;) {
        size_t len = strcspn(p, ",");
        bool known = false;
        for (const char *const *n = golden_conform_check_names(); *n && !known; n++)
            known = strlen(*n) == len && strncmp(*n, p, len) == 0;
        if (!known)
            return golden_fail_what(err, GOLDEN_EINVAL, NULL, "unknown conformance check "
                                    "'%.*s'", (int)(len > 64 ? 64 : len), p);
        p += len + (p[len] == ',');
    }
    return 0;
}

int acc_step_runtime(acc_ctx *c, golden_accept_step *s)
{
    const golden_accept_opts *o = c->o;
    if (!o->model_dir)
        return golden_fail_what(c->err, GOLDEN_EINVAL, NULL, "--backend needs --model DIR");
    golden_policy *team = golden_policy_new();
    json_t *rep = json_object();
    if (!team || !rep) {
        golden_policy_free(team);
        json_decref(rep);
        return golden_fail_what(c->err, GOLDEN_ENOMEM, NULL, "out of memory");
    }
    int rc = -1;
    if (o->policy && golden_policy_load(team, o->policy, c->err) != 0)
        goto done;
    /* the team's replay is kept in the experiment folder (issue 30: the team's own raw data) */
    if (o->experiment_out) {
        c->out_made = access(o->experiment_out, F_OK) != 0;
        snprintf(c->team, sizeof c->team, "%.*s/team-replay", PATH_MAX - 16, o->experiment_out);
    } else {
        snprintf(c->team, sizeof c->team, "%.*s/team", PATH_MAX - 16, c->base);
    }
    if (acc_mkdirs(c->team, c->err) != 0)
        goto done;
    rc = conformance(c, s, rep);
    char mp[PATH_MAX], cp[PATH_MAX], mine[PATH_MAX + 64];
    const char *m = acc_role_path(c, "goldens", "input_manifest", "calculet-input-manifest/v1",
                                  mp, sizeof mp);
    const char *cand = acc_role_path(c, "goldens", "golden", NULL, cp, sizeof cp);
    if (rc == 0 && !m)
        rc = acc_fail(s, c->err, "handoff-missing", "handoff.json", "item goldens lists no "
                      "usable input manifest: nothing to replay");
    /* the replay runs even when a conformance check failed: every finding is reported */
    size_t before = s->findings.errors;
    if (rc >= 0 && m)
        rc = replay(c, s, m, mine, sizeof mine, rep);
    size_t n_ref = 0, n_vendor = 0;
    if (rc >= 0 && m && s->findings.errors == before) {
        rc = judge(c, s, team, o->golden, o->baseline, mine, o->golden, &n_ref);
        /* the vendor's golden must be what its runtime gives: every delivered tensor found in
         * the team's replay golden (which may hold more taps) and equal under the team's
         * policy */
        if (rc >= 0 && cand)
            rc = judge(c, s, team, cand, NULL, mine, "the delivered candidate golden",
                       &n_vendor);
        if (rc == 0)
            acc_note(s, "the team's replay golden: %zu tensor(s) judged against %s%s, %zu "
                     "against the delivered candidate golden", n_ref, o->golden,
                     o->baseline ? " (three-way)" : "", n_vendor);
    }
    s->report = rep;
    rep = NULL;
done:
    json_decref(rep);
    golden_policy_free(team);
    return rc < 0 ? -1 : 0;
}

/* One experiment folder checked against every rule, in order: layout, hypothesis, manifests,
 * accuracy, input matrix, performance, calibration, then hashes and the seal. */
#include "exp/internal.h"
#include "exp/check_internal.h"
#include "golden/hash.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void exp_jl_state_free(jl_state *s)
{
    for (size_t i = 0; i < s->ncases; i++) {
        free(s->cases[i].id);
        free(s->cases[i].input);
    }
    free(s->cases);
    lg_strmap_free(&s->case_index);
    for (size_t i = 0; i < s->nsamples; i++)
        free(s->sample_ids[i]);
    free(s->sample_ids);
    lg_strmap_free(&s->sample_index);
    free(s->tally);
    lg_strmap_free(&s->tally_index);
    for (size_t i = 0; i < s->nid_copies; i++)
        free(s->id_copies[i]);
    free(s->id_copies);
    lg_strmap_free(&s->request_ids);
}

/* One experiment check: the folder, its documents and the four JSON Lines passes. */
typedef struct {
    vctx c;
    schema_cache sc;
    golden_doc *h, *bm, *cm, *acc, *sum; /* hypothesis, manifests, accuracy, summary */
    jl_state in, req, flt, cal;         /* inputs, raw requests, faults, calibration */
} exp_run;

static void exp_run_free(exp_run *r)
{
    exp_jl_state_free(&r->in);
    exp_jl_state_free(&r->req);
    exp_jl_state_free(&r->flt);
    exp_jl_state_free(&r->cal);
    golden_doc_free(r->h);
    golden_doc_free(r->bm);
    golden_doc_free(r->cm);
    golden_doc_free(r->acc);
    golden_doc_free(r->sum);
    exp_schema_cache_free(&r->sc);
    exp_vctx_free(&r->c);
}

static int experiment_id_agrees(vctx *c, const golden_doc *h, const golden_doc *d)
{
    if (!h || !d)
        return GOLDEN_OK;
    const char *hid = exp_sget(golden_doc_root(h), "experiment_id");
    const char *id = exp_sget(golden_doc_root(d), "experiment_id");
    if (hid && id && strcmp(hid, id) != 0)
        return exp_add_node(c, GOLDEN_SEV_ERROR, "exp-id", d, "/experiment_id",
                            "experiment_id '%s' differs from the hypothesis's '%s'", id, hid);
    return GOLDEN_OK;
}

/* The whole documents: layout, hypothesis, manifests (alone, in pair, their commands), the
 * accuracy result against everything it could contradict. */
static int check_documents(exp_run *r)
{
    vctx *c = &r->c;
    if (exp_folder_doc(c, &r->sc, "hypothesis.yaml", "calculet-op-experiment/v1", &r->h) != 0)
        return GOLDEN_ERR;
    const char *status = r->h ? exp_sget(golden_doc_root(r->h), "status") : NULL;
    bool planned = status && strcmp(status, "planned") == 0;
    if (exp_layout_rules(c, planned) != 0 ||
        (r->h && exp_rules_hypothesis(c, r->h, planned) != 0))
        return GOLDEN_ERR;
    if (exp_folder_doc(c, &r->sc, "baseline/manifest.json", "calculet-calbin-manifest/v1",
                       &r->bm) != 0 ||
        exp_folder_doc(c, &r->sc, "candidate/manifest.json", "calculet-calbin-manifest/v1",
                       &r->cm) != 0 ||
        exp_folder_doc(c, &r->sc, "accuracy/result.json", "calculet-accuracy-result/v1",
                       &r->acc) != 0 ||
        exp_folder_doc(c, &r->sc, "performance/summary.json", "calculet-perf-summary/v1",
                       &r->sum) != 0)
        return GOLDEN_ERR;
    /* the 24 h soak's result, once there (exp-gate decide reads it; sealed like the rest) */
    golden_doc *soak = NULL;
    int soak_rc = exp_folder_doc(c, &r->sc, "stability/soak.json", "calculet-soak-result/v1",
                                 &soak);
    golden_doc_free(soak);
    if (soak_rc != 0)
        return GOLDEN_ERR;
    if ((r->h && r->bm && exp_rules_manifest(c, r->h, r->bm, "baseline") != 0) ||
        (r->h && r->cm && exp_rules_manifest(c, r->h, r->cm, "candidate") != 0) ||
        (r->bm && r->cm && exp_rules_manifest_pair(c, r->h, r->bm, r->cm) != 0) ||
        (r->bm && exp_command_agrees(c, r->bm) != 0) ||
        (r->cm && exp_command_agrees(c, r->cm) != 0))
        return GOLDEN_ERR;
    if (experiment_id_agrees(c, r->h, r->acc) || experiment_id_agrees(c, r->h, r->sum))
        return GOLDEN_ERR;
    return r->acc ? exp_accuracy_agrees(c, &r->sc, r->h, r->acc) : GOLDEN_OK;
}

/* The JSON Lines files, one line at a time: inputs first (the requests look their cases up). */
static int check_lines(exp_run *r)
{
    vctx *c = &r->c;
    json_t *hroot = r->h ? golden_doc_root(r->h) : NULL;
    json_t *limit = exp_ptr_get(hroot, "/matrix/context_limit");
    r->in.c = r->req.c = r->flt.c = r->cal.c = c;
    r->in.limit = GOLDEN_CONTEXT_LIMIT;
    if (limit &&
        exp_int_at(c, r->h, limit, "/matrix/context_limit", "context-limit", &r->in.limit) < 0)
        return GOLDEN_ERR;
    bool seen;
    if (exp_folder_jsonl(c, &r->sc, "golden/input-manifest.jsonl", "calculet-input-manifest/v1",
                         exp_input_line, &r->in, &seen) != 0)
        return GOLDEN_ERR;
    if (seen && (exp_input_matrix_rules(&r->in, r->h, "golden/input-manifest.jsonl") != 0 ||
                 exp_input_minimums_rule(&r->in, r->h, "golden/input-manifest.jsonl") != 0))
        return GOLDEN_ERR;
    r->req.inputs = seen ? &r->in : NULL;
    /* parse and schema on c->threads workers, the rest in file order (issue 26's speed) */
    lg_jsonl_par par = {c->threads, 0, sizeof(exp_request_slot), exp_request_prep, NULL,
                        exp_request_take, NULL, exp_request_slot_clear};
    if (exp_perf_tally_setup(&r->req, r->sum) != 0 ||
        exp_folder_jsonl_par(c, &r->sc, "performance/raw-requests.jsonl",
                             "calculet-raw-request/v1", &par, &r->req, &seen) != 0)
        return GOLDEN_ERR;
    if (r->req.hook)
        r->req.hook->read = seen;
    if (seen && r->sum && exp_perf_rules(&r->req, r->sum) != 0)
        return GOLDEN_ERR;
    if (exp_folder_jsonl(c, &r->sc, "stability/faults.jsonl", "calculet-fault/v1",
                         exp_fault_line, &r->flt, &seen) != 0)
        return GOLDEN_ERR;
    const char *tok = json_string_value(exp_ptr_get(hroot, "/controlled/tokenizer_hash"));
    r->cal.expected_tokenizer = tok && golden_is_sha256_hex(tok) ? tok : NULL;
    if (exp_folder_jsonl(c, &r->sc, "golden/calibration-manifest.jsonl",
                         "calculet-calibration-manifest/v1", exp_calibration_line, &r->cal,
                         &seen) != 0)
        return GOLDEN_ERR;
    return exp_tokenizer_rule(c, r->h, seen ? &r->cal : NULL);
}

/* Every hash at once (artifacts, the old seal's lines, or every asset for a new seal), then the
 * new seal when no rule failed. */
static int check_hashes(exp_run *r, bool has_seal, bool seal, bool force)
{
    vctx *c = &r->c;
    char **sp = NULL;
    char (*sh)[65] = NULL;
    size_t sn = 0;
    int rc = GOLDEN_ERR;
    if (has_seal && !seal && exp_seal_verify(c) != 0)
        return GOLDEN_ERR;
    for (size_t i = 0; seal && i < c->nassets; i++)
        if (strcmp(c->assets[i], SEAL_FILE) != 0 &&
            exp_add_job(c, c->assets[i], NULL, "seal", NULL))
            return GOLDEN_ERR;
    if (exp_run_jobs(c, seal ? &sp : NULL, seal ? &sh : NULL, &sn) != 0)
        goto done;
    if (seal && c->out->errors == 0 && exp_seal_write(c, force, sp, sh, sn) != 0)
        goto done;
    rc = GOLDEN_OK;
done:
    for (size_t i = 0; i < sn; i++)
        free(sp[i]);
    free(sp);
    free(sh);
    return rc;
}

int golden_experiment_check(const char *dir, const golden_experiment_opts *opts,
                            golden_findings *out, golden_error *err)
{
    return lg_experiment_check_hooked(dir, opts, out, NULL, err);
}

int lg_experiment_check_hooked(const char *dir, const golden_experiment_opts *opts,
                               golden_findings *out, lg_exp_raw_hook *hook, golden_error *err)
{
    exp_run r;
    memset(&r, 0, sizeof r);
    r.req.hook = hook;
    if (hook)
        hook->read = hook->failed = false;
    bool seal = opts && opts->seal, force = opts && opts->force;
    int rc = GOLDEN_ERR;
    if (exp_vctx_init(&r.c, dir, opts, out, err) != 0)
        goto done;
    char sealpath[PATH_MAX * 2];
    snprintf(sealpath, sizeof sealpath, "%s/%s", r.c.root, SEAL_FILE);
    struct stat st;
    bool has_seal = lstat(sealpath, &st) == 0;
    if (seal && has_seal && !force) {
        golden_fail_what(err, GOLDEN_EEXISTS, sealpath, "already sealed; use --force to seal again");
        goto done;
    }
    if (exp_assets_find(&r.c) == 0 && check_documents(&r) == 0 && check_lines(&r) == 0 &&
        check_hashes(&r, has_seal, seal, force) == 0)
        rc = GOLDEN_OK;
done:
    exp_run_free(&r);
    return rc;
}

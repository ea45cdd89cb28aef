/* golden-diff: judge candidate tensors against reference goldens under a tolerance policy.
 * Options in, libgolden's diff run, a table / JSON / JUnit out; exit 0 pass, 1 fail, 2 error. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/diff_ranks.h"
#include "common/ranks.h"
#include "golden/diff.h"
#include "golden/html.h"
#include "golden/report.h"

#define TOOL "golden-diff"

enum {
    O_POLICY = CLI_TOOL_ID, O_TIER, O_ATOL, O_RTOL, O_EPS, O_BASELINE, O_MAP, O_ONLY, O_ALLOW,
    O_CHUNK, O_EMPTY, O_TRUST, O_HTML, O_HIST, O_EXPLAIN, O_ALLOW_CAND
};

/* The option table: parsing and --help both come from it. Rows may be added freely. */
static const cli_option options[] = {
    {0, 0, NULL, NULL, "Policy:", 0},
    {O_POLICY, 'p', "policy", "FILE", "tolerance policy (YAML or JSON, calculet-diff-policy/v1);\n"
     "repeatable: files layer in order, later ones win", CLI_INPUT},
    {O_TIER, 't', "tier", "NAME", "judge every tensor at this tier (kernel|layer|logits|tokens|router)", 0},
    {O_ATOL, 0, "atol", "X", "absolute tolerance for every tensor (kernel tier)", 0},
    {O_RTOL, 0, "rtol", "X", "relative tolerance for every tensor (kernel tier)", 0},
    {O_EPS, 0, "eps", "X", "max_rel denominator floor: |c-r| / max(|r|, eps)", 0},
    {O_BASELINE, 'b', "baseline", "FILE", "three-way: also judge FILE against the reference; a "
     "failed\ncheck is excused when the candidate's error is within the\npolicy's "
     "baseline_ratio of the baseline's", CLI_INPUT},
    {0, 0, NULL, NULL, "Selection:", 0},
    {O_MAP, 'm', "map", "FILE", "rename candidate/baseline tensors (policy file with \"map\")",
     CLI_INPUT},
    {O_ONLY, 0, "only", "GLOB", "compare only reference names matching GLOB (repeatable)", 0},
    {O_ALLOW_CAND, 0, "allow-missing-in-candidate", "GLOB", "reference tensors matching GLOB may be "
     "missing from the candidate\n(repeatable; a logits or tokens tensor only when GLOB is its "
     "exact name)", 0},
    {O_ALLOW, 0, "allow-missing", NULL, "refused: name what may be missing with\n"
     "--allow-missing-in-candidate GLOB", 0},
    {O_EMPTY, 0, "allow-empty", NULL, "comparing no tensor at all does not fail the run", 0},
    {O_TRUST, 0, "trust-hashes", NULL, "do not check each tensor's data against its stored sha256",
     0},
    {O_EXPLAIN, 0, "explain", "TENSOR", "print which rule, table or option set each field of\n"
     "TENSOR's judge (a reference name), and compare nothing", 0},
    {O_HTML, 0, "html", "FILE", "self-contained HTML report with plots (docs/reports.md)",
     CLI_OUTPUT},
    {O_HIST, 0, "histogram", NULL, "count each tensor's |c - r| into log2 bins and put them in the\n"
     "JSON report as abs_error_histogram (--html implies it)", 0},
    {0, 0, NULL, NULL, "Work:", 0},
    {O_CHUNK, 0, "chunk", "N", "elements per work item (default 1048576)", 0},
    {0, 0, NULL, NULL, NULL, 0},
};

static const cli_spec spec = {
    .name = TOOL,
    .synopsis = "[OPTIONS] REFERENCE.h5 CANDIDATE.h5",
    .about = "Compare candidate tensors with reference (golden) tensors, pairing them by name,\n"
             "and judge each one by its tier: kernel, layer, logits, tokens or router.",
    .options = options,
    .json_help = "calculet-diff-report/v1 JSON (- = stdout, no table then)",
    .junit_help = "JUnit XML, one test case per tensor (- = stdout)",
    .exit_status = "0 every tensor passed, 1 a tensor failed or is missing, 2 could not\n"
                   "compare (bad usage, unreadable or invalid input).",
    .args_are_inputs = true,
};

static int parse_num(cli *c, const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 0) {
        cli_usage(c, "%s: expected a number >= 0, got '%s'", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

/* Options as parsed; the common ones are in struct cli. */
typedef struct {
    const char *tier_name, *baseline, *html, *explain;
    const char **policies, **maps, **only, **allow_cand;
    size_t n_policies, n_maps, n_only, n_allow_cand;
    double atol, rtol, eps;
    bool allow_empty, trust_hashes, histogram;
    uint64_t chunk;
} diff_args;

/* Read the tool's options: 0 to go on, else the exit status (printed). */
static int parse(cli *c, diff_args *a)
{
    const char *v;
    double num;
    int id;
    while ((id = cli_next(c, &v)) > 0) {
        switch (id) {
        case O_POLICY: a->policies[a->n_policies++] = v; break;
        case O_TIER: a->tier_name = v; break;
        case O_ATOL: if (parse_num(c, "--atol", v, &a->atol)) return 2; break;
        case O_RTOL: if (parse_num(c, "--rtol", v, &a->rtol)) return 2; break;
        case O_EPS: if (parse_num(c, "--eps", v, &a->eps)) return 2; break;
        case O_BASELINE: a->baseline = v; break;
        case O_MAP: a->maps[a->n_maps++] = v; break;
        case O_ONLY: a->only[a->n_only++] = v; break;
        case O_ALLOW:
            return cli_usage(c, "--allow-missing is split: name the reference tensors that may "
                                "be missing with --allow-missing-in-candidate GLOB (tensors only "
                                "in the candidate are reported as not judged and do not fail)");
        case O_ALLOW_CAND: a->allow_cand[a->n_allow_cand++] = v; break;
        case O_EXPLAIN: a->explain = v; break;
        case O_EMPTY: a->allow_empty = true; break;
        case O_TRUST: a->trust_hashes = true; break;
        case O_HTML: a->html = v; break;
        case O_HIST: a->histogram = true; break;
        case O_CHUNK:
            if (parse_num(c, "--chunk", v, &num))
                return 2;
            if (num < 1 || num > 1e9 || num != floor(num))
                return cli_usage(c, "--chunk: expected an integer from 1 to 1000000000");
            a->chunk = (uint64_t)num;
            break;
        default: break;
        }
    }
    if (id == CLI_EXIT)
        return c->status ? c->status : -1;
    if (c->nargs != 2)
        return cli_usage(c, "expected two files: REFERENCE.h5 CANDIDATE.h5");
    /* the policy file is read twice (tolerances, then its "map"): a stream cannot be */
    for (size_t i = 0; i < a->n_policies; i++)
        if (strcmp(a->policies[i], "-") == 0)
            return cli_usage(c, "--policy needs a file, not '-' (it is read for tolerances and names)");
    return 0;
}

/* --explain: the judge of one reference tensor, field by field; 0, 2 (not in the reference),
 * or -1 with err set. */
static int explain(cli *c, const golden_policy *policy, const char *name, golden_error *err)
{
    golden_reader *r = NULL;
    if (golden_reader_open_flags(c->args[0], GOLDEN_READ_DATA_ONLY, &r, err) != 0)
        return -1;
    long i = golden_reader_find(r, name);
    if (i < 0) {
        golden_reader_close(r);
        fprintf(stderr, TOOL ": %s: no tensor \"%s\" to explain\n", c->args[0], name);
        return 2;
    }
    const golden_tensor_info *t = golden_reader_tensor(r, (size_t)i);
    char *s = golden_policy_explain(policy, name, t->dtype, t->dtype, t->rank);
    golden_reader_close(r);
    if (!s) {
        golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        return -1;
    }
    FILE *out = cli_human(c);
    if (out)
        fputs(s, out);
    free(s);
    return 0;
}

int main(int argc, char **argv)
{
    cli c;
    if (cli_init(&c, &spec, argc, argv) != 0)
        return cli_exit(&c, 2);
    diff_args a = {.atol = NAN, .rtol = NAN, .eps = NAN};
    a.maps = calloc((size_t)argc + 1, sizeof *a.maps);
    a.only = calloc((size_t)argc + 1, sizeof *a.only);
    a.policies = calloc((size_t)argc + 1, sizeof *a.policies);
    a.allow_cand = calloc((size_t)argc + 1, sizeof *a.allow_cand);
    int status = 2;
    golden_policy *policy = NULL;
    golden_namemap *map = NULL;
    golden_diff_result *res = NULL;
    golden_error err;
    golden_error_clear(&err);
    if (!a.maps || !a.only || !a.policies || !a.allow_cand) {
        fprintf(stderr, TOOL ": out of memory\n");
        goto done;
    }
    int prc = parse(&c, &a);
    if (prc != 0) {
        status = prc < 0 ? 0 : prc;
        goto done;
    }
    if (cli_outputs_ok(&c) != 0)
        goto done;
    policy = golden_policy_new();
    map = golden_namemap_new();
    if (!policy || !map) {
        fprintf(stderr, TOOL ": out of memory\n");
        goto done;
    }
    if (a.tier_name) {
        golden_tier t;
        if (golden_tier_parse(a.tier_name, &t) != 0) {
            status = cli_usage(&c, "--tier: expected kernel, layer, logits, tokens or router");
            goto done;
        }
        golden_policy_force_tier(policy, t);
    }
    /* several --policy files layer in order: a later file's values and rules win */
    for (size_t i = 0; i < a.n_policies; i++)
        if (golden_policy_load(policy, a.policies[i], &err) != 0 ||
            golden_namemap_load(map, a.policies[i], &err) != 0)
            goto fail;
    golden_policy_override(policy, a.atol, a.rtol, a.eps);
    for (size_t i = 0; i < a.n_maps; i++)
        if (golden_namemap_load(map, a.maps[i], &err) != 0)
            goto fail;

    if (a.explain) {
        status = explain(&c, policy, a.explain, &err);
        if (status < 0)
            goto fail;
        goto done;
    }
    golden_progress progress;
    memset(&progress, 0, sizeof progress);
    golden_diff_opts o = {
        .reference = c.args[0],
        .candidate = c.args[1],
        .baseline = a.baseline,
        .policy = policy,
        .map = map,
        .only = a.only,
        .n_only = a.n_only,
        .allow_missing_in_candidate = a.allow_cand,
        .n_allow_missing_in_candidate = a.n_allow_cand,
        .threads = c.threads ? c.threads : golden_threads(),
        .chunk_elems = a.chunk,
        .progress = &progress,
        .allow_empty = a.allow_empty,
        .trust_hashes = a.trust_hashes,
        .histogram = a.histogram || a.html,
    };
    /* under mpirun (make MPI=1) the ranks share the tensors; rank 0 writes everything */
    bool root = true;
    if (diff_ranks_run(&o, &res, &root, &err) != 0 || !root) {
        status = 2;
        if (root)
            goto fail;
        goto done;
    }
    if (c.json || a.html) {
        json_t *doc = golden_diff_to_json(res);
        if (!doc) {
            golden_fail_what(&err, GOLDEN_ENOMEM, c.json, "out of memory building the report");
            goto fail;
        }
        int rc = c.json ? golden_json_write(c.json, doc, c.force, &err) : 0;
        if (rc == 0 && a.html)
            rc = golden_html_diff_report(doc, a.html, c.force, &err);
        json_decref(doc);
        if (rc != 0)
            goto fail;
    }
    if (c.junit && golden_diff_junit(res, c.junit, c.force, &err) != 0)
        goto fail;
    FILE *human = cli_human(&c);
    if (human) {
        char *table = golden_diff_table(res, golden_use_color(human) && !ranks_launched());
        if (!table) {
            golden_fail_what(&err, GOLDEN_ENOMEM, NULL, "out of memory for the table");
            goto fail;
        }
        fputs(table, human);
        free(table);
    }
    status = res->pass ? 0 : 1;
    goto done;
fail:
    status = cli_fail(&c, &err);
done:
    golden_diff_free(res);
    golden_namemap_free(map);
    golden_policy_free(policy);
    free(a.maps);
    free(a.only);
    free(a.policies);
    free(a.allow_cand);
    return cli_exit(&c, ranks_finish(status));
}

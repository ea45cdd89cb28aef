/* golden-diff: judge candidate tensors against reference goldens under a tolerance policy.
 * Options in, libgolden's diff run, a table / JSON / JUnit out; exit 0 pass, 1 fail, 2 error. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "golden/diff.h"
#include "golden/report.h"

#define TOOL "golden-diff"

enum {
    O_POLICY = CLI_TOOL_ID, O_TIER, O_ATOL, O_RTOL, O_EPS, O_BASELINE, O_MAP, O_ONLY, O_ALLOW,
    O_CHUNK
};

/* The option table: parsing and --help both come from it. Rows may be added freely. */
static const cli_option options[] = {
    {0, 0, NULL, NULL, "Policy:", 0},
    {O_POLICY, 'p', "policy", "FILE", "tolerance policy (YAML or JSON, calculet-diff-policy/v1)",
     CLI_INPUT},
    {O_TIER, 't', "tier", "NAME", "judge every tensor at this tier (kernel|layer|logits|tokens)", 0},
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
    {O_ALLOW, 0, "allow-missing", NULL, "tensors present on one side only do not fail the run", 0},
    {0, 0, NULL, NULL, "Work:", 0},
    {O_CHUNK, 0, "chunk", "N", "elements per work item (default 1048576)", 0},
    {0, 0, NULL, NULL, NULL, 0},
};

static const cli_spec spec = {
    .name = TOOL,
    .synopsis = "[OPTIONS] REFERENCE.h5 CANDIDATE.h5",
    .about = "Compare candidate tensors with reference (golden) tensors, pairing them by name,\n"
             "and judge each one by its tier: kernel, layer, logits or tokens.",
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

static const char *fmt_num(char *buf, size_t n, bool ok, double v)
{
    if (!ok)
        snprintf(buf, n, "-");
    else if (isnan(v))
        snprintf(buf, n, "nan");
    else
        snprintf(buf, n, "%.6g", v);
    return buf;
}

typedef struct {
    const char *verdict, *tier, *name, *dtype, *max_abs, *metric, *mism, *reason;
} row_cells;

static void print_table(const golden_diff_result *r, FILE *f)
{
    bool color = golden_use_color(f);
    size_t n = r->n;
    /* failing tensors first; within each group, name order (the report order) */
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    char (*cells)[4][64] = malloc((n ? n : 1) * sizeof *cells);
    if (!order || !cells) {
        free(order);
        free(cells);
        fprintf(f, "(out of memory for the table)\n");
        return;
    }
    size_t k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++)
            if (r->tensors[i].passed == (pass == 1))
                order[k++] = i;
    int w[7] = {7, 6, 6, 5, 7, 6, 10};
    for (size_t i = 0; i < n; i++) {
        const golden_diff_tensor *t = &r->tensors[i];
        const golden_cmp_metrics *m = &t->m;
        snprintf(cells[i][0], 64, "%s/%s", golden_dtype_name(t->dtype_ref),
                 golden_dtype_name(t->dtype_cand));
        fmt_num(cells[i][1], 64, t->compared && m->has_finite, m->max_abs);
        switch (t->judge.tier) {
        case GOLDEN_TIER_LOGITS:
            fmt_num(cells[i][2], 64, t->compared && m->rows, m->top1_match);
            break;
        case GOLDEN_TIER_TOKENS:
            if (t->compared)
                snprintf(cells[i][2], 64, "%" PRIu64 "/%" PRIu64, m->sequences_exact, m->sequences);
            else
                snprintf(cells[i][2], 64, "-");
            break;
        default:
            fmt_num(cells[i][2], 64, t->compared, m->cosine);
        }
        if (t->compared)
            snprintf(cells[i][3], 64, "%" PRIu64, m->mismatches);
        else
            snprintf(cells[i][3], 64, "-");
        int lens[7] = {4, (int)strlen(golden_tier_name(t->judge.tier)), (int)strlen(t->name),
                       (int)strlen(cells[i][0]), (int)strlen(cells[i][1]),
                       (int)strlen(cells[i][2]), (int)strlen(cells[i][3])};
        for (int c = 1; c < 7; c++)
            if (lens[c] > w[c])
                w[c] = lens[c];
    }
    for (size_t i = 0; i < r->n_missing_cand; i++)
        if ((int)strlen(r->missing_in_candidate[i]) > w[2])
            w[2] = (int)strlen(r->missing_in_candidate[i]);
    for (size_t i = 0; i < r->n_missing_ref; i++)
        if ((int)strlen(r->missing_in_reference[i]) > w[2])
            w[2] = (int)strlen(r->missing_in_reference[i]);
    const char *bold = golden_color(color, "bold"), *reset = golden_color(color, "reset");
    fprintf(f, "%s%-*s  %-*s  %-*s  %-*s  %*s  %*s  %*s  %s%s\n", bold, w[0], "VERDICT", w[1],
            "TIER", w[2], "TENSOR", w[3], "DTYPE", w[4], "MAX_ABS", w[5], "COSINE/TOP1",
            w[6], "MISMATCHES", "REASON", reset);
    int indent = w[0] + w[1] + w[2] + w[3] + w[4] + w[5] + w[6] + 14;
    for (size_t k2 = 0; k2 < n; k2++) {
        size_t i = order[k2];
        const golden_diff_tensor *t = &r->tensors[i];
        const char *c = golden_color(color, t->passed ? "green" : "red");
        const char *first = t->n_reasons ? t->reasons[0] : (t->n_notes ? t->notes[0] : NULL);
        fprintf(f, "%s%-*s%s  %-*s  %-*s  %-*s  %*s  %*s  %*s%s%s\n", c, w[0],
                t->passed ? "pass" : "FAIL", reset, w[1], golden_tier_name(t->judge.tier), w[2],
                t->name, w[3], cells[i][0], w[4], cells[i][1], w[5], cells[i][2], w[6],
                cells[i][3], first ? "  " : "", first ? first : "");
        for (size_t j = 1; j < t->n_reasons; j++)
            fprintf(f, "%*s%s\n", indent, "", t->reasons[j]);
        for (size_t j = t->n_reasons ? 0 : 1; j < t->n_notes; j++)
            fprintf(f, "%*s%s\n", indent, "", t->notes[j]);
    }
    const char *mc = golden_color(color, r->allow_missing ? "yellow" : "red");
    for (size_t i = 0; i < r->n_missing_cand; i++)
        fprintf(f, "%s%-*s%s  %-*s  %-*s  missing in the candidate\n", mc, w[0],
                r->allow_missing ? "missing" : "FAIL", reset, w[1], "-", w[2],
                r->missing_in_candidate[i]);
    for (size_t i = 0; i < r->n_missing_ref; i++)
        fprintf(f, "%s%-*s%s  %-*s  %-*s  missing in the reference\n", mc, w[0],
                r->allow_missing ? "missing" : "FAIL", reset, w[1], "-", w[2],
                r->missing_in_reference[i]);
    fprintf(f, "%s%s%s: %zu tensors compared, %zu passed, %zu failed", bold,
            r->pass ? "PASS" : "FAIL", reset, r->n, r->passed, r->failed);
    if (r->n_missing_cand || r->n_missing_ref)
        fprintf(f, ", %zu missing in the candidate, %zu missing in the reference%s",
                r->n_missing_cand, r->n_missing_ref, r->allow_missing ? " (allowed)" : "");
    if (r->baseline && r->n_missing_base)
        fprintf(f, ", %zu missing in the baseline", r->n_missing_base);
    fputc('\n', f);
    free(order);
    free(cells);
}

/* Options as parsed; the common ones are in struct cli. */
typedef struct {
    const char *policy_path, *tier_name, *baseline;
    const char **maps, **only;
    size_t n_maps, n_only;
    double atol, rtol, eps;
    bool allow_missing;
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
        case O_POLICY: a->policy_path = v; break;
        case O_TIER: a->tier_name = v; break;
        case O_ATOL: if (parse_num(c, "--atol", v, &a->atol)) return 2; break;
        case O_RTOL: if (parse_num(c, "--rtol", v, &a->rtol)) return 2; break;
        case O_EPS: if (parse_num(c, "--eps", v, &a->eps)) return 2; break;
        case O_BASELINE: a->baseline = v; break;
        case O_MAP: a->maps[a->n_maps++] = v; break;
        case O_ONLY: a->only[a->n_only++] = v; break;
        case O_ALLOW: a->allow_missing = true; break;
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
    if (a->policy_path && strcmp(a->policy_path, "-") == 0)
        return cli_usage(c, "--policy needs a file, not '-' (it is read for tolerances and names)");
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
    int status = 2;
    golden_policy *policy = NULL;
    golden_namemap *map = NULL;
    golden_diff_result *res = NULL;
    golden_error err;
    golden_error_clear(&err);
    if (!a.maps || !a.only) {
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
            status = cli_usage(&c, "--tier: expected kernel, layer, logits or tokens");
            goto done;
        }
        golden_policy_force_tier(policy, t);
    }
    if (a.policy_path && (golden_policy_load(policy, a.policy_path, &err) != 0 ||
                          golden_namemap_load(map, a.policy_path, &err) != 0))
        goto fail;
    golden_policy_override(policy, a.atol, a.rtol, a.eps);
    for (size_t i = 0; i < a.n_maps; i++)
        if (golden_namemap_load(map, a.maps[i], &err) != 0)
            goto fail;

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
        .allow_missing = a.allow_missing,
        .threads = c.threads,
        .chunk_elems = a.chunk,
        .progress = &progress,
    };
    if (golden_diff_run(&o, &res, &err) != 0)
        goto fail;
    if (c.json) {
        json_t *doc = golden_diff_to_json(res);
        if (!doc) {
            golden_fail_what(&err, GOLDEN_ENOMEM, c.json, "out of memory building the report");
            goto fail;
        }
        int rc = golden_json_write(c.json, doc, c.force, &err);
        json_decref(doc);
        if (rc != 0)
            goto fail;
    }
    if (c.junit && golden_diff_junit(res, c.junit, c.force, &err) != 0)
        goto fail;
    FILE *human = cli_human(&c);
    if (human)
        print_table(res, human);
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
    return cli_exit(&c, status);
}

/* golden-diff: judge candidate tensors against reference goldens under a tolerance policy.
 * Options in, libgolden's diff run, a table / JSON / JUnit out; exit 0 pass, 1 fail, 2 error. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/diff_ranks.h"
#include "common/ranks.h"
#include "golden/diff.h"
#include "golden/html.h"
#include "golden/report.h"
#include "tensor/policy_private.h"

#define TOOL "golden-diff"

/* What the options say (typed rows store here; the layer parses, checks ranges, prints
 * errors and --help from the table). */
static struct {
    const char *baseline, *html, *explain;
    cli_list policies, maps, only, allow_cand;
    int tier;                       /* index in tier_names, -1 none */
    double atol, rtol, eps;         /* NaN: not given */
    bool allow_missing, allow_empty, trust_hashes, histogram, failed_only;
    uint64_t chunk, limit;
} arg = {.tier = -1, .atol = NAN, .rtol = NAN, .eps = NAN};

static const char *const tier_names[] = {"kernel", "layer", "logits", "tokens", "router", NULL};

/* The option table: parsing, range checks and --help all come from it. */
static const cli_opt options[] = {
    CLI_HEADING("Policy:"),
    CLI_OPT_LIST(0, 'p', "policy", "FILE", "tolerance policy (YAML or JSON, calculet-diff-policy/v1);\n"
                 "repeatable: files layer in order, later ones win", CLI_INPUT, &arg.policies,
                 false, NULL),
    CLI_OPT_CHOICE(0, 't', "tier", "NAME", "judge every tensor at this tier", &arg.tier, tier_names),
    CLI_OPT_REAL(0, 0, "atol", "X", "absolute tolerance for every tensor (kernel tier)", &arg.atol,
                 0, 1e300),
    CLI_OPT_REAL(0, 0, "rtol", "X", "relative tolerance for every tensor (kernel tier)", &arg.rtol,
                 0, 1e300),
    CLI_OPT_REAL(0, 0, "eps", "X", "max_rel denominator floor: |c-r| / max(|r|, eps)", &arg.eps,
                 0, 1e300),
    CLI_OPT_STRING(0, 'b', "baseline", "FILE", "three-way: also judge FILE against the reference; a "
                   "failed\ncheck is excused when the candidate's error is within the\npolicy's "
                   "baseline_ratio of the baseline's", CLI_INPUT, &arg.baseline),
    CLI_HEADING("Selection:"),
    CLI_OPT_LIST(0, 'm', "map", "FILE", "rename candidate/baseline tensors (policy file with \"map\")",
                 CLI_INPUT, &arg.maps, false, NULL),
    CLI_OPT_LIST(0, 0, "only", "GLOB", "compare only reference names matching GLOB (repeatable)", 0,
                 &arg.only, false, NULL),
    CLI_OPT_LIST(0, 0, "allow-missing-in-candidate", "GLOB", "reference tensors matching GLOB may be "
                 "missing from the candidate\n(repeatable; a logits or tokens tensor only when GLOB is "
                 "its exact name)", 0, &arg.allow_cand, false, NULL),
    CLI_OPT_FLAG(0, 0, "allow-missing", "refused: name what may be missing with\n"
                 "--allow-missing-in-candidate GLOB", &arg.allow_missing),
    CLI_OPT_FLAG(0, 0, "allow-empty", "comparing no tensor at all does not fail the run",
                 &arg.allow_empty),
    CLI_OPT_FLAG(0, 0, "trust-hashes", "do not check each tensor's data against its stored sha256",
                 &arg.trust_hashes),
    CLI_OPT_STRING(0, 0, "explain", "TENSOR", "print which rule, table or option set each field of\n"
                   "TENSOR's judge (a reference name), and compare nothing", 0, &arg.explain),
    CLI_OPT_STRING(0, 0, "html", "FILE", "self-contained HTML report with plots (docs/reports.md)",
                   CLI_OUTPUT, &arg.html),
    CLI_OPT_FLAG(0, 0, "histogram", "count each tensor's |c - r| into log2 bins and put them in the\n"
                 "JSON report as abs_error_histogram (--html implies it)", &arg.histogram),
    CLI_HEADING("Table:"),
    CLI_OPT_FLAG(0, 0, "failed-only", "list only failing (and missing) tensors in the table",
                 &arg.failed_only),
    CLI_OPT_UINT(0, 0, "limit", "N", "at most N tensor rows in the table (the JSON has all)",
                 &arg.limit, 1, UINT64_MAX),
    CLI_HEADING("Work:"),
    CLI_OPT_UINT(0, 0, "chunk", "N", "elements per work item (default 1048576)", &arg.chunk, 1,
                 1000000000),
    CLI_END,
};

static const cli_spec spec = {
    .name = TOOL,
    .synopsis = "[OPTIONS] REFERENCE CANDIDATE",
    .about = "Compare candidate tensors with reference (golden) tensors, pairing them by name,\n"
             "and judge each one by its tier: kernel, layer, logits, tokens or router.\n"
             "Either side: a golden, .npy, .npz, .safetensors, .pt/.pth, a plain HDF5 file\n"
             "(h5py), a dump index, or a folder of these (told by content, not suffix).",
    .opts = options,
    .json_help = "calculet-diff-report/v1 JSON (- = stdout, no table then)",
    .junit_help = "JUnit XML, one test case per tensor (- = stdout)",
    .exit_status = "0 every tensor passed, 1 a tensor failed or is missing, 2 could not\n"
                   "compare (bad usage, unreadable or invalid input).",
    .args_are_inputs = true,
    .could_not = "could not compare",
};

/* Read the options: 0 to go on, else the exit status (printed; -1 for --help). */
static int parse(cli *c)
{
    if (cli_parse(c) == CLI_EXIT)
        return c->status ? c->status : -1;
    if (arg.allow_missing)
        return cli_usage(c, "--allow-missing is split: name the reference tensors that may "
                            "be missing with --allow-missing-in-candidate GLOB (tensors only "
                            "in the candidate are reported as not judged and do not fail)");
    if (c->nargs != 2)
        return cli_usage(c, "expected two inputs: REFERENCE CANDIDATE");
    /* the policy file is read twice (tolerances, then its "map"): a stream cannot be */
    for (size_t i = 0; i < arg.policies.n; i++)
        if (strcmp(arg.policies.v[i], "-") == 0)
            return cli_usage(c, "--policy needs a file, not '-' (it is read for tolerances and names)");
    return 0;
}

/* --explain: the judge of one reference tensor, field by field; 0, 2 (not in the reference),
 * or -1 with err set. */
static int explain(cli *c, const golden_policy *policy, const char *name, golden_error *err)
{
    golden_reader *r = NULL;
    if (golden_reader_open_flags(c->args[0], GOLDEN_READ_DATA_ONLY | GOLDEN_READ_FOREIGN, &r,
                                 err) != 0)
        return -1;
    long i = golden_reader_find(r, name);
    if (i < 0) {
        golden_reader_close(r);
        fprintf(stderr, TOOL ": %s: no tensor \"%s\" to explain\n", c->args[0], name);
        return 2;
    }
    const golden_tensor_info *t = golden_reader_tensor(r, (size_t)i);
    /* the tier as the diff chooses it: a file that is not a golden defaults to kernel */
    char *s = lg_policy_explain_why(policy, name, t->dtype, t->dtype, t->rank,
                                    !golden_reader_stored(r, (size_t)i));
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

/* The terminal's width when the table goes to one, else 0 (never shortened in a pipe). */
static int term_width(FILE *f)
{
    struct winsize ws;
    if (!isatty(fileno(f)) || ioctl(fileno(f), TIOCGWINSZ, &ws) != 0 || ws.ws_col < 40)
        return 0;
    return ws.ws_col;
}

int main(int argc, char **argv)
{
    cli c;
    if (cli_init(&c, &spec, argc, argv) != 0)
        return cli_exit(&c, 2);
    int status = 2;
    golden_policy *policy = NULL;
    golden_namemap *map = NULL;
    golden_diff_result *res = NULL;
    golden_error err;
    golden_error_clear(&err);
    int prc = parse(&c);
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
    if (arg.tier >= 0) {
        golden_tier t;
        if (golden_tier_parse(tier_names[arg.tier], &t) != 0) {
            status = cli_usage(&c, "--tier: expected kernel, layer, logits, tokens or router");
            goto done;
        }
        golden_policy_force_tier(policy, t);
    }
    /* several --policy files layer in order: a later file's values and rules win */
    for (size_t i = 0; i < arg.policies.n; i++)
        if (golden_policy_load(policy, arg.policies.v[i], &err) != 0 ||
            golden_namemap_load(map, arg.policies.v[i], &err) != 0)
            goto fail;
    golden_policy_override(policy, arg.atol, arg.rtol, arg.eps);
    for (size_t i = 0; i < arg.maps.n; i++)
        if (golden_namemap_load(map, arg.maps.v[i], &err) != 0)
            goto fail;

    if (arg.explain) {
        status = explain(&c, policy, arg.explain, &err);
        if (status < 0)
            goto fail;
        goto done;
    }
    golden_progress progress;
    memset(&progress, 0, sizeof progress);
    golden_diff_opts o = {
        .version = GOLDEN_DIFF_OPTS_VERSION,
        .reference = c.args[0],
        .candidate = c.args[1],
        .baseline = arg.baseline,
        .policy = policy,
        .map = map,
        .only = arg.only.v,
        .n_only = arg.only.n,
        .allow_missing_in_candidate = arg.allow_cand.v,
        .n_allow_missing_in_candidate = arg.allow_cand.n,
        .threads = c.threads ? c.threads : golden_threads(),
        .chunk_elems = arg.chunk,
        .progress = c.quiet ? NULL : &progress, /* a TTY line, never with -q */
        .allow_empty = arg.allow_empty,
        .trust_hashes = arg.trust_hashes,
        .histogram = arg.histogram || arg.html,
        .foreign = true,
    };
    /* under mpirun (make MPI=1) the ranks share the tensors; rank 0 writes everything */
    bool root = true;
    if (diff_ranks_run(&o, &res, &root, &err) != 0 || !root) {
        status = 2;
        if (root)
            goto fail;
        goto done;
    }
    for (size_t i = 0; i < res->n_skipped; i++) /* never silently */
        fprintf(stderr, TOOL ": note: skipped %s\n", res->skipped[i]);
    if (c.json || arg.html) {
        json_t *doc = golden_diff_to_json(res);
        if (!doc) {
            golden_fail_what(&err, GOLDEN_ENOMEM, c.json, "out of memory building the report");
            goto fail;
        }
        int rc = c.json ? golden_json_write(c.json, doc, c.force, &err) : 0;
        if (rc == 0 && arg.html)
            rc = golden_html_diff_report(doc, arg.html, c.force, &err);
        json_decref(doc);
        if (rc != 0)
            goto fail;
    }
    if (c.junit && golden_diff_junit(res, c.junit, c.force, &err) != 0)
        goto fail;
    FILE *human = cli_human(&c);
    if (human) {
        golden_diff_table_opts to = GOLDEN_DIFF_TABLE_OPTS_INIT;
        to.color = golden_use_color(human) && !ranks_launched();
        to.failed_only = arg.failed_only;
        to.limit = (size_t)arg.limit;
        to.width = term_width(human);
        char *table = golden_diff_table_opts_run(res, &to);
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
    status = cli_fail(&c, &err); /* cli_exit writes the JUnit error case */
done:
    golden_diff_free(res);
    golden_namemap_free(map);
    golden_policy_free(policy);
    return cli_exit(&c, ranks_finish(status));
}

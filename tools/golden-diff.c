/* golden-diff: judge candidate tensors against reference goldens under a tolerance policy.
 * Options in, libgolden's diff run, a table / JSON / JUnit out; exit 0 pass, 1 fail, 2 error. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/guard.h"
#include "golden/diff.h"
#include "golden/report.h"

#define TOOL "golden-diff"

static void usage(FILE *f)
{
    fputs("Usage: golden-diff [OPTIONS] REFERENCE.h5 CANDIDATE.h5\n"
          "Compare candidate tensors with reference (golden) tensors, pairing them by name,\n"
          "and judge each one by its tier: kernel, layer, logits or tokens.\n"
          "\n"
          "Policy:\n"
          "  -p, --policy FILE     tolerance policy (YAML or JSON, calculet-diff-policy/v1);\n"
          "                        repeatable: files layer in order, later ones win\n"
          "  -t, --tier NAME       judge every tensor at this tier (kernel|layer|logits|tokens)\n"
          "      --atol X          absolute tolerance for every tensor (kernel tier)\n"
          "      --rtol X          relative tolerance for every tensor (kernel tier)\n"
          "      --eps X           max_rel denominator floor: |c-r| / max(|r|, eps)\n"
          "  -b, --baseline FILE   three-way: also judge FILE against the reference; a failed\n"
          "                        check is excused when the candidate's error is within the\n"
          "                        policy's baseline_ratio of the baseline's\n"
          "Selection:\n"
          "  -m, --map FILE        rename candidate/baseline tensors (policy file with \"map\")\n"
          "  -o, --only GLOB       compare only reference names matching GLOB (repeatable)\n"
          "      --allow-missing   tensors present on one side only do not fail the run\n"
          "      --allow-empty     comparing no tensor at all does not fail the run\n"
          "      --trust-hashes    do not check each tensor's data against its stored sha256\n"
          "Output:\n"
          "      --json FILE       calculet-diff-report/v1 JSON (- = stdout, no table then)\n"
          "      --junit FILE      JUnit XML, one testcase per tensor\n"
          "      --force           overwrite existing output files\n"
          "  -q, --quiet           no table; the exit status says it\n"
          "  -j, --threads N       worker threads (default: GOLDEN_THREADS or all cores)\n"
          "      --chunk N         elements per work item (default 1048576)\n"
          "  -h, --help            this text\n"
          "  -V, --version         print the version\n"
          "\n"
          "Exit status: 0 every tensor passed, 1 a tensor failed or is missing, 2 could not\n"
          "compare (bad usage, unreadable or invalid input).\n",
          f);
}

static int bad_usage(const char *what)
{
    fprintf(stderr, TOOL ": %s (see " TOOL " --help)\n", what);
    return 2;
}

static int parse_num(const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 0) {
        fprintf(stderr, TOOL ": %s: expected a number >= 0, got '%s'\n", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    golden_guard_install(TOOL);
    enum { O_ATOL = 256, O_RTOL, O_EPS, O_ALLOW, O_JSON, O_JUNIT, O_FORCE, O_CHUNK, O_EMPTY, O_TRUST };
    static const struct option longs[] = {
        {"policy", required_argument, NULL, 'p'},
        {"tier", required_argument, NULL, 't'},
        {"atol", required_argument, NULL, O_ATOL},
        {"rtol", required_argument, NULL, O_RTOL},
        {"eps", required_argument, NULL, O_EPS},
        {"baseline", required_argument, NULL, 'b'},
        {"map", required_argument, NULL, 'm'},
        {"only", required_argument, NULL, 'o'},
        {"allow-missing", no_argument, NULL, O_ALLOW},
        {"allow-empty", no_argument, NULL, O_EMPTY},
        {"trust-hashes", no_argument, NULL, O_TRUST},
        {"json", required_argument, NULL, O_JSON},
        {"junit", required_argument, NULL, O_JUNIT},
        {"force", no_argument, NULL, O_FORCE},
        {"quiet", no_argument, NULL, 'q'},
        {"threads", required_argument, NULL, 'j'},
        {"chunk", required_argument, NULL, O_CHUNK},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *json_path = NULL, *junit_path = NULL, *tier_name = NULL;
    const char *baseline = NULL;
    const char **maps = calloc((size_t)argc + 1, sizeof *maps);
    const char **only = calloc((size_t)argc + 1, sizeof *only);
    const char **policies = calloc((size_t)argc + 1, sizeof *policies);
    size_t n_maps = 0, n_only = 0, n_policies = 0;
    double atol = NAN, rtol = NAN, eps = NAN, num;
    bool allow_missing = false, allow_empty = false, trust_hashes = false, force = false, quiet = false;
    int threads = 0;
    uint64_t chunk = 0;
    int status = 2;
    golden_policy *policy = NULL;
    golden_namemap *map = NULL;
    golden_diff_result *res = NULL;
    golden_error err;
    golden_error_clear(&err);
    if (!maps || !only || !policies) {
        fprintf(stderr, TOOL ": out of memory\n");
        goto done;
    }
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":p:t:b:m:o:qj:hV", longs, NULL)) != -1) {
        switch (c) {
        case 'p': policies[n_policies++] = optarg; break;
        case 't': tier_name = optarg; break;
        case O_ATOL: if (parse_num("--atol", optarg, &atol)) goto done; break;
        case O_RTOL: if (parse_num("--rtol", optarg, &rtol)) goto done; break;
        case O_EPS: if (parse_num("--eps", optarg, &eps)) goto done; break;
        case 'b': baseline = optarg; break;
        case 'm': maps[n_maps++] = optarg; break;
        case 'o': only[n_only++] = optarg; break;
        case O_ALLOW: allow_missing = true; break;
        case O_EMPTY: allow_empty = true; break;
        case O_TRUST: trust_hashes = true; break;
        case O_JSON: json_path = optarg; break;
        case O_JUNIT: junit_path = optarg; break;
        case O_FORCE: force = true; break;
        case 'q': quiet = true; break;
        case 'j':
            if (parse_num("--threads", optarg, &num))
                goto done;
            if (num < 1 || num > 256 || num != floor(num)) {
                status = bad_usage("--threads: expected an integer from 1 to 256");
                goto done;
            }
            threads = (int)num;
            break;
        case O_CHUNK:
            if (parse_num("--chunk", optarg, &num))
                goto done;
            if (num < 1 || num > 1e9 || num != floor(num)) {
                status = bad_usage("--chunk: expected an integer from 1 to 1000000000");
                goto done;
            }
            chunk = (uint64_t)num;
            break;
        case 'h': usage(stdout); status = 0; goto done;
        case 'V': printf(TOOL " " GOLDEN_VERSION "\n"); status = 0; goto done;
        case ':': {
            char msg[128];
            snprintf(msg, sizeof msg, "option '%s' needs a value", argv[optind - 1]);
            status = bad_usage(msg);
            goto done;
        }
        default: {
            char msg[128];
            snprintf(msg, sizeof msg, "unknown option '%s'", argv[optind - 1]);
            status = bad_usage(msg);
            goto done;
        }
        }
    }
    if (argc - optind != 2) {
        status = bad_usage("expected two files: REFERENCE.h5 CANDIDATE.h5");
        goto done;
    }
    policy = golden_policy_new();
    map = golden_namemap_new();
    if (!policy || !map) {
        fprintf(stderr, TOOL ": out of memory\n");
        goto done;
    }
    if (tier_name) {
        golden_tier t;
        if (golden_tier_parse(tier_name, &t) != 0) {
            status = bad_usage("--tier: expected kernel, layer, logits or tokens");
            goto done;
        }
        golden_policy_force_tier(policy, t);
    }
    /* several --policy files layer in order: a later file's values and rules win */
    for (size_t i = 0; i < n_policies; i++)
        if (golden_policy_load(policy, policies[i], &err) != 0 ||
            golden_namemap_load(map, policies[i], &err) != 0)
            goto fail;
    golden_policy_override(policy, atol, rtol, eps);
    for (size_t i = 0; i < n_maps; i++)
        if (golden_namemap_load(map, maps[i], &err) != 0)
            goto fail;
    if ((json_path && golden_outfile_check(json_path, force, &err) != 0) ||
        (junit_path && golden_outfile_check(junit_path, force, &err) != 0))
        goto fail;

    golden_progress progress;
    memset(&progress, 0, sizeof progress);
    golden_diff_opts o = {
        .reference = argv[optind],
        .candidate = argv[optind + 1],
        .baseline = baseline,
        .policy = policy,
        .map = map,
        .only = only,
        .n_only = n_only,
        .allow_missing = allow_missing,
        .threads = threads ? threads : golden_threads(),
        .chunk_elems = chunk,
        .progress = &progress,
        .allow_empty = allow_empty,
        .trust_hashes = trust_hashes,
    };
    if (golden_diff_run(&o, &res, &err) != 0)
        goto fail;
    if (json_path) {
        json_t *doc = golden_diff_to_json(res);
        if (!doc) {
            golden_fail_what(&err, GOLDEN_ENOMEM, json_path, "out of memory building the report");
            goto fail;
        }
        int rc = golden_json_write(json_path, doc, force, &err);
        json_decref(doc);
        if (rc != 0)
            goto fail;
    }
    if (junit_path && golden_diff_junit(res, junit_path, force, &err) != 0)
        goto fail;
    if (!quiet && !(json_path && strcmp(json_path, "-") == 0)) {
        char *table = golden_diff_table(res, golden_use_color(stdout));
        if (!table) {
            golden_fail_what(&err, GOLDEN_ENOMEM, NULL, "out of memory for the table");
            goto fail;
        }
        fputs(table, stdout);
        free(table);
    }
    status = res->pass ? 0 : 1;
    goto done;
fail:
    golden_error_print(stderr, TOOL, &err);
    status = 2;
done:
    golden_diff_free(res);
    golden_namemap_free(map);
    golden_policy_free(policy);
    free(maps);
    free(only);
    free(policies);
    return status;
}

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
          "  -p, --policy FILE     tolerance policy (YAML or JSON, calculet-diff-policy/v1)\n"
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

int main(int argc, char **argv)
{
    golden_guard_install(TOOL);
    enum { O_ATOL = 256, O_RTOL, O_EPS, O_ALLOW, O_JSON, O_JUNIT, O_FORCE, O_CHUNK };
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
    const char *policy_path = NULL, *json_path = NULL, *junit_path = NULL, *tier_name = NULL;
    const char *baseline = NULL;
    const char **maps = calloc((size_t)argc + 1, sizeof *maps);
    const char **only = calloc((size_t)argc + 1, sizeof *only);
    size_t n_maps = 0, n_only = 0;
    double atol = NAN, rtol = NAN, eps = NAN, num;
    bool allow_missing = false, force = false, quiet = false;
    int threads = 0;
    uint64_t chunk = 0;
    int status = 2;
    golden_policy *policy = NULL;
    golden_namemap *map = NULL;
    golden_diff_result *res = NULL;
    golden_error err;
    golden_error_clear(&err);
    if (!maps || !only) {
        fprintf(stderr, TOOL ": out of memory\n");
        goto done;
    }
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":p:t:b:m:o:qj:hV", longs, NULL)) != -1) {
        switch (c) {
        case 'p': policy_path = optarg; break;
        case 't': tier_name = optarg; break;
        case O_ATOL: if (parse_num("--atol", optarg, &atol)) goto done; break;
        case O_RTOL: if (parse_num("--rtol", optarg, &rtol)) goto done; break;
        case O_EPS: if (parse_num("--eps", optarg, &eps)) goto done; break;
        case 'b': baseline = optarg; break;
        case 'm': maps[n_maps++] = optarg; break;
        case 'o': only[n_only++] = optarg; break;
        case O_ALLOW: allow_missing = true; break;
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
    if (policy_path && (golden_policy_load(policy, policy_path, &err) != 0 ||
                        golden_namemap_load(map, policy_path, &err) != 0))
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
        .threads = threads,
        .chunk_elems = chunk,
        .progress = &progress,
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
    if (!quiet && !(json_path && strcmp(json_path, "-") == 0))
        print_table(res, stdout);
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
    return status;
}

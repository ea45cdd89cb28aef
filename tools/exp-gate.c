/* exp-gate: statistics from an experiment's raw performance data, the handbook's section 17
 * decision, and the section 19 evidence matrix. Parses, calls libgolden, prints, exits. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/gate.h"
#include "golden/html.h"
#include "golden/report.h"

#define TOOL "exp-gate"

static void usage(FILE *f)
{
    fputs("usage: exp-gate summarize [--check] [--seed S] [--bootstrap B] [--force] DIR\n"
          "       exp-gate decide [--html FILE] [--force] DIR\n"
          "       exp-gate matrix [--json FILE] [--markdown FILE] [--force] DIR...\n"
          "summarize  compute performance/summary.json from performance/raw-requests.jsonl and\n"
          "           performance/raw-device-trace.*; --check compares the stored one instead\n"
          "decide     apply the section 17 rules; write decision.json and decision.md\n"
          "matrix     the section 19 operator evidence matrix (Markdown to stdout by default)\n"
          "  --seed S        bootstrap seed (default 20260802; --check: the summary's own)\n"
          "  --bootstrap B   bootstrap resamples (default 10000; --check: the summary's own)\n"
          "  --clock-band P  steady band of clock readings, +- P %% (default 2)\n"
          "  --temp-band C   steady band of temperature readings, +- C degrees (default 5)\n"
          "  --memory MIB    samples held at once (default 256; one case and side is\n"
          "                  always taken whole)\n"
          "  -j N            threads (default: GOLDEN_THREADS or every core)\n"
          "  --html FILE     decide: also a self-contained HTML report with plots\n"
          "                  (docs/reports.md)\n"
          "  --force         replace existing outputs (a hand-written decision.md included)\n"
          "  --help, --version\n"
          "Exit status: summarize 0 written or consistent, 1 --check findings; decide 0 soak_24h,\n"
          "1 any other label; matrix 0; 2 invalid input or usage.\n", f);
}

static int fail(const golden_error *err)
{
    golden_error_print(stderr, TOOL, err);
    return 2;
}

static int bad_usage(const char *msg)
{
    fprintf(stderr, TOOL ": %s (see --help)\n", msg);
    return 2;
}

typedef struct {
    golden_gate_opts gate;
    bool check, force;
    const char *json, *markdown, *html;
} cli;

static int parse(int argc, char **argv, cli *c)
{
    static const struct option longs[] = {
        {"check", no_argument, NULL, 'c'},     {"seed", required_argument, NULL, 's'},
        {"bootstrap", required_argument, NULL, 'b'}, {"force", no_argument, NULL, 'f'},
        {"json", required_argument, NULL, 'J'}, {"markdown", required_argument, NULL, 'M'},
        {"clock-band", required_argument, NULL, 'C'}, {"temp-band", required_argument, NULL, 'T'},
        {"memory", required_argument, NULL, 'm'}, {"html", required_argument, NULL, 'W'},
        {"help", no_argument, NULL, 'h'},      {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0}};
    int opt;
    char *end;
    while ((opt = getopt_long(argc, argv, "j:", longs, NULL)) != -1) {
        switch (opt) {
        case 'c': c->check = true; break;
        case 'f': c->force = true; break;
        case 'J': c->json = optarg; break;
        case 'M': c->markdown = optarg; break;
        case 'W': c->html = optarg; break;
        case 's':
            c->gate.seed = strtoull(optarg, &end, 10);
            if (*end || !*optarg || *optarg == '-')
                return bad_usage("--seed needs an unsigned integer");
            c->gate.seed_set = true;
            break;
        case 'b':
            c->gate.bootstrap = strtoul(optarg, &end, 10);
            if (*end || c->gate.bootstrap < 1 || *optarg == '-')
                return bad_usage("--bootstrap needs an integer >= 1");
            c->gate.bootstrap_set = true;
            break;
        case 'C': c->gate.clock_band_pct = strtod(optarg, &end);
            if (*end || c->gate.clock_band_pct < 0)
                return bad_usage("--clock-band needs a number >= 0");
            break;
        case 'T': c->gate.temp_band_c = strtod(optarg, &end);
            if (*end || c->gate.temp_band_c < 0)
                return bad_usage("--temp-band needs a number >= 0");
            break;
        case 'm': {
            unsigned long mib = strtoul(optarg, &end, 10);
            if (*end || mib < 1 || *optarg == '-')
                return bad_usage("--memory needs a number of MiB >= 1");
            c->gate.memory_budget = (size_t)mib << 20;
            break;
        }
        case 'j':
            c->gate.threads = (int)strtol(optarg, &end, 10);
            if (*end || c->gate.threads < 1)
                return bad_usage("-j needs an integer >= 1");
            break;
        case 'h': usage(stdout); exit(0);
        case 'V': printf(TOOL " %s\n", GOLDEN_VERSION); exit(0);
        default: return 2;
        }
    }
    return 0;
}

static int cmd_summarize(cli *c, const char *dir)
{
    golden_error err;
    golden_error_clear(&err);
    if (c->check) {
        golden_findings fs;
        golden_findings_init(&fs);
        bool checked;
        if (golden_gate_check(dir, &c->gate, &fs, &checked, &err) != 0) {
            golden_findings_free(&fs);
            return fail(&err);
        }
        if (!checked) {
            golden_findings_free(&fs);
            fprintf(stderr, TOOL ": %s/performance/raw-requests.jsonl: not found\n", dir);
            return 2;
        }
        for (size_t i = 0; i < fs.count; i++) {
            char where[1200];
            golden_finding_where(&fs.items[i], where, sizeof where);
            printf("%s: %s [%s]\n", where, fs.items[i].message, fs.items[i].rule);
        }
        int rc = fs.errors ? 1 : 0;
        printf("%s: %zu finding(s): %s\n", dir, fs.errors,
               rc ? "the summary does not follow from the raw data" : "summary follows");
        golden_findings_free(&fs);
        return rc;
    }
    json_t *sum;
    if (golden_gate_summarize(dir, &c->gate, &sum, &err) != 0)
        return fail(&err);
    if (golden_gate_summary_write(dir, sum, c->force, &err) != 0) {
        json_decref(sum);
        return fail(&err);
    }
    printf("%s/performance/summary.json: %zu case metric(s), %lld unsteady sample(s)\n", dir,
           json_array_size(json_object_get(sum, "cases")),
           (long long)json_integer_value(json_object_get(sum, "unsteady_samples")));
    json_decref(sum);
    return 0;
}

static int cmd_decide(cli *c, const char *dir)
{
    golden_error err;
    golden_error_clear(&err);
    json_t *d, *sum = NULL;
    golden_gate_label label;
    if (c->html && golden_outfile_check(c->html, c->force, &err) != 0)
        return fail(&err);
    if (golden_gate_decide(dir, &c->gate, &d, &label, &err) != 0)
        return fail(&err);
    /* the HTML's pictures need the per-case statistics decide judged: the same summary,
     * computed (and any error in it met) before decision.json is written */
    if ((c->html && golden_gate_summarize(dir, &c->gate, &sum, &err) != 0) ||
        golden_gate_decision_write(dir, d, c->force, &err) != 0 ||
        (c->html && golden_html_gate_report(d, sum, c->html, c->force, &err) != 0)) {
        json_decref(sum);
        json_decref(d);
        return fail(&err);
    }
    json_decref(sum);
    printf("%s: %s (rule %s)\n", json_string_value(json_object_get(d, "experiment_id")),
           golden_gate_label_name(label), json_string_value(json_object_get(d, "rule")));
    json_decref(d);
    return label == GOLDEN_GATE_SOAK_24H ? 0 : 1;
}

static int write_text(const char *path, const char *text, bool force, golden_error *err)
{
    golden_outfile *f;
    if (golden_outfile_open(path, force, &f, err) != 0)
        return -1;
    if (fputs(text, golden_outfile_stream(f)) < 0) {
        golden_outfile_abort(f);
        return golden_fail_where(err, GOLDEN_EIO, "write failed", "%s", path);
    }
    return golden_outfile_commit(f, err);
}

static int cmd_matrix(cli *c, char **dirs, size_t n)
{
    golden_error err;
    golden_error_clear(&err);
    json_t *m;
    const char *md_path = c->markdown ? c->markdown : c->json ? NULL : "-";
    if ((c->json && golden_outfile_check(c->json, c->force, &err) != 0) ||
        (md_path && golden_outfile_check(md_path, c->force, &err) != 0))
        return fail(&err);
    if (golden_gate_matrix((const char *const *)dirs, n, &m, &err) != 0)
        return fail(&err);
    char *md = golden_gate_matrix_markdown(m, &err);
    char *js0 = json_dumps(m, JSON_INDENT(2)), *js = NULL;
    if (js0 && asprintf(&js, "%s\n", js0) < 0)
        js = NULL;
    free(js0);
    int rc = 0;
    if (!md || !js)
        rc = err.code != GOLDEN_ENONE ? fail(&err) : bad_usage("out of memory");
    else if (c->json && write_text(c->json, js, c->force, &err) != 0)
        rc = fail(&err);
    else if (md_path && write_text(md_path, md, c->force, &err) != 0)
        rc = fail(&err);
    free(md);
    free(js);
    json_decref(m);
    return rc;
}

int main(int argc, char **argv)
{
    cli c;
    memset(&c, 0, sizeof c);
    golden_gate_opts_init(&c.gate);
    c.gate.threads = golden_threads();
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "--version")) {
        printf(TOOL " %s\n", GOLDEN_VERSION);
        return 0;
    }
    if (argc < 2)
        return bad_usage("a subcommand is required: summarize, decide or matrix");
    const char *sub = argv[1];
    int rc = parse(argc - 1, argv + 1, &c);
    if (rc)
        return rc;
    char **rest = argv + 1 + optind;
    int nrest = argc - 1 - optind;
    if (!strcmp(sub, "matrix"))
        return nrest < 1 ? bad_usage("matrix needs at least one experiment folder")
                         : cmd_matrix(&c, rest, (size_t)nrest);
    if (nrest != 1)
        return bad_usage("one experiment folder is required");
    if (!strcmp(sub, "summarize"))
        return cmd_summarize(&c, rest[0]);
    if (!strcmp(sub, "decide")) {
        if (c.check)
            return bad_usage("--check belongs to summarize");
        return cmd_decide(&c, rest[0]);
    }
    return bad_usage("unknown subcommand (summarize, decide, matrix)");
}

/* exp-gate: statistics from an experiment's raw performance data, the handbook's section 17
 * decision, and the section 19 evidence matrix. Parses, calls libgolden, prints, exits. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "golden/gate.h"
#include "golden/html.h"
#include "golden/pareto.h"
#include "golden/report.h"

#define TOOL "exp-gate"

/* The steadiness and memory options summarize and decide share (decide recomputes the same
 * statistics, so it takes the same knobs); the typed rows store here. */
typedef struct {
    uint64_t seed, memory;
    int64_t bootstrap;
    double clock_band, temp_band, power_band;
    bool seed_set, bootstrap_set;
} gate_stat_args;

/* One options struct per subcommand (typed rows store into them; main fills the defaults). */
static struct {
    bool check;
    gate_stat_args st;
} summarize_arg;
static struct {
    gate_stat_args st;
    const char *html, *soak;
} decide_arg;
static struct {
    const char *markdown;
} matrix_arg;
static struct {
    int quality;
    uint64_t capacity_budget;
    double latency_budget;
    bool capacity_set;
    const char *html;
} pareto_arg;
static const char *const pareto_axes[] = {"task", "top1", "kl", NULL};

/* The statistics rows of one subcommand's struct S (seed and bootstrap remember whether they
 * were given: --check takes the stored summary's own otherwise). */
#define GATE_STAT_ROWS(S)                                                                          \
    {.long_name = "seed", .arg = "S", .type = CLI_UINT, .umin = 0, .umax = UINT64_MAX,            \
     .help = "bootstrap seed (default 20260802; --check: the summary's own)",                     \
     .dest = CLI_DEST_(uint64_t, &(S).seed), .given = &(S).seed_set},                              \
    {.long_name = "bootstrap", .arg = "B", .type = CLI_INT, .imin = 1, .imax = INT64_MAX,          \
     .help = "bootstrap resamples (default 10000; --check: the\nsummary's own)",                 \
     .dest = CLI_DEST_(int64_t, &(S).bootstrap), .given = &(S).bootstrap_set},                     \
    CLI_OPT_REAL(0, 0, "clock-band", "P", "steady band of clock readings, +- P % (default 2)",     \
                 &(S).clock_band, 0, INFINITY),                                                    \
    CLI_OPT_REAL(0, 0, "temp-band", "C", "steady band of temperature readings, +- C degrees\n"    \
                 "(default 5)", &(S).temp_band, 0, INFINITY),                                      \
    CLI_OPT_REAL(0, 0, "power-band", "P", "steady band of power_w, +- P % of the median, and\n"   \
                 "its largest drift over the run order (default 5)", &(S).power_band, 0,     \
                 INFINITY),                                                                        \
    CLI_OPT_SIZE(0, 0, "memory", "MIB", "samples held at once (default 256 MiB; one case and\n"   \
                 "side is always taken whole)", &(S).memory, 1u << 20, 1u << 20, SIZE_MAX)

/* The option tables (one per subcommand, as dag-check's check and diff modes): parsing, range
 * checks and --help all come from them. */
static const cli_opt summarize_options[] = {
    CLI_OPT_FLAG(0, 0, "check", "compare the stored performance/summary.json with the raw data\n"
                 "instead of writing it", &summarize_arg.check),
    GATE_STAT_ROWS(summarize_arg.st),
    CLI_END,
};

static const cli_opt decide_options[] = {
    GATE_STAT_ROWS(decide_arg.st),
    CLI_OPT_STRING(0, 0, "html", "FILE", "also a self-contained HTML report with plots (- = stdout;\n"
                   "docs/reports.md)", CLI_OUTPUT, &decide_arg.html),
    CLI_OPT_STRING(0, 0, "soak", "FILE", "the 24 h soak's calculet-soak-result/v1 (default:\n"
                   "DIR/stability/soak.json when there): soak_24h and a passing soak\n"
                   "give merge", CLI_INPUT, &decide_arg.soak),
    CLI_END,
};

static const cli_opt matrix_options[] = {
    CLI_OPT_STRING(0, 0, "markdown", "FILE", "the Markdown matrix (- = stdout; the default when\n"
                   "neither --json nor --markdown is given)", CLI_OUTPUT, &matrix_arg.markdown),
    CLI_END,
};

static const cli_opt pareto_options[] = {
    CLI_OPT_CHOICE(0, 0, "quality", "AXIS", "the frontier's quality axis: task (task metric\n"
                   "recovered, default), top1 or kl (docs/exp-gate.md)", &pareto_arg.quality,
                   pareto_axes),
    {.long_name = "capacity-budget", .arg = "BYTES", .type = CLI_SIZE, .unit = 1,
     .umin = 0, .umax = UINT64_MAX, .help = "capacity the recommended set may add (default: none)",
     .dest = CLI_DEST_(uint64_t, &pareto_arg.capacity_budget), .given = &pareto_arg.capacity_set},
    CLI_OPT_REAL(0, 0, "latency-budget", "PCT", "latency the recommended set may add, in %\n"
                 "(default: none)", &pareto_arg.latency_budget, -INFINITY, INFINITY),
    CLI_OPT_STRING(0, 0, "html", "FILE", "also a self-contained HTML page with the SVG picture\n"
                   "(- = stdout)", CLI_OUTPUT, &pareto_arg.html),
    CLI_END,
};

static const cli_opt top_options[] = {CLI_END};

#define GATE_NO_JUNIT "not written: summarize makes no per-case test report (refused)"

static const cli_spec summarize_spec = {
    .name = TOOL,
    .synopsis = "summarize [OPTIONS] DIR",
    .about = "Computes DIR/performance/summary.json from performance/raw-requests.jsonl and\n"
             "performance/raw-device-trace.*; --check compares the stored one instead.\n"
             "--force replaces an existing summary.json.",
    .opts = summarize_options,
    .json_help = "not written: the summary is DIR/performance/summary.json (refused)",
    .junit_help = GATE_NO_JUNIT,
    .exit_status = "0 written or consistent, 1 --check findings, 2 invalid input or usage.",
};

#define DECIDE_JUNIT "JUnit XML: one case per section 17 rule and one for the decision,\n" \
    "failed unless soak_24h or merge (- = stdout)"
#define MATRIX_JUNIT "JUnit XML: one case per experiment, failed when its re-derived\n" \
    "decision is reject, skipped while planned (- = stdout)"

static const cli_spec decide_spec = {
    .name = TOOL,
    .synopsis = "decide [OPTIONS] DIR",
    .about = "Applies the handbook's section 17 rules; writes DIR/decision.json and\n"
             "DIR/decision.md (--force replaces a hand-written decision.md).",
    .opts = decide_options,
    .json_help = "not written: the decision is DIR/decision.json (refused)",
    .junit_help = DECIDE_JUNIT,
    .exit_status = "0 soak_24h or merge, 1 any other label, 2 invalid input or usage.",
};

static const cli_spec matrix_spec = {
    .name = TOOL,
    .synopsis = "matrix [OPTIONS] DIR...",
    .about = "The section 19 operator evidence matrix over one or more experiment folders\n"
             "(Markdown to stdout by default).",
    .opts = matrix_options,
    .json_help = "the matrix as JSON (- = stdout)",
    .junit_help = MATRIX_JUNIT,
    .exit_status = "0 written, 2 invalid input or usage.",
};

static const cli_spec pareto_spec = {
    .name = TOOL,
    .synopsis = "pareto [OPTIONS] DIR...",
    .about = "Section 16.2 layer sensitivity over single-group fallback experiment folders:\n"
             "quality recovered against capacity and latency cost, the Pareto frontier and\n"
             "the recommended mixed-precision set (table to stdout). A folder that fails\n"
             "manifest-verify's checks is refused.",
    .opts = pareto_options,
    .json_help = "the calculet-pareto/v1 document (- = stdout)",
    .junit_help = "not written: pareto makes no verdict (refused)",
    .exit_status = "0 written, 2 invalid input, a refused folder or usage.",
};

static const cli_spec top_spec = {
    .name = TOOL,
    .synopsis = "summarize [OPTIONS] DIR\ndecide [OPTIONS] DIR\nmatrix [OPTIONS] DIR...\n"
                "pareto [OPTIONS] DIR...",
    .about = "Statistics, the section 17 decision and the section 19 evidence matrix of\n"
             "experiment folders. `exp-gate SUBCOMMAND --help` describes each subcommand:\n"
             "summarize  compute (or --check) performance/summary.json\n"
             "decide     apply the section 17 rules; write decision.json and decision.md\n"
             "matrix     the section 19 operator evidence matrix\n"
             "pareto     the section 16.2 layer-sensitivity Pareto frontier",
    .opts = top_options,
    .json_help = "see the subcommands (only matrix writes one)",
    .junit_help = "decide and matrix (see their --help)",
    .exit_status = "summarize 0 written or consistent, 1 --check findings; decide 0 soak_24h\n"
                   "or merge, 1 any other label; matrix, pareto 0; 2 invalid input or usage.",
};

typedef struct {
    golden_gate_opts gate;
    bool check;
    const char *markdown, *html;
} gate_args;

/* The defaults of the statistics rows: the library's own (golden_gate_opts_init). */
static void stat_defaults(gate_stat_args *st)
{
    golden_gate_opts o;
    golden_gate_opts_init(&o);
    *st = (gate_stat_args){.seed = o.seed, .bootstrap = (int64_t)o.bootstrap,
                           .clock_band = o.clock_band_pct, .temp_band = o.temp_band_c,
                           .power_band = o.power_band_pct,
                           .memory = (uint64_t)256 << 20};
}

static void stat_apply(const gate_stat_args *st, golden_gate_opts *o)
{
    o->seed = st->seed;
    o->seed_set = st->seed_set;
    o->bootstrap = (unsigned long)st->bootstrap;
    o->bootstrap_set = st->bootstrap_set;
    o->clock_band_pct = st->clock_band;
    o->temp_band_c = st->temp_band;
    o->power_band_pct = st->power_band;
    o->memory_budget = (size_t)st->memory;
}

/* Parse one subcommand's arguments (argv[0] is the subcommand). Returns -1 to go on, else the
 * exit status to end with (cli_exit not yet called). */
static int parse(cli *c, const cli_spec *spec, gate_args *a, int argc, char **argv)
{
    memset(a, 0, sizeof *a);
    golden_gate_opts_init(&a->gate);
    stat_defaults(&summarize_arg.st);
    stat_defaults(&decide_arg.st);
    pareto_arg.latency_budget = INFINITY;
    if (cli_init(c, spec, argc, argv) != 0)
        return 2;
    if (cli_parse(c) == CLI_EXIT)
        return c->status;
    if (spec == &summarize_spec) {
        stat_apply(&summarize_arg.st, &a->gate);
        a->check = summarize_arg.check;
    } else if (spec == &decide_spec) {
        stat_apply(&decide_arg.st, &a->gate);
        a->html = decide_arg.html;
        a->gate.soak_path = decide_arg.soak;
    } else {
        a->markdown = matrix_arg.markdown;
    }
    if (spec == &pareto_spec) {
        if (c->junit)
            return cli_usage(c, "--junit does not apply to pareto (it makes no verdict)");
        return c->nargs < 1 ? cli_usage(c, "pareto needs at least one experiment folder") : -1;
    }
    if (c->junit && spec == &summarize_spec)
        return cli_usage(c, "--junit does not apply to summarize (decide and matrix write one)");
    if (c->json && spec != &matrix_spec)
        return cli_usage(c, "--json does not apply to %s (%s)", argv[0],
                         spec == &decide_spec ? "the decision is DIR/decision.json"
                                              : "the summary is DIR/performance/summary.json");
    if (spec == &matrix_spec ? c->nargs < 1 : c->nargs != 1)
        return cli_usage(c, "%s", spec == &matrix_spec
                                      ? "matrix needs at least one experiment folder"
                                      : "one experiment folder is required");
    /* the layer's -j / GOLDEN_THREADS, else every core (golden_threads() after configure) */
    a->gate.threads = c->threads ? c->threads : golden_threads();
    return -1;
}

/* summarize --check: the findings, one a line, then the verdict line. */
static int summarize_check(cli *c, gate_args *a, const char *dir)
{
    golden_error err;
    golden_error_clear(&err);
    golden_findings fs;
    golden_findings_init(&fs);
    bool checked;
    if (golden_gate_check(dir, &a->gate, &fs, &checked, &err) != 0) {
        golden_findings_free(&fs);
        return cli_fail(c, &err);
    }
    if (!checked) {
        golden_findings_free(&fs);
        golden_fail_where(&err, GOLDEN_ENOTFOUND, "not found", "%s/performance/raw-requests.jsonl",
                          dir);
        return cli_fail(c, &err);
    }
    FILE *human = cli_human(c);
    for (size_t i = 0; human && i < fs.count; i++) {
        char where[1200];
        golden_finding_where(&fs.items[i], where, sizeof where);
        fprintf(human, "%s: %s [%s]\n", where, fs.items[i].message, fs.items[i].rule);
    }
    int rc = fs.errors ? 1 : 0;
    if (human)
        fprintf(human, "%s: %zu finding(s): %s\n", dir, fs.errors,
                rc ? "the summary does not follow from the raw data" : "summary follows");
    golden_findings_free(&fs);
    return rc;
}

static int cmd_summarize(cli *c, gate_args *a, const char *dir)
{
    if (a->check)
        return summarize_check(c, a, dir);
    golden_error err;
    golden_error_clear(&err);
    json_t *sum;
    if (golden_gate_summarize(dir, &a->gate, &sum, &err) != 0)
        return cli_fail(c, &err);
    if (golden_gate_summary_write(dir, sum, c->force, &err) != 0) {
        json_decref(sum);
        return cli_fail(c, &err);
    }
    FILE *human = cli_human(c);
    if (human)
        fprintf(human, "%s/performance/summary.json: %zu case metric(s), %lld unsteady sample(s)\n",
                dir, json_array_size(json_object_get(sum, "cases")),
                (long long)json_integer_value(json_object_get(sum, "unsteady_samples")));
    json_decref(sum);
    return 0;
}

/* decide --junit: the rules that can stop a soak fail when they hold, graph_gain when it does
 * not; the decision's own case fails unless soak_24h (docs/exp-gate.md). */
static int decide_junit(const char *path, bool force, const json_t *d, golden_error *err)
{
    golden_junit_case cases[7];
    char msg[7][2300];
    size_t n = 0;
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(d, "rules"), i, r) {
        const char *name = json_string_value(json_object_get(r, "rule"));
        if (!name || !strcmp(name, "otherwise") || n >= 6)
            continue;
        bool holds = json_is_true(json_object_get(r, "holds"));
        bool failed = strcmp(name, "graph_gain") && strcmp(name, "soak_result") ? holds : !holds;
        snprintf(msg[n], sizeof msg[n], "%s", json_string_value(json_object_get(r, "reason")));
        cases[n] = (golden_junit_case){TOOL " decide", name, failed, false,
                                       failed ? msg[n] : NULL, NULL, 0};
        n++;
    }
    const char *label = json_string_value(json_object_get(d, "decision"));
    snprintf(msg[n], sizeof msg[n], "%s (rule %s)", label ? label : "?",
             json_string_value(json_object_get(d, "rule")) ?: "?");
    bool soak = label && (!strcmp(label, "soak_24h") || !strcmp(label, "merge"));
    cases[n] = (golden_junit_case){TOOL " decide", "decision", !soak, false, soak ? NULL : msg[n],
                                   NULL, 0};
    n++;
    return golden_junit_write(path, force, json_string_value(json_object_get(d, "experiment_id")),
                              cases, n, err);
}

static int matrix_junit(const char *path, bool force, const json_t *m, golden_error *err)
{
    const json_t *rows = json_object_get(m, "experiments");
    size_t n = json_array_size(rows);
    golden_junit_case *cases = calloc(n ? n : 1, sizeof *cases);
    if (!cases)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const json_t *r = json_array_get(rows, i);
        const char *concl = json_string_value(json_object_get(r, "conclusion")) ?: "?";
        bool pending = !strncmp(concl, "pending", 7);
        bool reject = !strncmp(concl, "reject", 6);
        cases[i] = (golden_junit_case){TOOL " matrix",
                                       json_string_value(json_object_get(r, "experiment_id")),
                                       reject, pending, reject || pending ? concl : NULL, NULL, 0};
    }
    int rc = golden_junit_write(path, force, "evidence matrix", cases, n, err);
    free(cases);
    return rc;
}

/* The boxes, and drift and CDF per graph-level case from the raw requests (at most 400 points
 * of drift a side). */
static int decide_html(const char *dir, const json_t *d, const json_t *sum, const char *path,
                       bool force, golden_error *err)
{
    json_t *series = NULL;
    if (sum && golden_gate_series(dir, sum, 400, &series, err) != 0)
        return -1;
    int rc = golden_html_gate_report_series(d, sum, series, path, force, err);
    json_decref(series);
    return rc;
}

static int cmd_decide(cli *c, gate_args *a, const char *dir)
{
    golden_error err;
    golden_error_clear(&err);
    json_t *d, *sum = NULL;
    golden_gate_label label;
    /* the HTML's pictures show the per-case statistics decide judged: the summary it decided
     * on (the stored seed, resamples and generator), not a second computation */
    if (golden_gate_decide_with_summary(dir, &a->gate, &d, &sum, &label, &err) != 0)
        return cli_fail(c, &err);
    if (golden_gate_decision_write(dir, d, c->force, &err) != 0 ||
        (c->junit && decide_junit(c->junit, c->force, d, &err) != 0) ||
        (a->html && decide_html(dir, d, sum, a->html, c->force, &err) != 0)) {
        json_decref(sum);
        json_decref(d);
        return cli_fail(c, &err);
    }
    json_decref(sum);
    /* NULL with --quiet or --html -: the page alone on stdout */
    FILE *human = cli_human(c);
    if (human)
        fprintf(human, "%s: %s (rule %s)\n", json_string_value(json_object_get(d, "experiment_id")),
                golden_gate_label_name(label), json_string_value(json_object_get(d, "rule")));
    json_decref(d);
    return label == GOLDEN_GATE_SOAK_24H || label == GOLDEN_GATE_MERGE ? 0 : 1;
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

/* A document as indented JSON and a newline (free it; NULL out of memory). */
static char *gate_json_text(const json_t *doc)
{
    char *js0 = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(15)), *js = NULL;
    if (js0 && asprintf(&js, "%s\n", js0) < 0)
        js = NULL;
    free(js0);
    return js;
}

static int cmd_matrix(cli *c, gate_args *a, char **dirs, size_t n)
{
    golden_error err;
    golden_error_clear(&err);
    const char *md_path = a->markdown;
    json_t *m;
    if (golden_gate_matrix_opts((const char *const *)dirs, n, &a->gate, &m, &err) != 0)
        return cli_fail(c, &err);
    if (!md_path && !c->json)
        md_path = "-"; /* checked with the other outputs by cli_outputs_ok in main */
    char *md = golden_gate_matrix_markdown(m, &err);
    char *js0 = json_dumps(m, JSON_INDENT(2)), *js = NULL;
    if (js0 && asprintf(&js, "%s\n", js0) < 0)
        js = NULL;
    free(js0);
    int rc = 0;
    if (!md || !js) {
        if (err.code == GOLDEN_ENONE)
            golden_fail_what(&err, GOLDEN_ENOMEM, "matrix", "out of memory");
        rc = cli_fail(c, &err);
    } else if (c->json && write_text(c->json, js, c->force, &err) != 0) {
        rc = cli_fail(c, &err);
    } else if (md_path && write_text(md_path, md, c->force, &err) != 0) {
        rc = cli_fail(c, &err);
    } else if (c->junit && matrix_junit(c->junit, c->force, m, &err) != 0) {
        rc = cli_fail(c, &err);
    }
    free(md);
    free(js);
    json_decref(m);
    return rc;
}

/* pareto: the table (stdout, unless --json - or --html - takes it), --json, --html. */
static int cmd_pareto(cli *c, gate_args *a, char **dirs, size_t n)
{
    golden_error err;
    golden_error_clear(&err);
    golden_pareto_opts po = GOLDEN_PARETO_OPTS_INIT;
    po.quality = (golden_pareto_quality)pareto_arg.quality;
    if (pareto_arg.capacity_set)
        po.capacity_budget = (double)pareto_arg.capacity_budget;
    po.latency_budget_pct = pareto_arg.latency_budget;
    a->gate.threads = c->threads ? c->threads : golden_threads();
    json_t *p;
    if (golden_gate_pareto((const char *const *)dirs, n, &po, &a->gate, &p, &err) != 0)
        return cli_fail(c, &err);
    char *text = golden_gate_pareto_text(p, &err);
    char *js = text ? gate_json_text(p) : NULL;
    int rc = 0;
    if (!text || !js) {
        if (err.code == GOLDEN_ENONE)
            golden_fail_what(&err, GOLDEN_ENOMEM, "pareto", "out of memory");
        rc = cli_fail(c, &err);
    } else if ((c->json && write_text(c->json, js, c->force, &err) != 0) ||
               (pareto_arg.html &&
                golden_html_pareto_report(p, pareto_arg.html, c->force, &err) != 0)) {
        rc = cli_fail(c, &err);
    } else {
        FILE *human = cli_human(c);
        if (human)
            fputs(text, human);
    }
    free(text);
    free(js);
    json_decref(p);
    return rc;
}

int main(int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "";
    const cli_spec *spec = !strcmp(sub, "summarize") ? &summarize_spec
                         : !strcmp(sub, "decide")    ? &decide_spec
                         : !strcmp(sub, "matrix")    ? &matrix_spec
                         : !strcmp(sub, "pareto")    ? &pareto_spec
                                                     : NULL;
    if (!spec)
        return cli_top_level(&top_spec, argc, argv, "summarize, decide, matrix or pareto");
    cli c;
    gate_args a;
    int rc = parse(&c, spec, &a, argc - 1, argv + 1);
    if (rc >= 0)
        return cli_exit(&c, rc);
    if (spec == &matrix_spec && !a.markdown && !c.json && cli_add_output(&c, "-") != 0)
        return cli_exit(&c, 2);
    if (cli_outputs_ok(&c) != 0)
        return cli_exit(&c, 2);
    if (spec == &summarize_spec)
        rc = cmd_summarize(&c, &a, c.args[0]);
    else if (spec == &decide_spec)
        rc = cmd_decide(&c, &a, c.args[0]);
    else if (spec == &pareto_spec)
        rc = cmd_pareto(&c, &a, c.args, (size_t)c.nargs);
    else
        rc = cmd_matrix(&c, &a, c.args, (size_t)c.nargs);
    return cli_exit(&c, rc);
}

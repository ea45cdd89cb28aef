/* golden-accept: a vendor hand-off (handbook section 18) accepted or rejected in one command on
 * its delivered evidence. Parses, calls libgolden's golden_accept_run, prints, exits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cli.h"
#include "golden/accept.h"
#include "golden/replay.h"
#include "golden/report.h"

#define TOOL "golden-accept"

/* The team's side, and the folder to assemble (typed rows: docs/design.md). */
static struct {
    const char *golden, *baseline, *policy, *hypothesis, *out, *html;
    const char *backend, *model, *checks;
    cli_list backend_opts;
    int64_t warmup, runs;
    double call_timeout;
} arg = {.warmup = -1, .runs = -1};

static const cli_opt options[] = {
    CLI_OPT_STRING(0, 'g', "golden", "REF.h5", "the team's reference golden (required)", CLI_INPUT,
                   &arg.golden),
    CLI_OPT_STRING(0, 'b', "baseline", "PROD.h5", "the production golden: three-way accuracy",
                   CLI_INPUT, &arg.baseline),
    CLI_OPT_STRING(0, 'p', "policy", "TEAM.yaml", "the team's golden-diff policy (default: the\n"
                   "built-in one)", CLI_INPUT, &arg.policy),
    CLI_OPT_STRING(0, 0, "hypothesis", "H.yaml", "the team's calculet-op-experiment/v1 hypothesis\n"
                   "(required: the compile step and the section 17 decision)", CLI_INPUT,
                   &arg.hypothesis),
    CLI_OPT_STRING(0, 'o', "output", "EXPERIMENT_DIR", "assemble the section 3 experiment folder\n"
                   "here (hypothesis, logs, accuracy, raw data, faults, decision)", 0, &arg.out),
    CLI_OPT_STRING(0, 0, "html", "F", "one self-contained HTML page: the verdict, the first\n"
                   "failing step, each step's picture", CLI_OUTPUT, &arg.html),
    CLI_HEADING("Step 9, the delivered runtime run by the team:"),
    CLI_OPT_STRING(0, 0, "backend", "cpu|PATH.so", "the delivered runtime: conformance suite and a\n"
                   "replay of the input manifest through it", 0, &arg.backend),
    CLI_OPT_STRING(0, 0, "model", "DIR", "the model the runtime runs (required with --backend)",
                   0, &arg.model),
    CLI_OPT_LIST(0, 0, "backend-opt", "KEY=VALUE", "option for the backend (repeatable)", 0,
                 &arg.backend_opts, false, NULL),
    CLI_OPT_STRING(0, 0, "conform-checks", "LIST", "the conformance checks to run (comma-\n"
                   "separated; default all)", 0, &arg.checks),
    CLI_OPT_DURATION(0, 0, "call-timeout", "SECONDS", "deadline of a one-token call of the\n"
                     "runtime, which runs in its own process (default 60; a prefill of n\n"
                     "tokens gets SECONDS*(1+n/64)); one it misses fails step 9",
                     &arg.call_timeout, 1, 0.001, 1e6),
    CLI_OPT_INT(0, 0, "warmup", "N", "warm-up runs of each replayed case (default 10)",
                &arg.warmup, 0, 1000000),
    CLI_OPT_INT(0, 0, "runs", "N", "measured runs of each replayed case (default 30, 100 for\n"
                "short cases)", &arg.runs, 1, 1000000),
    CLI_END,
};

static const cli_spec spec = {
    .name = TOOL,
    .synopsis = "HANDOFF_DIR --golden REF.h5 --hypothesis H.yaml [--baseline PROD.h5]\n"
                "[--policy TEAM.yaml] [--backend SO --model DIR] [-o EXPERIMENT_DIR]\n"
                "[--json F] [--junit F] [--html F]",
    .about = "Accepts or rejects a vendor hand-off on its delivered evidence, in eight steps:\n"
             "integrity, compile, accuracy, graph, trace, limits, error path, performance,\n"
             "and with --backend a ninth: the delivered runtime run by the team.",
    .opts = options,
    .json_help = "calculet-accept-report/v1 JSON (- = stdout, no summary then)",
    .junit_help = "JUnit XML, one test suite per step (- = stdout)",
    .exit_status = "0 accepted (section 17: soak_24h), 1 not accepted (the verdict word says\n"
                   "why: incomplete, reject, investigate, experiment_only, no_merge), 2 could\n"
                   "not check (bad usage, the team's own inputs unreadable).",
    .args_are_inputs = false,
};

static void print_human(FILE *f, const golden_accept_result *r)
{
    for (int i = 0; i < r->nsteps; i++) {
        const golden_accept_step *s = &r->steps[i];
        fprintf(f, "%-7s %d %-12s", s->verdict == GOLDEN_STEP_PASS   ? "pass"
                                    : s->verdict == GOLDEN_STEP_FAIL ? "FAIL"
                                                                     : "skipped",
                i + 1, s->name);
        if (s->verdict == GOLDEN_STEP_SKIPPED) {
            fprintf(f, " %s\n", s->why);
            continue;
        }
        size_t nn = json_array_size(s->notes);
        if (s->verdict == GOLDEN_STEP_FAIL)
            fprintf(f, " %zu finding(s)\n", s->findings.errors);
        else
            fprintf(f, " %s\n", nn ? json_string_value(json_array_get(s->notes, nn - 1)) : "");
        size_t shown = 0;
        for (size_t k = 0; k < s->findings.count && shown < 4; k++, shown++) {
            char where[1600];
            golden_finding_where(&s->findings.items[k], where, sizeof where);
            fprintf(f, "          %s: %s\n", where, s->findings.items[k].message);
        }
        if (s->findings.count > shown)
            fprintf(f, "          ... and %zu more\n", s->findings.count - shown);
    }
    fprintf(f, "%s: %s\n", r->verdict, r->reason);
}

int main(int argc, char **argv)
{
    /* the backend host (hidden): step 9's runtime runs in it, as npu-replay's does */
    if (argc > 1 && strcmp(argv[1], "__backend-host") == 0)
        return golden_backend_host_main(argc - 1, argv + 1);
    cli c;
    if (cli_init(&c, &spec, argc, argv) != 0)
        return cli_exit(&c, 2);
    golden_accept_opts o;
    memset(&o, 0, sizeof o);
    o.version = GOLDEN_ACCEPT_OPTS_VERSION;
    if (cli_parse(&c) == CLI_EXIT)
        return cli_exit(&c, c.status);
    o.golden = arg.golden;
    o.baseline = arg.baseline;
    o.policy = arg.policy;
    o.hypothesis = arg.hypothesis;
    o.experiment_out = arg.out;
    o.backend = arg.backend;
    o.model_dir = arg.model;
    o.n_backend_opts = arg.backend_opts.n;
    o.backend_opts = arg.backend_opts.v;
    o.conform_checks = arg.checks;
    o.replay_warmup = (int)arg.warmup;
    o.replay_runs = (int)arg.runs;
    if (c.nargs != 1)
        return cli_exit(&c, cli_usage(&c, "expected one folder: HANDOFF_DIR"));
    if (!o.golden)
        return cli_exit(&c, cli_usage(&c, "--golden REF.h5 is required"));
    if (!o.hypothesis)
        return cli_exit(&c, cli_usage(&c, "--hypothesis H.yaml is required"));
    if ((o.backend != NULL) != (o.model_dir != NULL))
        return cli_exit(&c, cli_usage(&c, "--backend and --model go together"));
    if (!o.backend && (arg.backend_opts.n || arg.checks || arg.warmup >= 0 || arg.runs >= 0 ||
                       arg.call_timeout > 0))
        return cli_exit(&c, cli_usage(&c, "--backend-opt, --conform-checks, --call-timeout, "
                                          "--warmup and --runs need --backend"));
    /* the runtime never runs in this process: its exit, crash, hang or output is a step 9
     * finding (docs/npu-replay.md, "Isolation") */
    static char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    golden_backend_isolation iso = {n > 0 ? self : "/proc/self/exe", arg.call_timeout, 0, NULL,
                                    NULL};
    o.iso = o.backend ? &iso : NULL;
    if (o.model_dir && cli_add_input(&c, o.model_dir) != 0)
        return cli_exit(&c, 2);
    if (o.backend && strcmp(o.backend, "cpu") != 0 && cli_add_input(&c, o.backend) != 0)
        return cli_exit(&c, 2);
    if (cli_add_input(&c, c.args[0]) != 0 || cli_outputs_ok(&c) != 0)
        return cli_exit(&c, 2);
    /* -o is checked before the long work, like every other output */
    if (o.experiment_out && !c.force && access(o.experiment_out, F_OK) == 0) {
        golden_error e;
        golden_error_clear(&e);
        golden_fail_what(&e, GOLDEN_EEXISTS, o.experiment_out,
                         "exists (use --force to replace its files)");
        return cli_exit(&c, cli_fail(&c, &e));
    }
    o.handoff = c.args[0];
    o.force = c.force;
    o.threads = c.threads ? c.threads : golden_threads();
    golden_error err;
    golden_error_clear(&err);
    golden_accept_result *r = NULL;
    int status;
    if (golden_accept_run(&o, &r, &err) != 0)
        return cli_exit(&c, cli_fail(&c, &err));
    if (c.json) {
        json_t *doc = golden_accept_to_json(r);
        int rc = doc ? golden_json_write(c.json, doc, c.force, &err)
                     : golden_fail_what(&err, GOLDEN_ENOMEM, c.json, "out of memory");
        json_decref(doc);
        if (rc != 0) {
            golden_accept_free(r);
            return cli_exit(&c, cli_fail(&c, &err));
        }
    }
    if (c.junit && golden_accept_junit(r, c.junit, c.force, &err) != 0) {
        golden_accept_free(r);
        return cli_exit(&c, cli_fail(&c, &err));
    }
    if (arg.html && golden_accept_html(r, arg.html, c.force, &err) != 0) {
        golden_accept_free(r);
        return cli_exit(&c, cli_fail(&c, &err));
    }
    FILE *human = cli_human(&c);
    if (human)
        print_human(human, r);
    status = r->accepted ? 0 : 1;
    golden_accept_free(r);
    return cli_exit(&c, status);
}

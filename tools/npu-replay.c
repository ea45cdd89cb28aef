/* npu-replay: drive an inference runtime (built-in cpu or a plug-in .so) through the input
 * matrix, capture goldens and raw timings; make test models. Parse, call libgolden, print, exit. */
#include <dirent.h>
#include <jansson.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cli.h"
#include "golden/conform.h"
#include "golden/doc.h"
#include "golden/html.h"
#include "golden/profile.h"
#include "golden/replay.h"
#include "golden/replay_run.h"
#include "golden/report.h"

#define TOOL "npu-replay"

enum {
    O_MODEL = CLI_TOOL_ID, O_MANIFEST, O_SIDE, O_GOLDEN, O_RAW, O_BACKEND, O_BOPT, O_WARMUP,
    O_RUNS, O_CASES, O_TAPS, O_CHECKREJ, O_PRESET, O_LAYERS, O_SEED, O_DTYPE, O_SHARDS, O_HYP,
    O_PROMPTS, O_MAXLEN, O_RANDOM, O_REPEATED, O_DSTEPS, O_NEARTIES, O_MARGIN, O_DENSE,
    O_CHECKS, O_MAXCTX, O_TOL, O_RTOL, O_SAMPLING, O_FAULTS, O_OUTPUT, O_PLACEMENT,
    O_HTML, O_INPROC, O_CALLTO, O_BMEM, O_BLOG, O_BUDGET, O_NONDET
};

/* The rows matrix, run and conform share (a macro: each table is one array). */
#define BACKEND_ROWS                                                                           \
    {O_MODEL, 0, "model", "DIR", "the model folder (make-model's output)", 0},                 \
    {O_BACKEND, 0, "backend", "cpu|PATH.so", "the runtime (default: the built-in cpu\n"        \
     "reference)", 0},                                                                         \
    {O_BOPT, 0, "backend-opt", "KEY=VALUE", "option for the backend (repeatable; cpu:\n"       \
     "dtype=f32|bf16, lanes=N, chunk=N)", 0},                                                 \
    {O_CALLTO, 0, "call-timeout", "SECONDS", "deadline of a one-token backend call (default\n"  \
     "60; a prefill of n tokens gets SECONDS*(1+n/64))", 0},                                   \
    {O_BMEM, 0, "backend-mem", "BYTES", "address-space limit of the backend host (K/M/G\n"     \
     "suffixes; default none)", 0},                                                            \
    {O_BLOG, 0, "backend-log", "FILE", "the backend host's stdout and stderr (appended;\n"    \
     "default $TMPDIR/npu-replay-backend.PID.log, removed\nwhen empty)", 0},                  \
    {O_INPROC, 0, "in-process", NULL, "run the built-in cpu backend in this process\n"        \
     "(speed tests only: no isolation)", 0}

static const cli_option make_model_options[] = {
    {O_PRESET, 0, "preset", "NAME", "tiny or qwen3-30b-a3b (default tiny)", 0},
    {O_LAYERS, 0, "layers", "N", "decoder layers (default: the preset's)", 0},
    {O_SEED, 0, "seed", "S", "weight generator seed (default 0)", 0},
    {O_DTYPE, 0, "dtype", "bf16|f16|f32", "weight type (default: the preset's)", 0},
    {O_SHARDS, 0, "shards", "N", "safetensors shards", 0},
    {O_DENSE, 0, "dense-layer", "L", "layer L is a dense MLP, not MoE (repeatable, 0 to 63)", 0},
    {O_OUTPUT, 'o', "output", "DIR", "the model folder to create (required)", 0},
    {0, 0, NULL, NULL, NULL, 0},
};

static const cli_option matrix_options[] = {
    BACKEND_ROWS,
    {O_HYP, 0, "hypothesis", "FILE", "the hypothesis document (its input-space section)",
     CLI_INPUT},
    {O_PROMPTS, 0, "prompts", "FILE", "fixed prompts (JSON lines) added to the matrix", CLI_INPUT},
    {O_OUTPUT, 'o', "output", "MANIFEST", "the manifest to write (required)", CLI_OUTPUT},
    {O_SEED, 0, "seed", "S", "generator seed (default 0)", 0},
    {O_MAXLEN, 0, "max-len", "N", "leave out lengths above N", 0},
    {O_RANDOM, 0, "random", "N", "random cases per length (default 20)", 0},
    {O_REPEATED, 0, "repeated", "N", "repeated-token cases per length (default 10)", 0},
    {O_DSTEPS, 0, "decode-steps", "N", "output tokens of decode cases (default 8)", 0},
    {O_NEARTIES, 0, "near-ties", "N", "search N reference decode steps for near ties", 0},
    {O_MARGIN, 0, "near-tie-margin", "X", "top-2 logit margin of a near tie (default 0.001)", 0},
    {0, 0, NULL, NULL, NULL, 0},
};

static const cli_option run_options[] = {
    BACKEND_ROWS,
    {O_MANIFEST, 0, "manifest", "FILE", "the input manifest (matrix's output; required)",
     CLI_INPUT},
    {O_SIDE, 0, "side", "baseline|candidate", "which side this run is (required)", 0},
    {O_GOLDEN, 0, "golden", "OUT.h5", "the golden to write (required)", CLI_OUTPUT},
    {O_RAW, 0, "raw", "RAW.jsonl", "raw per-request timings to write (required)", CLI_OUTPUT},
    {O_WARMUP, 0, "warmup", "N", "warm-up runs per case (default 10)", 0},
    {O_RUNS, 0, "runs", "N", "measured runs per case (default 30, 100 for short cases)", 0},
    {O_CASES, 0, "cases", "GLOB", "run only matching case ids (repeatable)", 0},
    {O_TAPS, 0, "taps", "all|none|LIST", "per-layer tensors to capture (LIST: comma-separated\n"
     "globs such as 'layers/*/router/*'; default all)", 0},
    {O_CHECKREJ, 0, "check-rejection", NULL, "submit one rejection case; the backend must\n"
     "refuse it", 0},
    {O_FAULTS, 0, "faults", "FILE", "calculet-fault/v1 lines (stability/faults.jsonl): empty\n"
     "when the run completes; the fault that ended it, with\nthe retest after reset", CLI_OUTPUT},
    {0, 0, NULL, NULL, NULL, 0},
};

static const cli_option conform_options[] = {
    BACKEND_ROWS,
    {O_CHECKS, 0, "checks", "LIST", "comma-separated: causal-mask,kv-positions,kv-lanes,\n"
     "kv-tail,kv-reset,rejection,router,taps,determinism,\nsampling-topk,kv-growth (default all)", 0},
    {O_MAXCTX, 0, "max-context", "N", "longest context the checks use (default the limit)", 0},
    {O_TOL, 0, "tolerance", "X", "logits/tap tolerance (default 0: bitwise)", 0},
    {O_RTOL, 0, "router-tol", "X", "router weight tolerance (default 1e-5; 2^-7 bf16)", 0},
    {O_SAMPLING, 0, "sampling", "K=V,...", "sampling-topk settings: temp, top_k, top_p,\n"
     "min_p, repeat_penalty, repeat_last_n, n_probs, steps", 0},
    {O_SEED, 0, "seed", "S", "seed of the generated requests and random positions\n(default 0)", 0},
    {O_BUDGET, 0, "budget", "S", "seconds each position check spends on seeded random\n"
     "positions past the boundary set (default 1; 0 none)", 0},
    {O_NONDET, 0, "nondeterministic-ok", "TOL", "determinism: allow |a-b| <= TOL between two\n"
     "opens (default: bitwise)", 0},
    {O_FAULTS, 0, "faults", "FILE", "calculet-fault/v1 lines (stability/faults.jsonl) for\n"
     "failed backend calls, with the retest after reset", CLI_OUTPUT},
    {O_SIDE, 0, "side", "baseline|candidate", "the side --faults names (default candidate)", 0},
    {O_HTML, 0, "html", "FILE", "self-contained HTML report: verdicts, KV growth curve\n"
     "(docs/reports.md)", CLI_OUTPUT},
    {0, 0, NULL, NULL, NULL, 0},
};

static const cli_option no_options[] = {{0, 0, NULL, NULL, NULL, 0}};

static const cli_option profile_options[] = {
    {O_PLACEMENT, 0, "placement", "FILE", "where experts and tokens live\n"
     "(calculet-expert-placement/v1, YAML or JSON): adds\ndispatch, all-to-all and padding "
     "figures", CLI_INPUT},
    {O_HTML, 0, "html", "FILE", "self-contained HTML report: expert hit heatmap, share\n"
     "changes, bucket histograms (docs/reports.md)", CLI_OUTPUT},
    {0, 0, NULL, NULL, NULL, 0},
};

static const cli_spec top_spec = {
    .name = TOOL,
    .synopsis = "make-model|matrix|run|conform|profile [OPTIONS] ...",
    .about = "Drives an inference runtime (the built-in cpu reference or a plug-in .so) through\n"
             "the input matrix, captures goldens and raw timings, checks a backend's\n"
             "conformance and profiles router taps. `npu-replay COMMAND --help` describes one\n"
             "command: make-model, matrix, run, conform, profile.",
    .options = no_options,
    .exit_status = "0 done, 1 a verdict failed (see the command), 2 could not run.",
};

static const cli_spec make_model_spec = {
    .name = TOOL,
    .synopsis = "make-model --preset tiny|qwen3-30b-a3b [OPTIONS] -o DIR",
    .about = "Writes a test model folder (config.json, tokenizer, safetensors weights).",
    .options = make_model_options,
    .json_help = "not written by make-model (refused)",
    .junit_help = "not written by make-model (refused)",
    .exit_status = "0 written, 2 could not write (bad usage, DIR exists without --force).",
};

static const cli_spec matrix_spec = {
    .name = TOOL,
    .synopsis = "matrix --model DIR [--hypothesis FILE] [--prompts FILE] [OPTIONS] -o MANIFEST",
    .about = "Generates the input matrix (calculet-input-manifest/v1) for the model's limits:\n"
             "random and repeated prompts per length, rejection cases, expert coverage and\n"
             "near ties.",
    .options = matrix_options,
    .json_help = "not written by matrix (refused)",
    .junit_help = "not written by matrix (refused)",
    .exit_status = "0 written, 2 could not run (bad usage, bad model or hypothesis).",
};

static const cli_spec run_spec = {
    .name = TOOL,
    .synopsis = "run --model DIR --manifest M --side SIDE --golden OUT.h5 --raw RAW.jsonl "
                "[OPTIONS]",
    .about = "Replays the manifest through the backend: a calculet-golden/v1 golden and\n"
             "calculet-raw-request/v1 timings. Ctrl-C stops cleanly and leaves no file behind.",
    .options = run_options,
    .json_help = "not written by run: its outputs are --golden and --raw (refused)",
    .junit_help = "not written by run (refused)",
    .exit_status = "0 done (with --check-rejection: the backend refused the rejection case),\n"
                   "1 the backend accepted the rejection case, 2 could not run (bad usage, bad\n"
                   "model or manifest, backend error).",
};

static const cli_spec conform_spec = {
    .name = TOOL,
    .synopsis = "conform --model DIR [--checks LIST] [OPTIONS]",
    .about = "Checks a backend against the cpu reference (docs/conformance.md): causal mask,\n"
             "KV positions, lanes, tail and reset, rejection, router, sampling top-k, KV growth.",
    .options = conform_options,
    .json_help = "write the conformance report (- = stdout)",
    .junit_help = "write JUnit XML, one test case per check (- = stdout)",
    .exit_status = "0 every check passed, 1 a check failed, 2 could not run (bad usage, a\n"
                   "check could not be run).",
};

static const cli_spec profile_spec = {
    .name = TOOL,
    .synopsis = "profile [OPTIONS] GOLDEN [CANDIDATE]",
    .about = "Profiles the router taps of a golden (and a candidate's): expert load, routing\n"
             "mass and margins per layer; with --placement, dispatch and cross-chip bytes,\n"
             "padding slots, chip load and fault domains.",
    .options = profile_options,
    .json_help = "write the profile as JSON (- = stdout)",
    .junit_help = "accepted for uniformity; a profile makes no verdict, so it is refused",
    .exit_status = "0 profiled, 2 could not run (bad usage, a golden without router taps).",
    .args_are_inputs = true,
};

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

/* run stops between requests on SIGINT, SIGTERM, SIGHUP (the library removes its partial
 * outputs). SIGINT and SIGTERM are caught even when ignored at start, as npu-replay always did:
 * a script that starts a replay in the background (where sh ignores SIGINT) stops it with
 * kill -INT (tests/e2e/npu-replay.sh). SIGHUP ignored by nohup stays ignored, as in the layer. */
static void install_stop_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    struct sigaction old;
    if (sigaction(SIGHUP, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
        sigaction(SIGHUP, &sa, NULL);
}

static int parse_int(cli *c, const char *opt, const char *s, long long lo, long long hi,
                     long long *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || v < lo || v > hi)
        return cli_usage(c, "%s: expected an integer from %lld to %lld, got '%s'", opt, lo, hi, s);
    *out = v;
    return 0;
}

static int parse_real(cli *c, const char *opt, const char *s, double *out)
{
    char *end;
    *out = strtod(s, &end);
    if (!*s || *end || !(*out >= 0) || *out > 1e30)
        return cli_usage(c, "%s: expected a number >= 0, got '%s'", opt, s);
    return 0;
}

/* --backend-mem BYTES: an integer with an optional K, M or G (powers of 1024). */
static int parse_bytes(cli *c, const char *s, unsigned long long *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
    if (shift)
        end++;
    if (!*s || *s == '-' || *end || v == 0 || v > (1ull << 50) >> shift)
        return cli_usage(c, "--backend-mem: expected a size such as 8G, got '%s'", s);
    *out = v << shift;
    return 0;
}

static void progress(void *ctx, size_t done, size_t total, const char *case_id)
{
    const cli *c = ctx;
    if (!c->quiet && isatty(2))
        fprintf(stderr, "\r" TOOL ": %s %zu/%zu\033[K%s", case_id, done, total,
                done == total ? "\n" : "");
}

typedef struct {
    const char *model, *manifest, *side, *golden, *raw, *backend, *taps, *out, *preset, *dtype,
        *hypothesis, *prompts, *checks, *faults, *placement;
    const char **opts, **globs;
    size_t n_opts, n_globs;
    long long warmup, runs, layers, seed, shards, max_len, random, repeated, decode_steps,
        near_ties;
    double margin, tolerance, router_tol, budget, nondet; /* budget: -1 = not given */
    long long max_context;
    golden_conform_sampling sampling;
    unsigned long long dense_mask;
    int check_rejection;
    cli *c; /* the parse: threads, force, quiet, --json, --junit */
    const char *html; /* conform, profile: --html FILE */
    int in_process;
    double call_timeout;
    unsigned long long backend_mem;
    const char *backend_log;
    golden_backend_isolation iso; /* filled by check_common for the backend commands */
} args;

/* The library's error, as the contract's one line; 2. */
static int fail(const args *a, const golden_error *err)
{
    return cli_fail(a->c, err);
}

static int oom(const args *a)
{
    golden_error err;
    golden_fail_what(&err, GOLDEN_ENOMEM, NULL, "out of memory");
    return fail(a, &err);
}

static int load_backend(const args *a, golden_backend **b)
{
    golden_error err;
    golden_error_clear(&err);
    golden_backend_load_opts lo = {2, a->backend, a->model, a->n_opts, a->opts, a->c->threads,
                                   a->in_process ? NULL : &a->iso};
    if (golden_backend_load(&lo, b, &err))
        return fail(a, &err);
    return 0;
}

static int cmd_make_model(const args *a)
{
    if (!a->out)
        return cli_usage(a->c, "make-model needs -o DIR");
    golden_make_model_opts mo = {1, a->preset ? a->preset : "tiny", (int)a->layers,
                                 (uint64_t)a->seed, a->dtype, (int)a->shards, a->out, a->c->force,
                                 a->dense_mask};
    golden_error err;
    golden_error_clear(&err);
    if (golden_make_model(&mo, &err))
        return fail(a, &err);
    return 0;
}

static int cmd_run(const args *a)
{
    if (!a->manifest || !a->side || !a->golden || !a->raw)
        return cli_usage(a->c, "run needs --manifest, --side, --golden and --raw");
    golden_error err;
    golden_error_clear(&err);
    golden_backend *b = NULL;
    install_stop_handler();
    golden_backend_load_opts lo = {2, a->backend, a->model, a->n_opts, a->opts, a->c->threads,
                                   a->in_process ? NULL : &a->iso};
    if (golden_backend_load(&lo, &b, &err)) {
        /* a host that died in open or info: its fault line too (nothing else is written) */
        golden_error ferr;
        golden_error_clear(&ferr);
        if (!stop_flag && a->faults &&
            golden_replay_load_fault(&lo, a->side, a->faults, a->c->force, &err, &ferr)) {
            golden_error inner = err;
            golden_fail_what(&err, inner.code, inner.where, "%.700s (and %.100s: %.200s)",
                             inner.what, ferr.where, ferr.what);
        }
        return fail(a, &err);
    }
    int rc;
    golden_replay_run_opts ro = {2, b, a->manifest, a->side, a->golden, a->raw, (int)a->warmup,
                                 (int)a->runs, a->n_globs, a->globs, a->taps, a->c->force,
                                 a->check_rejection != 0, TOOL " " GOLDEN_VERSION, &stop_flag,
                                 progress, a->c, a->faults};
    golden_replay_run_result res;
    rc = golden_replay_run(&ro, &res, &err);
    golden_backend_close(b);
    if (rc)
        return fail(a, &err);
    FILE *out = cli_human(a->c);
    if (out)
        fprintf(out, "%zu cases, %zu requests, %zu rejection cases not submitted\n", res.cases,
                res.requests, res.skipped_rejections);
    if (a->check_rejection) {
        if (!res.rejection_checked) {
            golden_fail_what(&err, GOLDEN_EINVAL, a->manifest, "no rejection case to check");
            return fail(a, &err);
        }
        if (out && res.rejection_other[0])
            fprintf(out, "rejection case %s: REFUSED WITH ANOTHER ERROR (not context_limit_exceeded): %s\n",
                    res.rejection_case, res.rejection_other);
        else if (out)
            fprintf(out, "rejection case %s: %s\n", res.rejection_case,
                    res.rejection_refused ? "refused (context_limit_exceeded)" : "ACCEPTED");
        return res.rejection_refused ? 0 : 1;
    }
    return 0;
}

static int cmd_matrix(const args *a)
{
    if (!a->out)
        return cli_usage(a->c, "matrix needs -o MANIFEST");
    golden_error err;
    golden_error_clear(&err);
    golden_backend *b = NULL;
    int rc = load_backend(a, &b);
    if (rc)
        return rc;
    golden_replay_matrix_opts mo = {1, b, a->hypothesis, a->prompts, a->out, (uint64_t)a->seed,
                                    (int)a->max_len, (int)a->random, (int)a->repeated,
                                    (int)a->decode_steps, a->margin, (int)a->near_ties,
                                    a->c->force};
    golden_replay_matrix_result res;
    rc = golden_replay_matrix(&mo, &res, &err);
    golden_backend_close(b);
    if (rc)
        return fail(a, &err);
    FILE *out = cli_human(a->c);
    if (out)
        fprintf(out, "%zu cases (%zu rejection, %zu expert coverage, %zu near-tie); every expert "
                "hit: %s\n", res.cases, res.rejections, res.coverage_cases, res.near_ties,
                res.experts_covered ? "yes" : "no");
    return 0;
}

static int write_conform_junit(const args *a, const golden_conform_report *rep)
{
    golden_error err;
    golden_error_clear(&err);
    golden_junit_case *jc = calloc(rep->n ? rep->n : 1, sizeof *jc);
    char (*msg)[700] = calloc(rep->n ? rep->n : 1, sizeof *msg);
    for (size_t i = 0; jc && msg && i < rep->n; i++) {
        const golden_conform_check *k = &rep->checks[i];
        if (k->status == GOLDEN_CONFORM_FAIL)
            snprintf(msg[i], sizeof msg[i], "%s: %s", k->findings[0].kase, k->findings[0].what);
        else
            snprintf(msg[i], sizeof msg[i], "%s", k->error);
        jc[i] = (golden_junit_case){"conform", k->name, k->status != GOLDEN_CONFORM_PASS, false,
                                    k->status ? msg[i] : NULL, NULL, k->seconds};
    }
    int rc = jc && msg ? golden_junit_write(a->c->junit, a->c->force, TOOL " conform", jc, rep->n,
                                            &err)
                       : -1;
    free(jc);
    free(msg);
    if (rc)
        return jc && msg ? fail(a, &err) : oom(a);
    return 0;
}

static int write_conform(const args *a, const golden_conform_report *rep)
{
    golden_error err;
    golden_error_clear(&err);
    if (a->c->json) {
        json_t *j = golden_conform_json(rep);
        int rc = j ? golden_json_write(a->c->json, j, a->c->force, &err) : -1;
        json_decref(j);
        if (rc)
            return j ? fail(a, &err) : oom(a);
    }
    if (a->html) {
        json_t *j = golden_conform_json(rep);
        int rc = j ? golden_html_conform_report(j, a->html, a->c->force, &err) : -1;
        bool made = j != NULL;
        json_decref(j);
        if (rc)
            return made ? fail(a, &err) : oom(a);
    }
    if (a->c->junit)
        return write_conform_junit(a, rep);
    return 0;
}

static void print_conform(FILE *out, const golden_conform_report *rep)
{
    static const char *const st[] = {"pass", "FAIL", "ERROR"};
    if (out)
        fprintf(out, "%-13s %-6s %8s %12s  %s\n", "check", "status", "seconds", "compared",
                "first finding");
    for (size_t i = 0; i < rep->n; i++) {
        const golden_conform_check *k = &rep->checks[i];
        if (out) {
            fprintf(out, "%-13s %-6s %8.2f %12zu  ", k->name, st[k->status], k->seconds,
                    k->comparisons);
            if (k->status == GOLDEN_CONFORM_FAIL)
                fprintf(out, "%s: %s (%zu findings)\n", k->findings[0].kase, k->findings[0].what,
                        k->n_findings);
            else
                fprintf(out, "%s\n", k->status ? k->error : "");
        }
        /* findings and errors go to stderr even with --quiet: they say why the status is 1 */
        for (size_t f = 1; f < k->n_findings && f < GOLDEN_CONFORM_KEEP; f++)
            fprintf(stderr, TOOL ": %s: %s: %s\n", k->name, k->findings[f].kase, k->findings[f].what);
        if (k->status == GOLDEN_CONFORM_ERROR)
            fprintf(stderr, TOOL ": %s: %s\n", k->name, k->error);
    }
    for (size_t i = 0; out && i < rep->n; i++) {
        const golden_conform_check *k = &rep->checks[i];
        if (k->k_required > 0)
            fprintf(out, "\nsampling-topk: the settings need k >= %lld; the backend gives %lld\n",
                    (long long)k->k_required, (long long)k->k_backend);
        if (k->n_points)
            fprintf(out, "\nkv-growth   context  KV write B/token  KV read B/token  TPOT ms\n");
        for (size_t p = 0; p < k->n_points; p++)
            fprintf(out, "%20lld %17.0f %16.0f %8.3f\n", (long long)k->points[p].context,
                    k->points[p].kv_write_bytes, k->points[p].kv_read_bytes,
                    k->points[p].tpot_s * 1e3);
    }
}

static int cmd_conform(const args *a)
{
    golden_error err;
    golden_error_clear(&err);
    if (a->side && strcmp(a->side, "baseline") != 0 && strcmp(a->side, "candidate") != 0)
        return cli_usage(a->c, "--side takes baseline or candidate");
    const char *tmp = getenv("TMPDIR");
    golden_conform_opts co = {GOLDEN_CONFORM_OPTS_VERSION, a->backend, a->model, a->n_opts, a->opts,
                              a->c->threads, a->checks, a->max_context, a->tolerance,
                              a->router_tol, tmp && *tmp ? tmp : "/tmp", (uint64_t)a->seed,
                              a->sampling, 0, a->in_process ? NULL : &a->iso,
                              a->budget == 0 ? -1 : a->budget < 0 ? 0 : a->budget, a->nondet,
                              false};
    golden_conform_report rep;
    install_stop_handler();
    if (golden_conform_run(&co, &rep, &err))
        return fail(a, &err);
    if (stop_flag) { /* interrupted: no verdict, no report */
        golden_conform_report_free(&rep);
        golden_fail_what(&err, GOLDEN_EIO, NULL, "interrupted");
        return fail(a, &err);
    }
    print_conform(cli_human(a->c), &rep);
    int rc = write_conform(a, &rep);
    if (rc == 0 && a->faults &&
        golden_conform_faults_write(&rep, a->side ? a->side : "candidate", a->faults, a->c->force,
                                    &err))
        rc = fail(a, &err);
    if (rc == 0)
        rc = golden_conform_exit(&rep);
    golden_conform_report_free(&rep);
    return rc;
}

/* --sampling temp=X,top_k=N,top_p=X,min_p=X,repeat_penalty=X,repeat_last_n=N,n_probs=N,steps=N */
static int parse_sampling(cli *c, const char *arg, golden_conform_sampling *s)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", arg);
    for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '='), *end;
        double v = eq ? strtod(eq + 1, &end) : 0;
        if (!eq || !eq[1] || *end || !(v >= 0) || v > 1e9)
            return cli_usage(c, "--sampling: '%s' is not KEY=NUMBER", kv);
        *eq = 0;
        if (strcmp(kv, "temp") == 0) s->temp = v;
        else if (strcmp(kv, "top_k") == 0) s->top_k = (int)v;
        else if (strcmp(kv, "top_p") == 0) s->top_p = v;
        else if (strcmp(kv, "min_p") == 0) s->min_p = v;
        else if (strcmp(kv, "repeat_penalty") == 0) s->repeat_penalty = v;
        else if (strcmp(kv, "repeat_last_n") == 0) s->repeat_last_n = (int)v;
        else if (strcmp(kv, "n_probs") == 0) s->n_probs = (int)v;
        else if (strcmp(kv, "steps") == 0) s->steps = (int)v;
        else
            return cli_usage(c, "--sampling: unknown key '%s'", kv);
    }
    return 0;
}

static void print_profile(FILE *out, const golden_profile *p)
{
    fprintf(out, "%s\nlayer experts  k  tokens  empty small max/mean tok/expert  mass(mean/min)   "
            "margin(mean/min)  buckets 0|1|2-4|5-8|9-16|17-32|>32\n", p->path);
    for (size_t i = 0; i < p->n; i++) {
        const golden_profile_layer *L = &p->layers[i];
        fprintf(out, "%5d %7d %2d %7llu %6llu %5llu %8.3f %10.2f  %.4f/%.4f  %.5f/%.5f  ",
                L->layer, L->experts, L->k, (unsigned long long)L->tokens,
                (unsigned long long)L->empty, (unsigned long long)L->small, L->max_mean,
                L->tokens_per_selected, L->mass_mean, L->mass_min, L->margin_mean, L->margin_min);
        for (int b = 0; b < GOLDEN_PROFILE_BUCKETS; b++)
            fprintf(out, "%llu%s", (unsigned long long)L->bucket[b],
                    b + 1 < GOLDEN_PROFILE_BUCKETS ? "|" : "\n");
    }
}

/* The placed figures of each layer, or why there are none. */
static void print_placed(FILE *out, const golden_profile *p)
{
    if (!p->placement.file) {
        fprintf(out, "no --placement: dispatch, cross-chip bytes and padding slots need to know "
                "where experts live, which a golden does not say\n");
        return;
    }
    fprintf(out, "placement %s: %d chips\nlayer   dispatch B    combine B  all-to-all B  "
            "launches     slots   padding  dropped  chip max/mean  tokens hit per chip\n",
            p->placement.file, p->placement.chips);
    for (size_t i = 0; i < p->n; i++) {
        const golden_profile_placed *P = p->layers[i].placed;
        fprintf(out, "%5d %12llu %12llu %13llu %9llu %9llu %9llu %8llu %14.3f  ", p->layers[i].layer,
                (unsigned long long)P->dispatch_bytes, (unsigned long long)P->combine_bytes,
                (unsigned long long)(P->cross_dispatch_bytes + P->cross_combine_bytes),
                (unsigned long long)P->launches, (unsigned long long)P->slots,
                (unsigned long long)P->padding, (unsigned long long)P->dropped,
                P->chip_imbalance);
        for (int c = 0; c < p->placement.chips; c++)
            fprintf(out, "%llu%s", (unsigned long long)P->chip_tokens[c],
                    c + 1 < p->placement.chips ? "|" : "\n");
    }
}

static int cmd_profile(const args *a)
{
    int npos = a->c->nargs;
    char **pos = a->c->args;
    if (npos < 1 || npos > 2)
        return cli_usage(a->c, "profile needs one golden, or a baseline and a candidate");
    golden_error err;
    golden_error_clear(&err);
    golden_profile p[2];
    memset(p, 0, sizeof p);
    int rc = 0;
    golden_placement *pl = NULL;
    if (a->placement && golden_placement_load(a->placement, &pl, &err))
        rc = fail(a, &err);
    for (int i = 0; rc == 0 && i < npos; i++)
        if (golden_profile_build(pos[i], &p[i], &err) ||
            (pl && golden_profile_place(pos[i], pl, &p[i], &err)))
            rc = fail(a, &err);
    golden_placement_free(pl);
    FILE *out = cli_human(a->c);
    for (int i = 0; out && rc == 0 && i < npos; i++) {
        print_profile(out, &p[i]);
        print_placed(out, &p[i]);
    }
    if (rc == 0 && a->c->json) {
        json_t *j = golden_profile_json(&p[0], npos == 2 ? &p[1] : NULL);
        if (!j || golden_json_write(a->c->json, j, a->c->force, &err))
            rc = j ? fail(a, &err) : oom(a);
        json_decref(j);
    }
    if (rc == 0 && a->html) {
        json_t *j = golden_profile_json(&p[0], npos == 2 ? &p[1] : NULL);
        if (!j || golden_html_profile_report(j, a->html, a->c->force, &err))
            rc = j ? fail(a, &err) : oom(a);
        json_decref(j);
    }
    golden_profile_free(&p[0]);
    golden_profile_free(&p[1]);
    return rc;
}

/* One option of any command (each table holds only its own rows). 0, or 2 (printed). */
static int take_count(args *a, int id, const char *v)
{
    cli *c = a->c;
    switch (id) {
    case O_WARMUP: return parse_int(c, "--warmup", v, 0, 1000000, &a->warmup);
    case O_RUNS: return parse_int(c, "--runs", v, 1, 1000000, &a->runs);
    case O_LAYERS: return parse_int(c, "--layers", v, 1, 4096, &a->layers);
    case O_SEED: return parse_int(c, "--seed", v, 0, INT64_MAX, &a->seed);
    case O_SHARDS: return parse_int(c, "--shards", v, 1, 99999, &a->shards);
    case O_MAXLEN: return parse_int(c, "--max-len", v, 1, INT32_MAX, &a->max_len);
    case O_RANDOM: return parse_int(c, "--random", v, 0, 100000, &a->random);
    case O_REPEATED: return parse_int(c, "--repeated", v, 0, 100000, &a->repeated);
    case O_DSTEPS: return parse_int(c, "--decode-steps", v, 2, 1000000, &a->decode_steps);
    case O_NEARTIES: return parse_int(c, "--near-ties", v, 0, 1000000, &a->near_ties);
    case O_MAXCTX: return parse_int(c, "--max-context", v, 1, INT32_MAX, &a->max_context);
    case O_TOL: return parse_real(c, "--tolerance", v, &a->tolerance);
    case O_RTOL: return parse_real(c, "--router-tol", v, &a->router_tol);
    case O_BUDGET: return parse_real(c, "--budget", v, &a->budget);
    case O_NONDET: return parse_real(c, "--nondeterministic-ok", v, &a->nondet);
    case O_SAMPLING: return parse_sampling(c, v, &a->sampling);
    case O_MARGIN: {
        char *end;
        a->margin = strtod(v, &end);
        if (!*v || *end || !(a->margin > 0))
            return cli_usage(c, "--near-tie-margin: expected a positive number, got '%s'", v);
        return 0;
    }
    case O_DENSE: {
        long long l;
        if (parse_int(c, "--dense-layer", v, 0, 63, &l))
            return 2;
        a->dense_mask |= 1ull << l;
        return 0;
    }
    default: return 0;
    }
}

static int take_option(args *a, int id, const char *v)
{
    switch (id) {
    case O_MODEL: a->model = v; break;
    case O_MANIFEST: a->manifest = v; break;
    case O_SIDE: a->side = v; break;
    case O_GOLDEN: a->golden = v; break;
    case O_RAW: a->raw = v; break;
    case O_BACKEND: a->backend = v; break;
    case O_BOPT: a->opts[a->n_opts++] = v; break;
    case O_CASES: a->globs[a->n_globs++] = v; break;
    case O_TAPS: a->taps = v; break;
    case O_CHECKREJ: a->check_rejection = 1; break;
    case O_PRESET: a->preset = v; break;
    case O_DTYPE: a->dtype = v; break;
    case O_HYP: a->hypothesis = v; break;
    case O_PROMPTS: a->prompts = v; break;
    case O_CHECKS: a->checks = v; break;
    case O_FAULTS: a->faults = v; break;
    case O_PLACEMENT: a->placement = v; break;
    case O_OUTPUT: a->out = v; break;
    case O_HTML: a->html = v; break;
    case O_INPROC: a->in_process = 1; break;
    case O_BLOG: a->backend_log = v; break;
    case O_CALLTO: {
        char *end;
        a->call_timeout = strtod(v, &end);
        if (!*v || (*end && strcmp(end, "s") != 0) || !(a->call_timeout > 0) ||
            a->call_timeout > 1e6)
            return cli_usage(a->c, "--call-timeout: expected seconds > 0, got '%s'", v);
        break;
    }
    case O_BMEM: return parse_bytes(a->c, v, &a->backend_mem);
    default: return take_count(a, id, v);
    }
    return 0;
}

typedef struct {
    const char *name;
    const cli_spec *spec;
    int (*run)(const args *);
    bool model;   /* needs --model (or a plug-in backend) */
    bool outputs; /* writes --json / --junit */
} command;

static const command commands[] = {
    {"make-model", &make_model_spec, cmd_make_model, false, false},
    {"matrix", &matrix_spec, cmd_matrix, true, false},
    {"run", &run_spec, cmd_run, true, false},
    {"conform", &conform_spec, cmd_conform, true, true},
    {"profile", &profile_spec, cmd_profile, false, true},
};

/* Paths registered with the layer, which keeps pointers: they live until main returns. */
static char **owned;
static size_t n_owned, cap_owned;

static int add_input(cli *c, const char *path)
{
    if (n_owned == cap_owned) {
        size_t nc = cap_owned ? 2 * cap_owned : 64;
        char **n = realloc(owned, nc * sizeof *n);
        if (!n)
            return fprintf(stderr, TOOL ": out of memory\n"), 2;
        owned = n;
        cap_owned = nc;
    }
    if (!(owned[n_owned] = strdup(path)))
        return fprintf(stderr, TOOL ": out of memory\n"), 2;
    return cli_add_input(c, owned[n_owned++]);
}

/* Every file of the model folder is an input no output may overwrite (with or without
 * --force); a FIFO, device or socket there is refused before anything reads it. 0, or 2. */
static int register_model(cli *c, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0; /* a missing folder is the backend's error, said once */
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0 || S_ISDIR(st.st_mode))
            continue;
        if (!S_ISREG(st.st_mode)) {
            golden_error err;
            golden_fail_what(&err, GOLDEN_EINVAL, path, "not a regular file (a FIFO, device or "
                             "socket in a model folder is refused, never read)");
            rc = cli_fail(c, &err);
        } else {
            rc = add_input(c, path);
        }
    }
    closedir(d);
    return rc;
}

/* The manifest's token files (input.path of each line, relative to the manifest) are inputs
 * too, read through the one strict JSON Lines reader. A manifest that cannot be read here is
 * left to the run, which says why. 0, or 2. */
typedef struct {
    cli *c;
    const char *base;
    int rc;
} manifest_inputs;

static int manifest_line(void *ctx, golden_doc *line, size_t line_no, golden_error *err)
{
    (void)line_no;
    (void)err;
    manifest_inputs *m = ctx;
    json_t *j = golden_doc_root(line);
    const char *rel = json_string_value(json_object_get(json_object_get(j, "input"), "path"));
    if (rel) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", m->base, rel);
        m->rc = add_input(m->c, rel[0] == '/' ? rel : path);
    }
    return m->rc;
}

static int register_manifest(cli *c, const char *manifest)
{
    struct stat st;
    if (stat(manifest, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    char *dir = strdup(manifest);
    if (!dir)
        return fprintf(stderr, TOOL ": out of memory\n"), 2;
    manifest_inputs m = {c, dirname(dir), 0};
    golden_error err;
    (void)golden_doc_each_jsonl(manifest, manifest_line, &m, &err);
    free(dir);
    return m.rc;
}

/* The checks every command shares after parsing; 0, or 2 (printed). */
static int check_common(const command *cmd, args *a)
{
    cli *c = a->c;
    if (!cmd->outputs && (c->json || c->junit))
        return cli_usage(c, "%s: %s writes no report (its outputs are its own options)",
                         c->json ? "--json" : "--junit", cmd->name);
    if (cmd->run == cmd_profile && c->junit)
        return cli_usage(c, "profile makes no verdict: --junit does not apply");
    if (cmd->run != cmd_profile && c->nargs > 0)
        return cli_usage(c, "unexpected argument '%s'", c->args[0]);
    if (cmd->model && !a->model &&
        (cmd->run == cmd_conform || !a->backend || strcmp(a->backend, "cpu") == 0))
        return cli_usage(c, "%s needs --model DIR", cmd->name);
    if (a->in_process && a->backend && strcmp(a->backend, "cpu") != 0)
        return cli_usage(c, "--in-process is for the built-in cpu backend only (a plug-in always "
                         "runs in its own process)");
    if (a->in_process && (a->call_timeout > 0 || a->backend_mem || a->backend_log))
        return cli_usage(c, "--in-process: --call-timeout, --backend-mem and --backend-log "
                         "apply to a backend host");
    /* the plug-in itself is an input too: no --golden may replace the code under test */
    if ((a->model && register_model(c, a->model)) ||
        (a->manifest && register_manifest(c, a->manifest)) ||
        (a->backend && strcmp(a->backend, "cpu") != 0 && add_input(c, a->backend)))
        return 2;
    static char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    a->iso = (golden_backend_isolation){n > 0 ? self : "/proc/self/exe", a->call_timeout,
                                        a->backend_mem, a->backend_log, &stop_flag};
    return cli_outputs_ok(c);
}

static int run_command(const command *cmd, int argc, char **argv, const char **opts,
                       const char **globs)
{
    cli c;
    if (cli_init(&c, cmd->spec, argc, argv) != 0)
        return cli_exit(&c, 2);
    args a;
    memset(&a, 0, sizeof a);
    a.warmup = a.runs = -1;
    a.budget = -1;
    a.opts = opts;
    a.globs = globs;
    a.c = &c;
    const char *v;
    int id;
    while ((id = cli_next(&c, &v)) > 0)
        if (take_option(&a, id, v) != 0)
            return cli_exit(&c, 2);
    if (id == CLI_EXIT)
        return cli_exit(&c, c.status);
    if (check_common(cmd, &a) != 0)
        return cli_exit(&c, 2);
    return cli_exit(&c, cmd->run(&a));
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "__backend-host") == 0) /* the backend host (hidden) */
        return golden_backend_host_main(argc - 1, argv + 1);
    const command *cmd = NULL;
    for (size_t i = 0; argc > 1 && i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            cmd = &commands[i];
    if (!cmd)
        return cli_top_level(&top_spec, argc, argv, "make-model, matrix, run, conform or profile");
    const char **opts = calloc((size_t)argc + 1, sizeof *opts);
    const char **globs = calloc((size_t)argc + 1, sizeof *globs);
    int rc;
    if (opts && globs) {
        rc = run_command(cmd, argc - 1, argv + 1, opts, globs);
    } else {
        fprintf(stderr, TOOL ": out of memory\n");
        rc = 2;
    }
    free(opts);
    free(globs);
    for (size_t i = 0; i < n_owned; i++)
        free(owned[i]);
    free(owned);
    /* a run that failed writing (a full disk) may leave the HDF5 library with a file it could
     * not close; its exit handler would then crash after the error line was printed. The outputs
     * are already removed and stdout flushed by cli_exit: end without the library's handlers. */
    if (rc == 2 && strcmp(cmd->name, "run") == 0) {
        fflush(NULL);
        _exit(rc);
    }
    return rc;
}

/* npu-replay: drive an inference runtime (built-in cpu or a plug-in .so) through the input
 * matrix, capture goldens and raw timings; make test models. Parse, call libgolden, print, exit. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "golden/conform.h"
#include "golden/profile.h"
#include "golden/replay.h"
#include "golden/replay_run.h"
#include "golden/report.h"

#define TOOL "npu-replay"

static void usage(FILE *f)
{
    fputs("Usage: npu-replay make-model --preset tiny|qwen3-30b-a3b [--layers N] [--seed S]\n"
          "                             [--dtype bf16|f16|f32] [--shards N] [--dense-layer L]... -o DIR\n"
          "       npu-replay matrix --model DIR [--hypothesis FILE] [--prompts FILE] -o MANIFEST\n"
          "       npu-replay run --model DIR --manifest M --side baseline|candidate\n"
          "                      --golden OUT.h5 --raw RAW.jsonl [OPTIONS]\n"
          "       npu-replay conform --model DIR [--checks LIST] [--json F] [--junit F]\n"
          "       npu-replay profile GOLDEN [CANDIDATE] [--json F]\n"
          "\n"
          "Backend (matrix, run):\n"
          "      --backend cpu|PATH.so  the runtime (default: the built-in cpu reference)\n"
          "      --backend-opt KEY=VALUE  option for the backend (repeatable; cpu: dtype=f32|bf16,\n"
          "                             lanes=N, chunk=N)\n"
          "  -j, --threads N            worker threads (default: GOLDEN_THREADS or all cores)\n"
          "Run:\n"
          "      --warmup N             warm-up runs per case (default 10)\n"
          "      --runs N               measured runs per case (default 30, 100 for short cases)\n"
          "      --cases GLOB           run only matching case ids (repeatable)\n"
          "      --taps all|none|LIST   per-layer tensors to capture (LIST: comma-separated globs\n"
          "                             such as 'layers/*/router/*'; default all)\n"
          "      --check-rejection      submit one rejection case; the backend must refuse it\n"
          "Conform (docs/conformance.md):\n"
          "      --checks LIST          comma-separated: causal-mask,kv-positions,kv-lanes,\n"
          "                             kv-tail,kv-reset,rejection,router,sampling-topk,\n"
          "                             kv-growth (default all)\n"
          "      --max-context N        longest context the checks use (default the limit)\n"
          "      --tolerance X          logits/tap tolerance (default 0: bitwise)\n"
          "      --router-tol X         router weight tolerance (default 1e-5; 2^-7 bf16)\n"
          "      --sampling K=V,...     sampling-topk settings: temp, top_k, top_p, min_p,\n"
          "                             repeat_penalty, repeat_last_n, n_probs, steps\n"
          "      --json F, --junit F    the report for CI\n"
          "      --faults F             calculet-fault/v1 lines (stability/faults.jsonl) for\n"
          "                             failed backend calls, with the retest after reset;\n"
          "                             --side names the side (default candidate)\n"
          "Matrix:\n"
          "      --seed S               generator seed (default 0)\n"
          "      --max-len N            leave out lengths above N\n"
          "      --random N, --repeated N  cases per length (default 20, 10)\n"
          "      --decode-steps N       output tokens of decode cases (default 8)\n"
          "      --near-ties N          search N reference decode steps for near ties\n"
          "      --near-tie-margin X    top-2 logit margin of a near tie (default 0.001)\n"
          "Common:\n"
          "  -o, --output PATH          output (make-model: folder; matrix: manifest)\n"
          "      --force                replace existing outputs\n"
          "  -h, --help                 this text\n"
          "  -V, --version              print the version\n"
          "\n"
          "Exit status: 0 done (run: and --check-rejection saw a refusal; conform: every check\n"
          "passed), 1 the backend accepted a rejection case or a conform check failed, 2 could not run (bad usage, bad model or manifest, backend error).\n",
          f);
}

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static int fail(const golden_error *e)
{
    golden_error_print(stderr, TOOL, e);
    return 2;
}

static int bad_usage(const char *what)
{
    fprintf(stderr, TOOL ": %s (see " TOOL " --help)\n", what);
    return 2;
}

static int parse_int(const char *opt, const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) {
        fprintf(stderr, TOOL ": %s: '%s' is not an integer in [%lld, %lld]\n", opt, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

static void progress(void *ctx, size_t done, size_t total, const char *case_id)
{
    (void)ctx;
    if (isatty(2))
        fprintf(stderr, "\r" TOOL ": %s %zu/%zu\033[K%s", case_id, done, total,
                done == total ? "\n" : "");
}

typedef struct {
    const char *model, *manifest, *side, *golden, *raw, *backend, *taps, *out, *preset, *dtype,
        *hypothesis, *prompts, *checks, *json, *junit, *faults;
    const char **opts, **globs;
    size_t n_opts, n_globs;
    long long threads, warmup, runs, layers, seed, shards, max_len, random, repeated, decode_steps,
        near_ties;
    double margin, tolerance, router_tol;
    long long max_context;
    golden_conform_sampling sampling;
    unsigned long long dense_mask;
    int force, check_rejection;
} args;

static int load_backend(const args *a, golden_backend **b)
{
    golden_error err;
    golden_error_clear(&err);
    golden_backend_load_opts lo = {1, a->backend, a->model, a->n_opts, a->opts, (int)a->threads};
    if (golden_backend_load(&lo, b, &err))
        return fail(&err);
    return 0;
}

static int cmd_make_model(const args *a)
{
    if (!a->out)
        return bad_usage("make-model needs -o DIR");
    golden_make_model_opts mo = {1, a->preset ? a->preset : "tiny", (int)a->layers,
                                 (uint64_t)a->seed, a->dtype, (int)a->shards, a->out, a->force,
                                 a->dense_mask};
    golden_error err;
    golden_error_clear(&err);
    if (golden_make_model(&mo, &err))
        return fail(&err);
    return 0;
}

static int cmd_run(const args *a)
{
    if (!a->manifest || !a->side || !a->golden || !a->raw)
        return bad_usage("run needs --manifest, --side, --golden and --raw");
    golden_error err;
    golden_error_clear(&err);
    if (golden_outfile_check(a->golden, a->force, &err) || golden_outfile_check(a->raw, a->force, &err))
        return fail(&err);
    golden_backend *b = NULL;
    int rc = load_backend(a, &b);
    if (rc)
        return rc;
    golden_replay_run_opts ro = {1, b, a->manifest, a->side, a->golden, a->raw, (int)a->warmup,
                                 (int)a->runs, a->n_globs, a->globs, a->taps, a->force,
                                 a->check_rejection != 0, TOOL " " GOLDEN_VERSION, &stop_flag,
                                 progress, NULL};
    golden_replay_run_result res;
    if (golden_replay_run(&ro, &res, &err)) {
        golden_backend_close(b);
        return fail(&err);
    }
    golden_backend_close(b);
    printf("%zu cases, %zu requests, %zu rejection cases not submitted\n", res.cases,
           res.requests, res.skipped_rejections);
    if (a->check_rejection) {
        if (!res.rejection_checked) {
            fprintf(stderr, TOOL ": %s: no rejection case to check\n", a->manifest);
            return 2;
        }
        printf("rejection case %s: %s\n", res.rejection_case,
               res.rejection_refused ? "refused (context_limit_exceeded)" : "ACCEPTED");
        return res.rejection_refused ? 0 : 1;
    }
    return 0;
}

static int cmd_matrix(const args *a)
{
    if (!a->out)
        return bad_usage("matrix needs -o MANIFEST");
    golden_error err;
    golden_error_clear(&err);
    if (golden_outfile_check(a->out, a->force, &err))
        return fail(&err);
    golden_backend *b = NULL;
    int rc = load_backend(a, &b);
    if (rc)
        return rc;
    golden_replay_matrix_opts mo = {1, b, a->hypothesis, a->prompts, a->out, (uint64_t)a->seed,
                                    (int)a->max_len, (int)a->random, (int)a->repeated,
                                    (int)a->decode_steps, a->margin, (int)a->near_ties, a->force != 0};
    golden_replay_matrix_result res;
    rc = golden_replay_matrix(&mo, &res, &err);
    golden_backend_close(b);
    if (rc)
        return fail(&err);
    printf("%zu cases (%zu rejection, %zu expert coverage, %zu near-tie); every expert hit: %s\n",
           res.cases, res.rejections, res.coverage_cases, res.near_ties,
           res.experts_covered ? "yes" : "no");
    return 0;
}

static int write_conform(const args *a, const golden_conform_report *rep)
{
    golden_error err;
    golden_error_clear(&err);
    if (a->json) {
        json_t *j = golden_conform_json(rep);
        int rc = j ? golden_json_write(a->json, j, a->force, &err) : -1;
        json_decref(j);
        if (rc)
            return j ? fail(&err) : bad_usage("out of memory");
    }
    if (a->junit) {
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
        int rc = jc && msg ? golden_junit_write(a->junit, a->force, TOOL " conform", jc, rep->n, &err) : -1;
        free(jc);
        free(msg);
        if (rc)
            return fail(&err);
    }
    return 0;
}

static int cmd_conform(const args *a)
{
    golden_error err;
    golden_error_clear(&err);
    if ((a->json && golden_outfile_check(a->json, a->force, &err)) ||
        (a->junit && golden_outfile_check(a->junit, a->force, &err)) ||
        (a->faults && golden_outfile_check(a->faults, a->force, &err)))
        return fail(&err);
    if (a->side && strcmp(a->side, "baseline") != 0 && strcmp(a->side, "candidate") != 0)
        return bad_usage("--side takes baseline or candidate");
    const char *tmp = getenv("TMPDIR");
    golden_conform_opts co = {GOLDEN_CONFORM_OPTS_VERSION, a->backend, a->model, a->n_opts, a->opts,
                              (int)a->threads, a->checks, a->max_context, a->tolerance,
                              a->router_tol, tmp && *tmp ? tmp : "/tmp", (uint64_t)a->seed,
                              a->sampling, 0};
    golden_conform_report rep;
    if (golden_conform_run(&co, &rep, &err))
        return fail(&err);
    static const char *const st[] = {"pass", "FAIL", "ERROR"};
    printf("%-13s %-6s %8s %12s  %s\n", "check", "status", "seconds", "compared", "first finding");
    for (size_t i = 0; i < rep.n; i++) {
        const golden_conform_check *k = &rep.checks[i];
        printf("%-13s %-6s %8.2f %12zu  ", k->name, st[k->status], k->seconds, k->comparisons);
        if (k->status == GOLDEN_CONFORM_FAIL)
            printf("%s: %s (%zu findings)\n", k->findings[0].kase, k->findings[0].what, k->n_findings);
        else
            printf("%s\n", k->status ? k->error : "");
        for (size_t f = 1; f < k->n_findings && f < GOLDEN_CONFORM_KEEP; f++)
            fprintf(stderr, TOOL ": %s: %s: %s\n", k->name, k->findings[f].kase, k->findings[f].what);
        if (k->status == GOLDEN_CONFORM_ERROR)
            fprintf(stderr, TOOL ": %s: %s\n", k->name, k->error);
    }
    for (size_t i = 0; i < rep.n; i++) {
        const golden_conform_check *k = &rep.checks[i];
        if (k->k_required > 0)
            printf("\nsampling-topk: the settings need k >= %lld; the backend gives %lld\n",
                   (long long)k->k_required, (long long)k->k_backend);
        if (k->n_points)
            printf("\nkv-growth   context  KV write B/token  KV read B/token  TPOT ms\n");
        for (size_t p = 0; p < k->n_points; p++)
            printf("%20lld %17.0f %16.0f %8.3f\n", (long long)k->points[p].context,
                   k->points[p].kv_write_bytes, k->points[p].kv_read_bytes, k->points[p].tpot_s * 1e3);
    }
    int rc = write_conform(a, &rep);
    if (rc == 0 && a->faults &&
        golden_conform_faults_write(&rep, a->side ? a->side : "candidate", a->faults, a->force, &err))
        rc = fail(&err);
    if (rc == 0)
        rc = golden_conform_exit(&rep);
    golden_conform_report_free(&rep);
    return rc;
}

/* --sampling temp=X,top_k=N,top_p=X,min_p=X,repeat_penalty=X,repeat_last_n=N,n_probs=N,steps=N */
static int parse_sampling(const char *arg, golden_conform_sampling *s)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", arg);
    for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '='), *end;
        double v = eq ? strtod(eq + 1, &end) : 0;
        if (!eq || !eq[1] || *end || !(v >= 0) || v > 1e9) {
            fprintf(stderr, TOOL ": --sampling: '%s' is not KEY=NUMBER\n", kv);
            return -1;
        }
        *eq = 0;
        if (strcmp(kv, "temp") == 0) s->temp = v;
        else if (strcmp(kv, "top_k") == 0) s->top_k = (int)v;
        else if (strcmp(kv, "top_p") == 0) s->top_p = v;
        else if (strcmp(kv, "min_p") == 0) s->min_p = v;
        else if (strcmp(kv, "repeat_penalty") == 0) s->repeat_penalty = v;
        else if (strcmp(kv, "repeat_last_n") == 0) s->repeat_last_n = (int)v;
        else if (strcmp(kv, "n_probs") == 0) s->n_probs = (int)v;
        else if (strcmp(kv, "steps") == 0) s->steps = (int)v;
        else {
            fprintf(stderr, TOOL ": --sampling: unknown key '%s'\n", kv);
            return -1;
        }
    }
    return 0;
}

static void print_profile(const golden_profile *p)
{
    printf("%s\nlayer experts  k  tokens  empty small max/mean tok/expert  mass(mean/min)   "
           "margin(mean/min)  buckets 0|1|2-4|5-8|9-16|17-32|>32\n", p->path);
    for (size_t i = 0; i < p->n; i++) {
        const golden_profile_layer *L = &p->layers[i];
        printf("%5d %7d %2d %7llu %6llu %5llu %8.3f %10.2f  %.4f/%.4f  %.5f/%.5f  ", L->layer,
               L->experts, L->k, (unsigned long long)L->tokens, (unsigned long long)L->empty,
               (unsigned long long)L->small, L->max_mean, L->tokens_per_selected, L->mass_mean,
               L->mass_min, L->margin_mean, L->margin_min);
        for (int b = 0; b < GOLDEN_PROFILE_BUCKETS; b++)
            printf("%llu%s", (unsigned long long)L->bucket[b], b + 1 < GOLDEN_PROFILE_BUCKETS ? "|" : "\n");
    }
}

static int cmd_profile(const args *a, int npos, char **pos)
{
    if (npos < 1 || npos > 2)
        return bad_usage("profile needs one golden, or a baseline and a candidate");
    golden_error err;
    golden_error_clear(&err);
    if (a->json && golden_outfile_check(a->json, a->force, &err))
        return fail(&err);
    golden_profile p[2];
    memset(p, 0, sizeof p);
    int rc = 0;
    for (int i = 0; rc == 0 && i < npos; i++)
        if (golden_profile_build(pos[i], &p[i], &err))
            rc = fail(&err);
    for (int i = 0; rc == 0 && i < npos; i++)
        print_profile(&p[i]);
    if (rc == 0 && a->json) {
        json_t *j = golden_profile_json(&p[0], npos == 2 ? &p[1] : NULL);
        if (!j || golden_json_write(a->json, j, a->force, &err))
            rc = j ? fail(&err) : bad_usage("out of memory");
        json_decref(j);
    }
    golden_profile_free(&p[0]);
    golden_profile_free(&p[1]);
    return rc;
}

static int parse_real(const char *opt, const char *s, double *out)
{
    char *end;
    *out = strtod(s, &end);
    if (!*s || *end || !(*out >= 0) || *out > 1e30) {
        fprintf(stderr, TOOL ": %s: '%s' is not a number >= 0\n", opt, s);
        return -1;
    }
    return 0;
}

/* Everything but the two arrays main owns (so every early return frees them). */
static int tool_main(int argc, char **argv, const char **opts, const char **globs)
{
    enum { O_MODEL = 256, O_MANIFEST, O_SIDE, O_GOLDEN, O_RAW, O_BACKEND, O_BOPT, O_WARMUP, O_RUNS,
           O_CASES, O_TAPS, O_CHECKREJ, O_PRESET, O_LAYERS, O_SEED, O_DTYPE, O_SHARDS, O_FORCE,
           O_HYP, O_PROMPTS, O_MAXLEN, O_RANDOM, O_REPEATED, O_DSTEPS, O_NEARTIES, O_MARGIN, O_DENSE, O_CHECKS, O_JSON, O_JUNIT, O_MAXCTX, O_TOL, O_RTOL, O_SAMPLING, O_FAULTS, O_HELP, O_VERSION };
    static const struct option lo[] = {
        {"model", required_argument, NULL, O_MODEL}, {"manifest", required_argument, NULL, O_MANIFEST},
        {"side", required_argument, NULL, O_SIDE}, {"golden", required_argument, NULL, O_GOLDEN},
        {"raw", required_argument, NULL, O_RAW}, {"backend", required_argument, NULL, O_BACKEND},
        {"backend-opt", required_argument, NULL, O_BOPT}, {"warmup", required_argument, NULL, O_WARMUP},
        {"runs", required_argument, NULL, O_RUNS}, {"cases", required_argument, NULL, O_CASES},
        {"taps", required_argument, NULL, O_TAPS}, {"check-rejection", no_argument, NULL, O_CHECKREJ},
        {"preset", required_argument, NULL, O_PRESET}, {"layers", required_argument, NULL, O_LAYERS},
        {"seed", required_argument, NULL, O_SEED}, {"dtype", required_argument, NULL, O_DTYPE},
        {"shards", required_argument, NULL, O_SHARDS}, {"force", no_argument, NULL, O_FORCE},
        {"hypothesis", required_argument, NULL, O_HYP}, {"prompts", required_argument, NULL, O_PROMPTS},
        {"max-len", required_argument, NULL, O_MAXLEN}, {"random", required_argument, NULL, O_RANDOM},
        {"repeated", required_argument, NULL, O_REPEATED},
        {"decode-steps", required_argument, NULL, O_DSTEPS},
        {"near-ties", required_argument, NULL, O_NEARTIES},
        {"near-tie-margin", required_argument, NULL, O_MARGIN},
        {"dense-layer", required_argument, NULL, O_DENSE},
        {"checks", required_argument, NULL, O_CHECKS}, {"json", required_argument, NULL, O_JSON},
        {"junit", required_argument, NULL, O_JUNIT},
        {"max-context", required_argument, NULL, O_MAXCTX},
        {"tolerance", required_argument, NULL, O_TOL},
        {"router-tol", required_argument, NULL, O_RTOL},
        {"sampling", required_argument, NULL, O_SAMPLING},
        {"faults", required_argument, NULL, O_FAULTS},
        {"output", required_argument, NULL, 'o'}, {"threads", required_argument, NULL, 'j'},
        {"help", no_argument, NULL, O_HELP}, {"version", no_argument, NULL, O_VERSION},
        {NULL, 0, NULL, 0}};
    args a;
    memset(&a, 0, sizeof a);
    a.warmup = a.runs = -1;
    a.opts = opts;
    a.globs = globs;
    const char *env = getenv("GOLDEN_THREADS");
    if (env && parse_int("GOLDEN_THREADS", env, 0, 256, &a.threads))
        return 2;
    if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        usage(stdout);
        return 0;
    }
    if (argc >= 2 && (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0)) {
        printf(TOOL " " GOLDEN_VERSION "\n");
        return 0;
    }
    if (argc < 2 || argv[1][0] == '-')
        return bad_usage("needs a command: make-model, matrix, run or conform");
    const char *cmd = argv[1];
    int c;
    opterr = 0;
    optind = 2;
    while ((c = getopt_long(argc, argv, "o:j:h", lo, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case O_MODEL: a.model = optarg; break;
        case O_MANIFEST: a.manifest = optarg; break;
        case O_SIDE: a.side = optarg; break;
        case O_GOLDEN: a.golden = optarg; break;
        case O_RAW: a.raw = optarg; break;
        case O_BACKEND: a.backend = optarg; break;
        case O_BOPT: a.opts[a.n_opts++] = optarg; break;
        case O_WARMUP: bad = parse_int("--warmup", optarg, 0, 1000000, &a.warmup); break;
        case O_RUNS: bad = parse_int("--runs", optarg, 1, 1000000, &a.runs); break;
        case O_CASES: a.globs[a.n_globs++] = optarg; break;
        case O_TAPS: a.taps = optarg; break;
        case O_CHECKREJ: a.check_rejection = 1; break;
        case O_PRESET: a.preset = optarg; break;
        case O_LAYERS: bad = parse_int("--layers", optarg, 1, 4096, &a.layers); break;
        case O_SEED: bad = parse_int("--seed", optarg, 0, INT64_MAX, &a.seed); break;
        case O_DTYPE: a.dtype = optarg; break;
        case O_SHARDS: bad = parse_int("--shards", optarg, 1, 99999, &a.shards); break;
        case O_FORCE: a.force = 1; break;
        case O_HYP: a.hypothesis = optarg; break;
        case O_PROMPTS: a.prompts = optarg; break;
        case O_MAXLEN: bad = parse_int("--max-len", optarg, 1, INT32_MAX, &a.max_len); break;
        case O_RANDOM: bad = parse_int("--random", optarg, 0, 100000, &a.random); break;
        case O_REPEATED: bad = parse_int("--repeated", optarg, 0, 100000, &a.repeated); break;
        case O_DSTEPS: bad = parse_int("--decode-steps", optarg, 2, 1000000, &a.decode_steps); break;
        case O_NEARTIES: bad = parse_int("--near-ties", optarg, 0, 1000000, &a.near_ties); break;
        case O_MARGIN: {
            char *end;
            a.margin = strtod(optarg, &end);
            if (!*optarg || *end || !(a.margin > 0))
                return bad_usage("--near-tie-margin needs a positive number");
            break;
        }
        case O_DENSE: {
            long long l;
            bad = parse_int("--dense-layer", optarg, 0, 63, &l);
            a.dense_mask |= 1ull << l;
            break;
        }
        case O_CHECKS: a.checks = optarg; break;
        case O_JSON: a.json = optarg; break;
        case O_JUNIT: a.junit = optarg; break;
        case O_MAXCTX: bad = parse_int("--max-context", optarg, 1, INT32_MAX, &a.max_context); break;
        case O_TOL: bad = parse_real("--tolerance", optarg, &a.tolerance); break;
        case O_RTOL: bad = parse_real("--router-tol", optarg, &a.router_tol); break;
        case O_FAULTS: a.faults = optarg; break;
        case O_SAMPLING: bad = parse_sampling(optarg, &a.sampling); break;
        case 'o': a.out = optarg; break;
        case 'j': bad = parse_int("--threads", optarg, 1, 256, &a.threads); break;
        case 'h': case O_HELP: usage(stdout); return 0;
        case O_VERSION: printf(TOOL " " GOLDEN_VERSION "\n"); return 0;
        default: {
            char msg[300];
            snprintf(msg, sizeof msg, "bad option or missing argument: %s", argv[optind - 1]);
            return bad_usage(msg);
        }
        }
        if (bad)
            return 2;
    }
    if (optind != argc && strcmp(cmd, "profile") != 0)
        return bad_usage("unexpected argument");
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    int rc;
    if (strcmp(cmd, "make-model") == 0)
        rc = cmd_make_model(&a);
    else if (strcmp(cmd, "run") == 0)
        rc = a.model || (a.backend && strcmp(a.backend, "cpu") != 0) ? cmd_run(&a)
                                                                    : bad_usage("run needs --model DIR");
    else if (strcmp(cmd, "matrix") == 0)
        rc = a.model || (a.backend && strcmp(a.backend, "cpu") != 0) ? cmd_matrix(&a)
                                                                    : bad_usage("matrix needs --model DIR");
    else if (strcmp(cmd, "profile") == 0)
        rc = cmd_profile(&a, argc - optind, argv + optind);
    else if (strcmp(cmd, "conform") == 0)
        rc = a.model ? cmd_conform(&a) : bad_usage("conform needs --model DIR");
    else
        rc = bad_usage("unknown command (make-model, matrix, run, conform, profile)");
    return rc;
}

int main(int argc, char **argv)
{
    const char **opts = calloc((size_t)argc + 1, sizeof *opts);
    const char **globs = calloc((size_t)argc + 1, sizeof *globs);
    int rc = opts && globs ? tool_main(argc, argv, opts, globs) : bad_usage("out of memory");
    free(opts);
    free(globs);
    return rc;
}

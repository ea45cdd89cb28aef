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
#include "common/ranks.h"
#include "common/replay_ranks.h"
#include "golden/conform.h"
#include "golden/doc.h"
#include "golden/html.h"
#include "golden/parse.h"
#include "golden/profile.h"
#include "golden/replay.h"
#include "golden/replay_run.h"
#include "golden/report.h"
#include "golden/score.h"
#include "golden/soak.h"

#define TOOL "npu-replay"

/* What the options say: the typed rows store here, one struct per command (the backend rows
 * that matrix, run and conform share store in `bk`); the layer parses and checks every value. */
static struct {
    const char *model, *backend, *log;
    cli_list opts;
    double call_timeout;
    uint64_t mem;
    bool in_process;
} bk;

static struct {
    const char *preset, *dtype, *out;
    int64_t layers, shards;
    uint64_t seed;
    cli_list dense;
} mm;

static struct {
    const char *hypothesis, *prompts, *out, *texts, *tokenizer;
    uint64_t seed;
    int64_t max_len, random, repeated, decode_steps, near_ties;
    double margin;
} mx = {.random = -1, .repeated = -1, .decode_steps = 0, .margin = 0};

static struct {
    const char *manifest, *side, *golden, *raw, *taps, *faults;
    int64_t warmup, runs, concurrency;
    cli_list cases;
    bool check_rejection;
    double qps;
    int arrivals;
    int batch; /* 0 auto, 1 off */
    uint64_t seed;
    int64_t topk;
    const char *sampling;
} rn = {.warmup = -1, .runs = -1};

static const char *const arrival_names[] = {"poisson", NULL};
static const char *const batch_names[] = {"auto", "off", NULL};

static struct {
    const char *checks, *sampling, *faults, *side, *html, *golden;
    int64_t max_context, sampling_draws, sampling_positions;
    double tolerance, router_tol, budget, nondet, golden_kl, golden_lsm, sampling_alpha;
    uint64_t seed;
    bool budget_given;
} cf;

static struct {
    const char *placement, *html;
} pf;

static struct {
    const char *manifest, *side, *faults, *out, *graph, *experiment;
    cli_list cases;
    double duration, jitter, checkpoint_every;
    int64_t concurrency, rounds;
    uint64_t seed;
    const char *checkpoint;
    bool resume;
} sk = {.side = "candidate", .concurrency = 2, .jitter = 200e-6, .checkpoint_every = 1};

static struct {
    const char *manifest, *side, *out, *baseline;
    cli_list cases;
} sc;

/* The rows matrix, run and conform share (a macro: each table is one array). */
#define BACKEND_ROWS                                                                           \
    CLI_OPT_STRING(0, 0, "model", "DIR", "the model folder (make-model's output)", 0, &bk.model), \
    CLI_OPT_STRING(0, 0, "backend", "cpu|PATH.so", "the runtime (default: the built-in cpu\n"  \
                   "reference)", 0, &bk.backend),                                               \
    CLI_OPT_LIST(0, 0, "backend-opt", "KEY=VALUE", "option for the backend (repeatable; cpu:\n" \
                 "dtype=f32|bf16, lanes=N, chunk=N)", 0, &bk.opts, false, NULL),                \
    CLI_OPT_DURATION(0, 0, "call-timeout", "SECONDS", "deadline of a one-token backend call\n"  \
                     "(default 60; a prefill of n tokens gets SECONDS*(1+n/64))",               \
                     &bk.call_timeout, 1, 0.001, 1e6),                                          \
    CLI_OPT_SIZE(0, 0, "backend-mem", "BYTES", "address-space limit of the backend host\n"     \
                 "(K/M/G suffixes; default none)", &bk.mem, 1, 1, (uint64_t)1 << 50),          \
    CLI_OPT_STRING(0, 0, "backend-log", "FILE", "the backend host's stdout and stderr\n"       \
                   "(appended; default $TMPDIR/npu-replay-backend.PID.log,\nremoved when empty)", \
                   0, &bk.log),                                                                 \
    CLI_OPT_FLAG(0, 0, "in-process", "run the built-in cpu backend in this process\n"         \
                 "(speed tests only: no isolation)", &bk.in_process)

static const cli_opt make_model_options[] = {
    CLI_OPT_STRING(0, 0, "preset", "NAME", "tiny or qwen3-30b-a3b (default tiny)", 0, &mm.preset),
    CLI_OPT_INT(0, 0, "layers", "N", "decoder layers (default: the preset's)", &mm.layers, 1, 4096),
    CLI_OPT_UINT(0, 0, "seed", "S", "weight generator seed (default 0)", &mm.seed, 0, UINT64_MAX),
    CLI_OPT_STRING(0, 0, "dtype", "bf16|f16|f32", "weight type (default: the preset's)", 0,
                   &mm.dtype),
    CLI_OPT_INT(0, 0, "shards", "N", "safetensors shards", &mm.shards, 1, 99999),
    CLI_OPT_LIST(0, 0, "dense-layer", "L", "layer L is a dense MLP, not MoE (repeatable, 0 to 63)",
                 0, &mm.dense, false, NULL),
    CLI_OPT_STRING(0, 'o', "output", "DIR", "the model folder to create (required)", 0, &mm.out),
    CLI_END,
};

static const cli_opt matrix_options[] = {
    BACKEND_ROWS,
    CLI_OPT_STRING(0, 0, "hypothesis", "FILE", "the hypothesis document (its input-space section)",
                   CLI_INPUT, &mx.hypothesis),
    CLI_OPT_STRING(0, 0, "prompts", "FILE", "fixed prompts (JSON lines) added to the matrix",
                   CLI_INPUT, &mx.prompts),
    CLI_OPT_STRING(0, 0, "texts", "FILE", "labelled texts (JSON lines {\"domain\", \"text\"}) added "
                   "to the matrix (needs --tokenizer)", CLI_INPUT, &mx.texts),
    CLI_OPT_STRING(0, 0, "tokenizer", "FILE", "the tokenizer.json that encodes --texts", CLI_INPUT,
                   &mx.tokenizer),
    CLI_OPT_STRING(0, 'o', "output", "MANIFEST", "the manifest to write (required)", CLI_OUTPUT,
                   &mx.out),
    CLI_OPT_UINT(0, 0, "seed", "S", "generator seed (default 0)", &mx.seed, 0, UINT64_MAX),
    CLI_OPT_INT(0, 0, "max-len", "N", "leave out lengths above N", &mx.max_len, 1, INT32_MAX),
    CLI_OPT_INT(0, 0, "random", "N", "random cases per length (default 20; 0 = none)", &mx.random,
                0, 100000),
    CLI_OPT_INT(0, 0, "repeated", "N", "repeated-token cases per length (default 10; 0 = none)",
                &mx.repeated, 0, 100000),
    CLI_OPT_INT(0, 0, "decode-steps", "N", "output tokens of decode cases (default 8)",
                &mx.decode_steps, 2, 1000000),
    CLI_OPT_INT(0, 0, "near-ties", "N", "search N reference decode steps for near ties",
                &mx.near_ties, 0, 1000000),
    CLI_OPT_REAL(0, 0, "near-tie-margin", "X", "top-2 logit margin of a near tie (default 0.001)",
                 &mx.margin, 1e-30, 1e30),
    CLI_END,
};

static const cli_opt run_options[] = {
    BACKEND_ROWS,
    CLI_OPT_STRING(0, 0, "manifest", "FILE", "the input manifest (matrix's output; required)",
                   CLI_INPUT, &rn.manifest),
    CLI_OPT_STRING(0, 0, "side", "baseline|candidate", "which side this run is (required)", 0,
                   &rn.side),
    CLI_OPT_STRING(0, 0, "golden", "OUT.h5", "the golden to write (required)", CLI_OUTPUT,
                   &rn.golden),
    CLI_OPT_STRING(0, 0, "raw", "RAW.jsonl", "raw per-request timings to write (required)",
                   CLI_OUTPUT, &rn.raw),
    CLI_OPT_INT(0, 0, "warmup", "N", "warm-up runs per case (default 10)", &rn.warmup, 0, 1000000),
    CLI_OPT_INT(0, 0, "runs", "N", "measured runs per case (default 30, 100 for short cases)",
                &rn.runs, 1, 1000000),
    CLI_OPT_LIST(0, 0, "cases", "GLOB", "run only matching case ids (repeatable)", 0, &rn.cases,
                 false, NULL),
    CLI_OPT_INT(0, 0, "concurrency", "N", "requests of a case in flight at once, each on its own\n"
                "lane (closed loop; default: the manifest's concurrency\ncolumn)", &rn.concurrency,
                1, 65536),
    CLI_OPT_REAL(0, 0, "qps", "R", "open loop: issue each case's requests at R per second\n"
                 "on a seeded arrival schedule onto the lanes of\n--concurrency (default: closed loop)",
                 &rn.qps, 1e-6, 1e9),
    CLI_OPT_CHOICE(0, 0, "arrivals", "poisson", "the open loop's schedule (default poisson:\n"
                   "exponential inter-arrival times of mean 1/R)", &rn.arrivals, arrival_names),
    CLI_OPT_UINT(0, 0, "seed", "S", "seed of the arrival schedule (default 0)", &rn.seed, 0,
                 UINT64_MAX),
    CLI_OPT_CHOICE(0, 0, "batch", "auto|off", "several requests in flight: one step_batch call\n"
                   "per round when the backend has it (auto, default)\nor one call per lane (off)",
                   &rn.batch, batch_names),
    CLI_OPT_INT(0, 0, "topk", "K", "top-k output mode: check at every step that the\n"
                "backend's K largest logits cover --sampling (exit 1\nwhen they do not)", &rn.topk,
                1, GOLDEN_BK_MAX_TOPK),
    CLI_OPT_STRING(0, 0, "sampling", "K=V,...", "the settings --topk must cover (conform's keys\n"
                   "and defaults; temp=0 is greedy, top_k=0 off)", 0, &rn.sampling),
    CLI_OPT_STRING(0, 0, "taps", "all|none|LIST", "per-layer tensors to capture (LIST:\n"
                   "comma-separated globs such as 'layers/*/router/*';\ndefault all)", 0, &rn.taps),
    CLI_OPT_FLAG(0, 0, "check-rejection", "submit one rejection case; the backend must\n"
                 "refuse it", &rn.check_rejection),
    CLI_OPT_STRING(0, 0, "faults", "FILE", "calculet-fault/v1 lines (stability/faults.jsonl):\n"
                   "empty when the run completes; the fault that ended it,\nwith the retest after "
                   "reset", CLI_OUTPUT, &rn.faults),
    CLI_END,
};

static const cli_opt conform_options[] = {
    BACKEND_ROWS,
    CLI_OPT_STRING(0, 0, "checks", "LIST", "comma-separated: causal-mask,kv-positions,kv-lanes,\n"
                   "kv-tail,kv-reset,rejection,router,taps,determinism,\nsampling-topk,sampling-stats,"
                   "kv-growth,golden (default all;\ngolden with --golden)", 0, &cf.checks),
    CLI_OPT_STRING(0, 0, "golden", "REF.h5", "a `run` golden of the reference backend: replay\n"
                   "its requests, judge the logits (KL, log-softmax, top-1)", CLI_INPUT, &cf.golden),
    CLI_OPT_REAL(0, 0, "golden-kl", "X", "golden: per-step KL allowed (default 1e-6)",
                 &cf.golden_kl, 0, 1e30),
    CLI_OPT_REAL(0, 0, "golden-logsoftmax", "X", "golden: max |log-softmax difference| allowed\n"
                 "(default 1e-3)", &cf.golden_lsm, 0, 1e30),
    CLI_OPT_INT(0, 0, "max-context", "N", "longest context the checks use (default the limit)",
                &cf.max_context, 1, INT32_MAX),
    CLI_OPT_REAL(0, 0, "tolerance", "X", "logits/tap tolerance (default 0: bitwise)",
                 &cf.tolerance, 0, 1e30),
    CLI_OPT_REAL(0, 0, "router-tol", "X", "router weight tolerance (default 1e-5; 2^-7 bf16)",
                 &cf.router_tol, 0, 1e30),
    CLI_OPT_STRING(0, 0, "sampling", "K=V,...", "sampling-topk settings: temp, top_k, top_p,\n"
                   "min_p, repeat_penalty, repeat_last_n, n_probs, steps", 0, &cf.sampling),
    CLI_OPT_INT(0, 0, "sampling-draws", "N", "sampling-stats: sample calls a position of a\n"
                "setting (default 4096)", &cf.sampling_draws, 20, 1000000),
    CLI_OPT_INT(0, 0, "sampling-positions", "N", "sampling-stats: positions a setting (default 4)",
                &cf.sampling_positions, 1, 64),
    CLI_OPT_REAL(0, 0, "sampling-alpha", "X", "sampling-stats: false-alarm rate of the check\n"
                 "(default 1e-6; each chi-square test at X/7)", &cf.sampling_alpha, 1e-300, 0.49),
    CLI_OPT_UINT(0, 0, "seed", "S", "seed of the generated requests and random positions\n"
                 "(default 0)", &cf.seed, 0, UINT64_MAX),
    {.long_name = "budget", .arg = "S", .help = "seconds each position check spends on seeded\n"
     "random positions past the boundary set (default 1;\n0 none)", .type = CLI_REAL,
     .dest = &cf.budget, .given = &cf.budget_given, .fmin = 0, .fmax = 1e30},
    CLI_OPT_REAL(0, 0, "nondeterministic-ok", "TOL", "determinism: allow |a-b| <= TOL between\n"
                 "two opens (default: bitwise)", &cf.nondet, 0, 1e30),
    CLI_OPT_STRING(0, 0, "faults", "FILE", "calculet-fault/v1 lines (stability/faults.jsonl)\n"
                   "for failed backend calls, with the retest after reset", CLI_OUTPUT,
                   &cf.faults),
    CLI_OPT_STRING(0, 0, "side", "baseline|candidate", "the side --faults names (default\n"
                   "candidate)", 0, &cf.side),
    CLI_OPT_STRING(0, 0, "html", "FILE", "self-contained HTML report: verdicts, KV growth\n"
                   "curve (docs/reports.md)", CLI_OUTPUT, &cf.html),
    CLI_END,
};

static const cli_opt soak_options[] = {
    BACKEND_ROWS,
    CLI_OPT_STRING(0, 0, "manifest", "FILE", "the input manifest (required)", CLI_INPUT,
                   &sk.manifest),
    CLI_OPT_LIST(0, 0, "cases", "GLOB", "soak only matching case ids (repeatable)", 0, &sk.cases,
                 false, NULL),
    CLI_OPT_DURATION(0, 0, "duration", "D", "how long to soak (required; 24h for section 13.2)",
                     &sk.duration, 1, 0.001, 1e7),
    CLI_OPT_INT(0, 0, "concurrency", "N", "requests in flight, one a lane (default 2)",
                &sk.concurrency, 1, 64),
    CLI_OPT_UINT(0, 0, "seed", "S", "seed of the delays and call orders (default 0)", &sk.seed, 0,
                 INT64_MAX),
    CLI_OPT_DURATION(0, 0, "jitter", "T", "each call waits a seeded uniform delay in [0, T]\n"
                     "first (default 200us; a bare number is microseconds)", &sk.jitter, 1e-6, 0,
                     1),
    CLI_OPT_STRING(0, 0, "side", "baseline|candidate", "the side the documents name (default\n"
                   "candidate)", 0, &sk.side),
    CLI_OPT_STRING(0, 0, "faults", "FILE", "calculet-fault/v1 lines: every mismatch and failed\n"
                   "call (the first 1000; the result counts all)", CLI_OUTPUT, &sk.faults),
    CLI_OPT_STRING(0, 'o', "output", "FILE", "the calculet-soak-result/v1 document (required)",
                   CLI_OUTPUT, &sk.out),
    CLI_OPT_STRING(0, 0, "graph", "FILE", "the compiled graph soaked: its SHA-256 is the\n"
                   "result's graph_sha256", CLI_INPUT, &sk.graph),
    CLI_OPT_STRING(0, 0, "experiment", "DIR", "the experiment folder soaked: experiment_id from\n"
                   "its hypothesis.yaml, and without --graph the graph is\n"
                   "the file its SIDE/manifest.json#/calbin/path names", 0, &sk.experiment),
    CLI_OPT_STRING(0, 0, "checkpoint", "FILE", "keep where the soak is and what it saw in FILE\n"
                   "(replaced atomically; an existing one needs --force)", 0, &sk.checkpoint),
    CLI_OPT_DURATION(0, 0, "checkpoint-every", "T", "seconds between checkpoints (default 1;\n"
                     "0 = after every round)", &sk.checkpoint_every, 1, 0, 1e7),
    CLI_OPT_FLAG(0, 0, "resume", "continue the soak of --checkpoint FILE (after a crash\n"
                 "or a stop): same options, its counts and hashes", &sk.resume),
    CLI_OPT_INT(0, 0, "rounds", "N", "no round starts after N rounds (default: no bound)",
                &sk.rounds, 1, INT64_MAX),
    CLI_END,
};

static const cli_opt score_options[] = {
    BACKEND_ROWS,
    CLI_OPT_STRING(0, 0, "manifest", "FILE", "the input manifest (required)", CLI_INPUT,
                   &sc.manifest),
    CLI_OPT_STRING(0, 0, "side", "baseline|candidate", "which side this score is (required)", 0,
                   &sc.side),
    CLI_OPT_LIST(0, 0, "cases", "GLOB", "score only matching case ids (repeatable)", 0, &sc.cases,
                 false, NULL),
    CLI_OPT_STRING(0, 0, "baseline", "SCORE.json", "a baseline's calculet-score/v1: print each\n"
                   "dataset's perplexity change against it (shown, not judged)", CLI_INPUT,
                   &sc.baseline),
    CLI_OPT_STRING(0, 'o', "output", "FILE", "the calculet-score/v1 document (required)",
                   CLI_OUTPUT, &sc.out),
    CLI_END,
};

static const cli_opt no_options[] = {CLI_END};

static const cli_opt profile_options[] = {
    CLI_OPT_STRING(0, 0, "placement", "FILE", "where experts and tokens live\n"
                   "(calculet-expert-placement/v1, YAML or JSON): adds\ndispatch, all-to-all and "
                   "padding figures", CLI_INPUT, &pf.placement),
    CLI_OPT_STRING(0, 0, "html", "FILE", "self-contained HTML report: expert hit heatmap,\n"
                   "share changes, bucket histograms (docs/reports.md)", CLI_OUTPUT, &pf.html),
    CLI_END,
};

static const cli_spec top_spec = {
    .name = TOOL,
    .synopsis = "make-model|matrix|run|conform|soak|score|profile [OPTIONS] ...",
    .about = "Drives an inference runtime (the built-in cpu reference or a plug-in .so) through\n"
             "the input matrix, captures goldens and raw timings, checks a backend's\n"
             "conformance and profiles router taps. `npu-replay COMMAND --help` describes one\n"
             "command: make-model, matrix, run, conform, soak, score, profile.",
    .opts = no_options,
    .exit_status = "0 done, 1 a verdict failed (see the command), 2 could not run.",
};

static const cli_spec make_model_spec = {
    .name = TOOL,
    .synopsis = "make-model --preset tiny|qwen3-30b-a3b [OPTIONS] -o DIR",
    .about = "Writes a test model folder (config.json, tokenizer, safetensors weights).",
    .opts = make_model_options,
    .json_help = "not written by make-model (refused)",
    .junit_help = "not written by make-model (refused)",
    .exit_status = "0 written, 2 could not write (bad usage, DIR exists without --force).",
};

static const cli_spec matrix_spec = {
    .name = TOOL,
    .synopsis = "matrix --model DIR [--hypothesis FILE] [--prompts FILE] [--texts FILE --tokenizer "
                "FILE] [OPTIONS] -o MANIFEST",
    .about = "Generates the input matrix (calculet-input-manifest/v1) for the model's limits:\n"
             "random and repeated prompts per length, rejection cases, expert coverage and\n"
             "near ties.",
    .opts = matrix_options,
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
    .opts = run_options,
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
    .opts = conform_options,
    .json_help = "write the conformance report (- = stdout)",
    .junit_help = "write JUnit XML, one test case per check (- = stdout)",
    .exit_status = "0 every check passed, 1 a check failed, 2 could not run (bad usage, a\n"
                   "check could not be run).",
};

static const cli_spec soak_spec = {
    .name = TOOL,
    .synopsis = "soak --model DIR --manifest M --duration D [--concurrency N] -o RESULT [OPTIONS]",
    .about = "Loops the selected cases with N requests in flight and seeded random delays\n"
             "between calls (handbook section 13.2); every request's tokens and logits are\n"
             "hashed against the first clean (solo) run of the same request.",
    .opts = soak_options,
    .json_help = "not written by soak: its outputs are -o and --faults (refused)",
    .junit_help = "not written by soak (refused)",
    .exit_status = "0 no mismatch and no fault for the whole duration, 1 a mismatch or a\n"
                   "fault, 2 could not soak (bad usage, a failing clean run).",
};

static const cli_spec score_spec = {
    .name = TOOL,
    .synopsis = "score --model DIR --manifest M --side SIDE -o SCORE.json [OPTIONS]",
    .about = "Teacher-forced scoring (handbook section 6, task-level metric): the negative\n"
             "log-likelihood of each case's given tokens and its perplexity, per case and per\n"
             "dataset (calculet-score/v1).",
    .opts = score_options,
    .json_help = "not written by score: its output is -o (refused)",
    .junit_help = "not written by score (refused)",
    .exit_status = "0 scored, 1 a case's logits gave no number (NaN, +Inf, the given token at\n"
                   "-inf: a finding), 2 could not score (bad usage, bad manifest, backend error).",
};

static const cli_spec profile_spec = {
    .name = TOOL,
    .synopsis = "profile [OPTIONS] GOLDEN [CANDIDATE]",
    .about = "Profiles the router taps of a golden (and a candidate's): expert load, routing\n"
             "mass and margins per layer; with --placement, dispatch and cross-chip bytes,\n"
             "padding slots, chip load and fault domains.",
    .opts = profile_options,
    .json_help = "write the profile as JSON (- = stdout)",
    .junit_help = "accepted for uniformity; a profile makes no verdict, so it is refused",
    .exit_status = "0 profiled, 2 could not run (bad usage, a golden without router taps).",
    .args_are_inputs = true,
};

/* nonzero once stopped: the sender's pid when the kernel says it (a backend host that signals
 * the harness is told from the user's Ctrl-C this way: golden_backend_isolation.stop) */
static volatile sig_atomic_t stop_flag;
static void on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    stop_flag = si && si->si_code <= 0 && si->si_pid > 1 ? (sig_atomic_t)si->si_pid : 1;
}

/* run stops between requests on SIGINT, SIGTERM, SIGHUP (the library removes its partial
 * outputs). SIGINT and SIGTERM are caught even when ignored at start, as npu-replay always did:
 * a script that starts a replay in the background (where sh ignores SIGINT) stops it with
 * kill -INT (tests/e2e/npu-replay.sh). SIGHUP ignored by nohup stays ignored, as in the layer. */
static void install_stop_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    struct sigaction old;
    if (sigaction(SIGHUP, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
        sigaction(SIGHUP, &sa, NULL);
}

/* run's progress line (term.c): TTY only, never with -q; counts the requests done (the
 * library's done/total is per case, or of all requests with --concurrency: shown as a note) */
static golden_progress run_line;
static unsigned long long run_requests;

static void progress(void *ctx, size_t done, size_t total, const char *case_id)
{
    const cli *c = ctx;
    if (c->quiet)
        return;
    char note[160];
    snprintf(note, sizeof note, "%.120s %zu/%zu", case_id, done, total);
    golden_progress_update_note(&run_line, ++run_requests, note);
}

typedef struct {
    const char *model, *manifest, *side, *golden, *raw, *backend, *taps, *out, *preset, *dtype,
        *hypothesis, *prompts, *checks, *faults, *placement;
    const char *const *opts, *const *globs;
    size_t n_opts, n_globs;
    long long warmup, runs, layers, seed, shards, max_len, random, repeated, decode_steps,
        near_ties; /* random, repeated: -1 = the default */
    double margin, tolerance, router_tol, budget, nondet; /* budget: -1 = not given */
    long long max_context, concurrency;
    double qps; /* run: 0 = the closed loop */
    long long topk; /* run: 0 = no top-k mode */
    int batch_off;  /* run: --batch off */
    uint64_t useed;
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
    golden_progress prog; /* a line on a TTY (golden_progress_start checks), none with -q */
    golden_make_model_opts mo = {2, a->preset ? a->preset : "tiny", (int)a->layers,
                                 a->useed, a->dtype, (int)a->shards, a->out, a->c->force,
                                 a->dense_mask, a->c->quiet ? NULL : &prog};
    golden_error err;
    golden_error_clear(&err);
    if (golden_make_model(&mo, &err))
        return fail(a, &err);
    return 0;
}

/* run under mpirun (make MPI=1): the cases shared over the ranks, each its own backend, one
 * golden and raw file merged on rank 0 (docs/scale.md). Keep ro as cmd_run's. */
static int cmd_run_ranks(const args *a, const golden_backend_load_opts *lo)
{
    golden_error err;
    golden_error_clear(&err);
    golden_replay_run_opts ro = {5, NULL, a->manifest, a->side, a->golden, a->raw, (int)a->warmup,
                                 (int)a->runs, a->n_globs, a->globs, a->taps, a->c->force,
                                 a->check_rejection != 0, TOOL " " GOLDEN_VERSION, &stop_flag,
                                 progress, a->c, a->faults, (int)a->concurrency, a->qps,
                                 "poisson", a->useed, (int)a->topk, NULL, 0, a->batch_off};
    golden_replay_run_result res;
    bool root = true;
    int rc = replay_ranks_run(lo, &ro, &res, &root, &err);
    if (!root)
        return ranks_finish(rc ? 2 : 0);
    if (rc)
        return ranks_finish(fail(a, &err));
    FILE *out = cli_human(a->c);
    if (out)
        fprintf(out, "%zu cases, %zu requests, %zu rejection cases not submitted\n", res.cases,
                res.requests, res.skipped_rejections);
    return ranks_finish(0);
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
    if (ranks_start(&err) != 0)
        return fail(a, &err);
    if (ranks_size() > 1)
        return cmd_run_ranks(a, &lo);
    ranks_finish(0); /* one rank (or no launcher): leave the job, run as the single tool */
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
    golden_replay_run_opts ro = {5, b, a->manifest, a->side, a->golden, a->raw, (int)a->warmup,
                                 (int)a->runs, a->n_globs, a->globs, a->taps, a->c->force,
                                 a->check_rejection != 0, TOOL " " GOLDEN_VERSION, &stop_flag,
                                 progress, a->c, a->faults, (int)a->concurrency, a->qps,
                                 "poisson", a->useed, (int)a->topk, NULL, 0, a->batch_off};
    golden_sampling gs = GOLDEN_SAMPLING_INIT;
    if (a->topk) {
        gs.temperature = a->sampling.temp;
        gs.top_k = a->sampling.top_k;
        gs.top_p = a->sampling.top_p;
        gs.min_p = a->sampling.min_p;
        /* "a key given as 0 means off": repeat_penalty=0 or repeat_last_n=0 is no penalty
         * (1, neutral), as top_k=0, min_p=0, n_probs=0 are off and temp=0 is greedy; top_p=0
         * stays out of range (the library refuses it: top_p in (0, 1]) */
        gs.repetition_penalty = a->sampling.repeat_penalty == 0 || a->sampling.repeat_last_n == 0
                                    ? 1.0 : a->sampling.repeat_penalty;
        gs.logprobs = a->sampling.n_probs;
        ro.sampling = &gs;
        ro.repeat_last_n = a->sampling.repeat_last_n;
    }
    golden_replay_run_result res;
    golden_progress_start(&run_line, TOOL " run", 0);
    run_line.unit = "requests";
    rc = golden_replay_run(&ro, &res, &err);
    golden_progress_end(&run_line);
    golden_backend_close(b);
    if (rc)
        return fail(a, &err);
    FILE *out = cli_human(a->c);
    if (out)
        fprintf(out, "%zu cases, %zu requests, %zu rejection cases not submitted\n", res.cases,
                res.requests, res.skipped_rejections);
    if (out && a->topk)
        fprintf(out, "top-k %lld: %zu of %zu steps not covered\n", a->topk, res.topk_findings,
                res.topk_steps);
    if (res.topk_findings) /* a finding, not a silent change of the distribution */
        fprintf(stderr, TOOL ": run: top-k %lld does not cover the sampling settings at %zu of %zu "
                "steps; first: %s\n", a->topk, res.topk_findings, res.topk_steps, res.topk_first);
    int verdict = res.topk_findings ? 1 : 0;
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
        return res.rejection_refused ? verdict : 1;
    }
    return verdict;
}

static int cmd_matrix(const args *a)
{
    if (!a->out)
        return cli_usage(a->c, "matrix needs -o MANIFEST");
    if (!mx.texts != !mx.tokenizer)
        return cli_usage(a->c, "--texts and --tokenizer go together");
    golden_error err;
    golden_error_clear(&err);
    golden_backend *b = NULL;
    int rc = load_backend(a, &b);
    if (rc)
        return rc;
    golden_replay_matrix_opts mo = {3, b, a->hypothesis, a->prompts, a->out, a->useed,
                                    (int)a->max_len, (int)a->random, (int)a->repeated,
                                    (int)a->decode_steps, a->margin, (int)a->near_ties,
                                    a->c->force, mx.texts, mx.tokenizer};
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
    if (out && mx.texts)
        fprintf(out, "%zu labelled text%s from %s, one case each per output length\n", res.texts,
                res.texts == 1 ? "" : "s", mx.texts);
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
        jc[i] = (golden_junit_case){"conform", k->name,
                                    k->status != GOLDEN_CONFORM_PASS &&
                                        k->status != GOLDEN_CONFORM_SKIPPED,
                                    k->status == GOLDEN_CONFORM_SKIPPED,
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

/* sampling-stats: one line a setting and lane from the check's coverage. */
static void print_sampling_stats(FILE *out, const json_t *cov)
{
    const json_t *sets = json_object_get(cov, "settings"), *o;
    size_t i;
    if (!json_array_size(sets))
        return;
    fprintf(out, "\nsampling-stats (alpha %.3g, per test %.3g, %lld tests)\n%-9s %4s %8s %8s %10s "
            "%5s %10s  %s\n", json_number_value(json_object_get(cov, "alpha")),
            json_number_value(json_object_get(cov, "alpha_per_test")),
            (long long)json_integer_value(json_object_get(cov, "tests")), "setting", "lane",
            "draws", "classes", "chi2", "dof", "p", "verdict");
    json_array_foreach(sets, i, o) {
        const json_t *chi2 = json_object_get(o, "chi2");
        fprintf(out, "%-9s %4lld %8lld %8lld ", json_string_value(json_object_get(o, "setting")),
                (long long)json_integer_value(json_object_get(o, "lane")),
                (long long)json_integer_value(json_object_get(o, "draws")),
                (long long)json_integer_value(json_object_get(o, "classes")));
        if (json_is_number(chi2))
            fprintf(out, "%10.2f %5lld %10.3g", json_number_value(chi2),
                    (long long)json_integer_value(json_object_get(o, "dof")),
                    json_number_value(json_object_get(o, "p")));
        else
            fprintf(out, "%10s %5s %10s", "exact", "-", "-");
        fprintf(out, "  %s\n", json_string_value(json_object_get(o, "verdict")));
    }
}

static void print_conform(FILE *out, const golden_conform_report *rep)
{
    static const char *const st[] = {"pass", "FAIL", "ERROR", "skipped"};
    if (out)
        fprintf(out, "%-14s %-7s %8s %12s  %s\n", "check", "status", "seconds", "compared",
                "first finding");
    for (size_t i = 0; i < rep->n; i++) {
        const golden_conform_check *k = &rep->checks[i];
        if (out) {
            fprintf(out, "%-14s %-7s %8.2f %12zu  ", k->name, st[k->status], k->seconds,
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
        if (strcmp(k->name, "sampling-stats") == 0)
            print_sampling_stats(out, k->coverage);
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
                              a->router_tol, tmp && *tmp ? tmp : "/tmp", a->useed,
                              a->sampling, 0, a->in_process ? NULL : &a->iso,
                              a->budget == 0 ? -1 : a->budget < 0 ? 0 : a->budget, a->nondet,
                              false, cf.golden, cf.golden_kl, cf.golden_lsm,
                              (int)cf.sampling_draws, (int)cf.sampling_positions,
                              cf.sampling_alpha};
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

/* --sampling temp=X,top_k=N,top_p=X,min_p=X,repeat_penalty=X,repeat_last_n=N,n_probs=N,steps=N
 * (each value through the strict parsers of golden/parse.h) */
static int parse_sampling(cli *c, const char *arg, golden_conform_sampling *s)
{
    static const char *const reals[] = {"temp", "top_p", "min_p", "repeat_penalty", NULL};
    static const char *const ints[] = {"top_k", "repeat_last_n", "n_probs", "steps", NULL};
    double *rdst[] = {&s->temp, &s->top_p, &s->min_p, &s->repeat_penalty};
    int *idst[] = {&s->top_k, &s->repeat_last_n, &s->n_probs, &s->steps};
    char buf[512];
    if (strlen(arg) >= sizeof buf)
        return cli_usage(c, "--sampling: longer than %zu characters", sizeof buf - 1);
    snprintf(buf, sizeof buf, "%s", arg);
    for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq)
            return cli_usage(c, "--sampling: '%s' is not KEY=NUMBER", kv);
        *eq = 0;
        const char *v = eq + 1;
        size_t k = 0;
        while (reals[k] && strcmp(reals[k], kv) != 0)
            k++;
        if (reals[k]) {
            golden_parse_status st = golden_parse_real(v, 0, 1e9, rdst[k]);
            if (st != GOLDEN_PARSE_OK)
                return cli_usage(c, "--sampling: %s=%s: %s (a number from 0 to 1e9)", kv, v,
                                 golden_parse_reason(st));
            continue;
        }
        k = 0;
        while (ints[k] && strcmp(ints[k], kv) != 0)
            k++;
        if (!ints[k])
            return cli_usage(c, "--sampling: unknown key '%s'", kv);
        int64_t n;
        golden_parse_status st = golden_parse_int(v, 0, 1000000000, &n);
        if (st != GOLDEN_PARSE_OK)
            return cli_usage(c, "--sampling: %s=%s: %s (an integer from 0 to 1000000000)", kv, v,
                             golden_parse_reason(st));
        *idst[k] = (int)n;
    }
    return 0;
}

/* --experiment DIR: the experiment id (hypothesis.yaml) and, unless --graph, the side's calbin
 * file (DIR/SIDE/manifest.json#/calbin/path, relative to DIR), which the soak hashes itself.
 * *hyp keeps the id alive; graph gets the path (malloc'd) or NULL. 0, or 2 (printed). */
static int soak_experiment(const args *a, golden_doc **hyp, const char **id, char **graph)
{
    golden_error err;
    golden_error_clear(&err);
    char p[8192];
    *id = NULL;
    *graph = NULL;
    snprintf(p, sizeof p, "%s/hypothesis.yaml", sk.experiment);
    if (golden_doc_load_file(p, hyp, &err))
        return fail(a, &err);
    *id = json_string_value(json_object_get(golden_doc_root(*hyp), "experiment_id"));
    if (!*id || !(*id)[0]) {
        golden_fail_what(&err, GOLDEN_EINVAL, p, "no experiment_id");
        return fail(a, &err);
    }
    if (sk.graph)
        return 0;
    golden_doc *m = NULL;
    snprintf(p, sizeof p, "%s/%s/manifest.json", sk.experiment, sk.side);
    if (golden_doc_load_file(p, &m, &err))
        return fail(a, &err);
    const char *rel = json_string_value(
        json_object_get(json_object_get(golden_doc_root(m), "calbin"), "path"));
    int rc = 0;
    if (!rel || !rel[0] || rel[0] == '/' || strstr(rel, "..")) {
        golden_fail_what(&err, GOLDEN_EINVAL, p, "calbin.path must name a file inside the "
                         "folder (give --graph FILE otherwise)");
        rc = fail(a, &err);
    } else if (!(*graph = malloc(strlen(sk.experiment) + strlen(rel) + 2))) {
        rc = oom(a);
    } else {
        sprintf(*graph, "%s/%s", sk.experiment, rel);
    }
    golden_doc_free(m);
    return rc;
}

static bool soak_progress_shown;

/* The soak's progress line on a TTY (stderr), at most twice a second; nothing with -q. */
static void soak_progress(void *ctx, double el, double dur, int64_t rounds, size_t requests,
                          size_t mismatches, size_t faults)
{
    const cli *c = ctx;
    static double last = -1;
    if (c->quiet || !isatty(2) || (last >= 0 && el - last < 0.5))
        return;
    last = el;
    soak_progress_shown = true;
    fprintf(stderr, "\r" TOOL ": soak %.1f/%.1f s, %lld rounds, %zu requests, %zu mismatches, "
            "%zu faults\033[K", el, dur, (long long)rounds, requests, mismatches, faults);
}

static int cmd_soak(const args *a)
{
    if (!sk.manifest || !sk.out || !(sk.duration > 0))
        return cli_usage(a->c, "soak needs --manifest, --duration and -o");
    if (sk.resume && !sk.checkpoint)
        return cli_usage(a->c, "--resume needs --checkpoint FILE");
    if (strcmp(sk.side, "baseline") != 0 && strcmp(sk.side, "candidate") != 0)
        return cli_usage(a->c, "--side takes baseline or candidate");
    golden_error err;
    golden_error_clear(&err);
    golden_backend *b = NULL;
    golden_doc *hyp = NULL;
    const char *exp_id = NULL;
    char *exp_graph = NULL;
    int rc = sk.experiment ? soak_experiment(a, &hyp, &exp_id, &exp_graph) : 0;
    install_stop_handler();
    if (rc == 0)
        rc = load_backend(a, &b);
    if (rc) {
        golden_doc_free(hyp);
        free(exp_graph);
        return rc;
    }
    golden_soak_opts so = {6, b, sk.manifest, sk.side, sk.cases.n, sk.cases.v, sk.duration,
                           (int)sk.concurrency, sk.seed, sk.jitter * 1e6, &stop_flag,
                           sk.graph ? sk.graph : exp_graph, exp_id, sk.checkpoint,
                           sk.checkpoint_every, sk.resume, a->c->force, sk.rounds,
                           soak_progress, a->c, a->n_opts, a->opts};
    golden_soak_result res;
    rc = golden_soak_run(&so, &res, &err);
    if (soak_progress_shown) /* end the progress line */
        fputc('\n', stderr);
    if (rc) {
        golden_backend_close(b);
        golden_doc_free(hyp);
        free(exp_graph);
        return fail(a, &err);
    }
    json_t *j = golden_soak_json(&so, &res);
    rc = !j ? oom(a) : golden_json_write(sk.out, j, a->c->force, &err) ? fail(a, &err) : 0;
    json_decref(j);
    if (rc == 0 && sk.faults && golden_soak_faults_write(&res, sk.faults, a->c->force, &err)) {
        unlink(sk.out); /* both or neither */
        rc = fail(a, &err);
    }
    golden_backend_close(b);
    FILE *out = cli_human(a->c);
    if (rc == 0 && out)
        fprintf(out, "soak %.1f s at concurrency %d: %zu cases, %zu requests, %zu mismatches, "
                "%zu faults (%zu of %zu retests passed)%s: %s\n", res.duration_s,
                (int)sk.concurrency, res.cases, res.requests, res.mismatches, res.faults,
                res.retests_passed, res.retests, res.interrupted ? ", interrupted" : "",
                res.mismatches || res.faults ? "FAIL" : "pass");
    if (rc == 0 && out && res.stop_violation[0])
        fprintf(out, "stop_violation: %s\n", res.stop_violation);
    if (rc == 0)
        rc = res.mismatches || res.faults ? 1 : 0;
    golden_soak_result_free(&res);
    golden_doc_free(hyp);
    free(exp_graph);
    return rc;
}

/* score's table: each dataset's perplexity, and with --baseline (cmp) its change against it. */
static void print_score(FILE *out, const json_t *doc, const json_t *cmp)
{
    fprintf(out, "%-22s %6s %8s %14s", "DATASET", "CASES", "TOKENS", "PERPLEXITY");
    if (cmp)
        fprintf(out, " %14s %10s", "BASELINE", "CHANGE");
    fputc('\n', out);
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(doc, "datasets"), i, d) {
        json_t *p = json_object_get(d, "perplexity"), *c = NULL, *e;
        const char *name = json_string_value(json_object_get(d, "dataset"));
        size_t j;
        json_array_foreach(cmp, j, e)
            if (strcmp(json_string_value(json_object_get(e, "dataset")), name) == 0)
                c = e;
        fprintf(out, "%-22s %6lld %8lld ", name,
                (long long)json_integer_value(json_object_get(d, "cases")),
                (long long)json_integer_value(json_object_get(d, "scored_tokens")));
        if (json_is_number(p))
            fprintf(out, "%14.6g", json_number_value(p));
        else
            fprintf(out, "%14s", "NO NUMBER");
        json_t *bp = json_object_get(c, "baseline"), *rp = json_object_get(c, "regression_pct");
        if (cmp && json_is_number(bp))
            fprintf(out, " %14.6g %+9.3f%%", json_number_value(bp), json_number_value(rp));
        else if (cmp)
            fprintf(out, " %14s %10s", "-", "-");
        fputc('\n', out);
    }
    size_t f = (size_t)json_integer_value(json_object_get(doc, "findings"));
    if (f)
        fprintf(out, "%zu case(s) whose logits gave no number (see their \"finding\")\n", f);
}

static int cmd_score(const args *a)
{
    if (!sc.manifest || !sc.side || !sc.out)
        return cli_usage(a->c, "score needs --manifest, --side and -o");
    if (strcmp(sc.side, "baseline") != 0 && strcmp(sc.side, "candidate") != 0)
        return cli_usage(a->c, "--side takes baseline or candidate");
    golden_error err;
    golden_error_clear(&err);
    golden_backend *b = NULL;
    install_stop_handler();
    int rc = load_backend(a, &b);
    if (rc)
        return rc;
    golden_score_opts so = GOLDEN_SCORE_OPTS_INIT;
    so.backend = b;
    so.manifest = sc.manifest;
    so.side = sc.side;
    so.n_globs = sc.cases.n;
    so.globs = sc.cases.v;
    so.stop = &stop_flag;
    json_t *doc = NULL;
    size_t findings = 0;
    rc = golden_score_run(&so, &doc, &findings, &err);
    golden_backend_close(b);
    if (rc)
        return fail(a, &err);
    /* the comparison first: a baseline that cannot be compared leaves no output behind */
    json_t *cmp = NULL;
    golden_doc *base = NULL;
    if (sc.baseline && (golden_score_load(sc.baseline, &base, &err) ||
                        golden_score_compare(golden_doc_root(base), doc, &cmp, &err)))
        rc = fail(a, &err);
    golden_doc_free(base);
    if (rc == 0 && golden_json_write(sc.out, doc, a->c->force, &err))
        rc = fail(a, &err);
    FILE *out = cli_human(a->c);
    if (rc == 0 && out)
        print_score(out, doc, cmp);
    json_decref(cmp);
    json_decref(doc);
    return rc ? rc : findings ? 1 : 0;
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
    {"soak", &soak_spec, cmd_soak, true, false},
    {"score", &score_spec, cmd_score, true, false},
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

/* The regular files of dir (not its subfolders) as inputs; anything else there is left alone
 * (never read). A missing folder registers nothing. 0, or 2. */
static int register_files(cli *c, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        char path[8192];
        struct stat st;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < sizeof path &&
            stat(path, &st) == 0 && S_ISREG(st.st_mode))
            rc = add_input(c, path);
    }
    closedir(d);
    return rc;
}

/* The experiment folder of an input (docs/npu-replay.md, "Inputs are inputs"): the folder that
 * holds hypothesis.yaml, the input's own folder or the one above it (EXP/golden/manifest). Its
 * documents are inputs no output may overwrite: its top-level files and those of baseline/,
 * candidate/ and compile/. 0, or 2. */
static int register_experiment(cli *c, const char *input)
{
    if (!input || strcmp(input, "-") == 0)
        return 0;
    char *copy = strdup(input);
    if (!copy)
        return fprintf(stderr, TOOL ": out of memory\n"), 2;
    char dir[4096], up[4100];
    snprintf(dir, sizeof dir, "%s", dirname(copy));
    free(copy);
    snprintf(up, sizeof up, "%s/..", dir);
    const char *cand[2] = {dir, up};
    int rc = 0;
    for (int i = 0; rc == 0 && i < 2; i++) {
        char hyp[8192];
        struct stat st;
        snprintf(hyp, sizeof hyp, "%s/hypothesis.yaml", cand[i]);
        if (stat(hyp, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        static const char *const sub[] = {"", "/baseline", "/candidate", "/compile"};
        for (size_t k = 0; rc == 0 && k < sizeof sub / sizeof *sub; k++) {
            char d[8192];
            snprintf(d, sizeof d, "%s%s", cand[i], sub[k]);
            rc = register_files(c, d);
        }
        break; /* the nearest experiment folder */
    }
    return rc;
}

/* soak --experiment DIR: the folder's files are inputs (no -o may replace them). */
static int register_soak_experiment(cli *c)
{
    if (!sk.experiment)
        return 0;
    char hyp[8192];
    snprintf(hyp, sizeof hyp, "%s/hypothesis.yaml", sk.experiment);
    return register_experiment(c, hyp);
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
        (cmd->spec == &soak_spec && sk.manifest && register_manifest(c, sk.manifest)) ||
        (cmd->spec == &score_spec && sc.manifest && register_manifest(c, sc.manifest)) ||
        (a->backend && strcmp(a->backend, "cpu") != 0 && add_input(c, a->backend)) ||
        register_experiment(c, a->manifest) || register_experiment(c, a->hypothesis) ||
        register_experiment(c, a->prompts) || register_experiment(c, a->placement) ||
        (cmd->spec == &soak_spec && register_experiment(c, sk.manifest)) ||
        (cmd->spec == &soak_spec && register_soak_experiment(c)) ||
        (cmd->spec == &score_spec && register_experiment(c, sc.manifest)))
        return 2;
    static char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    a->iso = (golden_backend_isolation){n > 0 ? self : "/proc/self/exe", a->call_timeout,
                                        a->backend_mem, a->backend_log, &stop_flag};
    return cli_outputs_ok(c);
}

/* The parsed option structs as the commands read them; 0, or 2 (printed). */
static int gather(const command *cmd, args *a)
{
    cli *c = a->c;
    a->model = bk.model;
    a->backend = bk.backend;
    a->opts = bk.opts.v;
    a->n_opts = bk.opts.n;
    a->call_timeout = bk.call_timeout;
    a->backend_mem = bk.mem;
    a->backend_log = bk.log;
    a->in_process = bk.in_process;
    if (cmd->spec == &make_model_spec) {
        a->preset = mm.preset;
        a->dtype = mm.dtype;
        a->out = mm.out;
        a->layers = mm.layers;
        a->shards = mm.shards;
        a->useed = mm.seed;
        for (size_t i = 0; i < mm.dense.n; i++) {
            int64_t l;
            golden_parse_status st = golden_parse_int(mm.dense.v[i], 0, 63, &l);
            if (st != GOLDEN_PARSE_OK)
                return cli_usage(c, "--dense-layer: '%s': %s (an integer from 0 to 63)",
                                 mm.dense.v[i], golden_parse_reason(st));
            a->dense_mask |= 1ull << l;
        }
    } else if (cmd->spec == &matrix_spec) {
        a->hypothesis = mx.hypothesis;
        a->prompts = mx.prompts;
        a->out = mx.out;
        a->useed = mx.seed;
        a->max_len = mx.max_len;
        a->random = mx.random;
        a->repeated = mx.repeated;
        a->decode_steps = mx.decode_steps;
        a->near_ties = mx.near_ties;
        a->margin = mx.margin;
    } else if (cmd->spec == &run_spec) {
        a->manifest = rn.manifest;
        a->side = rn.side;
        a->golden = rn.golden;
        a->raw = rn.raw;
        a->taps = rn.taps;
        a->faults = rn.faults;
        a->warmup = rn.warmup;
        a->runs = rn.runs;
        a->globs = rn.cases.v;
        a->n_globs = rn.cases.n;
        a->check_rejection = rn.check_rejection;
        a->concurrency = rn.concurrency;
        a->qps = rn.qps;
        a->useed = rn.seed;
        a->topk = rn.topk;
        a->batch_off = rn.batch == 1;
        /* conform's defaults, each given key replacing one (0 is then off, temp=0 greedy) */
        a->sampling = (golden_conform_sampling){0.8, 40, 0.95, 0.05, 1.1, 64, 0, 8};
        if (rn.sampling && !rn.topk)
            return cli_usage(c, "--sampling goes with --topk");
        if (rn.sampling && parse_sampling(c, rn.sampling, &a->sampling))
            return 2;
    } else if (cmd->spec == &conform_spec) {
        a->checks = cf.checks;
        a->faults = cf.faults;
        a->side = cf.side;
        a->html = cf.html;
        a->max_context = cf.max_context;
        a->tolerance = cf.tolerance;
        a->router_tol = cf.router_tol;
        a->budget = cf.budget_given ? cf.budget : -1;
        a->nondet = cf.nondet;
        a->useed = cf.seed;
        if (cf.sampling && parse_sampling(c, cf.sampling, &a->sampling))
            return 2;
    } else if (cmd->spec == &profile_spec) {
        a->placement = pf.placement;
        a->html = pf.html;
    }
    return 0;
}

static int run_command(const command *cmd, int argc, char **argv)
{
    cli c;
    if (cli_init(&c, cmd->spec, argc, argv) != 0)
        return cli_exit(&c, 2);
    args a;
    memset(&a, 0, sizeof a);
    a.c = &c;
    if (cli_parse(&c) == CLI_EXIT)
        return cli_exit(&c, c.status);
    if (gather(cmd, &a) != 0 || check_common(cmd, &a) != 0)
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
        return cli_top_level(&top_spec, argc, argv, "make-model, matrix, run, conform, soak, score or profile");
    int rc = run_command(cmd, argc - 1, argv + 1);
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

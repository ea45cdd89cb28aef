/* npu-replay conform against the cpu backend with every planted fault: exactly the check made
 * for the fault fails and every other passes; the clean backend passes everything. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cunit_main.h"
#include "golden/conform.h"
#include "golden/replay.h"
#include "replay/conform_priv.h"

static char dir[256], model[300];

static void make_tiny(void)
{
    if (model[0])
        return;
    snprintf(dir, sizeof dir, "/tmp/test-conform-%ld", (long)getpid());
    mkdir(dir, 0777);
    snprintf(model, sizeof model, "%s/m", dir);
    golden_make_model_opts o = {1, "tiny", 0, 7, "bf16", 0, model, false, 0, NULL};
    golden_error err;
    CU_ASSERT_EQUAL(golden_make_model(&o, &err), 0);
}

/* Run conform with one backend option; the failing checks as "a,b" into got. fixed: the
 * pre-issue-28 fixed points; max_ctx, budget, seed as the options of those names. */
static int run_ex(const char *opt, const char *checks, char *got, size_t n,
                  golden_conform_report *keep, bool fixed, int64_t max_ctx, double budget,
                  uint64_t seed)
{
    make_tiny();
    const char *opts[2] = {opt, NULL};
    size_t no = opt ? 1 : 0;
    if (opt && strchr(opt, ';')) { /* "dtype=bf16;inject=X": two options */
        static char a[64], b[64];
        snprintf(a, sizeof a, "%.*s", (int)(strchr(opt, ';') - opt), opt);
        snprintf(b, sizeof b, "%s", strchr(opt, ';') + 1);
        opts[0] = a, opts[1] = b, no = 2;
    }
    golden_conform_opts o = {GOLDEN_CONFORM_OPTS_VERSION, "cpu", model, no, opts, 1,
                             checks, max_ctx, 0, 0, dir, seed, {0, 0, 0, 0, 0, 0, 0, 0}, 0, NULL, budget,
                             0, fixed, NULL, 0, 0, 0, 0, 0};
    golden_conform_report rep;
    golden_error err;
    CU_ASSERT_EQUAL_FATAL(golden_conform_run(&o, &rep, &err), 0);
    got[0] = 0;
    for (size_t i = 0; i < rep.n; i++) {
        CU_ASSERT_NOT_EQUAL(rep.checks[i].status, GOLDEN_CONFORM_ERROR);
        CU_ASSERT(rep.checks[i].comparisons > 0);
        if (rep.checks[i].status == GOLDEN_CONFORM_FAIL)
            snprintf(got + strlen(got), n - strlen(got), "%s%s", got[0] ? "," : "", rep.checks[i].name);
    }
    int rc = golden_conform_exit(&rep);
    if (keep)
        *keep = rep;
    else
        golden_conform_report_free(&rep);
    return rc;
}

static int run(const char *opt, const char *checks, char *got, size_t n, golden_conform_report *keep)
{
    return run_ex(opt, checks, got, n, keep, false, 0, -1, 3);
}

static void test_clean(void)
{
    char got[256];
    golden_conform_report rep;
    CU_ASSERT_EQUAL(run(NULL, NULL, got, sizeof got, &rep), 0);
    CU_ASSERT_STRING_EQUAL(got, "");
    CU_ASSERT_EQUAL(rep.n, 12); /* 11 and sampling-stats (golden needs a golden) */
    for (size_t i = 0; i < rep.n; i++)
        if (strcmp(rep.checks[i].name, "kv-growth") == 0) {
            /* tiny: 2 layers, 2 KV heads of 16, K and V, 2 bytes: 256 B a token */
            CU_ASSERT_EQUAL(rep.checks[i].n_points, 5);
            CU_ASSERT_DOUBLE_EQUAL(rep.checks[i].points[0].kv_write_bytes, 256.0, 0);
            CU_ASSERT_EQUAL(rep.checks[i].points[4].context, 256);
            CU_ASSERT_DOUBLE_EQUAL(rep.checks[i].points[0].kv_read_bytes, 256.0 * 20, 0);
        } else if (strcmp(rep.checks[i].name, "sampling-topk") == 0) {
            CU_ASSERT_EQUAL(rep.checks[i].k_backend, 512);
            CU_ASSERT(rep.checks[i].k_required >= 39 && rep.checks[i].k_required <= 512);
        }
    golden_conform_report_free(&rep);
    CU_ASSERT_EQUAL(run("dtype=bf16", NULL, got, sizeof got, NULL), 0);
    CU_ASSERT_STRING_EQUAL(got, "");
    /* no false alarm across seeds, random positions on (a short budget), f32 and bf16 */
    for (uint64_t seed = 11; seed <= 12; seed++)
        for (int bf = 0; bf < 2; bf++) {
            CU_ASSERT_EQUAL(run_ex(bf ? "dtype=bf16" : NULL, NULL, got, sizeof got, NULL, false, 160,
                                   0.3, seed), 0);
            CU_ASSERT_STRING_EQUAL(got, "");
        }
}

/* fault -> the checks that fail (worked out from what each fault breaks, docs/conformance.md),
 * and the one pre-issue-28 check that saw it ("" = the old fixed points missed it). */
static const char *const faults[][3] = {
    {"causal_leak", "causal-mask,kv-lanes", "causal-mask"},
    {"kv_off_by_one_at_16", "kv-positions", "kv-positions"},
    {"kv_lane_cross", "kv-lanes,kv-reset", "kv-lanes"},
    {"kv_tail_stale", "kv-tail", "kv-tail"},
    {"kv_stale_after_reset", "kv-reset", "kv-reset"},
    {"router_duplicate", "router", "router"},
    {"router_unnormalized", "router", "router"},
    {"router_tie_high_index", "router", "router"},
    {"router_nan_silent", "router", "router"},
    {"topk_too_small", "kv-lanes,sampling-topk", "sampling-topk"},
    {"mask_leak_at_129", "causal-mask", ""},
    {"decode_leak_at_33", "causal-mask,kv-positions,kv-tail", ""},
    {"kv_prefill_off_by_one_at_31", "kv-positions,kv-tail", ""},
    {"notap_decode_kv", "kv-positions,kv-lanes,kv-tail,kv-reset,rejection", ""},
    {"kv_lane3_stale", "kv-lanes,kv-tail,kv-reset,rejection", ""},
    {"kv_lane2_zero", "kv-lanes,kv-tail,kv-reset,rejection", ""},
    {"taps_decode_recompute", "taps", ""},
    {"taps_router_last_missing", "taps", ""},
    {"kv_tail_off_by_one", "kv-tail", ""},
    {"reset_all_lane0_only", "kv-reset", ""},
    {"decode_past_limit_dropped", "rejection", ""},
    {"refused_decode_drops_last", "rejection", ""},
    {"router_decode_rank_swap", "router", ""},
    {"nondeterministic", "kv-lanes,kv-tail,kv-reset,determinism", ""},
    {"router_nan_silent_decode", "router", ""},
    {"router_lane1_decode_swap", "router", ""},
    {"router_prefill_swap_past_100", "router", ""},
    {"logits_at_bf16", "kv-lanes", ""},
    {"topk_value_shift", "kv-lanes", ""}};

/* Each fault fails exactly its checks (the checks it must fail run, plus the one next to them
 * in the table, which must pass: a full run of every fault is the e2e test's), and the old fixed
 * points, run in full, see only what they saw before. */
static void test_faults(void)
{
    for (size_t i = 0; i < sizeof faults / sizeof *faults; i++) {
        char opt[64], got[256], sel[256];
        snprintf(opt, sizeof opt, "inject=%s", faults[i][0]);
        const char *other = strstr(faults[i][1], "kv-tail") ? "taps" : "kv-tail";
        snprintf(sel, sizeof sel, "%s,%s", faults[i][1], other);
        CU_ASSERT_EQUAL(run_ex(opt, sel, got, sizeof got, NULL, false, 160, -1, 3), 1);
        if (strcmp(got, faults[i][1]) != 0)
            fprintf(stderr, "\n%s: failed checks '%s', expected '%s'\n", faults[i][0], got, faults[i][1]);
        CU_ASSERT_STRING_EQUAL(got, faults[i][1]);
        int want = faults[i][2][0] ? 1 : 0;
        CU_ASSERT_EQUAL(run_ex(opt, NULL, got, sizeof got, NULL, true, 0, -1, 3), want);
        if (strcmp(got, faults[i][2]) != 0)
            fprintf(stderr, "\n%s (fixed points): failed checks '%s', expected '%s'\n",
                    faults[i][0], got, faults[i][2]);
        CU_ASSERT_STRING_EQUAL(got, faults[i][2]);
    }
}

/* Section 5.1's set, worked out by hand for the tiny model's 512 and the real model's 40960. */
static void test_boundaries(void)
{
    int64_t b[64];
    static const int64_t tiny[] = {1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129,
                                   255, 256, 257, 511};
    size_t n = cf_boundaries(512, b, 64);
    CU_ASSERT_EQUAL_FATAL(n, sizeof tiny / sizeof *tiny);
    for (size_t i = 0; i < n; i++)
        CU_ASSERT_EQUAL(b[i], tiny[i]);
    static const int64_t real[] = {1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129,
                                   255, 256, 257, 511, 512, 513,
                                   1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097, 8191,
                                   8192, 8193, 16383, 16384, 16385, 32767, 32768, 32769, 40959};
    n = cf_boundaries(40960, b, 64);
    CU_ASSERT_EQUAL_FATAL(n, sizeof real / sizeof *real);
    for (size_t i = 0; i < n; i++)
        CU_ASSERT_EQUAL(b[i], real[i]);
    CU_ASSERT_EQUAL(cf_boundaries(17, b, 64), 4); /* 1 2 15 16: 16 is the last, no 17 */
    CU_ASSERT_EQUAL(b[3], 16);
    /* a seeded lane subset of a 64-lane backend: 8 distinct, sorted, first and last in */
    golden_backend_info info;
    memset(&info, 0, sizeof info);
    info.num_lanes = 64;
    cf_ctx c;
    memset(&c, 0, sizeof c);
    c.info = &info;
    c.rng = 5;
    int lanes[8];
    CU_ASSERT_EQUAL_FATAL(cf_lanes(&c, lanes), 8);
    CU_ASSERT_EQUAL(lanes[0], 0);
    CU_ASSERT_EQUAL(lanes[7], 63);
    for (int i = 1; i < 8; i++)
        CU_ASSERT(lanes[i] > lanes[i - 1]);
    info.num_lanes = 3;
    CU_ASSERT_EQUAL(cf_lanes(&c, lanes), 3);
}

/* The findings carry the numbers: the tie fault names both experts and the lower-index rule. */
static void test_findings(void)
{
    char got[256];
    golden_conform_report rep;
    CU_ASSERT_EQUAL(run("inject=router_tie_high_index", "router", got, sizeof got, &rep), 1);
    CU_ASSERT_EQUAL_FATAL(rep.n, 1);
    CU_ASSERT(rep.checks[0].n_findings >= 1);
    CU_ASSERT_STRING_EQUAL(rep.checks[0].findings[0].kase, "built tie");
    CU_ASSERT_PTR_NOT_NULL(strstr(rep.checks[0].findings[0].what, "lower index"));
    /* 16 experts tied at 0: ranks 0-3 must be 0,1,2,3; the fault gives 15,14,13,12 */
    CU_ASSERT_PTR_NOT_NULL(strstr(rep.checks[0].findings[0].what, "expert 15"));
    json_t *j = golden_conform_json(&rep);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "verdict")), "fail");
    json_decref(j);
    golden_conform_report_free(&rep);
    golden_error err;
    golden_conform_opts o = {GOLDEN_CONFORM_OPTS_VERSION, "cpu", model, 0, NULL, 1, "router,nope",
                             0, 0, 0, dir, 3, {0, 0, 0, 0, 0, 0, 0, 0}, 0, NULL, 0, 0, false, NULL, 0, 0, 0, 0,
                             0};
    CU_ASSERT_EQUAL(golden_conform_run(&o, &rep, &err), GOLDEN_ERR);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "nope"));
    /* --nondeterministic-ok: the planted nondeterminism passes within 1, fails bitwise */
    const char *nd[1] = {"inject=nondeterministic"};
    o.opts = nd, o.n_opts = 1, o.checks = "determinism", o.nondet_tol = 1;
    CU_ASSERT_EQUAL_FATAL(golden_conform_run(&o, &rep, &err), 0);
    CU_ASSERT_EQUAL(golden_conform_exit(&rep), 0);
    golden_conform_report_free(&rep);
    o.nondet_tol = 0;
    CU_ASSERT_EQUAL_FATAL(golden_conform_run(&o, &rep, &err), 0);
    CU_ASSERT_EQUAL(golden_conform_exit(&rep), 1);
    golden_conform_report_free(&rep);
    /* version 1 options still run (the new fields read as 0) */
    o.version = 1, o.checks = "taps", o.n_opts = 0;
    CU_ASSERT_EQUAL_FATAL(golden_conform_run(&o, &rep, &err), 0);
    CU_ASSERT_EQUAL(golden_conform_exit(&rep), 0);
    golden_conform_report_free(&rep);
    /* version 2 options still run: the golden fields after them are not read */
    o.version = 2, o.golden_kl_max = NAN;
    CU_ASSERT_EQUAL_FATAL(golden_conform_run(&o, &rep, &err), 0);
    CU_ASSERT_EQUAL(golden_conform_exit(&rep), 0);
    golden_conform_report_free(&rep);
    o.version = 3; /* a NaN golden bound is refused */
    CU_ASSERT_EQUAL(golden_conform_run(&o, &rep, &err), GOLDEN_ERR);
    /* golden named without a golden: the check cannot run (2), never a pass */
    o.golden_kl_max = 0, o.checks = "golden";
    CU_ASSERT_EQUAL_FATAL(golden_conform_run(&o, &rep, &err), 0);
    CU_ASSERT_EQUAL(golden_conform_exit(&rep), 2);
    golden_conform_report_free(&rep);
    /* version 3 options still run: the sampling-stats fields after them are not read */
    o.version = 3, o.checks = "taps", o.sampling_alpha = NAN;
    CU_ASSERT_EQUAL_FATAL(golden_conform_run(&o, &rep, &err), 0);
    CU_ASSERT_EQUAL(golden_conform_exit(&rep), 0);
    golden_conform_report_free(&rep);
    o.version = 4; /* a NaN alpha is refused */
    CU_ASSERT_EQUAL(golden_conform_run(&o, &rep, &err), GOLDEN_ERR);
    o.version = 5;
    o.sampling_alpha = 0;
    CU_ASSERT_EQUAL(golden_conform_run(&o, &rep, &err), GOLDEN_ERR);
}

static void fill(cf_cand *c, const float *l, size_t n)
{
    for (size_t i = 0; i < n; i++)
        c[i] = (cf_cand){(int32_t)i, l[i], 0};
}

/* The sampler chain's smallest k, worked out by hand. */
static void test_sampler_min_k(void)
{
    const float l[6] = {5, 4, 3, 2, 1, 0};
    cf_cand sorted[6], scr[6], full[6];
    golden_conform_sampling s = {1.0, 3, 1.0, 1e-9, 1.0, 64, 0, 1};
    fill(sorted, l, 6);
    CU_ASSERT_EQUAL(cf_sample_min_k(&s, sorted, 6, NULL, 0, scr, full), 3); /* top-3 = ids 0,1,2 */
    /* penalty 2 on token 2: 3 -> 1.5 falls below token 3 (2), so the top-3 is 0,1,3: k = 4 */
    int32_t hist[1] = {2};
    s.repeat_penalty = 2.0;
    CU_ASSERT_EQUAL(cf_sample_min_k(&s, sorted, 6, hist, 1, scr, full), 4);
    /* the same penalty on token 0 (5 -> 2.5) keeps the set 0,1,2: k = 3 */
    hist[0] = 0;
    CU_ASSERT_EQUAL(cf_sample_min_k(&s, sorted, 6, hist, 1, scr, full), 3);
    /* top-p 0.5 keeps the one dominant token (p ~ 0.9998): k = 1 */
    const float d[6] = {10, 0, 0, 0, 0, 0};
    golden_conform_sampling s2 = {1.0, 6, 0.5, 1e-9, 1.0, 64, 0, 1};
    fill(sorted, d, 6);
    CU_ASSERT_EQUAL(cf_sample_min_k(&s2, sorted, 6, NULL, 0, scr, full), 1);
    /* without top-p the 5 tokens at 0 matter: k = 6 */
    s2.top_p = 1.0;
    s2.min_p = 1e-9;
    CU_ASSERT_EQUAL(cf_sample_min_k(&s2, sorted, 6, NULL, 0, scr, full), 6);
    /* logprobs: exp(-200) is 0 in f32, so the normaliser is complete after the first 2 */
    const float lp[4] = {0, 0, -200, -300};
    fill(sorted, lp, 4);
    CU_ASSERT_EQUAL(cf_logprob_min_k(sorted, 4), 2);
    const float lq[3] = {0, -1, -2};
    fill(sorted, lq, 3);
    CU_ASSERT_EQUAL(cf_logprob_min_k(sorted, 3), 3);
}

static void test_cleanup(void)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
}

int main(void)
{
    static const golden_test tests[] = {{"clean backend passes every check", test_clean},
                                        {"each fault fails exactly its check", test_faults},
                                        {"findings name the case and numbers", test_findings},
                                        {"boundary set and lane subset by hand", test_boundaries},
                                        {"sampler chain: smallest k by hand", test_sampler_min_k},
                                        {"cleanup", test_cleanup},
                                        {0, 0}};
    return golden_test_run("conform", tests);
}

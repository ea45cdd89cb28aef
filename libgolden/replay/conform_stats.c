/* npu-replay conform's sampling-stats check (issue 28, handbook section 15): the backend's own
 * sampler (the optional version 2 call `sample`) against llama.cpp's chain run by the harness
 * over the logits the backend returned for the same position: a token of probability 0 or a
 * seed that does not fix its token fails at once; otherwise a chi-square goodness-of-fit a
 * setting (classes pooled to an expected count of 5, positions summed), judged at the check's
 * false-alarm rate split over its tests (Bonferroni). Every setting runs on every lane (the lanes
 * of cf_lanes: all of them up to 8), each lane its own test: a sampler wrong on one lane only
 * fails there. docs/conformance.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/report.h"
#include "replay/conform_priv.h"

#define ST_DRAWS GOLDEN_BK_MAX_DRAWS /* 4096: one call a position */
#define ST_POSITIONS 4
#define ST_ALPHA 1e-6
#define ST_REPEATS 8   /* seeds asked again at each position */
#define ST_MIN_EXPECTED 5.0

typedef struct {
    const char *name;
    float temp;
    int top_k;
    float top_p, min_p, repeat_penalty;
    int repeat_last_n, prompt;
} st_setting;

/* Off: top_k 0, top_p 1, min_p 0, repeat_penalty 1; temp 0 greedy. */
static const st_setting settings[] = {
    {"greedy", 0.0f, 40, 0.95f, 0.05f, 1.1f, 64, 24},
    {"temp", 0.6f, 0, 1.0f, 0.0f, 1.0f, 64, 24},
    {"top-k", 1.0f, 10, 1.0f, 0.0f, 1.0f, 64, 24},
    {"top-p", 1.0f, 0, 0.8f, 0.0f, 1.0f, 64, 24},
    {"min-p", 1.0f, 0, 1.0f, 0.3f, 1.0f, 64, 24},
    {"penalty", 1.0f, 40, 1.0f, 0.0f, 2.0f, 64, 64},
    {"llama", 0.8f, 40, 0.95f, 0.05f, 1.1f, 64, 24},
    {"temp-cuts", 0.5f, 0, 0.7f, 0.2f, 1.0f, 64, 24}};
#define N_SETTINGS (sizeof settings / sizeof *settings)

/* One setting's tally over its positions. */
typedef struct {
    size_t draws, classes, zero_draws, repeat_diff, repeats;
    double chi2;
    int dof;
    json_t *positions;
} st_tally;

typedef struct {
    int V;
    int32_t *prompt; /* the setting's prompt, the same on every lane */
    int32_t *hist;   /* the lane's tokens */
    float *row;      /* the backend's logits of the position */
    lg_cand *cand;   /* the host chain's classes */
    int32_t *rank;   /* id -> class index, -1 = probability 0 */
    size_t *count;   /* draws a class */
    int32_t *first;  /* the tokens of the first ST_REPEATS draws */
    uint64_t *seeds; /* [GOLDEN_BK_MAX_DRAWS] one call's seeds */
    int32_t *toks;   /* [GOLDEN_BK_MAX_DRAWS] and its tokens */
} st_buf;

static uint64_t mix(uint64_t a, uint64_t b)
{
    uint64_t s = a ^ (b * 0x9e3779b97f4a7c15ull);
    return lg_splitmix64(&s);
}

/* The chi-square of one position's counts over the k classes of d (most probable first), the
 * tail of expected count below 5 pooled (into the last kept class when the pool is still below
 * 5). Adds to t; returns the classes after pooling. */
static size_t chi2_position(const lg_cand *d, size_t k, const size_t *count, size_t draws,
                            st_tally *t)
{
    double n = (double)draws, pool_e = 0, pool_o = 0, chi2 = 0;
    size_t m = 0;
    double last_e = 0, last_o = 0;
    for (size_t i = 0; i < k; i++) {
        double e = n * (double)d[i].p, o = (double)count[i];
        if (e >= ST_MIN_EXPECTED && pool_e == 0) {
            if (m) /* the previous class is final */
                chi2 += (last_o - last_e) * (last_o - last_e) / last_e;
            last_e = e, last_o = o;
            m++;
        } else {
            pool_e += e, pool_o += o;
        }
    }
    if (pool_e > 0 && (pool_e >= ST_MIN_EXPECTED || m == 0)) {
        if (m)
            chi2 += (last_o - last_e) * (last_o - last_e) / last_e;
        last_e = pool_e, last_o = pool_o;
        m++;
    } else if (pool_e > 0) { /* a pool too small: merged into the last class kept */
        last_e += pool_e, last_o += pool_o;
    }
    if (m >= 2) {
        chi2 += (last_o - last_e) * (last_o - last_e) / last_e;
        t->chi2 += chi2;
        t->dof += (int)m - 1;
    }
    t->classes += m;
    return m;
}

/* The first draw that gave token tok with probability 0: a finding naming it. */
static void zero_finding(cf_ctx *c, const st_setting *st, int lane, size_t n_hist, size_t d,
                         int32_t tok, const st_buf *B, size_t k, uint64_t seed)
{
    char kase[80];
    size_t r = 0;
    while (r < k && B->cand[r].id != tok)
        r++;
    snprintf(kase, sizeof kase, "%s lane %d position %lld draw %zu", st->name, lane,
             (long long)n_hist - 1, d);
    cf_find(c, kase, "token %d has probability 0 under the host chain (%s; the chain keeps %zu "
            "classes, seed %llu)", (int)tok, r < k ? "kept with probability 0" :
            "outside the kept classes", k, (unsigned long long)seed);
}

/* sample: nd draws with seeds[0..nd) (one call of n_draws 0 when nd is 1) into toks. */
static int draw(cf_ctx *c, int lane, golden_backend_sampling *s, const uint64_t *seeds,
                size_t nd, int32_t *toks)
{
    s->n_draws = nd > 1 ? nd : 0;
    s->seeds = nd > 1 ? seeds : NULL;
    s->seed = seeds[0];
    if (replay_backend_sample(c->b, lane, s, toks, &c->err))
        return cf_error(c, NULL);
    return 0;
}

/* The draws of one position: every drawn token held to the chain's classes, the repeats (the
 * first draw alone, then draws 1..7 in reverse in one call: another batch, the same tokens),
 * the chi-square. 1 when the check cannot go on. */
static int one_position(cf_ctx *c, const st_setting *st, size_t si, int lane, int step,
                        size_t n_hist, golden_backend_sampling *s, st_buf *B, st_tally *t,
                        int draws)
{
    int V = B->V;
    lg_sample_params p = {st->temp, st->top_k, st->top_p, st->min_p, st->repeat_penalty,
                          st->repeat_last_n, 0, 0};
    for (int i = 0; i < V; i++)
        B->cand[i] = (lg_cand){i, B->row[i], 0};
    size_t k = lg_sample_chain(&p, B->cand, (size_t)V, B->hist, n_hist);
    for (int i = 0; i < V; i++)
        B->rank[i] = -1;
    for (size_t i = 0; i < k; i++)
        if (B->cand[i].p > 0)
            B->rank[B->cand[i].id] = (int32_t)i;
    memset(B->count, 0, k * sizeof *B->count);
    s->history = B->hist;
    s->n_history = n_hist;
    uint64_t base = mix(c->o->seed ^ 0x73616d706c65ull, si * 1000003u + (uint64_t)step);
    if (lane > 0) /* lane 0 keeps the seeds it had before lanes were checked */
        base = mix(base ^ 0x6c616e65ull, (uint64_t)lane);
    for (size_t d0 = 0; d0 < (size_t)draws; d0 += GOLDEN_BK_MAX_DRAWS) {
        size_t nd = (size_t)draws - d0 < GOLDEN_BK_MAX_DRAWS ? (size_t)draws - d0
                                                               : GOLDEN_BK_MAX_DRAWS;
        for (size_t d = 0; d < nd; d++)
            B->seeds[d] = mix(base, d0 + d);
        if (draw(c, lane, s, B->seeds, nd, B->toks))
            return 1;
        for (size_t d = 0; d < nd; d++) {
            int32_t tok = B->toks[d];
            if (d0 + d < ST_REPEATS)
                B->first[d0 + d] = tok;
            c->chk->comparisons++;
            if (B->rank[tok] >= 0)
                B->count[B->rank[tok]]++;
            else if (t->zero_draws++ == 0)
                zero_finding(c, st, lane, n_hist, d0 + d, tok, B, k, B->seeds[d]);
        }
    }
    size_t nr = draws < ST_REPEATS ? (size_t)draws : ST_REPEATS;
    uint64_t rs[ST_REPEATS];
    int32_t rt[ST_REPEATS];
    for (size_t r = 0; r < nr; r++) /* rs[0] alone, then the rest reversed in one call */
        rs[r] = mix(base, r == 0 ? 0 : nr - r);
    if (draw(c, lane, s, rs, 1, rt) || (nr > 1 && draw(c, lane, s, rs + 1, nr - 1, rt + 1)))
        return 1;
    for (size_t r = 0; r < nr; r++) {
        size_t d = r == 0 ? 0 : nr - r;
        c->chk->comparisons++;
        t->repeats++;
        if (rt[r] != B->first[d] && t->repeat_diff++ == 0) {
            char kase[80];
            snprintf(kase, sizeof kase, "%s lane %d position %lld", st->name, lane,
                     (long long)n_hist - 1);
            cf_find(c, kase, "seed %llu gave token %d in draw %zu, then %d (the same seed, logits "
                    "and settings must give the same token)", (unsigned long long)rs[r],
                    (int)B->first[d], d, (int)rt[r]);
        }
    }
    t->draws += (size_t)draws;
    size_t m = chi2_position(B->cand, k, B->count, (size_t)draws, t);
    json_array_append_new(t->positions, json_pack("{s:I, s:I, s:I}", "position",
                          (json_int_t)n_hist - 1, "kept", (json_int_t)k, "classes", (json_int_t)m));
    return 0;
}

static json_t *num_or_null(bool have, double v)
{
    return have ? golden_json_real(v) : json_null();
}

/* One setting on one lane: a fresh sequence from the setting's prompt (drawn on its first lane,
 * the same on the others), positions visited by decoding the first draw. */
static int one_setting(cf_ctx *c, size_t si, int lane, bool first, st_buf *B, int draws,
                       int positions, double alpha_test)
{
    const st_setting *st = &settings[si];
    st_tally t = {0};
    t.positions = json_array();
    golden_backend_sampling s = {st->temp, st->top_k, st->top_p, st->min_p, st->repeat_penalty,
                                 st->repeat_last_n, NULL, 0, 0, 0, NULL};
    /* the prompt, shortened to fit --max-context: the lane ends holding prompt + positions - 1 */
    int64_t room = c->limit - positions + 1;
    size_t n_hist = (size_t)(room < st->prompt ? room : st->prompt);
    int rc = 0;
    if (golden_backend_reset(c->b, lane, &c->err)) {
        rc = cf_error(c, NULL);
        goto out;
    }
    if (first)
        cf_tokens(c, B->prompt, n_hist);
    memcpy(B->hist, B->prompt, n_hist * sizeof *B->hist);
    if ((rc = cf_prefill_logits(c, lane, 0, B->hist, n_hist, B->row)) != 0)
        goto out;
    for (int step = 0; step < positions; step++) {
        if ((rc = one_position(c, st, si, lane, step, n_hist, &s, B, &t, draws)) != 0)
            goto out;
        if (step + 1 == positions)
            break;
        B->hist[n_hist] = B->first[0];
        if ((rc = cf_decode_logits(c, lane, B->hist[n_hist++], B->row)) != 0)
            goto out;
    }
    bool greedy = !(st->temp > 0), tested = !greedy && t.dof > 0;
    double p = tested ? lg_chisq_sf(t.chi2, t.dof) : 0;
    bool fail = t.zero_draws || t.repeat_diff || (tested && !(p >= alpha_test));
    if (tested && !(p >= alpha_test)) {
        char kase[64];
        snprintf(kase, sizeof kase, "%s lane %d", st->name, lane);
        cf_find(c, kase, "chi-square %.4g with %d degrees of freedom over %zu draws in %zu "
                "classes: p = %.3g, below the per-test alpha %.3g", t.chi2, t.dof, t.draws,
                t.classes, p, alpha_test);
    }
    if (!c->chk->coverage)
        c->chk->coverage = json_object();
    json_t *arr = json_object_get(c->chk->coverage, "settings");
    json_t *o = json_pack("{s:s, s:i, s:o, s:i, s:o, s:o, s:o, s:i, s:O, s:I, s:I, s:o, s:o, s:o, s:I, "
                          "s:s}", "setting", st->name, "lane", lane, "temp", golden_json_real(st->temp), "top_k",
                          st->top_k, "top_p", golden_json_real(st->top_p), "min_p",
                          golden_json_real(st->min_p), "repeat_penalty",
                          golden_json_real(st->repeat_penalty), "repeat_last_n", st->repeat_last_n,
                          "positions", t.positions, "draws", (json_int_t)t.draws, "classes",
                          (json_int_t)t.classes, "chi2", num_or_null(tested, t.chi2), "dof",
                          tested ? json_integer(t.dof) : json_null(), "p", num_or_null(tested, p),
                          "repeats", (json_int_t)t.repeats, "verdict", fail ? "fail" : "pass");
    if (o) {
        json_object_set_new(o, "zero_probability_draws", json_integer((json_int_t)t.zero_draws));
        json_object_set_new(o, "repeat_mismatches", json_integer((json_int_t)t.repeat_diff));
        if (greedy)
            json_object_set_new(o, "mismatches", json_integer((json_int_t)t.zero_draws));
        else if (!tested) /* every position one class: every draw was checked exactly */
            json_object_set_new(o, "exact", json_true());
    }
    if (arr && o)
        json_array_append_new(arr, o);
    else
        json_decref(o);
out:
    json_decref(t.positions);
    return rc;
}

int cf_check_sampling_stats(cf_ctx *c)
{
    if (!replay_backend_has_sample(c->b)) {
        const char *why = golden_backend_abi(c->b) < 2
                              ? "the backend has no sample call (ABI version 1)"
                              : "the backend has no sample call (its version 2 table leaves "
                                "sample out): the harness samples on the host";
        if (c->o->checks) /* named: it cannot run */
            return cf_error(c, why);
        c->chk->status = GOLDEN_CONFORM_SKIPPED;
        snprintf(c->chk->error, sizeof c->chk->error, "%s", why);
        return 0;
    }
    int draws = c->o->sampling_draws > 0 ? c->o->sampling_draws : ST_DRAWS;
    int positions = c->o->sampling_positions > 0 ? c->o->sampling_positions : ST_POSITIONS;
    double alpha = c->o->sampling_alpha > 0 ? c->o->sampling_alpha : ST_ALPHA;
    int lanes[8], n_lanes = cf_lanes(c, lanes);
    size_t tests = 0;
    for (size_t i = 0; i < N_SETTINGS; i++)
        tests += settings[i].temp > 0;
    tests *= (size_t)n_lanes; /* one test a setting and lane */
    double alpha_test = alpha / (double)tests;
    int V = c->info->vocab_size, need = 64 + positions;
    if (c->limit < positions + 8)
        return cf_error(c, "the context is too short for sampling-stats (8 prompt tokens and "
                        "the positions)");
    if (cf_set_taps(c, false)) /* the production path */
        return 1;
    st_buf B = {V, malloc(64 * sizeof(int32_t)), malloc((size_t)need * sizeof(int32_t)),
                malloc((size_t)V * sizeof(float)),
                malloc((size_t)V * sizeof(lg_cand)), malloc((size_t)V * sizeof(int32_t)),
                malloc((size_t)V * sizeof(size_t)), malloc(ST_REPEATS * sizeof(int32_t)),
                malloc(GOLDEN_BK_MAX_DRAWS * sizeof(uint64_t)),
                malloc(GOLDEN_BK_MAX_DRAWS * sizeof(int32_t))};
    int rc = 0;
    if (!B.prompt || !B.hist || !B.row || !B.cand || !B.rank || !B.count || !B.first || !B.seeds ||
        !B.toks) {
        rc = cf_error(c, "out of memory");
    } else {
        c->chk->coverage = json_object();
        json_object_set_new(c->chk->coverage, "settings", json_array());
        json_object_set_new(c->chk->coverage, "alpha", golden_json_real(alpha));
        json_object_set_new(c->chk->coverage, "alpha_per_test", golden_json_real(alpha_test));
        json_object_set_new(c->chk->coverage, "draws_per_position", json_integer(draws));
        json_object_set_new(c->chk->coverage, "positions_per_setting", json_integer(positions));
        json_t *ln = json_array();
        for (int l = 0; l < n_lanes; l++)
            json_array_append_new(ln, json_integer(lanes[l]));
        json_object_set_new(c->chk->coverage, "lanes", ln);
        json_object_set_new(c->chk->coverage, "tests", json_integer((json_int_t)tests));
        for (size_t i = 0; rc == 0 && i < N_SETTINGS; i++)
            for (int l = 0; rc == 0 && l < n_lanes; l++)
                rc = one_setting(c, i, lanes[l], l == 0, &B, draws, positions, alpha_test);
    }
    free(B.prompt), free(B.hist), free(B.row), free(B.cand), free(B.rank), free(B.count);
    free(B.first), free(B.seeds), free(B.toks);
    return rc;
}

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

/* One setting's tally on one lane over its positions. */
typedef struct {
    size_t draws, classes, zero_draws, repeat_diff, repeats, cross_repeats, cross_diff;
    size_t max_kept; /* the most classes the chain kept at a position */
    double chi2;
    int dof;
    json_t *positions;
} st_tally;

/* One lane's sequence in a setting: the lanes advance together, every lane's position read
 * before any lane draws, so a sampler that reads the wrong lane's row draws from it. */
typedef struct {
    int lane;
    size_t n_hist;
    int32_t *hist;                /* the lane's tokens */
    float *row;                   /* the backend's logits of the position, read as it advanced */
    int32_t rep[ST_REPEATS];      /* the tokens of the draws asked again */
    uint64_t rep_seed[ST_REPEATS];
    size_t n_rep;
    st_tally t;
} st_lane;

typedef struct {
    int V;
    int32_t *prompt; /* the setting's prompt, the same on every lane */
    lg_cand *cand;   /* the host chain's classes */
    int32_t *rank;   /* id -> class index, -1 = probability 0 */
    size_t *count;   /* draws a class */
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

/* The draws asked again at a position of `draws`: the first, then 7 spread over the draws (the
 * last among them), ascending; all of them when there are at most 8. */
static size_t repeat_index(size_t draws, size_t *idx)
{
    size_t nr = draws < ST_REPEATS ? draws : ST_REPEATS;
    for (size_t r = 0; r < nr; r++)
        idx[r] = draws <= ST_REPEATS ? r : r + 1 == nr ? draws - 1 : r * draws / ST_REPEATS;
    return nr;
}

/* The draws of one position on lane L->lane: every drawn token held to the chain's classes over
 * the row the lane gave when it advanced, the repeats (the first asked alone, then the other
 * ones in reverse in one call: another batch, the same tokens), the chi-square. 1 when the
 * check cannot go on. */
static int one_position(cf_ctx *c, const st_setting *st, size_t si, int step,
                        golden_backend_sampling *s, st_buf *B, st_lane *L, int draws)
{
    int V = B->V;
    st_tally *t = &L->t;
    lg_sample_params p = {st->temp, st->top_k, st->top_p, st->min_p, st->repeat_penalty,
                          st->repeat_last_n, 0, 0};
    for (int i = 0; i < V; i++)
        B->cand[i] = (lg_cand){i, L->row[i], 0};
    size_t k = lg_sample_chain(&p, B->cand, (size_t)V, L->hist, L->n_hist);
    if (k > t->max_kept)
        t->max_kept = k;
    for (int i = 0; i < V; i++)
        B->rank[i] = -1;
    for (size_t i = 0; i < k; i++)
        if (B->cand[i].p > 0)
            B->rank[B->cand[i].id] = (int32_t)i;
    memset(B->count, 0, k * sizeof *B->count);
    s->history = L->hist;
    s->n_history = L->n_hist;
    uint64_t base = mix(c->o->seed ^ 0x73616d706c65ull, si * 1000003u + (uint64_t)step);
    if (L->lane > 0) /* lane 0 keeps the seeds it had before lanes were checked */
        base = mix(base ^ 0x6c616e65ull, (uint64_t)L->lane);
    size_t idx[ST_REPEATS], nr = repeat_index((size_t)draws, idx), next = 0;
    for (size_t d0 = 0; d0 < (size_t)draws; d0 += GOLDEN_BK_MAX_DRAWS) {
        size_t nd = (size_t)draws - d0 < GOLDEN_BK_MAX_DRAWS ? (size_t)draws - d0
                                                               : GOLDEN_BK_MAX_DRAWS;
        for (size_t d = 0; d < nd; d++)
            B->seeds[d] = mix(base, d0 + d);
        if (draw(c, L->lane, s, B->seeds, nd, B->toks))
            return 1;
        for (size_t d = 0; d < nd; d++) {
            int32_t tok = B->toks[d];
            if (next < nr && idx[next] == d0 + d)
                L->rep_seed[next] = B->seeds[d], L->rep[next++] = tok;
            c->chk->comparisons++;
            if (B->rank[tok] >= 0)
                B->count[B->rank[tok]]++;
            else if (t->zero_draws++ == 0)
                zero_finding(c, st, L->lane, L->n_hist, d0 + d, tok, B, k, B->seeds[d]);
        }
    }
    L->n_rep = nr;
    uint64_t rs[ST_REPEATS];
    int32_t rt[ST_REPEATS];
    size_t at[ST_REPEATS];
    for (size_t r = 0; r < nr; r++) /* the first alone, then the rest reversed in one call */
        at[r] = r == 0 ? 0 : nr - r, rs[r] = L->rep_seed[at[r]];
    if (draw(c, L->lane, s, rs, 1, rt) ||
        (nr > 1 && draw(c, L->lane, s, rs + 1, nr - 1, rt + 1)))
        return 1;
    for (size_t r = 0; r < nr; r++) {
        c->chk->comparisons++;
        t->repeats++;
        if (rt[r] != L->rep[at[r]] && t->repeat_diff++ == 0) {
            char kase[80];
            snprintf(kase, sizeof kase, "%s lane %d position %lld", st->name, L->lane,
                     (long long)L->n_hist - 1);
            cf_find(c, kase, "seed %llu gave token %d in draw %zu, then %d (the same seed, logits "
                    "and settings must give the same token)", (unsigned long long)rs[r],
                    (int)L->rep[at[r]], idx[at[r]], (int)rt[r]);
        }
    }
    t->draws += (size_t)draws;
    size_t m = chi2_position(B->cand, k, B->count, (size_t)draws, t);
    json_array_append_new(t->positions, json_pack("{s:I, s:I, s:I}", "position",
                          (json_int_t)L->n_hist - 1, "kept", (json_int_t)k, "classes", (json_int_t)m));
    return 0;
}

/* At the first position, a lane whose row and history are lane 0's bit for bit: lane 0's
 * repeated seeds asked on it in one call must give lane 0's tokens (the same seed, logits and
 * settings; the lane is none of them). Lanes whose rows differ are not compared. */
static int cross_lane(cf_ctx *c, const st_setting *st, golden_backend_sampling *s,
                      const st_buf *B, const st_lane *L0, st_lane *L)
{
    if (L0->n_rep == 0 || L->n_hist != L0->n_hist ||
        memcmp(L->row, L0->row, (size_t)B->V * sizeof *L->row) != 0 ||
        memcmp(L->hist, L0->hist, L->n_hist * sizeof *L->hist) != 0)
        return 0;
    int32_t rt[ST_REPEATS];
    s->history = L->hist;
    s->n_history = L->n_hist;
    if (draw(c, L->lane, s, L0->rep_seed, L0->n_rep, rt))
        return 1;
    for (size_t r = 0; r < L0->n_rep; r++) {
        c->chk->comparisons++;
        L->t.cross_repeats++;
        if (rt[r] != L0->rep[r] && L->t.cross_diff++ == 0) {
            char kase[80];
            snprintf(kase, sizeof kase, "%s lane %d position %lld", st->name, L->lane,
                     (long long)L->n_hist - 1);
            cf_find(c, kase, "seed %llu gave token %d on lane %d and %d on lane %d (the same "
                    "seed, logits and settings must give the same token on every lane)",
                    (unsigned long long)L0->rep_seed[r], (int)L0->rep[r], L0->lane, (int)rt[r],
                    L->lane);
        }
    }
    return 0;
}

static json_t *num_or_null(bool have, double v)
{
    return have ? golden_json_real(v) : json_null();
}

/* A lane's verdict of a setting: the finding of a failed chi-square, the JSON entry. A setting
 * whose every position pooled into one class although the chain kept more than one has no test:
 * an error (the check could not judge it), never a pass. */
static int lane_verdict(cf_ctx *c, const st_setting *st, st_lane *L, double alpha_test, int draws)
{
    st_tally *t = &L->t;
    bool greedy = !(st->temp > 0), tested = !greedy && t->dof > 0;
    if (!greedy && !tested && t->max_kept > 1) {
        char why[256];
        snprintf(why, sizeof why, "%s lane %d: every position pooled into one class (the chain "
                 "kept up to %zu classes, expected counts below %g past the first): no test at "
                 "--sampling-draws %d; raise it", st->name, L->lane, t->max_kept,
                 ST_MIN_EXPECTED, draws);
        return cf_error(c, why);
    }
    double p = tested ? lg_chisq_sf(t->chi2, t->dof) : 0;
    bool fail = t->zero_draws || t->repeat_diff || t->cross_diff || (tested && !(p >= alpha_test));
    if (tested && !(p >= alpha_test)) {
        char kase[64];
        snprintf(kase, sizeof kase, "%s lane %d", st->name, L->lane);
        cf_find(c, kase, "chi-square %.4g with %d degrees of freedom over %zu draws in %zu "
                "classes: p = %.3g, below the per-test alpha %.3g", t->chi2, t->dof, t->draws,
                t->classes, p, alpha_test);
    }
    json_t *arr = json_object_get(c->chk->coverage, "settings");
    json_t *o = json_pack("{s:s, s:i, s:o, s:i, s:o, s:o, s:o, s:i, s:O, s:I, s:I, s:o, s:o, s:o, "
                          "s:I, s:s}", "setting", st->name, "lane", L->lane, "temp",
                          golden_json_real(st->temp), "top_k", st->top_k, "top_p",
                          golden_json_real(st->top_p), "min_p", golden_json_real(st->min_p),
                          "repeat_penalty", golden_json_real(st->repeat_penalty), "repeat_last_n",
                          st->repeat_last_n, "positions", t->positions, "draws",
                          (json_int_t)t->draws, "classes", (json_int_t)t->classes, "chi2",
                          num_or_null(tested, t->chi2), "dof",
                          tested ? json_integer(t->dof) : json_null(), "p", num_or_null(tested, p),
                          "repeats", (json_int_t)t->repeats, "verdict", fail ? "fail" : "pass");
    if (o) {
        json_object_set_new(o, "zero_probability_draws", json_integer((json_int_t)t->zero_draws));
        json_object_set_new(o, "repeat_mismatches", json_integer((json_int_t)t->repeat_diff));
        json_object_set_new(o, "cross_lane_repeats", json_integer((json_int_t)t->cross_repeats));
        json_object_set_new(o, "cross_lane_mismatches", json_integer((json_int_t)t->cross_diff));
        if (greedy)
            json_object_set_new(o, "mismatches", json_integer((json_int_t)t->zero_draws));
        else if (!tested) /* every position kept one class: every draw was checked exactly */
            json_object_set_new(o, "exact", json_true());
    }
    if (arr && o)
        json_array_append_new(arr, o);
    else
        json_decref(o);
    return 0;
}

/* One setting on every checked lane: each lane reset and prefilled with the setting's prompt,
 * then position by position every lane draws (each from the row it gave), then every lane
 * decodes the token of its first draw. */
static int one_setting(cf_ctx *c, size_t si, st_lane *Ls, int n_lanes, st_buf *B, int draws,
                       int positions, double alpha_test)
{
    const st_setting *st = &settings[si];
    golden_backend_sampling s = {st->temp, st->top_k, st->top_p, st->min_p, st->repeat_penalty,
                                 st->repeat_last_n, NULL, 0, 0, 0, NULL};
    /* the prompt, shortened to fit --max-context: the lane ends holding prompt + positions - 1 */
    int64_t room = c->limit - positions + 1;
    size_t n_hist = (size_t)(room < st->prompt ? room : st->prompt);
    int rc = 0;
    for (int l = 0; l < n_lanes; l++) {
        memset(&Ls[l].t, 0, sizeof Ls[l].t);
        Ls[l].t.positions = json_array();
        Ls[l].n_hist = n_hist;
        Ls[l].n_rep = 0;
    }
    cf_tokens(c, B->prompt, n_hist);
    for (int l = 0; l < n_lanes && rc == 0; l++) {
        memcpy(Ls[l].hist, B->prompt, n_hist * sizeof *B->prompt);
        if (golden_backend_reset(c->b, Ls[l].lane, &c->err))
            rc = cf_error(c, NULL);
        else
            rc = cf_prefill_logits(c, Ls[l].lane, 0, Ls[l].hist, n_hist, Ls[l].row);
    }
    for (int step = 0; step < positions && rc == 0; step++) {
        for (int l = 0; l < n_lanes && rc == 0; l++)
            rc = one_position(c, st, si, step, &s, B, &Ls[l], draws);
        for (int l = 1; step == 0 && l < n_lanes && rc == 0; l++)
            rc = cross_lane(c, st, &s, B, &Ls[0], &Ls[l]);
        if (step + 1 == positions)
            break;
        for (int l = 0; l < n_lanes && rc == 0; l++) {
            st_lane *L = &Ls[l];
            L->hist[L->n_hist] = L->rep[0];
            rc = cf_decode_logits(c, L->lane, L->hist[L->n_hist++], L->row);
        }
    }
    for (int l = 0; l < n_lanes && rc == 0; l++)
        rc = lane_verdict(c, st, &Ls[l], alpha_test, draws);
    for (int l = 0; l < n_lanes; l++) {
        json_decref(Ls[l].t.positions);
        Ls[l].t.positions = NULL;
    }
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
    /* 8 prompt tokens at least: the lane ends holding prompt + positions - 1 */
    if (c->limit - positions + 1 < 8)
        return cf_error(c, "the context is too short for sampling-stats (8 prompt tokens and "
                        "the positions)");
    if (cf_set_taps(c, false)) /* the production path */
        return 1;
    st_buf B = {V, malloc(64 * sizeof(int32_t)), malloc((size_t)V * sizeof(lg_cand)),
                malloc((size_t)V * sizeof(int32_t)), malloc((size_t)V * sizeof(size_t)),
                malloc(GOLDEN_BK_MAX_DRAWS * sizeof(uint64_t)),
                malloc(GOLDEN_BK_MAX_DRAWS * sizeof(int32_t))};
    st_lane Ls[8];
    bool ok = B.prompt && B.cand && B.rank && B.count && B.seeds && B.toks;
    for (int l = 0; l < n_lanes; l++) {
        Ls[l] = (st_lane){.lane = lanes[l]};
        Ls[l].hist = malloc((size_t)need * sizeof(int32_t));
        Ls[l].row = malloc((size_t)V * sizeof(float));
        ok = ok && Ls[l].hist && Ls[l].row;
    }
    int rc = 0;
    if (!ok) {
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
            rc = one_setting(c, i, Ls, n_lanes, &B, draws, positions, alpha_test);
    }
    free(B.prompt), free(B.cand), free(B.rank), free(B.count), free(B.seeds), free(B.toks);
    for (int l = 0; l < n_lanes; l++)
        free(Ls[l].hist), free(Ls[l].row);
    return rc;
}

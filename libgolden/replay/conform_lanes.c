/* npu-replay conform's lane, tail, reset and limit checks (handbook section 10): kv-lanes,
 * kv-tail, kv-reset and rejection, every result held against the same request on a fresh
 * instance of the backend (cf_open_ref), taps off as well as on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/conform_priv.h"
#include "replay/host_priv.h"

/* Prefill P tokens into lane then decode D, logits of every step into out[(D+1) * V]. */
static int run_seq(cf_ctx *c, int lane, const int32_t *t, int P, int D, float *out)
{
    int64_t V = c->info->vocab_size;
    if (cf_prefill_logits(c, lane, 0, t, (size_t)P, out))
        return 1;
    for (int s = 0; s < D; s++)
        if (cf_decode_logits(c, lane, t[P + s], out ? out + (s + 1) * V : NULL))
            return 1;
    return 0;
}

/* The references: request r (P + D tokens at t + r * (P + D)) alone on lane 0 of a fresh
 * instance, one after another (each a new sequence: a prefill at position 0). */
static int fresh_refs(cf_ctx *c, const int32_t *t, int nreq, int P, int D, float *out)
{
    cf_ctx ref;
    if (cf_open_ref(c, &ref))
        return cf_error(c, NULL);
    int64_t V = c->info->vocab_size;
    int rc = 0;
    for (int r = 0; rc == 0 && r < nreq; r++)
        rc = run_seq(&ref, 0, t + r * (P + D), P, D, out + (size_t)r * (size_t)((D + 1) * V));
    if (rc)
        c->err = ref.err;
    cf_close(&ref);
    return rc ? cf_error(c, NULL) : 0;
}

enum { LP = 8, LD = 12, MAXL = 8 };

/* One interleaving k of the requests over the lanes: lane i runs request (i + k) % m; order 0
 * steps the lanes round robin, 1 in reverse, 2 in a seeded random order (each lane's own steps
 * in sequence, prefills among other lanes' decodes). */
static int interleave(cf_ctx *c, int k, const int *lanes, int m, const int32_t *t,
                      const float *ref, float *got)
{
    int64_t V = c->info->vocab_size;
    int next[MAXL] = {0}, left = m * (LD + 1);
    while (left > 0) {
        int i = 0;
        if (k == 2) { /* a random lane with a step left */
            c->rng = c->rng * 6364136223846793005ull + 1442695040888963407ull;
            int pick = (int)((c->rng >> 33) % (uint64_t)left);
            for (i = 0; i < m; i++) {
                int rem = LD + 1 - next[i];
                if (pick < rem)
                    break;
                pick -= rem;
            }
        } else {
            int best = -1;
            for (int j = 0; j < m; j++) { /* the lane furthest behind, ties by the order */
                int jj = k == 1 ? m - 1 - j : j;
                if (next[jj] <= LD && (best < 0 || next[jj] < next[best]))
                    best = jj;
            }
            i = best;
        }
        int r = (i + k) % m, s = next[i]++;
        const int32_t *rq = t + r * (LP + LD);
        left--;
        int rc = s == 0 ? cf_prefill_logits(c, lanes[i], 0, rq, LP, got)
                        : cf_decode_logits(c, lanes[i], rq[LP + s - 1], got);
        if (rc)
            return 1;
        char kase[64], what[160];
        snprintf(kase, sizeof kase, "lane %d", lanes[i]);
        snprintf(what, sizeof what, "interleaving %d (taps %s), request %d, position %d vs the "
                 "request alone on a fresh instance", k, c->taps_on ? "on" : "off", r, LP - 1 + s);
        cf_cmp_logits(c, kase, what, got, ref + ((size_t)r * (LD + 1) + (size_t)s) * (size_t)V);
    }
    return 0;
}

enum { LL = 264, LLD = 4, LLCUT = 65 };

/* Every lane of the subset past the 64-, 128- and 256-position pages at once: each lane
 * prefills the first 65 tokens of its request (lanes in order), then the rest up to 264 (or the
 * context less 4) at 65 (lanes in reverse), then 4 decode steps round robin, taps off; every
 * lane's logits after its prefill and every step against the request alone on a fresh
 * instance, and length() after each. */
static int lanes_long(cf_ctx *c, const int *lanes, int m)
{
    int64_t V = c->info->vocab_size;
    int P = c->limit - LLD < LL ? (int)c->limit - LLD : LL;
    if (P <= LLCUT)
        return 0;
    int32_t *t = malloc((size_t)(m * (P + LLD)) * 4);
    float *ref = malloc((size_t)(m * (LLD + 1) * V) * 4), *got = malloc((size_t)V * 4);
    int rc = 1;
    if (!t || !ref || !got) {
        cf_error(c, "out of memory");
        goto out;
    }
    cf_tokens(c, t, (size_t)(m * (P + LLD)));
    if (fresh_refs(c, t, m, P, LLD, ref) || cf_set_taps(c, false))
        goto out;
    for (int i = 0; i < m; i++)
        if (cf_prefill_logits(c, lanes[i], 0, t + i * (P + LLD), LLCUT, NULL))
            goto out;
    /* a backend with step_batch (run's rounds of lanes in flight): the rest of the prefills and
     * the 2nd and 4th decode steps of every lane go as one step_batch (lanes in the same order),
     * each lane's logits read after it */
    bool batch = golden_backend_has_step_batch(c->b) && m <= MAXL;
    for (int s = -1; s < LLD; s++) {
        bool in_batch = batch && (s < 0 || s % 2 == 1);
        if (in_batch) {
            golden_backend_step st[MAXL];
            for (int j = 0; j < m; j++) {
                int i = s < 0 ? m - 1 - j : j;
                const int32_t *rq = t + i * (P + LLD);
                st[j] = (golden_backend_step){lanes[i],
                                              s < 0 ? GOLDEN_BK_STEP_PREFILL : GOLDEN_BK_STEP_DECODE,
                                              s < 0 ? LLCUT : P + s, s < 0 ? rq + LLCUT : rq + P + s,
                                              s < 0 ? (size_t)(P - LLCUT) : 1, 0, 0};
            }
            if (golden_backend_step_batch(c->b, st, (size_t)m, &c->err)) {
                cf_error(c, NULL);
                goto out;
            }
        }
        for (int j = 0; j < m; j++) {
            int i = s < 0 ? m - 1 - j : j;
            const int32_t *rq = t + i * (P + LLD);
            char kase[64], what[128];
            snprintf(kase, sizeof kase, "lane %d", lanes[i]);
            if ((in_batch ? cf_logits(c, lanes[i], got)
                 : s < 0  ? cf_prefill_logits(c, lanes[i], LLCUT, rq + LLCUT, (size_t)(P - LLCUT), got)
                          : cf_decode_logits(c, lanes[i], rq[P + s], got)) ||
                cf_expect_length(c, lanes[i], P + s + 1, kase,
                                 in_batch ? "a step_batch" : s < 0 ? "a prefill" : "a decode"))
                goto out;
            snprintf(what, sizeof what, "every lane past %d (taps off), position %d%s vs the "
                     "request alone on a fresh instance", LLCUT, P + s,
                     in_batch ? " in a step_batch" : "");
            cf_cmp_logits(c, kase, what, got, ref + ((size_t)i * (LLD + 1) + (size_t)(s + 1)) * (size_t)V);
        }
    }
    if (batch)
        cf_cover(c, "step_batch_lanes", m);
    cf_cover(c, "long_context", P + LLD);
    rc = 0;
out:
    free(t), free(ref), free(got);
    return rc;
}

/* Every lane (or a seeded 8 with the first and the last) in three interleavings, the second
 * with taps off, each lane's every step against its request alone on a fresh instance; then
 * every lane at once past the page boundaries (lanes_long). */
int cf_check_kv_lanes(cf_ctx *c)
{
    int64_t V = c->info->vocab_size;
    if (c->info->num_lanes < 2)
        return cf_error(c, "the backend has one lane; kv-lanes needs two");
    if (c->limit < LP + LD)
        return cf_error(c, "the context is too short for kv-lanes");
    int lanes[MAXL], m = cf_lanes(c, lanes);
    int32_t t[MAXL * (LP + LD)];
    cf_tokens(c, t, (size_t)(m * (LP + LD)));
    float *ref = malloc((size_t)(m * (LD + 1) * V) * 4), *got = malloc((size_t)V * 4);
    int rc = 1;
    if (!ref || !got) {
        cf_error(c, "out of memory");
        goto out;
    }
    c->tap_discard = true;
    c->cross_open = true;
    if (fresh_refs(c, t, m, LP, LD, ref))
        goto out;
    for (int k = 0; k < 3; k++)
        if (cf_set_taps(c, k != 1) || interleave(c, k, lanes, m, t, ref, got))
            goto out;
    if (lanes_long(c, lanes, m) || cf_check_v2_outputs(c))
        goto out;
    for (int i = 0; i < m; i++)
        cf_cover(c, "lanes", lanes[i]);
    cf_cover_str(c, "interleavings", "round robin (taps on), reverse (taps off), seeded random (taps on)");
    rc = 0;
out:
    free(ref), free(got);
    return rc;
}

enum { TN = 264, TD = 4, MAXCUT = 48, TB = 40 };

/* One cut L on a lane: truncate a lane of N to L, length() must say L, then D new tokens
 * decoded; a prefill of them at L over the old tail, and a one-token prefill at L below the
 * length that leaves; all
 * against the new sequence on lane 0 of a fresh instance, length() after every call; taps on
 * then off (both), or off only. */
static int tail_at(cf_ctx *c, cf_ctx *ref, int lane, int by, const int32_t *a, int N, int L,
                   bool both, float *want, float *got)
{
    int64_t V = c->info->vocab_size;
    int32_t nw[TN + TD];
    memcpy(nw, a, (size_t)L * 4);
    cf_tokens(c, nw + L, TD);
    if (run_seq(ref, 0, nw, L, TD, want) ||
        cf_prefill_logits(ref, 0, 0, nw, (size_t)L, NULL) ||
        cf_prefill_logits(ref, 0, L, nw + L, TD, want + (TD + 1) * V)) {
        c->err = ref->err;
        return cf_error(c, NULL);
    }
    char kase[64], what[128];
    snprintf(kase, sizeof kase, "cut at %d, lane %d", L, lane);
    for (int on = both ? 1 : 0; on >= 0; on--) {
        if (cf_set_taps(c, on) || cf_prefill_logits(c, lane, 0, a, (size_t)N, NULL) ||
            cf_expect_length(c, lane, N, kase, "a prefill from 0"))
            return 1;
        if (golden_backend_truncate(c->b, lane, L, &c->err))
            return cf_error(c, NULL);
        if (cf_expect_length(c, lane, L, kase, "the cut") ||
            (by >= 0 && cf_expect_length(c, by, TB, kase, "another lane's cut")))
            return 1;
        for (int s = 0; s < TD; s++) {
            if (cf_decode_logits(c, lane, nw[L + s], got))
                return 1;
            snprintf(what, sizeof what, "decode at %d after the cut (taps %s) vs a fresh lane",
                     L + s, on ? "on" : "off");
            cf_cmp_logits(c, kase, what, got, want + (s + 1) * V);
        }
        if (cf_expect_length(c, lane, L + TD, kase, "decodes after the cut") ||
            cf_prefill_logits(c, lane, 0, a, (size_t)N, NULL) ||
            cf_prefill_logits(c, lane, L, nw + L, TD, got) ||
            cf_expect_length(c, lane, L + TD, kase, "a prefill over the old tail"))
            return 1;
        snprintf(what, sizeof what, "prefill at %d over the old tail (taps %s) vs a fresh lane", L,
                 on ? "on" : "off");
        cf_cmp_logits(c, kase, what, got, want + (TD + 1) * V);
        if (cf_prefill_logits(c, lane, L, nw + L, 1, got) || /* over the 4 just written */
            cf_expect_length(c, lane, L + 1, kase, "a one-token prefill below the length"))
            return 1;
        snprintf(what, sizeof what, "prefill of 1 at %d below the length %d (taps %s) vs a fresh lane",
                 L, L + TD, on ? "on" : "off");
        cf_cmp_logits(c, kase, what, got, want + V);
    }
    cf_cover(c, "cuts", L);
    cf_cover(c, "cut_lanes", lane);
    return 0;
}

/* The boundary set below N - 4 (aligned cuts and their neighbours: 15-17, ..., 127-129,
 * 255-257), 5, 37, 100 (off every tile) and one seeded cut, of a lane of 264 (or the context),
 * the cuts dealt over the lanes (cf_lanes) in turn; every cut taps off, every other one taps on
 * too. With two lanes or more, the next lane of the list holds 40 tokens of its own through
 * each cut: its length() after every truncate, then one decode against a fresh instance
 * (truncate cuts the lane it names and no other). */
int cf_check_kv_tail(cf_ctx *c)
{
    int64_t V = c->info->vocab_size;
    int N = c->limit < TN ? (int)c->limit : TN;
    if (N < 40)
        return cf_error(c, "the context is too short for kv-tail");
    int32_t a[TN];
    cf_tokens(c, a, (size_t)N);
    int64_t cuts[MAXCUT];
    size_t nc = cf_boundaries(N - TD, cuts, MAXCUT - 4);
    static const int odd[] = {5, 37, 100};
    for (int i = 0; i < 3; i++)
        if (odd[i] + TD < N)
            cuts[nc++] = odd[i];
    int64_t r = cf_random_position(c, 1, N - TD, cuts, nc);
    if (r > 0)
        cuts[nc++] = r;
    int lanes[MAXL], m = cf_lanes(c, lanes);
    float *want = malloc((size_t)((TD + 2) * V) * 4), *got = malloc((size_t)V * 4);
    cf_ctx ref;
    int rc = 1, opened = 0;
    if (!want || !got) {
        cf_error(c, "out of memory");
        goto out;
    }
    c->tap_discard = true;
    c->cross_open = true;
    if (cf_open_ref(c, &ref)) {
        cf_error(c, NULL);
        goto out;
    }
    opened = 1;
    int32_t bt[TB + 1];
    float *wantb = m > 1 ? malloc((size_t)(2 * V) * 4) : NULL;
    cf_tokens(c, bt, TB + 1);
    if (m > 1 && (!wantb || run_seq(&ref, 0, bt, TB, 1, wantb))) {
        if (wantb)
            c->err = ref.err;
        cf_error(c, wantb ? NULL : "out of memory");
        free(wantb);
        goto out;
    }
    for (size_t i = 0; i < nc; i++) {
        int lane = lanes[i % (size_t)m], by = m > 1 ? lanes[(i + 1) % (size_t)m] : -1;
        char kase[64];
        snprintf(kase, sizeof kase, "cut at %d, lane %d", (int)cuts[i], lane);
        if ((by >= 0 && cf_prefill_logits(c, by, 0, bt, TB, NULL)) ||
            tail_at(c, &ref, lane, by, a, N, (int)cuts[i], i % 2 == 0, want, got) ||
            (by >= 0 && (cf_expect_length(c, by, TB, kase, "another lane's cut") ||
                         cf_decode_logits(c, by, bt[TB], got)))) {
            free(wantb);
            goto out;
        }
        if (by >= 0) {
            char what[128];
            snprintf(what, sizeof what, "lane %d's decode at %d after lane %d's cut vs a fresh "
                     "lane", by, TB, lane);
            cf_cmp_logits(c, kase, what, got, wantb + V);
        }
    }
    free(wantb);
    rc = 0;
out:
    if (opened)
        cf_close(&ref);
    free(want), free(got);
    return rc;
}

enum { RA = 48, RP = 12, RD = 6 };

/* Reset lane v alone while every lane holds a (48 + 2 decoded): v's length() must be 0, the
 * others' unchanged; v regenerates b as a cold start while the others decode on unharmed. */
static int reset_one(cf_ctx *c, const int *lanes, int m, int vi, const int32_t *a,
                     const int32_t *b, const float *cold, const float *cont, float *got)
{
    int64_t V = c->info->vocab_size;
    int victim = lanes[vi];
    const char *tp = c->taps_on ? "on" : "off";
    char kase[64], what[128];
    snprintf(kase, sizeof kase, "reset lane %d", victim);
    for (int i = 0; i < m; i++) /* every lane holds a, two steps decoded */
        if (run_seq(c, lanes[i], a + i * (RA + 4), RA, 2, NULL))
            return 1;
    if (golden_backend_reset(c->b, victim, &c->err))
        return cf_error(c, NULL);
    for (int i = 0; i < m; i++)
        if (cf_expect_length(c, lanes[i], i == vi ? 0 : RA + 2, kase,
                             i == vi ? "its reset" : "another lane's reset"))
            return 1;
    for (int i = 0; i < m; i++) {
        snprintf(kase, sizeof kase, "reset lane %d, lane %d", victim, lanes[i]);
        if (i == vi) {
            if (run_seq(c, victim, b + i * (RP + RD), RP, RD, got))
                return 1;
            for (int s = 0; s <= RD; s++) {
                snprintf(what, sizeof what, "position %d after its reset (taps %s) vs a cold start",
                         RP - 1 + s, tp);
                cf_cmp_logits(c, kase, what, got + s * V, cold + ((size_t)i * (RD + 1) + (size_t)s) * (size_t)V);
            }
            continue;
        }
        for (int s = 2; s < 4; s++) { /* the others continue their own sequence */
            if (cf_decode_logits(c, lanes[i], a[i * (RA + 4) + RA + s], got))
                return 1;
            snprintf(what, sizeof what, "position %d after another lane's reset (taps %s)", RA + s, tp);
            cf_cmp_logits(c, kase, what, got, cont + ((size_t)i * 5 + (size_t)s + 1) * (size_t)V);
        }
    }
    return 0;
}

/* Reset each lane alone (every lane of the subset in turn) while every lane holds a sequence:
 * that lane regenerates as a cold start and the others go on unharmed; then abandon a request on
 * every lane, reset(-1), and regenerate on every lane. Taps on, then the whole again taps off;
 * length() after every reset and every sequence. */
int cf_check_kv_reset(cf_ctx *c)
{
    int64_t V = c->info->vocab_size;
    if (c->limit < RA + 4)
        return cf_error(c, "the context is too short for kv-reset");
    int lanes[MAXL], m = cf_lanes(c, lanes);
    int32_t a[MAXL * (RA + 4)], b[MAXL * (RP + RD)];
    cf_tokens(c, a, (size_t)(m * (RA + 4)));
    cf_tokens(c, b, (size_t)(m * (RP + RD)));
    float *cold = malloc((size_t)(m * (RD + 1) * V) * 4), *cont = malloc((size_t)(m * 5 * V) * 4),
          *got = malloc((size_t)((RD + 1) * V) * 4);
    int rc = 1;
    if (!cold || !cont || !got) {
        cf_error(c, "out of memory");
        goto out;
    }
    c->tap_discard = true;
    c->cross_open = true;
    /* the cold starts b, and each lane's a continued: 48 + 4 decode steps */
    if (fresh_refs(c, b, m, RP, RD, cold) || fresh_refs(c, a, m, RA, 4, cont))
        goto out;
    for (int on = 1; on >= 0; on--) {
        char kase[64], what[128];
        if (cf_set_taps(c, on))
            goto out;
        for (int vi = 0; vi < m; vi++)
            if (reset_one(c, lanes, m, vi, a, b, cold, cont, got))
                goto out;
        for (int i = 0; i < m; i++) /* abandoned requests: decoded, logits never read */
            if (cf_decode_logits(c, lanes[i], a[i * (RA + 4)], NULL))
                goto out;
        if (golden_backend_reset(c->b, -1, &c->err)) {
            cf_error(c, NULL);
            goto out;
        }
        for (int i = 0; i < m; i++)
            if (cf_expect_length(c, lanes[i], 0, "reset all", "reset(-1)"))
                goto out;
        for (int i = 0; i < m; i++) {
            snprintf(kase, sizeof kase, "reset all, lane %d", lanes[i]);
            if (run_seq(c, lanes[i], b + i * (RP + RD), RP, RD, got) ||
                cf_expect_length(c, lanes[i], RP + RD, kase, "a sequence after reset(-1)"))
                goto out;
            for (int s = 0; s <= RD; s++) {
                snprintf(what, sizeof what, "position %d (taps %s) vs a cold start", RP - 1 + s,
                         on ? "on" : "off");
                cf_cmp_logits(c, kase, what, got + s * V, cold + ((size_t)i * (RD + 1) + (size_t)s) * (size_t)V);
            }
        }
    }
    for (int i = 0; i < m; i++) {
        cf_cover(c, "lanes", lanes[i]);
        cf_cover(c, "reset_one", lanes[i]);
    }
    rc = 0;
out:
    free(cold), free(cont), free(got);
    return rc;
}

/* A refused call: it must fail with context_limit_exceeded and leave the lane as it was (the
 * same length, the same logits). */
static int refused(cf_ctx *c, int lane, const char *kase, int rc_call, int64_t len_before,
                   const float *logits_before, float *got)
{
    c->chk->comparisons++;
    if (rc_call == 0)
        cf_find(c, kase, "accepted (the limit is %lld)", (long long)c->info->context_limit);
    else if (!replay_refused_for_limit(c->b, &c->err))
        cf_find(c, kase, "refused, but not with context_limit_exceeded: %s", c->err.what);
    int64_t len;
    if (cf_length(c, lane, &len))
        return 1;
    c->chk->comparisons++;
    if (len != len_before) {
        cf_find(c, kase, "the lane holds %lld positions after the refusal, not %lld", (long long)len,
                (long long)len_before);
        return 0;
    }
    if (cf_logits(c, lane, got))
        return 1;
    cf_cmp_logits(c, kase, "the lane's logits after the refusal vs before it", got, logits_before);
    return 0;
}

/* The limit on one lane, taps as set: a prefill of exactly the limit accepted, a decode into
 * the full lane and a prefill of limit+1 refused leaving the lane as it was, a decode into the
 * last position accepted and equal to the prefill of the limit, a prefill crossing the limit
 * from 8 refused and the lane decoding on as before. r8, r9: prefills of 8 and 9 tokens. */
static int limit_on(cf_ctx *c, int lane, const int32_t *t, const float *r8, const float *r9,
                    float *full, float *got)
{
    int64_t lim = c->info->context_limit;
    char kase[80];
    const char *tp = c->taps_on ? "on" : "off";
    snprintf(kase, sizeof kase, "lane %d: prefill of exactly the limit (taps %s)", lane, tp);
    c->chk->comparisons++;
    golden_error_clear(&c->err);
    if (golden_backend_prefill(c->b, lane, 0, t, (size_t)lim, &c->err)) {
        if (!replay_refused_for_limit(c->b, &c->err))
            return cf_error(c, NULL); /* not a refusal: the call failed */
        cf_find(c, kase, "%lld tokens from 0 (the limit) refused: %s", (long long)lim, c->err.what);
        return 0;
    }
    if (cf_logits(c, lane, full) || cf_expect_length(c, lane, lim, kase, "a prefill of the limit"))
        return 1;
    snprintf(kase, sizeof kase, "lane %d: decode into a full lane (taps %s)", lane, tp);
    golden_error_clear(&c->err);
    if (refused(c, lane, kase, golden_backend_decode(c->b, lane, t[lim], &c->err), lim, full, got))
        return 1;
    snprintf(kase, sizeof kase, "lane %d: prefill over the limit (taps %s)", lane, tp);
    golden_error_clear(&c->err);
    if (refused(c, lane, kase, golden_backend_prefill(c->b, lane, 0, t, (size_t)(lim + 1), &c->err),
                lim, full, got))
        return 1;
    snprintf(kase, sizeof kase, "lane %d: decode into the last position (taps %s)", lane, tp);
    c->chk->comparisons++;
    if (cf_prefill_logits(c, lane, 0, t, (size_t)(lim - 1), NULL))
        return 1;
    golden_error_clear(&c->err);
    if (golden_backend_decode(c->b, lane, t[lim - 1], &c->err)) {
        if (!replay_refused_for_limit(c->b, &c->err))
            return cf_error(c, NULL);
        cf_find(c, kase, "a decode at %lld (ending at the limit) refused: %s", (long long)(lim - 1),
                c->err.what);
    } else {
        if (cf_logits(c, lane, got))
            return 1;
        cf_cmp_logits(c, kase, "decode at the last position vs a prefill of the limit", got, full);
    }
    snprintf(kase, sizeof kase, "lane %d: prefill crossing the limit (taps %s)", lane, tp);
    if (cf_prefill_logits(c, lane, 0, t, 8, NULL))
        return 1;
    golden_error_clear(&c->err);
    if (refused(c, lane, kase, golden_backend_prefill(c->b, lane, 8, t, (size_t)(lim + 1 - 8), &c->err),
                8, r8, got))
        return 1;
    int64_t len8;
    if (cf_length(c, lane, &len8))
        return 1;
    if (len8 == 8) {
        if (cf_decode_logits(c, lane, t[8], got))
            return 1;
        cf_cmp_logits(c, kase, "the lane afterwards (decode at 8)", got, r9);
    }
    return 0;
}

/* Section 5.1's limit: a request ending exactly at the limit is accepted (prefill, and a decode
 * into the last position); one position past it is refused (prefill from 0, a prefill crossing
 * it from 8, a decode into a full lane) and the lane stays as it was. Lane 0 taps on, then off;
 * then every other lane of the subset (cf_lanes), taps off and on in turn. */
int cf_check_rejection(cf_ctx *c)
{
    int64_t lim = c->info->context_limit, V = c->info->vocab_size;
    if (lim < 10)
        return cf_error(c, "the context holds fewer than 10 positions");
    int32_t *t = malloc((size_t)(lim + 1) * 4);
    float *full = malloc((size_t)V * 4), *r8 = malloc((size_t)V * 4), *r9 = malloc((size_t)V * 4),
          *got = malloc((size_t)V * 4);
    int rc = 1, lanes[MAXL], m = cf_lanes(c, lanes);
    if (!t || !full || !r8 || !r9 || !got) {
        cf_error(c, "out of memory");
        goto out;
    }
    c->tap_discard = true;
    c->cross_open = true;
    cf_tokens(c, t, (size_t)(lim + 1));
    if (cf_prefill_logits(c, 0, 0, t, 9, r9) || cf_prefill_logits(c, 0, 0, t, 8, r8))
        goto out;
    for (int on = 1; on >= 0; on--)
        if (cf_set_taps(c, on) || limit_on(c, 0, t, r8, r9, full, got))
            goto out;
    cf_cover(c, "lanes", 0);
    for (int i = 0; i < m; i++) {
        if (lanes[i] == 0)
            continue;
        if (cf_set_taps(c, i % 2 == 0) || limit_on(c, lanes[i], t, r8, r9, full, got))
            goto out;
        cf_cover(c, "lanes", lanes[i]);
    }
    cf_cover(c, "limit", lim);
    rc = 0;
out:
    free(t), free(full), free(r8), free(r9), free(got);
    return rc;
}

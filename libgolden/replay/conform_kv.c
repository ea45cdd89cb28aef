/* npu-replay conform's position checks (handbook sections 5.1, 9 and 10): causal-mask and
 * kv-positions over section 5.1's boundary set scaled to the context, plus a seeded random sample
 * of further positions within --budget, on the prefill and the decode path, taps on and off. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/conform_priv.h"
#include "replay/host_priv.h"

#define MAX_SET 256

/* The tap half of causal-mask: every token from j on changed; every tap row before j must stay
 * bitwise, some output at j must change. base holds the unperturbed run's taps. */
static int mask_taps_at(cf_ctx *c, const int32_t *t, int32_t *u, int64_t N, int64_t j,
                        const cf_tap *base, size_t nb, const float *l0, float *l1)
{
    int64_t V = c->info->vocab_size;
    char kase[64];
    snprintf(kase, sizeof kase, "taps j=%lld", (long long)j);
    memcpy(u, t, (size_t)N * 4);
    for (int64_t i = j; i < N; i++) /* the whole future changes: a leak from anywhere shows */
        u[i] = (int32_t)((t[i] + 1) % V);
    cf_taps_clear(c);
    if (cf_prefill_logits(c, 0, 0, u, (size_t)N, l1))
        return 1;
    bool changed = cf_cmp_taps(c, base, nb, j, kase);
    if (j == N - 1 && memcmp(l0, l1, (size_t)V * 4) != 0)
        changed = true;
    if (!changed)
        cf_find(c, kase, "tokens changed from position %lld on changed no output at that position",
                (long long)j);
    cf_cover(c, "tap_positions", j);
    return 0;
}

/* The logits half of causal-mask: with the cache beyond p holding the lane's own continuation t
 * (pass 0) or other tokens v (pass 1), a prefill of p+1 tokens and a prefill of p then a decode
 * at p must give the same logits: nothing may read a cache slot past its position. ps ascending;
 * res holds 2 rows a position from pass 0. */
static int mask_stale(cf_ctx *c, const int32_t *t, const int32_t *v, int64_t N, const int64_t *ps,
                      size_t np, float *res, float *got)
{
    int64_t V = c->info->vocab_size;
    for (int pass = 0; pass < 2; pass++) {
        if (cf_prefill_logits(c, 0, 0, pass ? v : t, (size_t)N, NULL))
            return 1;
        for (size_t i = 0; i < np; i++) {
            int64_t p = ps[i];
            float *pr = pass ? got : res + 2 * i * (size_t)V, *dr = pass ? got + V : pr + V;
            if (cf_prefill_logits(c, 0, 0, t, (size_t)p + 1, pr) ||
                cf_prefill_logits(c, 0, 0, t, (size_t)p, NULL) || cf_decode_logits(c, 0, t[p], dr))
                return 1;
            if (!pass)
                continue;
            char kase[64], what[128];
            snprintf(kase, sizeof kase, "stale p=%lld taps %s", (long long)p, c->taps_on ? "on" : "off");
            snprintf(what, sizeof what, "prefill ending at %lld, the cache past it holding other tokens",
                     (long long)p);
            cf_cmp_logits(c, kase, what, pr, res + 2 * i * (size_t)V);
            snprintf(what, sizeof what, "decode at %lld, the cache past it holding other tokens",
                     (long long)p);
            cf_cmp_logits(c, kase, what, dr, res + (2 * i + 1) * (size_t)V);
        }
    }
    for (size_t i = 0; i < np; i++)
        cf_cover(c, c->taps_on ? "stale_positions_taps_on" : "stale_positions_taps_off", ps[i]);
    return 0;
}

/* Section 9 over the boundary set: the tap comparison (taps on) at every j and j+1 of the set,
 * the stale-cache comparison (prefill and decode, taps off and on) at every p; then random
 * positions, both halves, while the budget lasts. */
int cf_check_causal_mask(cf_ctx *c)
{
    int64_t N = c->limit, V = c->info->vocab_size;
    if (N < 3)
        return cf_error(c, "the context holds fewer than 3 positions");
    int64_t set[MAX_SET], js[2 * MAX_SET];
    size_t ns = cf_boundaries(N, set, MAX_SET), nj = 0;
    for (size_t i = 0; i < ns; i++) /* j and j+1: a boundary row against its next position */
        for (int d = 0; d <= 1; d++)
            if (set[i] + d < N && (nj == 0 || js[nj - 1] < set[i] + d))
                js[nj++] = set[i] + d;
    int32_t *t = malloc((size_t)N * 4), *u = malloc((size_t)N * 4), *v = malloc((size_t)N * 4);
    float *l0 = malloc((size_t)V * 4), *l1 = malloc((size_t)V * 4 * 2),
          *res = malloc((size_t)V * 4 * 2 * ns);
    cf_tap *base = NULL;
    size_t nb = 0, nr = 0;
    int rc = 1;
    if (!t || !u || !v || !l0 || !l1 || !res) {
        cf_error(c, "out of memory");
        goto out;
    }
    cf_tokens(c, t, (size_t)N);
    cf_tokens(c, v, (size_t)N);
    for (int on = 0; on <= 1; on++) /* taps off first: the production path */
        if (cf_set_taps(c, on) || (c->tap_discard = true, 0) ||
            mask_stale(c, t, v, N, set, ns, res, l1))
            goto out;
    c->tap_discard = false;
    cf_taps_clear(c);
    if (cf_prefill_logits(c, 0, 0, t, (size_t)N, l0))
        goto out;
    if (c->n_taps == 0) {
        cf_error(c, "the backend gives no per-layer taps; causal-mask needs them");
        goto out;
    }
    base = c->taps, nb = c->n_taps; /* the base run's taps move out of the capture */
    c->taps = NULL, c->n_taps = c->cap_taps = 0;
    for (size_t k = 0; k < nj; k++)
        if (mask_taps_at(c, t, u, N, js[k], base, nb, l0, l1))
            goto out;
    for (cf_budget_start(c); cf_budget_left(c, nr); nr++) {
        int64_t p = cf_random_position(c, 1, N, js, nj);
        if (p < 0 || mask_taps_at(c, t, u, N, p, base, nb, l0, l1))
            break;
        c->tap_discard = true;
        int f = cf_set_taps(c, nr % 2 == 0) || mask_stale(c, t, v, N, &p, 1, res, l1) ||
                cf_set_taps(c, true);
        c->tap_discard = false;
        if (f)
            goto out;
        cf_cover(c, "random_positions", p);
    }
    rc = c->chk->status == GOLDEN_CONFORM_ERROR;
out:
    for (size_t i = 0; i < nb; i++)
        free(base[i].data);
    free(base);
    free(t), free(u), free(v), free(l0), free(l1), free(res);
    return rc;
}

/* w = 0: decodes into an empty lane (lane 0 taps on, lane 1 taps off: both still unused) against
 * one-shot prefills of 1 and 2 tokens. */
static int kv_empty(cf_ctx *c, const int32_t *t, float *ref, float *got)
{
    int64_t V = c->info->vocab_size;
    for (int on = 1; on >= 0; on--) {
        int lane = on ? 0 : 1;
        if (!on && c->info->num_lanes < 2)
            break; /* one lane: the empty lane is spent */
        if (cf_set_taps(c, on) || cf_decode_logits(c, lane, t[0], got) ||
            cf_decode_logits(c, lane, t[1], got + V))
            return 1;
        if (on && (cf_prefill_logits(c, 0, 0, t, 1, ref) || cf_prefill_logits(c, 0, 0, t, 2, ref + V)))
            return 1;
        for (int s = 0; s < 2; s++) {
            char what[128];
            snprintf(what, sizeof what, "decode at %d into an empty lane (taps %s) vs a prefill of "
                     "%d tokens", s, on ? "on" : "off", s + 1);
            cf_cmp_logits(c, "write at 0", what, got + s * V, ref + s * V);
        }
    }
    return 0;
}

/* One write position w > 0: the decode path (prefill w, decode w and w+1) and the prefill path
 * (prefill w, then a prefill of the next one or two at w), taps on and off, against one-shot
 * prefills of w+1 and w+2 tokens (ref, taken with taps on). */
static int kv_at(cf_ctx *c, const int32_t *t, int64_t w, const float *ref, float *got)
{
    int64_t L = c->limit, V = c->info->vocab_size, steps = w + 2 <= L ? 2 : 1;
    char kase[64], what[128];
    snprintf(kase, sizeof kase, "write at %lld", (long long)w);
    for (int on = 1; on >= 0; on--) {
        const char *tp = on ? "on" : "off";
        if (cf_set_taps(c, on) || cf_prefill_logits(c, 0, 0, t, (size_t)w, NULL))
            return 1;
        for (int64_t s = 0; s < steps; s++) {
            if (cf_decode_logits(c, 0, t[w + s], got))
                return 1;
            snprintf(what, sizeof what, "decode at %lld (taps %s) vs a prefill of %lld tokens",
                     (long long)(w + s), tp, (long long)(w + s + 1));
            cf_cmp_logits(c, kase, what, got, ref + s * V);
        }
        if (cf_prefill_logits(c, 0, 0, t, (size_t)w, NULL) ||
            cf_prefill_logits(c, 0, w, t + w, (size_t)steps, got))
            return 1;
        snprintf(what, sizeof what, "prefill of %lld at %lld (taps %s) vs a prefill of %lld tokens",
                 (long long)steps, (long long)w, tp, (long long)(w + steps));
        cf_cmp_logits(c, kase, what, got, ref + (steps - 1) * V);
    }
    return 0;
}

/* Section 10's positions: 0 and the boundary set (its last is the context's last position),
 * then random positions while the budget lasts. */
int cf_check_kv_positions(cf_ctx *c)
{
    int64_t L = c->limit, V = c->info->vocab_size;
    if (L < 20)
        return cf_error(c, "the context holds fewer than 20 positions");
    int64_t ws[MAX_SET + 1];
    ws[0] = 0;
    size_t nw = 1 + cf_boundaries(L, ws + 1, MAX_SET), nr = 0;
    int32_t *t = malloc((size_t)L * 4);
    float *got = malloc((size_t)V * 2 * 4), *ref = malloc((size_t)V * 2 * 4), *tmp = got;
    int rc = 1;
    if (!t || !got || !ref || !tmp) {
        cf_error(c, "out of memory");
        goto out;
    }
    c->tap_discard = true;
    cf_tokens(c, t, (size_t)L);
    for (size_t k = 0; k < nw + CF_MAX_RANDOM; k++) {
        int64_t w;
        if (k < nw) {
            w = ws[k];
        } else {
            if (k == nw)
                cf_budget_start(c);
            if (!cf_budget_left(c, nr) || (w = cf_random_position(c, 1, L - 1, ws, nw)) < 0)
                break;
            nr++;
            cf_cover(c, "random_positions", w);
        }
        int64_t steps = w + 2 <= L ? 2 : 1;
        /* the references: one-shot prefills of w+1 and w+2 tokens, taps on (w = 0: kv_at
         * takes them after its decode into the empty lane) */
        if (w > 0 && cf_set_taps(c, true))
            goto out;
        for (int64_t s = 0; w > 0 && s < steps; s++)
            if (cf_prefill_logits(c, 0, 0, t, (size_t)(w + s + 1), ref + s * V))
                goto out;
        if (w == 0 ? kv_empty(c, t, ref, got) : kv_at(c, t, w, ref, got))
            goto out;
        cf_cover(c, "positions", w);
    }
    rc = 0;
out:
    free(t), free(got), free(ref);
    return rc;
}

/* The pre-issue-28 attention and KV-cache checks, kept verbatim as `fixed_points` (a few fixed
 * positions, lanes 0 and 1, taps on, prefill only) so the tests can show which planted faults
 * they missed and the new checks (conform_kv.c, conform_lanes.c) catch. Not the default. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/conform_priv.h"
#include "replay/host_priv.h"

/* Section 9: change the token at j; nothing before j may change, something at j must. */
int cf_fixed_causal_mask(cf_ctx *c)
{
    int64_t N = c->limit < 160 ? c->limit : 160, V = c->info->vocab_size;
    if (N < 3)
        return cf_error(c, "the context holds fewer than 3 positions");
    int32_t *t = malloc((size_t)N * 4), *u = malloc((size_t)N * 4);
    float *l0 = malloc((size_t)V * 4), *l1 = malloc((size_t)V * 4);
    cf_tap *base = NULL;
    size_t nb = 0;
    int rc = 1;
    if (!t || !u || !l0 || !l1) {
        cf_error(c, "out of memory");
        goto out;
    }
    cf_tokens(c, t, (size_t)N);
    if (cf_prefill_logits(c, 0, 0, t, (size_t)N, l0))
        goto out;
    if (c->n_taps == 0) {
        cf_error(c, "the backend gives no per-layer taps; causal-mask needs them");
        goto out;
    }
    base = c->taps, nb = c->n_taps; /* the base run's taps move out of the capture */
    c->taps = NULL, c->n_taps = c->cap_taps = 0;
    const int64_t js[] = {1, 15, 16, 17, 127, 128, 129, N - 1};
    for (size_t k = 0; k < sizeof js / sizeof *js; k++) {
        int64_t j = js[k];
        if (j >= N || (k < 7 && j == N - 1)) /* the last comes once, as the last */
            continue;
        char kase[64];
        snprintf(kase, sizeof kase, "j=%lld", (long long)j);
        memcpy(u, t, (size_t)N * 4);
        u[j] = (int32_t)((t[j] + 1) % V);
        cf_taps_clear(c);
        if (cf_prefill_logits(c, 0, 0, u, (size_t)N, l1))
            goto out;
        bool changed = cf_cmp_taps(c, base, nb, j, kase);
        if (j == N - 1 && memcmp(l0, l1, (size_t)V * 4) != 0)
            changed = true;
        if (!changed)
            cf_find(c, kase, "token %d -> %d at position %lld changed no output at that position",
                    t[j], u[j], (long long)j);
    }
    rc = 0;
out:
    for (size_t i = 0; i < nb; i++)
        free(base[i].data);
    free(base);
    free(t), free(u), free(l0), free(l1);
    return rc;
}

/* Section 10: a KV write by decode at position w (then one more) equals one longer prefill. */
int cf_fixed_kv_positions(cf_ctx *c)
{
    int64_t L = c->limit, V = c->info->vocab_size;
    if (L < 20)
        return cf_error(c, "the context holds fewer than 20 positions");
    const int64_t ws[] = {0, 15, 16, 17, L - 1};
    int32_t *t = malloc((size_t)L * 4);
    float *got = malloc((size_t)V * 4), *ref = malloc((size_t)V * 2 * 4);
    int rc = 1;
    if (!t || !got || !ref) {
        cf_error(c, "out of memory");
        goto out;
    }
    cf_tokens(c, t, (size_t)L);
    for (size_t k = 0; k < sizeof ws / sizeof *ws; k++) {
        int64_t w = ws[k], steps = w + 2 <= L ? 2 : 1;
        char kase[64];
        snprintf(kase, sizeof kase, "write at %lld", (long long)w);
        /* w = 0 decodes into the empty lane of the fresh backend, before anything else */
        if (w == 0) {
            for (int64_t s = 0; s < steps; s++) {
                if (cf_decode_logits(c, 0, t[s], ref + s * V))
                    goto out;
            }
        } else {
            if (cf_prefill_logits(c, 0, 0, t, (size_t)w, NULL))
                goto out;
            for (int64_t s = 0; s < steps; s++)
                if (cf_decode_logits(c, 0, t[w + s], ref + s * V))
                    goto out;
        }
        for (int64_t s = 0; s < steps; s++) { /* the decoded logits sit in ref; prefill now */
            char what[96];
            if (cf_prefill_logits(c, 0, 0, t, (size_t)(w + s + 1), got))
                goto out;
            snprintf(what, sizeof what, "decode at position %lld vs a prefill of %lld tokens",
                     (long long)(w + s), (long long)(w + s + 1));
            cf_cmp_logits(c, kase, what, ref + s * V, got);
        }
    }
    rc = 0;
out:
    free(t), free(got), free(ref);
    return rc;
}

/* Prefill P tokens into lane then decode D, logits of every step into out[(D+1) * V]. */
static int run_seq(cf_ctx *c, int lane, const int32_t *t, int P, int D, float *out)
{
    int64_t V = c->info->vocab_size;
    if (cf_prefill_logits(c, lane, 0, t, (size_t)P, out))
        return 1;
    for (int s = 0; s < D; s++)
        if (cf_decode_logits(c, lane, t[P + s], out + (s + 1) * V))
            return 1;
    return 0;
}

/* Two sequences decoded alternately in lanes 0 and 1 equal each decoded alone. */
int cf_fixed_kv_lanes(cf_ctx *c)
{
    enum { P = 8, D = 16 };
    int64_t V = c->info->vocab_size;
    if (c->info->num_lanes < 2)
        return cf_error(c, "the backend has one lane; kv-lanes needs two");
    if (c->limit < P + D)
        return cf_error(c, "the context is too short for kv-lanes");
    int32_t a[P + D], b[P + D];
    cf_tokens(c, a, P + D);
    cf_tokens(c, b, P + D);
    float *alone = malloc((size_t)(2 * (D + 1) * V) * 4), *got = malloc((size_t)V * 4);
    int rc = 1;
    if (!alone || !got) {
        cf_error(c, "out of memory");
        goto out;
    }
    if (run_seq(c, 0, a, P, D, alone) || run_seq(c, 1, b, P, D, alone + (D + 1) * V))
        goto out;
    if (cf_prefill_logits(c, 0, 0, a, P, got))
        goto out;
    cf_cmp_logits(c, "lane 0", "prefill", got, alone);
    if (cf_prefill_logits(c, 1, 0, b, P, got))
        goto out;
    cf_cmp_logits(c, "lane 1", "prefill", got, alone + (D + 1) * V);
    for (int s = 0; s < D; s++)
        for (int lane = 0; lane < 2; lane++) {
            char what[96];
            if (cf_decode_logits(c, lane, (lane ? b : a)[P + s], got))
                goto out;
            snprintf(what, sizeof what, "alternating decode at position %d vs the lane alone",
                     P + s);
            cf_cmp_logits(c, lane ? "lane 1" : "lane 0", what, got,
                       alone + ((size_t)lane * (D + 1) + (size_t)s + 1) * (size_t)V);
        }
    rc = 0;
out:
    free(alone), free(got);
    return rc;
}

/* Remove the tail back to L and write other tokens: equal to a fresh run of the new sequence. */
int cf_fixed_kv_tail(cf_ctx *c)
{
    enum { N = 40, L = 16, D = 8 };
    int64_t V = c->info->vocab_size;
    if (c->limit < N)
        return cf_error(c, "the context is too short for kv-tail");
    int32_t a[N], nw[L + D];
    cf_tokens(c, a, N);
    memcpy(nw, a, L * 4);
    cf_tokens(c, nw + L, D);
    float *ref = malloc((size_t)((D + 1) * V) * 4), *got = malloc((size_t)V * 4);
    int rc = 1;
    if (!ref || !got) {
        cf_error(c, "out of memory");
        goto out;
    }
    /* the fresh run: L tokens, then the new ones decoded */
    if (cf_prefill_logits(c, 0, 0, nw, L, ref))
        goto out;
    for (int s = 0; s < D; s++)
        if (cf_decode_logits(c, 0, nw[L + s], ref + (s + 1) * V))
            goto out;
    /* truncate, then decode */
    if (cf_prefill_logits(c, 0, 0, a, N, NULL))
        goto out;
    if (golden_backend_truncate(c->b, 0, L, &c->err)) {
        cf_error(c, NULL);
        goto out;
    }
    int64_t len;
    if (cf_length(c, 0, &len))
        goto out;
    c->chk->comparisons++;
    if (len != L)
        cf_find(c, "truncate+decode", "lane length %lld after truncating %d positions to %d",
                (long long)len, N, L);
    for (int s = 0; s < D; s++) {
        char what[96];
        if (cf_decode_logits(c, 0, nw[L + s], got))
            goto out;
        snprintf(what, sizeof what, "decode at position %d after the tail was removed", L + s);
        cf_cmp_logits(c, "truncate+decode", what, got, ref + (s + 1) * V);
    }
    /* prefill over the old tail at L, against the same two prefills on a clean lane */
    if (cf_prefill_logits(c, 0, 0, nw, L, NULL) || cf_prefill_logits(c, 0, L, nw + L, D, ref))
        goto out;
    if (cf_prefill_logits(c, 0, 0, a, N, NULL) ||
        cf_prefill_logits(c, 0, L, nw + L, D, got))
        goto out;
    cf_cmp_logits(c, "prefill at L", "prefill of positions 16.. over the old tail", got, ref);
    rc = 0;
out:
    free(ref), free(got);
    return rc;
}

/* After a reset (and after a request abandoned as a timeout leaves it) a new generation
 * equals a cold start. */
int cf_fixed_kv_reset(cf_ctx *c)
{
    enum { NA = 48, P = 12, D = 6 };
    int64_t V = c->info->vocab_size;
    if (c->limit < NA + 4)
        return cf_error(c, "the context is too short for kv-reset");
    int32_t a[NA + 4], b[P + D];
    cf_tokens(c, a, NA + 4);
    cf_tokens(c, b, P + D);
    float *cold = malloc((size_t)((D + 1) * V) * 4), *got = malloc((size_t)((D + 1) * V) * 4);
    int rc = 1;
    if (!cold || !got) {
        cf_error(c, "out of memory");
        goto out;
    }
    if (run_seq(c, 0, b, P, D, cold))
        goto out;
    for (int scen = 0; scen < 2; scen++) {
        const char *kase = scen ? "after an abandoned request, reset all" : "after reset";
        if (run_seq(c, 0, a, NA, scen ? 0 : 4, got))
            goto out;
        for (int s = 0; scen && s < 2; s++) /* decoded, logits never read */
            if (cf_decode_logits(c, 0, a[NA + s], NULL))
                goto out;
        if (golden_backend_reset(c->b, scen ? -1 : 0, &c->err)) {
            cf_error(c, NULL);
            goto out;
        }
        if (run_seq(c, 0, b, P, D, got))
            goto out;
        for (int s = 0; s <= D; s++) {
            char what[96];
            snprintf(what, sizeof what, "position %d vs a cold start", P - 1 + s);
            cf_cmp_logits(c, kase, what, got + s * V, cold + s * V);
        }
    }
    rc = 0;
out:
    free(cold), free(got);
    return rc;
}

/* An over-length request is refused with context_limit_exceeded; the lane works afterwards. */
int cf_fixed_rejection(cf_ctx *c)
{
    int64_t lim = c->info->context_limit, V = c->info->vocab_size;
    int32_t *t = malloc((size_t)(lim + 1) * 4);
    float *r8 = malloc((size_t)V * 4), *r9 = malloc((size_t)V * 4), *got = malloc((size_t)V * 4);
    int rc = 1;
    if (!t || !r8 || !r9 || !got) {
        cf_error(c, "out of memory");
        goto out;
    }
    if (lim < 10) {
        cf_error(c, "the context holds fewer than 10 positions");
        goto out;
    }
    cf_tokens(c, t, (size_t)(lim + 1));
    if (cf_prefill_logits(c, 0, 0, t, 9, r9) || cf_prefill_logits(c, 0, 0, t, 8, r8))
        goto out;
    for (int k = 0; k < 2; k++) {
        const char *kase = k ? "prefill crossing the limit" : "prefill over the limit";
        int64_t pos = k ? 8 : 0;
        c->chk->comparisons++;
        golden_error_clear(&c->err);
        if (golden_backend_prefill(c->b, 0, pos, t, (size_t)(lim + 1 - pos), &c->err) == 0)
            cf_find(c, kase, "%lld tokens at position %lld (limit %lld) were accepted",
                    (long long)(lim + 1 - pos), (long long)pos, (long long)lim);
        else if (!replay_refused_for_limit(c->b, &c->err))
            cf_find(c, kase, "refused, but not with context_limit_exceeded: %s", c->err.what);
        if (k == 0) {
            if (cf_prefill_logits(c, 0, 0, t, 8, got))
                goto out;
            cf_cmp_logits(c, kase, "the lane afterwards (prefill of 8)", got, r8);
            continue;
        }
        int64_t len;
        if (cf_length(c, 0, &len))
            goto out;
        c->chk->comparisons++;
        if (len != 8)
            cf_find(c, kase, "the lane holds %lld positions after the refusal, not 8", (long long)len);
        else if (cf_decode_logits(c, 0, t[8], got))
            goto out;
        else
            cf_cmp_logits(c, kase, "the lane afterwards (decode at 8)", got, r9);
    }
    rc = 0;
out:
    free(t), free(r8), free(r9), free(got);
    return rc;
}

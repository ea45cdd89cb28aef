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

/* One write position w > 0: the decode path (prefill w, decode w and w+1), then a one-token
 * prefill at w below the lane's length (the tail is dropped), and the prefill path (prefill w,
 * then a prefill of the next one or two at w), taps on and off, against one-shot prefills of w+1
 * and w+2 tokens (ref, taken with taps on); length() after every call. */
static int kv_at(cf_ctx *c, const int32_t *t, int64_t w, const float *ref, float *got)
{
    int64_t L = c->limit, V = c->info->vocab_size, steps = w + 2 <= L ? 2 : 1;
    char kase[64], what[128];
    snprintf(kase, sizeof kase, "write at %lld", (long long)w);
    for (int on = 1; on >= 0; on--) {
        const char *tp = on ? "on" : "off";
        if (cf_set_taps(c, on) || cf_prefill_logits(c, 0, 0, t, (size_t)w, NULL) ||
            cf_expect_length(c, 0, w, kase, "a prefill from 0"))
            return 1;
        for (int64_t s = 0; s < steps; s++) {
            if (cf_decode_logits(c, 0, t[w + s], got) ||
                cf_expect_length(c, 0, w + s + 1, kase, "a decode"))
                return 1;
            snprintf(what, sizeof what, "decode at %lld (taps %s) vs a prefill of %lld tokens",
                     (long long)(w + s), tp, (long long)(w + s + 1));
            cf_cmp_logits(c, kase, what, got, ref + s * V);
        }
        if (cf_prefill_logits(c, 0, w, t + w, 1, got) ||
            cf_expect_length(c, 0, w + 1, kase, "a one-token prefill below the length"))
            return 1;
        snprintf(what, sizeof what, "prefill of 1 at %lld below the length %lld (taps %s) vs a "
                 "prefill of %lld tokens", (long long)w, (long long)(w + steps), tp, (long long)(w + 1));
        cf_cmp_logits(c, kase, what, got, ref);
        if (cf_prefill_logits(c, 0, 0, t, (size_t)w, NULL) ||
            cf_prefill_logits(c, 0, w, t + w, (size_t)steps, got) ||
            cf_expect_length(c, 0, w + steps, kase, "a continued prefill"))
            return 1;
        snprintf(what, sizeof what, "prefill of %lld at %lld (taps %s) vs a prefill of %lld tokens",
                 (long long)steps, (long long)w, tp, (long long)(w + steps));
        cf_cmp_logits(c, kase, what, got, ref + (steps - 1) * V);
    }
    return 0;
}

/* Chunked prefill: the sequence fed in chunks of many sizes (a seeded 1-9, then the next size of
 * the boundary set, in turn; the last chunk ends at the context's last position), each chunk
 * continuing at the lane's length, against one-shot prefills ending at the same position (taken
 * taps off); taps off, then on; length() after every chunk. */
static int kv_chunked(cf_ctx *c, const int32_t *t, const int64_t *set, size_t ns)
{
    int64_t L = c->limit, V = c->info->vocab_size, ends[2 * MAX_SET + 2];
    size_t ne = 0;
    for (int64_t pos = 0, i = 0; pos < L && ne < 2 * MAX_SET + 2; i++) {
        int32_t r;
        cf_tokens(c, &r, 1);
        int64_t n = i % 2 == 0 ? 1 + r % 9 : set[(size_t)(i / 2) % ns];
        if (pos + n > L || ne == 2 * MAX_SET + 1)
            n = L - pos;
        ends[ne++] = pos += n;
    }
    float *ref = malloc((size_t)(ne * (size_t)V) * 4), *got = malloc((size_t)V * 4);
    int rc = 1;
    if (!ref || !got) {
        cf_error(c, "out of memory");
        goto out;
    }
    if (cf_set_taps(c, false)) /* references on the production path: the taps-on run is held to them */
        goto out;
    for (size_t k = 0; k < ne; k++)
        if (cf_prefill_logits(c, 0, 0, t, (size_t)ends[k], ref + k * (size_t)V))
            goto out;
    for (int on = 0; on <= 1; on++) {
        if (cf_set_taps(c, on))
            goto out;
        for (size_t k = 0; k < ne; k++) {
            int64_t from = k ? ends[k - 1] : 0;
            char kase[64], what[128];
            snprintf(kase, sizeof kase, "chunk of %lld at %lld", (long long)(ends[k] - from),
                     (long long)from);
            if (cf_prefill_logits(c, 0, from, t + from, (size_t)(ends[k] - from), got) ||
                cf_expect_length(c, 0, ends[k], kase, "a chunk of a prefill"))
                goto out;
            snprintf(what, sizeof what, "chunked prefill ending at %lld (taps %s) vs one prefill",
                     (long long)ends[k] - 1, on ? "on" : "off");
            cf_cmp_logits(c, kase, what, got, ref + k * (size_t)V);
            if (on)
                cf_cover(c, "chunk_sizes", ends[k] - from);
        }
    }
    rc = 0;
out:
    free(ref), free(got);
    return rc;
}

/* Whether step s (0-based) of a run of D is compared: every step (all), else the steps whose
 * count s+1 is a power of two from 16 or a neighbour of one, every 32nd, and the last. */
static bool run_step_checked(int64_t s, int64_t D, bool all)
{
    int64_t k = s + 1;
    if (all || k == D || k % 32 == 0)
        return true;
    for (int64_t P = 16; P <= D + 1; P *= 2)
        if (k >= P - 1 && k <= P + 1)
            return true;
    return false;
}

/* A decode run: prefill w, then D decode steps in a row, the steps run_step_checked picks each
 * against a one-shot prefill of the same length (taken first, taps off); taps off, then on when
 * both. */
static int kv_decode_run(cf_ctx *c, const int32_t *t, int64_t w, int64_t D, bool both, bool all)
{
    int64_t V = c->info->vocab_size;
    float *ref = malloc((size_t)(D * V) * 4), *got = malloc((size_t)V * 4);
    int rc = 1;
    if (!ref || !got) {
        cf_error(c, "out of memory");
        goto out;
    }
    if (cf_set_taps(c, false))
        goto out;
    for (int64_t s = 0; s < D; s++)
        if (run_step_checked(s, D, all) &&
            cf_prefill_logits(c, 0, 0, t, (size_t)(w + s + 1), ref + s * V))
            goto out;
    for (int on = 0; on <= (both ? 1 : 0); on++) {
        char kase[64], what[128];
        snprintf(kase, sizeof kase, "decode run of %lld from %lld", (long long)D, (long long)w);
        if (cf_set_taps(c, on) || cf_prefill_logits(c, 0, 0, t, (size_t)w, NULL))
            goto out;
        for (int64_t s = 0; s < D; s++) {
            if (cf_decode_logits(c, 0, t[w + s], got))
                goto out;
            if (!run_step_checked(s, D, all))
                continue;
            snprintf(what, sizeof what, "decode step %lld at %lld (taps %s) vs a prefill of %lld tokens",
                     (long long)s + 1, (long long)(w + s), on ? "on" : "off", (long long)(w + s + 1));
            cf_cmp_logits(c, kase, what, got, ref + s * V);
        }
        if (cf_expect_length(c, 0, w + D, kase, "a decode run"))
            goto out;
    }
    cf_cover(c, "decode_runs", D);
    rc = 0;
out:
    free(ref), free(got);
    return rc;
}

/* The decode runs: 40 steps in a row from 1 (every step compared) and from 129 (across 128,
 * compared at steps 15-17, 31-33 and the last), past a 16- and a 32-step write group, taps off
 * and on; then, when there is a budget, one seeded longer run (64 to 256 steps, no more than
 * 64 MiB of reference logits, taps off) compared at its steps 15-17, 31-33, 63-65, ..., every
 * 32nd and the last. The random positions come first; the long run is the budget's last item
 * and always runs when there is a budget. */
static int kv_decode_runs(cf_ctx *c, const int32_t *t, bool seeded)
{
    int64_t L = c->limit, V = c->info->vocab_size;
    enum { RUN = 40 };
    int64_t starts[2] = {1, 129};
    for (int i = 0; !seeded && i < 2; i++) {
        int64_t w = starts[i], D = L - 1 - w < RUN ? L - 1 - w : RUN;
        if (D >= 2 && kv_decode_run(c, t, w, D, true, i == 0))
            return 1;
    }
    if (!seeded)
        return 0;
    int32_t r;
    cf_tokens(c, &r, 1);
    int64_t cap = (64ll << 20) / (4 * V), D = 64 + r % 193;
    D = D < cap ? D : cap;
    if (c->deadline <= 0 || L < 8)
        return 0;
    int64_t w = cf_random_position(c, 1, L - D > 2 ? L - D : 2, NULL, 0);
    if (w < 1)
        return 0;
    if (D > L - 1 - w)
        D = L - 1 - w;
    return D >= 2 ? kv_decode_run(c, t, w, D, false, false) : 0;
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
            if (k == nw) {
                if (kv_chunked(c, t, ws + 1, nw - 1) || kv_decode_runs(c, t, false))
                    goto out;
                cf_budget_start(c);
            }
            /* at least one random position when there is a budget, whatever the machine's load */
            if (!(cf_budget_left(c, nr) || (nr == 0 && c->deadline > 0)) ||
                (w = cf_random_position(c, 1, L - 1, ws, nw)) < 0)
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
    if (kv_decode_runs(c, t, true))
        goto out;
    rc = 0;
out:
    free(t), free(got), free(ref);
    return rc;
}

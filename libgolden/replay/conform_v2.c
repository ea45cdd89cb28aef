/* npu-replay conform, part of kv-lanes: the version 2 output calls beside logits() (golden/
 * backend.h). logits_at() of positions kept by prefill_keep against logits() of a prefill
 * ending there (score reads logits_at), and topk() against the k largest of the full row, on
 * every lane of cf_lanes, after prefills and decode steps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/conform_priv.h"

enum { V2_N = 130, V2_MAXKEEP = 24, V2_DECODES = 2 };

typedef struct {
    float v;
    int32_t i;
} v2_pair;

/* Largest first, the lower index first among equal values (backend.h's topk order). */
static int by_value(const void *pa, const void *pb)
{
    const v2_pair *a = pa, *b = pb;
    if (a->v != b->v)
        return a->v > b->v ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

/* A row of the backend's dtype as f32 (exact for bf16). */
static void to_f32(const cf_ctx *c, const void *raw, float *out)
{
    int V = c->info->vocab_size;
    if (c->info->logits_dtype == GOLDEN_BK_BF16)
        golden_logits_bf16_to_f32(raw, 0, (size_t)V, out);
    else
        memcpy(out, raw, (size_t)V * 4);
}

/* topk(k) of the lane's last position against row (its logits() row): the same values
 * (bitwise: exact conversions) and indices as the k largest, lower index first among equal. */
static int topk_vs_row(cf_ctx *c, int lane, int k, const float *row, v2_pair *srt, float *vals,
                       int32_t *idx, const char *kase)
{
    int V = c->info->vocab_size;
    golden_error_clear(&c->err);
    if (golden_backend_topk(c->b, lane, k, vals, idx, &c->err)) {
        if (c->err.code != GOLDEN_ECORRUPT)
            return cf_error(c, NULL);
        cf_find(c, kase, "topk(%d) breaks its contract: %s", k, c->err.what);
        return 0;
    }
    for (int i = 0; i < V; i++)
        srt[i] = (v2_pair){row[i], i};
    qsort(srt, (size_t)V, sizeof *srt, by_value);
    c->chk->comparisons += (size_t)(2 * k);
    for (int j = 0; j < k; j++)
        if (idx[j] != srt[j].i || memcmp(&vals[j], &srt[j].v, 4) != 0) {
            cf_find(c, kase, "topk(%d) rank %d is id %d value %.9g, the full row's is id "
                    "%d value %.9g", k, j, idx[j], (double)vals[j], srt[j].i,
                    (double)srt[j].v);
            break;
        }
    return 0;
}

/* One lane: prefill_keep of N tokens keeping kp[], every kept row read, then a prefill of each
 * prefix ending at a kept position (logits() and topk() against its row), then decode steps
 * (logits_at of the last position and topk() against logits()). */
static int v2_lane(cf_ctx *c, int lane, const int32_t *t, int64_t N, const int64_t *kp, size_t nk,
                   float *kept, void *raw, float *row, v2_pair *srt, float *vals, int32_t *idx)
{
    int V = c->info->vocab_size, ks[4] = {1, 8, 40, V};
    char kase[64];
    golden_error_clear(&c->err);
    if (golden_backend_prefill_keep(c->b, lane, 0, t, (size_t)N, kp, nk, &c->err))
        return cf_error(c, NULL);
    for (size_t j = 0; j < nk; j++) {
        golden_error_clear(&c->err);
        if (golden_backend_logits_at(c->b, lane, kp[j], 0, V, raw, &c->err))
            return cf_error(c, NULL);
        to_f32(c, raw, kept + j * (size_t)V);
    }
    for (size_t j = 0; j < nk; j++) {
        snprintf(kase, sizeof kase, "logits_at position %lld, lane %d", (long long)kp[j], lane);
        if (cf_prefill_logits(c, lane, 0, t, (size_t)kp[j] + 1, row))
            return 1;
        cf_cmp_logits(c, kase, "logits_at of the kept position against logits() of a prefill "
                      "ending there", kept + j * (size_t)V, row);
        int k = ks[j % 4] < V ? ks[j % 4] : V;
        if (k > GOLDEN_BK_MAX_TOPK)
            k = GOLDEN_BK_MAX_TOPK;
        snprintf(kase, sizeof kase, "topk after a prefill of %lld, lane %d", (long long)kp[j] + 1, lane);
        if (topk_vs_row(c, lane, k, row, srt, vals, idx, kase))
            return 1;
    }
    for (int s = 0; s < V2_DECODES && kp[nk - 1] + 1 + s < c->limit; s++) {
        int64_t p = kp[nk - 1] + 1 + s;
        snprintf(kase, sizeof kase, "decode at %lld, lane %d", (long long)p, lane);
        if (cf_decode_logits(c, lane, t[p], row))
            return 1;
        golden_error_clear(&c->err);
        if (golden_backend_logits_at(c->b, lane, p, 0, V, raw, &c->err))
            return cf_error(c, NULL);
        to_f32(c, raw, kept);
        cf_cmp_logits(c, kase, "logits_at of the last position against logits()", kept, row);
        int k = V < 40 ? V : 40;
        if (topk_vs_row(c, lane, k, row, srt, vals, idx, kase))
            return 1;
    }
    return 0;
}

int cf_check_v2_outputs(cf_ctx *c)
{
    if (golden_backend_abi(c->b) < 2) {
        cf_cover_str(c, "logits_at_topk", "not checked: the backend is ABI version 1");
        return 0;
    }
    int V = c->info->vocab_size;
    int64_t N = c->limit < V2_N ? c->limit - V2_DECODES : V2_N, kp[V2_MAXKEEP];
    if (N < 2)
        return cf_error(c, "the context is too short for the logits_at and topk comparisons");
    kp[0] = 0; /* the first row, the boundary set below N (N-1 its last) */
    size_t nk = 1 + cf_boundaries(N, kp + 1, V2_MAXKEEP - 1);
    int lanes[8], m = cf_lanes(c, lanes);
    int32_t *t = malloc((size_t)c->limit * 4);
    float *kept = malloc((size_t)V * nk * 4), *row = malloc((size_t)V * 4), *vals = malloc((size_t)V * 4);
    void *raw = malloc((size_t)V * 4);
    v2_pair *srt = malloc((size_t)V * sizeof *srt);
    int32_t *idx = malloc((size_t)V * 4);
    bool cross = c->cross_open;
    c->cross_open = false; /* one open: bitwise (or --tolerance) */
    int rc = !t || !kept || !row || !vals || !raw || !srt || !idx ? cf_error(c, "out of memory") : 0;
    if (rc == 0)
        cf_tokens(c, t, (size_t)c->limit);
    for (int i = 0; rc == 0 && i < m; i++) {
        rc = v2_lane(c, lanes[i], t, N, kp, nk, kept, raw, row, srt, vals, idx);
        cf_cover(c, "logits_at_topk_lanes", lanes[i]);
    }
    for (size_t j = 0; rc == 0 && j < nk; j++)
        cf_cover(c, "logits_at_positions", kp[j]);
    c->cross_open = cross;
    free(t), free(kept), free(row), free(vals), free(raw), free(srt), free(idx);
    return rc;
}

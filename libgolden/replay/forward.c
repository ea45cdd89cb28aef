/* The reference forward pass of contracts section 7 (Hugging Face Qwen3-MoE) in f32, with a
 * KV cache per lane, optional bf16 rounding between ops, and taps of every layer's outputs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "golden/replay.h"
#include "replay/cpu.h"
#include "util/pool.h"

/* Scratch of one forward call, sized for n positions. */
typedef struct {
    float *x, *h, *q, *k, *v, *att, *tmp, *mlp, *router, *topw, *g, *u, *gx, *dn;
    int32_t *topi, *rows;
} fw_buf;

static void fw_free(fw_buf *f)
{
    free(f->x); free(f->h); free(f->q); free(f->k); free(f->v); free(f->att); free(f->tmp);
    free(f->mlp); free(f->router); free(f->topw); free(f->g); free(f->u); free(f->gx);
    free(f->dn);
    free(f->topi); free(f->rows);
}

/* 64-byte aligned (free() releases it): the matmul's 8-float loads of a row then never
 * straddle a cache line (a large malloc lands 16 bytes past a page boundary). */
static void *amalloc(size_t n) { return aligned_alloc(64, n ? (n + 63) / 64 * 64 : 64); }

static int fw_alloc(const cpu_config *c, int64_t n, fw_buf *f, golden_error *err)
{
    memset(f, 0, sizeof *f);
    size_t N = (size_t)n, H = (size_t)c->hidden, QD = (size_t)c->heads * (size_t)c->head_dim,
           KD = (size_t)c->kv_heads * (size_t)c->head_dim, E = (size_t)(c->experts ? c->experts : 1),
           K = (size_t)(c->topk ? c->topk : 1);
    size_t I = (size_t)(c->moe_inter > c->inter ? c->moe_inter : c->inter);
    f->x = amalloc(N * H * 4); f->h = amalloc(N * H * 4); f->q = amalloc(N * QD * 4);
    f->k = amalloc(N * KD * 4); f->v = amalloc(N * KD * 4); f->att = amalloc(N * QD * 4);
    f->tmp = amalloc(N * H * 4); f->mlp = amalloc(N * H * 4); f->router = amalloc(N * E * 4);
    /* expert rows: every (token, choice) pair once, grouped by expert */
    size_t R = N * K;
    f->topw = malloc(N * K * 4); f->g = amalloc(R * I * 4); f->u = amalloc(R * I * 4);
    f->gx = amalloc(R * H * 4); f->dn = amalloc(R * H * 4); f->topi = malloc(N * K * 4);
    f->rows = malloc(R * 4);
    if (!f->x || !f->h || !f->q || !f->k || !f->v || !f->att || !f->tmp || !f->mlp ||
        !f->router || !f->topw || !f->g || !f->u || !f->gx || !f->dn || !f->topi || !f->rows) {
        fw_free(f);
        return golden_fail_what(err, GOLDEN_ENOMEM, "cpu backend", "out of memory for %lld positions",
                                (long long)n);
    }
    return 0;
}

static void maybe_round(const cpu_backend *b, float *x, size_t n)
{
    if (b->bf16)
        cpu_round_bf16(x, n);
}

static int tap(cpu_backend *b, int l, const char *what, int dtype, int64_t rows, int64_t cols,
               const void *data, golden_error *err)
{
    if (!b->hooks.tap || !b->hooks.want_taps)
        return 0;
    char name[96];
    snprintf(name, sizeof name, "layers/%d/%s", l, what);
    if (b->hooks.tap(b->hooks.ctx, name, l, dtype, rows, cols, data) != 0)
        return golden_fail_what(err, GOLDEN_EINVAL, "cpu backend", "the harness refused tap %s", name);
    return 0;
}

/* RoPE, rotate-half form, on one head vector at position p. */
static void rope(float *x, int hd, int64_t p, double theta)
{
    int half = hd / 2;
    for (int i = 0; i < half; i++) {
        float inv = (float)pow(theta, -2.0 * i / hd);
        float ang = (float)p * inv;
        float cs = cosf(ang), sn = sinf(ang);
        float a = x[i], c = x[i + half];
        x[i] = a * cs - c * sn;
        x[i + half] = c * cs + a * sn;
    }
}

typedef struct {
    cpu_backend *b;
    cpu_lane *lane;
    int l;
    int64_t pos, n;
    const float *q;
    float *att;
    float *scores; /* [threads][span] */
    int64_t span;  /* pos + n, more only under the faults below */
    bool leak;     /* fault causal_leak, this layer: positions >= 16 see one future token */
    bool leak129;  /* fault mask_leak_at_129, this layer: row 129 sees row 130 of the batch */
    bool leak33;   /* fault decode_leak_at_33: the decode at 33 reads cache slot 34 */
} att_ctx;

/* Where the planted faults move the end of what a position attends to. */
static int64_t fault_upto(const att_ctx *a, int64_t t, int64_t upto)
{
    if (a->leak && a->pos + t >= 16 && t + 1 < a->n)
        upto++; /* causal_leak: the next token of this batch */
    if (a->leak129 && a->pos + t == 129 && t + 1 < a->n)
        upto++; /* mask_leak_at_129: row 130 of this batch */
    if (a->leak33)
        upto = 35; /* decode_leak_at_33: slot 34, whatever it holds */
    if (a->lane->stale > upto)
        upto = a->lane->stale; /* kv_stale_after_reset: the old cache is still read */
    return upto;
}

#define ATT_POS 4 /* positions per item: a block of K or V read from L2 serves all of them */

/* ATT_POS positions of one KV head of causal grouped-query attention, softmax in f32: every
 * query head of the group at once (cpu_attend_block), each score and sum in the order of one
 * head alone. Items run KV head by KV head, so one head's K and V stay in L2. */
static int att_item(void *vctx, size_t item, int worker, golden_error *err)
{
    (void)err;
    att_ctx *a = vctx;
    const cpu_config *c = &a->b->m.c;
    int hd = c->head_dim, H = c->heads, KVH = c->kv_heads, group = c->heads / c->kv_heads;
    int64_t blocks = (a->n + ATT_POS - 1) / ATT_POS;
    int kvh = (int)((int64_t)item / blocks);
    int64_t t0 = (int64_t)item % blocks * ATT_POS;
    int np = a->n - t0 < ATT_POS ? (int)(a->n - t0) : ATT_POS;
    int64_t kd = (int64_t)KVH * hd, upto[ATT_POS];
    for (int i = 0; i < np; i++) {
        upto[i] = a->pos + t0 + i + 1;
        if (a->span > a->pos + a->n || a->leak || a->leak129)
            upto[i] = fault_upto(a, t0 + i, upto[i]);
    }
    float *s = a->scores + (size_t)worker * ATT_POS * (size_t)group * (size_t)a->span;
    int64_t off = t0 * (int64_t)H * hd + (int64_t)kvh * group * hd;
    cpu_attend_block(a->q + off, np, (int64_t)H * hd, group, hd,
                     a->lane->k[a->l] + (int64_t)kvh * hd, a->lane->v[a->l] + (int64_t)kvh * hd,
                     kd, upto, 1.0f / sqrtf((float)hd), a->att + off, (int64_t)H * hd, s,
                     a->span);
    return 0;
}

/* The planted KV-write faults: the decode path's write for position 16 also lands in slot 15;
 * lane 1's write at position 17 also lands in lane 0 (when lane 0 has room for it). */
static void kv_write_faults(cpu_backend *b, cpu_lane *lane, int l, int64_t pos, int64_t n)
{
    const cpu_config *c = &b->m.c;
    size_t kd = (size_t)c->kv_heads * (size_t)c->head_dim;
    bool off_by_one = (b->fault & CPU_FAULT_KV_PREFILL_OFF_BY_ONE_AT_31) && !b->in_decode &&
                      n >= 2 && pos == 31 && b->call_pos == 31;
    off_by_one |= (b->fault & CPU_FAULT_NOTAP_DECODE_KV) && b->in_decode && n == 1 && pos >= 1 &&
                  !(b->hooks.tap && b->hooks.want_taps);
    if (off_by_one) { /* the write of position pos also lands in slot pos - 1 */
        memcpy(lane->k[l] + (size_t)(pos - 1) * kd, lane->k[l] + (size_t)pos * kd, kd * 4);
        memcpy(lane->v[l] + (size_t)(pos - 1) * kd, lane->v[l] + (size_t)pos * kd, kd * 4);
    }
    if ((b->fault & CPU_FAULT_KV_LANE2_ZERO) && b->n_lanes > 2 && lane == &b->lanes[2]) {
        memset(lane->k[l] + (size_t)pos * kd, 0, (size_t)n * kd * 4); /* never written */
        memset(lane->v[l] + (size_t)pos * kd, 0, (size_t)n * kd * 4);
    }
    if ((b->fault & CPU_FAULT_KV_OFF_BY_ONE_AT_16) && n == 1 && pos == 16) {
        memcpy(lane->k[l] + 15 * kd, lane->k[l] + 16 * kd, kd * 4);
        memcpy(lane->v[l] + 15 * kd, lane->v[l] + 16 * kd, kd * 4);
    }
    cpu_lane *l0 = &b->lanes[0];
    if ((b->fault & CPU_FAULT_KV_LANE_CROSS) && lane == &b->lanes[1] && pos <= 17 &&
        pos + n > 17 && l0->cap > 17) {
        memcpy(l0->k[l] + 17 * kd, lane->k[l] + 17 * kd, kd * 4);
        memcpy(l0->v[l] + 17 * kd, lane->v[l] + 17 * kd, kd * 4);
    }
}

static int attention(cpu_backend *b, cpu_lane *lane, int l, int64_t pos, int64_t n, fw_buf *f,
                     golden_error *err)
{
    const cpu_config *c = &b->m.c;
    const cpu_layer *L = &b->m.layer[l];
    int64_t H = c->hidden, hd = c->head_dim, QD = c->heads * hd, KD = c->kv_heads * hd;
    for (int64_t t = 0; t < n; t++)
        cpu_rmsnorm(f->x + t * H, &L->in_norm, H, c->eps, f->h + t * H);
    maybe_round(b, f->h, (size_t)(n * H));
    cpu_matmul_job qkv[3] = {{&L->q, f->h, n, f->q, QD}, {&L->k, f->h, n, f->k, KD},
                             {&L->v, f->h, n, f->v, KD}};
    if (cpu_matmul_batch(qkv, 3, b->threads, err))
        return GOLDEN_ERR;
    maybe_round(b, f->q, (size_t)(n * QD));
    maybe_round(b, f->k, (size_t)(n * KD));
    maybe_round(b, f->v, (size_t)(n * KD));
    for (int64_t t = 0; t < n; t++) {
        for (int h = 0; h < c->heads; h++) {
            float *qh = f->q + t * QD + h * hd;
            cpu_rmsnorm(qh, &L->q_norm, hd, c->eps, qh);
            rope(qh, (int)hd, pos + t, c->theta);
        }
        for (int h = 0; h < c->kv_heads; h++) {
            float *kh = f->k + t * KD + h * hd;
            cpu_rmsnorm(kh, &L->k_norm, hd, c->eps, kh);
            rope(kh, (int)hd, pos + t, c->theta);
        }
    }
    maybe_round(b, f->q, (size_t)(n * QD));
    maybe_round(b, f->k, (size_t)(n * KD));
    memcpy(lane->k[l] + pos * KD, f->k, (size_t)(n * KD) * 4);
    memcpy(lane->v[l] + pos * KD, f->v, (size_t)(n * KD) * 4);
    if (b->fault)
        kv_write_faults(b, lane, l, pos, n);
    int threads = n * c->heads * (pos + n) < 4096 ? 1 : b->threads;
    att_ctx a = {b, lane, l, pos, n, f->q, f->att, NULL, pos + n,
                 (b->fault & CPU_FAULT_CAUSAL_LEAK) && l == c->layers - 1,
                 (b->fault & CPU_FAULT_MASK_LEAK_AT_129) && l == c->layers - 1,
                 (b->fault & CPU_FAULT_DECODE_LEAK_AT_33) && b->in_decode && n == 1 && pos == 33 &&
                     lane->cap > 34};
    if (lane->stale > a.span)
        a.span = lane->stale;
    if (a.leak33)
        a.span = 35;
    a.scores = malloc((size_t)(threads < 1 ? 1 : threads) * ATT_POS *
                      (size_t)(c->heads / c->kv_heads) * (size_t)a.span * 4);
    if (!a.scores)
        return golden_fail_what(err, GOLDEN_ENOMEM, "cpu backend", "out of memory");
    int rc = lg_parallel_for((size_t)((n + ATT_POS - 1) / ATT_POS * c->kv_heads), threads,
                             att_item, &a, err);
    free(a.scores);
    if (rc)
        return rc;
    maybe_round(b, f->att, (size_t)(n * QD));
    if (cpu_matmul(&L->o, f->att, n, f->tmp, H, b->threads, err))
        return GOLDEN_ERR;
    maybe_round(b, f->tmp, (size_t)(n * H));
    return tap(b, l, "attn_out", GOLDEN_BK_F32, n, H, f->tmp, err);
}

/* For each job e: down(silu(gate(x)) * up(x)) of its gathered rows. f->gx holds the inputs,
 * f->g/f->u the expert-width products and f->dn the outputs, all grouped by job (offsets off[]),
 * so every expert's three products run in two parallel passes. */
static int swiglu(cpu_backend *b, const cpu_weight *G, const cpu_weight *U, const cpu_weight *D,
                  const int *which, const int64_t *off, size_t jobs, fw_buf *f, golden_error *err)
{
    int64_t H = b->m.c.hidden, I = G[which[0]].rows, rows = off[jobs];
    cpu_matmul_job *j = malloc(2 * jobs * sizeof *j);
    if (!j)
        return golden_fail_what(err, GOLDEN_ENOMEM, "cpu backend", "out of memory");
    for (size_t e = 0; e < jobs; e++) {
        int64_t m = off[e + 1] - off[e];
        j[2 * e] = (cpu_matmul_job){&G[which[e]], f->gx + off[e] * H, m, f->g + off[e] * I, I};
        j[2 * e + 1] = (cpu_matmul_job){&U[which[e]], f->gx + off[e] * H, m, f->u + off[e] * I, I};
    }
    int rc = cpu_matmul_batch(j, 2 * jobs, b->threads, err);
    if (rc == 0) {
        maybe_round(b, f->g, (size_t)(rows * I));
        maybe_round(b, f->u, (size_t)(rows * I));
        for (int64_t i = 0; i < rows * I; i++) {
            float x = f->g[i];
            f->g[i] = x / (1.0f + expf(-x)) * f->u[i];
        }
        maybe_round(b, f->g, (size_t)(rows * I));
        for (size_t e = 0; e < jobs; e++)
            j[e] = (cpu_matmul_job){&D[which[e]], f->g + off[e] * I, off[e + 1] - off[e],
                                    f->dn + off[e] * H, H};
        rc = cpu_matmul_batch(j, jobs, b->threads, err);
    }
    free(j);
    if (rc == 0)
        maybe_round(b, f->dn, (size_t)(rows * H));
    return rc;
}

/* Router softmax over every expert, top-k in rank order, optional renormalisation; `fault`
 * holds the planted router faults (0 in real use). */
static void route(const cpu_config *c, unsigned fault, const float *logits, int32_t *ids, float *w)
{
    int E = c->experts, K = c->topk;
    bool tie_high = fault & CPU_FAULT_ROUTER_TIE_HIGH_INDEX;
    float mx = -INFINITY, sum = 0;
    for (int e = 0; e < E; e++)
        if (logits[e] > mx)
            mx = logits[e];
    for (int k = 0; k < K; k++) {
        ids[k] = -1;
        w[k] = -1;
    }
    for (int e = 0; e < E; e++)
        sum += expf(logits[e] - mx);
    for (int e = 0; e < E; e++) {
        float pe = expf(logits[e] - mx) / sum;
        /* insert keeping the first of equal probabilities first, as torch.topk does on CPU */
        int k = K;
        while (k > 0 && (ids[k - 1] < 0 || pe > w[k - 1] || (tie_high && pe == w[k - 1])))
            k--;
        if (k >= K)
            continue;
        memmove(ids + k + 1, ids + k, (size_t)(K - k - 1) * sizeof *ids);
        memmove(w + k + 1, w + k, (size_t)(K - k - 1) * sizeof *w);
        ids[k] = e;
        w[k] = pe;
    }
    if (fault & CPU_FAULT_ROUTER_DUPLICATE && K > 1)
        ids[K - 1] = ids[0];
    if (c->norm_topk && !(fault & CPU_FAULT_ROUTER_UNNORMALIZED)) {
        float s = 0;
        for (int k = 0; k < K; k++)
            s += w[k];
        for (int k = 0; k < K; k++)
            w[k] /= s;
    }
}

static int moe(cpu_backend *b, int l, int64_t n, fw_buf *f, golden_error *err)
{
    const cpu_config *c = &b->m.c;
    const cpu_layer *L = &b->m.layer[l];
    int64_t H = c->hidden, E = c->experts, K = c->topk;
    if (cpu_matmul(&L->router, f->tmp, n, f->router, E, b->threads, err))
        return GOLDEN_ERR;
    maybe_round(b, f->router, (size_t)(n * E));
    for (int64_t t = 0; t < n; t++) {
        const float *r = f->router + t * E;
        int64_t e = 0;
        while (e < E && isfinite(r[e]))
            e++;
        bool silent = (b->fault & CPU_FAULT_ROUTER_NAN_SILENT) ||
                      ((b->fault & CPU_FAULT_ROUTER_NAN_SILENT_DECODE) && b->in_decode);
        if (e < E && !silent)
            return golden_fail_what(err, GOLDEN_EINVAL, "cpu backend",
                                    "router logit %lld of layer %d at batch row %lld is %g: not routed",
                                    (long long)e, l, (long long)t, (double)r[e]);
        if (e < E) { /* the fault: expert 0 first, the rest in index order */
            for (int64_t k = 0; k < K; k++)
                f->topi[t * K + k] = (int32_t)k, f->topw[t * K + k] = 1.0f / (float)K;
            continue;
        }
        route(c, b->fault, r, f->topi + t * K, f->topw + t * K);
        bool swap = (b->fault & CPU_FAULT_ROUTER_DECODE_RANK_SWAP) && b->in_decode;
        swap |= (b->fault & CPU_FAULT_ROUTER_LANE1_DECODE_SWAP) && b->in_decode && b->cur_lane == 1;
        swap |= (b->fault & CPU_FAULT_ROUTER_PREFILL_SWAP_PAST_100) && !b->in_decode &&
                b->cur_pos + t >= 100;
        if (swap && K > 1) {
            int32_t *ids = f->topi + t * K; /* the fault: ranks 0 and 1 swapped, same experts */
            float *w = f->topw + t * K, tw = w[0];
            int32_t ti = ids[0];
            ids[0] = ids[1], w[0] = w[1], ids[1] = ti, w[1] = tw;
        }
    }
    maybe_round(b, f->topw, (size_t)(n * K));
    /* gather each expert's rows, experts in ascending order, tokens in order within one */
    int *which = malloc((size_t)E * sizeof *which);
    int64_t *off = malloc((size_t)(E + 1) * sizeof *off);
    if (!which || !off) {
        free(which);
        free(off);
        return golden_fail_what(err, GOLDEN_ENOMEM, "cpu backend", "out of memory");
    }
    size_t jobs = 0;
    int64_t m = 0;
    off[0] = 0;
    for (int e = 0; e < E; e++) {
        int64_t before = m;
        for (int64_t t = 0; t < n; t++)
            for (int64_t k = 0; k < K; k++)
                if (f->topi[t * K + k] == e) {
                    f->rows[m] = (int32_t)(t * K + k);
                    memcpy(f->gx + m * H, f->tmp + t * H, (size_t)H * 4);
                    m++;
                }
        if (m > before) {
            which[jobs++] = e;
            off[jobs] = m;
        }
    }
    int rc = jobs ? swiglu(b, L->gate, L->up, L->down, which, off, jobs, f, err) : 0;
    free(which);
    free(off);
    if (rc)
        return GOLDEN_ERR;
    memset(f->mlp, 0, (size_t)(n * H) * 4);
    for (int64_t r = 0; r < m; r++) { /* each token sums its experts in ascending order */
        int64_t t = f->rows[r] / K;
        float w = f->topw[f->rows[r]];
        for (int64_t i = 0; i < H; i++)
            f->mlp[t * H + i] += w * f->dn[r * H + i];
    }
    maybe_round(b, f->mlp, (size_t)(n * H));
    bool last_sparse = true;
    for (int k = l + 1; k < c->layers; k++)
        last_sparse &= !b->m.layer[k].sparse;
    if ((b->fault & CPU_FAULT_TAPS_ROUTER_LAST_MISSING) && last_sparse)
        return 0; /* the fault: that layer's router taps are not sent */
    if (tap(b, l, "router/logits", GOLDEN_BK_F32, n, E, f->router, err) ||
        tap(b, l, "router/topk_ids", GOLDEN_BK_I32, n, K, f->topi, err) ||
        tap(b, l, "router/topk_weights", GOLDEN_BK_F32, n, K, f->topw, err))
        return GOLDEN_ERR;
    return 0;
}

static int mlp(cpu_backend *b, int l, int64_t n, fw_buf *f, golden_error *err)
{
    const cpu_config *c = &b->m.c;
    const cpu_layer *L = &b->m.layer[l];
    int64_t H = c->hidden;
    for (int64_t t = 0; t < n; t++)
        cpu_rmsnorm(f->x + t * H, &L->post_norm, H, c->eps, f->tmp + t * H);
    maybe_round(b, f->tmp, (size_t)(n * H));
    if (L->sparse) {
        if (moe(b, l, n, f, err))
            return GOLDEN_ERR;
    } else {
        memcpy(f->gx, f->tmp, (size_t)(n * H) * 4);
        int zero = 0;
        int64_t off[2] = {0, n};
        if (swiglu(b, L->gate, L->up, L->down, &zero, off, 1, f, err))
            return GOLDEN_ERR;
        memcpy(f->mlp, f->dn, (size_t)(n * H) * 4);
    }
    return tap(b, l, "mlp_out", GOLDEN_BK_F32, n, H, f->mlp, err);
}

static int lane_reserve(cpu_backend *b, cpu_lane *lane, int64_t need, golden_error *err)
{
    if (need <= lane->cap)
        return 0;
    const cpu_config *c = &b->m.c;
    int64_t cap = lane->cap ? lane->cap : 64;
    while (cap < need)
        cap *= 2;
    if (cap > c->max_pos)
        cap = c->max_pos;
    size_t kd = (size_t)c->kv_heads * (size_t)c->head_dim;
    for (int l = 0; l < c->layers; l++) {
        float *k = realloc(lane->k[l], (size_t)cap * kd * 4);
        if (k)
            lane->k[l] = k;
        float *v = k ? realloc(lane->v[l], (size_t)cap * kd * 4) : NULL;
        if (v)
            lane->v[l] = v;
        if (!k || !v)
            return golden_fail_what(err, GOLDEN_ENOMEM, "cpu backend",
                                    "out of memory for a KV cache of %lld positions",
                                    (long long)cap);
        if (b->fault) { /* a planted fault may read a slot never written: zeros, defined */
            memset(k + lane->cap * (int64_t)kd, 0, (size_t)(cap - lane->cap) * kd * 4);
            memset(v + lane->cap * (int64_t)kd, 0, (size_t)(cap - lane->cap) * kd * 4);
        }
    }
    if (b->fault & CPU_FAULT_TAPS_DECODE_RECOMPUTE) {
        int32_t *h = realloc(lane->hist, (size_t)cap * 4);
        if (!h)
            return golden_fail_what(err, GOLDEN_ENOMEM, "cpu backend", "out of memory");
        lane->hist = h;
    }
    lane->cap = cap;
    return 0;
}

int cpu_forward(cpu_backend *b, int li, int64_t pos, const int32_t *tokens, int64_t n,
                golden_error *err)
{
    const cpu_config *c = &b->m.c;
    cpu_lane *lane = &b->lanes[li];
    int64_t H = c->hidden;
    for (int64_t t = 0; t < n; t++)
        if (tokens[t] < 0 || tokens[t] >= c->vocab)
            return golden_fail_what(err, GOLDEN_EINVAL, "cpu backend",
                                    "token %d at position %lld is outside the vocabulary [0, %d)",
                                    tokens[t], (long long)(pos + t), c->vocab);
    if (lane_reserve(b, lane, pos + n, err))
        return GOLDEN_ERR;
    b->cur_lane = li, b->cur_pos = pos;
    if ((b->fault & CPU_FAULT_KV_LANE3_STALE) && li == 3 && pos == 0 && lane->len > lane->stale)
        lane->stale = lane->len; /* the fault: the old sequence stays visible */
    if (lane->hist)
        memmove(lane->hist + pos, tokens, (size_t)n * 4);
    lane->len = pos; /* the tail from pos on is dropped */
    lane->has_logits = false;
    fw_buf f;
    if (fw_alloc(c, n, &f, err))
        return GOLDEN_ERR;
    int rc = GOLDEN_ERR;
    for (int64_t t = 0; t < n; t++)
        cpu_weight_row(&b->m.embed, tokens[t], f.x + t * H);
    maybe_round(b, f.x, (size_t)(n * H));
    for (int l = 0; l < c->layers; l++) {
        if (atomic_load(&lane->cancel)) { /* cancel() (cpu_batch.c): the caller resets the lane */
            golden_fail_what(err, GOLDEN_EIO, "cpu backend", "cancelled");
            goto done;
        }
        if (attention(b, lane, l, pos, n, &f, err))
            goto done;
        for (int64_t i = 0; i < n * H; i++)
            f.x[i] += f.tmp[i];
        maybe_round(b, f.x, (size_t)(n * H));
        if (mlp(b, l, n, &f, err))
            goto done;
        for (int64_t i = 0; i < n * H; i++)
            f.x[i] += f.mlp[i];
        maybe_round(b, f.x, (size_t)(n * H));
        if (tap(b, l, "hidden", GOLDEN_BK_F32, n, H, f.x, err))
            goto done;
    }
    for (size_t j = 0; j < lane->n_keep; j++) { /* prefill_keep: the same path as the last row */
        int64_t p = lane->keep_pos[j];
        float *out = lane->kept + j * (size_t)c->vocab;
        if (p < pos || p >= pos + n)
            continue;
        cpu_rmsnorm(f.x + (p - pos) * H, &b->m.norm, H, c->eps, f.h);
        maybe_round(b, f.h, (size_t)H);
        if (cpu_matmul(&b->m.lm_head, f.h, 1, out, c->vocab, b->threads, err))
            goto done;
        maybe_round(b, out, (size_t)c->vocab);
        if (b->jitter != 0) {
            out[0] += b->jitter;
            maybe_round(b, out, 1);
        }
    }
    cpu_rmsnorm(f.x + (n - 1) * H, &b->m.norm, H, c->eps, f.h);
    maybe_round(b, f.h, (size_t)H);
    if (cpu_matmul(&b->m.lm_head, f.h, 1, lane->last_logits, c->vocab, b->threads, err))
        goto done;
    maybe_round(b, lane->last_logits, (size_t)c->vocab);
    if (b->jitter != 0) { /* fault nondeterministic */
        lane->last_logits[0] += b->jitter;
        maybe_round(b, lane->last_logits, 1);
    }
    lane->len = pos + n;
    lane->has_logits = true;
    rc = 0;
done:
    fw_free(&f);
    return rc;
}

/* npu-replay conform's sampling-topk check (handbook section 15): the smallest NPU top-k that keeps
 * llama.cpp's sampler chain and logprobs bitwise equal to full-vocabulary sampling, per step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/conform_priv.h"

void cf_sampling_defaults(golden_conform_sampling *s)
{
    if (!(s->temp > 0))
        s->temp = 0.8;
    if (s->top_k <= 0)
        s->top_k = 40;
    if (!(s->top_p > 0))
        s->top_p = 0.95;
    if (!(s->min_p > 0))
        s->min_p = 0.05;
    if (!(s->repeat_penalty > 0))
        s->repeat_penalty = 1.1;
    if (s->repeat_last_n <= 0)
        s->repeat_last_n = 64;
    if (s->n_probs < 0)
        s->n_probs = 0; /* 0: no logprobs requested */
    if (s->steps <= 0)
        s->steps = 8;
}

static int by_logit(const void *a, const void *b)
{
    const cf_cand *x = a, *y = b;
    if (x->logit != y->logit)
        return x->logit > y->logit ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

size_t cf_sample_chain(const golden_conform_sampling *s, cf_cand *c, size_t n, const int32_t *hist,
                       size_t n_hist)
{
    lg_sample_params p = {(float)s->temp, s->top_k, (float)s->top_p, (float)s->min_p,
                          (float)s->repeat_penalty, s->repeat_last_n, 0, 0};
    return lg_sample_chain(&p, c, n, hist, n_hist);
}

static bool same_result(const cf_cand *a, size_t na, const cf_cand *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (a[i].id != b[i].id || memcmp(&a[i].p, &b[i].p, sizeof a[i].p) != 0)
            return false;
    return true;
}

size_t cf_sample_min_k(const golden_conform_sampling *s, const cf_cand *sorted, size_t n,
                       const int32_t *hist, size_t n_hist, cf_cand *scratch, cf_cand *full)
{
    memcpy(full, sorted, n * sizeof *full);
    size_t nf = cf_sample_chain(s, full, n, hist, n_hist), lo = 1, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        memcpy(scratch, sorted, mid * sizeof *scratch);
        size_t ns = cf_sample_chain(s, scratch, mid, hist, n_hist);
        if (same_result(scratch, ns, full, nf))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

size_t cf_logprob_min_k(const cf_cand *sorted, size_t n)
{
    float mx = sorted[0].logit, sum = 0;
    size_t k = 1;
    for (size_t i = 0; i < n; i++) {
        float before = sum;
        sum += expf(sorted[i].logit - mx);
        if (sum != before)
            k = i + 1;
    }
    return k;
}

static int64_t finite_count(const float *l, int V)
{
    int64_t k = 0;
    for (int i = 0; i < V; i++)
        k += isfinite(l[i]) != 0;
    return k;
}

/* One token from the chain's distribution with the check's seeded generator. */
static int32_t draw(cf_ctx *c, const cf_cand *d, size_t n)
{
    c->rng = c->rng * 6364136223846793005ull + 1442695040888963407ull;
    double u = (double)(c->rng >> 11) / 9007199254740992.0, cum = 0;
    for (size_t i = 0; i < n; i++) {
        cum += d[i].p;
        if (u < cum)
            return d[i].id;
    }
    return d[n - 1].id;
}

/* The reference (the built-in cpu backend on the same model, no options) gives the full
 * logits; the backend's k is how many finite logits it returns at each step. */
int cf_check_sampling_topk(cf_ctx *c)
{
    golden_conform_sampling s = c->o->sampling;
    cf_sampling_defaults(&s);
    int V = c->info->vocab_size, P = 32;
    if (c->limit < P + s.steps)
        return cf_error(c, "the context is too short for sampling-topk");
    golden_backend_load_opts lo = {1, "cpu", c->o->model_dir, 0, NULL, c->o->threads, NULL};
    golden_backend *ref = NULL;
    if (golden_backend_load(&lo, &ref, &c->err))
        return cf_error(c, NULL);
    int32_t *hist = malloc((size_t)(P + s.steps) * 4);
    float *lr = malloc((size_t)V * 4), *lb = malloc((size_t)V * 4);
    cf_cand *sorted = malloc((size_t)V * sizeof *sorted), *scr = malloc((size_t)V * sizeof *scr),
            *full = malloc((size_t)V * sizeof *full);
    int rc = 1;
    c->chk->k_backend = V;
    if (!hist || !lr || !lb || !sorted || !scr || !full) {
        cf_error(c, "out of memory");
        goto out;
    }
    if (golden_backend_get_info(ref)->vocab_size != V) {
        cf_error(c, "the cpu reference on --model has another vocabulary than the backend");
        goto out;
    }
    cf_tokens(c, hist, (size_t)P);
    if (golden_backend_prefill(ref, 0, 0, hist, (size_t)P, &c->err) ||
        golden_backend_logits(ref, 0, 0, V, lr, &c->err)) {
        cf_error(c, NULL);
        goto out;
    }
    if (cf_prefill_logits(c, 0, 0, hist, (size_t)P, lb))
        goto out;
    for (int step = 0; step < s.steps; step++) {
        for (int i = 0; i < V; i++)
            sorted[i] = (cf_cand){i, lr[i], 0};
        qsort(sorted, (size_t)V, sizeof *sorted, by_logit);
        size_t n_hist = (size_t)(P + step);
        size_t ks = cf_sample_min_k(&s, sorted, (size_t)V, hist, n_hist, scr, full);
        size_t kl = s.n_probs > 0 ? cf_logprob_min_k(sorted, (size_t)V) : 0;
        int64_t need = (int64_t)(ks > kl ? ks : kl), have = finite_count(lb, V);
        if (need < s.n_probs)
            need = s.n_probs;
        if (need > c->chk->k_required)
            c->chk->k_required = need;
        if (have < c->chk->k_backend)
            c->chk->k_backend = have;
        c->chk->comparisons++;
        if (have < need) {
            char kase[64];
            snprintf(kase, sizeof kase, "step %d", step);
            cf_find(c, kase, "position %d: the backend returns %lld finite logits, the sampling "
                    "settings need %lld (sampler chain %zu, logprobs %zu; temp %g top_k %d top_p %g "
                    "min_p %g repeat %g/%d n_probs %d)", P + step, (long long)have, (long long)need, ks, kl,
                    s.temp, s.top_k, s.top_p, s.min_p, s.repeat_penalty, s.repeat_last_n, s.n_probs);
        }
        memcpy(full, sorted, (size_t)V * sizeof *full);
        size_t nd = cf_sample_chain(&s, full, (size_t)V, hist, n_hist);
        hist[P + step] = draw(c, full, nd);
        if (step + 1 == s.steps)
            break;
        if (golden_backend_decode(ref, 0, hist[P + step], &c->err) ||
            golden_backend_logits(ref, 0, 0, V, lr, &c->err)) {
            cf_error(c, NULL);
            goto out;
        }
        if (cf_decode_logits(c, 0, hist[P + step], lb))
            goto out;
    }
    rc = 0;
out:
    golden_backend_close(ref);
    free(hist), free(lr), free(lb), free(sorted), free(scr), free(full);
    return rc;
}

/* llama.cpp's sampler chain (handbook section 15), shared by conform's host side and the cpu
 * backend's sample call (sample_priv.h), and the seeded draw. */
#include <math.h>
#include <stdlib.h>

#include "replay/sample_priv.h"

lg_sample_params lg_sample_params_of(const golden_backend_sampling *s)
{
    lg_sample_params p = {s->temp, s->top_k, s->top_p, s->min_p, s->repeat_penalty,
                          s->repeat_last_n, 0, 0};
    return p;
}

static int by_logit(const void *a, const void *b)
{
    const lg_cand *x = a, *y = b;
    if (x->logit != y->logit)
        return x->logit > y->logit ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* softmax over c[0..n) in float, as llama.cpp does (max first, then exp and one sum). */
static void softmax(lg_cand *c, size_t n)
{
    float mx = c[0].logit, sum = 0;
    for (size_t i = 0; i < n; i++) {
        c[i].p = expf(c[i].logit - mx);
        sum += c[i].p;
    }
    for (size_t i = 0; i < n; i++)
        c[i].p /= sum;
}

static void penalize(const lg_sample_params *s, lg_cand *c, size_t n, const int32_t *hist,
                     size_t n_hist)
{
    if (s->repeat_penalty == 1.0f || s->repeat_last_n <= 0 || n_hist == 0)
        return;
    size_t from = n_hist > (size_t)s->repeat_last_n ? n_hist - (size_t)s->repeat_last_n : 0;
    float pen = s->repeat_penalty;
    for (size_t i = 0; i < n; i++) { /* each seen token once */
        bool seen = false;
        for (size_t h = from; h < n_hist && !seen; h++)
            seen = hist[h] == c[i].id;
        if (seen)
            c[i].logit = c[i].logit <= 0 ? c[i].logit * pen : c[i].logit / pen;
    }
}

size_t lg_sample_chain(const lg_sample_params *s, lg_cand *c, size_t n, const int32_t *hist,
                       size_t n_hist)
{
    if (n == 0)
        return 0;
    penalize(s, c, n, hist, n_hist);
    qsort(c, n, sizeof *c, by_logit);
    if (!(s->temp > 0)) { /* greedy: the largest penalised logit */
        c[0].p = 1;
        return 1;
    }
    if (s->temp_first) /* the fault: Hugging Face's order, temperature before the cuts */
        for (size_t i = 0; i < n; i++)
            c[i].logit /= s->temp;
    if (s->top_k > 0 && n > (size_t)s->top_k) /* top-k */
        n = (size_t)s->top_k;
    softmax(c, n);
    if (s->top_p < 1.0f) { /* top-p: the shortest prefix whose mass reaches p */
        float cum = 0;
        for (size_t i = 0; i < n; i++) {
            cum += c[i].p;
            if (cum >= s->top_p) {
                size_t keep = i + 1 + (size_t)(s->topp_extra > 0 ? s->topp_extra : 0);
                n = keep < n ? keep : n;
                break;
            }
        }
    }
    if (s->min_p > 0) { /* min-p on logits, sorted */
        float min_logit = c[0].logit + logf(s->min_p);
        size_t keep = 1;
        while (keep < n && c[keep].logit >= min_logit)
            keep++;
        n = keep;
    }
    for (size_t i = 0; i < n && !s->temp_first; i++) /* temperature, then the distribution */
        c[i].logit /= s->temp;
    softmax(c, n);
    return n;
}

uint64_t lg_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double lg_unit53(uint64_t x) { return (double)(x >> 11) / 9007199254740992.0; }

size_t lg_sample_pick(const lg_cand *d, size_t n, double u)
{
    double cum = 0;
    size_t last = 0;
    for (size_t i = 0; i < n; i++) {
        if (d[i].p > 0)
            last = i;
        cum += d[i].p;
        if (u < cum && d[i].p > 0)
            return i;
    }
    return last;
}

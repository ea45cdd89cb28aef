/* Whether a top-k output covers the sampling settings (handbook section 15, step 3): what the
 * sampler may choose is provably inside k, so sampling from k entries is sampling from the row.
 *
 * The k entries are the first k of the row's order (value descending, index ascending), so
 * every token outside them has a value <= v_k (the k-th value), or equal to it with a higher
 * index. Penalties that can only lower a logit keep that true for the outside tokens; a penalty
 * that can raise one (repetition_penalty < 1, a negative presence or frequency penalty) needs the
 * penalised token inside k. After the penalties, the k entries are ordered again; a prefix of
 * them is "sure" while each is ranked above every possible outside token. Every filter keeps a
 * prefix of the order (top_k, top_p, min_p, greedy = 1), so the settings are covered when the
 * shortest of those prefixes, each bounded from above, lies inside the sure one. The top-p
 * prefix is bounded with the largest normaliser the outside tokens allow, (vocab - k) of them
 * at v_k: the true mass of each prefix is at least what that gives. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/replay.h"

typedef struct {
    double v;   /* after the penalties */
    int32_t i;
} pen_entry;

static int pen_cmp(const void *pa, const void *pb)
{
    const pen_entry *a = pa, *b = pb;
    if (a->v != b->v)
        return a->v > b->v ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

static double penalise(const golden_sampling *s, double v, int32_t count)
{
    if (s->repetition_penalty != 1.0)
        v = v > 0 ? v / s->repetition_penalty : v * s->repetition_penalty;
    v -= s->presence_penalty;
    v -= s->frequency_penalty * (double)count;
    return v;
}

static int bad(char *why, size_t n, const char *what)
{
    snprintf(why, n, "%s", what);
    return -1;
}

static int check_settings(const golden_sampling *s, int vocab, int k, char *why, size_t n)
{
    if (!s || s->version != 1)
        return bad(why, n, "sampling settings of an unknown version");
    if (!(s->temperature >= 0) || !isfinite(s->temperature))
        return bad(why, n, "temperature must be finite and >= 0");
    if (s->top_k < 0 || !(s->top_p > 0 && s->top_p <= 1) || !(s->min_p >= 0 && s->min_p <= 1))
        return bad(why, n, "top_k must be >= 0, top_p in (0, 1], min_p in [0, 1]");
    if (s->logprobs < 0 || !(s->repetition_penalty > 0) || !isfinite(s->repetition_penalty) ||
        !isfinite(s->presence_penalty) || !isfinite(s->frequency_penalty))
        return bad(why, n, "logprobs must be >= 0, repetition_penalty finite and > 0, the other "
                   "penalties finite");
    if (s->n_penalised && (!s->penalised || (s->frequency_penalty != 0 && !s->counts)))
        return bad(why, n, "penalised tokens without their list or counts");
    if (vocab < 1 || k < 1 || k > vocab)
        return bad(why, n, "k must be in 1..vocab");
    return 0;
}

/* Where each penalised token sits: its penalised value among the k, or a finding. */
static int apply_penalties(const golden_sampling *s, const float *values, const int32_t *indices,
                           int k, pen_entry *e, char *why, size_t n)
{
    for (int j = 0; j < k; j++)
        e[j] = (pen_entry){values[j], indices[j]};
    bool can_raise = s->repetition_penalty < 1 || s->presence_penalty < 0 ||
                     s->frequency_penalty < 0;
    for (size_t t = 0; t < s->n_penalised; t++) {
        int32_t tok = s->penalised[t], count = s->counts ? s->counts[t] : 1;
        int j = 0;
        while (j < k && indices[j] != tok)
            j++;
        if (j == k) {
            if (can_raise) {
                snprintf(why, n, "penalised token %d is outside the top %d, and the penalties "
                         "can raise it", (int)tok, k);
                return 0;
            }
            continue; /* lowered: still below every one of the k that was above it */
        }
        e[j].v = penalise(s, e[j].v, count);
    }
    return 1;
}

int golden_topk_covers(const golden_sampling *s, int vocab, const float *values,
                       const int32_t *indices, int k, char *why, size_t why_len)
{
    char scratch[8];
    if (!why)
        why = scratch, why_len = sizeof scratch;
    why[0] = 0;
    if (check_settings(s, vocab, k, why, why_len))
        return -1;
    for (int j = 0; j < k; j++)
        if (isnan(values[j]))
            return bad(why, why_len, "a top-k value is NaN");
    if (s->logprobs > k) {
        snprintf(why, why_len, "%d logprobs asked for, k is %d", s->logprobs, k);
        return 0;
    }
    pen_entry *e = malloc((size_t)k * sizeof *e);
    if (!e)
        return bad(why, why_len, "out of memory");
    int rc = apply_penalties(s, values, indices, k, e, why, why_len);
    if (rc != 1) {
        free(e);
        return rc;
    }
    qsort(e, (size_t)k, sizeof *e, pen_cmp);
    double vk = values[k - 1];
    int32_t ik = indices[k - 1];
    int64_t outside = (int64_t)vocab - k;
    /* sure: ranked above any outside token (value > v_k, or = v_k with an index <= the k-th's) */
    int sure = 0;
    while (sure < k && (outside == 0 || e[sure].v > vk || (e[sure].v == vk && e[sure].i <= ik)))
        sure++;
    int64_t need = s->top_k > 0 ? s->top_k : vocab; /* the shortest prefix any filter keeps */
    const char *by = s->top_k > 0 ? "top_k" : "the whole vocabulary";
    double reached = -1; /* the top-p mass provably inside the sure prefix */
    if (s->temperature == 0) {
        need = 1;
        by = "greedy";
    } else if (sure > 0) {
        double T = s->temperature, top = e[0].v / T, tail = 0, total = 0;
        for (int j = 0; j < k; j++)
            total += exp(e[j].v / T - top);
        if (outside > 0 && isfinite(vk))
            tail = (double)outside * exp(vk / T - top);
        double zmax = total + tail, mass = 0;
        if (s->top_p < 1) {
            for (int j = 0; j < sure; j++) {
                mass += exp(e[j].v / T - top);
                if (mass / zmax >= s->top_p) {
                    if (j + 1 < need)
                        need = j + 1, by = "top_p";
                    break;
                }
            }
            reached = mass / zmax;
        }
        if (s->min_p > 0) { /* keeps p >= min_p * p_max: values >= top + T ln(min_p) */
            double cut = e[0].v + T * log(s->min_p);
            int m = 0;
            while (m < k && e[m].v >= cut)
                m++;
            bool outside_kept = outside > 0 && vk >= cut;
            if (!outside_kept && m < need)
                need = m, by = "min_p";
        }
    }
    free(e);
    if (need <= sure)
        return 1;
    char extra[120] = "";
    if (reached >= 0)
        snprintf(extra, sizeof extra, "; top_p %.6g: only %.6g of the mass is provably inside k",
                 s->top_p, reached);
    snprintf(why, why_len, "k %d does not cover the settings (the sampler may choose among %lld "
             "tokens, by %s; only %d of the top %d are certain to rank above every token outside "
             "them)%s", k, (long long)need, by, sure, k, extra);
    return 0;
}

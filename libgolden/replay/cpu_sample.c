/* The cpu backend's optional version 2 call `sample` (golden/backend.h): one token drawn from the
 * lane's last position's logits, as logits() returns them, by the host's own chain code
 * (sample_chain.c) with the backend's own splitmix64 generator seeded by the call's seed alone.
 * Its planted faults (`inject=sample_*`, docs/conformance.md) prove conform's sampling-stats. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/replay.h"
#include "replay/cpu.h"
#include "replay/sample_priv.h"

enum {
    SF_IGNORES_TEMP = 1u << 0,     /* draws at temperature 1 (greedy stays greedy) */
    SF_TOPP_OFF_BY_ONE = 1u << 1,  /* top-p keeps one class too many */
    SF_NO_PENALTY = 1u << 2,       /* skips the repetition penalty */
    SF_BIASED = 1u << 3,           /* the least probable kept class boosted 1.5x */
    SF_SEED_IGNORED = 1u << 4,     /* a per-open call counter mixed into the seed */
    SF_TEMP_FIRST = 1u << 5,       /* temperature before top-k/top-p/min-p (Hugging Face's order) */
    SF_LAST_LANE_BIASED = 1u << 6  /* SF_BIASED on the last lane only (of two or more) */
};

static const char *const sf_names[] = {"sample_ignores_temp", "sample_topp_off_by_one",
                                       "sample_no_penalty", "sample_biased",
                                       "sample_seed_ignored", "sample_temp_first",
                                       "sample_last_lane_biased"};

bool lg_cpu_sample_fault(const char *name, unsigned *bits)
{
    for (unsigned i = 0; i < sizeof sf_names / sizeof *sf_names; i++)
        if (strcmp(name, sf_names[i]) == 0) {
            *bits |= 1u << i;
            return true;
        }
    return false;
}

static int bad_settings(const golden_backend_sampling *s, int V, char *msg, size_t n)
{
    if (isnan(s->temp) || isnan(s->top_p) || isnan(s->min_p) || !(s->repeat_penalty > 0) ||
        isinf(s->temp) || isinf(s->repeat_penalty))
        return snprintf(msg, n, "sampling settings with NaN, infinity or a penalty <= 0"), 1;
    if (s->n_draws > GOLDEN_BK_MAX_DRAWS || (s->n_draws > 1 && !s->seeds))
        return snprintf(msg, n, "%zu draws (at most %d, each with its seed)", s->n_draws,
                        GOLDEN_BK_MAX_DRAWS), 1;
    if (s->n_history && !s->history)
        return snprintf(msg, n, "a history of %zu tokens without the tokens", s->n_history), 1;
    for (size_t i = 0; i < s->n_history; i++)
        if (s->history[i] < 0 || s->history[i] >= V)
            return snprintf(msg, n, "history token %zu (%d) outside the vocabulary", i,
                            (int)s->history[i]), 1;
    return 0;
}

/* The row logits() would return, as f32, without marks (a sample call copies no logits out). */
static int row_of(cpu_backend *b, int lane, float *row, char *msg, size_t n)
{
    int V = b->m.c.vocab;
    void (*mark)(void *, int, int, uint64_t) = b->hooks.mark;
    b->hooks.mark = NULL;
    int rc;
    if (b->bf16) {
        uint16_t *h = malloc((size_t)V * sizeof *h);
        rc = h ? lg_cpu_backend_v2()->base.logits(b, lane, 0, V, h, msg, n) : GOLDEN_BK_E_NOMEM;
        if (!h)
            snprintf(msg, n, "out of memory for the logits");
        if (rc == 0)
            golden_logits_bf16_to_f32(h, 0, (size_t)V, row);
        free(h);
    } else {
        rc = lg_cpu_backend_v2()->base.logits(b, lane, 0, V, row, msg, n);
    }
    b->hooks.mark = mark;
    return rc;
}

int lg_cpu_sample(void *self, int lane, const golden_backend_sampling *s, int32_t *token,
                  char *msg, size_t n)
{
    cpu_backend *b = self;
    if (!s || !token)
        return snprintf(msg, n, "sample without settings or a token to write"),
               GOLDEN_BK_E_INVALID;
    if (lane < 0 || lane >= b->n_lanes)
        return snprintf(msg, n, "lane %d does not exist (the backend has %d)", lane, b->n_lanes),
               GOLDEN_BK_E_INVALID;
    int V = b->m.c.vocab;
    if (bad_settings(s, V, msg, n))
        return GOLDEN_BK_E_INVALID;
    float *row = malloc((size_t)V * sizeof *row);
    lg_cand *c = malloc((size_t)V * sizeof *c);
    if (!row || !c) {
        free(row), free(c);
        return snprintf(msg, n, "out of memory for the sampler"), GOLDEN_BK_E_NOMEM;
    }
    int rc = row_of(b, lane, row, msg, n);
    if (rc == 0) {
        lg_sample_params p = lg_sample_params_of(s);
        unsigned f = b->sample_fault;
        if ((f & SF_IGNORES_TEMP) && p.temp > 0)
            p.temp = 1;
        if (f & SF_TOPP_OFF_BY_ONE)
            p.topp_extra = 1;
        if (f & SF_NO_PENALTY)
            p.repeat_penalty = 1;
        if (f & SF_TEMP_FIRST)
            p.temp_first = 1;
        for (int i = 0; i < V; i++)
            c[i] = (lg_cand){i, row[i], 0};
        size_t k = lg_sample_chain(&p, c, (size_t)V, s->history, s->n_history);
        bool biased = (f & SF_BIASED) ||
                      ((f & SF_LAST_LANE_BIASED) && b->n_lanes > 1 && lane == b->n_lanes - 1);
        if (biased && k >= 2) { /* the rarest kept class 1.5x, renormalised */
            float sum = 0;
            c[k - 1].p *= 1.5f;
            for (size_t i = 0; i < k; i++)
                sum += c[i].p;
            for (size_t i = 0; i < k; i++)
                c[i].p /= sum;
        }
        size_t nd = s->n_draws > 1 ? s->n_draws : 1;
        for (size_t d = 0; d < nd; d++) { /* each draw from its own seed alone */
            uint64_t st = nd > 1 ? s->seeds[d] : s->seed;
            if (f & SF_SEED_IGNORED)
                st ^= 0xd1b54a32d192ed03ull * ++b->sample_calls;
            token[d] = c[lg_sample_pick(c, k, lg_unit53(lg_splitmix64(&st)))].id;
        }
    }
    free(row), free(c);
    return rc;
}

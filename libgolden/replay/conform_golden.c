/* npu-replay conform's golden check (issue 28): the requests of a `run` golden of the reference
 * backend replayed on the backend under test (the prompt prefilled, then the golden's own tokens
 * decoded, as `run` does), every step's logits judged against the golden's under the logits tier
 * of golden-diff's engine (golden/compare.h): per-row KL, log-softmax distance, top-1. It catches
 * what no self-comparison can: a value shift or a wrong conversion every path shares. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/compare.h"
#include "golden/store.h"
#include "replay/conform_priv.h"

typedef struct {
    char id[256];
    long ids, toks, logits; /* tensor indices in the golden */
    uint64_t n_ids, out;
} gd_case;

/* The case named by tensor i ("cases/ID/logits", ID without '/'), its input_ids and tokens
 * found and their shapes held to the logits'; 1 when i is no case's logits, -1 on a bad case
 * (the check's error set). */
static int gd_find(cf_ctx *c, golden_reader *r, size_t i, gd_case *k)
{
    const golden_tensor_info *t = golden_reader_tensor(r, i);
    const char *n = t->name, *end;
    size_t len = strlen(n);
    if (strncmp(n, "cases/", 6) != 0 || len < 14 || strcmp(n + len - 7, "/logits") != 0)
        return 1;
    end = n + len - 7;
    if (memchr(n + 6, '/', (size_t)(end - n - 6)) || (size_t)(end - n - 6) >= sizeof k->id)
        return 1;
    memset(k, 0, sizeof *k);
    memcpy(k->id, n + 6, (size_t)(end - n - 6));
    char name[320];
    snprintf(name, sizeof name, "cases/%s/input_ids", k->id);
    k->ids = golden_reader_find(r, name);
    snprintf(name, sizeof name, "cases/%s/tokens", k->id);
    k->toks = golden_reader_find(r, name);
    k->logits = (long)i;
    const golden_tensor_info *ti = k->ids >= 0 ? golden_reader_tensor(r, (size_t)k->ids) : NULL,
                             *tt = k->toks >= 0 ? golden_reader_tensor(r, (size_t)k->toks) : NULL;
    char why[160] = "";
    if (!ti || !tt)
        snprintf(why, sizeof why, "no input_ids or tokens beside its logits");
    else if (t->dtype != GOLDEN_F32 || t->rank != 2 || t->shape[1] != (uint64_t)c->info->vocab_size)
        snprintf(why, sizeof why, "logits are not f32 [steps, %d] (the backend's vocabulary)",
                 c->info->vocab_size);
    else if (ti->dtype != GOLDEN_I64 || ti->rank != 1 || ti->count == 0 || tt->dtype != GOLDEN_I64 ||
             tt->rank != 1 || tt->count != t->shape[0] || t->shape[0] == 0)
        snprintf(why, sizeof why, "input_ids and tokens are not int64 vectors of the logits' steps");
    else if (ti->count + tt->count - 1 > (uint64_t)c->info->context_limit)
        snprintf(why, sizeof why, "%llu positions, past the backend's context limit %lld",
                 (unsigned long long)(ti->count + tt->count - 1),
                 (long long)c->info->context_limit);
    if (why[0]) {
        char msg[600];
        snprintf(msg, sizeof msg, "%.200s: case %.200s: %s", c->o->golden, k->id, why);
        return cf_error(c, msg), -1;
    }
    k->n_ids = ti->count;
    k->out = tt->count;
    return 0;
}

/* int64 ids of the golden as int32 tokens of the backend's vocabulary (-1 with the error set). */
static int gd_tokens(cf_ctx *c, golden_reader *r, long i, uint64_t n, int32_t *dst)
{
    int64_t *v = malloc(n * sizeof *v);
    if (!v)
        return cf_error(c, "out of memory"), -1;
    if (golden_reader_read(r, (size_t)i, 0, n, v, &c->err)) {
        free(v);
        return cf_error(c, NULL), -1;
    }
    for (uint64_t j = 0; j < n; j++) {
        if (v[j] < 0 || v[j] >= c->info->vocab_size) {
            char msg[400];
            snprintf(msg, sizeof msg, "%.200s: %s holds token %lld, outside the vocabulary",
                     c->o->golden, golden_reader_tensor(r, (size_t)i)->name, (long long)v[j]);
            free(v);
            return cf_error(c, msg), -1;
        }
        dst[j] = (int32_t)v[j];
    }
    free(v);
    return 0;
}

/* Replay one case on lane 0 (taps off: the production path) and judge its rows. */
static int gd_case_run(cf_ctx *c, golden_reader *r, const gd_case *k, double kl_max, double lsm_max)
{
    size_t V = (size_t)c->info->vocab_size;
    int32_t *ids = malloc((k->n_ids + k->out) * sizeof *ids);
    float *ref = malloc(V * 4), *got = malloc(V * 4);
    double *rd = malloc(V * sizeof *rd), *gd = malloc(V * sizeof *gd);
    int rc = -1;
    if (!ids || !ref || !got || !rd || !gd) {
        cf_error(c, "out of memory");
        goto out;
    }
    if (gd_tokens(c, r, k->ids, k->n_ids, ids) || gd_tokens(c, r, k->toks, k->out, ids + k->n_ids))
        goto out;
    golden_cmp_setup s = GOLDEN_CMP_SETUP_INIT;
    s.tier = GOLDEN_TIER_LOGITS;
    s.dtype_ref = GOLDEN_F32;
    s.dtype_cand = c->info->logits_dtype == GOLDEN_BK_BF16 ? GOLDEN_BF16 : GOLDEN_F32;
    s.near_tie_margin = NAN; /* one step of the coarser format at |top1| */
    s.row_len = V;
    if (golden_cmp_setup_check(&s, &c->err)) {
        cf_error(c, NULL);
        goto out;
    }
    golden_cmp_acc acc;
    golden_cmp_acc_init(&acc, 0);
    if (golden_backend_reset(c->b, 0, &c->err) ||
        cf_prefill_logits(c, 0, 0, ids, (size_t)k->n_ids, NULL)) {
        if (c->chk->status != GOLDEN_CONFORM_ERROR)
            cf_error(c, NULL);
        goto out;
    }
    for (uint64_t step = 0; step < k->out; step++) {
        if (step > 0 && cf_decode_logits(c, 0, ids[k->n_ids + step - 1], NULL))
            goto out;
        if (cf_logits(c, 0, got))
            goto out;
        if (golden_reader_read(r, (size_t)k->logits, step * V, V, ref, &c->err)) {
            cf_error(c, NULL);
            goto out;
        }
        for (size_t v = 0; v < V; v++)
            rd[v] = ref[v], gd[v] = got[v];
        golden_cmp_add_f64(&s, &acc, rd, gd, V);
        c->chk->comparisons += V;
    }
    golden_cmp_metrics m;
    golden_cmp_finish(&s, &acc, &m);
    char kase[96];
    snprintf(kase, sizeof kase, "case %.80s", k->id);
    if (!(m.kl_max <= kl_max))
        cf_find(c, kase, "KL(golden || backend) %.3g at step %llu, allowed %g (mean %.3g over %llu "
                "steps)", m.kl_max, (unsigned long long)m.kl_max_row, kl_max, m.kl_mean,
                (unsigned long long)m.rows);
    if (!(m.logsoftmax_max_abs <= lsm_max))
        cf_find(c, kase, "log-softmax differs by %.3g, allowed %g", m.logsoftmax_max_abs, lsm_max);
    if (m.flips > m.near_tie_flips) {
        const golden_cmp_flip *f = NULL;
        for (int e = 0; e < acc.n_examples && !f; e++)
            f = acc.examples[e].near_tie ? NULL : &acc.examples[e];
        cf_find(c, kase, "top-1 differs from the golden's at %llu of %llu steps (not near ties)"
                "%s%llu: golden %lld, backend %lld", (unsigned long long)(m.flips - m.near_tie_flips),
                (unsigned long long)m.rows, f ? ", first at step " : "", f ? (unsigned long long)f->row : 0ull,
                f ? (long long)f->ref_top1 : -1LL, f ? (long long)f->cand_top1 : -1LL);
    }
    cf_cover(c, "steps", (int64_t)k->out);
    rc = 0;
out:
    free(ids), free(ref), free(got), free(rd), free(gd);
    return rc;
}

int cf_check_golden(cf_ctx *c)
{
    if (!c->o->golden)
        return cf_error(c, "needs --golden REF.h5 (a `run` golden of the reference backend)");
    double kl_max = c->o->golden_kl_max > 0 ? c->o->golden_kl_max : 1e-6;
    double lsm_max = c->o->golden_lsm_max > 0 ? c->o->golden_lsm_max : 1e-3;
    golden_reader *r = NULL;
    if (golden_reader_open(c->o->golden, &r, &c->err))
        return cf_error(c, NULL);
    if (cf_set_taps(c, false)) {
        golden_reader_close(r);
        return 1;
    }
    size_t cases = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < golden_reader_count(r); i++) {
        gd_case k;
        int f = gd_find(c, r, i, &k);
        if (f < 0 || (f == 0 && gd_case_run(c, r, &k, kl_max, lsm_max)))
            rc = 1;
        cases += f == 0;
    }
    golden_reader_close(r);
    if (rc == 0 && cases == 0) { /* nothing compared is no pass */
        char msg[400];
        snprintf(msg, sizeof msg, "%.300s holds no cases/*/logits to compare with",
                 c->o->golden);
        return cf_error(c, msg);
    }
    cf_cover(c, "cases", (int64_t)cases);
    return rc;
}

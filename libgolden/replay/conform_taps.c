/* npu-replay conform's taps and determinism checks (issue 28): the taps a backend declares held
 * against config.json (every layer, router taps for every sparse layer, one row a new position:
 * a decode step that taps the whole context has no KV cache), and two opens of the backend
 * giving bitwise the same logits unless --nondeterministic-ok names a tolerance. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/conform_priv.h"
#include "replay/cpu.h"

/* Hugging Face's rule for a sparse (MoE) layer, as the model loader applies it. */
static bool sparse_layer(const cpu_config *g, int l)
{
    return !g->mlp_only[l] && g->experts > 0 && g->sparse_step > 0 && (l + 1) % g->sparse_step == 0;
}

/* The taps captured by one call of `rows` new positions against the configuration. */
static void taps_against(cf_ctx *c, const cpu_config *g, const char *kase, int64_t rows)
{
    static const char *const per_layer[] = {"attn_out", "mlp_out", "hidden"};
    static const char *const router[] = {"router/logits", "router/topk_ids", "router/topk_weights"};
    for (size_t i = 0; i < c->n_taps; i++) { /* every tap: a layer the model has, one row a position */
        const cf_tap *t = &c->taps[i];
        c->chk->comparisons += 2;
        if (t->layer < 0 || t->layer >= g->layers)
            cf_find(c, kase, "tap %s names layer %d; config.json has %d", t->name, t->layer, g->layers);
        if (t->rows != rows)
            cf_find(c, kase, "tap %s has %lld rows for %lld new positions", t->name,
                    (long long)t->rows, (long long)rows);
    }
    for (int l = 0; l < g->layers; l++) {
        char name[96];
        for (size_t k = 0; k < 3; k++) {
            snprintf(name, sizeof name, "layers/%d/%s", l, per_layer[k]);
            const cf_tap *t = cf_tap_find(c, name);
            c->chk->comparisons++;
            if (!t)
                cf_find(c, kase, "no tap %s (config.json: %d layers)", name, g->layers);
            else if (t->cols != g->hidden)
                cf_find(c, kase, "tap %s has %lld columns, hidden_size is %d", name,
                        (long long)t->cols, g->hidden);
        }
        bool sparse = sparse_layer(g, l);
        for (size_t k = 0; k < 3; k++) {
            snprintf(name, sizeof name, "layers/%d/%s", l, router[k]);
            const cf_tap *t = cf_tap_find(c, name);
            int64_t cols = k == 0 ? g->experts : g->topk;
            c->chk->comparisons++;
            if (sparse && !t)
                cf_find(c, kase, "no tap %s: layer %d is sparse in config.json", name, l);
            else if (!sparse && t)
                cf_find(c, kase, "tap %s: layer %d is dense in config.json", name, l);
            else if (t && t->cols != cols)
                cf_find(c, kase, "tap %s has %lld columns, config.json says %lld", name,
                        (long long)t->cols, (long long)cols);
        }
    }
}

/* A prefill of 40 (and one of a single token), then 8 decode steps, each call's taps alone. */
int cf_check_taps(cf_ctx *c)
{
    enum { P = 40, D = 8 };
    if (!c->o->model_dir)
        return cf_error(c, "the taps check needs --model DIR (config.json)");
    if (c->limit < P + D)
        return cf_error(c, "the context is too short for the taps check");
    char path[4096];
    cpu_config g;
    golden_error e;
    snprintf(path, sizeof path, "%s/config.json", c->o->model_dir);
    if (cpu_config_load(path, &g, &e)) {
        c->err = e;
        return cf_error(c, NULL);
    }
    int32_t t[P + D];
    cf_tokens(c, t, P + D);
    int rc = 0;
    cf_taps_clear(c);
    if (cf_prefill_logits(c, 0, 0, t, 1, NULL) == 0) {
        taps_against(c, &g, "prefill of 1", 1);
        cf_taps_clear(c);
    } else {
        rc = 1;
    }
    if (rc == 0 && cf_prefill_logits(c, 0, 0, t, P, NULL) == 0) {
        taps_against(c, &g, "prefill of 40", P);
        cf_taps_clear(c);
    } else {
        rc = 1;
    }
    for (int s = 0; rc == 0 && s < D; s++) {
        char kase[64];
        snprintf(kase, sizeof kase, "decode at %d", P + s);
        if (cf_decode_logits(c, 0, t[P + s], NULL)) {
            rc = 1;
            break;
        }
        taps_against(c, &g, kase, 1);
        cf_taps_clear(c);
    }
    free(g.mlp_only);
    if (rc == 0)
        cf_cover(c, "layers", g.layers);
    return rc;
}

/* The same requests on two opens: lane 0 and the last lane, a prefill of 40 and 8 decode steps,
 * taps on and off; bitwise unless nondet_tol. */
int cf_check_determinism(cf_ctx *c)
{
    enum { P = 40, D = 8 };
    int64_t V = c->info->vocab_size;
    if (c->limit < P + D)
        return cf_error(c, "the context is too short for the determinism check");
    cf_ctx two;
    if (cf_open_ref(c, &two))
        return cf_error(c, NULL);
    int32_t t[P + D];
    cf_tokens(c, t, P + D);
    float *a = malloc((size_t)V * 4), *b = malloc((size_t)V * 4);
    int lanes[2] = {0, c->info->num_lanes - 1}, rc = 1;
    c->tap_discard = true;
    if (!a || !b) {
        cf_error(c, "out of memory");
        goto out;
    }
    for (int on = 1; on >= 0; on--) {
        if (cf_set_taps(c, on) || cf_set_taps(&two, on))
            goto out;
        for (int li = 0; li < (lanes[1] > 0 ? 2 : 1); li++)
            for (int s = 0; s <= D; s++) {
                int lane = lanes[li];
                int r1 = s ? cf_decode_logits(c, lane, t[P + s - 1], a)
                           : cf_prefill_logits(c, lane, 0, t, P, a);
                int r2 = r1 ? 1 : s ? cf_decode_logits(&two, lane, t[P + s - 1], b)
                                    : cf_prefill_logits(&two, lane, 0, t, P, b);
                if (r1 || r2)
                    goto out;
                char kase[64];
                snprintf(kase, sizeof kase, "lane %d position %d taps %s", lane, P - 1 + s,
                         on ? "on" : "off");
                c->chk->comparisons += (size_t)V;
                size_t at = 0;
                double maxd = 0;
                bool same = true;
                for (int64_t i = 0; i < V; i++) {
                    double d = fabs((double)a[i] - (double)b[i]);
                    bool eq = c->o->nondet_tol > 0 ? d <= c->o->nondet_tol
                                                   : memcmp(&a[i], &b[i], 4) == 0;
                    if (!eq && same)
                        at = (size_t)i;
                    if (!eq && (d > maxd || isnan(d)))
                        maxd = d;
                    same &= eq;
                }
                if (!same)
                    cf_find(c, kase, "two opens differ: first at vocab entry %zu (%.9g vs %.9g), "
                            "max |d| %.3g (tolerance %g)", at, (double)a[at], (double)b[at], maxd,
                            c->o->nondet_tol);
            }
    }
    rc = 0;
out:
    cf_close(&two);
    free(a), free(b);
    return rc;
}

/* npu-replay conform's kv-growth measurement (handbook section 10's curve): KV bytes written and
 * read per generated token, and the time per output token, as the context grows. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "replay/conform_priv.h"
#include "replay/cpu.h"


static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Contexts 16, 32, 64, ... up to the limit (or --max-context); at each, 8 timed decode steps.
 * Bytes come from config.json: a token writes K and V of every layer (2 * layers * kv_heads *
 * head_dim elements) and reads them for every position before it. A measurement: it passes
 * unless it cannot run. */
int cf_check_kv_growth(cf_ctx *c)
{
    enum { STEPS = 8 };
    char path[4096];
    cpu_config cfg;
    golden_error e;
    if (!c->o->model_dir)
        return cf_error(c, "kv-growth needs --model DIR (config.json)");
    snprintf(path, sizeof path, "%s/config.json", c->o->model_dir);
    if (cpu_config_load(path, &cfg, &e)) {
        c->err = e;
        return cf_error(c, NULL);
    }
    free(cfg.mlp_only);
    double elem = c->o->kv_elem_bytes > 0 ? c->o->kv_elem_bytes : 2;
    double per_pos = 2.0 * cfg.layers * cfg.kv_heads * cfg.head_dim * elem;
    size_t cap = 0;
    for (int64_t ctx = 16; ctx + STEPS <= c->limit; ctx *= 2)
        cap++;
    if (cap == 0)
        return cf_error(c, "the context is too short for kv-growth");
    c->chk->points = calloc(cap, sizeof *c->chk->points);
    int32_t *t = malloc((size_t)c->limit * 4);
    int rc = 1;
    if (!c->chk->points || !t) {
        cf_error(c, "out of memory");
        goto out;
    }
    cf_tokens(c, t, (size_t)c->limit);
    golden_backend_hooks none = {NULL, NULL, NULL, 0}; /* taps would be timed too */
    if (golden_backend_set_hooks(c->b, &none, &c->err)) {
        cf_error(c, NULL);
        goto out;
    }
    for (int64_t ctx = 16; ctx + STEPS <= c->limit; ctx *= 2) {
        double dt[STEPS];
        if (cf_prefill_logits(c, 0, 0, t, (size_t)ctx, NULL))
            goto out;
        for (int s = 0; s < STEPS; s++) {
            double t0 = cf_now();
            if (cf_decode_logits(c, 0, t[ctx + s], NULL))
                goto out;
            dt[s] = cf_now() - t0;
        }
        qsort(dt, STEPS, sizeof *dt, by_double);
        struct golden_conform_point *p = &c->chk->points[c->chk->n_points++];
        p->context = ctx;
        p->kv_write_bytes = per_pos;
        p->kv_read_bytes = per_pos * (double)(ctx + STEPS / 2);
        p->tpot_s = (dt[STEPS / 2 - 1] + dt[STEPS / 2]) / 2;
        c->chk->comparisons++;
    }
    rc = 0;
out:
    free(t);
    return rc;
}

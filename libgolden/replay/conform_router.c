/* npu-replay conform's router check (handbook section 11): the backend's top-k against the
 * reference rule applied to its own router logits, plus a tie and a NaN built on purpose. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "golden/doc.h"
#include "replay/conform_priv.h"
#include "replay/cpu.h"

typedef struct {
    bool norm;
    double tol, near;
    size_t ties; /* exact ties met */
} rt_rule;

/* The reference top-k of one token: softmax (double), ranks by probability, the lower expert
 * index first among equal probabilities. */
static void ref_topk(const float *lg, int E, int K, double *p, int *ids)
{
    double mx = -INFINITY, sum = 0;
    for (int e = 0; e < E; e++)
        mx = lg[e] > mx ? lg[e] : mx;
    for (int e = 0; e < E; e++)
        sum += (p[e] = exp((double)lg[e] - mx));
    for (int e = 0; e < E; e++)
        p[e] /= sum;
    for (int k = 0; k < K; k++) {
        int best = -1;
        for (int e = 0; e < E; e++) {
            bool used = false;
            for (int j = 0; j < k; j++)
                used |= ids[j] == e;
            if (!used && (best < 0 || p[e] > p[best]))
                best = e;
        }
        ids[k] = best;
    }
}

/* One token's routing decision against the rule; findings name layer, position and numbers. */
static void check_token(cf_ctx *c, rt_rule *r, const char *kase, int l, int64_t t, const float *lg,
                        const int32_t *ids, const float *w, int E, int K, double *p, int *ref)
{
    char where[96];
    snprintf(where, sizeof where, "layer %d position %lld", l, (long long)t);
    for (int e = 0; e < E; e++)
        if (!isfinite(lg[e])) {
            cf_find(c, kase, "%s: router logit %d is %g and the token was routed anyway", where,
                    e, (double)lg[e]);
            return;
        }
    ref_topk(lg, E, K, p, ref);
    double refsum = 0, sum = 0;
    for (int k = 0; k < K; k++)
        refsum += p[ref[k]];
    c->chk->comparisons += (size_t)(3 * K);
    for (int k = 0; k < K; k++) {
        if (ids[k] < 0 || ids[k] >= E) {
            cf_find(c, kase, "%s: rank %d names expert %d of %d", where, k, ids[k], E);
            return;
        }
        for (int j = 0; j < k; j++)
            if (ids[j] == ids[k])
                cf_find(c, kase, "%s: expert %d chosen twice (ranks %d and %d)", where, ids[k], j, k);
        if (ids[k] != ref[k]) {
            if (lg[ids[k]] == lg[ref[k]])
                cf_find(c, kase, "%s: rank %d is expert %d, the tie with expert %d (both %.9g) goes to the lower index",
                        where, k, ids[k], ref[k], (double)lg[ref[k]]);
            else if (fabs(p[ids[k]] - p[ref[k]]) > r->near)
                cf_find(c, kase, "%s: rank %d is expert %d (p %.9g), the reference has expert %d (p %.9g)",
                        where, k, ids[k], p[ids[k]], ref[k], p[ref[k]]);
        } else if (k + 1 < K && lg[ref[k]] == lg[ref[k + 1]]) {
            r->ties++;
        }
        double want = p[ids[k]] / (r->norm ? refsum : 1.0);
        if (!(fabs((double)w[k] - want) <= r->tol))
            cf_find(c, kase, "%s: weight of expert %d is %.9g, the reference %.9g (tolerance %g)",
                    where, ids[k], (double)w[k], want, r->tol);
        sum += w[k];
    }
    if (r->norm && !(fabs(sum - 1.0) <= r->tol * K))
        cf_find(c, kase, "%s: top-%d weights sum to %.9g, not 1 (norm_topk_prob)", where, K, sum);
}

/* Every router tap of the captured run against the rule (its row 0 is position pos0); returns
 * the layers seen. */
static int check_taps_at(cf_ctx *c, rt_rule *r, const char *kase, int64_t pos0)
{
    int E = c->info->num_experts, K = c->info->experts_per_tok, layers = 0;
    double *p = malloc((size_t)E * sizeof *p);
    int *ref = malloc((size_t)E * sizeof *ref);
    for (int l = 0; p && ref && l < c->info->num_layers; l++) {
        char n1[64], n2[64], n3[64];
        snprintf(n1, sizeof n1, "layers/%d/router/logits", l);
        snprintf(n2, sizeof n2, "layers/%d/router/topk_ids", l);
        snprintf(n3, sizeof n3, "layers/%d/router/topk_weights", l);
        const cf_tap *tl = cf_tap_find(c, n1), *ti = cf_tap_find(c, n2), *tw = cf_tap_find(c, n3);
        if (!tl && !ti && !tw)
            continue; /* a dense layer */
        layers++;
        if (!tl || !ti || !tw || tl->cols != E || ti->cols != K || tw->cols != K ||
            ti->rows != tl->rows || tw->rows != tl->rows) {
            cf_find(c, kase, "layer %d: router taps missing or of the wrong shape", l);
            continue;
        }
        for (int64_t t = 0; t < tl->rows; t++)
            check_token(c, r, kase, l, pos0 + t, (const float *)tl->data + t * E,
                        (const int32_t *)ti->data + t * K, (const float *)tw->data + t * K, E, K,
                        p, ref);
    }
    free(p);
    free(ref);
    return layers;
}

static int check_taps(cf_ctx *c, rt_rule *r, const char *kase)
{
    return check_taps_at(c, r, kase, 0);
}

/* Copy src to dst (the file holding the embeddings: the only one the derived model changes). */
static int copy_file(const char *src, const char *dst)
{
    int in = open(src, O_RDONLY | O_CLOEXEC), out = -1, rc = -1;
    if (in >= 0)
        out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    char buf[1 << 16];
    ssize_t n;
    if (out >= 0) {
        while ((n = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)n) != n)
                break;
        rc = n == 0 ? 0 : -1;
    }
    if (out >= 0 && close(out) != 0)
        rc = -1;
    if (in >= 0)
        close(in);
    return rc;
}

/* In a copied safetensors file holding model.embed_tokens.weight: row V-1 zero (an exact tie of
 * every router logit at position 0) and row V-2 NaN. 1 = not in this file, -1 = error. */
static int patch_embed(const char *path, int V)
{
    FILE *f = fopen(path, "r+b");
    if (!f)
        return -1;
    unsigned char h8[8];
    uint64_t hl = 0;
    int rc = -1;
    char *hdr = NULL;
    if (fread(h8, 1, 8, f) == 8) {
        for (int i = 7; i >= 0; i--)
            hl = hl << 8 | h8[i];
        hdr = hl < (1u << 26) ? malloc(hl) : NULL;
    }
    /* the header through the document layer's strict JSON reader (a duplicated key, invalid
     * UTF-8 or NUL is refused, as the safetensors ingest refuses it) */
    golden_doc *doc = NULL;
    golden_error derr;
    if (hdr && fread(hdr, 1, hl, f) == hl &&
        golden_doc_load_json(path, hdr, hl, 1, &doc, &derr) != GOLDEN_OK)
        doc = NULL;
    json_t *j = doc ? golden_doc_root(doc) : NULL;
    json_t *e = json_object_get(j, "model.embed_tokens.weight");
    const char *dt = json_string_value(json_object_get(e, "dtype"));
    json_t *sh = json_object_get(e, "shape"), *off = json_object_get(e, "data_offsets");
    if (j && !e)
        rc = 1;
    if (dt && json_array_size(sh) == 2 && json_array_size(off) == 2) {
        long long cols = json_integer_value(json_array_get(sh, 1));
        long long base = 8 + (long long)hl + json_integer_value(json_array_get(off, 0));
        size_t w = strcmp(dt, "F32") == 0 ? 4 : 2;
        unsigned char zero[4] = {0}, nan[4];
        uint32_t nb = strcmp(dt, "F32") == 0 ? 0x7fc00000u : strcmp(dt, "F16") == 0 ? 0x7e00u : 0x7fc0u;
        memcpy(nan, &nb, 4); /* little-endian host, as the safetensors loader assumes */
        rc = 0;
        for (long long i = 0; rc == 0 && i < cols; i++) {
            if (fseek(f, base + ((long long)(V - 1) * cols + i) * (long long)w, SEEK_SET) ||
                fwrite(zero, 1, w, f) != w ||
                fseek(f, base + ((long long)(V - 2) * cols + i) * (long long)w, SEEK_SET) ||
                fwrite(nan, 1, w, f) != w)
                rc = -1;
        }
    }
    golden_doc_free(doc);
    free(hdr);
    if (fclose(f) != 0 && rc == 0)
        rc = -1;
    return rc;
}

/* Remove the derived folder (links and copies only). */
static void rm_derived(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char p[4096];
    while (d && (de = readdir(d)))
        if (de->d_name[0] != '.') {
            snprintf(p, sizeof p, "%.3800s/%.255s", dir, de->d_name);
            unlink(p);
        }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* The model folder again, every file linked but the one with the embeddings, which is copied
 * and patched (patch_embed). dir receives the new folder's path. */
static int derive_model(cf_ctx *c, char *dir, size_t dlen)
{
    const char *src = c->o->model_dir;
    snprintf(dir, dlen, "%s/golden-conform-XXXXXX", c->o->scratch_dir ? c->o->scratch_dir : "/tmp");
    if (!mkdtemp(dir))
        return cf_error(c, "cannot create the folder of the derived tie/NaN model");
    DIR *d = opendir(src);
    struct dirent *de;
    int found = 0, bad = !d;
    char a[4608], b[8448], abs_src[4096];
    if (!realpath(src, abs_src))
        bad = 1;
    while (!bad && (de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        snprintf(a, sizeof a, "%.4095s/%.255s", abs_src, de->d_name);
        snprintf(b, sizeof b, "%.4095s/%.255s", dir, de->d_name);
        size_t nl = strlen(de->d_name);
        int pr = 1;
        if (nl > 12 && strcmp(de->d_name + nl - 12, ".safetensors") == 0 && !found) {
            if (copy_file(a, b) != 0 || (pr = patch_embed(b, c->info->vocab_size)) < 0)
                bad = 1;
            else if (pr == 0)
                found = 1;
            if (pr != 0 && !bad)
                unlink(b);
        }
        if (!bad && pr != 0 && symlink(a, b) != 0)
            bad = 1;
    }
    if (d)
        closedir(d);
    if (bad || !found) {
        rm_derived(dir);
        return cf_error(c, bad ? "cannot build the derived tie/NaN model"
                               : "no safetensors file holds model.embed_tokens.weight");
    }
    return 0;
}

/* The built cases: a zero embedding ties every router logit; a NaN one must be refused. */
static int built_cases(cf_ctx *c, rt_rule *r)
{
    char dir[4096];
    if (derive_model(c, dir, sizeof dir))
        return 1;
    cf_close(c);
    int rc = cf_open(c, dir);
    int32_t tie = c->info ? c->info->vocab_size - 1 : 0, nan = tie - 1;
    if (rc == 0)
        rc = cf_prefill_logits(c, 0, 0, &tie, 1, NULL);
    if (rc == 0) {
        const cf_tap *tl = cf_tap_find(c, "layers/0/router/logits");
        bool all_eq = tl != NULL;
        for (int e = 1; tl && e < tl->cols; e++)
            all_eq &= ((const float *)tl->data)[e] == ((const float *)tl->data)[0];
        if (!all_eq) /* the construction failed: the case proves nothing */
            rc = cf_error(c, c->chk->n_findings
                ? "the built tie case could not be built: the router logits of layer 0 did not "
                  "tie, because of the findings above"
                : "the built tie case did not tie the router logits of layer 0");
        else
            check_taps(c, r, "built tie");
    }
    for (int s = 0; rc == 0 && !c->o->fixed_points && s < 2 && s + 1 < c->limit; s++) { /* the tie on decode */
        cf_taps_clear(c);
        if ((rc = cf_decode_logits(c, 0, tie, NULL)) != 0)
            break;
        const cf_tap *tl = cf_tap_find(c, "layers/0/router/logits");
        bool all_eq = tl != NULL && tl->rows == 1, finite = tl != NULL;
        for (int e = 1; all_eq && e < tl->cols; e++)
            all_eq &= ((const float *)tl->data)[e] == ((const float *)tl->data)[0];
        for (int e = 0; finite && e < tl->cols; e++)
            finite &= isfinite(((const float *)tl->data)[e]) != 0;
        if (!all_eq && tl && !finite) /* a NaN routed on the tie's own row is a finding */
            check_taps_at(c, r, "built tie, decode", s + 1);
        if (!all_eq)
            rc = cf_error(c, c->chk->n_findings
                ? "the built tie case could not be built: the router logits of layer 0 on its decode "
                  "step did not tie, because of the findings above"
                : "the built tie case did not tie the router logits of layer 0 on decode");
        else if (check_taps_at(c, r, "built tie, decode", s + 1) == 0)
            cf_find(c, "built tie, decode", "no router taps for the decode step at position %d", s + 1);
        cf_cover(c, "tie_decode_positions", s + 1);
    }
    if (rc == 0 && !c->o->fixed_points && c->limit > 3) { /* NaN on decode: the decode graph */
        cf_taps_clear(c);
        c->chk->comparisons++;
        golden_error_clear(&c->err);
        if (golden_backend_decode(c->b, 0, nan, &c->err) == 0) {
            const cf_tap *ti = cf_tap_find(c, "layers/0/router/topk_ids");
            cf_find(c, "built NaN, decode", "a NaN router input on a decode step was routed "
                    "silently (layer 0 rank 0: expert %d)", ti ? ((const int32_t *)ti->data)[0] : -1);
        }
        cf_cover(c, "nan_decode_positions", 3);
    }
    if (rc == 0) {
        cf_taps_clear(c);
        c->chk->comparisons++;
        golden_error_clear(&c->err);
        if (golden_backend_prefill(c->b, 0, 0, &nan, 1, &c->err) == 0) {
            const cf_tap *ti = cf_tap_find(c, "layers/0/router/topk_ids");
            cf_find(c, "built NaN", "a NaN router input was routed silently (layer 0 rank 0: expert %d)",
                    ti ? ((const int32_t *)ti->data)[0] : -1);
        }
    }
    rm_derived(dir);
    return rc;
}

/* One lane (issue 28's coverage): a prefill of the whole context, every row against the rule
 * (the prefill graph's tiles up to the limit), then decode steps at pos[] in descending order,
 * each after truncating the lane to p (the rule is applied to the backend's own router logits,
 * so the tokens need not be a real sequence). */
static int lane_sweep(cf_ctx *c, rt_rule *r, int lane, const int32_t *t, const int64_t *pos,
                      size_t np)
{
    char kase[64];
    cf_taps_clear(c);
    snprintf(kase, sizeof kase, "prefill, lane %d", lane);
    if (cf_prefill_logits(c, lane, 0, t, (size_t)c->limit, NULL))
        return 1;
    if (check_taps_at(c, r, kase, 0) == 0)
        return cf_error(c, "the backend gives no router taps (layers/L/router/{logits,topk_ids,topk_weights})");
    snprintf(kase, sizeof kase, "decode, lane %d", lane);
    for (size_t i = np; i-- > 0;) {
        int64_t p = pos[i];
        golden_error_clear(&c->err);
        if (golden_backend_truncate(c->b, lane, p, &c->err))
            return cf_error(c, NULL);
        cf_taps_clear(c);
        if (cf_decode_logits(c, lane, t[p], NULL))
            return 1;
        if (check_taps_at(c, r, kase, p) == 0)
            cf_find(c, kase, "no router taps for the decode step at position %lld", (long long)p);
    }
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Every lane of cf_lanes: the boundary set scaled to the limit, plus CF_ROUTER_RANDOM seeded
 * positions of its own a lane (a fixed count, not the time budget: one decode step each is
 * cheap, and the coverage does not shrink on a loaded machine). */
#define CF_ROUTER_RANDOM 24
static int sweep_lanes(cf_ctx *c, rt_rule *r)
{
    int64_t L = c->limit, set[64 + CF_ROUTER_RANDOM];
    size_t ns = cf_boundaries(L, set, 64);
    int lanes[8], m = cf_lanes(c, lanes);
    int32_t *t = malloc((size_t)L * 4);
    if (!t)
        return cf_error(c, "out of memory");
    cf_tokens(c, t, (size_t)L);
    for (size_t i = 0; i < ns; i++)
        cf_cover(c, "decode_positions", set[i]);
    cf_cover(c, "prefill_rows", L);
    int rc = 0;
    for (int li = 0; rc == 0 && li < m; li++) {
        size_t n = ns;
        size_t nrand = c->o->budget > 0 ? CF_ROUTER_RANDOM : 0; /* --budget 0: none */
        for (size_t k = 0; k < nrand; k++) {
            int64_t p = cf_random_position(c, 1, L, set, n);
            if (p < 0)
                break;
            set[n++] = p;
            cf_cover(c, "random_decode_positions", p);
        }
        qsort(set, n, sizeof *set, cmp_i64);
        rc = lane_sweep(c, r, lanes[li], t, set, n);
        cf_cover(c, "lanes", lanes[li]);
        ns = cf_boundaries(L, set, 64); /* the next lane draws its own */
    }
    free(t);
    return rc;
}

int cf_check_router(cf_ctx *c)
{
    if (c->info->num_experts <= 0)
        return cf_error(c, "the model has no experts; leave router out of --checks");
    if (!c->o->model_dir)
        return cf_error(c, "the router check needs --model DIR (config.json and the derived tie model)");
    char path[4096];
    cpu_config cfg;
    golden_error e;
    snprintf(path, sizeof path, "%s/config.json", c->o->model_dir);
    if (cpu_config_load(path, &cfg, &e)) {
        c->err = e;
        return cf_error(c, NULL);
    }
    free(cfg.mlp_only);
    rt_rule r = {cfg.norm_topk,
                 c->o->router_tol > 0 ? c->o->router_tol
                 : c->info->logits_dtype == GOLDEN_BK_BF16 ? 1.0 / 128 : 1e-5,
                 1e-6, 0};
    r.near = r.tol < 1e-6 ? r.tol : 1e-6;
    c->tap_filter = "/router/";
    if (!c->o->fixed_points) {
        if (sweep_lanes(c, &r))
            return 1;
    } else { /* the pre-issue-28 fixed point: a 64-token prompt on lane 0 */
        int64_t N = c->limit < 64 ? c->limit : 64;
        int32_t t[64];
        cf_tokens(c, t, (size_t)N);
        if (cf_prefill_logits(c, 0, 0, t, (size_t)N, NULL))
            return 1;
        if (check_taps(c, &r, "prompt") == 0)
            return cf_error(c, "the backend gives no router taps (layers/L/router/{logits,topk_ids,topk_weights})");
    }
    cf_taps_clear(c);
    return built_cases(c, &r);
}

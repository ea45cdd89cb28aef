/* Tolerance policy of golden-diff: built-in first-round numbers of handbook section 6,
 * overridden by calculet-diff-policy/v1 files and the command line, resolved per tensor. */
#include "golden/policy.h"

#include <fnmatch.h>
#include <stddef.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "golden/doc.h"
#include "golden/schema.h"
#include "tensor/policy_private.h"

typedef struct {
    char *match;
    char *where;              /* "file:line:col" of the rule */
    bool optional;
    bool has_tier;
    golden_tier tier;
    bool has_compute;
    golden_dtype compute;
    double atol, rtol, eps; /* NaN = not set */
    golden_tier_limits limits; /* NaN = not set */
    int channel_axis;          /* -1 = not set */
} policy_rule;

struct golden_policy {
    golden_tier default_tier;
    bool default_tier_set;      /* a policy file named default_tier */
    bool norm_topk_prob;        /* router top-k weights must sum to 1 per row */
    uint64_t router_top_k;      /* experts per token for router logits; 0 = from topk_ids */
    bool has_compute;
    golden_dtype compute;
    double eps;
    golden_tier_limits tiers[GOLDEN_TIER_COUNT];
    double atol[GOLDEN_DTYPE_COUNT], rtol[GOLDEN_DTYPE_COUNT];
    policy_rule *rules;
    size_t n_rules;
    bool force_tier;
    golden_tier forced;
    double o_atol, o_rtol, o_eps;
};

void golden_policy_dtype_default(golden_dtype t, double *atol, double *rtol)
{
    switch (t) {
    case GOLDEN_F64: *atol = 1e-7; *rtol = 1e-7; break;
    case GOLDEN_F32: *atol = 1e-5; *rtol = 1.3e-6; break;
    case GOLDEN_F16: *atol = 1e-5; *rtol = 1e-3; break;
    case GOLDEN_BF16: *atol = 1e-5; *rtol = 1.6e-2; break;
    /* torch.testing has no fp8 defaults: one step of the format's mantissa, as for bf16 */
    /* ...and atol at least half the subnormal step (e4m3fn 2^-9, e5m2 2^-16), so a value
     * rounded correctly into the format is within tolerance at any magnitude */
    case GOLDEN_FP8_E4M3FN: *atol = 0x1p-10; *rtol = 0.125; break;
    case GOLDEN_FP8_E5M2: *atol = 1e-5; *rtol = 0.25; break; /* 2^-17 < 1e-5 */
    default: *atol = 0; *rtol = 0; break;
    }
}

static golden_tier_limits unset_limits(void)
{
    golden_tier_limits l = {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    return l;
}

/* The limits as an array of doubles (their order is the struct's). */
static double *lim_at(golden_tier_limits *l, int i)
{
    return &((double *)l)[i];
}
static const char *const limit_names[GOLDEN_LIMITS_N] = {
    "cosine_min", "top1_min", "top5_min", "near_tie_margin", "baseline_ratio", "rel_err_max",
    "norm_ratio_tol", "row_cosine_min", "kl_max", "logsoftmax_max_abs", "noise_floor"};

static int add_rule(golden_policy *p, const char *match, bool has_tier, golden_tier tier,
                    bool at_front)
{
    policy_rule *nr = realloc(p->rules, (p->n_rules + 1) * sizeof *nr);
    if (!nr)
        return -1;
    p->rules = nr;
    char *m = strdup(match);
    if (!m)
        return -1;
    if (at_front) {
        memmove(&p->rules[1], &p->rules[0], p->n_rules * sizeof *nr);
        nr = &p->rules[0];
    } else {
        nr = &p->rules[p->n_rules];
    }
    p->n_rules++;
    memset(nr, 0, sizeof *nr);
    nr->match = m;
    nr->has_tier = has_tier;
    nr->tier = tier;
    nr->atol = nr->rtol = nr->eps = NAN;
    nr->limits = unset_limits();
    nr->channel_axis = -1;
    return 0;
}

golden_policy *golden_policy_new(void)
{
    golden_policy *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->default_tier = GOLDEN_TIER_LAYER;
    p->eps = 1e-6;
    p->norm_topk_prob = true;
    /* Every default is justified in docs/golden-diff.md ("Default thresholds"). */
    static const double floors[GOLDEN_TIER_COUNT] = {0.25, 0.005, 0.002, 0, 0.005};
    for (int t = 0; t < GOLDEN_TIER_COUNT; t++) {
        golden_tier_limits *l = &p->tiers[t];
        l->cosine_min = 0.999;
        l->top1_min = 0.999;
        l->top5_min = 0.999;
        l->near_tie_margin = NAN;
        l->baseline_ratio = 1.25;
        l->rel_err_max = 0.02;
        l->norm_ratio_tol = 0.01;
        l->row_cosine_min = 0.999;
        l->kl_max = 0.01;
        l->logsoftmax_max_abs = 0.5;
        l->noise_floor = floors[t];
    }
    for (int d = 0; d < GOLDEN_DTYPE_COUNT; d++)
        golden_policy_dtype_default((golden_dtype)d, &p->atol[d], &p->rtol[d]);
    p->o_atol = p->o_rtol = p->o_eps = NAN;
    return p;
}

void golden_policy_free(golden_policy *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_rules; i++) {
        free(p->rules[i].match);
        free(p->rules[i].where);
    }
    free(p->rules);
    free(p);
}

/* A number field of obj into *dst when present; error when present but not a number. */
static int get_num(const json_t *obj, const char *key, double *dst, const char *where,
                   const char *ctx, golden_error *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    if (!json_is_number(v))
        return golden_fail_where(err, GOLDEN_EINVAL, "expected a number", "%s#%s/%s", where, ctx, key);
    double x = json_number_value(v);
    if (!(x >= 0))
        return golden_fail_where(err, GOLDEN_EINVAL, "expected a number >= 0", "%s#%s/%s", where, ctx, key);
    *dst = x;
    return 0;
}

static int get_limits(const json_t *obj, golden_tier_limits *l, const char *where,
                      const char *ctx, golden_error *err)
{
    for (int i = 0; i < GOLDEN_LIMITS_N; i++)
        if (get_num(obj, limit_names[i], lim_at(l, i), where, ctx, err))
            return -1;
    return 0;
}

static int get_dtype(const json_t *obj, bool *has, golden_dtype *d, const char *where,
                     const char *ctx, golden_error *err)
{
    json_t *v = json_object_get(obj, "compute_dtype");
    if (!v)
        return 0;
    if (!json_is_string(v) || golden_dtype_parse(json_string_value(v), d) != 0)
        return golden_fail_where(err, GOLDEN_EINVAL, "unknown dtype", "%s#%s/compute_dtype",
                                 where, ctx);
    *has = true;
    return 0;
}

static int get_tier(const json_t *v, golden_tier *t, const char *where, const char *ptr,
                    golden_error *err)
{
    if (!json_is_string(v) || golden_tier_parse(json_string_value(v), t) != 0)
        return golden_fail_where(err, GOLDEN_EINVAL, "expected one of kernel, layer, logits, tokens", "%s#%s",
                            where, ptr);
    return 0;
}

static int apply(golden_policy *p, const json_t *root, const char *where,
                 const golden_doc *doc, golden_error *err)
{
    if (!json_is_object(root))
        return golden_fail_what(err, GOLDEN_EINVAL, where, "a policy must be an object");
    json_t *v = json_object_get(root, "schema");
    if (!json_is_string(v) || strcmp(json_string_value(v), GOLDEN_SCHEMA_DIFF_POLICY) != 0)
        return golden_fail_where(err, GOLDEN_EINVAL, "schema must be \"" GOLDEN_SCHEMA_DIFF_POLICY "\"",
                            "%s#/schema", where);
    if ((v = json_object_get(root, "default_tier")) &&
        get_tier(v, &p->default_tier, where, "/default_tier", err))
        return -1;
    if (v)
        p->default_tier_set = true;
    if ((v = json_object_get(root, "norm_topk_prob"))) {
        if (!json_is_boolean(v))
            return golden_fail_where(err, GOLDEN_EINVAL, "expected true or false",
                                     "%s#/norm_topk_prob", where);
        p->norm_topk_prob = json_is_true(v);
    }
    if ((v = json_object_get(root, "router_top_k"))) {
        if (!json_is_integer(v) || json_integer_value(v) < 1)
            return golden_fail_where(err, GOLDEN_EINVAL, "expected an integer >= 1",
                                     "%s#/router_top_k", where);
        p->router_top_k = (uint64_t)json_integer_value(v);
    }
    if (get_num(root, "eps", &p->eps, where, "", err) ||
        get_dtype(root, &p->has_compute, &p->compute, where, "", err))
        return -1;
    json_t *tiers = json_object_get(root, "tiers");
    if (tiers) {
        const char *key;
        json_t *val;
        json_object_foreach(tiers, key, val) {
            golden_tier t;
            char ctx[300];
            snprintf(ctx, sizeof ctx, "/tiers/%s", key);
            if (golden_tier_parse(key, &t) != 0 || !json_is_object(val))
                return golden_fail_where(err, GOLDEN_EINVAL, "unknown tier (kernel, layer, logits, tokens, router)",
                                    "%s#%s", where, ctx);
            if (get_limits(val, &p->tiers[t], where, ctx, err))
                return -1;
        }
    }
    json_t *dtypes = json_object_get(root, "dtypes");
    if (dtypes) {
        const char *key;
        json_t *val;
        json_object_foreach(dtypes, key, val) {
            golden_dtype d;
            char ctx[300];
            snprintf(ctx, sizeof ctx, "/dtypes/%s", key);
            if (golden_dtype_parse(key, &d) != 0 || !json_is_object(val))
                return golden_fail_where(err, GOLDEN_EINVAL, "unknown dtype", "%s#%s", where, ctx);
            if (get_num(val, "atol", &p->atol[d], where, ctx, err) ||
                get_num(val, "rtol", &p->rtol[d], where, ctx, err))
                return -1;
        }
    }
    json_t *rules = json_object_get(root, "rules");
    if (rules) {
        if (!json_is_array(rules))
            return golden_fail_where(err, GOLDEN_EINVAL, "expected an array", "%s#/rules", where);
        /* The file's rules go before the ones already there, keeping their own order. */
        size_t n = json_array_size(rules);
        for (size_t k = n; k-- > 0;) {
            json_t *r = json_array_get(rules, k);
            char ctx[64];
            snprintf(ctx, sizeof ctx, "/rules/%zu", k);
            json_t *m = json_object_get(r, "match");
            if (!json_is_object(r) || !json_is_string(m))
                return golden_fail_where(err, GOLDEN_EINVAL, "a rule needs a string \"match\"", "%s#%s", where, ctx);
            golden_tier t = GOLDEN_TIER_KERNEL;
            json_t *tv = json_object_get(r, "tier");
            if (tv) {
                char tctx[80];
                snprintf(tctx, sizeof tctx, "%s/tier", ctx);
                if (get_tier(tv, &t, where, tctx, err))
                    return -1;
            }
            if (add_rule(p, json_string_value(m), tv != NULL, t, true))
                return golden_fail_what(err, GOLDEN_ENOMEM, where, "out of memory");
            policy_rule *pr = &p->rules[0];
            char pos[1200];
            int line = 0, col = 0;
            if (doc && (golden_doc_line(doc, r, &line, &col), line > 0))
                snprintf(pos, sizeof pos, "%s:%d:%d", where, line, col);
            else
                snprintf(pos, sizeof pos, "%s#%s", where, ctx);
            pr->where = strdup(pos);
            if (!pr->where)
                return golden_fail_what(err, GOLDEN_ENOMEM, where, "out of memory");
            json_t *opt = json_object_get(r, "optional");
            pr->optional = json_is_true(opt);
            json_t *ax = json_object_get(r, "channel_axis");
            if (ax && (!json_is_integer(ax) || json_integer_value(ax) < 0 ||
                       json_integer_value(ax) >= 32))
                return golden_fail_where(err, GOLDEN_EINVAL, "expected an axis, an integer from 0",
                                         "%s#%s/channel_axis", where, ctx);
            pr->channel_axis = ax ? (int)json_integer_value(ax) : -1;
            if (get_dtype(r, &pr->has_compute, &pr->compute, where, ctx, err) ||
                get_num(r, "atol", &pr->atol, where, ctx, err) ||
                get_num(r, "rtol", &pr->rtol, where, ctx, err) ||
                get_num(r, "eps", &pr->eps, where, ctx, err) ||
                get_limits(r, &pr->limits, where, ctx, err))
                return -1;
        }
    }
    return 0;
}

int golden_policy_apply_json(golden_policy *p, const json_t *root, const char *where,
                             golden_error *err)
{
    return apply(p, root, where, NULL, err);
}

int golden_policy_load(golden_policy *p, const char *path, golden_error *err)
{
    golden_doc *doc = NULL;
    golden_schema *schema = NULL;
    int rc = -1;
    if (golden_doc_load_file(path, &doc, err) != 0)
        goto out;
    if (golden_schema_load(GOLDEN_SCHEMA_DIFF_POLICY, &schema, err) != 0)
        goto out;
    if (golden_schema_check(schema, doc, err) != 0)
        goto out;
    rc = apply(p, golden_doc_root(doc), path, doc, err);
out:
    golden_schema_free(schema);
    golden_doc_free(doc);
    return rc;
}

uint64_t golden_policy_router_top_k(const golden_policy *p)
{
    return p->router_top_k;
}

bool golden_policy_norm_topk_prob(const golden_policy *p)
{
    return p->norm_topk_prob;
}

void golden_policy_force_tier(golden_policy *p, golden_tier t)
{
    p->force_tier = true;
    p->forced = t;
}

void golden_policy_override(golden_policy *p, double atol, double rtol, double eps)
{
    if (!isnan(atol))
        p->o_atol = atol;
    if (!isnan(rtol))
        p->o_rtol = rtol;
    if (!isnan(eps))
        p->o_eps = eps;
}

static void take(double *dst, double v)
{
    if (!isnan(v))
        *dst = v;
}

/* Built-in name patterns of the final outputs (case-insensitive), by the reference's kind. */
/* Small parameter tensors judged element by element (issue 25): quantisation scales and
 * zero points, biases, norm weights. */
static const char *const kernel_names[] = {"*scale*", "*zero_point*", "*bias*", "*norm*weight*"};

static bool builtin_tier(const char *name, golden_dtype ref, int rank, golden_tier *t)
{
    /* router taps first: their ids would otherwise fall under *_ids (tokens), their logits
     * under *logits* (a fixed top-5, not the model's experts per token) */
    if (fnmatch("*/router/topk_ids", name, FNM_CASEFOLD) == 0 ||
        (golden_dtype_is_float(ref) && fnmatch("*/router/logits", name, FNM_CASEFOLD) == 0) ||
        fnmatch("*/router/topk_weights", name, FNM_CASEFOLD) == 0) {
        *t = GOLDEN_TIER_ROUTER;
        return true;
    }
    if (golden_dtype_is_float(ref)) {
        if (fnmatch("*logits*", name, FNM_CASEFOLD) == 0) {
            *t = GOLDEN_TIER_LOGITS;
            return true;
        }
        /* a 1-D tensor, or a parameter-like name: the kernel tier, not waved through by a
         * cosine over a few hundred values */
        bool kernel = rank == 1;
        for (size_t i = 0; !kernel && i < sizeof kernel_names / sizeof *kernel_names; i++)
            kernel = fnmatch(kernel_names[i], name, FNM_CASEFOLD) == 0;
        if (kernel)
            *t = GOLDEN_TIER_KERNEL;
        return kernel;
    }
    if (fnmatch("*tokens*", name, FNM_CASEFOLD) == 0 || fnmatch("*_ids", name, FNM_CASEFOLD) == 0) {
        *t = GOLDEN_TIER_TOKENS;
        return true;
    }
    *t = GOLDEN_TIER_KERNEL; /* any other integer tensor: exact */
    return true;
}

void golden_policy_resolve(const golden_policy *p, const char *name, golden_dtype ref,
                           golden_dtype cand, golden_judge *out)
{
    golden_policy_resolve_rank(p, name, ref, cand, -1, out);
}

void golden_policy_resolve_rank(const golden_policy *p, const char *name, golden_dtype ref,
                                golden_dtype cand, int rank, golden_judge *out)
{
    lg_policy_resolve_why(p, name, ref, cand, rank, false, out, NULL);
}

const char *const lg_tier_why_names[LG_TIER_WHY_N] = {
    "a policy rule",
    "its name (a built-in pattern) or rank 1",
    "an integer dtype (name patterns for tokens)",
    "default for tensors of files that are not goldens",
    "the policy's default_tier",
    "the default tier",
    "--tier",
};

void lg_policy_resolve_why(const golden_policy *p, const char *name, golden_dtype ref,
                           golden_dtype cand, int rank, bool foreign, golden_judge *out,
                           const char **why)
{
    const char *w = lg_tier_why_names[0];
    (void)cand; /* the candidate's storage never loosens the tolerance */
    out->rule = -1;
    out->channel_axis = -1;
    bool tier_set = false, has_compute = false;
    golden_dtype compute = ref;
    golden_tier_limits lim = unset_limits();
    double atol = NAN, rtol = NAN, eps = NAN;
    for (size_t i = 0; i < p->n_rules; i++) {
        const policy_rule *r = &p->rules[i];
        if (fnmatch(r->match, name, 0) != 0)
            continue;
        if (out->rule < 0)
            out->rule = (int)i;
        if (!tier_set && r->has_tier) {
            out->tier = r->tier;
            tier_set = true;
        }
        if (!has_compute && r->has_compute) {
            compute = r->compute;
            has_compute = true;
        }
        if (out->channel_axis < 0)
            out->channel_axis = r->channel_axis;
        if (isnan(atol))
            atol = r->atol;
        if (isnan(rtol))
            rtol = r->rtol;
        if (isnan(eps))
            eps = r->eps;
        for (int k = 0; k < GOLDEN_LIMITS_N; k++)
            if (isnan(*lim_at(&lim, k)))
                *lim_at(&lim, k) = *lim_at((golden_tier_limits *)&r->limits, k);
    }
    if (!tier_set && builtin_tier(name, ref, rank, &out->tier))
        w = golden_dtype_is_float(ref) ? lg_tier_why_names[1] : lg_tier_why_names[2];
    else if (!tier_set && foreign && !p->default_tier_set) {
        /* a file that is not a golden, whose name gives no tier: elementwise, like
         * torch.testing.assert_close (docs/golden-diff.md "Tiers") */
        out->tier = GOLDEN_TIER_KERNEL;
        w = lg_tier_why_names[3];
    } else if (!tier_set) {
        out->tier = p->default_tier;
        w = p->default_tier_set ? lg_tier_why_names[4] : lg_tier_why_names[5];
    }
    if (p->force_tier)
        out->tier = p->forced, w = lg_tier_why_names[6];
    if (why)
        *why = w;
    if (!has_compute && p->has_compute)
        compute = p->compute;
    out->tol_dtype = compute;
    out->limits = p->tiers[out->tier];
    for (int k = 0; k < GOLDEN_LIMITS_N; k++)
        if (!isnan(*lim_at(&lim, k)))
            *lim_at(&out->limits, k) = *lim_at(&lim, k);
    out->atol = p->atol[compute];
    out->rtol = p->rtol[compute];
    out->eps = p->eps;
    take(&out->atol, atol);
    take(&out->rtol, rtol);
    take(&out->eps, eps);
    take(&out->atol, p->o_atol);
    take(&out->rtol, p->o_rtol);
    take(&out->eps, p->o_eps);
}

size_t golden_policy_rule_count(const golden_policy *p)
{
    return p->n_rules;
}

void golden_policy_rule_at(const golden_policy *p, size_t i, const char **match,
                           const char **where, bool *optional)
{
    *match = p->rules[i].match;
    *where = p->rules[i].where;
    *optional = p->rules[i].optional;
}

int golden_policy_check_matched(const golden_policy *p, const char *const *names, size_t n,
                                const char *what, golden_error *err)
{
    for (size_t i = 0; i < p->n_rules; i++) {
        const policy_rule *r = &p->rules[i];
        if (r->optional)
            continue;
        size_t k = 0;
        while (k < n && fnmatch(r->match, names[k], 0) != 0)
            k++;
        if (k == n)
            return golden_fail_what(err, GOLDEN_EINVAL, r->where ? r->where : "policy",
                                    "rule \"%s\" matched no tensor of %s (a misspelt glob drops "
                                    "its gate; say optional: true if it may match nothing)",
                                    r->match, what);
    }
    return 0;
}

static int set_num(json_t *obj, const char *key, double v)
{
    if (isnan(v))
        return 0;
    return json_object_set_new(obj, key, json_real(v));
}

static int limits_json(json_t *obj, const golden_tier_limits *l)
{
    int bad = 0;
    for (int i = 0; i < GOLDEN_LIMITS_N; i++)
        bad |= set_num(obj, limit_names[i], *lim_at((golden_tier_limits *)l, i));
    return bad;
}

json_t *golden_policy_to_json(const golden_policy *p)
{
    json_t *root = json_object(), *tiers = json_object(), *dtypes = json_object(),
           *rules = json_array();
    int bad = !root || !tiers || !dtypes || !rules;
    if (!bad) {
        bad |= json_object_set_new(root, "schema", json_string(GOLDEN_SCHEMA_DIFF_POLICY));
        bad |= json_object_set_new(root, "default_tier",
                                   json_string(golden_tier_name(p->default_tier)));
        bad |= set_num(root, "eps", p->eps);
        bad |= json_object_set_new(root, "norm_topk_prob", json_boolean(p->norm_topk_prob));
        if (p->router_top_k)
            bad |= json_object_set_new(root, "router_top_k", json_integer((json_int_t)p->router_top_k));
        if (p->has_compute)
            bad |= json_object_set_new(root, "compute_dtype",
                                       json_string(golden_dtype_name(p->compute)));
        for (int t = 0; t < GOLDEN_TIER_COUNT; t++) {
            json_t *o = json_object();
            bad |= !o || limits_json(o, &p->tiers[t]);
            bad |= json_object_set_new(tiers, golden_tier_name((golden_tier)t), o);
        }
        for (int d = 0; d < GOLDEN_DTYPE_COUNT; d++) {
            json_t *o = json_object();
            bad |= !o || set_num(o, "atol", p->atol[d]) || set_num(o, "rtol", p->rtol[d]);
            bad |= json_object_set_new(dtypes, golden_dtype_name((golden_dtype)d), o);
        }
        for (size_t i = 0; i < p->n_rules; i++) {
            const policy_rule *r = &p->rules[i];
            json_t *o = json_object();
            bad |= !o || json_object_set_new(o, "match", json_string(r->match));
            if (!o)
                continue;
            if (r->has_tier)
                bad |= json_object_set_new(o, "tier", json_string(golden_tier_name(r->tier)));
            if (r->has_compute)
                bad |= json_object_set_new(o, "compute_dtype",
                                           json_string(golden_dtype_name(r->compute)));
            if (r->optional)
                bad |= json_object_set_new(o, "optional", json_true());
            if (r->channel_axis >= 0)
                bad |= json_object_set_new(o, "channel_axis", json_integer(r->channel_axis));
            bad |= set_num(o, "atol", r->atol) | set_num(o, "rtol", r->rtol) |
                   set_num(o, "eps", r->eps) | limits_json(o, &r->limits);
            bad |= json_array_append_new(rules, o);
        }
    }
    if (!bad) {
        bad |= json_object_set_new(root, "tiers", tiers);
        tiers = NULL;
        bad |= json_object_set_new(root, "dtypes", dtypes);
        dtypes = NULL;
        bad |= json_object_set_new(root, "rules", rules);
        rules = NULL;
    }
    json_decref(tiers);
    json_decref(dtypes);
    json_decref(rules);
    if (bad) {
        json_decref(root);
        return NULL;
    }
    return root;
}

json_t *golden_policy_overrides_json(const golden_policy *p)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int bad = 0;
    if (p->force_tier)
        bad |= json_object_set_new(o, "tier", json_string(golden_tier_name(p->forced)));
    bad |= set_num(o, "atol", p->o_atol) | set_num(o, "rtol", p->o_rtol) |
           set_num(o, "eps", p->o_eps);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The source of one field for golden_policy_explain. */
static void explain_src(FILE *f, const policy_rule *r)
{
    fprintf(f, "rule \"%s\"%s%s%s", r->match, r->where ? " (" : "", r->where ? r->where : "",
            r->where ? ")" : "");
}

static void explain_num(FILE *f, const char *field, double v, const policy_rule *r,
                        const char *otherwise)
{
    fprintf(f, "  %-20s %-12.6g ", field, v);
    if (r)
        explain_src(f, r);
    else
        fputs(otherwise, f);
    fputc('\n', f);
}

/* The first matching rule that sets a number field (offset into policy_rule), or NULL. */
static const policy_rule *first_setting(const golden_policy *p, const char *name, size_t off)
{
    for (size_t i = 0; i < p->n_rules; i++) {
        const policy_rule *r = &p->rules[i];
        double v;
        memcpy(&v, (const char *)r + off, sizeof v);
        if (!isnan(v) && fnmatch(r->match, name, 0) == 0)
            return r;
    }
    return NULL;
}

char *golden_policy_explain(const golden_policy *p, const char *name, golden_dtype ref,
                            golden_dtype cand, int rank)
{
    return lg_policy_explain_why(p, name, ref, cand, rank, false);
}

char *lg_policy_explain_why(const golden_policy *p, const char *name, golden_dtype ref,
                            golden_dtype cand, int rank, bool foreign)
{
    golden_judge j;
    const char *why = NULL;
    lg_policy_resolve_why(p, name, ref, cand, rank, foreign, &j, &why);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    fprintf(f, "%s (reference %s, rank %d): each field and where it came from\n", name,
            golden_dtype_name(ref), rank);
    const policy_rule *tr = NULL, *cr = NULL, *xr = NULL;
    for (size_t i = 0; i < p->n_rules; i++) {
        const policy_rule *r = &p->rules[i];
        if (fnmatch(r->match, name, 0) != 0)
            continue;
        if (!tr && r->has_tier)
            tr = r;
        if (!cr && r->has_compute)
            cr = r;
        if (!xr && r->channel_axis >= 0)
            xr = r;
    }
    golden_tier bt;
    fprintf(f, "  %-20s %-12s ", "tier", golden_tier_name(j.tier));
    if (p->force_tier)
        fputs("--tier", f);
    else if (tr)
        explain_src(f, tr);
    else if (builtin_tier(name, ref, rank, &bt))
        fputs("built-in name and type patterns (docs/golden-diff.md)", f);
    else if (why == lg_tier_why_names[3])
        fputs("default for files that are not goldens: no rule, name pattern or default_tier "
              "gives one; elementwise with the dtype's tolerances", f);
    else
        fputs("default_tier", f);
    fprintf(f, "\n  %-20s %-12s ", "compute_dtype", golden_dtype_name(j.tol_dtype));
    if (cr)
        explain_src(f, cr);
    else
        fputs(p->has_compute ? "policy compute_dtype" : "the reference's dtype", f);
    if (xr) {
        fprintf(f, "\n  %-20s %-12d ", "channel_axis", j.channel_axis);
        explain_src(f, xr);
    } else {
        fprintf(f, "\n  %-20s %-12s %s", "channel_axis", "last", "built-in layout [tokens, hidden]");
    }
    fputc('\n', f);
    char table[96];
    snprintf(table, sizeof table, "dtype table (%s)", golden_dtype_name(j.tol_dtype));
    const policy_rule *ar = first_setting(p, name, offsetof(policy_rule, atol)),
                      *rr = first_setting(p, name, offsetof(policy_rule, rtol)),
                      *er = first_setting(p, name, offsetof(policy_rule, eps));
    explain_num(f, "atol", j.atol, isnan(p->o_atol) ? ar : NULL, isnan(p->o_atol) ? table : "--atol");
    explain_num(f, "rtol", j.rtol, isnan(p->o_rtol) ? rr : NULL, isnan(p->o_rtol) ? table : "--rtol");
    explain_num(f, "eps", j.eps, isnan(p->o_eps) ? er : NULL, isnan(p->o_eps) ? "policy eps" : "--eps");
    char tt[96];
    snprintf(tt, sizeof tt, "tier table (%s)", golden_tier_name(j.tier));
    for (int k = 0; k < GOLDEN_LIMITS_N; k++) {
        size_t off = offsetof(policy_rule, limits) + (size_t)k * sizeof(double);
        double v = *lim_at(&j.limits, k);
        if (isnan(v) && k == 3) {
            fprintf(f, "  %-20s %-12s %s\n", limit_names[k], "one step", tt);
            continue;
        }
        explain_num(f, limit_names[k], v, first_setting(p, name, off), tt);
    }
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

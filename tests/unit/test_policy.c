/* CUnit tests of the tolerance policy (built-in numbers, file rules, overrides) and of the
 * name map that policy files carry. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_main.h"
#include "golden/namemap.h"
#include "golden/policy.h"

static void test_builtin(void)
{
    golden_policy *p = golden_policy_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    golden_judge j;
    golden_policy_resolve(p, "layers/0/out", GOLDEN_F32, GOLDEN_F32, &j);
    CU_ASSERT_EQUAL(j.tier, GOLDEN_TIER_LAYER);
    CU_ASSERT_DOUBLE_EQUAL(j.atol, 1e-5, 0);
    CU_ASSERT_DOUBLE_EQUAL(j.rtol, 1.3e-6, 0);
    CU_ASSERT_DOUBLE_EQUAL(j.eps, 1e-6, 0);
    CU_ASSERT_DOUBLE_EQUAL(j.limits.cosine_min, 0.999, 0);
    CU_ASSERT_EQUAL(j.rule, -1);
    /* the tolerance is the reference's dtype's: a bf16 candidate does not loosen it */
    golden_policy_resolve(p, "x", GOLDEN_F32, GOLDEN_BF16, &j);
    CU_ASSERT_DOUBLE_EQUAL(j.rtol, 1.3e-6, 0);
    CU_ASSERT_EQUAL(j.tol_dtype, GOLDEN_F32);
    golden_policy_resolve(p, "x", GOLDEN_F32, GOLDEN_FP8_E5M2, &j);
    CU_ASSERT_DOUBLE_EQUAL(j.rtol, 1.3e-6, 0);
    CU_ASSERT_DOUBLE_EQUAL(j.atol, 1e-5, 0);
    golden_policy_resolve(p, "x", GOLDEN_F16, GOLDEN_F16, &j);
    CU_ASSERT_DOUBLE_EQUAL(j.rtol, 1e-3, 0);
    golden_policy_resolve(p, "x", GOLDEN_I32, GOLDEN_I64, &j);
    CU_ASSERT_DOUBLE_EQUAL(j.atol, 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(j.rtol, 0, 0);
    golden_policy_resolve(p, "logits", GOLDEN_F32, GOLDEN_F32, &j);
    CU_ASSERT_EQUAL(j.tier, GOLDEN_TIER_LOGITS);
    CU_ASSERT_DOUBLE_EQUAL(j.limits.top1_min, 0.999, 0);
    CU_ASSERT_DOUBLE_EQUAL(j.limits.top5_min, 0.999, 0);
    golden_policy_resolve(p, "run/3/logits", GOLDEN_F32, GOLDEN_F32, &j);
    CU_ASSERT_EQUAL(j.tier, GOLDEN_TIER_LOGITS);
    /* name patterns, case-insensitive, by the reference's kind */
    static const char *const logit_names[] = {"router_logits", "decode/logits/step0",
                                              "model/Logits", "logits.0"};
    for (int i = 0; i < 4; i++) {
        golden_policy_resolve(p, logit_names[i], GOLDEN_F32, GOLDEN_F32, &j);
        CU_ASSERT_EQUAL(j.tier, GOLDEN_TIER_LOGITS);
    }
    golden_policy_resolve(p, "greedy/tokens", GOLDEN_I32, GOLDEN_I32, &j);
    CU_ASSERT_EQUAL(j.tier, GOLDEN_TIER_TOKENS);
    golden_policy_resolve(p, "output_ids", GOLDEN_I64, GOLDEN_I64, &j);
    CU_ASSERT_EQUAL(j.tier, GOLDEN_TIER_TOKENS);
    golden_policy_resolve(p, "Gen/Tokens", GOLDEN_I64, GOLDEN_I64, &j);
    CU_ASSERT_EQUAL(j.tier, GOLDEN_TIER_TOKENS);
    /* any other integer tensor is compared exactly at the kernel tier */
    golden_policy_resolve(p, "moe/top2_experts", GOLDEN_I32, GOLDEN_I32, &j);
    CU_ASSERT_EQUAL(j.tier, GOLDEN_TIER_KERNEL);
    /* a float named like tokens is not a token sequence */
    golden_policy_resolve(p, "tokens_embedding", GOLDEN_F32, GOLDEN_F32, &j);
    CU_ASSERT_EQUAL(j.tier, GOLDEN_TIER_LAYER);
    /* the near-tie margin follows the dtype's step unless a policy sets it */
    CU_ASSERT_TRUE(isnan(j.limits.near_tie_margin));
    golden_policy_free(p);
}

static void test_file_rules(void)
{
    const char *text =
        "{\"schema\": \"calculet-diff-policy/v1\", \"default_tier\": \"kernel\", \"eps\": 1e-3,"
        " \"tiers\": {\"layer\": {\"cosine_min\": 0.995}},"
        " \"dtypes\": {\"bf16\": {\"rtol\": 0.02}},"
        " \"rules\": [{\"match\": \"layers/*/attn/out\", \"tier\": \"kernel\", \"atol\": 0.5},"
        "            {\"match\": \"layers/*\", \"tier\": \"layer\", \"cosine_min\": 0.99},"
        "            {\"match\": \"moe/*\", \"rtol\": 0.25}]}";
    json_error_t je;
    json_t *root = json_loads(text, 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    golden_policy *p = golden_policy_new();
    golden_error err;
    CU_ASSERT_EQUAL(golden_policy_apply_json(p, root, "p.json", &err), 0);
    golden_judge j;
    golden_policy_resolve(p, "layers/3/attn/out", GOLDEN_F32, GOLDEN_F32, &j);
    CU_ASSERT_EQUAL(j.tier, GOLDEN_TIER_KERNEL);
    CU_ASSERT_DOUBLE_EQUAL(j.atol, 0.5, 0);
    CU_ASSERT_DOUBLE_EQUAL(j.rtol, 1.3e-6, 0);
    CU_ASSERT_DOUBLE_EQUAL(j.eps, 1e-3, 0);
    CU_ASSERT_EQUAL(j.rule, 0);
    golden_policy_resolve(p, "layers/3/mlp", GOLDEN_F32, GOLDEN_BF16, &j);
    CU_ASSERT_EQUAL(j.tier, GOLDEN_TIER_LAYER);
    CU_ASSERT_DOUBLE_EQUAL(j.limits.cosine_min, 0.99, 0);
    CU_ASSERT_DOUBLE_EQUAL(j.rtol, 1.3e-6, 0); /* f32 reference: bf16's 0.02 does not apply */
    golden_policy_resolve(p, "layers/3/mlp", GOLDEN_BF16, GOLDEN_BF16, &j);
    CU_ASSERT_DOUBLE_EQUAL(j.rtol, 0.02, 0);
    golden_policy_resolve(p, "embed", GOLDEN_F32, GOLDEN_F32, &j);
    CU_ASSERT_EQUAL(j.tier, GOLDEN_TIER_KERNEL);
    golden_policy_resolve(p, "moe/x", GOLDEN_F32, GOLDEN_F32, &j);
    CU_ASSERT_EQUAL(j.tier, GOLDEN_TIER_KERNEL); /* a rule without tier keeps the default */
    CU_ASSERT_DOUBLE_EQUAL(j.rtol, 0.25, 0);
    /* the built-in names still apply after the file's rules */
    golden_policy_resolve(p, "logits", GOLDEN_F32, GOLDEN_F32, &j);
    CU_ASSERT_EQUAL(j.tier, GOLDEN_TIER_LOGITS);

    /* command line last: a forced tier and tolerances win over everything */
    golden_policy_force_tier(p, GOLDEN_TIER_LAYER);
    golden_policy_override(p, 0.125, NAN, 0.5);
    golden_policy_resolve(p, "layers/3/attn/out", GOLDEN_F32, GOLDEN_F32, &j);
    CU_ASSERT_EQUAL(j.tier, GOLDEN_TIER_LAYER);
    /* the first rule sets no cosine_min; the next matching rule ("layers/" glob) does */
    CU_ASSERT_DOUBLE_EQUAL(j.limits.cosine_min, 0.99, 0);
    CU_ASSERT_DOUBLE_EQUAL(j.atol, 0.125, 0);
    CU_ASSERT_DOUBLE_EQUAL(j.rtol, 1.3e-6, 0);
    CU_ASSERT_DOUBLE_EQUAL(j.eps, 0.5, 0);

    /* the policy in effect round-trips through its JSON form */
    json_t *back = golden_policy_to_json(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    golden_policy *q = golden_policy_new();
    CU_ASSERT_EQUAL(golden_policy_apply_json(q, back, "back", &err), 0);
    golden_judge k;
    golden_policy_resolve(q, "layers/3/mlp", GOLDEN_F32, GOLDEN_BF16, &k);
    CU_ASSERT_EQUAL(k.tier, GOLDEN_TIER_LAYER);
    CU_ASSERT_DOUBLE_EQUAL(k.limits.cosine_min, 0.99, 0);
    CU_ASSERT_DOUBLE_EQUAL(k.rtol, 1.3e-6, 0);
    json_decref(back);
    golden_policy_free(q);
    golden_policy_free(p);
    json_decref(root);
}

static void test_bad_trees(void)
{
    golden_policy *p = golden_policy_new();
    golden_error err;
    json_t *t = json_loads("{\"schema\": \"calculet-diff-policy/v2\"}", 0, NULL);
    CU_ASSERT_EQUAL(golden_policy_apply_json(p, t, "a.yaml", &err), -1);
    CU_ASSERT_STRING_EQUAL(err.where, "a.yaml#/schema");
    json_decref(t);
    t = json_loads("{\"schema\": \"calculet-diff-policy/v1\", \"default_tier\": \"final\"}", 0, NULL);
    CU_ASSERT_EQUAL(golden_policy_apply_json(p, t, "a.yaml", &err), -1);
    CU_ASSERT_STRING_EQUAL(err.where, "a.yaml#/default_tier");
    json_decref(t);
    t = json_loads("{\"schema\": \"calculet-diff-policy/v1\", \"rules\": [{\"match\": \"x\", "
                   "\"atol\": \"big\"}]}", 0, NULL);
    CU_ASSERT_EQUAL(golden_policy_apply_json(p, t, "a.yaml", &err), -1);
    CU_ASSERT_STRING_EQUAL(err.where, "a.yaml#/rules/0/atol");
    json_decref(t);
    golden_policy_free(p);
}

static void expect_map(const golden_namemap *m, const char *in, const char *want)
{
    golden_error err;
    char *got = golden_namemap_apply(m, in, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_STRING_EQUAL(got, want);
    free(got);
}

static void test_namemap(void)
{
    golden_namemap *m = golden_namemap_new();
    golden_error err;
    CU_ASSERT_EQUAL(golden_namemap_add(m, "model.layers.*.self_attn.o_proj", "layers/*/attn/out",
                                       false, &err), 0);
    CU_ASSERT_EQUAL(golden_namemap_add(m, "model\\.layers\\.([0-9]+)\\.mlp\\.(.*)",
                                       "layers/\\1/mlp/\\2", true, &err), 0);
    CU_ASSERT_EQUAL(golden_namemap_add(m, "blk?.*", "b/*/*", false, &err), 0);
    CU_ASSERT_EQUAL(golden_namemap_add(m, "model.*", "never", false, &err), 0);
    expect_map(m, "model.layers.12.self_attn.o_proj", "layers/12/attn/out");
    expect_map(m, "model.layers.7.mlp.down", "layers/7/mlp/down");
    expect_map(m, "blk3.ffn", "b/3/ffn");
    expect_map(m, "model.norm", "never"); /* the first matching rule wins */
    expect_map(m, "lm_head", "lm_head"); /* unmatched names stay */
    expect_map(m, "model.layers.1+2.self_attn.o_proj", "layers/1+2/attn/out"); /* '+' literal */
    CU_ASSERT_EQUAL(golden_namemap_count(m), 4);
    CU_ASSERT_EQUAL(golden_namemap_add(m, "(unclosed", "x", true, &err), -1);
    CU_ASSERT_STRING_EQUAL(err.where, "(unclosed");

    json_t *t = json_loads("{\"schema\": \"calculet-diff-policy/v1\", \"map\": ["
                           "{\"from\": \"a/*\", \"to\": \"b/*\"}, {\"from\": 3, \"to\": \"x\"}]}",
                           0, NULL);
    golden_namemap *m2 = golden_namemap_new();
    CU_ASSERT_EQUAL(golden_namemap_add_json(m2, t, "m.json", &err), -1);
    CU_ASSERT_STRING_EQUAL(err.where, "m.json#/map/1");
    expect_map(m2, "a/q", "b/q"); /* rules before the bad one were added */
    json_decref(t);
    golden_namemap_free(m2);
    golden_namemap_free(m);
}

/* Rules that match nothing, optional rules, compute_dtype, and layering two policies. */
static void test_matched_and_layers(void)
{
    json_t *a = json_loads("{\"schema\": \"calculet-diff-policy/v1\", \"rules\": ["
                           "{\"match\": \"kern\", \"tier\": \"kernel\"},"
                           "{\"match\": \"nope/*\", \"cosine_min\": 0.9},"
                           "{\"match\": \"maybe/*\", \"optional\": true}]}", 0, NULL);
    json_t *b = json_loads("{\"schema\": \"calculet-diff-policy/v1\", \"compute_dtype\": \"bf16\","
                           " \"rules\": [{\"match\": \"kern\", \"atol\": 1}]}", 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    golden_policy *p = golden_policy_new();
    golden_error err;
    CU_ASSERT_EQUAL(golden_policy_apply_json(p, a, "a.json", &err), 0);
    const char *names[] = {"kern", "act"};
    CU_ASSERT_EQUAL(golden_policy_check_matched(p, names, 2, "ref.h5", &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "rule \"nope/*\" matched no tensor of ref.h5"));
    const char *names2[] = {"kern", "nope/x"};
    CU_ASSERT_EQUAL(golden_policy_check_matched(p, names2, 2, "ref.h5", &err), 0);
    /* the second file layers over the first: its rule is tried first, field by field */
    CU_ASSERT_EQUAL(golden_policy_apply_json(p, b, "b.json", &err), 0);
    golden_judge j;
    golden_policy_resolve(p, "kern", GOLDEN_F32, GOLDEN_BF16, &j);
    CU_ASSERT_EQUAL(j.tier, GOLDEN_TIER_KERNEL);     /* still the first file's tier */
    CU_ASSERT_DOUBLE_EQUAL(j.atol, 1, 0);            /* the second file's atol */
    CU_ASSERT_DOUBLE_EQUAL(j.rtol, 1.6e-2, 0);       /* bf16, the declared compute dtype */
    CU_ASSERT_EQUAL(j.tol_dtype, GOLDEN_BF16);
    CU_ASSERT_EQUAL(golden_policy_rule_count(p), 4);
    json_decref(a);
    json_decref(b);
    golden_policy_free(p);
}

int main(void)
{
    static const golden_test tests[] = {
        {"built-in first-round policy", test_builtin},
        {"file rules, overrides, round trip", test_file_rules},
        {"bad policy trees", test_bad_trees},
        {"name map", test_namemap},
        {"unmatched rules and layered policies", test_matched_and_layers},
        {0, 0},
    };
    return golden_test_run("policy", tests);
}

/* The policy's judge with the reason for its tier, for golden-diff's run (not installed). */
#ifndef GOLDEN_TENSOR_POLICY_PRIVATE_H
#define GOLDEN_TENSOR_POLICY_PRIVATE_H
#include <stdbool.h>
#include "golden/policy.h"

/* golden_policy_resolve_rank, and: `foreign` (the reference is not a golden) puts a tensor
 * whose name gives no tier (no rule, no built-in pattern, no policy default_tier) at the
 * kernel tier; *why (may be NULL) receives why the tier was chosen, a static string. */
/* The reasons lg_policy_resolve_why gives for a tier (static strings; a packed result names
 * them by index, diff_merge.c). */
#define LG_TIER_WHY_N 7
extern const char *const lg_tier_why_names[LG_TIER_WHY_N];
void lg_policy_resolve_why(const golden_policy *p, const char *name, golden_dtype ref,
                           golden_dtype cand, int rank, bool foreign, golden_judge *out,
                           const char **why);
/* golden_policy_explain, for a reference that is (foreign: is not) a golden: the tier line
 * names why the tier was chosen as golden-diff's judge does (lg_policy_resolve_why). */
char *lg_policy_explain_why(const golden_policy *p, const char *name, golden_dtype ref,
                            golden_dtype cand, int rank, bool foreign);

#endif

/* The tolerance policy of golden-diff (calculet-diff-policy/v1): default tier, per-tier
 * thresholds, per-dtype atol/rtol and ordered name globs, resolved per tensor. */
#ifndef GOLDEN_POLICY_H
#define GOLDEN_POLICY_H
#include <stdbool.h>
#include <jansson.h>
#include "golden/compare.h"
#include "golden/dtype.h"
#include "golden/error.h"

#define GOLDEN_SCHEMA_DIFF_POLICY "calculet-diff-policy/v1"

/* The thresholds a tier judges by. */
typedef struct {
    double cosine_min;       /* layer */
    double top1_min;         /* logits */
    double top5_min;         /* logits */
    double near_tie_margin;  /* logits */
    double baseline_ratio;   /* three-way: candidate error / baseline error limit */
} golden_tier_limits;

/* Everything that decides one tensor's verdict. */
typedef struct {
    golden_tier tier;
    double atol, rtol, eps;
    golden_tier_limits limits;
    int rule;                /* index of the policy rule that matched, -1 = none */
} golden_judge;

typedef struct golden_policy golden_policy;

/* The built-in policy: handbook section 6's first-round numbers (see docs/golden-diff.md). */
golden_policy *golden_policy_new(void);
void golden_policy_free(golden_policy *p);

/* Load a YAML or JSON policy file, validate it against calculet-diff-policy/v1 and apply it
 * over the built-in defaults. */
int golden_policy_load(golden_policy *p, const char *path, golden_error *err);
/* Apply an already validated policy tree (where = file name for messages). */
int golden_policy_apply_json(golden_policy *p, const json_t *root, const char *where,
                             golden_error *err);

/* torch.testing's default atol/rtol for a dtype (integers and bool: 0/0; fp8 as documented). */
void golden_policy_dtype_default(golden_dtype t, double *atol, double *rtol);

/* Command-line overrides, applied to every tensor after the rules (NaN = leave as is). */
void golden_policy_force_tier(golden_policy *p, golden_tier t);
void golden_policy_override(golden_policy *p, double atol, double rtol, double eps);

/* The judge for one tensor: tier from the first matching rule (else the default tier),
 * that tier's limits, the rule's own values, the looser of the two dtypes' atol/rtol, and
 * the command-line overrides. */
void golden_policy_resolve(const golden_policy *p, const char *name, golden_dtype ref,
                           golden_dtype cand, golden_judge *out);

/* The policy in effect, as a calculet-diff-policy/v1 tree (for reports); NULL on ENOMEM. */
json_t *golden_policy_to_json(const golden_policy *p);
/* The command-line overrides ({"tier", "atol", "rtol", "eps"}, only those set; {} when none);
 * NULL on ENOMEM. */
json_t *golden_policy_overrides_json(const golden_policy *p);

#endif

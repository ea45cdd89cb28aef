/* The tolerance policy of golden-diff (calculet-diff-policy/v1): default tier, per-tier
 * thresholds, per-dtype atol/rtol and ordered name globs, resolved per tensor. */
#ifndef GOLDEN_POLICY_H
#define GOLDEN_POLICY_H
#include "golden/api.h"
#include <stdbool.h>
#include <stdint.h>
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
    double near_tie_margin;  /* logits; NaN = one step of the dtype at |top1| */
    double baseline_ratio;   /* three-way: candidate error / baseline error limit */
    double rel_err_max;      /* layer: ||c - r|| / ||r|| */
    double norm_ratio_tol;   /* layer: | ||c|| / ||r|| - 1 | */
    double row_cosine_min;   /* layer: cosine of every last-axis row */
    double kl_max;           /* logits: KL(softmax(r) || softmax(c)) of every row */
    double logsoftmax_max_abs; /* logits: max |log_softmax(c) - log_softmax(r)| */
    double noise_floor;      /* three-way: headline errors at or below it are not compared */
} golden_tier_limits;

/* The number of fields of golden_tier_limits (they are all doubles, in this order). */
#define GOLDEN_LIMITS_N 11

/* Everything that decides one tensor's verdict. */
typedef struct {
    golden_tier tier;
    double atol, rtol, eps;
    golden_dtype tol_dtype;  /* the dtype atol/rtol came from (reference or compute dtype) */
    golden_tier_limits limits;
    int rule;                /* index of the first policy rule that matched, -1 = none */
    int channel_axis;        /* layer tier's column checks run along this axis (policy rule
                              * channel_axis); -1 = the last axis, [tokens, hidden] */
} golden_judge;

typedef struct golden_policy golden_policy;

/* The built-in policy: handbook section 6's first-round numbers (see docs/golden-diff.md). */
GOLDEN_API golden_policy *golden_policy_new(void);
GOLDEN_API void golden_policy_free(golden_policy *p);

/* Load a YAML or JSON policy file, validate it against calculet-diff-policy/v1 and apply it
 * over what p holds: loading several files layers them in order (a later file's values
 * replace earlier ones, its rules are tried before earlier files' rules). */
GOLDEN_API int golden_policy_load(golden_policy *p, const char *path, golden_error *err);
/* Apply an already validated policy tree (where = file name for messages). */
GOLDEN_API int golden_policy_apply_json(golden_policy *p, const json_t *root, const char *where,
                             golden_error *err);

/* torch.testing's default atol/rtol for a dtype (integers and bool: 0/0; fp8 as documented). */
GOLDEN_API void golden_policy_dtype_default(golden_dtype t, double *atol, double *rtol);

/* Whether router top-k weights should sum to 1 per row (norm_topk_prob; default true). */
GOLDEN_API bool golden_policy_norm_topk_prob(const golden_policy *p);
/* Experts per token for router logits (policy router_top_k); 0 when not set (then the
 * reference's sibling topk_ids width is used). */
GOLDEN_API uint64_t golden_policy_router_top_k(const golden_policy *p);

/* Command-line overrides, applied to every tensor after the rules (NaN = leave as is). */
GOLDEN_API void golden_policy_force_tier(golden_policy *p, golden_tier t);
GOLDEN_API void golden_policy_override(golden_policy *p, double atol, double rtol, double eps);

/* The judge for one tensor. Tier: the first matching rule that names one, else the
 * built-in name patterns (case-insensitive: names ending in "/router/topk_ids" or
 * "/router/topk_weights" -> router; *logits* on floats -> logits, *tokens* and *_ids
 * on integers -> tokens), else kernel for integer tensors, else the default tier. Limits:
 * the tier's, each replaced by the first matching rule that sets it. atol/rtol: of the
 * compute dtype (rule, else policy) when set, else of the reference's dtype, never the
 * candidate's. Then the command-line overrides. */
GOLDEN_API void golden_policy_resolve(const golden_policy *p, const char *name, golden_dtype ref,
                           golden_dtype cand, golden_judge *out);
/* The same, knowing the reference's rank (-1 = unknown): a float tensor of rank 1, or named
 * like a parameter ("*scale*", "*zero_point*", "*bias*", "*norm*weight*", case-insensitive),
 * goes to the kernel tier unless a rule names its tier ("*logits*" and router taps first). */
GOLDEN_API void golden_policy_resolve_rank(const golden_policy *p, const char *name,
                                           golden_dtype ref, golden_dtype cand, int rank,
                                           golden_judge *out);

/* Which rule, table or option set each field of the judge of one tensor (golden-diff
 * --explain): one line a field, "FIELD VALUE SOURCE". Allocated; NULL on ENOMEM. */
GOLDEN_API char *golden_policy_explain(const golden_policy *p, const char *name,
                                       golden_dtype ref, golden_dtype cand, int rank);
/* Rules of policy files (built-in name patterns not included), in the order they are tried. */
GOLDEN_API size_t golden_policy_rule_count(const golden_policy *p);
/* Rule i: its glob, its place ("file:line:col") and whether it may match nothing. */
GOLDEN_API void golden_policy_rule_at(const golden_policy *p, size_t i, const char **match,
                           const char **where, bool *optional);

/* Every rule that is not optional must match at least one of the names: else an error
 * naming the rule's glob and place (`what` names the file the names come from). */
GOLDEN_API int golden_policy_check_matched(const golden_policy *p, const char *const *names, size_t n,
                                const char *what, golden_error *err);

/* The policy in effect, as a calculet-diff-policy/v1 tree (for reports); NULL on ENOMEM. */
GOLDEN_API json_t *golden_policy_to_json(const golden_policy *p);
/* The command-line overrides ({"tier", "atol", "rtol", "eps"}, only those set; {} when none);
 * NULL on ENOMEM. */
GOLDEN_API json_t *golden_policy_overrides_json(const golden_policy *p);

#endif

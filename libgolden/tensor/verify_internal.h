/* Private to libgolden/tensor: the comparison of a tensor's stored attributes with its data,
 * shared by golden-dump --verify (verify.c) and golden-diff's one pass (diff_pair.c). */
#ifndef GOLDEN_TENSOR_VERIFY_INTERNAL_H
#define GOLDEN_TENSOR_VERIFY_INTERNAL_H
#include "golden/error.h"
#include "golden/stats.h"
#include "golden/store.h"

/* sha and s are what the data gives; each attribute that disagrees (sha256, tensor_digest,
 * count, nan/posinf/neginf/zero counts, min, max, mean, std) is appended to *problems
 * ("; "-joined, allocated; left NULL when all agree). 0, or -1 with err set. */
int verify_compare(const golden_tensor_info *t, const char sha[65], const golden_stats *s,
                   char **problems, golden_error *err);

#endif

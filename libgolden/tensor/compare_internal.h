/* Private to the metrics engine (compare.c, compare_rows.c): scaled sums, the run-time
 * choice of AVX2, and the row machines that compare.c drives block by block. */
#ifndef GOLDEN_TENSOR_COMPARE_INTERNAL_H
#define GOLDEN_TENSOR_COMPARE_INTERNAL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "golden/compare.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define GOLDEN_HAVE_AVX2 1
#else
#define GOLDEN_HAVE_AVX2 0
#endif

/* Power-of-two scales of a block: values were summed times 2^-r (reference), 2^-c
 * (candidate), 2^-d (difference). */
typedef struct {
    int r, c, d;
} block_scales;

/* Add v (compensation vc) worth v * 2^e into a sum kept as (sum + comp) * 2^*exp. */
void lg_cmp_sadd(double *sum, double *comp, int *exp, double v, double vc, int e);
/* Whether this processor runs the AVX2 loops (false where they are not compiled). */
bool lg_cmp_have_avx2(void);

/* Rank v (index idx; other = the other side's value at idx) into t's top entries. */
void lg_cmp_topk_push(golden_cmp_topk *t, double v, double other, int64_t idx);
void lg_cmp_softmax_step(golden_cmp_acc *a, double r, double c);
/* Close the logits/tokens row in progress. */
void lg_cmp_close_row(const golden_cmp_setup *s, golden_cmp_acc *a);
/* Close the layer row in progress into its cosine. */
void lg_cmp_close_layer_row(const golden_cmp_setup *s, golden_cmp_acc *a);
/* Layer rows of a block of n pairs whose sums were scaled by k. */
void lg_cmp_layer_rows(const golden_cmp_setup *s, golden_cmp_acc *a, const double *ref,
                           const double *cand, size_t n, const block_scales *k);

/* The histogram bin of a finite pair's |c - r| (see GOLDEN_CMP_HIST_*), from its f64 bits:
 * integer work only, so every path that calls it counts alike. */
static inline unsigned golden_cmp_hist_bin(double ad)
{
    uint64_t b;
    memcpy(&b, &ad, sizeof b);
    b &= ~(UINT64_C(1) << 63);
    if (b == 0)
        return GOLDEN_CMP_HIST_ZERO;
    int e = (int)(b >> 52) - 1023; /* subnormals: -1023, clamped below */
    e = e < GOLDEN_CMP_HIST_EMIN ? GOLDEN_CMP_HIST_EMIN : e > GOLDEN_CMP_HIST_EMAX ? GOLDEN_CMP_HIST_EMAX : e;
    return (unsigned)(1 + e - GOLDEN_CMP_HIST_EMIN);
}

/* Count a block of finite pairs into hist (AVX2 or portable, as s says; same counts). */
void lg_cmp_hist_finite(const golden_cmp_setup *s, uint64_t *hist, const double *ref,
                            const double *cand, size_t n);

#endif

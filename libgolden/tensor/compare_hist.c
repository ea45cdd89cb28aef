/* The |c - r| histogram of the metrics engine for blocks of finite pairs: a portable loop and an
 * AVX2 one that bin by the f64 exponent alike, so the integer counts never depend on the path. */
#include "tensor/compare_internal.h"

#include <math.h>

/* Four sub-histograms (pair i into i % 4) so that runs of equal bins do not wait on each
 * other's increments; 32-bit counts are enough for one call's block. */
typedef struct {
    uint32_t h[4][GOLDEN_CMP_HIST_BINS];
} sub_hist;

static void fold(uint64_t *hist, const sub_hist *w)
{
    for (int b = 0; b < GOLDEN_CMP_HIST_BINS; b++)
        hist[b] += (uint64_t)w->h[0][b] + w->h[1][b] + w->h[2][b] + w->h[3][b];
}

static void hist_portable(sub_hist *w, const double *ref, const double *cand, size_t from,
                          size_t n)
{
    for (size_t i = from; i < n; i++)
        w->h[i & 3][golden_cmp_hist_bin(fabs(cand[i] - ref[i]))]++;
}

#if GOLDEN_HAVE_AVX2
#include <immintrin.h>

/* The same bins four pairs at a time: exponent field of |c - r|, minus the bias, clamped,
 * zero apart. Returns the pairs done (whole quads). */
__attribute__((target("avx2"))) static size_t hist_avx2(sub_hist *w, const double *ref,
                                                        const double *cand, size_t n)
{
    const __m256d sign = _mm256_set1_pd(-0.0);
    const __m256i lo = _mm256_set1_epi64x(1023 + GOLDEN_CMP_HIST_EMIN),
                  hi = _mm256_set1_epi64x(1023 + GOLDEN_CMP_HIST_EMAX),
                  off = _mm256_set1_epi64x(1 - (1023 + GOLDEN_CMP_HIST_EMIN)),
                  zero = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256d d = _mm256_sub_pd(_mm256_loadu_pd(cand + i), _mm256_loadu_pd(ref + i));
        __m256i bits = _mm256_castpd_si256(_mm256_andnot_pd(sign, d));
        __m256i e = _mm256_srli_epi64(bits, 52);
        e = _mm256_blendv_epi8(e, lo, _mm256_cmpgt_epi64(lo, e));
        e = _mm256_blendv_epi8(e, hi, _mm256_cmpgt_epi64(e, hi));
        __m256i bin = _mm256_add_epi64(e, off);
        bin = _mm256_andnot_si256(_mm256_cmpeq_epi64(bits, zero), bin); /* zero: bin 0 */
        int64_t b4[4];
        _mm256_storeu_si256((__m256i *)b4, bin);
        w->h[0][b4[0]]++;
        w->h[1][b4[1]]++;
        w->h[2][b4[2]]++;
        w->h[3][b4[3]]++;
    }
    return i;
}
#endif

void lg_cmp_hist_finite(const golden_cmp_setup *s, uint64_t *hist, const double *ref,
                            const double *cand, size_t n)
{
    sub_hist w;
    memset(&w, 0, sizeof w);
    size_t done = 0;
#if GOLDEN_HAVE_AVX2
    if (!s->scalar_only && lg_cmp_have_avx2())
        done = hist_avx2(&w, ref, cand, n);
#else
    (void)s;
#endif
    hist_portable(&w, ref, cand, done, n);
    fold(hist, &w);
}

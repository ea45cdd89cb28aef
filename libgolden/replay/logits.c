/* Logits conversion of handbook section 15 (C2) done right: only the vocabulary range that
 * sampling needs, bf16 straight into the caller's f32 buffer, no temporary, SIMD when present. */
#include <string.h>

#include "golden/replay.h"
#if defined(__x86_64__)
#include <immintrin.h>
#endif

void golden_logits_bf16_to_f32_scalar(const uint16_t *row, size_t first, size_t count,
                                      float *dst)
{
    for (size_t i = 0; i < count; i++) {
        uint32_t u = (uint32_t)row[first + i] << 16;
        memcpy(&dst[i], &u, 4);
    }
}

#if defined(__x86_64__)
/* SSE2 is part of x86-64: widen eight bf16 at a time by interleaving with zero halves. */
static void convert_sse2(const uint16_t *src, size_t count, float *dst)
{
    size_t i = 0;
    __m128i zero = _mm_setzero_si128();
    for (; i + 8 <= count; i += 8) {
        __m128i v = _mm_loadu_si128((const __m128i *)(src + i));
        __m128i lo = _mm_unpacklo_epi16(zero, v);
        __m128i hi = _mm_unpackhi_epi16(zero, v);
        _mm_storeu_si128((__m128i *)(dst + i), lo);
        _mm_storeu_si128((__m128i *)(dst + i + 4), hi);
    }
    golden_logits_bf16_to_f32_scalar(src, i, count - i, dst + i);
}
#endif

void golden_logits_bf16_to_f32(const uint16_t *row, size_t first, size_t count, float *dst)
{
#if defined(__x86_64__)
    convert_sse2(row + first, count, dst);
#else
    golden_logits_bf16_to_f32_scalar(row, first, count, dst);
#endif
}

uint16_t golden_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x0040u); /* NaN: keep sign and payload top, make quiet */
    u += 0x7fffu + ((u >> 16) & 1u);           /* round to nearest, ties to even */
    return (uint16_t)(u >> 16);
}

/* Element types of the golden format and their exact conversion to f64.
 * bf16 is a shift into f32; f16 goes through a 64K-entry table built once. */
#include "golden/dtype.h"
#include "util/cpu.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

static const struct {
    const char *name;
    size_t size;
} dtype_table[GOLDEN_DTYPE_COUNT] = {
    [GOLDEN_F64] = {"f64", 8},   [GOLDEN_F32] = {"f32", 4},   [GOLDEN_F16] = {"f16", 2},
    [GOLDEN_BF16] = {"bf16", 2}, [GOLDEN_I8] = {"i8", 1},     [GOLDEN_U8] = {"u8", 1},
    [GOLDEN_I16] = {"i16", 2},   [GOLDEN_U16] = {"u16", 2},   [GOLDEN_I32] = {"i32", 4},
    [GOLDEN_U32] = {"u32", 4},   [GOLDEN_I64] = {"i64", 8},   [GOLDEN_U64] = {"u64", 8},
    [GOLDEN_BOOL] = {"bool", 1}, [GOLDEN_FP8_E4M3FN] = {"fp8_e4m3fn", 1},
    [GOLDEN_FP8_E5M2] = {"fp8_e5m2", 1},
};

const char *golden_dtype_name(golden_dtype t)
{
    return (unsigned)t < GOLDEN_DTYPE_COUNT ? dtype_table[t].name : "?";
}

int golden_dtype_parse(const char *name, golden_dtype *out)
{
    for (int i = 0; i < GOLDEN_DTYPE_COUNT; i++)
        if (strcmp(name, dtype_table[i].name) == 0) {
            *out = (golden_dtype)i;
            return 0;
        }
    return -1;
}

size_t golden_dtype_size(golden_dtype t)
{
    return (unsigned)t < GOLDEN_DTYPE_COUNT ? dtype_table[t].size : 0;
}

bool golden_dtype_is_float(golden_dtype t)
{
    return t == GOLDEN_F64 || t == GOLDEN_F32 || t == GOLDEN_F16 || t == GOLDEN_BF16 ||
           t == GOLDEN_FP8_E4M3FN || t == GOLDEN_FP8_E5M2;
}

bool golden_dtype_is_integer(golden_dtype t)
{
    return (unsigned)t < GOLDEN_DTYPE_COUNT && !golden_dtype_is_float(t);
}

bool golden_dtype_is_signed(golden_dtype t)
{
    return t == GOLDEN_I8 || t == GOLDEN_I16 || t == GOLDEN_I32 || t == GOLDEN_I64 ||
           golden_dtype_is_float(t);
}

double golden_bf16_to_f64(uint16_t bits)
{
    uint32_t w = (uint32_t)bits << 16;
    float f;
    memcpy(&f, &w, sizeof f);
    return f;
}

double golden_f16_to_f64(uint16_t bits)
{
    int sign = bits >> 15, exp = (bits >> 10) & 0x1f, mant = bits & 0x3ff;
    double v;
    if (exp == 0)
        v = ldexp(mant, -24);
    else if (exp == 31)
        v = mant ? NAN : INFINITY;
    else
        v = ldexp(1024 + mant, exp - 25);
    return sign ? -v : v;
}

double golden_fp8_e4m3fn_to_f64(uint8_t bits)
{
    int sign = bits >> 7, exp = (bits >> 3) & 0xf, mant = bits & 0x7;
    double v;
    if (exp == 15 && mant == 7)
        v = NAN; /* the "fn" format has no infinities; S.1111.111 is its only NaN */
    else if (exp == 0)
        v = ldexp(mant, -9);
    else
        v = ldexp(8 + mant, exp - 10);
    return sign ? -v : v;
}

double golden_fp8_e5m2_to_f64(uint8_t bits)
{
    int sign = bits >> 7, exp = (bits >> 2) & 0x1f, mant = bits & 0x3;
    double v;
    if (exp == 31)
        v = mant ? NAN : INFINITY;
    else if (exp == 0)
        v = ldexp(mant, -16);
    else
        v = ldexp(4 + mant, exp - 17);
    return sign ? -v : v;
}

static float f16_table[65536];
static double fp8_tables[2][256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void build_tables(void)
{
    for (unsigned i = 0; i < 65536; i++)
        f16_table[i] = (float)golden_f16_to_f64((uint16_t)i);
    for (unsigned i = 0; i < 256; i++) {
        fp8_tables[0][i] = golden_fp8_e4m3fn_to_f64((uint8_t)i);
        fp8_tables[1][i] = golden_fp8_e5m2_to_f64((uint8_t)i);
    }
}

/* Canonical bytes are little-endian; on a big-endian host the loads below would need a
 * swap, which this x86/arm little-endian toolkit does not carry. */
#define CONVERT_LOOP(ctype)                                                                   \
    do {                                                                                      \
        const unsigned char *p = src;                                                         \
        for (size_t i = 0; i < n; i++) {                                                      \
            ctype v;                                                                          \
            memcpy(&v, p + i * sizeof v, sizeof v);                                           \
            dst[i] = (double)v;                                                               \
        }                                                                                     \
    } while (0)

/* Wide conversions: a 16-bit float widens exactly to f32 and then to f64, so these give the
 * same bits as the scalar loops below (tests/unit/test_dtype.c checks every 16-bit pattern).
 * golden-diff spends a third of a bf16 comparison here (docs/performance.md). */
#if defined(__x86_64__)
__attribute__((target("avx2"))) static size_t bf16_to_f64_avx2(const unsigned char *p, size_t n,
                                                                double *dst)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *)(p + 2 * i));
        __m256 f = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
        _mm256_storeu_pd(dst + i, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
        _mm256_storeu_pd(dst + i + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
    }
    return i;
}

/* f32 widens exactly: vcvtps2pd gives the bits of the scalar (double) cast, NaN payloads
 * (quieted) and subnormals included (tests/unit/test_dtype.c checks). golden-diff spent a
 * fifth of a big f32 comparison in the scalar loop (issue 35). */
__attribute__((target("avx2"))) static size_t f32_to_f64_avx2(const unsigned char *p, size_t n,
                                                               double *dst)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 a = _mm256_loadu_ps((const float *)(const void *)(p + 4 * i));
        __m256 b = _mm256_loadu_ps((const float *)(const void *)(p + 4 * i + 32));
        _mm256_storeu_pd(dst + i, _mm256_cvtps_pd(_mm256_castps256_ps128(a)));
        _mm256_storeu_pd(dst + i + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1)));
        _mm256_storeu_pd(dst + i + 8, _mm256_cvtps_pd(_mm256_castps256_ps128(b)));
        _mm256_storeu_pd(dst + i + 12, _mm256_cvtps_pd(_mm256_extractf128_ps(b, 1)));
    }
    return i;
}

__attribute__((target("avx2,f16c"))) static size_t f16_to_f64_f16c(const unsigned char *p, size_t n,
                                                                    double *dst)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 f = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p + 2 * i)));
        _mm256_storeu_pd(dst + i, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
        _mm256_storeu_pd(dst + i + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
    }
    return i;
}

#endif

void golden_convert_to_f64(golden_dtype t, const void *src, size_t n, double *dst)
{
    switch (t) {
    case GOLDEN_F64: memcpy(dst, src, n * sizeof(double)); break;
    case GOLDEN_F32: {
        const unsigned char *p = src;
        size_t i = 0;
#if defined(__x86_64__)
        if (lg_cpu_avx2())
            i = f32_to_f64_avx2(p, n, dst);
#endif
        for (; i < n; i++) {
            float f;
            memcpy(&f, p + 4 * i, 4);
            dst[i] = f;
        }
        break;
    }
    case GOLDEN_F16: {
        pthread_once(&tables_once, build_tables);
        const unsigned char *p = src;
        size_t i = 0;
#if defined(__x86_64__)
        if (lg_cpu_f16c())
            i = f16_to_f64_f16c(p, n, dst);
#endif
        for (; i < n; i++) {
            uint16_t b;
            memcpy(&b, p + 2 * i, 2);
            dst[i] = f16_table[b];
        }
        break;
    }
    case GOLDEN_BF16: {
        const unsigned char *p = src;
        size_t i = 0;
#if defined(__x86_64__)
        if (lg_cpu_avx2())
            i = bf16_to_f64_avx2(p, n, dst);
#endif
        for (; i < n; i++) {
            uint16_t b;
            memcpy(&b, p + 2 * i, 2);
            uint32_t w = (uint32_t)b << 16;
            float f;
            memcpy(&f, &w, 4);
            dst[i] = f;
        }
        break;
    }
    case GOLDEN_FP8_E4M3FN:
    case GOLDEN_FP8_E5M2: {
        pthread_once(&tables_once, build_tables);
        const double *table = fp8_tables[t == GOLDEN_FP8_E5M2];
        const unsigned char *p = src;
        for (size_t i = 0; i < n; i++)
            dst[i] = table[p[i]];
        break;
    }
    case GOLDEN_I8: CONVERT_LOOP(int8_t); break;
    case GOLDEN_U8:
    case GOLDEN_BOOL: CONVERT_LOOP(uint8_t); break;
    case GOLDEN_I16: CONVERT_LOOP(int16_t); break;
    case GOLDEN_U16: CONVERT_LOOP(uint16_t); break;
    case GOLDEN_I32: CONVERT_LOOP(int32_t); break;
    case GOLDEN_U32: CONVERT_LOOP(uint32_t); break;
    case GOLDEN_I64: CONVERT_LOOP(int64_t); break;
    case GOLDEN_U64: CONVERT_LOOP(uint64_t); break;
    default: break;
    }
}

size_t golden_convert_to_i64(golden_dtype t, const void *src, size_t n, int64_t *dst)
{
    size_t saturated = 0;
    const unsigned char *p = src;
    switch (t) {
#define INT_LOOP(ctype)                                                                       \
    for (size_t i = 0; i < n; i++) {                                                          \
        ctype v;                                                                              \
        memcpy(&v, p + i * sizeof v, sizeof v);                                               \
        dst[i] = (int64_t)v;                                                                  \
    }                                                                                         \
    break;
    case GOLDEN_I8: INT_LOOP(int8_t)
    case GOLDEN_U8:
    case GOLDEN_BOOL: INT_LOOP(uint8_t)
    case GOLDEN_I16: INT_LOOP(int16_t)
    case GOLDEN_U16: INT_LOOP(uint16_t)
    case GOLDEN_I32: INT_LOOP(int32_t)
    case GOLDEN_U32: INT_LOOP(uint32_t)
    case GOLDEN_I64: INT_LOOP(int64_t)
#undef INT_LOOP
    case GOLDEN_U64:
        for (size_t i = 0; i < n; i++) {
            uint64_t v;
            memcpy(&v, p + 8 * i, 8);
            if (v > (uint64_t)INT64_MAX) {
                dst[i] = INT64_MAX;
                saturated++;
            } else {
                dst[i] = (int64_t)v;
            }
        }
        break;
    default:
        for (size_t i = 0; i < n; i++)
            dst[i] = 0;
        saturated = n;
        break;
    }
    return saturated;
}

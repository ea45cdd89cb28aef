/* Element type conversions checked against independent references: every bf16 and f16 bit
 * pattern (bf16 by sign/exponent/mantissa arithmetic, f16 by the compiler's _Float16), fp8. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cunit_main.h"
#include "golden/dtype.h"

static int same_value(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return a == b && signbit(a) == signbit(b);
}

/* bf16 is the top half of an f32: decode it from its fields, by hand */
static double bf16_reference(uint16_t b)
{
    int sign = b >> 15, exp = (b >> 7) & 0xff, mant = b & 0x7f;
    double v;
    if (exp == 0xff)
        v = mant ? NAN : INFINITY;
    else if (exp == 0)
        v = mant * pow(2.0, -133); /* 2^(1-127) * mant/128 */
    else
        v = (1.0 + mant / 128.0) * pow(2.0, exp - 127);
    return sign ? -v : v;
}

static void test_bf16_all_patterns(void)
{
    int bad = 0;
    uint16_t all[65536];
    double out[65536];
    for (unsigned i = 0; i < 65536; i++) {
        all[i] = (uint16_t)i;
        bad += !same_value(golden_bf16_to_f64((uint16_t)i), bf16_reference((uint16_t)i));
    }
    golden_convert_to_f64(GOLDEN_BF16, all, 65536, out);
    for (unsigned i = 0; i < 65536; i++)
        bad += !same_value(out[i], bf16_reference((uint16_t)i));
    /* an unaligned start and a length that leaves a tail for the scalar loop after the wide one */
    golden_convert_to_f64(GOLDEN_BF16, all + 3, 65533 - 6, out);
    for (unsigned i = 0; i < 65533 - 6; i++)
        bad += !same_value(out[i], bf16_reference((uint16_t)(i + 3)));
    CU_ASSERT_EQUAL(bad, 0);
}

/* f32 by its fields: the f64 bits are sign, exponent rebiased, mantissa shifted up; a NaN
 * keeps its payload and is quieted (bit 51), as the IEEE widening does on x86 and arm */
static uint64_t f32_reference_bits(uint32_t b)
{
    uint64_t sign = (uint64_t)(b >> 31) << 63;
    uint32_t exp = (b >> 23) & 0xff, mant = b & 0x7fffff;
    if (exp == 0xff)
        return sign | (UINT64_C(0x7ff) << 52) | (mant ? UINT64_C(1) << 51 : 0) |
               ((uint64_t)mant << 29);
    double v = exp == 0 ? mant * pow(2.0, -149) : (1.0 + mant / 8388608.0) * pow(2.0, (int)exp - 127);
    v = sign ? -v : v;
    uint64_t out;
    memcpy(&out, &v, sizeof out);
    return out;
}

/* 2^20 patterns: every exponent and sign with 2^11 mantissas each (both ends, the quiet bit,
 * a spread between), through the wide loop and its scalar tail at odd starts and lengths */
static void test_f32_patterns(void)
{
    enum { N = 1 << 20 };
    static uint32_t in[N];
    static double out[N];
    for (uint32_t i = 0; i < N; i++) {
        uint32_t se = i >> 11, k = i & 0x7ff;
        uint32_t mant = k < 8 ? k : k > 0x7f7 ? 0x7fffff - (0x7ff - k) : (k * 4099u) & 0x7fffff;
        in[i] = se << 23 | mant;
    }
    int bad = 0;
    size_t starts[] = {0, 1, 3, 7}, lens[] = {N, N - 5, N - 17, 15};
    for (size_t c = 0; c < 4; c++) {
        size_t s0 = starts[c], n = lens[c] - s0;
        golden_convert_to_f64(GOLDEN_F32, in + s0, n, out);
        for (size_t i = 0; i < n; i++) {
            uint64_t got;
            memcpy(&got, &out[i], sizeof got);
            bad += got != f32_reference_bits(in[s0 + i]);
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
}

static void test_f16_all_patterns(void)
{
    int bad = 0;
    uint16_t all[65536];
    double out[65536];
    for (unsigned i = 0; i < 65536; i++)
        all[i] = (uint16_t)i;
    golden_convert_to_f64(GOLDEN_F16, all, 65536, out);
    for (unsigned i = 0; i < 65536; i++) {
        _Float16 h;
        uint16_t b = (uint16_t)i;
        memcpy(&h, &b, 2);
        double ref = (double)h;
        bad += !same_value(golden_f16_to_f64(b), ref);
        bad += !same_value(out[i], ref);
    }
    golden_convert_to_f64(GOLDEN_F16, all + 5, 65531 - 10, out); /* unaligned, with a tail */
    for (unsigned i = 0; i < 65531 - 10; i++) {
        _Float16 h;
        uint16_t b = (uint16_t)(i + 5);
        memcpy(&h, &b, 2);
        bad += !same_value(out[i], (double)h);
    }
    CU_ASSERT_EQUAL(bad, 0);
    /* a few by hand */
    CU_ASSERT_EQUAL(golden_f16_to_f64(0x3c00), 1.0);
    CU_ASSERT_EQUAL(golden_f16_to_f64(0x7bff), 65504.0);
    CU_ASSERT_EQUAL(golden_f16_to_f64(0x0001), ldexp(1, -24));
    CU_ASSERT_EQUAL(golden_f16_to_f64(0xc000), -2.0);
}

static void test_fp8_by_hand(void)
{
    CU_ASSERT_EQUAL(golden_fp8_e4m3fn_to_f64(0x38), 1.0);
    CU_ASSERT_EQUAL(golden_fp8_e4m3fn_to_f64(0x7e), 448.0);
    CU_ASSERT_EQUAL(golden_fp8_e4m3fn_to_f64(0xfe), -448.0);
    CU_ASSERT_EQUAL(golden_fp8_e4m3fn_to_f64(0x01), ldexp(1, -9));
    CU_ASSERT_EQUAL(golden_fp8_e4m3fn_to_f64(0x08), ldexp(1, -6));
    CU_ASSERT_EQUAL(golden_fp8_e4m3fn_to_f64(0x78), 256.0);
    CU_ASSERT(isnan(golden_fp8_e4m3fn_to_f64(0x7f)));
    CU_ASSERT(isnan(golden_fp8_e4m3fn_to_f64(0xff)));
    CU_ASSERT(signbit(golden_fp8_e4m3fn_to_f64(0x80)));
    CU_ASSERT_EQUAL(golden_fp8_e5m2_to_f64(0x3c), 1.0);
    CU_ASSERT_EQUAL(golden_fp8_e5m2_to_f64(0x7b), 57344.0);
    CU_ASSERT_EQUAL(golden_fp8_e5m2_to_f64(0x01), ldexp(1, -16));
    CU_ASSERT_EQUAL(golden_fp8_e5m2_to_f64(0x04), ldexp(1, -14));
    CU_ASSERT(isinf(golden_fp8_e5m2_to_f64(0x7c)) && golden_fp8_e5m2_to_f64(0x7c) > 0);
    CU_ASSERT(isinf(golden_fp8_e5m2_to_f64(0xfc)) && golden_fp8_e5m2_to_f64(0xfc) < 0);
    CU_ASSERT(isnan(golden_fp8_e5m2_to_f64(0x7d)));
    /* e5m2 is the top byte of an f16: every pattern agrees with the f16 decoder */
    int bad = 0, nans = 0;
    uint8_t all[256];
    double out[256];
    for (unsigned i = 0; i < 256; i++)
        all[i] = (uint8_t)i;
    golden_convert_to_f64(GOLDEN_FP8_E5M2, all, 256, out);
    for (unsigned i = 0; i < 256; i++)
        bad += !same_value(out[i], golden_f16_to_f64((uint16_t)(i << 8)));
    golden_convert_to_f64(GOLDEN_FP8_E4M3FN, all, 256, out);
    for (unsigned i = 0; i < 256; i++)
        nans += isnan(out[i]) != 0;
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(nans, 2); /* e4m3fn has exactly two NaN patterns and no Inf */
}

static void test_integers(void)
{
    const int8_t i8[] = {-128, -1, 0, 127};
    const uint64_t u64[] = {0, 1, (1ull << 53), UINT64_MAX};
    const int64_t i64[] = {INT64_MIN, -1, 5};
    double out[4];
    golden_convert_to_f64(GOLDEN_I8, i8, 4, out);
    CU_ASSERT_EQUAL(out[0], -128.0);
    CU_ASSERT_EQUAL(out[3], 127.0);
    golden_convert_to_f64(GOLDEN_U64, u64, 4, out);
    CU_ASSERT_EQUAL(out[2], 9007199254740992.0);
    CU_ASSERT_EQUAL(out[3], 18446744073709551616.0);
    int64_t o[4];
    CU_ASSERT_EQUAL(golden_convert_to_i64(GOLDEN_U64, u64, 4, o), 1);
    CU_ASSERT_EQUAL(o[3], INT64_MAX);
    CU_ASSERT_EQUAL(o[2], (int64_t)1 << 53);
    CU_ASSERT_EQUAL(golden_convert_to_i64(GOLDEN_I64, i64, 3, o), 0);
    CU_ASSERT_EQUAL(o[0], INT64_MIN);
    const uint16_t u16[] = {65535, 1};
    golden_convert_to_f64(GOLDEN_U16, u16, 2, out);
    CU_ASSERT_EQUAL(out[0], 65535.0);
    const uint8_t b[] = {0, 1};
    golden_convert_to_f64(GOLDEN_BOOL, b, 2, out);
    CU_ASSERT_EQUAL(out[1], 1.0);
}

static void test_names(void)
{
    golden_dtype t;
    for (int i = 0; i < GOLDEN_DTYPE_COUNT; i++) {
        CU_ASSERT_EQUAL(golden_dtype_parse(golden_dtype_name((golden_dtype)i), &t), 0);
        CU_ASSERT_EQUAL(t, (golden_dtype)i);
    }
    CU_ASSERT_EQUAL(golden_dtype_parse("float32", &t), -1);
    CU_ASSERT_EQUAL(golden_dtype_size(GOLDEN_BF16), 2);
    CU_ASSERT_EQUAL(golden_dtype_size(GOLDEN_U64), 8);
    CU_ASSERT(golden_dtype_is_float(GOLDEN_FP8_E5M2));
    CU_ASSERT(golden_dtype_is_integer(GOLDEN_BOOL));
    CU_ASSERT(!golden_dtype_is_integer(GOLDEN_F16));
}

int main(void)
{
    static const golden_test tests[] = {
        {"bf16 every bit pattern", test_bf16_all_patterns},
        {"f16 every bit pattern", test_f16_all_patterns},
        {"f32 bit patterns, wide loop and tail", test_f32_patterns},
        {"fp8 formats by hand", test_fp8_by_hand},
        {"integer conversions", test_integers},
        {"dtype names", test_names},
        {0, 0}};
    return golden_test_run("dtype", tests);
}

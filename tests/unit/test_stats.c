/* Statistics on hand-worked cases: non-finite values, zeros, denormals, empty, scalar,
 * large offsets (cancellation) and merges across blocks. */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include <string.h>

#include "cunit_main.h"
#include "golden/stats.h"
#include "util/cpu.h"

static void test_simple(void)
{
    const double x[] = {1, 2, 3, 4};
    golden_stats s;
    golden_stats_init(&s);
    golden_stats_add(&s, x, 4);
    CU_ASSERT_EQUAL(s.count, 4);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_mean(&s), 2.5, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_std(&s), sqrt(1.25), 1e-15);
    CU_ASSERT_EQUAL(golden_stats_min(&s), 1);
    CU_ASSERT_EQUAL(golden_stats_max(&s), 4);
    CU_ASSERT_EQUAL(s.zero_count, 0);
}

static void test_nonfinite(void)
{
    const double x[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 3.0, -INFINITY, NAN};
    golden_stats s;
    golden_stats_init(&s);
    golden_stats_add(&s, x, 8);
    CU_ASSERT_EQUAL(s.count, 8);
    CU_ASSERT_EQUAL(s.nan_count, 2);
    CU_ASSERT_EQUAL(s.posinf_count, 1);
    CU_ASSERT_EQUAL(s.neginf_count, 2);
    CU_ASSERT_EQUAL(s.zero_count, 2);
    /* finite: 0, -0, 3 -> mean 1, population variance ((1+1+4)/3) = 2 */
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_mean(&s), 1.0, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_std(&s), sqrt(2.0), 1e-15);
    CU_ASSERT_EQUAL(golden_stats_min(&s), 0.0);
    CU_ASSERT_EQUAL(golden_stats_max(&s), 3.0);
}

static void test_empty_and_all_nan(void)
{
    golden_stats s;
    golden_stats_init(&s);
    CU_ASSERT(isnan(golden_stats_mean(&s)));
    CU_ASSERT(isnan(golden_stats_std(&s)));
    CU_ASSERT(isnan(golden_stats_min(&s)));
    const double x[] = {NAN, INFINITY};
    golden_stats_add(&s, x, 2);
    CU_ASSERT(isnan(golden_stats_max(&s)));
    CU_ASSERT_EQUAL(s.count, 2);
}

static void test_scalar_and_denormal(void)
{
    golden_stats s;
    golden_stats_init(&s);
    const double one = -7.5;
    golden_stats_add(&s, &one, 1);
    CU_ASSERT_EQUAL(golden_stats_mean(&s), -7.5);
    CU_ASSERT_EQUAL(golden_stats_std(&s), 0.0);
    golden_stats_init(&s);
    const double d[] = {5e-324, 5e-324, 1e-310};
    golden_stats_add(&s, d, 3);
    CU_ASSERT_EQUAL(golden_stats_min(&s), 5e-324);
    CU_ASSERT_EQUAL(golden_stats_max(&s), 1e-310);
    CU_ASSERT_EQUAL(s.zero_count, 0);
    CU_ASSERT(golden_stats_mean(&s) > 0);
}

static void test_cancellation(void)
{
    /* 1e9 + {1,2,3,4}: naive sum-of-squares loses everything; the answer is sqrt(1.25) */
    const double x[] = {1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4};
    golden_stats s;
    golden_stats_init(&s);
    golden_stats_add(&s, x, 4);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_std(&s), sqrt(1.25), 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_mean(&s), 1e9 + 2.5, 1e-6);
}

static void test_blocks_and_merge(void)
{
    /* 0..n-1: mean (n-1)/2, population variance (n^2-1)/12, over several internal blocks */
    enum { N = 10007 };
    static double x[N];
    for (int i = 0; i < N; i++)
        x[i] = i;
    golden_stats whole, a, b;
    golden_stats_init(&whole);
    golden_stats_add(&whole, x, N);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_mean(&whole), (N - 1) / 2.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_std(&whole), sqrt(((double)N * N - 1) / 12.0), 1e-9);
    golden_stats_init(&a);
    golden_stats_init(&b);
    golden_stats_add(&a, x, 3001);
    golden_stats_add(&b, x + 3001, N - 3001);
    golden_stats_merge(&a, &b);
    CU_ASSERT_EQUAL(a.count, (uint64_t)N);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_mean(&a), (N - 1) / 2.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_std(&a), sqrt(((double)N * N - 1) / 12.0), 1e-9);
    CU_ASSERT_EQUAL(golden_stats_max(&a), N - 1);
    CU_ASSERT_EQUAL(a.zero_count, 1);
}

/* Issue 19.4: finite data gives finite statistics. Worked by hand: ten values of 1e308 have
 * mean 1e308 and std 0; {1e200, -1e200} has mean 0 and population std 1e200; the largest
 * finite double with its negative has std DBL_MAX. */
static void test_huge_values_stay_finite(void)
{
    double ten[10];
    for (int i = 0; i < 10; i++)
        ten[i] = 1e308;
    golden_stats s;
    golden_stats_init(&s);
    golden_stats_add(&s, ten, 10);
    CU_ASSERT_EQUAL(golden_stats_mean(&s), 1e308);
    CU_ASSERT_EQUAL(golden_stats_std(&s), 0.0);
    const double pm[] = {1e200, -1e200};
    golden_stats_init(&s);
    golden_stats_add(&s, pm, 2);
    CU_ASSERT_EQUAL(golden_stats_mean(&s), 0.0);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_std(&s) / 1e200, 1.0, 1e-15);
    const double ext[] = {DBL_MAX, -DBL_MAX, NAN};
    golden_stats_init(&s);
    golden_stats_add(&s, ext, 3);
    CU_ASSERT_EQUAL(golden_stats_mean(&s), 0.0);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_std(&s) / DBL_MAX, 1.0, 1e-15);
    CU_ASSERT_EQUAL(s.nan_count, 1);
    /* huge and ordinary blocks merged: 4096 values of 1e300 then 4096 of -1e300: mean 0,
     * std 1e300 */
    static double mix[2 * GOLDEN_STATS_BLOCK];
    for (int i = 0; i < 2 * GOLDEN_STATS_BLOCK; i++)
        mix[i] = i < GOLDEN_STATS_BLOCK ? 1e300 : -1e300;
    golden_stats_init(&s);
    golden_stats_add(&s, mix, 2 * GOLDEN_STATS_BLOCK);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_mean(&s), 0.0, 1e285);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_std(&s) / 1e300, 1.0, 1e-12);
    /* a small block after a huge one: {1e300 x 4096, 1.0 x 4096}: mean 5e299, std 5e299 */
    for (int i = GOLDEN_STATS_BLOCK; i < 2 * GOLDEN_STATS_BLOCK; i++)
        mix[i] = 1.0;
    golden_stats_init(&s);
    golden_stats_add(&s, mix, 2 * GOLDEN_STATS_BLOCK);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_mean(&s) / 5e299, 1.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_std(&s) / 5e299, 1.0, 1e-12);
}

/* xorshift, so the data is the same everywhere */
static uint64_t rng = 88172645463325252ull;
static double next_unit(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0 - 0.5;
}

/* Stats of x added in chunks of `chunk` elements (a multiple of the block), or block by block
 * into separate records merged in order (what the writer's threads do). */
static golden_stats chunked(const double *x, size_t n, size_t chunk, int per_block)
{
    golden_stats s, b;
    golden_stats_init(&s);
    for (size_t at = 0; at < n; at += chunk) {
        size_t k = n - at < chunk ? n - at : chunk;
        if (!per_block) {
            golden_stats_add(&s, x + at, k);
            continue;
        }
        golden_stats_init(&b);
        golden_stats_add(&b, x + at, k);
        golden_stats_merge(&s, &b);
    }
    return s;
}

/* Issue 19.3: the same bits however the data is cut (whole, 16 Ki- or 256 Ki-element chunks,
 * or block records merged in order), on zero-mean, near-constant, periodic and wide-range
 * data; and close to a long-double two-pass reference (a second, simple implementation). */
static void test_blocking_independent(void)
{
    enum { N = 512 * 512 + 1234 };
    static double x[N];
    for (int kind = 0; kind < 4; kind++) {
        long double sum = 0;
        for (int i = 0; i < N; i++) {
            double v = kind == 0   ? next_unit()
                       : kind == 1 ? (i % 97 < 5 ? nextafter(1.0, 2.0) : 1.0)
                       : kind == 2 ? sin(2 * M_PI * i / 4096.0)
                                   : ldexp(next_unit(), (int)(i % 400) - 200);
            x[i] = v;
            sum += v;
        }
        if (kind == 0) { /* w - w.mean() */
            double m = (double)(sum / N);
            sum = 0;
            for (int i = 0; i < N; i++)
                sum += (x[i] -= m);
        }
        long double mean = sum / N, ss = 0;
        for (int i = 0; i < N; i++)
            ss += ((long double)x[i] - mean) * ((long double)x[i] - mean);
        golden_stats whole = chunked(x, N, N, 0);
        size_t cuts[] = {GOLDEN_STATS_BLOCK, 4 * GOLDEN_STATS_BLOCK, 64 * GOLDEN_STATS_BLOCK};
        for (size_t c = 0; c < 3; c++)
            for (int pb = 0; pb < 2; pb++) {
                if (pb && c > 0)
                    continue; /* block records: one block each */
                golden_stats s = chunked(x, N, cuts[c], pb);
                CU_ASSERT_EQUAL(golden_stats_mean(&s), golden_stats_mean(&whole));
                CU_ASSERT_EQUAL(golden_stats_std(&s), golden_stats_std(&whole));
            }
        double amax = fmax(fabs(golden_stats_min(&whole)), fabs(golden_stats_max(&whole)));
        CU_ASSERT(fabs(golden_stats_mean(&whole) - (double)mean) <= 1e-15 * amax);
        double ref_std = (double)sqrtl(ss / N);
        CU_ASSERT(fabs(golden_stats_std(&whole) - ref_std) <= 1e-13 * ref_std + 1e-15 * amax);
    }
}


/* Every field, bit for bit (NaN statistics compare equal as NaN). */
static int same_stats(const golden_stats *a, const golden_stats *b)
{
    return a->count == b->count && a->nan_count == b->nan_count && a->posinf_count == b->posinf_count &&
           a->neginf_count == b->neginf_count && a->zero_count == b->zero_count && a->finite == b->finite &&
           memcmp(&a->min, &b->min, sizeof a->min) == 0 && memcmp(&a->max, &b->max, sizeof a->max) == 0 &&
           memcmp(&a->mean, &b->mean, sizeof a->mean) == 0 && memcmp(&a->m2, &b->m2, sizeof a->m2) == 0 &&
           a->m2_exp == b->m2_exp;
}

/* The canonical bytes of n test values of type t (f64, f32 or bf16) for pattern kind:
 * 0 normals, 1 with NaN/Inf/signed zeros sprinkled, 2 denormals of the type, 3 huge values
 * (beyond 2^450 for f64: the scaled path), 4 every 16-bit pattern in turn (bf16: all 65536). */
static void make_values(golden_dtype t, int kind, unsigned char *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double v = next_unit() * 8;
        if (kind == 1 && i % 37 == 3)
            v = (i / 37) % 4 == 0 ? NAN : (i / 37) % 4 == 1 ? INFINITY : (i / 37) % 4 == 2 ? -0.0 : 0.0;
        if (kind == 2)
            v = t == GOLDEN_F64 ? v * 0x1p-1060 : v * 0x1p-140;
        if (kind == 3)
            v = t == GOLDEN_F64 ? v * 0x1p900 : v * 0x1p120;
        if (t == GOLDEN_F64) {
            memcpy(out + 8 * i, &v, 8);
        } else if (t == GOLDEN_F32) {
            float f = (float)v;
            memcpy(out + 4 * i, &f, 4);
        } else {
            float f = (float)v;
            uint32_t w;
            memcpy(&w, &f, 4);
            uint16_t h = kind == 4 ? (uint16_t)i : (uint16_t)(w >> 16);
            memcpy(out + 2 * i, &h, 2);
        }
    }
}

/* golden_stats_add_raw (fused, AVX2 where the CPU has it, and forced portable) gives the bits
 * of golden_convert_to_f64 followed by golden_stats_add, on every pattern, for lengths that
 * end mid-lane, mid-block and on a block boundary. */
static void test_raw_matches_convert(void)
{
    static const golden_dtype types[] = {GOLDEN_F64, GOLDEN_F32, GOLDEN_BF16, GOLDEN_F16, GOLDEN_I32};
    static const size_t lens[] = {1, 3, 4, 7, GOLDEN_STATS_BLOCK, GOLDEN_STATS_BLOCK + 5,
                                  3 * GOLDEN_STATS_BLOCK + 2, 65536};
    static unsigned char raw[65536 * 8];
    static double conv[65536], scratch[GOLDEN_STATS_BLOCK];
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
        for (int kind = 0; kind < 5; kind++)
            for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
                golden_dtype t = types[ti];
                size_t n = lens[li];
                if (t == GOLDEN_F16 || t == GOLDEN_I32)
                    for (size_t i = 0; i < n * golden_dtype_size(t); i++)
                        raw[i] = (unsigned char)(next_unit() * 512);
                else
                    make_values(t, kind, raw, n);
                lg_cpu_force_portable(true);
                golden_convert_to_f64(t, raw, n, conv);
                golden_stats ref, fused, portable;
                golden_stats_init(&ref);
                golden_stats_add(&ref, conv, n);
                golden_stats_init(&portable);
                golden_stats_add_raw(&portable, t, raw, n, scratch);
                lg_cpu_force_portable(false);
                golden_stats_init(&fused);
                golden_stats_add_raw(&fused, t, raw, n, scratch);
                CU_ASSERT(same_stats(&ref, &portable));
                CU_ASSERT(same_stats(&ref, &fused));
                golden_stats simd_f64;
                golden_stats_init(&simd_f64);
                golden_stats_add(&simd_f64, conv, n);
                CU_ASSERT(same_stats(&ref, &simd_f64));
                if (!same_stats(&ref, &fused) || !same_stats(&ref, &portable))
                    fprintf(stderr, "dtype %s kind %d n %zu differs\n", golden_dtype_name(t), kind, n);
            }
}

/* The order that makes the bits: one block of finite values reduced in four lanes (element i
 * in lane i % 4, the tail in lane 0), summed (0+1)+(2+3), then a corrected second pass;
 * written here as plain scalar loops, a second implementation the SIMD paths must equal. */
/* golden-diff's verified pass (diff_pass.c) reduces a chunk's blocks on any worker, each
 * into its own golden_stats from golden_stats_init, and merges them into the tensor's in
 * block order: every field must be the bits of golden_stats_add_raw over the chunks, on
 * every pattern and type (huge values: the scaled merge), lengths ending mid-block. */
static void test_block_records_merge_to_raw(void)
{
    enum { N = 9 * GOLDEN_STATS_BLOCK + 1000 };
    static unsigned char data[8 * N];
    static double scratch[GOLDEN_STATS_BLOCK];
    static const golden_dtype types[] = {GOLDEN_F64, GOLDEN_F32, GOLDEN_BF16};
    int bad = 0, cases = 0;
    for (size_t ti = 0; ti < 3; ti++)
        for (int kind = 0; kind < 4; kind++) {
            golden_dtype t = types[ti];
            size_t w = golden_dtype_size(t);
            make_values(t, kind, data, N);
            size_t chunk = 4 * GOLDEN_STATS_BLOCK; /* three chunks, the last short */
            golden_stats direct, merged;
            golden_stats_init(&direct);
            golden_stats_init(&merged);
            for (size_t off = 0; off < N; off += chunk) {
                size_t n = N - off < chunk ? N - off : chunk;
                golden_stats_add_raw(&direct, t, data + off * w, n, scratch);
                for (size_t b = 0; b < n; b += GOLDEN_STATS_BLOCK) {
                    size_t m = n - b < GOLDEN_STATS_BLOCK ? n - b : GOLDEN_STATS_BLOCK;
                    golden_stats one;
                    golden_stats_init(&one);
                    golden_stats_add_raw(&one, t, data + (off + b) * w, m, scratch);
                    golden_stats_merge(&merged, &one);
                }
            }
            bad += !same_stats(&direct, &merged);
            cases += direct.count == N;
        }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(cases, 12);
}

static void test_lane_order_by_hand(void)
{
    enum { N = 1001 };
    static double x[N];
    for (int i = 0; i < N; i++)
        x[i] = next_unit() * 1e3 + 7;
    double sum[4] = {0, 0, 0, 0}, m2[4] = {0, 0, 0, 0}, corr[4] = {0, 0, 0, 0};
    int i = 0;
    for (; i + 4 <= N; i += 4)
        for (int l = 0; l < 4; l++)
            sum[l] += x[i + l];
    for (; i < N; i++)
        sum[0] += x[i];
    double mean = ((sum[0] + sum[1]) + (sum[2] + sum[3])) / N;
    for (i = 0; i + 4 <= N; i += 4)
        for (int l = 0; l < 4; l++) {
            double d = x[i + l] - mean;
            m2[l] += d * d;
            corr[l] += d;
        }
    for (; i < N; i++) {
        double d = x[i] - mean;
        m2[0] += d * d;
        corr[0] += d;
    }
    double c = (corr[0] + corr[1]) + (corr[2] + corr[3]);
    double m = (m2[0] + m2[1]) + (m2[2] + m2[3]) - c * c / N;
    mean += c / N;
    for (int forced = 0; forced < 2; forced++) {
        lg_cpu_force_portable(forced);
        golden_stats s;
        golden_stats_init(&s);
        golden_stats_add(&s, x, N);
        CU_ASSERT_EQUAL(memcmp(&s.mean, &mean, sizeof mean), 0);
        CU_ASSERT_EQUAL(memcmp(&s.m2, &m, sizeof m), 0);
    }
    lg_cpu_force_portable(false);
}

/* Zeros of both signs: min and max are the first element's zero, whichever path (plain four
 * lanes or the general one with a NaN), SIMD or portable, f64 or read from bf16 bytes. The
 * lanes once met in fmin/fmax, whose choice between -0 and +0 GCC made differently in the
 * AVX2 and portable copies. */
static void test_signed_zeros_first_wins(void)
{
    static const size_t lens[] = {4, 7, 9, GOLDEN_STATS_BLOCK};
    static double x[GOLDEN_STATS_BLOCK + 1];
    static uint16_t h[GOLDEN_STATS_BLOCK];
    static double scratch[GOLDEN_STATS_BLOCK];
    for (int round = 0; round < 64; round++)
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
            size_t n = lens[li];
            for (size_t i = 0; i < n; i++) {
                bool neg = next_unit() < 0;
                x[i] = neg ? -0.0 : 0.0;
                h[i] = neg ? 0x8000 : 0;
            }
            bool first_neg = signbit(x[0]) != 0;
            for (int forced = 0; forced < 2; forced++) {
                lg_cpu_force_portable(forced);
                golden_stats a, b;
                golden_stats_init(&a);
                golden_stats_add(&a, x, n);
                golden_stats_init(&b);
                golden_stats_add_raw(&b, GOLDEN_BF16, h, n, scratch);
                CU_ASSERT(a.min == 0 && (signbit(a.min) != 0) == first_neg);
                CU_ASSERT(a.max == 0 && (signbit(a.max) != 0) == first_neg);
                CU_ASSERT(b.min == 0 && (signbit(b.min) != 0) == first_neg);
                CU_ASSERT(b.max == 0 && (signbit(b.max) != 0) == first_neg);
                CU_ASSERT_EQUAL(a.zero_count, n);
            }
            /* the general path (a NaN at the end) keeps the first zero too */
            x[n] = NAN;
            golden_stats g;
            golden_stats_init(&g);
            golden_stats_add(&g, x, n + 1);
            CU_ASSERT((signbit(g.min) != 0) == first_neg && (signbit(g.max) != 0) == first_neg);
        }
    lg_cpu_force_portable(false);
}

int main(void)
{
    static const golden_test tests[] = {
        {"simple mean and std", test_simple},
        {"NaN, Inf and zeros", test_nonfinite},
        {"empty and no finite element", test_empty_and_all_nan},
        {"scalar and denormals", test_scalar_and_denormal},
        {"large offset cancellation", test_cancellation},
        {"blocks and merge", test_blocks_and_merge},
        {"huge finite values give finite statistics", test_huge_values_stay_finite},
        {"same bits however the data is cut", test_blocking_independent},
        {"fused raw path = convert then add, SIMD and portable", test_raw_matches_convert},
        {"block records merged in order = add_raw, bit for bit", test_block_records_merge_to_raw},
        {"four lanes in the documented order (scalar reference)", test_lane_order_by_hand},
        {"signed zeros: the first one is min and max", test_signed_zeros_first_wins},
        {0, 0}};
    return golden_test_run("stats", tests);
}

/* golden_cpu_*: CPU features for run-time SIMD dispatch, found once per process. Threads may
 * find it at once: every one computes the same answer, stored in a relaxed atomic (no data
 * race for ThreadSanitizer or the C memory model). */
#include "util/cpu.h"

#include <stdatomic.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

static atomic_int forced; /* lg_cpu_force_portable */

bool lg_cpu_avx2(void)
{
#if defined(__x86_64__)
    static atomic_int known = -1;
    int k = atomic_load_explicit(&known, memory_order_relaxed);
    if (k < 0) {
        k = __builtin_cpu_supports("avx2") ? 1 : 0;
        atomic_store_explicit(&known, k, memory_order_relaxed);
    }
    return k == 1 && !atomic_load_explicit(&forced, memory_order_relaxed);
#else
    return false;
#endif
}

bool lg_cpu_f16c(void)
{
#if defined(__x86_64__)
    static atomic_int known = -1;
    int k = atomic_load_explicit(&known, memory_order_relaxed);
    if (k < 0) {
        /* CPUID leaf 1, ECX bit 29 (clang 14's __builtin_cpu_supports knows no "f16c") */
        unsigned a, b, c, d;
        bool f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29));
        k = __builtin_cpu_supports("avx2") && f16c ? 1 : 0;
        atomic_store_explicit(&known, k, memory_order_relaxed);
    }
    return k == 1 && !atomic_load_explicit(&forced, memory_order_relaxed);
#else
    return false;
#endif
}

void lg_cpu_force_portable(bool on)
{
    atomic_store(&forced, on);
}

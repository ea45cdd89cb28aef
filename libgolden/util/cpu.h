/* What the CPU can do, asked once: the run-time dispatch of libgolden's SIMD paths (each has a
 * portable twin that gives the same bits, which the tests prove by forcing the twin). */
#ifndef GOLDEN_UTIL_CPU_H
#define GOLDEN_UTIL_CPU_H
#include <stdbool.h>

/* AVX2 (and the OS saves the YMM registers: __builtin_cpu_supports checks both). */
bool lg_cpu_avx2(void);
/* AVX2 and F16C (half-precision conversion). */
bool lg_cpu_f16c(void);
/* Tests only: true makes both answers false from now on, so the portable paths run. */
void lg_cpu_force_portable(bool on);

#endif

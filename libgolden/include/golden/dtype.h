/* Element types of calculet-golden/v1 and their exact conversion to f64.
 * Written once here and reused by every tool (bf16/f16 have table-driven fast paths). */
#ifndef GOLDEN_DTYPE_H
#define GOLDEN_DTYPE_H
#include "golden/api.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    GOLDEN_F64,
    GOLDEN_F32,
    GOLDEN_F16,
    GOLDEN_BF16,
    GOLDEN_I8,
    GOLDEN_U8,
    GOLDEN_I16,
    GOLDEN_U16,
    GOLDEN_I32,
    GOLDEN_U32,
    GOLDEN_I64,
    GOLDEN_U64,
    GOLDEN_BOOL,
    GOLDEN_FP8_E4M3FN,
    GOLDEN_FP8_E5M2,
    GOLDEN_DTYPE_COUNT
} golden_dtype;

/* The contract's name ("bf16", "fp8_e4m3fn", ...). */
GOLDEN_API const char *golden_dtype_name(golden_dtype t);
/* Parse a contract name; returns 0, or -1 when unknown. */
GOLDEN_API int golden_dtype_parse(const char *name, golden_dtype *out);
/* Bytes per element (1, 2, 4 or 8). */
GOLDEN_API size_t golden_dtype_size(golden_dtype t);
/* Floating types: f64 f32 f16 bf16 and the two fp8 formats. */
GOLDEN_API bool golden_dtype_is_float(golden_dtype t);
/* Integer types and bool. */
GOLDEN_API bool golden_dtype_is_integer(golden_dtype t);
GOLDEN_API bool golden_dtype_is_signed(golden_dtype t);

/* Exact scalar conversions of the narrow float formats. */
GOLDEN_API double golden_bf16_to_f64(uint16_t bits);
GOLDEN_API double golden_f16_to_f64(uint16_t bits);
GOLDEN_API double golden_fp8_e4m3fn_to_f64(uint8_t bits);
GOLDEN_API double golden_fp8_e5m2_to_f64(uint8_t bits);

/* Convert n elements of canonical bytes (little-endian, natural width) to f64.
 * Exact for every float type and for integers up to 2^53 in magnitude; i64/u64 beyond
 * that round to nearest (use golden_convert_to_i64 for exact integer work). */
GOLDEN_API void golden_convert_to_f64(golden_dtype t, const void *src, size_t n, double *dst);

/* Integer types only: n elements to int64 (u64 above INT64_MAX saturates; returns the
 * number saturated). */
GOLDEN_API size_t golden_convert_to_i64(golden_dtype t, const void *src, size_t n, int64_t *dst);

#endif

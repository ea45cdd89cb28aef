/* The compiled fast path of calculet-raw-request/v1 (schemas/calculet-raw-request-v1.schema.json
 * and calculet-common's stage, issue 26's speed): true only for a line that plainly satisfies
 * every keyword of the schema, so that the generic validator would report nothing. It never
 * says "invalid": anything it does not recognise at once (a real where an integer is asked, a
 * string over 200 bytes, -0.0, an unknown key) goes to the generic validator, whose findings are
 * then the findings. tests/unit/test_raw_fast.c holds the two to that on valid and mutated
 * lines. Keys and strings are compared with their lengths (a key may hold a NUL). */
#include "exp/internal.h"

#include <math.h>
#include <string.h>

static bool is(const char *key, size_t len, const char *name)
{
    return strlen(name) == len && memcmp(key, name, len) == 0;
}

static bool str_is(const json_t *v, const char *want)
{
    return json_is_string(v) && json_string_length(v) == strlen(want) &&
           memcmp(json_string_value(v), want, strlen(want)) == 0;
}

/* minLength 1, maxLength 200 (code points): 1 to 200 bytes are 1 to 200 code points. */
static bool id_ok(const json_t *v)
{
    return json_is_string(v) && json_string_length(v) >= 1 && json_string_length(v) <= 200;
}

static bool int_min(const json_t *v, json_int_t min)
{
    return json_is_integer(v) && json_integer_value(v) >= min;
}

/* a number >= 0 (a real: not -0.0, whose sign the validator may read otherwise) */
static bool num_nonneg(const json_t *v)
{
    if (json_is_integer(v))
        return json_integer_value(v) >= 0;
    return json_is_real(v) && json_real_value(v) >= 0 && !signbit(json_real_value(v));
}

static bool num_array(const json_t *v, bool nonneg)
{
    if (!json_is_array(v))
        return false;
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x) {
        if (nonneg ? !num_nonneg(x) : !(json_is_integer(x) || json_is_real(x)))
            return false;
    }
    return true;
}

static const char *const stage_keys[9] = {"client_queue", "service_queue", "input_prepare",
                                          "h2d", "npu_wait", "d2h", "logits_conversion",
                                          "sampling", "stream_flush"};

/* calculet-common's stage: {start_ns, end_ns}, integers >= 0, nothing else. */
static bool stage_ok(const json_t *st)
{
    if (!json_is_object(st) || json_object_size(st) != 2)
        return false;
    const char *k;
    size_t kl;
    json_t *v;
    unsigned seen = 0;
    json_object_keylen_foreach((json_t *)st, k, kl, v) {
        unsigned bit = is(k, kl, "start_ns") ? 1u : is(k, kl, "end_ns") ? 2u : 0u;
        if (!bit || (seen & bit) || !int_min(v, 0))
            return false;
        seen |= bit;
    }
    return seen == 3;
}

static bool stages_ok(const json_t *o)
{
    if (!json_is_object(o) || json_object_size(o) != 9)
        return false;
    const char *k;
    size_t kl;
    json_t *v;
    unsigned seen = 0;
    json_object_keylen_foreach((json_t *)o, k, kl, v) {
        unsigned bit = 0;
        for (int i = 0; i < 9 && !bit; i++)
            if (is(k, kl, stage_keys[i]))
                bit = 1u << i;
        if (!bit || (seen & bit) || !stage_ok(v))
            return false;
        seen |= bit;
    }
    return seen == 0x1ffu;
}

/* One top-level member: 1..7 the bit of a required key, 0 an optional key that is fine, -1 not
 * plainly valid. */
static int member(const char *k, size_t kl, const json_t *v)
{
    if (is(k, kl, "request_id"))
        return id_ok(v) ? 1 : -1;
    if (is(k, kl, "case_id"))
        return id_ok(v) ? 2 : -1;
    if (is(k, kl, "side"))
        return str_is(v, "baseline") || str_is(v, "candidate") ? 3 : -1;
    if (is(k, kl, "run"))
        return int_min(v, 0) ? 4 : -1;
    if (is(k, kl, "warmup"))
        return json_is_boolean(v) ? 5 : -1;
    if (is(k, kl, "steady"))
        return json_is_boolean(v) ? 6 : -1;
    if (is(k, kl, "stages"))
        return stages_ok(v) ? 7 : -1;
    if (is(k, kl, "schema"))
        return str_is(v, "calculet-raw-request/v1") ? 0 : -1;
    if (is(k, kl, "concurrency"))
        return int_min(v, 1) ? 0 : -1;
    if (is(k, kl, "output_tokens"))
        return int_min(v, 0) ? 0 : -1;
    if (is(k, kl, "power_w") || is(k, kl, "ttft_ms") || is(k, kl, "tpot_ms"))
        return num_nonneg(v) ? 0 : -1;
    if (is(k, kl, "chip_temperature_c"))
        return num_array(v, false) ? 0 : -1;
    if (is(k, kl, "clock_mhz"))
        return num_array(v, true) ? 0 : -1;
    if (is(k, kl, "outcome"))
        return str_is(v, "ok") || str_is(v, "timeout") || str_is(v, "error") ? 0 : -1;
    return -1; /* additionalProperties: false */
}

bool exp_raw_request_plain(const json_t *root)
{
    if (!json_is_object(root))
        return false;
    const char *k;
    size_t kl;
    json_t *v;
    unsigned seen = 0;
    json_object_keylen_foreach((json_t *)root, k, kl, v) {
        int m = member(k, kl, v);
        if (m < 0)
            return false;
        if (m > 0) {
            if (seen & (1u << m))
                return false;
            seen |= 1u << m;
        }
    }
    return seen == 0xfeu; /* bits 1..7: every required key */
}

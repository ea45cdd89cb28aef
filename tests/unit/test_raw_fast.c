/* The compiled fast path of calculet-raw-request/v1 (libgolden/exp/raw_fast.c) against the
 * generic schema validator, on a corpus of valid lines and their mutations (every key dropped,
 * every value replaced by values of every JSON type and edge, keys added, seeded random
 * combinations): the fast path may say "plainly valid" only where the generic validator finds
 * no violation, and it must say so for the common valid shapes (else it would be dead code). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_main.h"
#include "golden/doc.h"
#include "golden/schema.h"
#include "exp/internal.h"

static golden_schema *schema;
static size_t checked, fast_taken, generic_valid, wrong;

static const char *const base_lines[] = {
    /* the shape bench/gen-exp-gate-folder.py writes */
    "{\"request_id\":\"baseline-c1-000001\",\"case_id\":\"c1\",\"side\":\"baseline\",\"run\":1,"
    "\"warmup\":false,\"steady\":true,\"concurrency\":1,\"output_tokens\":8,\"ttft_ms\":10.25,"
    "\"tpot_ms\":5.5,\"stages\":{\"client_queue\":{\"start_ns\":1000,\"end_ns\":1100},"
    "\"service_queue\":{\"start_ns\":1100,\"end_ns\":1200},\"input_prepare\":{\"start_ns\":1200,"
    "\"end_ns\":1300},\"h2d\":{\"start_ns\":1300,\"end_ns\":1400},\"npu_wait\":{\"start_ns\":1400,"
    "\"end_ns\":1500},\"d2h\":{\"start_ns\":1500,\"end_ns\":1600},\"logits_conversion\":"
    "{\"start_ns\":1600,\"end_ns\":1700},\"sampling\":{\"start_ns\":1700,\"end_ns\":1800},"
    "\"stream_flush\":{\"start_ns\":1800,\"end_ns\":1900}}}",
    /* every optional key */
    "{\"schema\":\"calculet-raw-request/v1\",\"request_id\":\"r\",\"case_id\":\"C\",\"side\":"
    "\"candidate\",\"run\":0,\"warmup\":true,\"steady\":false,\"concurrency\":4,\"power_w\":0,"
    "\"chip_temperature_c\":[-3.5,40,41.25],\"clock_mhz\":[0,1500.5],\"output_tokens\":0,"
    "\"ttft_ms\":0,\"tpot_ms\":0.0,\"outcome\":\"timeout\",\"stages\":{\"stream_flush\":"
    "{\"end_ns\":9,\"start_ns\":9},\"sampling\":{\"start_ns\":0,\"end_ns\":0},\"client_queue\":"
    "{\"start_ns\":0,\"end_ns\":1},\"service_queue\":{\"start_ns\":0,\"end_ns\":1},"
    "\"input_prepare\":{\"start_ns\":0,\"end_ns\":1},\"h2d\":{\"start_ns\":0,\"end_ns\":1},"
    "\"npu_wait\":{\"start_ns\":0,\"end_ns\":1},\"d2h\":{\"start_ns\":0,\"end_ns\":1},"
    "\"logits_conversion\":{\"start_ns\":5,\"end_ns\":1}}}",
    /* the least: required keys only, outcome error, empty arrays */
    "{\"request_id\":\"\\u00e9\",\"case_id\":\"x\",\"side\":\"baseline\",\"run\":7,\"warmup\":"
    "false,\"steady\":true,\"outcome\":\"error\",\"clock_mhz\":[],\"chip_temperature_c\":[],"
    "\"stages\":{\"client_queue\":{\"start_ns\":1,\"end_ns\":2},\"service_queue\":{\"start_ns\":"
    "1,\"end_ns\":2},\"input_prepare\":{\"start_ns\":1,\"end_ns\":2},\"h2d\":{\"start_ns\":1,"
    "\"end_ns\":2},\"npu_wait\":{\"start_ns\":1,\"end_ns\":2},\"d2h\":{\"start_ns\":1,\"end_ns\":"
    "2},\"logits_conversion\":{\"start_ns\":1,\"end_ns\":2},\"sampling\":{\"start_ns\":1,"
    "\"end_ns\":2},\"stream_flush\":{\"start_ns\":1,\"end_ns\":2}}}",
};

/* Values every member is replaced by in turn. */
static json_t *alt_value(int k)
{
    static char s200[201], s201[202], u200[401];
    memset(s200, 'a', 200);
    memset(s201, 'b', 201);
    for (int i = 0; i < 200; i++)
        memcpy(u200 + 2 * i, "\xc3\xa9", 2); /* 200 code points, 400 bytes: valid */
    switch (k) {
    case 0: return json_string("");
    case 1: return json_string("x");
    case 2: return json_integer(0);
    case 3: return json_integer(-1);
    case 4: return json_integer(1);
    case 5: return json_real(1.5);
    case 6: return json_real(-0.0);
    case 7: return json_real(1.0);
    case 8: return json_real(-2.5);
    case 9: return json_true();
    case 10: return json_false();
    case 11: return json_null();
    case 12: return json_array();
    case 13: return json_object();
    case 14: return json_pack("[i,i]", 1, -1);
    case 15: return json_pack("[s]", "a");
    case 16: return json_pack("[f,i]", 2.5, 3);
    case 17: return json_string(s200);
    case 18: return json_string(s201);
    case 19: return json_stringn(u200, 400);
    case 20: return json_string("baseline");
    case 21: return json_string("candidate");
    case 22: return json_string("calculet-raw-request/v1");
    case 23: return json_string("calculet-raw-request/v2");
    case 24: return json_string("ok");
    case 25: return json_string("Baseline");
    case 26: return json_stringn("ok\0", 3);
    case 27: return json_pack("{s:i,s:i}", "start_ns", 5, "end_ns", 6);
    case 28: return json_pack("{s:i,s:i,s:i}", "start_ns", 5, "end_ns", 6, "x", 1);
    case 29: return json_pack("{s:i}", "start_ns", 5);
    case 30: return json_pack("{s:f,s:i}", "start_ns", 5.0, "end_ns", 6);
    case 31: return json_integer(9223372036854775807LL);
    default: return NULL;
    }
}
#define NALT 32

/* Serialise v and judge it both ways. */
static void judge(const json_t *v)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    golden_doc *d = NULL;
    golden_error err;
    if (golden_doc_load_json("line", text, strlen(text), 1, &d, &err) != 0) {
        free(text); /* not JSON the strict reader takes (a NUL in a key): never reaches either */
        return;
    }
    golden_violation *viol = NULL;
    long n = golden_schema_validate(schema, d, NULL, &viol, &err);
    CU_ASSERT(n >= 0);
    bool plain = exp_raw_request_plain(golden_doc_root(d));
    checked++;
    fast_taken += plain;
    generic_valid += n == 0;
    if (plain && n != 0) {
        wrong++;
        fprintf(stderr, "fast path accepts what the validator refuses (%s: %s): %s\n",
                viol[0].pointer, viol[0].message, text);
    }
    free(viol);
    golden_doc_free(d);
    free(text);
}

/* Each member of obj (at any depth) dropped, replaced by every alternative, and a key added. */
static void mutate_all(json_t *root, json_t *obj)
{
    const char *keys[32];
    size_t nk = 0;
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v) {
        if (nk < 32)
            keys[nk++] = k;
    }
    for (size_t i = 0; i < nk; i++) {
        json_t *keep = json_incref(json_object_get(obj, keys[i]));
        char *key = strdup(keys[i]);
        json_object_del(obj, key);
        judge(root);
        for (int a = 0; a < NALT; a++) {
            json_object_set_new(obj, key, alt_value(a));
            judge(root);
        }
        json_object_set(obj, key, keep);
        if (json_is_object(keep))
            mutate_all(root, keep);
        json_decref(keep);
        free(key);
    }
    json_object_set_new(obj, "extra", json_integer(1));
    judge(root);
    json_object_del(obj, "extra");
    json_object_setn_new(obj, "run\0x", 5, json_integer(1));
    judge(root);
    json_object_deln(obj, "run\0x", 5);
    judge(root); /* restored: valid again */
}

static void test_corpus(void)
{
    golden_error err;
    CU_ASSERT_FATAL(golden_schema_load("calculet-raw-request/v1", &schema, &err) == 0);
    for (size_t b = 0; b < sizeof base_lines / sizeof base_lines[0]; b++) {
        json_error_t je;
        json_t *root = json_loads(base_lines[b], 0, &je);
        CU_ASSERT_PTR_NOT_NULL_FATAL(root);
        size_t before = fast_taken;
        judge(root);
        CU_ASSERT(fast_taken == before + 1); /* the common shapes take the fast path */
        mutate_all(root, root);
        json_decref(root);
    }
    for (int a = 0; a < NALT; a++) { /* roots that are not objects */
        json_t *v = alt_value(a);
        judge(v);
        json_decref(v);
    }
    CU_ASSERT(wrong == 0);
    CU_ASSERT(checked > 3000);
    /* both answers occur often: the corpus is not all valid or all invalid */
    CU_ASSERT(fast_taken > 100 && generic_valid > fast_taken / 2 && checked - generic_valid > 1000);
    fprintf(stderr, "  %zu lines: %zu valid (generic), %zu on the fast path\n", checked,
            generic_valid, fast_taken);
}

/* Seeded random combinations of up to four mutations of the first base line. */
static void test_random(void)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;
    size_t w0 = wrong, t0 = fast_taken;
    for (int it = 0; it < 3000; it++) {
        json_error_t je;
        json_t *root = json_loads(base_lines[it % 3], 0, &je);
        int muts = 1 + it % 4;
        for (int m = 0; m < muts; m++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            json_t *obj = root;
            if (x & 1) { /* inside a stage */
                json_t *st = json_object_get(root, "stages");
                void *iter = json_object_iter(st);
                for (uint64_t s = (x >> 1) % 9; iter && s; s--)
                    iter = json_object_iter_next(st, iter);
                obj = iter ? json_object_iter_value(iter) : root;
            }
            void *iter = json_object_iter(obj);
            for (uint64_t s = (x >> 8) % (json_object_size(obj) + 1); iter && s; s--)
                iter = json_object_iter_next(obj, iter);
            if (!iter)
                continue;
            char *key = strdup(json_object_iter_key(iter));
            int a = (int)((x >> 20) % (NALT + 4));
            if (a >= NALT)
                json_object_del(obj, key);
            else
                json_object_set_new(obj, key, alt_value(a));
            free(key);
        }
        judge(root);
        json_decref(root);
    }
    CU_ASSERT(wrong == w0);
    CU_ASSERT(fast_taken > t0); /* some combinations stay valid and fast */
    golden_schema_free(schema);
}

int main(void)
{
    static const golden_test tests[] = {
        {"fast path accepts only what the validator accepts (corpus)", test_corpus},
        {"fast path on seeded random mutations", test_random},
        {NULL, NULL}};
    return golden_test_run("raw-request fast path", tests);
}

/* stability/faults.jsonl's rules (replay/faults.c): the kind a backend message maps to, which
 * logits rows are unusable, and the line the shared writer produces, checked by hand. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "replay/faults_priv.h"

static void test_kind(void)
{
    CU_ASSERT_STRING_EQUAL(replay_fault_kind("context_limit_exceeded: 9 past 8"), "rejected_input");
    CU_ASSERT_STRING_EQUAL(replay_fault_kind("timeout: call 3"), "timeout");
    CU_ASSERT_STRING_EQUAL(replay_fault_kind("the device timed out"), "timeout");
    CU_ASSERT_STRING_EQUAL(replay_fault_kind("out of memory"), "oom");
    CU_ASSERT_STRING_EQUAL(replay_fault_kind("router logit 3 of layer 1 is nan: not routed"),
                           "nan_output");
    CU_ASSERT_STRING_EQUAL(replay_fault_kind("output holds NaN"), "nan_output");
    CU_ASSERT_STRING_EQUAL(replay_fault_kind("logit 0 is Inf"), "nan_output");
    /* words that only contain nan/inf/timeout are not those faults */
    CU_ASSERT_STRING_EQUAL(replay_fault_kind("device under maintenance"), "device_error");
    CU_ASSERT_STRING_EQUAL(replay_fault_kind("bad info block"), "device_error");
    CU_ASSERT_STRING_EQUAL(replay_fault_kind("timeouts register corrupt"), "device_error");
    CU_ASSERT_STRING_EQUAL(replay_fault_kind(""), "device_error");
}

static void test_logits(void)
{
    float ok[4] = {1, -INFINITY, 0, 2};
    CU_ASSERT_EQUAL(replay_logits_bad(ok, 4), -1); /* a masked entry is allowed */
    float nan[4] = {1, 2, NAN, 3};
    CU_ASSERT_EQUAL(replay_logits_bad(nan, 4), 2);
    float inf[4] = {1, INFINITY, NAN, 3};
    CU_ASSERT_EQUAL(replay_logits_bad(inf, 4), 1);
    float masked[3] = {-INFINITY, -INFINITY, -INFINITY};
    CU_ASSERT_EQUAL(replay_logits_bad(masked, 3), 3);
}

static void test_writer(void)
{
    char path[64], line[2048];
    snprintf(path, sizeof path, "/tmp/test-faults-%ld.jsonl", (long)getpid());
    replay_fault f[2];
    replay_fault_begin(&f[0]);
    snprintf(f[0].time, sizeof f[0].time, "2026-01-02T03:04:05Z");
    snprintf(f[0].case_id, sizeof f[0].case_id, "c1");
    snprintf(f[0].request_id, sizeof f[0].request_id, "baseline/c1/0");
    f[0].kind = "timeout";
    snprintf(f[0].message, sizeof f[0].message, "say \"hi\"");
    f[0].retest = REPLAY_RETEST_PASSED;
    replay_fault_begin(&f[1]);
    snprintf(f[1].time, sizeof f[1].time, "2026-01-02T03:04:06Z");
    f[1].kind = "device_error";
    snprintf(f[1].message, sizeof f[1].message, "lost");
    f[1].retest = REPLAY_RETEST_FAILED;
    golden_error err;
    CU_ASSERT_EQUAL_FATAL(replay_faults_write(f, 2, "baseline", path, false, &err), 0);
    FILE *in = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, in));
    CU_ASSERT_STRING_EQUAL(line, "{\"schema\":\"calculet-fault/v1\",\"time\":\"2026-01-02T03:04:05Z\","
                           "\"side\":\"baseline\",\"case_id\":\"c1\",\"request_id\":\"baseline/c1/0\","
                           "\"kind\":\"timeout\",\"severity\":\"error\",\"message\":\"say \\\"hi\\\"\","
                           "\"recovered\":true,\"retest_after_reset\":\"passed\"}\n");
    CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, in));
    CU_ASSERT_STRING_EQUAL(line, "{\"schema\":\"calculet-fault/v1\",\"time\":\"2026-01-02T03:04:06Z\","
                           "\"side\":\"baseline\",\"kind\":\"device_error\",\"severity\":\"fatal\","
                           "\"message\":\"lost\",\"recovered\":false,\"retest_after_reset\":\"failed\"}\n");
    CU_ASSERT_PTR_NULL(fgets(line, sizeof line, in));
    fclose(in);
    /* an existing file needs force; with it, no fault gives an empty file */
    CU_ASSERT_NOT_EQUAL(replay_faults_write(f, 0, "baseline", path, false, &err), 0);
    CU_ASSERT_EQUAL(replay_faults_write(f, 0, "baseline", path, true, &err), 0);
    in = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    CU_ASSERT_EQUAL(fgetc(in), EOF);
    fclose(in);
    unlink(path);
}

int main(void)
{
    static const golden_test tests[] = {{"a fault's kind from the backend's message", test_kind},
                                        {"unusable logits rows", test_logits},
                                        {"the calculet-fault/v1 lines, by hand", test_writer},
                                        {0, 0}};
    return golden_test_run("faults", tests);
}

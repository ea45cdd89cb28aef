/* exp-gate summarize on folders written here: warm-ups and unsteady runs counted apart, the
 * steady band, insufficient cases, stage durations, and the same numbers whatever the memory
 * budget (the batching that keeps a 10^7-line file in bounded memory). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cunit_main.h"
#include "golden/gate.h"

static char dir[64];

/* A folder with cases A (baseline 12 warm-ups, 40 runs; candidate 10 + 40) and B (5 warm-ups,
 * 30 runs: insufficient), a candidate-only case C, and unsteady runs. ttft of run r is
 * 10 + r / 100 (baseline) or 9 + r / 100 (candidate); the h2d stage lasts r microseconds. */
static void make_folder(void)
{
    strcpy(dir, "/tmp/golden-gate-XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char p[256];
    snprintf(p, sizeof p, "%s/performance", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/hypothesis.yaml", dir);
    FILE *f = fopen(p, "w");
    fputs("experiment_id: OP-MOE-0009\noperator_family: grouped_moe_dense\n", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/performance/raw-requests.jsonl", dir);
    f = fopen(p, "w");
    struct { const char *c, *side; int warm, runs; double base; } g[] = {
        {"A", "baseline", 12, 40, 10}, {"A", "candidate", 10, 40, 9},
        {"B", "baseline", 5, 30, 20},  {"B", "candidate", 10, 30, 19},
        {"C", "candidate", 10, 30, 1}};
    for (size_t k = 0; k < 5; k++)
        for (int r = 0; r < g[k].warm + g[k].runs; r++) {
            int warm = r < g[k].warm, run = r - g[k].warm;
            /* A candidate: runs 5 and 6 flagged unsteady, run 7's clock leaves the 2 % band */
            int flagged = !strcmp(g[k].c, "A") && g[k].side[0] == 'c' && (run == 5 || run == 6);
            const char *clock = !strcmp(g[k].c, "A") && g[k].side[0] == 'c' && run == 7
                                    ? "[1500, 1450]" : "[1500, 1501]";
            fprintf(f, "{\"request_id\":\"%s-%s-%d\",\"case_id\":\"%s\",\"side\":\"%s\","
                       "\"run\":%d,\"warmup\":%s,\"steady\":%s,\"output_tokens\":1,"
                       "\"clock_mhz\":%s,\"ttft_ms\":%.6f,\"stages\":{\"h2d\":{\"start_ns\":"
                       "1000,\"end_ns\":%d}}}\n",
                    g[k].c, g[k].side, r, g[k].c, g[k].side, r, warm ? "true" : "false",
                    flagged ? "false" : "true", clock,
                    warm ? 100.0 : g[k].base + run / 100.0, 1000 + 1000 * (warm ? 0 : run));
        }
    fclose(f);
}

static void rm_folder(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
}

static json_t *find_case(json_t *s, const char *id, const char *metric)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(s, "cases"), i, c)
        if (!strcmp(json_string_value(json_object_get(c, "case_id")), id) &&
            !strcmp(json_string_value(json_object_get(c, "metric")), metric))
            return c;
    return NULL;
}

static double side(json_t *c, const char *s, const char *k)
{
    return json_number_value(json_object_get(json_object_get(c, s), k));
}

static void test_counts_and_values(void)
{
    make_folder();
    golden_gate_opts o;
    golden_gate_opts_init(&o);
    o.bootstrap = 200;
    o.threads = 1;
    json_t *s;
    golden_error err;
    CU_ASSERT_EQUAL_FATAL(golden_gate_summarize(dir, &o, &s, &err), 0);
    json_t *a = find_case(s, "A", "ttft_ms");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(side(a, "baseline", "n"), 40);
    CU_ASSERT_EQUAL(side(a, "baseline", "warmups"), 12);
    CU_ASSERT_EQUAL(side(a, "candidate", "n"), 37); /* 2 flagged + 1 out of band kept apart */
    CU_ASSERT_EQUAL(side(a, "candidate", "unsteady"), 3);
    /* baseline runs 0..39: 10 + r/100, median 10.195; candidate without runs 5, 6, 7 */
    CU_ASSERT_DOUBLE_EQUAL(side(a, "baseline", "median"), 10.195, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(side(a, "candidate", "median"), 9.21, 1e-9); /* 37 values, 19th: run 21 */
    CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(a, "delta_abs")), 9.21 - 10.195, 1e-9);
    CU_ASSERT(json_is_false(json_object_get(a, "insufficient")));
    CU_ASSERT(json_is_true(json_object_get(a, "graph_level")));
    json_t *b = find_case(s, "B", "ttft_ms");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT(json_is_true(json_object_get(b, "insufficient"))); /* 5 warm-ups */
    json_t *h = find_case(s, "A", "h2d_ms");
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT_DOUBLE_EQUAL(side(h, "baseline", "median"), 0.0195, 1e-12); /* 19.5 us */
    CU_ASSERT_PTR_NULL(find_case(s, "C", "ttft_ms"));
    CU_ASSERT_EQUAL(json_array_size(json_object_get(s, "one_sided")), 1);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(s, "unsteady_samples")), 3);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(s, "attribution")), "whole_graph_only");
    /* What summarize writes, --check accepts; a changed median it does not. */
    CU_ASSERT_EQUAL(golden_gate_summary_write(dir, s, false, &err), 0);
    golden_findings fs;
    golden_findings_init(&fs);
    bool checked;
    CU_ASSERT_EQUAL(golden_gate_check(dir, &o, &fs, &checked, &err), 0);
    CU_ASSERT(checked);
    CU_ASSERT_EQUAL(fs.errors, 0);
    golden_findings_free(&fs);
    json_decref(s);
    rm_folder();
}

static void test_budget_does_not_change_numbers(void)
{
    make_folder();
    golden_gate_opts o;
    golden_gate_opts_init(&o);
    o.bootstrap = 300;
    o.threads = 2;
    json_t *big, *small;
    golden_error err;
    CU_ASSERT_EQUAL_FATAL(golden_gate_summarize(dir, &o, &big, &err), 0);
    o.memory_budget = 1; /* every case and side alone: one pass over the spill each */
    o.threads = 1;
    CU_ASSERT_EQUAL_FATAL(golden_gate_summarize(dir, &o, &small, &err), 0);
    CU_ASSERT(json_equal(big, small));
    json_decref(big);
    json_decref(small);
    rm_folder();
}

/* An escape in an extra key changes nothing the strict reader takes (there is one reader since
 * issue 26; this was once the fast scanner against its jansson fallback). */
static void test_fast_path_equals_jansson(void)
{
    make_folder();
    golden_gate_opts o;
    golden_gate_opts_init(&o);
    o.bootstrap = 100;
    json_t *fast, *slow;
    golden_error err;
    CU_ASSERT_EQUAL_FATAL(golden_gate_summarize(dir, &o, &fast, &err), 0);
    char cmd[256];
    snprintf(cmd, sizeof cmd,
             "sed -i 's/}}}$/}},\"note\":\"\\\\u0041\"}/' %s/performance/raw-requests.jsonl", dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "grep -c 'u0041' %s/performance/raw-requests.jsonl >/dev/null", dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
    CU_ASSERT_EQUAL_FATAL(golden_gate_summarize(dir, &o, &slow, &err), 0);
    CU_ASSERT(json_equal(json_object_get(fast, "cases"), json_object_get(slow, "cases")));
    CU_ASSERT(!json_equal(json_object_get(fast, "raw_requests"), json_object_get(slow, "raw_requests")));
    json_decref(fast);
    json_decref(slow);
    rm_folder();
}

static void test_bad_line_is_named(void)
{
    make_folder();
    char p[256];
    snprintf(p, sizeof p, "%s/performance/raw-requests.jsonl", dir);
    FILE *f = fopen(p, "a");
    fputs("{\"case_id\":\"A\",\"side\":\"candidate\",\"warmup\":false}\n", f);
    fclose(f);
    golden_gate_opts o;
    golden_gate_opts_init(&o);
    json_t *s = NULL;
    golden_error err;
    CU_ASSERT_EQUAL(golden_gate_summarize(dir, &o, &s, &err), -1);
    CU_ASSERT_EQUAL(err.code, GOLDEN_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.where, "raw-requests.jsonl:218"));
    CU_ASSERT_PTR_NULL(s);
    rm_folder();
}

int main(void)
{
    static const golden_test tests[] = {
        {"counts, band, insufficient, stages", test_counts_and_values},
        {"memory budget does not change the numbers", test_budget_does_not_change_numbers},
        {"a malformed line is named", test_bad_line_is_named},
        {"an escaped extra key reads the same", test_fast_path_equals_jansson},
        {NULL, NULL}};
    return golden_test_run("gate summary", tests);
}

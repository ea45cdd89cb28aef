/* Unit tests of the experiment module: EXP_ID parsing, the family table against the handbook's
 * first experiments (section 19), findings and their locations, the verify report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cunit_main.h"
#include "golden/experiment.h"
#include "exp/command.h"

static void test_exp_id_valid(void)
{
    char prefix[16], family[32];
    int number = -1;
    golden_error err;
    CU_ASSERT_EQUAL(golden_exp_id_parse("OP-MOE-0001", prefix, family, &number, &err), 0);
    CU_ASSERT_STRING_EQUAL(prefix, "OP");
    CU_ASSERT_STRING_EQUAL(family, "MOE");
    CU_ASSERT_EQUAL(number, 1);
    CU_ASSERT_EQUAL(golden_exp_id_parse("HOST-LOGITS-0042", prefix, family, &number, &err), 0);
    CU_ASSERT_STRING_EQUAL(prefix, "HOST");
    CU_ASSERT_STRING_EQUAL(family, "LOGITS");
    CU_ASSERT_EQUAL(number, 42);
    CU_ASSERT_EQUAL(golden_exp_id_parse("QUANT-W4-9999", prefix, family, &number, &err), 0);
    CU_ASSERT_STRING_EQUAL(family, "W4");
    CU_ASSERT_EQUAL(number, 9999);
}

static void test_exp_id_invalid(void)
{
    const char *bad[] = {"OP-MOE-001", "OP-MOE-00012", "op-moe-0001", "OP--0001", "OPMOE0001",
                         "OP-MOE-00a1", "OP-1MOE-0001", "-MOE-0001", "OP-MOE-", "OP-MO_E-0001",
                         "", "OP-MOE-0001-", NULL};
    char prefix[16], family[32];
    int number;
    for (int i = 0; bad[i]; i++) {
        golden_error err;
        golden_error_clear(&err);
        CU_ASSERT_EQUAL(golden_exp_id_parse(bad[i], prefix, family, &number, &err), -1);
        CU_ASSERT(err.what[0] != '\0');
    }
}

/* Section 19 names the first eight experiments and section 2 their operator families:
 * every one must parse and agree with the family the handbook gives it. */
static void test_family_table_handbook(void)
{
    static const struct {
        const char *id, *opfam;
    } first[] = {
        {"HOST-LOGITS-0001", "logits_sampling"}, {"OP-D2D-0001", "dynamic_d2d"},
        {"OP-D2D-0001", "sync_d2d"},             {"OP-MOE-0001", "grouped_moe_dense"},
        {"OP-MOE-0001", "moe_gate"},             {"OP-KV-0001", "kv_scatter"},
        {"OP-FA-0001", "flash_attention"},       {"OP-GEMM-0001", "fused_matmul_add"},
        {"OP-FUSION-0001", "fused_rmsnorm"},     {"OP-TOPK-0001", "logits_sampling"},
    };
    for (size_t i = 0; i < sizeof first / sizeof first[0]; i++) {
        char prefix[16], family[32];
        int number;
        golden_error err;
        CU_ASSERT_EQUAL_FATAL(golden_exp_id_parse(first[i].id, prefix, family, &number, &err), 0);
        CU_ASSERT_EQUAL(golden_exp_family_agrees(prefix, family, first[i].opfam), 1);
    }
    CU_ASSERT_EQUAL(golden_exp_family_agrees("OP", "MOE", "flash_attention"), 0);
    CU_ASSERT_EQUAL(golden_exp_family_agrees("OP", "FA", "grouped_moe_dense"), 0);
    CU_ASSERT_EQUAL(golden_exp_family_agrees("OP", "NOPE", "rope"), -1);
    CU_ASSERT_EQUAL(golden_exp_family_agrees("XX", "MOE", "moe_gate"), -1);
    /* a word of the list matches whole, never as a prefix */
    CU_ASSERT_EQUAL(golden_exp_family_agrees("OP", "MOE", "moe"), 0);
}

static void test_findings_where(void)
{
    golden_findings f;
    golden_error err;
    golden_findings_init(&f);
    CU_ASSERT_EQUAL(golden_findings_add(&f, GOLDEN_SEV_ERROR, "layout", "x/decision.md", 0, 0,
                                        "", &err, "missing %d", 1), 0);
    CU_ASSERT_EQUAL(golden_findings_add(&f, GOLDEN_SEV_TODO, "required-filled", "h.yaml", 7, 3,
                                        "/controlled/driver", &err, "still REQUIRED"), 0);
    CU_ASSERT_EQUAL(golden_findings_add(&f, GOLDEN_SEV_ERROR, "schema", "m.json", 0, 0,
                                        "/calbin/sha256", &err, "bad"), 0);
    CU_ASSERT_EQUAL(f.count, 3);
    CU_ASSERT_EQUAL(f.errors, 2);
    CU_ASSERT_EQUAL(f.todos, 1);
    char w[256];
    golden_finding_where(&f.items[0], w, sizeof w);
    CU_ASSERT_STRING_EQUAL(w, "x/decision.md");
    CU_ASSERT_STRING_EQUAL(f.items[0].message, "missing 1");
    golden_finding_where(&f.items[1], w, sizeof w);
    CU_ASSERT_STRING_EQUAL(w, "h.yaml:7:3");
    golden_finding_where(&f.items[2], w, sizeof w);
    CU_ASSERT_STRING_EQUAL(w, "m.json#/calbin/sha256");
    /* growth past the first allocation keeps every finding */
    for (int i = 0; i < 100; i++)
        CU_ASSERT_EQUAL(golden_findings_add(&f, GOLDEN_SEV_ERROR, "seal", "S", i + 1, 1, "", &err,
                                            "n%d", i), 0);
    CU_ASSERT_EQUAL(f.count, 103);
    CU_ASSERT_STRING_EQUAL(f.items[102].message, "n99");
    CU_ASSERT_EQUAL(f.items[102].line, 100);
    golden_findings_free(&f);
}

static void test_report_json(void)
{
    golden_findings f;
    golden_error err;
    golden_findings_init(&f);
    golden_findings_add(&f, GOLDEN_SEV_TODO, "required-filled", "h.yaml", 4, 2, "/a", &err, "t");
    json_t *doc = golden_findings_report("experiment", "E", &f, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(doc, "verdict")), "pass");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(doc, "summary"), "todos")), 1);
    json_t *g = json_array_get(json_object_get(doc, "findings"), 0);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(g, "severity")), "todo");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(g, "line")), 4);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(g, "pointer")), "/a");
    CU_ASSERT_PTR_NULL(json_object_get(doc, "items"));
    json_decref(doc);

    golden_handoff_item items[GOLDEN_HANDOFF_ITEMS];
    memset(items, 0, sizeof items);
    for (int i = 0; i < GOLDEN_HANDOFF_ITEMS; i++) {
        items[i].number = i + 1;
        items[i].key = "k";
        items[i].title = "t";
    }
    items[5].status = GOLDEN_ITEM_MISSING;
    doc = golden_findings_report("handoff", "H", &f, items, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    /* no error finding, but a missing item is a failed verdict */
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(doc, "verdict")), "fail");
    CU_ASSERT_EQUAL(json_array_size(json_object_get(doc, "items")), 8);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(
                               json_array_get(json_object_get(doc, "items"), 5), "status")),
                           "missing");
    json_decref(doc);
    golden_findings_free(&f);
}

/* An empty folder lacks all twelve assets of section 3 (counted from the handbook's list). */
static void test_empty_folder_layout(void)
{
    char dir[] = "/tmp/golden-exp-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    golden_findings f;
    golden_error err;
    golden_findings_init(&f);
    golden_experiment_opts opts = {0};
    CU_ASSERT_EQUAL(golden_experiment_check(dir, &opts, &f, &err), 0);
    size_t layout = 0;
    for (size_t i = 0; i < f.count; i++)
        layout += strcmp(f.items[i].rule, "layout") == 0;
    CU_ASSERT_EQUAL(layout, 12);
    CU_ASSERT_EQUAL(f.errors, 12);
    CU_ASSERT_EQUAL(f.files_hashed, 0);
    golden_findings_free(&f);
    rmdir(dir);
    /* a folder that does not exist cannot be checked at all */
    golden_findings_init(&f);
    CU_ASSERT_EQUAL(golden_experiment_check("/nonexistent/OP-MOE-0001", &opts, &f, &err), -1);
    CU_ASSERT(strstr(err.where, "/nonexistent/OP-MOE-0001") != NULL);
    golden_findings_free(&f);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

/* JSON Lines: every line is its own document; the bad line keeps the file's line number. */
static void test_verify_documents_jsonl(void)
{
    char dir[] = "/tmp/golden-exp-XXXXXX", path[256];
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/f.jsonl", dir);
    write_file(path,
               "{\"time\":\"2026-08-03T04:12:09Z\",\"side\":\"baseline\",\"kind\":\"hang\","
               "\"severity\":\"error\",\"message\":\"m\",\"recovered\":false,"
               "\"retest_after_reset\":\"not_run\"}\n"
               "\n"
               "{\"time\":\"2026-08-03T04:12:09Z\",\"side\":\"baseline\",\"kind\":\"hang\","
               "\"severity\":\"loud\",\"message\":\"m\",\"recovered\":false,"
               "\"retest_after_reset\":\"not_run\"}\n");
    golden_findings f;
    golden_error err;
    golden_findings_init(&f);
    const char *paths[] = {path};
    CU_ASSERT_EQUAL_FATAL(golden_findings_documents("calculet-fault/v1", paths, 1, &f, &err), 0);
    CU_ASSERT_EQUAL(f.documents, 2); /* the empty line is not a document */
    CU_ASSERT_EQUAL_FATAL(f.errors, 1);
    CU_ASSERT_STRING_EQUAL(f.items[0].rule, "schema");
    CU_ASSERT_EQUAL(f.items[0].line, 3);
    CU_ASSERT_STRING_EQUAL(f.items[0].pointer, "/severity");
    CU_ASSERT(strstr(f.items[0].message, "(enum)") != NULL);
    golden_findings_free(&f);
    /* an unknown schema is "could not check", not a finding */
    golden_findings_init(&f);
    CU_ASSERT_EQUAL(golden_findings_documents("calculet-none/v1", paths, 1, &f, &err), -1);
    CU_ASSERT_EQUAL(f.count, 0);
    golden_findings_free(&f);
    unlink(path);
    rmdir(dir);
}

/* A symbolic link out of the folder is a path-escape finding, never followed. */
static void test_symlink_escape(void)
{
    char dir[] = "/tmp/golden-exp-XXXXXX", path[256];
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/decision.md", dir);
    CU_ASSERT_EQUAL_FATAL(symlink("/etc/hostname", path), 0);
    golden_findings f;
    golden_error err;
    golden_findings_init(&f);
    golden_experiment_opts opts = {0};
    CU_ASSERT_EQUAL(golden_experiment_check(dir, &opts, &f, &err), 0);
    size_t escapes = 0, layout = 0;
    for (size_t i = 0; i < f.count; i++) {
        escapes += strcmp(f.items[i].rule, "path-escape") == 0;
        layout += strcmp(f.items[i].rule, "layout") == 0;
    }
    CU_ASSERT_EQUAL(escapes, 1);
    CU_ASSERT_EQUAL(layout, 12); /* the link does not count as decision.md */
    CU_ASSERT_EQUAL(f.files_hashed, 0);
    golden_findings_free(&f);
    unlink(path);
    rmdir(dir);
}

/* The compile command's flags, worked out by hand from the syntax in docs/manifest-verify.md. */
static void test_command_flags(void)
{
    char why[256];
    json_t *f = lg_exp_command_flags(
        "calcc compile --model qwen3 --graph prefill --chips 2 --opt-level=3 "
        "--moe-bucket-threshold 8 --unsafe-fp-reassoc -o out.calbin", why, sizeof why);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(json_object_size(f), 3);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(f, "opt_level")), "3");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(f, "moe_bucket_threshold")), "8");
    CU_ASSERT_TRUE(json_is_true(json_object_get(f, "unsafe_fp_reassoc")));
    json_decref(f);

    /* quotes and escapes: one word each, nothing expanded */
    f = lg_exp_command_flags("calcc --note='a b' --tag=\"x\\\"y\" --path=a\\ b -- --not-a-flag",
                                 why, sizeof why);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(json_object_size(f), 3);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(f, "note")), "a b");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(f, "tag")), "x\"y");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(f, "path")), "a b");
    json_decref(f);

    const char *refused[] = {
        "calcc --x=$HOME", "calcc --x=`id`", "calcc --x=1; rm -rf /", "calcc --x=1 | tee",
        "calcc --x=1 > log", "calcc --x='open", "calcc --x=\"open", "calcc -O3",
        "calcc --opt-level=3 --opt-level=0", "FAST=1 calcc", "calcc --x=\"$y\"", "",
        "calcc -o", "calcc --x=a*", "calcc --x=1\\", "calcc ---x", "calcc --=3",
        NULL};
    for (int i = 0; refused[i]; i++) {
        f = lg_exp_command_flags(refused[i], why, sizeof why);
        CU_ASSERT_PTR_NULL(f);
        CU_ASSERT_NOT_EQUAL(why[0], '\0');
        if (f)
            fprintf(stderr, "accepted: %s\n", refused[i]);
        json_decref(f);
    }
}

int main(void)
{
    static const golden_test tests[] = {
        {"exp_id_valid", test_exp_id_valid},
        {"exp_id_invalid", test_exp_id_invalid},
        {"family_table_handbook", test_family_table_handbook},
        {"findings_where", test_findings_where},
        {"report_json", test_report_json},
        {"empty_folder_layout", test_empty_folder_layout},
        {"verify_documents_jsonl", test_verify_documents_jsonl},
        {"symlink_escape", test_symlink_escape},
        {"command_flags", test_command_flags},
        {0, 0},
    };
    return golden_test_run("experiment", tests);
}

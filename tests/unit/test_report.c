/* Shared outputs: atomic files that never overwrite without force, JSON with null for
 * non-finite numbers, JUnit XML with escaping, colour rules. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "golden/report.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int count_entries_with_prefix(const char *prefix)
{
    /* temp files are named PATH.tmp.XXXXXX in the current folder */
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ls -a | grep -c '^%s' 2>/dev/null", prefix);
    FILE *p = popen(cmd, "r");
    int n = 0;
    if (p) {
        if (fscanf(p, "%d", &n) != 1)
            n = -1;
        pclose(p);
    }
    return n;
}

static void test_outfile_atomic(void)
{
    char path[64];
    snprintf(path, sizeof path, "out-%d.txt", (int)getpid());
    unlink(path);
    golden_outfile *f;
    golden_error err;
    CU_ASSERT_EQUAL_FATAL(golden_outfile_open(path, false, &f, &err), GOLDEN_OK);
    fputs("hello\n", golden_outfile_stream(f));
    CU_ASSERT_EQUAL(access(path, F_OK), -1); /* nothing visible before commit */
    CU_ASSERT_EQUAL(golden_outfile_commit(f, &err), GOLDEN_OK);
    CU_ASSERT_STRING_EQUAL(slurp(path), "hello\n");
    /* no overwrite without force; the old content stays */
    CU_ASSERT_EQUAL(golden_outfile_open(path, false, &f, &err), GOLDEN_ERR);
    CU_ASSERT_STRING_EQUAL(err.where, path);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "--force"));
    CU_ASSERT_EQUAL(golden_outfile_check(path, false, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(golden_outfile_check("-", false, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL_FATAL(golden_outfile_open(path, true, &f, &err), GOLDEN_OK);
    fputs("partial", golden_outfile_stream(f));
    golden_outfile_abort(f);
    CU_ASSERT_STRING_EQUAL(slurp(path), "hello\n");
    CU_ASSERT_EQUAL(count_entries_with_prefix(path), 1); /* the temp file is gone */
    unlink(path);
    CU_ASSERT_EQUAL(golden_outfile_open("no-such-dir/x.json", false, &f, &err), GOLDEN_ERR);
}

static void test_json_nonfinite(void)
{
    char path[64];
    snprintf(path, sizeof path, "out-%d.json", (int)getpid());
    unlink(path);
    json_t *doc = json_pack("{s:o, s:o, s:o}", "a", golden_json_real(0.5), "b",
                            golden_json_real(0.0 / 0.0), "c", golden_json_real(1.0 / 0.0));
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT_EQUAL(golden_json_write(path, doc, false, NULL), GOLDEN_OK);
    json_decref(doc);
    const char *s = slurp(path);
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "\"a\": 0.5"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "\"b\": null"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "\"c\": null"));
    unlink(path);
}

static void test_junit(void)
{
    char path[64];
    snprintf(path, sizeof path, "out-%d.xml", (int)getpid());
    unlink(path);
    golden_junit_case cases[] = {
        {.classname = "layer", .name = "layers/0/<out>", .failed = true,
         .message = "cosine 0.99812 < 0.999 & \"more\"", .seconds = 0.25},
        {.classname = "layer", .name = "layers/1/out", .seconds = 0.5},
    };
    CU_ASSERT_EQUAL(golden_junit_write(path, false, "golden-diff", cases, 2, NULL), GOLDEN_OK);
    const char *s = slurp(path);
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "<testsuite name=\"golden-diff\" tests=\"2\" failures=\"1\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "name=\"layers/0/&lt;out&gt;\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "message=\"cosine 0.99812 &lt; 0.999 &amp; &quot;more&quot;\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "<testcase classname=\"layer\" name=\"layers/1/out\" time=\"0.500000\"/>"));
    unlink(path);
    char *e = golden_xml_escape("a\x01<b");
    CU_ASSERT_STRING_EQUAL(e, "a&lt;b");
    free(e);
}

static void test_color_rules(void)
{
    setenv("NO_COLOR", "1", 1);
    CU_ASSERT_FALSE(golden_use_color(stdout));
    unsetenv("NO_COLOR");
    FILE *f = tmpfile();
    CU_ASSERT_FALSE(golden_use_color(f)); /* a file is never a TTY */
    fclose(f);
    CU_ASSERT_STRING_EQUAL(golden_color(false, "red"), "");
    CU_ASSERT_STRING_EQUAL(golden_color(true, "red"), "\033[31m");
    setenv("GOLDEN_THREADS", "3", 1);
    CU_ASSERT_EQUAL(golden_threads(), 3);
    unsetenv("GOLDEN_THREADS");
    CU_ASSERT(golden_threads() >= 1);
}

int main(void)
{
    static const golden_test tests[] = {
        {"atomic output files", test_outfile_atomic},
        {"JSON null for non-finite", test_json_nonfinite},
        {"JUnit XML", test_junit},
        {"colour and threads", test_color_rules},
        {0, 0}};
    return golden_test_run("report", tests);
}

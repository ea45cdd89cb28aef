/* Shared inputs and outputs: atomic files that never overwrite without force, special files
 * written directly, FIFO inputs that never block, JSON, JUnit XML, colour rules, error lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "cunit_main.h"
#include "golden/report.h"
#include "util/pool.h"

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
    /* the library reads no environment: NO_COLOR in it changes nothing, settings do */
    golden_settings gs = {.version = GOLDEN_SETTINGS_VERSION, .no_color = true};
    CU_ASSERT_EQUAL(golden_configure(&gs, NULL), GOLDEN_OK);
    CU_ASSERT_FALSE(golden_use_color(stdout));
    FILE *f = tmpfile();
    gs.no_color = false;
    CU_ASSERT_EQUAL(golden_configure(&gs, NULL), GOLDEN_OK);
    CU_ASSERT_FALSE(golden_use_color(f)); /* a file is never a TTY */
    fclose(f);
    CU_ASSERT_STRING_EQUAL(golden_color(false, "red"), "");
    CU_ASSERT_STRING_EQUAL(golden_color(true, "red"), "\033[31m");
    setenv("GOLDEN_THREADS", "3", 1);
    gs.threads = 0;
    golden_configure(&gs, NULL);
    CU_ASSERT_EQUAL(golden_threads(), lg_cpu_count()); /* the environment is ignored */
    unsetenv("GOLDEN_THREADS");
    gs.threads = 3;
    CU_ASSERT_EQUAL(golden_configure(&gs, NULL), GOLDEN_OK);
    CU_ASSERT_EQUAL(golden_threads(), 3);
    golden_error err;
    gs.threads = 257;
    CU_ASSERT_EQUAL(golden_configure(&gs, &err), GOLDEN_ERR);
    gs.threads = 0;
    gs.version = 99;
    CU_ASSERT_EQUAL(golden_configure(&gs, &err), GOLDEN_ERR);
    gs.version = GOLDEN_SETTINGS_VERSION;
    CU_ASSERT_EQUAL(golden_configure(&gs, &err), GOLDEN_OK);
    CU_ASSERT(golden_threads() >= 1);
}

/* /dev/null and a FIFO are written directly, never replaced, with or without force. */
static void test_special_outputs(void)
{
    golden_outfile *f;
    golden_error err;
    CU_ASSERT_EQUAL(golden_outfile_kind("/dev/null"), GOLDEN_OUT_SPECIAL);
    CU_ASSERT_EQUAL(golden_outfile_kind("-"), GOLDEN_OUT_STDOUT);
    CU_ASSERT_EQUAL(golden_outfile_kind("."), GOLDEN_OUT_FOLDER);
    CU_ASSERT_EQUAL_FATAL(golden_outfile_open("/dev/null", false, &f, &err), GOLDEN_OK);
    fputs("x\n", golden_outfile_stream(f));
    CU_ASSERT_EQUAL(golden_outfile_commit(f, &err), GOLDEN_OK);
    char fifo[64];
    snprintf(fifo, sizeof fifo, "fifo-%d", (int)getpid());
    unlink(fifo);
    CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
    CU_ASSERT_EQUAL(golden_outfile_kind(fifo), GOLDEN_OUT_SPECIAL);
    /* a reader on the FIFO (non-blocking open) lets the writer open it, then sees the text */
    int rd = open(fifo, O_RDONLY | O_NONBLOCK);
    CU_ASSERT_FATAL(rd >= 0);
    CU_ASSERT_EQUAL_FATAL(golden_outfile_open(fifo, true, &f, &err), GOLDEN_OK);
    fputs("through\n", golden_outfile_stream(f));
    CU_ASSERT_EQUAL(golden_outfile_commit(f, &err), GOLDEN_OK);
    char buf[32] = {0};
    CU_ASSERT_EQUAL(read(rd, buf, sizeof buf - 1), 8);
    CU_ASSERT_STRING_EQUAL(buf, "through\n");
    close(rd);
    struct stat st;
    CU_ASSERT_EQUAL(lstat(fifo, &st), 0);
    CU_ASSERT(S_ISFIFO(st.st_mode)); /* still a FIFO: force did not replace it */
    CU_ASSERT_EQUAL(count_entries_with_prefix(fifo), 1);
    /* an HDF5 output refuses both */
    CU_ASSERT_EQUAL(golden_outfile_check_regular(fifo, true, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(err.code, GOLDEN_EUNSUPPORTED);
    CU_ASSERT_EQUAL(golden_outfile_check_regular("-", true, &err), GOLDEN_ERR);
    unlink(fifo);
}

/* An output that is one of the inputs is refused even with force; another file is not. */
static void test_output_is_input(void)
{
    char a[64], b[64], l[64];
    snprintf(a, sizeof a, "in-%d.json", (int)getpid());
    snprintf(b, sizeof b, "other-%d.json", (int)getpid());
    snprintf(l, sizeof l, "link-%d.json", (int)getpid());
    FILE *f = fopen(a, "w");
    fputs("{}", f);
    fclose(f);
    f = fopen(b, "w");
    fclose(f);
    CU_ASSERT_EQUAL(symlink(a, l), 0);
    golden_error err;
    const char *ins[] = {b, a};
    CU_ASSERT_EQUAL(golden_outfile_distinct(a, ins, 2, &err), GOLDEN_ERR);
    CU_ASSERT_STRING_EQUAL(err.where, a);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "also an input"));
    /* through a symbolic link: the same inode */
    CU_ASSERT_EQUAL(golden_outfile_distinct(l, ins, 2, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(golden_outfile_distinct(b, ins, 1, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(golden_outfile_distinct(b, ins + 1, 1, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(golden_outfile_distinct("-", ins, 2, &err), GOLDEN_OK);
    unlink(a);
    unlink(b);
    unlink(l);
}

/* Opening a FIFO with no writer returns at once; where a stream is not allowed it is refused. */
static void test_infile_fifo(void)
{
    char fifo[64];
    snprintf(fifo, sizeof fifo, "infifo-%d", (int)getpid());
    unlink(fifo);
    CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
    golden_error err;
    alarm(10); /* the old code blocked here forever; a hang fails the suite */
    CU_ASSERT_EQUAL(golden_infile_open(fifo, 0, &err), -1);
    CU_ASSERT_STRING_EQUAL(err.where, fifo);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "not a regular file"));
    int fd = golden_infile_open(fifo, GOLDEN_IN_STREAM, &err);
    CU_ASSERT(fd >= 0);
    char c;
    CU_ASSERT_EQUAL(read(fd, &c, 1), 0); /* no writer: end of file, not a wait */
    close(fd);
    alarm(0);
    CU_ASSERT_EQUAL(golden_infile_open(".", GOLDEN_IN_STREAM, &err), -1);
    CU_ASSERT_EQUAL(golden_infile_open("-", 0, &err), -1);
    fd = golden_infile_open("-", GOLDEN_IN_STREAM, &err);
    CU_ASSERT(fd >= 0);
    close(fd);
    unlink(fifo);
}

/* junit-10.xsd: testsuites has no skipped; testsuite has timestamp and hostname; times are
 * what the cases say and at least the run clock. */
static void test_junit_schema_attributes(void)
{
    char path[64];
    snprintf(path, sizeof path, "suite-%d.xml", (int)getpid());
    unlink(path);
    golden_junit_case cases[] = {
        {.name = "a", .seconds = 0.25},
        {.name = "b", .skipped = true, .message = "not run"},
        {.name = "bad\xff name\x01", .failed = true, .message = "x"},
    };
    golden_junit_suite suite = {.version = GOLDEN_JUNIT_SUITE_VERSION, .name = "s",
                                .seconds = 1.5, .started = 86400};
    CU_ASSERT_EQUAL(golden_junit_write_suite(path, false, &suite, cases, 3, NULL), GOLDEN_OK);
    const char *s = slurp(path);
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "<testsuites name=\"s\" tests=\"3\" failures=\"1\" errors=\"0\" time=\"1.500000\">"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "skipped=\"1\" time=\"1.500000\" timestamp=\"1970-01-02T00:00:00\" hostname=\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "name=\"bad\xEF\xBF\xBD name\""));
    CU_ASSERT_PTR_NULL(strstr(s, "<testsuites tests=\"3\" failures=\"1\" skipped"));
    unlink(path);
}

/* One problem, one line: control characters and invalid UTF-8 are escaped; UTF-8 is kept. */
static void test_error_print_escapes(void)
{
    golden_error err;
    golden_fail_what(&err, GOLDEN_EINVAL, "a\nb\tc\xff.json", "bad \x1b[31mvalue\r caf\xc3\xa9");
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    golden_error_print(m, "tool", &err);
    fclose(m);
    CU_ASSERT_STRING_EQUAL(text, "tool: a\\nb\\tc\\xff.json: bad \\x1b[31mvalue\\r caf\xc3\xa9\n");
    free(text);
}

int main(void)
{
    static const golden_test tests[] = {
        {"atomic output files", test_outfile_atomic},
        {"JSON null for non-finite", test_json_nonfinite},
        {"JUnit XML", test_junit},
        {"colour and threads", test_color_rules},
        {"special outputs written directly", test_special_outputs},
        {"an output that is an input", test_output_is_input},
        {"FIFO inputs never block", test_infile_fifo},
        {"JUnit attributes of junit-10.xsd", test_junit_schema_attributes},
        {"error lines escaped", test_error_print_escapes},
        {0, 0}};
    return golden_test_run("report", tests);
}

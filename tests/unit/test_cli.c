/* The tools' typed option table (tools/common/cli.c, compiled into this test): every row type
 * parses, range-checks and stores its value, 0 means 0, a bad value is one usage line that
 * names the range and nothing is stored, --help shows the range, and an untyped row (the layer
 * stores nothing, the tool reads the string) still works beside them. */
#include "../../tools/common/cli.c"
#include "../../tools/common/scratch.c" /* cli.c's signal handler calls it */

#include <fcntl.h>
#include <stdint.h>

#include "cunit_main.h"

static struct {
    bool flag;
    const char *str;
    int64_t level;
    uint64_t seed;
    double tol;
    uint64_t memory;
    double timeout;
    int mode;
    cli_list checks, metas;
    bool seed_given;
} a;

static const char *const modes[] = {"f32", "bf16", NULL};
static const char *const checks[] = {"causal-mask", "router", "kv-growth", NULL};

enum { O_UNTYPED = CLI_TOOL_ID, O_LEVEL_SEEN };
static const cli_opt typed_rows[] = {
    CLI_HEADING("Typed:"),
    CLI_OPT_FLAG(0, 0, "flag", "a flag", &a.flag),
    CLI_OPT_STRING(0, 0, "str", "S", "a string", 0, &a.str),
    CLI_OPT_INT(O_LEVEL_SEEN, 0, "level", "N", "a level", &a.level, 0, 9),
    {.long_name = "seed", .help = "a seed", .type = CLI_UINT, .dest = &a.seed,
     .given = &a.seed_given, .umin = 0, .umax = UINT64_MAX},
    CLI_OPT_REAL(0, 0, "tol", NULL, "a tolerance", &a.tol, 0, INFINITY),
    CLI_OPT_SIZE(0, 0, "memory", "MIB", "a budget", &a.memory, 1 << 20, 1 << 20, UINT64_MAX),
    CLI_OPT_DURATION(0, 0, "timeout", NULL, "a timeout", &a.timeout, 1, 0, 86400),
    CLI_OPT_CHOICE(0, 0, "dtype", NULL, "a dtype", &a.mode, modes),
    CLI_OPT_LIST(0, 0, "checks", NULL, "checks", 0, &a.checks, true, checks),
    CLI_OPT_LIST(0, 0, "meta", "K=V", "repeatable", 0, &a.metas, false, NULL),
    {.id = O_UNTYPED, .long_name = "old", .arg = "X", .help = "an untyped row"},
    /* "    --NAME N" (the field after two spaces of indent) of 19, 20 (help two spaces on)
     * and 21, 22, 23 columns (help on the next line; 22 used to run into it) */
    CLI_OPT_INT(0, 0, "width-abcde", "N", "w19", &a.level, 0, 9),
    CLI_OPT_INT(0, 0, "width-abcdef", "N", "w20", &a.level, 0, 9),
    CLI_OPT_INT(0, 0, "width-abcdefg", "N", "w21", &a.level, 0, 9),
    CLI_OPT_INT(0, 0, "width-abcdefgh", "N", "w22", &a.level, 0, 9),
    CLI_OPT_INT(0, 0, "width-abcdefghi", "N", "w23", &a.level, 0, 9),
    CLI_END,
};
static const cli_spec spec = {
    .name = "test-tool", .synopsis = "[OPTIONS]", .about = "A test.", .opts = typed_rows,
    .exit_status = "0."};

static char errtext[4096];

/* Parse argv (NULL-terminated, without the program name) with stderr caught in errtext.
 * Returns cli_parse's answer; *status is c.status. Untyped ids are counted in *untyped. */
static int run(const char *const *args, int *status, int *untyped, const char **old)
{
    memset(&a, 0, sizeof a);
    a.level = -1;
    char *argv[32];
    int argc = 0;
    argv[argc++] = "test-tool";
    for (; args[argc - 1]; argc++)
        argv[argc] = (char *)args[argc - 1];
    argv[argc] = NULL;
    fflush(stderr);
    int saved = dup(2);
    FILE *tmp = tmpfile();
    dup2(fileno(tmp), 2);
    cli c;
    int rc = cli_init(&c, &spec, argc, argv);
    const char *v;
    int id = 0;
    if (untyped)
        *untyped = 0;
    while (rc == 0 && (id = cli_next(&c, &v)) > 0)
        if (id == O_UNTYPED) {
            if (untyped)
                (*untyped)++;
            if (old)
                *old = v;
        }
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(errtext, 1, sizeof errtext - 1, tmp);
    errtext[n] = '\0';
    fclose(tmp);
    *status = c.status;
    cli_release(&c); /* frees the lists: test_lists reads them before */
    return id;
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void test_values(void)
{
    int st, untyped;
    const char *old = NULL;
    CU_ASSERT_EQUAL(run(ARGS("--flag", "--str", "s", "--level", "0", "--seed",
                             "18446744073709551615", "--tol=1e-5", "--memory", "2G", "--timeout",
                             "1.5min", "--dtype", "bf16", "--old", "x1"), &st, &untyped, &old), 0);
    CU_ASSERT_EQUAL(st, 0);
    CU_ASSERT_TRUE(a.flag);
    CU_ASSERT_STRING_EQUAL(a.str, "s");
    CU_ASSERT_EQUAL(a.level, 0); /* 0 means 0, not "the default" */
    CU_ASSERT_EQUAL(a.seed, UINT64_MAX);
    CU_ASSERT_TRUE(a.seed_given);
    CU_ASSERT_EQUAL(a.tol, 1e-5);
    CU_ASSERT_EQUAL(a.memory, 2ull << 30);
    CU_ASSERT_EQUAL(a.timeout, 90.0);
    CU_ASSERT_EQUAL(a.mode, 1);
    CU_ASSERT_EQUAL(untyped, 1);
    CU_ASSERT_STRING_EQUAL(old, "x1");
    CU_ASSERT_STRING_EQUAL(errtext, "");
    /* bare numbers in the row's unit: MiB, seconds */
    run(ARGS("--memory", "256", "--timeout", "0", "--tol", "0"), &st, NULL, NULL);
    CU_ASSERT_EQUAL(st, 0);
    CU_ASSERT_EQUAL(a.memory, 256ull << 20);
    CU_ASSERT_EQUAL(a.timeout, 0.0);
    CU_ASSERT_EQUAL(a.tol, 0.0);
    CU_ASSERT_FALSE(a.seed_given);
}

/* a typed row with an id is still returned to the tool */
static void test_id_returned(void)
{
    char *argv[] = {"test-tool", "--level", "3", NULL};
    cli c;
    CU_ASSERT_EQUAL_FATAL(cli_init(&c, &spec, 3, argv), 0);
    const char *v = NULL;
    CU_ASSERT_EQUAL(cli_next(&c, &v), O_LEVEL_SEEN);
    CU_ASSERT_STRING_EQUAL(v, "3");
    CU_ASSERT_EQUAL(cli_next(&c, &v), 0);
    cli_release(&c);
}

static void test_lists(void)
{
    memset(&a, 0, sizeof a);
    char *argv[] = {"test-tool", "--checks", "router,kv-growth", "--checks=causal-mask",
                    "--meta", "a=1", "--meta", "b=2,3", NULL};
    cli c;
    CU_ASSERT_EQUAL_FATAL(cli_init(&c, &spec, 8, argv), 0);
    CU_ASSERT_EQUAL(cli_parse(&c), 0);
    CU_ASSERT_EQUAL_FATAL(a.checks.n, 3);
    CU_ASSERT_STRING_EQUAL(a.checks.v[0], "router");
    CU_ASSERT_STRING_EQUAL(a.checks.v[1], "kv-growth");
    CU_ASSERT_STRING_EQUAL(a.checks.v[2], "causal-mask");
    CU_ASSERT_EQUAL_FATAL(a.metas.n, 2);
    CU_ASSERT_STRING_EQUAL(a.metas.v[1], "b=2,3"); /* not split */
    cli_release(&c);
    CU_ASSERT_EQUAL(a.checks.n, 0); /* freed with the parse */
}

/* Each refusal: status 2, one line, the option and the range named, the value not stored. */
static void refused(const char *const *args, const char *want)
{
    int st;
    int id = run(args, &st, NULL, NULL);
    CU_ASSERT_EQUAL(id, CLI_EXIT);
    CU_ASSERT_EQUAL(st, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(errtext, want));
    CU_ASSERT_PTR_NOT_NULL(strstr(errtext, "test-tool: usage: "));
    char *nl = strchr(errtext, '\n');
    CU_ASSERT(nl && nl[1] == '\0'); /* one line */
    if (!strstr(errtext, want))
        fprintf(stderr, "\n  wanted \"%s\" in: %s", want, errtext);
}

static void test_refusals(void)
{
    refused(ARGS("--level", "10"), "--level: expected an integer from 0 to 9, got '10' (see");
    refused(ARGS("--level", "-1"), "expected an integer from 0 to 9, got '-1' (see");
    refused(ARGS("--level", "5x"), "got '5x' (trailing characters)");
    refused(ARGS("--level", "5 "), "got '5 ' (trailing characters)");
    refused(ARGS("--level", " 5"), "got ' 5' (not a number of that kind)");
    refused(ARGS("--level", ""), "got '' (empty)");
    refused(ARGS("--level", "99999999999999999999999"), "(does not fit the type)");
    refused(ARGS("--seed", "99999999999999999999999"),
            "--seed: expected an integer from 0 to 18446744073709551615, got "
            "'99999999999999999999999' (does not fit the type)");
    refused(ARGS("--seed", "-1"), "--seed: expected an integer from 0 to");
    refused(ARGS("--tol", "1e999"), "--tol: expected a number >= 0, got '1e999' (does not fit");
    refused(ARGS("--tol", "nan"), "got 'nan' (not a number of that kind)");
    refused(ARGS("--tol", "-0.5"), "--tol: expected a number >= 0, got '-0.5' (see");
    refused(ARGS("--tol", "0,5"), "(trailing characters)");
    refused(ARGS("--memory", "64kB"), "--memory: expected a size of at least 1M; units");
    refused(ARGS("--memory", "64kB"), "(unknown unit)");
    refused(ARGS("--memory", "512K"), "got '512K' (see"); /* under 1 MiB */
    refused(ARGS("--memory", "16777216T"), "(does not fit the type)");
    refused(ARGS("--timeout", "2d"), "(unknown unit)");
    refused(ARGS("--timeout", "25h"), "--timeout: expected a duration from 0s to 86400s");
    refused(ARGS("--dtype", "f16"), "--dtype: expected one of f32, bf16, got 'f16'");
    refused(ARGS("--checks", "router,nope"), "--checks: 'nope' is not one of causal-mask, router");
    refused(ARGS("--checks", "router,"), "--checks: an empty item in 'router,'");
    refused(ARGS("--level"), "option '--level' needs a value (N)");
    refused(ARGS("--tol"), "option '--tol' needs a value (X)");
    refused(ARGS("--flag=1"), "option '--flag' takes no value");
    /* a refused value leaves the destination as it was */
    int st;
    run(ARGS("--level", "12"), &st, NULL, NULL);
    CU_ASSERT_EQUAL(a.level, -1);
}

static void test_help(void)
{
    char *argv[] = {"test-tool", NULL};
    cli c;
    CU_ASSERT_EQUAL_FATAL(cli_init(&c, &spec, 1, argv), 0);
    FILE *f = tmpfile();
    cli_help(&c, f);
    rewind(f);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    cli_release(&c);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--level N         a level\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "(an integer from 0 to 9)\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--tol X"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "(a number >= 0)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--dtype f32|bf16"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "(one of f32, bf16)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "a bare number is 1M bytes"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--timeout TIME"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--checks LIST"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "(comma-separated, each one of causal-mask, router, kv-growth)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--old X"));  /* the untyped row is still listed */
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--flag            a flag\n"));
    CU_ASSERT_PTR_NULL(strstr(buf, "--flag VALUE"));
    /* the help text never runs into the option: two spaces at least, else a line break
     * (help in column 25, after two spaces of indent and a 22-column field) */
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\n      --width-abcde N   w19\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\n      --width-abcdef N  w20\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\n      --width-abcdefg N\n                        w21\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\n      --width-abcdefgh N\n                        w22\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\n      --width-abcdefghi N\n                        w23\n"));
    /* every option line: the option alone, or two spaces at least and the help in column 25 */
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "  -", 3) != 0 && strncmp(line, "      --", 8) != 0)
            continue;
        const char *opt = strchr(line, '-'), *gap = strstr(opt, "  ");
        if (gap) {
            CU_ASSERT(gap - line <= 22);
            CU_ASSERT(strlen(line) > 24 && line[23] == ' ' && line[24] != ' ');
        }
    }
}

int main(void)
{
    static const golden_test tests[] = {
        {"every row type stores its value; 0 means 0", test_values},
        {"a typed row with an id is returned too", test_id_returned},
        {"lists: split, checked, repeatable, freed", test_lists},
        {"refusals: one line naming the range, nothing stored", test_refusals},
        {"--help shows each row's range", test_help},
        {NULL, NULL},
    };
    return golden_test_run("cli", tests);
}

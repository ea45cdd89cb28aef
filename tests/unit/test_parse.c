/* golden/parse.h: the strict number parsers of options and KEY=VALUE settings, hand-worked
 * values, every refusal kind, the edges of each type, and a decimal-comma locale. */
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_main.h"
#include "golden/parse.h"

static void test_int(void)
{
    int64_t v = 42;
    CU_ASSERT_EQUAL(golden_parse_int("0", 0, 9, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 0);
    CU_ASSERT_EQUAL(golden_parse_int("-17", -100, 100, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, -17);
    CU_ASSERT_EQUAL(golden_parse_int("+007", 0, 9, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 7);
    CU_ASSERT_EQUAL(golden_parse_int("9223372036854775807", INT64_MIN, INT64_MAX, &v),
                    GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, INT64_MAX);
    CU_ASSERT_EQUAL(golden_parse_int("-9223372036854775808", INT64_MIN, INT64_MAX, &v),
                    GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, INT64_MIN);
    v = 5;
    CU_ASSERT_EQUAL(golden_parse_int("9223372036854775808", INT64_MIN, INT64_MAX, &v),
                    GOLDEN_PARSE_OVERFLOW);
    CU_ASSERT_EQUAL(golden_parse_int("-9223372036854775809", INT64_MIN, INT64_MAX, &v),
                    GOLDEN_PARSE_OVERFLOW);
    CU_ASSERT_EQUAL(golden_parse_int("99999999999999999999999", 0, 9, &v), GOLDEN_PARSE_OVERFLOW);
    CU_ASSERT_EQUAL(golden_parse_int("10", 0, 9, &v), GOLDEN_PARSE_RANGE);
    CU_ASSERT_EQUAL(golden_parse_int("-1", 0, 9, &v), GOLDEN_PARSE_RANGE);
    CU_ASSERT_EQUAL(golden_parse_int("", 0, 9, &v), GOLDEN_PARSE_EMPTY);
    CU_ASSERT_EQUAL(golden_parse_int(NULL, 0, 9, &v), GOLDEN_PARSE_EMPTY);
    CU_ASSERT_EQUAL(golden_parse_int("5x", 0, 9, &v), GOLDEN_PARSE_TRAILING);
    CU_ASSERT_EQUAL(golden_parse_int("5 ", 0, 9, &v), GOLDEN_PARSE_TRAILING);
    CU_ASSERT_EQUAL(golden_parse_int("1.5", 0, 9, &v), GOLDEN_PARSE_TRAILING);
    CU_ASSERT_EQUAL(golden_parse_int("1e3", 0, 9999, &v), GOLDEN_PARSE_TRAILING);
    CU_ASSERT_EQUAL(golden_parse_int(" 5", 0, 9, &v), GOLDEN_PARSE_SYNTAX);
    CU_ASSERT_EQUAL(golden_parse_int("x", 0, 9, &v), GOLDEN_PARSE_SYNTAX);
    CU_ASSERT_EQUAL(golden_parse_int("-", 0, 9, &v), GOLDEN_PARSE_SYNTAX);
    CU_ASSERT_EQUAL(golden_parse_int("--1", -9, 9, &v), GOLDEN_PARSE_SYNTAX);
    CU_ASSERT_EQUAL(golden_parse_int("0x10", 0, 99, &v), GOLDEN_PARSE_TRAILING);
    CU_ASSERT_EQUAL(v, 5); /* a refused value never writes */
}

static void test_uint(void)
{
    uint64_t v = 0;
    CU_ASSERT_EQUAL(golden_parse_uint("18446744073709551615", 0, UINT64_MAX, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, UINT64_MAX);
    CU_ASSERT_EQUAL(golden_parse_uint("18446744073709551616", 0, UINT64_MAX, &v),
                    GOLDEN_PARSE_OVERFLOW);
    CU_ASSERT_EQUAL(golden_parse_uint("99999999999999999999999", 0, UINT64_MAX, &v),
                    GOLDEN_PARSE_OVERFLOW);
    CU_ASSERT_EQUAL(golden_parse_uint("-1", 0, UINT64_MAX, &v), GOLDEN_PARSE_SYNTAX);
    CU_ASSERT_EQUAL(golden_parse_uint("0", 1, 10, &v), GOLDEN_PARSE_RANGE);
    CU_ASSERT_EQUAL(golden_parse_uint("20260802", 0, UINT64_MAX, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 20260802u);
}

static void test_real(void)
{
    double v = -1;
    CU_ASSERT_EQUAL(golden_parse_real("0", 0, 1, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 0.0);
    CU_ASSERT_EQUAL(golden_parse_real("1e-5", 0, 1, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 1e-5);
    CU_ASSERT_EQUAL(golden_parse_real("-2.5E+2", -1e9, 1e9, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, -250.0);
    CU_ASSERT_EQUAL(golden_parse_real("0.1", 0, 1, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 0.1);
    CU_ASSERT_EQUAL(golden_parse_real("0e999", 0, 1, &v), GOLDEN_PARSE_OK); /* zero is zero */
    CU_ASSERT_EQUAL(v, 0.0);
    CU_ASSERT_EQUAL(golden_parse_real("1e-310", 0, 1, &v), GOLDEN_PARSE_OK); /* subnormal */
    CU_ASSERT(v > 0 && v < 1e-300);
    CU_ASSERT_EQUAL(golden_parse_real("1e999", 0, INFINITY, &v), GOLDEN_PARSE_OVERFLOW);
    CU_ASSERT_EQUAL(golden_parse_real("-1e999", -INFINITY, 0, &v), GOLDEN_PARSE_OVERFLOW);
    CU_ASSERT_EQUAL(golden_parse_real("1e-999", 0, 1, &v), GOLDEN_PARSE_OVERFLOW);
    CU_ASSERT_EQUAL(golden_parse_real("inf", 0, INFINITY, &v), GOLDEN_PARSE_SYNTAX);
    CU_ASSERT_EQUAL(golden_parse_real("nan", 0, 1, &v), GOLDEN_PARSE_SYNTAX);
    CU_ASSERT_EQUAL(golden_parse_real("0x1p3", 0, 100, &v), GOLDEN_PARSE_TRAILING);
    CU_ASSERT_EQUAL(golden_parse_real(".5", 0, 1, &v), GOLDEN_PARSE_SYNTAX);
    CU_ASSERT_EQUAL(golden_parse_real("5.", 0, 9, &v), GOLDEN_PARSE_SYNTAX);
    CU_ASSERT_EQUAL(golden_parse_real("1e", 0, 9, &v), GOLDEN_PARSE_TRAILING);
    CU_ASSERT_EQUAL(golden_parse_real("0,5", 0, 9, &v), GOLDEN_PARSE_TRAILING);
    CU_ASSERT_EQUAL(golden_parse_real("1.5x", 0, 9, &v), GOLDEN_PARSE_TRAILING);
    CU_ASSERT_EQUAL(golden_parse_real("2", 0, 1, &v), GOLDEN_PARSE_RANGE);
    CU_ASSERT_EQUAL(golden_parse_real("", 0, 1, &v), GOLDEN_PARSE_EMPTY);
    /* a long but valid mantissa goes through the heap copy */
    char longv[300];
    memset(longv, '0', sizeof longv - 1);
    longv[0] = '1';
    longv[1] = '.';
    longv[sizeof longv - 1] = '\0';
    CU_ASSERT_EQUAL(golden_parse_real(longv, 0, 2, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 1.0);
}

/* A decimal-comma locale changes nothing: "0.5" is a half, "0,5" is refused. */
static void test_real_locale(void)
{
    const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "ru_RU.UTF-8", NULL};
    const char *set = NULL;
    for (int i = 0; names[i] && !set; i++)
        set = setlocale(LC_NUMERIC, names[i]);
    char dir[] = "/tmp/test_parse.XXXXXX";
    if (!set && mkdtemp(dir)) {
        /* none installed: compile de_DE from the glibc sources when localedef is there */
        char cmd[200];
        snprintf(cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1",
                 dir);
        if (system(cmd) == 0) {
            setenv("LOCPATH", dir, 1);
            set = setlocale(LC_NUMERIC, "de_DE.UTF-8");
        }
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "(could not remove %s) ", dir);
    }
    if (!set) {
        fprintf(stderr, "(no decimal-comma locale installed: checked in the C locale only) ");
    } else {
        char buf[32];
        snprintf(buf, sizeof buf, "%.1f", 0.5);
        CU_ASSERT_STRING_EQUAL(buf, "0,5"); /* the locale is really in force */
    }
    double v = 0;
    CU_ASSERT_EQUAL(golden_parse_real("0.5", 0, 1, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 0.5);
    CU_ASSERT_EQUAL(golden_parse_real("0,5", 0, 1, &v), GOLDEN_PARSE_TRAILING);
    CU_ASSERT_EQUAL(golden_parse_duration("1.5ms", 1, 0, 1, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 1.5e-3);
    setlocale(LC_NUMERIC, "C");
}

static void test_size(void)
{
    uint64_t v = 0;
    CU_ASSERT_EQUAL(golden_parse_size("0", 1, 0, UINT64_MAX, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 0u);
    CU_ASSERT_EQUAL(golden_parse_size("4096", 1, 0, UINT64_MAX, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 4096u);
    CU_ASSERT_EQUAL(golden_parse_size("64K", 1, 0, UINT64_MAX, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 65536u);
    CU_ASSERT_EQUAL(golden_parse_size("64KiB", 1, 0, UINT64_MAX, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 65536u);
    CU_ASSERT_EQUAL(golden_parse_size("3M", 1, 0, UINT64_MAX, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 3u << 20);
    CU_ASSERT_EQUAL(golden_parse_size("2GiB", 1, 0, UINT64_MAX, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 2ull << 30);
    CU_ASSERT_EQUAL(golden_parse_size("1T", 1, 0, UINT64_MAX, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 1ull << 40);
    CU_ASSERT_EQUAL(golden_parse_size("7B", 1, 0, UINT64_MAX, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 7u);
    /* a bare number in the option's own unit (MiB) */
    CU_ASSERT_EQUAL(golden_parse_size("256", 1u << 20, 0, UINT64_MAX, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 256ull << 20);
    CU_ASSERT_EQUAL(golden_parse_size("16777216T", 1, 0, UINT64_MAX, &v), GOLDEN_PARSE_OVERFLOW);
    CU_ASSERT_EQUAL(golden_parse_size("16777215T", 1, 0, UINT64_MAX, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 16777215ull << 40);
    CU_ASSERT_EQUAL(golden_parse_size("99999999999999999999999", 1, 0, UINT64_MAX, &v),
                    GOLDEN_PARSE_OVERFLOW);
    CU_ASSERT_EQUAL(golden_parse_size("64kB", 1, 0, UINT64_MAX, &v), GOLDEN_PARSE_UNIT);
    CU_ASSERT_EQUAL(golden_parse_size("64MB", 1, 0, UINT64_MAX, &v), GOLDEN_PARSE_UNIT);
    CU_ASSERT_EQUAL(golden_parse_size("1.5G", 1, 0, UINT64_MAX, &v), GOLDEN_PARSE_TRAILING);
    CU_ASSERT_EQUAL(golden_parse_size("-1", 1, 0, UINT64_MAX, &v), GOLDEN_PARSE_SYNTAX);
    CU_ASSERT_EQUAL(golden_parse_size("K", 1, 0, UINT64_MAX, &v), GOLDEN_PARSE_SYNTAX);
    CU_ASSERT_EQUAL(golden_parse_size("2K", 1, 0, 1024, &v), GOLDEN_PARSE_RANGE);
}

static void test_duration(void)
{
    double v = -1;
    CU_ASSERT_EQUAL(golden_parse_duration("0", 1, 0, 100, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 0.0);
    CU_ASSERT_EQUAL(golden_parse_duration("90", 1, 0, 1e9, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 90.0);
    CU_ASSERT_EQUAL(golden_parse_duration("250ms", 1, 0, 1e9, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 0.25);
    CU_ASSERT_EQUAL(golden_parse_duration("2min", 1, 0, 1e9, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 120.0);
    CU_ASSERT_EQUAL(golden_parse_duration("1.5h", 1, 0, 1e9, &v), GOLDEN_PARSE_OK);
    CU_ASSERT_EQUAL(v, 5400.0);
    CU_ASSERT_EQUAL(golden_parse_duration("500", 1e-3, 0, 1e9, &v), GOLDEN_PARSE_OK); /* ms */
    CU_ASSERT_EQUAL(v, 0.5);
    CU_ASSERT_EQUAL(golden_parse_duration("3us", 1, 0, 1e9, &v), GOLDEN_PARSE_OK);
    CU_ASSERT(fabs(v - 3e-6) < 1e-20);
    CU_ASSERT_EQUAL(golden_parse_duration("5parsecs", 1, 0, 1e9, &v), GOLDEN_PARSE_UNIT);
    CU_ASSERT_EQUAL(golden_parse_duration("5 s", 1, 0, 1e9, &v), GOLDEN_PARSE_UNIT);
    CU_ASSERT_EQUAL(golden_parse_duration("1e308h", 1, 0, INFINITY, &v), GOLDEN_PARSE_OVERFLOW);
    CU_ASSERT_EQUAL(golden_parse_duration("-1s", 1, 0, 1e9, &v), GOLDEN_PARSE_RANGE);
    CU_ASSERT_EQUAL(golden_parse_duration("s", 1, 0, 1e9, &v), GOLDEN_PARSE_SYNTAX);
    CU_ASSERT_STRING_EQUAL(golden_parse_reason(GOLDEN_PARSE_TRAILING), "trailing characters");
    CU_ASSERT_STRING_EQUAL(golden_parse_reason(GOLDEN_PARSE_OVERFLOW), "does not fit the type");
}

int main(void)
{
    static const golden_test tests[] = {
        {"integers", test_int},
        {"unsigned integers", test_uint},
        {"reals", test_real},
        {"reals in a decimal-comma locale", test_real_locale},
        {"sizes with units", test_size},
        {"durations with units", test_duration},
        {NULL, NULL},
    };
    return golden_test_run("parse", tests);
}

/* Runs one CUnit suite and turns its failures into the process exit status; finds the
 * source tree's data files for the suites. */
#include "cunit_main.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *golden_test_source_path(const char *rel)
{
    static char out[PATH_MAX + 256];
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return rel;
    exe[n] = '\0';
    for (int up = 0; up < 3; up++) { /* test_NAME, tests/, BUILD/ */
        char *s = strrchr(exe, '/');
        if (s)
            *s = '\0';
    }
    snprintf(out, sizeof out, "%s/%s", exe, rel);
    return out;
}

int golden_test_run(const char *suite, const golden_test *tests)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite s = CU_add_suite(suite, NULL, NULL);
    if (!s) {
        CU_cleanup_registry();
        return 2;
    }
    for (const golden_test *t = tests; t->name; t++)
        if (!CU_add_test(s, t->name, t->fn)) {
            CU_cleanup_registry();
            return 2;
        }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}

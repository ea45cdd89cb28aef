/* Runs one CUnit suite and turns its failures into the process exit status. */
#include "cunit_main.h"

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

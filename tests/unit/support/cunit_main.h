/* Shared runner for CUnit suites: each test file lists its tests and calls golden_test_run. */
#ifndef GOLDEN_CUNIT_MAIN_H
#define GOLDEN_CUNIT_MAIN_H
#include <CUnit/Basic.h>

typedef struct {
    const char *name;
    void (*fn)(void);
} golden_test;

/* Register one suite of tests, run it in verbose basic mode; returns the process status. */
int golden_test_run(const char *suite, const golden_test *tests);

/* SOURCE_ROOT/rel, where SOURCE_ROOT is found from this binary (BUILD/tests/test_NAME), for
 * the data files of the source tree. Returns a static buffer (rel itself if not found). */
const char *golden_test_source_path(const char *rel);

#endif

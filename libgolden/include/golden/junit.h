/* JUnit XML reports (junit-10.xsd): one suite of cases, and the XML escaping they use.
 * (Split out of golden/report.h, which still includes every part.) */
#ifndef GOLDEN_JUNIT_H
#define GOLDEN_JUNIT_H
#include "golden/api.h"
#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include "golden/error.h"

typedef struct {
    const char *classname; /* e.g. the tool or the tier */
    const char *name;      /* e.g. the tensor name */
    bool failed;
    bool skipped;
    const char *message;   /* failure message (first reason), may be NULL */
    const char *details;   /* failure body (all reasons), may be NULL */
    double seconds;
} golden_junit_case;

#define GOLDEN_JUNIT_SUITE_VERSION 1
typedef struct {
    unsigned version;  /* GOLDEN_JUNIT_SUITE_VERSION */
    const char *name;
    double seconds;    /* wall time of the whole suite; the sum of the cases when larger */
    time_t started;    /* 0 = now minus seconds */
} golden_junit_suite;

/* One <testsuites> holding one <testsuite>: attributes as junit-10.xsd allows them, with
 * timestamp and hostname. */
GOLDEN_API int golden_junit_write_suite(const char *path, bool force, const golden_junit_suite *suite,
                             const golden_junit_case *cases, size_t n, golden_error *err);
/* The same with the suite's time and timestamp taken from the configured run clock. */
GOLDEN_API int golden_junit_write(const char *path, bool force, const char *suite_name,
                       const golden_junit_case *cases, size_t n, golden_error *err);
/* One suite of a several-suite report. */
typedef struct {
    const char *name;
    const golden_junit_case *cases;
    size_t n;
    double seconds;  /* the suite's wall time; the sum of its cases when larger */
} golden_junit_suites_part;
/* One <testsuites> named `name` holding one <testsuite> per part, in order (timestamp and
 * hostname on each; <testsuites> carries the configured run clock's time, or the sum of the
 * suites when larger). */
GOLDEN_API int golden_junit_write_suites(const char *path, bool force, const char *name,
                                         const golden_junit_suites_part *parts, size_t nparts,
                                         golden_error *err);
/* XML-escape s into a newly allocated string (drops control characters XML 1.0 forbids and
 * replaces invalid UTF-8 by U+FFFD). */
GOLDEN_API char *golden_xml_escape(const char *s);

#endif

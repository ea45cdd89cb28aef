/* Unit tests of the progress line (util/term.c): elapsed, done/total, rate and time left, the
 * expected texts worked out by hand. */
#include <string.h>

#include "cunit_main.h"
#include "util/term.h"

static const char *line(const char *label, const char *note, bool bytes, const char *unit,
                        unsigned long long done, unsigned long long total, double elapsed)
{
    static char buf[256];
    lg_progress_line(buf, sizeof buf, label, note, bytes, unit, done, total, elapsed);
    return buf;
}

static void test_bytes(void)
{
    /* 1 GiB of 4 in 2 s: 512 MiB/s, 3 GiB left = 6 s */
    CU_ASSERT_STRING_EQUAL(line("golden-dump", NULL, true, NULL, 1ull << 30, 4ull << 30, 2.0),
                           "golden-dump  2.0 s  1.0 GiB of 4.0 GiB (25%)  512.0 MiB/s  ETA 6.0 s");
    /* finished: no ETA */
    CU_ASSERT_STRING_EQUAL(line("d", NULL, true, NULL, 500, 500, 1.0),
                           "d  1.0 s  500 B of 500 B (100%)  500 B/s");
    /* unknown total: no percentage, no ETA */
    CU_ASSERT_STRING_EQUAL(line("d", NULL, true, NULL, 3 << 20, 0, 3.0),
                           "d  3.0 s  3.0 MiB  1.0 MiB/s");
}

static void test_items(void)
{
    CU_ASSERT_STRING_EQUAL(line("golden-diff", NULL, false, "elements", 250, 1000, 0.5),
                           "golden-diff  0.5 s  250/1000 elements (25%)  500 elements/s  ETA 1.5 s");
    CU_ASSERT_STRING_EQUAL(line("npu-replay run", "c1 2/4", false, "requests", 3, 0, 1.5),
                           "npu-replay run c1 2/4  1.5 s  3 requests  2.0 requests/s");
    /* minutes and hours: 100 s elapsed, 3726 s left at 1/s */
    CU_ASSERT_STRING_EQUAL(line("x", "", false, NULL, 100, 3826, 100.0),
                           "x  1 m 40 s  100/3826 (3%)  1.0/s  ETA 1 h 02 m");
    /* large rates in k, M, G: 4194304/s, 12000/s, 3e9/s */
    CU_ASSERT_STRING_EQUAL(line("d", NULL, false, "elements", 2097152, 0, 0.5),
                           "d  0.5 s  2097152 elements  4.2 M elements/s");
    CU_ASSERT_STRING_EQUAL(line("d", NULL, false, NULL, 12000, 0, 1.0), "d  1.0 s  12000  12.0 k/s");
    CU_ASSERT_STRING_EQUAL(line("d", NULL, false, NULL, 3000000000ull, 0, 1.0),
                           "d  1.0 s  3000000000  3.0 G/s");
    /* nothing done yet: no rate, no ETA */
    CU_ASSERT_STRING_EQUAL(line("x", NULL, false, NULL, 0, 10, 0.0), "x  0.0 s  0/10 (0%)");
}

static void test_truncated(void)
{
    char small[8];
    lg_progress_line(small, sizeof small, "golden-diff", NULL, false, NULL, 1, 2, 1.0);
    CU_ASSERT_STRING_EQUAL(small, "golden-");
    char none[1] = {'z'};
    lg_progress_line(none, sizeof none, "golden-diff", NULL, false, NULL, 1, 2, 1.0);
    CU_ASSERT_EQUAL(none[0], 0);
}

int main(void)
{
    static const golden_test tests[] = {{"bytes, rate and ETA", test_bytes},
                                        {"items with a unit and a note", test_items},
                                        {"truncated to the buffer", test_truncated},
                                        {0, 0}};
    return golden_test_run("term", tests);
}

/* Test helper: each stdin line is one sample (numbers separated by spaces); prints, per line,
 * n median p90 p99 mad std ci_lo ci_hi as libgolden's gate statistics compute them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/gate_stats.h"

int main(int argc, char **argv)
{
    unsigned long B = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
    unsigned long long seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    int threads = argc > 3 ? atoi(argv[3]) : 1;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) >= 0) {
        size_t n = 0, room = 16;
        double *x = malloc(room * sizeof *x);
        char *p = line, *end;
        for (;;) {
            double v = strtod(p, &end);
            if (end == p)
                break;
            if (n == room && !(x = realloc(x, (room *= 2) * sizeof *x)))
                return 2;
            x[n++] = v;
            p = end;
        }
        if (n == 0) {
            free(x);
            continue;
        }
        double *scratch = malloc(n * sizeof *scratch), ci[2];
        golden_gate_describe_t d;
        golden_gate_describe(x, n, scratch, &d);
        golden_error err;
        if (golden_gate_bootstrap_median(x, n, B, seed, threads, ci, &err) != 0)
            return 2;
        printf("%zu %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", d.n, d.median, d.p90, d.p99,
               d.mad, d.std, ci[0], ci[1]);
        free(scratch);
        free(x);
    }
    free(line);
    return 0;
}

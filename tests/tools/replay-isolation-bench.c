/* The cost of running the backend in a backend host (docs/performance.md): the cpu backend
 * in this process and in a host (the npu-replay binary given), one decode step as run does it
 * (decode, then the whole vocabulary's logits), rounds alternating between the two so both see
 * the same machine load. Prints the median step of each and the difference.
 * Usage: replay-isolation-bench MODEL_DIR NPU_REPLAY [STEPS [ROUNDS [THREADS]]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "golden/replay.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* steps decode steps after a 16-token past; each step's seconds into out. */
static int steps_of(golden_backend *b, int steps, double *out)
{
    const golden_backend_info *in = golden_backend_get_info(b);
    float *lg = malloc((size_t)in->vocab_size * 4);
    int32_t toks[16];
    golden_error err;
    for (int i = 0; i < 16; i++)
        toks[i] = (int32_t)((i * 7919 + 13) % in->vocab_size);
    if (!lg || golden_backend_reset(b, 0, &err) || golden_backend_prefill(b, 0, 0, toks, 16, &err))
        return free(lg), 1;
    for (int i = 0; i < steps; i++) {
        double t = now();
        if (golden_backend_decode(b, 0, (int32_t)(i % in->vocab_size), &err) ||
            golden_backend_logits(b, 0, 0, in->vocab_size, lg, &err)) {
            golden_error_print(stderr, "replay-isolation-bench", &err);
            return free(lg), 1;
        }
        out[i] = now() - t;
    }
    free(lg);
    return 0;
}

/* The channel alone: n logits calls (the row copied twice when isolated) and n length calls
 * (one empty round trip), medians into lg_s and rt_s. */
static int channel(golden_backend *b, int n, double *lg_s, double *rt_s)
{
    const golden_backend_info *in = golden_backend_get_info(b);
    float *lg = malloc((size_t)in->vocab_size * 4);
    double *t = malloc((size_t)n * sizeof *t);
    golden_error err;
    if (!lg || !t)
        return free(lg), free(t), 1;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
            double t0 = now();
            if (pass == 0 ? golden_backend_logits(b, 0, 0, in->vocab_size, lg, &err) != 0
                          : golden_backend_length(b, 0) < 0)
                return free(lg), free(t), 1;
            t[i] = now() - t0;
        }
        qsort(t, (size_t)n, sizeof *t, cmp);
        *(pass == 0 ? lg_s : rt_s) = t[n / 2];
    }
    free(lg);
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: replay-isolation-bench MODEL_DIR NPU_REPLAY [STEPS [ROUNDS [THREADS]]]\n");
        return 2;
    }
    int steps = argc > 3 ? atoi(argv[3]) : 20, rounds = argc > 4 ? atoi(argv[4]) : 5;
    int threads = argc > 5 ? atoi(argv[5]) : 0;
    if (steps < 1 || rounds < 1)
        return 2;
    golden_backend_isolation iso = {argv[2], 0, 0, NULL, NULL};
    golden_backend_load_opts lo[2] = {{2, "cpu", argv[1], 0, NULL, threads, NULL},
                                      {2, "cpu", argv[1], 0, NULL, threads, &iso}};
    golden_backend *b[2];
    golden_error err;
    for (int k = 0; k < 2; k++)
        if (golden_backend_load(&lo[k], &b[k], &err)) {
            golden_error_print(stderr, "replay-isolation-bench", &err);
            return 2;
        }
    size_t n = (size_t)steps * (size_t)rounds;
    double *t[2] = {malloc(n * sizeof(double)), malloc(n * sizeof(double))};
    if (!t[0] || !t[1])
        return 2;
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < 2; k++)
            if (steps_of(b[k], steps, t[k] + (size_t)r * (size_t)steps))
                return 2;
    double med[2], lg[2], rt[2];
    int vocab = golden_backend_get_info(b[0])->vocab_size;
    for (int k = 0; k < 2; k++)
        if (channel(b[k], 200, &lg[k], &rt[k]))
            return 2;
    printf("logits call (%d entries), median of 200: in process %.1f us, isolated %.1f us; "
           "an empty call (length): in process %.2f us, isolated %.1f us\n",
           vocab, lg[0] * 1e6, lg[1] * 1e6, rt[0] * 1e6, rt[1] * 1e6);
    for (int k = 0; k < 2; k++) {
        qsort(t[k], n, sizeof(double), cmp);
        med[k] = t[k][n / 2];
        golden_backend_close(b[k]);
        free(t[k]);
    }
    printf("decode step (decode + %d logits), median of %zu: in process %.1f us, isolated %.1f us, "
           "difference %+.1f us (%+.2f %%)\n",
           vocab, n, med[0] * 1e6, med[1] * 1e6,
           (med[1] - med[0]) * 1e6, 100 * (med[1] - med[0]) / med[0]);
    return 0;
}

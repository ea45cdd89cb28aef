/* npu-replay's benchmark driver: decode tokens/s with the weight bytes one token reads, prefill
 * tokens/s, a memory-read bandwidth probe, and the logits conversion against the naive loop.
 * Usage: replay-bench MODEL_DIR [PREFILL_LEN...] [--decode N] [--threads N] [--probe-mib N] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "golden/dtype.h"
#include "golden/replay.h"
#include "replay/cpu.h"
#include "util/pool.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds of every thread of this process (user + sys): the figure that holds when the
 * shared machine's load moves wall time. */
static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

typedef struct {
    const uint64_t *p;
    size_t n, per;
    uint64_t sum[256];
} probe_ctx;

static int probe_item(void *vctx, size_t item, int worker, golden_error *err)
{
    (void)err;
    probe_ctx *c = vctx;
    const uint64_t *p = c->p + item * c->per;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t i = 0; i + 4 <= c->per; i += 4) {
        s0 += p[i];
        s1 += p[i + 1];
        s2 += p[i + 2];
        s3 += p[i + 3];
    }
    c->sum[worker] += s0 + s1 + s2 + s3;
    return 0;
}

/* Read a buffer far larger than the caches with every worker: the machine's read bandwidth. */
static double probe(size_t mib, int threads)
{
    size_t n = mib << 17; /* uint64 words */
    uint64_t *buf = malloc(n * 8);
    if (!buf)
        return 0;
    for (size_t i = 0; i < n; i++)
        buf[i] = i;
    probe_ctx c = {buf, n, n / 64, {0}};
    golden_error err;
    double best = 0;
    for (int r = 0; r < 3; r++) {
        double t = now();
        lg_parallel_for(64, threads, probe_item, &c, &err);
        double gbs = (double)(n * 8) / (now() - t) / 1e9;
        if (gbs > best)
            best = gbs;
    }
    uint64_t s = 0;
    for (int i = 0; i < 256; i++)
        s += c.sum[i];
    free(buf);
    return s == 42 ? best + 1e-9 : best; /* keep the sum alive */
}

/* Handbook section 15's naive step: the whole row into a temporary vector, then the range out. */
static void naive_convert(const uint16_t *row, size_t vocab, size_t first, size_t count, float *dst)
{
    float *tmp = malloc(vocab * sizeof *tmp);
    for (size_t i = 0; i < vocab; i++)
        tmp[i] = (float)golden_bf16_to_f64(row[i]);
    memcpy(dst, tmp + first, count * sizeof *dst);
    free(tmp);
}

static void bench_conversion(void)
{
    size_t V = 151936;
    uint16_t *row = malloc(V * 2);
    float *dst = malloc(V * 4);
    for (size_t i = 0; i < V; i++)
        row[i] = (uint16_t)(0x3f80 + (i * 7919) % 2000);
    int reps = 2000;
    double t = now();
    for (int r = 0; r < reps; r++)
        golden_logits_bf16_to_f32(row, 0, V, dst);
    double simd = (now() - t) / reps;
    t = now();
    for (int r = 0; r < reps; r++)
        golden_logits_bf16_to_f32_scalar(row, 0, V, dst);
    double scalar = (now() - t) / reps;
    t = now();
    for (int r = 0; r < reps / 10; r++)
        naive_convert(row, V, 0, V, dst);
    double naive = (now() - t) / (reps / 10);
    printf("logits conversion of one %zu-entry bf16 row: %.1f us (SIMD), %.1f us (scalar shift), "
           "%.1f us (naive: all through a temporary), naive/SIMD %.1fx\n",
           V, simd * 1e6, scalar * 1e6, naive * 1e6, naive / simd);
    free(row);
    free(dst);
}

/* Bytes of weights one decode step reads: embedding row, attention and norms, router, the
 * top-k experts of every sparse layer (a dense layer's MLP), final norm and lm_head. */
static double weight_bytes_per_token(const char *dir)
{
    cpu_model m;
    golden_error err;
    if (cpu_model_load(dir, &m, &err))
        return 0;
    const cpu_config *c = &m.c;
    double w = (double)golden_dtype_size(m.embed.dt), H = c->hidden;
    double sum = H + H + (double)c->vocab * H;
    for (int l = 0; l < c->layers; l++) {
        const cpu_layer *L = &m.layer[l];
        sum += (double)(L->q.rows + L->k.rows + L->v.rows) * H + H * (double)L->o.cols + 2 * H +
               2.0 * c->head_dim;
        if (L->sparse)
            sum += (double)c->experts * H + (double)c->topk * 3 * H * c->moe_inter;
        else
            sum += 3 * H * c->inter;
    }
    cpu_model_free(&m);
    return sum * w;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: replay-bench MODEL_DIR [PREFILL_LEN...] [--decode N] [--threads N] [--probe-mib N] [--dump-logits F] [--conversion]\n");
        return 2;
    }
    int decode = 16, threads = 0, probe_mib = 1024, conv = 0;
    const char *dump = NULL;
    int lens[16], nl = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--decode") == 0 && i + 1 < argc)
            decode = atoi(argv[++i]);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--probe-mib") == 0 && i + 1 < argc)
            probe_mib = atoi(argv[++i]);
        else if (strcmp(argv[i], "--dump-logits") == 0 && i + 1 < argc)
            dump = argv[++i];
        else if (strcmp(argv[i], "--conversion") == 0)
            conv = 1;
        else if (nl < 16)
            lens[nl++] = atoi(argv[i]);
    }
    /* before the backend is loaded: nothing to close (LeakSanitizer saw it left open) */
    if (decode < 1 || decode > (1 << 20)) {
        fprintf(stderr, "replay-bench: --decode: expected 1 to 1048576 steps\n");
        return 2;
    }
    if (threads < 1)
        threads = lg_cpu_count();
    if (conv) {
        bench_conversion();
        return 0;
    }
    golden_backend_load_opts lo = {1, "cpu", argv[1], 0, NULL, threads, NULL};
    golden_backend *b;
    golden_error err;
    if (golden_backend_load(&lo, &b, &err)) {
        golden_error_print(stderr, "replay-bench", &err);
        return 2;
    }
    const golden_backend_info *in = golden_backend_get_info(b);
    double gbs = probe_mib > 0 ? probe((size_t)probe_mib, threads) : 0;
    if (gbs > 0)
        printf("memory-read probe: %.2f GB/s on %d threads\n", gbs, threads);
    int maxlen = 1;
    for (int i = 0; i < nl; i++)
        if (lens[i] > maxlen)
            maxlen = lens[i];
    /* the decode run reads toks[0..16] as its past and toks[17 + i] after: whatever the
     * prefill lengths, the array covers both (it read past its end for --decode N > 48) */
    int ntoks = (maxlen > 17 ? maxlen : 17) + decode + 1;
    int32_t *toks = malloc((size_t)ntoks * sizeof *toks);
    if (!toks) {
        fprintf(stderr, "replay-bench: out of memory\n");
        return 2;
    }
    for (int i = 0; i < ntoks; i++)
        toks[i] = (int32_t)((i * 7919 + 13) % in->vocab_size);
    if (nl > 0) { /* untimed: map the weights in (first-touch page faults) before timing */
        golden_backend_reset(b, 0, &err);
        golden_backend_prefill(b, 0, 0, toks, (size_t)lens[0], &err);
    }
    for (int i = 0; i < nl; i++) {
        golden_backend_reset(b, 0, &err);
        double t = now(), u = cpu_now();
        if (golden_backend_prefill(b, 0, 0, toks, (size_t)lens[i], &err)) {
            golden_error_print(stderr, "replay-bench", &err);
            return 2;
        }
        double s = now() - t;
        printf("prefill %d tokens: %.3f s, %.1f tokens/s, cpu %.3f s\n", lens[i], s, lens[i] / s,
               cpu_now() - u);
        if (i == 0 && dump) { /* the first prefill's last logits, for the torch comparison */
            float *lg = malloc((size_t)in->vocab_size * 4);
            FILE *f = fopen(dump, "wb");
            if (!lg || !f || golden_backend_logits(b, 0, 0, in->vocab_size, lg, &err) ||
                fwrite(lg, 4, (size_t)in->vocab_size, f) != (size_t)in->vocab_size)
                fprintf(stderr, "replay-bench: cannot dump logits to %s\n", dump);
            if (f)
                fclose(f);
            free(lg);
        }
    }
    /* decode after a short past; the weights a token reads: embedding row, attention, router,
     * the chosen experts, lm_head (the KV cache is small beside them at this length) */
    golden_backend_reset(b, 0, &err);
    golden_backend_prefill(b, 0, 0, toks, 16, &err);
    golden_backend_decode(b, 0, toks[16], &err); /* warm */
    double t = now(), u = cpu_now();
    for (int i = 0; i < decode; i++)
        if (golden_backend_decode(b, 0, toks[17 + i], &err)) {
            golden_error_print(stderr, "replay-bench", &err);
            return 2;
        }
    double s = (now() - t) / decode, cs = (cpu_now() - u) / decode;
    double bytes = weight_bytes_per_token(argv[1]);
    printf("decode: %.1f ms/token, %.2f tokens/s, %.0f MB of weights a token, %.2f GB/s effective",
           s * 1e3, 1 / s, bytes / 1e6, bytes / s / 1e9);
    if (gbs > 0)
        printf(" (%.0f%% of the probe)", 100 * bytes / s / 1e9 / gbs);
    printf(", cpu %.1f ms/token\n", cs * 1e3);
    printf("info: hidden %d, layers %d, experts %d top-%d, vocab %d\n", in->hidden_size,
           in->num_layers, in->num_experts, in->experts_per_tok, in->vocab_size);
    free(toks);
    golden_backend_close(b);
    return 0;
}

/* Issue 33's optional calls: step_batch gives the same bits as one call at a time (compared with
 * a second backend driven lane by lane, at 1 and 4 lanes), the harness refuses a malformed
 * batch before sending it, a failed step names its lane and leaves the others advanced; cancel
 * of a long prefill from another thread ends that call soon with GOLDEN_BK_E_CANCELLED and the
 * lane at length 0, and cancel of an idle lane is a reset. In this process and through the
 * backend host (its second channel). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cunit_main.h"
#include "golden/replay.h"

static char model_dir[256], exe_dir[4096];

static void setup(void)
{
    if (model_dir[0])
        return;
    char parent[128];
    snprintf(parent, sizeof parent, "/tmp/test-batch-%ld", (long)getpid());
    mkdir(parent, 0777);
    snprintf(model_dir, sizeof model_dir, "%s/m", parent);
    golden_make_model_opts o = {1, "tiny", 0, 7, "bf16", 0, model_dir, false, 0, NULL};
    golden_error err;
    CU_ASSERT_EQUAL(golden_make_model(&o, &err), 0);
    ssize_t n = readlink("/proc/self/exe", exe_dir, sizeof exe_dir - 1);
    CU_ASSERT_FATAL(n > 0);
    exe_dir[n] = 0;
    char *slash = strrchr(exe_dir, '/'); /* BUILD/tests */
    CU_ASSERT_PTR_NOT_NULL_FATAL(slash);
    *slash = 0;
}

static golden_backend *open_cpu2(int isolated, const char *opt, const char *opt2);
static golden_backend *open_cpu(int isolated, const char *opt) { return open_cpu2(isolated, opt, NULL); }
static golden_backend *open_cpu2(int isolated, const char *opt, const char *opt2)
{
    setup();
    static char host[4200];
    snprintf(host, sizeof host, "%s/../bin/npu-replay", exe_dir);
    static golden_backend_isolation iso;
    iso = (golden_backend_isolation){host, 30, 0, NULL, NULL};
    const char *opts[2] = {opt, opt2};
    golden_backend_load_opts lo = {2, "cpu", model_dir, opt2 ? 2 : opt ? 1 : 0, opts, 1,
                                   isolated ? &iso : NULL};
    golden_backend *b = NULL;
    golden_error err;
    int rc = golden_backend_load(&lo, &b, &err);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc)
        fprintf(stderr, "load: %s: %s\n", err.where, err.what);
    return b;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Prompts of different lengths on `lanes` lanes, then 3 decode rounds: through step_batch on
 * one backend, lane by lane on another; every logits row must have the same bits. */
static void same_bits_case(int isolated, int lanes)
{
    golden_backend *a = open_cpu(isolated, NULL), *p = open_cpu(isolated, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_TRUE(golden_backend_has_step_batch(a));
    CU_ASSERT_TRUE(golden_backend_has_cancel(a));
    int V = golden_backend_get_info(a)->vocab_size;
    float *x = malloc((size_t)V * 4), *y = malloc((size_t)V * 4);
    int32_t prompt[4][9], tok[4];
    for (int L = 0; L < 4; L++)
        for (int i = 0; i < 9; i++)
            prompt[L][i] = (int32_t)((37 * L + 11 * i + 5) % V);
    golden_error err;
    golden_backend_step st[4];
    for (int L = 0; L < lanes; L++)
        st[L] = (golden_backend_step){lanes - 1 - L, GOLDEN_BK_STEP_PREFILL, 0,
                                      prompt[lanes - 1 - L], (size_t)(3 + 2 * (lanes - 1 - L)),
                                      0, 0}; /* lanes in reverse order */
    CU_ASSERT_EQUAL_FATAL(golden_backend_step_batch(a, st, (size_t)lanes, &err), 0);
    for (int L = 0; L < lanes; L++) {
        CU_ASSERT_EQUAL(st[L].status, 0);
        CU_ASSERT_EQUAL(golden_backend_prefill(p, L, 0, prompt[L], (size_t)(3 + 2 * L), &err), 0);
        CU_ASSERT_EQUAL(golden_backend_length(a, L), 3 + 2 * L);
    }
    int same = 0, rows = 0;
    for (int round = 0; round < 3; round++) {
        for (int L = 0; L < lanes; L++) {
            CU_ASSERT_EQUAL(golden_backend_logits(a, L, 0, V, x, &err), 0);
            CU_ASSERT_EQUAL(golden_backend_logits(p, L, 0, V, y, &err), 0);
            same += memcmp(x, y, (size_t)V * 4) == 0;
            rows++;
            int best = 0;
            for (int i = 1; i < V; i++)
                best = x[i] > x[best] ? i : best;
            tok[L] = best;
        }
        for (int L = 0; L < lanes; L++) {
            int64_t pos = 3 + 2 * L + round;
            st[L] = (golden_backend_step){L, GOLDEN_BK_STEP_DECODE, pos, &tok[L], 1, 0, 0};
            CU_ASSERT_EQUAL(golden_backend_decode_at(p, L, pos, tok[L], &err), 0);
        }
        CU_ASSERT_EQUAL_FATAL(golden_backend_step_batch(a, st, (size_t)lanes, &err), 0);
        for (int L = 0; L < lanes; L++)
            CU_ASSERT_EQUAL(st[L].written, 3 + 2 * L + round);
    }
    CU_ASSERT_EQUAL(same, rows);
    CU_ASSERT_EQUAL(rows, 3 * lanes);
    free(x);
    free(y);
    golden_backend_close(a);
    golden_backend_close(p);
}

static void test_same_bits_1(void) { same_bits_case(0, 1); }
static void test_same_bits_4(void) { same_bits_case(0, 4); }
static void test_same_bits_4_host(void) { same_bits_case(1, 4); }

/* A malformed batch is refused before it is sent; a failed step names its lane. */
static void malformed_case(int isolated)
{
    golden_backend *b = open_cpu(isolated, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    int32_t t[4] = {1, 2, 3, 4};
    golden_error err;
    golden_backend_step st[2] = {{0, GOLDEN_BK_STEP_PREFILL, 0, t, 4, 0, 0},
                                 {0, GOLDEN_BK_STEP_PREFILL, 0, t, 2, 0, 0}};
    CU_ASSERT_EQUAL(golden_backend_step_batch(b, st, 2, &err), GOLDEN_ERR); /* lane 0 twice */
    CU_ASSERT_EQUAL(err.code, GOLDEN_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "lane 0 twice"));
    CU_ASSERT_EQUAL(golden_backend_length(b, 0), 0); /* nothing was sent */
    CU_ASSERT_EQUAL(golden_backend_step_batch(b, st, 0, &err), GOLDEN_ERR);
    st[1].lane = 4; /* the backend has 4 lanes: 0..3 */
    CU_ASSERT_EQUAL(golden_backend_step_batch(b, st, 2, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(err.code, GOLDEN_EINVAL);
    st[1] = (golden_backend_step){1, GOLDEN_BK_STEP_DECODE, 0, t, 2, 0, 0}; /* a 2-token decode */
    CU_ASSERT_EQUAL(golden_backend_step_batch(b, st, 2, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(golden_backend_length(b, 0), 0);
    /* lane 1's decode at a position the lane does not hold: that step fails, lane 0 advances */
    st[1] = (golden_backend_step){1, GOLDEN_BK_STEP_DECODE, 5, t, 1, 0, 0};
    CU_ASSERT_EQUAL(golden_backend_step_batch(b, st, 2, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(golden_backend_last_code(b), GOLDEN_BK_E_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "lane 1 failed (code 6)"));
    CU_ASSERT_EQUAL(st[0].status, 0);
    CU_ASSERT_EQUAL(st[1].status, GOLDEN_BK_E_INVALID);
    CU_ASSERT_EQUAL(golden_backend_length(b, 0), 4);
    CU_ASSERT_EQUAL(golden_backend_length(b, 1), 0);
    golden_backend_close(b);
}

static void test_malformed(void) { malformed_case(0); }
static void test_malformed_host(void) { malformed_case(1); }

typedef struct {
    golden_backend *b;
    const int32_t *t;
    size_t n;
    int rc, code;
    double end;
} prefill_job;

static void *prefill_thread(void *arg)
{
    prefill_job *j = arg;
    golden_error err;
    j->rc = golden_backend_prefill(j->b, 2, 0, j->t, j->n, &err);
    j->code = golden_backend_last_code(j->b);
    j->end = now_s();
    return NULL;
}

/* A long prefill (one position a forward call: chunk=1) cancelled from this thread while another
 * runs it: it ends soon after, CANCELLED, the lane empty; the backend goes on working. */
static void cancel_case(int isolated)
{
    /* chunk=1 and a seeded device delay (uniform [0, 0.4] s a call; the default seed's first
     * draw is about 0.4 s): the prefill lasts long enough to be cancelled in the middle even on
     * an idle machine (0.02 s without the delay: the test failed when the machine was quiet),
     * and the cancel must end the delay's 1 ms slices early */
    golden_backend *b = open_cpu2(isolated, "chunk=1", "delay_us=400000");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    golden_error err;
    size_t n = 4000;
    int64_t lim = golden_backend_get_info(b)->context_limit;
    if ((int64_t)n > lim)
        n = (size_t)lim;
    int32_t *t = calloc(n, sizeof *t);
    for (size_t i = 0; i < n; i++)
        t[i] = (int32_t)(i % 97);
    /* how long the whole prefill takes here, uncancelled (on lane 1) */
    double t0 = now_s();
    CU_ASSERT_EQUAL(golden_backend_prefill(b, 1, 0, t, n, &err), 0);
    double whole = now_s() - t0;
    CU_ASSERT_EQUAL(golden_backend_length(b, 1), (int64_t)n);
    prefill_job j = {b, t, n, -1, -1, 0};
    double s0 = now_s();
    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, prefill_thread, &j), 0);
    struct timespec d = {0, 10 * 1000000L}; /* 10 ms into it */
    nanosleep(&d, NULL);
    double c0 = now_s();
    int crc = golden_backend_cancel(b, 2, &err);
    double c1 = now_s();
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(crc, 0);
    CU_ASSERT_EQUAL(j.rc, GOLDEN_ERR);
    CU_ASSERT_EQUAL(j.code, GOLDEN_BK_E_CANCELLED);
    double took = j.end - c0;
    fprintf(stderr, "  [cancel: whole prefill %.3f s, ended %.4f s after cancel, cancel "
            "returned in %.4f s]\n", whole, took, c1 - c0);
    CU_ASSERT_TRUE(whole > 0.05);  /* a prefill long enough for the test to mean something */
    CU_ASSERT_TRUE(took < 0.5 && took < whole / 2); /* soon: bounded, far below the rest */
    CU_ASSERT_TRUE(j.end - s0 < whole * 0.8); /* it stopped early, not after doing it all */
    CU_ASSERT_EQUAL(golden_backend_length(b, 2), 0);
    CU_ASSERT_EQUAL(golden_backend_length(b, 1), (int64_t)n); /* the other lane untouched */
    /* the lane works again, and an idle cancel is a reset */
    CU_ASSERT_EQUAL(golden_backend_prefill(b, 2, 0, t, 3, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_length(b, 2), 3);
    CU_ASSERT_EQUAL(golden_backend_cancel(b, 2, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_length(b, 2), 0);
    CU_ASSERT_EQUAL(golden_backend_cancel(b, 9, &err), GOLDEN_ERR); /* no lane 9 */
    free(t);
    golden_backend_close(b);
}

static void test_cancel(void) { cancel_case(0); }
static void test_cancel_host(void) { cancel_case(1); }

static void test_cleanup(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf /tmp/test-batch-%ld", (long)getpid());
    CU_ASSERT_EQUAL(system(cmd), 0);
}

int main(void)
{
    static const golden_test tests[] = {
        {"step_batch: the same bits at 1 lane", test_same_bits_1},
        {"step_batch: the same bits at 4 lanes", test_same_bits_4},
        {"step_batch: the same bits at 4 lanes, in a host", test_same_bits_4_host},
        {"step_batch: malformed batches, a failed step", test_malformed},
        {"step_batch: malformed batches, a failed step, in a host", test_malformed_host},
        {"cancel of a long prefill from another thread", test_cancel},
        {"cancel of a long prefill from another thread, in a host", test_cancel_host},
        {"cleanup", test_cleanup},
        {0, 0}};
    return golden_test_run("replay_batch", tests);
}

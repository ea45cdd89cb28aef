/* Version 2 test plug-ins of issue 33 (tests/e2e/npu-replay-batch.sh): the counting model of
 * test-backend.c (included whole, its version 1 calls as the base) behind a version 2 table,
 * built five ways:
 *   TB2_full       every call, step_batch (the steps one after another) and cancel (the lane's
 *                  flag: a call waiting its delay_us ends "cancelled", the lane emptied; with
 *                  cancel_leaks=1 the lane keeps its positions: test-backend.c)
 *   TB2_min        a table built with the older version 2 header: size GOLDEN_BACKEND_V2_MIN_SIZE
 *                  (the pointers after it stay set: size alone must keep the harness off them)
 *   TB2_small      a size below GOLDEN_BACKEND_V2_MIN_SIZE (the harness must refuse it)
 *   TB2_badstatus  step_batch answers its first step with status 99 (not an ABI code)
 *   TB2_otherlane  step_batch also prefills a lane it was not given */
#define TEST_ABI GOLDEN_BACKEND_ABI_VERSION
#include "test-backend.c"

static int code_of(int rc, const char *msg)
{
    if (rc == 0)
        return 0;
    if (strcmp(msg, "cancelled") == 0)
        return GOLDEN_BK_E_CANCELLED;
    return strncmp(msg, "context_limit_exceeded", 22) == 0 ? GOLDEN_BK_E_CONTEXT_LIMIT
                                                           : GOLDEN_BK_E_OTHER;
}

static int v2_decode_at(void *self, int lane, int64_t pos, int32_t tok, int64_t *written,
                        char *msg, size_t n)
{
    tb *b = self;
    *written = -1;
    if (lane < 0 || lane >= LANES || pos != b->len[lane])
        return snprintf(msg, n, "decode at %lld: not the lane's length", (long long)pos),
               GOLDEN_BK_E_INVALID;
    int rc = code_of(tb_decode(self, lane, tok, msg, n), msg);
    if (rc == 0)
        *written = b->len[lane] - 1;
    return rc;
}

static int v2_prefill_keep(void *self, int lane, int64_t pos, const int32_t *t, size_t count,
                           const int64_t *keep, size_t n_keep, char *msg, size_t n)
{
    (void)keep;
    if (n_keep)
        return snprintf(msg, n, "this test plug-in keeps no logits"), GOLDEN_BK_E_INVALID;
    return code_of(tb_prefill(self, lane, pos, t, count, msg, n), msg);
}

static int v2_logits_at(void *self, int lane, int64_t pos, int first, int count, void *dst,
                        char *msg, size_t n)
{
    tb *b = self;
    if (lane < 0 || lane >= LANES || pos != b->len[lane] - 1)
        return snprintf(msg, n, "no kept logits at %lld", (long long)pos), GOLDEN_BK_E_INVALID;
    return code_of(tb_logits(self, lane, first, count, dst, msg, n), msg);
}

static int v2_topk(void *self, int lane, int k, float *values, int32_t *indices, char *msg,
                   size_t n)
{
    tb *b = self;
    float row[VOCAB];
    uint16_t raw[VOCAB];
    if (k < 1 || k > VOCAB)
        return snprintf(msg, n, "k %d", k), GOLDEN_BK_E_INVALID;
    int rc = code_of(tb_logits(self, lane, 0, VOCAB, b->bf16 ? (void *)raw : (void *)row, msg, n),
                     msg);
    if (rc)
        return rc;
    for (int i = 0; b->bf16 && i < VOCAB; i++) {
        uint32_t u = (uint32_t)raw[i] << 16;
        memcpy(&row[i], &u, 4);
    }
    bool used[VOCAB] = {false};
    for (int j = 0; j < k; j++) { /* largest first, the lower index first among equals */
        int best = -1;
        for (int i = 0; i < VOCAB; i++)
            if (!used[i] && (best < 0 || row[i] > row[best]))
                best = i;
        used[best] = true;
        values[j] = row[best];
        indices[j] = best;
    }
    return 0;
}

static int v2_step_batch(void *self, golden_backend_step *st, size_t n_steps, char *msg,
                         size_t n)
{
    if (n_steps == 0)
        return snprintf(msg, n, "no steps"), GOLDEN_BK_E_INVALID;
    for (size_t i = 0; i < n_steps; i++)
        for (size_t j = 0; j < i; j++)
            if (st[j].lane == st[i].lane)
                return snprintf(msg, n, "lane %d twice", st[i].lane), GOLDEN_BK_E_INVALID;
    for (size_t i = 0; i < n_steps; i++) {
        char one[256] = "";
        st[i].written = -1;
        st[i].status = st[i].kind == GOLDEN_BK_STEP_PREFILL
                           ? v2_prefill_keep(self, st[i].lane, st[i].pos, st[i].tokens, st[i].n,
                                             NULL, 0, one, sizeof one)
                           : v2_decode_at(self, st[i].lane, st[i].pos, st[i].tokens[0],
                                          &st[i].written, one, sizeof one);
        if (st[i].status)
            snprintf(msg, n, "lane %d: %s", st[i].lane, one);
    }
#ifdef TB2_badstatus
    st[0].status = 99;
#endif
#ifdef TB2_otherlane
    tb *b = self;
    for (int L = 0; L < LANES; L++) {
        size_t i = 0;
        while (i < n_steps && st[i].lane != L)
            i++;
        if (i == n_steps) { /* the fault: a lane not in the batch gets a position */
            b->toks[L][0] = 1;
            b->len[L] = 1;
            break;
        }
    }
#endif
    return 0;
}

/* From the host's cancel thread: only the lane's flag (test-backend.c, settle and tb_wait take
 * it on the calls' thread), so the cancel never races a call under way. */
static int v2_cancel(void *self, int lane, char *msg, size_t n)
{
    tb *b = self;
    if (lane < 0 || lane >= LANES)
        return snprintf(msg, n, "bad lane"), GOLDEN_BK_E_INVALID;
    __atomic_store_n(&b->cancel_req[lane], 1, __ATOMIC_SEQ_CST);
    return 0;
}

static golden_backend_vtable_v2 vt2;

const golden_backend_vtable_v2 *golden_backend_entry_v2(void);
const golden_backend_vtable_v2 *golden_backend_entry_v2(void)
{
    vt2.base = vt;
    vt2.base.name = "test-v2";
    vt2.size = sizeof vt2;
    vt2.decode_at = v2_decode_at;
    vt2.prefill_keep = v2_prefill_keep;
    vt2.logits_at = v2_logits_at;
    vt2.topk = v2_topk;
    vt2.step_batch = v2_step_batch;
    vt2.cancel = v2_cancel;
#if defined(TB2_min)
    vt2.size = GOLDEN_BACKEND_V2_MIN_SIZE;
#elif defined(TB2_small)
    vt2.size = GOLDEN_BACKEND_V2_MIN_SIZE - sizeof(void (*)(void));
#endif
    return &vt2;
}

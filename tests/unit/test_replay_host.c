/* What the harness does with what a backend (host) sends: strings cleaned to printable UTF-8,
 * info() against the budgets, the fault kinds of a host that died. Expected values by hand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "replay/faults_priv.h"
#include "replay/host_priv.h"
#include "replay/run_priv.h"

static void clean(const char *in, size_t in_len, size_t out_len, const char *want)
{
    char out[64];
    memset(out, 'Z', sizeof out);
    replay_clean_text(out, out_len, in, in_len);
    CU_ASSERT_STRING_EQUAL(out, want);
}

static void test_clean(void)
{
    clean("plain text", 64, 64, "plain text");
    clean("tab\there\nnew", 64, 64, "tab?here?new");
    clean("esc \x1b[31m red", 64, 64, "esc ?[31m red");
    clean("bad \xff\xfe end", 64, 64, "bad ?? end");
    clean("overlong \xc0\xaf slash", 64, 64, "overlong ?? slash");
    clean("surrogate \xed\xa0\x80", 64, 64, "surrogate ???");
    clean("C1 \xc2\x9b", 64, 64, "C1 ??");                    /* U+009B: a CSI in 8 bits */
    clean("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 64, 64, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    clean("cut \xe2\x82", 64, 64, "cut ??");                  /* a sequence cut by the end */
    clean("unterminated!", 5, 64, "unter");                    /* never past src_len */
    clean("abcdef", 64, 4, "abc");                             /* never past the output */
    clean("ab\xc3\xa9", 64, 4, "ab");                          /* a sequence never split */
    clean("del\x7f", 64, 64, "del?");
}

static golden_backend_info good(void)
{
    golden_backend_info in = {GOLDEN_BACKEND_ABI_VERSION, 64, 2, 16, 4, 512, 512, 2, GOLDEN_BK_F32};
    return in;
}

static void test_budgets(void)
{
    golden_error err;
    golden_backend_info in = good();
    CU_ASSERT_EQUAL(replay_check_info(&in, "b", &err), 0);
    in.vocab_size = 1000000000;
    CU_ASSERT_EQUAL(replay_check_info(&in, "b", &err), GOLDEN_ERR);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "vocab_size 1000000000, beyond the memory budget"));
    in = good();
    in.vocab_size = 1 << 24; /* the budget itself is allowed */
    CU_ASSERT_EQUAL(replay_check_info(&in, "b", &err), 0);
    in.vocab_size = (1 << 24) + 1;
    CU_ASSERT_EQUAL(replay_check_info(&in, "b", &err), GOLDEN_ERR);
    in = good();
    in.num_lanes = 70000;
    CU_ASSERT_EQUAL(replay_check_info(&in, "b", &err), GOLDEN_ERR);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "num_lanes 70000"));
    in = good();
    in.hidden_size = 1 << 21;
    CU_ASSERT_EQUAL(replay_check_info(&in, "b", &err), GOLDEN_ERR);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "hidden_size 2097152"));
    in = good();
    in.context_limit = ((int64_t)1 << 31) + 1;
    CU_ASSERT_EQUAL(replay_check_info(&in, "b", &err), GOLDEN_ERR);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "context_limit 2147483649"));
    in = good();
    in.num_layers = 1 << 17;
    CU_ASSERT_EQUAL(replay_check_info(&in, "b", &err), GOLDEN_ERR);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "num_layers 131072"));
    in = good();
    in.num_experts = 1 << 17;
    in.experts_per_tok = 4;
    CU_ASSERT_EQUAL(replay_check_info(&in, "b", &err), GOLDEN_ERR);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "num_experts 131072"));
}

static void test_kinds(void)
{
    CU_ASSERT_STRING_EQUAL(replay_fault_kind("backend host crashed in prefill: signal 11 (x)"), "crash");
    CU_ASSERT_STRING_EQUAL(replay_fault_kind("backend host exited in decode with status 0"), "exit");
    /* the host's own exit on a broken channel (REPLAY_HOST_BROKEN) reads as a crash */
    CU_ASSERT_STRING_EQUAL(replay_fault_kind("backend host crashed in decode: it broke the channel "
                                             "(the backend closed or replaced its descriptors)"),
                           "crash");
    /* "no answer" and "killed": not the backend-reported timeout */
    CU_ASSERT_STRING_EQUAL(replay_fault_kind("backend host hung in logits: no answer within 1.000 s; killed"), "hang");
    CU_ASSERT_STRING_EQUAL(replay_fault_kind("timeout: forward call 3 did not complete"), "timeout");
}

/* Token ids against a vocabulary when the manifest is loaded: 32 in a vocabulary of 32 is the
 * token file's error at its index 2; 33 lets it through; -1 (the public loader) checks nothing. */
static void test_ids_in_vocab(void)
{
    char dir[] = "/tmp/test_replay_host_XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char tok[256], man[256];
    snprintf(tok, sizeof tok, "%s/t.json", dir);
    snprintf(man, sizeof man, "%s/m.jsonl", dir);
    FILE *f = fopen(tok, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("[1,5,32,13]", f);
    fclose(f);
    f = fopen(man, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("{\"schema\":\"calculet-input-manifest/v1\",\"case_id\":\"c1\",\"phase\":\"prefill\","
          "\"prompt_tokens\":4,\"past_tokens\":0,\"output_tokens\":1,\"concurrency\":1,"
          "\"dataset\":\"random_tokens\",\"seed\":0,\"rejection\":false,\"input\":{\"path\":"
          "\"t.json\",\"sha256\":"
          "\"c7ae713cd7950584aab11f16e2083e265c7b6f255d6d9a8c9ce8af1e643d3900\"}}\n", f);
    fclose(f);
    golden_replay_case *k = NULL;
    size_t n = 9;
    golden_error err;
    golden_error_clear(&err);
    CU_ASSERT_EQUAL(replay_manifest_load_vocab(man, 32, &k, &n, &err), GOLDEN_ERR);
    CU_ASSERT_PTR_NULL(k);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.where, "t.json#/2"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "token id 32 is outside the backend's vocabulary of 32"));
    CU_ASSERT_EQUAL(replay_manifest_load_vocab(man, 33, &k, &n, &err), 0);
    CU_ASSERT_EQUAL(n, 1);
    if (n == 1)
        CU_ASSERT_EQUAL(k[0].ids[2], 32);
    golden_replay_cases_free(k, n);
    CU_ASSERT_EQUAL(replay_manifest_load_vocab(man, 0, &k, &n, &err), GOLDEN_ERR); /* no model */
    CU_ASSERT_EQUAL(golden_replay_manifest_load(man, &k, &n, &err), 0);
    golden_replay_cases_free(k, n);
    unlink(tok);
    unlink(man);
    rmdir(dir);
}

int main(void)
{
    static const golden_test tests[] = {{"backend strings cleaned to printable UTF-8", test_clean},
                                        {"info() against the memory budgets", test_budgets},
                                        {"the kinds of a host that died", test_kinds},
                                        {"token ids checked against the vocabulary", test_ids_in_vocab},
                                        {0, 0}};
    return golden_test_run("replay_host", tests);
}

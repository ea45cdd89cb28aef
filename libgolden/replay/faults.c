/* stability/faults.jsonl for npu-replay run and conform: one calculet-fault/v1 line a fault
 * (kind, message, the retest after reset), written by one writer for both commands. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "golden/report.h"
#include "replay/faults_priv.h"

void replay_fault_begin(replay_fault *f)
{
    memset(f, 0, sizeof *f);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(f->time, sizeof f->time, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Whether msg holds `word` (any case) with no letter right before or after it: "NaN" and
 * "nan:" count, "maintenance" does not. */
static bool has_word(const char *msg, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = msg; *p; p++)
        if (strncasecmp(p, word, n) == 0 && (p == msg || !isalpha((unsigned char)p[-1])) &&
            !isalpha((unsigned char)p[n]))
            return true;
    return false;
}

const char *replay_fault_kind(const char *msg)
{
    /* the harness's own words for a backend host it lost (replay/host.c) */
    if (strstr(msg, "backend host crashed in "))
        return "crash";
    if (strstr(msg, "backend host exited in "))
        return "exit";
    if (strstr(msg, "backend host hung in "))
        return "hang";
    if (strstr(msg, "backend host signalled the harness in "))
        return "signal";
    if (strstr(msg, "context_limit_exceeded"))
        return "rejected_input";
    if (has_word(msg, "timeout") || strstr(msg, "timed out"))
        return "timeout";
    if (strstr(msg, "out of memory"))
        return "oom";
    if (has_word(msg, "nan") || has_word(msg, "inf"))
        return "nan_output";
    return "device_error";
}

long replay_logits_bad(const float *row, int n)
{
    bool any = false;
    for (int i = 0; i < n; i++) {
        if (isnan(row[i]) || (isinf(row[i]) && row[i] > 0))
            return i;
        any |= row[i] != -INFINITY;
    }
    return any ? -1 : n;
}

int replay_fault_retest(golden_backend *b, const int32_t *tokens, size_t n)
{
    const golden_backend_info *in = golden_backend_get_info(b);
    int V = in->vocab_size;
    float *l = malloc((size_t)V * 4);
    uint16_t *h = in->logits_dtype == GOLDEN_BK_BF16 ? malloc((size_t)V * 2) : NULL;
    golden_error e;
    bool ok = l && (h || in->logits_dtype != GOLDEN_BK_BF16) &&
              golden_backend_reset(b, -1, &e) == 0 &&
              golden_backend_prefill(b, 0, 0, tokens, n, &e) == 0 &&
              golden_backend_logits(b, 0, 0, V, h ? (void *)h : (void *)l, &e) == 0;
    if (ok && h)
        golden_logits_bf16_to_f32(h, 0, (size_t)V, l);
    ok = ok && replay_logits_bad(l, V) < 0;
    free(l);
    free(h);
    return ok ? REPLAY_RETEST_PASSED : REPLAY_RETEST_FAILED;
}

json_t *replay_fault_json(const replay_fault *f, const char *side)
{
    static const char *const rt[] = {"not_run", "passed", "failed"};
    json_t *j = json_pack("{s:s, s:s, s:s}", "schema", "calculet-fault/v1", "time", f->time,
                          "side", side);
    if (j && f->case_id[0])
        json_object_set_new(j, "case_id", json_string(f->case_id));
    if (j && f->request_id[0])
        json_object_set_new(j, "request_id", json_string(f->request_id));
    json_t *rest = json_pack("{s:s, s:s, s:s, s:b, s:s}", "kind", f->kind, "severity",
                             f->retest == REPLAY_RETEST_FAILED ? "fatal" : "error", "message",
                             f->message[0] ? f->message : "backend call failed", "recovered",
                             f->retest == REPLAY_RETEST_PASSED, "retest_after_reset",
                             rt[f->retest]);
    if (!j || !rest || json_object_update(j, rest) != 0) {
        json_decref(j);
        j = NULL;
    }
    json_decref(rest);
    return j;
}

int replay_faults_write(const replay_fault *f, size_t n, const char *side, const char *path,
                        bool force, golden_error *err)
{
    golden_outfile *out = NULL;
    if (golden_outfile_open(path, force, &out, err))
        return GOLDEN_ERR;
    FILE *s = golden_outfile_stream(out);
    bool bad = false;
    for (size_t i = 0; !bad && i < n; i++) {
        json_t *j = replay_fault_json(&f[i], side);
        char *line = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        bad = !line || fprintf(s, "%s\n", line) < 0;
        free(line);
        json_decref(j);
    }
    if (bad) {
        golden_outfile_abort(out);
        return golden_fail_what(err, GOLDEN_EIO, path, "cannot write the faults");
    }
    return golden_outfile_commit(out, err);
}

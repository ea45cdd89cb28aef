/* One calculet-raw-request/v1 line of performance/raw-requests.jsonl: a request's nine stage
 * readings (monotonic ns, taken where the work happened) and its TTFT/TPOT. */
#include <inttypes.h>
#include <stdio.h>

#include "replay/run_priv.h"

static const char *const STAGE_NAMES[REPLAY_STAGES] = {
    "client_queue", "service_queue", "input_prepare", "h2d", "npu_wait",
    "d2h", "logits_conversion", "sampling", "stream_flush"};

/* Case ids match ^[A-Za-z0-9][A-Za-z0-9._-]*$ and sides are fixed words: nothing to escape. */
int replay_raw_write(FILE *f, const replay_request *r, golden_error *err)
{
    fprintf(f,
            "{\"schema\":\"calculet-raw-request/v1\",\"request_id\":\"%s/%s/%d\",\"case_id\":\"%s\","
            "\"side\":\"%s\",\"run\":%d,\"warmup\":%s,\"steady\":true,\"concurrency\":%d,"
            "\"output_tokens\":%lld",
            r->side, r->case_id, r->run, r->case_id, r->side, r->run, r->warmup ? "true" : "false",
            r->concurrency > 1 ? r->concurrency : 1, (long long)r->output_tokens);
    if (r->has_ttft)
        fprintf(f, ",\"ttft_ms\":%.6f", r->ttft_ms);
    if (r->has_tpot)
        fprintf(f, ",\"tpot_ms\":%.6f", r->tpot_ms);
    fputs(",\"stages\":{", f);
    for (int s = 0; s < REPLAY_STAGES; s++)
        fprintf(f, "%s\"%s\":{\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 "}", s ? "," : "",
                STAGE_NAMES[s], r->stage[s][0], r->stage[s][1]);
    fputs("}}\n", f);
    if (ferror(f))
        return golden_fail_what(err, GOLDEN_EIO, "raw requests", "write failed");
    return 0;
}

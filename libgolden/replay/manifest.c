/* Input manifests of npu-replay (calculet-input-manifest/v1 JSON Lines): each case validated,
 * its token-id file (a JSON array beside the manifest) read and checked against its sha256. */
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "golden/doc.h"
#include "golden/hash.h"
#include "golden/replay_run.h"
#include "replay/host_priv.h"
#include "replay/run_priv.h"
#include "golden/schema.h"
#include "util/vec.h"

typedef struct {
    const char *path;
    char *dir;
    golden_schema *schema;
    golden_replay_case *cases;
    size_t n, cap;
    int vocab; /* >= 0: every id must be below it (the backend's info); < 0: no check */
} load_ctx;

static int read_ids(load_ctx *c, golden_replay_case *k, json_t *input, const char *where,
                    golden_error *err)
{
    const char *rel = json_string_value(json_object_get(input, "path"));
    const char *want = json_string_value(json_object_get(input, "sha256"));
    size_t n = strlen(c->dir) + strlen(rel) + 2;
    char *p = malloc(n);
    if (!p)
        return golden_fail_what(err, GOLDEN_ENOMEM, where, "out of memory");
    snprintf(p, n, "%s/%s", c->dir, rel);
    char got[65];
    golden_doc *d = NULL;
    int rc = golden_sha256_file(p, got, err);
    if (rc == 0 && strcmp(got, want) != 0)
        rc = golden_fail_what(err, GOLDEN_ECORRUPT, p, "sha256 %s, the manifest says %s", got, want);
    if (rc == 0)
        rc = golden_doc_load_file(p, &d, err);
    json_t *arr = rc == 0 ? golden_doc_root(d) : NULL;
    if (rc == 0 && !json_is_array(arr))
        rc = golden_fail_what(err, GOLDEN_EINVAL, p, "token file must be a JSON array of ids");
    if (rc == 0 && json_array_size(arr) != (size_t)(k->past + k->prompt))
        rc = golden_fail_what(err, GOLDEN_EINVAL, p, "%zu ids, the case says %lld past + %lld prompt",
                              json_array_size(arr), (long long)k->past, (long long)k->prompt);
    if (rc == 0) {
        k->n_ids = json_array_size(arr);
        k->ids = malloc((k->n_ids ? k->n_ids : 1) * sizeof *k->ids);
        if (!k->ids)
            rc = golden_fail_what(err, GOLDEN_ENOMEM, p, "out of memory");
        for (size_t i = 0; rc == 0 && i < k->n_ids; i++) {
            json_t *v = json_array_get(arr, i);
            if (!json_is_integer(v) || json_integer_value(v) < 0 ||
                json_integer_value(v) > INT32_MAX)
                rc = golden_fail_where(err, GOLDEN_EINVAL, "not a token id", "%s#/%zu", p, i);
            else if (c->vocab >= 0 && json_integer_value(v) >= c->vocab) {
                char at[1024];
                snprintf(at, sizeof at, "%.1000s#/%zu", p, i);
                rc = golden_fail_what(err, GOLDEN_EINVAL, at, "token id %lld is outside the "
                                      "backend's vocabulary of %d",
                                      (long long)json_integer_value(v), c->vocab);
            } else
                k->ids[i] = (int32_t)json_integer_value(v);
        }
    }
    golden_doc_free(d);
    free(p);
    return rc;
}

static int on_line(void *vctx, golden_doc *doc, size_t line, golden_error *err)
{
    load_ctx *c = vctx;
    if (golden_schema_check(c->schema, doc, err) != 0)
        return GOLDEN_ERR;
    char where[1200];
    snprintf(where, sizeof where, "%s:%zu", c->path, line);
    if (VEC_GROW(c->cases, c->n, c->cap, 64) != 0)
        return golden_fail_what(err, GOLDEN_ENOMEM, where, "out of memory");
    json_t *r = golden_doc_root(doc);
    golden_replay_case *k = &c->cases[c->n];
    memset(k, 0, sizeof *k);
    c->n++;
    k->case_id = strdup(json_string_value(json_object_get(r, "case_id")));
    k->dataset = strdup(json_string_value(json_object_get(r, "dataset")));
    k->decode = strcmp(json_string_value(json_object_get(r, "phase")), "decode") == 0;
    k->prompt = json_integer_value(json_object_get(r, "prompt_tokens"));
    k->past = json_integer_value(json_object_get(r, "past_tokens"));
    k->output = json_integer_value(json_object_get(r, "output_tokens"));
    json_t *cc = json_object_get(r, "concurrency"); /* the schema: an integer >= 1 */
    json_int_t conc = cc ? json_integer_value(cc) : 1;
    k->concurrency = conc >= 1 && conc <= REPLAY_MAX_LANES ? (int)conc : -1;
    k->rejection = json_is_true(json_object_get(r, "rejection"));
    json_t *ee = json_object_get(r, "expected_error");
    if (ee)
        k->expected_error = strdup(json_string_value(ee));
    if (!k->case_id || !k->dataset || (ee && !k->expected_error))
        return golden_fail_what(err, GOLDEN_ENOMEM, where, "out of memory");
    /* every size from the document: no sum or product of them can overflow, none can ask for
     * more than the largest context a backend may report */
    const char *big = k->prompt < 0 || k->prompt > REPLAY_MAX_CONTEXT ? "prompt_tokens"
                      : k->past < 0 || k->past > REPLAY_MAX_CONTEXT   ? "past_tokens"
                      : k->output < 0 || k->output > REPLAY_MAX_CONTEXT ? "output_tokens"
                                                                      : NULL;
    if (!big && k->concurrency < 1)
        return golden_fail_what(err, GOLDEN_EINVAL, where,
                                "case %s: concurrency %lld is beyond the lane budget (%d)",
                                k->case_id, (long long)conc, REPLAY_MAX_LANES);
    if (big)
        return golden_fail_what(err, GOLDEN_EINVAL, where,
                                "case %s: %s %lld is beyond the largest context (%lld)", k->case_id,
                                big, (long long)json_integer_value(json_object_get(r, big)),
                                (long long)REPLAY_MAX_CONTEXT);
    for (size_t i = 0; i + 1 < c->n; i++)
        if (strcmp(c->cases[i].case_id, k->case_id) == 0)
            return golden_fail_what(err, GOLDEN_EINVAL, where, "case_id '%s' appears twice", k->case_id);
    if (k->rejection)
        return 0;
    if (k->past + k->prompt < 1)
        return golden_fail_what(err, GOLDEN_EINVAL, where, "case %s has no tokens to prefill", k->case_id);
    if (k->output < 1 || (k->decode && k->output < 2))
        return golden_fail_what(err, GOLDEN_EINVAL, where,
                                "case %s needs output_tokens >= %d (a decode case times steps after the first token)",
                                k->case_id, k->decode ? 2 : 1);
    json_t *input = json_object_get(r, "input");
    if (!input)
        return golden_fail_what(err, GOLDEN_EINVAL, where, "case %s has no input token file", k->case_id);
    return read_ids(c, k, input, where, err);
}

int golden_replay_manifest_load(const char *path, golden_replay_case **cases, size_t *n,
                                golden_error *err)
{
    return replay_manifest_load_vocab(path, -1, cases, n, err);
}

/* The one check of token ids against a backend (run, score, soak): an id at or beyond the vocabulary
 * of its info() is the manifest's error before any call, naming the token file and the id. */
int replay_manifest_load_vocab(const char *path, int vocab, golden_replay_case **cases, size_t *n,
                               golden_error *err)
{
    load_ctx c = {path, NULL, NULL, NULL, 0, 0, vocab};
    *cases = NULL;
    *n = 0;
    char *copy = strdup(path);
    c.dir = copy ? strdup(dirname(copy)) : NULL;
    free(copy);
    if (!c.dir)
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    int rc = golden_schema_load("calculet-input-manifest-v1.schema.json", &c.schema, err);
    if (rc == 0)
        rc = golden_doc_each_jsonl(path, on_line, &c, err);
    golden_schema_free(c.schema);
    free(c.dir);
    if (rc != 0) {
        golden_replay_cases_free(c.cases, c.n);
        return GOLDEN_ERR;
    }
    *cases = c.cases;
    *n = c.n;
    return 0;
}

void golden_replay_cases_free(golden_replay_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(cases[i].case_id);
        free(cases[i].dataset);
        free(cases[i].expected_error);
        free(cases[i].ids);
    }
    free(cases);
}

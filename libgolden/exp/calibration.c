/* The calibration manifest (handbook section 16.1): unique samples, one tokenizer (the
 * hypothesis's), every PII review passed, shipped samples hashed. */
#include "exp/internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/vec.h"

/* sample_id unique: a repeat is reported on its own line with the line it repeats. */
static int sample_unique(jl_state *s, const golden_doc *d, const char *id, size_t line_no)
{
    golden_error *err = s->c->err;
    if (VEC_GROW(s->sample_ids, s->nsamples, s->capsamples, 64) != 0)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    char *copy = exp_xstrdup(id, err);
    if (!copy)
        return GOLDEN_ERR;
    s->sample_ids[s->nsamples++] = copy;
    uint64_t first;
    int put = lg_strmap_put(&s->sample_index, copy, strlen(copy), line_no, &first);
    if (put < 0)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    if (put == 1)
        return golden_findings_add(s->c->out, GOLDEN_SEV_ERROR, "calibration-unique",
                                   golden_doc_name(d), (int)line_no, 1, "", err,
                                   "sample_id %s repeats the one on line %zu", id, (size_t)first);
    return GOLDEN_OK;
}

int exp_calibration_line(void *ctx, golden_doc *d, size_t line_no, golden_error *err)
{
    jl_state *s = ctx;
    vctx *c = s->c;
    if (exp_validate(c->out, s->schema, d, c->threads, err) < 0)
        return -1;
    json_t *r = golden_doc_root(d);
    const char *id = exp_sget(r, "sample_id"), *tok = exp_sget(r, "tokenizer_sha256");
    const char *pii = exp_sget(r, "pii_review"), *path = exp_sget(r, "path"), *sha = exp_sget(r, "sha256");
    if (pii && strcmp(pii, "passed") != 0 &&
        exp_add_node(c, GOLDEN_SEV_ERROR, "calibration-pii", d, "/pii_review",
                 "sample %s has pii_review '%s'; every sample must have passed", id ? id : "?",
                 pii))
        return -1;
    if (tok) {
        if (!s->tokenizer[0]) {
            snprintf(s->tokenizer, sizeof s->tokenizer, "%s", tok);
            s->tokenizer_line = line_no;
            if (s->expected_tokenizer && strcmp(s->expected_tokenizer, tok) != 0 &&
                exp_add_node(c, GOLDEN_SEV_ERROR, "calibration-tokenizer", d, "/tokenizer_sha256",
                         "tokenizer %.12s... differs from the hypothesis's tokenizer_hash %.12s...",
                         tok, s->expected_tokenizer))
                return -1;
        } else if (strcmp(s->tokenizer, tok) != 0 &&
                   exp_add_node(c, GOLDEN_SEV_ERROR, "calibration-tokenizer", d, "/tokenizer_sha256",
                            "tokenizer %.12s... differs from %.12s... on line %zu; one manifest "
                            "uses one tokenizer", tok, s->tokenizer, s->tokenizer_line)) {
            return -1;
        }
    }
    if (id && sample_unique(s, d, id, line_no) != 0)
        return -1;
    if (path && sha) {
        int line = 0, col = 0;
        golden_doc_line(d, json_object_get(r, "path"), &line, &col);
        origin o = {golden_doc_name(d), line, col, "/path"};
        if (exp_check_ref(c, path, sha, &o, "artifact-exists", "calibration-hash") != 0)
            return -1;
    }
    return 0;
}

/* The input matrix (handbook section 5): each case within the context limit or a rejection
 * case, token files as artifacts, unique case ids, and the hypothesis's matrix covered. */
#include "exp/internal.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/vec.h"

int exp_input_line(void *ctx, golden_doc *d, size_t line_no, golden_error *err)
{
    jl_state *s = ctx;
    vctx *c = s->c;
    if (exp_validate(c->out, s->schema, d, c->threads, err) < 0)
        return -1;
    json_t *r = golden_doc_root(d);
    const char *id = exp_sget(r, "case_id");
    if (!id)
        return 0;
    long long p = 0, past = 0, o = 0;
    int kp = exp_int_key(c, d, r, "", "prompt_tokens", "context-limit", &p);
    int ka = exp_int_key(c, d, r, "", "past_tokens", "context-limit", &past);
    int ko = exp_int_key(c, d, r, "", "output_tokens", "context-limit", &o);
    if (kp < 0 || ka < 0 || ko < 0)
        return -1;
    /* the case's input token file is an artifact like any other, beside the manifest */
    if (exp_doc_refs_in(c, d, "golden") != 0)
        return -1;
    bool unreadable = kp == 2 || ka == 2 || ko == 2;
    bool rej = json_is_true(json_object_get(r, "rejection"));
    long long total;
    /* hostile counts near INT64_MAX must not overflow: saturate, they exceed any limit */
    if (__builtin_add_overflow(p, past, &total) || __builtin_add_overflow(total, o, &total))
        total = LLONG_MAX;
    if (unreadable)
        total = LLONG_MAX; /* a count past int64 exceeds any limit; the finding says why */
    if (total > s->limit && !rej &&
        exp_add_node(c, GOLDEN_SEV_ERROR, "context-limit", d, "/rejection",
                 "case %s totals %lld tokens (prompt %lld + past %lld + output %lld), over the "
                 "context limit %lld, but is not a rejection case", id, total, p, past, o,
                 s->limit))
        return -1;
    if (total <= s->limit && rej &&
        exp_add_node(c, GOLDEN_SEV_ERROR, "context-limit", d, "/rejection",
                 "case %s totals %lld tokens, within the context limit %lld, yet is marked as a "
                 "rejection case", id, total, s->limit))
        return -1;
    if (VEC_GROW(s->cases, s->ncases, s->capcases, 64) != 0)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    input_case *ic = &s->cases[s->ncases];
    if (!(ic->id = exp_xstrdup(id, err)))
        return -1;
    ic->line = line_no;
    ic->rejection = rej;
    const char *phase = exp_sget(r, "phase");
    ic->decode = phase && strcmp(phase, "decode") == 0;
    ic->prompt = p;
    ic->past = past;
    ic->output = o;
    ic->dataset = exp_dataset_index(exp_sget(r, "dataset"));
    ic->input = NULL;
    s->ncases++;
    const char *ip = json_string_value(exp_ptr_get(r, "/input/path"));
    if (ip) { /* token files are relative to the manifest's folder, golden/ */
        size_t n = strlen(ip) + sizeof "golden/";
        if (!(ic->input = malloc(n)))
            return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        snprintf(ic->input, n, "golden/%s", ip);
    }
    /* the id's first line answers lookups; a repeat is reported where it stands */
    uint64_t first;
    int put = lg_strmap_put(&s->case_index, ic->id, strlen(ic->id), s->ncases - 1, &first);
    if (put < 0)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    if (put == 1 && golden_findings_add(c->out, GOLDEN_SEV_ERROR, "input-matrix",
                                        golden_doc_name(d), (int)line_no, 1, "", err,
                                        "case_id %s repeats the one on line %zu", id,
                                        s->cases[first].line))
        return -1;
    return 0;
}

/* The input case called id (its first line), or NULL. */
const input_case *exp_find_case(const jl_state *s, const char *id)
{
    uint64_t k;
    if (!lg_strmap_get(&s->case_index, id, strlen(id), &k))
        return NULL;
    return &s->cases[k];
}

/* After the whole input matrix is read: the hypothesis's matrix covered. */
int exp_input_matrix_rules(jl_state *s, const golden_doc *h, const char *rel)
{
    vctx *c = s->c;
    char file[1024];
    exp_disp(c, rel, file, sizeof file);
    if (!h)
        return GOLDEN_OK;
    json_t *m = json_object_get(golden_doc_root(h), "matrix");
    json_t *prompts = json_object_get(m, "prompt_tokens"), *outs = json_object_get(m, "output_tokens");
    json_t *pasts = json_object_get(m, "past_tokens");
    size_t i, j;
    json_t *pv, *ov;
    json_array_foreach(prompts, i, pv) {
        json_array_foreach(outs, j, ov) {
            long long p, o;
            char pp[64], op[64];
            snprintf(pp, sizeof pp, "/matrix/prompt_tokens/%zu", i);
            snprintf(op, sizeof op, "/matrix/output_tokens/%zu", j);
            int kp = exp_int_at(c, h, pv, pp, "input-matrix", &p);
            if (kp < 0)
                return GOLDEN_ERR;
            int ko = kp == 1 ? exp_int_at(c, h, ov, op, "input-matrix", &o) : 0;
            if (ko < 0)
                return GOLDEN_ERR;
            if (ko != 1)
                continue;
            bool found = false;
            for (size_t k = 0; k < s->ncases && !found; k++)
                found = !s->cases[k].decode && s->cases[k].prompt == p && s->cases[k].output == o;
            if (!found && golden_findings_add(c->out, GOLDEN_SEV_ERROR, "input-matrix", file, 0, 0,
                                              "", c->err,
                                              "no prefill case with %lld prompt and %lld output "
                                              "tokens, which the hypothesis's matrix names", p, o))
                return GOLDEN_ERR;
        }
    }
    json_array_foreach(pasts, i, pv) {
        long long past;
        char pp[64];
        snprintf(pp, sizeof pp, "/matrix/past_tokens/%zu", i);
        int kp = exp_int_at(c, h, pv, pp, "input-matrix", &past);
        if (kp < 0)
            return GOLDEN_ERR;
        if (kp != 1)
            continue;
        bool found = past == 0; /* prefill cases have no past */
        for (size_t k = 0; k < s->ncases && !found; k++)
            found = s->cases[k].decode && s->cases[k].past == past;
        if (!found && golden_findings_add(c->out, GOLDEN_SEV_ERROR, "input-matrix", file, 0, 0, "",
                                          c->err, "no decode case with past length %lld, which "
                                          "the hypothesis's matrix names", past))
            return GOLDEN_ERR;
    }
    return GOLDEN_OK;
}

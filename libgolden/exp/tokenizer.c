/* Rule tokenizer-hash: the tokenizer file's sha256 is what the hypothesis's
 * controlled.tokenizer_hash and the calibration manifest's tokenizer_sha256 name. The file is
 * --tokenizer FILE, else the folder's tokenizer.json; with neither, the rule has nothing to do.
 * An explicit --tokenizer that nothing names a hash for is a finding, never a silent pass. */
#include "exp/internal.h"
#include "golden/hash.h"

#include <stdio.h>
#include <string.h>

#define RULE "tokenizer-hash"
#define CAL_FILE "golden/calibration-manifest.jsonl"

int exp_tokenizer_rule(vctx *c, const golden_doc *h, const jl_state *cal)
{
    char full[PATH_MAX * 2], shown[1024];
    if (c->tokenizer) {
        snprintf(full, sizeof full, "%s", c->tokenizer);
        snprintf(shown, sizeof shown, "%s", c->tokenizer);
    } else if (exp_has_asset(c, "tokenizer.json")) {
        snprintf(full, sizeof full, "%s/tokenizer.json", c->root);
        exp_disp(c, "tokenizer.json", shown, sizeof shown);
    } else {
        return GOLDEN_OK;
    }
    char hex[65];
    if (golden_sha256_file(full, hex, c->err) != 0) {
        if (c->err)
            snprintf(c->err->where, sizeof c->err->where, "%s", shown);
        return GOLDEN_ERR;
    }
    c->out->files_hashed++;
    int checked = 0;
    const char *want = h ? json_string_value(exp_ptr_get(golden_doc_root(h), "/controlled/tokenizer_hash")) : NULL;
    if (want && golden_is_sha256_hex(want)) {
        checked++;
        if (strcmp(want, hex) != 0 &&
            exp_add_node(c, GOLDEN_SEV_ERROR, RULE, h, "/controlled/tokenizer_hash",
                         "controlled.tokenizer_hash %.12s... is not the sha256 of %s (%.12s...)",
                         want, shown, hex))
            return GOLDEN_ERR;
    }
    if (cal && cal->tokenizer[0]) {
        checked++;
        char where[1024];
        exp_disp(c, CAL_FILE, where, sizeof where);
        if (strcmp(cal->tokenizer, hex) != 0 &&
            golden_findings_add(c->out, GOLDEN_SEV_ERROR, RULE, where, (int)cal->tokenizer_line, 1,
                                "/tokenizer_sha256", c->err,
                                "tokenizer_sha256 %.12s... is not the sha256 of %s (%.12s...)",
                                cal->tokenizer, shown, hex))
            return GOLDEN_ERR;
    }
    if (!checked && c->tokenizer &&
        exp_add_rel(c, GOLDEN_SEV_ERROR, RULE, NULL,
                    "--tokenizer %s given, but neither a filled controlled.tokenizer_hash nor a "
                    "calibration manifest names a tokenizer hash: nothing to check it against",
                    shown))
        return GOLDEN_ERR;
    return GOLDEN_OK;
}

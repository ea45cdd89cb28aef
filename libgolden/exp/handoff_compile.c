/* A hand-off's compile deliverables against the team's hypothesis (handbook sections 3, 18
 * item 2): each compile manifest against the hypothesis, the pair (controlled values equal, one
 * main factor unless the design is factorial), the commands, and the delivered flags diff. */
#include "exp/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The manifest listed in handoff.json's compile item under role (format calbin-manifest). */
static const char *compile_path(json_t *idx, const char *role, const char *format)
{
    json_t *files = json_object_get(json_object_get(json_object_get(idx, "items"), "compile"),
                                    "files");
    size_t i;
    json_t *f;
    json_array_foreach(files, i, f) {
        const char *r = exp_sget(f, "role"), *fm = exp_sget(f, "format");
        if (r && strcmp(r, role) == 0 && (!format || (fm && strcmp(fm, format) == 0)))
            return exp_sget(f, "path");
    }
    return NULL;
}

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = '\0';
    size_t k = strspn(s, " \t");
    memmove(s, s + k, strlen(s + k) + 1);
}

/* The flags diff file ("NAME: OLD -> NEW" a line) must be the manifests' diff: every flag that
 * differs listed with both values, nothing else listed. */
static int flags_diff_agrees(vctx *c, const char *rel, const golden_doc *b, const golden_doc *m)
{
    char path[1024];
    exp_disp(c, rel, path, sizeof path);
    FILE *f = fopen(path, "r");
    if (!f)
        return exp_add_rel(c, GOLDEN_SEV_ERROR, "flags-diff", rel, "cannot open: %s",
                           strerror(errno));
    json_t *bf = exp_ptr_get(golden_doc_root(b), "/compile/flags");
    json_t *cf = exp_ptr_get(golden_doc_root(m), "/compile/flags");
    json_t *listed = json_object();
    if (!listed) {
        fclose(f);
        return golden_fail_what(c->err, GOLDEN_ENOMEM, NULL, "out of memory");
    }
    char line[1024];
    int rc = GOLDEN_OK, no = 0;
    while (rc == GOLDEN_OK && fgets(line, sizeof line, f)) {
        no++;
        trim(line);
        if (!line[0] || line[0] == '#')
            continue;
        char *colon = strchr(line, ':'), *arrow = strstr(line, "->");
        if (!colon || !arrow || arrow < colon) {
            rc = exp_add_rel(c, GOLDEN_SEV_ERROR, "flags-diff", rel,
                             "line %d is not 'NAME: OLD -> NEW'", no);
            break;
        }
        *colon = '\0';
        *arrow = '\0';
        char *name = line, *old = colon + 1, *new_ = arrow + 2;
        trim(name);
        trim(old);
        trim(new_);
        json_t *bv = json_object_get(bf, name), *cv = json_object_get(cf, name);
        char a[128], bb[128];
        exp_value_show(bv, a, sizeof a);
        exp_value_show(cv, bb, sizeof bb);
        json_object_set_new(listed, name, json_true());
        if (!bv || !cv || exp_value_eq(bv, cv))
            rc = exp_add_rel(c, GOLDEN_SEV_ERROR, "flags-diff", rel,
                             "line %d lists %s, which the manifests do not change", no, name);
        else if (strcmp(a, old) != 0 || strcmp(bb, new_) != 0)
            rc = exp_add_rel(c, GOLDEN_SEV_ERROR, "flags-diff", rel,
                             "line %d says %s: %s -> %s but the manifests say %s -> %s", no,
                             name, old, new_, a, bb);
    }
    fclose(f);
    const char *k;
    json_t *v;
    json_object_foreach(cf, k, v) {
        json_t *bv = json_object_get(bf, k);
        if (rc == GOLDEN_OK && (!bv || !exp_value_eq(bv, v)) && !json_object_get(listed, k))
            rc = exp_add_rel(c, GOLDEN_SEV_ERROR, "flags-diff", rel,
                             "flag %s differs between the manifests but the flags diff does not "
                             "list it", k);
    }
    json_decref(listed);
    return rc;
}

int golden_handoff_compile_check(const char *dir, const char *hypothesis,
                                 const golden_experiment_opts *opts, golden_findings *out,
                                 golden_error *err)
{
    vctx c;
    schema_cache sc;
    memset(&sc, 0, sizeof sc);
    golden_doc *idx = NULL, *h = NULL, *m[2] = {NULL, NULL};
    int rc = GOLDEN_ERR;
    if (exp_vctx_init(&c, dir, opts, out, err) != 0)
        return GOLDEN_ERR;
    /* the team's hypothesis: broken = could not check */
    golden_findings hf;
    golden_findings_init(&hf);
    golden_schema *hs = exp_schema_get(&sc, "calculet-op-experiment/v1", err);
    if (!hs || exp_load_doc(hypothesis, &h, err) != 0)
        goto done;
    long bad = exp_validate(&hf, hs, h, c.threads, err);
    if (bad < 0)
        goto done;
    if (hf.errors) {
        golden_fail_what(err, GOLDEN_EINVAL, hypothesis, "%s", hf.items[0].message);
        goto done;
    }
    char ipath[1024];
    exp_disp(&c, "handoff.json", ipath, sizeof ipath);
    golden_error e;
    golden_error_clear(&e);
    if (exp_load_doc(ipath, &idx, &e) != 0) {
        rc = exp_add_rel(&c, GOLDEN_SEV_ERROR, "handoff-index", "handoff.json", "%s", e.what);
        goto done;
    }
    static const char *const roles[2] = {"baseline", "candidate"};
    golden_schema *ms = exp_schema_get(&sc, "calculet-calbin-manifest/v1", err);
    if (!ms)
        goto done;
    for (int k = 0; k < 2; k++) {
        const char *rel = compile_path(golden_doc_root(idx), roles[k], "calculet-calbin-manifest/v1");
        char p[1024];
        if (!rel || exp_lexically_escapes(rel)) {
            if (exp_add_rel(&c, GOLDEN_SEV_ERROR, "handoff-missing", "handoff.json",
                            "no usable %s compile manifest listed", roles[k]))
                goto done;
            continue;
        }
        exp_disp(&c, rel, p, sizeof p);
        golden_error_clear(&e);
        size_t before = out->errors;
        if (exp_load_doc(p, &m[k], &e) != 0 || exp_validate(out, ms, m[k], c.threads, err) < 0) {
            if (e.code == GOLDEN_ENOMEM || err->code == GOLDEN_ENOMEM)
                goto done;
            if (exp_add_rel(&c, GOLDEN_SEV_ERROR, "schema", rel, "%s", e.what))
                goto done;
        }
        if (out->errors > before) {
            golden_doc_free(m[k]);
            m[k] = NULL;
            continue;
        }
        if (exp_rules_manifest(&c, h, m[k], roles[k]) != 0 || exp_command_agrees(&c, m[k]) != 0)
            goto done;
    }
    if (m[0] && m[1]) {
        if (exp_rules_manifest_pair(&c, h, m[0], m[1]) != 0)
            goto done;
        const char *fd = compile_path(golden_doc_root(idx), "flags_diff", NULL);
        if (!fd || exp_lexically_escapes(fd)) {
            if (exp_add_rel(&c, GOLDEN_SEV_ERROR, "flags-diff", "handoff.json",
                            "no flags diff (role flags_diff) listed"))
                goto done;
        } else if (flags_diff_agrees(&c, fd, m[0], m[1]) != 0) {
            goto done;
        }
    }
    rc = GOLDEN_OK;
done:
    golden_findings_free(&hf);
    golden_doc_free(m[0]);
    golden_doc_free(m[1]);
    golden_doc_free(idx);
    golden_doc_free(h);
    exp_schema_cache_free(&sc);
    exp_vctx_free(&c);
    return rc;
}

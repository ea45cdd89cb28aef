/* The calbin manifests against the hypothesis and each other: controlled values equal, the
 * flags that differ are exactly the declared ones (one main factor), the command sets the flags. */
#include "exp/internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "exp/command.h"

static int agree(vctx *c, const golden_doc *h, const char *hptr, const golden_doc *m,
                 const char *mptr, const char *rule, const char *what)
{
    json_t *hv = exp_ptr_get(golden_doc_root(h), hptr);
    json_t *mv = exp_ptr_get(golden_doc_root(m), mptr);
    if (!hv || (json_is_string(hv) && strcmp(json_string_value(hv), "REQUIRED") == 0))
        return GOLDEN_OK;
    if (exp_value_eq(hv, mv))
        return GOLDEN_OK;
    char a[256], b[256];
    exp_value_show(hv, a, sizeof a);
    exp_value_show(mv, b, sizeof b);
    return exp_add_node(c, GOLDEN_SEV_ERROR, rule, m, mv ? mptr : "", "%s is '%s' here but '%s' in %s",
                    what, b, a, golden_doc_name(h));
}

int exp_rules_manifest(vctx *c, const golden_doc *h, const golden_doc *m, const char *side)
{
    json_t *mr = golden_doc_root(m), *hr = golden_doc_root(h);
    const char *role = exp_sget(mr, "role");
    char hp[128], what[128];
    if (role && strcmp(role, side) != 0 &&
        exp_add_node(c, GOLDEN_SEV_ERROR, "manifest-agrees", m, "/role",
                 "role is '%s' but the manifest sits in %s/", role, side))
        return GOLDEN_ERR;
    snprintf(hp, sizeof hp, "/%s/calbin_sha256", side);
    snprintf(what, sizeof what, "%s calbin SHA-256", side);
    if (agree(c, h, hp, m, "/calbin/sha256", "manifest-agrees", what))
        return GOLDEN_ERR;
    snprintf(hp, sizeof hp, "/%s/compiler_oci_digest", side);
    snprintf(what, sizeof what, "%s compiler OCI digest", side);
    if (agree(c, h, hp, m, "/compiler/oci_digest", "manifest-agrees", what))
        return GOLDEN_ERR;
    const char *hid = exp_sget(hr, "experiment_id"), *mid = exp_sget(mr, "experiment_id");
    if (hid && mid && strcmp(hid, mid) != 0 &&
        exp_add_node(c, GOLDEN_SEV_ERROR, "exp-id", m, "/experiment_id",
                 "experiment_id '%s' differs from the hypothesis's '%s'", mid, hid))
        return GOLDEN_ERR;
    /* flags the hypothesis pins for the baseline, and the candidate's changed flags */
    json_t *hflags = exp_ptr_get(hr, strcmp(side, "baseline") == 0 ? "/baseline/compiler_flags"
                                                               : "/candidate/changed_flags");
    const char *k;
    json_t *v;
    if (json_is_object(hflags)) {
        json_object_foreach(hflags, k, v) {
            char hptr[512] = "", mptr[512] = "";
            exp_ptr_push(hptr, sizeof hptr, side);
            exp_ptr_push(hptr, sizeof hptr,
                     strcmp(side, "baseline") == 0 ? "compiler_flags" : "changed_flags");
            exp_ptr_push(hptr, sizeof hptr, k);
            exp_ptr_push(mptr, sizeof mptr, "compile");
            exp_ptr_push(mptr, sizeof mptr, "flags");
            exp_ptr_push(mptr, sizeof mptr, k);
            snprintf(what, sizeof what, "compile flag %s", k);
            if (agree(c, h, hptr, m, mptr, "manifest-agrees", what))
                return GOLDEN_ERR;
        }
    }
    /* controlled values: every key the hypothesis controls must be equal in the manifest */
    json_t *hc = json_object_get(hr, "controlled");
    if (json_is_object(hc)) {
        json_object_foreach(hc, k, v) {
            char hptr[512] = "", mptr[512] = "";
            exp_ptr_push(hptr, sizeof hptr, "controlled");
            exp_ptr_push(hptr, sizeof hptr, k);
            exp_ptr_push(mptr, sizeof mptr, "controlled");
            exp_ptr_push(mptr, sizeof mptr, k);
            snprintf(what, sizeof what, "controlled value %s", k);
            if (agree(c, h, hptr, m, mptr, "controlled-equal", what))
                return GOLDEN_ERR;
        }
    }
    return GOLDEN_OK;
}

static int controlled_pair(vctx *c, const golden_doc *b, const golden_doc *m)
{
    json_t *bc = json_object_get(golden_doc_root(b), "controlled");
    json_t *cc = json_object_get(golden_doc_root(m), "controlled");
    const char *k;
    json_t *v;
    if (json_is_object(bc) && json_is_object(cc)) {
        json_object_foreach(cc, k, v) {
            json_t *bv = json_object_get(bc, k);
            if (!exp_value_eq(bv, v)) {
                char a[256], bb[256], p[512] = "";
                exp_value_show(v, a, sizeof a);
                exp_value_show(bv, bb, sizeof bb);
                exp_ptr_push(p, sizeof p, "controlled");
                exp_ptr_push(p, sizeof p, k);
                if (exp_add_node(c, GOLDEN_SEV_ERROR, "controlled-equal", m, p,
                             "controlled value %s is '%s' for the candidate but '%s' for the "
                             "baseline", k, a, bb))
                    return GOLDEN_ERR;
            }
        }
        json_object_foreach(bc, k, v) {
            if (!json_object_get(cc, k)) {
                if (exp_add_node(c, GOLDEN_SEV_ERROR, "controlled-equal", m, "/controlled",
                             "controlled value %s is set for the baseline only", k))
                    return GOLDEN_ERR;
            }
        }
    }
    return GOLDEN_OK;
}

/* The flags that differ between the two manifests' compile.flags: the candidate's own
 * changed_flags must list exactly them with their values; so must the hypothesis's
 * changed_flags (h may be NULL in hand-off mode), and one-main-factor counts them. */
static int flags_pair(vctx *c, const golden_doc *h, const golden_doc *b, const golden_doc *m)
{
    const char *k;
    json_t *v;
    json_t *bf = exp_ptr_get(golden_doc_root(b), "/compile/flags");
    json_t *cf = exp_ptr_get(golden_doc_root(m), "/compile/flags");
    json_t *changed = json_object_get(golden_doc_root(m), "changed_flags");
    json_t *hroot = h ? golden_doc_root(h) : NULL;
    json_t *hchanged = exp_ptr_get(hroot, "/candidate/changed_flags");
    if (!json_is_object(bf) || !json_is_object(cf))
        return GOLDEN_OK;
    size_t ndiff = 0;
    char names[256] = "";
    json_object_foreach(cf, k, v) {
        bool differs = !exp_value_eq(json_object_get(bf, k), v);
        json_t *declared = json_is_object(changed) ? json_object_get(changed, k) : NULL;
        char p[512] = "";
        exp_ptr_push(p, sizeof p, "compile");
        exp_ptr_push(p, sizeof p, "flags");
        exp_ptr_push(p, sizeof p, k);
        if (differs) {
            ndiff++;
            size_t used = strlen(names);
            snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", k);
        }
        if (differs && json_is_object(changed) && !declared) {
            if (exp_add_node(c, GOLDEN_SEV_ERROR, "manifest-agrees", m, p,
                         "flag %s differs from the baseline but is not in changed_flags", k))
                return GOLDEN_ERR;
        } else if (declared && !exp_value_eq(declared, v)) {
            if (exp_add_node(c, GOLDEN_SEV_ERROR, "manifest-agrees", m, p,
                         "flag %s differs from its changed_flags value", k))
                return GOLDEN_ERR;
        }
        if (differs && json_is_object(hchanged) && !json_object_get(hchanged, k) &&
            exp_add_node(c, GOLDEN_SEV_ERROR, "manifest-agrees", m, p,
                     "flag %s differs from the baseline but the hypothesis's changed_flags "
                     "(%s) does not list it", k, golden_doc_name(h)))
            return GOLDEN_ERR;
    }
    json_object_foreach(bf, k, v) {
        if (json_object_get(cf, k))
            continue;
        ndiff++;
        if (exp_add_node(c, GOLDEN_SEV_ERROR, "manifest-agrees", m, "/compile/flags",
                     "baseline flag %s is missing from the candidate's flags", k))
            return GOLDEN_ERR;
    }
    if (json_is_object(changed)) {
        json_object_foreach(changed, k, v) {
            json_t *bv = json_object_get(bf, k);
            char p[512] = "";
            exp_ptr_push(p, sizeof p, "changed_flags");
            exp_ptr_push(p, sizeof p, k);
            if (bv && exp_value_eq(bv, v) &&
                exp_add_node(c, GOLDEN_SEV_ERROR, "manifest-agrees", m, p,
                         "changed flag %s has the baseline's value", k))
                return GOLDEN_ERR;
        }
    }
    if (!h)
        return GOLDEN_OK;
    const char *design = exp_sget(hroot, "design");
    bool exempt = design && (strcmp(design, "factorial") == 0 ||
                             strcmp(design, "not_attributable") == 0);
    if (!exempt && ndiff != 1 &&
        exp_add_node(c, GOLDEN_SEV_ERROR, "one-main-factor", m, "/compile/flags",
                 "the manifests' compile flags differ in %zu flags (%s); one experiment changes "
                 "one main factor unless design is factorial or not_attributable", ndiff,
                 ndiff ? names : "none"))
        return GOLDEN_ERR;
    return GOLDEN_OK;
}

/* compile.flags without the flags map's spelling: '-' and '_' are one. */
static json_t *flag_lookup(json_t *flags, const char *norm)
{
    const char *k;
    json_t *v;
    json_object_foreach(flags, k, v) {
        size_t i = 0;
        while (k[i] && norm[i] && (k[i] == norm[i] || (k[i] == '-' && norm[i] == '_')))
            i++;
        if (!k[i] && !norm[i])
            return v;
    }
    return NULL;
}

/* The compile command must set exactly compile.flags, with their values: a flag typed on the
 * command line only (--unsafe-fp-reassoc) changes the build without the manifest saying so. */
int exp_command_agrees(vctx *c, const golden_doc *m)
{
    json_t *root = golden_doc_root(m);
    json_t *cmd = exp_ptr_get(root, "/compile/command"), *flags = exp_ptr_get(root, "/compile/flags");
    if (!json_is_string(cmd) || !json_is_object(flags))
        return GOLDEN_OK;
    char why[256];
    json_t *parsed = lg_exp_command_flags(json_string_value(cmd), why, sizeof why);
    if (!parsed && !why[0])
        return golden_fail_what(c->err, GOLDEN_ENOMEM, NULL, "out of memory");
    if (!parsed)
        return exp_add_node(c, GOLDEN_SEV_ERROR, "compile-command", m, "/compile/command",
                        "cannot read the flags of compile.command: %s", why);
    int rc = GOLDEN_OK;
    const char *k;
    json_t *v;
    json_object_foreach(parsed, k, v) {
        json_t *fv = flag_lookup(flags, k);
        char a[128], b[128];
        exp_value_show(v, a, sizeof a);
        exp_value_show(fv, b, sizeof b);
        if (!fv)
            rc = exp_add_node(c, GOLDEN_SEV_ERROR, "compile-command", m, "/compile/command",
                          "compile.command sets %s (%s) but compile.flags does not list it", k,
                          a);
        else if (!exp_value_eq(fv, v))
            rc = exp_add_node(c, GOLDEN_SEV_ERROR, "compile-command", m, "/compile/command",
                          "compile.command sets %s to '%s' but compile.flags says '%s'", k, a, b);
        if (rc)
            break;
    }
    json_object_foreach(flags, k, v) {
        if (rc)
            break;
        char norm[256];
        size_t i = 0;
        for (; k[i] && i + 1 < sizeof norm; i++)
            norm[i] = k[i] == '-' ? '_' : k[i];
        norm[i] = '\0';
        if (!json_object_get(parsed, norm)) {
            char p[512] = "/compile/flags";
            exp_ptr_push(p, sizeof p, k);
            rc = exp_add_node(c, GOLDEN_SEV_ERROR, "compile-command", m, p,
                          "compile.flags lists %s but compile.command does not set it", k);
        }
    }
    json_decref(parsed);
    return rc;
}

/* Baseline against candidate: controlled values equal (also those the hypothesis does not name),
 * and the flags that differ are exactly the declared changed_flags. */
int exp_rules_manifest_pair(vctx *c, const golden_doc *h, const golden_doc *b,
                               const golden_doc *m)
{
    if (controlled_pair(c, b, m) != 0)
        return GOLDEN_ERR;
    return flags_pair(c, h, b, m);
}

/* hypothesis.yaml's own rules: folder name and EXP_ID, family, REQUIRED placeholders, and the
 * one main factor it declares (handbook sections 3 and 4). */
#include "exp/internal.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *exp_folder_name(const vctx *c, char *buf, size_t n)
{
    const char *src = c->given;
    size_t len = strlen(src);
    while (len > 1 && src[len - 1] == '/')
        len--;
    size_t start = len;
    while (start > 0 && src[start - 1] != '/')
        start--;
    snprintf(buf, n, "%.*s", (int)(len - start), src + start);
    if (strcmp(buf, ".") == 0 || strcmp(buf, "..") == 0 || !*buf) {
        const char *r = strrchr(c->root, '/');
        snprintf(buf, n, "%s", r ? r + 1 : c->root);
    }
    return buf;
}


static int find_required(vctx *c, const golden_doc *doc, json_t *node, char *ptr, size_t cap,
                         bool planned)
{
    size_t keep = strlen(ptr);
    if (json_is_string(node) && strcmp(json_string_value(node), "REQUIRED") == 0) {
        if (planned)
            return exp_add_node(c, GOLDEN_SEV_TODO, "required-filled", doc, ptr,
                            "%s is still REQUIRED: fill it before the experiment runs", ptr);
        return exp_add_node(c, GOLDEN_SEV_ERROR, "required-filled", doc, ptr,
                        "%s is left as REQUIRED although status is past planned", ptr);
    }
    if (json_is_object(node)) {
        const char *k;
        json_t *v;
        json_object_foreach(node, k, v) {
            exp_ptr_push(ptr, cap, k);
            int rc = find_required(c, doc, v, ptr, cap, planned);
            ptr[keep] = '\0';
            if (rc)
                return rc;
        }
    } else if (json_is_array(node)) {
        size_t i;
        json_t *v;
        json_array_foreach(node, i, v) {
            exp_ptr_push_index(ptr, cap, i);
            int rc = find_required(c, doc, v, ptr, cap, planned);
            ptr[keep] = '\0';
            if (rc)
                return rc;
        }
    }
    return GOLDEN_OK;
}

int exp_rules_hypothesis(vctx *c, const golden_doc *h, bool planned)
{
    json_t *root = golden_doc_root(h);
    const char *id = exp_sget(root, "experiment_id");
    const char *opfam = exp_sget(root, "operator_family");
    char name[PATH_MAX];
    exp_folder_name(c, name, sizeof name);
    if (id) {
        char prefix[16], family[32];
        int number;
        golden_error e;
        if (strcmp(name, id) != 0 &&
            exp_add_node(c, GOLDEN_SEV_ERROR, "folder-name", h, "/experiment_id",
                     "folder is named '%s' but experiment_id is '%s'", name, id))
            return GOLDEN_ERR;
        if (golden_exp_id_parse(id, prefix, family, &number, &e) != 0) {
            if (exp_add_node(c, GOLDEN_SEV_ERROR, "exp-id", h, "/experiment_id", "'%s': %s", id,
                         e.what))
                return GOLDEN_ERR;
        } else if (opfam) {
            int a = golden_exp_family_agrees(prefix, family, opfam);
            if (a < 0 && exp_add_node(c, GOLDEN_SEV_ERROR, "family", h, "/experiment_id",
                                  "no family %s under prefix %s is known (see the family table "
                                  "in docs/manifest-verify.md)", family, prefix))
                return GOLDEN_ERR;
            if (a == 0 && exp_add_node(c, GOLDEN_SEV_ERROR, "family", h, "/operator_family",
                                   "operator_family '%s' does not belong to EXP_ID family %s-%s",
                                   opfam, prefix, family))
                return GOLDEN_ERR;
        }
    }
    char ptr[512] = "";
    if (find_required(c, h, root, ptr, sizeof ptr, planned))
        return GOLDEN_ERR;
    const char *design = exp_sget(root, "design");
    json_t *changed = json_object_get(json_object_get(root, "candidate"), "changed_flags");
    bool exempt = design && (strcmp(design, "factorial") == 0 ||
                             strcmp(design, "not_attributable") == 0);
    if (json_is_object(changed) && !exempt && json_object_size(changed) != 1 &&
        exp_add_node(c, GOLDEN_SEV_ERROR, "one-main-factor", h, "/candidate/changed_flags",
                 "candidate changes %zu flags; one experiment changes one main factor unless "
                 "design is factorial or not_attributable", json_object_size(changed)))
        return GOLDEN_ERR;
    return GOLDEN_OK;
}

/* The folder's layout and ids: the walk that finds every asset, the section 3 assets every
 * experiment carries, EXP_ID = PREFIX-FAMILY-NNNN and the family table. */
#include "exp/internal.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "util/vec.h"
#include "golden/parse.h"

#define WALK_MAX_DEPTH 64

static int add_asset(vctx *c, const char *rel)
{
    if (VEC_GROW(c->assets, c->nassets, c->capassets, 64) != 0)
        return golden_fail_what(c->err, GOLDEN_ENOMEM, NULL, "out of memory");
    if (!(c->assets[c->nassets] = exp_xstrdup(rel, c->err)))
        return GOLDEN_ERR;
    c->nassets++;
    return GOLDEN_OK;
}

/* Every regular file under the folder becomes an asset; a symbolic link that leads out of the
 * folder is a finding, one that stays inside is followed for files and never for folders. */
int exp_walk(vctx *c, const char *rel_dir, int depth)
{
    char path[PATH_MAX * 2];
    if (rel_dir)
        snprintf(path, sizeof path, "%s/%s", c->root, rel_dir);
    else
        snprintf(path, sizeof path, "%s", c->root);
    DIR *d = opendir(path);
    if (!d) {
        char w[1024];
        exp_disp(c, rel_dir, w, sizeof w);
        return golden_fail_what(c->err, golden_code_from_errno(errno), w, "cannot read folder: %s", strerror(errno));
    }
    int rc = GOLDEN_OK;
    struct dirent *e;
    while (rc == GOLDEN_OK && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char rel[PATH_MAX];
        if ((rel_dir ? strlen(rel_dir) + 1 : 0) + strlen(e->d_name) + strlen(c->root) + 2 >= PATH_MAX) {
            rc = golden_fail_what(c->err, GOLDEN_EINVAL, c->given, "a path under the folder is longer than PATH_MAX");
            break;
        }
        if (rel_dir)
            snprintf(rel, sizeof rel, "%s/%s", rel_dir, e->d_name);
        else
            snprintf(rel, sizeof rel, "%s", e->d_name);
        char full[PATH_MAX * 2], real[PATH_MAX];
        snprintf(full, sizeof full, "%s/%s", c->root, rel);
        struct stat st;
        if (lstat(full, &st) != 0) {
            rc = golden_fail_what(c->err, golden_code_from_errno(errno), full, "cannot stat: %s", strerror(errno));
            break;
        }
        if (strpbrk(e->d_name, "\n\\")) {
            rc = exp_add_rel(c, GOLDEN_SEV_ERROR, "layout", rel_dir,
                         "a file name contains a newline or backslash, which SHA256SUMS cannot hold");
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            if (depth + 1 > WALK_MAX_DEPTH)
                rc = exp_add_rel(c, GOLDEN_SEV_ERROR, "layout", rel, "folders nest deeper than %d levels",
                             WALK_MAX_DEPTH);
            else
                rc = exp_walk(c, rel, depth + 1);
        } else if (S_ISLNK(st.st_mode)) {
            if (!realpath(full, real)) {
                rc = exp_add_rel(c, GOLDEN_SEV_ERROR, "path-escape", rel,
                             "symbolic link resolves nowhere");
            } else if (!exp_inside_root(c, real)) {
                rc = exp_add_rel(c, GOLDEN_SEV_ERROR, "path-escape", rel,
                             "symbolic link leads out of the folder");
            } else if (stat(real, &st) == 0 && S_ISREG(st.st_mode)) {
                rc = add_asset(c, rel);
            }
        } else if (S_ISREG(st.st_mode)) {
            rc = add_asset(c, rel);
        } else {
            rc = exp_add_rel(c, GOLDEN_SEV_ERROR, "layout", rel,
                         "not a regular file (device, socket or pipe)");
        }
    }
    closedir(d);
    return rc;
}

bool exp_has_asset(const vctx *c, const char *rel)
{
    return lg_strmap_get(&c->asset_set, rel, strlen(rel), NULL) == 1;
}

/* Every asset of the folder, sorted by path (the seal's order) and indexed for lookups. */
int exp_assets_find(vctx *c)
{
    if (exp_walk(c, NULL, 0) != 0)
        return GOLDEN_ERR;
    if (c->nassets)
        qsort(c->assets, c->nassets, sizeof *c->assets, exp_cmp_str);
    if (lg_strmap_reserve(&c->asset_set, c->nassets) != 0)
        return golden_fail_what(c->err, GOLDEN_ENOMEM, NULL, "out of memory");
    for (size_t i = 0; i < c->nassets; i++)
        if (lg_strmap_put(&c->asset_set, c->assets[i], strlen(c->assets[i]), i, NULL) < 0)
            return golden_fail_what(c->err, GOLDEN_ENOMEM, NULL, "out of memory");
    return GOLDEN_OK;
}


static const char *const layout_assets[] = {
    "hypothesis.yaml", "baseline/manifest.json", "candidate/manifest.json",
    "compile/baseline.log", "compile/candidate.log", "golden/input-manifest.jsonl",
    "accuracy/result.json", "performance/raw-requests.jsonl", "performance/raw-device-trace.*",
    "performance/summary.json", "stability/faults.jsonl", "decision.md",
};

bool exp_layout_present(const vctx *c, const char *want)
{
    size_t n = strlen(want);
    if (want[n - 1] != '*')
        return exp_has_asset(c, want);
    for (size_t i = 0; i < c->nassets; i++)
        if (strncmp(c->assets[i], want, n - 1) == 0 && strlen(c->assets[i]) > n - 1 &&
            !strchr(c->assets[i] + n - 1, '/'))
            return true;
    return false;
}

/* The section 3 assets: all present once the experiment runs; while planned only the hypothesis
 * is required and the rest are to-dos. */
int exp_layout_rules(vctx *c, bool planned)
{
    for (size_t i = 0; i < sizeof layout_assets / sizeof layout_assets[0]; i++) {
        if (exp_layout_present(c, layout_assets[i]))
            continue;
        bool todo = planned && i > 0;
        if (exp_add_rel(c, todo ? GOLDEN_SEV_TODO : GOLDEN_SEV_ERROR, "layout", layout_assets[i],
                        todo ? "not there yet (status is planned)"
                             : "missing: every experiment carries this asset (section 3)"))
            return GOLDEN_ERR;
    }
    return GOLDEN_OK;
}


/* EXP_ID family -> the operator_family values it may carry (handbook sections 2, 16 and 19). */
const golden_family_row golden_family_table[] = {
    {"OP", "GEMM", "fused_matmul_add"},
    {"OP", "MATMUL", "fused_matmul_add"},
    {"OP", "RMSNORM", "fused_rmsnorm"},
    {"OP", "NORM", "fused_rmsnorm"},
    {"OP", "SYNC", "sync_d2d"},
    {"OP", "D2D", "sync_d2d dynamic_d2d gather"},
    {"OP", "GATHER", "gather"},
    {"OP", "MOE", "grouped_moe_dense moe_gate"},
    {"OP", "GATE", "moe_gate"},
    {"OP", "ROPE", "rope"},
    {"OP", "KV", "kv_scatter"},
    {"OP", "RESIDUAL", "residual_add"},
    {"OP", "FA", "flash_attention"},
    {"OP", "FUSION", "fusion fused_rmsnorm rope residual_add"},
    {"OP", "TOPK", "logits_sampling"},
    {"HOST", "LOGITS", "logits_sampling"},
    {"HOST", "SAMPLING", "logits_sampling"},
    {"HOST", "D2D", "sync_d2d dynamic_d2d"},
    {"QUANT", "W4", "quantization"},
    {"QUANT", "W8", "quantization"},
    {"QUANT", "A8", "quantization"},
    {"QUANT", "KV", "quantization kv_scatter"},
    {"QUANT", "MIXED", "quantization"},
    {NULL, NULL, NULL},
};

int golden_exp_id_parse(const char *id, char prefix[16], char family[32], int *number,
                        golden_error *err)
{
    const char *a = strchr(id, '-');
    const char *b = a ? strrchr(id, '-') : NULL;
    if (!a || b == a)
        return golden_fail_what(err, GOLDEN_EINVAL, id, "EXP_ID is not PREFIX-FAMILY-NNNN");
    size_t pl = (size_t)(a - id), fl = (size_t)(b - a - 1);
    if (pl == 0 || pl >= 16 || fl == 0 || fl >= 32)
        return golden_fail_what(err, GOLDEN_EINVAL, id, "EXP_ID is not PREFIX-FAMILY-NNNN");
    for (const char *p = id; p < a; p++)
        if (*p < 'A' || *p > 'Z')
            return golden_fail_what(err, GOLDEN_EINVAL, id, "EXP_ID prefix must be upper-case letters");
    for (const char *p = a + 1; p < b; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
            return golden_fail_what(err, GOLDEN_EINVAL, id, "EXP_ID family must be upper-case letters and digits");
    if (a[1] < 'A' || a[1] > 'Z')
        return golden_fail_what(err, GOLDEN_EINVAL, id, "EXP_ID family must start with a letter");
    if (strlen(b + 1) != 4)
        return golden_fail_what(err, GOLDEN_EINVAL, id, "EXP_ID must end in exactly four digits");
    for (const char *p = b + 1; *p; p++)
        if (*p < '0' || *p > '9')
            return golden_fail_what(err, GOLDEN_EINVAL, id, "EXP_ID must end in exactly four digits");
    memcpy(prefix, id, pl);
    prefix[pl] = '\0';
    memcpy(family, a + 1, fl);
    family[fl] = '\0';
    int64_t v; /* four digits, checked above */
    if (golden_parse_int(b + 1, 0, 9999, &v) != GOLDEN_PARSE_OK)
        return golden_fail_what(err, GOLDEN_EINVAL, id, "EXP_ID must end in exactly four digits");
    *number = (int)v;
    return GOLDEN_OK;
}

static bool word_in(const char *words, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = words; *p;) {
        const char *e = strchr(p, ' ');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, w, n) == 0)
            return true;
        if (!e)
            break;
        p = e + 1;
    }
    return false;
}

int golden_exp_family_agrees(const char *prefix, const char *family, const char *operator_family)
{
    for (const golden_family_row *r = golden_family_table; r->prefix; r++)
        if (strcmp(r->prefix, prefix) == 0 && strcmp(r->family, family) == 0)
            return word_in(r->operator_families, operator_family) ? 1 : 0;
    return -1;
}

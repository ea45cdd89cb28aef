/* Artifacts and hashes: every named path stays inside the folder, every {path, sha256} is
 * collected from the documents and hashed once, over all cores, then compared. */
#include "exp/internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "golden/hash.h"
#include "util/vec.h"

/* Check that rel names a regular file inside the folder (no `..`, no symbolic link out).
 * 1 = usable, 0 = a finding was added, -1 = internal error. */
int exp_check_path(vctx *c, const char *rel, const origin *o, const char *missing_rule)
{
    if (!*rel || exp_lexically_escapes(rel))
        return exp_add_origin(c, o, "path-escape", "path '%s' leaves the folder", rel) ? -1 : 0;
    if (strlen(rel) >= PATH_MAX - 1 - strlen(c->root))
        return exp_add_origin(c, o, missing_rule, "path of %zu bytes is too long", strlen(rel)) ? -1 : 0;
    char full[PATH_MAX * 2], real[PATH_MAX];
    snprintf(full, sizeof full, "%s/%s", c->root, rel);
    struct stat st;
    if (lstat(full, &st) != 0)
        return exp_add_origin(c, o, missing_rule, "'%s' does not exist", rel) ? -1 : 0;
    if (!realpath(full, real))
        return exp_add_origin(c, o, "path-escape", "'%s' is a symbolic link that resolves nowhere",
                          rel) ? -1 : 0;
    if (!exp_inside_root(c, real))
        return exp_add_origin(c, o, "path-escape", "'%s' leaves the folder through a symbolic link",
                          rel) ? -1 : 0;
    if (stat(real, &st) != 0 || !S_ISREG(st.st_mode))
        return exp_add_origin(c, o, missing_rule, "'%s' is not a regular file", rel) ? -1 : 0;
    return 1;
}

int exp_add_job(vctx *c, const char *rel, const char *expect, const char *rule,
                   const origin *o)
{
    if (VEC_GROW(c->jobs, c->njobs, c->capjobs, 64) != 0)
        return golden_fail_what(c->err, GOLDEN_ENOMEM, NULL, "out of memory");
    hash_job *j = &c->jobs[c->njobs];
    memset(j, 0, sizeof *j);
    if (!(j->rel = exp_xstrdup(rel, c->err)))
        return GOLDEN_ERR;
    snprintf(j->expect, sizeof j->expect, "%s", expect ? expect : "");
    j->rule = rule;
    snprintf(j->file, sizeof j->file, "%s", o ? o->file : "");
    j->line = o ? o->line : 0;
    j->col = o ? o->col : 0;
    snprintf(j->pointer, sizeof j->pointer, "%s", o && o->pointer ? o->pointer : "");
    c->njobs++;
    return GOLDEN_OK;
}

/* A named file reference {path, sha256}: checked now for escapes, hashed later. */
int exp_check_ref(vctx *c, const char *rel, const char *sha, const origin *o,
                     const char *missing_rule, const char *hash_rule)
{
    int ok = exp_check_path(c, rel, o, missing_rule);
    if (ok <= 0)
        return ok < 0 ? GOLDEN_ERR : GOLDEN_OK;
    if (!sha || !golden_is_sha256_hex(sha))
        return GOLDEN_OK; /* the schema reports a malformed digest */
    return exp_add_job(c, rel, sha, hash_rule, o);
}

int exp_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Hash every distinct file the jobs name, both cores at once, then compare. hexes_out (when
 * non-NULL) receives the sorted unique paths and their digests for the seal. */
int exp_run_jobs(vctx *c, char ***paths_out, char (**hexes_out)[65], size_t *n_out)
{
    int rc = GOLDEN_ERR;
    size_t n = 0;
    char **uniq = NULL, **full = NULL;
    char (*hexes)[65] = NULL;
    if (c->njobs == 0) {
        /* the tool's hashing is called once per check, files or none (its ranks meet there) */
        if (c->hash_files && c->hash_files(c->hash_ctx, NULL, 0, NULL, c->threads, c->err) != 0)
            return GOLDEN_ERR;
        if (paths_out) {
            *paths_out = NULL;
            *hexes_out = NULL;
            *n_out = 0;
        }
        return GOLDEN_OK;
    }
    uniq = malloc(c->njobs * sizeof *uniq);
    if (!uniq)
        goto oom;
    for (size_t i = 0; i < c->njobs; i++)
        uniq[i] = c->jobs[i].rel;
    qsort(uniq, c->njobs, sizeof *uniq, exp_cmp_str);
    for (size_t i = 0; i < c->njobs; i++)
        if (n == 0 || strcmp(uniq[n - 1], uniq[i]) != 0)
            uniq[n++] = uniq[i];
    full = calloc(n, sizeof *full);
    hexes = calloc(n, sizeof *hexes);
    if (!full || !hexes)
        goto oom;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(c->root) + strlen(uniq[i]) + 2;
        if (!(full[i] = malloc(len)))
            goto oom;
        snprintf(full[i], len, "%s/%s", c->root, uniq[i]);
    }
    if ((c->hash_files ? c->hash_files(c->hash_ctx, (const char *const *)full, n, hexes,
                                       c->threads, c->err)
                       : golden_sha256_files((const char *const *)full, n, hexes, c->threads,
                                             c->err)) != 0)
        goto done;
    c->out->files_hashed += n;
    for (size_t i = 0; i < c->njobs; i++) {
        hash_job *j = &c->jobs[i];
        char **hit = bsearch(&j->rel, uniq, n, sizeof *uniq, exp_cmp_str);
        size_t slot = (size_t)(hit - uniq);
        j->slot = slot;
        if (j->expect[0] && strcmp(j->expect, hexes[slot]) != 0) {
            origin o = {j->file, j->line, j->col, j->pointer};
            if (exp_add_origin(c, &o, j->rule, "SHA-256 of '%s' is %s, expected %s", j->rel,
                           hexes[slot], j->expect) != 0)
                goto done;
        }
    }
    if (paths_out) {
        char **keep = malloc(n * sizeof *keep);
        if (!keep)
            goto oom;
        for (size_t i = 0; i < n; i++) {
            if (!(keep[i] = strdup(uniq[i]))) {
                for (size_t k = 0; k < i; k++)
                    free(keep[k]);
                free(keep);
                goto oom;
            }
        }
        *paths_out = keep;
        *hexes_out = hexes;
        *n_out = n;
        hexes = NULL;
    }
    rc = GOLDEN_OK;
    goto done;
oom:
    golden_fail_what(c->err, GOLDEN_ENOMEM, NULL, "out of memory");
done:
    if (full)
        for (size_t i = 0; i < n; i++)
            free(full[i]);
    free(full);
    free(uniq);
    free(hexes);
    return rc;
}

/* Every {path, sha256} object anywhere in a document names an artifact. */
static int collect_refs(vctx *c, const golden_doc *doc, json_t *node, char *ptr, size_t ptrcap,
                        const char *base, const char *missing_rule, const char *hash_rule)
{
    size_t keep = strlen(ptr);
    int rc = GOLDEN_OK;
    if (json_is_object(node)) {
        const char *path = exp_sget(node, "path"), *sha = exp_sget(node, "sha256");
        if (path && sha) {
            int line = 0, col = 0;
            json_t *pn = json_object_get(node, "path");
            golden_doc_line(doc, pn, &line, &col);
            char pp[512];
            snprintf(pp, sizeof pp, "%s", ptr);
            exp_ptr_push(pp, sizeof pp, "path");
            origin o = {golden_doc_name(doc), line, col, pp};
            char joined[2048];
            if (base && base[0] && path[0] != '/') {
                snprintf(joined, sizeof joined, "%s/%s", base, path);
                path = joined;
            }
            if (exp_check_ref(c, path, sha, &o, missing_rule, hash_rule) != 0)
                return GOLDEN_ERR;
        }
        const char *k;
        json_t *v;
        json_object_foreach(node, k, v) {
            exp_ptr_push(ptr, ptrcap, k);
            rc = collect_refs(c, doc, v, ptr, ptrcap, base, missing_rule, hash_rule);
            ptr[keep] = '\0';
            if (rc)
                return rc;
        }
    } else if (json_is_array(node)) {
        size_t i;
        json_t *v;
        json_array_foreach(node, i, v) {
            exp_ptr_push_index(ptr, ptrcap, i);
            rc = collect_refs(c, doc, v, ptr, ptrcap, base, missing_rule, hash_rule);
            ptr[keep] = '\0';
            if (rc)
                return rc;
        }
    }
    return rc;
}

int exp_doc_refs(vctx *c, const golden_doc *doc)
{
    return exp_doc_refs_in(c, doc, NULL);
}

int exp_doc_refs_in(vctx *c, const golden_doc *doc, const char *base)
{
    char ptr[512] = "";
    return collect_refs(c, doc, golden_doc_root(doc), ptr, sizeof ptr, base, "artifact-exists",
                        "artifact-hash");
}

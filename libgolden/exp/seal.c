/* The seal: SHA256SUMS over every asset (sha256sum -c reads it too), written after a clean check
 * and verified on every later one, so a decided experiment stays immutable. */
#include "exp/internal.h"
#include "golden/hash.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "golden/report.h"
#include "util/vec.h"

#define SEAL_FILE "SHA256SUMS"

/* Read SHA256SUMS: every listed asset is hashed and compared; listed-but-gone and
 * present-but-unlisted assets are findings. */
int exp_seal_verify(vctx *c)
{
    char full[PATH_MAX * 2], file[1024];
    snprintf(full, sizeof full, "%s/%s", c->root, SEAL_FILE);
    exp_disp(c, SEAL_FILE, file, sizeof file);
    FILE *f = fopen(full, "r");
    if (!f)
        return golden_fail_what(c->err, golden_code_from_errno(errno), file, "cannot open: %s", strerror(errno));
    char buf[8192];
    size_t line_no = 0;
    char **listed = NULL;
    size_t nlisted = 0, cap = 0;
    int rc = GOLDEN_OK;
    while (rc == GOLDEN_OK && fgets(buf, sizeof buf, f)) {
        line_no++;
        size_t len = strlen(buf);
        if (len && buf[len - 1] == '\n')
            buf[--len] = '\0';
        else if (!feof(f)) {
            int ch;
            while ((ch = fgetc(f)) != EOF && ch != '\n')
                ;
            rc = golden_findings_add(c->out, GOLDEN_SEV_ERROR, "seal", file, (int)line_no, 1, "",
                                     c->err, "line longer than %zu bytes", sizeof buf - 1);
            continue;
        }
        if (len == 0)
            continue;
        char hex[65];
        if (len < 67 || buf[64] != ' ' || (buf[65] != ' ' && buf[65] != '*')) {
            rc = golden_findings_add(c->out, GOLDEN_SEV_ERROR, "seal", file, (int)line_no, 1, "",
                                     c->err, "not a 'SHA256  path' line");
            continue;
        }
        memcpy(hex, buf, 64);
        hex[64] = '\0';
        const char *rel = buf + 66;
        while (rel[0] == '.' && rel[1] == '/') /* sha256sum ./x writes "./x" */
            rel += 2;
        if (strcmp(rel, SEAL_FILE) == 0) {
            rc = golden_findings_add(c->out, GOLDEN_SEV_ERROR, "seal", file, (int)line_no, 67, "",
                                     c->err, "SHA256SUMS cannot seal itself");
            continue;
        }
        if (!golden_is_sha256_hex(hex)) {
            rc = golden_findings_add(c->out, GOLDEN_SEV_ERROR, "seal", file, (int)line_no, 1, "",
                                     c->err, "digest is not 64 lowercase hex digits");
            continue;
        }
        origin o = {file, (int)line_no, 67, ""};
        char lfull[PATH_MAX + 8192 + 2];
        struct stat lst;
        snprintf(lfull, sizeof lfull, "%s/%s", c->root, rel);
        if (exp_has_asset(c, rel)) {
            rc = exp_add_job(c, rel, hex, "seal", &o);
        } else if (!exp_lexically_escapes(rel) && lstat(lfull, &lst) != 0) {
            rc = golden_findings_add(c->out, GOLDEN_SEV_ERROR, "seal", file, (int)line_no, 67, "",
                                     c->err, "sealed asset '%s' has vanished", rel);
        } else {
            int ok = exp_check_path(c, rel, &o, "seal");
            if (ok == 1)
                rc = golden_findings_add(c->out, GOLDEN_SEV_ERROR, "seal", file, (int)line_no, 67,
                                         "", c->err, "'%s' is sealed but is not an asset", rel);
            else if (ok < 0)
                rc = GOLDEN_ERR;
        }
        if (rc == GOLDEN_OK) {
            if (VEC_GROW(listed, nlisted, cap, 64) != 0) {
                rc = golden_fail_what(c->err, GOLDEN_ENOMEM, NULL, "out of memory");
                break;
            }
            if (!(listed[nlisted] = exp_xstrdup(rel, c->err)))
                rc = GOLDEN_ERR;
            else
                nlisted++;
        }
    }
    if (rc == GOLDEN_OK && ferror(f))
        rc = golden_fail_what(c->err, GOLDEN_EIO, file, "read error");
    fclose(f);
    if (rc == GOLDEN_OK) {
        if (nlisted)
            qsort(listed, nlisted, sizeof *listed, exp_cmp_str);
        for (size_t i = 0; i < c->nassets && rc == GOLDEN_OK; i++) {
            if (strcmp(c->assets[i], SEAL_FILE) == 0)
                continue;
            if (!nlisted || !bsearch(&c->assets[i], listed, nlisted, sizeof *listed, exp_cmp_str))
                rc = exp_add_rel(c, GOLDEN_SEV_ERROR, "seal", c->assets[i],
                             "asset appeared after the folder was sealed");
        }
    }
    for (size_t i = 0; i < nlisted; i++)
        free(listed[i]);
    free(listed);
    return rc;
}

int exp_seal_write(vctx *c, bool force, char **paths, char (*hexes)[65], size_t n)
{
    char full[PATH_MAX * 2];
    snprintf(full, sizeof full, "%s/%s", c->root, SEAL_FILE);
    golden_outfile *of = NULL;
    if (golden_outfile_open(full, force, &of, c->err) != 0)
        return GOLDEN_ERR;
    FILE *s = golden_outfile_stream(of);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(paths[i], SEAL_FILE) == 0 || !exp_has_asset(c, paths[i]))
            continue;
        if (fprintf(s, "%s  %s\n", hexes[i], paths[i]) < 0) {
            golden_outfile_abort(of);
            return golden_fail_what(c->err, GOLDEN_EIO, full, "write error");
        }
    }
    if (golden_outfile_commit(of, c->err) != 0)
        return GOLDEN_ERR;
    c->out->sealed = true;
    return GOLDEN_OK;
}

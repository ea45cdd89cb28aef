/* The handbook's section 4 template as a new experiment folder: what `manifest-verify --init`
 * writes, so a new user fills in REQUIRED values instead of assembling files from field tables. */
#include "golden/template.h"

#include "golden/experiment.h"
#include "util/str.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Section 3's folders; the files in them come from the runs, so they stay to-dos until then. */
static const char *const subfolders[] = {"baseline", "candidate", "compile", "golden",
                                         "accuracy", "performance", "stability", NULL};

/* The first operator family the table gives prefix/family, copied into buf; NULL if none. */
static const char *default_family(const char *prefix, const char *family, char *buf, size_t n)
{
    for (const golden_family_row *r = golden_family_table; r->prefix; r++)
        if (strcmp(r->prefix, prefix) == 0 && strcmp(r->family, family) == 0) {
            size_t len = strcspn(r->operator_families, " ");
            snprintf(buf, n, "%.*s", (int)len, r->operator_families);
            return buf;
        }
    return NULL;
}

char *golden_exp_template_hypothesis(const golden_exp_template_opts *o, golden_error *err)
{
    if (!o || o->version != GOLDEN_EXP_TEMPLATE_VERSION || !o->exp_id) {
        golden_fail_what(err, GOLDEN_EINVAL, NULL, "template options: wrong version or no EXP_ID");
        return NULL;
    }
    char prefix[16], family[32], fam[64];
    int number;
    if (golden_exp_id_parse(o->exp_id, prefix, family, &number, err) != GOLDEN_OK)
        return NULL;
    const char *opfam = o->operator_family ? o->operator_family
                                           : default_family(prefix, family, fam, sizeof fam);
    if (!opfam) {
        golden_fail_what(err, GOLDEN_EINVAL, o->exp_id,
                         "family %s-%s is not in the family table (docs/manifest-verify.md)",
                         prefix, family);
        return NULL;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) {
        golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    fprintf(m,
            "# %s: written by manifest-verify --init from the handbook's section 4 template.\n"
            "# Fill every REQUIRED before the experiment runs, then move status on (planned ->\n"
            "# running -> measured -> decided); manifest-verify lists what is still to do.\n"
            "schema: calculet-op-experiment/v1\n"
            "experiment_id: %s\n"
            "operator_family: %s\n"
            "status: planned\n"
            "capability: C3          # C0, C2 or C3: what the vendor can deliver (section 2)\n"
            "hypothesis: REQUIRED    # one sentence: what changes, and what it should improve\n"
            "design: single_factor   # or factorial / not_attributable (section 3)\n"
            "baseline:\n"
            "  calbin_sha256: REQUIRED\n"
            "  compiler_oci_digest: REQUIRED\n"
            "  compiler_flags: {}     # flags pinned for the baseline, as in its manifest\n"
            "candidate:\n"
            "  calbin_sha256: REQUIRED\n"
            "  compiler_oci_digest: REQUIRED\n"
            "  changed_flags:         # the one main factor: the flag's name and its new value\n"
            "    REQUIRED: REQUIRED\n"
            "controlled:\n"
            "  model_hash: REQUIRED\n"
            "  tokenizer_hash: REQUIRED\n"
            "  quant_config_hash: REQUIRED\n"
            "  runtime: REQUIRED\n"
            "  driver: REQUIRED\n"
            "  firmware: REQUIRED\n"
            "  power_mode: REQUIRED\n"
            "matrix:                  # section 5.1's shape boundaries\n"
            "  prompt_tokens: [1, 2, 15, 16, 17, 31, 32, 33, 127, 128, 129, 511, 512, 513, 1024,\n"
            "                  2048, 4096, 8192, 16384, 32768, 40959]\n"
            "  past_tokens: [0, 1, 15, 16, 17, 127, 128, 1023, 1024, 4095, 4096, 8191, 16383,\n"
            "                32767, 40959]\n"
            "  output_tokens: [1, 32, 256]\n"
            "  concurrency: [1]\n"
            "  context_limit: 40960\n"
            "metrics:\n"
            "  - numerical\n"
            "  - ttft_ms\n"
            "  - tpot_ms\n"
            "  - per_op_cycles\n"
            "  - ddr_bytes\n"
            "  - d2d_bytes\n"
            "  - power_w\n"
            "acceptance:              # section 4's first engineering thresholds\n"
            "  top1_match_min: 0.999\n"
            "  p99_regression_max_pct: 5\n"
            "  target_metric_improvement_min_pct: 8\n"
            "rollback: deploy previous calbin generation\n",
            o->exp_id, o->exp_id, opfam);
    if (fclose(m) != 0 || !text) {
        free(text);
        golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    return text;
}

/* Remove the half-built temporary folder (only what this module put there). */
static void remove_tree(const char *tmp)
{
    char p[4200];
    if (lg_path_join_buf(p, sizeof p, tmp, "hypothesis.yaml") == 0)
        unlink(p);
    for (int i = 0; subfolders[i]; i++)
        if (lg_path_join_buf(p, sizeof p, tmp, subfolders[i]) == 0)
            rmdir(p);
    rmdir(tmp);
}

static int write_file(const char *path, const char *text, golden_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
        return golden_fail_what(err, golden_code_from_errno(errno), path, "cannot create: %s",
                                strerror(errno));
    size_t n = strlen(text), done = 0;
    while (done < n) {
        ssize_t w = write(fd, text + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : ENOSPC;
            close(fd);
            return golden_fail_what(err, golden_code_from_errno(e), path, "cannot write: %s",
                                    strerror(e));
        }
        done += (size_t)w;
    }
    int e = fsync(fd) != 0 ? errno : 0;
    if (close(fd) != 0 && !e)
        e = errno;
    if (e)
        return golden_fail_what(err, golden_code_from_errno(e), path, "cannot write: %s",
                                strerror(e));
    return GOLDEN_OK;
}

/* Fill the temporary folder tmp: every subfolder, then hypothesis.yaml. */
static int fill(const char *tmp, const char *text, golden_error *err)
{
    char p[4200];
    for (int i = 0; subfolders[i]; i++) {
        if (lg_path_join_buf(p, sizeof p, tmp, subfolders[i]) != 0)
            return golden_fail_what(err, GOLDEN_EINVAL, tmp, "path too long");
        if (mkdir(p, 0777) != 0)
            return golden_fail_what(err, golden_code_from_errno(errno), p, "cannot create: %s",
                                    strerror(errno));
    }
    if (lg_path_join_buf(p, sizeof p, tmp, "hypothesis.yaml") != 0)
        return golden_fail_what(err, GOLDEN_EINVAL, tmp, "path too long");
    return write_file(p, text, err);
}

int golden_exp_template_write(const char *dir, const golden_exp_template_opts *o,
                              golden_error *err)
{
    if (strlen(dir) > 3000)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "folder path too long");
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", dir);
    size_t n = strlen(copy);
    while (n > 1 && copy[n - 1] == '/')
        copy[--n] = '\0';
    if (!o || !o->exp_id || strcmp(basename(copy), o->exp_id) != 0)
        return golden_fail_what(err, GOLDEN_EINVAL, dir,
                                "the folder's name must be the EXP_ID (%s)", o && o->exp_id ? o->exp_id : "");
    struct stat st;
    if (lstat(copy, &st) == 0)
        return golden_fail_what(err, GOLDEN_EEXISTS, dir, "exists; --init only creates a new folder");
    char *text = golden_exp_template_hypothesis(o, err);
    if (!text)
        return GOLDEN_ERR;
    char tmp[4200];
    int k = snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", copy);
    if (k < 0 || (size_t)k >= sizeof tmp || !mkdtemp(tmp)) {
        int e = errno;
        free(text);
        return golden_fail_what(err, golden_code_from_errno(e), dir, "cannot create: %s", strerror(e));
    }
    mode_t mask = umask(0);
    umask(mask);
    chmod(tmp, 0777 & ~mask); /* mkdtemp makes 0700; a new folder gets what mkdir would give */
    int rc = fill(tmp, text, err);
    free(text);
    /* RENAME_NOREPLACE: a folder that appeared meanwhile is never replaced */
    if (rc == GOLDEN_OK && renameat2(AT_FDCWD, tmp, AT_FDCWD, copy, RENAME_NOREPLACE) != 0)
        rc = golden_fail_what(err, golden_code_from_errno(errno), dir, "cannot create: %s",
                              strerror(errno));
    if (rc != GOLDEN_OK)
        remove_tree(tmp);
    return rc;
}

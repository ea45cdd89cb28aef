/* The one verification path: before deciding anything, exp-gate runs manifest-verify's
 * experiment check (golden_experiment_check, the library's single entry point, not a copy) on
 * the folder. A failing correctness rule makes the decision a reject; any other failing rule,
 * or a to-do left, means nothing can be decided (the error names the first such rule). */
#include <stdio.h>
#include <string.h>

#include "gate/decide_int.h"
#include "exp/check_internal.h"
#include "golden/experiment.h"
#include "util/str.h"

/* manifest-verify rules whose failure is a correctness failure of the candidate, not a folder
 * that cannot be read: the accuracy result contradicting its own numbers or the bounds. */
static bool correctness_rule(const char *rule)
{
    return !strcmp(rule, "accuracy-agrees");
}

/* The files decide itself writes: their absence is what decide is there to end. */
static bool own_output_missing(const golden_finding *f)
{
    return !strcmp(f->rule, "layout") &&
           (lg_path_has_suffix(f->file, "performance/summary.json") || lg_path_has_suffix(f->file, "decision.md") ||
            lg_path_has_suffix(f->file, "decision.json")) &&
           !strncmp(f->message, "missing", 7);
}

/* manifest-verify's experiment check of dir, findings into fs (free them). */
static int check_folder(const char *dir, int threads, lg_exp_raw_hook *hook, golden_findings *fs,
                        golden_error *err)
{
    golden_findings_init(fs);
    golden_experiment_opts eo;
    memset(&eo, 0, sizeof eo);
    eo.version = GOLDEN_EXPERIMENT_OPTS_VERSION;
    eo.threads = threads;
    return lg_experiment_check_hooked(dir, &eo, fs, hook, err);
}

int gate_verify(const char *dir, int threads, gate_inputs *in, struct lg_exp_raw_hook_s *hook,
                golden_error *err)
{
    golden_findings fs;
    int rc = check_folder(dir, threads, hook, &fs, err);
    for (size_t i = 0; rc == 0 && i < fs.count; i++) {
        const golden_finding *f = &fs.items[i];
        char where[1700];
        golden_finding_where(f, where, sizeof where);
        if (own_output_missing(f) || f->severity == GOLDEN_SEV_NOTE) /* a note: shown, decides nothing */
            continue;
        if (f->severity == GOLDEN_SEV_ERROR && correctness_rule(f->rule)) {
            if (in->verify_failed++ == 0)
                snprintf(in->verify_first, sizeof in->verify_first, "%s: %s [%s]", where,
                         f->message, f->rule);
            continue;
        }
        rc = golden_fail_where(err, GOLDEN_EINVAL, f->message,
                               "%s: manifest-verify rule %s%s (nothing decided)", where, f->rule,
                               f->severity == GOLDEN_SEV_TODO ? " (to-do)" : "");
    }
    in->verified = rc == 0;
    golden_findings_free(&fs);
    return rc;
}

int gate_verify_planned(const char *dir, int threads, golden_error *err)
{
    golden_findings fs;
    int rc = check_folder(dir, threads, NULL, &fs, err);
    for (size_t i = 0; rc == 0 && i < fs.count; i++) {
        const golden_finding *f = &fs.items[i];
        char where[1700];
        if (f->severity != GOLDEN_SEV_ERROR)
            continue;
        golden_finding_where(f, where, sizeof where);
        rc = golden_fail_where(err, GOLDEN_EINVAL, f->message,
                               "%s: manifest-verify rule %s (%zu error(s))", where, f->rule,
                               fs.errors);
    }
    golden_findings_free(&fs);
    return rc;
}

/* Private to libgolden: manifest-verify's experiment check that also hands each parsed line of
 * performance/raw-requests.jsonl to a second reader (exp-gate decide's summary), so that the
 * folder's raw requests are read and parsed once (issue 26's speed) and the summary rests on
 * exactly the bytes the check verified. golden_experiment_check is this with no hook. */
#ifndef GOLDEN_EXP_CHECK_INTERNAL_H
#define GOLDEN_EXP_CHECK_INTERNAL_H
#include <stdbool.h>

#include "golden/doc.h"
#include "golden/experiment.h"

typedef struct lg_exp_raw_hook_s {
    golden_jsonl_fn fn; /* called on every parsed line, after its schema validation */
    void *ctx;
    golden_error *err;  /* fn's error (never the check's) */
    bool failed;        /* fn returned non-zero once: not called again, *err says why */
    bool read;          /* the check read the file (present, a regular file inside the folder) */
} lg_exp_raw_hook;

int lg_experiment_check_hooked(const char *dir, const golden_experiment_opts *opts,
                               golden_findings *out, lg_exp_raw_hook *hook, golden_error *err);
#endif

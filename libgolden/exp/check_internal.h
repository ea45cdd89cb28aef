/* Private to libgolden: manifest-verify's experiment check that also hands each parsed line of
 * performance/raw-requests.jsonl to a second reader (exp-gate decide's summary), so that the
 * folder's raw requests are read and parsed once (issue 26's speed) and the summary rests on
 * exactly the bytes the check verified. golden_experiment_check is this with no hook. */
#ifndef GOLDEN_EXP_CHECK_INTERNAL_H
#define GOLDEN_EXP_CHECK_INTERNAL_H
#include <stdbool.h>

#include "golden/doc.h"
#include "golden/experiment.h"

/* Bytes a line may carry from the hook's prep (on a parse worker) to its fn (in file order). */
#define LG_EXP_HOOK_SLOT 128

typedef struct lg_exp_raw_hook_s {
    golden_jsonl_fn fn; /* called on every parsed line, after its schema validation */
    void *ctx;
    golden_error *err;  /* fn's error (never the check's) */
    bool failed;        /* fn returned non-zero once: not called again, *err says why */
    bool read;          /* the check read the file (present, a regular file inside the folder) */
    /* optional (NULL: fn): prep runs on a parse worker (it may only read what does not change
     * during the pass and write its slot, LG_EXP_HOOK_SLOT zeroed bytes), fn_slot then in file
     * order instead of fn, with that slot */
    void (*prep)(const void *ctx, const golden_doc *d, void *slot);
    int (*fn_slot)(void *ctx, golden_doc *d, size_t line_no, const void *slot,
                   golden_error *err);
} lg_exp_raw_hook;

int lg_experiment_check_hooked(const char *dir, const golden_experiment_opts *opts,
                               golden_findings *out, lg_exp_raw_hook *hook, golden_error *err);
#endif

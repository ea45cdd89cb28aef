/* A new experiment folder in one call: the handbook's section 4 hypothesis.yaml template with
 * every value to fill marked REQUIRED, and the section 3 folders, ready for manifest-verify. */
#ifndef GOLDEN_TEMPLATE_H
#define GOLDEN_TEMPLATE_H
#include "golden/api.h"
#include "golden/error.h"

#define GOLDEN_EXP_TEMPLATE_VERSION 1
typedef struct {
    unsigned version;            /* GOLDEN_EXP_TEMPLATE_VERSION */
    const char *exp_id;          /* PREFIX-FAMILY-NNNN; the folder's name must equal it */
    const char *operator_family; /* NULL: the first one the family table gives the EXP_ID */
} golden_exp_template_opts;

/* The hypothesis.yaml text for opts (status planned, REQUIRED placeholders), newly allocated,
 * or NULL with err (a malformed EXP_ID, a family the table does not know, out of memory). */
GOLDEN_API char *golden_exp_template_hypothesis(const golden_exp_template_opts *opts, golden_error *err);

/* Create the folder dir (its parent must exist; dir must not) holding hypothesis.yaml and the
 * empty section 3 subfolders. Built in a temporary folder beside dir and renamed into place
 * without replacing anything, so dir appears whole or not at all. */
GOLDEN_API int golden_exp_template_write(const char *dir, const golden_exp_template_opts *opts,
                              golden_error *err);

#endif

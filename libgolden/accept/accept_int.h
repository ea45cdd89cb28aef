/* Private to libgolden/accept: one run's context and the steps. */
#ifndef GOLDEN_ACCEPT_INT_H
#define GOLDEN_ACCEPT_INT_H
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "golden/accept.h"
#include "golden/diff.h"
#include "golden/doc.h"

#define ACC_ORIGINS 16
typedef struct {
    const golden_accept_opts *o;
    golden_accept_result *r;
    golden_error *err;
    golden_doc *idx;          /* handoff.json; NULL when it cannot be read */
    char base[PATH_MAX - 64]; /* a temporary folder holding work */
    char work[PATH_MAX];      /* the experiment folder being assembled: base/EXP_ID */
    golden_diff_result *diff; /* step 3's */
    bool accuracy_pass;
    /* where each staged file of work came from, so that a finding on the assembled folder
     * names the delivered file (a work_rel ending in '/' maps a whole folder) */
    struct {
        char work_rel[128];
        char from[PATH_MAX];
    } origin[ACC_ORIGINS];
    size_t norigins;
    /* step 9: where the team's replay golden, raw data, faults and backend log go
     * (EXPERIMENT_DIR/team-replay with -o, kept; else base/team, temporary) */
    char team[PATH_MAX];
    bool out_made;            /* step 9 created experiment_out (removed again on error) */
} acc_ctx;

/* Record that work/work_rel is a copy of from (a folder when both end in '/'). */
void acc_origin(acc_ctx *c, const char *work_rel, const char *from);
/* where (a path, possibly with :LINE:COL or #/pointer after it) with the assembled folder's
 * prefix replaced by the delivered file it was copied from; where itself when none matches. */
const char *acc_delivered(const acc_ctx *c, const char *where, char *buf, size_t n);

/* The delivered file listed in item `item` under `role` (and `format` when not NULL): its
 * path under the hand-off folder into buf; NULL when none is listed or the path escapes. */
const char *acc_role_path(const acc_ctx *c, const char *item, const char *role,
                          const char *format, char *buf, size_t n);
/* A failing finding of step s; -1 only on ENOMEM. */
int acc_fail(golden_accept_step *s, golden_error *err, const char *rule, const char *file,
             const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A note of step s (what was checked). */
void acc_note(golden_accept_step *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Copy a file (mkdir -p of its folder first). */
int acc_copy(const char *from, const char *to, golden_error *err);
int acc_mkdirs(const char *dir, golden_error *err);
int acc_write_json(const char *path, const json_t *doc, golden_error *err);

/* One finding (rule accuracy, on file cand) a failed tensor of r, at most 8 and a count. */
int acc_diff_findings(acc_ctx *c, golden_accept_step *s, const golden_diff_result *r,
                      const char *cand);

int acc_step_accuracy(acc_ctx *c, golden_accept_step *s);
int acc_step_graph(acc_ctx *c, golden_accept_step *s);
int acc_step_performance(acc_ctx *c, golden_accept_step *s);
int acc_step_runtime(acc_ctx *c, golden_accept_step *s);
/* Step 9's options (the model, the conformance check names): 0, or -1 (could not check). */
int acc_runtime_opts_check(const golden_accept_opts *o, golden_error *err);
int acc_assemble(acc_ctx *c);

#endif

/* manifest-verify's checks as a library: documents against schemas, experiment folders against
 * the handbook's rules (sections 3, 4, 5, 16.1), seals over assets, vendor hand-offs (section 18). */
#ifndef GOLDEN_EXPERIMENT_H
#define GOLDEN_EXPERIMENT_H
#include "golden/api.h"
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "golden/error.h"
#include "golden/schema.h"

/* The handbook's default context limit (prompt + past + output tokens). */
#define GOLDEN_CONTEXT_LIMIT 40960
/* Documents loaded whole (not JSON Lines) larger than this are refused, so memory stays bounded. */
#define GOLDEN_MAX_DOCUMENT_BYTES (64u * 1024u * 1024u)

typedef enum { GOLDEN_SEV_ERROR, GOLDEN_SEV_TODO, GOLDEN_SEV_NOTE } golden_severity;

/* One finding: a rule that failed (error), a placeholder still to fill (todo), or a note that
 * is shown but neither fails nor waits (a recorded waiver and what it covers). */
typedef struct {
    golden_severity severity;
    char rule[40];      /* e.g. "one-main-factor"; see docs/manifest-verify.md */
    char file[1024];    /* the file as the user named it (folder path + relative path) */
    int line, col;      /* 1-based; 0 when unknown */
    char pointer[512];  /* JSON Pointer into the document; "" for the root or no document */
    char message[1024]; /* one plain sentence */
} golden_finding;

typedef struct {
    golden_finding *items;
    size_t count, cap;
    size_t errors, todos;
    size_t documents;    /* documents and JSON Lines lines validated */
    size_t files_hashed;
    bool sealed;         /* SHA256SUMS was written by this run */
} golden_findings;

GOLDEN_API void golden_findings_init(golden_findings *f);
GOLDEN_API void golden_findings_free(golden_findings *f);
/* Append a finding; -1 only when memory runs out. */
GOLDEN_API int golden_findings_add(golden_findings *f, golden_severity sev, const char *rule,
                        const char *file, int line, int col, const char *pointer,
                        golden_error *err, const char *fmt, ...)
    __attribute__((format(printf, 9, 10)));
/* "file:line:col", "file#/pointer" or "file" into buf. */
GOLDEN_API void golden_finding_where(const golden_finding *f, char *buf, size_t n);

/* Validate each path against one schema (embedded file name, $id, format name or path).
 * `.jsonl` files are validated line by line; everything else as one JSON or YAML document.
 * Violations become findings of rule "schema"; -1 only when the schema or a document cannot
 * be read or parsed (err says which). */
GOLDEN_API int golden_findings_documents(const char *schema_ref, const char *const *paths, size_t n,
                            golden_findings *out, golden_error *err);
/* The same with schema load options (--schema-dir folders, --format-assert; NULL: none) and
 * the validation threads of a big array (-j; 0 = every core). */
GOLDEN_API int golden_findings_documents_opts(const char *schema_ref, const golden_schema_load_options *lo,
                                 int threads, const char *const *paths, size_t n, golden_findings *out,
                                 golden_error *err);

#define GOLDEN_EXPERIMENT_OPTS_VERSION 3
/* Settings of a check. The library reads no environment: a tool that honours GOLDEN_THREADS
 * passes it in `threads`. */
typedef struct {
    unsigned version; /* GOLDEN_EXPERIMENT_OPTS_VERSION; 0 (a zeroed struct) is read as 1 */
    int threads;      /* hashing workers; 0 = every online core (lg_cpu_count) */
    bool seal;        /* write SHA256SUMS when every rule passed */
    bool force;       /* --seal may replace an existing SHA256SUMS */
    /* Version 2 on (read only when version >= 2): the tokenizer file whose sha256 the
     * hypothesis's controlled.tokenizer_hash and the calibration manifest's tokenizer_sha256
     * must equal (rule tokenizer-hash); NULL: the folder's tokenizer.json when it has one. */
    const char *tokenizer;
    /* Version 3 on: the check's hashing (artifacts, the seal's lines, a new seal's assets) in
     * place of golden_sha256_files (NULL: that one). A check that reaches its hashes calls it
     * exactly once, with every distinct path (n may be 0); it fills hexes[i] for each path as
     * golden_sha256_files does, or returns -1 with err set (the check then returns -1).
     * manifest-verify's MPI ranks share the files through it (docs/scale.md). */
    int (*hash_files)(void *ctx, const char *const *paths, size_t n, char (*hexes)[65],
                      int threads, golden_error *err);
    void *hash_ctx;
} golden_experiment_opts;

/* Check one experiment folder against every rule; findings go to out. Returns -1 when the
 * folder or one of its documents cannot be read or parsed (a verdict is then impossible). */
GOLDEN_API int golden_experiment_check(const char *dir, const golden_experiment_opts *opts,
                            golden_findings *out, golden_error *err);

#define GOLDEN_HANDOFF_ITEMS 8
typedef enum { GOLDEN_ITEM_PRESENT, GOLDEN_ITEM_MISSING, GOLDEN_ITEM_MALFORMED } golden_item_status;
typedef struct {
    int number;                  /* 1..8, the handbook's numbering */
    const char *key;             /* key in handoff.json "items" */
    const char *title;
    golden_item_status status;
    char detail[512];            /* first reason when not present */
} golden_handoff_item;

/* Check a vendor delivery indexed by DIR/handoff.json (calculet-handoff/v1). items receives the
 * eight items' states. Returns -1 when handoff.json or a named document cannot be read. */
GOLDEN_API int golden_handoff_check(const char *dir, const golden_experiment_opts *opts,
                         golden_handoff_item items[GOLDEN_HANDOFF_ITEMS], golden_findings *out,
                         golden_error *err);
GOLDEN_API const char *golden_item_status_name(golden_item_status s);
/* A hand-off's compile deliverables (DIR/handoff.json's item 2) against the team's hypothesis
 * document: each manifest against it (calbin, compiler, experiment_id, pinned and changed flags,
 * controlled values), the pair (controlled values equal, one main factor unless the design says
 * otherwise), the commands, and the delivered flags diff (role flags_diff, "NAME: OLD -> NEW" a
 * line) equal to the manifests' diff. Findings go to out; -1 when the hypothesis cannot be read
 * or is not a valid calculet-op-experiment/v1 document (the team's input: could not check). */
GOLDEN_API int golden_handoff_compile_check(const char *dir, const char *hypothesis,
                                            const golden_experiment_opts *opts,
                                            golden_findings *out, golden_error *err);

/* EXP_ID = PREFIX-FAMILY-NNNN. Splits id; -1 with err when it does not match. */
GOLDEN_API int golden_exp_id_parse(const char *id, char prefix[16], char family[32], int *number,
                        golden_error *err);
/* Whether an EXP_ID family (e.g. "MOE" under prefix "OP") may carry operator_family.
 * 1 = agrees, 0 = disagrees, -1 = unknown prefix/family. */
GOLDEN_API int golden_exp_family_agrees(const char *prefix, const char *family, const char *operator_family);

/* One row of the family table (ends with a NULL prefix). */
typedef struct {
    const char *prefix;
    const char *family;
    const char *operator_families; /* space-separated */
} golden_family_row;
GOLDEN_API extern const golden_family_row golden_family_table[];

/* The calculet-verify-report/v1 document (new reference); items may be NULL. */
GOLDEN_API json_t *golden_findings_report(const char *mode, const char *target, const golden_findings *f,
                             const golden_handoff_item *items, golden_error *err);
/* JUnit XML: one case per rule (or per document in schema mode, per item in hand-off mode). */
GOLDEN_API int golden_findings_junit(const char *path, bool force, const char *mode, const char *target,
                        const golden_findings *f, const golden_handoff_item *items,
                        golden_error *err);

#endif

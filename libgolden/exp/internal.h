/* Private to libgolden/exp: the state of one check and the helpers its files share. Not
 * installed; the public face is golden/experiment.h. */
#ifndef GOLDEN_EXP_INTERNAL_H
#define GOLDEN_EXP_INTERNAL_H
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "golden/doc.h"
#include "golden/experiment.h"
#include "golden/schema.h"
#include "doc/jsonl_internal.h"
#include "util/strmap.h"
#include "util/str.h"

#define SEAL_FILE "SHA256SUMS"

typedef struct {
    char *rel;          /* folder-relative path */
    char expect[65];    /* expected digest, "" when only the digest is wanted (seal) */
    const char *rule;   /* "artifact-hash", "calibration-hash" or "seal" */
    char file[1024];    /* where the expectation was written */
    int line, col;
    char pointer[256];
    size_t slot;        /* index into the unique path list */
} hash_job;

typedef struct {
    const char *given;      /* the folder as the user named it */
    char root[PATH_MAX];    /* its real path */
    golden_findings *out;
    golden_error *err;
    hash_job *jobs;
    size_t njobs, capjobs;
    char **assets;          /* regular files found by the walk (relative, sorted), for the seal */
    size_t nassets, capassets;
    golden_strmap asset_set; /* assets -> index, for lookups */
    int threads;
    const char *tokenizer;  /* --tokenizer FILE (options version 2), or NULL */
    int (*hash_files)(void *, const char *const *, size_t, char (*)[65], int, golden_error *);
    void *hash_ctx;         /* options version 3: the tool's hashing, or NULL */
} vctx;

/* Where a named path was written, for findings. */
typedef struct {
    const char *file;
    int line, col;
    const char *pointer;
} origin;

typedef struct {
    const char *format;
    golden_schema *schema;
} schema_slot;

typedef struct {
    schema_slot slots[16];
    size_t n;
} schema_cache;

/* --schema mode: one JSONL line. */
typedef struct {
    golden_findings *out;
    const golden_schema *schema;
    size_t records;
    int threads; /* validation threads (-j); 0 = all cores */
} plain_jl;

/* Raw requests counted per case of performance/summary.json, side 0 = baseline, 1 = candidate. */
struct perf_tally {
    const char *case_id;
    size_t summary_index;
    size_t next; /* the next summary entry of the same case (another metric), or SIZE_MAX */
    long long level; /* the entry's concurrency (absent: 1): only lines of that level count */
    long long warmup[2], steady[2], unsteady[2];
};

typedef struct {
    char *id;
    size_t line;
    bool rejection;
    bool decode;
    long long prompt, past, output;
    int dataset;        /* index into exp_datasets, -1 when no section 5.2 set */
    char *input;        /* the token file, folder-relative ("golden/inputs/..."), or NULL */
} input_case;


/* What one JSON Lines file's pass keeps (one per file: inputs, requests, faults, calibration). */
typedef struct jl_state jl_state;
struct jl_state {
    vctx *c;
    const golden_schema *schema;
    /* input manifest */
    long long limit;
    input_case *cases;
    size_t ncases, capcases;
    golden_strmap case_index; /* case_id -> index of its first line in cases */
    /* calibration */
    char **sample_ids;        /* keys of sample_index */
    size_t nsamples, capsamples;
    golden_strmap sample_index; /* sample_id -> line */
    char tokenizer[65];
    size_t tokenizer_line;
    const char *expected_tokenizer; /* the hypothesis's controlled tokenizer_hash, or NULL */
    /* raw requests */
    const jl_state *inputs;   /* the input manifest's pass, NULL when there is none */
    struct perf_tally *tally; /* one per summary entry (borrowed ids), NULL when no summary */
    size_t ntally;
    golden_strmap tally_index;  /* case_id -> its first tally entry */
    golden_strmap request_ids;  /* request_id -> line, so a copied line is not a second run */
    char **id_copies;           /* the map's keys (the line docs they came from are freed) */
    size_t nid_copies, capid_copies;
    struct lg_exp_raw_hook_s *hook; /* check_internal.h: a second reader of each line, or NULL */
};

/* findings.c: append a finding (va_list form of golden_findings_add). */
int exp_findings_vadd(golden_findings *f, golden_severity sev, const char *rule,
    const char *file, int line, int col, const char *pointer,
    golden_error *err, const char *fmt, va_list ap);
/* context.c: small helpers, JSON Pointers and the position of the node a pointer names. */
char *exp_xstrdup(const char *s, golden_error *err);
void exp_ptr_push(char *buf, size_t n, const char *token);
void exp_ptr_push_index(char *buf, size_t n, size_t i);
json_t *exp_ptr_get(json_t *root, const char *ptr);
void exp_node_pos(const golden_doc *doc, const char *ptr, int *line, int *col);
/* values.c: a string member; scalars compared and shown whole; the integer accessor
 * (1 = *out set, 0 = absent or not a number, 2 = not an integer in range: a finding was added,
 * -1 = error). */
const char *exp_sget(const json_t *o, const char *key);
bool exp_value_eq(const json_t *a, const json_t *b);
void exp_value_show(const json_t *v, char *buf, size_t n);
int exp_int_at(vctx *c, const golden_doc *d, const json_t *v, const char *ptr,
    const char *rule, long long *out);
int exp_int_key(vctx *c, const golden_doc *d, const json_t *obj, const char *base,
    const char *key, const char *rule, long long *out);
/* context.c: the folder as the user named it + rel; findings at a file, a node, an origin. */
void exp_disp(const vctx *c, const char *rel, char *buf, size_t n);
int exp_add_rel(vctx *c, golden_severity sev, const char *rule, const char *rel,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int exp_add_node(vctx *c, golden_severity sev, const char *rule, const golden_doc *doc,
    const char *pointer, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
void exp_vctx_free(vctx *c);
/* tokenizer.c: rule tokenizer-hash, after the calibration pass (cal: its state, or NULL). */
int exp_tokenizer_rule(vctx *c, const golden_doc *h, const jl_state *cal);
int exp_vctx_init(vctx *c, const char *dir, const golden_experiment_opts *opts,
    golden_findings *out, golden_error *err);
bool exp_inside_root(const vctx *c, const char *p);
bool exp_lexically_escapes(const char *rel);
int exp_add_origin(vctx *c, const origin *o, const char *rule, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* artifacts.c: a named path inside the folder (1 usable, 0 finding added, -1 error); hash
 * jobs collected from every {path, sha256} and run at once. */
int exp_check_path(vctx *c, const char *rel, const origin *o, const char *missing_rule);
int exp_add_job(vctx *c, const char *rel, const char *expect, const char *rule,
    const origin *o);
int exp_check_ref(vctx *c, const char *rel, const char *sha, const origin *o,
    const char *missing_rule, const char *hash_rule);
int exp_cmp_str(const void *a, const void *b);
int exp_run_jobs(vctx *c, char ***paths_out, char (**hexes_out)[65], size_t *n_out);
int exp_doc_refs(vctx *c, const golden_doc *doc);
/* The same, each path taken relative to base (a folder relative to the checked folder; NULL or
 * "" = the folder itself): the input manifest's token files are relative to the manifest's own
 * folder, as npu-replay matrix writes them and npu-replay run reads them. */
int exp_doc_refs_in(vctx *c, const golden_doc *doc, const char *base);
/* layout.c: the folder walk, its assets, the section 3 layout. */
int exp_walk(vctx *c, const char *rel_dir, int depth);
int exp_assets_find(vctx *c);
bool exp_has_asset(const vctx *c, const char *rel);
/* documents.c: schemas compiled once per run, documents loaded in bounded memory and
 * validated (each violation a "schema" finding; returns the count or -1). */
/* documents.c: is format one of the embedded schemas ("calculet-fault/v1")? */
bool exp_format_embedded(const char *format);
golden_schema *exp_schema_get(schema_cache *sc, const char *format, golden_error *err);
void exp_schema_cache_free(schema_cache *sc);
long exp_validate(golden_findings *out, const golden_schema *s, const golden_doc *doc,
                  int threads, golden_error *err);
/* exp_validate's second half: count doc and add n violations as findings (0 or -1). */
int exp_validate_add(golden_findings *out, const golden_doc *doc, long n,
    const golden_violation *v, golden_error *err);
int exp_load_doc(const char *path, golden_doc **doc, golden_error *err);
int exp_plain_line(void *ctx, golden_doc *line_doc, size_t line_no, golden_error *err);
int exp_folder_doc(vctx *c, schema_cache *sc, const char *rel, const char *format,
    golden_doc **out);
int exp_folder_jsonl(vctx *c, schema_cache *sc, const char *rel, const char *format,
    golden_jsonl_fn fn, jl_state *st, bool *seen);
/* The same through the pipeline of doc/jsonl_internal.h (p's contexts become st). */
int exp_folder_jsonl_par(vctx *c, schema_cache *sc, const char *rel, const char *format,
    lg_jsonl_par *p, jl_state *st, bool *seen);
/* hypothesis.c and manifests.c */
const char *exp_folder_name(const vctx *c, char *buf, size_t n);
int exp_rules_hypothesis(vctx *c, const golden_doc *h, bool planned);
int exp_rules_manifest(vctx *c, const golden_doc *h, const golden_doc *m, const char *side);
int exp_command_agrees(vctx *c, const golden_doc *m);
int exp_rules_manifest_pair(vctx *c, const golden_doc *h, const golden_doc *b,
    const golden_doc *m);
/* inputs.c, performance.c, calibration.c: JSON Lines callbacks and the rules run after them. */
int exp_input_line(void *ctx, golden_doc *d, size_t line_no, golden_error *err);
const input_case *exp_find_case(const jl_state *s, const char *id);
int exp_input_matrix_rules(jl_state *s, const golden_doc *h, const char *rel);
/* minimums.c: section 5.2's sets in the schema's order, NULL-terminated. */
extern const char *const exp_datasets[];
int exp_dataset_index(const char *name);
/* Rule input-minimums, after the input manifest's pass. */
int exp_input_minimums_rule(jl_state *s, const golden_doc *h, const char *rel);
/* performance.c: raw-requests.jsonl through the pipeline: prep (schema, on a worker), take (in
 * file order: the schema's findings, then the request-id, tally and stage-order rules). */
typedef struct {
    long n;               /* violations (0: valid) */
    golden_violation *v;  /* malloc'ed, n of them */
    bool stages_plain;    /* the nine stages are integers in section 7 order: no finding */
    double hook[16];      /* the hook's prep slot (LG_EXP_HOOK_SLOT bytes) */
} exp_request_slot;
int exp_request_prep(void *ctx, golden_doc *d, size_t line_no, void *slot, golden_error *err);
int exp_request_take(void *ctx, golden_doc *d, size_t line_no, void *slot, golden_error *err);
void exp_request_slot_clear(void *slot);
/* raw_fast.c: true when root plainly satisfies calculet-raw-request/v1 (the generic validator
 * would find nothing); false says nothing (validate it the generic way). */
bool exp_raw_request_plain(const json_t *root);
int exp_perf_tally_setup(jl_state *s, const golden_doc *sum);
int exp_perf_rules(jl_state *s, const golden_doc *sum);
int exp_fault_line(void *ctx, golden_doc *d, size_t line_no, golden_error *err);
int exp_calibration_line(void *ctx, golden_doc *d, size_t line_no, golden_error *err);
/* seal.c */
int exp_seal_verify(vctx *c);
int exp_seal_write(vctx *c, bool force, char **paths, char (*hexes)[65], size_t n);
/* accuracy.c */
int exp_accuracy_agrees(vctx *c, schema_cache *sc, const golden_doc *h, const golden_doc *a);
bool exp_layout_present(const vctx *c, const char *want);
int exp_layout_rules(vctx *c, bool planned);
/* experiment.c */
void exp_jl_state_free(jl_state *s);

#endif

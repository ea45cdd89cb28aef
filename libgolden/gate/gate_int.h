/* Private to libgolden/gate: the raw-request groups and their statistics, the device-trace
 * aggregates, and small JSON helpers the summary, decision and matrix share. */
#ifndef GOLDEN_GATE_INT_H
#define GOLDEN_GATE_INT_H
#include <stdio.h>
#include "golden/doc.h"
#include "golden/gate.h"
#include "util/strmap.h"

/* One case and side of raw-requests.jsonl. */
typedef struct {
    char *case_id;
    int side;                 /* 0 baseline, 1 candidate */
    size_t warmups;           /* warm-up lines */
    size_t flagged_unsteady;  /* measured lines with steady: false */
    size_t spilled;           /* measured steady-flagged lines (in the spill) */
    size_t failed;            /* measured lines with outcome timeout/error: +inf latency */
    long long max_output_tokens;
    unsigned measured_metrics; /* bit m: metric m on a measured line (steady or not) */
    long long concurrency;    /* the level: raw lines' concurrency (absent: 1), issue 33 */
    /* throughput over the wall window of the measured lines (warm-ups out), issue 33 */
    size_t tp_ok, tp_untimed, tp_tokens_missing; /* ok lines; lines without the window's
                                                    stages; ok lines without output_tokens */
    long long tp_tokens;      /* output_tokens of the ok lines */
    long long tp_start, tp_end; /* earliest client_queue.start_ns, latest stream_flush.end_ns */
    bool tp_any;              /* a measured line set tp_start/tp_end */
    /* filled by gate_raw_stats: */
    size_t band_unsteady;     /* steady-flagged lines outside the clock/temperature band */
    double clock_ref, temp_ref; /* band centres (NaN when no reading) */
    double power_ref, power_drift; /* median power_w; least-squares change over the run span */
    golden_gate_describe_t d[GOLDEN_GATE_METRICS];
    double ci[GOLDEN_GATE_METRICS][2];
    /* ttft_ms and tpot_ms: the B resampled medians in resample order, from the side's own
     * difference stream (GATE_DIFF_SEED), for the interval of the difference between sides */
    double *boot[2];
} gate_group;

/* The difference of medians is bootstrapped with independent streams per side: side s (0
 * baseline, 1 candidate) resamples with seed XOR mix64(2^32 + s), the generator otherwise as
 * the median's (docs/exp-gate.md). */
#define GATE_DIFF_SEED(seed, side) ((seed) ^ golden_gate_mix64(((uint64_t)1 << 32) + (side)))
/* The B medians of resamples 0..B-1 of sorted[0..n) (n >= 1), in resample order. */
int gate_bootstrap_medians(const double *sorted, size_t n, unsigned long B, uint64_t seed,
                           int threads, double *medians, golden_error *err);
/* The order-statistic generator's draws depend only on (n, B, seed): a plan holds them, and a
 * cache of a few plans serves every metric and group of the same size (docs/exp-gate.md). */
typedef struct {
    bool valid;
    size_t n;
    unsigned long B;
    uint64_t seed;
    uint32_t *idx; /* 2 B: the lower and upper order statistic of each resample's median */
} gate_boot_plan;
#define GATE_BOOT_PLANS 4
typedef struct {
    golden_gate_boot_gen gen;
    int threads;
    gate_boot_plan plan[GATE_BOOT_PLANS];
    unsigned next;
} gate_boot_cache;
/* The generator o asks for (version 1 options: the per-resample one). */
static inline golden_gate_boot_gen gate_generator(const golden_gate_opts *o)
{
    return o->version >= 2 ? o->generator : GOLDEN_BOOT_RESAMPLE;
}
void gate_boot_cache_init(gate_boot_cache *c, golden_gate_boot_gen gen, int threads);
void gate_boot_cache_free(gate_boot_cache *c);
/* The B resampled medians of sorted[0..n) (n >= 1) in resample order, by c's generator. */
int gate_boot_medians(gate_boot_cache *c, const double *sorted, size_t n, unsigned long B,
                      uint64_t seed, double *medians, golden_error *err);
/* The 2.5th and 97.5th percentiles of those medians (NaN when B or n is 0). */
int gate_boot_ci(gate_boot_cache *c, const double *sorted, size_t n, unsigned long B,
                 uint64_t seed, double ci[2], golden_error *err);
/* golden_gate_percentile of v's sorted values, by selection (v is reordered; no NaN). */
double gate_percentile_select(double *v, size_t n, double q);
/* The 2.5th and 97.5th percentiles of cand[b] - base[b] (scratch: B doubles). */
void gate_diff_ci(const double *base, const double *cand, unsigned long B, double *scratch,
                  double ci[2]);

typedef struct {
    gate_group *g;
    size_t ng, cap;
    golden_strmap map;        /* gate_group_key: case_id, side, level -> group index */
    char **keys;              /* the map's keys */
    FILE *spill;              /* measured steady-flagged samples, fixed-size records */
    size_t lines;
    golden_strmap id_map;     /* request_id -> first line */
    char **ids;
    size_t nids, capids;
    size_t repeated, first_repeat_line, first_repeat_of; /* repeated request_ids */
    golden_strmap phase_map;  /* case_id -> 0 prefill, 1 decode (golden/input-manifest.jsonl) */
    char **phase_keys;
    size_t nphases, capphases;
    size_t power_lines;       /* lines with power_w */
    /* performance/raw-requests.jsonl's SHA-256 and size when hashed already (decide: on its
     * own thread beside the pass); else the summary hashes the file itself */
    bool raw_hashed;
    char raw_sha256[65];
    long long raw_bytes;
} gate_raw;

/* The group map's key of (case_id, side, concurrency level) into buf (at least clen + 24
 * bytes): case_id, NUL, '0' + side, the level in decimal; returns its length. */
size_t gate_group_key(char *buf, const char *case_id, size_t clen, int side, long long level);
/* "CASE" at level 1, "CASE at concurrency N" otherwise (how reasons name a case, issue 33). */
void gate_case_label(char *buf, size_t n, const char *case_id, long long level);

/* Stream path into raw (groups in order of first appearance) through the document layer's
 * strict JSON Lines reader; dir's golden/input-manifest.jsonl gives each case's phase. */
int gate_raw_read(const char *dir, const char *path, gate_raw *raw, golden_error *err);
/* gate_raw_read in three steps, for a reader that hands over its parsed lines (decide: the
 * experiment check's single pass, exp/check_internal.h): open (phases, spill), each line
 * (golden_jsonl_fn, ctx a gate_raw), close. On failure raw is freed (a line's failure: by the
 * caller, gate_raw_free). */
int gate_raw_open(const char *dir, gate_raw *raw, golden_error *err);
int gate_raw_line(void *raw, golden_doc *d, size_t line_no, golden_error *err);
/* The hook's two halves (exp/check_internal.h): prep on a parse worker (reads nothing of raw),
 * then the line in file order with what prep left in slot. */
void gate_raw_prep(const void *raw, const golden_doc *d, void *slot);
int gate_raw_line_pre(void *raw, golden_doc *d, size_t line_no, const void *slot,
                      golden_error *err);
int gate_raw_close(gate_raw *raw, golden_error *err);
/* Statistics of every group, batch by batch within the memory budget. */
int gate_raw_stats(gate_raw *raw, const golden_gate_opts *o, golden_error *err);
/* The power band of o (percent; 5 for options before version 3). */
static inline double gate_power_band(const golden_gate_opts *o)
{
    return o->version >= 3 ? o->power_band_pct : 5.0;
}
void gate_raw_free(gate_raw *raw);

/* golden_gate_check that also hands back (in *kept, when the check ran and raised no error
 * of its own) the summary it recomputed with the stored settings, for the decision to rest on
 * without computing it again. */
int gate_check_keep(const char *dir, const golden_gate_opts *o, golden_findings *out,
                    bool *checked, json_t **kept, golden_error *err);
/* Both with the raw requests already read (pre: from gate_raw_open/line/close, taken over and
 * freed; NULL: read here): decide's single pass. */
int gate_check_keep_raw(const char *dir, const golden_gate_opts *o, gate_raw *pre,
                        golden_findings *out, bool *checked, json_t **kept, golden_error *err);
int gate_summarize_raw(const char *dir, const golden_gate_opts *o, gate_raw *pre, json_t **out,
                       golden_error *err);

/* A report built in memory (pareto, decision.md, the matrix): open_memstream, NULL with err
 * when out of memory; close hands back the text *buf (NULL with err, *buf freed, on failure). */
FILE *gate_memstream_open(char **buf, size_t *len, golden_error *err);
char *gate_memstream_close(FILE *f, char **buf, golden_error *err);

/* a + t (b - a), with a failed request's +inf kept: t = 0 or a = b gives a (never 0 * inf). */
double gate_lerp(double a, double b, double t);

/* Data (ids, messages) into Markdown: control characters cannot end the line (\n shown as the
 * two characters \ n), & and < as entities (no raw HTML; data never opens a line, so > cannot quote), \ ` * _ [ ] | ~ backslash-escaped. */
void gate_md_escape(FILE *f, const char *s);

#define GATE_BUCKETS 7
extern const char *const gate_bucket_names[GATE_BUCKETS];
/* The section 12 bucket of a launch serving tokens per expert. */
int gate_bucket_of(unsigned long long tokens);

/* Bytes by kind (section 7) and stall classes, as a Chrome trace's args give them. */
#define GATE_BYTE_KINDS 4
extern const char *const gate_byte_kinds[GATE_BYTE_KINDS]; /* ddr sram d2d pcie */
#define GATE_STALL_CLASSES 32

typedef struct {
    int side;          /* 0 baseline, 1 candidate, 2 no side column */
    long long chip;
    char *family;
    unsigned long long ops, cycles, bytes;
    int has_bytes;
    /* Chrome traces only: */
    unsigned long long kind_bytes[GATE_BYTE_KINDS], stall[GATE_STALL_CLASSES];
    unsigned kinds_present, stalls_present; /* bit masks */
    double time_us;    /* sum of the slices' durations */
    unsigned long long bk_cycles[GATE_BUCKETS], bk_tokens[GATE_BUCKETS], bk_launches[GATE_BUCKETS];
} gate_trace_row;

/* Power counter readings of one side and chip: each held until the next. */
typedef struct {
    int side;
    long long chip;
    size_t samples;
    double min, max, weighted, span_us; /* weighted: sum of value x held time */
    double first;                       /* the first reading (the mean of a single one) */
} gate_trace_power;

typedef struct {
    char *path;                 /* relative to the folder, NULL when there is none */
    gate_trace_row *rows;       /* aggregates per side, chip, family */
    size_t n, cap;
    golden_strmap map;
    char **keys;
    size_t lines;
    int sided;                  /* every line named its side */
    int any_unsided;
    unsigned long long bucket_cycles[3][GATE_BUCKETS], bucket_tokens[3][GATE_BUCKETS];
    unsigned long long bucket_launches[3][GATE_BUCKETS];
    int has_tokens;
    /* Chrome Trace Event files (trace_chrome.c): */
    int chrome;
    char *stall_names[GATE_STALL_CLASSES];
    size_t nstalls;
    gate_trace_power *power;
    size_t npower;
    size_t ignored;             /* events of phases that carry no op (instant, flow, ...) */
} gate_trace;

/* The row of (side, chip, family) in t, made when new (NULL out of memory, err filled). */
gate_trace_row *gate_trace_row_at(gate_trace *t, int side, long long chip, const char *family,
                                  size_t family_len, golden_error *err);
/* Aggregate the Chrome Trace Event file path into t (t->path already set). */
int gate_trace_chrome(const char *path, gate_trace *t, golden_error *err);

/* Find performance/raw-device-trace.* in dir and aggregate it (absent: trace->path NULL). */
int gate_trace_read(const char *dir, gate_trace *t, golden_error *err);
void gate_trace_free(gate_trace *t);

/* Round for printing: 6 decimals, or 6 significant digits below 1. */
double gate_round(double v);

/* The stored summary's bootstrap seed and resamples into o, unless the caller set them (the
 * seed read strictly: a seed that is no uint64 is an error at its place, not a default). */
int gate_stored_bootstrap(const golden_doc *doc, golden_gate_opts *o, golden_error *err);
/* Set key to a rounded real (null when not finite); -1 out of memory. */
int gate_set_real(json_t *obj, const char *key, double v);
int gate_set_int(json_t *obj, const char *key, long long v);
int gate_set_str(json_t *obj, const char *key, const char *s);
/* "dir/rel" into a new string (NULL out of memory). */
char *gate_path(const char *dir, const char *rel);
int gate_oom(golden_error *err);
/* A JSON document as text and a newline, numbers with 15 significant digits (free it). */
char *gate_dumps(const json_t *doc);
/* Validate text (named name) against an embedded schema; EINTERNAL when it fails. */
int gate_validate(const char *format, const char *name, const char *text, golden_error *err);
/* Write text to path atomically (temp + rename), replacing only with force. */
int gate_write_text(const char *path, const char *text, bool force, golden_error *err);

#endif

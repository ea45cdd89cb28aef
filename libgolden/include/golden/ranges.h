/* Activation ranges per domain (handbook section 16.1): per layer tap and per calibration
 * domain, min, max, exact percentiles of |x| and the share of outliers over a threshold, from
 * goldens of a run over the calibration samples (calculet-activation-ranges/v1;
 * docs/golden-dump.md "--ranges"). Never a mixed average: every row is one tap in one domain. */
#ifndef GOLDEN_RANGES_H
#define GOLDEN_RANGES_H
#include "golden/api.h"
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "golden/error.h"

/* LLM.int8()'s outlier threshold: |x| > 6. */
#define GOLDEN_RANGES_DEFAULT_OUTLIER 6.0
#define GOLDEN_RANGES_OPTS_VERSION 1
typedef struct {
    unsigned version;         /* GOLDEN_RANGES_OPTS_VERSION */
    double outlier_threshold; /* an element is an outlier when |x| > this */
} golden_ranges_opts;
#define GOLDEN_RANGES_OPTS_INIT {GOLDEN_RANGES_OPTS_VERSION, GOLDEN_RANGES_DEFAULT_OUTLIER}

/* One input: a golden (or anything golden_reader_open_flags reads with GOLDEN_READ_FOREIGN)
 * and its domain (NULL: the file's root attribute `domain`). */
typedef struct {
    const char *domain, *path;
} golden_ranges_input;

/* The report over n inputs. A tap is a tensor name with a leading "cases/<id>/" taken off, so
 * the cases of one domain pool into one row. Float tensors only (integer ones are counted as
 * skipped); an input without any float tensor, or without a domain, is an error. The
 * percentiles are exact nearest-rank order statistics of |x| (numpy's method="inverted_cdf"),
 * found by four streamed radix passes over the data with 16-bit histograms (bounded memory:
 * one chunk and three 65536-bin histograms at a time). */
GOLDEN_API int golden_ranges_compute(const golden_ranges_input *in, size_t n,
                                     const golden_ranges_opts *o, json_t **out,
                                     golden_error *err);
/* The terminal table (free it). */
GOLDEN_API char *golden_ranges_text(const json_t *ranges, golden_error *err);
/* A self-contained HTML page: heatmaps (tap x domain) of max |x|, |x| p99.99 and the outlier
 * share, and the table; the report embedded. */
GOLDEN_API int golden_html_ranges_report(const json_t *ranges, const char *path, bool force,
                                         golden_error *err);

#endif

/* golden-dump: turn raw dumps (+ index), .npy, .npz, .safetensors and .pt into one calculet-golden/v1
 * HDF5 file with SHA-256 and statistics per tensor; also verifies and lists golden files. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/ranks.h"
#include "common/verify_ranks.h"
#include "golden/dtype.h"
#include "golden/error.h"
#include "golden/html.h"
#include "golden/ingest.h"
#include "golden/ranges.h"
#include "golden/report.h"
#include "golden/stats.h"
#include "golden/store.h"
#include "golden/verify.h"

#define TOOL "golden-dump"

/* What the options say (typed rows store here; the layer checks ranges and prints errors). */
static struct {
    const char *out, *prefix, *name, *verify, *list, *html;
    bool ranges, outlier_set;
    double outlier;
    cli_list meta, retype; /* --meta KEY=VALUE, --dtype NAME=DT */
    int64_t gzip;
} arg;

/* The option table: parsing, range checks and --help all come from it. */
static const cli_opt options[] = {
    CLI_HEADING("Dump:"),
    CLI_OPT_STRING(0, 'o', "output", "OUT.h5", "the golden file to write (a regular file, never left\n"
                   "half-written; not '-': HDF5 cannot write to a stream)", 0, &arg.out),
    CLI_OPT_LIST(0, 0, "meta", "KEY=VALUE", "a root string attribute (repeatable)", 0, &arg.meta,
                 false, NULL),
    CLI_OPT_LIST(0, 0, "dtype", "NAME=DT", "read tensor NAME, stored as u16 (u8), as bf16 or f16\n"
                 "(fp8_e4m3fn, fp8_e5m2, bool): a PyTorch view (repeatable)", 0, &arg.retype, false,
                 NULL),
    CLI_OPT_STRING(0, 0, "prefix", "P/", "put every tensor under group P", 0, &arg.prefix),
    CLI_OPT_STRING(0, 0, "name", "NAME", "tensor name for a single .npy input", 0, &arg.name),
    CLI_OPT_INT(0, 0, "gzip", "N", "deflate level (chunked datasets); 0 = contiguous", &arg.gzip,
                0, 9),
    CLI_HEADING("Check:"),
    CLI_OPT_STRING(0, 0, "verify", "FILE.h5", "recompute every SHA-256 and statistic; exit 1 when\n"
                   "any tensor's attributes disagree with its data", CLI_INPUT, &arg.verify),
    CLI_OPT_STRING(0, 0, "list", "FILE", "print name, dtype, shape, sha256, min, max, mean, std,\n"
                   "NaN and Inf counts per tensor (also of a .npy, .safetensors,\n"
                   "plain HDF5 file or folder: computed from the data)", CLI_INPUT, &arg.list),
    CLI_HEADING("Calibration ranges (docs/golden-dump.md):"),
    CLI_OPT_FLAG(0, 0, "ranges", "per tap and domain of [DOMAIN=]GOLDEN inputs: min, max,\n"
                 "exact |x| p99/p99.9/p99.99, outlier share (section 16.1)", &arg.ranges),
    {.long_name = "outlier-threshold", .arg = "T", .type = CLI_REAL, .fmin = 0, .fmax = INFINITY,
     .help = "with --ranges: an outlier is |x| > T (default 6)",
     .dest = CLI_DEST_(double, &arg.outlier), .given = &arg.outlier_set},
    CLI_OPT_STRING(0, 0, "html", "FILE", "with --ranges: also a self-contained HTML page\n"
                   "(- = stdout)", CLI_OUTPUT, &arg.html),
    CLI_END,
};

static const cli_spec spec = {
    .name = TOOL,
    .synopsis = "[OPTIONS] -o OUT.h5 INPUT...\n--verify FILE.h5 [--json FILE] [--junit FILE]\n"
                "--list FILE.h5 [--json FILE]\n"
                "--ranges [--outlier-threshold T] [--html FILE] [--json FILE] [DOMAIN=]GOLDEN...",
    .about = "Write one calculet-golden/v1 HDF5 file from raw dumps with a\n"
             "calculet-dump-index/v1 index, numpy .npy and .npz files, .safetensors files,\n"
             "PyTorch .pt/.pth files (tensors and state_dicts; a restricted unpickler, nothing\n"
             "is run) or folders of them (walked recursively in sorted order). Every tensor\n"
             "gets its canonical SHA-256 and statistics, computed in one streamed pass while\n"
             "it is written.",
    .opts = options,
    .json_help = "also write the result as JSON (- = stdout)",
    .junit_help = "with --verify: one JUnit test case per tensor (- = stdout)",
    .exit_status = "0 done / verified, 1 verification found a mismatch, 2 bad input.",
    .args_are_inputs = true,
};

/* The human report's stream (NULL: dropped), set once options are read. */
static FILE *human;

static cli *the_cli;

static int fail(const golden_error *err)
{
    return cli_fail(the_cli, err);
}

static int usage_error(const char *msg)
{
    return cli_usage(the_cli, "%s", msg);
}

/* ---------------------------------------------------------------- table */

static void shape_str(const golden_tensor_info *t, char *buf, size_t n)
{
    if (t->rank == 0) {
        snprintf(buf, n, "scalar");
        return;
    }
    size_t at = 0;
    buf[0] = '\0';
    for (int d = 0; d < t->rank && at < n; d++)
        at += (size_t)snprintf(buf + at, n - at, "%s%llu", d ? "x" : "",
                               (unsigned long long)t->shape[d]);
}

static void num_str(double v, char *buf, size_t n)
{
    if (isnan(v))
        snprintf(buf, n, "nan");
    else
        snprintf(buf, n, "%.6g", v);
}

enum { COLS = 10 };

/* One table row; the name is kept by pointer because names have no length limit. */
typedef struct {
    const char *name;
    char cell[COLS][80];
} table_row;

static const char *cell_text(const table_row *row, int c)
{
    return c == 0 ? row->name : row->cell[c];
}

/* Print rows of COLS cells, each column as wide as its widest cell. */
static void print_table(FILE *out, const table_row *cells, size_t rows)
{
    size_t width[COLS] = {0};
    for (size_t r = 0; r < rows; r++)
        for (int c = 0; c < COLS; c++)
            if (strlen(cell_text(&cells[r], c)) > width[c])
                width[c] = strlen(cell_text(&cells[r], c));
    bool color = golden_use_color(out);
    for (size_t r = 0; r < rows; r++) {
        if (r == 0)
            fputs(golden_color(color, "bold"), out);
        for (int c = 0; c < COLS; c++) {
            /* text columns left-aligned, numbers right-aligned */
            bool left = c <= 3;
            if (left)
                fprintf(out, "%-*s  ", (int)width[c], cell_text(&cells[r], c));
            else
                fprintf(out, "%*s%s", (int)width[c], cell_text(&cells[r], c),
                        c == COLS - 1 ? "" : "  ");
        }
        if (r == 0)
            fputs(golden_color(color, "reset"), out);
        fputc('\n', out);
    }
}

static void fill_row(table_row *tr, const golden_tensor_info *t)
{
    char(*row)[80] = tr->cell;
    tr->name = t->name;
    snprintf(row[1], 80, "%s", golden_dtype_name(t->dtype));
    shape_str(t, row[2], 80);
    snprintf(row[3], 80, "%s", t->sha256);
    num_str(t->min, row[4], 80);
    num_str(t->max, row[5], 80);
    num_str(t->mean, row[6], 80);
    num_str(t->std, row[7], 80);
    snprintf(row[8], 80, "%llu", (unsigned long long)t->nan_count);
    snprintf(row[9], 80, "%llu", (unsigned long long)(t->posinf_count + t->neginf_count));
}

/* ---------------------------------------------------------------- --list */

/* The listed values of tensor i: a golden's stored ones; for a foreign input (no stored
 * sha256 or statistics) computed from its data now. The copy shares r's strings. */
static int list_info(golden_reader *r, size_t i, golden_tensor_info *out, golden_error *err)
{
    *out = *golden_reader_tensor(r, i);
    if (golden_reader_stored(r, i))
        return GOLDEN_OK;
    golden_stats st;
    if (golden_reader_recompute(r, i, out->sha256, &st, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    out->nan_count = st.nan_count;
    out->posinf_count = st.posinf_count;
    out->neginf_count = st.neginf_count;
    out->zero_count = st.zero_count;
    out->min = golden_stats_min(&st);
    out->max = golden_stats_max(&st);
    out->mean = golden_stats_mean(&st);
    out->std = golden_stats_std(&st);
    return golden_tensor_digest(out, out->tensor_digest, err);
}

/* --list; `table` false when only the JSON is wanted (after a dump). Foreign inputs (.npy,
 * .safetensors, plain HDF5, folders) are listed too, their hashes and statistics computed. */
static int do_list(const char *path, const char *json_path, bool force, bool table)
{
    golden_error err;
    golden_reader *r;
    if (golden_reader_open_flags(path, GOLDEN_READ_FOREIGN, &r, &err) != GOLDEN_OK)
        return fail(&err);
    size_t n = golden_reader_count(r);
    for (size_t i = 0; i < golden_reader_skipped_count(r); i++) {
        const char *sp, *sw;
        golden_reader_skipped_at(r, i, &sp, &sw);
        fprintf(stderr, TOOL ": note: skipped %s: %s\n", sp, sw);
    }
    golden_tensor_info *infos = calloc(n ? n : 1, sizeof *infos);
    if (!infos) {
        golden_reader_close(r);
        return fail(&(golden_error){GOLDEN_ENOMEM, "", "out of memory"});
    }
    for (size_t i = 0; i < n; i++)
        if (list_info(r, i, &infos[i], &err) != GOLDEN_OK) {
            free(infos);
            golden_reader_close(r);
            return fail(&err);
        }
    int rc = 0;
    if (json_path) {
        json_t *tensors, *doc = golden_file_json(r, &tensors);
        for (size_t i = 0; doc && i < n; i++)
            json_array_append_new(tensors, golden_tensor_json(&infos[i]));
        if (!doc)
            rc = fail(&(golden_error){GOLDEN_ENOMEM, "", "out of memory"});
        else if (golden_json_write(json_path, doc, force, &err) != GOLDEN_OK)
            rc = fail(&err);
        json_decref(doc);
    }
    if (rc == 0 && table && human) {
        table_row *cells = calloc(n + 1, sizeof *cells);
        if (!cells) {
            free(infos);
            golden_reader_close(r);
            return fail(&(golden_error){GOLDEN_ENOMEM, "", "out of memory"});
        }
        const char *head[COLS] = {"name", "dtype", "shape", "sha256", "min",
                                  "max",  "mean",  "std",   "nan",    "inf"};
        cells[0].name = head[0];
        for (int c = 1; c < COLS; c++)
            snprintf(cells[0].cell[c], 80, "%s", head[c]);
        for (size_t i = 0; i < n; i++)
            fill_row(&cells[i + 1], &infos[i]);
        print_table(human, cells, n + 1);
        free(cells);
    }
    free(infos);
    golden_reader_close(r);
    return rc;
}

/* ---------------------------------------------------------------- --verify */

static int do_verify(const char *path, const char *json_path, const char *junit_path,
                     bool force)
{
    golden_error err;
    golden_reader *r;
    if (golden_reader_open(path, &r, &err) != GOLDEN_OK)
        return fail(&err);
    size_t n = golden_reader_count(r);
    char **problems = NULL;
    golden_progress prog;
    unsigned long long total = 0;
    for (size_t i = 0; i < n; i++)
        total += golden_reader_tensor(r, i)->count *
                 golden_dtype_size(golden_reader_tensor(r, i)->dtype);
    golden_progress_start(&prog, TOOL " --verify", total);
    prog.bytes = true;
    prog.enabled = prog.enabled && !the_cli->quiet;
    golden_verify_opts vo = {.version = GOLDEN_VERIFY_OPTS_VERSION, .threads = golden_threads(),
                             .progress = &prog};
    /* under mpirun (make MPI=1) the ranks share the tensors; rank 0 writes everything */
    bool root = true;
    int vrc = verify_ranks_run(path, r, &vo, &problems, &root, &err);
    golden_progress_end(&prog);
    int rc;
    size_t bad = 0;
    if (!root) {
        rc = vrc != GOLDEN_OK ? 2 : 0;
    } else if (vrc != GOLDEN_OK) {
        rc = fail(&err);
    } else {
        for (size_t i = 0; i < n; i++)
            bad += problems[i] != NULL;
        rc = bad ? 1 : 0;
        if (human) {
            bool color = golden_use_color(human) && !ranks_launched();
            for (size_t i = 0; i < n; i++)
                if (problems[i])
                    fprintf(human, "%sFAIL%s %s: %s\n", golden_color(color, "red"),
                            golden_color(color, "reset"), golden_reader_tensor(r, i)->name,
                            problems[i]);
            fprintf(human, "%s: %zu tensors, %zu verified, %zu mismatched: %s%s%s\n", path, n,
                    n - bad, bad, golden_color(color, bad ? "red" : "green"),
                    bad ? "FAIL" : "PASS", golden_color(color, "reset"));
        }
        if (json_path) {
            json_t *tensors, *doc = golden_file_json(r, &tensors);
            if (doc) {
                json_object_set_new(doc, "verdict", json_string(bad ? "fail" : "pass"));
                for (size_t i = 0; i < n; i++) {
                    json_t *t = golden_tensor_json(golden_reader_tensor(r, i));
                    json_object_set_new(t, "verified", json_boolean(!problems[i]));
                    if (problems[i])
                        json_object_set_new(t, "problems", json_string(problems[i]));
                    json_array_append_new(tensors, t);
                }
            }
            if (!doc || golden_json_write(json_path, doc, force, &err) != GOLDEN_OK)
                rc = fail(doc ? &err : &(golden_error){GOLDEN_ENOMEM, "", "out of memory"});
            json_decref(doc);
        }
        if (junit_path && rc != 2) {
            golden_junit_case *cases = calloc(n ? n : 1, sizeof *cases);
            if (!cases) {
                rc = fail(&(golden_error){GOLDEN_ENOMEM, "", "out of memory"});
            } else {
                for (size_t i = 0; i < n; i++)
                    cases[i] = (golden_junit_case){.classname = TOOL ".verify",
                                                   .name = golden_reader_tensor(r, i)->name,
                                                   .failed = problems[i] != NULL,
                                                   .message = problems[i],
                                                   .details = problems[i]};
                if (golden_junit_write(junit_path, force, TOOL " --verify", cases, n,
                                       &err) != GOLDEN_OK)
                    rc = fail(&err);
                free(cases);
            }
        }
    }
    golden_verify_free(problems, n);
    golden_reader_close(r);
    return rc;
}

/* ---------------------------------------------------------------- dump */

typedef struct {
    const char *out;
    bool force;
    int gzip;
    const char *prefix;
    const char *name;
    const char *json;
    const char **meta;
    size_t nmeta;
    const char **retype; /* --dtype NAME=DT */
    size_t nretype;
} dump_opts;

static int do_dump(const dump_opts *o, char **inputs, int ninputs)
{
    golden_error err;
    golden_error_clear(&err);
    for (size_t i = 0; i < o->nmeta; i++) {
        const char *eq = strchr(o->meta[i], '=');
        if (!eq || eq == o->meta[i])
            return usage_error("--meta needs KEY=VALUE with a non-empty KEY");
    }
    golden_input_list l;
    golden_input_list_init(&l);
    int rc = 0;
    char *spool = NULL; /* a .npy read from standard input, copied beside the output */
    if (o->name) {
        size_t n = strlen(inputs[0]);
        bool from_stdin = strcmp(inputs[0], "-") == 0;
        if (ninputs != 1 || (!from_stdin && (n < 4 || strcmp(inputs[0] + n - 4, ".npy") != 0))) {
            golden_input_list_free(&l);
            return usage_error("--name needs exactly one .npy input (or - for standard input)");
        }
        if (from_stdin && golden_infile_spool_stdin(o->out, &spool, &err) != GOLDEN_OK)
            rc = fail(&err);
        else if (golden_ingest_npy(&l, spool ? spool : inputs[0], o->name, &err) != GOLDEN_OK) {
            if (spool && strncmp(err.where, spool, strlen(spool)) == 0)
                snprintf(err.where, sizeof err.where, "-"); /* the user named stdin, not our copy */
            rc = fail(&err);
        }
    } else {
        for (int i = 0; i < ninputs; i++)
            if (strcmp(inputs[i], "-") == 0) {
                golden_input_list_free(&l);
                return usage_error("a .npy on standard input needs --name NAME (and no other input)");
            }
        for (int i = 0; i < ninputs && rc == 0; i++)
            if (golden_ingest_path(&l, inputs[i], &err) != GOLDEN_OK)
                rc = fail(&err);
    }
    for (size_t i = 0; i < o->nretype && rc == 0; i++) {
        const char *eq = strrchr(o->retype[i], '=');
        char *nm = eq ? strndup(o->retype[i], (size_t)(eq - o->retype[i])) : NULL;
        golden_dtype dt;
        if (!eq || !nm || golden_dtype_parse(eq + 1, &dt) != 0)
            rc = usage_error("--dtype needs NAME=DTYPE with a known dtype");
        else if (golden_input_list_retype(&l, nm, dt, &err) != GOLDEN_OK)
            rc = fail(&err);
        free(nm);
    }
    if (rc == 0 && golden_input_list_finish(&l, o->prefix, &err) != GOLDEN_OK)
        rc = fail(&err);
    if (rc == 0 && l.count == 0) {
        /* almost always a wrong path: an empty golden file would pass every later check */
        golden_fail_what(&err, GOLDEN_EINVAL, inputs[0], "no tensors found in the inputs");
        rc = fail(&err);
    }
    if (rc != 0) {
        golden_input_list_free(&l);
        golden_infile_spool_done(spool);
        return rc;
    }
    for (size_t i = 0; i < l.n_skipped; i++) /* never silently */
        fprintf(stderr, TOOL ": note: skipped %s: %s\n", l.skipped[i], l.skipped_why[i]);
    golden_writer_opts wo = {.version = GOLDEN_WRITER_OPTS_VERSION,
                             .force = o->force, .gzip = o->gzip,
                             .producer = TOOL " " GOLDEN_VERSION, .threads = golden_threads()};
    golden_writer *w = NULL;
    if (golden_writer_open(o->out, &wo, &w, &err) != GOLDEN_OK) {
        golden_input_list_free(&l);
        golden_infile_spool_done(spool);
        return fail(&err);
    }
    for (size_t i = 0; i < o->nmeta && rc == 0; i++) {
        const char *eq = strchr(o->meta[i], '=');
        char *key = strndup(o->meta[i], (size_t)(eq - o->meta[i]));
        if (!key)
            rc = fail(&(golden_error){GOLDEN_ENOMEM, "", "out of memory"});
        else if (golden_writer_meta(w, key, eq + 1, &err) != GOLDEN_OK)
            rc = fail(&err);
        free(key);
    }
    unsigned long long total = 0;
    for (size_t i = 0; i < l.count; i++)
        total += l.items[i].nbytes;
    golden_progress prog;
    golden_progress_start(&prog, TOOL, total);
    prog.bytes = true;
    prog.enabled = prog.enabled && !the_cli->quiet;
    unsigned long long done = 0;
    for (size_t i = 0; i < l.count && rc == 0; i++)
        if (golden_input_write(&l.items[i], w, &prog, &done, &err) != GOLDEN_OK)
            rc = fail(&err);
    golden_progress_end(&prog);
    if (rc == 0 && golden_writer_commit(w, &err) != GOLDEN_OK)
        rc = fail(&err);
    else if (rc != 0)
        golden_writer_abort(w);
    golden_infile_spool_done(spool);
    if (rc == 0) {
        if (human)
            fprintf(human, "%s: %zu tensors, %llu bytes\n", o->out, l.count, total);
        if (o->json) {
            /* the JSON is the listing of what was just written, read back */
            golden_input_list_free(&l);
            return do_list(o->out, o->json, o->force, false) ? 2 : 0;
        }
    }
    golden_input_list_free(&l);
    return rc;
}

/* --ranges: [DOMAIN=]GOLDEN inputs (a bare path takes the file's root attribute domain). */
static int do_ranges(cli *c, char **args, int nargs, bool force)
{
    golden_error err;
    golden_error_clear(&err);
    golden_ranges_input *in = calloc((size_t)nargs, sizeof *in);
    char **doms = calloc((size_t)nargs, sizeof *doms);
    int rc = !in || !doms ? fail(&(golden_error){GOLDEN_ENOMEM, "", "out of memory"}) : 0;
    for (int i = 0; rc == 0 && i < nargs; i++) {
        const char *eq = strchr(args[i], '=');
        in[i].path = eq ? eq + 1 : args[i];
        if (eq && !(in[i].domain = doms[i] = strndup(args[i], (size_t)(eq - args[i]))))
            rc = fail(&(golden_error){GOLDEN_ENOMEM, "", "out of memory"});
        else if (eq && (eq == args[i] || !eq[1]))
            rc = usage_error("--ranges takes DOMAIN=GOLDEN or GOLDEN");
        else if (cli_add_input(c, in[i].path))
            rc = 2;
    }
    if (rc == 0 && cli_outputs_ok(c))
        rc = 2;
    golden_ranges_opts ro = GOLDEN_RANGES_OPTS_INIT;
    ro.outlier_threshold = arg.outlier;
    json_t *doc = NULL;
    char *text = NULL, *js = NULL;
    if (rc == 0 && (golden_ranges_compute(in, (size_t)nargs, &ro, &doc, &err) != 0 ||
                    !(text = golden_ranges_text(doc, &err)) ||
                    !(js = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(17)))))
        rc = fail(err.code ? &err : &(golden_error){GOLDEN_ENOMEM, "", "out of memory"});
    if (rc == 0 && c->json) {
        golden_outfile *f;
        if (golden_outfile_open(c->json, force, &f, &err) != 0)
            rc = fail(&err);
        else if (fprintf(golden_outfile_stream(f), "%s\n", js) < 0) {
            golden_outfile_abort(f);
            rc = fail(&(golden_error){GOLDEN_EIO, "", "write failed"});
        } else if (golden_outfile_commit(f, &err) != 0)
            rc = fail(&err);
    }
    if (rc == 0 && arg.html && golden_html_ranges_report(doc, arg.html, force, &err) != 0)
        rc = fail(&err);
    if (rc == 0 && human)
        fputs(text, human);
    for (int i = 0; doms && i < nargs; i++)
        free(doms[i]);
    free(doms);
    free(in);
    free(text);
    free(js);
    json_decref(doc);
    return rc;
}

int main(int argc, char **argv)
{
    arg.outlier = GOLDEN_RANGES_DEFAULT_OUTLIER;
    cli c;
    the_cli = &c;
    if (cli_init(&c, &spec, argc, argv) != 0)
        return cli_exit(&c, 2);
    if (cli_parse(&c) == CLI_EXIT)
        return cli_exit(&c, c.status);
    dump_opts o = {.out = arg.out, .force = c.force, .gzip = (int)arg.gzip, .prefix = arg.prefix,
                   .name = arg.name, .json = c.json, .meta = arg.meta.v, .nmeta = arg.meta.n,
                   .retype = arg.retype.v, .nretype = arg.retype.n};
    const char *verify = arg.verify, *list = arg.list;
    golden_error err;
    golden_error_clear(&err);
    int rc = -1;
    int modes = (verify != NULL) + (list != NULL) + (o.out != NULL) + arg.ranges;
    if (modes != 1)
        rc = usage_error("give exactly one of -o OUT.h5, --verify FILE.h5, --list FILE.h5, "
                         "--ranges");
    else if (arg.ranges && (c.junit || c.nargs == 0))
        rc = usage_error(c.junit ? "--junit does not go with --ranges" : "--ranges needs a GOLDEN");
    else if ((arg.html || arg.outlier_set) && !arg.ranges)
        rc = usage_error(arg.html ? "--html goes with --ranges"
                                  : "--outlier-threshold goes with --ranges");
    else if (arg.ranges) {
        human = cli_human(&c);
        rc = do_ranges(&c, c.args, c.nargs, o.force);
    }
    else if (c.junit && !verify)
        rc = usage_error("--junit goes with --verify");
    else if ((verify || list) && c.nargs > 0)
        rc = usage_error("--verify and --list take no INPUT");
    else if (o.out && c.nargs == 0)
        rc = usage_error("no INPUT given");
    else if (o.out && golden_outfile_check_regular(o.out, o.force, &err) != GOLDEN_OK)
        rc = fail(&err);
    else if ((o.out && cli_add_output(&c, o.out)) || cli_outputs_ok(&c))
        rc = 2;
    if (rc < 0) {
        human = cli_human(&c);
        if (verify || list)
            rc = verify ? do_verify(verify, o.json, c.junit, o.force)
                        : do_list(list, o.json, o.force, true);
        else
            rc = do_dump(&o, c.args, c.nargs);
    }
    return cli_exit(&c, ranks_finish(rc));
}

/* dag-check: proves that conflicting buffer accesses across queues and chips are ordered, finds
 * idle syncs, checks memory plans for live aliases and diffs two compiled graphs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/cli.h"
#include "golden/dag.h"
#include "golden/graph.h"
#include "golden/html.h"
#include "golden/parse.h"
#include "golden/report.h"

#define TOOL "dag-check"

/* The library reads no environment: GOLDEN_GRAPH_STREAM_BYTES (files at least this big stream;
 * a size, units allowed) and GOLDEN_GRAPH_FAST_OPS=0 (stream without the fast op parser) are
 * read here, once, and a bad value is a usage error as a bad option is. */
static golden_graph_load_options env_load;

static int read_environment(cli *c)
{
    env_load = (golden_graph_load_options){GOLDEN_GRAPH_LOAD_OPTIONS_VERSION, -1, false, NULL};
    const char *e = getenv("GOLDEN_GRAPH_STREAM_BYTES");
    if (e && *e) {
        uint64_t v;
        golden_parse_status st = golden_parse_size(e, 1, 0, INT64_MAX, &v);
        if (st != GOLDEN_PARSE_OK)
            return cli_usage(c, "GOLDEN_GRAPH_STREAM_BYTES: expected a size in bytes (units K, M,"
                             " G), got '%s' (%s)", e, golden_parse_reason(st));
        env_load.stream_bytes = (int64_t)v;
    }
    e = getenv("GOLDEN_GRAPH_FAST_OPS");
    env_load.no_fast_ops = e && strcmp(e, "0") == 0;
    return 0;
}

static golden_graph_load_options load_options(golden_progress *progress)
{
    golden_graph_load_options o = env_load;
    o.progress = progress;
    return o;
}

/* What the check mode's options say (typed rows store here). */
static struct {
    bool all, redundant, timings;
    const char *baseline, *remove, *html;
    int64_t limit;
} arg = {.limit = 50};

/* The option tables (check mode, diff mode): parsing, range checks and --help come from them. */
static const cli_opt check_options[] = {
    CLI_OPT_FLAG(0, 0, "all", "list every racing pair (default: at least one pair for every\n"
                 "racing byte range)", &arg.all),
    CLI_OPT_STRING(0, 'b', "baseline", "BASE", "compare CANDIDATE with BASE (ops matched by id):\n"
                   "removed and moved syncs, new races and the syncs that used to order them",
                   CLI_INPUT, &arg.baseline),
    CLI_OPT_FLAG(0, 0, "redundant", "list idle syncs: implied by others, or ordering no\n"
                 "conflicting pair (each safe to remove on its own, not all at once)",
                 &arg.redundant),
    CLI_OPT_STRING(0, 0, "remove", "ID,...", "verify removing these syncs together (a wait or\n"
                   "barrier id, or OP:after:PRED for one `after` entry)", 0, &arg.remove),
    CLI_OPT_INT(0, 0, "limit", "N", "rows per table in the human report (default 50; 0: none;\n"
                "JSON has all)", &arg.limit, 0, INT64_MAX),
    CLI_OPT_FLAG(0, 0, "timings", "print seconds spent loading, checking and reporting to stderr",
                 &arg.timings),
    CLI_OPT_STRING(0, 0, "html", "FILE", "self-contained HTML report: the ops around each race on\n"
                   "per-chip swimlanes in happens-before order, syncs as arrows\n"
                   "(docs/reports.md)", CLI_OUTPUT, &arg.html),
    CLI_END,
};

static const cli_spec check_spec = {
    .name = TOOL,
    .synopsis = "[OPTIONS] GRAPH\n[OPTIONS] --baseline BASE CANDIDATE\n"
                "diff [OPTIONS] BASE CANDIDATE",
    .about = "Checks a calculet-graph/v1 dependency graph (JSON or YAML; - = stdin): structure,\n"
             "cycles (deadlocks), races between queues and chips, memory-plan aliases.\n"
             "`dag-check diff --help` describes the diff mode.",
    .opts = check_options,
    .json_help = "write the calculet-dag-report/v1 report (- = stdout)",
    .junit_help = "write JUnit XML, one test case per check (- = stdout)",
    .exit_status = "0 race-, alias- and cycle-free (with --baseline or --remove: nothing\n"
                   "new), 1 findings, 2 invalid input or usage.",
    .args_are_inputs = true,
    .commands = "diff",
};

static const cli_opt diff_options[] = {CLI_END};

static const cli_spec diff_spec = {
    .name = TOOL,
    .synopsis = "diff [OPTIONS] BASE CANDIDATE",
    .about = "Compares two compiled graphs: op counts per family, syncs, d2d commands and their\n"
             "static sizes, peak live bytes per chip (structural numbers, not measured traffic).",
    .opts = diff_options,
    .json_help = "write the comparison as JSON (- = stdout)",
    .junit_help = "accepted for uniformity; the diff makes no verdict, so none is written",
    .exit_status = "0 compared, 2 invalid input or usage.",
    .args_are_inputs = true,
};

/* ---- an aligned table ---- */
typedef struct {
    char **cells;
    size_t ncols, nrows, cap;
} table;

static int table_add(table *t, const char *const *row)
{
    if (t->nrows == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 16;
        char **nv = realloc(t->cells, nc * t->ncols * sizeof *nv);
        if (!nv)
            return -1;
        t->cells = nv;
        t->cap = nc;
    }
    for (size_t c = 0; c < t->ncols; c++)
        if (!(t->cells[t->nrows * t->ncols + c] = strdup(row[c] ? row[c] : ""))) {
            for (size_t k = 0; k < c; k++)
                free(t->cells[t->nrows * t->ncols + k]);
            return -1;
        }
    t->nrows++;
    return 0;
}

static void table_print(table *t, FILE *f, const char *indent)
{
    size_t w[16] = {0};
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols && c < 16; c++) {
            size_t l = strlen(t->cells[r * t->ncols + c]);
            if (l > w[c])
                w[c] = l;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        fputs(indent, f);
        size_t last = t->ncols;
        while (last > 1 && !t->cells[r * t->ncols + last - 1][0])
            last--; /* no padding after the last non-empty cell */
        for (size_t c = 0; c < last; c++) {
            const char *s = t->cells[r * t->ncols + c];
            if (c + 1 == last)
                fprintf(f, "%s\n", s);
            else
                fprintf(f, "%-*s  ", (int)w[c], s);
        }
    }
}

static void table_free(table *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

/* ---- human report ---- */
static const char *str_at(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static void join_sep(json_t *arr, const char *sep, char *buf, size_t n)
{
    buf[0] = '\0';
    for (size_t i = 0; i < json_array_size(arr); i++) {
        size_t l = strlen(buf);
        snprintf(buf + l, n - l, "%s%s", i ? sep : "", json_string_value(json_array_get(arr, i)));
    }
}

static void join_list(json_t *arr, char *buf, size_t n)
{
    join_sep(arr, ", ", buf, n);
}

static int print_report(json_t *rep, FILE *f, size_t limit)
{
    bool color = golden_use_color(f);
    const char *bold = golden_color(color, "bold"), *reset = golden_color(color, "reset");
    char buf[4096];
    fprintf(f, "%-9s %s\n", "graph", str_at(rep, "graph"));
    if (json_object_get(rep, "baseline"))
        fprintf(f, "%-9s %s\n", "baseline", str_at(rep, "baseline"));
    fprintf(f, "%-9s %lld ops, %lld queues, %lld accesses\n", "size",
            (long long)json_integer_value(json_object_get(rep, "ops")),
            (long long)json_integer_value(json_object_get(rep, "queues")),
            (long long)json_integer_value(json_object_get(rep, "accesses")));
    int rc = 0;
    json_t *cycles = json_object_get(rep, "cycles");
    for (size_t i = 0; i < json_array_size(cycles); i++) {
        json_t *c = json_array_get(cycles, i);
        join_sep(c, " -> ", buf, sizeof buf);
        fprintf(f, "\n%sCYCLE (deadlock)%s: %s -> %s\n", bold, reset, buf,
                json_string_value(json_array_get(c, 0)));
    }
    bool compared = json_object_get(rep, "new_races") != NULL;
    const char *lists[] = {"removed_syncs", "moved_syncs", "added_syncs"};
    const char *titles[] = {"REMOVED SYNCS", "MOVED SYNCS", "ADDED SYNCS"};
    for (int k = 0; compared && k < 3; k++) {
        json_t *l = json_object_get(rep, lists[k]);
        if (!json_array_size(l))
            continue;
        join_list(l, buf, sizeof buf);
        fprintf(f, "\n%s%s%s (%zu): %s\n", bold, titles[k], reset, json_array_size(l), buf);
    }
    json_t *races = json_object_get(rep, "races");
    if (json_array_size(races)) {
        size_t nnew = 0;
        for (size_t i = 0; i < json_array_size(races); i++)
            nnew += json_is_true(json_object_get(json_array_get(races, i), "new"));
        if (compared)
            fprintf(f, "\n%sRACES%s: %zu, %zu new\n", bold, reset, json_array_size(races), nnew);
        else
            fprintf(f, "\n%sRACES%s: %zu\n", bold, reset, json_array_size(races));
        table t = {.ncols = 8};
        const char *head[] = {"KIND", "A", "QUEUE A", "B", "QUEUE B", "BUFFER", "RANGE",
                              compared ? "NEW / EXPOSED BY" : ""};
        if (table_add(&t, head) != 0)
            rc = -1;
        size_t shown = 0;
        for (size_t i = 0; i < json_array_size(races) && shown < limit && rc == 0; i++) {
            json_t *r = json_array_get(races, i);
            char range[64], ex[1024] = "";
            snprintf(range, sizeof range, "[%lld, %lld)",
                     (long long)json_integer_value(json_array_get(json_object_get(r, "range"), 0)),
                     (long long)json_integer_value(json_array_get(json_object_get(r, "range"), 1)));
            if (compared) {
                char by[900];
                join_list(json_object_get(r, "exposed_by"), by, sizeof by);
                snprintf(ex, sizeof ex, "%s%s%s", json_is_true(json_object_get(r, "new")) ? "new" : "old",
                         by[0] ? ": " : "", by);
            }
            char bufname[512];
            snprintf(bufname, sizeof bufname, "%s%s%s", str_at(r, "buffer"),
                     json_object_get(r, "buffer_b") ? "/" : "", str_at(r, "buffer_b"));
            const char *row[] = {str_at(r, "kind"), str_at(r, "a"), str_at(r, "queue_a"),
                                 str_at(r, "b"), str_at(r, "queue_b"), bufname, range, ex};
            if (table_add(&t, row) != 0)
                rc = -1;
            shown++;
        }
        table_print(&t, f, "  ");
        table_free(&t);
        if (shown < json_array_size(races))
            fprintf(f, "  ... %zu more (all of them in --json)\n", json_array_size(races) - shown);
        fprintf(f, "  fix for the first: %s\n", str_at(json_array_get(races, 0), "hint"));
    }
    json_t *aliases = json_object_get(rep, "aliases");
    if (json_array_size(aliases)) {
        fprintf(f, "\n%sMEMORY-PLAN ALIASES%s: %zu\n", bold, reset, json_array_size(aliases));
        table t = {.ncols = 5};
        const char *head[] = {"A", "B", "BYTES", "ADDRESS", "WHY"};
        if (table_add(&t, head) != 0)
            rc = -1;
        for (size_t i = 0; i < json_array_size(aliases) && i < limit && rc == 0; i++) {
            json_t *a = json_array_get(aliases, i);
            char bytes[32], addr[64];
            snprintf(bytes, sizeof bytes, "%lld", (long long)json_integer_value(json_object_get(a, "bytes")));
            snprintf(addr, sizeof addr, "[%lld, %lld)",
                     (long long)json_integer_value(json_array_get(json_object_get(a, "address"), 0)),
                     (long long)json_integer_value(json_array_get(json_object_get(a, "address"), 1)));
            const char *row[] = {str_at(a, "a"), str_at(a, "b"), bytes, addr, str_at(a, "reason")};
            if (table_add(&t, row) != 0)
                rc = -1;
        }
        table_print(&t, f, "  ");
        table_free(&t);
        if (json_array_size(aliases) > limit)
            fprintf(f, "  ... %zu more (all of them in --json)\n", json_array_size(aliases) - limit);
    }
    json_t *idle = json_object_get(rep, "redundant_syncs");
    if (json_object_get(rep, "redundant_note")) {
        fprintf(f, "\n%sIDLE SYNCS%s: %zu\n", bold, reset, json_array_size(idle));
        table t = {.ncols = 3};
        const char *head[] = {"SYNC", "KIND", "WHY"};
        if (table_add(&t, head) != 0)
            rc = -1;
        for (size_t i = 0; i < json_array_size(idle) && i < limit && rc == 0; i++) {
            json_t *s = json_array_get(idle, i);
            const char *why = strcmp(str_at(s, "reason"), "implied") == 0
                                  ? "implied by other syncs"
                                  : "orders no conflicting pair";
            const char *row[] = {str_at(s, "sync"), str_at(s, "kind"), why};
            if (table_add(&t, row) != 0)
                rc = -1;
        }
        table_print(&t, f, "  ");
        table_free(&t);
        if (json_array_size(idle) > limit)
            fprintf(f, "  ... %zu more (all of them in --json)\n", json_array_size(idle) - limit);
        fprintf(f, "  note: %s\n", str_at(rep, "redundant_note"));
    }
    bool pass = strcmp(str_at(rep, "verdict"), "pass") == 0;
    fprintf(f, "\nverdict: %s%s%s", golden_color(color, pass ? "green" : "red"),
            pass ? "PASS" : "FAIL", reset);
    if (compared)
        fprintf(f, " (%lld new races, %lld new aliases, %zu cycles)\n",
                (long long)json_integer_value(json_object_get(rep, "new_races")),
                (long long)json_integer_value(json_object_get(rep, "new_aliases")),
                json_array_size(cycles));
    else
        fprintf(f, " (%zu races, %zu aliases, %zu cycles)\n", json_array_size(races),
                json_array_size(aliases), json_array_size(cycles));
    return rc;
}

/* One test case per check; the load time goes to "structure", the check time is shared by the
 * checks it covered (one pass finds cycles, races and aliases together). */
static int write_junit(const char *path, bool force, json_t *rep, double t_load, double t_check,
                       golden_error *err)
{
    json_t *races = json_object_get(rep, "races"), *aliases = json_object_get(rep, "aliases");
    json_t *cycles = json_object_get(rep, "cycles");
    bool compared = json_object_get(rep, "new_races") != NULL;
    size_t nr = 0, na = 0;
    for (size_t i = 0; i < json_array_size(races); i++)
        nr += !compared || json_is_true(json_object_get(json_array_get(races, i), "new"));
    for (size_t i = 0; i < json_array_size(aliases); i++)
        na += !compared || json_is_true(json_object_get(json_array_get(aliases, i), "new"));
    char m1[1024] = "", m2[1024] = "", m3[1024] = "";
    json_t *r0 = NULL;
    for (size_t i = 0; i < json_array_size(races) && !r0; i++)
        if (!compared || json_is_true(json_object_get(json_array_get(races, i), "new")))
            r0 = json_array_get(races, i);
    if (r0)
        snprintf(m1, sizeof m1, "%zu race(s); first: %s %s (%s) / %s (%s) on %s; fix: %s", nr,
                 str_at(r0, "kind"), str_at(r0, "a"), str_at(r0, "queue_a"), str_at(r0, "b"),
                 str_at(r0, "queue_b"), str_at(r0, "buffer"), str_at(r0, "hint"));
    if (json_array_size(cycles)) {
        join_sep(json_array_get(cycles, 0), " -> ", m2, sizeof m2 - 16);
        strcat(m2, " (deadlock)");
    }
    json_t *a0 = NULL;
    for (size_t i = 0; i < json_array_size(aliases) && !a0; i++)
        if (!compared || json_is_true(json_object_get(json_array_get(aliases, i), "new")))
            a0 = json_array_get(aliases, i);
    if (a0)
        snprintf(m3, sizeof m3, "%zu alias(es); first: %s / %s: %s", na, str_at(a0, "a"),
                 str_at(a0, "b"), str_at(a0, "reason"));
    golden_junit_case cases[] = {
        {TOOL, "structure", false, false, NULL, NULL, t_load},
        {TOOL, "cycles", m2[0] != 0, false, m2[0] ? m2 : NULL, NULL, t_check / 3},
        {TOOL, compared ? "new races" : "races", r0 != NULL, json_array_size(cycles) > 0,
         r0 ? m1 : (json_array_size(cycles) ? "not checked: the graph has a cycle" : NULL), NULL,
         t_check / 3},
        {TOOL, compared ? "new memory-plan aliases" : "memory-plan aliases", a0 != NULL,
         json_array_size(cycles) > 0,
         a0 ? m3 : (json_array_size(cycles) ? "not checked: the graph has a cycle" : NULL), NULL,
         t_check / 3}};
    return golden_junit_write(path, force, str_at(rep, "graph"), cases, 4, err);
}

/* ---- diff ---- */
static int print_diff(json_t *doc, FILE *f)
{
    json_t *d = json_object_get(doc, "diff");
    json_t *b = json_object_get(d, "baseline"), *c = json_object_get(d, "candidate");
    fprintf(f, "%-9s %s\n%-9s %s\n\n", "baseline", str_at(doc, "baseline"), "candidate",
            str_at(doc, "graph"));
    table t = {.ncols = 4};
    int rc = 0;
    const char *head[] = {"", "BASELINE", "CANDIDATE", "DELTA"};
    rc |= table_add(&t, head);
    char x[3][64];
#define ROW(label, bv, cv)                                                                     \
    do {                                                                                       \
        long long b_ = (bv), c_ = (cv);                                                        \
        snprintf(x[0], 64, "%lld", b_);                                                        \
        snprintf(x[1], 64, "%lld", c_);                                                        \
        snprintf(x[2], 64, "%+lld", c_ - b_);                                                  \
        const char *row_[] = {(label), x[0], x[1], x[2]};                                      \
        rc |= table_add(&t, row_);                                                             \
    } while (0)
    ROW("ops", json_integer_value(json_object_get(b, "ops")), json_integer_value(json_object_get(c, "ops")));
    json_t *fam = json_object_get(json_object_get(d, "delta"), "families");
    for (size_t i = 0; i < json_array_size(fam); i++) {
        json_t *e = json_array_get(fam, i);
        char label[256];
        snprintf(label, sizeof label, "  %s", str_at(e, "family"));
        ROW(label, json_integer_value(json_object_get(e, "baseline")),
            json_integer_value(json_object_get(e, "candidate")));
    }
    static const char *sk[] = {"signal", "wait", "barrier", "after"};
    for (int i = 0; i < 4; i++) {
        char label[64];
        snprintf(label, sizeof label, "syncs: %s", sk[i]);
        ROW(label, json_integer_value(json_object_get(json_object_get(b, "syncs"), sk[i])),
            json_integer_value(json_object_get(json_object_get(c, "syncs"), sk[i])));
    }
    ROW("d2d commands", json_integer_value(json_object_get(json_object_get(b, "d2d"), "commands")),
        json_integer_value(json_object_get(json_object_get(c, "d2d"), "commands")));
    ROW("data_size sum (structural, not traffic)",
        json_integer_value(json_object_get(b, "data_size_sum_structural")),
        json_integer_value(json_object_get(c, "data_size_sum_structural")));
    json_t *pb = json_object_get(b, "peak_live_bytes"), *pc = json_object_get(c, "peak_live_bytes");
    for (size_t i = 0; i < json_array_size(pc); i++) {
        json_t *e = json_array_get(pc, i);
        long long chip = json_integer_value(json_object_get(e, "chip")), bv = 0;
        for (size_t k = 0; k < json_array_size(pb); k++)
            if (json_integer_value(json_object_get(json_array_get(pb, k), "chip")) == chip)
                bv = json_integer_value(json_object_get(json_array_get(pb, k), "bytes"));
        char label[64];
        snprintf(label, sizeof label, "peak live bytes, chip %lld", chip);
        ROW(label, bv, json_integer_value(json_object_get(e, "bytes")));
    }
#undef ROW
    table_print(&t, f, "");
    table_free(&t);
    json_t *hist[2] = {json_object_get(json_object_get(b, "d2d"), "size_histogram"),
                       json_object_get(json_object_get(c, "d2d"), "size_histogram")};
    fprintf(f, "\nd2d size histogram (static sizes):");
    static const char *bk[] = {"<=1KiB", "<=4KiB", "<=16KiB", "<=64KiB", "<=256KiB", "<=1MiB", ">1MiB"};
    for (int i = 0; i < 7; i++) {
        long long v0 = json_integer_value(json_object_get(hist[0], bk[i]));
        long long v1 = json_integer_value(json_object_get(hist[1], bk[i]));
        if (v0 || v1)
            fprintf(f, "  %s %lld -> %lld", bk[i], v0, v1);
    }
    fprintf(f, "\nnote: %s\n", str_at(d, "note"));
    return rc ? -1 : 0;
}

static int run_diff(int argc, char **argv)
{
    cli c;
    if (cli_init(&c, &diff_spec, argc, argv) != 0)
        return cli_exit(&c, 2);
    if (cli_parse(&c) == CLI_EXIT)
        return cli_exit(&c, c.status);
    if (read_environment(&c) != 0)
        return cli_exit(&c, 2);
    if (c.nargs != 2)
        return cli_exit(&c, cli_usage(&c, "diff needs BASE and CANDIDATE"));
    if (c.junit)
        return cli_exit(&c, cli_usage(&c, "diff makes no verdict: --junit does not apply"));
    if (cli_outputs_ok(&c) != 0)
        return cli_exit(&c, 2);
    const char *json_path = c.json;
    bool force = c.force;
    char **args = c.args;
    golden_error err;
    golden_error_clear(&err);
    golden_graph *g[2] = {NULL, NULL};
    json_t *st[2] = {NULL, NULL};
    int rc = 2;
    for (int i = 0; i < 2; i++) {
        golden_graph_load_options lo = load_options(NULL);
        if (golden_graph_load_file_opts(args[i], &lo, &g[i], &err) != 0)
            goto out;
        st[i] = golden_dag_stats(g[i]);
        if (!st[i]) {
            golden_fail_what(&err, GOLDEN_ENOMEM, args[i], "out of memory");
            goto out;
        }
    }
    json_t *doc = golden_dag_diff_json(args[0], st[0], args[1], st[1]);
    if (!doc) {
        golden_fail_what(&err, GOLDEN_ENOMEM, NULL, "out of memory");
        goto out;
    }
    if (json_path && golden_json_write(json_path, doc, force, &err) != 0) {
        json_decref(doc);
        goto out;
    }
    FILE *human = cli_human(&c);
    if (human && print_diff(doc, human) != 0) {
        json_decref(doc);
        golden_fail_what(&err, GOLDEN_ENOMEM, NULL, "out of memory");
        goto out;
    }
    json_decref(doc);
    rc = 0;
out:
    if (rc == 2)
        cli_fail(&c, &err);
    for (int i = 0; i < 2; i++) {
        json_decref(st[i]);
        golden_graph_free(g[i]);
    }
    return cli_exit(&c, rc);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "diff") == 0)
        return run_diff(argc - 1, argv + 1);
    cli c;
    if (cli_init(&c, &check_spec, argc, argv) != 0)
        return cli_exit(&c, 2);
    if (cli_parse(&c) == CLI_EXIT)
        return cli_exit(&c, c.status);
    if (read_environment(&c) != 0)
        return cli_exit(&c, 2);
    bool all = arg.all, redundant = arg.redundant, timings = arg.timings;
    const char *baseline = arg.baseline, *remove = arg.remove, *html_path = arg.html;
    size_t limit = arg.limit > (int64_t)(SIZE_MAX >> 1) ? SIZE_MAX >> 1 : (size_t)arg.limit;
    if (c.nargs != 1)
        return cli_exit(&c, cli_usage(&c, "%s", baseline ? "--baseline BASE needs one CANDIDATE graph"
                                                          : "needs one GRAPH"));
    if ((baseline || redundant) && remove)
        return cli_exit(&c, cli_usage(&c, "--remove verifies one set on its own; it does not "
                                          "combine with --baseline or --redundant"));
    if (baseline && strcmp(baseline, "-") == 0 && strcmp(c.args[0], "-") == 0)
        return cli_exit(&c, cli_usage(&c, "standard input can be read once: BASE and CANDIDATE "
                                          "cannot both be '-'"));
    if (cli_outputs_ok(&c) != 0)
        return cli_exit(&c, 2);
    const char *path = c.args[0], *json_path = c.json, *junit_path = c.junit;
    bool force = c.force;
    golden_error err;
    golden_error_clear(&err);
    int rc = 2;
    golden_graph *g = NULL, *bg = NULL;
    golden_dag_result r, br, cr;
    memset(&r, 0, sizeof r);
    memset(&br, 0, sizeof br);
    memset(&cr, 0, sizeof cr);
    golden_sync *set = NULL;
    size_t nset = 0;
    json_t *rep = NULL;
    const golden_dag_result *shown = &r;
    const char *mode = "check";
    double t0 = golden_seconds();
    golden_progress prog;
    golden_progress_start(&prog, "loading graph", 0);
    golden_graph_load_options lo = load_options(&prog);
    int lrc = golden_graph_load_file_opts(path, &lo, &g, &err);
    golden_progress_end(&prog);
    if (lrc != 0)
        goto out;
    double t1 = golden_seconds();
    if (baseline) {
        mode = "baseline";
        golden_graph_load_options blo = load_options(NULL);
        if (golden_graph_load_file_opts(baseline, &blo, &bg, &err) != 0 ||
            golden_dag_check(bg, NULL, all, &br, &err) != 0)
            goto out;
        if (br.cyclic) {
            golden_fail_what(&err, GOLDEN_EINVAL, baseline, "the baseline has a cycle (%s ...); it cannot be compared",
                        bg->ops[golden_dag_cycle(&br, NULL)[0]].id);
            goto out;
        }
        /* a baseline with races needs every candidate pair, or a new one could hide */
        if (golden_dag_check(g, NULL, all || br.nraces > 0, &r, &err) != 0 ||
            golden_dag_compare(&br, &r, &err) != 0)
            goto out;
    } else {
        if (golden_dag_check(g, NULL, all, &r, &err) != 0)
            goto out;
        if (remove) {
            mode = "remove";
            if (golden_dag_parse_syncs(g, remove, &set, &nset, &err) != 0 ||
                golden_dag_verify_removal(&r, set, nset, &cr, &err) != 0)
                goto out;
            shown = &cr;
        }
    }
    if (redundant && !r.cyclic) {
        golden_progress_start(&prog, "idle syncs", 0);
        int rrc = golden_dag_redundant(&r, golden_threads(), &prog, &err);
        golden_progress_end(&prog);
        if (rrc != 0)
            goto out;
    }
    double t2 = golden_seconds();
    rep = golden_dag_report_json(shown, path, baseline, mode);
    if (!rep) {
        golden_fail_what(&err, GOLDEN_ENOMEM, NULL, "out of memory building the report");
        goto out;
    }
    if (json_path && golden_json_write(json_path, rep, force, &err) != 0)
        goto out;
    if (junit_path && write_junit(junit_path, force, rep, t1 - t0, t2 - t1, &err) != 0)
        goto out;
    if (html_path && golden_html_dag_report(rep, shown, html_path, force, &err) != 0)
        goto out;
    FILE *human = cli_human(&c);
    if (human && print_report(rep, human, limit) != 0) {
        golden_fail_what(&err, GOLDEN_ENOMEM, NULL, "out of memory printing the report");
        goto out;
    }
    rc = golden_dag_passed(shown) ? 0 : 1;
    if (timings)
        fprintf(stderr, TOOL ": timings: load %.3f s, check %.3f s, report %.3f s\n", t1 - t0,
                t2 - t1, golden_seconds() - t2);
out:
    if (rc == 2)
        cli_fail(&c, &err);
    json_decref(rep);
    free(set);
    golden_dag_result_free(&cr);
    golden_dag_result_free(&r);
    golden_dag_result_free(&br);
    golden_graph_free(g);
    golden_graph_free(bg);
    return cli_exit(&c, rc);
}

/* The command-line layer: parsing driven by each tool's option table (GNU style: permuted
 * operands, "--", --long=value, -abc clusters, unique long prefixes), --help from the same table. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "golden/report.h"
#include "scratch.h"
#include "golden/doc.h"
#include "golden/parse.h"
#include "util/guard.h"
#include "util/strmap.h"
#include "util/suggest.h"
#include "util/vec.h"

#define COMMON(ID, SH, NAME, ARG, HELP, FLAGS)                                                    \
    {.id = ID, .short_name = SH, .long_name = NAME, .arg = ARG, .help = HELP, .flags = FLAGS}
static const cli_opt common_rows[] = {
    COMMON(CLI_THREADS, 'j', "threads", "N", "worker threads, 1 to 256 (default: GOLDEN_THREADS,\n"
                                             "else every online core)", 0),
    COMMON(CLI_QUIET, 'q', "quiet", NULL, "no human report; the exit status says it", 0),
    COMMON(CLI_JSON, 0, "json", "FILE", "write the machine-readable report (- = stdout)",
           CLI_OUTPUT),
    COMMON(CLI_JUNIT, 0, "junit", "FILE", "write JUnit XML, one test case per check (- = stdout)",
           CLI_OUTPUT),
    COMMON(CLI_FORCE, 'f', "force", NULL, "replace existing regular output files (never an input,\n"
                                          "never a device or FIFO: those are written directly)", 0),
    COMMON(CLI_HELP, 'h', "help", NULL, "print this help and exit", 0),
    COMMON(CLI_VERSION, 'V', "version", NULL, "print the version and exit", 0),
    CLI_END,
};

static bool row_end(const cli_opt *o) { return !o->long_name && !o->help; }
static bool row_heading(const cli_opt *o) { return !o->long_name && o->help; }
/* A row takes a value: untyped rows when they name one, typed rows unless a flag. */
static bool takes_value(const cli_opt *o)
{
    return o->type == CLI_UNTYPED ? o->arg != NULL : o->type != CLI_FLAG;
}

/* The value's name in --help and messages: the row's, else one from its type. */
static const char *arg_name(const cli_opt *o, char *buf, size_t n)
{
    if (o->arg)
        return o->arg;
    switch (o->type) {
    case CLI_INT:
    case CLI_UINT: return "N";
    case CLI_REAL: return "X";
    case CLI_SIZE: return "SIZE";
    case CLI_DURATION: return "TIME";
    case CLI_LIST: return "LIST";
    case CLI_CHOICE: {
        size_t at = 0;
        buf[0] = '\0';
        for (size_t k = 0; o->choices && o->choices[k] && at < n; k++)
            at += (size_t)snprintf(buf + at, n - at, "%s%s", k ? "|" : "", o->choices[k]);
        return buf;
    }
    default: return "VALUE";
    }
}

/* ------------------------------------------------------------------ setup */

static void on_terminate(int sig)
{
    scratch_on_signal(); /* a rank's scratch folders (npu-replay run on ranks) */
    lg_guard_unlink_temps();
    /* SA_RESETHAND restored the default action; the signal is blocked until we return, and
     * then kills us, so the parent sees the conventional "killed by SIGINT" status */
    raise(sig);
}

static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_terminate;
    sa.sa_flags = (int)SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        /* a signal ignored by whoever started us (nohup, a shell's background job) stays so */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sigs[i], &sa, NULL);
    }
}

static int parse_threads(const char *s, int *out)
{
    int64_t v;
    if (golden_parse_int(s, 1, 256, &v) != GOLDEN_PARSE_OK)
        return -1;
    *out = (int)v;
    return 0;
}

static int configure(cli *c)
{
    golden_settings s = {.version = GOLDEN_SETTINGS_VERSION};
    const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");
    s.no_color = (nc && *nc) || (term && strcmp(term, "dumb") == 0);
    s.threads = c->threads;
    s.started_monotonic = golden_seconds();
    s.started_wall = time(NULL);
    golden_error err;
    golden_error_clear(&err);
    if (golden_configure(&s, &err) != GOLDEN_OK)
        return cli_fail(c, &err);
    return 0;
}

/* A copy of spec->opts with its end row (the parse marks rows as it goes). */
static cli_opt *copy_rows(const cli_spec *spec)
{
    size_t n = 0;
    for (const cli_opt *o = spec->opts; o && !row_end(o); o++)
        n++;
    cli_opt *rows = calloc(n + 1, sizeof *rows);
    if (rows && n)
        memcpy(rows, spec->opts, n * sizeof *rows);
    return rows;
}

int cli_init(cli *c, const cli_spec *spec, int argc, char **argv)
{
    memset(c, 0, sizeof *c);
    c->spec = spec;
    c->argc = argc;
    c->argv = argv;
    c->at = 1;
    c->rows = copy_rows(spec);
    c->args = calloc((size_t)(argc > 0 ? argc : 1), sizeof *c->args);
    lg_guard_install(spec->name);
    const char *timeout = getenv("GOLDEN_HDF5_TIMEOUT"); /* the library reads no environment */
    int64_t seconds = 0;
    bool bad_timeout = timeout && *timeout &&
                       golden_parse_int(timeout, 0, INT64_MAX, &seconds) != GOLDEN_PARSE_OK;
    if (!bad_timeout && seconds > 0)
        lg_guard_set_hdf5_timeout(seconds);
    /* Each tool is one short-lived process: big documents load 1.4x faster from the arena
     * (docs/documents.md); a program that embeds libgolden chooses for itself. */
    golden_doc_use_arena_allocator();
    install_signals();
    if (!c->args || !c->rows) {
        fprintf(stderr, "%s: out of memory\n", spec->name);
        return 2;
    }
    if (bad_timeout)
        return cli_usage(c, "GOLDEN_HDF5_TIMEOUT: expected whole seconds >= 0 (0: the default), "
                            "got '%s'", timeout);
    const char *env = getenv("GOLDEN_THREADS");
    if (env && *env && parse_threads(env, &c->threads) != 0)
        return cli_usage(c, "GOLDEN_THREADS: expected an integer from 1 to 256, got '%s'", env);
    return configure(c);
}

/* ------------------------------------------------------------------ messages */

static void put_line_escaped(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\x%02x", *p);
        else
            fputc(*p, f);
}

/* The text of the error line, for the JUnit error case of cli_exit (cut to fit). */
__attribute__((format(printf, 2, 3))) static void set_problem(cli *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->problem, sizeof c->problem, fmt, ap);
    va_end(ap);
}

int cli_usage(cli *c, const char *fmt, ...)
{
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: usage: ", c->spec->name);
    put_line_escaped(stderr, what); /* an argument may hold a newline: still one line */
    set_problem(c, "usage: %s", what);
    c->junit_refused = c->junit_refused || strstr(what, "--junit") != NULL;
    fprintf(stderr, " (see %s --help)\n", c->spec->name);
    c->status = 2;
    c->reported = true;
    return 2;
}

int cli_fail(cli *c, const golden_error *err)
{
    golden_error_print(stderr, c->spec->name, err);
    set_problem(c, "%s%s%s", err->where, err->where[0] ? ": " : "", err->what);
    c->status = 2;
    c->reported = true;
    return 2;
}

/* ------------------------------------------------------------------ help */

static void help_rows(FILE *f, const cli_opt *rows, const cli_spec *spec)
{
    for (const cli_opt *o = rows; !row_end(o); o++) {
        if (row_heading(o)) {
            fprintf(f, "%s\n", o->help);
            continue;
        }
        char left[64], an[48];
        const char *arg = takes_value(o) ? arg_name(o, an, sizeof an) : NULL;
        snprintf(left, sizeof left, "%c%c%c --%s%s%s", o->short_name ? '-' : ' ',
                 o->short_name ? o->short_name : ' ', o->short_name ? ',' : ' ', o->long_name,
                 arg ? " " : "", arg ? arg : "");
        const char *help = o->help;
        if (o->id == CLI_JSON && spec->json_help)
            help = spec->json_help;
        if (o->id == CLI_JUNIT && spec->junit_help)
            help = spec->junit_help;
        /* the help starts in column 25, at least two spaces after the option; an option
         * that reaches column 23 gets a line of its own */
        if (strlen(left) > 20)
            fprintf(f, "  %s\n  %-22s", left, "");
        else
            fprintf(f, "  %-22s", left);
        for (const char *p = help; *p; p++) {
            fputc(*p, f);
            if (*p == '\n')
                fprintf(f, "  %-22s", "");
        }
        char range[256];
        if (cli_describe(o, range, sizeof range))
            fprintf(f, "\n  %-22s(%s)", "", range); /* the range the parser checks */
        fputc('\n', f);
    }
}

void cli_help(const cli *c, FILE *f)
{
    const cli_spec *s = c->spec;
    fprintf(f, "usage: %s ", s->name);
    for (const char *p = s->synopsis; *p; p++) {
        fputc(*p, f);
        if (*p == '\n')
            fprintf(f, "       %s ", s->name);
    }
    fprintf(f, "\n\n%s\n\n", s->about);
    if (c->rows)
        help_rows(f, c->rows, s);
    fprintf(f, "\nCommon options (the same in every libgolden tool):\n");
    help_rows(f, common_rows, s);
    fprintf(f, "\nExit status: %s\n", s->exit_status);
}

/* ------------------------------------------------------------------ parsing */

static int list_add(cli_list *l, const char *v)
{
    if (VEC_GROW(l->v, l->n, l->cap, 8) != 0)
        return -1;
    l->v[l->n++] = v;
    return 0;
}

int cli_add_input(cli *c, const char *path)
{
    if (list_add(&c->inputs, path) != 0) {
        fprintf(stderr, "%s: out of memory\n", c->spec->name);
        return 2;
    }
    return 0;
}

int cli_add_output(cli *c, const char *path)
{
    if (list_add(&c->outputs, path) != 0) {
        fprintf(stderr, "%s: out of memory\n", c->spec->name);
        return 2;
    }
    return 0;
}

/* The row for --name (exact, else a unique prefix) or -x; *ambiguous when two prefixes match. */
static const cli_opt *find_long(const cli_opt *const tables[2], const char *name,
                                   size_t len, bool *ambiguous)
{
    const cli_opt *hit = NULL;
    int hits = 0;
    *ambiguous = false;
    for (int t = 0; t < 2; t++)
        for (const cli_opt *o = tables[t]; !row_end(o); o++) {
            if (!o->long_name || strncmp(o->long_name, name, len) != 0)
                continue;
            if (strlen(o->long_name) == len)
                return o;
            hit = o;
            hits++;
        }
    *ambiguous = hits > 1;
    return hits == 1 ? hit : NULL;
}

static const cli_opt *find_short(const cli_opt *const tables[2], char ch)
{
    for (int t = 0; t < 2; t++)
        for (const cli_opt *o = tables[t]; !row_end(o); o++)
            if (o->long_name && o->short_name == ch)
                return o;
    return NULL;
}

/* A common option: handled here. Returns 0 to go on, CLI_EXIT to stop. */
/* spec->commands: the first argument, when it is an operand, must be a subcommand (the tool
 * dispatched those already, so it is not one) or an existing input. 0, or CLI_EXIT (printed). */
static int first_operand_ok(cli *c)
{
    const char *a = c->argc > 1 ? c->argv[1] : NULL;
    if (!c->spec->commands || !a || a[0] == '-' || access(a, F_OK) == 0)
        return 0;
    cli_usage(c, "'%s' is neither a subcommand (%s) nor a file", a, c->spec->commands);
    return CLI_EXIT;
}

static int take_common(cli *c, const cli_opt *o, const char *value)
{
    if ((o->id == CLI_HELP || o->id == CLI_VERSION) && c->defer) {
        if (!c->deferred)
            c->deferred = o->id;
        return 0;
    }
    switch (o->id) {
    case CLI_HELP:
        if (first_operand_ok(c) != 0)
            return CLI_EXIT;
        cli_help(c, stdout);
        c->status = 0;
        return CLI_EXIT;
    case CLI_VERSION:
        printf("%s %s\n", c->spec->name, GOLDEN_VERSION);
        c->status = 0;
        return CLI_EXIT;
    case CLI_QUIET: c->quiet = true; return 0;
    case CLI_FORCE: c->force = true; return 0;
    case CLI_JSON: c->json = value; return 0;
    case CLI_JUNIT: c->junit = value; return 0;
    case CLI_THREADS:
        if (parse_threads(value, &c->threads) != 0) {
            cli_usage(c, "--threads: expected an integer from 1 to 256, got '%s'", value);
            return CLI_EXIT;
        }
        return configure(c) ? CLI_EXIT : 0;
    default: return 0;
    }
}

/* ------------------------------------------------------------------ typed rows */

/* A size for messages: exact, with the largest unit that divides it ("64M", "0", "3"). */
static void size_text(uint64_t v, char *buf, size_t n)
{
    static const char *const units[] = {"", "K", "M", "G", "T"};
    int u = 0;
    while (u < 4 && v && v % 1024 == 0)
        v /= 1024, u++;
    snprintf(buf, n, "%llu%s", (unsigned long long)v, units[u]);
}

static void join_choices(const char *const *ch, char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t k = 0; ch && ch[k] && at < n; k++)
        at += (size_t)snprintf(buf + at, n - at, "%s%s", k ? ", " : "", ch[k]);
}

bool cli_describe(const cli_opt *o, char *buf, size_t n)
{
    char a[32], b[32], list[200];
    switch (o->type) {
    case CLI_INT:
        if (o->imax == INT64_MAX)
            snprintf(buf, n, "an integer >= %lld", (long long)o->imin);
        else
            snprintf(buf, n, "an integer from %lld to %lld", (long long)o->imin,
                     (long long)o->imax);
        return true;
    case CLI_UINT:
        snprintf(buf, n, "an integer from %llu to %llu", (unsigned long long)o->umin,
                 (unsigned long long)o->umax);
        return true;
    case CLI_REAL:
        if (o->fmax == INFINITY)
            snprintf(buf, n, "a number >= %g", o->fmin);
        else
            snprintf(buf, n, "a number from %g to %g", o->fmin, o->fmax);
        return true;
    case CLI_SIZE:
        size_text(o->umin, a, sizeof a);
        size_text(o->umax, b, sizeof b);
        if (o->unit > 1)
            size_text((uint64_t)o->unit, list, sizeof list);
        char range[80];
        if (o->umax == UINT64_MAX)
            snprintf(range, sizeof range, "of at least %s", a);
        else
            snprintf(range, sizeof range, "from %s to %s", a, b);
        snprintf(buf, n, "a size %s; units B, K, M, G, T (KiB, ...: powers of 1024), "
                 "a bare number is %s%s", range, o->unit > 1 ? list : "bytes",
                 o->unit > 1 ? " bytes" : "");
        return true;
    case CLI_DURATION:
        snprintf(buf, n, "a duration from %gs to %gs; units ns, us, ms, s, min, h, a bare "
                 "number is %gs", o->fmin, o->fmax, o->unit > 0 ? o->unit : 1);
        return true;
    case CLI_CHOICE:
        join_choices(o->choices, list, sizeof list);
        snprintf(buf, n, "one of %s", list);
        return true;
    case CLI_LIST:
        if (!o->choices && !o->split)
            return false;
        join_choices(o->choices, list, sizeof list);
        snprintf(buf, n, "%s%s%s", o->split ? "comma-separated" : "repeatable",
                 o->choices ? ", each one of " : "", o->choices ? list : "");
        return true;
    default: return false;
    }
}

/* One usage line for a refused value: "--NAME: expected WHAT, got 'V'" and why, unless the
 * range says it. */
static int refuse(cli *c, const cli_opt *o, const char *value, golden_parse_status st)
{
    char what[400];
    cli_describe(o, what, sizeof what);
    if (st == GOLDEN_PARSE_RANGE || st == GOLDEN_PARSE_OK)
        return cli_usage(c, "--%s: expected %s, got '%s'", o->long_name, what, value);
    return cli_usage(c, "--%s: expected %s, got '%s' (%s)", o->long_name, what, value,
                     golden_parse_reason(st));
}

static int choice_index(const char *const *ch, const char *v, size_t len)
{
    for (int k = 0; ch && ch[k]; k++)
        if (strlen(ch[k]) == len && strncmp(ch[k], v, len) == 0)
            return k;
    return -1;
}

/* One item of a list row: checked against its choices, kept (copied when split). */
static int list_item(cli *c, const cli_opt *o, const char *v, size_t len, bool copy,
                     const char *whole)
{
    if (len == 0)
        return cli_usage(c, "--%s: an empty item in '%s'", o->long_name, whole);
    if (o->choices && choice_index(o->choices, v, len) < 0) {
        char list[200];
        join_choices(o->choices, list, sizeof list);
        return cli_usage(c, "--%s: '%.*s' is not one of %s (in '%s')", o->long_name, (int)len, v,
                         list, whole);
    }
    const char *item = v;
    if (copy) {
        char *dup = strndup(v, len);
        if (!dup || list_add(&c->owned, dup) != 0) {
            free(dup);
            return cli_usage(c, "out of memory");
        }
        item = dup;
    }
    if (list_add((cli_list *)o->dest, item) != 0)
        return cli_usage(c, "out of memory");
    return 0;
}

/* Parse, check and store a typed row's value. 0, or 2 (a usage error, printed). */
static int take_typed(cli *c, const cli_opt *o, const char *v)
{
    golden_parse_status st = GOLDEN_PARSE_OK;
    switch (o->type) {
    case CLI_FLAG: *(bool *)o->dest = true; break;
    case CLI_STRING: *(const char **)o->dest = v; break;
    case CLI_INT: st = golden_parse_int(v, o->imin, o->imax, (int64_t *)o->dest); break;
    case CLI_UINT: st = golden_parse_uint(v, o->umin, o->umax, (uint64_t *)o->dest); break;
    case CLI_REAL: st = golden_parse_real(v, o->fmin, o->fmax, (double *)o->dest); break;
    case CLI_SIZE:
        st = golden_parse_size(v, o->unit > 1 ? (uint64_t)o->unit : 1, o->umin, o->umax,
                               (uint64_t *)o->dest);
        break;
    case CLI_DURATION:
        st = golden_parse_duration(v, o->unit > 0 ? o->unit : 1, o->fmin, o->fmax,
                                   (double *)o->dest);
        break;
    case CLI_CHOICE: {
        int k = choice_index(o->choices, v, strlen(v));
        if (k < 0)
            return refuse(c, o, v, GOLDEN_PARSE_RANGE);
        *(int *)o->dest = k;
        break;
    }
    case CLI_LIST:
        if (!o->split)
            return list_item(c, o, v, strlen(v), false, v);
        for (const char *p = v;; ) {
            const char *comma = strchr(p, ',');
            size_t len = comma ? (size_t)(comma - p) : strlen(p);
            if (list_item(c, o, p, len, true, v) != 0)
                return 2;
            if (!comma)
                break;
            p = comma + 1;
        }
        break;
    default: break;
    }
    if (st != GOLDEN_PARSE_OK)
        return refuse(c, o, v, st);
    if (o->given)
        *o->given = true;
    return 0;
}

int cli_parse(cli *c)
{
    const char *v;
    int id;
    while ((id = cli_next(c, &v)) > 0)
        ;
    return id;
}

void cli_list_free(cli_list *l)
{
    free(l->v);
    *l = (cli_list){0};
}

/* Deliver option o with value (NULL for a flag). */
static int deliver(cli *c, const cli_opt *o, const char *value, const char **out)
{
    bool tool_row = o->id >= CLI_TOOL_ID || o->id == 0;
    if (o->type != CLI_UNTYPED && take_typed(c, o, value) != 0)
        return CLI_EXIT;
    if ((o->flags & CLI_INPUT) && cli_add_input(c, value))
        return c->status = 2, CLI_EXIT;
    if ((o->flags & CLI_OUTPUT) && tool_row && cli_add_output(c, value))
        return c->status = 2, CLI_EXIT;
    if (o->id == 0)
        return -2; /* a typed row that only stores */
    if (!tool_row) {
        int r = take_common(c, o, value);
        return r == CLI_EXIT ? CLI_EXIT : -2; /* -2: nothing for the tool, go on */
    }
    *out = value;
    return o->id;
}

/* " (did you mean --X?)" for an unknown long name close to one of the rows (util/suggest.h,
 * the rule the document layer uses for unknown keys too), else "". */
static void suggest_option(const cli_opt *const tables[2], const char *name, size_t len,
                           char *hint, size_t n)
{
    lg_suggest s;
    lg_suggest_init(&s, name, len);
    for (int t = 0; t < 2; t++)
        for (const cli_opt *o = tables[t]; !row_end(o); o++)
            if (o->long_name)
                lg_suggest_offer(&s, o->long_name, strlen(o->long_name));
    lg_suggest_text(&s, "--", hint, n);
}

static int next_long(cli *c, const char *arg, const cli_opt *const tables[2],
                     const char **out)
{
    const char *name = arg + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    bool ambiguous;
    const cli_opt *o = find_long(tables, name, len, &ambiguous);
    if (!o) {
        char hint[200] = "";
        if (!ambiguous)
            suggest_option(tables, name, len, hint, sizeof hint);
        cli_usage(c, ambiguous ? "ambiguous option '--%.*s'%s" : "unknown option '--%.*s'%s",
                  (int)len, name, hint);
        return CLI_EXIT;
    }
    const char *value = NULL;
    char an[48];
    if (takes_value(o)) {
        if (eq)
            value = eq + 1;
        else if (c->at < c->argc)
            value = c->argv[c->at++];
        else {
            cli_usage(c, "option '--%s' needs a value (%s)", o->long_name,
                      arg_name(o, an, sizeof an));
            return CLI_EXIT;
        }
    } else if (eq) {
        cli_usage(c, "option '--%s' takes no value", o->long_name);
        return CLI_EXIT;
    }
    return deliver(c, o, value, out);
}

static int next_short(cli *c, const cli_opt *const tables[2], const char **out)
{
    char ch = *c->cluster++;
    const cli_opt *o = find_short(tables, ch);
    if (!o) {
        c->cluster = NULL;
        cli_usage(c, "unknown option '-%c'", ch);
        return CLI_EXIT;
    }
    const char *value = NULL;
    char an[48];
    if (takes_value(o)) {
        if (*c->cluster)
            value = c->cluster; /* -j4 */
        else if (c->at < c->argc)
            value = c->argv[c->at++];
        else {
            c->cluster = NULL;
            cli_usage(c, "option '-%c' (--%s) needs a value (%s)", ch, o->long_name,
                      arg_name(o, an, sizeof an));
            return CLI_EXIT;
        }
        c->cluster = NULL;
    } else if (!*c->cluster) {
        c->cluster = NULL;
    }
    return deliver(c, o, value, out);
}

int cli_next(cli *c, const char **value)
{
    static const cli_opt none[] = {CLI_END};
    const cli_opt *const tables[2] = {c->rows ? c->rows : none, common_rows};
    *value = NULL;
    for (;;) {
        int r;
        if (c->cluster) {
            r = next_short(c, tables, value);
        } else if (c->at >= c->argc) {
            return 0;
        } else {
            char *arg = c->argv[c->at++];
            if (c->no_more_options || arg[0] != '-' || arg[1] == '\0') {
                c->args[c->nargs++] = arg; /* "-" is an operand: stdin or stdout */
                if (c->spec->args_are_inputs && cli_add_input(c, arg))
                    return c->status = 2, CLI_EXIT;
                continue;
            }
            if (strcmp(arg, "--") == 0) {
                c->no_more_options = true;
                continue;
            }
            if (arg[1] == '-') {
                r = next_long(c, arg, tables, value);
            } else {
                c->cluster = arg + 1;
                r = next_short(c, tables, value);
            }
        }
        if (r != -2)
            return r;
    }
}

/* ------------------------------------------------------------------ outputs */

int cli_outputs_ok(cli *c)
{
    const char *outs[2] = {c->json, c->junit};
    for (int i = 0; i < 2; i++)
        if (outs[i] && cli_add_output(c, outs[i]))
            return 2;
    size_t to_stdout = 0;
    golden_error err;
    golden_error_clear(&err);
    for (size_t i = 0; i < c->outputs.n; i++) {
        const char *p = c->outputs.v[i];
        to_stdout += strcmp(p, "-") == 0;
        if (golden_outfile_distinct(p, c->inputs.v, c->inputs.n, &err) != GOLDEN_OK ||
            golden_outfile_check(p, c->force, &err) != GOLDEN_OK)
            return cli_fail(c, &err);
        for (size_t k = 0; k < i; k++)
            if (strcmp(p, "-") != 0 && strcmp(c->outputs.v[k], p) == 0)
                return cli_usage(c, "'%s' is named as two outputs", p);
    }
    if (to_stdout > 1)
        return cli_usage(c, "only one output can be '-' (standard output)");
    return 0;
}

FILE *cli_human(cli *c)
{
    if (c->quiet)
        return NULL;
    for (size_t i = 0; i < c->outputs.n; i++)
        if (strcmp(c->outputs.v[i], "-") == 0)
            return NULL;
    if ((c->json && strcmp(c->json, "-") == 0) || (c->junit && strcmp(c->junit, "-") == 0))
        return NULL;
    return stdout;
}

/* Exit 2 with --junit: one error case naming the problem (class TOOL.error, case "inputs":
 * stable names), so CI shows why nothing was judged. The only writer of that case: a tool
 * never writes its own (on standard output that would be a second XML document). Best effort, never over a file that was
 * there before the run without --force; a JUnit the tool wrote is replaced only with -f. */
static void junit_error(const cli *c)
{
    char cls[96], msg[sizeof c->problem + 32];
    snprintf(cls, sizeof cls, "%s.error", c->spec->name);
    snprintf(msg, sizeof msg, "%s: %s", c->spec->could_not ? c->spec->could_not : "could not check",
             c->problem);
    golden_junit_case jc = {cls, "inputs", true, false, msg, msg, 0};
    golden_error err;
    golden_junit_write(c->junit, c->force, c->spec->name, &jc, 1, &err);
}

int cli_exit(cli *c, int status)
{
    /* not when --junit itself was refused (a command that writes none says so in its spec's
     * help or in the usage line) */
    if (status == 2 && c->junit && c->problem[0] && !c->junit_refused &&
        !(c->spec->junit_help && strstr(c->spec->junit_help, "refused")))
        junit_error(c);
    /* a full disk or a closed pipe on stdout must not look like a clean run */
    int bad = fflush(stdout) != 0 || ferror(stdout);
    int e = errno;
    if (fclose(stdout) != 0 && !bad)
        bad = 1, e = errno;
    /* one problem, one line: a report that already failed on stdout said so */
    if (bad && e != EPIPE && !c->reported) {
        golden_error err;
        golden_fail_what(&err, GOLDEN_EIO, "-", "cannot write to standard output: %s",
                         strerror(e));
        golden_error_print(stderr, c->spec->name, &err);
        status = 2;
    } else if (bad) {
        status = 2;
    }
    cli_release(c);
    return status;
}

void cli_release(cli *c)
{
    free(c->args);
    free(c->inputs.v);
    free(c->outputs.v);
    for (size_t i = 0; i < c->owned.n; i++)
        free((char *)c->owned.v[i]);
    free(c->owned.v);
    for (const cli_opt *o = c->rows; o && !row_end(o); o++)
        if (o->type == CLI_LIST && o->dest)
            cli_list_free((cli_list *)o->dest);
    free(c->rows);
    c->rows = NULL;
    c->args = NULL;
    c->inputs = (cli_list){0};
    c->outputs = (cli_list){0};
    c->owned = (cli_list){0};
}

/* ------------------------------------------------------------------ grouped findings */

int cli_groups_count(cli_groups *g, const char *key)
{
    uint64_t at;
    if (lg_strmap_get(&g->index, key, strlen(key), &at)) {
        g->total[at]++;
        return 0;
    }
    if (g->n == g->cap) {
        size_t nc = g->cap ? g->cap * 2 : 16;
        char **nk = realloc(g->keys, nc * sizeof *nk);
        if (!nk)
            return -1;
        g->keys = nk;
        size_t *nt = realloc(g->total, nc * sizeof *nt);
        if (!nt)
            return -1;
        g->total = nt;
        size_t *ns = realloc(g->shown, nc * sizeof *ns);
        if (!ns)
            return -1;
        g->shown = ns;
        g->cap = nc;
    }
    if (!(g->keys[g->n] = strdup(key)))
        return -1;
    if (lg_strmap_put(&g->index, g->keys[g->n], strlen(key), g->n, NULL) < 0) {
        free(g->keys[g->n]);
        return -1;
    }
    g->total[g->n] = 1;
    g->shown[g->n] = 0;
    g->n++;
    return 0;
}

int cli_groups_show(cli_groups *g, const char *key, size_t *more)
{
    *more = 0;
    uint64_t i;
    if (!lg_strmap_get(&g->index, key, strlen(key), &i))
        return 1; /* never counted: shown */
    size_t k = ++g->shown[i];
    /* a group one over the limit prints whole: "1 more like this" would hide nothing */
    if (g->total[i] <= CLI_GROUP_SHOW + 1)
        return 1;
    if (k > CLI_GROUP_SHOW)
        return 0;
    if (k == CLI_GROUP_SHOW)
        *more = g->total[i] - k;
    return 1;
}

void cli_groups_free(cli_groups *g)
{
    for (size_t i = 0; i < g->n; i++)
        free(g->keys[i]);
    free(g->keys);
    free(g->total);
    free(g->shown);
    lg_strmap_free(&g->index);
    memset(g, 0, sizeof *g);
}

/* Whether word is one of the names of a list written "a, b, c or d". */
static bool names_command(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; n && (p = strstr(p, word)); p++) {
        bool starts = p == list || p[-1] == ' ';
        bool ends = p[n] == '\0' || p[n] == ',' || p[n] == ' ';
        if (starts && ends)
            return true;
    }
    return false;
}

/* " (did you mean X?)" for a word close to one of the names of a list "a, b, c or d". */
static void suggest_command(const char *list, const char *word, char *hint, size_t n)
{
    lg_suggest s;
    lg_suggest_init(&s, word, strlen(word));
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ", ");
        if (len && !(len == 2 && strncmp(p, "or", 2) == 0))
            lg_suggest_offer(&s, p, len);
        p += len;
        p += strspn(p, ", ");
    }
    lg_suggest_text(&s, "", hint, n);
}

int cli_top_level(const cli_spec *spec, int argc, char **argv, const char *commands)
{
    cli c;
    if (cli_init(&c, spec, argc, argv) != 0)
        return cli_exit(&c, 2);
    const char *v;
    int id;
    c.defer = true; /* `TOOL UNKNOWN --help` must not look like a subcommand's help */
    while ((id = cli_next(&c, &v)) > 0)
        ;
    if (id == CLI_EXIT)
        return cli_exit(&c, c.status);
    if (c.nargs > 0 && names_command(commands, c.args[0]))
        return cli_exit(&c, cli_usage(&c, "the subcommand comes first: %s %s [OPTIONS] ...",
                                      spec->name, c.args[0]));
    if (c.nargs > 0) {
        char hint[200];
        suggest_command(commands, c.args[0], hint, sizeof hint);
        return cli_exit(&c, cli_usage(&c, "unknown subcommand '%s' (%s)%s", c.args[0], commands,
                                      hint));
    }
    if (c.deferred == CLI_HELP) {
        cli_help(&c, stdout);
        return cli_exit(&c, 0);
    }
    if (c.deferred == CLI_VERSION) {
        printf("%s %s\n", spec->name, GOLDEN_VERSION);
        return cli_exit(&c, 0);
    }
    return cli_exit(&c, cli_usage(&c, "a subcommand is required: %s", commands));
}

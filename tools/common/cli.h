/* The command-line layer every tool is built on: one option table per tool drives parsing and
 * --help; the common options, usage errors, outputs, signals and the exit status live here. */
#ifndef GOLDEN_TOOLS_CLI_H
#define GOLDEN_TOOLS_CLI_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "golden/error.h"
#include "util/strmap.h"

/* Row flags. */
#define CLI_INPUT  1u /* the value names an input file: an output may not be the same file */
#define CLI_OUTPUT 2u /* the value names an output: checked with the --force rules up front */

/* Ids of the common options (every tool has them; cli_next handles them itself, except that
 * --json, --junit, --force, --quiet and --threads are also stored in struct cli). Tool rows use
 * ids from CLI_TOOL_ID up. */
enum {
    CLI_HELP = 1, CLI_VERSION, CLI_QUIET, CLI_THREADS, CLI_JSON, CLI_JUNIT, CLI_FORCE,
    CLI_TOOL_ID = 32
};

/* A list of strings (CLI_LIST rows, and the layer's own bookkeeping). */
typedef struct {
    const char **v;
    size_t n, cap;
} cli_list;

/* What a typed row's value is (docs/cli.md, "Typed options"). CLI_UNTYPED: the layer stores
 * nothing; cli_next returns the row's id (the common rows --help, --json, ...), with the raw
 * string when the row names an arg. */
typedef enum {
    CLI_UNTYPED = 0,
    CLI_FLAG,     /* bool *: set to true; takes no value */
    CLI_STRING,   /* const char **: the argument itself */
    CLI_INT,      /* int64_t *: golden_parse_int in [imin, imax] */
    CLI_UINT,     /* uint64_t *: golden_parse_uint in [umin, umax] (a seed: the whole range) */
    CLI_REAL,     /* double *: golden_parse_real in [fmin, fmax] */
    CLI_SIZE,     /* uint64_t *: golden_parse_size, bytes in [umin, umax]; a bare number
                     counts `unit` bytes (0 = 1) */
    CLI_DURATION, /* double *: golden_parse_duration, seconds in [fmin, fmax]; a bare number
                     counts `funit` seconds (0 = 1) */
    CLI_CHOICE,   /* int *: the index of the value in `choices` */
    CLI_LIST      /* cli_list *: every occurrence appended; split at commas when `split`;
                     each item one of `choices` when given */
} cli_type;

/* One row of a typed option table (write it with the CLI_OPT_* macros below): the layer parses
 * the value, checks its range, stores it at dest, refuses a bad one with one usage line naming
 * the range, and appends the range to the row's --help text. cli_next still returns the row's
 * id (when not 0) with the raw value, for a tool that wants to react to the option itself. A
 * row with no long_name and a help text is a heading in --help; a row with neither ends the
 * table. */
typedef struct {
    int id;               /* >= CLI_TOOL_ID, or 0: stored only, never returned */
    char short_name;      /* 0 = long form only; a letter means the same in every tool */
    const char *long_name;
    const char *arg;      /* the value's name in --help; NULL: one from the type (N, X, SIZE) */
    const char *help;     /* '\n' continues on the next line */
    unsigned flags;       /* CLI_INPUT, CLI_OUTPUT */
    cli_type type;
    void *dest;           /* where the value goes (the type says what it points to) */
    bool *given;          /* optional: set to true when the option is given */
    int64_t imin, imax;   /* CLI_INT: the range */
    uint64_t umin, umax;  /* CLI_UINT, CLI_SIZE: the range (bytes for a size) */
    double fmin, fmax;    /* CLI_REAL, CLI_DURATION */
    double unit;          /* CLI_SIZE: bytes of a bare number; CLI_DURATION: seconds */
    const char *const *choices; /* CLI_CHOICE, CLI_LIST: NULL-terminated */
    bool split;           /* CLI_LIST: "a,b,c" is three items */
} cli_opt;

/* Typed rows. Each checks the type of DEST at compile time (a wrong pointer is an error). */
#define CLI_DEST_(T, p) ((void *)(1 ? (p) : (T *)0))
#define CLI_OPT_FLAG(ID, SH, NAME, HELP, DEST)                                                    \
    {.id = ID, .short_name = SH, .long_name = NAME, .help = HELP, .type = CLI_FLAG,              \
     .dest = CLI_DEST_(bool, DEST)}
#define CLI_OPT_STRING(ID, SH, NAME, ARG, HELP, FLAGS, DEST)                                      \
    {.id = ID, .short_name = SH, .long_name = NAME, .arg = ARG, .help = HELP, .flags = FLAGS,    \
     .type = CLI_STRING, .dest = CLI_DEST_(const char *, DEST)}
#define CLI_OPT_INT(ID, SH, NAME, ARG, HELP, DEST, MIN, MAX)                                      \
    {.id = ID, .short_name = SH, .long_name = NAME, .arg = ARG, .help = HELP, .type = CLI_INT,   \
     .dest = CLI_DEST_(int64_t, DEST), .imin = (MIN), .imax = (MAX)}
#define CLI_OPT_UINT(ID, SH, NAME, ARG, HELP, DEST, MIN, MAX)                                     \
    {.id = ID, .short_name = SH, .long_name = NAME, .arg = ARG, .help = HELP, .type = CLI_UINT,  \
     .dest = CLI_DEST_(uint64_t, DEST), .umin = (MIN), .umax = (MAX)}
#define CLI_OPT_REAL(ID, SH, NAME, ARG, HELP, DEST, MIN, MAX)                                     \
    {.id = ID, .short_name = SH, .long_name = NAME, .arg = ARG, .help = HELP, .type = CLI_REAL,  \
     .dest = CLI_DEST_(double, DEST), .fmin = (MIN), .fmax = (MAX)}
#define CLI_OPT_SIZE(ID, SH, NAME, ARG, HELP, DEST, UNIT, MIN, MAX)                               \
    {.id = ID, .short_name = SH, .long_name = NAME, .arg = ARG, .help = HELP, .type = CLI_SIZE,  \
     .dest = CLI_DEST_(uint64_t, DEST), .unit = (UNIT), .umin = (MIN), .umax = (MAX)}
#define CLI_OPT_DURATION(ID, SH, NAME, ARG, HELP, DEST, UNIT, MIN, MAX)                           \
    {.id = ID, .short_name = SH, .long_name = NAME, .arg = ARG, .help = HELP,                    \
     .type = CLI_DURATION, .dest = CLI_DEST_(double, DEST), .unit = (UNIT), .fmin = (MIN),       \
     .fmax = (MAX)}
#define CLI_OPT_CHOICE(ID, SH, NAME, ARG, HELP, DEST, CHOICES)                                    \
    {.id = ID, .short_name = SH, .long_name = NAME, .arg = ARG, .help = HELP,                    \
     .type = CLI_CHOICE, .dest = CLI_DEST_(int, DEST), .choices = CHOICES}
#define CLI_OPT_LIST(ID, SH, NAME, ARG, HELP, FLAGS, DEST, SPLIT, CHOICES)                        \
    {.id = ID, .short_name = SH, .long_name = NAME, .arg = ARG, .help = HELP, .flags = FLAGS,    \
     .type = CLI_LIST, .dest = CLI_DEST_(cli_list, DEST), .split = SPLIT, .choices = CHOICES}
#define CLI_HEADING(TEXT) {.help = TEXT}
#define CLI_END {0}

typedef struct {
    const char *name;        /* the tool ("golden-diff") */
    const char *synopsis;    /* what follows "usage: NAME " ('\n' between usage forms) */
    const char *about;       /* a paragraph */
    const cli_opt *opts;     /* the tool's rows (CLI_END-terminated) */
    const char *json_help;   /* --json's help text when the tool wants its own */
    const char *junit_help;  /* --junit's help text when the tool wants its own */
    const char *exit_status; /* the "Exit status:" paragraph */
    bool args_are_inputs;    /* positional arguments name input files */
    /* A tool whose first argument may be a subcommand or an input file (dag-check: GRAPH or
     * "diff"): its subcommands for messages ("diff"). With it, --help refuses a first
     * argument that is neither a subcommand nor an existing file: "dag-check dif --help"
     * is a usage error (exit 2), not the general help, so a script can tell them apart. */
    const char *commands;
    /* the start of the JUnit error case's message on exit 2, the tool's own wording of its
     * exit status 2 ("could not compare"); NULL = "could not check" */
    const char *could_not;
} cli_spec;

/* One parse: cli_init, cli_next until 0, cli_outputs_ok, work, return cli_exit(...). */
typedef struct {
    const cli_spec *spec;
    int argc;
    char **argv;
    int at;               /* next argv index */
    const char *cluster;  /* rest of a "-abc" group */
    bool no_more_options; /* after "--" */
    char **args;          /* positional arguments, in order */
    int nargs;
    /* common options */
    bool quiet, force;
    int threads;          /* 0 = default (GOLDEN_THREADS, else all cores) */
    const char *json, *junit;
    /* bookkeeping */
    cli_list inputs, outputs;
    cli_list owned;       /* strings the layer made (split list items), freed by cli_exit */
    cli_opt *rows;        /* spec->opts and spec->options as one typed table (cli_init) */
    int status;           /* set when cli_next returns CLI_EXIT */
    int deferred;         /* cli_top_level: CLI_HELP or CLI_VERSION seen, acted on at the end */
    bool defer;           /* cli_top_level: --help/--version wait until every argument is read */
    bool reported;        /* an error line was printed (cli_exit adds none for stdout then) */
    char problem[1024];   /* that line's text (cli_usage, cli_fail): cli_exit's JUnit error case */
    bool junit_refused;   /* a usage line refused --junit: cli_exit writes no JUnit error case */
} cli;

#define CLI_EXIT (-1)

/* Start: install the crash guard and the signal handlers (SIGINT, SIGTERM, SIGHUP remove every
 * temporary output, then the process dies of the signal), read NO_COLOR, TERM and
 * GOLDEN_THREADS and pass them to libgolden's settings. Returns 0, or 2 (printed). */
int cli_init(cli *c, const cli_spec *spec, int argc, char **argv);

/* The next tool option: its id, with *value set for an option that takes one; 0 when all
 * arguments are read (positionals are in c->args); CLI_EXIT when the run ends here
 * (--help, --version: c->status 0; a usage error, printed: c->status 2). */
int cli_next(cli *c, const char **value);

/* Every option at once, for a table whose rows are all typed (or whose untyped rows the tool
 * does not need to see): 0 when all arguments are read, CLI_EXIT when the run ends here
 * (c->status says how). */
int cli_parse(cli *c);

/* The range a typed row accepts, in words ("an integer from 0 to 9"): what --help appends and
 * usage errors say. false for a row without one (flags, strings, untyped rows). */
bool cli_describe(const cli_opt *o, char *buf, size_t n);

/* Free a CLI_LIST's array (its strings belong to argv or to the layer). */
void cli_list_free(cli_list *l);

/* Print "TOOL: usage: WHAT (see TOOL --help)" and return 2. */
int cli_usage(cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The whole run of a tool with subcommands when none was recognised: --help and --version from
 * spec (a table of common options only), else one usage line, "a subcommand is required:
 * LIST" or "unknown subcommand 'X' (LIST)". An unknown subcommand is a usage error with or
 * without --help (every argument is read first). Returns the exit status. */
int cli_top_level(const cli_spec *spec, int argc, char **argv, const char *commands);
/* Print err as the contract's one line and return 2. */
int cli_fail(cli *c, const golden_error *err);

/* Register one more input or output path (rows with CLI_INPUT / CLI_OUTPUT, positionals of an
 * args_are_inputs spec, --json and --junit are registered by the layer). 0, or 2 (printed). */
int cli_add_input(cli *c, const char *path);
int cli_add_output(cli *c, const char *path);

/* Check every output before long work: not a folder, not an existing regular file without
 * --force, never one of the inputs (same device and inode), and "-" (stdout) for at most one
 * of them. Returns 0, or 2 (printed). */
int cli_outputs_ok(cli *c);

/* Where the human report goes: stdout, or NULL when --quiet or when a machine output is
 * written to stdout (so `--junit - | xmllint -` sees only XML). */
FILE *cli_human(cli *c);

/* Finish: flush and close stdout; a failed write (stdout on /dev/full) turns status into 2
 * with one error line. Frees what the parse held (the CLI_LIST rows' arrays of the spec and
 * the items the layer copied: use them before). Returns the exit status. */
int cli_exit(cli *c, int status);

/* What cli_exit frees, without touching stdout (a program that parses more than once). */
void cli_release(cli *c);

/* Print --help (what the table says) to f. */
void cli_help(const cli *c, FILE *f);

/* Grouped findings: the first CLI_GROUP_SHOW problems of one kind are printed, the rest
 * summed in one "... and N more like this" line. Count every key first, then ask per line. */
#define CLI_GROUP_SHOW 4
typedef struct {
    char **keys;
    size_t *total, *shown;
    size_t n, cap;
    golden_strmap index; /* key -> position */
} cli_groups;
/* Count one occurrence of key (copied). 0, or -1 out of memory. */
int cli_groups_count(cli_groups *g, const char *key);
/* For the next occurrence of key: 1 print it; 0 skip it; when this occurrence is the last one
 * shown and more follow, *more is set to how many are left (else 0). */
int cli_groups_show(cli_groups *g, const char *key, size_t *more);
void cli_groups_free(cli_groups *g);

#endif

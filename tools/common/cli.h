/* The command-line layer every tool is built on: one option table per tool drives parsing and
 * --help; the common options, usage errors, outputs, signals and the exit status live here. */
#ifndef GOLDEN_TOOLS_CLI_H
#define GOLDEN_TOOLS_CLI_H
#include <stdbool.h>
#include <stddef.h>
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

/* One row of a tool's option table. A row with no long_name and a help text is a heading in
 * --help; a row with neither ends the table. */
typedef struct {
    int id;               /* what cli_next returns for it (>= CLI_TOOL_ID) */
    char short_name;      /* 0 = long form only; a letter means the same in every tool */
    const char *long_name;
    const char *arg;      /* the value's name in --help (FILE, N, ...); NULL = a flag */
    const char *help;     /* '\n' continues on the next line */
    unsigned flags;       /* CLI_INPUT, CLI_OUTPUT */
} cli_option;

typedef struct {
    const char *name;        /* the tool ("golden-diff") */
    const char *synopsis;    /* what follows "usage: NAME " ('\n' between usage forms) */
    const char *about;       /* a paragraph */
    const cli_option *options;
    const char *json_help;   /* --json's help text when the tool wants its own */
    const char *junit_help;  /* --junit's help text when the tool wants its own */
    const char *exit_status; /* the "Exit status:" paragraph */
    bool args_are_inputs;    /* positional arguments name input files */
    /* A tool whose first argument may be a subcommand or an input file (dag-check: GRAPH or
     * "diff"): its subcommands for messages ("diff"). With it, --help refuses a first
     * argument that is neither a subcommand nor an existing file: "dag-check dif --help"
     * is a usage error (exit 2), not the general help, so a script can tell them apart. */
    const char *commands;
} cli_spec;

typedef struct {
    const char **v;
    size_t n, cap;
} cli_list;

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
    int status;           /* set when cli_next returns CLI_EXIT */
    int deferred;         /* cli_top_level: CLI_HELP or CLI_VERSION seen, acted on at the end */
    bool defer;           /* cli_top_level: --help/--version wait until every argument is read */
    bool reported;        /* an error line was printed (cli_exit adds none for stdout then) */
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
/* Whether colour may be used on stream (a TTY; NO_COLOR unset; TERM not dumb). */
bool cli_color(const cli *c, FILE *stream);

/* Finish: flush and close stdout; a failed write (stdout on /dev/full) turns status into 2
 * with one error line. Frees what the parse held. Returns the exit status. */
int cli_exit(cli *c, int status);

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

/* manifest-verify: check documents against schemas, experiment folders against the handbook,
 * and vendor hand-offs for completeness. Options and printing only; the rules are in libgolden. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/hash_ranks.h"
#include "common/ranks.h"
#include "golden/error.h"
#include "golden/experiment.h"
#include "golden/gate.h"
#include "golden/report.h"
#include "golden/template.h"

#define TOOL "manifest-verify"

/* What the options say (typed rows store here). */
static struct {
    const char *schema, *handoff, *init, *tokenizer;
    cli_list dirs;
    bool format_assert, seal;
} arg;

/* The option table: parsing, checks and --help all come from it. Rows may be added freely. */
static const cli_opt options[] = {
    CLI_OPT_STRING(0, 's', "schema", "SCHEMA", "validate DOC... against SCHEMA (embedded file name,\n"
                   "$id, format name such as calculet-fault/v1, or a path); DOC - = stdin",
                   CLI_INPUT, &arg.schema),
    CLI_OPT_LIST(0, 0, "schema-dir", "DIR", "register every schema in DIR by its $id (repeatable;\n"
                 "BASEURI=DIR also names files BASEURI + their path); nothing is fetched", 0,
                 &arg.dirs, false, NULL),
    CLI_OPT_FLAG(0, 0, "format-assert", "make \"format\" an assertion (date-time, email, ...)",
                 &arg.format_assert),
    CLI_OPT_STRING(0, 'H', "handoff", "DIR", "check the hand-off indexed by DIR/handoff.json", 0,
                   &arg.handoff),
    CLI_OPT_FLAG(0, 0, "seal", "after a clean check, write SHA256SUMS over every asset\n"
                 "(--force replaces an existing SHA256SUMS)", &arg.seal),
    CLI_OPT_STRING(0, 0, "init", "EXP_ID", "write a new experiment folder DIR from the handbook's\n"
                   "section 4 template, every value to fill marked REQUIRED", 0, &arg.init),
    CLI_OPT_STRING(0, 0, "tokenizer", "FILE", "the tokenizer.json whose sha256 controlled.tokenizer_hash\n"
                   "and tokenizer_sha256 must be (default: the folder's tokenizer.json)", CLI_INPUT,
                   &arg.tokenizer),
    CLI_END,
};

static const cli_spec spec = {
    .name = TOOL,
    .synopsis = "[OPTIONS] EXPERIMENT_DIR\n[OPTIONS] --schema SCHEMA DOC...\n"
                "[OPTIONS] --handoff DIR\n--init EXP_ID DIR",
    .about = "Check an experiment folder (handbook sections 3, 4, 5, 16.1), documents against a\n"
             "JSON Schema (JSON, YAML, or JSON Lines one line at a time), or a vendor hand-off\n"
             "against the eight deliverables of section 18. See manifest-verify(1) and\n"
             "docs/manifest-verify.md.",
    .opts = options,
    .json_help = "write a calculet-verify-report/v1 report (- = stdout)",
    .junit_help = "write JUnit XML, one test case per rule or item (- = stdout)",
    .exit_status = "0 passed, 1 a rule failed, 2 could not check (usage, unreadable or\n"
                   "unparseable input).",
    .args_are_inputs = true,
};

static cli *the_cli;

static int fail(const golden_error *err)
{
    return cli_fail(the_cli, err);
}

static int usage_error(const char *what)
{
    return cli_usage(the_cli, "%s", what);
}

/* The key a finding is grouped by: one rule in one file. */
static void group_key(const golden_finding *g, char *buf, size_t n)
{
    snprintf(buf, n, "%d\x1f%s\x1f%s", (int)g->severity, g->rule, g->file);
}

/* Every finding, the first few of each rule in each file and one "... and N more like this"
 * line for the rest (the JSON report keeps them all). */
static int print_findings(FILE *out, const golden_findings *f)
{
    bool color = golden_use_color(out) && !ranks_launched();
    cli_groups groups = {0};
    char key[1200];
    for (size_t i = 0; i < f->count; i++) {
        group_key(&f->items[i], key, sizeof key);
        if (cli_groups_count(&groups, key) != 0) {
            cli_groups_free(&groups);
            return -1;
        }
    }
    for (size_t i = 0; i < f->count; i++) {
        const golden_finding *g = &f->items[i];
        size_t more;
        group_key(g, key, sizeof key);
        if (!cli_groups_show(&groups, key, &more))
            continue;
        char where[1600];
        golden_finding_where(g, where, sizeof where);
        bool err = g->severity == GOLDEN_SEV_ERROR;
        const char *tag = err ? "" : g->severity == GOLDEN_SEV_TODO ? "todo " : "note ";
        fprintf(out, "%s: %s%s%s%s: %s\n", where, golden_color(color, err ? "red" : "yellow"),
                tag, g->rule, golden_color(color, "reset"), g->message);
        if (more)
            fprintf(out, "%s: %s%s: ... and %zu more like this\n", g->file, tag, g->rule, more);
    }
    cli_groups_free(&groups);
    return 0;
}

static void print_items(FILE *out, const golden_handoff_item *items)
{
    bool color = golden_use_color(out) && !ranks_launched();
    size_t w = 4;
    for (int i = 0; i < GOLDEN_HANDOFF_ITEMS; i++)
        if (strlen(items[i].key) > w)
            w = strlen(items[i].key);
    fprintf(out, "%-2s  %-*s  %-9s  %s\n", "#", (int)w, "item", "status", "detail");
    for (int i = 0; i < GOLDEN_HANDOFF_ITEMS; i++) {
        const golden_handoff_item *it = &items[i];
        const char *c = it->status == GOLDEN_ITEM_PRESENT ? "green" : "red";
        fprintf(out, "%-2d  %-*s  %s%-9s%s  %s\n", it->number, (int)w, it->key,
                golden_color(color, c), golden_item_status_name(it->status),
                golden_color(color, "reset"), it->detail[0] ? it->detail : it->title);
    }
}

/* Read the options into the mode's arguments: 0 to go on, else the exit status. */
static int parse(cli *c, const char **schema, const char **handoff, const char **init,
                 golden_experiment_opts *opts, golden_schema_load_options *lo)
{
    if (cli_parse(c) == CLI_EXIT)
        return c->status ? c->status : -1;
    *schema = arg.schema;
    *handoff = arg.handoff;
    *init = arg.init;
    lo->dirs = arg.dirs.v;
    lo->ndirs = arg.dirs.n;
    lo->format_assert = arg.format_assert;
    opts->seal = arg.seal;
    opts->tokenizer = arg.tokenizer;
    opts->force = c->force;
    opts->threads = c->threads;
    int nargs = c->nargs, modes = !!*schema + !!*handoff + !!*init;
    if ((lo->ndirs || lo->format_assert) && !*schema)
        return usage_error("--schema-dir and --format-assert go with --schema");
    if (modes > 1)
        return usage_error("--schema, --handoff and --init are separate modes");
    if (opts->seal && modes)
        return usage_error("--seal applies to an experiment folder only");
    if (opts->tokenizer && modes)
        return usage_error("--tokenizer applies to an experiment folder only");
    if (*schema && nargs < 1)
        return usage_error("--schema wants at least one document");
    if (*handoff && nargs != 0)
        return usage_error("--handoff takes no further arguments");
    if (*init && nargs != 1)
        return usage_error("--init EXP_ID wants one folder to create");
    if (*init && (c->json || c->junit))
        return usage_error("--init writes a folder; --json and --junit go with a check");
    if (!modes && nargs != 1)
        return usage_error("name one experiment folder");
    return 0;
}

static int run_init(cli *c, const char *exp_id, const char *dir)
{
    golden_error err;
    golden_error_clear(&err);
    golden_exp_template_opts to = {.version = GOLDEN_EXP_TEMPLATE_VERSION, .exp_id = exp_id};
    if (golden_exp_template_write(dir, &to, &err) != GOLDEN_OK)
        return fail(&err);
    FILE *human = cli_human(c);
    if (human)
        fprintf(human, "%s: new experiment %s written; fill every REQUIRED value, then run\n"
                       "  " TOOL " %s\n", dir, exp_id, dir);
    return 0;
}

int main(int argc, char **argv)
{
    cli c;
    the_cli = &c;
    if (cli_init(&c, &spec, argc, argv) != 0)
        return cli_exit(&c, 2);
    const char *schema = NULL, *handoff = NULL, *init = NULL;
    golden_experiment_opts opts = {0};
    opts.version = GOLDEN_EXPERIMENT_OPTS_VERSION;
    golden_schema_load_options lo = GOLDEN_SCHEMA_LOAD_OPTIONS_INIT;
    int prc = parse(&c, &schema, &handoff, &init, &opts, &lo);
    if (prc != 0)
        return cli_exit(&c, prc < 0 ? 0 : prc);
    golden_error err;
    golden_error_clear(&err);
    /* under mpirun (make MPI=1) the ranks share the hashing; rank 0 does everything else */
    if (ranks_start(&err) != 0)
        return cli_exit(&c, fail(&err));
    if (ranks_rank() != 0 && (init || schema))
        return cli_exit(&c, ranks_finish(0));
    if (init)
        return cli_exit(&c, ranks_finish(run_init(&c, init, c.args[0])));
    if (cli_outputs_ok(&c) != 0)
        return cli_exit(&c, ranks_finish(2));
    hash_ranks_ctx hc = {.root = true};
    opts.hash_files = hash_ranks_files;
    opts.hash_ctx = &hc;
    int nargs = c.nargs;
    char **args = c.args;

    golden_findings f;
    golden_findings_init(&f);
    golden_handoff_item items[GOLDEN_HANDOFF_ITEMS];
    const char *mode, *target;
    int rc;
    if (schema) {
        mode = "schema";
        target = schema;
        rc = golden_findings_documents_opts(schema, &lo, c.threads, (const char *const *)args, (size_t)nargs, &f,
                                          &err);
    } else if (handoff) {
        mode = "handoff";
        target = handoff;
        rc = golden_handoff_check(handoff, &opts, items, &f, &err);
    } else {
        mode = "experiment";
        target = args[0];
        rc = golden_experiment_check(target, &opts, &f, &err);
        /* exp-gate's --check as one more rule (summary-follows), once the documents are valid */
        if (rc == 0 && f.errors == 0) {
            golden_gate_opts go;
            golden_gate_opts_init(&go);
            go.threads = opts.threads;
            bool checked;
            if (golden_gate_summary_present(target))
                rc = golden_gate_check(target, &go, &f, &checked, &err);
        }
    }
    if (ranks_rank() != 0) { /* its share went to rank 0, which reports */
        golden_findings_free(&f);
        return cli_exit(&c, ranks_finish(rc != 0 ? 2 : 0));
    }
    if (rc != 0) {
        golden_findings_free(&f);
        return cli_exit(&c, ranks_finish(fail(&err)));
    }
    const golden_handoff_item *its = handoff ? items : NULL;
    bool failed = f.errors > 0;
    for (int i = 0; its && i < GOLDEN_HANDOFF_ITEMS; i++)
        failed = failed || its[i].status != GOLDEN_ITEM_PRESENT;

    if (c.json) {
        json_t *doc = golden_findings_report(mode, target, &f, its, &err);
        if (!doc || golden_json_write(c.json, doc, opts.force, &err) != 0) {
            json_decref(doc);
            golden_findings_free(&f);
            return cli_exit(&c, ranks_finish(fail(&err)));
        }
        json_decref(doc);
    }
    if (c.junit && golden_findings_junit(c.junit, opts.force, mode, target, &f, its, &err) != 0) {
        golden_findings_free(&f);
        return cli_exit(&c, ranks_finish(fail(&err)));
    }
    FILE *out = cli_human(&c);
    if (out) {
        if (print_findings(out, &f) != 0) {
            golden_findings_free(&f);
            return cli_exit(&c, ranks_finish(fail(&(golden_error){GOLDEN_ENOMEM, "",
                                                                   "out of memory"})));
        }
        if (its)
            print_items(out, its);
        bool color = golden_use_color(out) && !ranks_launched();
        size_t notes = f.count - f.errors - f.todos;
        char nb[64] = "";
        if (notes)
            snprintf(nb, sizeof nb, ", %zu note%s", notes, notes == 1 ? "" : "s");
        fprintf(out, "%s%s%s: %s: %zu document%s, %zu file%s hashed, %zu error%s, %zu to-do%s%s%s\n",
                golden_color(color, failed ? "red" : "green"), failed ? "FAIL" : "PASS",
                golden_color(color, "reset"), target, f.documents, f.documents == 1 ? "" : "s",
                f.files_hashed, f.files_hashed == 1 ? "" : "s", f.errors, f.errors == 1 ? "" : "s",
                f.todos, f.todos == 1 ? "" : "s", nb,
                f.sealed ? "; sealed (SHA256SUMS written)" : opts.seal ? "; not sealed" : "");
    }
    golden_findings_free(&f);
    return cli_exit(&c, ranks_finish(failed ? 1 : 0));
}

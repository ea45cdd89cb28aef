/* manifest-verify: check documents against schemas, experiment folders against the handbook,
 * and vendor hand-offs for completeness. Options and printing only; the rules are in libgolden. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/guard.h"
#include "golden/error.h"
#include "golden/experiment.h"
#include "golden/report.h"

#define TOOL "manifest-verify"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " TOOL " [OPTIONS] EXPERIMENT_DIR\n"
            "       " TOOL " [OPTIONS] --schema SCHEMA DOC...\n"
            "       " TOOL " [OPTIONS] --handoff DIR\n"
            "\n"
            "Check an experiment folder (handbook sections 3, 4, 5, 16.1), documents against a\n"
            "JSON Schema (JSON, YAML, or JSON Lines one line at a time), or a vendor hand-off\n"
            "against the eight deliverables of section 18.\n"
            "\n"
            "  -s, --schema SCHEMA   validate DOC... against SCHEMA (embedded file name, $id,\n"
            "                        format name such as calculet-fault/v1, or a path)\n"
            "      --schema-dir DIR  register every schema in DIR by its $id (repeatable;\n"
            "                        BASEURI=DIR also names files BASEURI + their path)\n"
            "      --format-assert   make \"format\" an assertion (date-time, email, ...)\n"
            "  -H, --handoff DIR     check the hand-off indexed by DIR/handoff.json\n"
            "      --seal            after a clean check, write SHA256SUMS over every asset\n"
            "  -f, --force           replace existing outputs (and an existing SHA256SUMS)\n"
            "      --json FILE       write a calculet-verify-report/v1 report (- = stdout)\n"
            "      --junit FILE      write JUnit XML\n"
            "  -j, --threads N       hashing threads (default: GOLDEN_THREADS or all cores)\n"
            "  -h, --help            this text\n"
            "  -V, --version         print the version\n"
            "\n"
            "Exit status: 0 passed, 1 a rule failed, 2 could not check (usage, unreadable or\n"
            "unparseable input). See manifest-verify(1) and docs/manifest-verify.md.\n");
}

static int fail(const golden_error *err)
{
    golden_error_print(stderr, TOOL, err);
    return 2;
}

static int usage_error(const char *what)
{
    fprintf(stderr, TOOL ": %s (see --help)\n", what);
    return 2;
}

static void print_findings(FILE *out, const golden_findings *f)
{
    bool color = golden_use_color(out);
    for (size_t i = 0; i < f->count; i++) {
        const golden_finding *g = &f->items[i];
        char where[1600];
        golden_finding_where(g, where, sizeof where);
        bool err = g->severity == GOLDEN_SEV_ERROR;
        fprintf(out, "%s: %s%s%s%s: %s\n", where, golden_color(color, err ? "red" : "yellow"),
                err ? "" : "todo ", g->rule, golden_color(color, "reset"), g->message);
    }
}

static void print_items(FILE *out, const golden_handoff_item *items)
{
    bool color = golden_use_color(out);
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

int main(int argc, char **argv)
{
    golden_guard_install(TOOL);
    enum { OPT_SEAL = 256, OPT_JSON, OPT_JUNIT, OPT_SCHEMA_DIR, OPT_FORMAT_ASSERT };
    static const struct option longopts[] = {
        {"schema", required_argument, NULL, 's'},
        {"handoff", required_argument, NULL, 'H'},
        {"seal", no_argument, NULL, OPT_SEAL},
        {"schema-dir", required_argument, NULL, OPT_SCHEMA_DIR},
        {"format-assert", no_argument, NULL, OPT_FORMAT_ASSERT},
        {"force", no_argument, NULL, 'f'},
        {"json", required_argument, NULL, OPT_JSON},
        {"junit", required_argument, NULL, OPT_JUNIT},
        {"threads", required_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *schema = NULL, *handoff = NULL, *json = NULL, *junit = NULL;
    golden_experiment_opts opts = {0};
    golden_schema_load_options lo = GOLDEN_SCHEMA_LOAD_OPTIONS_INIT;
    const char *dirs[64];
    int c;
    while ((c = getopt_long(argc, argv, "s:H:fj:hV", longopts, NULL)) != -1) {
        switch (c) {
        case 's': schema = optarg; break;
        case 'H': handoff = optarg; break;
        case OPT_SEAL: opts.seal = true; break;
        case OPT_SCHEMA_DIR:
            if (lo.ndirs == sizeof dirs / sizeof *dirs)
                return usage_error("at most 64 --schema-dir");
            dirs[lo.ndirs++] = optarg;
            lo.dirs = dirs;
            break;
        case OPT_FORMAT_ASSERT: lo.format_assert = 1; break;
        case 'f': opts.force = true; break;
        case OPT_JSON: json = optarg; break;
        case OPT_JUNIT: junit = optarg; break;
        case 'j': {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (*end || n < 1 || n > 256)
                return usage_error("--threads wants a number from 1 to 256");
            opts.threads = (int)n;
            break;
        }
        case 'h': usage(stdout); return 0;
        case 'V': printf(TOOL " %s\n", GOLDEN_VERSION); return 0;
        default: return usage_error("unknown option");
        }
    }
    int nargs = argc - optind;
    if (schema && handoff)
        return usage_error("--schema and --handoff are separate modes");
    if (opts.seal && (schema || handoff))
        return usage_error("--seal applies to an experiment folder only");
    if (schema && nargs < 1)
        return usage_error("--schema wants at least one document");
    if (handoff && nargs != 0)
        return usage_error("--handoff takes no further arguments");
    if (!schema && !handoff && nargs != 1)
        return usage_error("name one experiment folder");

    golden_error err;
    golden_error_clear(&err);
    if ((json && golden_outfile_check(json, opts.force, &err) != 0) ||
        (junit && golden_outfile_check(junit, opts.force, &err) != 0))
        return fail(&err);

    golden_findings f;
    golden_findings_init(&f);
    golden_handoff_item items[GOLDEN_HANDOFF_ITEMS];
    const char *mode, *target;
    int rc;
    if (schema) {
        mode = "schema";
        target = schema;
        rc = golden_verify_documents_opts(schema, &lo, (const char *const *)argv + optind,
                                          (size_t)nargs, &f, &err);
    } else if (handoff) {
        mode = "handoff";
        target = handoff;
        rc = golden_handoff_check(handoff, &opts, items, &f, &err);
    } else {
        mode = "experiment";
        target = argv[optind];
        rc = golden_experiment_check(target, &opts, &f, &err);
    }
    if (rc != 0) {
        golden_findings_free(&f);
        return fail(&err);
    }
    const golden_handoff_item *its = handoff ? items : NULL;
    bool failed = f.errors > 0;
    for (int i = 0; its && i < GOLDEN_HANDOFF_ITEMS; i++)
        failed = failed || its[i].status != GOLDEN_ITEM_PRESENT;

    if (json) {
        json_t *doc = golden_verify_report(mode, target, &f, its, &err);
        if (!doc || golden_json_write(json, doc, opts.force, &err) != 0) {
            json_decref(doc);
            golden_findings_free(&f);
            return fail(&err);
        }
        json_decref(doc);
    }
    if (junit && golden_verify_junit(junit, opts.force, mode, target, &f, its, &err) != 0) {
        golden_findings_free(&f);
        return fail(&err);
    }
    if (!json || strcmp(json, "-") != 0) {
        print_findings(stdout, &f);
        if (its)
            print_items(stdout, its);
        bool color = golden_use_color(stdout);
        printf("%s%s%s: %s: %zu document%s, %zu file%s hashed, %zu error%s, %zu to-do%s%s\n",
               golden_color(color, failed ? "red" : "green"), failed ? "FAIL" : "PASS",
               golden_color(color, "reset"), target, f.documents, f.documents == 1 ? "" : "s",
               f.files_hashed, f.files_hashed == 1 ? "" : "s", f.errors, f.errors == 1 ? "" : "s",
               f.todos, f.todos == 1 ? "" : "s",
               f.sealed ? "; sealed (SHA256SUMS written)" : opts.seal ? "; not sealed" : "");
    }
    golden_findings_free(&f);
    return failed ? 1 : 0;
}

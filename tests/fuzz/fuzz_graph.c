/* Fuzz target: the calculet-graph/v1 loaders (schema, ids, events, ranges) and, on what they
 * accept, happens-before, races, aliases and idle syncs. Every input goes through the tree
 * loader and the streaming loader (with and without its fast op parser): all three must give
 * the same verdict and, when they accept, the same verdict of the race check. */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>

#include "golden/dag.h"
#include "golden/graph.h"

/* -1: refused; else 0/1 whether dag-check would pass it (2: cyclic). */
static int verdict(const char *path, int64_t stream_bytes, bool no_fast, uint32_t *nops)
{
    golden_graph_load_options o = {GOLDEN_GRAPH_LOAD_OPTIONS_VERSION, stream_bytes, no_fast, NULL};
    golden_graph *g = NULL;
    golden_error err = {0};
    if (golden_graph_load_file_opts(path, &o, &g, &err) != 0)
        return -1;
    *nops = g->nops;
    golden_dag_result r = {0};
    int v = -1;
    if (golden_dag_check(g, NULL, false, &r, &err) == 0)
        v = r.cyclic ? 2 : golden_dag_passed(&r);
    if (v == 1 && stream_bytes < 0)
        (void)golden_dag_redundant(&r, 1, NULL, &err);
    golden_dag_result_free(&r);
    golden_graph_free(g);
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_file(data, size, "json");
    if (!path)
        return 0;
    uint32_t n_tree = 0, n_stream = 0, n_strict = 0;
    int tree = verdict(path, -1, false, &n_tree);
    int stream = verdict(path, 0, false, &n_stream);
    int strict = verdict(path, 0, true, &n_strict);
    /* the tree loader also reads YAML; the streaming loader starts at a JSON object */
    size_t i = 0;
    while (i < size && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n'))
        i++;
    if (i < size && data[i] == '{' && (tree != stream || tree != strict ||
                                       (tree >= 0 && (n_tree != n_stream || n_tree != n_strict)))) {
        fprintf(stderr, "loaders disagree: tree %d (%u ops), stream %d (%u), strict %d (%u)\n",
                tree, n_tree, stream, n_stream, strict, n_strict);
        abort();
    }
    return 0;
}

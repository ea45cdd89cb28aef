/* Fuzz target: the calculet-graph/v1 loader (schema, ids, events, ranges) and, on what it
 * accepts, happens-before, races, aliases and idle syncs. */
#include "fuzz.h"

#include "golden/dag.h"
#include "golden/graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_file(data, size, "json");
    if (!path)
        return 0;
    golden_graph *g = NULL;
    golden_error err = {0};
    if (golden_graph_load_file(path, &g, &err) != 0)
        return 0;
    golden_dag_result r = {0};
    if (golden_dag_check(g, NULL, false, &r, &err) == 0 && !r.cyclic)
        (void)golden_dag_redundant(&r, 1, NULL, &err);
    golden_dag_result_free(&r);
    golden_graph_free(g);
    return 0;
}

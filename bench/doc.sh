#!/bin/sh
# Document layer: load a calculet-graph/v1 graph of 10^6 ops (about 320 MB of JSON) with
# every node placed, and validate it, side by side with jansson's own loader (no positions).
# Prints times, peak memory and ratios; DOC_BENCH_OPS changes the size.
set -u
ops=${DOC_BENCH_OPS:-1000000}
doc-bench gen "$ops" graph.json || exit 1
doc-bench schema graph.schema.json || exit 1
echo "graph: $ops ops, $(wc -c < graph.json | tr -d ' ') bytes"
j=$(doc-bench jansson graph.json) || exit 1
g=$(doc-bench golden graph.json graph.schema.json) || exit 1
echo "$j"
echo "$g"
echo "$j $g" | awk '{
    jl = $2; jc = $4; jm = $6; gl = $8; gc = $10; gv = $12; gm = $18;
    printf "load: golden %.2f s vs jansson %.2f s (%.2fx faster; CPU %.2fx)\n", gl, jl, jl / gl, jc / gc;
    printf "validate: %.2f s (%.2fx of the load)\n", gv, gv / gl;
    printf "peak memory: golden %d MB vs jansson %d MB (%.2fx)\n", gm, jm, gm / jm }'
rm -f graph.json graph.schema.json

/* gen-graph: writes calculet-graph/v1 test graphs: the realistic two-chip 48-layer graph at any
 * scale (for benchmarks and end-to-end tests) or a random small graph (for the oracle). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gengraph.h"

static void usage(FILE *f)
{
    fputs("usage: gen-graph [--ops N] [--layers L] [--tiles T] [--split S] [--seed S] [--race]\n"
          "                 [--random SEED [--max-ops N]] [-o FILE]\n"
          "Realistic graph: 2 chips x 4 queues, L layers (48) of the handbook's op families,\n"
          "repeated as decode steps until about N ops (default 10000). --race drops one\n"
          "kv_scatter -> flash_attention wait. --random writes a random small graph instead.\n"
          "Prints the op and access counts to stderr.\n", f);
}

static int parse_u64(const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-')
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"ops", required_argument, 0, 'n'},    {"layers", required_argument, 0, 'l'},
        {"tiles", required_argument, 0, 't'},  {"split", required_argument, 0, 's'},
        {"seed", required_argument, 0, 'S'},   {"race", no_argument, 0, 'r'},
        {"random", required_argument, 0, 'R'}, {"max-ops", required_argument, 0, 'm'},
        {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    unsigned long long ops = 10000, layers = 48, tiles = 8, split = 4, seed = 1, rseed = 0,
                       max_ops = 60;
    int random = 0, race = 0, c;
    const char *out = "-";
    int li = 0;
    while ((c = getopt_long(argc, argv, "o:h", opts, &li)) != -1) {
        unsigned long long *dst = NULL;
        switch (c) {
        case 'n': dst = &ops; break;
        case 'l': dst = &layers; break;
        case 't': dst = &tiles; break;
        case 's': dst = &split; break;
        case 'S': dst = &seed; break;
        case 'R': dst = &rseed; random = 1; break;
        case 'm': dst = &max_ops; break;
        case 'r': race = 1; break;
        case 'o': out = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
        if (dst && parse_u64(optarg, dst) != 0) {
            fprintf(stderr, "gen-graph: --%s: not a number: %s\n", opts[li].name, optarg);
            return 2;
        }
    }
    if (optind != argc || !layers || layers > 100000 || max_ops > 1000 || max_ops < 2) {
        usage(stderr);
        return 2;
    }
    FILE *f = strcmp(out, "-") ? fopen(out, "w") : stdout;
    if (!f) {
        fprintf(stderr, "gen-graph: %s: %s\n", out, strerror(errno));
        return 2;
    }
    int rc = 0;
    if (random) {
        json_t *g = gg_random(rseed, (uint32_t)max_ops);
        if (!g || json_dumpf(g, f, JSON_INDENT(1)) != 0 || fputc('\n', f) == EOF)
            rc = 2;
        json_decref(g);
    } else {
        gg_params p = {.layers = (uint32_t)layers, .tiles = (uint32_t)tiles,
                       .split = (uint32_t)split, .seed = seed, .race = race};
        uint32_t t = p.tiles > 16 ? 16 : p.tiles ? p.tiles : 1;
        /* ops per layer: 2 chips x (33 + about 3/4 of the tiles) + 1 barrier */
        unsigned long long per_layer = 2ULL * (32 + (t / 2 + t) / 2 + 1) + 1;
        unsigned long long steps = (ops + per_layer * layers - 1) / (per_layer * layers);
        p.steps = (uint32_t)(steps ? steps : 1);
        if (gg_realistic(f, &p) != 0)
            rc = 2;
        fprintf(stderr, "gen-graph: %llu ops, %llu accesses, %u steps x %u layers\n",
                (unsigned long long)p.ops, (unsigned long long)p.accesses, p.steps, p.layers);
    }
    if (f != stdout && fclose(f) != 0)
        rc = 2;
    if (rc)
        fprintf(stderr, "gen-graph: %s: write failed\n", out);
    return rc;
}

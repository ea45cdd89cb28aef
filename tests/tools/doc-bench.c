/* Benchmark helper for the document layer (bench/doc.sh): writes a calculet-graph/v1 graph
 * of N ops and a schema for it, and times loading and validating it against plain jansson. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "golden/doc.h"
#include "golden/schema.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec * 1e-6 +
           (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec * 1e-6;
}

static long max_rss_mb(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss / 1024;
}

static int gen(long n, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return 2;
    const long nb = 1000;
    unsigned seed = 1;
    fprintf(f, "{\"schema\": \"calculet-graph/v1\",\n \"queues\": [{\"id\": \"c0.compute\", "
               "\"chip\": 0}, {\"id\": \"c1.compute\", \"chip\": 1}],\n \"buffers\": [");
    for (long i = 0; i < nb; i++)
        fprintf(f, "%s{\"id\": \"b%ld\", \"chip\": %ld, \"space\": \"ddr\", \"address\": %ld, "
                   "\"size\": 65536}",
                i ? ",\n" : "", i, i % 2, i * 65536);
    fprintf(f, "],\n \"ops\": [\n");
    for (long i = 0; i < n; i++) {
        long b[4];
        for (int k = 0; k < 4; k++) {
            seed = seed * 1103515245u + 12345u;
            b[k] = (long)((seed >> 8) % (unsigned)nb);
        }
        fprintf(f,
                "  {\"id\": \"op%ld\", \"queue\": \"c%ld.compute\", \"family\": \"matmul\", "
                "\"after\": [\"op%ld\"], \"reads\": [{\"buffer\": \"b%ld\", \"offset\": 0, "
                "\"size\": 4096}, {\"buffer\": \"b%ld\", \"offset\": 4096, \"size\": 4096}, "
                "{\"buffer\": \"b%ld\", \"offset\": 0, \"size\": 1024}], \"writes\": "
                "[{\"buffer\": \"b%ld\", \"offset\": 8192, \"size\": 2048}], \"data_size\": "
                "2048}%s\n",
                i, i % 2, i > 0 ? i - 1 : 0, b[0], b[1], b[2], b[3], i + 1 < n ? "," : "");
    }
    fprintf(f, "]}\n");
    return fclose(f) == 0 ? 0 : 2;
}

static const char *schema_text =
    "{\"$schema\": \"https://json-schema.org/draft/2020-12/schema\",\n"
    " \"$id\": \"https://calculet.invalid/schemas/bench-graph.schema.json\",\n"
    " \"type\": \"object\", \"required\": [\"schema\", \"queues\", \"ops\"],\n"
    " \"properties\": {\n"
    "   \"schema\": {\"const\": \"calculet-graph/v1\"},\n"
    "   \"queues\": {\"type\": \"array\", \"items\": {\"type\": \"object\", \"required\": "
    "[\"id\"], \"properties\": {\"id\": {\"$ref\": \"#/$defs/id\"}, \"chip\": {\"type\": "
    "\"integer\", \"minimum\": 0}}, \"additionalProperties\": false}},\n"
    "   \"buffers\": {\"type\": \"array\", \"items\": {\"$ref\": \"#/$defs/buffer\"}},\n"
    "   \"ops\": {\"type\": \"array\", \"items\": {\"$ref\": \"#/$defs/op\"}}},\n"
    " \"additionalProperties\": false,\n"
    " \"$defs\": {\n"
    "   \"id\": {\"type\": \"string\", \"pattern\": \"^[A-Za-z0-9_.:-]+$\", \"minLength\": 1},\n"
    "   \"buffer\": {\"type\": \"object\", \"required\": [\"id\", \"chip\", \"space\", "
    "\"address\", \"size\"], \"properties\": {\"id\": {\"$ref\": \"#/$defs/id\"}, \"chip\": "
    "{\"type\": \"integer\", \"minimum\": 0}, \"space\": {\"enum\": [\"ddr\", \"sram\", "
    "\"l2\"]}, \"address\": {\"type\": \"integer\", \"minimum\": 0}, \"size\": {\"type\": "
    "\"integer\", \"minimum\": 1}}, \"additionalProperties\": false},\n"
    "   \"access\": {\"type\": \"object\", \"required\": [\"buffer\", \"offset\", \"size\"], "
    "\"properties\": {\"buffer\": {\"$ref\": \"#/$defs/id\"}, \"offset\": {\"type\": "
    "\"integer\", \"minimum\": 0}, \"size\": {\"type\": \"integer\", \"minimum\": 1}}, "
    "\"additionalProperties\": false},\n"
    "   \"op\": {\"type\": \"object\", \"required\": [\"id\"], \"properties\": {\"id\": "
    "{\"$ref\": \"#/$defs/id\"}, \"queue\": {\"$ref\": \"#/$defs/id\"}, \"family\": {\"type\": "
    "\"string\"}, \"kind\": {\"enum\": [\"compute\", \"signal\", \"wait\", \"barrier\"]}, "
    "\"event\": {\"type\": \"string\"}, \"queues\": {\"type\": \"array\", \"items\": {\"$ref\": "
    "\"#/$defs/id\"}}, \"after\": {\"type\": \"array\", \"items\": {\"$ref\": "
    "\"#/$defs/id\"}}, \"reads\": {\"type\": \"array\", \"items\": {\"$ref\": "
    "\"#/$defs/access\"}}, \"writes\": {\"type\": \"array\", \"items\": {\"$ref\": "
    "\"#/$defs/access\"}}, \"data_size\": {\"type\": \"integer\", \"minimum\": 0}}, "
    "\"additionalProperties\": false, \"if\": {\"properties\": {\"kind\": {\"const\": "
    "\"barrier\"}}, \"required\": [\"kind\"]}, \"then\": {\"required\": [\"queues\"]}, "
    "\"else\": {\"required\": [\"queue\"]}}}}\n";

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "gen"))
        return gen(atol(argv[2]), argv[3]);
    if (argc == 3 && !strcmp(argv[1], "schema")) {
        FILE *f = fopen(argv[2], "w");
        if (!f || fputs(schema_text, f) < 0 || fclose(f) != 0)
            return 2;
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "jansson")) {
        double t0 = now(), c0 = cpu();
        json_error_t je;
        json_t *r = json_load_file(argv[2], 0, &je);
        if (!r) {
            fprintf(stderr, "doc-bench: %s:%d: %s\n", argv[2], je.line, je.text);
            return 2;
        }
        printf("jansson_load_s %.2f cpu %.2f rss_mb %ld\n", now() - t0, cpu() - c0,
               max_rss_mb());
        json_decref(r);
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "golden")) {
        /* what the tools do: opt in to arena-built trees (golden/doc.h) */
        golden_doc_use_arena_allocator();
        golden_error err;
        golden_schema *s;
        golden_doc *d;
        if (golden_schema_load(argv[3], &s, &err) != GOLDEN_OK) {
            golden_error_print(stderr, "doc-bench", &err);
            return 2;
        }
        double t0 = now(), c0 = cpu();
        if (golden_doc_load_file(argv[2], &d, &err) != GOLDEN_OK) {
            golden_error_print(stderr, "doc-bench", &err);
            return 2;
        }
        double t1 = now(), c1 = cpu();
        golden_violation *v;
        long n = golden_schema_validate(s, d, NULL, &v, &err);
        double t2 = now(), c2 = cpu();
        if (n < 0) {
            golden_error_print(stderr, "doc-bench", &err);
            return 2;
        }
        printf("golden_load_s %.2f cpu %.2f validate_s %.2f cpu %.2f violations %ld rss_mb %ld\n",
               t1 - t0, c1 - c0, t2 - t1, c2 - c1, n, max_rss_mb());
        free(v);
        golden_doc_free(d);
        golden_schema_free(s);
        return 0;
    }
    fprintf(stderr, "usage: doc-bench gen N FILE | schema FILE | jansson FILE | golden FILE "
                    "SCHEMA\n");
    return 2;
}

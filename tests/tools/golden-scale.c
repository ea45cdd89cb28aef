/* Test helper: copy a calculet-golden/v1 file with one f32 tensor multiplied by a factor (its
 * sha256 and statistics recomputed by the writer), so a test can plant "a scaled layer" in a
 * delivered golden. golden-scale IN.h5 OUT.h5 NAME FACTOR */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/store.h"

static int die(const golden_error *e)
{
    fprintf(stderr, "golden-scale: %s: %s\n", e->where, e->what);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fputs("usage: golden-scale IN.h5 OUT.h5 NAME FACTOR\n", stderr);
        return 2;
    }
    double factor = strtod(argv[4], NULL);
    golden_error e;
    golden_error_clear(&e);
    golden_reader *r = NULL;
    golden_writer *w = NULL;
    golden_writer_opts wo = {.version = GOLDEN_WRITER_OPTS_VERSION, .force = true,
                             .producer = "golden-scale", .threads = 1};
    if (golden_reader_open(argv[1], &r, &e) != 0 || golden_writer_open(argv[2], &wo, &w, &e) != 0)
        return die(&e);
    for (size_t i = 0; i < golden_reader_meta_count(r); i++) {
        const char *k, *v;
        golden_reader_meta_at(r, i, &k, &v);
        if (strcmp(k, "schema") != 0 && strcmp(k, "producer") != 0 && strcmp(k, "created") != 0 &&
            golden_writer_meta(w, k, v, &e) != 0)
            return die(&e);
    }
    int found = 0;
    for (size_t i = 0; i < golden_reader_count(r); i++) {
        const golden_tensor_info *t = golden_reader_tensor(r, i);
        size_t esz = golden_dtype_size(t->dtype);
        uint8_t *buf = malloc(t->count * esz + 1);
        if (!buf || golden_reader_read(r, i, 0, t->count, buf, &e) != 0)
            return buf ? die(&e) : 2;
        if (strcmp(t->name, argv[3]) == 0) {
            if (t->dtype != GOLDEN_F32) {
                fputs("golden-scale: the tensor is not f32\n", stderr);
                return 2;
            }
            found = 1;
            for (uint64_t k = 0; k < t->count; k++) {
                float f;
                memcpy(&f, buf + 4 * k, 4);
                f = (float)(f * factor);
                memcpy(buf + 4 * k, &f, 4);
            }
        }
        if (golden_writer_begin(w, t, &e) != 0 || golden_writer_write(w, buf, t->count * esz, &e) != 0 ||
            golden_writer_end(w, NULL, &e) != 0)
            return die(&e);
        free(buf);
    }
    if (!found) {
        fprintf(stderr, "golden-scale: no tensor %s\n", argv[3]);
        golden_writer_abort(w);
        return 2;
    }
    if (golden_writer_commit(w, &e) != 0)
        return die(&e);
    golden_reader_close(r);
    return 0;
}

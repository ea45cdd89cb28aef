/* Test helper for the tokenizer (golden/tokenizer.h):
 *   tok-tool encode TOKENIZER FILE     one line of ids per line of FILE (the line without its \n)
 *   tok-tool whole TOKENIZER FILE      the ids of the whole file, one line
 *   tok-tool decode TOKENIZER IDS...   the decoded bytes on stdout
 *   tok-tool roundtrip TOKENIZER FILE  decode(encode(FILE)) == FILE, byte for byte
 *   tok-tool bench TOKENIZER FILE N    encode FILE N times: "TOKENS SECONDS TOKENS_PER_S"
 *   tok-tool hash TOKENIZER            the file's sha256 and vocab size
 *   tok-tool synth PATH VOCAB          golden_tokenizer_write_synthetic
 * Exit 0 ok, 1 a round trip differs, 2 error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "golden/tokenizer.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    size_t r;
    while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                b = NULL;
            }
            b = nb;
        }
    }
    fclose(f);
    *len = n;
    return b;
}

static void print_ids(const int32_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("%s%d", i ? " " : "", (int)ids[i]);
    putchar('\n');
}

static int fail(const golden_error *err)
{
    golden_error_print(stderr, "tok-tool", err);
    return 2;
}

static int run(const char *cmd, golden_tokenizer *t, int argc, char **argv)
{
    golden_error err;
    size_t len = 0;
    char *text = argc > 3 && strcmp(cmd, "decode") != 0 ? slurp(argv[3], &len) : NULL;
    if (argc > 3 && strcmp(cmd, "decode") != 0 && !text) {
        fprintf(stderr, "tok-tool: %s: cannot read\n", argv[3]);
        return 2;
    }
    int rc = 0;
    int32_t *ids = NULL;
    size_t n = 0;
    if (strcmp(cmd, "encode") == 0) {
        for (size_t i = 0; i < len && rc == 0;) {
            const char *nl = memchr(text + i, '\n', len - i);
            size_t e = nl ? (size_t)(nl - text) : len;
            if (golden_tokenizer_encode(t, text + i, e - i, &ids, &n, &err))
                rc = fail(&err);
            else
                print_ids(ids, n);
            free(ids);
            i = e + 1;
        }
    } else if (strcmp(cmd, "whole") == 0 || strcmp(cmd, "roundtrip") == 0) {
        char *back = NULL;
        size_t blen = 0;
        if (golden_tokenizer_encode(t, text, len, &ids, &n, &err) ||
            golden_tokenizer_decode(t, ids, n, &back, &blen, &err))
            rc = fail(&err);
        else if (cmd[0] == 'w')
            print_ids(ids, n);
        else if (blen != len || memcmp(back, text, len) != 0) {
            size_t k = 0;
            while (k < len && k < blen && back[k] == text[k])
                k++;
            printf("%s: round trip differs at byte %zu (%zu tokens)\n", argv[3], k, n);
            rc = 1;
        } else
            printf("%s: %zu bytes, %zu tokens, round trip exact\n", argv[3], len, n);
        free(ids);
        free(back);
    } else if (strcmp(cmd, "bench") == 0 && argc == 5) {
        int reps = atoi(argv[4]);
        struct timespec a, b;
        size_t total = 0;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (int r = 0; r < reps && rc == 0; r++) {
            if (golden_tokenizer_encode(t, text, len, &ids, &n, &err))
                rc = fail(&err);
            total += n;
            free(ids);
        }
        clock_gettime(CLOCK_MONOTONIC, &b);
        double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
        printf("%zu %.6f %.0f\n", total, s, (double)total / s);
    } else if (strcmp(cmd, "decode") == 0) {
        int32_t *v = malloc((size_t)(argc > 3 ? argc - 3 : 1) * sizeof *v);
        for (int i = 3; v && i < argc; i++)
            v[i - 3] = (int32_t)strtol(argv[i], NULL, 10);
        char *back = NULL;
        size_t blen = 0;
        if (!v || golden_tokenizer_decode(t, v, (size_t)(argc - 3), &back, &blen, &err))
            rc = v ? fail(&err) : 2;
        else
            fwrite(back, 1, blen, stdout);
        free(v);
        free(back);
    } else if (strcmp(cmd, "hash") == 0) {
        printf("%s %zu\n", golden_tokenizer_sha256(t), golden_tokenizer_vocab_size(t));
    } else {
        fprintf(stderr, "tok-tool: unknown command %s\n", cmd);
        rc = 2;
    }
    free(text);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: tok-tool encode|whole|decode|roundtrip|bench|hash TOKENIZER ... "
                        "| synth PATH VOCAB\n");
        return 2;
    }
    golden_error err;
    if (strcmp(argv[1], "synth") == 0) {
        if (argc != 4 || golden_tokenizer_write_synthetic(argv[2], (size_t)atol(argv[3]), &err))
            return argc != 4 ? 2 : fail(&err);
        return 0;
    }
    golden_tokenizer *t = NULL;
    if (golden_tokenizer_load(argv[2], NULL, &t, &err))
        return fail(&err);
    int rc = run(argv[1], t, argc, argv);
    golden_tokenizer_free(t);
    return rc;
}

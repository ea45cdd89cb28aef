/* The tokenizer module's private parts: the loaded tables, the pieces of the pre-tokenizer
 * and the BPE of one piece, shared by load.c, encode.c and synth.c. */
#ifndef TOK_INT_H
#define TOK_INT_H
#include <stddef.h>
#include <stdint.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "golden/tokenizer.h"
#include "util/strmap.h"

/* (left id, right id) -> (rank, merged id), open addressing on the 64-bit pair. */
typedef struct {
    uint64_t *keys; /* (a << 32 | b) + 1; 0 = empty */
    uint64_t *vals; /* rank << 32 | merged id */
    size_t cap, n;
} tok_pairmap;

int tok_pair_put(tok_pairmap *m, uint32_t a, uint32_t b, uint32_t rank, uint32_t id);
/* 1 and *rank, *id set when present, else 0. */
int tok_pair_get(const tok_pairmap *m, uint32_t a, uint32_t b, uint32_t *rank, uint32_t *id);
void tok_pair_free(tok_pairmap *m);

/* One step of the pre-tokenizer: a regex split (Isolated) and/or a prefix space. */
typedef struct {
    pcre2_code *re;   /* NULL: no split */
    int prefix_space; /* ByteLevel add_prefix_space */
} tok_step;

typedef struct {
    char *content;
    size_t len;
    int32_t id;
} tok_added;

#define TOK_MAX_STEPS 8

struct golden_tokenizer {
    char sha256[65];
    size_t nids;       /* highest id + 1 */
    char *bytes;       /* the raw bytes of every token, one block */
    size_t *off, *len; /* per id; off == SIZE_MAX: no token has this id */
    golden_strmap vocab; /* raw bytes -> id (keys into `bytes`) */
    int32_t byte_id[256];
    tok_pairmap merges;
    tok_added *added; /* sorted by content */
    size_t nadded;
    int nfc;
    int ignore_merges;
    tok_step steps[TOK_MAX_STEPS];
    int nsteps;
};

/* The byte-level alphabet (GPT-2's bytes_to_unicode): the code point byte b is shown as. */
uint32_t tok_byte_char(unsigned b);

/* The BPE of one piece of raw bytes: append its ids to *ids (growing *cap). 0 or -1 (ENOMEM). */
int tok_bpe(const golden_tokenizer *t, const unsigned char *p, size_t n, int32_t **ids,
            size_t *nids, size_t *cap);

/* Compile a split regex the way every tokenizer uses it (UTF, UCP, invalid UTF-8 allowed,
 * JIT when available): NULL and msg filled on error. */
pcre2_code *tok_regex(const char *pattern, size_t len, char *msg, size_t msglen);

/* The pieces of one text segment after the pre-tokenizer steps (no normalization):
 * call fn for each piece. 0, or -1 with err set. */
typedef int (*tok_piece_fn)(void *ctx, const unsigned char *p, size_t n);
int tok_pretokenize(const golden_tokenizer *t, const unsigned char *s, size_t n, tok_piece_fn fn,
                    void *ctx, golden_error *err);

/* The Qwen2 split regex (also written by golden_tokenizer_write_synthetic). */
extern const char tok_qwen2_pattern[];
/* The GPT-2 split regex of ByteLevel's use_regex. */
extern const char tok_gpt2_pattern[];

#endif

/* Byte-level BPE tokenizers from Hugging Face `tokenizer.json` files (the kind Qwen, GPT-2 and
 * Llama 3 use): added/special tokens matched first, an optional NFC normalizer, the split
 * regex (PCRE2) and byte-level alphabet, BPE merges by rank; encode and decode. What is
 * supported and what is refused: docs/tokenizer.md. */
#ifndef GOLDEN_TOKENIZER_H
#define GOLDEN_TOKENIZER_H
#include "golden/api.h"
#include <stddef.h>
#include <stdint.h>
#include "golden/error.h"

typedef struct golden_tokenizer golden_tokenizer;

/* How a tokenizer file loads. Versioned: set version to GOLDEN_TOKENIZER_OPTS_VERSION (or
 * start from GOLDEN_TOKENIZER_OPTS_INIT); a NULL pointer means the defaults. */
typedef struct {
    unsigned version;
    size_t max_bytes; /* a file larger than this is refused before it is read;
                       * 0 = GOLDEN_TOKENIZER_MAX_BYTES */
} golden_tokenizer_opts;
#define GOLDEN_TOKENIZER_OPTS_VERSION 1u
#define GOLDEN_TOKENIZER_OPTS_INIT {GOLDEN_TOKENIZER_OPTS_VERSION, 0}
#define GOLDEN_TOKENIZER_MAX_BYTES ((size_t)256 << 20) /* 256 MiB (Qwen's file: 7 MB) */
#define GOLDEN_TOKENIZER_MAX_ID ((int32_t)1 << 22)     /* ids are below 4,194,304 */

/* Load a tokenizer.json through the strict document loader. Any problem (not JSON, a
 * missing or mistyped key, an unsupported model/normalizer/pre-tokenizer, a merge naming a
 * token the vocab lacks, a duplicate id, a file above the limit) is one error whose `where`
 * names the file (file:line:col when a node is at fault). */
GOLDEN_API int golden_tokenizer_load(const char *path, const golden_tokenizer_opts *opts,
                                     golden_tokenizer **out, golden_error *err);
/* Free (NULL is fine). A loaded tokenizer may encode and decode from several threads. */
GOLDEN_API void golden_tokenizer_free(golden_tokenizer *t);

/* One more than the highest id of the vocab and the added tokens. */
GOLDEN_API size_t golden_tokenizer_vocab_size(const golden_tokenizer *t);
/* SHA-256 (64 lowercase hex) of the exact bytes that were loaded: what
 * `controlled.tokenizer_hash` and a calibration manifest's `tokenizer_sha256` name. */
GOLDEN_API const char *golden_tokenizer_sha256(const golden_tokenizer *t);
/* The id of a token given as text (an added token's content, or a vocab token's bytes):
 * 0 and *id set, or -1 when there is no such token. */
GOLDEN_API int golden_tokenizer_token_id(const golden_tokenizer *t, const char *text, size_t len,
                                         int32_t *id);

/* Encode len bytes of text into a malloc'ed array *ids of *n ids (caller frees; *ids may be
 * NULL when *n is 0). Any bytes are accepted: invalid UTF-8 is never normalized or matched by
 * the split regex and becomes pieces of its own (docs/tokenizer.md), so decode gives it back. */
GOLDEN_API int golden_tokenizer_encode(const golden_tokenizer *t, const char *text, size_t len,
                                       int32_t **ids, size_t *n, golden_error *err);
/* Decode n ids into a malloc'ed buffer *text of *len bytes (NUL-terminated, caller frees):
 * the exact bytes of the tokens, which may be invalid UTF-8 when the ids split a character.
 * An id the tokenizer does not have is an error (GOLDEN_EINVAL). */
GOLDEN_API int golden_tokenizer_decode(const golden_tokenizer *t, const int32_t *ids, size_t n,
                                       char **text, size_t *len, golden_error *err);

/* Write a small deterministic tokenizer.json of the Qwen kind to path: the 256 byte tokens,
 * BPE merges learnt from a text compiled into the library (English prose, code, numbers and
 * a few other scripts) until no pair occurs twice or vocab_size is reached, then the special
 * tokens <|endoftext|>, <|im_start|>, <|im_end|>. vocab_size must be at least 259. The file
 * is the same byte for byte on every run and machine. */
GOLDEN_API int golden_tokenizer_write_synthetic(const char *path, size_t vocab_size,
                                                golden_error *err);

#endif

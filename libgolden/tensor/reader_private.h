/* What the golden reader (store_reader.c) and its foreign-input half (reader_foreign.c,
 * reader_sniff.c) share inside libgolden: the kind of a file told by its first bytes, and the
 * tensors of inputs that are not goldens (golden_reader_open_flags with GOLDEN_READ_FOREIGN). */
#ifndef GOLDEN_TENSOR_READER_PRIVATE_H
#define GOLDEN_TENSOR_READER_PRIVATE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "golden/error.h"
#include "golden/store.h"

/* What a file is, by content (magic bytes), never only by its suffix. */
typedef enum {
    LG_KIND_HDF5,        /* "\x89HDF\r\n\x1a\n" at 0, 512, 1024, 2048, ... */
    LG_KIND_NPY,         /* "\x93NUMPY" */
    LG_KIND_SAFETENSORS, /* u64 little-endian header length, then '{' */
    LG_KIND_ZIP,         /* "PK\3\4" or "PK\5\6": .npz or a torch.save file */
    LG_KIND_PICKLE,      /* 0x80 then a protocol byte: a legacy (pre-zip) torch.save file */
    LG_KIND_JSON,        /* first non-blank byte '{' or '[' */
    LG_KIND_TEXT,
    LG_KIND_BINARY,      /* nothing recognised (raw dumps are read through a dump index) */
    LG_KIND_EMPTY
} lg_kind;

/* Tell the kind of the regular file `path`; 0, or -1 with err set (unreadable). */
int lg_sniff(const char *path, lg_kind *kind, golden_error *err);
/* A few words for a kind ("a .npy array", "text", ...), for messages. */
const char *lg_kind_text(lg_kind k);
/* The inputs the readers take, for "not a tensor file" messages. */
#define LG_READ_SUPPORTED "goldens, .npy, .npz, .safetensors, .pt/.pth, HDF5 files, dump " \
                          "indexes and folders of these"

/* Files (or datasets) passed over while reading an input: listed, never silent. */
typedef struct {
    char **path, **why;
    size_t n, cap;
} lg_skiplist;
int lg_skip_add(lg_skiplist *s, const char *path, const char *why);
void lg_skip_free(lg_skiplist *s);

/* The tensors of a foreign input: a .npy, .safetensors, dump index, .npz/.pt (through
 * golden_ingest_path), or a folder of these and of HDF5 files. Sorted by name. */
typedef struct lg_foreign lg_foreign;
int lg_foreign_open(const char *path, unsigned flags, lg_foreign **out, golden_error *err);
void lg_foreign_close(lg_foreign *f);
size_t lg_foreign_count(const lg_foreign *f);
const golden_tensor_info *lg_foreign_tensor(const lg_foreign *f, size_t i);
bool lg_foreign_stored(const lg_foreign *f, size_t i);
const char *lg_foreign_format(const lg_foreign *f, size_t i);
bool lg_foreign_is_folder(const lg_foreign *f);
const lg_skiplist *lg_foreign_skipped(const lg_foreign *f);
/* Elements [first, first + n) of tensor i in C order as canonical bytes; thread-safe. */
int lg_foreign_read(lg_foreign *f, size_t i, uint64_t first, uint64_t n, void *buf,
                    golden_error *err);

#endif

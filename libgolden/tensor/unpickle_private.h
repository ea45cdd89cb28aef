/* A restricted unpickler for PyTorch's data.pkl (inside libgolden, not installed): pickle
 * protocols 2-5 as torch.save writes them, building only tensors, typed storages, (ordered)
 * dicts, lists, tuples, strings and scalars. Any other global is refused by name; nothing is
 * ever called or imported. Every size is capped: memo, stack, marks, values (docs/formats.md). */
#ifndef GOLDEN_TENSOR_UNPICKLE_PRIVATE_H
#define GOLDEN_TENSOR_UNPICKLE_PRIVATE_H
#include <stddef.h>
#include <stdint.h>
#include "golden/dtype.h"
#include "golden/error.h"
#include "golden/store.h"

#define LG_PK_MAX_MEMO (1u << 20)   /* memo slots */
#define LG_PK_MAX_STACK (1u << 20)  /* values on the stack */
#define LG_PK_MAX_MARKS 256u        /* open MARKs */
#define LG_PK_MAX_VALUES (1u << 21) /* values built in all */
#define LG_PK_MAX_STR (1u << 20)    /* bytes of one string */

typedef enum {
    LG_PK_NONE,
    LG_PK_BOOL,
    LG_PK_INT,
    LG_PK_FLOAT,
    LG_PK_STR,
    LG_PK_BYTES,
    LG_PK_TUPLE,
    LG_PK_LIST,
    LG_PK_DICT,    /* dict or collections.OrderedDict: items = key, value, key, value ... */
    LG_PK_GLOBAL,  /* one of the allowed globals (glob says which) */
    LG_PK_STORAGE, /* a persistent id ('storage', type, key, location, numel) */
    LG_PK_TENSOR   /* torch._utils._rebuild_tensor_v2 / _rebuild_parameter */
} lg_pk_kind;

typedef enum {
    LG_PK_G_ODICT,         /* collections.OrderedDict */
    LG_PK_G_REBUILD,       /* torch._utils._rebuild_tensor_v2 */
    LG_PK_G_PARAM,         /* torch._utils._rebuild_parameter */
    LG_PK_G_STORAGE_TYPE,  /* torch.FloatStorage ... (dtype says which) */
    /* bytes as pickle protocol 2 writes them (torch.save's default): _codecs.encode(str,
     * 'latin1') and __builtin__.bytes() for b''. REDUCE builds the bytes; nothing else is
     * accepted for them (never a general call). */
    LG_PK_G_CODECS_ENCODE,
    LG_PK_G_BYTES
} lg_pk_global;

typedef struct lg_pk_val lg_pk_val;

typedef struct {
    lg_pk_val *storage;
    uint64_t offset; /* in elements */
    int rank;
    uint64_t shape[GOLDEN_MAX_RANK];
    int64_t stride[GOLDEN_MAX_RANK];
} lg_pk_tensor;

struct lg_pk_val {
    lg_pk_kind kind;
    lg_pk_global glob;
    golden_dtype dtype; /* STORAGE, GLOBAL storage type */
    int64_t i;          /* BOOL, INT; STORAGE: numel */
    double f;
    const char *s;      /* STR, BYTES, STORAGE key: points into the pickle, not NUL-ended */
    size_t slen;
    lg_pk_val **items;  /* TUPLE, LIST, DICT */
    size_t n, cap;
    lg_pk_tensor *t;    /* TENSOR */
    char *own;          /* BYTES built by REDUCE (_codecs.encode): s points here, freed with it */
};

typedef struct {
    lg_pk_val **all; /* every value built, freed together */
    size_t n, cap;
    lg_pk_val *root;
} lg_pickle;

/* Unpickle buf[0, len) (the pickle must end at STOP; trailing bytes are an error). Errors are
 * filled with where = `where`. The values point into buf: keep it while using them. */
int lg_unpickle(const unsigned char *buf, size_t len, const char *where, lg_pickle *out,
                golden_error *err);
void lg_pickle_free(lg_pickle *p);
/* "int", "str", "dict", ... for messages. */
const char *lg_pk_kind_name(lg_pk_kind k);

#endif

/* The calculet-golden/v1 reader: one checked walk of the file's metadata (every HDF5 result
 * checked, every object accounted for), then any linear element range of a tensor. */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "golden/hash.h"
#include "golden/report.h"
#include "golden/store.h"
#include "tensor/reader_private.h"
#include "tensor/store_private.h"
#include "util/guard.h"
#include "util/vec.h"

/* ------------------------------------------------------------------ reader */

typedef struct {
    golden_tensor_info info;
    hid_t dset;       /* opened lazily under the lock, -1 until then */
    int64_t offset;   /* file offset for direct reads, -1 when HDF5 must read */
    bool enum_bool;   /* plain HDF5: an enum of 1-byte integers (h5py's bool), read as is */
} reader_tensor;

struct golden_reader {
    char *path;
    hid_t file;
    int fd;
    struct stat id;   /* fstat of fd when opened: the file every walk and read must be */
    reader_tensor *t;
    size_t n, cap;
    char **meta_keys, **meta_vals;
    size_t meta_n;
    golden_error err; /* first error met while visiting */
    int failed;
    unsigned flags;   /* GOLDEN_READ_* */
    size_t objects, links; /* met by the walks */
    bool plain;       /* GOLDEN_READ_FOREIGN: an HDF5 file without the golden schema */
    lg_foreign *foreign; /* GOLDEN_READ_FOREIGN: not an HDF5 file (reader_foreign.c) */
    lg_skiplist skipped; /* plain HDF5: datasets that are not numeric tensors */
    hid_t canon[GOLDEN_DTYPE_COUNT]; /* each dtype's stored type, made once per walk (or 0) */
};

/* The dataset attributes of the contract, read in one pass over a dataset's attributes. */
enum { ATTR_STRING, ATTR_U64, ATTR_I64, ATTR_F64 };
enum {
    A_DTYPE, A_SHA, A_COUNT, A_NAN, A_POSINF, A_NEGINF, A_ZERO, A_MIN, A_MAX, A_MEAN, A_STD,
    A_LAYER, A_CHIP, A_STEP, A_OPFAM, A_SOURCE, A_DIGEST, ATTR_COUNT
};
static const struct {
    const char *name;
    int kind;
    bool required;
} attr_table[ATTR_COUNT] = {
    [A_DTYPE] = {"dtype", ATTR_STRING, false}, /* absence reported with its own message */
    [A_SHA] = {"sha256", ATTR_STRING, false},
    [A_COUNT] = {"count", ATTR_U64, true},
    [A_NAN] = {"nan_count", ATTR_U64, true},
    [A_POSINF] = {"posinf_count", ATTR_U64, true},
    [A_NEGINF] = {"neginf_count", ATTR_U64, true},
    [A_ZERO] = {"zero_count", ATTR_U64, true},
    [A_MIN] = {"min", ATTR_F64, true},
    [A_MAX] = {"max", ATTR_F64, true},
    [A_MEAN] = {"mean", ATTR_F64, true},
    [A_STD] = {"std", ATTR_F64, true},
    [A_LAYER] = {"layer", ATTR_I64, false},
    [A_CHIP] = {"chip", ATTR_I64, false},
    [A_STEP] = {"step", ATTR_I64, false},
    [A_OPFAM] = {"op_family", ATTR_STRING, false},
    [A_SOURCE] = {"source", ATTR_STRING, false},
    [A_DIGEST] = {"tensor_digest", ATTR_STRING, false}, /* goldens written since it exists */
};

typedef struct {
    golden_tensor_info *t;
    bool values_unread; /* GOLDEN_READ_DATA_ONLY: hash and statistics need only be present */
    unsigned seen, bad;
    char *dtype, *sha, *op_family, *source, *digest;
} tensor_attrs;

static void *attr_slot(tensor_attrs *ta, int k)
{
    golden_tensor_info *t = ta->t;
    switch (k) {
    case A_DTYPE: return &ta->dtype;
    case A_SHA: return &ta->sha;
    case A_OPFAM: return &ta->op_family;
    case A_SOURCE: return &ta->source;
    case A_DIGEST: return &ta->digest;
    case A_COUNT: return &t->count_attr;
    case A_NAN: return &t->nan_count;
    case A_POSINF: return &t->posinf_count;
    case A_NEGINF: return &t->neginf_count;
    case A_ZERO: return &t->zero_count;
    case A_MIN: return &t->min;
    case A_MAX: return &t->max;
    case A_MEAN: return &t->mean;
    case A_STD: return &t->std;
    case A_LAYER: return &t->layer;
    case A_CHIP: return &t->chip;
    default: return &t->step;
    }
}

/* How the contract stores each dtype, for messages. */
static const char *stored_type_text(golden_dtype dt)
{
    switch (dt) {
    case GOLDEN_F64: return "IEEE f64 little-endian";
    case GOLDEN_F32: return "IEEE f32 little-endian";
    case GOLDEN_F16: return "IEEE f16 little-endian";
    case GOLDEN_BF16: return "the 2-byte bfloat16 float";
    case GOLDEN_I8: return "i8";
    case GOLDEN_I16: return "i16 little-endian";
    case GOLDEN_U16: return "u16 little-endian";
    case GOLDEN_I32: return "i32 little-endian";
    case GOLDEN_U32: return "u32 little-endian";
    case GOLDEN_I64: return "i64 little-endian";
    case GOLDEN_U64: return "u64 little-endian";
    default: return "u8";
    }
}

static herr_t tensor_attr_cb(hid_t loc, const char *name, const H5A_info_t *ai, void *data)
{
    tensor_attrs *ta = data;
    int k = 0;
    while (k < ATTR_COUNT && strcmp(attr_table[k].name, name) != 0)
        k++;
    if (k == ATTR_COUNT)
        return 0; /* other attributes are the user's business */
    if (ta->values_unread && ((k >= A_SHA && k <= A_STD) || k == A_DIGEST)) {
        ta->seen |= 1u << k;
        return 0;
    }
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    int ok = 0;
    if (a >= 0) {
        void *slot = attr_slot(ta, k);
        switch (attr_table[k].kind) {
        case ATTR_STRING: {
            char *v = lg_attr_str_of(a);
            if (v) {
                free(*(char **)slot);
                *(char **)slot = v;
                ok = 1;
            }
            break;
        }
        case ATTR_U64: ok = lg_attr_num_of(a, ai->data_size, H5T_NATIVE_UINT64, slot) == 1; break;
        case ATTR_I64: ok = lg_attr_num_of(a, ai->data_size, H5T_NATIVE_INT64, slot) == 1; break;
        default: ok = lg_attr_num_of(a, ai->data_size, H5T_NATIVE_DOUBLE, slot) == 1; break;
        }
        H5Aclose(a);
    }
    if (ok)
        ta->seen |= 1u << k;
    else
        ta->bad |= 1u << k;
    return 0;
}

/* 1 when every element of a tensor with elements has storage, 0 when some has none (created
 * and never written: HDF5 would hand out fill values, or leave the buffer as it was), -1 on
 * error. Chunked data counts its chunks: HDF5's space status calls a compressed dataset
 * "partly allocated" because its chunks are smaller than their nominal size. */
static int storage_written(hid_t d, hid_t dcpl, H5D_layout_t lay, const golden_tensor_info *t)
{
    /* (dcpl: the dataset's creation list, fetched once by the caller; lay: its layout as the
     * caller read it, asked again only when that failed) */
    H5D_layout_t layout = lay >= 0 ? lay : H5Pget_layout(dcpl);
    hsize_t chunk[GOLDEN_MAX_RANK];
    int crank = layout == H5D_CHUNKED ? H5Pget_chunk(dcpl, GOLDEN_MAX_RANK, chunk) : 0;
    if (layout < 0 || crank < 0)
        return -1;
    if (layout == H5D_CHUNKED) {
        if (crank != t->rank)
            return -1;
        hsize_t want = 1, have = 0;
        for (int k = 0; k < crank; k++)
            want *= chunk[k] ? (t->shape[k] + chunk[k] - 1) / chunk[k] : 0;
        hid_t space = H5Dget_space(d); /* (1.10 refuses H5S_ALL here) */
        herr_t rc = space < 0 ? -1 : H5Dget_num_chunks(d, space, &have);
        if (space >= 0)
            H5Sclose(space);
        return rc < 0 ? -1 : have == want;
    }
    H5D_space_status_t status;
    if (H5Dget_space_status(d, &status) < 0)
        return -1;
    return status == H5D_SPACE_STATUS_ALLOCATED;
}

/* Each dtype has exactly one stored HDF5 type (contract section 2): the stored type must be it
 * (the committed /bfloat16 of newer goldens compares equal to the anonymous one of older
 * ones), never something HDF5 would convert on reading; and a tensor with elements must have
 * every byte of its storage written. */
static hid_t canon_type(golden_reader *r, golden_dtype dt)
{
    if (r->canon[dt] <= 0)
        r->canon[dt] = lg_store_type(dt);
    return r->canon[dt];
}

static int check_stored_type(golden_reader *r, hid_t d, hid_t ft, hid_t dcpl, H5D_layout_t lay,
                             const golden_tensor_info *t, const char *where, golden_error *err)
{
    hid_t canon = canon_type(r, t->dtype);
    htri_t same = canon >= 0 ? H5Tequal(ft, canon) : -1;
    if (same < 0)
        return lg_store_hdf5_fail(err, where, "cannot compare the stored element type");
    if (!same) {
        H5T_class_t cls = H5Tget_class(ft);
        size_t width = H5Tget_size(ft);
        H5T_sign_t sign = cls == H5T_INTEGER ? H5Tget_sign(ft) : H5T_SGN_ERROR;
        return golden_fail_what(err, GOLDEN_EINVAL, where,
                                "type mismatch: dtype '%s' is stored as %s, but the data is stored as "
                                "a %zu-byte %s",
                                golden_dtype_name(t->dtype), stored_type_text(t->dtype), width,
                                cls == H5T_FLOAT ? "float of another layout"
                                : sign == H5T_SGN_2 ? "signed integer"
                                : sign == H5T_SGN_NONE ? "unsigned integer"
                                : "value of another class");
    }
    if (t->count == 0)
        return GOLDEN_OK;
    int written = storage_written(d, dcpl, lay, t);
    if (written < 0)
        return lg_store_hdf5_fail(err, where, "cannot tell whether the dataset's data was written");
    if (!written)
        return golden_fail_what(err, GOLDEN_EINVAL, where,
                                "dataset storage was never (completely) written: it holds no tensor");
    return GOLDEN_OK;
}

/* Where a direct read finds the data (golden_reader's pread path): the dataset is
 * contiguous, unfiltered, in the file itself, allocated and stored exactly as canonical
 * bytes; -1 otherwise (then HDF5 reads it). Golden and plain datasets alike. canonical: the
 * stored type is already known to be the dtype's canonical one (a golden's tensor, checked by
 * check_stored_type), so it is not compared again. */
static int64_t direct_offset(hid_t d, hid_t dcpl, H5D_layout_t lay, hid_t ft,
                             const golden_tensor_info *t, bool canonical)
{
    /* (lay: the layout the caller read; the caller already refused external storage) */
    int64_t at = -1;
    hid_t canon = canonical ? -1 : lg_store_type(t->dtype);
    haddr_t off = H5Dget_offset(d);
    if ((canonical || canon >= 0) && dcpl >= 0 && lay == H5D_CONTIGUOUS &&
        H5Pget_nfilters(dcpl) == 0 &&
        off != HADDR_UNDEF && (canonical || H5Tequal(ft, canon) > 0) &&
        H5Dget_storage_size(d) == t->count * golden_dtype_size(t->dtype))
        at = (int64_t)off;
    if (canon >= 0)
        H5Tclose(canon);
    H5Eclear2(H5E_DEFAULT);
    return at;
}

static void close_dataset(hid_t d, hid_t ft, hid_t sp, hid_t dcpl)
{
    if (ft >= 0)
        H5Tclose(ft);
    if (sp >= 0)
        H5Sclose(sp);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    H5Dclose(d);
}

/* The tensor read (rc GOLDEN_OK) joins the reader's list; else its fields are freed. */
static int keep_tensor(golden_reader *r, reader_tensor *rt, int rc, const char *where,
                       golden_error *err)
{
    if (rc == GOLDEN_OK && VEC_GROW(r->t, r->n, r->cap, 16) != 0)
        rc = golden_fail_what(err, GOLDEN_ENOMEM, where, "out of memory");
    if (rc != GOLDEN_OK) {
        golden_tensor_info_clear(&rt->info);
        return GOLDEN_ERR;
    }
    r->t[r->n++] = *rt;
    return GOLDEN_OK;
}

/* d: the dataset, already open (it is closed here), or -1 to open it by name. */
static int load_tensor(golden_reader *r, const char *name, hid_t d)
{
    golden_error *err = &r->err;
    reader_tensor rt = {.dset = -1, .offset = -1};
    golden_tensor_info *t = &rt.info;
    if (!(t->name = strdup(name))) {
        if (d >= 0)
            H5Dclose(d);
        return golden_fail_what(err, GOLDEN_ENOMEM, r->path, "out of memory");
    }
    char where[1024];
    snprintf(where, sizeof where, "%.600s:%.400s", r->path, name);
    if (d < 0)
        d = H5Dopen2(r->file, name, H5P_DEFAULT);
    if (d < 0) {
        free(t->name);
        return lg_store_hdf5_fail(err, where, "cannot open dataset");
    }
    int rc = GOLDEN_OK;
    tensor_attrs ta = {.t = t, .values_unread = (r->flags & GOLDEN_READ_DATA_ONLY) != 0};
    herr_t it = H5Aiterate2(d, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, tensor_attr_cb, &ta);
    char *dtype = ta.dtype, *sha = ta.sha;
    hid_t ft = H5Dget_type(d), sp = H5Dget_space(d), dcpl = H5Dget_create_plist(d);
    if (it < 0 || ft < 0 || sp < 0 || dcpl < 0)
        rc = lg_store_hdf5_fail(err, where, it < 0 ? "cannot read the dataset's attributes (corrupt file)"
                                                        : "cannot read the dataset's type, shape or layout (corrupt file)");
    else if (!dtype)
        rc = golden_fail_what(err, GOLDEN_EINVAL, where, "missing string attribute 'dtype'");
    else if (golden_dtype_parse(dtype, &t->dtype) != 0)
        rc = golden_fail_what(err, GOLDEN_EINVAL, where, "unknown dtype '%s'", dtype);
    else if (ta.values_unread && !(ta.seen & (1u << A_SHA)))
        rc = golden_fail_what(err, GOLDEN_EINVAL, where, "missing attribute 'sha256'");
    else if (!ta.values_unread && (!sha || !golden_is_sha256_hex(sha)))
        rc = golden_fail_what(err, GOLDEN_EINVAL, where, "attribute 'sha256' is missing or not 64 lowercase hex digits");
    if (rc == GOLDEN_OK && ta.digest && !golden_is_sha256_hex(ta.digest))
        rc = golden_fail_what(err, GOLDEN_EINVAL, where, "attribute 'tensor_digest' is not 64 lowercase hex digits");
    if (rc == GOLDEN_OK) {
        snprintf(t->sha256, sizeof t->sha256, "%s", sha ? sha : "");
        snprintf(t->tensor_digest, sizeof t->tensor_digest, "%s", ta.digest ? ta.digest : "");
        if (ta.values_unread)
            t->min = t->max = t->mean = t->std = NAN;
        H5S_class_t cls = H5Sget_simple_extent_type(sp);
        int rank = H5Sget_simple_extent_ndims(sp);
        hsize_t dims[GOLDEN_MAX_RANK];
        if (cls == H5S_NULL)
            rc = golden_fail_what(err, GOLDEN_EINVAL, where, "dataset has an empty (NULL) dataspace: it holds no tensor");
        else if (cls != H5S_SCALAR && cls != H5S_SIMPLE)
            rc = golden_fail_what(err, GOLDEN_ECORRUPT, where, "unsupported dataspace");
        else if (rank < 0 || rank > GOLDEN_MAX_RANK || H5Sget_simple_extent_dims(sp, dims, NULL) != rank)
            rc = golden_fail_what(err, GOLDEN_ECORRUPT, where, "unsupported dataspace");
        else {
            t->rank = rank;
            for (int k = 0; k < rank; k++)
                t->shape[k] = dims[k];
            rc = golden_shape_count(rank, t->shape, t->dtype, &t->count, err);
            if (rc != GOLDEN_OK)
                snprintf(err->where, sizeof err->where, "%s", where);
        }
    }
    H5D_layout_t lay = H5D_LAYOUT_ERROR;
    if (rc == GOLDEN_OK) {
        /* what a golden holds is what the tools see, whatever the working directory: data
         * kept in other files (external raw storage, a virtual dataset's sources) is refused */
        lay = H5Pget_layout(dcpl);
        int ext = H5Pget_external_count(dcpl);
        if (lay == H5D_VIRTUAL || ext != 0)
            rc = golden_fail_what(err, GOLDEN_EINVAL, where,
                                  "%s: a golden must hold its data itself",
                                  lay == H5D_VIRTUAL ? "a virtual dataset (its data lives in other "
                                                       "datasets or files)"
                                                     : "the dataset keeps its data in an external "
                                                       "raw file");
    }
    if (rc == GOLDEN_OK) {
        rc = check_stored_type(r, d, ft, dcpl, lay, t, where, err);
    }
    for (int k = 0; rc == GOLDEN_OK && k < ATTR_COUNT; k++) {
        if (ta.bad & (1u << k))
            rc = golden_fail_what(err, GOLDEN_EINVAL, where, "attribute '%s' is not a %s", attr_table[k].name,
                             attr_table[k].kind == ATTR_STRING ? "string" : "number");
        else if (attr_table[k].required && !(ta.seen & (1u << k)))
            rc = golden_fail_what(err, GOLDEN_EINVAL, where, "missing %s attribute '%s'",
                             attr_table[k].kind == ATTR_F64 ? "number" : "integer",
                             attr_table[k].name);
    }
    t->has_layer = (ta.seen >> A_LAYER) & 1;
    t->has_chip = (ta.seen >> A_CHIP) & 1;
    t->has_step = (ta.seen >> A_STEP) & 1;
    if (rc != GOLDEN_OK) {
        free(ta.op_family);
        free(ta.source);
    } else {
        t->op_family = ta.op_family;
        t->source = ta.source;
        rt.offset = direct_offset(d, dcpl, lay, ft, t, true);
    }
    free(dtype);
    free(sha);
    free(ta.digest);
    close_dataset(d, ft, sp, dcpl);
    return keep_tensor(r, &rt, rc, where, err);
}

/* ---------------------------------------------------------------- plain HDF5 */

/* The dtype of a plain HDF5 dataset's stored type: each dtype's canonical type in either byte
 * order (HDF5 swaps on reading), or h5py's bool (an enum of 1-byte integers); 0 when the type
 * is not a numeric tensor's (strings, compounds, complex, references), -1 on error. */
static int plain_dtype(hid_t ft, golden_dtype *dt, bool *enum_bool)
{
    static const golden_dtype order[] = {GOLDEN_F64, GOLDEN_F32, GOLDEN_F16, GOLDEN_BF16,
                                         GOLDEN_I8, GOLDEN_U8, GOLDEN_I16, GOLDEN_U16,
                                         GOLDEN_I32, GOLDEN_U32, GOLDEN_I64, GOLDEN_U64};
    *enum_bool = false;
    if (H5Tget_class(ft) == H5T_ENUM) {
        hid_t base = H5Tget_super(ft);
        bool ok = base >= 0 && H5Tget_size(base) == 1 && H5Tget_nmembers(ft) == 2;
        if (base >= 0)
            H5Tclose(base);
        if (ok)
            *dt = GOLDEN_BOOL, *enum_bool = true;
        return ok;
    }
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        for (int be = 0; be < 2; be++) {
            hid_t t = lg_store_type(order[i]);
            if (t < 0)
                return -1;
            htri_t eq = be && H5Tset_order(t, H5T_ORDER_BE) < 0 ? -1 : H5Tequal(ft, t);
            H5Tclose(t);
            if (eq < 0)
                return -1;
            if (eq > 0) {
                *dt = order[i];
                return 1;
            }
        }
    }
    return 0;
}

static const char *class_text(H5T_class_t c)
{
    switch (c) {
    case H5T_STRING: return "a string dataset";
    case H5T_COMPOUND: return "a compound (record or complex) dataset";
    case H5T_REFERENCE: return "a reference dataset";
    case H5T_ARRAY: return "an array-typed dataset";
    case H5T_VLEN: return "a variable-length dataset";
    case H5T_OPAQUE: return "an opaque dataset";
    case H5T_ENUM: return "an enum dataset other than h5py's bool";
    default: return "a dataset of a type no dtype of the contract stores";
    }
}

/* A dataset of an HDF5 file that is not a golden: its dtype from its stored type, its shape;
 * no attribute is needed or read, nothing stored is believed (sha256 "", statistics NaN). The
 * trust checks of goldens hold (docs/hdf5-trust.md): no external or virtual storage, every
 * element written. A dataset that is not a numeric tensor is listed as skipped. */
static int load_plain(golden_reader *r, const char *name, hid_t d)
{
    golden_error *err = &r->err;
    reader_tensor rt = {.dset = -1, .offset = -1};
    golden_tensor_info *t = &rt.info;
    char where[1024];
    snprintf(where, sizeof where, "%.600s:%.400s", r->path, name);
    if (d < 0)
        d = H5Dopen2(r->file, name, H5P_DEFAULT);
    if (d < 0)
        return lg_store_hdf5_fail(err, where, "cannot open dataset");
    hid_t ft = H5Dget_type(d), sp = H5Dget_space(d), dcpl = H5Dget_create_plist(d);
    int rc = GOLDEN_OK, numeric = 0;
    if (ft < 0 || sp < 0 || dcpl < 0 || (numeric = plain_dtype(ft, &t->dtype, &rt.enum_bool)) < 0)
        rc = lg_store_hdf5_fail(err, where, "cannot read the dataset's type, shape or layout (corrupt file)");
    else if (!numeric) {
        char why[128];
        snprintf(why, sizeof why, "%s: not a numeric tensor", class_text(H5Tget_class(ft)));
        if (lg_skip_add(&r->skipped, where, why))
            rc = golden_fail_what(err, GOLDEN_ENOMEM, where, "out of memory");
    } else {
        H5S_class_t cls = H5Sget_simple_extent_type(sp);
        int rank = H5Sget_simple_extent_ndims(sp);
        hsize_t dims[GOLDEN_MAX_RANK];
        H5D_layout_t lay = H5Pget_layout(dcpl);
        if (cls == H5S_NULL)
            rc = golden_fail_what(err, GOLDEN_EINVAL, where, "dataset has an empty (NULL) dataspace: it holds no tensor");
        else if ((cls != H5S_SCALAR && cls != H5S_SIMPLE) || rank < 0 || rank > GOLDEN_MAX_RANK ||
                 H5Sget_simple_extent_dims(sp, dims, NULL) != rank)
            rc = golden_fail_what(err, GOLDEN_ECORRUPT, where, "unsupported dataspace");
        else if (lay == H5D_VIRTUAL || H5Pget_external_count(dcpl) != 0)
            rc = golden_fail_what(err, GOLDEN_EINVAL, where, "%s: only data the file holds itself is read",
                                  lay == H5D_VIRTUAL ? "a virtual dataset (its data lives in other datasets or files)"
                                                     : "the dataset keeps its data in an external raw file");
        else {
            t->rank = rank;
            for (int k = 0; k < rank; k++)
                t->shape[k] = dims[k];
            rc = golden_shape_count(rank, t->shape, t->dtype, &t->count, err);
            if (rc != GOLDEN_OK)
                snprintf(err->where, sizeof err->where, "%s", where);
        }
        int written = rc == GOLDEN_OK && t->count ? storage_written(d, dcpl, lay, t) : 1;
        if (rc == GOLDEN_OK && written < 0)
            rc = lg_store_hdf5_fail(err, where, "cannot tell whether the dataset's data was written");
        else if (rc == GOLDEN_OK && !written)
            rc = golden_fail_what(err, GOLDEN_EINVAL, where,
                                  "dataset storage was never (completely) written: it holds no tensor");
        if (rc == GOLDEN_OK && !rt.enum_bool)
            rt.offset = direct_offset(d, dcpl, lay, ft, t, false);
    }
    close_dataset(d, ft, sp, dcpl);
    if (rc != GOLDEN_OK || !numeric)
        return rc;
    t->min = t->max = t->mean = t->std = NAN;
    if (!(t->name = strdup(name)) || !(t->source = strdup(r->path)))
        rc = golden_fail_what(err, GOLDEN_ENOMEM, where, "out of memory");
    return keep_tensor(r, &rt, rc, where, err);
}

/* Every object of the file is met once by the object walk: datasets become tensors, groups hold
 * them, named datatypes (the /bfloat16 of newer goldens) are types. An object reachable by two
 * names would be judged under one name only, so it is refused. */
static int visit_object(golden_reader *r, const char *name, const H5O_info_t *info, hid_t d)
{
    r->objects++;
    char where[1024];
    snprintf(where, sizeof where, "%.600s:%.400s", r->path, name);
    /* (a committed datatype's count also holds the datasets that use it) */
    if (info->rc != 1 && info->type != H5O_TYPE_NAMED_DATATYPE && strcmp(name, ".") != 0) {
        golden_fail_what(&r->err, GOLDEN_EINVAL, where,
                         "object has %u hard links: a golden names each tensor once", info->rc);
        r->failed = 1;
        if (d >= 0)
            H5Oclose(d);
        return 1;
    }
    if (info->type != H5O_TYPE_DATASET && d >= 0)
        H5Oclose(d);
    /* a golden's one named type is the /bfloat16 its writer commits: any other is no part of
     * the contract's layout (as an extra dataset is not), whatever type it holds */
    H5O_info_t bf;
    if (info->type == H5O_TYPE_NAMED_DATATYPE && !r->plain &&
        strcmp(name[0] == '/' ? name + 1 : name, GOLDEN_BF16_TYPE_NAME) != 0 &&
        /* the /bfloat16 itself under a second name is the link count's finding */
        !(H5Lexists(r->file, GOLDEN_BF16_TYPE_NAME, H5P_DEFAULT) > 0 &&
          H5Oget_info_by_name2(r->file, GOLDEN_BF16_TYPE_NAME, &bf, H5O_INFO_BASIC,
                               H5P_DEFAULT) >= 0 &&
          bf.type == H5O_TYPE_NAMED_DATATYPE && bf.addr == info->addr)) {
        golden_fail_what(&r->err, GOLDEN_EINVAL, where,
                         "a named datatype other than /" GOLDEN_BF16_TYPE_NAME
                         ": a golden holds groups, tensors and its bfloat16 type only");
        r->failed = 1;
        return 1;
    }
    if (info->type == H5O_TYPE_GROUP || info->type == H5O_TYPE_NAMED_DATATYPE)
        return 0;
    if (info->type != H5O_TYPE_DATASET) {
        golden_fail_what(&r->err, GOLDEN_ECORRUPT, where, "object of unknown kind");
        r->failed = 1;
        return 1;
    }
    /* the contract's names only: a name with a newline could print a fake line in a report */
    golden_error nerr;
    if (golden_tensor_name_check(name, &nerr) != GOLDEN_OK) {
        golden_fail_what(&r->err, GOLDEN_EINVAL, r->path, "a dataset's name is not a tensor name: %s",
                         nerr.what);
        r->failed = 1;
        if (d >= 0)
            H5Oclose(d);
        return 1;
    }
    if ((r->plain ? load_plain(r, name, d) : load_tensor(r, name, d)) != GOLDEN_OK) {
        r->failed = 1;
        return 1; /* stop */
    }
    return 0;
}

static herr_t visit_cb(hid_t obj, const char *name, const H5O_info_t *info, void *data)
{
    (void)obj;
    return visit_object(data, name, info, -1);
}

/* The link walk: only hard links (a soft or external link would show the tools a tensor twice,
 * or one outside the file); their number is checked against the objects found. */
static void link_fail(const golden_reader *r, const char *name, H5L_type_t type, golden_error *e)
{
    char where[1024];
    snprintf(where, sizeof where, "%.600s:%.400s", r->path, name);
    golden_fail_what(e, GOLDEN_EINVAL, where, "%s link: a golden holds only its own tensors",
                     type == H5L_TYPE_SOFT ? "soft" : type == H5L_TYPE_EXTERNAL ? "external"
                                                                                : "user-defined");
}

static herr_t link_cb(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
    (void)g;
    golden_reader *r = data;
    r->links++;
    if (info->type == H5L_TYPE_HARD)
        return 0;
    link_fail(r, name, info->type, &r->err);
    r->failed = 1;
    return 1;
}

/* The object walk and the link walk above, done as one walk over the links (each file's
 * dominant cost with many small tensors was walking its groups twice). It meets every object
 * exactly as H5Ovisit2 does: the root first as ".", then through each hard link in the same
 * order (both walks are HDF5's H5G_visit), an object of more than one link only the first
 * time; a dataset is opened by the address its link holds (once its name is checked to lead
 * there). The first link that is not a hard one is the walk's error only when no object
 * failed, as when the link walk came second. Any HDF5 call of this walk that fails (and that
 * the two walks would not have made) sends the caller back to the two walks, so a corrupt
 * file is described exactly as they describe it. */
typedef struct {
    golden_reader *r;
    haddr_t *seen; /* objects of more than one link already met, sorted */
    size_t n_seen, cap_seen;
    golden_error link_err; /* the first link that is not a hard one */
    bool link_bad, again;  /* again: walk the two ways instead */
} one_walk;

/* Where a lies in w->seen (or would be inserted); true when it is there. */
static bool seen_at(const one_walk *w, haddr_t a, size_t *at)
{
    size_t lo = 0, hi = w->n_seen;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->seen[mid] == a) {
            *at = mid;
            return true;
        }
        if (w->seen[mid] < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    *at = lo;
    return false;
}

static int seen_add(one_walk *w, haddr_t a)
{
    size_t at;
    if (seen_at(w, a, &at))
        return 0;
    if (VEC_GROW(w->seen, w->n_seen, w->cap_seen, 8) != 0)
        return -1;
    memmove(w->seen + at + 1, w->seen + at, (w->n_seen - at) * sizeof *w->seen);
    w->seen[at] = a;
    w->n_seen++;
    return 0;
}

static int one_walk_object(one_walk *w, const char *name, const H5O_info_t *oi, hid_t o)
{
    golden_reader *r = w->r;
    int rc = visit_object(r, name, oi, o);
    if (rc == 0 && oi->rc > 1 && seen_add(w, oi->addr) != 0) {
        golden_fail_what(&r->err, GOLDEN_ENOMEM, r->path, "out of memory");
        r->failed = 1;
        rc = 1;
    }
    return rc;
}

static herr_t one_walk_cb(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
    (void)g;
    one_walk *w = data;
    golden_reader *r = w->r;
    r->links++;
    if (info->type != H5L_TYPE_HARD) {
        if (!w->link_bad)
            link_fail(r, name, info->type, &w->link_err);
        w->link_bad = true;
        return 0;
    }
    size_t at;
    if (seen_at(w, info->u.address, &at))
        return 0;
    hid_t o = H5Oopen_by_addr(r->file, info->u.address);
    H5O_info_t oi;
    bool same = o >= 0 && H5Oget_info2(o, &oi, H5O_INFO_BASIC) >= 0 && oi.addr == info->u.address;
    if (same && oi.type == H5O_TYPE_DATASET) {
        /* the two walks open a dataset by its name: that name must lead to this object (a
         * crafted group can hold two links of one name) */
        H5O_info_t by_name;
        same = H5Oget_info_by_name2(r->file, name, &by_name, H5O_INFO_BASIC, H5P_DEFAULT) >= 0 &&
               by_name.addr == oi.addr;
    }
    if (!same) {
        if (o >= 0)
            H5Oclose(o);
        w->again = true;
        return -1;
    }
    return one_walk_object(w, name, &oi, o);
}

/* Forget what a walk found (before walking again). */
static void walk_reset(golden_reader *r)
{
    for (size_t i = 0; i < r->n; i++)
        golden_tensor_info_clear(&r->t[i].info);
    r->n = 0;
    lg_skip_free(&r->skipped);
    r->objects = r->links = 0;
    r->failed = 0;
    golden_error_clear(&r->err);
    H5Eclear2(H5E_DEFAULT);
}

/* Both walks: 0, > 0 stopped by a failure in r->err, < 0 HDF5 failed. Lock held. */
static herr_t walk_objects(golden_reader *r)
{
    one_walk w = {.r = r};
    H5O_info_t root;
    herr_t rc = -1;
    if (H5Oget_info2(r->file, &root, H5O_INFO_BASIC) >= 0) {
        rc = one_walk_object(&w, ".", &root, -1);
        if (rc == 0 && !r->failed)
            rc = H5Lvisit(r->file, H5_INDEX_NAME, H5_ITER_INC, one_walk_cb, &w);
    }
    free(w.seen);
    if (rc >= 0 && !w.again) {
        if (!r->failed && w.link_bad) {
            r->err = w.link_err;
            r->failed = 1;
            rc = 1;
        }
        return rc;
    }
    walk_reset(r);
    rc = H5Ovisit2(r->file, H5_INDEX_NAME, H5_ITER_INC, visit_cb, r, H5O_INFO_BASIC);
    if (rc == 0 && !r->failed)
        rc = H5Lvisit(r->file, H5_INDEX_NAME, H5_ITER_INC, link_cb, r);
    return rc;
}

static herr_t meta_cb(hid_t loc, const char *name, const H5A_info_t *ainfo, void *data)
{
    (void)ainfo;
    golden_reader *r = data;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t ft = a >= 0 ? H5Aget_type(a) : -1;
    H5T_class_t cls = ft >= 0 ? H5Tget_class(ft) : H5T_NO_CLASS;
    char *v = cls == H5T_STRING ? lg_attr_str_of(a) : NULL;
    if (ft >= 0)
        H5Tclose(ft);
    if (a >= 0)
        H5Aclose(a);
    if (cls == H5T_NO_CLASS || (cls == H5T_STRING && !v)) {
        char where[1024];
        snprintf(where, sizeof where, "%.600s:/@%.300s", r->path, name);
        golden_fail_what(&r->err, GOLDEN_ECORRUPT, where, "root attribute cannot be read%s",
                         cls == H5T_STRING ? " as one string" : "");
        r->failed = 1;
        return 1;
    }
    if (!v)
        return 0; /* non-string root attributes are not metadata */
    char **k2 = realloc(r->meta_keys, (r->meta_n + 1) * sizeof *k2);
    if (k2)
        r->meta_keys = k2;
    char **v2 = realloc(r->meta_vals, (r->meta_n + 1) * sizeof *v2);
    if (v2)
        r->meta_vals = v2;
    char *k = strdup(name);
    if (!k2 || !v2 || !k) {
        free(v);
        free(k);
        r->failed = 1;
        golden_fail_what(&r->err, GOLDEN_ENOMEM, r->path, "out of memory");
        return 1;
    }
    r->meta_keys[r->meta_n] = k;
    r->meta_vals[r->meta_n++] = v;
    return 0;
}

/* ------------------------------------------------- one open file, walked and read */

/* The file a walk or a read sees is the one open as r->fd (opened first; the direct reads
 * pread it). HDF5 opens the path again (in the child, and in the parent for its reads), and the
 * file HDF5 then has open (fstat of its own descriptor) is checked against r->id (device, inode,
 * size, mtime): the child walks it and reports what it had open, the parent checks the child's
 * report and its own handle, so a path renamed or rewritten in between can never give one
 * file's walk to another file's bytes. (HDF5 cannot be handed r->fd as /proc/self/fd/N: it
 * resolves such a link to the name and refuses when that name's inode changed.) */
static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* fstat of the descriptor HDF5 reads r->file through (sec2 driver); 0 on success. Lock held. */
static int hdf5_file_stat(const golden_reader *r, struct stat *st)
{
    void *h = NULL;
    if (H5Fget_vfd_handle(r->file, H5P_DEFAULT, &h) < 0 || !h) {
        H5Eclear2(H5E_DEFAULT);
        return -1;
    }
    return fstat(*(int *)h, st);
}

static int file_changed(const golden_reader *r, golden_error *err)
{
    return golden_fail_what(err, GOLDEN_EIO, r->path, "the file changed while it was being opened");
}

/* HDF5's open file and r->fd are still the file opened first, unchanged. Lock held. */
static int check_same_file(const golden_reader *r, golden_error *err)
{
    struct stat h, now;
    if (hdf5_file_stat(r, &h) != 0 || fstat(r->fd, &now) != 0 || !same_file(&h, &r->id) ||
        !same_file(&now, &r->id))
        return file_changed(r, err);
    return GOLDEN_OK;
}

/* Open the file and walk all of its metadata: schema, root attributes, every object and every
 * link; every HDF5 result is checked, and a walk that ends early, or whose objects and links
 * do not add up, means a corrupt file. Lock held. */
static int walk_file(golden_reader *r, golden_error *err)
{
    const char *path = r->path;
    htri_t is = H5Fis_hdf5(path);
    if (is <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return golden_fail_what(err, GOLDEN_ECORRUPT, path, "not an HDF5 file");
    }
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0) {
        if (fapl >= 0)
            H5Pclose(fapl);
        return lg_store_hdf5_fail(err, path, "cannot set up HDF5 file access");
    }
    r->file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    if (r->file < 0)
        return lg_store_hdf5_fail(err, path, "cannot open HDF5 file");
    struct stat st; /* the path may name another file by now than the one opened first */
    if (hdf5_file_stat(r, &st) != 0 || !same_file(&st, &r->id))
        return file_changed(r, err);
    char *schema = lg_attr_read_str(r->file, "schema");
    /* GOLDEN_READ_FOREIGN: a file without the golden schema is a plain HDF5 file (h5py's);
     * a golden of another version is never read as one */
    r->plain = (r->flags & GOLDEN_READ_FOREIGN) &&
               (!schema || strncmp(schema, "calculet-golden/", 16) != 0);
    if (!r->plain && (!schema || strcmp(schema, GOLDEN_SCHEMA_GOLDEN) != 0)) {
        golden_fail_what(err, GOLDEN_EINVAL, path, "not a %s file (root attribute schema is %s%s%s)",
                         GOLDEN_SCHEMA_GOLDEN, schema ? "'" : "missing", schema ? schema : "",
                         schema ? "'" : "");
        free(schema);
        return GOLDEN_ERR;
    }
    free(schema);
    hsize_t idx = 0;
    /* a plain file's root attributes are its writer's own: not read */
    herr_t rc = r->plain ? 0 : H5Aiterate2(r->file, H5_INDEX_NAME, H5_ITER_INC, &idx, meta_cb, r);
    if (rc == 0 && !r->failed)
        rc = walk_objects(r);
    if (r->failed) {
        H5Eclear2(H5E_DEFAULT);
        if (err)
            *err = r->err;
        return GOLDEN_ERR;
    }
    if (rc != 0)
        return lg_store_hdf5_fail(err, path, "the walk over the file's objects stopped early (corrupt file)");
    /* every object but the root is reached by exactly one hard link */
    if (r->objects != r->links + 1)
        return golden_fail_what(err, GOLDEN_ECORRUPT, path,
                                "the file's %zu links do not lead to its %zu objects (corrupt file)",
                                r->links, r->objects);
    return GOLDEN_OK;
}

/* ------------------------------------------------- the child's walk, handed back */

/* The file is walked once, in the isolated child; what it found comes back as bytes: "LGW1",
 * plain, the root attributes, the tensors (each golden_tensor_info as it lies in memory, the
 * child being a copy of this process, its pointers replaced by strings), the skipped
 * datasets. The parent checks every field it takes: the bytes come from a process that
 * parsed a file that may be hostile (and the parent read that file itself before). */
static void put_u64(lg_blob *b, uint64_t v) { lg_blob_put(b, &v, sizeof v); }

static void put_str(lg_blob *b, const char *s)
{
    put_u64(b, s ? (uint64_t)strlen(s) + 1 : 0); /* 0: NULL */
    if (s)
        lg_blob_put(b, s, strlen(s));
}

static int walk_in_child(void *ctx, lg_blob *out, golden_error *err)
{
    golden_reader *r = ctx;
    if (walk_file(r, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    struct stat st; /* the file this walk describes, as HDF5 had it open */
    if (hdf5_file_stat(r, &st) != 0 || !same_file(&st, &r->id))
        return file_changed(r, err);
    lg_blob_put(out, "LGW1", 4);
    put_u64(out, (uint64_t)st.st_dev);
    put_u64(out, (uint64_t)st.st_ino);
    put_u64(out, (uint64_t)st.st_size);
    put_u64(out, (uint64_t)st.st_mtim.tv_sec);
    put_u64(out, (uint64_t)st.st_mtim.tv_nsec);
    put_u64(out, r->plain);
    put_u64(out, r->meta_n);
    for (size_t i = 0; i < r->meta_n; i++) {
        put_str(out, r->meta_keys[i]);
        put_str(out, r->meta_vals[i]);
    }
    put_u64(out, r->n);
    for (size_t i = 0; i < r->n; i++) {
        golden_tensor_info t = r->t[i].info;
        t.name = t.op_family = t.source = NULL;
        lg_blob_put(out, &t, sizeof t);
        put_str(out, r->t[i].info.name);
        put_str(out, r->t[i].info.op_family);
        put_str(out, r->t[i].info.source);
        put_u64(out, (uint64_t)r->t[i].offset);
        put_u64(out, r->t[i].enum_bool);
    }
    put_u64(out, r->skipped.n);
    for (size_t i = 0; i < r->skipped.n; i++) {
        put_str(out, r->skipped.path[i]);
        put_str(out, r->skipped.why[i]);
    }
    return GOLDEN_OK;
}

typedef struct {
    const unsigned char *p;
    size_t left;
    bool bad;
} blob_in;

static bool take(blob_in *in, void *dst, size_t n)
{
    if (in->bad || in->left < n) {
        in->bad = true;
        return false;
    }
    memcpy(dst, in->p, n);
    in->p += n;
    in->left -= n;
    return true;
}

static uint64_t take_u64(blob_in *in)
{
    uint64_t v = 0;
    take(in, &v, sizeof v);
    return v;
}

/* A string (NULL when absent; *ok false when the bytes are not one, or on no memory). */
static char *take_str(blob_in *in, bool *ok)
{
    uint64_t n = take_u64(in);
    if (in->bad || n == 0)
        return NULL;
    if (n - 1 > in->left || memchr(in->p, 0, n - 1)) {
        in->bad = true;
        return NULL;
    }
    char *s = malloc(n);
    if (!s) {
        *ok = false;
        return NULL;
    }
    memcpy(s, in->p, n - 1);
    s[n - 1] = 0;
    in->p += n - 1;
    in->left -= n - 1;
    return s;
}

/* One tensor of the child's answer, checked as the walk would have made it. */
static bool take_tensor(blob_in *in, reader_tensor *rt, bool *ok)
{
    golden_tensor_info *t = &rt->info;
    memset(rt, 0, sizeof *rt);
    rt->dset = -1;
    if (!take(in, t, sizeof *t))
        return false;
    t->name = t->op_family = t->source = NULL;
    t->name = take_str(in, ok);
    t->op_family = take_str(in, ok);
    t->source = take_str(in, ok);
    rt->offset = (int64_t)take_u64(in);
    uint64_t eb = take_u64(in);
    rt->enum_bool = eb != 0;
    uint64_t count = 0;
    golden_error e;
    if (in->bad || !*ok || !t->name || eb > 1 || rt->offset < -1 ||
        (unsigned)t->dtype >= GOLDEN_DTYPE_COUNT || t->rank < 0 || t->rank > GOLDEN_MAX_RANK ||
        golden_shape_count(t->rank, t->shape, t->dtype, &count, &e) != GOLDEN_OK ||
        count != t->count || t->sha256[64] || t->tensor_digest[64] ||
        golden_tensor_name_check(t->name, &e) != GOLDEN_OK) {
        golden_tensor_info_clear(t);
        in->bad = true;
        return false;
    }
    return true;
}

/* Fill r from the child's answer; the file itself is opened by the caller. */
static int take_walk(golden_reader *r, const lg_blob *b, golden_error *err)
{
    blob_in in = {b->p, b->n, false};
    bool ok = true;
    char magic[4];
    if (!take(&in, magic, 4) || memcmp(magic, "LGW1", 4) != 0)
        in.bad = true;
    struct stat seen = r->id; /* the identity of the file the child walked */
    seen.st_dev = (dev_t)take_u64(&in);
    seen.st_ino = (ino_t)take_u64(&in);
    seen.st_size = (off_t)take_u64(&in);
    seen.st_mtim.tv_sec = (time_t)take_u64(&in);
    seen.st_mtim.tv_nsec = (long)take_u64(&in);
    uint64_t plain = take_u64(&in), n = take_u64(&in);
    r->plain = plain != 0;
    if (plain > 1 || n > in.left)
        in.bad = true;
    if (!in.bad && n) {
        r->meta_keys = calloc(n, sizeof *r->meta_keys);
        r->meta_vals = calloc(n, sizeof *r->meta_vals);
        ok = r->meta_keys && r->meta_vals;
    }
    for (uint64_t i = 0; ok && !in.bad && i < n; i++) {
        r->meta_keys[i] = take_str(&in, &ok);
        r->meta_vals[i] = take_str(&in, &ok);
        r->meta_n++;
        if (!r->meta_keys[i] || !r->meta_vals[i])
            in.bad = true;
    }
    n = take_u64(&in);
    if (n > in.left / sizeof(golden_tensor_info))
        in.bad = true;
    if (ok && !in.bad && n) {
        r->t = calloc(n, sizeof *r->t);
        r->cap = n;
        ok = r->t != NULL;
    }
    for (uint64_t i = 0; ok && !in.bad && i < n; i++)
        if (take_tensor(&in, &r->t[i], &ok))
            r->n++;
    n = take_u64(&in);
    if (n > in.left)
        in.bad = true;
    for (uint64_t i = 0; ok && !in.bad && i < n; i++) {
        char *path = take_str(&in, &ok), *why = take_str(&in, &ok);
        if (ok && (!path || !why))
            in.bad = true;
        else if (ok && lg_skip_add(&r->skipped, path, why) != 0)
            ok = false;
        free(path);
        free(why);
    }
    if (!ok)
        return golden_fail_what(err, GOLDEN_ENOMEM, r->path, "out of memory");
    if (in.bad || in.left)
        return golden_fail_what(err, GOLDEN_ECORRUPT, r->path,
                                "the child process that read this file's metadata answered "
                                "garbage: the file is corrupt or hostile");
    if (!same_file(&seen, &r->id))
        return file_changed(r, err);
    return GOLDEN_OK;
}

/* The parent's side once the child walked the file: the HDF5 handle, for the reads. */
static int open_walked(golden_reader *r, golden_error *err)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0) {
        if (fapl >= 0)
            H5Pclose(fapl);
        return lg_store_hdf5_fail(err, r->path, "cannot set up HDF5 file access");
    }
    r->file = H5Fopen(r->path, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    if (r->file < 0)
        return lg_store_hdf5_fail(err, r->path, "cannot open HDF5 file");
    return check_same_file(r, err);
}

static int cmp_tensor(const void *a, const void *b)
{
    return strcmp(((const reader_tensor *)a)->info.name, ((const reader_tensor *)b)->info.name);
}

int golden_reader_open(const char *path, golden_reader **out, golden_error *err)
{
    return golden_reader_open_flags(path, 0, out, err);
}

int golden_reader_open_flags(const char *path, unsigned flags, golden_reader **out,
                             golden_error *err)
{
    *out = NULL;
    golden_reader *r = calloc(1, sizeof *r);
    if (!r)
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    r->file = -1;
    r->fd = -1;
    r->flags = flags;
    if (!(r->path = strdup(path))) {
        free(r);
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        golden_fail_what(err, golden_code_from_errno(errno), path, "cannot open: %s", strerror(errno));
        golden_reader_close(r);
        return GOLDEN_ERR;
    }
    lg_kind kind = LG_KIND_HDF5;
    if ((flags & GOLDEN_READ_FOREIGN) && S_ISREG(st.st_mode) && lg_sniff(path, &kind, err) != 0) {
        golden_reader_close(r);
        return GOLDEN_ERR;
    }
    if ((flags & GOLDEN_READ_FOREIGN) && (S_ISDIR(st.st_mode) || kind != LG_KIND_HDF5)) {
        if (lg_foreign_open(path, flags, &r->foreign, err) != GOLDEN_OK) {
            golden_reader_close(r);
            return GOLDEN_ERR;
        }
        *out = r;
        return GOLDEN_OK;
    }
    if (!S_ISREG(st.st_mode)) {
        golden_fail_what(err, GOLDEN_EINVAL, path, "not a regular file");
        golden_reader_close(r);
        return GOLDEN_ERR;
    }
    r->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO swapped in: no hang */
    if (r->fd < 0) {
        golden_fail_what(err, golden_code_from_errno(errno), path, "cannot open: %s", strerror(errno));
        golden_reader_close(r);
        return GOLDEN_ERR;
    }
    if (fstat(r->fd, &r->id) != 0 || !S_ISREG(r->id.st_mode)) {
        golden_fail_what(err, GOLDEN_EINVAL, path, "not a regular file");
        golden_reader_close(r);
        return GOLDEN_ERR;
    }
    int rc = GOLDEN_OK;
    if (!(flags & GOLDEN_READ_TRUSTED)) {
        /* walked once, in the child; the parent only opens the file for its reads */
        lg_blob walked = {0};
        rc = lg_store_isolated_blob(path, walk_in_child, r, &walked, err);
        if (rc == GOLDEN_OK)
            rc = take_walk(r, &walked, err);
        lg_blob_free(&walked);
        if (rc == GOLDEN_OK) {
            lg_store_lock_file(path);
            rc = open_walked(r, err);
            golden_hdf5_unlock();
        }
    } else {
        lg_store_lock_file(path);
        rc = walk_file(r, err);
        if (rc == GOLDEN_OK)
            rc = check_same_file(r, err);
        golden_hdf5_unlock();
    }
    if (rc != GOLDEN_OK) {
        golden_reader_close(r);
        return rc;
    }
    if (r->n > 1)
        qsort(r->t, r->n, sizeof *r->t, cmp_tensor);
    *out = r;
    return GOLDEN_OK;
}

void golden_reader_close(golden_reader *r)
{
    if (!r)
        return;
    lg_foreign_close(r->foreign);
    lg_skip_free(&r->skipped);
    lg_store_lock_file(r->path);
    for (size_t i = 0; i < r->n; i++)
        if (r->t[i].dset >= 0)
            H5Dclose(r->t[i].dset);
    for (int k = 0; k < GOLDEN_DTYPE_COUNT; k++)
        if (r->canon[k] > 0)
            H5Tclose(r->canon[k]);
    if (r->file >= 0)
        H5Fclose(r->file);
    golden_hdf5_unlock();
    for (size_t i = 0; i < r->n; i++)
        golden_tensor_info_clear(&r->t[i].info);
    for (size_t i = 0; i < r->meta_n; i++) {
        free(r->meta_keys[i]);
        free(r->meta_vals[i]);
    }
    free(r->meta_keys);
    free(r->meta_vals);
    if (r->fd >= 0)
        close(r->fd);
    free(r->t);
    free(r->path);
    free(r);
}

const char *golden_reader_path(const golden_reader *r) { return r->path; }
size_t golden_reader_count(const golden_reader *r)
{
    return r->foreign ? lg_foreign_count(r->foreign) : r->n;
}

const golden_tensor_info *golden_reader_tensor(const golden_reader *r, size_t i)
{
    if (r->foreign)
        return lg_foreign_tensor(r->foreign, i);
    return i < r->n ? &r->t[i].info : NULL;
}

bool golden_reader_stored(const golden_reader *r, size_t i)
{
    if (r->foreign)
        return lg_foreign_stored(r->foreign, i);
    return i < r->n && !r->plain;
}

const char *golden_reader_format(const golden_reader *r, size_t i)
{
    if (r->foreign)
        return lg_foreign_format(r->foreign, i);
    return r->plain ? "hdf5" : "golden";
}

bool golden_reader_is_folder(const golden_reader *r)
{
    return r->foreign && lg_foreign_is_folder(r->foreign);
}

static const lg_skiplist *skiplist(const golden_reader *r)
{
    return r->foreign ? lg_foreign_skipped(r->foreign) : &r->skipped;
}

size_t golden_reader_skipped_count(const golden_reader *r)
{
    return skiplist(r)->n;
}

void golden_reader_skipped_at(const golden_reader *r, size_t i, const char **path,
                              const char **why)
{
    const lg_skiplist *s = skiplist(r);
    *path = i < s->n ? s->path[i] : NULL;
    *why = i < s->n ? s->why[i] : NULL;
}

long golden_reader_find(const golden_reader *r, const char *name)
{
    size_t lo = 0, hi = golden_reader_count(r);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(golden_reader_tensor(r, mid)->name, name);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

const char *golden_reader_meta(const golden_reader *r, const char *key)
{
    for (size_t i = 0; i < r->meta_n; i++)
        if (strcmp(r->meta_keys[i], key) == 0)
            return r->meta_vals[i];
    return NULL;
}

size_t golden_reader_meta_count(const golden_reader *r) { return r->meta_n; }

void golden_reader_meta_at(const golden_reader *r, size_t i, const char **key, const char **value)
{
    *key = i < r->meta_n ? r->meta_keys[i] : NULL;
    *value = i < r->meta_n ? r->meta_vals[i] : NULL;
}

int golden_reader_read(golden_reader *r, size_t i, uint64_t first, uint64_t n, void *buf,
                       golden_error *err)
{
    if (r->foreign)
        return lg_foreign_read(r->foreign, i, first, n, buf, err);
    if (i >= r->n)
        return golden_fail_what(err, GOLDEN_EINVAL, r->path, "no tensor %zu", i);
    reader_tensor *rt = &r->t[i];
    const golden_tensor_info *t = &rt->info;
    if (first > t->count || n > t->count - first)
        return golden_fail_where(err, GOLDEN_EINVAL, "element range is outside the tensor", "%s:%s", r->path, t->name);
    if (n == 0)
        return GOLDEN_OK;
    size_t w = golden_dtype_size(t->dtype);
    if (rt->offset >= 0) {
        unsigned char *p = buf;
        uint64_t left = n * w;
        off_t at = (off_t)(rt->offset + (int64_t)(first * w));
        while (left > 0) {
            ssize_t got = pread(r->fd, p, left > (1u << 30) ? (1u << 30) : left, at);
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0)
                return golden_fail_where(err, golden_code_from_errno(errno), got < 0 ? strerror(errno) : "file is truncated",
                                    "%s:%s", r->path, t->name);
            p += got;
            at += got;
            left -= (uint64_t)got;
        }
        return GOLDEN_OK;
    }
    char where[1024];
    snprintf(where, sizeof where, "%.600s:%.400s", r->path, t->name);
    lg_store_lock_file(r->path);
    int rc = GOLDEN_OK;
    if (rt->dset < 0)
        rt->dset = H5Dopen2(r->file, t->name, H5P_DEFAULT);
    hid_t mt = rt->enum_bool && rt->dset >= 0 ? H5Dget_type(rt->dset) : lg_store_type(t->dtype);
    hid_t fspace = -1, mspace = -1;
    if (rt->dset < 0 || mt < 0) {
        rc = lg_store_hdf5_fail(err, where, "cannot open dataset");
    } else if (t->rank == 0) {
        if (H5Dread(rt->dset, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
            rc = lg_store_hdf5_fail(err, where, "cannot read tensor data");
    } else {
        hsize_t mdim = n;
        fspace = H5Dget_space(rt->dset);
        mspace = H5Screate_simple(1, &mdim, NULL);
        if (fspace < 0 || mspace < 0 || lg_store_select(fspace, t->rank, t->shape, first, n) < 0 ||
            H5Dread(rt->dset, mt, mspace, fspace, H5P_DEFAULT, buf) < 0)
            rc = lg_store_hdf5_fail(err, where, "cannot read tensor data");
    }
    if (fspace >= 0)
        H5Sclose(fspace);
    if (mspace >= 0)
        H5Sclose(mspace);
    if (mt >= 0)
        H5Tclose(mt);
    golden_hdf5_unlock();
    return rc;
}

#define RECOMPUTE_ELEMS (1u << 18)

int golden_reader_recompute(golden_reader *r, size_t i, char sha256[65], golden_stats *stats,
                            golden_error *err)
{
    const golden_tensor_info *t = golden_reader_tensor(r, i);
    if (!t)
        return golden_fail_what(err, GOLDEN_EINVAL, r->path, "no tensor %zu", i);
    size_t w = golden_dtype_size(t->dtype);
    unsigned char *buf = malloc(RECOMPUTE_ELEMS * w);
    double *f = malloc(GOLDEN_STATS_BLOCK * sizeof *f); /* scratch of golden_stats_add_raw */
    golden_sha256 *h = buf && f ? golden_sha256_new(err) : NULL;
    int rc = h ? GOLDEN_OK : GOLDEN_ERR;
    if (!buf || !f)
        golden_fail_what(err, GOLDEN_ENOMEM, r->path, "out of memory");
    golden_stats_init(stats);
    for (uint64_t at = 0; rc == GOLDEN_OK && at < t->count;) {
        uint64_t n = t->count - at < RECOMPUTE_ELEMS ? t->count - at : RECOMPUTE_ELEMS;
        rc = golden_reader_read(r, i, at, n, buf, err);
        if (rc == GOLDEN_OK)
            rc = golden_sha256_update(h, buf, n * w, err);
        if (rc == GOLDEN_OK) {
            golden_stats_add_raw(stats, t->dtype, buf, n, f);
        }
        at += n;
    }
    if (rc == GOLDEN_OK)
        rc = golden_sha256_final(h, sha256, err);
    golden_sha256_free(h);
    free(buf);
    free(f);
    return rc;
}


/* The calculet-golden/v1 HDF5 file, what its writer and reader share: the HDF5 lock and error
 * scope, tensor names and shapes, the stored type of each dtype, linear element selections. */
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
#include "tensor/store_private.h"
#include "util/guard.h"

/* ------------------------------------------------------------------ common */

static pthread_mutex_t hdf5_mutex = PTHREAD_MUTEX_INITIALIZER;
/* The caller's HDF5 error printing, put back when libgolden leaves HDF5 (lock held). */
static H5E_auto2_t saved_print;
static void *saved_print_data;

void golden_hdf5_lock(void)
{
    pthread_mutex_lock(&hdf5_mutex);
    /* Errors come back as values; HDF5's own stack printing would break the one-line rule.
     * It is switched off only while libgolden is inside HDF5, so a program that embeds
     * libgolden and uses HDF5 itself keeps whatever printing it chose. */
    if (H5Eget_auto2(H5E_DEFAULT, &saved_print, &saved_print_data) < 0)
        saved_print = NULL, saved_print_data = NULL;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    lg_guard_enter_hdf5(NULL);
}

void golden_hdf5_unlock(void)
{
    lg_guard_leave_hdf5();
    H5Eset_auto2(H5E_DEFAULT, saved_print, saved_print_data);
    pthread_mutex_unlock(&hdf5_mutex);
}

/* Lock, naming the file HDF5 is about to work on (for the crash guard's message). */
void lg_store_lock_file(const char *path)
{
    golden_hdf5_lock();
    lg_guard_enter_hdf5(path);
}

static herr_t last_error_cb(unsigned n, const H5E_error2_t *e, void *data)
{
    (void)n;
    char *out = data;
    if (e->desc && e->desc[0])
        snprintf(out, 256, "%s", e->desc);
    return 0;
}

/* Fail with HDF5's outermost description (the walk runs inner to outer; the last one stays) appended ("what (HDF5: ...)"). Lock held. */
int lg_store_hdf5_fail(golden_error *err, const char *where, const char *what)
{
    char detail[256] = "";
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, last_error_cb, detail);
    H5Eclear2(H5E_DEFAULT);
    if (detail[0])
        return golden_fail_what(err, GOLDEN_EIO, where, "%s (HDF5: %s)", what, detail);
    return golden_fail_what(err, GOLDEN_EINVAL, where, "%s", what);
}

int lg_store_utf8_valid(const char *s)
{
    /* UTF-8 well-formedness (no overlongs, no surrogates, max U+10FFFF) */
    const unsigned char *u = (const unsigned char *)s;
    while (*u) {
        unsigned c = *u, need;
        unsigned cp;
        if (c < 0x80) {
            u++;
            continue;
        } else if (c >= 0xc2 && c <= 0xdf) {
            need = 1, cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            need = 2, cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            need = 3, cp = c & 0x07;
        } else {
            return 0;
        }
        u++;
        for (unsigned k = 0; k < need; k++, u++) {
            if ((*u & 0xc0) != 0x80)
                return 0;
            cp = (cp << 6) | (*u & 0x3f);
        }
        if ((need == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
            (need == 3 && (cp < 0x10000 || cp > 0x10ffff)))
            return 0;
    }
    return 1;
}

int golden_tensor_name_check(const char *name, golden_error *err)
{
    if (!name || !*name)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "tensor name is empty");
    const char *p = name;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
            return golden_fail_what(err, GOLDEN_EINVAL, name, "tensor name has an empty, '.' or '..' component");
        p += len;
        if (*p == '/')
            p++;
        if (slash && !*p)
            return golden_fail_what(err, GOLDEN_EINVAL, name, "tensor name ends with '/'");
    }
    if (!lg_store_utf8_valid(name))
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "tensor name is not valid UTF-8");
    /* a newline or other control character in a name could print a fake "PASS:" line */
    for (const unsigned char *u = (const unsigned char *)name; *u; u++)
        if (*u < 0x20 || *u == 0x7f)
            return golden_fail_what(err, GOLDEN_EINVAL, NULL,
                                    "tensor name holds the control character 0x%02x", *u);
    return GOLDEN_OK;
}

int golden_tensor_digest(const golden_tensor_info *t, char hex[65], golden_error *err)
{
    char text[64 + GOLDEN_MAX_RANK * 21 + 160];
    int n = snprintf(text, sizeof text, "calculet-tensor/v1\n%s\n", golden_dtype_name(t->dtype));
    for (int k = 0; k < t->rank && k < GOLDEN_MAX_RANK; k++)
        n += snprintf(text + n, sizeof text - (size_t)n, "%s%llu", k ? "," : "",
                      (unsigned long long)t->shape[k]);
    n += snprintf(text + n, sizeof text - (size_t)n, "\n%s\n", t->sha256);
    return golden_sha256_buffer(text, (size_t)n, hex, err);
}

int golden_shape_count(int rank, const uint64_t *shape, golden_dtype dt, uint64_t *count,
                       golden_error *err)
{
    if (rank < 0 || rank > GOLDEN_MAX_RANK)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "rank %d is outside 0..%d", rank, GOLDEN_MAX_RANK);
    uint64_t c = 1;
    for (int i = 0; i < rank; i++) {
        if (shape[i] && c > UINT64_MAX / shape[i])
            return golden_fail_what(err, GOLDEN_EINVAL, NULL, "shape's element count overflows 64 bits");
        c *= shape[i];
    }
    size_t w = golden_dtype_size(dt);
    if (w == 0)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "unknown element type");
    if (c > (uint64_t)INT64_MAX / w)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "shape's byte size overflows 63 bits");
    *count = c;
    return GOLDEN_OK;
}

/* A 2-byte IEEE-style float: sign bit 15, exponent above the mantissa. Lock held. */
static hid_t make_half_type(int exp_bits, int mant_bits, int ebias)
{
    hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    if (t < 0)
        return -1;
    if (H5Tset_fields(t, 15, (size_t)mant_bits, (size_t)exp_bits, 0, (size_t)mant_bits) < 0 ||
        H5Tset_precision(t, 16) < 0 || H5Tset_size(t, 2) < 0 ||
        H5Tset_ebias(t, (size_t)ebias) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

/* The HDF5 type canonical bytes of dt are stored as (a new id to close). Lock held. */
hid_t lg_store_type(golden_dtype dt)
{
    switch (dt) {
    case GOLDEN_F64: return H5Tcopy(H5T_IEEE_F64LE);
    case GOLDEN_F32: return H5Tcopy(H5T_IEEE_F32LE);
    case GOLDEN_F16: return make_half_type(5, 10, 15);
    case GOLDEN_BF16: return make_half_type(8, 7, 127);
    case GOLDEN_I8: return H5Tcopy(H5T_STD_I8LE);
    case GOLDEN_U8:
    case GOLDEN_BOOL:
    case GOLDEN_FP8_E4M3FN:
    case GOLDEN_FP8_E5M2: return H5Tcopy(H5T_STD_U8LE);
    case GOLDEN_I16: return H5Tcopy(H5T_STD_I16LE);
    case GOLDEN_U16: return H5Tcopy(H5T_STD_U16LE);
    case GOLDEN_I32: return H5Tcopy(H5T_STD_I32LE);
    case GOLDEN_U32: return H5Tcopy(H5T_STD_U32LE);
    case GOLDEN_I64: return H5Tcopy(H5T_STD_I64LE);
    case GOLDEN_U64: return H5Tcopy(H5T_STD_U64LE);
    default: return -1;
    }
}

/* Select elements [first, first+n) of a C-order dataspace as a union of at most 2*rank
 * hyperslab blocks. Lock held. */
int lg_store_select(hid_t space, int rank, const uint64_t *dims, uint64_t first, uint64_t n)
{
    if (rank == 0)
        return H5Sselect_all(space) < 0 ? -1 : 0;
    if (H5Sselect_none(space) < 0)
        return -1;
    uint64_t stride[GOLDEN_MAX_RANK];
    stride[rank - 1] = 1;
    for (int k = rank - 2; k >= 0; k--)
        stride[k] = stride[k + 1] * dims[k + 1];
    while (n > 0) {
        hsize_t start[GOLDEN_MAX_RANK], count[GOLDEN_MAX_RANK];
        uint64_t rem = first;
        for (int k = 0; k < rank; k++) {
            start[k] = rem / stride[k];
            rem %= stride[k];
        }
        /* outermost axis at which `first` is aligned and at least one step fits */
        int j = 0;
        while (j < rank - 1 && (first % stride[j] != 0 || n < stride[j]))
            j++;
        uint64_t steps = n / stride[j];
        if (steps > dims[j] - start[j])
            steps = dims[j] - start[j];
        for (int k = 0; k < rank; k++)
            count[k] = k < j ? 1 : k == j ? steps : dims[k];
        if (H5Sselect_hyperslab(space, H5S_SELECT_OR, start, NULL, count, NULL) < 0)
            return -1;
        first += steps * stride[j];
        n -= steps * stride[j];
    }
    return 0;
}


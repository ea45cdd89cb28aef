/* Attributes of calculet-golden/v1 files: written as fixed-length strings and 64-bit numbers,
 * read back from either string form. Every function here runs with the HDF5 lock held. */
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

/* ------------------------------------------------------------------ attributes (lock held) */

static int attr_write(hid_t loc, const char *name, hid_t type, const void *value)
{
    hid_t space = H5Screate(H5S_SCALAR);
    if (space < 0)
        return -1;
    htri_t exists = H5Aexists(loc, name);
    if (exists < 0 || (exists > 0 && H5Adelete(loc, name) < 0)) {
        H5Sclose(space);
        return -1;
    }
    hid_t a = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    int rc = a < 0 || H5Awrite(a, type, value) < 0 ? -1 : 0;
    if (a >= 0)
        H5Aclose(a);
    if (H5Sclose(space) < 0)
        rc = -1;
    return rc;
}

/* Fixed-length, so a reader never needs the global heap, which HDF5 1.10 neither checksums
 * nor bounds-checks (variable-length strings live there). */
int lg_attr_write_str(hid_t loc, const char *name, const char *value)
{
    size_t len = strlen(value);
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0)
        return -1;
    int rc = -1;
    if (H5Tset_size(t, len ? len : 1) >= 0 && H5Tset_strpad(t, H5T_STR_NULLPAD) >= 0 &&
        H5Tset_cset(t, H5T_CSET_UTF8) >= 0)
        rc = attr_write(loc, name, t, len ? value : "");
    H5Tclose(t);
    return rc;
}

int lg_attr_write_u64(hid_t loc, const char *name, uint64_t v)
{
    return attr_write(loc, name, H5T_STD_U64LE, &v);
}

int lg_attr_write_i64(hid_t loc, const char *name, int64_t v)
{
    return attr_write(loc, name, H5T_STD_I64LE, &v);
}

int lg_attr_write_f64(hid_t loc, const char *name, double v)
{
    return attr_write(loc, name, H5T_IEEE_F64LE, &v);
}

/* A variable-length string attribute (older goldens). */
static char *attr_vlen_str(hid_t a, hid_t ft)
{
    char *out = NULL, *v = NULL;
    H5T_cset_t cset = H5Tget_cset(ft);
    hid_t mt = cset < 0 ? -1 : H5Tcopy(H5T_C_S1);
    if (mt >= 0 && H5Tset_size(mt, H5T_VARIABLE) >= 0 && H5Tset_cset(mt, cset) >= 0 &&
        H5Aread(a, mt, &v) >= 0 && v)
        out = strdup(v);
    if (v)
        H5free_memory(v);
    if (mt >= 0)
        H5Tclose(mt);
    return out;
}

/* A fixed-length string attribute, read as its raw bytes so that a NUL inside the text is
 * seen (a conversion would cut there): NULL when a NUL sits before other text. */
static char *attr_fixed_str(hid_t a, hid_t ft)
{
    size_t sz = H5Tget_size(ft);
    H5T_str_t pad = H5Tget_strpad(ft);
    if (sz == 0 || sz > (1u << 24) || pad < 0)
        return NULL;
    char *v = calloc(1, sz + 1);
    int ok = v && H5Aread(a, ft, v) >= 0; /* (ft: the attribute's own type, a copy) */
    size_t len = v ? strlen(v) : 0;
    if (ok && pad == H5T_STR_NULLPAD)
        for (size_t i = len; i < sz; i++)
            ok &= v[i] == 0;
    if (ok && pad == H5T_STR_SPACEPAD)
        while (len > 0 && v[len - 1] == ' ')
            v[--len] = 0;
    if (!ok) {
        free(v);
        return NULL;
    }
    return v;
}

char *lg_attr_str_of(hid_t a)
{
    char *out = NULL;
    hid_t ft = H5Aget_type(a);
    hid_t sp = H5Aget_space(a);
    if (ft >= 0 && sp >= 0 && H5Tget_class(ft) == H5T_STRING &&
        H5Sget_simple_extent_npoints(sp) == 1) {
        htri_t vl = H5Tis_variable_str(ft);
        if (vl > 0)
            out = attr_vlen_str(a, ft);
        else if (vl == 0)
            out = attr_fixed_str(a, ft);
    }
    if (sp >= 0)
        H5Sclose(sp);
    if (ft >= 0)
        H5Tclose(ft);
    return out;
}

/* A scalar string attribute by name; NULL if absent or not a string. */
char *lg_attr_read_str(hid_t loc, const char *name)
{
    if (H5Aexists(loc, name) <= 0)
        return NULL;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0)
        return NULL;
    char *out = lg_attr_str_of(a);
    H5Aclose(a);
    return out;
}

/* An open attribute holding one number, converted to memtype: 1 = read, -1 = not a scalar
 * number. `data_size` (from H5A_info_t) spares a dataspace query. */
int lg_attr_num_of(hid_t a, hsize_t data_size, hid_t memtype, void *out)
{
    int rc = -1;
    hid_t ft = H5Aget_type(a);
    H5T_class_t cls = ft >= 0 ? H5Tget_class(ft) : H5T_NO_CLASS;
    if ((cls == H5T_INTEGER || cls == H5T_FLOAT) && data_size == H5Tget_size(ft) &&
        H5Aread(a, memtype, out) >= 0)
        rc = 1;
    if (ft >= 0)
        H5Tclose(ft);
    return rc;
}


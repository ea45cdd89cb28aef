/* golden_verify_tensors: a clean file verifies; a changed attribute or changed data bytes is
 * reported for exactly that tensor, with the stored and recomputed values. */
#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "golden/verify.h"

static char path[64];

static void make_file(void)
{
    snprintf(path, sizeof path, "verify-%d.h5", (int)getpid());
    unlink(path);
    golden_writer *w;
    golden_writer_opts o = GOLDEN_WRITER_OPTS_INIT;
    CU_ASSERT_EQUAL_FATAL(golden_writer_open(path, &o, &w, NULL), GOLDEN_OK);
    const char *names[] = {"a", "b", "c"};
    for (int k = 0; k < 3; k++) {
        golden_tensor_info t = {.name = (char *)names[k], .dtype = GOLDEN_F64, .rank = 1};
        t.shape[0] = 4;
        double x[4] = {1 + k, 2, 3, 4};
        CU_ASSERT_EQUAL(golden_writer_begin(w, &t, NULL), GOLDEN_OK);
        CU_ASSERT_EQUAL(golden_writer_write(w, x, sizeof x, NULL), GOLDEN_OK);
        CU_ASSERT_EQUAL(golden_writer_end(w, NULL, NULL), GOLDEN_OK);
    }
    CU_ASSERT_EQUAL_FATAL(golden_writer_commit(w, NULL), GOLDEN_OK);
}

/* Change a file behind libgolden's back, with HDF5 directly. */
static void tamper(const char *dset, const char *attr, double value, int data_index)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, dset, H5P_DEFAULT);
    if (attr) {
        hid_t a = H5Aopen(d, attr, H5P_DEFAULT);
        H5Awrite(a, H5T_NATIVE_DOUBLE, &value);
        H5Aclose(a);
    } else {
        double x[4];
        H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x);
        x[data_index] = value;
        H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x);
    }
    H5Dclose(d);
    H5Fclose(f);
}

static void test_clean_and_tampered(void)
{
    make_file();
    golden_reader *r;
    char **problems;
    CU_ASSERT_EQUAL_FATAL(golden_reader_open(path, &r, NULL), GOLDEN_OK);
    CU_ASSERT_EQUAL_FATAL(golden_verify_tensors(r, &problems, NULL, NULL), GOLDEN_OK);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_PTR_NULL(problems[i]);
    golden_verify_free(problems, 3);
    golden_reader_close(r);

    tamper("b", "mean", 99.0, 0);  /* b = {2,2,3,4}: true mean 2.75 */
    tamper("c", NULL, 5.0, 1);     /* c's data changes: hash, mean, std and max disagree */
    CU_ASSERT_EQUAL_FATAL(golden_reader_open(path, &r, NULL), GOLDEN_OK);
    CU_ASSERT_EQUAL_FATAL(golden_verify_tensors(r, &problems, NULL, NULL), GOLDEN_OK);
    CU_ASSERT_PTR_NULL(problems[0]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(problems[1]);
    CU_ASSERT_PTR_NOT_NULL(strstr(problems[1], "mean is 99, data gives 2.75"));
    CU_ASSERT_PTR_NULL(strstr(problems[1], "sha256"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(problems[2]);
    CU_ASSERT_PTR_NOT_NULL(strstr(problems[2], "sha256 is"));
    CU_ASSERT_PTR_NOT_NULL(strstr(problems[2], "max is 4, data gives 5"));
    golden_verify_free(problems, 3);

    json_t *tensors, *doc = golden_file_json(r, &tensors);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    json_array_append_new(tensors, golden_tensor_json(golden_reader_tensor(r, 1)));
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(doc, "schema")), "calculet-golden/v1");
    json_t *t0 = json_array_get(tensors, 0);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(t0, "name")), "b");
    CU_ASSERT_EQUAL(json_real_value(json_object_get(t0, "mean")), 99.0);
    CU_ASSERT_EQUAL(json_integer_value(json_array_get(json_object_get(t0, "shape"), 0)), 4);
    json_decref(doc);
    golden_reader_close(r);
    unlink(path);
}

static void test_data_only_open(void)
{
    make_file();
    golden_reader *r;
    golden_error err;
    CU_ASSERT_EQUAL_FATAL(golden_reader_open_flags(path, GOLDEN_READ_DATA_ONLY, &r, &err), GOLDEN_OK);
    const golden_tensor_info *t = golden_reader_tensor(r, 1);
    CU_ASSERT_STRING_EQUAL(t->name, "b");
    CU_ASSERT_EQUAL(t->dtype, GOLDEN_F64);
    CU_ASSERT_EQUAL(t->count, 4);
    CU_ASSERT_STRING_EQUAL(t->sha256, ""); /* not read in this mode */
    CU_ASSERT(isnan(t->mean));
    double x[4];
    CU_ASSERT_EQUAL(golden_reader_read(r, 1, 0, 4, x, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(x[0], 2.0);
    golden_reader_close(r);
    /* a missing contract attribute is still an error in both modes */
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "b", H5P_DEFAULT);
    H5Adelete(d, "mean");
    H5Dclose(d);
    H5Fclose(f);
    CU_ASSERT_EQUAL(golden_reader_open_flags(path, GOLDEN_READ_DATA_ONLY, &r, &err), GOLDEN_ERR);
    CU_ASSERT_STRING_EQUAL(err.what, "missing number attribute 'mean'");
    CU_ASSERT_PTR_NOT_NULL(strstr(err.where, ":b"));
    CU_ASSERT_EQUAL(golden_reader_open(path, &r, &err), GOLDEN_ERR);
    CU_ASSERT_STRING_EQUAL(err.what, "missing number attribute 'mean'");
    unlink(path);
}

int main(void)
{
    static const golden_test tests[] = {{"clean and tampered files", test_clean_and_tampered},
                                        {"data-only open", test_data_only_open},
                                        {0, 0}};
    return golden_test_run("verify", tests);
}

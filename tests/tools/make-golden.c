/* Test helper: writes a calculet-golden/v1 file from tensors described on the command line,
 * so the golden-diff end-to-end tests need neither python nor golden-dump. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/compare.h"
#include "golden/store.h"

static void usage(void)
{
    fputs("Usage: make-golden [--force] OUT.h5 SPEC...\n"
          "SPEC = NAME:DTYPE:SHAPE:STEPS   SHAPE = scalar | 4 | 2x3x0 ...\n"
          "STEPS = ';'-separated, a source then modifiers, applied in f64:\n"
          "  values=V,V,...  fill=V  seq=START,STEP  rand=SEED,LO,HI  file=RAW (canonical bytes)\n"
          "  noise=SEED,AMP  set=INDEX,VALUE  transpose (last two axes)  round=DTYPE\n"
          "  scale=F  add=F\n"
          "Values are rounded to DTYPE (nearest even) when written.\n",
          stderr);
}

static uint64_t rng;
static double next_unit(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* f64 -> canonical bits of a float dtype, nearest even (reuses the engine's ULP index,
 * which for a non-negative value is the format's bit pattern). */
static uint64_t float_bits(golden_dtype t, double x)
{
    size_t w = golden_dtype_size(t);
    uint64_t sign = UINT64_C(1) << (w * 8 - 1);
    if (isnan(x)) {
        switch (t) {
        case GOLDEN_F32: return 0x7FC00000;
        case GOLDEN_BF16: return 0x7FC0;
        case GOLDEN_F16: return 0x7E00;
        case GOLDEN_FP8_E4M3FN: return 0x7F;
        default: return 0x7E; /* e5m2 */
        }
    }
    if (isinf(x) && t == GOLDEN_FP8_E4M3FN)
        return x > 0 ? 0x7F : 0xFF; /* no Inf in e4m3fn: NaN */
    int64_t idx = golden_cmp_ulp_index(t, isinf(x) ? (x > 0 ? 1e300 : -1e300) : x);
    if (idx < 0 || signbit(x))
        return sign | (uint64_t)(idx < 0 ? -idx : idx);
    return (uint64_t)idx;
}

static double round_to(golden_dtype t, double x)
{
    uint64_t b = float_bits(t, x);
    unsigned char buf[8];
    memcpy(buf, &b, sizeof buf); /* little-endian host, as the rest of the toolkit */
    double out;
    golden_convert_to_f64(t, buf, 1, &out);
    return out;
}

static int encode(golden_dtype t, const double *v, uint64_t n, unsigned char *out)
{
    size_t w = golden_dtype_size(t);
    for (uint64_t i = 0; i < n; i++) {
        unsigned char *p = out + i * w;
        if (t == GOLDEN_F64) {
            memcpy(p, &v[i], 8);
        } else if (golden_dtype_is_float(t)) {
            uint64_t b = float_bits(t, v[i]);
            memcpy(p, &b, w);
        } else if (t == GOLDEN_U64) {
            uint64_t u = (uint64_t)v[i];
            memcpy(p, &u, 8);
        } else {
            int64_t s = (int64_t)v[i];
            memcpy(p, &s, w); /* low bytes of a little-endian int64 */
        }
    }
    return 0;
}

static int parse_shape(const char *s, golden_tensor_info *info)
{
    info->rank = 0;
    if (strcmp(s, "scalar") == 0)
        return 0;
    char *copy = strdup(s), *save = NULL;
    if (!copy)
        return -1;
    for (char *tok = strtok_r(copy, "x", &save); tok; tok = strtok_r(NULL, "x", &save)) {
        if (info->rank == GOLDEN_MAX_RANK) {
            free(copy);
            return -1;
        }
        info->shape[info->rank++] = strtoull(tok, NULL, 10);
    }
    free(copy);
    return 0;
}

static int apply_step(char *step, double **vp, uint64_t n, golden_tensor_info *info)
{
    double *v = *vp;
    char *arg = strchr(step, '=');
    if (arg)
        *arg++ = '\0';
    double a[5] = {0, 0, 0, 0, 0};
    int na = 0;
    if (arg && strncmp(step, "file", 4) != 0 && strcmp(step, "round") != 0) {
        char *save = NULL;
        for (char *tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
            if (na < 5)
                a[na++] = strtod(tok, NULL);
    }
    if (strcmp(step, "fill") == 0) {
        for (uint64_t i = 0; i < n; i++)
            v[i] = a[0];
    } else if (strcmp(step, "seq") == 0) {
        for (uint64_t i = 0; i < n; i++)
            v[i] = a[0] + a[1] * (double)i;
    } else if (strcmp(step, "rand") == 0) {
        rng = (uint64_t)a[0] * 2654435761u + 88172645463325252ULL;
        for (uint64_t i = 0; i < n; i++)
            v[i] = a[1] + (a[2] - a[1]) * next_unit();
    } else if (strcmp(step, "noise") == 0) {
        rng = (uint64_t)a[0] * 2654435761u + 1442695040888963407ULL;
        for (uint64_t i = 0; i < n; i++)
            v[i] += a[1] * (2 * next_unit() - 1);
    } else if (strcmp(step, "scale") == 0) {
        for (uint64_t i = 0; i < n; i++)
            v[i] *= a[0];
    } else if (strcmp(step, "add") == 0) {
        for (uint64_t i = 0; i < n; i++)
            v[i] += a[0];
    } else if (strcmp(step, "set") == 0) {
        if (a[0] < 0 || (uint64_t)a[0] >= n)
            return -1;
        v[(uint64_t)a[0]] = a[1];
    } else if (strcmp(step, "transpose") == 0) {
        if (info->rank < 2)
            return -1;
        uint64_t rows = info->shape[info->rank - 2], cols = info->shape[info->rank - 1];
        uint64_t mat = rows * cols;
        double *t = malloc((n ? n : 1) * sizeof *t);
        if (!t)
            return -1;
        for (uint64_t b = 0; mat && b < n / mat; b++)
            for (uint64_t i = 0; i < rows; i++)
                for (uint64_t j = 0; j < cols; j++)
                    t[b * mat + j * rows + i] = v[b * mat + i * cols + j];
        free(v);
        *vp = t;
        info->shape[info->rank - 2] = cols;
        info->shape[info->rank - 1] = rows;
    } else if (strcmp(step, "round") == 0) {
        golden_dtype t;
        if (!arg || golden_dtype_parse(arg, &t) != 0 || !golden_dtype_is_float(t))
            return -1;
        for (uint64_t i = 0; i < n; i++)
            v[i] = round_to(t, v[i]);
    } else {
        return -1;
    }
    return 0;
}

static int build(const char *spec, golden_writer *w, golden_error *err)
{
    char *copy = strdup(spec);
    if (!copy)
        return -1;
    char *f[4] = {copy, NULL, NULL, NULL};
    for (int k = 1; k < 4; k++) {
        f[k] = f[k - 1] ? strchr(f[k - 1], ':') : NULL;
        if (f[k])
            *f[k]++ = '\0';
    }
    golden_tensor_info info;
    memset(&info, 0, sizeof info);
    int rc = -1;
    double *v = NULL;
    unsigned char *bytes = NULL;
    if (!f[3] || golden_dtype_parse(f[1], &info.dtype) != 0 || parse_shape(f[2], &info) != 0) {
        fprintf(stderr, "make-golden: bad spec '%s'\n", spec);
        goto out;
    }
    info.name = f[0];
    uint64_t n = 1;
    for (int d = 0; d < info.rank; d++)
        n *= info.shape[d];
    size_t w1 = golden_dtype_size(info.dtype);
    v = calloc(n ? n : 1, sizeof *v);
    bytes = malloc((n ? n : 1) * w1);
    if (!v || !bytes)
        goto out;
    bool raw = false;
    char *save = NULL;
    for (char *step = strtok_r(f[3], ";", &save); step; step = strtok_r(NULL, ";", &save)) {
        if (strncmp(step, "values=", 7) == 0) {
            char *p = step + 7, *end;
            for (uint64_t i = 0; i < n; i++) {
                v[i] = strtod(p, &end);
                if (end == p) {
                    fprintf(stderr, "make-golden: %s: too few values\n", info.name);
                    goto out;
                }
                p = *end == ',' ? end + 1 : end;
            }
        } else if (strncmp(step, "file=", 5) == 0) {
            FILE *in = fopen(step + 5, "rb");
            if (!in || fread(bytes, w1, n, in) != n) {
                fprintf(stderr, "make-golden: %s: cannot read %s\n", info.name, step + 5);
                if (in)
                    fclose(in);
                goto out;
            }
            fclose(in);
            raw = true;
        } else if (apply_step(step, &v, n, &info) != 0) {
            fprintf(stderr, "make-golden: %s: bad step '%s'\n", info.name, step);
            goto out;
        }
    }
    if (!raw)
        encode(info.dtype, v, n, bytes);
    if (golden_writer_begin(w, &info, err) != 0 ||
        golden_writer_write(w, bytes, (size_t)(n * w1), err) != 0 ||
        golden_writer_end(w, NULL, err) != 0) {
        golden_error_print(stderr, "make-golden", err);
        goto out;
    }
    rc = 0;
out:
    free(v);
    free(bytes);
    free(copy);
    return rc;
}

int main(int argc, char **argv)
{
    int a = 1;
    golden_writer_opts opts = {false, 0, "make-golden 0.1.0"};
    if (a < argc && strcmp(argv[a], "--force") == 0) {
        opts.force = true;
        a++;
    }
    if (argc - a < 1) {
        usage();
        return 2;
    }
    golden_writer *w = NULL;
    golden_error err;
    if (golden_writer_open(argv[a], &opts, &w, &err) != 0) {
        golden_error_print(stderr, "make-golden", &err);
        return 2;
    }
    for (int i = a + 1; i < argc; i++)
        if (build(argv[i], w, &err) != 0) {
            golden_writer_abort(w);
            return 2;
        }
    if (golden_writer_commit(w, &err) != 0) {
        golden_error_print(stderr, "make-golden", &err);
        return 2;
    }
    return 0;
}

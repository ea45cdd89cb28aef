/* Test helper: writes a calculet-golden/v1 file from tensors described on the command line,
 * so the golden-diff end-to-end tests need neither python nor golden-dump. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "golden/compare.h"
#include "golden/store.h"

static void usage(void)
{
    fputs("Usage: make-golden [--force] [--gzip=1..9] OUT.h5 SPEC...\n"
          "SPEC = NAME:DTYPE:SHAPE:STEPS   SHAPE = scalar | 4 | 2x3x0 ...\n"
          "STEPS = ';'-separated, a source then modifiers, applied in f64:\n"
          "  values=V,V,...  fill=V  seq=START,STEP  rand=SEED,LO,HI  file=RAW (canonical bytes)\n"
          "  noise=SEED,AMP  set=INDEX,VALUE  transpose (last two axes)  round=DTYPE\n"
          "  scale=F  add=F\n"
          "Values are rounded to DTYPE (nearest even) when written.\n",
          stderr);
}

static double next_unit(uint64_t *rng)
{
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    return (double)(*rng >> 11) / 9007199254740992.0;
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

enum { S_VALUES, S_FILE, S_FILL, S_SEQ, S_RAND, S_NOISE, S_SCALE, S_ADD, S_SET, S_TRANSPOSE,
       S_ROUND };

typedef struct {
    int kind;
    double a[5];
    uint64_t rng;
    golden_dtype round;
    const char *text;   /* values= list or file= path */
    FILE *in;
} step;

static int parse_step(char *text, step *st)
{
    static const char *const names[] = {"values", "file", "fill", "seq", "rand", "noise",
                                        "scale", "add", "set", "transpose", "round"};
    memset(st, 0, sizeof *st);
    char *arg = strchr(text, '=');
    if (arg)
        *arg++ = '\0';
    st->kind = -1;
    for (int k = 0; k < (int)(sizeof names / sizeof *names); k++)
        if (strcmp(text, names[k]) == 0)
            st->kind = k;
    if (st->kind < 0 || (!arg && st->kind != S_TRANSPOSE))
        return -1;
    if (st->kind == S_VALUES || st->kind == S_FILE) {
        st->text = arg;
        return 0;
    }
    if (st->kind == S_ROUND)
        return golden_dtype_parse(arg, &st->round) == 0 && golden_dtype_is_float(st->round) ? 0 : -1;
    int na = 0;
    char *save = NULL;
    for (char *tok = arg ? strtok_r(arg, ",", &save) : NULL; tok && na < 5;
         tok = strtok_r(NULL, ",", &save))
        st->a[na++] = strtod(tok, NULL);
    if (st->kind == S_RAND)
        st->rng = (uint64_t)st->a[0] * 2654435761u + 88172645463325252ULL;
    if (st->kind == S_NOISE)
        st->rng = (uint64_t)st->a[0] * 2654435761u + 1442695040888963407ULL;
    return 0;
}

/* Apply one step to elements [off, off + m) held in v. */
static int run_step(step *st, double *v, uint64_t off, uint64_t m, golden_tensor_info *info,
                    size_t width, unsigned char *raw)
{
    switch (st->kind) {
    case S_VALUES: {
        const char *p = st->text;
        char *end;
        for (uint64_t i = 0; i < off + m; i++) {
            double x = strtod(p, &end);
            if (end == p)
                return -1;
            if (i >= off)
                v[i - off] = x;
            p = *end == ',' ? end + 1 : end;
        }
        st->text = p; /* the next chunk continues from here */
        return 0;
    }
    case S_FILE:
        if (!st->in && !(st->in = fopen(st->text, "rb")))
            return -1;
        return fread(raw, width, m, st->in) == m ? 1 : -1; /* 1: raw bytes are final */
    case S_FILL:
        for (uint64_t i = 0; i < m; i++)
            v[i] = st->a[0];
        return 0;
    case S_SEQ:
        for (uint64_t i = 0; i < m; i++)
            v[i] = st->a[0] + st->a[1] * (double)(off + i);
        return 0;
    case S_RAND:
        for (uint64_t i = 0; i < m; i++)
            v[i] = st->a[1] + (st->a[2] - st->a[1]) * next_unit(&st->rng);
        return 0;
    case S_NOISE:
        for (uint64_t i = 0; i < m; i++)
            v[i] += st->a[1] * (2 * next_unit(&st->rng) - 1);
        return 0;
    case S_SCALE:
        for (uint64_t i = 0; i < m; i++)
            v[i] *= st->a[0];
        return 0;
    case S_ADD:
        for (uint64_t i = 0; i < m; i++)
            v[i] += st->a[0];
        return 0;
    case S_SET:
        if (st->a[0] < 0)
            return -1;
        if ((uint64_t)st->a[0] >= off && (uint64_t)st->a[0] < off + m)
            v[(uint64_t)st->a[0] - off] = st->a[1];
        return 0;
    case S_TRANSPOSE: {
        /* only reached with the whole tensor in one chunk */
        if (info->rank < 2)
            return -1;
        uint64_t rows = info->shape[info->rank - 2], cols = info->shape[info->rank - 1];
        uint64_t mat = rows * cols;
        double *t = malloc((m ? m : 1) * sizeof *t);
        if (!t)
            return -1;
        for (uint64_t b = 0; mat && b < m / mat; b++)
            for (uint64_t i = 0; i < rows; i++)
                for (uint64_t j = 0; j < cols; j++)
                    t[b * mat + j * rows + i] = v[b * mat + i * cols + j];
        memcpy(v, t, m * sizeof *t);
        free(t);
        info->shape[info->rank - 2] = cols;
        info->shape[info->rank - 1] = rows;
        return 0;
    }
    case S_ROUND:
        for (uint64_t i = 0; i < m; i++)
            v[i] = round_to(st->round, v[i]);
        return 0;
    default:
        return -1;
    }
}

#define CHUNK (UINT64_C(1) << 20)

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
    int rc = -1, nsteps = 0;
    step steps[32];
    double *v = NULL;
    unsigned char *bytes = NULL;
    bool began = false;
    if (!f[3] || golden_dtype_parse(f[1], &info.dtype) != 0 || parse_shape(f[2], &info) != 0) {
        fprintf(stderr, "make-golden: bad spec '%s'\n", spec);
        goto out;
    }
    info.name = f[0];
    bool whole = false;
    char *save = NULL;
    for (char *t = strtok_r(f[3], ";", &save); t; t = strtok_r(NULL, ";", &save)) {
        if (nsteps == 32 || parse_step(t, &steps[nsteps]) != 0) {
            fprintf(stderr, "make-golden: %s: bad step '%s'\n", info.name, t);
            goto out;
        }
        whole |= steps[nsteps].kind == S_TRANSPOSE;
        nsteps++;
    }
    uint64_t n = 1;
    for (int d = 0; d < info.rank; d++)
        n *= info.shape[d];
    size_t w1 = golden_dtype_size(info.dtype);
    uint64_t chunk = whole ? (n ? n : 1) : CHUNK;
    v = calloc(chunk, sizeof *v);
    bytes = malloc(chunk * w1);
    if (!v || !bytes)
        goto out;
    /* the shape may change (transpose) before the header is written, so run the first chunk
     * before beginning the tensor */
    for (uint64_t off = 0; off < n || (n == 0 && off == 0); off += chunk) {
        uint64_t m = n - off < chunk ? n - off : chunk;
        bool raw = false;
        memset(v, 0, m * sizeof *v);
        for (int k = 0; k < nsteps; k++) {
            int r = run_step(&steps[k], v, off, m, &info, w1, bytes);
            if (r < 0) {
                fprintf(stderr, "make-golden: %s: step %d failed\n", info.name, k + 1);
                goto out;
            }
            raw |= r == 1;
        }
        if (!raw)
            encode(info.dtype, v, m, bytes);
        if (!began) {
            if (golden_writer_begin(w, &info, err) != 0)
                goto werr;
            began = true;
        }
        if (m && golden_writer_write(w, bytes, (size_t)(m * w1), err) != 0)
            goto werr;
        if (n == 0)
            break;
    }
    if (golden_writer_end(w, NULL, err) != 0)
        goto werr;
    rc = 0;
    goto out;
werr:
    golden_error_print(stderr, "make-golden", err);
out:
    for (int k = 0; k < nsteps; k++)
        if (steps[k].in)
            fclose(steps[k].in);
    free(v);
    free(bytes);
    free(copy);
    return rc;
}

int main(int argc, char **argv)
{
    int a = 1;
    golden_writer_opts opts = {.version = GOLDEN_WRITER_OPTS_VERSION,
                               .producer = "make-golden 0.1.0"};
    for (; a < argc && strncmp(argv[a], "--", 2) == 0; a++) {
        if (strcmp(argv[a], "--force") == 0)
            opts.force = true;
        else if (strncmp(argv[a], "--gzip=", 7) == 0)
            opts.gzip = atoi(argv[a] + 7);
        else {
            usage();
            return 2;
        }
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

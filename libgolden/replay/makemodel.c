/* npu-replay make-model: deterministic random Qwen3-MoE model folders in the Hugging Face
 * layout (config.json, model.safetensors or shards + index), for tests and benchmarks. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "golden/replay.h"
#include "golden/tokenizer.h"
#include "util/strmap.h"

/* The marker make-model writes into config.json: what --force may replace (replaceable()). */
#define MM_MARK_KEY "calculet_generated_by"
#define MM_MARK_VALUE "npu-replay make-model"

typedef struct {
    int hidden, layers, heads, kv_heads, head_dim, experts, topk, moe_inter, inter, vocab;
    long long max_pos;
    bool tie;
    uint64_t dense; /* bit L: layer L is dense (mlp_only_layers) */
} preset;

static const preset TINY = {64, 2, 4, 2, 16, 16, 4, 32, 128, 512, 512, false, 0};
static const preset QWEN3_30B_A3B = {2048, 48, 32, 4, 128, 128, 8, 768, 6144, 151936, 40960,
                                     false, 0};

/* One tensor to write: name, shape, and how to fill it. */
typedef struct {
    char name[128];
    long long rows, cols; /* cols 0 = vector */
    int kind;             /* 0 = linear (uniform, std 1/sqrt(cols)), 1 = norm (1 + noise), 2 = embed */
    int shard;
    unsigned long long begin, end;
} mm_tensor;

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int add(mm_tensor **t, size_t *n, int kind, long long rows, long long cols,
               const char *fmt, int a, int b)
{
    mm_tensor *nt = realloc(*t, (*n + 1) * sizeof *nt);
    if (!nt)
        return -1;
    *t = nt;
    mm_tensor *x = &nt[(*n)++];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, fmt, a, b);
    x->rows = rows;
    x->cols = cols;
    x->kind = kind;
    return 0;
}

static int list_tensors(const preset *p, mm_tensor **t, size_t *n)
{
    long long H = p->hidden, QD = (long long)p->heads * p->head_dim,
              KD = (long long)p->kv_heads * p->head_dim;
    int rc = add(t, n, 2, p->vocab, H, "model.embed_tokens.weight", 0, 0);
    for (int l = 0; l < p->layers && rc == 0; l++) {
        rc |= add(t, n, 0, QD, H, "model.layers.%d.self_attn.q_proj.weight", l, 0);
        rc |= add(t, n, 0, KD, H, "model.layers.%d.self_attn.k_proj.weight", l, 0);
        rc |= add(t, n, 0, KD, H, "model.layers.%d.self_attn.v_proj.weight", l, 0);
        rc |= add(t, n, 0, H, QD, "model.layers.%d.self_attn.o_proj.weight", l, 0);
        rc |= add(t, n, 1, p->head_dim, 0, "model.layers.%d.self_attn.q_norm.weight", l, 0);
        rc |= add(t, n, 1, p->head_dim, 0, "model.layers.%d.self_attn.k_norm.weight", l, 0);
        rc |= add(t, n, 1, H, 0, "model.layers.%d.input_layernorm.weight", l, 0);
        rc |= add(t, n, 1, H, 0, "model.layers.%d.post_attention_layernorm.weight", l, 0);
        if (l < 64 && (p->dense >> l & 1)) {
            rc |= add(t, n, 0, p->inter, H, "model.layers.%d.mlp.gate_proj.weight", l, 0);
            rc |= add(t, n, 0, p->inter, H, "model.layers.%d.mlp.up_proj.weight", l, 0);
            rc |= add(t, n, 0, H, p->inter, "model.layers.%d.mlp.down_proj.weight", l, 0);
            continue;
        }
        rc |= add(t, n, 0, p->experts, H, "model.layers.%d.mlp.gate.weight", l, 0);
        for (int e = 0; e < p->experts && rc == 0; e++) {
            rc |= add(t, n, 0, p->moe_inter, H, "model.layers.%d.mlp.experts.%d.gate_proj.weight", l, e);
            rc |= add(t, n, 0, p->moe_inter, H, "model.layers.%d.mlp.experts.%d.up_proj.weight", l, e);
            rc |= add(t, n, 0, H, p->moe_inter, "model.layers.%d.mlp.experts.%d.down_proj.weight", l, e);
        }
    }
    rc |= add(t, n, 1, H, 0, "model.norm.weight", 0, 0);
    if (!p->tie)
        rc |= add(t, n, 0, p->vocab, H, "lm_head.weight", 0, 0);
    return rc;
}

static void fill(const mm_tensor *t, uint64_t seed, float *buf, long long count)
{
    uint64_t s = seed ^ lg_strmap_hash(t->name, strlen(t->name));
    double scale = t->kind == 2 ? 1.0 : t->kind == 1 ? 0.1 : 1.0 / sqrt((double)t->cols);
    for (long long i = 0; i < count; i++) {
        double u = (double)(mix64(s + (uint64_t)i) >> 11) * 0x1.0p-53 * 2.0 - 1.0;
        double v = u * sqrt(3.0) * scale; /* uniform with std = scale */
        buf[i] = (float)(t->kind == 1 ? 1.0 + v : v);
    }
}

static int write_config(const char *dir, const preset *p, const char *dtype, golden_error *err)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/config.json", dir);
    char dense[1024] = "";
    for (int l = 0; l < p->layers && l < 64; l++)
        if (p->dense >> l & 1)
            snprintf(dense + strlen(dense), sizeof dense - strlen(dense), "%s%d",
                     dense[0] ? ", " : "", l);
    FILE *f = fopen(path, "w");
    if (!f)
        return golden_fail_what(err, golden_code_from_errno(errno), path, "%s", strerror(errno));
    fprintf(f,
            "{\n  \"architectures\": [\"Qwen3MoeForCausalLM\"],\n  \"model_type\": \"qwen3_moe\",\n"
            "  \"hidden_size\": %d,\n  \"num_hidden_layers\": %d,\n  \"num_attention_heads\": %d,\n"
            "  \"num_key_value_heads\": %d,\n  \"head_dim\": %d,\n  \"num_experts\": %d,\n"
            "  \"num_experts_per_tok\": %d,\n  \"moe_intermediate_size\": %d,\n"
            "  \"norm_topk_prob\": true,\n  \"rms_norm_eps\": 1e-06,\n  \"rope_theta\": 1000000.0,\n"
            "  \"vocab_size\": %d,\n  \"max_position_embeddings\": %lld,\n"
            "  \"tie_word_embeddings\": %s,\n  \"decoder_sparse_step\": 1,\n"
            "  \"mlp_only_layers\": [%s],\n  \"intermediate_size\": %d,\n"
            "  \"hidden_act\": \"silu\",\n  \"torch_dtype\": \"%s\",\n"
            "  \"" MM_MARK_KEY "\": \"" MM_MARK_VALUE "\"\n}\n",
            p->hidden, p->layers, p->heads, p->kv_heads, p->head_dim, p->experts, p->topk,
            p->moe_inter, p->vocab, p->max_pos, p->tie ? "true" : "false", dense, p->inter,
            strcmp(dtype, "f32") == 0 ? "float32" : strcmp(dtype, "f16") == 0 ? "float16" : "bfloat16");
    if (fclose(f) != 0)
        return golden_fail_what(err, GOLDEN_EIO, path, "write failed");
    return 0;
}

/* f32 -> f16, round to nearest even, written out because not every compiler has _Float16
 * (clang 14 on x86-64 does not; make fuzz builds the library with it). */
static uint16_t to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t a = x & 0x7fffffffu;
    if (a >= 0x7f800000u) /* Inf, or NaN kept quiet with its top payload bits */
        return sign | 0x7c00u | (a > 0x7f800000u ? 0x200u | ((a >> 13) & 0x3ffu) : 0u);
    if (a >= 0x477ff000u) /* 65520 and above round to Inf */
        return sign | 0x7c00u;
    if (a < 0x38800000u) { /* below 2^-14: an f16 subnormal, f * 2^24 rounded (exact scaling) */
        float m;
        memcpy(&m, &a, 4);
        return sign | (uint16_t)lrintf(m * 16777216.0f);
    }
    uint32_t r = a - ((uint32_t)(127 - 15) << 23); /* rebias the exponent */
    r += 0xfffu + ((r >> 13) & 1u);                /* round 23 -> 10 mantissa bits, ties even */
    return sign | (uint16_t)(r >> 13);
}

/* Write one shard: header (8-byte aligned) then every tensor's bytes. */
/* done: tensor bytes written before this shard, advanced as each tensor is written */
static int write_shard(const char *path, mm_tensor *t, size_t n, int shard, const char *st_dtype,
                       size_t width, uint64_t seed, golden_progress *prog,
                       unsigned long long *done, golden_error *err)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return golden_fail_what(err, golden_code_from_errno(errno), path, "%s", strerror(errno));
    size_t cap = 1 << 16, len = 0;
    char *hdr = malloc(cap);
    unsigned long long off = 0;
    int rc = 0;
    len += (size_t)snprintf(hdr, cap, "{");
    for (size_t i = 0; i < n; i++) {
        if (t[i].shard != shard)
            continue;
        long long count = t[i].rows * (t[i].cols ? t[i].cols : 1);
        t[i].begin = off;
        t[i].end = off + (unsigned long long)count * width;
        off = t[i].end;
        if (len + 512 > cap) {
            cap *= 2;
            char *nh = realloc(hdr, cap);
            if (!nh) { rc = -1; break; }
            hdr = nh;
        }
        if (t[i].cols)
            len += (size_t)snprintf(hdr + len, cap - len,
                                    "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[%lld,%lld],\"data_offsets\":[%llu,%llu]}",
                                    len > 1 ? "," : "", t[i].name, st_dtype, t[i].rows, t[i].cols,
                                    t[i].begin, t[i].end);
        else
            len += (size_t)snprintf(hdr + len, cap - len,
                                    "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[%lld],\"data_offsets\":[%llu,%llu]}",
                                    len > 1 ? "," : "", t[i].name, st_dtype, t[i].rows, t[i].begin,
                                    t[i].end);
    }
    if (rc == 0) {
        hdr[len++] = '}';
        while (len % 8)
            hdr[len++] = ' ';
        unsigned char lb[8];
        for (int k = 0; k < 8; k++)
            lb[k] = (unsigned char)((uint64_t)len >> (8 * k));
        if (fwrite(lb, 1, 8, f) != 8 || fwrite(hdr, 1, len, f) != len)
            rc = -1;
    }
    float *buf = NULL;
    void *out = NULL;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (t[i].shard != shard)
            continue;
        long long count = t[i].rows * (t[i].cols ? t[i].cols : 1);
        buf = realloc(buf, (size_t)count * 4);
        out = realloc(out, (size_t)count * width);
        if (!buf || !out) { rc = -1; break; }
        fill(&t[i], seed, buf, count);
        for (long long k = 0; k < count; k++) {
            if (width == 4)
                ((float *)out)[k] = buf[k];
            else if (strcmp(st_dtype, "BF16") == 0)
                ((uint16_t *)out)[k] = golden_f32_to_bf16(buf[k]);
            else
                ((uint16_t *)out)[k] = to_f16(buf[k]);
        }
        if (fwrite(out, width, (size_t)count, f) != (size_t)count)
            rc = -1;
        *done += (unsigned long long)count * width;
        if (prog)
            golden_progress_update_note(prog, *done, t[i].name);
    }
    free(buf);
    free(out);
    free(hdr);
    if (fclose(f) != 0)
        rc = -1;
    if (rc != 0)
        return golden_fail_what(err, GOLDEN_EIO, path, "cannot write the model shard");
    return 0;
}

static int write_index(const char *dir, const mm_tensor *t, size_t n, int shards,
                       golden_error *err)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return golden_fail_what(err, golden_code_from_errno(errno), path, "%s", strerror(errno));
    unsigned long long total = 0;
    for (size_t i = 0; i < n; i++)
        total += t[i].end - t[i].begin;
    fprintf(f, "{\n  \"metadata\": {\"total_size\": %llu},\n  \"weight_map\": {\n", total);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "    \"%s\": \"model-%05d-of-%05d.safetensors\"%s\n", t[i].name,
                t[i].shard + 1, shards, i + 1 < n ? "," : "");
    fprintf(f, "  }\n}\n");
    if (fclose(f) != 0)
        return golden_fail_what(err, GOLDEN_EIO, path, "write failed");
    return 0;
}

/* What --force may replace: a folder make-model wrote (its config.json carries this marker),
 * holding nothing but the files it writes. Anything else is the user's and is never deleted. */

static bool own_name(const char *n)
{
    unsigned a, b;
    char tail[2];
    return !strcmp(n, "config.json") || !strcmp(n, "tokenizer.json") ||
           !strcmp(n, "model.safetensors") || !strcmp(n, "model.safetensors.index.json") ||
           (sscanf(n, "model-%5u-of-%5u.safetensor%1[s]", &a, &b, tail) == 3 &&
            strlen(n) == strlen("model-00000-of-00000.safetensors"));
}

/* 0 when dir is a folder make-model wrote and holds only its files; else an error naming what
 * would be lost. */
static int replaceable(const char *dir, golden_error *err)
{
    struct stat sb;
    if (lstat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return golden_fail_what(err, GOLDEN_EEXISTS, dir, "exists and is not a model folder: "
                                "--force replaces only a folder make-model wrote");
    char path[8192];
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "r");
    char buf[8192];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    if (!strstr(buf, "\"" MM_MARK_KEY "\": \"" MM_MARK_VALUE "\""))
        return golden_fail_what(err, GOLDEN_EEXISTS, dir, "was not written by make-model (its "
                                "config.json has no " MM_MARK_KEY "): --force will not replace it");
    DIR *d = opendir(dir);
    if (!d)
        return golden_fail_what(err, golden_code_from_errno(errno), dir, "%s", strerror(errno));
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (!own_name(e->d_name) || lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            rc = golden_fail_what(err, GOLDEN_EEXISTS, path, "is not a file make-model writes: "
                                  "--force will not delete it (move it out first)");
    }
    closedir(d);
    return rc;
}

/* Remove a model folder this code wrote: its regular files (config, shards, index), then it. */
static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[8192];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, "config.json") != 0 && strncmp(e->d_name, "model", 5) != 0 &&
                strcmp(e->d_name, "tokenizer.json") != 0)
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

int golden_make_model(const golden_make_model_opts *o, golden_error *err)
{
    preset p;
    if (!o->preset || strcmp(o->preset, "tiny") == 0)
        p = TINY;
    else if (strcmp(o->preset, "qwen3-30b-a3b") == 0)
        p = QWEN3_30B_A3B;
    else
        return golden_fail_what(err, GOLDEN_EINVAL, "--preset", "unknown preset '%s' (tiny, qwen3-30b-a3b)",
                                o->preset);
    if (o->layers > 0)
        p.layers = o->layers;
    p.dense = o->dense_mask;
    if (p.layers < 64 && (p.dense >> p.layers) != 0)
        return golden_fail_what(err, GOLDEN_EINVAL, "--dense-layer", "names a layer the model does not have");
    const char *dtype = o->dtype ? o->dtype : "bf16";
    const char *st = strcmp(dtype, "bf16") == 0 ? "BF16" : strcmp(dtype, "f32") == 0 ? "F32"
                     : strcmp(dtype, "f16") == 0 ? "F16" : NULL;
    if (!st)
        return golden_fail_what(err, GOLDEN_EINVAL, "--dtype", "'%s' is not bf16, f16 or f32", dtype);
    size_t width = st[0] == 'F' && st[1] == '3' ? 4 : 2;
    int shards = o->shards > 1 ? o->shards : 1;
    struct stat sb;
    bool replace = lstat(o->out_dir, &sb) == 0;
    if (replace && !o->force)
        return golden_fail_what(err, GOLDEN_EEXISTS, o->out_dir, "exists (use --force to replace it)");
    if (replace && replaceable(o->out_dir, err) != 0)
        return GOLDEN_ERR;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", o->out_dir, (long)getpid());
    if (mkdir(tmp, 0777) != 0)
        return golden_fail_what(err, golden_code_from_errno(errno), tmp, "%s", strerror(errno));
    mm_tensor *t = NULL;
    size_t n = 0;
    int rc = list_tensors(&p, &t, &n) ? golden_fail_what(err, GOLDEN_ENOMEM, "make-model", "out of memory") : 0;
    unsigned long long total = 0, acc = 0;
    for (size_t i = 0; i < n; i++)
        total += (unsigned long long)(t[i].rows * (t[i].cols ? t[i].cols : 1));
    for (size_t i = 0; i < n; i++) { /* contiguous ranges of about equal size per shard */
        t[i].shard = (int)(acc * (unsigned long long)shards / (total ? total : 1));
        acc += (unsigned long long)(t[i].rows * (t[i].cols ? t[i].cols : 1));
    }
    if (rc == 0)
        rc = write_config(tmp, &p, dtype, err);
    if (rc == 0) { /* a byte-level BPE whose ids all fit the config's vocab_size */
        char tok[8192];
        snprintf(tok, sizeof tok, "%s/tokenizer.json", tmp);
        rc = golden_tokenizer_write_synthetic(tok, (size_t)p.vocab, err);
    }
    golden_progress *prog = o->version >= 2 ? o->progress : NULL;
    unsigned long long written = 0;
    if (prog) {
        golden_progress_start(prog, "make-model", total * width);
        prog->bytes = true;
    }
    for (int s = 0; s < shards && rc == 0; s++) {
        char path[8192];
        if (shards == 1)
            snprintf(path, sizeof path, "%s/model.safetensors", tmp);
        else
            snprintf(path, sizeof path, "%s/model-%05d-of-%05d.safetensors", tmp, s + 1, shards);
        rc = write_shard(path, t, n, s, st, width, o->seed, prog, &written, err);
    }
    if (prog)
        golden_progress_end(prog);
    if (rc == 0 && shards > 1)
        rc = write_index(tmp, t, n, shards, err);
    free(t);
    /* the old folder moves aside first and comes back when the new one cannot take its
     * place: a failed replacement leaves it as it was */
    char old[4200];
    snprintf(old, sizeof old, "%s.old-%ld", o->out_dir, (long)getpid());
    if (rc == 0 && replace && rename(o->out_dir, old) != 0)
        rc = golden_fail_what(err, golden_code_from_errno(errno), o->out_dir, "rename: %s",
                              strerror(errno));
    else if (rc == 0 && rename(tmp, o->out_dir) != 0) {
        rc = golden_fail_what(err, golden_code_from_errno(errno), o->out_dir, "rename: %s",
                              strerror(errno));
        if (replace)
            (void)rename(old, o->out_dir);
    } else if (rc == 0 && replace)
        remove_tree(old);
    if (rc != 0)
        remove_tree(tmp);
    return rc;
}

/* The CPU backend's model loading: a Hugging Face Qwen3-MoE folder (config.json, one
 * model.safetensors or shards with their index), memory-mapped and checked tensor by tensor. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "golden/doc.h"
#include "golden/ingest.h"
#include "replay/cpu.h"
#include "util/strmap.h"
#include "util/str.h"

/* One integer key of config.json, within [lo, hi]. */
static int cfg_int(json_t *root, const char *path, const char *key, int64_t lo, int64_t hi,
                   int64_t *out, golden_error *err)
{
    json_t *v = json_object_get(root, key);
    if (!v)
        return golden_fail_where(err, GOLDEN_EINVAL, "required key is missing", "%s#/%s", path,
                                 key);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return golden_fail_what(err, GOLDEN_EINVAL, path,
                                "%s must be an integer in [%lld, %lld]", key, (long long)lo,
                                (long long)hi);
    *out = json_integer_value(v);
    return 0;
}

static int cfg_num(json_t *root, const char *path, const char *key, double *out,
                   golden_error *err)
{
    json_t *v = json_object_get(root, key);
    if (!v)
        return golden_fail_where(err, GOLDEN_EINVAL, "required key is missing", "%s#/%s", path,
                                 key);
    if (!json_is_number(v) || !(json_number_value(v) > 0) || !isfinite(json_number_value(v)))
        return golden_fail_what(err, GOLDEN_EINVAL, path, "%s must be a positive number", key);
    *out = json_number_value(v);
    return 0;
}

static int cfg_bool(json_t *root, const char *path, const char *key, bool *out,
                    golden_error *err)
{
    json_t *v = json_object_get(root, key);
    if (!v)
        return golden_fail_where(err, GOLDEN_EINVAL, "required key is missing", "%s#/%s", path,
                                 key);
    if (!json_is_boolean(v))
        return golden_fail_what(err, GOLDEN_EINVAL, path, "%s must be true or false", key);
    *out = json_is_true(v);
    return 0;
}

/* Keys that change the math: the cpu reference implements each only at its neutral value (or
 * absent), and refuses any other, so a golden never silently comes from another model. */
static int cfg_unimplemented(json_t *r, const char *p, golden_error *err)
{
    static const struct {
        const char *key, *neutral; /* neutral: a JSON text the value must equal */
    } keys[] = {{"model_type", "\"qwen3_moe\""},   {"rope_scaling", "null"},
                {"attention_bias", "false"},       {"hidden_act", "\"silu\""},
                {"use_sliding_window", "false"},   {"partial_rotary_factor", "1.0"},
                {"mlp_bias", "false"}};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        json_t *v = json_object_get(r, keys[i].key);
        if (!v)
            continue;
        golden_doc *nd = NULL; /* the neutral text, read by the one JSON reader */
        golden_error ne;
        if (golden_doc_load_json("neutral", keys[i].neutral, strlen(keys[i].neutral), 1, &nd,
                                 &ne) != GOLDEN_OK)
            return golden_fail_what(err, GOLDEN_EINTERNAL, p, "%s", ne.what);
        const json_t *want = golden_doc_root(nd);
        bool same = json_equal(v, want) ||
                    (json_is_number(v) && json_is_number(want) &&
                     json_number_value(v) == json_number_value(want));
        golden_doc_free(nd);
        if (!same) {
            char *got = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
            int rc = golden_fail_what(err, GOLDEN_EUNSUPPORTED, p,
                                      "%s is %.200s: the cpu reference implements only %s (it "
                                      "would compute another model)",
                                      keys[i].key, got ? got : "?", keys[i].neutral);
            free(got);
            return rc;
        }
    }
    return 0;
}

static int cfg_read(json_t *r, const char *p, cpu_config *c, golden_error *err)
{
    if (cfg_unimplemented(r, p, err) != 0)
        return GOLDEN_ERR;
    int64_t v[12];
    static const char *const keys[12] = {
        "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
        "head_dim", "num_experts", "num_experts_per_tok", "moe_intermediate_size",
        "vocab_size", "max_position_embeddings", "decoder_sparse_step", "intermediate_size"};
    static const int64_t lo[12] = {1, 1, 1, 1, 2, 0, 0, 0, 1, 1, 0, 0};
    for (int i = 0; i < 12; i++)
        if (cfg_int(r, p, keys[i], lo[i], i == 9 ? (1LL << 40) : (1 << 24), &v[i], err) != 0)
            return GOLDEN_ERR;
    c->hidden = (int)v[0]; c->layers = (int)v[1]; c->heads = (int)v[2]; c->kv_heads = (int)v[3];
    c->head_dim = (int)v[4]; c->experts = (int)v[5]; c->topk = (int)v[6];
    c->moe_inter = (int)v[7]; c->vocab = (int)v[8]; c->max_pos = v[9];
    c->sparse_step = (int)v[10]; c->inter = (int)v[11];
    if (cfg_num(r, p, "rms_norm_eps", &c->eps, err) != 0 ||
        cfg_num(r, p, "rope_theta", &c->theta, err) != 0 ||
        cfg_bool(r, p, "norm_topk_prob", &c->norm_topk, err) != 0 ||
        cfg_bool(r, p, "tie_word_embeddings", &c->tie, err) != 0)
        return GOLDEN_ERR;
    if (c->head_dim % 2 != 0)
        return golden_fail_what(err, GOLDEN_EINVAL, p, "head_dim must be even (RoPE halves)");
    if (c->heads % c->kv_heads != 0)
        return golden_fail_what(err, GOLDEN_EINVAL, p,
                                "num_attention_heads must be a multiple of num_key_value_heads");
    if (c->topk > c->experts)
        return golden_fail_what(err, GOLDEN_EINVAL, p,
                                "num_experts_per_tok exceeds num_experts");
    c->mlp_only = calloc((size_t)c->layers, sizeof *c->mlp_only);
    if (!c->mlp_only)
        return golden_fail_what(err, GOLDEN_ENOMEM, p, "out of memory");
    json_t *mo = json_object_get(r, "mlp_only_layers");
    if (!mo)
        return golden_fail_where(err, GOLDEN_EINVAL, "required key is missing",
                                 "%s#/mlp_only_layers", p);
    size_t i;
    json_t *e;
    if (!json_is_array(mo))
        return golden_fail_what(err, GOLDEN_EINVAL, p, "mlp_only_layers must be a list");
    json_array_foreach(mo, i, e) {
        if (!json_is_integer(e) || json_integer_value(e) < 0 ||
            json_integer_value(e) >= c->layers)
            return golden_fail_what(err, GOLDEN_EINVAL, p,
                                    "mlp_only_layers[%zu] is not a layer index", i);
        c->mlp_only[json_integer_value(e)] = true;
    }
    return 0;
}

/* Every key the reference knows: read (cfg_read), refused away from neutral (cfg_unimplemented),
 * or known to leave inference alone (ids, training-only settings, provenance; sliding_window
 * and max_window_layers act only with use_sliding_window, which is refused). */
static const char *const known_keys[] = {
    "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
    "num_experts", "num_experts_per_tok", "moe_intermediate_size", "vocab_size",
    "max_position_embeddings", "decoder_sparse_step", "intermediate_size", "rms_norm_eps",
    "rope_theta", "norm_topk_prob", "tie_word_embeddings", "mlp_only_layers",
    "model_type", "rope_scaling", "attention_bias", "hidden_act", "use_sliding_window",
    "partial_rotary_factor", "mlp_bias",
    "architectures", "torch_dtype", "transformers_version", "bos_token_id", "eos_token_id",
    "pad_token_id", "initializer_range", "use_cache", "attention_dropout", "output_router_logits",
    "router_aux_loss_coef", "sliding_window", "max_window_layers", "calculet_generated_by"};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int cpu_config_unknown(const char *path, char **out, golden_error *err)
{
    *out = NULL;
    golden_doc *doc = NULL;
    if (golden_doc_load_file(path, &doc, err) != 0)
        return GOLDEN_ERR;
    json_t *r = golden_doc_root(doc);
    if (!json_is_object(r)) {
        golden_doc_free(doc);
        return golden_fail_what(err, GOLDEN_EINVAL, path, "not a JSON object");
    }
    size_t n = 0, bytes = 1;
    const char **v = calloc(json_object_size(r) + 1, sizeof *v);
    const char *key;
    json_t *val;
    json_object_foreach(r, key, val) {
        size_t i = 0;
        while (i < sizeof known_keys / sizeof *known_keys && strcmp(known_keys[i], key) != 0)
            i++;
        if (v && i == sizeof known_keys / sizeof *known_keys) {
            v[n++] = key;
            bytes += strlen(key) + 1;
        }
    }
    char *s = v ? malloc(bytes) : NULL;
    if (s) {
        qsort(v, n, sizeof *v, cmp_str);
        s[0] = 0;
        for (size_t i = 0, at = 0; i < n; i++)
            at += (size_t)sprintf(s + at, "%s%s", i ? "," : "", v[i]);
    }
    free(v);
    golden_doc_free(doc);
    if (!s)
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    *out = s;
    return 0;
}

int cpu_config_load(const char *path, cpu_config *c, golden_error *err)
{
    memset(c, 0, sizeof *c);
    golden_doc *doc = NULL;
    if (golden_doc_load_file(path, &doc, err) != 0)
        return GOLDEN_ERR;
    json_t *r = golden_doc_root(doc);
    int rc = json_is_object(r) ? cfg_read(r, path, c, err)
                               : golden_fail_what(err, GOLDEN_EINVAL, path, "not a JSON object");
    golden_doc_free(doc);
    if (rc != 0) {
        free(c->mlp_only);
        c->mlp_only = NULL;
    }
    return rc;
}

/* Whether layer l uses the sparse MoE block (Hugging Face's rule). */
static bool layer_sparse(const cpu_config *c, int l)
{
    return !c->mlp_only[l] && c->experts > 0 && c->sparse_step > 0 &&
           (l + 1) % c->sparse_step == 0;
}

/* ---- shards ---- */

typedef struct {
    golden_input_list list;
    golden_strmap by_name; /* tensor name -> index in list */
    char **files;          /* shard paths, parallel to maps */
    size_t n_files;
} shard_set;

static int add_file(shard_set *s, char *path, golden_error *err)
{
    for (size_t i = 0; i < s->n_files; i++)
        if (strcmp(s->files[i], path) == 0) {
            free(path);
            return 0;
        }
    char **nf = realloc(s->files, (s->n_files + 1) * sizeof *nf);
    if (!nf) {
        free(path);
        return golden_fail_what(err, GOLDEN_ENOMEM, "model", "out of memory");
    }
    s->files = nf;
    s->files[s->n_files++] = path;
    return 0;
}

/* The shard list: from the index's weight_map, or the single file. */
static int find_shards(const char *dir, shard_set *s, golden_doc **index, golden_error *err)
{
    char *ip = lg_path_join(dir, "model.safetensors.index.json");
    if (!ip)
        return golden_fail_what(err, GOLDEN_ENOMEM, dir, "out of memory");
    struct stat st;
    if (stat(ip, &st) != 0) {
        free(ip);
        char *one = lg_path_join(dir, "model.safetensors");
        if (!one)
            return golden_fail_what(err, GOLDEN_ENOMEM, dir, "out of memory");
        if (stat(one, &st) != 0) {
            golden_fail_what(err, GOLDEN_ENOTFOUND, dir,
                             "no model.safetensors and no model.safetensors.index.json");
            free(one);
            return GOLDEN_ERR;
        }
        return add_file(s, one, err);
    }
    int rc = golden_doc_load_file(ip, index, err);
    json_t *wm = rc == 0 ? json_object_get(golden_doc_root(*index), "weight_map") : NULL;
    if (rc == 0 && !json_is_object(wm))
        rc = golden_fail_what(err, GOLDEN_EINVAL, ip, "weight_map must be an object");
    const char *key;
    json_t *v;
    if (rc == 0)
        json_object_foreach(wm, key, v) {
            const char *f = json_string_value(v);
            if (!f || !*f || strchr(f, '/') || strcmp(f, "..") == 0) {
                rc = golden_fail_where(err, GOLDEN_EINVAL, "shard must be a file name in the folder",
                                       "%s#/weight_map/%s", ip, key);
                break;
            }
            char *p = lg_path_join(dir, f);
            if (!p || stat(p, &st) != 0) {
                rc = golden_fail_where(err, GOLDEN_ENOTFOUND, p ? "names a shard that does not exist"
                                                                : "out of memory",
                                       "%s#/weight_map/%s", ip, key);
                free(p);
                break;
            }
            if ((rc = add_file(s, p, err)) != 0)
                break;
        }
    free(ip);
    return rc;
}

static int map_file(const char *path, void **map, size_t *len, golden_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return golden_fail_what(err, golden_code_from_errno(e), path, "%s", strerror(e));
    }
    *len = (size_t)st.st_size;
    *map = *len ? mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (*len && *map == MAP_FAILED) {
        *map = NULL;
        return golden_fail_what(err, GOLDEN_EIO, path, "mmap: %s", strerror(errno));
    }
    return 0;
}

/* Parse every shard's header (offsets checked by the ingest reader) and map it. */
static int load_shards(cpu_model *m, shard_set *s, golden_error *err)
{
    m->maps = calloc(s->n_files, sizeof *m->maps);
    m->map_len = calloc(s->n_files, sizeof *m->map_len);
    if (!m->maps || !m->map_len)
        return golden_fail_what(err, GOLDEN_ENOMEM, "model", "out of memory");
    m->n_maps = s->n_files;
    golden_input_list_init(&s->list);
    for (size_t f = 0; f < s->n_files; f++) {
        size_t before = s->list.count;
        if (golden_ingest_safetensors(&s->list, s->files[f], err) != 0 ||
            map_file(s->files[f], &m->maps[f], &m->map_len[f], err) != 0)
            return GOLDEN_ERR;
        for (size_t i = before; i < s->list.count; i++) {
            const char *nm = s->list.items[i].info.name;
            uint64_t prev;
            int pr = lg_strmap_put(&s->by_name, nm, strlen(nm), (uint64_t)i << 16 | f, &prev);
            if (pr < 0)
                return golden_fail_what(err, GOLDEN_ENOMEM, "model", "out of memory");
            if (pr == 1)
                return golden_fail_where(err, GOLDEN_EINVAL, "tensor appears in two shards",
                                         "%s:%s", s->files[f], nm);
        }
    }
    return 0;
}

/* Bind one tensor by name with the shape the config implies (cols 0 = a vector [rows]). */
static int bind(cpu_model *m, shard_set *s, golden_doc *index, cpu_weight *w, int64_t rows,
                int64_t cols, golden_error *err, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));
static int bind(cpu_model *m, shard_set *s, golden_doc *index, cpu_weight *w, int64_t rows,
                int64_t cols, golden_error *err, const char *fmt, ...)
{
    char name[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    uint64_t v;
    if (!lg_strmap_get(&s->by_name, name, strlen(name), &v))
        return golden_fail_where(err, GOLDEN_ENOTFOUND, "required tensor is missing", "%s:%s",
                                 s->n_files == 1 ? s->files[0] : "model", name);
    size_t f = v & 0xffff, i = v >> 16;
    const golden_input *in = &s->list.items[i];
    if (index) {
        json_t *wm = json_object_get(golden_doc_root(index), "weight_map");
        const char *want = json_string_value(json_object_get(wm, name));
        const char *base = strrchr(s->files[f], '/');
        if (!want || strcmp(want, base ? base + 1 : s->files[f]) != 0)
            return golden_fail_where(err, GOLDEN_EINVAL,
                                     "the index places this tensor in another shard", "%s:%s",
                                     s->files[f], name);
    }
    golden_dtype dt = in->info.dtype;
    if (dt != GOLDEN_F32 && dt != GOLDEN_BF16 && dt != GOLDEN_F16)
        return golden_fail_where(err, GOLDEN_EUNSUPPORTED, "dtype must be bf16, f16 or f32",
                                 "%s:%s", s->files[f], name);
    int want_rank = cols ? 2 : 1;
    bool ok = in->info.rank == want_rank && in->info.shape[0] == (uint64_t)rows &&
              (!cols || in->info.shape[1] == (uint64_t)cols);
    if (!ok) {
        char got[128] = "[";
        for (int d = 0; d < in->info.rank && d < 8; d++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%llu", d ? ", " : "",
                     (unsigned long long)in->info.shape[d]);
        strcat(got, "]");
        char where[1200];
        snprintf(where, sizeof where, "%s:%s", s->files[f], name);
        if (cols)
            return golden_fail_what(err, GOLDEN_EINVAL, where,
                                    "shape %s, the config implies [%lld, %lld]", got,
                                    (long long)rows, (long long)cols);
        return golden_fail_what(err, GOLDEN_EINVAL, where, "shape %s, the config implies [%lld]",
                                got, (long long)rows);
    }
    w->data = (const char *)m->maps[f] + in->offset;
    w->dt = dt;
    w->rows = cols ? rows : 1;
    w->cols = cols ? cols : rows;
    return 0;
}

static int bind_layer(cpu_model *m, shard_set *s, golden_doc *ix, int l, golden_error *err)
{
    const cpu_config *c = &m->c;
    cpu_layer *L = &m->layer[l];
    int64_t H = c->hidden, qd = (int64_t)c->heads * c->head_dim,
            kd = (int64_t)c->kv_heads * c->head_dim;
    const char *a = "model.layers.%d.self_attn.%s";
    if (bind(m, s, ix, &L->q, qd, H, err, a, l, "q_proj.weight") ||
        bind(m, s, ix, &L->k, kd, H, err, a, l, "k_proj.weight") ||
        bind(m, s, ix, &L->v, kd, H, err, a, l, "v_proj.weight") ||
        bind(m, s, ix, &L->o, H, qd, err, a, l, "o_proj.weight") ||
        bind(m, s, ix, &L->q_norm, c->head_dim, 0, err, a, l, "q_norm.weight") ||
        bind(m, s, ix, &L->k_norm, c->head_dim, 0, err, a, l, "k_norm.weight") ||
        bind(m, s, ix, &L->in_norm, H, 0, err, "model.layers.%d.input_layernorm.weight", l) ||
        bind(m, s, ix, &L->post_norm, H, 0, err,
             "model.layers.%d.post_attention_layernorm.weight", l))
        return GOLDEN_ERR;
    L->sparse = layer_sparse(c, l);
    int ne = L->sparse ? c->experts : 1;
    int64_t I = L->sparse ? c->moe_inter : c->inter;
    if (I < 1)
        return golden_fail_what(err, GOLDEN_EINVAL, "config.json",
                                "layer %d needs a positive %s", l,
                                L->sparse ? "moe_intermediate_size" : "intermediate_size");
    L->gate = calloc((size_t)ne, sizeof *L->gate);
    L->up = calloc((size_t)ne, sizeof *L->up);
    L->down = calloc((size_t)ne, sizeof *L->down);
    if (!L->gate || !L->up || !L->down)
        return golden_fail_what(err, GOLDEN_ENOMEM, "model", "out of memory");
    if (!L->sparse)
        return bind(m, s, ix, &L->gate[0], I, H, err, "model.layers.%d.mlp.gate_proj.weight", l) ||
               bind(m, s, ix, &L->up[0], I, H, err, "model.layers.%d.mlp.up_proj.weight", l) ||
               bind(m, s, ix, &L->down[0], H, I, err, "model.layers.%d.mlp.down_proj.weight", l)
                   ? GOLDEN_ERR : 0;
    if (bind(m, s, ix, &L->router, c->experts, H, err, "model.layers.%d.mlp.gate.weight", l))
        return GOLDEN_ERR;
    const char *e = "model.layers.%d.mlp.experts.%d.%s";
    for (int x = 0; x < ne; x++)
        if (bind(m, s, ix, &L->gate[x], I, H, err, e, l, x, "gate_proj.weight") ||
            bind(m, s, ix, &L->up[x], I, H, err, e, l, x, "up_proj.weight") ||
            bind(m, s, ix, &L->down[x], H, I, err, e, l, x, "down_proj.weight"))
            return GOLDEN_ERR;
    return 0;
}

static void shard_set_free(shard_set *s)
{
    golden_input_list_free(&s->list);
    lg_strmap_free(&s->by_name);
    for (size_t i = 0; i < s->n_files; i++)
        free(s->files[i]);
    free(s->files);
}

int cpu_model_load(const char *dir, cpu_model *m, golden_error *err)
{
    memset(m, 0, sizeof *m);
    cpu_kernels_init();
    shard_set s;
    memset(&s, 0, sizeof s);
    golden_input_list_init(&s.list);
    golden_doc *index = NULL;
    char *cp = lg_path_join(dir, "config.json");
    int rc = GOLDEN_ERR;
    if (!cp) {
        golden_fail_what(err, GOLDEN_ENOMEM, dir, "out of memory");
        goto done;
    }
    if (cpu_config_load(cp, &m->c, err) != 0 || find_shards(dir, &s, &index, err) != 0 ||
        load_shards(m, &s, err) != 0)
        goto done;
    const cpu_config *c = &m->c;
    if (bind(m, &s, index, &m->embed, c->vocab, c->hidden, err, "model.embed_tokens.weight") ||
        bind(m, &s, index, &m->norm, c->hidden, 0, err, "model.norm.weight"))
        goto done;
    if (c->tie)
        m->lm_head = m->embed;
    else if (bind(m, &s, index, &m->lm_head, c->vocab, c->hidden, err, "lm_head.weight"))
        goto done;
    m->layer = calloc((size_t)c->layers, sizeof *m->layer);
    if (!m->layer) {
        golden_fail_what(err, GOLDEN_ENOMEM, dir, "out of memory");
        goto done;
    }
    for (int l = 0; l < c->layers; l++)
        if (bind_layer(m, &s, index, l, err) != 0)
            goto done;
    rc = 0;
done:
    free(cp);
    golden_doc_free(index);
    shard_set_free(&s);
    if (rc != 0)
        cpu_model_free(m);
    return rc;
}

void cpu_model_free(cpu_model *m)
{
    for (int l = 0; m->layer && l < m->c.layers; l++) {
        free(m->layer[l].gate);
        free(m->layer[l].up);
        free(m->layer[l].down);
    }
    free(m->layer);
    for (size_t i = 0; i < m->n_maps; i++)
        if (m->maps[i])
            munmap(m->maps[i], m->map_len[i]);
    free(m->maps);
    free(m->map_len);
    free(m->c.mlp_only);
    memset(m, 0, sizeof *m);
}

/* Loading a runtime backend for npu-replay: the built-in `cpu` one or a plug-in shared library
 * through dlopen, with the ABI version checked before any other call, and its errors as values. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "golden/replay.h"
#include "replay/host_priv.h"

struct golden_backend {
    const golden_backend_vtable *vt;
    void *self;
    void *dl;
    golden_backend_info info;
    char name[256];
    char vtname[64];  /* the table's name (the host's, cleaned, for an isolated backend) */
    bool isolated;
};

/* Split "KEY=VALUE" strings into two arrays the ABI can carry. */
static int split_opts(const golden_backend_load_opts *o, char ***keys, char ***vals,
                      golden_error *err)
{
    *keys = calloc(o->n_opts + 1, sizeof **keys);
    *vals = calloc(o->n_opts + 1, sizeof **vals);
    if (!*keys || !*vals)
        return golden_fail_what(err, GOLDEN_ENOMEM, "backend", "out of memory");
    for (size_t i = 0; i < o->n_opts; i++) {
        const char *eq = strchr(o->opts[i], '=');
        if (!eq || eq == o->opts[i])
            return golden_fail_what(err, GOLDEN_EINVAL, "--backend-opt",
                                    "'%s' is not KEY=VALUE", o->opts[i]);
        (*keys)[i] = strndup(o->opts[i], (size_t)(eq - o->opts[i]));
        (*vals)[i] = strdup(eq + 1);
        if (!(*keys)[i] || !(*vals)[i])
            return golden_fail_what(err, GOLDEN_ENOMEM, "backend", "out of memory");
    }
    return 0;
}

static void free_opts(size_t n, char **keys, char **vals)
{
    for (size_t i = 0; keys && vals && i < n; i++) {
        free(keys[i]);
        free(vals[i]);
    }
    free(keys);
    free(vals);
}

static int check_vtable(const golden_backend_vtable *vt, const char *where, golden_error *err)
{
    if (vt->abi_version != GOLDEN_BACKEND_ABI_VERSION)
        return golden_fail_what(err, GOLDEN_EUNSUPPORTED, where,
                                "backend ABI version %u, this npu-replay speaks version %u",
                                vt->abi_version, GOLDEN_BACKEND_ABI_VERSION);
    if (!vt->open || !vt->close || !vt->info || !vt->set_hooks || !vt->prefill || !vt->decode ||
        !vt->logits || !vt->truncate || !vt->reset || !vt->length)
        return golden_fail_what(err, GOLDEN_EINVAL, where, "backend table has a NULL function");
    return 0;
}

/* Find the vtable: built-in, or the entry symbol of a shared library. */
int replay_find_vtable(const char *spec, const golden_backend_vtable **vt, void **dl,
                       golden_error *err)
{
    *dl = NULL;
    if (!spec || strcmp(spec, "cpu") == 0) {
        *vt = golden_cpu_backend();
        return 0;
    }
    *dl = dlopen(spec, RTLD_NOW | RTLD_LOCAL);
    if (!*dl) {
        const char *why = dlerror();
        return golden_fail_what(err, GOLDEN_ENOTFOUND, spec, "cannot load backend: %s",
                                why ? why : "dlopen failed");
    }
    void *sym = dlsym(*dl, GOLDEN_BACKEND_ENTRY);
    if (!sym)
        return golden_fail_what(err, GOLDEN_EINVAL, spec, "not a backend: no symbol %s",
                                GOLDEN_BACKEND_ENTRY);
    golden_backend_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry); /* object pointer to function pointer, POSIX-style */
    *vt = entry();
    if (!*vt)
        return golden_fail_what(err, GOLDEN_EINVAL, spec, "%s returned no table",
                                GOLDEN_BACKEND_ENTRY);
    return check_vtable(*vt, spec, err);
}

int replay_check_info(const golden_backend_info *in, const char *where, golden_error *err)
{
    if (in->hidden_size < 1 || in->num_layers < 0 || in->vocab_size < 1 ||
        in->context_limit < 1 || in->num_lanes < 1 || in->num_experts < 0 ||
        in->experts_per_tok < 0 || in->experts_per_tok > in->num_experts ||
        (in->logits_dtype != GOLDEN_BK_F32 && in->logits_dtype != GOLDEN_BK_BF16))
        return golden_fail_what(err, GOLDEN_EINVAL, where, "backend reports impossible model info");
    /* budgets: checked before anything of these sizes is allocated */
    const struct {
        const char *name;
        int64_t value, max;
    } b[] = {{"vocab_size", in->vocab_size, REPLAY_MAX_VOCAB},
             {"hidden_size", in->hidden_size, REPLAY_MAX_HIDDEN},
             {"num_layers", in->num_layers, REPLAY_MAX_LAYERS},
             {"num_experts", in->num_experts, REPLAY_MAX_EXPERTS},
             {"num_lanes", in->num_lanes, REPLAY_MAX_LANES},
             {"context_limit", in->context_limit, REPLAY_MAX_CONTEXT}};
    for (size_t i = 0; i < sizeof b / sizeof *b; i++)
        if (b[i].value > b[i].max)
            return golden_fail_what(err, GOLDEN_EINVAL, where,
                                    "backend reports %s %lld, beyond the memory budget (%lld)",
                                    b[i].name, (long long)b[i].value, (long long)b[i].max);
    return 0;
}

/* One UTF-8 sequence at s (at most n bytes): its length, or 0 when invalid or overlong. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3
                 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (len == 0 || len > n)
        return 0;
    uint32_t cp = len == 1 ? c : c & (0x7Fu >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3Fu);
    }
    static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) ||
        (cp >= 0x80 && cp < 0xA0))
        return 0;
    return len;
}

void replay_clean_text(char *dst, size_t n, const char *src, size_t src_len)
{
    size_t o = 0;
    const unsigned char *s = (const unsigned char *)src;
    size_t end = strnlen(src, src_len);
    for (size_t i = 0; i < end && o + 1 < n;) {
        size_t len = utf8_len(s + i, end - i);
        if (len == 0 || (len == 1 && (s[i] < 0x20 || s[i] == 0x7F))) {
            dst[o++] = '?';
            i++;
            continue;
        }
        if (o + len >= n)
            break;
        memcpy(dst + o, s + i, len);
        o += len;
        i += len;
    }
    if (n)
        dst[o] = 0;
}

int golden_backend_load(const golden_backend_load_opts *o, golden_backend **out,
                        golden_error *err)
{
    *out = NULL;
    golden_backend *b = calloc(1, sizeof *b);
    char **keys = NULL, **vals = NULL;
    char msg[1024] = "";
    if (!b)
        return golden_fail_what(err, GOLDEN_ENOMEM, "backend", "out of memory");
    const char *spec = o->spec ? o->spec : "cpu";
    snprintf(b->name, sizeof b->name, "%s", spec);
    if (o->version >= 2 && o->iso) {
        b->isolated = true;
        b->vt = replay_host_vtable();
        if (replay_host_start(o, o->iso, &b->self, err) != 0) {
            b->self = NULL;
            goto fail;
        }
        goto opened;
    }
    if (replay_find_vtable(spec, &b->vt, &b->dl, err) != 0 || split_opts(o, &keys, &vals, err) != 0)
        goto fail;
    golden_backend_open_args args = {
        .version = GOLDEN_BACKEND_ABI_VERSION, .model_dir = o->model_dir, .n_opts = o->n_opts,
        .keys = (const char *const *)keys, .values = (const char *const *)vals,
        .threads = o->threads};
    if (b->vt->open(&args, &b->self, msg, sizeof msg) != 0) {
        char clean[1024];
        replay_clean_text(clean, sizeof clean, msg, sizeof msg);
        /* the built-in backend's messages already say where; a plug-in's are named by its path */
        golden_fail_what(err, GOLDEN_EINVAL, b->dl ? spec : NULL, "%s",
                         clean[0] ? clean : "backend open failed");
        b->self = NULL;
        goto fail;
    }
opened:
    snprintf(b->vtname, sizeof b->vtname, "%s", b->vt->name ? b->vt->name : "backend");
    if (b->isolated)
        snprintf(b->vtname, sizeof b->vtname, "%s", replay_host_name(b->self));
    if (b->vt->info(b->self, &b->info, msg, sizeof msg) != 0) {
        char clean[1024];
        replay_clean_text(clean, sizeof clean, msg, sizeof msg);
        golden_fail_what(err, GOLDEN_EINVAL, spec, "%s", clean[0] ? clean : "info failed");
        goto fail;
    }
    if (replay_check_info(&b->info, spec, err) != 0)
        goto fail;
    free_opts(o->n_opts, keys, vals);
    *out = b;
    return 0;
fail:
    free_opts(o->n_opts, keys, vals);
    golden_backend_close(b);
    return GOLDEN_ERR;
}

void golden_backend_close(golden_backend *b)
{
    if (!b)
        return;
    if (b->self)
        b->vt->close(b->self);
    if (b->dl)
        dlclose(b->dl);
    free(b);
}

const golden_backend_info *golden_backend_get_info(const golden_backend *b) { return &b->info; }
const char *golden_backend_name(const golden_backend *b) { return b->vtname; }
const char *golden_backend_log(const golden_backend *b)
{
    return b->isolated ? replay_host_log(b->self) : NULL;
}

/* Turn a backend's status and message into an error value. */
static int bk_status(golden_backend *b, int rc, char *msg, golden_error *err)
{
    if (rc == 0)
        return 0;
    char clean[1024];
    replay_clean_text(clean, sizeof clean, msg, 1024);
    golden_code code = strncmp(clean, "context_limit_exceeded", 22) == 0 ? GOLDEN_EUNSUPPORTED
                                                                         : GOLDEN_EINVAL;
    return golden_fail_what(err, code, b->vtname, "%s", clean[0] ? clean : "backend call failed");
}

int golden_backend_set_hooks(golden_backend *b, const golden_backend_hooks *h, golden_error *err)
{
    char msg[1024] = "";
    return bk_status(b, b->vt->set_hooks(b->self, h, msg, sizeof msg), msg, err);
}

int golden_backend_prefill(golden_backend *b, int lane, int64_t pos, const int32_t *tokens,
                           size_t n, golden_error *err)
{
    char msg[1024] = "";
    return bk_status(b, b->vt->prefill(b->self, lane, pos, tokens, n, msg, sizeof msg), msg, err);
}

int golden_backend_decode(golden_backend *b, int lane, int32_t token, golden_error *err)
{
    char msg[1024] = "";
    return bk_status(b, b->vt->decode(b->self, lane, token, msg, sizeof msg), msg, err);
}

int golden_backend_logits(golden_backend *b, int lane, int first, int count, void *dst,
                          golden_error *err)
{
    char msg[1024] = "";
    return bk_status(b, b->vt->logits(b->self, lane, first, count, dst, msg, sizeof msg), msg,
                     err);
}

int golden_backend_truncate(golden_backend *b, int lane, int64_t length, golden_error *err)
{
    char msg[1024] = "";
    return bk_status(b, b->vt->truncate(b->self, lane, length, msg, sizeof msg), msg, err);
}

int golden_backend_reset(golden_backend *b, int lane, golden_error *err)
{
    char msg[1024] = "";
    return bk_status(b, b->vt->reset(b->self, lane, msg, sizeof msg), msg, err);
}

int64_t golden_backend_length(golden_backend *b, int lane) { return b->vt->length(b->self, lane); }

int replay_backend_length(golden_backend *b, int lane, int64_t *len, golden_error *err)
{
    if (!b->isolated) {
        *len = b->vt->length(b->self, lane);
        return 0;
    }
    char msg[1024] = "";
    return bk_status(b, replay_host_length(b->self, lane, len, msg, sizeof msg), msg, err);
}

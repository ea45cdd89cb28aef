/* Loading a runtime backend for npu-replay: the built-in `cpu` one or a plug-in shared library
 * through dlopen, with the ABI version checked before any other call, and its errors as values. */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "golden/replay.h"
#include "replay/cpu.h"
#include "replay/faults_priv.h"
#include "replay/host_priv.h"
#include "replay/sample_priv.h"

struct golden_backend {
    const golden_backend_vtable *vt;
    const golden_backend_vtable_v2 *vt2; /* NULL: a version 1 backend */
    unsigned abi, flags;                 /* the backend's own version and flags */
    int last_code;                       /* GOLDEN_BK_E_* of the last failed call, 0 */
    bool last_lost;                      /* the last failed call lost the backend host */
    void *self;
    void *dl;
    golden_backend_info info;
    char name[256];
    char vtname[64];  /* the table's name (the host's, cleaned, for an isolated backend) */
    bool isolated;
    char *config_unknown; /* config.json keys the cpu reference does not know (NULL: no model) */
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

static int check_vtable(const golden_backend_vtable *vt, const golden_backend_vtable_v2 *vt2,
                        const char *where, golden_error *err)
{
    if (vt2 && vt2->base.abi_version != GOLDEN_BACKEND_ABI_VERSION)
        return golden_fail_what(err, GOLDEN_EUNSUPPORTED, where,
                                "backend ABI version %u in its %s table, this npu-replay speaks "
                                "version %u there", vt2->base.abi_version,
                                GOLDEN_BACKEND_ENTRY_V2, GOLDEN_BACKEND_ABI_VERSION);
    if (vt2 && vt2->size < GOLDEN_BACKEND_V2_MIN_SIZE)
        return golden_fail_what(err, GOLDEN_EUNSUPPORTED, where,
                                "backend's version 2 table is %zu bytes, smaller than the %zu of "
                                "version 2", vt2->size, (size_t)GOLDEN_BACKEND_V2_MIN_SIZE);
    /* a version 1 table: 1, or 2 from a version 1 source rebuilt against the newer header */
    if (!vt2 && vt->abi_version != GOLDEN_BACKEND_ABI_V1 &&
        vt->abi_version != GOLDEN_BACKEND_ABI_VERSION)
        return golden_fail_what(err, GOLDEN_EUNSUPPORTED, where,
                                "backend ABI version %u, this npu-replay speaks version %u and version %u",
                                vt->abi_version, GOLDEN_BACKEND_ABI_V1, GOLDEN_BACKEND_ABI_VERSION);
    if (!vt->open || !vt->close || !vt->info || !vt->set_hooks || !vt->prefill || !vt->decode ||
        !vt->logits || !vt->truncate || !vt->reset || !vt->length)
        return golden_fail_what(err, GOLDEN_EINVAL, where, "backend table has a NULL function");
    if (vt2 && (!vt2->decode_at || !vt2->prefill_keep || !vt2->logits_at || !vt2->topk))
        return golden_fail_what(err, GOLDEN_EINVAL, where,
                                "backend's version 2 table has a NULL function");
    if (vt2 && (vt2->flags & ~(unsigned)GOLDEN_BK_LANES_CONCURRENT))
        return golden_fail_what(err, GOLDEN_EINVAL, where,
                                "backend's version 2 table has unknown flags 0x%x", vt2->flags);
    return 0;
}

/* Find the vtable: built-in, or the entry symbol of a shared library (version 2 first). */
int replay_find_vtable(const char *spec, const golden_backend_vtable **vt,
                       const golden_backend_vtable_v2 **vt2, void **dl, golden_error *err)
{
    *dl = NULL;
    *vt2 = NULL;
    if (!spec || strcmp(spec, "cpu") == 0) {
        *vt2 = lg_cpu_backend_v2();
        *vt = &(*vt2)->base;
        return 0;
    }
    *dl = dlopen(spec, RTLD_NOW | RTLD_LOCAL);
    if (!*dl) {
        const char *why = dlerror();
        return golden_fail_what(err, GOLDEN_ENOTFOUND, spec, "cannot load backend: %s",
                                why ? why : "dlopen failed");
    }
    void *sym = dlsym(*dl, GOLDEN_BACKEND_ENTRY_V2);
    if (sym) {
        golden_backend_entry_v2_fn entry2;
        memcpy(&entry2, &sym, sizeof entry2); /* object pointer to function pointer, POSIX-style */
        *vt2 = entry2();
        if (!*vt2)
            return golden_fail_what(err, GOLDEN_EINVAL, spec, "%s returned no table",
                                    GOLDEN_BACKEND_ENTRY_V2);
        *vt = &(*vt2)->base;
        return check_vtable(*vt, *vt2, spec, err);
    }
    sym = dlsym(*dl, GOLDEN_BACKEND_ENTRY);
    if (!sym)
        return golden_fail_what(err, GOLDEN_EINVAL, spec, "not a backend: no symbol %s or %s",
                                GOLDEN_BACKEND_ENTRY_V2, GOLDEN_BACKEND_ENTRY);
    golden_backend_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry);
    *vt = entry();
    if (!*vt)
        return golden_fail_what(err, GOLDEN_EINVAL, spec, "%s returned no table",
                                GOLDEN_BACKEND_ENTRY);
    return check_vtable(*vt, NULL, spec, err);
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

/* The model folder's config.json keys the cpu reference knows nothing about, read by the
 * harness itself (not the backend): the run's and the report's config_unknown_keys. */
int replay_config_unknown(const char *model_dir, char **out, golden_error *err)
{
    *out = NULL;
    if (!model_dir)
        return 0;
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/config.json", model_dir) >= sizeof path)
        return golden_fail_what(err, GOLDEN_EINVAL, model_dir, "path too long");
    if (access(path, F_OK) != 0)
        return 0; /* a plug-in's model folder need not have one */
    return cpu_config_unknown(path, out, err);
}

const char *replay_backend_config_unknown(const golden_backend *b)
{
    return b ? b->config_unknown : NULL;
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
        b->vt2 = replay_host_vtable();
        b->vt = &b->vt2->base;
        if (replay_host_start(o, o->iso, &b->self, err) != 0) {
            b->self = NULL;
            goto fail;
        }
        b->abi = replay_host_abi(b->self, &b->flags);
        b->vt2 = replay_host_table(b->self); /* optional calls: what the host's backend has */
        b->vt = &b->vt2->base;
        if (b->abi < 2)
            b->vt2 = NULL; /* the proxy's version 2 calls are never made for a version 1 one */
        goto opened;
    }
    if (replay_find_vtable(spec, &b->vt, &b->vt2, &b->dl, err) != 0 ||
        split_opts(o, &keys, &vals, err) != 0)
        goto fail;
    b->abi = b->vt2 ? 2 : 1;
    b->flags = b->vt2 ? b->vt2->flags : 0;
    golden_backend_open_args args = {
        .version = b->vt->abi_version, .model_dir = o->model_dir, .n_opts = o->n_opts,
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
    if (replay_config_unknown(o->model_dir, &b->config_unknown, err) != 0)
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
    free(b->config_unknown);
    free(b);
}

const golden_backend_info *golden_backend_get_info(const golden_backend *b) { return &b->info; }
const char *golden_backend_name(const golden_backend *b) { return b->vtname; }
const char *golden_backend_log(const golden_backend *b)
{
    return b->isolated ? replay_host_log(b->self) : NULL;
}

/* Turn a backend's status and message into an error value. A version 2 backend's code says
 * what went wrong; a version 1 backend has only its message, read for the one word the version 1
 * contract gives (context_limit_exceeded). A host the proxy lost is the proxy's own message. */
static int bk_status(golden_backend *b, int rc, char *msg, golden_error *err)
{
    b->last_lost = false;
    if (rc == 0) {
        b->last_code = 0;
        return 0;
    }
    char clean[1024];
    replay_clean_text(clean, sizeof clean, msg, 1024);
    int code = GOLDEN_BK_E_OTHER;
    if (b->isolated && rc == REPLAY_HOST_LOST) {
        b->last_lost = true;
    } else if (b->abi >= 2) {
        if (rc < 1 || rc >= GOLDEN_BK_E_COUNT) {
            b->last_code = GOLDEN_BK_E_OTHER;
            return golden_fail_what(err, GOLDEN_EINVAL, b->vtname,
                                    "backend returned %d, not an error code of ABI version 2 "
                                    "(%s)", rc, clean[0] ? clean : "no message");
        }
        code = rc;
    } else if (strncmp(clean, "context_limit_exceeded", 22) == 0) {
        code = GOLDEN_BK_E_CONTEXT_LIMIT;
    }
    b->last_code = code;
    golden_code gc = code == GOLDEN_BK_E_CONTEXT_LIMIT ? GOLDEN_EUNSUPPORTED : GOLDEN_EINVAL;
    return golden_fail_what(err, gc, b->vtname, "%s", clean[0] ? clean : "backend call failed");
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

void replay_backend_set_cut(golden_backend *b, uint64_t at_ns)
{
    if (b->isolated)
        replay_host_set_cut(b->self, at_ns);
}

int replay_backend_stop_call(const golden_backend *b, size_t *lanes)
{
    *lanes = 0;
    return b->isolated ? replay_host_stop_call(b->self, lanes) : REPLAY_STOP_CALL_NONE;
}

const char *replay_backend_stop_why(const golden_backend *b)
{
    return b->isolated ? replay_host_stop_why(b->self) : NULL;
}

/* ---- ABI version 2 ---- */

unsigned golden_backend_abi(const golden_backend *b) { return b->abi; }
unsigned golden_backend_flags(const golden_backend *b) { return b->flags; }
int golden_backend_last_code(const golden_backend *b) { return b->last_code; }

static int need_v2(golden_backend *b, const char *call, golden_error *err)
{
    if (b->vt2)
        return 0;
    b->last_code = GOLDEN_BK_E_INVALID;
    b->last_lost = false;
    return golden_fail_what(err, GOLDEN_EUNSUPPORTED, b->vtname,
                            "%s needs a backend of ABI version 2 (this one is version %u)", call,
                            b->abi);
}

/* The harness's own finding about what a call gave back: not the backend's code, a violation. */
static int bk_violation(golden_backend *b, golden_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bk_violation(golden_backend *b, golden_error *err, const char *fmt, ...)
{
    b->last_code = GOLDEN_BK_E_OTHER;
    b->last_lost = false;
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return golden_fail_what(err, GOLDEN_ECORRUPT, b->vtname, "%s", what);
}

int golden_backend_decode_at(golden_backend *b, int lane, int64_t pos, int32_t token,
                             golden_error *err)
{
    if (!b->vt2) /* version 1: the backend takes its own length; nothing to check it against */
        return golden_backend_decode(b, lane, token, err);
    char msg[1024] = "";
    int64_t written = -1;
    if (bk_status(b, b->vt2->decode_at(b->self, lane, pos, token, &written, msg, sizeof msg), msg,
                  err))
        return GOLDEN_ERR;
    if (written != pos)
        return bk_violation(b, err, "decode wrote position %lld, the harness counts %lld",
                            (long long)written, (long long)pos);
    return 0;
}

int golden_backend_prefill_keep(golden_backend *b, int lane, int64_t pos, const int32_t *tokens,
                                size_t n, const int64_t *keep, size_t n_keep, golden_error *err)
{
    if (need_v2(b, "prefill with kept positions", err))
        return GOLDEN_ERR;
    if (n_keep > GOLDEN_BK_MAX_KEEP)
        return golden_fail_what(err, GOLDEN_EINVAL, "prefill", "%zu kept positions, at most %d",
                                n_keep, GOLDEN_BK_MAX_KEEP);
    for (size_t i = 0; i < n_keep; i++)
        if (keep[i] < pos || keep[i] - pos >= (int64_t)n)
            return golden_fail_what(err, GOLDEN_EINVAL, "prefill",
                                    "kept position %lld outside the prefill [%lld, %lld)",
                                    (long long)keep[i], (long long)pos, (long long)pos + (long long)n);
    char msg[1024] = "";
    return bk_status(b, b->vt2->prefill_keep(b->self, lane, pos, tokens, n, keep, n_keep, msg,
                                             sizeof msg), msg, err);
}

int golden_backend_logits_at(golden_backend *b, int lane, int64_t pos, int first, int count,
                             void *dst, golden_error *err)
{
    if (need_v2(b, "logits of a chosen position", err))
        return GOLDEN_ERR;
    char msg[1024] = "";
    return bk_status(b, b->vt2->logits_at(b->self, lane, pos, first, count, dst, msg, sizeof msg),
                     msg, err);
}

int golden_backend_topk(golden_backend *b, int lane, int k, float *values, int32_t *indices,
                        golden_error *err)
{
    if (need_v2(b, "top-k output", err))
        return GOLDEN_ERR;
    int V = b->info.vocab_size;
    if (k < 1 || k > GOLDEN_BK_MAX_TOPK || k > V)
        return golden_fail_what(err, GOLDEN_EINVAL, "topk", "k %d outside 1..%d", k,
                                V < GOLDEN_BK_MAX_TOPK ? V : GOLDEN_BK_MAX_TOPK);
    char msg[1024] = "";
    if (bk_status(b, b->vt2->topk(b->self, lane, k, values, indices, msg, sizeof msg), msg, err))
        return GOLDEN_ERR;
    /* what came back is checked, not trusted: indices in the vocabulary and distinct, values
     * never NaN and in the contract's order (largest first, the lower index first among equals) */
    for (int i = 0; i < k; i++) {
        if (indices[i] < 0 || indices[i] >= V)
            return bk_violation(b, err, "topk entry %lld has index %lld, outside the vocabulary",
                                (long long)i, (long long)indices[i]);
        if (isnan(values[i]) || (isinf(values[i]) && values[i] > 0))
            return bk_violation(b, err, "topk entry %d (index %d) is NaN or +Inf", i,
                                (int)indices[i]);
        if (i > 0 && (values[i] > values[i - 1] ||
                      (values[i] == values[i - 1] && indices[i] <= indices[i - 1])))
            return bk_violation(b, err, "topk entry %d (index %d) is out of order", i,
                                (int)indices[i]);
    }
    /* distinct: equal values are ordered by index above; among different values, a repeat */
    int32_t *copy = malloc((size_t)k * sizeof *copy);
    if (!copy)
        return golden_fail_what(err, GOLDEN_ENOMEM, "topk", "out of memory");
    memcpy(copy, indices, (size_t)k * sizeof *copy);
    qsort(copy, (size_t)k, sizeof *copy, replay_cmp_i32);
    int rc = 0;
    for (int i = 1; rc == 0 && i < k; i++)
        if (copy[i] == copy[i - 1])
            rc = bk_violation(b, err, "topk gives index %d twice (%d entries)", (int)copy[i], k);
    free(copy);
    return rc;
}

/* ---- issue 33: step_batch and cancel ---- */

int golden_backend_has_step_batch(const golden_backend *b)
{
    return b->vt2 && GOLDEN_BACKEND_V2_HAS(b->vt2, step_batch);
}

int golden_backend_has_cancel(const golden_backend *b)
{
    return b->vt2 && GOLDEN_BACKEND_V2_HAS(b->vt2, cancel);
}

/* The batch as the harness sends it: lanes in range and once each, tokens, one for a decode. */
static int batch_well_formed(const golden_backend *b, const golden_backend_step *st, size_t n,
                             golden_error *err)
{
    int lanes = b->info.num_lanes;
    if (n == 0 || n > (size_t)lanes)
        return golden_fail_what(err, GOLDEN_EINVAL, "step_batch", "%zu steps for a backend of %d "
                                "lanes", n, lanes);
    for (size_t i = 0; i < n; i++) {
        if (st[i].lane < 0 || st[i].lane >= lanes)
            return golden_fail_what(err, GOLDEN_EINVAL, "step_batch", "step %zu: lane %d outside "
                                    "the backend's %d", i, st[i].lane, lanes);
        if ((st[i].kind != GOLDEN_BK_STEP_PREFILL && st[i].kind != GOLDEN_BK_STEP_DECODE) ||
            !st[i].tokens || st[i].n == 0 || (st[i].kind == GOLDEN_BK_STEP_DECODE && st[i].n != 1) ||
            st[i].pos < 0)
            return golden_fail_what(err, GOLDEN_EINVAL, "step_batch", "step %zu (lane %d): not a "
                                    "prefill or a one-token decode", i, st[i].lane);
        for (size_t j = 0; j < i; j++)
            if (st[j].lane == st[i].lane)
                return golden_fail_what(err, GOLDEN_EINVAL, "step_batch", "lane %d twice",
                                        st[i].lane);
    }
    return 0;
}

/* What a step_batch gave back, against the lengths of every lane before and after it. */
static int batch_check(golden_backend *b, const golden_backend_step *st, size_t n,
                       const int64_t *before, const int64_t *after, golden_error *err)
{
    int lanes = b->info.num_lanes;
    for (size_t i = 0; i < n; i++) {
        const golden_backend_step *s = &st[i];
        if (s->status < 0 || s->status >= GOLDEN_BK_E_COUNT)
            return bk_violation(b, err, "step_batch gave lane %d status %d, not an error code of "
                                "ABI version 2", s->lane, s->status);
        if (s->status == 0 && s->kind == GOLDEN_BK_STEP_DECODE && s->written != s->pos)
            return bk_violation(b, err, "step_batch: decode of lane %d wrote position %lld, the "
                                "harness counts %lld", s->lane, (long long)s->written,
                                (long long)s->pos);
        int64_t want = s->status == 0 ? s->pos + (int64_t)s->n
                       : s->status == GOLDEN_BK_E_CANCELLED ? 0 : before[s->lane];
        if (after[s->lane] != want)
            return bk_violation(b, err, "step_batch left lane %d at length %lld, %s %lld (status "
                                "%d)", s->lane, (long long)after[s->lane],
                                s->status ? "a failed step leaves" : "its step makes",
                                (long long)want, s->status);
    }
    for (int L = 0; L < lanes; L++) {
        size_t i = 0;
        while (i < n && st[i].lane != L)
            i++;
        if (i == n && before[L] != after[L])
            return bk_violation(b, err, "step_batch changed lane %d, which it was not given "
                                "(length %lld -> %lld)", L, (long long)before[L],
                                (long long)after[L]);
    }
    return 0;
}

int golden_backend_step_batch(golden_backend *b, golden_backend_step *steps, size_t n_steps,
                              golden_error *err)
{
    if (!golden_backend_has_step_batch(b)) {
        b->last_code = GOLDEN_BK_E_INVALID;
        b->last_lost = false;
        return golden_fail_what(err, GOLDEN_EUNSUPPORTED, b->vtname, "the backend has no "
                                "step_batch");
    }
    if (batch_well_formed(b, steps, n_steps, err))
        return GOLDEN_ERR;
    int lanes = b->info.num_lanes;
    int64_t *own = NULL;
    const int64_t *before = NULL, *after = NULL;
    if (!b->isolated) {
        own = malloc(2 * (size_t)lanes * sizeof *own);
        if (!own)
            return golden_fail_what(err, GOLDEN_ENOMEM, "step_batch", "out of memory");
        for (int L = 0; L < lanes; L++)
            own[L] = b->vt->length(b->self, L);
        before = own;
        after = own + lanes;
    }
    for (size_t i = 0; i < n_steps; i++)
        steps[i].status = -1, steps[i].written = -1; /* a backend that sets nothing is caught */
    char msg[1024] = "";
    int rc = bk_status(b, b->vt2->step_batch(b->self, steps, n_steps, msg, sizeof msg), msg, err);
    if (rc == 0 && b->isolated)
        replay_host_batch_lengths(b->self, &before, &after);
    if (rc == 0 && !b->isolated)
        for (int L = 0; L < lanes; L++)
            own[L + lanes] = b->vt->length(b->self, L);
    if (rc == 0 && (!before || !after))
        rc = bk_violation(b, err, "step_batch: the host sent no lane lengths");
    if (rc == 0)
        rc = batch_check(b, steps, n_steps, before, after, err);
    free(own);
    if (rc)
        return GOLDEN_ERR;
    for (size_t i = 0; i < n_steps; i++)
        if (steps[i].status != 0) {
            char clean[1024];
            replay_clean_text(clean, sizeof clean, msg, sizeof msg);
            b->last_code = steps[i].status;
            b->last_lost = false;
            return golden_fail_what(err, steps[i].status == GOLDEN_BK_E_CONTEXT_LIMIT
                                             ? GOLDEN_EUNSUPPORTED : GOLDEN_EINVAL,
                                    b->vtname, "step_batch: lane %d failed (code %d): %s",
                                    steps[i].lane, steps[i].status,
                                    clean[0] ? clean : "no message");
        }
    return 0;
}

int golden_backend_cancel(golden_backend *b, int lane, golden_error *err)
{
    if (!golden_backend_has_cancel(b))
        return golden_fail_what(err, GOLDEN_EUNSUPPORTED, b->vtname, "the backend has no cancel");
    if (lane < 0 || lane >= b->info.num_lanes)
        return golden_fail_what(err, GOLDEN_EINVAL, "cancel", "lane %d outside the backend's %d",
                                lane, b->info.num_lanes);
    char msg[1024] = "";
    int rc = b->vt2->cancel(b->self, lane, msg, sizeof msg);
    if (rc == 0)
        return 0;
    /* from another thread: the code is not kept (last_code belongs to the calling thread's
     * calls), the message and code go into err alone */
    char clean[1024];
    replay_clean_text(clean, sizeof clean, msg, sizeof msg);
    if (b->isolated && rc == REPLAY_HOST_LOST)
        return golden_fail_what(err, GOLDEN_EIO, b->vtname, "%s", clean);
    if (b->abi >= 2 && (rc < 1 || rc >= GOLDEN_BK_E_COUNT))
        return golden_fail_what(err, GOLDEN_ECORRUPT, b->vtname, "cancel returned %d, not an "
                                "error code of ABI version 2 (%s)", rc, clean);
    return golden_fail_what(err, GOLDEN_EINVAL, b->vtname, "cancel: %s (code %d)",
                            clean[0] ? clean : "failed", rc);
}

int replay_cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

const char *replay_backend_fault_kind(const golden_backend *b, const golden_error *err)
{
    if (b->last_lost || b->abi < 2)
        return replay_fault_kind(err->what); /* the proxy's words, or a version 1 message */
    switch (b->last_code) {
    case GOLDEN_BK_E_CONTEXT_LIMIT: return "rejected_input";
    case GOLDEN_BK_E_NOMEM: return "oom";
    case GOLDEN_BK_E_TIMEOUT: return "timeout";
    case GOLDEN_BK_E_DEVICE_LOST: return "device_error";
    case GOLDEN_BK_E_INVALID: return "other";
    default: return "device_error";
    }
}

bool replay_refused_for_limit(const golden_backend *b, const golden_error *err)
{
    if (b->last_lost)
        return false;
    if (b->abi >= 2)
        return b->last_code == GOLDEN_BK_E_CONTEXT_LIMIT;
    return strstr(err->what, "context_limit_exceeded") != NULL;
}

bool replay_backend_has_sample(const golden_backend *b)
{
    return b->vt2 && GOLDEN_BACKEND_V2_HAS(b->vt2, sample);
}

int replay_backend_sample(golden_backend *b, int lane, const golden_backend_sampling *s,
                          int32_t *token, golden_error *err)
{
    size_t nd = s->n_draws > 1 ? s->n_draws : 1;
    for (size_t i = 0; i < nd; i++)
        token[i] = -1;
    b->last_lost = false;
    if (!replay_backend_has_sample(b)) {
        b->last_code = GOLDEN_BK_E_INVALID;
        return golden_fail_what(err, GOLDEN_EUNSUPPORTED, b->vtname, "the backend has no sample call");
    }
    if (nd > GOLDEN_BK_MAX_DRAWS || (nd > 1 && !s->seeds))
        return golden_fail_what(err, GOLDEN_EINVAL, "sample", "%zu draws, at most %d, each with "
                                "its seed", nd, GOLDEN_BK_MAX_DRAWS);
    char msg[1024] = "";
    if (bk_status(b, b->vt2->sample(b->self, lane, s, token, msg, sizeof msg), msg, err))
        return GOLDEN_ERR;
    for (size_t i = 0; i < nd; i++) /* checked, not trusted */
        if (token[i] < 0 || token[i] >= b->info.vocab_size)
            return bk_violation(b, err, "sample draw %zu gave token %lld, outside the vocabulary "
                                "of %d", i, (long long)token[i], b->info.vocab_size);
    return 0;
}

/* A restricted unpickler for PyTorch's data.pkl: a stack machine over the opcodes torch.save
 * writes (protocol 2, plus FRAME, SHORT_BINUNICODE, BINUNICODE8, MEMOIZE, STACK_GLOBAL of 3-5)
 * that builds values in a bounded arena. Globals are looked up in a fixed table of names and
 * never imported; REDUCE "calls" only the table's constructors, by building the value they
 * would return. Anything else is an error naming what it was. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/unpickle_private.h"
#include "util/vec.h"

typedef struct {
    const unsigned char *buf;
    size_t len, pos;
    const char *where;
    golden_error *err;
    lg_pickle *out;
    lg_pk_val **stack;
    size_t sp, scap;
    size_t marks[LG_PK_MAX_MARKS];
    size_t nmarks;
    lg_pk_val **memo;
    size_t memo_cap, memo_n; /* slots, slots filled */
} pk_state;

const char *lg_pk_kind_name(lg_pk_kind k)
{
    static const char *names[] = {"None", "bool", "int", "float", "str", "bytes", "tuple",
                                  "list", "dict", "global", "storage", "tensor"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "value";
}

static int fail(pk_state *st, golden_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(pk_state *st, golden_code code, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return golden_fail_what(st->err, code, st->where, "%s", what);
}

static int corrupt(pk_state *st, const char *what)
{
    return fail(st, GOLDEN_ECORRUPT, "corrupt pickle at byte %zu: %s", st->pos, what);
}

static lg_pk_val *new_val(pk_state *st, lg_pk_kind kind)
{
    lg_pickle *p = st->out;
    if (p->n >= LG_PK_MAX_VALUES) {
        fail(st, GOLDEN_EUNSUPPORTED, "pickle builds more than %u values", LG_PK_MAX_VALUES);
        return NULL;
    }
    if (VEC_GROW(p->all, p->n, p->cap, 256) != 0) {
        fail(st, GOLDEN_ENOMEM, "out of memory");
        return NULL;
    }
    lg_pk_val *v = calloc(1, sizeof *v);
    if (!v) {
        fail(st, GOLDEN_ENOMEM, "out of memory");
        return NULL;
    }
    v->kind = kind;
    p->all[p->n++] = v;
    return v;
}

static int push(pk_state *st, lg_pk_val *v)
{
    if (!v)
        return GOLDEN_ERR;
    if (st->sp >= LG_PK_MAX_STACK)
        return fail(st, GOLDEN_EUNSUPPORTED, "pickle stack deeper than %u values", LG_PK_MAX_STACK);
    if (VEC_GROW(st->stack, st->sp, st->scap, 64) != 0)
        return fail(st, GOLDEN_ENOMEM, "out of memory");
    st->stack[st->sp++] = v;
    return GOLDEN_OK;
}

/* The stack floor: values above the innermost MARK may be popped, none below it. */
static size_t floor_of(const pk_state *st) { return st->nmarks ? st->marks[st->nmarks - 1] : 0; }

static lg_pk_val *pop(pk_state *st)
{
    if (st->sp <= floor_of(st)) {
        corrupt(st, "stack underflow");
        return NULL;
    }
    return st->stack[--st->sp];
}

static lg_pk_val *top(pk_state *st)
{
    if (st->sp <= floor_of(st)) {
        corrupt(st, "stack underflow");
        return NULL;
    }
    return st->stack[st->sp - 1];
}

/* Pop to the innermost MARK: the values are st->stack[*from, st->sp). */
static int pop_mark(pk_state *st, size_t *from)
{
    if (!st->nmarks)
        return corrupt(st, "no MARK to pop to");
    *from = st->marks[--st->nmarks];
    return GOLDEN_OK;
}

static int add_item(pk_state *st, lg_pk_val *c, lg_pk_val *v)
{
    if (VEC_GROW(c->items, c->n, c->cap, 4) != 0)
        return fail(st, GOLDEN_ENOMEM, "out of memory");
    c->items[c->n++] = v;
    return GOLDEN_OK;
}

/* A new tuple/list of the values st->stack[from, sp), which are popped. */
static int collect(pk_state *st, lg_pk_kind kind, size_t from)
{
    lg_pk_val *v = new_val(st, kind);
    if (!v)
        return GOLDEN_ERR;
    for (size_t i = from; i < st->sp; i++)
        if (add_item(st, v, st->stack[i]) != GOLDEN_OK)
            return GOLDEN_ERR;
    st->sp = from;
    return push(st, v);
}

static int need(pk_state *st, size_t n)
{
    if (st->len - st->pos < n)
        return corrupt(st, "pickle ends inside an opcode (truncated?)");
    return GOLDEN_OK;
}

static uint64_t rd_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static int memo_put(pk_state *st, uint64_t idx)
{
    if (idx >= LG_PK_MAX_MEMO)
        return fail(st, GOLDEN_EUNSUPPORTED, "pickle memo index %llu too large (at most %u)",
                    (unsigned long long)idx, LG_PK_MAX_MEMO - 1);
    lg_pk_val *v = top(st);
    if (!v)
        return GOLDEN_ERR;
    if (idx >= st->memo_cap) {
        size_t old = st->memo_cap;
        if (idx >= SIZE_MAX ||
            vec_reserve(&st->memo, &st->memo_cap, (size_t)idx + 1, sizeof *st->memo, 64) != 0)
            return fail(st, GOLDEN_ENOMEM, "out of memory");
        memset(st->memo + old, 0, (st->memo_cap - old) * sizeof *st->memo);
    }
    if (!st->memo[idx])
        st->memo_n++;
    st->memo[idx] = v;
    return GOLDEN_OK;
}

static int memo_get(pk_state *st, uint64_t idx)
{
    if (idx >= st->memo_cap || !st->memo[idx])
        return fail(st, GOLDEN_ECORRUPT, "corrupt pickle at byte %zu: memo slot %llu is empty", st->pos,
                    (unsigned long long)idx);
    return push(st, st->memo[idx]);
}

static int push_str(pk_state *st, lg_pk_kind kind, uint64_t n)
{
    if (n > LG_PK_MAX_STR)
        return fail(st, GOLDEN_EUNSUPPORTED, "pickle string of %llu bytes (at most %u)",
                    (unsigned long long)n, LG_PK_MAX_STR);
    if (need(st, (size_t)n) != GOLDEN_OK)
        return GOLDEN_ERR;
    lg_pk_val *v = new_val(st, kind);
    if (!v)
        return GOLDEN_ERR;
    v->s = (const char *)st->buf + st->pos;
    v->slen = (size_t)n;
    st->pos += (size_t)n;
    return push(st, v);
}

static int push_int(pk_state *st, lg_pk_kind kind, int64_t i)
{
    lg_pk_val *v = new_val(st, kind);
    if (!v)
        return GOLDEN_ERR;
    v->i = i;
    return push(st, v);
}

/* ---------------------------------------------------------------- globals */

static const struct {
    const char *name;
    golden_dtype dt;
} storages[] = {
    {"FloatStorage", GOLDEN_F32}, {"DoubleStorage", GOLDEN_F64}, {"HalfStorage", GOLDEN_F16},
    {"BFloat16Storage", GOLDEN_BF16}, {"LongStorage", GOLDEN_I64}, {"IntStorage", GOLDEN_I32},
    {"ShortStorage", GOLDEN_I16}, {"CharStorage", GOLDEN_I8}, {"ByteStorage", GOLDEN_U8},
    {"BoolStorage", GOLDEN_BOOL},
};

static bool is(const char *s, size_t n, const char *lit)
{
    return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

static bool starts(const char *s, size_t n, const char *lit)
{
    size_t k = strlen(lit);
    return n >= k && memcmp(s, lit, k) == 0;
}

/* Look the global module.name up; anything not in the table is refused, saying what it was. */
static int push_global(pk_state *st, const char *mod, size_t ml, const char *name, size_t nl)
{
    lg_pk_val *v = NULL;
    bool known = true;
    if (is(mod, ml, "collections") && is(name, nl, "OrderedDict")) {
        v = new_val(st, LG_PK_GLOBAL);
        if (v)
            v->glob = LG_PK_G_ODICT;
    } else if (is(mod, ml, "torch._utils") && is(name, nl, "_rebuild_tensor_v2")) {
        v = new_val(st, LG_PK_GLOBAL);
        if (v)
            v->glob = LG_PK_G_REBUILD;
    } else if (is(mod, ml, "torch._utils") && is(name, nl, "_rebuild_parameter")) {
        v = new_val(st, LG_PK_GLOBAL);
        if (v)
            v->glob = LG_PK_G_PARAM;
    } else if (is(mod, ml, "_codecs") && is(name, nl, "encode")) {
        v = new_val(st, LG_PK_GLOBAL);
        if (v)
            v->glob = LG_PK_G_CODECS_ENCODE;
    } else if ((is(mod, ml, "__builtin__") || is(mod, ml, "builtins")) && is(name, nl, "bytes")) {
        v = new_val(st, LG_PK_GLOBAL);
        if (v)
            v->glob = LG_PK_G_BYTES;
    } else if (is(mod, ml, "torch")) {
        for (size_t i = 0; i < sizeof storages / sizeof storages[0]; i++)
            if (is(name, nl, storages[i].name)) {
                v = new_val(st, LG_PK_GLOBAL);
                if (!v)
                    return GOLDEN_ERR;
                v->glob = LG_PK_G_STORAGE_TYPE;
                v->dtype = storages[i].dt;
                return push(st, v);
            }
        known = false;
    } else {
        known = false;
    }
    if (known)
        return push(st, v);
    int ml_ = (int)(ml > 120 ? 120 : ml), nl_ = (int)(nl > 120 ? 120 : nl);
    const char *what = starts(mod, ml, "torch.nn")      ? "a module object"
                       : starts(mod, ml, "torch.optim") ? "an optimizer object"
                       : is(mod, ml, "torch") && nl > 7 && memcmp(name + nl - 7, "Storage", 7) == 0
                           ? "a storage type this reader does not map"
                       : starts(mod, ml, "torch")       ? "a PyTorch object other than a tensor"
                                                        : "a Python object";
    return fail(st, GOLDEN_EUNSUPPORTED,
                "a PyTorch pickle of %s (%.*s %.*s): only tensors and state_dicts are read "
                "(the global was not imported, nothing was run)",
                what, ml_, mod, nl_, name);
}

/* GLOBAL: "module\nname\n". */
static int op_global(pk_state *st)
{
    const char *s = (const char *)st->buf + st->pos;
    size_t left = st->len - st->pos;
    const char *nl1 = memchr(s, '\n', left);
    if (!nl1)
        return corrupt(st, "GLOBAL without a newline");
    const char *nl2 = memchr(nl1 + 1, '\n', left - (size_t)(nl1 + 1 - s));
    if (!nl2)
        return corrupt(st, "GLOBAL without a second newline");
    st->pos += (size_t)(nl2 + 1 - s);
    return push_global(st, s, (size_t)(nl1 - s), nl1 + 1, (size_t)(nl2 - nl1 - 1));
}

static int op_stack_global(pk_state *st)
{
    lg_pk_val *name = pop(st), *mod = name ? pop(st) : NULL;
    if (!mod)
        return GOLDEN_ERR;
    if (mod->kind != LG_PK_STR || name->kind != LG_PK_STR)
        return corrupt(st, "STACK_GLOBAL needs two strings");
    return push_global(st, mod->s, mod->slen, name->s, name->slen);
}

/* ---------------------------------------------------------------- REDUCE, BUILD, BINPERSID */

static bool as_uint(const lg_pk_val *v, uint64_t *out)
{
    if (!v || v->kind != LG_PK_INT || v->i < 0)
        return false;
    *out = (uint64_t)v->i;
    return true;
}

/* _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks
 * [, metadata]) -> a tensor value. */
static int rebuild_tensor(pk_state *st, const lg_pk_val *args)
{
    if (args->n < 6 || args->n > 7)
        return fail(st, GOLDEN_ECORRUPT, "_rebuild_tensor_v2 with %zu arguments (6 or 7 expected)", args->n);
    lg_pk_val *const *a = args->items;
    const lg_pk_val *size = a[2], *stride = a[3];
    uint64_t off;
    if (a[0]->kind != LG_PK_STORAGE)
        return fail(st, GOLDEN_ECORRUPT, "_rebuild_tensor_v2 of a %s, not a storage", lg_pk_kind_name(a[0]->kind));
    if (!as_uint(a[1], &off) || size->kind != LG_PK_TUPLE || stride->kind != LG_PK_TUPLE ||
        size->n != stride->n || a[4]->kind != LG_PK_BOOL)
        return fail(st, GOLDEN_ECORRUPT, "_rebuild_tensor_v2 with a bad offset, size, stride or requires_grad");
    if (size->n > GOLDEN_MAX_RANK)
        return fail(st, GOLDEN_EUNSUPPORTED, "tensor of rank %zu (at most %d)", size->n, GOLDEN_MAX_RANK);
    if (a[5]->kind != LG_PK_DICT || a[5]->n != 0)
        return fail(st, GOLDEN_EUNSUPPORTED, "tensor with backward hooks: not read");
    if (args->n == 7 && a[6]->kind != LG_PK_NONE && !(a[6]->kind == LG_PK_DICT && a[6]->n == 0))
        return fail(st, GOLDEN_EUNSUPPORTED, "tensor with extra metadata (conjugate, negative or other flags): not read");
    lg_pk_val *v = new_val(st, LG_PK_TENSOR);
    if (!v)
        return GOLDEN_ERR;
    if (!(v->t = calloc(1, sizeof *v->t)))
        return fail(st, GOLDEN_ENOMEM, "out of memory");
    v->t->storage = a[0];
    v->t->offset = off;
    v->t->rank = (int)size->n;
    for (size_t i = 0; i < size->n; i++) {
        const lg_pk_val *s = stride->items[i];
        if (!as_uint(size->items[i], &v->t->shape[i]) || s->kind != LG_PK_INT)
            return fail(st, GOLDEN_ECORRUPT, "_rebuild_tensor_v2 with a size or stride that is not an int");
        v->t->stride[i] = s->i;
    }
    return push(st, v);
}

/* _codecs.encode(text, 'latin1'): the bytes whose values are text's code points (each below
 * 256, as Python's latin-1 codec requires). Only that codec: protocol 2 writes no other. */
static int codecs_encode(pk_state *st, const lg_pk_val *args)
{
    if (args->n != 2 || args->items[0]->kind != LG_PK_STR || args->items[1]->kind != LG_PK_STR ||
        !is(args->items[1]->s, args->items[1]->slen, "latin1"))
        return fail(st, GOLDEN_EUNSUPPORTED,
                    "pickle calls _codecs.encode other than (str, 'latin1') (the bytes of protocol 2): not read");
    const unsigned char *u = (const unsigned char *)args->items[0]->s;
    size_t n = args->items[0]->slen, k = 0;
    lg_pk_val *v = new_val(st, LG_PK_BYTES);
    if (!v)
        return GOLDEN_ERR;
    if (!(v->own = malloc(n ? n : 1)))
        return fail(st, GOLDEN_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; k++) {
        if (u[i] < 0x80) {
            v->own[k] = (char)u[i++];
        } else if ((u[i] == 0xc2 || u[i] == 0xc3) && i + 1 < n && (u[i + 1] & 0xc0) == 0x80) {
            v->own[k] = (char)((u[i] & 0x03) << 6 | (u[i + 1] & 0x3f));
            i += 2;
        } else {
            return fail(st, GOLDEN_ECORRUPT,
                        "_codecs.encode of a string that is not latin-1 (a code point above 255 "
                        "or bad UTF-8 at byte %zu)", i);
        }
    }
    v->s = v->own;
    v->slen = k;
    return push(st, v);
}

static int op_reduce(pk_state *st)
{
    lg_pk_val *args = pop(st), *fn = args ? pop(st) : NULL;
    if (!fn)
        return GOLDEN_ERR;
    if (fn->kind != LG_PK_GLOBAL || args->kind != LG_PK_TUPLE)
        return fail(st, GOLDEN_EUNSUPPORTED, "pickle calls a %s (only allowed constructors are called)",
                    lg_pk_kind_name(fn->kind));
    switch (fn->glob) {
    case LG_PK_G_ODICT:
        if (args->n != 0)
            return fail(st, GOLDEN_EUNSUPPORTED, "OrderedDict built from arguments: not read");
        return push(st, new_val(st, LG_PK_DICT));
    case LG_PK_G_REBUILD:
        return rebuild_tensor(st, args);
    case LG_PK_G_PARAM:
        /* _rebuild_parameter(data, requires_grad, backward_hooks): the parameter is its data */
        if (args->n != 3 || args->items[0]->kind != LG_PK_TENSOR || args->items[1]->kind != LG_PK_BOOL ||
            args->items[2]->kind != LG_PK_DICT)
            return fail(st, GOLDEN_ECORRUPT, "_rebuild_parameter with bad arguments");
        if (args->items[2]->n != 0)
            return fail(st, GOLDEN_EUNSUPPORTED, "parameter with backward hooks: not read");
        return push(st, args->items[0]);
    case LG_PK_G_CODECS_ENCODE:
        return codecs_encode(st, args);
    case LG_PK_G_BYTES:
        if (args->n != 0) /* protocol 2 writes bytes() only for b'' */
            return fail(st, GOLDEN_EUNSUPPORTED, "pickle calls bytes() with arguments: not read");
        return push(st, new_val(st, LG_PK_BYTES));
    default:
        return fail(st, GOLDEN_EUNSUPPORTED, "pickle calls a storage type (only persistent ids name storages)");
    }
}

/* BUILD on an OrderedDict sets its attributes (torch's state_dict._metadata): ignored. */
static int op_build(pk_state *st)
{
    lg_pk_val *state = pop(st), *obj = state ? top(st) : NULL;
    if (!obj)
        return GOLDEN_ERR;
    if (obj->kind != LG_PK_DICT || (state->kind != LG_PK_DICT && state->kind != LG_PK_NONE))
        return fail(st, GOLDEN_EUNSUPPORTED, "pickle sets the state of a %s: not read", lg_pk_kind_name(obj->kind));
    return GOLDEN_OK;
}

/* BINPERSID: ('storage', storage type, key, location, numel). */
static int op_persid(pk_state *st)
{
    lg_pk_val *pid = pop(st);
    if (!pid)
        return GOLDEN_ERR;
    uint64_t numel;
    if (pid->kind != LG_PK_TUPLE || pid->n != 5 || pid->items[0]->kind != LG_PK_STR ||
        !is(pid->items[0]->s, pid->items[0]->slen, "storage"))
        return fail(st, GOLDEN_EUNSUPPORTED, "persistent id that is not ('storage', type, key, location, numel)");
    lg_pk_val *ty = pid->items[1], *key = pid->items[2];
    if (ty->kind != LG_PK_GLOBAL || ty->glob != LG_PK_G_STORAGE_TYPE || key->kind != LG_PK_STR ||
        pid->items[3]->kind != LG_PK_STR || !as_uint(pid->items[4], &numel))
        return fail(st, GOLDEN_ECORRUPT, "bad storage persistent id");
    lg_pk_val *v = new_val(st, LG_PK_STORAGE);
    if (!v)
        return GOLDEN_ERR;
    v->dtype = ty->dtype;
    v->s = key->s;
    v->slen = key->slen;
    v->i = (int64_t)numel;
    return push(st, v);
}

static int op_setitems(pk_state *st, size_t from)
{
    if ((st->sp - from) % 2)
        return corrupt(st, "SETITEMS with an odd number of values");
    if (from <= floor_of(st))
        return corrupt(st, "stack underflow");
    lg_pk_val *d = st->stack[from - 1];
    if (d->kind != LG_PK_DICT)
        return fail(st, GOLDEN_EUNSUPPORTED, "pickle sets items of a %s", lg_pk_kind_name(d->kind));
    for (size_t i = from; i < st->sp; i++)
        if (add_item(st, d, st->stack[i]) != GOLDEN_OK)
            return GOLDEN_ERR;
    st->sp = from;
    return GOLDEN_OK;
}

static int op_appends(pk_state *st, size_t from)
{
    if (from <= floor_of(st))
        return corrupt(st, "stack underflow");
    lg_pk_val *c = st->stack[from - 1];
    if (c->kind != LG_PK_LIST)
        return fail(st, GOLDEN_EUNSUPPORTED, "pickle appends to a %s", lg_pk_kind_name(c->kind));
    for (size_t i = from; i < st->sp; i++)
        if (add_item(st, c, st->stack[i]) != GOLDEN_OK)
            return GOLDEN_ERR;
    st->sp = from;
    return GOLDEN_OK;
}

/* ---------------------------------------------------------------- the machine */

/* Pop to the mark and run the mark-taking opcode op on what was above it. */
static int op_marked(pk_state *st, unsigned char op)
{
    size_t from = 0;
    if (pop_mark(st, &from) != GOLDEN_OK)
        return GOLDEN_ERR;
    /* the mark is gone: the items above it are now above the outer floor */
    switch (op) {
    case 't': return collect(st, LG_PK_TUPLE, from);
    case 'l': return collect(st, LG_PK_LIST, from);
    case 'd': {
        if ((st->sp - from) % 2)
            return corrupt(st, "DICT with an odd number of values");
        lg_pk_val *d = new_val(st, LG_PK_DICT);
        if (!d)
            return GOLDEN_ERR;
        for (size_t i = from; i < st->sp; i++)
            if (add_item(st, d, st->stack[i]) != GOLDEN_OK)
                return GOLDEN_ERR;
        st->sp = from;
        return push(st, d);
    }
    case 'u': return op_setitems(st, from);
    case 'e': return op_appends(st, from);
    default: st->sp = from; return GOLDEN_OK; /* POP_MARK */
    }
}

static int step(pk_state *st, unsigned char op, bool *stop)
{
    const unsigned char *p = st->buf + st->pos;
    switch (op) {
    case 0x80: /* PROTO */
        if (need(st, 1) != GOLDEN_OK)
            return GOLDEN_ERR;
        if (p[0] < 2 || p[0] > 5)
            return fail(st, GOLDEN_EUNSUPPORTED, "pickle protocol %u (2 to 5 are read)", p[0]);
        st->pos++;
        return GOLDEN_OK;
    case 0x95: /* FRAME: a length hint; the opcodes inside are read as they come */
        if (need(st, 8) != GOLDEN_OK)
            return GOLDEN_ERR;
        st->pos += 8;
        return GOLDEN_OK;
    case '(':
        if (st->nmarks >= LG_PK_MAX_MARKS)
            return fail(st, GOLDEN_EUNSUPPORTED, "pickle nests more than %u MARKs", LG_PK_MAX_MARKS);
        st->marks[st->nmarks++] = st->sp;
        return GOLDEN_OK;
    case 't': case 'l': case 'd': case 'u': case 'e': case '1':
        return op_marked(st, op);
    case ')': return push(st, new_val(st, LG_PK_TUPLE));
    case ']': return push(st, new_val(st, LG_PK_LIST));
    case '}': return push(st, new_val(st, LG_PK_DICT));
    case 'N': return push(st, new_val(st, LG_PK_NONE));
    case 0x88: return push_int(st, LG_PK_BOOL, 1);
    case 0x89: return push_int(st, LG_PK_BOOL, 0);
    case 'K':
        if (need(st, 1) != GOLDEN_OK)
            return GOLDEN_ERR;
        st->pos += 1;
        return push_int(st, LG_PK_INT, p[0]);
    case 'M':
        if (need(st, 2) != GOLDEN_OK)
            return GOLDEN_ERR;
        st->pos += 2;
        return push_int(st, LG_PK_INT, (int64_t)rd_le(p, 2));
    case 'J':
        if (need(st, 4) != GOLDEN_OK)
            return GOLDEN_ERR;
        st->pos += 4;
        return push_int(st, LG_PK_INT, (int32_t)(uint32_t)rd_le(p, 4));
    case 0x8a: { /* LONG1: n bytes, two's complement, little-endian */
        if (need(st, 1) != GOLDEN_OK || need(st, 1 + (size_t)p[0]) != GOLDEN_OK)
            return GOLDEN_ERR;
        size_t n = p[0];
        if (n > 8)
            return fail(st, GOLDEN_EUNSUPPORTED, "pickle integer of %zu bytes (at most 8)", n);
        uint64_t u = n ? rd_le(p + 1, (int)n) : 0;
        if (n && n < 8 && (p[n] & 0x80))
            u |= ~(uint64_t)0 << (8 * n);
        st->pos += 1 + n;
        return push_int(st, LG_PK_INT, (int64_t)u);
    }
    case 'G': {
        if (need(st, 8) != GOLDEN_OK)
            return GOLDEN_ERR;
        uint64_t u = 0;
        for (int i = 0; i < 8; i++)
            u = u << 8 | p[i];
        st->pos += 8;
        lg_pk_val *v = new_val(st, LG_PK_FLOAT);
        if (!v)
            return GOLDEN_ERR;
        memcpy(&v->f, &u, 8);
        return push(st, v);
    }
    case 'X': case 'T': case 'B':
        if (need(st, 4) != GOLDEN_OK)
            return GOLDEN_ERR;
        st->pos += 4;
        return push_str(st, op == 'B' ? LG_PK_BYTES : LG_PK_STR, rd_le(p, 4));
    case 0x8c: case 'U': case 'C':
        if (need(st, 1) != GOLDEN_OK)
            return GOLDEN_ERR;
        st->pos += 1;
        return push_str(st, op == 'C' ? LG_PK_BYTES : LG_PK_STR, p[0]);
    case 0x8d: case 0x8e:
        if (need(st, 8) != GOLDEN_OK)
            return GOLDEN_ERR;
        st->pos += 8;
        return push_str(st, op == 0x8e ? LG_PK_BYTES : LG_PK_STR, rd_le(p, 8));
    case 0x85: case 0x86: case 0x87: {
        size_t k = (size_t)(op - 0x84);
        if (st->sp < floor_of(st) + k)
            return corrupt(st, "stack underflow");
        return collect(st, LG_PK_TUPLE, st->sp - k);
    }
    case 'a': {
        lg_pk_val *v = pop(st);
        lg_pk_val *c = v ? top(st) : NULL;
        if (!c)
            return GOLDEN_ERR;
        if (c->kind != LG_PK_LIST)
            return fail(st, GOLDEN_EUNSUPPORTED, "pickle appends to a %s", lg_pk_kind_name(c->kind));
        return add_item(st, c, v);
    }
    case 's': {
        if (st->sp < floor_of(st) + 3)
            return corrupt(st, "stack underflow");
        return op_setitems(st, st->sp - 2);
    }
    case 'q':
        if (need(st, 1) != GOLDEN_OK)
            return GOLDEN_ERR;
        st->pos += 1;
        return memo_put(st, p[0]);
    case 'r':
        if (need(st, 4) != GOLDEN_OK)
            return GOLDEN_ERR;
        st->pos += 4;
        return memo_put(st, rd_le(p, 4));
    case 0x94: /* MEMOIZE: Python's index is len(memo) */
        return memo_put(st, st->memo_n);
    case 'h':
        if (need(st, 1) != GOLDEN_OK)
            return GOLDEN_ERR;
        st->pos += 1;
        return memo_get(st, p[0]);
    case 'j':
        if (need(st, 4) != GOLDEN_OK)
            return GOLDEN_ERR;
        st->pos += 4;
        return memo_get(st, rd_le(p, 4));
    case '0': return pop(st) ? GOLDEN_OK : GOLDEN_ERR;
    case '2': { lg_pk_val *v = top(st); return v ? push(st, v) : GOLDEN_ERR; }
    case 'c': return op_global(st);
    case 0x93: return op_stack_global(st);
    case 'R': return op_reduce(st);
    case 'b': return op_build(st);
    case 'Q': return op_persid(st);
    case 0x81: case 0x92:
        return fail(st, GOLDEN_EUNSUPPORTED, "pickle builds an object of a class (NEWOBJ): only tensors and state_dicts are read");
    case '.': *stop = true; return GOLDEN_OK;
    default:
        return fail(st, GOLDEN_EUNSUPPORTED, "pickle opcode 0x%02x at byte %zu is not read by this restricted unpickler",
                    op, st->pos - 1);
    }
}

int lg_unpickle(const unsigned char *buf, size_t len, const char *where, lg_pickle *out,
                golden_error *err)
{
    memset(out, 0, sizeof *out);
    pk_state st = {.buf = buf, .len = len, .where = where, .err = err, .out = out};
    bool stop = false;
    int rc = GOLDEN_OK;
    while (rc == GOLDEN_OK && !stop) {
        if (st.pos >= st.len) {
            rc = corrupt(&st, "pickle ends without STOP (truncated?)");
            break;
        }
        unsigned char op = buf[st.pos++];
        rc = step(&st, op, &stop);
    }
    if (rc == GOLDEN_OK && st.pos != st.len)
        rc = corrupt(&st, "bytes after STOP");
    if (rc == GOLDEN_OK && (st.sp != 1 || st.nmarks != 0))
        rc = corrupt(&st, "STOP with other than one value on the stack");
    if (rc == GOLDEN_OK)
        out->root = st.stack[0];
    free(st.stack);
    free(st.memo);
    if (rc != GOLDEN_OK)
        lg_pickle_free(out);
    return rc;
}

void lg_pickle_free(lg_pickle *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->all[i]->items);
        free(p->all[i]->t);
        free(p->all[i]->own);
        free(p->all[i]);
    }
    free(p->all);
    memset(p, 0, sizeof *p);
}

/* performance/raw-device-trace.json in the Chrome Trace Event format (what Perfetto and most
 * vendor profilers export): an object with traceEvents, or a bare array, streamed event by
 * event through the document layer's strict reader (golden_doc_each_element). Op slices are
 * complete events (X) and B/E pairs; power counters (C named power or power_w); process names
 * (M process_name) map a pid to a side and chip. The mapping is docs/exp-gate.md's "Chrome
 * Trace Event format". Memory: one event, the aggregates per pid and family (at most
 * CHROME_MAX_ROWS), the open B slices (CHROME_MAX_OPEN), the threads with B/E events
 * (CHROME_MAX_THREADS), the pids (CHROME_MAX_PIDS); never the file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gate/gate_int.h"
#include "golden/doc.h"

#define CHROME_MAX_OPEN 65536 /* B slices open at once, over all threads */
#define CHROME_MAX_PIDS 65536
#define CHROME_MAX_THREADS 65536 /* pid:tid pairs with B/E events */
#define CHROME_MAX_ROWS 65536    /* (pid, family) aggregates */

/* What an op slice's args give. */
typedef struct {
    unsigned long long cycles, bytes, tokens, kind[GATE_BYTE_KINDS], stall[GATE_STALL_CLASSES];
    unsigned kinds, stalls;
    int has_cycles, has_bytes, has_tokens;
} svals;

typedef struct {
    svals v;
    char *name, *family;
    double ts;
    char where[256];
} open_slice;

typedef struct {
    long long pid, tid;
    open_slice *s;
    size_t n, cap;
} thread_stack;

typedef struct {
    long long pid;
    char *name;   /* process_name, NULL when none */
    int power;    /* readings seen */
    double last_ts, last_v, min, max, weighted, first;
    double first_ts;
} pid_info;

typedef struct {
    gate_trace *t;
    const char *path;
    gate_trace acc;    /* rows keyed by (2, pid, family) until the pids are resolved */
    pid_info *pids;
    size_t npids;
    golden_strmap pid_map;
    char **pid_keys;
    thread_stack *th;
    size_t nth;
    golden_strmap th_map;
    char **th_keys;
    size_t open, events, slices;
} chrome_ctx;

static int efail(const golden_doc *d, const json_t *node, const char *what, golden_error *err)
{
    char where[1200];
    golden_doc_where(d, node, where, sizeof where);
    return golden_fail_where(err, GOLDEN_EINVAL, what, "%s", where);
}

/* Index of key in a map whose keys live in *keys (added with value n when new). */
static int map_index(golden_strmap *m, char ***keys, size_t n, const char *key, size_t *idx,
                     int *added, golden_error *err)
{
    uint64_t v;
    *added = 0;
    if (lg_strmap_get(m, key, strlen(key), &v)) {
        *idx = (size_t)v;
        return 0;
    }
    char *k = strdup(key), **nk = k ? realloc(*keys, (n + 1) * sizeof *nk) : NULL;
    if (!nk || lg_strmap_put(m, k, strlen(k), n, NULL) < 0) {
        free(k);
        if (nk)
            *keys = nk;
        return gate_oom(err);
    }
    *keys = nk;
    nk[n] = k;
    *idx = n;
    *added = 1;
    return 0;
}

static pid_info *pid_get(chrome_ctx *c, long long pid, golden_error *err)
{
    char key[32];
    snprintf(key, sizeof key, "%lld", pid);
    size_t i;
    int added;
    if (c->npids >= CHROME_MAX_PIDS && !lg_strmap_get(&c->pid_map, key, strlen(key), NULL)) {
        golden_fail_what(err, GOLDEN_EINVAL, c->path, "more than 65536 processes in a trace");
        return NULL;
    }
    if (map_index(&c->pid_map, &c->pid_keys, c->npids, key, &i, &added, err) != 0)
        return NULL;
    if (added) {
        pid_info *np = realloc(c->pids, (c->npids + 1) * sizeof *np);
        if (!np) {
            gate_oom(err);
            return NULL;
        }
        c->pids = np;
        memset(&np[i], 0, sizeof np[i]);
        np[i].pid = pid;
        c->npids++;
    }
    return &c->pids[i];
}

static int stall_class(chrome_ctx *c, const char *name, golden_error *err)
{
    gate_trace *t = c->t;
    for (size_t i = 0; i < t->nstalls; i++)
        if (!strcmp(t->stall_names[i], name))
            return (int)i;
    if (t->nstalls == GATE_STALL_CLASSES)
        return golden_fail_what(err, GOLDEN_EINVAL, c->path, "more than 32 stall classes"), -1;
    if (!(t->stall_names[t->nstalls] = strdup(name)))
        return gate_oom(err), -1;
    return (int)t->nstalls++;
}

static int count_of(const golden_doc *d, const json_t *v, const char *key,
                    unsigned long long *out, golden_error *err)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        char what[160];
        snprintf(what, sizeof what, "args.%.64s must be a non-negative integer", key);
        return efail(d, v, what, err);
    }
    *out = (unsigned long long)json_integer_value(v);
    return 0;
}

/* The slice's figures from its args (object or absent). */
static int parse_args(chrome_ctx *c, const golden_doc *d, const json_t *args, svals *v,
                      golden_error *err)
{
    memset(v, 0, sizeof *v);
    if (!args)
        return 0;
    if (!json_is_object(args))
        return efail(d, args, "args must be an object", err);
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)args, key, val) {
        if (!strcmp(key, "cycles")) {
            if (count_of(d, val, key, &v->cycles, err))
                return -1;
            v->has_cycles = 1;
        } else if (!strcmp(key, "bytes")) {
            if (count_of(d, val, key, &v->bytes, err))
                return -1;
            v->has_bytes = 1;
        } else if (!strcmp(key, "tokens")) {
            if (count_of(d, val, key, &v->tokens, err))
                return -1;
            v->has_tokens = 1;
        } else if (!strncmp(key, "bytes_", 6)) {
            int k = -1;
            for (int i = 0; i < GATE_BYTE_KINDS; i++)
                if (!strcmp(key + 6, gate_byte_kinds[i]))
                    k = i;
            if (k < 0)
                return efail(d, val, "unknown byte kind (bytes_ddr, bytes_sram, bytes_d2d, "
                             "bytes_pcie)", err);
            if (count_of(d, val, key, &v->kind[k], err))
                return -1;
            v->kinds |= 1u << k;
        } else if (!strncmp(key, "stall_", 6)) {
            if (!key[6])
                return efail(d, val, "a stall class needs a name (stall_CLASS)", err);
            int k = stall_class(c, key + 6, err);
            if (k < 0 || count_of(d, val, key, &v->stall[k], err))
                return -1;
            v->stalls |= 1u << k;
        }
    }
    return 0;
}

/* Merge an E event's args into its B's; a figure on both is an error. */
static int merge_args(svals *b, const svals *e, const golden_doc *d, const json_t *at,
                      golden_error *err)
{
    if ((b->has_cycles && e->has_cycles) || (b->has_bytes && e->has_bytes) ||
        (b->has_tokens && e->has_tokens) || (b->kinds & e->kinds) || (b->stalls & e->stalls))
        return efail(d, at, "a figure in the args of both the B and the E event", err);
    if (e->has_cycles)
        b->cycles = e->cycles, b->has_cycles = 1;
    if (e->has_bytes)
        b->bytes = e->bytes, b->has_bytes = 1;
    if (e->has_tokens)
        b->tokens = e->tokens, b->has_tokens = 1;
    for (int k = 0; k < GATE_BYTE_KINDS; k++)
        if (e->kinds & (1u << k))
            b->kind[k] = e->kind[k];
    for (int k = 0; k < GATE_STALL_CLASSES; k++)
        if (e->stalls & (1u << k))
            b->stall[k] = e->stall[k];
    b->kinds |= e->kinds;
    b->stalls |= e->stalls;
    return 0;
}

/* One op slice into the pid's row. */
static int add_slice(chrome_ctx *c, long long pid, const char *family, const svals *v,
                     double dur_us, const char *where, golden_error *err)
{
    if (!v->has_cycles)
        return golden_fail_where(err, GOLDEN_EINVAL, "an op slice needs args.cycles (ts and dur "
                                 "are wall time, not cycles)", "%s", where);
    if (!pid_get(c, pid, err))
        return -1;
    size_t before = c->acc.n;
    gate_trace_row *r = gate_trace_row_at(&c->acc, 2, pid, family, strlen(family), err);
    if (!r)
        return -1;
    if (c->acc.n > before && c->acc.n > CHROME_MAX_ROWS)
        return golden_fail_where(err, GOLDEN_EINVAL, "more than 65536 op families x processes "
                                 "(a family is args.family, cat or name: it must name a family, "
                                 "not a launch)", "%s", where);
    r->ops++;
    r->cycles += v->cycles;
    r->time_us += dur_us;
    if (v->has_bytes) {
        r->bytes += v->bytes;
        r->has_bytes = 1;
    }
    for (int k = 0; k < GATE_BYTE_KINDS; k++)
        r->kind_bytes[k] += v->kind[k];
    r->kinds_present |= v->kinds;
    for (int k = 0; k < GATE_STALL_CLASSES; k++)
        r->stall[k] += v->stall[k];
    r->stalls_present |= v->stalls;
    if (v->has_tokens && !strcmp(family, "grouped_moe_dense")) {
        int b = gate_bucket_of(v->tokens);
        r->bk_cycles[b] += v->cycles;
        r->bk_tokens[b] += v->tokens;
        r->bk_launches[b]++;
    }
    c->slices++;
    return 0;
}

/* family: args.family, else cat, else name. */
static const char *family_of(const json_t *ev, const json_t *args, const char *name)
{
    const char *f = json_string_value(json_object_get(args, "family"));
    if (f && *f)
        return f;
    f = json_string_value(json_object_get(ev, "cat"));
    return f && *f ? f : name;
}

static thread_stack *stack_of(chrome_ctx *c, long long pid, long long tid, golden_error *err)
{
    char key[48];
    snprintf(key, sizeof key, "%lld:%lld", pid, tid);
    size_t i;
    int added;
    if (c->nth >= CHROME_MAX_THREADS && !lg_strmap_get(&c->th_map, key, strlen(key), NULL)) {
        golden_fail_what(err, GOLDEN_EINVAL, c->path, "more than 65536 threads with B/E events");
        return NULL;
    }
    if (map_index(&c->th_map, &c->th_keys, c->nth, key, &i, &added, err) != 0)
        return NULL;
    if (added) {
        thread_stack *nt = realloc(c->th, (c->nth + 1) * sizeof *nt);
        if (!nt) {
            gate_oom(err);
            return NULL;
        }
        c->th = nt;
        memset(&nt[i], 0, sizeof nt[i]);
        nt[i].pid = pid;
        nt[i].tid = tid;
        c->nth++;
    }
    return &c->th[i];
}

static int begin_slice(chrome_ctx *c, const golden_doc *d, const json_t *ev, thread_stack *s,
                       const char *name, double ts, golden_error *err)
{
    if (c->open >= CHROME_MAX_OPEN)
        return efail(d, ev, "more than 65536 B events open at once", err);
    if (s->n == s->cap) {
        size_t nc = s->cap ? 2 * s->cap : 8;
        open_slice *ns = realloc(s->s, nc * sizeof *ns);
        if (!ns)
            return gate_oom(err);
        s->s = ns;
        s->cap = nc;
    }
    open_slice *o = &s->s[s->n];
    const json_t *args = json_object_get(ev, "args");
    if (parse_args(c, d, args, &o->v, err) != 0)
        return -1;
    o->ts = ts;
    o->name = strdup(name);
    o->family = strdup(family_of(ev, args, name));
    golden_doc_where(d, ev, o->where, sizeof o->where);
    if (!o->name || !o->family) {
        free(o->name);
        free(o->family);
        return gate_oom(err);
    }
    s->n++;
    c->open++;
    return 0;
}

static int end_slice(chrome_ctx *c, const golden_doc *d, const json_t *ev, thread_stack *s,
                     double ts, golden_error *err)
{
    if (s->n == 0)
        return efail(d, ev, "an E event without an open B event on its thread", err);
    open_slice *o = &s->s[s->n - 1];
    const json_t *nm = json_object_get(ev, "name");
    char where[1200];
    golden_doc_where(d, ev, where, sizeof where);
    svals e;
    int rc;
    if (nm && (!json_is_string(nm) || strcmp(json_string_value(nm), o->name) != 0))
        rc = golden_fail_where(err, GOLDEN_EINVAL, "E event's name does not match the B event "
                               "open on its thread (B/E nesting mismatch)", "%s", where);
    else if (ts < o->ts)
        rc = efail(d, ev, "E event before its B event", err);
    else if ((rc = parse_args(c, d, json_object_get(ev, "args"), &e, err)) == 0 &&
             (rc = merge_args(&o->v, &e, d, ev, err)) == 0)
        rc = add_slice(c, s->pid, o->family, &o->v, ts - o->ts, o->where, err);
    free(o->name);
    free(o->family);
    s->n--;
    c->open--;
    return rc;
}

static int power_reading(chrome_ctx *c, const golden_doc *d, const json_t *ev, long long pid,
                         double ts, golden_error *err)
{
    const json_t *args = json_object_get(ev, "args");
    const char *k;
    json_t *val = NULL;
    if (json_is_object(args) && json_object_size(args) == 1)
        json_object_foreach((json_t *)args, k, val) {}
    if (!json_is_number(val) || json_number_value(val) < 0)
        return efail(d, args ? args : ev, "a power counter needs args with one non-negative "
                     "number (watts)", err);
    double w = json_number_value(val);
    pid_info *p = pid_get(c, pid, err);
    if (!p)
        return -1;
    if (p->power && ts < p->last_ts)
        return efail(d, ev, "power readings of a process out of time order", err);
    if (!p->power) {
        p->min = p->max = p->first = w;
        p->first_ts = ts;
    } else {
        p->weighted += p->last_v * (ts - p->last_ts);
        p->min = w < p->min ? w : p->min;
        p->max = w > p->max ? w : p->max;
    }
    p->power++;
    p->last_ts = ts;
    p->last_v = w;
    return 0;
}

static int number_field(const golden_doc *d, const json_t *ev, const char *key, double *out,
                        golden_error *err)
{
    const json_t *v = json_object_get(ev, key);
    if (!json_is_number(v)) {
        char what[96];
        snprintf(what, sizeof what, "needs %s (a number)", key);
        return efail(d, v ? v : ev, what, err);
    }
    *out = json_number_value(v);
    return 0;
}

static int int_field(const golden_doc *d, const json_t *ev, const char *key, long long *out,
                     golden_error *err)
{
    const json_t *v = json_object_get(ev, key);
    if (!json_is_integer(v)) {
        char what[96];
        snprintf(what, sizeof what, "needs %s (an integer)", key);
        return efail(d, v ? v : ev, what, err);
    }
    *out = json_integer_value(v);
    return 0;
}

static int slice_event(chrome_ctx *c, const golden_doc *d, const json_t *ev, char ph,
                       long long pid, double ts, const char *name, golden_error *err)
{
    long long tid;
    if (int_field(d, ev, "tid", &tid, err) != 0)
        return -1;
    if (ph == 'X') {
        double dur;
        svals v;
        char where[256];
        const json_t *args = json_object_get(ev, "args");
        if (number_field(d, ev, "dur", &dur, err) != 0)
            return -1;
        if (dur < 0)
            return efail(d, json_object_get(ev, "dur"), "dur must not be negative", err);
        golden_doc_where(d, ev, where, sizeof where);
        return parse_args(c, d, args, &v, err) ||
                       add_slice(c, pid, family_of(ev, args, name), &v, dur, where, err)
                   ? -1
                   : 0;
    }
    thread_stack *s = stack_of(c, pid, tid, err);
    if (!s)
        return -1;
    return ph == 'B' ? begin_slice(c, d, ev, s, name, ts, err) : end_slice(c, d, ev, s, ts, err);
}

static int metadata_event(chrome_ctx *c, const golden_doc *d, const json_t *ev, long long pid,
                          const char *name, golden_error *err)
{
    if (!name || strcmp(name, "process_name") != 0) {
        c->t->ignored++;
        return 0;
    }
    const json_t *n = json_object_get(json_object_get(ev, "args"), "name");
    if (!json_is_string(n))
        return efail(d, ev, "process_name needs args.name (a string)", err);
    pid_info *p = pid_get(c, pid, err);
    if (!p)
        return -1;
    if (p->name && strcmp(p->name, json_string_value(n)) != 0)
        return efail(d, n, "a second, different process_name for the same pid", err);
    if (!p->name && !(p->name = strdup(json_string_value(n))))
        return gate_oom(err);
    return 0;
}

static int one_event(chrome_ctx *c, const golden_doc *d, golden_error *err)
{
    const json_t *ev = golden_doc_root(d);
    if (!json_is_object(ev))
        return efail(d, ev, "a trace event must be an object", err);
    c->events++;
    const json_t *ph = json_object_get(ev, "ph"), *nm = json_object_get(ev, "name");
    if (!json_is_string(ph) || json_string_length(ph) != 1)
        return efail(d, ph ? ph : ev, "needs ph (a one-letter phase)", err);
    if (nm && !json_is_string(nm))
        return efail(d, nm, "name must be a string", err);
    char p = json_string_value(ph)[0];
    const char *name = json_string_value(nm);
    long long pid;
    double ts = 0;
    if (p == 'M')
        return int_field(d, ev, "pid", &pid, err) ? -1 : metadata_event(c, d, ev, pid, name, err);
    int power = p == 'C' && name && (!strcmp(name, "power") || !strcmp(name, "power_w"));
    if (p != 'X' && p != 'B' && p != 'E' && !power) {
        c->t->ignored++;
        return 0;
    }
    if (int_field(d, ev, "pid", &pid, err) != 0 || number_field(d, ev, "ts", &ts, err) != 0)
        return -1;
    if (power)
        return power_reading(c, d, ev, pid, ts, err);
    if (p != 'E' && (!name || !*name))
        return efail(d, ev, "an op slice needs a name", err);
    return slice_event(c, d, ev, p, pid, ts, name, err);
}

static int chrome_each(void *ctx, const char *key, golden_doc *d, golden_error *err)
{
    chrome_ctx *c = ctx;
    if (!key)
        return one_event(c, d, err);
    if (!strcmp(key, "displayTimeUnit")) {
        const char *u = json_string_value(golden_doc_root(d));
        if (!u || (strcmp(u, "ms") != 0 && strcmp(u, "ns") != 0))
            return efail(d, golden_doc_root(d), "displayTimeUnit must be \"ms\" or \"ns\"", err);
    }
    return 0; /* otherData, metadata, stackFrames, ...: not device figures */
}

/* "baseline chip N", "candidate chip N", "chip N" -> side and chip; no name: chip = pid. */
static int resolve_pid(const pid_info *p, int *side, long long *chip)
{
    *side = 2;
    *chip = p->pid;
    if (!p->name)
        return p->pid >= 0 ? 0 : -1;
    const char *s = p->name;
    if (!strncmp(s, "baseline ", 9))
        *side = 0, s += 9;
    else if (!strncmp(s, "candidate ", 10))
        *side = 1, s += 10;
    if (strncmp(s, "chip ", 5) != 0 || !s[5])
        return -1;
    long long v = 0;
    for (s += 5; *s; s++) {
        if (*s < '0' || *s > '9' || v > 1000000000LL)
            return -1;
        v = v * 10 + (*s - '0');
    }
    *chip = v;
    return 0;
}

static int pid_of_row(const chrome_ctx *c, const gate_trace_row *r)
{
    for (size_t i = 0; i < c->npids; i++)
        if (c->pids[i].pid == r->chip)
            return (int)i;
    return -1;
}

/* The pid-keyed aggregates into t's (side, chip, family) rows; power per side and chip. */
static int resolve(chrome_ctx *c, golden_error *err)
{
    gate_trace *t = c->t;
    int *side = calloc(c->npids + 1, sizeof *side);
    long long *chip = calloc(c->npids + 1, sizeof *chip);
    if (!side || !chip) {
        free(side);
        free(chip);
        return gate_oom(err);
    }
    int rc = 0;
    for (size_t i = 0; i < c->npids && rc == 0; i++) {
        if (resolve_pid(&c->pids[i], &side[i], &chip[i]) != 0)
            rc = golden_fail_where(err, GOLDEN_EINVAL, "process_name must be \"baseline chip "
                                   "N\", \"candidate chip N\" or \"chip N\" (or a pid >= 0 "
                                   "without a name)", "%s: pid %lld", c->path, c->pids[i].pid);
        for (size_t j = 0; j < i && rc == 0; j++)
            if (side[j] == side[i] && chip[j] == chip[i])
                rc = golden_fail_where(err, GOLDEN_EINVAL, "two processes name the same side "
                                       "and chip", "%s: pids %lld and %lld", c->path,
                                       c->pids[j].pid, c->pids[i].pid);
    }
    for (size_t i = 0; i < c->acc.n && rc == 0; i++) {
        const gate_trace_row *a = &c->acc.rows[i];
        int k = pid_of_row(c, a);
        gate_trace_row *r = gate_trace_row_at(t, side[k], chip[k], a->family,
                                              strlen(a->family), err);
        if (!r) {
            rc = -1;
            break;
        }
        char *fam = r->family;
        *r = *a;
        r->family = fam;
        r->side = side[k];
        r->chip = chip[k];
        if (r->side == 2)
            t->any_unsided = 1;
        for (int b = 0; b < GATE_BUCKETS; b++)
            if (a->bk_launches[b]) {
                t->bucket_cycles[r->side][b] += a->bk_cycles[b];
                t->bucket_tokens[r->side][b] += a->bk_tokens[b];
                t->bucket_launches[r->side][b] += a->bk_launches[b];
                t->has_tokens = 1;
            }
    }
    for (size_t i = 0; i < c->npids && rc == 0; i++) {
        const pid_info *p = &c->pids[i];
        if (!p->power)
            continue;
        gate_trace_power *np = realloc(t->power, (t->npower + 1) * sizeof *np);
        if (!np) {
            rc = gate_oom(err);
            break;
        }
        t->power = np;
        gate_trace_power *w = &np[t->npower++];
        w->side = side[i];
        w->chip = chip[i];
        w->samples = (size_t)p->power;
        w->min = p->min;
        w->max = p->max;
        w->weighted = p->weighted;
        w->span_us = p->last_ts - p->first_ts;
        w->first = p->first;
    }
    free(side);
    free(chip);
    return rc;
}

static void chrome_free(chrome_ctx *c)
{
    for (size_t i = 0; i < c->nth; i++) {
        for (size_t j = 0; j < c->th[i].n; j++) {
            free(c->th[i].s[j].name);
            free(c->th[i].s[j].family);
        }
        free(c->th[i].s);
        free(c->th_keys[i]);
    }
    for (size_t i = 0; i < c->npids; i++) {
        free(c->pids[i].name);
        free(c->pid_keys[i]);
    }
    free(c->th);
    free(c->th_keys);
    free(c->pids);
    free(c->pid_keys);
    lg_strmap_free(&c->pid_map);
    lg_strmap_free(&c->th_map);
    gate_trace_free(&c->acc);
}

int gate_trace_chrome(const char *path, gate_trace *t, golden_error *err)
{
    chrome_ctx c;
    memset(&c, 0, sizeof c);
    c.t = t;
    c.path = path;
    t->chrome = 1;
    int rc = golden_doc_each_element(path, "traceEvents", chrome_each, &c, err);
    if (rc == 0 && c.events == 0)
        rc = golden_fail_what(err, GOLDEN_EINVAL, path, "no trace events (a Chrome trace needs "
                              "a traceEvents array, or is one)");
    for (size_t i = 0; i < c.nth && rc == 0; i++)
        if (c.th[i].n)
            rc = golden_fail_where(err, GOLDEN_EINVAL, "a B event without its E event (B/E "
                                   "nesting mismatch)", "%s", c.th[i].s[c.th[i].n - 1].where);
    if (rc == 0)
        rc = resolve(&c, err);
    t->lines = c.slices;
    t->sided = c.slices > 0 && !t->any_unsided;
    chrome_free(&c);
    return rc ? -1 : 0;
}

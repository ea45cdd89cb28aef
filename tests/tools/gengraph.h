/* Graph generators shared by gen-graph and the oracle test: a realistic two-chip Qwen3-style
 * whole graph streamed as JSON (any scale), and random small graphs built as jansson trees. */
#ifndef GOLDEN_TESTS_GENGRAPH_H
#define GOLDEN_TESTS_GENGRAPH_H
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static inline uint64_t gg_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline uint32_t gg_below(uint64_t *s, uint32_t n)
{
    return n ? (uint32_t)(gg_next(s) % n) : 0;
}

/* ---- random small graphs (the oracle's input) ---- */

/* A valid calculet-graph/v1 tree (every id known, every event signalled once) with up to
 * max_ops ops; cycles are possible (after edges and waits may point forward). NULL on OOM. */
static inline json_t *gg_random(uint64_t seed, uint32_t max_ops)
{
    uint64_t s = seed * 0x2545F4914F6CDD1DULL + 1;
    static const char *fams[] = {"matmul", "rmsnorm", "gather", "dynamic_d2d", "rope"};
    uint32_t nchips = 1 + gg_below(&s, 2), nq = 1 + gg_below(&s, 5), nsp = 1 + gg_below(&s, 2);
    uint32_t nb = 1 + gg_below(&s, 6), n = 2 + gg_below(&s, max_ops > 2 ? max_ops - 1 : 1);
    json_t *root = json_object(), *queues = json_array(), *bufs = json_array(), *ops = json_array();
    if (!root || !queues || !bufs || !ops) {
        json_decref(root);
        json_decref(queues);
        json_decref(bufs);
        json_decref(ops);
        return NULL;
    }
    json_object_set_new(root, "schema", json_string("calculet-graph/v1"));
    json_object_set_new(root, "queues", queues);
    json_object_set_new(root, "buffers", bufs);
    json_object_set_new(root, "ops", ops);
    char id[64];
    for (uint32_t q = 0; q < nq; q++) {
        snprintf(id, sizeof id, "q%" PRIu32, q);
        json_array_append_new(queues, json_pack("{s:s,s:I}", "id", id, "chip",
                                                (json_int_t)gg_below(&s, nchips)));
    }
    uint32_t bsize[8];
    for (uint32_t b = 0; b < nb; b++) {
        snprintf(id, sizeof id, "b%" PRIu32, b);
        bsize[b] = 1 + gg_below(&s, 24);
        json_array_append_new(bufs, json_pack("{s:s,s:I,s:s,s:I,s:I}", "id", id, "chip",
                                              (json_int_t)gg_below(&s, nchips), "space",
                                              gg_below(&s, nsp) ? "sram" : "ddr", "address",
                                              (json_int_t)gg_below(&s, 40), "size",
                                              (json_int_t)bsize[b]));
    }
    /* plan kinds first so waits may name signals that come later */
    uint8_t kind[1024];
    uint32_t sigs[1024], nsig = 0;
    if (n > 1024)
        n = 1024;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = gg_below(&s, 100);
        kind[i] = r < 58 ? 0 : r < 70 ? 1 : r < 84 ? 2 : r < 91 ? 3 : 0;
        if (kind[i] == 1)
            sigs[nsig++] = i;
    }
    for (uint32_t i = 0; i < n; i++) {
        json_t *op = json_object();
        snprintf(id, sizeof id, "o%" PRIu32, i);
        json_object_set_new(op, "id", json_string(id));
        if (kind[i] == 2 && !nsig)
            kind[i] = 0;
        if (kind[i] == 3) {
            json_object_set_new(op, "kind", json_string("barrier"));
            json_t *ql = json_array();
            uint32_t first = gg_below(&s, nq);
            for (uint32_t q = 0; q < nq; q++)
                if (q == first || gg_below(&s, 2)) {
                    snprintf(id, sizeof id, "q%" PRIu32, q);
                    json_array_append_new(ql, json_string(id));
                }
            json_object_set_new(op, "queues", ql);
        } else {
            snprintf(id, sizeof id, "q%" PRIu32, gg_below(&s, nq));
            json_object_set_new(op, "queue", json_string(id));
        }
        if (kind[i] == 1 || kind[i] == 2) {
            json_object_set_new(op, "kind", json_string(kind[i] == 1 ? "signal" : "wait"));
            uint32_t sig = i;
            if (kind[i] == 2) {
                /* mostly an earlier signal; sometimes any (a later one may close a cycle) */
                uint32_t earlier = 0;
                while (earlier < nsig && sigs[earlier] < i)
                    earlier++;
                sig = earlier && gg_below(&s, 100) < 97 ? sigs[gg_below(&s, earlier)]
                                                      : sigs[gg_below(&s, nsig)];
            }
            snprintf(id, sizeof id, "e%" PRIu32, sig);
            json_object_set_new(op, "event", json_string(id));
        }
        if (kind[i] == 0) {
            json_object_set_new(op, "family", json_string(fams[gg_below(&s, 5)]));
            for (int w = 0; w < 2; w++) {
                uint32_t cnt = gg_below(&s, 3);
                if (!cnt)
                    continue;
                json_t *list = json_array();
                for (uint32_t k = 0; k < cnt; k++) {
                    uint32_t b = gg_below(&s, nb), off = gg_below(&s, bsize[b]);
                    uint32_t size = 1 + gg_below(&s, bsize[b] - off);
                    snprintf(id, sizeof id, "b%" PRIu32, b);
                    json_array_append_new(list, json_pack("{s:s,s:I,s:I}", "buffer", id, "offset",
                                                          (json_int_t)off, "size", (json_int_t)size));
                }
                json_object_set_new(op, w ? "writes" : "reads", list);
            }
            if (gg_below(&s, 4) == 0)
                json_object_set_new(op, "data_size", json_integer(gg_below(&s, 5000)));
        }
        uint32_t r = gg_below(&s, 100);
        if (i > 0 && r < 18) {
            json_t *af = json_array();
            uint32_t cnt = 1 + gg_below(&s, 2);
            for (uint32_t k = 0; k < cnt; k++) {
                snprintf(id, sizeof id, "o%" PRIu32, gg_below(&s, i));
                json_array_append_new(af, json_string(id));
            }
            json_object_set_new(op, "after", af);
        } else if (r >= 99 && gg_below(&s, 2) && i + 1 < n) {
            snprintf(id, sizeof id, "o%" PRIu32, i + 1 + gg_below(&s, n - i - 1));
            json_object_set_new(op, "after", json_pack("[s]", id));
        }
        json_array_append_new(ops, op);
    }
    /* live ranges and in-place declarations on some buffers */
    for (uint32_t b = 0; b < nb; b++) {
        json_t *bo = json_array_get(bufs, b);
        if (gg_below(&s, 3)) {
            uint32_t a = gg_below(&s, n), c = gg_below(&s, n);
            char ida[32], idc[32];
            snprintf(ida, sizeof ida, "o%" PRIu32, a < c ? a : c);
            snprintf(idc, sizeof idc, "o%" PRIu32, a < c ? c : a);
            json_object_set_new(bo, "live", json_pack("[ss]", ida, idc));
        }
        if (nb > 1 && gg_below(&s, 5) == 0) {
            uint32_t o = gg_below(&s, nb - 1);
            if (o >= b)
                o++;
            snprintf(id, sizeof id, "b%" PRIu32, o);
            json_object_set_new(bo, "inplace_of", json_string(id));
        }
    }
    return root;
}

/* ---- the realistic graph ---- */
typedef struct {
    uint32_t layers;   /* 48 */
    uint32_t steps;    /* repetitions of the whole 48-layer body (decode steps) */
    uint32_t tiles;    /* grouped-MoE tiles per layer at most */
    uint32_t split;    /* outputs written as this many tile ranges, inputs read as half as many */
    uint64_t seed;
    bool race;         /* drop one kv_scatter -> flash_attention wait: a RAW across queues */
    uint64_t ops, accesses; /* out: what was written */
} gg_params;

#define GG_H 4096u
#define GG_SLICE 8192u
#define GG_KVCAP 64u

typedef struct {
    FILE *f;
    gg_params *p;
    bool first;
    int nacc;
} gg_out;

static inline void gg_op_begin(gg_out *o, const char *id, const char *queue, const char *kind,
                        const char *family)
{
    fprintf(o->f, "%s\n  {\"id\":\"%s\",\"queue\":\"%s\"", o->first ? "" : ",", id, queue);
    if (kind)
        fprintf(o->f, ",\"kind\":\"%s\"", kind);
    if (family)
        fprintf(o->f, ",\"family\":\"%s\"", family);
    o->first = false;
    o->p->ops++;
}

static inline void gg_sync(gg_out *o, const char *id, const char *queue, const char *kind,
                    const char *event)
{
    gg_op_begin(o, id, queue, kind, NULL);
    fprintf(o->f, ",\"event\":\"%s\"}", event);
}

/* accesses: "buf:off:size" triples in one string list; writes are split into tiles */
static inline void gg_list(gg_out *o, const char *key, const char *const *bufs, const uint32_t *off,
                    const uint32_t *size, int n, uint32_t split)
{
    if (!n)
        return;
    fprintf(o->f, ",\"%s\":[", key);
    int k = 0;
    for (int i = 0; i < n; i++) {
        uint32_t parts = split && size[i] % split == 0 ? split : 1;
        for (uint32_t t = 0; t < parts; t++) {
            fprintf(o->f, "%s{\"buffer\":\"%s\",\"offset\":%" PRIu32 ",\"size\":%" PRIu32 "}",
                    k++ ? "," : "", bufs[i], off[i] + t * (size[i] / parts), size[i] / parts);
            o->p->accesses++;
        }
    }
    fputc(']', o->f);
}

static inline void gg_compute(gg_out *o, const char *id, const char *queue, const char *family,
                       int nr, const char *const *rb, const uint32_t *ro, const uint32_t *rs,
                       int nw, const char *const *wb, const uint32_t *wo, const uint32_t *ws,
                       const char *after, int64_t data_size)
{
    gg_op_begin(o, id, queue, NULL, family);
    gg_list(o, "reads", rb, ro, rs, nr, o->p->split / 2);
    gg_list(o, "writes", wb, wo, ws, nw, o->p->split);
    if (after)
        fprintf(o->f, ",\"after\":[\"%s\"]", after);
    if (data_size >= 0)
        fprintf(o->f, ",\"data_size\":%" PRId64, data_size);
    fputc('}', o->f);
}

static inline uint32_t gg_tiles(const gg_params *p, uint32_t g)
{
    uint64_t s = p->seed ^ ((uint64_t)g * 0x9E3779B97F4A7C15ULL);
    uint32_t half = p->tiles / 2 ? p->tiles / 2 : 1;
    return half + gg_below(&s, p->tiles - half + 1);
}

/* activation buffers of one layer instance: name, offset in its slot, size */
static const char *const gg_act_names[] = {"n", "qkv", "att", "p", "pg", "g", "n2", "log", "y", "m", "mx"};
static const uint32_t gg_act_off[] = {0, 1, 4, 5, 6, 7, 8, 9, 10, 12, 13};
static const uint32_t gg_act_size[] = {GG_H, 3 * GG_H, GG_H, GG_H, GG_H, GG_H, GG_H, 512, 2 * GG_H, GG_H, GG_H};

/* Write the realistic graph as JSON to f. Returns 0, or -1 on a write error. */
static inline int gg_realistic(FILE *f, gg_params *p)
{
    uint32_t L = p->layers, S = p->steps, T = p->tiles ? p->tiles : 1;
    if (T > 16)
        T = p->tiles = 16;
    p->ops = p->accesses = 0;
    fprintf(f, "{\"schema\":\"calculet-graph/v1\",\n\"queues\":[");
    static const char *qn[] = {"compute", "vector", "dma", "d2d"};
    for (int c = 0; c < 2; c++)
        for (int q = 0; q < 4; q++)
            fprintf(f, "%s{\"id\":\"c%d.%s\",\"chip\":%d}", c || q ? "," : "", c, qn[q], c);
    fprintf(f, "],\n\"buffers\":[");
    bool first = true;
    for (int c = 0; c < 2; c++) {
        fprintf(f, "%s\n  {\"id\":\"x%d\",\"chip\":%d,\"space\":\"ddr\",\"address\":0,\"size\":%u}",
                first ? "" : ",", c, c, GG_H);
        first = false;
        for (uint32_t l = 0; l < L; l++) {
            uint64_t wb = 0x10000000ULL + (uint64_t)l * 0x100000ULL;
            fprintf(f, ",\n  {\"id\":\"wqkv%uc%d\",\"chip\":%d,\"space\":\"ddr\",\"address\":%" PRIu64 ",\"size\":131072}", l, c, c, wb);
            fprintf(f, ",\n  {\"id\":\"wo%uc%d\",\"chip\":%d,\"space\":\"ddr\",\"address\":%" PRIu64 ",\"size\":65536}", l, c, c, wb + 0x20000);
            fprintf(f, ",\n  {\"id\":\"wg%uc%d\",\"chip\":%d,\"space\":\"ddr\",\"address\":%" PRIu64 ",\"size\":16384}", l, c, c, wb + 0x30000);
            fprintf(f, ",\n  {\"id\":\"we%uc%d\",\"chip\":%d,\"space\":\"ddr\",\"address\":%" PRIu64 ",\"size\":%u}", l, c, c, wb + 0x40000, 16 * 0x8000);
            fprintf(f, ",\n  {\"id\":\"kv%uc%d\",\"chip\":%d,\"space\":\"ddr\",\"address\":%" PRIu64 ",\"size\":%u}", l, c, c, (uint64_t)(0x40000000ULL + (uint64_t)l * GG_KVCAP * GG_SLICE), GG_KVCAP * GG_SLICE);
        }
    }
    /* activations: one instance per (global layer, chip), in two ping-pong slots */
    for (uint32_t s = 0; s < S; s++)
        for (uint32_t l = 0; l < L; l++) {
            uint64_t g = (uint64_t)s * L + l;
            for (int c = 0; c < 2; c++) {
                uint64_t base = 0x80000000ULL + (g % 2) * 0x10000ULL;
                char pre[48];
                snprintf(pre, sizeof pre, "s%ul%uc%d", s, l, c);
                const char *live[11][2] = {
                    {"norm1", "mmqkv"}, {"mmqkv", "flash"}, {"flash", "mmo"}, {"mmo", "sync"},
                    {"sync", "gather"}, {"gather", "res1"}, {"norm2", "tile0"}, {"gpre", "gpost"},
                    {"tile0", "gpost"}, {"gpost", "dyn"}, {"dyn", "res2"}};
                for (int k = 0; k < 11; k++) {
                    /* the last tile is the last reader of n2; d2d writes come from the other chip */
                    char first_id[64], last_id[64];
                    int oc = 1 - c;
                    const char *fo = live[k][0], *lo = live[k][1];
                    snprintf(first_id, sizeof first_id, "s%ul%uc%d.%s", s, l,
                             (k == 4 || k == 10) ? oc : c, fo);
                    if (k == 6)
                        snprintf(last_id, sizeof last_id, "%s.tile%u", pre, gg_tiles(p, (uint32_t)g) - 1);
                    else
                        snprintf(last_id, sizeof last_id, "%s.%s", pre, lo);
                    fprintf(f, ",\n  {\"id\":\"%s.%s\",\"chip\":%d,\"space\":\"sram\",\"address\":%" PRIu64 ",\"size\":%u,\"live\":[\"%s\",\"%s\"]}",
                            pre, gg_act_names[k], c, (uint64_t)(base + (uint64_t)gg_act_off[k] * GG_H),
                            gg_act_size[k], first_id, last_id);
                }
            }
        }
    fprintf(f, "],\n\"ops\":[");
    gg_out o = {f, p, true, 0};
    for (uint32_t s = 0; s < S; s++)
        for (uint32_t l = 0; l < L; l++) {
            uint32_t g = s * L + l, nt = gg_tiles(p, g);
            for (int c = 0; c < 2; c++) {
                int oc = 1 - c;
                char P[48], O[48], id[96], ev[96], q[4][16], b[16][80], a2[96];
                snprintf(P, sizeof P, "s%ul%uc%d", s, l, c);
                snprintf(O, sizeof O, "s%ul%uc%d", s, l, oc);
                for (int k = 0; k < 4; k++)
                    snprintf(q[k], sizeof q[k], "c%d.%s", c, qn[k]);
                const char *cq = q[0], *vq = q[1], *dq = q[2], *xq = q[3];
                char x[16], kv[32], wqkv[32], wo[32], wg[32], we[32];
                snprintf(x, sizeof x, "x%d", c);
                snprintf(kv, sizeof kv, "kv%uc%d", l, c);
                snprintf(wqkv, sizeof wqkv, "wqkv%uc%d", l, c);
                snprintf(wo, sizeof wo, "wo%uc%d", l, c);
                snprintf(wg, sizeof wg, "wg%uc%d", l, c);
                snprintf(we, sizeof we, "we%uc%d", l, c);
                for (int k = 0; k < 11; k++)
                    snprintf(b[k], sizeof b[k], "%s.%s", P, gg_act_names[k]);
                char pgo[80], mxo[80];
                snprintf(pgo, sizeof pgo, "%s.pg", O);
                snprintf(mxo, sizeof mxo, "%s.mx", O);
#define R(...) (const char *const[]){__VA_ARGS__}
#define U(...) (const uint32_t[]){__VA_ARGS__}
                snprintf(id, sizeof id, "%s.norm1", P);
                gg_compute(&o, id, vq, "rmsnorm", 1, R(x), U(0), U(GG_H), 1, R(b[0]), U(0), U(GG_H), NULL, -1);
                snprintf(id, sizeof id, "%s.e1", P);
                gg_sync(&o, id, vq, "signal", id);
                snprintf(ev, sizeof ev, "%s.e1", P);
                snprintf(id, sizeof id, "%s.w1", P);
                gg_sync(&o, id, cq, "wait", ev);
                snprintf(id, sizeof id, "%s.mmqkv", P);
                gg_compute(&o, id, cq, "matmul", 2, R(b[0], wqkv), U(0, 0), U(GG_H, 131072), 1, R(b[1]), U(0), U(3 * GG_H), NULL, -1);
                snprintf(id, sizeof id, "%s.rope", P);
                gg_compute(&o, id, cq, "rope", 1, R(b[1]), U(0), U(2 * GG_H), 1, R(b[1]), U(0), U(2 * GG_H), NULL, -1);
                snprintf(id, sizeof id, "%s.e2", P);
                gg_sync(&o, id, cq, "signal", id);
                snprintf(ev, sizeof ev, "%s.e2", P);
                snprintf(id, sizeof id, "%s.w2", P);
                gg_sync(&o, id, dq, "wait", ev);
                uint32_t slot = (s % GG_KVCAP) * GG_SLICE;
                uint32_t upto = (s + 1 < GG_KVCAP ? s + 1 : GG_KVCAP) * GG_SLICE;
                snprintf(id, sizeof id, "%s.kvs", P);
                gg_compute(&o, id, dq, "kv_scatter", 1, R(b[1]), U(GG_H), U(2 * GG_H), 1, R(kv), U(slot), U(GG_SLICE), NULL, -1);
                snprintf(id, sizeof id, "%s.e3", P);
                gg_sync(&o, id, dq, "signal", id);
                bool drop = p->race && s == S / 2 && l == L / 2 && c == 0;
                snprintf(ev, sizeof ev, "%s.e3", P);
                snprintf(id, sizeof id, "%s.w3", P);
                if (!drop)
                    gg_sync(&o, id, cq, "wait", ev);
                snprintf(id, sizeof id, "%s.flash", P);
                gg_compute(&o, id, cq, "flash_attention", 2, R(b[1], kv), U(0, 0), U(GG_H, upto), 1, R(b[2]), U(0), U(GG_H), NULL, -1);
                snprintf(id, sizeof id, "%s.mmo", P);
                gg_compute(&o, id, cq, "matmul", 2, R(b[2], wo), U(0, 0), U(GG_H, 65536), 1, R(b[3]), U(0), U(GG_H), NULL, -1);
                snprintf(id, sizeof id, "%s.e4", P);
                gg_sync(&o, id, cq, "signal", id);
                snprintf(ev, sizeof ev, "%s.e4", P);
                snprintf(id, sizeof id, "%s.w4", P);
                gg_sync(&o, id, xq, "wait", ev);
                snprintf(id, sizeof id, "%s.sync", P);
                gg_compute(&o, id, xq, "sync_d2d", 1, R(b[3]), U(0), U(GG_H), 1, R(pgo), U(0), U(GG_H), NULL, GG_H);
                snprintf(id, sizeof id, "%s.e5", P);
                gg_sync(&o, id, xq, "signal", id);
                snprintf(ev, sizeof ev, "%s.e5", O);
                snprintf(id, sizeof id, "%s.w5", P);
                gg_sync(&o, id, cq, "wait", ev);
                snprintf(id, sizeof id, "%s.gather", P);
                gg_compute(&o, id, cq, "gather", 2, R(b[3], b[4]), U(0, 0), U(GG_H, GG_H), 1, R(b[5]), U(0), U(GG_H), NULL, -1);
                snprintf(id, sizeof id, "%s.res1", P);
                snprintf(a2, sizeof a2, "%s.gather", P); /* conservative: program order has it */
                gg_compute(&o, id, cq, "residual_add", 2, R(b[5], x), U(0, 0), U(GG_H, GG_H), 1, R(x), U(0), U(GG_H), a2, -1);
                snprintf(id, sizeof id, "%s.e6", P);
                gg_sync(&o, id, cq, "signal", id);
                snprintf(ev, sizeof ev, "%s.e6", P);
                snprintf(id, sizeof id, "%s.w6", P);
                gg_sync(&o, id, vq, "wait", ev);
                snprintf(id, sizeof id, "%s.norm2", P);
                gg_compute(&o, id, vq, "rmsnorm", 1, R(x), U(0), U(GG_H), 1, R(b[6]), U(0), U(GG_H), NULL, -1);
                snprintf(id, sizeof id, "%s.e7", P);
                gg_sync(&o, id, vq, "signal", id);
                snprintf(ev, sizeof ev, "%s.e7", P);
                snprintf(id, sizeof id, "%s.w7", P);
                gg_sync(&o, id, cq, "wait", ev);
                snprintf(id, sizeof id, "%s.gpre", P);
                gg_compute(&o, id, cq, "moe_gate_pre", 2, R(b[6], wg), U(0, 0), U(GG_H, 16384), 1, R(b[7]), U(0), U(512), NULL, -1);
                for (uint32_t t = 0; t < nt; t++) {
                    snprintf(id, sizeof id, "%s.tile%u", P, t);
                    gg_compute(&o, id, cq, "grouped_moe", 3, R(b[6], we, b[7]), U(0, t * 0x8000, 0), U(GG_H, 0x8000, 512), 1, R(b[8]), U(t * 512), U(512), NULL, -1);
                }
                snprintf(id, sizeof id, "%s.gpost", P);
                gg_compute(&o, id, cq, "moe_gate_post", 2, R(b[7], b[8]), U(0, 0), U(512, nt * 512), 1, R(b[9]), U(0), U(GG_H), NULL, -1);
                snprintf(id, sizeof id, "%s.e8", P);
                gg_sync(&o, id, cq, "signal", id);
                snprintf(ev, sizeof ev, "%s.e8", P);
                snprintf(id, sizeof id, "%s.w8", P);
                gg_sync(&o, id, xq, "wait", ev);
                snprintf(id, sizeof id, "%s.dyn", P);
                /* data_size is the static 40960-token upper bound, not the bytes moved */
                gg_compute(&o, id, xq, "dynamic_d2d", 1, R(b[9]), U(0), U(GG_H), 1, R(mxo), U(0), U(GG_H), NULL, 40960LL * 2);
                snprintf(id, sizeof id, "%s.e9", P);
                gg_sync(&o, id, xq, "signal", id);
                snprintf(ev, sizeof ev, "%s.e9", O);
                snprintf(id, sizeof id, "%s.w9", P);
                gg_sync(&o, id, cq, "wait", ev);
                snprintf(id, sizeof id, "%s.res2", P);
                gg_compute(&o, id, cq, "residual_add", 2, R(b[10], x), U(0, 0), U(GG_H, GG_H), 1, R(x), U(0), U(GG_H), NULL, -1);
#undef R
#undef U
            }
            fprintf(f, ",\n  {\"id\":\"s%ul%u.bar\",\"kind\":\"barrier\",\"queues\":[\"c0.compute\",\"c0.vector\",\"c1.compute\",\"c1.vector\"]}", s, l);
            p->ops++;
        }
    fprintf(f, "\n]}\n");
    return ferror(f) ? -1 : 0;
}

#endif

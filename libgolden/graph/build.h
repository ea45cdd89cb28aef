/* Private to libgolden/graph: what both graph loaders share. A loader reads each queue, buffer
 * and op into a description; one set of rules (rules.c) judges it and builds the model. */
#ifndef GOLDEN_GRAPH_BUILD_H
#define GOLDEN_GRAPH_BUILD_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "golden/doc.h"
#include "golden/error.h"
#include "golden/graph.h"
#include "graph/idmap.h"
#include "util/strmap.h"

/* Borrowed bytes with a length: a NUL is a byte (the rules refuse it in names). */
typedef struct {
    const char *s;
    uint32_t n;
} slice;

/* One access of an op, as read. */
typedef struct {
    slice buffer;
    uint64_t offset, size;
    bool has_offset, has_size, write;
    const json_t *node;   /* tree path: the access object (positions); NULL when streamed */
    uint32_t index;       /* position in its reads (or writes) list */
    uint32_t buf;         /* set by the rules: the buffer's index */
    bool buf_known;       /* buf was found already (the pipeline's reader; the rules trust it) */
} op_access;

/* One op, as read. */
typedef struct {
    slice id, kind, queue, family, event;
    bool has_id, has_kind, has_queue, has_family, has_event, has_data_size;
    bool has_reads, has_writes, has_after, has_queues;
    uint64_t data_size;
    op_access *acc;
    size_t nacc, cap_acc;
    slice *after, *queues;
    size_t nafter, cap_after, nqueues, cap_queues;
    const json_t *node;   /* tree path: the op object; NULL when streamed */
    /* set by the rules */
    golden_op_kind k;
    uint32_t q;           /* the queue's index, GOLDEN_NONE for a barrier */
    uint32_t q_pre;       /* the queue's index found already, when q_known (pipeline reader) */
    bool q_known;
    uint32_t *qidx;       /* barrier: the listed queues' indices */
    size_t cap_qidx;
    uint32_t last_buf;    /* the buffer the previous access named (a cache; any value is safe) */
    /* set by the check for the build: the id's hash and the free slot it goes to (one probe),
     * the event's hash and index (GOLDEN_NONE: not yet known) */
    uint64_t id_hash, ev_hash;
    bool has_id_hash, has_ev_hash; /* the reader hashed them already (for these id, event) */
    size_t id_slot;
    uint32_t ev;
} op_desc;

/* One buffer, as read. */
typedef struct {
    slice id, space, inplace_of;
    bool has_id, has_space, has_inplace, has_chip, has_address, has_size, has_live;
    uint64_t chip, address, size;
    slice *live;
    size_t nlive, cap_live;
    const json_t *node;
} buffer_desc;

/* A reference to an op resolved once every op is known (ops may name later ops). */
typedef struct {
    uint32_t owner;       /* op (after) or buffer (live, inplace_of) index */
    uint32_t k;           /* after: entry index; live: 0 or 1; inplace_of: 2 */
    char *name;
    uint32_t len;
    const json_t *node;   /* the tree's node when the tree outlives the build, else NULL */
} pending_ref;

/* Names kept in big blocks, not one allocation each (op and event ids). */
typedef struct name_block {
    struct name_block *next;
    size_t used, cap;
    char bytes[];
} name_block;

typedef struct {
    lg_idmap ops, buffers, queues;
    name_block *names;    /* the blocks op and event ids live in */
} graph_index;

/* A NUL-terminated copy of n bytes in the graph's name blocks, or NULL. */
char *graph_name_copy(graph_index *ix, const char *s, size_t n);
void graph_names_free(graph_index *ix);

typedef struct {
    const char *name;
    const golden_doc *doc;  /* positions of nodes, when the elements come from a doc */
    golden_error *err;
    golden_graph *g;
    lg_idmap events;
    golden_strmap spaces, families, domains;
    char **domain_keys;
    uint32_t ndomain_keys;
    size_t cap_queues, cap_buffers, cap_ops, cap_acc, cap_after, cap_bq, cap_events;
    pending_ref *after_refs, *buf_refs;
    size_t nafter_refs, cap_after_refs, nbuf_refs, cap_buf_refs;
    bool keep_nodes;      /* the tree lives until the build ends (not streamed) */
    const json_t *ops_arr; /* the tree's ops, when kept */
} builder;

int graph_builder_init(builder *b, const char *name, const golden_doc *doc, golden_error *err);
void graph_builder_free(builder *b);
/* Hand the graph over (the builder keeps nothing), or free it on failure. */
int graph_builder_finish(builder *b, int rc, golden_graph **out);

/* Grow *arr (element size sz) so that index n fits; 0 or -1. */
int graph_grow(void **arr, size_t *cap, size_t n, size_t sz);
/* Fail at a node: file:line:col when the document knows it, else name#pointer. */
int graph_fail_at(builder *b, const json_t *node, const char *pointer, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same at the slot parent[key] (or parent[index] when key is NULL): a place also for
 * true/false/null values, which have none of their own. */
int graph_fail_child(builder *b, const json_t *parent, const char *key, size_t index,
                     const char *pointer, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
int graph_nomem(builder *b);

/* The rules. check: 0 = valid; when !report, 1 = invalid (nothing said, nothing changed) and
 * -1 = out of memory; when report, GOLDEN_ERR with the one message. add: check (reporting),
 * then build. Queues have no fast path: add only. */
int graph_add_queue(builder *b, slice id, uint64_t chip, const json_t *node, size_t idx);
int graph_check_buffer(builder *b, const buffer_desc *d, size_t idx, bool report);
int graph_build_buffer(builder *b, const buffer_desc *d);
int graph_check_op(builder *b, op_desc *d, size_t idx, bool report);
int graph_build_op(builder *b, op_desc *d);
void graph_op_desc_free(op_desc *d);
/* Once every element is in: references by name (after, live, inplace_of), waits' signals,
 * per-queue program order. */
int graph_finish(builder *b);
/* "schema" must be "calculet-graph/v1". */
int graph_check_schema_name(builder *b, const json_t *schema, const json_t *root);

/* The loaders behind golden_graph_load_file_opts. */
int graph_load_tree(const char *path, golden_graph **out, golden_error *err);
int graph_load_stream(const char *path, const char *buf, size_t len, golden_progress *progress,
                      bool fast, golden_graph **out, golden_error *err);
/* Tree path element readers (the streaming path's fallback too). */
int graph_queue_from_json(builder *b, const json_t *q, size_t i);
int graph_buffer_from_json(builder *b, const json_t *o, size_t i);
int graph_op_from_json(builder *b, const json_t *o, size_t i);

static inline slice slice_of(const char *s, size_t n)
{
    return (slice){s, (uint32_t)n};
}

#endif

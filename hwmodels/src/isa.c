/* isa.c - programs: tensors, buffers, instructions, interned operands, validation (the
 * listings are isa_format.c, the name tables names.c). */
#include "gs/isa.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "program.h"

int gs_ap_is_valid(const gs_ap *a)
{
    if (a->ndim < 1 || a->ndim > GS_AP_MAX_DIMS) return 0;
    /* dtype and space are unsigned 8-bit fields: only the upper bound can be exceeded */
    if (a->part_count == 0 || a->dtype >= GS_DTYPE_COUNT) return 0;
    if (a->space >= GS_MEMSPACE_COUNT) return 0;
    for (int k = 0; k < a->ndim; k++)
        if (a->shape[k] == 0) return 0;
    return 1;
}

/* ---- programs ---- */

#define DEP_BLOCK 65536u /* deps are stored in blocks that never move */

typedef struct dep_block {
    struct dep_block *next;
    uint32_t used;
    uint32_t data[DEP_BLOCK];
} dep_block;

/* The integer immediates of an instruction that has any (iota, affine_select, tensor_reduce;
 * not part of gs_instr: most instructions have none). */
typedef struct iimm_entry {
    uint32_t instr;
    int64_t v[3];
} iimm_entry;

/* Access patterns interned for the operands of instructions (see "Operand storage" in
 * gs/isa.h): chunks that never move, of doubling size, and an open-addressing hash set over
 * them. */
#define AP_CHUNK_MIN 64u
#define AP_CHUNK_MAX 16384u
#define AP_RECENT 1024u /* entries of the table of recently found patterns (ap_pool.recent) */

/* A pattern's key is the bytes of its fields (ap_key below): 62 contiguous bytes, no padding
 * between them (space and dtype are whole-byte bit-fields between core and ndim). The handle's
 * allocation number `gen` (the last 2 bytes) is left out: it is the builder's, not the
 * pattern's. */
_Static_assert(offsetof(gs_ap, core) == 56 && offsetof(gs_ap, ndim) == 60 &&
                   offsetof(gs_ap, bad_view) == 61 && offsetof(gs_ap, gen) == 62 &&
                   sizeof(gs_ap) == 64,
               "gs_ap layout: the interning key assumes 62 bytes of fields without holes");

/* An interned pattern and the builder's facts about it (program.h): instructions point to `ap`,
 * the first member, so an entry is found from the pattern only by interning it again. */
typedef struct ap_entry {
    gs_ap ap;
    gs_ap_facts facts;
} ap_entry;

typedef struct ap_chunk {
    struct ap_chunk *next;
    uint32_t used, cap;
    ap_entry data[];
} ap_chunk;

typedef struct ap_pool {
    ap_chunk *chunks;  /* newest first */
    ap_entry **set;    /* hash set of interned patterns (NULL = empty slot) */
    uint32_t *tags;    /* per slot of set, the high half of its pattern's hash: a probe reads
                        * a pattern (a likely cache miss) only when the tag matches */
    size_t set_cap, n; /* set_cap: a power of two or 0; n: distinct patterns */
    ap_entry *none;    /* the interned unused-slot pattern (tensor = -1, zeros), once seen */
    /* the last pattern found for each of AP_RECENT hash values: a program reuses a few patterns
     * at a time (its current tiles), and this small table stays in cache where the set does not */
    ap_entry *recent[AP_RECENT];
} ap_pool;

struct gs_program {
    const gs_config *cfg;
    gs_tensor_info *tensors;
    size_t n_tensors, cap_tensors;
    uint64_t hbm_next;
    gs_buffer_info *buffers;
    size_t n_buffers, cap_buffers;
    gs_instr *instrs;
    size_t n_instrs, cap_instrs;
    size_t instrs_mapped; /* instrs[0, instrs_mapped) had their pages mapped ahead (gs_prefault) */
    dep_block *deps;
    iimm_entry *iimms; /* by increasing instruction index */
    size_t n_iimms, cap_iimms;
    ap_pool aps;
    unsigned cores_used;
    uint64_t high_water[GS_MEMSPACE_COUNT];
    void *builder_state;
    void (*builder_state_free)(void *);
};

void *gs_program_builder_state(const gs_program *p)
{
    return p->builder_state;
}

void gs_program_set_builder_state(gs_program *p, void *state, void (*free_fn)(void *))
{
    p->builder_state = state;
    p->builder_state_free = free_fn;
}

gs_program *gs_program_create(const gs_config *cfg)
{
    gs_program *p = gs_calloc(1, sizeof *p);
    if (!p) return NULL;
    p->cfg = cfg;
    return p;
}

void gs_program_free(gs_program *p)
{
    if (!p) return;
    if (p->builder_state_free) p->builder_state_free(p->builder_state);
    gs_free(p->tensors);
    gs_free(p->buffers);
    gs_free(p->instrs);
    for (ap_chunk *c = p->aps.chunks; c;) {
        ap_chunk *n = c->next;
        gs_free(c);
        c = n;
    }
    gs_free(p->aps.set);
    gs_free(p->aps.tags);
    gs_free(p->iimms);
    for (dep_block *b = p->deps; b;) {
        dep_block *n = b->next;
        gs_free(b);
        b = n;
    }
    gs_free(p);
}

const gs_config *gs_program_config(const gs_program *p)
{
    return p->cfg;
}

static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap) return 1;
    size_t ncap = *cap ? *cap * 2 : 16;
    size_t bytes;
    if (!gs_size_mul(ncap, elem, &bytes)) return 0;
    void *a = gs_realloc(*arr, bytes);
    if (!a) return 0;
    *arr = a;
    *cap = ncap;
    return 1;
}

int32_t gs_program_add_tensor(gs_program *p, const char *name, gs_dtype t, gs_tensor_kind kind,
                              int ndim, const int64_t *shape, gs_error *err)
{
    if (!name || !name[0] || strlen(name) >= sizeof p->tensors[0].name)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0, "tensor name empty or too long"), -1;
    if (gs_program_find_tensor(p, name) >= 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0, "duplicate tensor name '%s'", name),
               -1;
    if (ndim < 1 || ndim > GS_AP_MAX_DIMS)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0, "tensor '%s': rank %d outside 1..%d",
                            name, ndim, GS_AP_MAX_DIMS),
               -1;
    if ((int)t < 0 || t >= GS_DTYPE_COUNT)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0, "tensor '%s': bad dtype", name), -1;
    uint64_t elems = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] <= 0 || shape[i] > ((int64_t)1 << 40))
            return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                                "tensor '%s': dimension %d is %" PRId64 " (must be 1..2^40)", name,
                                i, shape[i]),
                   -1;
        if (elems > UINT64_MAX / (uint64_t)shape[i] ||
            elems * (uint64_t)shape[i] > ((uint64_t)1 << 50))
            return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0, "tensor '%s': too many elements",
                                name),
                   -1;
        elems *= (uint64_t)shape[i];
    }
    uint64_t bytes = elems * gs_dtype_size(t);
    uint64_t addr = (p->hbm_next + 4095u) & ~(uint64_t)4095u;
    double cap = p->cfg ? p->cfg->hbm_capacity.v : 0;
    if (cap > 0 && (double)(addr + bytes) > cap)
        return gs_error_set(err, GS_ERR_DOES_NOT_FIT, NULL, 0, 0,
                            "does not fit: tensor '%s' (%" PRIu64 " bytes) exceeds device memory "
                            "(%.0f bytes)",
                            name, bytes, cap),
               -1;
    if (!grow((void **)&p->tensors, &p->cap_tensors, p->n_tensors, sizeof *p->tensors))
        return gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory"), -1;
    gs_tensor_info *ti = &p->tensors[p->n_tensors];
    memset(ti, 0, sizeof *ti);
    snprintf(ti->name, sizeof ti->name, "%s", name);
    ti->dtype = t;
    ti->kind = kind;
    ti->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        ti->shape[i] = shape[i];
    ti->elems = elems;
    ti->bytes = bytes;
    ti->hbm_addr = addr;
    p->hbm_next = addr + bytes;
    return (int32_t)p->n_tensors++;
}

size_t gs_program_tensor_count(const gs_program *p)
{
    return p->n_tensors;
}

const gs_tensor_info *gs_program_tensor(const gs_program *p, int32_t id)
{
    if (id < 0 || (size_t)id >= p->n_tensors) return NULL;
    return &p->tensors[id];
}

int32_t gs_program_find_tensor(const gs_program *p, const char *name)
{
    for (size_t i = 0; i < p->n_tensors; i++)
        if (strcmp(p->tensors[i].name, name) == 0) return (int32_t)i;
    return -1;
}

int32_t gs_program_add_buffer(gs_program *p, const gs_buffer_info *b)
{
    if (!grow((void **)&p->buffers, &p->cap_buffers, p->n_buffers, sizeof *p->buffers)) return -1;
    p->buffers[p->n_buffers] = *b;
    if (b->core + 1u > p->cores_used) p->cores_used = b->core + 1u;
    return (int32_t)p->n_buffers++;
}

size_t gs_program_buffer_count(const gs_program *p)
{
    return p->n_buffers;
}

const gs_buffer_info *gs_program_buffer(const gs_program *p, int32_t id)
{
    if (id < 0 || (size_t)id >= p->n_buffers) return NULL;
    return &p->buffers[id];
}

void gs_program_note_usage(gs_program *p, gs_memspace space, uint64_t bytes_per_partition)
{
    if (space < GS_MEMSPACE_COUNT && bytes_per_partition > p->high_water[space])
        p->high_water[space] = bytes_per_partition;
}

uint64_t gs_program_sbuf_high_water(const gs_program *p)
{
    return p->high_water[GS_MEM_SBUF];
}

uint64_t gs_program_psum_high_water(const gs_program *p)
{
    return p->high_water[GS_MEM_PSUM];
}

size_t gs_program_count(const gs_program *p)
{
    return p->n_instrs;
}

const gs_instr *gs_program_instr(const gs_program *p, size_t i)
{
    if (i >= p->n_instrs) return NULL;
    return &p->instrs[i];
}

unsigned gs_program_cores_used(const gs_program *p)
{
    return p->cores_used ? p->cores_used : 1;
}

static uint32_t *store_deps(gs_program *p, const uint32_t *deps, uint32_t n)
{
    if (n == 0) return NULL;
    if (n > DEP_BLOCK) return NULL;
    if (!p->deps || p->deps->used + n > DEP_BLOCK) {
        dep_block *b = gs_malloc(sizeof *b);
        if (!b) return NULL;
        b->used = 0;
        b->next = p->deps;
        p->deps = b;
    }
    uint32_t *dst = p->deps->data + p->deps->used;
    memcpy(dst, deps, n * sizeof *deps);
    p->deps->used += n;
    return dst;
}

/* The key of a pattern is its 62 bytes of fields, read as seven 8-byte words and a 6-byte tail
 * straight from the pattern (memcpy loads: no alignment or aliasing assumptions; the last 2
 * bytes, `gen`, are never read, so patterns that differ only in the allocation their handle came
 * from are one pattern). */
static inline uint64_t ap_word(const gs_ap *a, int i)
{
    uint64_t w;
    memcpy(&w, (const unsigned char *)a + 8 * i, sizeof w);
    return w;
}

static inline uint64_t ap_tail(const gs_ap *a)
{
    uint32_t t4;
    uint16_t t2;
    memcpy(&t4, (const unsigned char *)a + 56, sizeof t4);
    memcpy(&t2, (const unsigned char *)a + 60, sizeof t2);
    return (uint64_t)t4 << 16 | t2;
}

static inline int ap_same(const gs_ap *a, const gs_ap *b)
{
    uint64_t d = ap_tail(a) ^ ap_tail(b);
    for (int i = 0; i < 7; i++)
        d |= ap_word(a, i) ^ ap_word(b, i);
    return d == 0;
}

/* Whether a pattern is the builder's unused-slot pattern (tensor = -1, zeros): its words against
 * that pattern's constant ones, without reading a second pattern. */
static inline int ap_is_unused(const gs_ap *a)
{
    static const gs_ap unused = {.tensor = -1};
    uint64_t d = ap_tail(a) ^ ap_tail(&unused);
    for (int i = 0; i < 7; i++)
        d |= ap_word(a, i) ^ ap_word(&unused, i);
    return d == 0;
}

/* The words are multiplied by distinct odd constants independently and summed, then mixed: the
 * multiplications run in parallel, where a chain of them would wait for each one in turn (every
 * used operand of every instruction is hashed). */
static inline uint64_t ap_hash(const gs_ap *a)
{
    static const uint64_t k[8] = {
        0x9e3779b97f4a7c15ull, 0xff51afd7ed558ccdull, 0xc4ceb9fe1a85ec53ull, 0xd6e8feb86659fd93ull,
        0xa0761d6478bd642full, 0xe7037ed1a0b428dbull, 0x8ebc6af09c88c6e3ull, 0x589965cc75374cc3ull};
    uint64_t h = ap_tail(a) * k[7];
    for (int i = 0; i < 7; i++)
        h += ap_word(a, i) * k[i];
    h ^= h >> 32;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 29);
}

static int ap_set_grow(ap_pool *pool)
{
    size_t ncap = pool->set_cap ? pool->set_cap * 2 : 256;
    ap_entry **set = gs_calloc(ncap, sizeof *set);
    uint32_t *tags = gs_calloc(ncap, sizeof *tags);
    if (!set || !tags) {
        gs_free(set);
        gs_free(tags);
        return 0;
    }
    for (size_t i = 0; i < pool->set_cap; i++) {
        ap_entry *a = pool->set[i];
        if (!a) continue;
        size_t j = (size_t)ap_hash(&a->ap) & (ncap - 1);
        while (set[j])
            j = (j + 1) & (ncap - 1);
        set[j] = a;
        tags[j] = pool->tags[i];
    }
    gs_free(pool->set);
    gs_free(pool->tags);
    pool->set = set;
    pool->tags = tags;
    pool->set_cap = ncap;
    return 1;
}

/* The program's entry of pattern `a` (an existing equal one, or a new one with zero facts);
 * NULL on OOM. */
static inline ap_entry *ap_intern(ap_pool *pool, const gs_ap *a)
{
    /* most instructions leave slots unused: their pattern (the builder's tensor = -1 and zeros)
     * is found without hashing (a used operand, tensor >= 0, cannot be it) */
    if (a->tensor < 0 && pool->none && ap_is_unused(a)) return pool->none;
    const uint64_t h = ap_hash(a);
    ap_entry **recent = &pool->recent[(h >> 32) & (AP_RECENT - 1)];
    if (*recent && ap_same(a, &(*recent)->ap)) return *recent;
    if (2 * (pool->n + 1) > pool->set_cap && !ap_set_grow(pool)) return NULL;
    const size_t mask = pool->set_cap - 1;
    const uint32_t tag = (uint32_t)(h >> 32);
    size_t j = (size_t)h & mask;
    for (ap_entry *e; (e = pool->set[j]) != NULL; j = (j + 1) & mask)
        if (pool->tags[j] == tag && ap_same(a, &e->ap)) return *recent = e;
    ap_chunk *c = pool->chunks;
    if (!c || c->used == c->cap) {
        uint32_t cap = c ? GS_MIN(2 * c->cap, AP_CHUNK_MAX) : AP_CHUNK_MIN;
        ap_chunk *nc = gs_malloc(sizeof *nc + (size_t)cap * sizeof nc->data[0]);
        if (!nc) return NULL;
        nc->next = c;
        nc->used = 0;
        nc->cap = cap;
        pool->chunks = c = nc;
    }
    ap_entry *dst = &c->data[c->used++];
    memset(&dst->facts, 0, sizeof dst->facts);
    dst->ap = *a;
    pool->set[j] = *recent = dst;
    pool->tags[j] = tag;
    pool->n++;
    if (!pool->none && a->tensor < 0 && ap_is_unused(a)) pool->none = dst;
    return dst;
}

/* Copy the fields the two forms share (not the operands). */
#define COPY_INSTR_FIELDS(dst, src)                                                                \
    do {                                                                                           \
        (dst)->op = (src)->op;                                                                     \
        (dst)->engine = (src)->engine;                                                             \
        (dst)->alu0 = (src)->alu0;                                                                 \
        (dst)->alu1 = (src)->alu1;                                                                 \
        (dst)->act = (src)->act;                                                                   \
        (dst)->n_in = (src)->n_in;                                                                 \
        (dst)->n_out = (src)->n_out;                                                               \
        (dst)->core = (src)->core;                                                                 \
        (dst)->queue = (src)->queue;                                                               \
        (dst)->flags = (src)->flags;                                                               \
        memcpy((dst)->imm, (src)->imm, sizeof(dst)->imm);                                          \
        (dst)->n_deps = (src)->n_deps;                                                             \
        (dst)->line = (src)->line;                                                                 \
        (dst)->deps = (src)->deps;                                                                 \
        (dst)->file = (src)->file;                                                                 \
    } while (0)

/* Instruction `instr`'s integer immediates, kept when any is non-zero (instructions are
 * appended in index order, so the table stays sorted). 0 on OOM. */
static int store_iimm(gs_program *p, uint32_t instr, const int64_t v[3])
{
    if (!v[0] && !v[1] && !v[2]) return 1;
    if (!grow((void **)&p->iimms, &p->cap_iimms, p->n_iimms, sizeof *p->iimms)) return 0;
    iimm_entry *e = &p->iimms[p->n_iimms++];
    e->instr = instr;
    memcpy(e->v, v, sizeof e->v);
    return 1;
}

const int64_t *gs_program_iimm(const gs_program *p, size_t i)
{
    static const int64_t zeros[3] = {0, 0, 0};
    size_t lo = 0, hi = p->n_iimms;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (p->iimms[mid].instr < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->n_iimms && p->iimms[lo].instr == i ? p->iimms[lo].v : zeros;
}

const gs_ap *gs_program_intern(gs_program *p, const gs_ap *a, gs_ap_facts **facts)
{
    ap_entry *e = ap_intern(&p->aps, a);
    if (!e) return NULL;
    *facts = &e->facts;
    return &e->ap;
}

int gs_program_intern_operands(gs_program *p, const gs_instr_draft *in,
                               const gs_ap *out[GS_INSTR_MAX_OUT],
                               gs_ap_facts *fout[GS_INSTR_MAX_OUT],
                               const gs_ap *ins[GS_INSTR_MAX_IN], gs_ap_facts *fin[GS_INSTR_MAX_IN])
{
    for (int k = 0; k < GS_INSTR_MAX_OUT; k++) {
        ap_entry *e = ap_intern(&p->aps, &in->out[k]);
        if (!e) return 0;
        out[k] = &e->ap;
        fout[k] = &e->facts;
    }
    for (int k = 0; k < GS_INSTR_MAX_IN; k++) {
        ap_entry *e = ap_intern(&p->aps, &in->in[k]);
        if (!e) return 0;
        ins[k] = &e->ap;
        fin[k] = &e->facts;
    }
    return 1;
}

int64_t gs_program_append(gs_program *p, const gs_instr_draft *in, const uint32_t *deps,
                          uint32_t n_deps)
{
    const gs_ap *out[GS_INSTR_MAX_OUT], *ins[GS_INSTR_MAX_IN];
    for (int k = 0; k < GS_INSTR_MAX_OUT; k++) {
        const ap_entry *e = ap_intern(&p->aps, &in->out[k]);
        if (!e) return -1;
        out[k] = &e->ap;
    }
    for (int k = 0; k < GS_INSTR_MAX_IN; k++) {
        const ap_entry *e = ap_intern(&p->aps, &in->in[k]);
        if (!e) return -1;
        ins[k] = &e->ap;
    }
    return gs_program_append_interned(p, in, out, ins, deps, n_deps);
}

int64_t gs_program_append_interned(gs_program *p, const gs_instr_draft *in,
                                   const gs_ap *const out[GS_INSTR_MAX_OUT],
                                   const gs_ap *const ins[GS_INSTR_MAX_IN], const uint32_t *deps,
                                   uint32_t n_deps)
{
    if (p->n_instrs >= UINT32_MAX - 1) return -1;
    if (!grow((void **)&p->instrs, &p->cap_instrs, p->n_instrs, sizeof *p->instrs)) return -1;
    if (p->n_instrs >= p->instrs_mapped) {
        /* map the next ~1 MiB of records in one call instead of a page fault per 42 records
         * (a large program's records are most of its first-touch faults) */
        const size_t ahead = GS_MIN(p->cap_instrs - p->n_instrs, (1u << 20) / sizeof *p->instrs);
        gs_prefault(&p->instrs[p->n_instrs], ahead * sizeof *p->instrs);
        p->instrs_mapped = p->n_instrs + ahead;
    }
    gs_instr *dst = &p->instrs[p->n_instrs];
    COPY_INSTR_FIELDS(dst, in);
    for (int k = 0; k < GS_INSTR_MAX_OUT; k++)
        dst->out[k] = out[k];
    for (int k = 0; k < GS_INSTR_MAX_IN; k++)
        dst->in[k] = ins[k];
    dst->n_deps = n_deps;
    dst->deps = store_deps(p, deps, n_deps);
    if (n_deps && !dst->deps) return -1;
    /* last: a failed append leaves no immediates under this index */
    if (!store_iimm(p, (uint32_t)p->n_instrs, in->iimm)) return -1;
    if (in->core + 1u > p->cores_used) p->cores_used = in->core + 1u;
    return (int64_t)p->n_instrs++;
}

int64_t gs_program_append_raw(gs_program *p, const gs_instr_draft *in)
{
    return gs_program_append(p, in, in->deps, in->n_deps);
}

const gs_instr *gs_instr_draft_view(const gs_instr_draft *d, gs_instr *view)
{
    COPY_INSTR_FIELDS(view, d);
    for (int k = 0; k < GS_INSTR_MAX_OUT; k++)
        view->out[k] = &d->out[k];
    for (int k = 0; k < GS_INSTR_MAX_IN; k++)
        view->in[k] = &d->in[k];
    return view;
}

void gs_program_instr_to_draft(const gs_program *p, size_t i, gs_instr_draft *d)
{
    const gs_instr *in = &p->instrs[i];
    memset(d, 0, sizeof *d);
    COPY_INSTR_FIELDS(d, in);
    memcpy(d->iimm, gs_program_iimm(p, i), sizeof d->iimm);
    for (int k = 0; k < GS_INSTR_MAX_OUT; k++)
        d->out[k] = *in->out[k];
    for (int k = 0; k < GS_INSTR_MAX_IN; k++)
        d->in[k] = *in->in[k];
}

/* Checked before a run: the simulator indexes streams by core, engine and queue. */
gs_status gs_program_validate(const gs_program *p, const gs_config *cfg, gs_error *err)
{
    if (!p || !cfg)
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0,
                            "gs_program_validate: no program or config");
    const unsigned cores = (unsigned)cfg->cores.v, queues = (unsigned)cfg->dma.queues.v;
    const unsigned engines = gs_config_engine_mask(cfg);
    const size_t n = gs_program_count(p);
    for (size_t i = 0; i < n; ++i) {
        const gs_instr *in = gs_program_instr(p, i);
        if (gs_instr_placement_ok(in, cores, queues, engines)) continue;
        /* which part of the condition fails, for the message */
        const char *op = gs_opcode_name(in->op);
        if (in->core >= cores)
            return gs_error_set(err, GS_ERR_INVALID, in->file, in->line, 0,
                                "instruction %zu (%s) runs on core %u but the chip has %u cores", i,
                                op, in->core, cores);
        if ((unsigned)in->engine >= (unsigned)GS_ENGINE_COUNT)
            return gs_error_set(err, GS_ERR_INVALID, in->file, in->line, 0,
                                "instruction %zu (%s) has an invalid engine %d", i, op,
                                (int)in->engine);
        if (!gs_config_has_engine(cfg, in->engine))
            return gs_error_set(err, GS_ERR_UNSUPPORTED, in->file, in->line, 0,
                                "instruction %zu (%s) needs the %s engine, which %s does not have",
                                i, op, gs_engine_name(in->engine),
                                cfg->name ? cfg->name : "this config");
        const int dma_op = in->op == GS_OP_DMA_COPY || in->op == GS_OP_DMA_TRANSPOSE;
        if (dma_op != (int)(in->engine == GS_ENG_DMA))
            return gs_error_set(err, GS_ERR_INVALID, in->file, in->line, 0,
                                "instruction %zu (%s) cannot run on the %s engine", i, op,
                                gs_engine_name(in->engine));
        if (in->engine == GS_ENG_DMA && in->queue >= queues)
            return gs_error_set(
                err, GS_ERR_INVALID, in->file, in->line, 0,
                "instruction %zu (%s) uses DMA queue %u but a core has %u queue IDs", i, op,
                in->queue, queues);
        return gs_error_set(err, GS_ERR_INTERNAL, in->file, in->line, 0,
                            "instruction %zu (%s) fails the placement check for no known reason", i,
                            op);
    }
    return GS_OK;
}

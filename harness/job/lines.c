/*
 * lines.c - what each kernel source line cost in a run (see lines.h): the aggregation over the
 * timeline, the record's "lines" object and `run --lines`' table.
 */
#include "lines.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs/cost.h"
#include "gs/jsonw.h"
#include "gs/trace.h"
#include "record.h"

static const char *const wait_names[GS_WAIT_KIND_COUNT] = {"dependency", "buffer reuse",
                                                           "queue order"};

const char *gs_line_wait_kind_name(gs_line_wait_kind k)
{
    return (unsigned)k < GS_WAIT_KIND_COUNT ? wait_names[k] : "?";
}

/* ---- lines: (file, line) -> id, by the file's pointer first, then merged by its text ---- */

typedef struct map_slot {
    const char *file;
    int line;
    uint32_t id1; /* id + 1; 0: empty */
} map_slot;

typedef struct line_map {
    const char **file; /* by id */
    int *line;
    map_slot *slot; /* open addressing */
    size_t n, cap_ids, n_slots;
} line_map;

static size_t hash_key(const char *file, int line)
{
    uint64_t h = (uint64_t)(uintptr_t)file * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uint32_t)line;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    return (size_t)(h ^ (h >> 32));
}

static int map_grow(line_map *m)
{
    size_t ns = m->n_slots ? m->n_slots * 2 : 256;
    map_slot *s = gs_calloc(ns, sizeof *s);
    if (!s) return 0;
    for (size_t k = 0; k < m->n_slots; k++) {
        if (!m->slot[k].id1) continue;
        size_t h = hash_key(m->slot[k].file, m->slot[k].line) & (ns - 1);
        while (s[h].id1)
            h = (h + 1) & (ns - 1);
        s[h] = m->slot[k];
    }
    gs_free(m->slot);
    m->slot = s;
    m->n_slots = ns;
    return 1;
}

/* The id of (file, line), added when new; -1 out of memory. */
static int64_t map_id(line_map *m, const char *file, int line)
{
    if ((m->n + 1) * 2 > m->n_slots && !map_grow(m)) return -1;
    size_t h = hash_key(file, line) & (m->n_slots - 1);
    while (m->slot[h].id1) {
        if (m->slot[h].file == file && m->slot[h].line == line) return m->slot[h].id1 - 1;
        h = (h + 1) & (m->n_slots - 1);
    }
    if (m->n == m->cap_ids) {
        size_t nc = m->cap_ids ? m->cap_ids * 2 : 64;
        const char **f = gs_realloc(m->file, nc * sizeof *f);
        if (!f) return -1;
        m->file = f;
        int *l = gs_realloc(m->line, nc * sizeof *l);
        if (!l) return -1;
        m->line = l;
        m->cap_ids = nc;
    }
    m->file[m->n] = file;
    m->line[m->n] = line;
    m->slot[h] = (map_slot){file, line, (uint32_t)(m->n + 1)};
    return (int64_t)m->n++;
}

static int src_cmp(const char *fa, int la, const char *fb, int lb)
{
    if (fa != fb) {
        if (!fa || !fb) return fa ? 1 : -1;
        int c = strcmp(fa, fb);
        if (c) return c;
    }
    return la < lb ? -1 : la > lb;
}

static const line_map *g_sort_map; /* qsort has no context argument in C11 */

static int id_cmp(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int c =
        src_cmp(g_sort_map->file[x], g_sort_map->line[x], g_sort_map->file[y], g_sort_map->line[y]);
    return c ? c : (x > y) - (x < y);
}

/* ---- waits ---- */

typedef struct wait_ev {
    uint32_t waiter; /* line id */
    uint32_t kind;
    int64_t key; /* line id (dependency, queue order) or buffer id (buffer reuse) */
    uint64_t ps;
} wait_ev;

static int ev_cmp(const void *a, const void *b)
{
    const wait_ev *x = a, *y = b;
    if (x->waiter != y->waiter) return x->waiter < y->waiter ? -1 : 1;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    return (x->key > y->key) - (x->key < y->key);
}

/* The SBUF/PSUM buffer or HBM tensor an operand names, as one key; -1 for an unused slot. */
static int64_t operand_key(const gs_ap *a)
{
    if (!a || a->tensor < 0) return -1;
    return a->space == GS_MEM_HBM ? -2 - (int64_t)a->tensor : (int64_t)a->tensor;
}

static size_t reads_of(const gs_instr *in, int64_t *k)
{
    size_t n = 0;
    for (unsigned s = 0; s < in->n_in && s < GS_INSTR_MAX_IN; s++)
        k[n++] = operand_key(in->in[s]);
    if (in->op == GS_OP_MATMUL_MX) k[n++] = operand_key(GS_MX_MOVING_SCALE(in));
    if ((in->flags & GS_F_ACCUMULATE) && in->n_out > 0) k[n++] = operand_key(in->out[0]);
    return n;
}

static size_t writes_of(const gs_instr *in, int64_t *k)
{
    size_t n = 0;
    for (unsigned s = 0; s < in->n_out && s < GS_INSTR_MAX_OUT; s++)
        if (!(in->op == GS_OP_MATMUL_MX && s == 1)) k[n++] = operand_key(in->out[s]);
    return n;
}

static int has_key(const int64_t *k, size_t n, int64_t v)
{
    for (size_t i = 0; i < n; i++)
        if (v != -1 && k[i] == v) return 1;
    return 0;
}

/* Why instruction `in` waited for `dep`: a read of what dep wrote is a dependency; else an
 * SBUF/PSUM buffer it overwrites that dep used is a buffer reuse (*buffer set). */
static gs_line_wait_kind classify(const gs_instr *in, const gs_instr *dep, int64_t *buffer)
{
    int64_t r[GS_INSTR_MAX_IN + 2], w[GS_INSTR_MAX_OUT], dr[GS_INSTR_MAX_IN + 2],
        dw[GS_INSTR_MAX_OUT];
    const size_t nr = reads_of(in, r), nw = writes_of(in, w);
    const size_t ndr = reads_of(dep, dr), ndw = writes_of(dep, dw);
    for (size_t i = 0; i < nr; i++)
        if (has_key(dw, ndw, r[i])) return GS_WAIT_DEPENDENCY;
    for (size_t i = 0; i < nw; i++)
        if (w[i] >= 0 && (has_key(dr, ndr, w[i]) || has_key(dw, ndw, w[i]))) {
            *buffer = w[i];
            return GS_WAIT_BUFFER_REUSE;
        }
    return GS_WAIT_DEPENDENCY;
}

static int cost_cmp(const void *a, const void *b)
{
    const gs_line_cost *x = a, *y = b;
    uint64_t cx = x->caused_ps, cy = y->caused_ps;
    for (int e = 0; e < GS_ENGINE_COUNT; e++) {
        cx += x->busy_ps[e];
        cy += y->busy_ps[e];
    }
    if (cx != cy) return cx > cy ? -1 : 1;
    return src_cmp(x->file, x->line, y->file, y->line);
}

static int wait_cmp(const void *a, const void *b)
{
    const gs_line_wait *x = a, *y = b;
    if (x->ps != y->ps) return x->ps > y->ps ? -1 : 1;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    int c = src_cmp(x->file, x->line, y->file, y->line);
    return c ? c : strcmp(x->pool, y->pool);
}

/* A wait event as the reason it names. */
static gs_line_wait resolve(const gs_program *p, const gs_line_cost *cost, const wait_ev *ev)
{
    gs_line_wait w;
    memset(&w, 0, sizeof w);
    w.kind = (gs_line_wait_kind)ev->kind;
    w.ps = ev->ps;
    if (ev->kind == GS_WAIT_BUFFER_REUSE) {
        const gs_buffer_info *bi = gs_program_buffer(p, (int32_t)ev->key);
        if (bi) {
            snprintf(w.pool, sizeof w.pool, "%s", bi->name);
            char *dot = strrchr(w.pool, '.'); /* "pool.N": the pool's N-th buffer */
            if (dot) *dot = '\0';
            w.file = bi->file;
            w.line = bi->line;
        }
    } else {
        w.file = cost[ev->key].file;
        w.line = cost[ev->key].line;
    }
    return w;
}

/* The events of one waiter (sorted, merged by key) as its largest reasons: buffers of one pool
 * are one reason. */
static void keep_waits(const gs_program *p, gs_line_cost *cost, const wait_ev *ev, size_t n,
                       gs_line_cost *lc)
{
    gs_line_wait best[GS_LINE_WAITS + 1];
    size_t nb = 0;
    /* merge reasons with equal labels; the candidates are few, kept in a small buffer that is
     * flushed through the top-N list */
    gs_line_wait *cand = gs_calloc(n ? n : 1, sizeof *cand);
    size_t nc = 0;
    for (size_t i = 0; i < n; i++) {
        gs_line_wait w = resolve(p, cost, &ev[i]);
        size_t k = 0;
        if (cand) {
            for (k = 0; k < nc; k++)
                if (cand[k].kind == w.kind && cand[k].file == w.file && cand[k].line == w.line &&
                    !strcmp(cand[k].pool, w.pool))
                    break;
            if (k == nc)
                cand[nc++] = w;
            else
                cand[k].ps += w.ps;
        } else {
            /* out of memory: unmerged, still the largest */
            best[nb++] = w;
            qsort(best, nb, sizeof *best, wait_cmp);
            if (nb > GS_LINE_WAITS) nb = GS_LINE_WAITS;
        }
    }
    for (size_t k = 0; cand && k < nc; k++) {
        best[nb++] = cand[k];
        qsort(best, nb, sizeof *best, wait_cmp);
        if (nb > GS_LINE_WAITS) nb = GS_LINE_WAITS;
    }
    gs_free(cand);
    memcpy(lc->wait, best, nb * sizeof *best);
    lc->n_wait = nb;
}

static uint64_t ns_to_ps(double ns)
{
    return (ns > 0 && isfinite(ns)) ? (uint64_t)llround(ns * 1000.0) : 0;
}

gs_status gs_lines_compute(const gs_program *p, const gs_timeline *tl, gs_lines *out, gs_error *err)
{
    memset(out, 0, sizeof *out);
    const size_t n = gs_program_count(p);
    if (tl->n != n)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "the timeline has %zu instructions, the program %zu", tl->n, n);
    const gs_config *cfg = gs_program_config(p);
    const uint64_t sem_ps = ns_to_ps(cfg->sem_latency.v);
    const size_t streams = (size_t)tl->cores * tl->streams_per_core;
    line_map m;
    memset(&m, 0, sizeof m);
    uint32_t *lid = gs_malloc((n ? n : 1) * sizeof *lid);
    int64_t *prev = gs_malloc((streams ? streams : 1) * sizeof *prev);
    wait_ev *ev = gs_malloc((n ? n : 1) * sizeof *ev);
    uint32_t *order = NULL, *merged = NULL;
    gs_line_cost *cost = NULL;
    size_t n_ev = 0, n_lines = 0;
    gs_status st = GS_OK;
    if (!lid || !prev || !ev) goto nomem;
    for (size_t i = 0; i < n; i++) {
        const gs_instr *in = gs_program_instr(p, i);
        int64_t id = map_id(&m, in->file, in->line);
        if (id < 0) goto nomem;
        lid[i] = (uint32_t)id;
    }
    /* one id per distinct text: the ids sorted by (file text, line), equal ones merged */
    order = gs_malloc((m.n ? m.n : 1) * sizeof *order);
    merged = gs_malloc((m.n ? m.n : 1) * sizeof *merged);
    if (!order || !merged) goto nomem;
    for (size_t k = 0; k < m.n; k++)
        order[k] = (uint32_t)k;
    g_sort_map = &m;
    qsort(order, m.n, sizeof *order, id_cmp);
    /* merged[id] = the representative id; line index = rank among representatives */
    uint32_t *rank = gs_malloc((m.n ? m.n : 1) * sizeof *rank);
    if (!rank) goto nomem;
    for (size_t k = 0; k < m.n; k++) {
        const uint32_t id = order[k];
        if (k && !src_cmp(m.file[id], m.line[id], m.file[order[k - 1]], m.line[order[k - 1]])) {
            merged[id] = merged[order[k - 1]];
            rank[id] = rank[order[k - 1]];
        } else {
            merged[id] = id;
            rank[id] = (uint32_t)n_lines++;
        }
    }
    cost = gs_calloc(n_lines ? n_lines : 1, sizeof *cost);
    if (!cost) {
        gs_free(rank);
        goto nomem;
    }
    for (size_t k = 0; k < m.n; k++) {
        gs_line_cost *lc = &cost[rank[k]];
        lc->file = m.file[merged[k]];
        lc->line = m.line[merged[k]];
    }
    for (size_t i = 0; i < n; i++)
        lid[i] = rank[lid[i]];
    gs_free(rank);

    for (size_t s = 0; s < streams; s++)
        prev[s] = -1;
    for (size_t i = 0; i < n; i++) {
        const gs_timeline_instr *x = &tl->instr[i];
        if (!x->done) continue;
        if (x->stream >= streams || x->pred >= (int32_t)i) {
            st = gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                              "instruction %zu: stream or predecessor out of range", i);
            goto done;
        }
        const gs_instr *in = gs_program_instr(p, i);
        gs_line_cost *lc = &cost[lid[i]];
        const gs_engine e = gs_timeline_stream_engine(tl, x->stream);
        const uint64_t dur = x->end_ps - x->start_ps;
        lc->instructions++;
        if (e == GS_ENG_DMA) {
            lc->busy_ps[GS_ENG_DMA] += dur;
            gs_dma_plan plan;
            gs_cost_dma_plan(cfg, in, &plan);
            lc->dma_bytes += plan.bytes;
        } else {
            lc->busy_ps[e] += dur - GS_MIN(dur, x->hbm_wait_ps);
        }
        /* the stream's floor: the previous instruction's end (an engine) or trigger (a queue) */
        const int64_t pv = prev[x->stream];
        const uint64_t floor =
            pv < 0 ? 0 : (e == GS_ENG_DMA ? tl->instr[pv].start_ps : tl->instr[pv].end_ps);
        prev[x->stream] = (int64_t)i;
        if (x->start_ps > floor && x->pred >= 0 && x->pred != pv) {
            const uint64_t stall = x->start_ps - floor;
            cost[lid[x->pred]].caused_ps += stall;
            lc->stalled_ps += stall;
            lc->waited_ps += stall;
            int64_t buffer = -1;
            const gs_line_wait_kind k = classify(in, gs_program_instr(p, (size_t)x->pred), &buffer);
            ev[n_ev++] =
                (wait_ev){lid[i], (uint32_t)k,
                          k == GS_WAIT_BUFFER_REUSE ? buffer : (int64_t)lid[x->pred], stall};
        } else if (e == GS_ENG_DMA && pv >= 0) {
            /* dependencies met before the queue's previous transfer triggered */
            uint64_t ready = 0;
            for (uint32_t d = 0; d < in->n_deps; d++) {
                const gs_timeline_instr *y = &tl->instr[in->deps[d]];
                const uint64_t t = y->end_ps + (y->stream != x->stream ? sem_ps : 0);
                ready = GS_MAX(ready, t);
            }
            if (x->start_ps > ready) {
                const uint64_t wait = x->start_ps - ready;
                lc->waited_ps += wait;
                ev[n_ev++] = (wait_ev){lid[i], GS_WAIT_QUEUE_ORDER, (int64_t)lid[pv], wait};
            }
        }
    }
    /* the waits per line: sorted, merged by key, the largest kept */
    qsort(ev, n_ev, sizeof *ev, ev_cmp);
    size_t w = 0;
    for (size_t k = 0; k < n_ev; k++) {
        if (w && ev[w - 1].waiter == ev[k].waiter && ev[w - 1].kind == ev[k].kind &&
            ev[w - 1].key == ev[k].key)
            ev[w - 1].ps += ev[k].ps;
        else
            ev[w++] = ev[k];
    }
    for (size_t k = 0; k < w;) {
        size_t e = k;
        while (e < w && ev[e].waiter == ev[k].waiter)
            e++;
        keep_waits(p, cost, ev + k, e - k, &cost[ev[k].waiter]);
        k = e;
    }
    qsort(cost, n_lines, sizeof *cost, cost_cmp);
    out->line = cost;
    out->n = n_lines;
    cost = NULL;
    goto done;
nomem:
    st = gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
done:
    gs_free(cost);
    gs_free(order);
    gs_free(merged);
    gs_free(lid);
    gs_free(prev);
    gs_free(ev);
    gs_free(m.file);
    gs_free(m.line);
    gs_free(m.slot);
    return st;
}

void gs_lines_free(gs_lines *l)
{
    if (!l) return;
    gs_free(l->line);
    memset(l, 0, sizeof *l);
}

gs_line_cost gs_lines_rest(const gs_lines *l, size_t top)
{
    gs_line_cost r;
    memset(&r, 0, sizeof r);
    for (size_t i = top; i < l->n; i++) {
        const gs_line_cost *c = &l->line[i];
        for (int e = 0; e < GS_ENGINE_COUNT; e++)
            r.busy_ps[e] += c->busy_ps[e];
        r.dma_bytes += c->dma_bytes;
        r.instructions += c->instructions;
        r.caused_ps += c->caused_ps;
        r.stalled_ps += c->stalled_ps;
        r.waited_ps += c->waited_ps;
    }
    return r;
}

/* ---- output ---- */

static double ns_of(uint64_t ps)
{
    return (double)ps / 1000.0;
}

static uint64_t cost_ps(const gs_line_cost *c)
{
    uint64_t t = c->caused_ps;
    for (int e = 0; e < GS_ENGINE_COUNT; e++)
        t += c->busy_ps[e];
    return t;
}

static const char *src_text(char *buf, size_t size, const char *file, int line)
{
    gs_trace_format_src(buf, size, file, line);
    return gs_record_rel_path(buf);
}

static void json_row(gs_jw *w, const gs_line_cost *c, int rest)
{
    char src[GS_ERROR_FILE_MAX + 24];
    gs_jw_begin_object(w, GS_JW_COMPACT);
    if (!rest) gs_jw_kstr(w, "src", src_text(src, sizeof src, c->file, c->line));
    gs_jw_knum(w, "cost_ns", ns_of(cost_ps(c)));
    gs_jw_key(w, "busy_ns");
    gs_jw_begin_object(w, GS_JW_COMPACT);
    for (int e = 0; e < GS_ENGINE_COUNT; e++)
        if (e != GS_ENG_DMA && c->busy_ps[e])
            gs_jw_knum(w, gs_engine_name((gs_engine)e), ns_of(c->busy_ps[e]));
    gs_jw_end_object(w);
    gs_jw_knum(w, "dma_ns", ns_of(c->busy_ps[GS_ENG_DMA]));
    gs_jw_knum(w, "dma_bytes", c->dma_bytes);
    gs_jw_knum(w, "instructions", (double)c->instructions);
    gs_jw_knum(w, "stall_caused_ns", ns_of(c->caused_ps));
    gs_jw_knum(w, "stalled_ns", ns_of(c->stalled_ps));
    gs_jw_knum(w, "waited_ns", ns_of(c->waited_ps));
    if (!rest) {
        gs_jw_key(w, "waits");
        gs_jw_begin_array(w, GS_JW_COMPACT);
        for (size_t k = 0; k < c->n_wait; k++) {
            const gs_line_wait *x = &c->wait[k];
            gs_jw_begin_object(w, GS_JW_COMPACT);
            gs_jw_kstr(w, "kind", gs_line_wait_kind_name(x->kind));
            if (x->kind == GS_WAIT_BUFFER_REUSE) gs_jw_kstr(w, "pool", x->pool);
            gs_jw_kstr(w, "src", src_text(src, sizeof src, x->file, x->line));
            gs_jw_knum(w, "ns", ns_of(x->ps));
            gs_jw_end_object(w);
        }
        gs_jw_end_array(w);
    }
    gs_jw_end_object(w);
}

void gs_lines_json(gs_sb *sb, const gs_lines *l, size_t top)
{
    gs_jw w;
    gs_jw_init(&w, sb);
    gs_jw_begin_object(&w, GS_JW_COMPACT);
    gs_jw_knum(&w, "count", (double)l->n);
    gs_jw_key(&w, "top");
    gs_jw_begin_array(&w, GS_JW_COMPACT);
    for (size_t i = 0; i < l->n && i < top; i++)
        json_row(&w, &l->line[i], 0);
    gs_jw_end_array(&w);
    gs_jw_key(&w, "rest");
    if (l->n > top) {
        const gs_line_cost r = gs_lines_rest(l, top);
        json_row(&w, &r, 1);
    } else {
        gs_jw_null(&w);
    }
    gs_jw_end_object(&w);
    (void)gs_jw_finish(&w, NULL);
}

static void text_row(gs_sb *sb, const gs_line_cost *c, unsigned engines, const char *label)
{
    gs_sb_printf(sb, "            %9.3f", ns_of(cost_ps(c)) / 1e3);
    for (int e = 0; e < GS_ENGINE_COUNT; e++)
        if (e != GS_ENG_DMA && (engines & (1u << e))) {
            if (c->busy_ps[e])
                gs_sb_printf(sb, " %8.3f", ns_of(c->busy_ps[e]) / 1e3);
            else
                gs_sb_printf(sb, " %8s", "-");
        }
    gs_sb_printf(sb, " %8.3f %10.0f %7" PRIu64 " %8.3f %8.3f  ",
                 ns_of(c->busy_ps[GS_ENG_DMA]) / 1e3, c->dma_bytes, c->instructions,
                 ns_of(c->caused_ps) / 1e3, ns_of(c->waited_ps) / 1e3);
    gs_sb_term(sb, label);
    gs_sb_puts(sb, "\n");
}

void gs_lines_text(gs_sb *sb, const gs_lines *l, size_t top)
{
    unsigned engines = 0; /* the compute engines any line used: one column each */
    for (size_t i = 0; i < l->n; i++)
        for (int e = 0; e < GS_ENGINE_COUNT; e++)
            if (e != GS_ENG_DMA && l->line[i].busy_ps[e]) engines |= 1u << e;
    const size_t shown = GS_MIN(top, l->n);
    gs_sb_printf(
        sb, "lines       %zu of %zu source lines by cost = busy + DMA time + stall caused (us)\n",
        shown, l->n);
    gs_sb_printf(sb, "            %9s", "cost");
    for (int e = 0; e < GS_ENGINE_COUNT; e++)
        if (e != GS_ENG_DMA && (engines & (1u << e)))
            gs_sb_printf(sb, " %8s", gs_engine_name((gs_engine)e));
    gs_sb_printf(sb, " %8s %10s %7s %8s %8s  %s\n", "dma", "dma bytes", "instr", "caused", "waited",
                 "source line");
    char src[GS_ERROR_FILE_MAX + 24], other[GS_ERROR_FILE_MAX + 24];
    for (size_t i = 0; i < shown; i++) {
        const gs_line_cost *c = &l->line[i];
        text_row(sb, c, engines, src_text(src, sizeof src, c->file, c->line));
        for (size_t k = 0; k < c->n_wait; k++) {
            const gs_line_wait *x = &c->wait[k];
            gs_sb_printf(sb, "%s%s ",
                         k ? "; " : "              waits: ", gs_line_wait_kind_name(x->kind));
            const char *where = src_text(other, sizeof other, x->file, x->line);
            if (x->kind == GS_WAIT_BUFFER_REUSE) {
                gs_sb_puts(sb, "of pool '");
                gs_sb_term(sb, x->pool);
                gs_sb_puts(sb, "' (");
                gs_sb_term(sb, where);
                gs_sb_puts(sb, ")");
            } else {
                gs_sb_puts(sb, x->kind == GS_WAIT_QUEUE_ORDER ? "behind " : "on ");
                gs_sb_term(sb, where);
            }
            gs_sb_printf(sb, " %.3f us", ns_of(x->ps) / 1e3);
        }
        if (c->n_wait) gs_sb_puts(sb, "\n");
    }
    if (l->n > shown) {
        char label[64];
        snprintf(label, sizeof label, "(%zu more lines)", l->n - shown);
        const gs_line_cost r = gs_lines_rest(l, shown);
        text_row(sb, &r, engines, label);
    }
}

/*
 * cost.c - the cost model (gs/cost.h): instruction latency from config parameters only.
 *
 * Every rate, latency and factor comes from the gs_config; the only constants here are unit
 * conversions (ns per s) and the neutral value 1 for a factor the config leaves unset (0), so a
 * generation without, say, a PSUM penalty simply omits the key.
 *
 * Decisions beyond the header's formulas (keep in sync with cost.h):
 *  - "Streamed" operands are the tile operands an engine reads or writes element by element.
 *    Per-partition [P,1] operands (activation scale/bias APs, tensor_scalar operand APs), the
 *    activation's accumulate output and the gather index are not streamed: they do not count
 *    as a second input, do not set N or P and do not lower elems_per_cycle (so a bf16
 *    tensor_scalar with an fp32 [P,1] operand keeps the bf16 rate). A PSUM-resident operand of
 *    any kind does trigger psum_read_factor.
 *  - Vector performance mode (perf_mode_elems_per_cycle): tensor_copy and tensor_scalar on the
 *    vector engine whose streamed operands are all in SBUF, contiguous in their innermost free
 *    dimension (stride 1) and each of a dtype with a performance-mode rate run at the slowest
 *    of those rates instead of elems_per_cycle. Anything else (another op, a PSUM or strided
 *    operand, a dtype without the mode) keeps elems_per_cycle.
 *  - Function tables: see gs_cost_act_uses_table().
 *  - table_load is added after the min_ii floor: a table load is a serial step before the
 *    instruction streams, so it cannot hide under the initiation interval.
 *  - matmul/transpose operands larger than the PE array (which the kernel builder rejects) are
 *    charged one pass per rows x cols block so that no instruction can beat the roofline.
 */
#include "gs/cost.h"

#include <math.h>
#include <string.h>

#include "gs/family.h"

#define GS_NS_PER_S 1e9

void gs_cost_state_init(gs_cost_state *s)
{
    if (s) s->act_loaded = -1;
}

/* A multiplicative factor from the config: unset (0) means no effect. */
static double factor(const gs_num *n)
{
    return n->v > 0.0 ? n->v : 1.0;
}

static const gs_simd_cfg *simd_cfg(const gs_config *c, gs_engine e)
{
    switch (e) {
    case GS_ENG_VECTOR:
        return &c->vector;
    case GS_ENG_SCALAR:
        return &c->scalar;
    case GS_ENG_GPSIMD:
        return &c->gpsimd;
    default:
        return NULL;
    }
}

double gs_cost_clock_hz(const gs_config *c, gs_engine e)
{
    switch (e) {
    case GS_ENG_TENSOR:
        return c->tensor.clock.v;
    case GS_ENG_VECTOR:
        return c->vector.clock.v;
    case GS_ENG_SCALAR:
        return c->scalar.clock.v;
    case GS_ENG_GPSIMD:
        return c->gpsimd.clock.v;
    default:
        return 0.0;
    }
}

int gs_cost_act_uses_table(gs_act f)
{
    switch (f) {
    case GS_ACT_IDENTITY:
    case GS_ACT_RELU:
    case GS_ACT_SQUARE:
    case GS_ACT_ABS:
        return 0;
    default:
        return 1;
    }
}

/* ---- operand classification ---- */

static int is_reduction(gs_opcode op)
{
    return op == GS_OP_TENSOR_REDUCE || op == GS_OP_BN_STATS || op == GS_OP_BN_AGGR ||
           op == GS_OP_PARTITION_REDUCE;
}

static int in_used(const gs_instr *in, int i)
{
    return i < in->n_in && i < GS_INSTR_MAX_IN && in->in[i]->tensor >= 0;
}

static int out_used(const gs_instr *in, int i)
{
    return i < in->n_out && i < GS_INSTR_MAX_OUT && in->out[i]->tensor >= 0;
}

/* The top-k selection instructions (ops_topk.c). */
static int is_topk8(gs_opcode op)
{
    return op == GS_OP_MAX8 || op == GS_OP_FIND_INDEX8 || op == GS_OP_MATCH_REPLACE8;
}

/* Is input i a per-partition [P,1] side operand rather than a streamed tile? */
static int in_is_side(const gs_instr *in, int i)
{
    switch (in->op) {
    case GS_OP_ACTIVATION:
    case GS_OP_TENSOR_SCALAR:
    case GS_OP_EXPONENTIAL:
        return (i == 1 && (in->flags & GS_F_SCALE_AP)) || (i == 2 && (in->flags & GS_F_BIAS_AP));
    case GS_OP_GATHER:
        return i == 1;
    case GS_OP_TENSOR_TENSOR_SCAN:
    case GS_OP_TENSOR_TENSOR: /* scalar_tensor_tensor's operand0 column */
        return i == 2 && (in->flags & GS_F_BIAS_AP);
    default:
        return 0;
    }
}

static int out_is_side(const gs_instr *in, int i)
{
    return (in->op == GS_OP_ACTIVATION || in->op == GS_OP_EXPONENTIAL) && i == 1;
}

static int alu_is_slow(gs_alu op)
{
    return op == GS_ALU_DIV || op == GS_ALU_POW;
}

static int uses_slow_op(const gs_instr *in)
{
    switch (in->op) {
    case GS_OP_TENSOR_TENSOR:
        return alu_is_slow(in->alu0) || ((in->flags & GS_F_HAS_OP1) && alu_is_slow(in->alu1));
    case GS_OP_TENSOR_TENSOR_SCAN:
        return alu_is_slow(in->alu0) || alu_is_slow(in->alu1);
    case GS_OP_TENSOR_SCALAR:
        return alu_is_slow(in->alu0) || ((in->flags & GS_F_HAS_OP1) && alu_is_slow(in->alu1));
    case GS_OP_ACTIVATION:
        /* On the scalar engine reciprocal is a table function; elsewhere it is a divide. */
        return in->act == GS_ACT_RECIPROCAL && in->engine == GS_ENG_VECTOR;
    default:
        return 0;
    }
}

/* ---- compute engines ---- */

static double tensor_cycles(const gs_config *c, const gs_instr *in)
{
    const gs_tensor_cfg *t = &c->tensor;
    double K = in->in[0]->part_count;
    double M = (double)gs_ap_free_elems(in->in[0]);
    double N, rate;
    if (in->op == GS_OP_MATMUL || in->op == GS_OP_MATMUL_MX) {
        /* matmul_mx: M and N in x4 columns, each at rate(x4) columns per cycle */
        N = (double)gs_ap_free_elems(in->in[1]);
        rate = GS_MIN(t->rate[in->in[0]->dtype].v, t->rate[in->in[1]->dtype].v);
    } else {
        /* transpose: the input is stationary, a [P x P] identity of its dtype is moving. */
        N = K;
        rate = t->rate[in->in[0]->dtype].v;
    }
    /* An unsupported dtype is rejected by the kernel builder; never divide by zero. */
    if (!(rate > 0.0)) rate = 1.0;
    double passes = 1.0;
    if (t->rows.v > 0.0 && K > t->rows.v) passes *= ceil(K / t->rows.v);
    if (t->cols.v > 0.0 && M > t->cols.v) passes *= ceil(M / t->cols.v);
    double formula = passes * GS_MAX(GS_MIN(t->stationary_load.v, M), N / rate);
    return GS_MAX(t->min_ii.v, formula) + t->fixed_overhead.v;
}

/* The streamed operands of a SIMD instruction: partitions P, free size N, the engine's elements
 * per cycle for their dtypes (the slowest), how many inputs stream, and whether one is in PSUM. */
typedef struct simd_shape {
    double P, N, epc;
    int streamed_inputs, psum;
} simd_shape;

static simd_shape simd_operands(const gs_simd_cfg *e, const gs_instr *in)
{
    simd_shape s = {0.0, 0.0, 0.0, 0, 0};
    for (int i = 0; i < GS_INSTR_MAX_IN; i++) {
        if (!in_used(in, i)) continue;
        const gs_ap *a = in->in[i];
        if (a->space == GS_MEM_PSUM) s.psum = 1;
        if (in_is_side(in, i)) continue;
        s.streamed_inputs++;
        s.P = GS_MAX(s.P, (double)a->part_count);
        s.N = GS_MAX(s.N, (double)gs_ap_free_elems(a));
        double r = e->elems_per_cycle[a->dtype].v;
        if (r > 0.0 && (s.epc == 0.0 || r < s.epc)) s.epc = r;
    }
    for (int i = 0; i < GS_INSTR_MAX_OUT; i++) {
        if (!out_used(in, i) || out_is_side(in, i)) continue;
        const gs_ap *a = in->out[i];
        s.P = GS_MAX(s.P, (double)a->part_count);
        s.N = GS_MAX(s.N, (double)gs_ap_free_elems(a));
        double r = e->elems_per_cycle[a->dtype].v;
        if (r > 0.0 && (s.epc == 0.0 || r < s.epc)) s.epc = r;
    }
    if (is_reduction(in->op) && in_used(in, 0)) s.N = (double)gs_ap_free_elems(in->in[0]);
    if (is_topk8(in->op) && in_used(in, 0)) {
        /* max8 / find_index8 / match_replace8: one pass over the data operand at the fp32
         * rate, whatever its dtype (the NKI ISA max8 page, v2.26: "N engine cycles", N the
         * elements per partition; the input is converted to fp32 internally); the 8 values
         * and the indices are side operands [assumed: the find_index8 and match_replace8
         * pages give no cost; the same single pass as max8, which reads the same data] */
        s.N = (double)gs_ap_free_elems(in->in[0]);
        s.epc = e->elems_per_cycle[GS_FP32].v;
        s.streamed_inputs = 1;
    }
    /* No supported dtype among the operands: the builder rejects it; cost one per cycle. */
    if (s.epc == 0.0) s.epc = 1.0;
    return s;
}

/* Is a streamed operand eligible for the vector performance mode: in SBUF, contiguous
 * innermost (stride 1, or a single element), and of a dtype with a mode rate (returned, else
 * 0)? */
static double perf_mode_rate(const gs_simd_cfg *e, const gs_ap *a)
{
    if (a->space != GS_MEM_SBUF || a->ndim < 1) return 0.0;
    const unsigned last = (unsigned)a->ndim - 1;
    if (a->stride[last] != 1 && a->shape[last] > 1) return 0.0;
    return e->perf_mode_epc[a->dtype].v;
}

/* The performance-mode rate of a tensor_copy / tensor_scalar whose streamed operands all
 * qualify (the slowest of their rates), or 0 when the instruction does not run in the mode. */
static double perf_mode_epc(const gs_simd_cfg *e, const gs_instr *in)
{
    if (in->engine != GS_ENG_VECTOR ||
        (in->op != GS_OP_TENSOR_COPY && in->op != GS_OP_TENSOR_SCALAR))
        return 0.0;
    double epc = 0.0;
    int any = 0;
    for (int i = 0; i < GS_INSTR_MAX_IN + GS_INSTR_MAX_OUT; i++) {
        const int is_in = i < GS_INSTR_MAX_IN, k = is_in ? i : i - GS_INSTR_MAX_IN;
        if (is_in ? (!in_used(in, k) || in_is_side(in, k))
                  : (!out_used(in, k) || out_is_side(in, k)))
            continue;
        const double r = perf_mode_rate(e, is_in ? in->in[k] : in->out[k]);
        if (!(r > 0.0)) return 0.0;
        epc = any ? GS_MIN(epc, r) : r;
        any = 1;
    }
    return any ? epc : 0.0;
}

static double simd_cycles(const gs_config *c, const gs_instr *in, gs_cost_state *st)
{
    const gs_simd_cfg *e = simd_cfg(c, in->engine);
    const simd_shape sh = simd_operands(e, in);
    const double fast = perf_mode_epc(e, in);
    const double P = sh.P, N = sh.N, epc = fast > 0.0 ? fast : sh.epc;
    const int streamed_inputs = sh.streamed_inputs, psum = sh.psum;

    double formula;
    if (in->op == GS_OP_GATHER) {
        double rows = out_used(in, 0) ? (double)in->out[0]->part_count : 0.0;
        formula = rows * e->gather_row_cycles.v;
    } else {
        double passes = e->lanes.v > 0.0 ? ceil(P / e->lanes.v) : P;
        formula = passes * N / epc;
        if (streamed_inputs >= 2) formula *= factor(&e->two_input_factor);
        if (uses_slow_op(in)) formula *= factor(&e->slow_op_factor);
        if (psum) formula *= factor(&e->psum_read_factor);
        if (in->op == GS_OP_PARTITION_REDUCE || in->op == GS_OP_PARTITION_BROADCAST)
            formula *= factor(&e->cross_partition_factor);
        /* tensor_tensor_scan: each element depends on the previous one, so a lane retires at
         * most one element per cycle whatever the dtype's streaming rate [assumed: the ISA page
         * gives no scan cost; the vector engine's one element per cycle per lane]. */
        if (in->op == GS_OP_TENSOR_TENSOR_SCAN && epc > 1.0) formula *= epc;
    }
    double cycles = GS_MAX(e->min_ii.v, formula) + e->fixed_overhead.v;

    if (in->op == GS_OP_ACTIVATION && in->engine == GS_ENG_SCALAR &&
        gs_cost_act_uses_table(in->act)) {
        if (!st || st->act_loaded != (int)in->act) cycles += e->table_load.v;
        if (st) st->act_loaded = (int)in->act;
    }
    return cycles;
}

double gs_cost_compute_cycles(const gs_config *c, const gs_instr *in, gs_cost_state *st)
{
    /* the family's cost override first (gs/family.h); NULL hook or 0: the formulas here */
    const gs_family *f = gs_family_find(c->family);
    double cy;
    if (f && f->compute_cycles && f->compute_cycles(c, in, &cy)) return cy;
    switch (in->engine) {
    case GS_ENG_TENSOR:
        return tensor_cycles(c, in);
    case GS_ENG_VECTOR:
    case GS_ENG_SCALAR:
    case GS_ENG_GPSIMD:
        return simd_cycles(c, in, st);
    default:
        return 0.0;
    }
}

double gs_cost_compute_ns(const gs_config *c, const gs_instr *in, gs_cost_state *st)
{
    double cycles = gs_cost_compute_cycles(c, in, st);
    double hz = gs_cost_clock_hz(c, in->engine);
    /* A validated config has positive clocks; charge 1 ns per cycle rather than divide by 0. */
    if (!(hz > 0.0)) return cycles;
    return cycles * GS_NS_PER_S / hz;
}

double gs_cost_peak_ns(const gs_config *c, const gs_instr *in)
{
    if (in->engine == GS_ENG_TENSOR) {
        const double tf = gs_cost_tensor_flops(in);
        double peak = 0.0;
        for (int k = 0; k < in->n_in && k < 2; ++k)
            peak = GS_MAX(peak, gs_config_peak_flops(c, in->in[k]->dtype));
        return tf > 0.0 && peak > 0.0 ? tf / peak * GS_NS_PER_S : 0.0;
    }
    const gs_simd_cfg *e = simd_cfg(c, in->engine);
    if (!e || !(e->lanes.v > 0.0) || !(e->clock.v > 0.0)) return 0.0;
    if (in->op == GS_OP_GATHER) {
        /* the engine's share of a gather: a descriptor per gathered row (its data movement is
         * the memory bound's) */
        double rows = out_used(in, 0) ? (double)in->out[0]->part_count : 0.0;
        return rows * e->gather_row_cycles.v / e->clock.v * GS_NS_PER_S;
    }
    const simd_shape sh = simd_operands(e, in);
    /* every element once at the full width and this dtype's rate (the performance mode's where
     * it applies): no initiation interval, startup, pass rounding or operand factors, so never
     * more than the cost model charges */
    const double fast = perf_mode_epc(e, in), epc = fast > 0.0 ? fast : sh.epc;
    return sh.P * sh.N / (e->lanes.v * epc) / e->clock.v * GS_NS_PER_S;
}

/* ---- DMA ---- */

/* The side that decides the split: the SBUF/PSUM side (destination first); NULL for
 * HBM->HBM. */
static const gs_ap *local_side(const gs_instr *in)
{
    if (in->n_out > 0 && in->out[0]->space != GS_MEM_HBM) return in->out[0];
    if (in->n_in > 0 && in->in[0]->space != GS_MEM_HBM) return in->in[0];
    return NULL;
}

static int same_share(const gs_dma_share *a, const gs_dma_share *b)
{
    return a->bytes == b->bytes && a->eff_bytes == b->eff_bytes && a->descriptors == b->descriptors;
}

/* gs_dma_plan.same_run from the shares, last engine first. */
static void plan_runs(gs_dma_plan *r)
{
    for (unsigned e = r->n_engines; e-- > 0;)
        r->same_run[e] =
            (uint8_t)(e + 1 < r->n_engines && same_share(&r->share[e], &r->share[e + 1])
                          ? r->same_run[e + 1] + 1
                          : 1);
}

void gs_cost_dma_plan(const gs_config *c, const gs_instr *in, gs_dma_plan *r)
{
    const gs_dma_cfg *d = &c->dma;
    const gs_ap *src = in->in[0], *dst = in->out[0];
    memset(r, 0, sizeof *r);
    unsigned E = d->engines.v >= 1 ? (unsigned)d->engines.v : 1u;
    if (E > GS_MAX_QUEUES) E = GS_MAX_QUEUES;
    r->n_engines = E;
    /* a converting copy streams the larger side [assumed: no published cast cost]; a gather's
     * source is its whole table, of which it moves the destination's bytes */
    r->bytes = (double)(in->op == GS_OP_DMA_COPY ? GS_MAX(gs_ap_bytes(dst), gs_ap_bytes(src))
                                                 : gs_ap_bytes(dst));
    r->engine_bw = d->bandwidth_per_engine.v;
    if (in->op == GS_OP_DMA_TRANSPOSE) r->engine_bw /= factor(&d->transpose_factor);
    r->fixed_ns = d->fixed_latency.v;
    const int gather = in->op == GS_OP_GATHER;
    r->issue_ns = gather ? 0.0 : d->issue_latency.v;
    r->descriptor_ns = (gather || d->hw_descriptors) ? 0.0 : d->descriptor_overhead.v;
    r->hbm = src->space == GS_MEM_HBM || dst->space == GS_MEM_HBM;

    const uint64_t rows = dst->part_count;
    if (rows == 0 || !(r->bytes > 0.0)) {
        plan_runs(r);
        return;
    }
    const double runs = (double)GS_MAX(gs_ap_runs_per_row(src), gs_ap_runs_per_row(dst));
    const double row_bytes = r->bytes / (double)rows;
    const double chunk = runs > 0.0 ? row_bytes / runs : row_bytes;
    const double row_eff = runs * GS_MAX(chunk, d->min_efficient_chunk.v);
    const gs_ap *side = local_side(in);
    const unsigned ppe = gs_config_dma_partitions_per_engine(c);
    /* Rows per engine. SBUF/PSUM side: partition p is served by engine (p / ppe) mod E, walked
     * one partition group at a time; HBM->HBM: rows round robin over the engines. */
    double count[GS_MAX_QUEUES] = {0};
    if (side) {
        uint64_t p = side->part_start;
        const uint64_t end = p + rows;
        /* group g = p / ppe and its engine g mod E, stepped without a division per group */
        uint64_t g = p / ppe;
        unsigned e = (unsigned)(g % E);
        while (p < end) {
            const uint64_t group_end = GS_MIN(end, (g + 1) * ppe);
            count[e] += (double)(group_end - p);
            p = group_end;
            ++g;
            if (++e == E) e = 0;
        }
    } else {
        for (unsigned e = 0; e < E; ++e)
            /* whole rows per engine, the remainder spread one each */
            /* NOLINTNEXTLINE(bugprone-integer-division) */
            count[e] = (double)(rows / E + (e < rows % E ? 1 : 0));
    }
    for (unsigned e = 0; e < E; ++e) {
        r->share[e].bytes = count[e] * row_bytes;
        r->share[e].eff_bytes = count[e] * row_eff;
        r->share[e].descriptors = count[e] * runs;
    }
    /* summed in locals (in engine order, as before): through *r every add waited for the
     * previous store */
    unsigned used = 0;
    double eff = 0.0, descriptors = 0.0;
    for (unsigned e = 0; e < E; ++e) {
        if (!(r->share[e].bytes > 0.0)) continue;
        used++;
        eff += r->share[e].eff_bytes;
        descriptors += r->share[e].descriptors;
    }
    r->engines_used = used;
    r->eff_bytes = eff;
    r->descriptors = descriptors;
    plan_runs(r);
}

/* Every field of a pattern but its offset and tensor (gs_cost_dma_plan reads neither). */
static int same_ap_shape(const gs_ap *a, const gs_ap *b)
{
    if (a->part_stride != b->part_stride || a->part_start != b->part_start ||
        a->part_count != b->part_count || a->core != b->core || a->space != b->space ||
        a->dtype != b->dtype || a->ndim != b->ndim || a->bad_view != b->bad_view)
        return 0;
    for (int k = 0; k < GS_AP_MAX_DIMS; k++)
        if (a->shape[k] != b->shape[k] || a->stride[k] != b->stride[k]) return 0;
    return 1;
}

int gs_cost_dma_same_shape(const gs_instr *a, const gs_instr *b)
{
    return a->op == b->op && a->n_in == b->n_in && a->n_out == b->n_out &&
           same_ap_shape(a->in[0], b->in[0]) && same_ap_shape(a->out[0], b->out[0]);
}

double gs_dma_share_ns(const gs_dma_plan *p, unsigned e)
{
    if (e >= p->n_engines || !(p->share[e].bytes > 0.0)) return 0.0;
    const gs_dma_share *s = &p->share[e];
    double t = p->fixed_ns + s->descriptors * p->descriptor_ns;
    if (p->engine_bw > 0.0) t += s->eff_bytes / p->engine_bw;
    return t;
}

double gs_dma_plan_uncontended_ns(const gs_dma_plan *p)
{
    double worst = 0.0;
    for (unsigned e = 0; e < p->n_engines; ++e)
        worst = GS_MAX(worst, gs_dma_share_ns(p, e));
    return p->issue_ns + worst;
}

/* ---- statistics ---- */

static double out_elems(const gs_instr *in)
{
    return (double)in->out[0]->part_count * (double)gs_ap_free_elems(in->out[0]);
}

double gs_cost_tensor_flops(const gs_instr *in)
{
    if (in->op != GS_OP_MATMUL && in->op != GS_OP_MATMUL_MX) return 0.0;
    double K = in->in[0]->part_count;
    double M = (double)gs_ap_free_elems(in->in[0]);
    double N = (double)gs_ap_free_elems(in->in[1]);
    if (in->op == GS_OP_MATMUL_MX) return 2.0 * (4.0 * K) * M * N; /* four values per element */
    if (in->flags & GS_F_DOUBLE_ROW) return 2.0 * (2.0 * K) * (M / 2.0) * (N / 2.0);
    return 2.0 * K * M * N;
}

double gs_cost_flops(const gs_instr *in)
{
    switch (in->op) {
    case GS_OP_MATMUL:
    case GS_OP_MATMUL_MX:
        return gs_cost_tensor_flops(in);
    /* Pure data movement: no arithmetic (transpose multiplies by an identity, but that is an
     * implementation detail, not useful work). */
    case GS_OP_DMA_COPY:
    case GS_OP_DMA_TRANSPOSE:
    case GS_OP_TRANSPOSE:
    case GS_OP_TENSOR_COPY:
    case GS_OP_MEMSET:
    case GS_OP_PARTITION_BROADCAST:
    case GS_OP_GATHER:
    case GS_OP_STREAM_SHUFFLE:
        return 0.0;
    /* Reductions do one operation per element read. */
    case GS_OP_TENSOR_REDUCE:
    case GS_OP_BN_STATS:
    case GS_OP_BN_AGGR:
    case GS_OP_PARTITION_REDUCE:
    /* the top-k selections compare every element they read once */
    case GS_OP_MAX8:
    case GS_OP_FIND_INDEX8:
    case GS_OP_MATCH_REPLACE8:
        return (double)in->in[0]->part_count * (double)gs_ap_free_elems(in->in[0]);
    default:
        if (in->n_out == 0) return 0.0;
        return out_elems(in);
    }
}

double gs_cost_hbm_bytes(const gs_instr *in)
{
    switch (in->op) {
    case GS_OP_DMA_COPY:
    case GS_OP_DMA_TRANSPOSE:
    case GS_OP_GATHER:
        /* the HBM side's bytes (a converting copy's two sides differ) */
        if (in->op == GS_OP_DMA_COPY && in->out[0]->space != GS_MEM_HBM &&
            in->in[0]->space == GS_MEM_HBM)
            return (double)gs_ap_bytes(in->in[0]);
        if (in->in[0]->space == GS_MEM_HBM || in->out[0]->space == GS_MEM_HBM)
            return (double)gs_ap_bytes(in->out[0]);
        return 0.0;
    default:
        return 0.0;
    }
}

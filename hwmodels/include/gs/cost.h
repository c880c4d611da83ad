/*
 * gs/cost.h - the cost model: how long each instruction takes, from config parameters only.
 * Pure C, one function per instruction class; the SystemC layer calls these and annotates the
 * time (STYLE.md: "what happens" in gs/exec.h, "how long" here).
 *
 * The config's family may price an instruction itself (gs/family.h, compute_cycles: gen3/gen4
 * double-row matmul, gen4 quantize_mx); everything else uses the formulas below.
 * Compute engines (tensor, vector, scalar, gpsimd): cycles of that engine's clock,
 *   cycles = max(min_ii, formula) + fixed_overhead, where formula is
 *   - matmul:     max(min(stationary_load, M), N / rate(dtype))   (M stationary free, N moving)
 *   - matmul_mx:  the same in x4 elements (rate(x4 dtype) per x4 column; four values each)
 *   - transpose:  as a matmul with the input stationary and a [P x P] identity moving
 *   - elementwise/reduce/copy/activation/...: ceil(P / lanes) * N / elems_per_cycle(dtype)
 *                 x two_input_factor (two tensor inputs) x slow_op_factor (divide, pow)
 *                 x psum_read_factor (input in PSUM) x cross_partition_factor (partition ops)
 *   - activation: + table_load when the function differs from the engine's previous one
 *   - gather:     P * gather_row_cycles, plus a DMA-like transfer (gs_cost_gather_transfer)
 *   elems_per_cycle(dtype) is the smallest over the instruction's operand dtypes.
 *   Operands here are the streamed tiles: per-partition [P,1] operands (activation scale/bias
 *   APs, tensor_scalar operand APs), the activation's accumulate output and the gather index
 *   neither count as a second input nor set P, N or the dtype (a PSUM one does trigger
 *   psum_read_factor). table_load is added after the min_ii floor. A factor left unset (0) in
 *   the config counts as 1. slow_op_factor: tensor_tensor / tensor_scalar with div or pow, and
 *   activation reciprocal on the vector engine.
 * DMA (see gs_dma_plan): a transfer is split over the core's DMA engines by SBUF partition
 *   group (partitions_per_engine partitions each; HBM->HBM: rows round robin). Each engine's
 *   share costs fixed_latency + descriptors x descriptor_overhead (not charged when descriptors
 *   are made by hardware) + eff_bytes / bandwidth_per_engine, and the transfer starts
 *   issue_latency after its trigger (the engines are free meanwhile). Descriptors = rows x
 *   contiguous runs per row (of the less contiguous side); a descriptor smaller than
 *   min_efficient_chunk costs min_efficient_chunk bytes. HBM bandwidth is shared by every
 *   engine of every core (the SystemC layer).
 *
 * Not modelled: bank conflicts inside SBUF, engine-internal pipelining beyond min_ii, DMA
 * queue arbitration priorities.
 */
#ifndef GS_COST_H
#define GS_COST_H

#include "gs/config.h"
#include "gs/isa.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-engine state the cost depends on (the scalar engine's loaded function table). */
typedef struct gs_cost_state {
    int act_loaded; /* gs_act of the loaded table, or -1 */
} gs_cost_state;
void gs_cost_state_init(gs_cost_state *s);

/* Does activation function f need a function table on the scalar engine? identity, relu,
 * square and abs are computed by the ALU datapath: they never cost a table load and leave the
 * loaded table in place. Every other function loads its table when it is not the loaded one.
 * tensor_copy / tensor_scalar on the scalar engine never touch the table. */
int gs_cost_act_uses_table(gs_act f);

/* Clock of an engine in Hz (DMA: 0). */
double gs_cost_clock_hz(const gs_config *c, gs_engine e);

/* Compute-engine instruction cost in cycles of its engine's clock. Updates *st (table loads).
 * Must not be called for DMA instructions. */
double gs_cost_compute_cycles(const gs_config *c, const gs_instr *in, gs_cost_state *st);
/* The same in ns. */
double gs_cost_compute_ns(const gs_config *c, const gs_instr *in, gs_cost_state *st);
/* The least time an instruction's work can take on its compute engine at the engine's peak
 * rate for its dtypes (the roofline's compute ceiling): matmul FLOPs / peak FLOP/s; SIMD
 * elements (P x N streamed) / (lanes x elems_per_cycle x clock); a gather's descriptor per row
 * (gather_row_cycles; its bytes are the memory bound's); 0 for work the ceiling does not count
 * (transpose). Never more than gs_cost_compute_ns. */
double gs_cost_peak_ns(const gs_config *c, const gs_instr *in);

/* One engine's share of a transfer. */
typedef struct gs_dma_share {
    double bytes;       /* bytes this engine moves */
    double eff_bytes;   /* bytes charged against its bandwidth (small descriptors cost more) */
    double descriptors; /* contiguous runs it processes */
} gs_dma_share;

/* How a DMA transfer (dma_copy, dma_transpose, or the transfer part of a gather) runs. */
typedef struct gs_dma_plan {
    double bytes;          /* bytes actually moved (all engines) */
    double eff_bytes;      /* sum of the shares' eff_bytes */
    double descriptors;    /* sum of the shares' descriptors */
    double issue_ns;       /* trigger to the shares starting (engines not busy) */
    double fixed_ns;       /* per share, engine busy */
    double descriptor_ns;  /* per descriptor, engine busy (0 with hardware descriptors) */
    double engine_bw;      /* bytes per ns of one engine for this transfer */
    int hbm;               /* reads or writes HBM (shares chip bandwidth) */
    unsigned engines_used; /* engines with a non-empty share */
    unsigned n_engines;    /* engines of the core (size of share[]) */
    gs_dma_share share[GS_MAX_QUEUES]; /* by engine index; empty shares have 0 bytes */
    /* same_run[e]: how many shares from e on (e included, up to n_engines) equal share[e] in all
     * three fields, so that the DMA model finds a run of engines with one share without
     * comparing them on every transfer that reuses the plan */
    uint8_t same_run[GS_MAX_QUEUES];
} gs_dma_plan;

/* Plan a dma_copy / dma_transpose (or the transfer of a gather: issue_ns and descriptor_ns
 * are 0 there, because the gpsimd engine generates the descriptors and that is charged as its
 * compute, gather_row_cycles). */
void gs_cost_dma_plan(const gs_config *c, const gs_instr *in, gs_dma_plan *plan);
/* Whether gs_cost_dma_plan gives `a` and `b` the same plan because everything it reads of them
 * is equal (they may differ in what it does not read: the HBM offset and the tensor or buffer).
 * A DMA queue keeps its last plan for the next transfer of the same shape (a loop's loads). */
int gs_cost_dma_same_shape(const gs_instr *a, const gs_instr *b);
/* Uncontended engine-busy time of one share (ns); 0 for an empty share. */
double gs_dma_share_ns(const gs_dma_plan *p, unsigned engine);
/* Uncontended time of the whole transfer from its trigger, with every engine free: issue plus
 * the slowest share. */
double gs_dma_plan_uncontended_ns(const gs_dma_plan *p);

/* FLOPs and bytes of an instruction for statistics and rooflines.
 * matmul: 2*K*M*N (double row: K = 2 x partitions; matmul_mx: K = 4 x partitions); data movement
 * (DMA, transpose, tensor_copy, memset, partition_broadcast, gather): 0; reductions (tensor_reduce,
 * bn_stats, bn_aggr, partition_reduce): one per input element; other elementwise ops: one per
 * output element. */
double gs_cost_flops(const gs_instr *in);
/* The part of gs_cost_flops that runs on the tensor engine (matmul only): what is compared
 * with gs_config_peak_flops. A matmul never takes less than tensor_flops / peak_flops. */
double gs_cost_tensor_flops(const gs_instr *in);
/* Bytes an instruction moves between HBM and the core (DMA/gather only; 0 otherwise). */
double gs_cost_hbm_bytes(const gs_instr *in);

#ifdef __cplusplus
}
#endif
#endif

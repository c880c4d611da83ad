/*
 * gs/model.h - C facade over the SystemC TLM-2.0 model of a chip: create a model from a
 * validated config, run a program (functional + timing, or timing-only), read statistics,
 * destroy. Usable from C (harness, tests) without any SystemC include.
 *
 * SystemC elaborates once per process and cannot be reset, so a process runs at most one
 * program through gs_model_run(); a second call fails with GS_ERR_USAGE. gs_model_run_isolated()
 * runs in a forked child and returns its results, for callers (tests) that need several runs
 * in one process.
 */
#ifndef GS_MODEL_H
#define GS_MODEL_H

#include "gs/common.h"
#include "gs/config.h"
#include "gs/exec.h"
#include "gs/isa.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_engine_stats {
    double busy_ns;       /* executing instructions */
    double stall_dep_ns;  /* waiting for a dependency on a compute engine (incl. semaphore) */
    double stall_dma_ns;  /* waiting for a dependency that is a DMA transfer */
    double stall_port_ns; /* waiting for a memory port / HBM bandwidth */
    uint64_t instructions;
} gs_engine_stats;

typedef struct gs_queue_stats {
    double busy_ns; /* sum of its transfers' spans (trigger to last share done) */
    double bytes;
    uint64_t transfers;
} gs_queue_stats;

typedef struct gs_dma_engine_stats {
    double busy_ns; /* serving shares */
    double bytes;
    uint64_t shares;
} gs_dma_engine_stats;

typedef struct gs_run_stats {
    double total_ns;                       /* simulated time from start to last completion */
    double engine_cycles[GS_ENGINE_COUNT]; /* total_ns in cycles of each engine's clock */
    unsigned cores_used;
    unsigned queues_per_core;      /* DMA queue IDs */
    unsigned dma_engines_per_core; /* DMA engines */
    /* DMA row: busy = the engines' busy time / engines (the pool's occupancy), stalls summed
     * over the queues */
    gs_engine_stats engine[GS_MAX_CORES][GS_ENGINE_COUNT];
    gs_engine_stats engine_total[GS_ENGINE_COUNT]; /* summed over cores */
    gs_queue_stats queue[GS_MAX_CORES][GS_MAX_QUEUES];
    gs_dma_engine_stats dma_engine[GS_MAX_CORES][GS_MAX_QUEUES];
    uint64_t instructions;
    double flops;                /* matmul/transpose FLOPs on the tensor engines */
    double hbm_bytes;            /* bytes read + written in HBM */
    double dma_bytes;            /* bytes moved by all DMA queues */
    double peak_flops;           /* chip peak for the program's matmul dtype(s) */
    double peak_hbm_bytes_per_s; /* chip HBM bandwidth */
    double achieved_flops;       /* flops / total time */
    double achieved_hbm_bytes_per_s;
    /* The roofline, on the machine's ceilings for the cores the run uses (see gs_roofline in
     * model.cpp's collect_stats): compute = the work of each compute engine at its peak rate
     * (tensor FLOP/s; vector/scalar/gpsimd elements per second), the slowest engine of the
     * slowest core; memory = min(HBM bandwidth, cores_used x DMA engines x per-engine rate). */
    double compute_bound_ns;        /* the compute ceiling's time for the work done */
    double memory_bound_ns;         /* the schedule's traffic: max(hbm_bytes / HBM, dma_bytes /
                                       DMA ceiling) */
    double roofline_ns;             /* max(compute_bound_ns, memory_bound_ns) */
    double roofline_ratio;          /* total_ns / roofline_ns (>= 1: nothing beats physics) */
    double min_traffic_bytes;       /* the problem's minimum: each input read once, each output
                                       written once (a partly read input counts what was read) */
    double min_memory_bound_ns;     /* min_traffic_bytes / memory ceiling */
    double min_roofline_ns;         /* max(compute_bound_ns, min_memory_bound_ns) */
    double min_roofline_ratio;      /* total_ns / min_roofline_ns (>= 1) */
    double compute_ceiling_flops;   /* tensor peak (the run's dtype) x cores used; 0: no matmul */
    double dma_ceiling_bytes_per_s; /* cores_used x engines x per-engine bandwidth */
    double hbm_ceiling_bytes_per_s; /* chip HBM bandwidth */
    double memory_ceiling_bytes_per_s; /* min of the two */
    unsigned compute_engines; /* bit (1u << gs_engine) of each compute engine the run used */
    gs_engine bottleneck;     /* engine class dominating the critical path */
    char bottleneck_name[32]; /* "tensor", "vector", ..., "dma", "hbm" */
    double critical_path_ns[GS_ENGINE_COUNT]; /* critical-path time attributed per engine */
    double critical_path_hbm_ns; /* critical-path time spent waiting for shared HBM bandwidth
                                    (not in critical_path_ns; the parts sum to total_ns) */
    uint64_t sbuf_high_water;    /* bytes per partition */
    uint64_t psum_high_water;
    /* Instruction 0, for micro-benchmarks: trigger (dependencies met), start of its work (for
     * a transfer: its first engine share, after the issue latency), end, and the DMA engines it
     * used (0 when it is not a transfer). All 0 when the program is empty or it did not run. */
    double first_trigger_ns, first_start_ns, first_end_ns;
    unsigned first_engines_used;
    double wall_s; /* host wall-clock seconds of the simulation */
} gs_run_stats;

typedef struct gs_run_opts {
    int functional;         /* 1: move and compute real data (mem required); 0: timing only */
    double sim_limit_ns;    /* stop with GS_ERR_TIMEOUT past this simulated time (0: none) */
    double wall_limit_s;    /* ... or this much host time (0: none) */
    const char *trace_path; /* Chrome/Perfetto trace-event JSON, or NULL */
} gs_run_opts;

typedef struct gs_model gs_model;

gs_model *gs_model_create(const gs_config *cfg, gs_error *err);
void gs_model_free(gs_model *m); /* NULL ok */

/* Run program p. In functional mode `mem` holds inputs before and outputs after. On deadlock
 * returns GS_ERR_DEADLOCK with err naming the waiting instructions (and their source lines);
 * statistics are filled as far as the run got. */
gs_status gs_model_run(gs_model *m, const gs_program *p, gs_mem *mem, const gs_run_opts *opts,
                       gs_run_stats *stats, gs_error *err);

/* Create a model and run in a forked child; stats, err and (functional mode) the output tensors'
 * bytes come back to the parent's mem. A crash of the child is GS_ERR_INTERNAL. */
gs_status gs_model_run_isolated(const gs_config *cfg, const gs_program *p, gs_mem *mem,
                                const gs_run_opts *opts, gs_run_stats *stats, gs_error *err);

#ifdef __cplusplus
}
#endif
#endif

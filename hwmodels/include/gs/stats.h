/*
 * gs/stats.h - the statistics of a run, computed in plain C from its timeline: what every
 * instruction did (start, end, HBM wait, owning stream, the predecessor that set its start)
 * and what every stream and DMA engine accumulated. The SystemC model fills a gs_timeline
 * while it simulates and calls gs_run_stats_compute() at the end; a test can hand-make one.
 *
 * Computed here: engine utilisation and stalls, DMA queue and engine activity, FLOPs and HBM
 * traffic, the roofline on the machine's ceilings and on the problem's minimum traffic, the
 * critical path and the bottleneck; and the deadlock report of a run that stopped early.
 */
#ifndef GS_STATS_H
#define GS_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "gs/common.h"
#include "gs/config.h"
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

/* Bytes read and written in one memory level by the run's instructions (gs_run_stats.level). */
typedef struct gs_level_traffic {
    double read_bytes;
    double write_bytes;
} gs_level_traffic;

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
    /* The roofline, on the machine's ceilings for the cores the run uses (see stats.c):
     * compute = the work of each compute engine at its peak rate
     * (tensor FLOP/s; vector/scalar/gpsimd elements per second), the slowest engine of the
     * slowest core; memory = min(HBM bandwidth, cores_used x DMA engines x per-engine rate). */
    double compute_bound_ns;    /* the compute ceiling's time for the work done */
    double memory_bound_ns;     /* the schedule's traffic: max(hbm_bytes / HBM, dma_bytes /
                                   DMA ceiling) */
    double roofline_ns;         /* max(compute_bound_ns, memory_bound_ns) */
    double roofline_ratio;      /* total_ns / roofline_ns (>= 1: nothing beats physics) */
    double min_traffic_bytes;   /* the problem's minimum: each input read once, each output
                                   written once (a partly read input counts what was read) */
    double min_memory_bound_ns; /* min_traffic_bytes / memory ceiling */
    double min_roofline_ns;     /* max(compute_bound_ns, min_memory_bound_ns) */
    double min_roofline_ratio;  /* total_ns / min_roofline_ns (>= 1) */
    /* The bound per engine: each compute engine's instructions at their minimum cost (the
     * engine's best rate for the op class and dtypes, gs_cost_peak_ns), summed per core, of the
     * slowest core; 0 for an engine the run did not use. bound_ns is the largest of these and
     * the memory bounds (on the schedule's and on the minimum traffic), bound_engine the one it
     * is ("tensor", "vector", "scalar", "gpsimd", "hbm" or "dma"; "" when no bound). */
    double engine_bound_ns[GS_ENGINE_COUNT];
    double bound_ns;
    double bound_ratio; /* total_ns / bound_ns (0 when no bound) */
    char bound_engine[16];
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
    /* What kind of bound the time is (gs_run_stats_label): throughput-bound on the busiest
     * resource when it was occupied for at least GS_THROUGHPUT_SHARE of the run, else
     * latency-bound (dependency chains, issue and completion latency: no resource saturated,
     * the critical path's parts say where the time went). Occupancy: a compute engine's busy
     * time, the DMA engines' (serving, HBM waits excluded, averaged over the core's engines),
     * HBM's bytes at its bandwidth; each over total_ns, of the busiest core. */
    char bound_kind[12];  /* "throughput", "latency" ("" when nothing ran) */
    char busiest[16];     /* "tensor", "vector", "scalar", "gpsimd", "dma" or "hbm" */
    double busiest_share; /* its occupancy, 0..1 */
    /* Traffic per memory level, indexed by gs_memspace (HBM, SBUF, PSUM), over the completed
     * instructions' operands: each input in a level reads its bytes, each output writes its
     * bytes; an accumulating matmul also reads its PSUM output (read-modify-write) and an
     * activation's accumulate output is a write; a gather reads the rows it fetches (the
     * destination's bytes) of its HBM table. Operands, not ports: a transfer between HBM and
     * SBUF is one HBM read and one SBUF write. */
    gs_level_traffic level[GS_MEMSPACE_COUNT];
    uint64_t sbuf_high_water; /* bytes per partition */
    uint64_t psum_high_water;
    /* Instruction 0, for micro-benchmarks: trigger (dependencies met), start of its work (for
     * a transfer: its first engine share, after the issue latency), end, and the DMA engines it
     * used (0 when it is not a transfer). All 0 when the program is empty or it did not run. */
    double first_trigger_ns, first_start_ns, first_end_ns;
    unsigned first_engines_used;
    double wall_s; /* host wall-clock seconds of the simulation */
} gs_run_stats;

/* One instruction of a run. Times are integer picoseconds of simulated time. 32 bytes: one
 * record per instruction of programs of hundreds of thousands (gs_timeline_init bounds the
 * instruction count so that `pred` fits, and the chip's streams so that `stream` does). */
typedef struct gs_timeline_instr {
    uint64_t start_ps;    /* started (a transfer: triggered, its dependencies met) */
    uint64_t end_ps;      /* completed */
    uint64_t hbm_wait_ps; /* of end - start, waiting for shared HBM bandwidth */
    int32_t pred;         /* the instruction whose end set start_ps; -1: none (time 0) */
    uint16_t stream;      /* the stream that ran it (gs_timeline_stream_id) */
    uint8_t done;         /* 1: it completed; the other fields are meaningful only then */
} gs_timeline_instr;

/* What one in-order stream (a compute engine or a DMA queue ID of a core) accumulated. */
typedef struct gs_stream_counters {
    uint64_t busy_ps;      /* occupied, excluding HBM waits */
    uint64_t stall_dep_ps; /* start delayed by a compute-engine dependency (+ semaphore) */
    uint64_t stall_dma_ps; /* ... by a DMA dependency */
    uint64_t hbm_wait_ps;  /* waiting for HBM bandwidth inside its instructions */
    uint64_t instructions;
    double bytes; /* bytes its transfers moved (DMA queues; gather on a compute engine) */
    uint64_t transfers;
} gs_stream_counters;

/* What one DMA engine of a core accumulated. */
typedef struct gs_dma_engine_counters {
    uint64_t busy_ps;     /* serving shares, HBM waits included */
    uint64_t hbm_wait_ps; /* of which waiting for HBM bandwidth */
    double bytes;
    uint64_t shares;
} gs_dma_engine_counters;

/* Where a stream stopped, for the deadlock report (filled when a run ends with instructions
 * left). */
typedef struct gs_stream_wait {
    int64_t instr;      /* the instruction it is stuck at; -1: it finished, or does not exist */
    int64_t waiting_on; /* the dependency that instruction waits for; -1: none */
} gs_stream_wait;

/*
 * The timeline of one run, owned by the caller (gs_timeline_init / gs_timeline_free). Streams
 * are numbered core-major: stream id = core x streams_per_core + k, where k is the gs_engine
 * of a compute engine and GS_ENG_DMA + q for DMA queue ID q; streams_per_core = GS_ENG_DMA +
 * queues. Counters of streams, cores or engines that never ran stay 0.
 */
typedef struct gs_timeline {
    size_t n;             /* instructions (the program's count) */
    unsigned cores;       /* cores of the chip */
    unsigned queues;      /* DMA queue IDs per core */
    unsigned dma_engines; /* DMA engines per core */
    unsigned streams_per_core;
    gs_timeline_instr *instr;    /* [n], by instruction index */
    gs_stream_counters *stream;  /* [cores x streams_per_core], by stream id */
    gs_dma_engine_counters *dma; /* [cores x dma_engines]: core c engine e at c x engines + e */
    gs_stream_wait *wait;        /* [cores x streams_per_core], by stream id (all -1 at init) */
    uint64_t completed;          /* instructions completed */
    /* instruction 0, for micro-benchmarks: when its first DMA share started and on how many
     * engines (0: not a transfer) */
    uint64_t first_share_start_ps;
    unsigned first_engines_used;
} gs_timeline;

/* Sized for n instructions on cores x (compute engines + queues) streams and cores x
 * dma_engines engines, all zero, every pred -1. GS_ERR_INVALID for sizes out of range
 * (cores 1..GS_MAX_CORES, queues and engines 1..GS_MAX_QUEUES, n <= INT32_MAX), GS_ERR_NOMEM. */
gs_status gs_timeline_init(gs_timeline *tl, size_t n, unsigned cores, unsigned queues,
                           unsigned dma_engines, gs_error *err);
void gs_timeline_free(gs_timeline *tl); /* NULL ok; the struct is zeroed */

static inline unsigned gs_timeline_stream_id(const gs_timeline *tl, unsigned core, gs_engine e,
                                             unsigned queue)
{
    return core * tl->streams_per_core +
           (e == GS_ENG_DMA ? (unsigned)GS_ENG_DMA + queue : (unsigned)e);
}
static inline gs_engine gs_timeline_stream_engine(const gs_timeline *tl, unsigned id)
{
    const unsigned k = id % tl->streams_per_core;
    return k >= (unsigned)GS_ENG_DMA ? GS_ENG_DMA : (gs_engine)k;
}

/* GS_ERR_DEADLOCK with err naming the stuck streams (at most 6): the instruction each is stuck
 * at and the dependency it waits for (a later instruction of the same in-order stream, one not
 * completed, or one that does not exist), at the first stuck instruction's source line. */
gs_status gs_timeline_deadlock_error(const gs_timeline *tl, const gs_program *p, gs_error *err);

/* The occupancy at or above which a run is throughput-bound on its busiest resource: a
 * convention, not a hardware number (docs/bound.md): below it no resource is saturated and the
 * time goes to dependency chains and latencies. */
#define GS_THROUGHPUT_SHARE 0.75

/* The bound kind as one line: "throughput-bound on dma (busy 91%)" or "latency-bound
 * (critical path: dma 55%, scalar 30%, vector 9%)" (the critical path's parts of at least 5%,
 * at most three, largest first); "none" when nothing ran. Returns buf. */
const char *gs_run_stats_label(const gs_run_stats *st, char *buf, size_t size);

/* Fill st (zeroed first; wall_s stays 0) from the timeline of program p run on cfg. The
 * critical path starts at the last instruction to finish and follows pred. GS_ERR_INVALID
 * when the timeline does not fit the program or config (instruction count, a core, stream or
 * predecessor out of range). */
gs_status gs_run_stats_compute(const gs_config *cfg, const gs_program *p, const gs_timeline *tl,
                               gs_run_stats *st, gs_error *err);

#ifdef __cplusplus
}
#endif
#endif

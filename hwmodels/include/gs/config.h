/*
 * gs/config.h - a validated generation description, loaded from YAML.
 *
 * A config file (configs/genN.yaml, see configs/SCHEMA.md) describes one accelerator generation:
 * the chip, one core's buffers, its engines and DMA. Every number is a gs_num carrying its value
 * in base units (bytes, bytes per ns (= GB/s), Hz, ns, cycles, plain counts) and its provenance:
 * the source key it was cited with (e.g. "G2", a key of the file's `sources:` map), or
 * "assumed" (with the note the file gave), or "--set" for a command-line override, plus the
 * file:line:col where the value was written.
 *
 * The loader is table-driven: gs_config_fields() lists every key the loader accepts with its
 * unit kind, so docs, validation, show-config and --set all agree.
 *
 * Not modelled here: anything about programs; see gs/isa.h.
 */
#ifndef GS_CONFIG_H
#define GS_CONFIG_H

#include <stdio.h>
#include "gs/common.h"
#include "gs/dtype.h"
#include "gs/engine.h"
#include "gs/units.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One numeric parameter with provenance. */
typedef struct gs_num {
    double v;         /* value in base units (see gs_unit) */
    const char *src;  /* source key ("G2"), "assumed", or "--set"; NULL when never set */
    const char *note; /* free text after "assumed:" (or NULL) */
    const char *file; /* where it was written (owned by the config) */
    int line, col;
} gs_num;

/* Tensor engine: a rows x cols systolic array. */
typedef struct gs_tensor_cfg {
    gs_num rows;                 /* PE rows = max contraction (K) per matmul, <= partitions */
    gs_num cols;                 /* PE cols = max stationary free size (M) */
    gs_num clock;                /* Hz */
    gs_num moving_free_max;      /* max moving free size (N) per matmul, elements */
    gs_num min_ii;               /* minimum initiation interval, cycles */
    gs_num stationary_load;      /* cycles cap for loading weights: max(min(this, M), N) */
    gs_num fixed_overhead;       /* cycles per instruction on top of the formula */
    gs_num rate[GS_DTYPE_COUNT]; /* moving columns per cycle relative to bf16 (1.0); v==0 or
                                    src==NULL: dtype not supported by matmul */
    int double_row;              /* fp8 "double row" matmul: contraction 2 x rows (a family
                                    feature, gs/family.h) */
    int bf16_psum;               /* matmul may write / accumulate bf16 PSUM (fp32 accumulate in
                                    the array, rounded on write; a family feature) */
} gs_tensor_cfg;

/* Vector, scalar and gpsimd engines share this shape. */
typedef struct gs_simd_cfg {
    int present;           /* 0: the engine does not exist on this generation */
    gs_num lanes;          /* partitions processed in parallel (vector/scalar = 128) */
    gs_num cores;          /* gpsimd: number of SIMD cores (1 for vector/scalar) */
    gs_num clock;          /* Hz */
    gs_num min_ii;         /* minimum initiation interval, cycles */
    gs_num fixed_overhead; /* startup cycles per instruction (gpsimd ~150) */
    gs_num elems_per_cycle[GS_DTYPE_COUNT]; /* per lane, for a one-input op; 0/unset: dtype
                                               unsupported on this engine */
    gs_num perf_mode_epc[GS_DTYPE_COUNT];   /* vector: per lane, the performance mode's rate for
                                               tensor_copy / tensor_scalar whose streamed operands
                                               are all in SBUF, contiguous innermost and of a
                                               dtype with a rate here; 0/unset: no such mode */
    gs_num two_input_factor;                /* multiplier for ops reading two tensors (vector ~2) */
    gs_num slow_op_factor;                  /* multiplier for divide / reciprocal class ops (~8) */
    gs_num psum_read_factor;                /* multiplier when the input is in PSUM */
    gs_num table_load;             /* scalar: cycles to load a new activation function table */
    gs_num cross_partition_factor; /* gpsimd: multiplier for partition_reduce/broadcast */
    gs_num gather_row_cycles;      /* gpsimd: cycles per gathered row (descriptor generation) */
    gs_num max_free_sbuf;          /* max free-dim elements per instruction from SBUF (64K) */
    gs_num max_free_psum;          /* max free-dim elements per instruction from PSUM (4K) */
} gs_simd_cfg;

/* YAML: core.dma.* (e.g. --set core.dma.bandwidth_per_engine=34GB/s) */
/* A dma instruction is split over the engines by SBUF partition group (HBM->HBM: by rows);
 * each engine's share waits in the instruction's queue ID on that engine (in order), queues on
 * an engine share it round robin, and the instruction completes when every share is done. */
typedef struct gs_dma_cfg {
    gs_num engines;               /* DMA engines per core */
    gs_num queues;                /* queues per engine (the kernel API's queue ID) */
    gs_num partitions_per_engine; /* SBUF partitions one engine serves; 0: derived */
    gs_num bandwidth_per_engine;  /* bytes per ns */
    gs_num issue_latency;         /* ns from trigger to the shares starting (engines not busy) */
    gs_num fixed_latency;         /* ns per engine share (engine busy) */
    gs_num descriptor_overhead;   /* ns per descriptor (one contiguous run) on the engine */
    gs_num min_efficient_chunk;   /* bytes; a smaller chunk costs as much as one this size */
    gs_num transpose_factor;      /* dma_transpose: bandwidth divisor vs a plain copy */
    int transpose;                /* dma_transpose supported */
    int hw_descriptors;           /* descriptors generated by hardware (DGE) */
    int cast;                     /* dma_copy converts between float dtypes */
} gs_dma_cfg;

#define GS_MAX_CORES 16  /* validation rejects more cores per chip */
#define GS_MAX_QUEUES 32 /* ... more DMA engines per core, and more queues per engine */

typedef struct gs_config {
    char *name;        /* from `name:` */
    char *family;      /* the family (genN/ folder) whose behaviour applies; gs/family.h */
    char *description; /* may be NULL */
    char *path;        /* file it was loaded from */

    /* sources: key -> citation (URL or document name), inherited through extends */
    size_t n_sources;
    char **source_keys;
    char **source_refs;

    /* chip */
    gs_num cores;
    gs_num hbm_capacity;  /* bytes */
    gs_num hbm_bandwidth; /* bytes per ns, whole chip */
    gs_num hbm_latency;   /* ns */

    /* one core */
    gs_num partitions;
    gs_num sbuf_bytes; /* whole SBUF (all partitions) */
    gs_num psum_bytes; /* whole PSUM */
    gs_num psum_banks;
    gs_num sem_latency;         /* ns: cross-engine semaphore signal-to-wake cost */
    gs_num pool_alignment;      /* bytes: SBUF pool buffers start on this boundary */
    gs_num partition_quadrants; /* compute instructions start at multiples of partitions / this */
    /* ns: host-visible cost of one kernel launch, outside the kernel's own time (records carry
     * it as launch_ns and time_with_launch_ns; time_ns does not include it) */
    gs_num launch_overhead;

    gs_tensor_cfg tensor;
    gs_simd_cfg vector;
    gs_simd_cfg scalar;
    gs_simd_cfg gpsimd;
    gs_dma_cfg dma;

    uint32_t dtypes; /* bit (1u << gs_dtype) for each supported dtype */
    uint64_t ops;    /* bit (1ull << gs_opcode) for each supported opcode (gs/isa.h) */

    /* Private to the loader (config*.c): owns the strings the gs_num point to (src, note, file) and
     * the source locations of non-numeric values. NULL in a hand-built config. */
    struct gs_config_store *store;
} gs_config;

/* ---- derived numbers (pure functions of the config) ---- */
/* Bytes of SBUF per partition; of PSUM per partition; of one PSUM bank per partition. */
size_t gs_config_sbuf_partition_bytes(const gs_config *c);
size_t gs_config_psum_partition_bytes(const gs_config *c);
size_t gs_config_psum_bank_bytes(const gs_config *c);
/* Peak matmul FLOP/s of one core for dtype t (2 * k * rows * cols * clock * rate, k = 2 for fp8
 * with engines.tensor.double_row, 4 for the quad-packed MX dtypes, else 1); 0 if unsupported. */
double gs_config_peak_flops(const gs_config *c, gs_dtype t);
/* Peak HBM bytes per second of the chip. */
double gs_config_hbm_bytes_per_s(const gs_config *c);
/* SBUF partitions one DMA engine serves (the config's value, or partitions / engines rounded
 * up); at least 1. */
unsigned gs_config_dma_partitions_per_engine(const gs_config *c);
/* Peak DMA bytes per ns of one core: engines x bandwidth_per_engine. */
double gs_config_dma_core_bytes_per_ns(const gs_config *c);
int gs_config_has_dtype(const gs_config *c, gs_dtype t);
/* Is one engine present (tensor/vector/scalar/dma always; gpsimd by config). */
int gs_config_has_engine(const gs_config *c, gs_engine e);
/* Bit (1u << e) for each engine e the config has (gs_config_has_engine); 0 for NULL. */
unsigned gs_config_engine_mask(const gs_config *c);

/* ---- loading ---- */
/* Load, resolve `extends:` and validate. On failure returns NULL and appends every problem
 * found to diags (each "file:line:col: key.path: message"). The returned config is owned by
 * the caller: gs_config_free. */
gs_config *gs_config_load(const char *path, gs_diags *diags);
/* The same from a memory buffer; `name` is used as the file name in messages, and `extends:`
 * is resolved relative to `dir` (NULL: the current directory). */
gs_config *gs_config_load_string(const char *text, size_t len, const char *name, const char *dir,
                                 gs_diags *diags);
void gs_config_free(gs_config *c); /* NULL is a no-op */

/* Apply one "key.path=value" override (e.g. "core.dma.bandwidth_per_engine=34GB/s", or relative
 * "x1.5" / "1.5x"), then re-validate the whole config. On error the config is unchanged and
 * the error is added to diags (file "--set"). */
gs_status gs_config_set(gs_config *c, const char *assignment, gs_diags *diags);
/* Apply n overrides in order (a relative one scales the value the earlier ones left), then
 * validate the whole config once: the checks between values see every override, whatever the
 * order they were given in. On error the config is unchanged. gs_config_set is the n = 1 case. */
gs_status gs_config_set_all(gs_config *c, const char *const *assignments, size_t n,
                            gs_diags *diags);

/* The config at path with the overrides sets[0..n_sets) applied (gs_config_load, then
 * gs_config_set_all): what every command and job loads. NULL with every problem appended to
 * diags; the last problem's code says what failed (GS_ERR_IO: the file cannot be read,
 * GS_ERR_USAGE: an override that is not a key=value of the schema, GS_ERR_INVALID: the file
 * or the overridden config is invalid). */
gs_config *gs_config_load_with(const char *path, const char *const *sets, size_t n_sets,
                               gs_diags *diags);

/* Write the resolved config as YAML, each number with its provenance as a trailing
 * "[source]" tag and "# file:line" comment (gensweep show-config). */
void gs_config_dump_yaml(const gs_config *c, FILE *out);

/* ---- the schema, for docs, tests and tools ---- */
typedef struct gs_config_field {
    const char *path; /* dotted key, e.g. "engines.tensor.clock" */
    gs_unit unit;
    int required;
    const char *description; /* one line */
} gs_config_field;

/* All numeric keys the loader accepts; *n receives the count. */
const gs_config_field *gs_config_fields(size_t *n);
/* Look a numeric key up in a loaded config (NULL if unknown). */
const gs_num *gs_config_get(const gs_config *c, const char *path);

/* A parameter group: keys that move together when one generation succeeds another (all
 * tensor rates, all DMA costs, ...), so `gensweep attribute` swaps them as one change. Every
 * numeric key belongs to exactly one group: the first whose patterns (fnmatch, '*' also
 * matches '.') match its path. */
typedef struct gs_config_group {
    const char *name;        /* e.g. "tensor_rates" */
    const char *description; /* one line */
    const char *patterns;    /* space-separated fnmatch patterns over key paths */
} gs_config_group;

/* All groups in matching order; *n receives the count. */
const gs_config_group *gs_config_groups(size_t *n);
/* Index in gs_config_groups() of the group of numeric key path (-1 when the key is unknown). */
int gs_config_group_of(const char *path);

/* Hard limits of the loader (inputs beyond them are rejected with an error). */
#define GS_CONFIG_MAX_BYTES (1024 * 1024) /* a config file larger than 1 MiB */
#define GS_CONFIG_MAX_DEPTH 16            /* YAML nesting levels */
#define GS_CONFIG_MAX_EXTENDS 8           /* length of an extends: chain */

#ifdef __cplusplus
}
#endif
#endif

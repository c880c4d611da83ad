/*
 * config_schema.c - the config schema: the one table of numeric keys (FIELDS: path, unit,
 * required, description, where the value lives in gs_config, flags, the engine it needs, its
 * dtype, its default), the non-numeric keys, lookups by path and by struct offset, key
 * suggestions for typos, and the per-value range rules shared by the loader and --set. It is
 * separate so the schema is data in one place: the walk (config_walk.c), the checks and --set
 * (config_validate.c), show-config (config_dump.c) and gs_config_fields/gs_config_get all read
 * this table and none of them lists keys of its own.
 */
#include "config_internal.h"

#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gs/units.h"

#define NOENG (-1)
#define NODT (-1)

#define EPC_DESC "elements per cycle per lane for a one-input op of this dtype"
#define RATE_DESC "matmul throughput for this dtype relative to bf16 (1.0)"

#define RATE_ROW(e, n, b, f)                                                                       \
    GS_F("engines.tensor.rate." n, GS_UNIT_REAL, 0, RATE_DESC, tensor.rate[e], 0, NOENG, e, 0)
#define VEC_EPC_ROW(e, n, b, f)                                                                    \
    GS_F("engines.vector.elems_per_cycle." n, GS_UNIT_REAL, 0, EPC_DESC,                           \
         vector.elems_per_cycle[e], 0, GS_ENG_VECTOR, e, 0)
#define PERF_DESC                                                                                  \
    "performance-mode elements per cycle per lane: tensor_copy / tensor_scalar whose tile "        \
    "operands are all in SBUF, contiguous innermost and of a dtype with a rate here (unset: "      \
    "elems_per_cycle)"
#define VEC_PERF_ROW(e, n, b, f)                                                                   \
    GS_F("engines.vector.perf_mode_elems_per_cycle." n, GS_UNIT_REAL, 0, PERF_DESC,                \
         vector.perf_mode_epc[e], 0, GS_ENG_VECTOR, e, 0)
#define SCA_EPC_ROW(e, n, b, f)                                                                    \
    GS_F("engines.scalar.elems_per_cycle." n, GS_UNIT_REAL, 0, EPC_DESC,                           \
         scalar.elems_per_cycle[e], 0, GS_ENG_SCALAR, e, 0)
#define GPS_EPC_ROW(e, n, b, f)                                                                    \
    GS_F("engines.gpsimd.elems_per_cycle." n, GS_UNIT_REAL, 0, EPC_DESC,                           \
         gpsimd.elems_per_cycle[e], 0, GS_ENG_GPSIMD, e, 0)

/* The keys every SIMD engine (vector, scalar, gpsimd) has, before its elems_per_cycle map. */
#define SIMD_HEAD(N, M, E)                                                                         \
    GS_F("engines." N ".lanes", GS_UNIT_COUNT, 1, "partitions processed in parallel", M.lanes, 0,  \
         E, NODT, 0)                                                                               \
    GS_F("engines." N ".cores", GS_UNIT_COUNT, 0, "SIMD cores making up the engine (default 1)",   \
         M.cores, 0, E, NODT, 1)                                                                   \
    GS_F("engines." N ".clock", GS_UNIT_FREQ, 1, "engine clock", M.clock, 0, E, NODT, 0)           \
    GS_F("engines." N ".min_ii", GS_UNIT_CYCLES, 1, "minimum initiation interval per instruction", \
         M.min_ii, 0, E, NODT, 0)                                                                  \
    GS_F("engines." N ".fixed_overhead", GS_UNIT_CYCLES, 0,                                        \
         "startup cycles per instruction (default 0)", M.fixed_overhead, FF_ZERO_OK, E, NODT, 0)
/* ... and after it. */
#define SIMD_TAIL(N, M, E)                                                                         \
    GS_F("engines." N ".two_input_factor", GS_UNIT_REAL, 0,                                        \
         "cost multiplier for ops reading two tensors (default 1)", M.two_input_factor, 0, E,      \
         NODT, 1)                                                                                  \
    GS_F("engines." N ".slow_op_factor", GS_UNIT_REAL, 0,                                          \
         "cost multiplier for divide/reciprocal/pow class ops (default 1)", M.slow_op_factor, 0,   \
         E, NODT, 1)                                                                               \
    GS_F("engines." N ".psum_read_factor", GS_UNIT_REAL, 0,                                        \
         "cost multiplier when an input is in PSUM (default 1)", M.psum_read_factor, 0, E, NODT,   \
         1)
#define SIMD_LIMITS(N, M, E)                                                                       \
    GS_F("engines." N ".max_free_sbuf", GS_UNIT_COUNT, 1,                                          \
         "max free-dim elements per instruction reading SBUF", M.max_free_sbuf, 0, E, NODT, 0)     \
    GS_F("engines." N ".max_free_psum", GS_UNIT_COUNT, 1,                                          \
         "max free-dim elements per instruction reading PSUM", M.max_free_psum, 0, E, NODT, 0)

/* GS_F(path, unit, required, description, member, flags, engine, dtype, default) */
#define FIELDS                                                                                     \
    GS_F("chip.cores", GS_UNIT_COUNT, 1, "NeuronCore-class cores per chip", cores, 0, NOENG, NODT, \
         0)                                                                                        \
    GS_F("chip.hbm.capacity", GS_UNIT_BYTES, 1, "device memory capacity of the chip",              \
         hbm_capacity, 0, NOENG, NODT, 0)                                                          \
    GS_F("chip.hbm.bandwidth", GS_UNIT_BANDWIDTH, 1,                                               \
         "device memory bandwidth of the whole chip (shared by all cores and queues)",             \
         hbm_bandwidth, 0, NOENG, NODT, 0)                                                         \
    GS_F("chip.hbm.latency", GS_UNIT_TIME, 1, "device memory access latency", hbm_latency, 0,      \
         NOENG, NODT, 0)                                                                           \
    GS_F("core.partitions", GS_UNIT_COUNT, 1, "SBUF/PSUM partitions (the lane dimension)",         \
         partitions, 0, NOENG, NODT, 0)                                                            \
    GS_F("core.sbuf", GS_UNIT_BYTES, 1, "SBUF size of one core, all partitions", sbuf_bytes, 0,    \
         NOENG, NODT, 0)                                                                           \
    GS_F("core.psum.size", GS_UNIT_BYTES, 1, "PSUM size of one core, all partitions", psum_bytes,  \
         0, NOENG, NODT, 0)                                                                        \
    GS_F("core.psum.banks", GS_UNIT_COUNT, 1, "PSUM banks (a matmul output fits one bank)",        \
         psum_banks, 0, NOENG, NODT, 0)                                                            \
    GS_F("core.semaphore_latency", GS_UNIT_TIME, 1, "cross-engine semaphore signal-to-wake cost",  \
         sem_latency, FF_ZERO_OK, NOENG, NODT, 0)                                                  \
    GS_F("core.pool_alignment", GS_UNIT_BYTES, 0,                                                  \
         "byte boundary each SBUF pool buffer starts on, per partition (default 64)",              \
         pool_alignment, 0, NOENG, NODT, 64)                                                       \
    GS_F("core.partition_quadrants", GS_UNIT_COUNT, 0,                                             \
         "compute instructions start at a multiple of partitions / N (a quarter when N = 4), "     \
         "of twice that when they span more than one, at 0 when more than two (default 4)",        \
         partition_quadrants, 0, NOENG, NODT, 4)                                                   \
    GS_F("core.launch_overhead", GS_UNIT_TIME, 0,                                                  \
         "cost of one kernel launch end to end (runtime trigger to completion seen by the host), " \
         "outside the kernel's time: records carry launch_ns and time_with_launch_ns",             \
         launch_overhead, FF_ZERO_OK, NOENG, NODT, 0)                                              \
    GS_F("core.dma.engines", GS_UNIT_COUNT, 1,                                                     \
         "DMA engines per core; a transfer is split over them by partition group", dma.engines, 0, \
         NOENG, NODT, 0)                                                                           \
    GS_F("core.dma.queues", GS_UNIT_COUNT, 1,                                                      \
         "queues per DMA engine; a transfer goes to one queue ID on every engine it uses",         \
         dma.queues, 0, NOENG, NODT, 0)                                                            \
    GS_F("core.dma.partitions_per_engine", GS_UNIT_COUNT, 0,                                       \
         "SBUF partitions each engine serves (default: partitions / engines, rounded up)",         \
         dma.partitions_per_engine, 0, NOENG, NODT, 0)                                             \
    GS_F("core.dma.bandwidth_per_engine", GS_UNIT_BANDWIDTH, 1, "bandwidth of one DMA engine",     \
         dma.bandwidth_per_engine, 0, NOENG, NODT, 0)                                              \
    GS_F("core.dma.issue_latency", GS_UNIT_TIME, 1,                                                \
         "trigger (dependencies met) to the engines starting a transfer; engines stay free",       \
         dma.issue_latency, FF_ZERO_OK, NOENG, NODT, 0)                                            \
    GS_F("core.dma.fixed_latency", GS_UNIT_TIME, 1,                                                \
         "fixed cost of one engine's share of a transfer (engine busy)", dma.fixed_latency,        \
         FF_ZERO_OK, NOENG, NODT, 0)                                                               \
    GS_F("core.dma.descriptor_overhead", GS_UNIT_TIME, 1,                                          \
         "engine cost per descriptor (contiguous run) when descriptors are not made by hardware",  \
         dma.descriptor_overhead, FF_ZERO_OK, NOENG, NODT, 0)                                      \
    GS_F("core.dma.min_efficient_chunk", GS_UNIT_BYTES, 1,                                         \
         "a smaller chunk costs as much as one of this size", dma.min_efficient_chunk, 0, NOENG,   \
         NODT, 0)                                                                                  \
    GS_F("core.dma.transpose_factor", GS_UNIT_REAL, 0,                                             \
         "dma_transpose bandwidth divisor vs a plain copy (required when transpose is true)",      \
         dma.transpose_factor, 0, NOENG, NODT, 0)                                                  \
    GS_F("engines.tensor.rows", GS_UNIT_COUNT, 1, "PE rows = max contraction K per matmul",        \
         tensor.rows, 0, NOENG, NODT, 0)                                                           \
    GS_F("engines.tensor.cols", GS_UNIT_COUNT, 1, "PE columns = max stationary free size M",       \
         tensor.cols, 0, NOENG, NODT, 0)                                                           \
    GS_F("engines.tensor.clock", GS_UNIT_FREQ, 1, "tensor engine clock", tensor.clock, 0, NOENG,   \
         NODT, 0)                                                                                  \
    GS_F("engines.tensor.moving_free_max", GS_UNIT_COUNT, 1,                                       \
         "max moving free size N per matmul (elements)", tensor.moving_free_max, 0, NOENG, NODT,   \
         0)                                                                                        \
    GS_F("engines.tensor.min_ii", GS_UNIT_CYCLES, 1, "minimum initiation interval per matmul",     \
         tensor.min_ii, 0, NOENG, NODT, 0)                                                         \
    GS_F("engines.tensor.stationary_load", GS_UNIT_CYCLES, 1,                                      \
         "cap on weight-load cycles: max(min(this, M), N)", tensor.stationary_load, 0, NOENG,      \
         NODT, 0)                                                                                  \
    GS_F("engines.tensor.fixed_overhead", GS_UNIT_CYCLES, 0,                                       \
         "cycles per instruction on top of the formula (default 0)", tensor.fixed_overhead,        \
         FF_ZERO_OK, NOENG, NODT, 0)                                                               \
    GS_DTYPE_TABLE(RATE_ROW)                                                                       \
    SIMD_HEAD("vector", vector, GS_ENG_VECTOR)                                                     \
    GS_DTYPE_TABLE(VEC_EPC_ROW)                                                                    \
    GS_DTYPE_TABLE(VEC_PERF_ROW)                                                                   \
    SIMD_TAIL("vector", vector, GS_ENG_VECTOR)                                                     \
    SIMD_LIMITS("vector", vector, GS_ENG_VECTOR)                                                   \
    SIMD_HEAD("scalar", scalar, GS_ENG_SCALAR)                                                     \
    GS_DTYPE_TABLE(SCA_EPC_ROW)                                                                    \
    SIMD_TAIL("scalar", scalar, GS_ENG_SCALAR)                                                     \
    GS_F("engines.scalar.table_load", GS_UNIT_CYCLES, 0,                                           \
         "cycles to load a new activation function table (default 0)", scalar.table_load,          \
         FF_ZERO_OK, GS_ENG_SCALAR, NODT, 0)                                                       \
    SIMD_LIMITS("scalar", scalar, GS_ENG_SCALAR)                                                   \
    SIMD_HEAD("gpsimd", gpsimd, GS_ENG_GPSIMD)                                                     \
    GS_DTYPE_TABLE(GPS_EPC_ROW)                                                                    \
    SIMD_TAIL("gpsimd", gpsimd, GS_ENG_GPSIMD)                                                     \
    GS_F("engines.gpsimd.cross_partition_factor", GS_UNIT_REAL, 0,                                 \
         "cost multiplier for partition_reduce/partition_broadcast (default 1)",                   \
         gpsimd.cross_partition_factor, 0, GS_ENG_GPSIMD, NODT, 1)                                 \
    GS_F("engines.gpsimd.gather_row_cycles", GS_UNIT_CYCLES, 1,                                    \
         "cycles per gathered row (descriptor generation)", gpsimd.gather_row_cycles, 0,           \
         GS_ENG_GPSIMD, NODT, 0)                                                                   \
    SIMD_LIMITS("gpsimd", gpsimd, GS_ENG_GPSIMD)

#define GS_F(path, unit, req, desc, member, flags, eng, dt, def) {path, unit, req, desc},
const gs_config_field gs_cfg_fields[] = {FIELDS};
#undef GS_F
#define GS_F(path, unit, req, desc, member, flags, eng, dt, def)                                   \
    {offsetof(gs_config, member), flags, eng, dt, def},
const field_impl gs_cfg_impls[] = {FIELDS};
#undef GS_F
const size_t gs_cfg_n_fields = GS_ARRAY_LEN(gs_cfg_fields);
_Static_assert(GS_ARRAY_LEN(gs_cfg_fields) == GS_ARRAY_LEN(gs_cfg_impls), "one table");
_Static_assert(GS_ARRAY_LEN(gs_cfg_fields) <= GS_CFG_MAX_FIELDS, "raise GS_CFG_MAX_FIELDS");

const gs_config_field *gs_config_fields(size_t *n)
{
    if (n) *n = gs_cfg_n_fields;
    return gs_cfg_fields;
}

int gs_cfg_field_index(const char *path)
{
    if (!path) return -1;
    for (size_t i = 0; i < gs_cfg_n_fields; i++)
        if (!strcmp(gs_cfg_fields[i].path, path)) return (int)i;
    return -1;
}

int gs_cfg_field_index_by_off(size_t off)
{
    for (size_t i = 0; i < gs_cfg_n_fields; i++)
        if (gs_cfg_impls[i].off == off) return (int)i;
    return -1;
}

gs_num *gs_cfg_num_at(gs_config *c, size_t i)
{
    return (gs_num *)((char *)c + gs_cfg_impls[i].off);
}
const gs_num *gs_cfg_cnum_at(const gs_config *c, size_t i)
{
    return (const gs_num *)((const char *)c + gs_cfg_impls[i].off);
}

const gs_num *gs_config_get(const gs_config *c, const char *path)
{
    int i = gs_cfg_field_index(path);
    if (!c || i < 0) return NULL;
    return gs_cfg_cnum_at(c, (size_t)i);
}

/* The parameter groups, matched in this order (the first match wins, so the catch-alls of an
 * engine or section come after its specific groups). SCHEMA.md lists them. */
static const gs_config_group groups[] = {
    {"tensor_rates", "matmul throughput of every dtype relative to bf16", "engines.tensor.rate.*"},
    {"vector_rates", "vector elements per cycle of every dtype, plain and performance mode",
     "engines.vector.elems_per_cycle.* engines.vector.perf_mode_elems_per_cycle.*"},
    {"scalar_rates", "scalar elements per cycle of every dtype",
     "engines.scalar.elems_per_cycle.*"},
    {"gpsimd_rates", "gpsimd elements per cycle of every dtype",
     "engines.gpsimd.elems_per_cycle.*"},
    {"clocks", "every engine clock", "engines.*.clock"},
    {"hbm", "device memory bandwidth and latency", "chip.hbm.bandwidth chip.hbm.latency"},
    {"dma", "DMA engines, queues, bandwidth and every DMA cost", "core.dma.*"},
    {"onchip_memory", "SBUF and PSUM sizes and banks", "core.sbuf core.psum.*"},
    {"tensor_engine", "tensor engine shape, issue and overheads", "engines.tensor.*"},
    {"vector_engine", "vector engine lanes, issue, overheads, factors and limits",
     "engines.vector.*"},
    {"scalar_engine", "scalar engine lanes, issue, overheads, factors and limits",
     "engines.scalar.*"},
    {"gpsimd_engine", "gpsimd engine lanes, issue, overheads, factors and limits",
     "engines.gpsimd.*"},
    {"chip_core", "cores, HBM capacity, partitions, semaphores, alignment, launch",
     "chip.* core.*"},
};

const gs_config_group *gs_config_groups(size_t *n)
{
    if (n) *n = GS_ARRAY_LEN(groups);
    return groups;
}

int gs_config_group_of(const char *path)
{
    if (gs_cfg_field_index(path) < 0) return -1;
    for (size_t g = 0; g < GS_ARRAY_LEN(groups); g++) {
        const char *p = groups[g].patterns;
        while (*p) {
            char pat[96];
            size_t len = strcspn(p, " ");
            snprintf(pat, sizeof pat, "%.*s", (int)len, p);
            if (fnmatch(pat, path, 0) == 0) return (int)g;
            p += len;
            p += strspn(p, " ");
        }
    }
    return -1;
}

/* The non-numeric keys (their kinds: config_internal.h). */
static const special_def specials[] = {
    {"name", SK_STRING},
    {"family", SK_STRING},
    {"description", SK_STRING},
    {"extends", SK_STRING},
    {"sources", SK_SOURCES},
    {"dtypes", SK_DTYPES},
    {"ops", SK_OPS},
    {"chip", SK_MAP},
    {"chip.hbm", SK_MAP},
    {"core", SK_MAP},
    {"core.psum", SK_MAP},
    {"core.dma", SK_MAP},
    {"core.dma.transpose", SK_BOOL},
    {"core.dma.hw_descriptors", SK_BOOL},
    {"core.dma.cast", SK_BOOL},
    {"engines", SK_MAP},
    {"engines.tensor", SK_MAP},
    {"engines.tensor.rate", SK_MAP},
    {"engines.tensor.double_row", SK_BOOL},
    {"engines.tensor.bf16_psum", SK_BOOL},
    {"engines.vector", SK_MAP},
    {"engines.vector.present", SK_BOOL},
    {"engines.vector.elems_per_cycle", SK_MAP},
    {"engines.vector.perf_mode_elems_per_cycle", SK_MAP},
    {"engines.scalar", SK_MAP},
    {"engines.scalar.present", SK_BOOL},
    {"engines.scalar.elems_per_cycle", SK_MAP},
    {"engines.gpsimd", SK_MAP},
    {"engines.gpsimd.present", SK_BOOL},
    {"engines.gpsimd.elems_per_cycle", SK_MAP},
};

const special_def *gs_cfg_special_find(const char *path)
{
    for (size_t i = 0; i < GS_ARRAY_LEN(specials); i++)
        if (!strcmp(specials[i].path, path)) return &specials[i];
    return NULL;
}

int gs_cfg_is_dtype_map(const char *path)
{
    size_t n = strlen(path);
    return (n >= 5 && !strcmp(path + n - 5, ".rate")) ||
           (n >= 16 && !strcmp(path + n - 16, ".elems_per_cycle"));
}

/* Closest candidate to word within a small edit distance, or NULL. */
static const char *suggest(const char *word, const char *const *cands, size_t n)
{
    size_t len = strlen(word);
    size_t limit = len >= 9 ? 3 : len >= 4 ? 2 : 1;
    const char *best = NULL;
    size_t best_d = limit + 1;
    for (size_t i = 0; i < n; i++) {
        size_t dd = gs_edit_distance(word, cands[i], limit + 1);
        if (dd < best_d) {
            best_d = dd;
            best = cands[i];
        }
    }
    return best;
}

/* Format " (did you mean 'x'?)" into buf, or "" when nothing is close. */
const char *gs_cfg_did_you_mean(char *buf, size_t size, const char *word, const char *const *cands,
                                size_t n)
{
    const char *s = suggest(word, cands, n);
    if (s)
        snprintf(buf, size, " (did you mean '%s'?)", s);
    else
        buf[0] = '\0';
    return buf;
}

/* Last component of the known keys directly under map path `parent` ("" = top level). */
static size_t children_of(const char *parent, const char **out, size_t max)
{
    size_t plen = strlen(parent), n = 0;
    for (size_t pass = 0; pass < 2; pass++) {
        size_t count = pass == 0 ? gs_cfg_n_fields : GS_ARRAY_LEN(specials);
        for (size_t i = 0; i < count; i++) {
            const char *p = pass == 0 ? gs_cfg_fields[i].path : specials[i].path;
            const char *rest;
            if (plen == 0)
                rest = p;
            else if (!strncmp(p, parent, plen) && p[plen] == '.')
                rest = p + plen + 1;
            else
                continue;
            if (strchr(rest, '.')) continue;
            int dup = 0;
            for (size_t j = 0; j < n; j++)
                if (!strcmp(out[j], rest)) dup = 1;
            if (!dup && n < max) out[n++] = rest;
        }
    }
    return n;
}

void gs_cfg_unknown_key_hint(char *buf, size_t size, const char *parent, const char *key)
{
    const char *kids[128];
    size_t n = children_of(parent, kids, GS_ARRAY_LEN(kids));
    gs_cfg_did_you_mean(buf, size, key, kids, n);
    if (buf[0]) return;
    /* The key may exist in another section (sbuf under chip, table_load under vector). */
    for (size_t i = 0; i < gs_cfg_n_fields + GS_ARRAY_LEN(specials); i++) {
        const char *p =
            i < gs_cfg_n_fields ? gs_cfg_fields[i].path : specials[i - gs_cfg_n_fields].path;
        const char *dot = strrchr(p, '.');
        if (dot && !strcmp(dot + 1, key)) {
            snprintf(buf, size, " ('%s' is a key of %.*s)", key, (int)(dot - p), p);
            break;
        }
    }
}

/* Range rules shared by the loader and --set. Returns NULL when v is acceptable, else a reason. */
const char *gs_cfg_check_value(size_t fi, double v, char *buf, size_t size)
{
    gs_unit u = gs_cfg_fields[fi].unit;
    if (!isfinite(v)) return "not a finite number";
    if (v < 0) return "must not be negative";
    if (v == 0 && !(gs_cfg_impls[fi].flags & FF_ZERO_OK)) return "must be greater than zero";
    if ((u == GS_UNIT_COUNT || u == GS_UNIT_BYTES) && v != floor(v)) {
        snprintf(buf, size, "must be a whole number of %s (got %.17g)",
                 u == GS_UNIT_BYTES ? "bytes" : "items", v);
        return buf;
    }
    /* Limits keep every value exact in a double and every derived product finite. */
    double max = u == GS_UNIT_COUNT ? 2147483647.0 : u == GS_UNIT_BYTES ? 9007199254740992.0 : 1e18;
    if (v > max) {
        snprintf(buf, size, "too large (%.17g; the limit is %.17g)", v, max);
        return buf;
    }
    /* Model arithmetic: the timed model counts integer picoseconds (2^64 ps is about 213 days)
     * and converts every cost once. These ranges keep one instruction's cost between the
     * 1 ps step and far below the counter's range for any transfer up to the largest HBM,
     * so an accepted value can never wrap time, freeze it or make an engine free. */
    static const struct {
        gs_unit unit;
        double lo, hi;
        const char *why;
    } ranges[] = {
        {GS_UNIT_FREQ, 1e7, 1e12, "a cycle must last 1 ps (the model's time step) .. 100 ns"},
        {GS_UNIT_BANDWIDTH, 1e-3, 1e6,
         "1 MB/s .. 1 PB/s: slower overflows picosecond times of large transfers, faster is "
         "below the model's 1 ps step per KiB"},
        {GS_UNIT_TIME, 0, 1e6, "a latency or overhead of at most 1 ms per instruction"},
        {GS_UNIT_CYCLES, 0, 1e5, "at most 1e5 cycles per instruction"},
        {GS_UNIT_REAL, 1e-3, 1e3,
         "rates, elements per cycle and factors: outside 0.001 .. 1000 an instruction's time "
         "overflows or vanishes"},
    };
    for (size_t r = 0; r < GS_ARRAY_LEN(ranges); r++) {
        if (ranges[r].unit != u || v == 0) continue;
        if (v < ranges[r].lo || v > ranges[r].hi) {
            char lo[48], hi[48];
            gs_units_format(ranges[r].lo, u, lo, sizeof lo);
            gs_units_format(ranges[r].hi, u, hi, sizeof hi);
            snprintf(buf, size, "out of range (limit %s .. %s; %s)", lo, hi, ranges[r].why);
            return buf;
        }
    }
    /* the DMA cost charges a smaller descriptor as one of this size; real engines are
     * efficient from 512 B to a few KiB */
    if (gs_cfg_impls[fi].off == offsetof(gs_config, dma.min_efficient_chunk) && v > 1048576.0) {
        snprintf(buf, size,
                 "out of range (limit 1MiB: DMA engines are efficient from 512 B to "
                 "a few KiB)");
        return buf;
    }
    return NULL;
}

int gs_cfg_engine_of_path(const char *path)
{
    if (!strncmp(path, "engines.vector", 14)) return GS_ENG_VECTOR;
    if (!strncmp(path, "engines.scalar", 14)) return GS_ENG_SCALAR;
    if (!strncmp(path, "engines.gpsimd", 14)) return GS_ENG_GPSIMD;
    return -1;
}

void gs_cfg_apply_defaults(gs_config *c)
{
    for (size_t i = 0; i < gs_cfg_n_fields; i++)
        gs_cfg_num_at(c, i)->v = gs_cfg_impls[i].def;
    c->vector.present = c->scalar.present = c->gpsimd.present = 1;
}

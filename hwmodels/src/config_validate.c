/*
 * config_validate.c - what makes a filled gs_config consistent, and --set. The cross-field
 * checks (sizes divisible by partitions and banks, a matmul result fitting a PSUM bank, limits
 * against partitions, transfers within the model's time range, dtypes and ops agreeing with
 * the engines, the family's own checks) run on the struct, not on the tree, so the loader and
 * every --set override apply the same rules and blame the same file:line:col. --set parses one
 * KEY=VALUE (absolute with a unit, or relative xF / Fx), checks it like the loader
 * (config_schema.c's range rules) and commits it only if the whole config still validates.
 * It is separate from the walk because it never sees YAML.
 */
#include "config_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gs/family.h"
#include "gs/units.h"

/* ------------------------------------------------------------------------------------------ */
/* consistency checks (load and --set)                                                        */

/* Ops that exist only on the GpSimd engine. memset defaults to GpSimd but every engine can
 * write a constant, so it stays available without one. */
static int op_needs_gpsimd(int op)
{
    return gs_opcode_default_engine((gs_opcode)op) == GS_ENG_GPSIMD && op != GS_OP_MEMSET;
}

typedef struct vctx {
    gs_diags *d;
    const gs_config *c;
    const unsigned char *bad; /* may be NULL */
} vctx;

static void verr(vctx *V, const gs_num *at, const char *path, const char *fmt, ...) GS_PRINTF(4, 5);
static void verr(vctx *V, const gs_num *at, const char *path, const char *fmt, ...)
{
    char msg[GS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gs_diags_add(V->d, GS_ERR_INVALID, at->file, at->line, at->col, "%s: %s", path, msg);
}

static void lerr(vctx *V, const gs_loc *at, const char *path, const char *fmt, ...) GS_PRINTF(4, 5);
static void lerr(vctx *V, const gs_loc *at, const char *path, const char *fmt, ...)
{
    char msg[GS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gs_diags_add(V->d, GS_ERR_INVALID, at ? at->file : NULL, at ? at->line : 0, at ? at->col : 0,
                 "%s: %s", path, msg);
}

/* A value the checks can use: written, accepted, positive. */
static int usable(vctx *V, const gs_num *n)
{
    if (!n->src || !n->src[0] || !(n->v > 0) || !isfinite(n->v)) return 0;
    if (V->bad) {
        int i = gs_cfg_field_index_by_off((size_t)((const char *)n - (const char *)V->c));
        if (i >= 0 && V->bad[i]) return 0;
    }
    return 1;
}

static const char *path_of(const gs_config *c, const gs_num *n)
{
    int i = gs_cfg_field_index_by_off((size_t)((const char *)n - (const char *)c));
    return i >= 0 ? gs_cfg_fields[i].path : "?";
}

static void fmt_val(const gs_config *c, const gs_num *n, char *buf, size_t size)
{
    int i = gs_cfg_field_index_by_off((size_t)((const char *)n - (const char *)c));
    gs_units_format(n->v, i >= 0 ? gs_cfg_fields[i].unit : GS_UNIT_REAL, buf, size);
}

/* When a check fails because of a value written in another file (a child of extends: changing
 * what the parent's value must agree with), the error names that value's line too: "; core.
 * partitions is set at child.yaml:4:15". Empty when both come from one file. */
static const char *also_at(const gs_config *c, const gs_num *at, const gs_num *other, char *buf,
                           size_t size)
{
    buf[0] = '\0';
    if (!other->file || !at->file || !strcmp(other->file, at->file) || other->line <= 0) return buf;
    snprintf(buf, size, "; %s is set at %s:%d:%d", path_of(c, other), other->file, other->line,
             other->col);
    return buf;
}

static void check_not_above(vctx *V, const gs_num *a, const gs_num *limit, const char *why)
{
    if (!usable(V, a) || !usable(V, limit) || a->v <= limit->v) return;
    char also[GS_ERROR_FILE_MAX + 128];
    verr(V, a, path_of(V->c, a), "%.17g is larger than %s (%.17g)%s%s", a->v, path_of(V->c, limit),
         limit->v, why, also_at(V->c, a, limit, also, sizeof also));
}

void gs_cfg_validate(const gs_config *c, const unsigned char *bad, gs_diags *d)
{
    vctx V = {d, c, bad};
    const struct gs_config_store *st = c->store;
    const gs_num *P = &c->partitions;
    char a[64];

    char also[GS_ERROR_FILE_MAX + 128], also2[GS_ERROR_FILE_MAX + 128];
    /* Sizes in these messages are exact bytes: "1000 B", not the rounded "1KB". */
    if (usable(&V, &c->sbuf_bytes) && usable(&V, P) && fmod(c->sbuf_bytes.v, P->v) != 0)
        verr(&V, &c->sbuf_bytes, "core.sbuf",
             "%.17g B is not divisible by core.partitions (%.17g)%s", c->sbuf_bytes.v, P->v,
             also_at(c, &c->sbuf_bytes, P, also, sizeof also));
    if (usable(&V, &c->pool_alignment) &&
        (c->pool_alignment.v != floor(c->pool_alignment.v) ||
         ((uint64_t)c->pool_alignment.v & ((uint64_t)c->pool_alignment.v - 1)) != 0))
        verr(&V, &c->pool_alignment, "core.pool_alignment", "%.17g B is not a power of two",
             c->pool_alignment.v);
    if (usable(&V, &c->partition_quadrants) && usable(&V, P) &&
        fmod(P->v, c->partition_quadrants.v) != 0)
        verr(&V, &c->partition_quadrants, "core.partition_quadrants",
             "%.17g does not divide core.partitions (%.17g)%s", c->partition_quadrants.v, P->v,
             also_at(c, &c->partition_quadrants, P, also, sizeof also));
    int psum_ok = usable(&V, &c->psum_bytes) && usable(&V, P);
    if (psum_ok && fmod(c->psum_bytes.v, P->v) != 0) {
        psum_ok = 0;
        verr(&V, &c->psum_bytes, "core.psum.size",
             "%.17g B is not divisible by core.partitions (%.17g)%s", c->psum_bytes.v, P->v,
             also_at(c, &c->psum_bytes, P, also, sizeof also));
    } else if (usable(&V, &c->psum_bytes) && usable(&V, &c->psum_banks) &&
               fmod(c->psum_bytes.v, c->psum_banks.v) != 0) {
        fmt_val(c, &c->psum_bytes, a, sizeof a);
        verr(&V, &c->psum_banks, "core.psum.banks",
             "core.psum.size (%s) is not divisible into %.17g banks%s", a, c->psum_banks.v,
             also_at(c, &c->psum_banks, &c->psum_bytes, also, sizeof also));
    } else if (usable(&V, &c->psum_bytes) && usable(&V, &c->psum_banks) && usable(&V, P) &&
               fmod(c->psum_bytes.v / P->v, c->psum_banks.v) != 0) {
        verr(&V, &c->psum_banks, "core.psum.banks",
             "PSUM per partition (%.17g B) is not divisible into %.17g banks%s%s",
             c->psum_bytes.v / P->v, c->psum_banks.v,
             also_at(c, &c->psum_banks, &c->psum_bytes, also, sizeof also),
             also_at(c, &c->psum_banks, P, also2, sizeof also2));
    } else if (usable(&V, &c->psum_bytes) && usable(&V, &c->psum_banks) && usable(&V, P) &&
               usable(&V, &c->tensor.moving_free_max)) {
        double bank = c->psum_bytes.v / P->v / c->psum_banks.v;
        if (c->tensor.moving_free_max.v * 4 > bank)
            verr(&V, &c->tensor.moving_free_max, "engines.tensor.moving_free_max",
                 "%.17g fp32 results (%.17g B) do not fit one PSUM bank per partition (%.17g "
                 "B)%s%s",
                 c->tensor.moving_free_max.v, c->tensor.moving_free_max.v * 4, bank,
                 also_at(c, &c->tensor.moving_free_max, &c->psum_bytes, also, sizeof also),
                 also_at(c, &c->tensor.moving_free_max, P, also2, sizeof also2));
    }
    /* Derived time: moving the whole device memory once at the slowest bandwidth must stay far
     * inside the model's picosecond counter (2^64 ps is about 213 days; the limit 1e6 s leaves
     * 18x), so no transfer a program can express overflows it. */
    const gs_num *bws[] = {&c->hbm_bandwidth, &c->dma.bandwidth_per_engine};
    for (size_t k = 0; k < GS_ARRAY_LEN(bws); k++)
        if (usable(&V, &c->hbm_capacity) && usable(&V, bws[k]) &&
            c->hbm_capacity.v / bws[k]->v > 1e15) {
            fmt_val(c, &c->hbm_capacity, a, sizeof a);
            char bw[64];
            fmt_val(c, bws[k], bw, sizeof bw);
            verr(&V, bws[k], path_of(c, bws[k]),
                 "%s is too slow for chip.hbm.capacity (%s): moving it once would take %.3g s, "
                 "beyond the model's limit of 1e6 s%s",
                 bw, a, c->hbm_capacity.v / bws[k]->v / 1e9,
                 also_at(c, bws[k], &c->hbm_capacity, also, sizeof also));
        }
    check_not_above(&V, &c->tensor.rows, P, ": the contraction runs over partitions");
    check_not_above(&V, &c->tensor.cols, P, ": matmul output rows land on partitions");
    if (usable(&V, &c->cores) && c->cores.v > GS_MAX_CORES)
        verr(&V, &c->cores, "chip.cores", "%.17g cores is more than the supported %d", c->cores.v,
             GS_MAX_CORES);
    if (usable(&V, &c->dma.engines) && c->dma.engines.v > GS_MAX_QUEUES)
        verr(&V, &c->dma.engines, "core.dma.engines",
             "%.17g DMA engines is more than the "
             "supported %d",
             c->dma.engines.v, GS_MAX_QUEUES);
    if (usable(&V, &c->dma.queues) && c->dma.queues.v > GS_MAX_QUEUES)
        verr(&V, &c->dma.queues, "core.dma.queues",
             "%.17g queues per DMA engine is more than the supported %d", c->dma.queues.v,
             GS_MAX_QUEUES);
    check_not_above(&V, &c->dma.partitions_per_engine, P,
                    ": an engine cannot serve more partitions than the core has");

    static const int simd_engines[] = {GS_ENG_VECTOR, GS_ENG_SCALAR, GS_ENG_GPSIMD};
    for (size_t k = 0; k < GS_ARRAY_LEN(simd_engines); k++) {
        int e = simd_engines[k];
        const gs_simd_cfg *s = e == GS_ENG_VECTOR   ? &c->vector
                               : e == GS_ENG_SCALAR ? &c->scalar
                                                    : &c->gpsimd;
        if (!s->present) {
            if (e != GS_ENG_GPSIMD)
                lerr(&V, st ? &st->present_loc[e] : NULL,
                     e == GS_ENG_VECTOR ? "engines.vector.present" : "engines.scalar.present",
                     "only engines.gpsimd may be absent (every generation has vector and scalar "
                     "engines)");
            continue;
        }
        check_not_above(&V, &s->lanes, P, "");
        if (psum_ok && usable(&V, &s->max_free_psum) &&
            s->max_free_psum.v * 4 > c->psum_bytes.v / P->v)
            verr(&V, &s->max_free_psum, path_of(c, &s->max_free_psum),
                 "%.17g fp32 elements (%.17g B) exceed PSUM per partition (%.17g B)",
                 s->max_free_psum.v, s->max_free_psum.v * 4, c->psum_bytes.v / P->v);
        for (int t = 0; t < GS_DTYPE_COUNT; t++) {
            if (s->elems_per_cycle[t].src && s->elems_per_cycle[t].src[0] &&
                !(c->dtypes & (1u << t)))
                verr(&V, &s->elems_per_cycle[t], path_of(c, &s->elems_per_cycle[t]),
                     "dtype %s is not in dtypes", gs_dtype_name((gs_dtype)t));
            if (s->perf_mode_epc[t].src && s->perf_mode_epc[t].src[0] && !(c->dtypes & (1u << t)))
                verr(&V, &s->perf_mode_epc[t], path_of(c, &s->perf_mode_epc[t]),
                     "dtype %s is not in dtypes", gs_dtype_name((gs_dtype)t));
        }
    }
    for (int t = 0; t < GS_DTYPE_COUNT; t++)
        if (c->tensor.rate[t].src && c->tensor.rate[t].src[0] && !(c->dtypes & (1u << t)))
            verr(&V, &c->tensor.rate[t], path_of(c, &c->tensor.rate[t]),
                 "dtype %s is not in dtypes", gs_dtype_name((gs_dtype)t));

    for (int op = 0; op < GS_OPCODE_COUNT; op++) {
        if (!(c->ops & (1ull << op))) continue;
        const gs_loc *at = st ? &st->ops_loc[op] : NULL;
        if (op_needs_gpsimd(op) && !c->gpsimd.present)
            lerr(&V, at, "ops", "'%s' runs on the GpSimd engine, but engines.gpsimd is not present",
                 gs_opcode_name((gs_opcode)op));
        if (op == GS_OP_DMA_TRANSPOSE && !c->dma.transpose)
            lerr(&V, at, "ops", "'dma_transpose' is listed but core.dma.transpose is false");
    }
    if (c->dma.transpose && !c->dma.transpose_factor.src)
        lerr(&V, st ? &st->transpose_loc : NULL, "core.dma.transpose_factor",
             "required when core.dma.transpose is true");
    /* The family: registered, has every feature the config enables, and its own checks. */
    if (c->family) {
        const gs_loc *fl = st ? &st->family_loc : NULL;
        gs_family_check_config(c, fl ? fl->file : c->path, fl ? fl->line : 0, fl ? fl->col : 0, d);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* --set                                                                                      */

static const char *const set_bools[] = {"core.dma.transpose", "core.dma.hw_descriptors",
                                        "engines.tensor.double_row", "engines.tensor.bf16_psum",
                                        "core.dma.cast"};

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    size_t k = 0;
    while (s[k] == ' ' || s[k] == '\t')
        k++;
    if (k) memmove(s, s + k, n - k + 1);
}

/* Apply one assignment to *copy (a working copy of c sharing its store) without validating the
 * whole config: the key, the syntax and the value's own range are checked here. The first
 * change of the transpose location saves the old one in *saved (*restore set). */
static gs_status set_one(gs_config *c, gs_config *copy, const char *assignment, gs_diags *d,
                         gs_loc *saved, int *restore)
{
    const char *eq = assignment ? strchr(assignment, '=') : NULL;
    if (!eq) {
        gs_diags_add(d, GS_ERR_USAGE, "--set", 0, 0, "expected KEY=VALUE, got '%s'",
                     assignment ? assignment : "");
        return GS_ERR_USAGE;
    }
    char key[192], val[256];
    snprintf(key, sizeof key, "%.*s", (int)GS_MIN((size_t)(eq - assignment), sizeof key - 1),
             assignment);
    snprintf(val, sizeof val, "%s", eq + 1);
    trim(key);
    trim(val);
    int fi = gs_cfg_field_index(key);
    size_t bi = 0;
    while (bi < GS_ARRAY_LEN(set_bools) && strcmp(set_bools[bi], key))
        bi++;
    if (fi < 0 && bi == GS_ARRAY_LEN(set_bools)) {
        const char *cands[GS_CFG_MAX_FIELDS + GS_ARRAY_LEN(set_bools)];
        size_t n = 0;
        for (size_t i = 0; i < gs_cfg_n_fields; i++)
            cands[n++] = gs_cfg_fields[i].path;
        for (size_t i = 0; i < GS_ARRAY_LEN(set_bools); i++)
            cands[n++] = set_bools[i];
        char dym[192];
        gs_diags_add(d, GS_ERR_INVALID, "--set", 0, 0, "%s: unknown key%s", key,
                     gs_cfg_did_you_mean(dym, sizeof dym, key, cands, n));
        return GS_ERR_INVALID;
    }
    if (fi < 0) {
        int b = !strcmp(val, "true") ? 1 : !strcmp(val, "false") ? 0 : -1;
        if (b < 0) {
            gs_diags_add(d, GS_ERR_INVALID, "--set", 0, 0, "%s: expected true or false, got '%s'",
                         key, val);
            return GS_ERR_INVALID;
        }
        if (bi == 0) {
            copy->dma.transpose = b;
            if (!*restore) *saved = c->store->transpose_loc;
            c->store->transpose_loc = (gs_loc){"--set", 0, 0};
            *restore = 1;
        } else if (bi == 1) {
            copy->dma.hw_descriptors = b;
        } else if (bi == 2) {
            copy->tensor.double_row = b;
        } else if (bi == 3) {
            copy->tensor.bf16_psum = b;
        } else {
            copy->dma.cast = b;
        }
        return GS_OK;
    }
    if (gs_cfg_impls[fi].engine >= 0 &&
        !gs_config_has_engine(copy, (gs_engine)gs_cfg_impls[fi].engine)) {
        gs_diags_add(d, GS_ERR_INVALID, "--set", 0, 0,
                     "%s: engines.%s is not present on this generation", key,
                     gs_engine_name((gs_engine)gs_cfg_impls[fi].engine));
        return GS_ERR_INVALID;
    }
    gs_num *num = gs_cfg_num_at(copy, (size_t)fi);
    size_t vl = strlen(val);
    int relative = vl > 1 && (val[0] == 'x' || val[0] == '*' || val[vl - 1] == 'x');
    double v;
    char msg[256];
    const char *note = NULL;
    if (relative) {
        char fac[256];
        if (val[0] == 'x' || val[0] == '*')
            snprintf(fac, sizeof fac, "%s", val + 1);
        else
            snprintf(fac, sizeof fac, "%.*s", (int)(vl - 1), val);
        double f;
        if (gs_units_parse(fac, GS_UNIT_REAL, &f, msg, sizeof msg) != GS_OK) {
            gs_diags_add(d, GS_ERR_INVALID, "--set", 0, 0, "%s: bad factor '%s': %s", key, val,
                         msg);
            return GS_ERR_INVALID;
        }
        if (!num->src || !num->src[0]) {
            gs_diags_add(d, GS_ERR_INVALID, "--set", 0, 0,
                         "%s: has no value in this config to scale by '%s'", key, val);
            return GS_ERR_INVALID;
        }
        v = num->v * f;
        char was[64], nb[400];
        gs_units_format(num->v, gs_cfg_fields[fi].unit, was, sizeof was);
        snprintf(nb, sizeof nb, "%s of %s (%s)", val, was, num->src);
        note = gs_cfg_store_cstr(c, nb);
    } else if (gs_units_parse(val, gs_cfg_fields[fi].unit, &v, msg, sizeof msg) != GS_OK) {
        gs_diags_add(d, GS_ERR_INVALID, "--set", 0, 0, "%s: %s", key, msg);
        return GS_ERR_INVALID;
    }
    char rb[128];
    const char *why = gs_cfg_check_value((size_t)fi, v, rb, sizeof rb);
    if (why) {
        char vb[64];
        gs_units_format(v, gs_cfg_fields[fi].unit, vb, sizeof vb);
        gs_diags_add(d, GS_ERR_INVALID, "--set", 0, 0, "%s: %s %s", key, vb, why);
        return GS_ERR_INVALID;
    }
    num->v = v;
    num->src = "--set";
    num->note = note;
    num->file = "--set";
    num->line = num->col = 0;
    return GS_OK;
}

gs_status gs_config_set_all(gs_config *c, const char *const *assignments, size_t n, gs_diags *diags)
{
    gs_diags local;
    gs_diags_init(&local);
    gs_diags *d = diags ? diags : &local;
    gs_status rc = GS_ERR_INVALID;
    gs_loc saved_loc = {NULL, 0, 0};
    int restore_loc = 0;
    if (!c) {
        gs_diags_add(d, GS_ERR_USAGE, "--set", 0, 0, "no config to apply --set to");
        gs_diags_free(&local);
        return GS_ERR_USAGE;
    }
    if (!gs_cfg_store_get(c)) {
        gs_diags_add(d, GS_ERR_NOMEM, "--set", 0, 0, "out of memory");
        gs_diags_free(&local);
        return GS_ERR_NOMEM;
    }
    gs_config copy = *c;
    for (size_t i = 0; i < n; i++) {
        rc = set_one(c, &copy, assignments[i], d, &saved_loc, &restore_loc);
        if (rc != GS_OK) goto out;
    }
    /* the whole config once, with every override in place: a check between two values
     * cannot depend on the order they were given in */
    size_t before = gs_cfg_diag_total(d);
    gs_cfg_validate(&copy, NULL, d);
    if (gs_cfg_diag_total(d) != before) {
        rc = GS_ERR_INVALID;
        goto out;
    }
    *c = copy;
    restore_loc = 0;
    rc = GS_OK;
out:
    if (restore_loc) c->store->transpose_loc = saved_loc;
    gs_diags_free(&local);
    return rc;
}

gs_status gs_config_set(gs_config *c, const char *assignment, gs_diags *diags)
{
    return gs_config_set_all(c, &assignment, 1, diags);
}

gs_config *gs_config_load_with(const char *path, const char *const *sets, size_t n_sets,
                               gs_diags *diags)
{
    gs_config *c = gs_config_load(path, diags);
    if (c && gs_config_set_all(c, sets, n_sets, diags) != GS_OK) {
        gs_config_free(c);
        c = NULL;
    }
    return c;
}

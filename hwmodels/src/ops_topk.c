/*
 * ops_topk.c - the top-k selection instructions of the vector engine: the builder calls
 * gs_max8, gs_find_index8 and gs_match_replace8 (gs/kernel.h) and their functional semantics
 * per partition (ops_topk.h, run by exec.c).
 *
 * Source: the NKI ISA reference, nki.isa.max8, nki.isa.nc_find_index8 and
 * nki.isa.nc_match_replace8 (awsdocs-neuron.readthedocs-hosted.com, nki/api/generated/
 * nki.isa.max8.html and the pages beside it; the cost "N engine cycles" from the v2.26.1 max8
 * page, the duplicate pairing from the v2.32.0 nc_match_replace8 page):
 *  - max8 reads its input "converts them to fp32 internally, and outputs the 8 largest values
 *    in descending order for each partition", output converted to the destination dtype; the
 *    input has "between 8 and 16,384" elements per partition (GS_TOPK8_FREE_MAX).
 *  - nc_find_index8 outputs "the indices (starting at 0) of the first occurrence of each value",
 *    uint16 or uint32; the data tensor has between 8 and 16,384 elements per partition.
 *    Duplicate vals pair with their matching positions in ascending order across the columns.
 *  - nc_match_replace8 (Vector engine) replaces the first occurrence of each of the 8 values by
 *    the float32 immediate and optionally writes the indices matched (dst_idx); it processes
 *    vals in reverse order (7, 6, ..., 0), so duplicates pair with descending positions; the
 *    data has no more than 16,384 elements per partition.
 *
 * Modelling choices the pages leave open (documented in docs/NKI.md as well):
 *  - Indices are int32 (the model has no uint32 dtype; the same bits for indices < 2^31).
 *  - Values are compared as fp32 after conversion from their dtype; -0 and +0 are equal.
 *  - Ties in max8: equal values all count (a value occurring three times among the largest
 *    fills three slots); among equal values the earlier position is taken first (visible only
 *    for -0/+0 and NaN payloads).
 *  - NaN [assumed: the pages do not say]: max8 ranks a NaN below every number (a NaN is output
 *    only when fewer than 8 numbers remain); find_index8 and match_replace8 match a NaN value
 *    with a NaN element.
 *  - A value not found ("undefined behaviour" on the hardware): index -1 and no replacement, so
 *    a kernel relying on it fails its check instead of reading an arbitrary index.
 *  - A position is matched at most once per instruction: a replaced element is not matched
 *    again by a later value, even when imm equals that value.
 */
#include "ops_topk.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kb_internal.h"

/* ---- semantics ---- */

/* a ranks above b in max8's order: numbers by value, NaN below every number. */
static int ranks_above(float a, float b)
{
    if (isnan(a)) return 0;
    if (isnan(b)) return 1;
    return a > b;
}

static int same_value(float a, float b)
{
    return a == b || (isnan(a) && isnan(b));
}

void gs_topk_max8_row(const float *x, size_t n, float out[8])
{
    /* insertion into a descending list of the first 8; a later element replaces only a strictly
     * lower one, so among equals the earlier position stays first */
    size_t have = 0;
    for (size_t i = 0; i < n; i++) {
        const float v = x[i];
        if (have == 8 && !ranks_above(v, out[7])) continue;
        size_t k = have < 8 ? have++ : 7;
        while (k > 0 && ranks_above(v, out[k - 1])) {
            out[k] = out[k - 1];
            k--;
        }
        out[k] = v;
    }
    for (; have < 8; have++) /* n < 8: the builder refuses it; never leave a slot unset */
        out[have] = NAN;
}

static int claimed(const int64_t *pos, int npos, int64_t i)
{
    for (int k = 0; k < npos; k++)
        if (pos[k] == i) return 1;
    return 0;
}

/* The first position of v in x not among pos[0..npos), or -1. */
static int64_t first_free(const float *x, size_t n, float v, const int64_t *pos, int npos)
{
    for (size_t i = 0; i < n; i++)
        if (same_value(x[i], v) && !claimed(pos, npos, (int64_t)i)) return (int64_t)i;
    return -1;
}

void gs_topk_find_index8_row(const float *x, size_t n, const float vals[8], float idx[8])
{
    int64_t pos[8];
    int npos = 0;
    for (int j = 0; j < 8; j++) {
        const int64_t i = first_free(x, n, vals[j], pos, npos);
        if (i >= 0) pos[npos++] = i;
        idx[j] = (float)i; /* exact: i < GS_TOPK8_FREE_MAX */
    }
}

void gs_topk_match_replace8_row(float *x, size_t n, const float vals[8], float imm, float idx[8])
{
    int64_t pos[8];
    int npos = 0;
    for (int j = 7; j >= 0; j--) {
        const int64_t i = first_free(x, n, vals[j], pos, npos);
        if (i >= 0) pos[npos++] = i;
        idx[j] = (float)i;
    }
    for (int k = 0; k < npos; k++)
        x[pos[k]] = imm;
}

/* ---- builder ---- */

#define REQUIRE(cond, code, ...)                                                                   \
    do {                                                                                           \
        if (!(cond)) return gs_kb_failf(kb, file, line, (code), __VA_ARGS__);                      \
    } while (0)

static void draft_init(gs_instr_draft *in, gs_opcode op)
{
    memset(in, 0, sizeof *in);
    in->op = op;
    in->engine = GS_ENG_VECTOR;
    for (int k = 0; k < GS_INSTR_MAX_IN; k++)
        in->in[k].tensor = -1;
    for (int k = 0; k < GS_INSTR_MAX_OUT; k++)
        in->out[k].tensor = -1;
}

static int is_onchip(const gs_ap *a)
{
    return a->space == GS_MEM_SBUF || a->space == GS_MEM_PSUM;
}

/* the float dtypes the vector engine converts to fp32 (not the packed MX ones or e8m0) */
static int is_value_dtype(gs_dtype t)
{
    return t == GS_FP32 || t == GS_BF16 || t == GS_FP16 || t == GS_FP8_E4M3 || t == GS_FP8_E5M2;
}

#define VALUE_DTYPES "fp32, bf16, fp16, fp8_e4m3 or fp8_e5m2"

/* an operand of exactly 8 elements on `parts` partitions, of the wanted kind */
static gs_status check_eight(gs_kb *kb, const char *file, int line, const char *op,
                             const char *what, const gs_ap *a, unsigned parts, int index)
{
    REQUIRE(is_onchip(a), GS_ERR_INVALID, "%s: %s must be an SBUF/PSUM tile", op, what);
    REQUIRE(a->part_count == parts && gs_kb_free_elems(a) == 8, GS_ERR_INVALID,
            "%s: %s must be [%u x 8], got [%u x %" PRIu64 "]", op, what, parts, a->part_count,
            gs_kb_free_elems(a));
    if (index)
        REQUIRE(a->dtype == GS_INT32, GS_ERR_INVALID,
                "%s: %s holds indices and must be int32, got %s", op, what,
                gs_dtype_name(a->dtype));
    else
        REQUIRE(is_value_dtype(a->dtype), GS_ERR_INVALID, "%s: %s must be " VALUE_DTYPES ", got %s",
                op, what, gs_dtype_name(a->dtype));
    return GS_OK;
}

/* the data operand: a tile of value dtype with min_free..GS_TOPK8_FREE_MAX elements */
static gs_status check_data(gs_kb *kb, const char *file, int line, const char *op, const char *what,
                            const gs_ap *a, uint64_t min_free)
{
    REQUIRE(is_onchip(a), GS_ERR_INVALID, "%s: %s must be an SBUF/PSUM tile", op, what);
    REQUIRE(is_value_dtype(a->dtype), GS_ERR_INVALID, "%s: %s must be " VALUE_DTYPES ", got %s", op,
            what, gs_dtype_name(a->dtype));
    const uint64_t f = gs_kb_free_elems(a);
    REQUIRE(f >= min_free && f <= GS_TOPK8_FREE_MAX, GS_ERR_INVALID,
            "%s: %s has %" PRIu64 " elements per partition; the instruction reads %" PRIu64
            "..%u (GS_TOPK8_FREE_MAX, the NKI ISA limit)",
            op, what, f, min_free, GS_TOPK8_FREE_MAX);
    return GS_OK;
}

gs_status gs_max8_at(gs_kb *kb, const char *file, int line, gs_ap dst, gs_ap src)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    draft_init(&in, GS_OP_MAX8);
    if (check_data(kb, file, line, "max8", "src", &src, 8) ||
        check_eight(kb, file, line, "max8", "dst", &dst, src.part_count, 0))
        return kb->err.code;
    return gs_kb_emit_out_in(kb, file, line, &in, dst, src);
}

gs_status gs_find_index8_at(gs_kb *kb, const char *file, int line, gs_ap dst, gs_ap data,
                            gs_ap vals)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    draft_init(&in, GS_OP_FIND_INDEX8);
    if (check_data(kb, file, line, "find_index8", "data", &data, 8) ||
        check_eight(kb, file, line, "find_index8", "vals", &vals, data.part_count, 0) ||
        check_eight(kb, file, line, "find_index8", "dst", &dst, data.part_count, 1))
        return kb->err.code;
    in.out[0] = dst;
    in.in[0] = data;
    in.in[1] = vals;
    in.n_out = 1;
    in.n_in = 2;
    return gs_kb_emit(kb, file, line, &in);
}

gs_status gs_match_replace8_at(gs_kb *kb, const char *file, int line, gs_ap dst,
                               const gs_ap *dst_idx, gs_ap data, gs_ap vals, float imm)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    draft_init(&in, GS_OP_MATCH_REPLACE8);
    if (check_data(kb, file, line, "match_replace8", "data", &data, 1) ||
        check_data(kb, file, line, "match_replace8", "dst", &dst, 1) ||
        check_eight(kb, file, line, "match_replace8", "vals", &vals, data.part_count, 0) ||
        (dst_idx &&
         check_eight(kb, file, line, "match_replace8", "dst_idx", dst_idx, data.part_count, 1)))
        return kb->err.code;
    REQUIRE(dst.part_count == data.part_count && gs_kb_free_elems(&dst) == gs_kb_free_elems(&data),
            GS_ERR_INVALID,
            "match_replace8: dst must have data's shape [%u x %" PRIu64 "], got [%u x %" PRIu64 "]",
            data.part_count, gs_kb_free_elems(&data), dst.part_count, gs_kb_free_elems(&dst));
    in.imm[0] = imm;
    in.out[0] = dst;
    in.in[0] = data;
    in.in[1] = vals;
    in.n_in = 2;
    in.n_out = 1;
    if (dst_idx) {
        in.out[1] = *dst_idx;
        in.n_out = 2;
    }
    return gs_kb_emit(kb, file, line, &in);
}

/*
 * kb_ops.c - the kernel builder's instruction API (gs/kernel.h): each operation checks what is
 * specific to it (shapes, dtypes, engines, target capabilities) and emits its instruction
 * through gs_kb_emit (kb.c), which validates the operands and derives the dependencies.
 */
#include <inttypes.h>
#include <string.h>

#include "kb_internal.h"

static void instr_init(gs_instr_draft *in, gs_opcode op, gs_engine eng)
{
    memset(in, 0, sizeof *in);
    in->op = op;
    in->engine = eng;
    for (int k = 0; k < GS_INSTR_MAX_IN; k++)
        in->in[k].tensor = -1;
    for (int k = 0; k < GS_INSTR_MAX_OUT; k++)
        in->out[k].tensor = -1;
}

static int same_shape(const gs_ap *a, const gs_ap *b)
{
    return a->part_count == b->part_count && gs_kb_free_elems(a) == gs_kb_free_elems(b);
}

/* Labels for messages (gs_kb_ap_label), filled only when a check fails: REQUIRE evaluates its
 * message arguments on failure alone, so the hot path formats nothing. */
#define LABEL(a, buf) gs_kb_ap_label(kb, (a), (buf), sizeof(buf))

/* The capability text a PSUM-bank error points at. */
#define BANK_CAP "caps.psum_bank_bytes, from core.psum.size / core.partitions / core.psum.banks"

#define REQUIRE(cond, code, ...)                                                                   \
    do {                                                                                           \
        if (!(cond)) return gs_kb_failf(kb, file, line, (code), __VA_ARGS__);                      \
    } while (0)

static gs_status pick_queue(gs_kb *kb, const char *file, int line, int queue, uint16_t *out)
{
    unsigned nq = kb->caps.dma_queues;
    if (queue < 0) {
        /* round robin; rr_queue stays below nq (no division per DMA) */
        *out = (uint16_t)kb->rr_queue;
        if (++kb->rr_queue >= nq) kb->rr_queue = 0;
        return GS_OK;
    }
    REQUIRE((unsigned)queue < nq, GS_ERR_INVALID,
            "DMA queue %d does not exist (target has %u: caps.dma_queues, from core.dma.queues)",
            queue, nq);
    *out = (uint16_t)queue;
    return GS_OK;
}

/* A view its helper refused (gs_ap.bad_view) is reported before the operation's own shape
 * rules: its shape may be meaningless (a gs_hbm_ap without dims), and "shapes differ" would
 * hide the range error behind it. For the operations that take HBM views. */
static gs_status check_views_first(gs_kb *kb, const char *file, int line, const gs_instr_draft *in,
                                   const gs_ap *out, const gs_ap *a, const gs_ap *b)
{
    if (out->bad_view && gs_kb_check_ap(kb, file, line, in, out, "out0")) return kb->err.code;
    if (a->bad_view && gs_kb_check_ap(kb, file, line, in, a, "in0")) return kb->err.code;
    if (b && b->bad_view && gs_kb_check_ap(kb, file, line, in, b, "in1")) return kb->err.code;
    return GS_OK;
}

static int is_onchip(const gs_ap *a)
{
    return a->space == GS_MEM_SBUF || a->space == GS_MEM_PSUM;
}

/* a dtype a DMA cast converts (from and to fp32 exactly or with rounding) */
static int dma_castable(gs_dtype t)
{
    return t == GS_FP32 || t == GS_BF16 || t == GS_FP16 || t == GS_FP8_E4M3 || t == GS_FP8_E5M2;
}

gs_status gs_dma_copy_at(gs_kb *kb, const char *file, int line, gs_ap dst, gs_ap src, int queue)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    instr_init(&in, GS_OP_DMA_COPY, GS_ENG_DMA);
    if (check_views_first(kb, file, line, &in, &dst, &src, NULL)) return kb->err.code;
    REQUIRE(dst.space != GS_MEM_PSUM && src.space != GS_MEM_PSUM, GS_ERR_INVALID,
            "dma_copy: DMA cannot access PSUM (evacuate with tensor_copy)");
    REQUIRE(dst.space == GS_MEM_SBUF || src.space == GS_MEM_SBUF, GS_ERR_INVALID,
            "dma_copy: one side must be SBUF (HBM<->SBUF or SBUF<->SBUF)");
    if (dst.dtype != src.dtype) {
        /* a converting copy (core.dma.cast): float dtypes only, element for element */
        REQUIRE(dma_castable(dst.dtype) && dma_castable(src.dtype), GS_ERR_INVALID,
                "dma_copy: cannot convert %s <- %s (a DMA cast is between fp32, bf16, fp16 and "
                "fp8 dtypes)",
                gs_dtype_name(dst.dtype), gs_dtype_name(src.dtype));
        REQUIRE(kb->caps.dma_cast, GS_ERR_UNSUPPORTED,
                "unsupported: dma_copy with a dtype cast (%s <- %s): this target's DMA does not "
                "convert (core.dma.cast)",
                gs_dtype_name(dst.dtype), gs_dtype_name(src.dtype));
    }
    REQUIRE(same_shape(&dst, &src), GS_ERR_INVALID,
            "dma_copy: shapes differ (%u x %" PRIu64 " <- %u x %" PRIu64 ")", dst.part_count,
            gs_kb_free_elems(&dst), src.part_count, gs_kb_free_elems(&src));
    if (pick_queue(kb, file, line, queue, &in.queue)) return kb->err.code;
    in.out[0] = dst;
    in.in[0] = src;
    in.n_out = 1;
    in.n_in = 1;
    return gs_kb_emit(kb, file, line, &in);
}

gs_status gs_dma_transpose_at(gs_kb *kb, const char *file, int line, gs_ap dst, gs_ap src,
                              int queue)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    instr_init(&in, GS_OP_DMA_TRANSPOSE, GS_ENG_DMA);
    if (check_views_first(kb, file, line, &in, &dst, &src, NULL)) return kb->err.code;
    REQUIRE(kb->caps.dma_transpose, GS_ERR_UNSUPPORTED,
            "unsupported: dma_transpose on this target");
    REQUIRE(dst.space == GS_MEM_SBUF, GS_ERR_INVALID, "dma_transpose: destination must be SBUF");
    REQUIRE(src.space != GS_MEM_PSUM, GS_ERR_INVALID, "dma_transpose: DMA cannot read PSUM");
    REQUIRE(dst.dtype == src.dtype && gs_dtype_size(src.dtype) == 2, GS_ERR_INVALID,
            "dma_transpose: needs equal 2-byte dtypes (%s <- %s)", gs_dtype_name(dst.dtype),
            gs_dtype_name(src.dtype));
    REQUIRE(dst.part_count == gs_kb_free_elems(&src) && gs_kb_free_elems(&dst) == src.part_count,
            GS_ERR_INVALID,
            "dma_transpose: output must be [%" PRIu64 " x %u], is [%u x %" PRIu64 "]",
            gs_kb_free_elems(&src), src.part_count, dst.part_count, gs_kb_free_elems(&dst));
    if (pick_queue(kb, file, line, queue, &in.queue)) return kb->err.code;
    in.out[0] = dst;
    in.in[0] = src;
    in.n_out = 1;
    in.n_in = 1;
    return gs_kb_emit(kb, file, line, &in);
}

static int psum_in_one_bank(const gs_kb *kb, const gs_ap *a)
{
    int64_t lo, hi;
    if (gs_ap_bbox(a, &lo, &hi)) return 0; /* outside every bank: refused either way */
    int64_t bank = (int64_t)kb->caps.psum_bank_bytes;
    return bank > 0 && lo / bank == (hi - 1) / bank;
}

static gs_status matmul_on(gs_kb *kb, const char *file, int line, gs_ap psum, gs_ap stationary,
                           gs_ap moving, int accumulate, const int *tile);

gs_status gs_matmul_at(gs_kb *kb, const char *file, int line, gs_ap psum, gs_ap stationary,
                       gs_ap moving, int accumulate)
{
    return matmul_on(kb, file, line, psum, stationary, moving, accumulate, NULL);
}

/* PE array tiling (nki.isa.nc_matmul tile_position / tile_size; the NKI ISA nc_matmul page,
 * "Tiling mode": the 128 x 128 array sliced into row and column tiles of 64 or 32 so that
 * matmuls with a smaller stationary run side by side). The tile is kept in iimm[0] =
 * row_off << 16 | col_off and iimm[1] = rows << 16 | cols (0: the whole array). */
gs_status gs_matmul_tile_at(gs_kb *kb, const char *file, int line, gs_ap psum, gs_ap stationary,
                            gs_ap moving, int accumulate, const int tile[4])
{
    return matmul_on(kb, file, line, psum, stationary, moving, accumulate, tile);
}

static int pe_tile_size_ok(int size, unsigned array)
{
    return size > 0 && (unsigned)size <= array && array % (unsigned)size == 0 &&
           (size == 32 || size == 64 || (unsigned)size == array);
}

static gs_status matmul_on(gs_kb *kb, const char *file, int line, gs_ap psum, gs_ap stationary,
                           gs_ap moving, int accumulate, const int *tile)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    instr_init(&in, GS_OP_MATMUL, GS_ENG_TENSOR);
    const gs_caps *c = &kb->caps;
    if (tile) {
        const int r0 = tile[0], c0 = tile[1], rows = tile[2], cols = tile[3];
        REQUIRE(pe_tile_size_ok(rows, c->pe_rows) && pe_tile_size_ok(cols, c->pe_cols),
                GS_ERR_INVALID,
                "matmul: PE tile size %d x %d (rows and columns each 32, 64 or the whole "
                "array's %u x %u)",
                rows, cols, c->pe_rows, c->pe_cols);
        REQUIRE(r0 >= 0 && c0 >= 0 && r0 % rows == 0 && c0 % cols == 0 &&
                    (unsigned)(r0 + rows) <= c->pe_rows && (unsigned)(c0 + cols) <= c->pe_cols,
                GS_ERR_INVALID,
                "matmul: PE tile position (%d, %d) is no multiple of the tile size %d x %d "
                "inside the %u x %u array",
                r0, c0, rows, cols, c->pe_rows, c->pe_cols);
        REQUIRE(stationary.part_count <= (unsigned)rows &&
                    gs_kb_free_elems(&stationary) <= (uint64_t)cols,
                GS_ERR_INVALID,
                "matmul: stationary [%u x %" PRIu64 "] exceeds its PE tile of %d x %d",
                stationary.part_count, gs_kb_free_elems(&stationary), rows, cols);
        if ((unsigned)rows != c->pe_rows || (unsigned)cols != c->pe_cols) {
            in.iimm[0] = (int64_t)r0 << 16 | c0;
            in.iimm[1] = (int64_t)rows << 16 | cols;
        }
    }
    REQUIRE(psum.space == GS_MEM_PSUM &&
                (psum.dtype == GS_FP32 || (psum.dtype == GS_BF16 && c->matmul_bf16_psum)),
            GS_ERR_INVALID, "matmul: output must be an fp32 PSUM tile%s",
            c->matmul_bf16_psum ? " or a bf16 one"
                                : " (bf16 PSUM output needs engines.tensor.bf16_psum, a "
                                  "NeuronCore-v4 family feature)");
    REQUIRE(stationary.space == GS_MEM_SBUF && moving.space == GS_MEM_SBUF, GS_ERR_INVALID,
            "matmul: stationary and moving operands must be in SBUF");
    REQUIRE((c->matmul_dtypes & (1u << stationary.dtype)) &&
                (c->matmul_dtypes & (1u << moving.dtype)),
            GS_ERR_UNSUPPORTED, "unsupported: %s x %s matmul on this target",
            gs_dtype_name(stationary.dtype), gs_dtype_name(moving.dtype));
    uint64_t K = stationary.part_count, M = gs_kb_free_elems(&stationary);
    uint64_t N = gs_kb_free_elems(&moving);
    char l1[96], l2[96];
    REQUIRE(moving.part_count == K, GS_ERR_INVALID,
            "matmul: contraction sizes differ (stationary %" PRIu64 ", moving %u partitions)", K,
            moving.part_count);
    REQUIRE(K <= c->pe_rows, GS_ERR_INVALID,
            "matmul: contraction %" PRIu64 " exceeds %u PE rows (stationary %s, moving %s: "
            "contract in blocks of at most caps.pe_rows, from engines.tensor.rows)",
            K, c->pe_rows, LABEL(&stationary, l1), LABEL(&moving, l2));
    REQUIRE(M <= c->pe_cols, GS_ERR_INVALID,
            "matmul: stationary free size %" PRIu64 " exceeds %u PE columns (stationary %s: at "
            "most caps.pe_cols, from engines.tensor.cols)",
            M, c->pe_cols, LABEL(&stationary, l1));
    REQUIRE(N <= c->moving_free_max, GS_ERR_INVALID,
            "matmul: moving free size %" PRIu64 " exceeds the limit of %u (moving %s: at most "
            "caps.moving_free_max, from engines.tensor.moving_free_max)",
            N, c->moving_free_max, LABEL(&moving, l1));
    REQUIRE(psum.part_count == M && gs_kb_free_elems(&psum) == N, GS_ERR_INVALID,
            "matmul: output must be [%" PRIu64 " x %" PRIu64 "], is [%u x %" PRIu64 "]", M, N,
            psum.part_count, gs_kb_free_elems(&psum));
    REQUIRE(psum_in_one_bank(kb, &psum), GS_ERR_INVALID,
            "matmul: output [%" PRIu64 " x %" PRIu64 "] fp32 does not fit one PSUM bank (%" PRIu64
            " bytes per partition; output %s: " BANK_CAP ")",
            M, N, c->psum_bank_bytes, LABEL(&psum, l1));
    in.out[0] = psum;
    in.in[0] = stationary;
    in.in[1] = moving;
    in.n_out = 1;
    in.n_in = 2;
    if (accumulate) in.flags |= GS_F_ACCUMULATE;
    return gs_kb_emit(kb, file, line, &in);
}

/* A [P, 2, X] double-row operand: outermost free dim 2; X = the rest. */
static int dr_half(const gs_ap *a, uint64_t *x)
{
    if (a->ndim < 2 || a->shape[0] != 2) return 0;
    *x = gs_kb_free_elems(a) / 2;
    return 1;
}

/* The checks the double-row and MX matmuls share once their contraction is checked: the
 * stationary free size against the PE columns, the moving free size against its limit, the
 * output shape [M x N] and the output in one PSUM bank. `op` prefixes the messages. */
static gs_status wide_matmul_checks(gs_kb *kb, const char *file, int line, const char *op,
                                    const gs_ap *stationary, const gs_ap *moving, const gs_ap *psum,
                                    uint64_t M, uint64_t N)
{
    const gs_caps *c = &kb->caps;
    char l1[96];
    REQUIRE(M <= c->pe_cols, GS_ERR_INVALID,
            "%s: stationary free size %" PRIu64 " exceeds %u PE columns (stationary %s: "
            "caps.pe_cols, from engines.tensor.cols)",
            op, M, c->pe_cols, LABEL(stationary, l1));
    REQUIRE(N <= c->moving_free_max, GS_ERR_INVALID,
            "%s: moving free size %" PRIu64 " exceeds the limit of %u (moving %s: "
            "caps.moving_free_max, from engines.tensor.moving_free_max)",
            op, N, c->moving_free_max, LABEL(moving, l1));
    REQUIRE(psum->part_count == M && gs_kb_free_elems(psum) == N, GS_ERR_INVALID,
            "%s: output must be [%" PRIu64 " x %" PRIu64 "], is [%u x %" PRIu64 "]", op, M, N,
            psum->part_count, gs_kb_free_elems(psum));
    REQUIRE(psum_in_one_bank(kb, psum), GS_ERR_INVALID,
            "%s: output does not fit one PSUM bank (%" PRIu64
            " bytes per partition; output %s: " BANK_CAP ")",
            op, c->psum_bank_bytes, LABEL(psum, l1));
    return GS_OK;
}

gs_status gs_matmul_dr_at(gs_kb *kb, const char *file, int line, gs_ap psum, gs_ap stationary,
                          gs_ap moving, int accumulate)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    instr_init(&in, GS_OP_MATMUL, GS_ENG_TENSOR);
    in.flags |= GS_F_DOUBLE_ROW;
    const gs_caps *c = &kb->caps;
    REQUIRE(c->double_row_k > 0, GS_ERR_UNSUPPORTED,
            "unsupported: fp8 double-row matmul on this target (family %s)", kb->cfg->family);
    REQUIRE((c->double_row_dtypes & (1u << stationary.dtype)) &&
                (c->double_row_dtypes & (1u << moving.dtype)),
            GS_ERR_UNSUPPORTED, "unsupported: %s x %s double-row matmul (fp8 only)",
            gs_dtype_name(stationary.dtype), gs_dtype_name(moving.dtype));
    REQUIRE(psum.space == GS_MEM_PSUM && psum.dtype == GS_FP32, GS_ERR_INVALID,
            "matmul (double row): output must be an fp32 PSUM tile");
    REQUIRE(stationary.space == GS_MEM_SBUF && moving.space == GS_MEM_SBUF, GS_ERR_INVALID,
            "matmul (double row): stationary and moving operands must be in SBUF");
    uint64_t M = 0, N = 0, P = stationary.part_count;
    REQUIRE(dr_half(&stationary, &M) && dr_half(&moving, &N), GS_ERR_INVALID,
            "matmul (double row): operands must be [P, 2, X] views (outermost free dim 2: the "
            "two halves of the contraction)");
    REQUIRE(moving.part_count == P, GS_ERR_INVALID,
            "matmul (double row): contraction sizes differ (stationary %" PRIu64
            ", moving %u partitions)",
            P, moving.part_count);
    char l1[96], l2[96];
    REQUIRE(2 * P <= c->double_row_k, GS_ERR_INVALID,
            "matmul (double row): contraction %" PRIu64 " exceeds %u (2 x %u PE rows; "
            "stationary %s, moving %s: caps.double_row_k, from engines.tensor.rows)",
            2 * P, c->double_row_k, c->pe_rows, LABEL(&stationary, l1), LABEL(&moving, l2));
    if (wide_matmul_checks(kb, file, line, "matmul (double row)", &stationary, &moving, &psum, M,
                           N) != GS_OK)
        return gs_kb_status(kb);
    in.out[0] = psum;
    in.in[0] = stationary;
    in.in[1] = moving;
    in.n_out = 1;
    in.n_in = 2;
    if (accumulate) in.flags |= GS_F_ACCUMULATE;
    return gs_kb_emit(kb, file, line, &in);
}

/* The MX scale layout rule: the scales of data partitions [p0, p0+P) sit in the same partition
 * quadrant, rows 32q + (p%32)/8; the scale tile covers the data tile's partitions (or, for
 * P <= 32, at least its P/8 scale rows) with the same free size. */
static gs_status check_mx_scale(gs_kb *kb, const char *file, int line, const char *what,
                                const gs_ap *data, const gs_ap *scale)
{
    uint32_t P = data->part_count;
    uint32_t need = P <= 32 ? (P + 7) / 8 : P;
    REQUIRE(scale->dtype == GS_E8M0, GS_ERR_INVALID, "%s: scales must be e8m0 (uint8), are %s",
            what, gs_dtype_name(scale->dtype));
    REQUIRE(scale->space == GS_MEM_SBUF, GS_ERR_INVALID, "%s: scales must be in SBUF", what);
    REQUIRE(data->part_start % 32 == 0 && scale->part_start == data->part_start, GS_ERR_INVALID,
            "%s: scale layout rule: the scales of a 32-partition quadrant must sit in that "
            "quadrant (data starts at partition %u, scales at %u; both must start at the same "
            "multiple of 32)",
            what, data->part_start, scale->part_start);
    REQUIRE(scale->part_count >= need, GS_ERR_INVALID,
            "%s: scale layout rule: %u data partitions need scales in partitions [%u, %u) "
            "(rows 32q + (p%%32)/8 of each quadrant), the scale view has %u",
            what, P, scale->part_start, scale->part_start + need, scale->part_count);
    REQUIRE(gs_kb_free_elems(scale) == gs_kb_free_elems(data), GS_ERR_INVALID,
            "%s: scale tile free size %" PRIu64 " must equal the data's %" PRIu64
            " (one scale per x4 column and 8-partition group)",
            what, gs_kb_free_elems(scale), gs_kb_free_elems(data));
    return GS_OK;
}

gs_status gs_matmul_mx_at(gs_kb *kb, const char *file, int line, gs_ap psum, gs_ap stationary,
                          gs_ap st_scale, gs_ap moving, gs_ap mv_scale, int accumulate)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    instr_init(&in, GS_OP_MATMUL_MX, GS_ENG_TENSOR);
    const gs_caps *c = &kb->caps;
    REQUIRE(c->mx_k > 0, GS_ERR_UNSUPPORTED, "unsupported: matmul_mx on this target (family %s)",
            kb->cfg->family);
    REQUIRE((c->mx_dtypes & (1u << stationary.dtype)) && (c->mx_dtypes & (1u << moving.dtype)),
            GS_ERR_UNSUPPORTED,
            "unsupported: matmul_mx of %s x %s (needs quad-packed MX dtypes the target has)",
            gs_dtype_name(stationary.dtype), gs_dtype_name(moving.dtype));
    REQUIRE(psum.space == GS_MEM_PSUM && (psum.dtype == GS_FP32 || psum.dtype == GS_BF16),
            GS_ERR_INVALID, "matmul_mx: output must be an fp32 or bf16 PSUM tile");
    REQUIRE(stationary.space == GS_MEM_SBUF && moving.space == GS_MEM_SBUF, GS_ERR_INVALID,
            "matmul_mx: stationary and moving operands must be in SBUF");
    uint64_t P = stationary.part_count, M = gs_kb_free_elems(&stationary);
    uint64_t N = gs_kb_free_elems(&moving);
    REQUIRE(moving.part_count == P, GS_ERR_INVALID,
            "matmul_mx: contraction sizes differ (stationary %" PRIu64 ", moving %u partitions)", P,
            moving.part_count);
    REQUIRE(P % 8 == 0, GS_ERR_INVALID,
            "matmul_mx: %" PRIu64 " partitions is not a whole number of 8-partition scaling "
            "groups (32 values = 8 partitions x 4)",
            P);
    char l1[96], l2[96];
    REQUIRE(4 * P <= c->mx_k, GS_ERR_INVALID,
            "matmul_mx: contraction %" PRIu64 " values exceeds %u (4 x %u PE rows; stationary %s, "
            "moving %s: caps.mx_k, from engines.tensor.rows)",
            4 * P, c->mx_k, c->pe_rows, LABEL(&stationary, l1), LABEL(&moving, l2));
    if (wide_matmul_checks(kb, file, line, "matmul_mx", &stationary, &moving, &psum, M, N) != GS_OK)
        return gs_kb_status(kb);
    if (check_mx_scale(kb, file, line, "matmul_mx stationary", &stationary, &st_scale))
        return kb->err.code;
    if (check_mx_scale(kb, file, line, "matmul_mx moving", &moving, &mv_scale)) return kb->err.code;
    in.out[0] = psum;
    in.in[0] = stationary;
    in.in[1] = moving;
    in.in[2] = st_scale;
    *GS_MX_MOVING_SCALE_SLOT(&in) = mv_scale;
    in.n_out = 1;
    in.n_in = 3;
    /* emit checks in[] and out[0]; the moving scales (in the out[1] slot) are checked here */
    if (gs_kb_check_ap(kb, file, line, &in, &mv_scale, "moving scale") ||
        gs_kb_check_alignment(kb, file, line, &in, &mv_scale, "moving scale"))
        return kb->err.code;
    if (accumulate) in.flags |= GS_F_ACCUMULATE;
    return gs_kb_emit(kb, file, line, &in);
}

gs_status gs_quantize_mx_at(gs_kb *kb, const char *file, int line, gs_ap dst, gs_ap scale,
                            gs_ap src)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    instr_init(&in, GS_OP_QUANTIZE_MX, GS_ENG_VECTOR);
    const gs_caps *c = &kb->caps;
    REQUIRE(c->quantize_mx_dtypes, GS_ERR_UNSUPPORTED,
            "unsupported: quantize_mx on this target (family %s)", kb->cfg->family);
    REQUIRE(dst.dtype != GS_FP4_E2M1_X4, GS_ERR_UNSUPPORTED,
            "unsupported: quantize_mx to fp4_e2m1_x4 (Quantize-MX has no fp4 output; quantize "
            "fp4 offline)");
    REQUIRE(c->quantize_mx_dtypes & (1u << dst.dtype), GS_ERR_UNSUPPORTED,
            "unsupported: quantize_mx to %s (MXFP8 x4 outputs only)", gs_dtype_name(dst.dtype));
    REQUIRE(src.dtype == GS_BF16 || src.dtype == GS_FP16, GS_ERR_INVALID,
            "quantize_mx: source must be bf16 or fp16, is %s", gs_dtype_name(src.dtype));
    REQUIRE(src.space == GS_MEM_SBUF && dst.space == GS_MEM_SBUF && scale.space == GS_MEM_SBUF,
            GS_ERR_INVALID, "quantize_mx: source, data and scales must all be in SBUF");
    uint32_t P = src.part_count;
    uint64_t F = gs_kb_free_elems(&src);
    REQUIRE(P % 32 == 0 && P <= c->partitions, GS_ERR_INVALID,
            "quantize_mx: source partitions %u must be a multiple of 32 (whole quadrants of "
            "8-partition groups), at most %u",
            P, c->partitions);
    REQUIRE(F % 4 == 0 && src.stride[src.ndim - 1] == 1, GS_ERR_INVALID,
            "quantize_mx: source free size %" PRIu64 " must be a multiple of 4 with unit "
            "innermost stride (groups of 4 consecutive values per partition)",
            F);
    REQUIRE(src.shape[src.ndim - 1] % 4 == 0, GS_ERR_INVALID,
            "quantize_mx: the innermost source dim (%u) must be a multiple of 4",
            src.shape[src.ndim - 1]);
    REQUIRE(dst.part_count == P && gs_kb_free_elems(&dst) * 4 == F, GS_ERR_INVALID,
            "quantize_mx: data output must be [%u x %" PRIu64 "] x4, is [%u x %" PRIu64 "]", P,
            F / 4, dst.part_count, gs_kb_free_elems(&dst));
    if (check_mx_scale(kb, file, line, "quantize_mx", &dst, &scale)) return kb->err.code;
    in.out[0] = dst;
    in.out[1] = scale;
    in.in[0] = src;
    in.n_out = 2;
    in.n_in = 1;
    return gs_kb_emit(kb, file, line, &in);
}

gs_status gs_transpose_at(gs_kb *kb, const char *file, int line, gs_ap psum, gs_ap src)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    instr_init(&in, GS_OP_TRANSPOSE, GS_ENG_TENSOR);
    const gs_caps *c = &kb->caps;
    REQUIRE(psum.space == GS_MEM_PSUM, GS_ERR_INVALID, "transpose: output must be a PSUM tile");
    REQUIRE(psum.dtype == GS_FP32 || psum.dtype == src.dtype, GS_ERR_INVALID,
            "transpose: output dtype must be fp32 or the input's");
    REQUIRE(src.space == GS_MEM_SBUF, GS_ERR_INVALID, "transpose: input must be in SBUF");
    REQUIRE(c->matmul_dtypes & (1u << src.dtype), GS_ERR_UNSUPPORTED,
            "unsupported: %s transpose on the tensor engine", gs_dtype_name(src.dtype));
    uint64_t P = src.part_count, F = gs_kb_free_elems(&src);
    char l1[96];
    REQUIRE(P <= c->pe_rows && F <= c->pe_cols, GS_ERR_INVALID,
            "transpose: input [%" PRIu64 " x %" PRIu64 "] exceeds the %u x %u PE array (input "
            "%s: caps.pe_rows x caps.pe_cols, from engines.tensor.rows and .cols)",
            P, F, c->pe_rows, c->pe_cols, LABEL(&src, l1));
    REQUIRE(psum.part_count == F && gs_kb_free_elems(&psum) == P, GS_ERR_INVALID,
            "transpose: output must be [%" PRIu64 " x %" PRIu64 "]", F, P);
    REQUIRE(psum_in_one_bank(kb, &psum), GS_ERR_INVALID,
            "transpose: output does not fit one PSUM bank (%" PRIu64
            " bytes per partition; output %s: " BANK_CAP ")",
            c->psum_bank_bytes, LABEL(&psum, l1));
    in.out[0] = psum;
    in.in[0] = src;
    in.n_out = 1;
    in.n_in = 1;
    return gs_kb_emit(kb, file, line, &in);
}

static int is_col(const gs_ap *a, unsigned parts)
{
    return a->part_count == parts && gs_kb_free_elems(a) == 1;
}

/* Scalar operand `which` (0: scale / first operand, 1: bias / second operand) of an
 * activation-class instruction over `parts` partitions: an immediate, or a per-partition
 * [parts x 1] column. `what` names it in the error ("activation: per-partition scale"). */
static gs_status per_partition(gs_kb *kb, const char *file, int line, gs_instr_draft *in, int which,
                               gs_operand v, uint32_t parts, const char *what)
{
    if (!v.is_ap) {
        in->imm[which] = v.imm;
        return GS_OK;
    }
    REQUIRE(is_col(&v.ap, parts), GS_ERR_INVALID, "%s must be [%u x 1]", what, parts);
    in->in[1 + which] = v.ap;
    in->flags |= which == 0 ? GS_F_SCALE_AP : GS_F_BIAS_AP;
    return GS_OK;
}

/* The optional fp32 [parts x 1] accumulate output of activation / exponential. */
static gs_status accumulate_out(gs_kb *kb, const char *file, int line, gs_instr_draft *in,
                                const gs_ap *acc_out, uint32_t parts, const char *op)
{
    if (!acc_out) return GS_OK;
    REQUIRE(is_col(acc_out, parts) && acc_out->dtype == GS_FP32, GS_ERR_INVALID,
            "%s: accumulate output must be an fp32 [%u x 1] pattern", op, parts);
    in->out[1] = *acc_out;
    in->n_out = 2;
    in->flags |= GS_F_ACC_OUT;
    return GS_OK;
}

gs_status gs_activation_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap src, gs_act func,
                           gs_operand scale, gs_operand bias, const gs_ap *acc_out)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    instr_init(&in, GS_OP_ACTIVATION, GS_ENG_SCALAR);
    REQUIRE((int)func >= 0 && func < GS_ACT_COUNT, GS_ERR_INVALID, "activation: bad function");
    REQUIRE(is_onchip(&out) && is_onchip(&src), GS_ERR_INVALID,
            "activation: operands must be SBUF/PSUM tiles");
    REQUIRE(same_shape(&out, &src), GS_ERR_INVALID, "activation: input and output shapes differ");
    in.act = func;
    in.out[0] = out;
    in.in[0] = src;
    in.n_out = 1;
    in.n_in = 3;
    if (per_partition(kb, file, line, &in, 0, scale, src.part_count,
                      "activation: per-partition scale") != GS_OK ||
        per_partition(kb, file, line, &in, 1, bias, src.part_count,
                      "activation: per-partition bias") != GS_OK ||
        accumulate_out(kb, file, line, &in, acc_out, src.part_count, "activation") != GS_OK)
        return gs_kb_status(kb);
    return gs_kb_emit(kb, file, line, &in);
}

gs_status gs_exponential_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap src,
                            gs_operand sub, const gs_ap *acc_out)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    instr_init(&in, GS_OP_EXPONENTIAL, GS_ENG_VECTOR);
    REQUIRE(is_onchip(&out) && is_onchip(&src), GS_ERR_INVALID,
            "exponential: operands must be SBUF/PSUM tiles");
    REQUIRE(same_shape(&out, &src), GS_ERR_INVALID, "exponential: input and output shapes differ");
    in.act = GS_ACT_EXP;
    in.out[0] = out;
    in.in[0] = src;
    in.n_out = 1;
    in.n_in = 3;
    if (per_partition(kb, file, line, &in, 1, sub, src.part_count,
                      "exponential: per-partition subtrahend") != GS_OK ||
        accumulate_out(kb, file, line, &in, acc_out, src.part_count, "exponential") != GS_OK)
        return gs_kb_status(kb);
    return gs_kb_emit(kb, file, line, &in);
}

gs_status gs_tensor_tensor_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap a, gs_ap b,
                              gs_alu op)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    instr_init(&in, GS_OP_TENSOR_TENSOR, GS_ENG_VECTOR);
    REQUIRE((int)op >= 0 && op < GS_ALU_COUNT, GS_ERR_INVALID, "tensor_tensor: bad op");
    REQUIRE(is_onchip(&out) && is_onchip(&a) && is_onchip(&b), GS_ERR_INVALID,
            "tensor_tensor: operands must be SBUF/PSUM tiles");
    REQUIRE(same_shape(&out, &a) && same_shape(&out, &b), GS_ERR_INVALID,
            "tensor_tensor: shapes differ (out %u x %" PRIu64 ", a %u x %" PRIu64
            ", b %u x %" PRIu64 ")",
            out.part_count, gs_kb_free_elems(&out), a.part_count, gs_kb_free_elems(&a),
            b.part_count, gs_kb_free_elems(&b));
    in.alu0 = op;
    in.out[0] = out;
    in.in[0] = a;
    in.in[1] = b;
    in.n_out = 1;
    in.n_in = 2;
    return gs_kb_emit(kb, file, line, &in);
}

/* nki.isa.scalar_tensor_tensor: a tensor_tensor whose first operand is first combined with a
 * scalar (GS_F_HAS_OP1: out = (data op0 s) op1 operand1, s = imm[1] or in[2] [P,1]; iimm[0] and
 * iimm[1] reverse op0's and op1's operands). The ISA page gives it about a tensor_tensor's cost
 * ("approximately the same latency as a regular tensor_tensor instruction"), so it is costed as
 * one. */
gs_status gs_scalar_tensor_tensor_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap data,
                                     gs_alu op0, gs_operand operand0, int reverse0, gs_alu op1,
                                     gs_ap operand1, int reverse1)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    instr_init(&in, GS_OP_TENSOR_TENSOR, GS_ENG_VECTOR);
    REQUIRE((int)op0 >= 0 && op0 < GS_ALU_COUNT && op0 != GS_ALU_BYPASS && (int)op1 >= 0 &&
                op1 < GS_ALU_COUNT && op1 != GS_ALU_BYPASS,
            GS_ERR_INVALID, "scalar_tensor_tensor: bad op");
    REQUIRE(is_onchip(&out) && is_onchip(&data) && is_onchip(&operand1), GS_ERR_INVALID,
            "scalar_tensor_tensor: operands must be SBUF/PSUM tiles");
    REQUIRE(!(data.space == GS_MEM_PSUM && operand1.space == GS_MEM_PSUM), GS_ERR_INVALID,
            "scalar_tensor_tensor: data and operand1 cannot both be in PSUM");
    REQUIRE(same_shape(&out, &data) && same_shape(&out, &operand1), GS_ERR_INVALID,
            "scalar_tensor_tensor: shapes differ (out %u x %" PRIu64 ", data %u x %" PRIu64
            ", operand1 %u x %" PRIu64 ")",
            out.part_count, gs_kb_free_elems(&out), data.part_count, gs_kb_free_elems(&data),
            operand1.part_count, gs_kb_free_elems(&operand1));
    in.alu0 = op0;
    in.alu1 = op1;
    in.flags |= GS_F_HAS_OP1;
    in.out[0] = out;
    in.in[0] = data;
    in.in[1] = operand1;
    in.n_out = 1;
    in.n_in = 3;
    in.iimm[0] = reverse0 != 0;
    in.iimm[1] = reverse1 != 0;
    if (per_partition(kb, file, line, &in, 1, operand0, data.part_count,
                      "scalar_tensor_tensor: per-partition operand0") != GS_OK)
        return gs_kb_status(kb);
    return gs_kb_emit(kb, file, line, &in);
}

gs_status gs_stream_shuffle_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap src,
                               const int mask[32])
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    instr_init(&in, GS_OP_STREAM_SHUFFLE, GS_ENG_VECTOR);
    REQUIRE(mask != NULL, GS_ERR_INVALID, "nc_stream_shuffle: no shuffle mask");
    REQUIRE(is_onchip(&out) && is_onchip(&src), GS_ERR_INVALID,
            "nc_stream_shuffle: operands must be SBUF/PSUM tiles");
    REQUIRE(out.dtype == src.dtype, GS_ERR_INVALID,
            "nc_stream_shuffle: dst (%s) and src (%s) dtypes differ", gs_dtype_name(out.dtype),
            gs_dtype_name(src.dtype));
    REQUIRE(gs_kb_free_elems(&out) == gs_kb_free_elems(&src), GS_ERR_INVALID,
            "nc_stream_shuffle: dst has %" PRIu64 " elements per partition, src %" PRIu64,
            gs_kb_free_elems(&out), gs_kb_free_elems(&src));
    for (unsigned i = 0; i < GS_SHUFFLE_ENTRIES; i++) {
        REQUIRE((mask[i] >= 0 && mask[i] < GS_SHUFFLE_ENTRIES) || mask[i] == 255, GS_ERR_INVALID,
                "nc_stream_shuffle: mask entry %u is %d (0..31, or 255: unchanged)", i, mask[i]);
        gs_shuffle_set(in.iimm, i, mask[i] == 255 ? GS_SHUFFLE_KEEP : (unsigned)mask[i]);
    }
    for (uint32_t q = 0; q < out.part_count; q++) {
        const int m = mask[q % GS_SHUFFLE_ENTRIES];
        if (m == 255) continue;
        const uint32_t from = 32u * (q / 32u) + (uint32_t)m;
        REQUIRE(from < src.part_count, GS_ERR_INVALID,
                "nc_stream_shuffle: dst partition %u reads src partition %u; src has %u", q, from,
                src.part_count);
    }
    return gs_kb_emit_out_in(kb, file, line, &in, out, src);
}

static gs_status check_engine_choice(gs_kb *kb, const char *file, int line, const char *op,
                                     gs_engine e, int allow_scalar)
{
    REQUIRE(e == GS_ENG_VECTOR || e == GS_ENG_GPSIMD || (allow_scalar && e == GS_ENG_SCALAR),
            GS_ERR_INVALID, "%s: engine %s cannot run it", op, gs_engine_name(e));
    return GS_OK;
}

gs_status gs_tensor_scalar_at(gs_kb *kb, const char *file, int line, gs_engine engine, gs_ap out,
                              gs_ap src, gs_alu op0, gs_operand s0, gs_alu op1, gs_operand s1)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    if (check_engine_choice(kb, file, line, "tensor_scalar", engine, 1)) return kb->err.code;
    gs_instr_draft in;
    instr_init(&in, GS_OP_TENSOR_SCALAR, engine);
    REQUIRE((int)op0 >= 0 && op0 < GS_ALU_COUNT && (int)op1 >= 0 && op1 < GS_ALU_COUNT,
            GS_ERR_INVALID, "tensor_scalar: bad op");
    REQUIRE(is_onchip(&out) && is_onchip(&src), GS_ERR_INVALID,
            "tensor_scalar: operands must be SBUF/PSUM tiles");
    REQUIRE(same_shape(&out, &src), GS_ERR_INVALID,
            "tensor_scalar: input and output shapes differ");
    in.alu0 = op0;
    in.alu1 = op1;
    in.out[0] = out;
    in.in[0] = src;
    in.n_out = 1;
    in.n_in = 3;
    if (per_partition(kb, file, line, &in, 0, s0, src.part_count,
                      "tensor_scalar: per-partition operand 0") != GS_OK)
        return gs_kb_status(kb);
    if (op1 != GS_ALU_BYPASS) {
        in.flags |= GS_F_HAS_OP1;
        if (per_partition(kb, file, line, &in, 1, s1, src.part_count,
                          "tensor_scalar: per-partition operand 1") != GS_OK)
            return gs_kb_status(kb);
    }
    return gs_kb_emit(kb, file, line, &in);
}

gs_status gs_tensor_reduce_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap src,
                              gs_alu op, int axes)
{
    return gs_tensor_reduce_neg_at(kb, file, line, out, src, op, axes, 0);
}

gs_status gs_tensor_reduce_neg_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap src,
                                  gs_alu op, int axes, int negate)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    instr_init(&in, GS_OP_TENSOR_REDUCE, GS_ENG_VECTOR);
    REQUIRE(op == GS_ALU_ADD || op == GS_ALU_MAX || op == GS_ALU_MIN, GS_ERR_INVALID,
            "tensor_reduce: op must be add, max or min");
    REQUIRE(axes >= 1 && axes <= src.ndim, GS_ERR_INVALID,
            "tensor_reduce: axes %d outside 1..%d (the input's free dims)", axes, src.ndim);
    REQUIRE(is_onchip(&out) && is_onchip(&src), GS_ERR_INVALID,
            "tensor_reduce: operands must be SBUF/PSUM tiles");
    uint64_t outer = 1;
    for (int k = 0; k < src.ndim - axes; k++)
        outer *= src.shape[k];
    REQUIRE(out.part_count == src.part_count && gs_kb_free_elems(&out) == outer, GS_ERR_INVALID,
            "tensor_reduce: output must be [%u x %" PRIu64 "]", src.part_count, outer);
    in.alu0 = op;
    in.iimm[0] = axes;
    in.iimm[1] = negate != 0;
    return gs_kb_emit_out_in(kb, file, line, &in, out, src);
}

gs_status gs_bn_stats_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap src)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    instr_init(&in, GS_OP_BN_STATS, GS_ENG_VECTOR);
    REQUIRE(is_onchip(&out) && is_onchip(&src), GS_ERR_INVALID, "bn_stats: operands must be tiles");
    REQUIRE(out.dtype == GS_FP32 && out.part_count == src.part_count && gs_kb_free_elems(&out) == 3,
            GS_ERR_INVALID, "bn_stats: output must be fp32 [%u x 3]", src.part_count);
    return gs_kb_emit_out_in(kb, file, line, &in, out, src);
}

gs_status gs_bn_aggr_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap src)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    instr_init(&in, GS_OP_BN_AGGR, GS_ENG_VECTOR);
    REQUIRE(is_onchip(&out) && is_onchip(&src), GS_ERR_INVALID, "bn_aggr: operands must be tiles");
    REQUIRE(src.dtype == GS_FP32 && gs_kb_free_elems(&src) % 3 == 0, GS_ERR_INVALID,
            "bn_aggr: input must be fp32 [P x 3k] bn_stats chunks");
    REQUIRE(out.dtype == GS_FP32 && out.part_count == src.part_count && gs_kb_free_elems(&out) == 2,
            GS_ERR_INVALID, "bn_aggr: output must be fp32 [%u x 2] (mean, variance)",
            src.part_count);
    return gs_kb_emit_out_in(kb, file, line, &in, out, src);
}

gs_status gs_tensor_copy_at(gs_kb *kb, const char *file, int line, gs_engine engine, gs_ap out,
                            gs_ap src)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    if (check_engine_choice(kb, file, line, "tensor_copy", engine, 1)) return kb->err.code;
    gs_instr_draft in;
    instr_init(&in, GS_OP_TENSOR_COPY, engine);
    REQUIRE(is_onchip(&out) && is_onchip(&src), GS_ERR_INVALID,
            "tensor_copy: operands must be SBUF/PSUM tiles (use dma_copy for HBM)");
    REQUIRE(same_shape(&out, &src), GS_ERR_INVALID, "tensor_copy: shapes differ");
    return gs_kb_emit_out_in(kb, file, line, &in, out, src);
}

gs_status gs_memset_at(gs_kb *kb, const char *file, int line, gs_engine engine, gs_ap out,
                       float value)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    if (check_engine_choice(kb, file, line, "memset", engine, 0)) return kb->err.code;
    gs_instr_draft in;
    instr_init(&in, GS_OP_MEMSET, engine);
    REQUIRE(is_onchip(&out), GS_ERR_INVALID, "memset: output must be an SBUF/PSUM tile");
    in.imm[0] = value;
    in.out[0] = out;
    in.n_out = 1;
    return gs_kb_emit(kb, file, line, &in);
}

/* Whether base + part_mult * p + free_mult * i, as the executor computes it in int64_t, fits for
 * every partition p (0..the last partition of `out`, taken absolute to cover either indexing)
 * and free index i of `out`: the values come from the kernel or a program file, and an
 * overflow there is undefined behaviour. Linear in p and i: checking the corners in the
 * executor's order of operations checks every point. */
static int affine_fits(const gs_ap *out, int64_t base, int64_t part_mult, int64_t free_mult)
{
    const uint64_t free = gs_kb_free_elems(out);
    int64_t a, b, s;
    if (free == 0 || free > (uint64_t)INT64_MAX) return 0;
    return !__builtin_mul_overflow(part_mult, (int64_t)out->part_start + out->part_count - 1, &a) &&
           !__builtin_mul_overflow(free_mult, (int64_t)free - 1, &b) &&
           !__builtin_add_overflow(base, a, &s) && !__builtin_add_overflow(s, b, &s) &&
           !__builtin_add_overflow(base, b, &s);
}

gs_status gs_iota_at(gs_kb *kb, const char *file, int line, gs_ap out, int64_t base,
                     int64_t part_mult, int64_t free_mult)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    instr_init(&in, GS_OP_IOTA, GS_ENG_GPSIMD);
    REQUIRE(is_onchip(&out), GS_ERR_INVALID, "iota: output must be an SBUF tile");
    REQUIRE(affine_fits(&out, base, part_mult, free_mult), GS_ERR_INVALID,
            "iota: base %" PRId64 " + %" PRId64 " * partition + %" PRId64
            " * index overflows 64-bit arithmetic over the output's partitions and elements",
            base, part_mult, free_mult);
    in.iimm[0] = base;
    in.iimm[1] = part_mult;
    in.iimm[2] = free_mult;
    in.out[0] = out;
    in.n_out = 1;
    return gs_kb_emit(kb, file, line, &in);
}

static int is_compare(gs_alu op)
{
    return op == GS_ALU_EQ || op == GS_ALU_NE || op == GS_ALU_GT || op == GS_ALU_GE ||
           op == GS_ALU_LT || op == GS_ALU_LE;
}

gs_status gs_affine_select_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap src,
                              gs_alu cmp, int64_t base, int64_t part_mult, int64_t free_mult,
                              float fill)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    instr_init(&in, GS_OP_AFFINE_SELECT, GS_ENG_GPSIMD);
    REQUIRE(is_compare(cmp), GS_ERR_INVALID, "affine_select: cmp must be a comparison");
    REQUIRE(is_onchip(&out) && is_onchip(&src), GS_ERR_INVALID,
            "affine_select: operands must be tiles");
    REQUIRE(same_shape(&out, &src), GS_ERR_INVALID, "affine_select: shapes differ");
    REQUIRE(affine_fits(&out, base, part_mult, free_mult), GS_ERR_INVALID,
            "affine_select: base %" PRId64 " + %" PRId64 " * partition + %" PRId64
            " * index overflows 64-bit arithmetic over the output's partitions and elements",
            base, part_mult, free_mult);
    in.alu0 = cmp;
    in.iimm[0] = base;
    in.iimm[1] = part_mult;
    in.iimm[2] = free_mult;
    in.imm[0] = fill;
    return gs_kb_emit_out_in(kb, file, line, &in, out, src);
}

gs_status gs_partition_reduce_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap src,
                                 gs_alu op)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    instr_init(&in, GS_OP_PARTITION_REDUCE, GS_ENG_GPSIMD);
    REQUIRE(op == GS_ALU_ADD || op == GS_ALU_MAX || op == GS_ALU_MIN, GS_ERR_INVALID,
            "partition_reduce: op must be add, max or min");
    REQUIRE(is_onchip(&out) && is_onchip(&src), GS_ERR_INVALID,
            "partition_reduce: operands must be tiles");
    REQUIRE(gs_kb_free_elems(&out) == gs_kb_free_elems(&src), GS_ERR_INVALID,
            "partition_reduce: free sizes differ");
    in.alu0 = op;
    return gs_kb_emit_out_in(kb, file, line, &in, out, src);
}

gs_status gs_partition_broadcast_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap src)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    instr_init(&in, GS_OP_PARTITION_BROADCAST, GS_ENG_GPSIMD);
    REQUIRE(is_onchip(&out) && is_onchip(&src), GS_ERR_INVALID,
            "partition_broadcast: operands must be tiles");
    REQUIRE(src.part_count == 1 && gs_kb_free_elems(&out) == gs_kb_free_elems(&src), GS_ERR_INVALID,
            "partition_broadcast: input must be one partition of the output's size");
    return gs_kb_emit_out_in(kb, file, line, &in, out, src);
}

gs_status gs_gather_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap table, gs_ap idx)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    instr_init(&in, GS_OP_GATHER, GS_ENG_GPSIMD);
    if (check_views_first(kb, file, line, &in, &out, &table, &idx)) return kb->err.code;
    REQUIRE(out.space == GS_MEM_SBUF && idx.space == GS_MEM_SBUF && table.space == GS_MEM_HBM,
            GS_ERR_INVALID, "gather: out and idx must be SBUF tiles, table an HBM tensor view");
    REQUIRE(idx.dtype == GS_INT32 && is_col(&idx, out.part_count), GS_ERR_INVALID,
            "gather: idx must be int32 [%u x 1]", out.part_count);
    REQUIRE(out.dtype == table.dtype && gs_kb_free_elems(&out) == gs_kb_free_elems(&table),
            GS_ERR_INVALID, "gather: output rows must match the table's rows (dtype and length)");
    REQUIRE(table.ndim == 1 && table.stride[0] == 1, GS_ERR_INVALID,
            "gather: table rows must be contiguous (a gs_hbm_rows view)");
    in.out[0] = out;
    in.in[0] = table;
    in.in[1] = idx;
    in.n_out = 1;
    in.n_in = 2;
    return gs_kb_emit(kb, file, line, &in);
}

/* nki.isa.tensor_tensor_scan (vector engine): per partition, out[i] = (data0[i] op0 out[i-1]) op1
 * data1[i] with out[-1] = initial. The ISA reference allows data0 and data1 in SBUF or PSUM, but
 * not both in PSUM. */
gs_status gs_tensor_tensor_scan_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap data0,
                                   gs_ap data1, gs_operand initial, gs_alu op0, gs_alu op1)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr_draft in;
    instr_init(&in, GS_OP_TENSOR_TENSOR_SCAN, GS_ENG_VECTOR);
    REQUIRE((int)op0 >= 0 && op0 < GS_ALU_COUNT && (int)op1 >= 0 && op1 < GS_ALU_COUNT,
            GS_ERR_INVALID, "tensor_tensor_scan: bad op");
    REQUIRE(is_onchip(&out) && is_onchip(&data0) && is_onchip(&data1), GS_ERR_INVALID,
            "tensor_tensor_scan: operands must be SBUF/PSUM tiles");
    REQUIRE(!(data0.space == GS_MEM_PSUM && data1.space == GS_MEM_PSUM), GS_ERR_INVALID,
            "tensor_tensor_scan: data0 and data1 cannot both be in PSUM");
    REQUIRE(same_shape(&out, &data0) && same_shape(&out, &data1), GS_ERR_INVALID,
            "tensor_tensor_scan: shapes differ (out %u x %" PRIu64 ", data0 %u x %" PRIu64
            ", data1 %u x %" PRIu64 ")",
            out.part_count, gs_kb_free_elems(&out), data0.part_count, gs_kb_free_elems(&data0),
            data1.part_count, gs_kb_free_elems(&data1));
    in.alu0 = op0;
    in.alu1 = op1;
    in.out[0] = out;
    in.in[0] = data0;
    in.in[1] = data1;
    in.n_out = 1;
    in.n_in = 3;
    if (per_partition(kb, file, line, &in, 1, initial, data0.part_count,
                      "tensor_tensor_scan: per-partition initial") != GS_OK)
        return gs_kb_status(kb);
    return gs_kb_emit(kb, file, line, &in);
}

/* isa_format.c - instructions and access patterns as text: gs_ap_format, gs_instr_format (one
 * listing line, printf-free: the trace writes one per instruction) and gs_program_disasm. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "gs/isa.h"
#include "program.h"

/* ---- printf-free text (the trace writes one listing line per instruction) ---- */

/* Appends with snprintf's truncation: the text is cut at size - 1 and always terminated. */
typedef struct text_out {
    char *buf;
    size_t size, n;
} text_out;

static void out_putn(text_out *o, const char *s, size_t len)
{
    if (o->n + 1 < o->size) {
        size_t room = o->size - 1 - o->n;
        memcpy(o->buf + o->n, s, len < room ? len : room);
    }
    o->n += len;
    if (o->size) o->buf[o->n < o->size ? o->n : o->size - 1] = '\0';
}

static void out_str(text_out *o, const char *s)
{
    out_putn(o, s, strlen(s));
}

static void out_c(text_out *o, char c)
{
    out_putn(o, &c, 1);
}

/* Unsigned decimal, right-aligned in `width` columns (0: no padding). */
static void out_u64w(text_out *o, uint64_t v, int width)
{
    char tmp[24];
    char *e = tmp + sizeof tmp, *q = e;
    do {
        *--q = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    for (int pad = width - (int)(e - q); pad > 0; pad--)
        out_c(o, ' ');
    out_putn(o, q, (size_t)(e - q));
}

static void out_u64(text_out *o, uint64_t v)
{
    out_u64w(o, v, 0);
}

static void out_i64(text_out *o, int64_t v)
{
    if (v < 0) {
        out_c(o, '-');
        out_u64(o, (uint64_t)0 - (uint64_t)v);
    } else {
        out_u64(o, (uint64_t)v);
    }
}

/* s left-aligned in `width` columns. */
static void out_strw(text_out *o, const char *s, int width)
{
    size_t len = strlen(s);
    out_putn(o, s, len);
    for (int pad = width - (int)len; pad > 0; pad--)
        out_c(o, ' ');
}

/* A float as %g (rare in listings: immediates only). */
static void out_g(text_out *o, double v)
{
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%g", v);
    out_str(o, tmp);
}

static void ap_out(text_out *o, const gs_ap *a)
{
    if (a->tensor < 0) {
        out_c(o, '-');
        return;
    }
    /* dims "shape:stride,...", cut at 127 characters as the listing always did */
    char dims[128];
    text_out d = {dims, sizeof dims, 0};
    dims[0] = '\0';
    for (int k = 0; k < a->ndim && k < GS_AP_MAX_DIMS; k++) {
        if (k) out_c(&d, ',');
        out_u64(&d, a->shape[k]);
        out_c(&d, ':');
        out_i64(&d, a->stride[k]);
    }
    if (a->space == GS_MEM_HBM) {
        out_str(o, "hbm[t");
        out_i64(o, a->tensor);
        out_str(o, " +");
        out_i64(o, a->offset);
        out_c(o, ' ');
        out_u64(o, a->part_count);
        out_c(o, 'x');
        out_i64(o, a->part_stride);
    } else {
        out_str(o, gs_memspace_name(a->space));
        out_str(o, "[c");
        out_u64(o, a->core);
        out_str(o, " b");
        out_i64(o, a->tensor);
        out_str(o, " p");
        out_u64(o, a->part_start);
        out_c(o, ':');
        out_u64(o, (uint64_t)a->part_start + a->part_count);
        out_str(o, " +");
        out_i64(o, a->offset);
        out_c(o, 'B');
    }
    out_str(o, " (");
    out_str(o, dims);
    out_str(o, ")]");
    out_str(o, gs_dtype_name(a->dtype));
}

void gs_ap_format(const gs_ap *a, char *buf, size_t size)
{
    text_out o = {buf, size, 0};
    if (size) buf[0] = '\0';
    ap_out(&o, a);
}

static const char *short_file(const char *f)
{
    if (!f) return "?";
    const char *s = strrchr(f, '/');
    if (!s) return f;
    /* keep the last directory: "kernels/matmul.c" */
    for (const char *q = s - 1; q >= f; q--)
        if (*q == '/') return q + 1;
    return f;
}

void gs_instr_format(const gs_program *p, size_t i, char *buf, size_t size)
{
    const gs_instr *in = gs_program_instr(p, i);
    if (!in || size == 0) {
        if (size) buf[0] = '\0';
        return;
    }
    const int64_t *iimm = gs_program_iimm(p, i);
    text_out o = {buf, size, 0};
    buf[0] = '\0';
    char eng[16];
    text_out e = {eng, sizeof eng, 0};
    if (in->engine == GS_ENG_DMA) {
        out_str(&e, "dma.q");
        out_u64(&e, in->queue);
    } else {
        out_str(&e, gs_engine_name(in->engine));
    }
    out_u64w(&o, i, 6);
    out_str(&o, " c");
    out_u64(&o, in->core);
    out_c(&o, ' ');
    out_strw(&o, eng, 8);
    out_c(&o, ' ');
    out_strw(&o, gs_opcode_name(in->op), 19);
    /* each operand as gs_ap_format gives it (cut at 191 characters, as always) */
    char ap[192];
    for (int k = 0; k < in->n_out; k++) {
        gs_ap_format(in->out[k], ap, sizeof ap);
        out_str(&o, k ? ", " : " ");
        out_str(&o, ap);
    }
    out_str(&o, " <-");
    for (int k = 0; k < in->n_in; k++) {
        gs_ap_format(in->in[k], ap, sizeof ap);
        out_str(&o, k ? ", " : " ");
        out_str(&o, ap);
    }
    if (in->op == GS_OP_MATMUL_MX) {
        gs_ap_format(GS_MX_MOVING_SCALE(in), ap, sizeof ap);
        out_str(&o, ", ");
        out_str(&o, ap);
    }
    switch (in->op) {
    case GS_OP_MATMUL:
        out_str(&o, (in->flags & GS_F_ACCUMULATE) ? " acc=1" : " acc=0");
        if (iimm[1]) { /* a PE array tile: position, size */
            out_str(&o, " tile=");
            out_i64(&o, iimm[0] >> 16);
            out_c(&o, ',');
            out_i64(&o, iimm[0] & 0xffff);
            out_c(&o, ':');
            out_i64(&o, iimm[1] >> 16);
            out_c(&o, 'x');
            out_i64(&o, iimm[1] & 0xffff);
        }
        break;
    case GS_OP_EXPONENTIAL:
        if (!(in->flags & GS_F_BIAS_AP)) {
            out_str(&o, " sub=");
            out_g(&o, (double)in->imm[1]);
        }
        break;
    case GS_OP_ACTIVATION:
        out_str(&o, " func=");
        out_str(&o, gs_act_name(in->act));
        if (!(in->flags & GS_F_SCALE_AP)) {
            out_str(&o, " scale=");
            out_g(&o, (double)in->imm[0]);
        }
        if (!(in->flags & GS_F_BIAS_AP)) {
            out_str(&o, " bias=");
            out_g(&o, (double)in->imm[1]);
        }
        break;
    case GS_OP_TENSOR_TENSOR:
        if (in->flags & GS_F_HAS_OP1) { /* scalar_tensor_tensor */
            out_str(&o, " op0=");
            out_str(&o, gs_alu_name(in->alu0));
            if (!(in->flags & GS_F_BIAS_AP)) {
                out_str(&o, " s0=");
                out_g(&o, (double)in->imm[1]);
            }
            out_str(&o, " op1=");
            out_str(&o, gs_alu_name(in->alu1));
            if (iimm[0]) out_str(&o, " reverse0");
            if (iimm[1]) out_str(&o, " reverse1");
            break;
        }
        out_str(&o, " op=");
        out_str(&o, gs_alu_name(in->alu0));
        break;
    case GS_OP_STREAM_SHUFFLE:
        out_str(&o, " mask=");
        for (unsigned k = 0; k < GS_SHUFFLE_ENTRIES; k++) {
            const unsigned ent = gs_shuffle_entry(iimm, k);
            if (k) out_c(&o, ',');
            if (ent == GS_SHUFFLE_KEEP)
                out_c(&o, '-');
            else
                out_u64(&o, ent);
        }
        break;
    case GS_OP_PARTITION_REDUCE:
        out_str(&o, " op=");
        out_str(&o, gs_alu_name(in->alu0));
        break;
    case GS_OP_TENSOR_TENSOR_SCAN:
        out_str(&o, " op0=");
        out_str(&o, gs_alu_name(in->alu0));
        out_str(&o, " op1=");
        out_str(&o, gs_alu_name(in->alu1));
        if (!(in->flags & GS_F_BIAS_AP)) {
            out_str(&o, " initial=");
            out_g(&o, (double)in->imm[1]);
        }
        break;
    case GS_OP_TENSOR_SCALAR:
        out_str(&o, " op0=");
        out_str(&o, gs_alu_name(in->alu0));
        if (!(in->flags & GS_F_SCALE_AP)) {
            out_str(&o, " s0=");
            out_g(&o, (double)in->imm[0]);
        }
        if (in->flags & GS_F_HAS_OP1) {
            out_str(&o, " op1=");
            out_str(&o, gs_alu_name(in->alu1));
            if (!(in->flags & GS_F_BIAS_AP)) {
                out_str(&o, " s1=");
                out_g(&o, (double)in->imm[1]);
            }
        }
        break;
    case GS_OP_TENSOR_REDUCE:
        out_str(&o, " op=");
        out_str(&o, gs_alu_name(in->alu0));
        out_str(&o, " axes=");
        out_i64(&o, iimm[0]);
        if (iimm[1]) out_str(&o, " negate");
        break;
    case GS_OP_MEMSET:
        out_str(&o, " value=");
        out_g(&o, (double)in->imm[0]);
        break;
    case GS_OP_MATCH_REPLACE8:
        out_str(&o, " imm=");
        out_g(&o, (double)in->imm[0]);
        break;
    case GS_OP_IOTA:
        out_c(&o, ' ');
        out_i64(&o, iimm[0]);
        out_c(&o, '+');
        out_i64(&o, iimm[1]);
        out_str(&o, "*p+");
        out_i64(&o, iimm[2]);
        out_str(&o, "*j");
        break;
    case GS_OP_AFFINE_SELECT:
        out_str(&o, " keep (");
        out_i64(&o, iimm[0]);
        out_c(&o, '+');
        out_i64(&o, iimm[1]);
        out_str(&o, "*p+");
        out_i64(&o, iimm[2]);
        out_str(&o, "*j) ");
        out_str(&o, gs_alu_name(in->alu0));
        out_str(&o, " 0 else ");
        out_g(&o, (double)in->imm[0]);
        break;
    default:
        break;
    }
    if (in->n_deps) {
        out_str(&o, " deps=");
        uint32_t show = GS_MIN(in->n_deps, 8u);
        for (uint32_t d = 0; d < show; d++) {
            if (d) out_c(&o, ',');
            out_u64(&o, in->deps[d]);
        }
        if (in->n_deps > show) {
            out_str(&o, ",...(+");
            out_u64(&o, in->n_deps - show);
            out_c(&o, ')');
        }
    }
    out_str(&o, "  @");
    out_str(&o, short_file(in->file));
    out_c(&o, ':');
    out_i64(&o, in->line);
}

void gs_program_disasm(const gs_program *p, FILE *out)
{
    fprintf(out, "# %zu instructions, %zu HBM tensors, %zu SBUF/PSUM buffers, %u core(s)\n",
            gs_program_count(p), gs_program_tensor_count(p), gs_program_buffer_count(p),
            gs_program_cores_used(p));
    for (size_t t = 0; t < gs_program_tensor_count(p); t++) {
        const gs_tensor_info *ti = gs_program_tensor(p, (int32_t)t);
        fprintf(out, "# t%zu %-12s %-6s %s [", t, ti->name, gs_dtype_name(ti->dtype),
                ti->kind == GS_TENSOR_INPUT    ? "in "
                : ti->kind == GS_TENSOR_OUTPUT ? "out"
                                               : "tmp");
        for (int d = 0; d < ti->ndim; d++)
            fprintf(out, "%s%" PRId64, d ? "x" : "", ti->shape[d]);
        fprintf(out, "] @0x%" PRIx64 "\n", ti->hbm_addr);
    }
    for (size_t b = 0; b < gs_program_buffer_count(p); b++) {
        const gs_buffer_info *bi = gs_program_buffer(p, (int32_t)b);
        fprintf(out, "# b%zu %-12s %s c%u p%u:%u bytes %" PRIu64 "+%" PRIu64 "\n", b, bi->name,
                gs_memspace_name(bi->space), bi->core, bi->part_start,
                bi->part_start + bi->part_count, bi->offset, bi->bytes);
    }
    char line[2048];
    for (size_t i = 0; i < gs_program_count(p); i++) {
        gs_instr_format(p, i, line, sizeof line);
        fprintf(out, "%s\n", line);
    }
}

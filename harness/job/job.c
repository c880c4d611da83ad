/* job.c - build, initialise and check one job (see job.h). */
#include "job.h"

#include "gs/builder.h"
#include "gs/strbuf.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

gs_job_status gs_job_status_from(gs_status st)
{
    switch (st) {
    case GS_OK:
        return GS_JOB_PASS;
    case GS_ERR_UNSUPPORTED:
        return GS_JOB_UNSUPPORTED;
    case GS_ERR_DOES_NOT_FIT:
        return GS_JOB_DOES_NOT_FIT;
    case GS_ERR_DEADLOCK:
        return GS_JOB_DEADLOCK;
    case GS_ERR_TIMEOUT:
        return GS_JOB_TIMEOUT;
    case GS_ERR_MISMATCH:
        return GS_JOB_FAIL;
    default:
        return GS_JOB_ERROR;
    }
}

#define MAX_TENSORS GS_KERNEL_MAX_TENSORS

struct gs_job {
    gs_job_spec spec;
    gs_program *p;
    gs_mem *mem;
    gs_kernel_args args;
    gs_tensor_decl decl[MAX_TENSORS];
    int n_decl;
    uint64_t tracker_work; /* gs_kb_tracker_work summed over the cores' builders */
};

const gs_program *gs_job_program(const gs_job *j)
{
    return j ? j->p : NULL;
}

uint64_t gs_job_tracker_work(const gs_job *j)
{
    return j ? j->tracker_work : 0;
}

gs_mem *gs_job_memory(gs_job *j)
{
    return j->mem;
}

void gs_job_free(gs_job *j)
{
    if (!j) return;
    gs_mem_free(j->mem);
    gs_program_free(j->p);
    gs_free(j);
}

/* "C[12, 345]": element e of a row-major tensor by its indices (a flat index means nothing to
 * someone looking at a [M x N] result). */
static void name_element(char *buf, size_t size, const gs_tensor_info *ti, uint64_t e)
{
    uint64_t idx[GS_AP_MAX_DIMS];
    int nd = ti->ndim > 0 && ti->ndim <= GS_AP_MAX_DIMS ? ti->ndim : 0;
    for (int d = nd - 1; d >= 0; d--) {
        uint64_t ext = ti->shape[d] > 0 ? (uint64_t)ti->shape[d] : 1;
        idx[d] = e % ext;
        e /= ext;
    }
    int n = snprintf(buf, size, "%s[", ti->name);
    for (int d = 0; d < nd && n > 0 && (size_t)n < size; d++)
        n += snprintf(buf + n, size - (size_t)n, "%s%" PRIu64, d ? ", " : "", idx[d]);
    if (!nd && n > 0 && (size_t)n < size) n += snprintf(buf + n, size - (size_t)n, "%" PRIu64, e);
    if (n > 0 && (size_t)n < size) snprintf(buf + n, size - (size_t)n, "]");
}

gs_status gs_job_build(const gs_job_spec *spec, gs_job **out, gs_error *err)
{
    *out = NULL;
    const gs_kernel_def *k = spec->kernel;
    if (spec->n_dims != k->n_dims)
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "%s takes %d dims (%s...), got %d",
                            k->name, k->n_dims, k->dim_names[0], spec->n_dims);
    if (spec->variant < 0 || spec->variant >= k->n_variants)
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "%s has no variant %d", k->name,
                            spec->variant);
    if (!(k->dtypes & (1u << spec->dtype)))
        return gs_error_set(err, GS_ERR_UNSUPPORTED, NULL, 0, 0,
                            "unsupported: %s is not defined for dtype %s", k->name,
                            gs_dtype_name(spec->dtype));
    gs_job *j = gs_calloc(1, sizeof *j);
    if (!j) return gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    j->spec = *spec;
    j->p = gs_program_create(spec->cfg);
    if (!j->p) {
        gs_free(j);
        return gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    *out = j;
    gs_kernel_args *a = &j->args;
    for (int i = 0; i < spec->n_dims; i++)
        a->dims[i] = spec->dims[i];
    for (int i = 0; i < GS_KERNEL_MAX_PARAMS; i++)
        a->param[i] = spec->params[i];
    a->param_names = k->param_names;
    a->n_params = k->n_params;
    a->dtype = spec->dtype;
    a->variant = spec->variant;
    j->n_decl = k->tensors(a, j->decl, MAX_TENSORS, err);
    if (j->n_decl < 0) return err ? err->code : GS_ERR_INVALID;
    for (int i = 0; i < j->n_decl; i++) {
        const gs_tensor_decl *d = &j->decl[i];
        int32_t id =
            gs_program_add_tensor(j->p, d->name, d->dtype, d->kind, d->ndim, d->shape, err);
        if (id < 0) return err ? err->code : GS_ERR_INVALID;
        gs_tensor *t = &a->t[a->n_tensors++];
        t->id = id;
        t->dtype = d->dtype;
        t->ndim = d->ndim;
        for (int q = 0; q < d->ndim; q++)
            t->shape[q] = d->shape[q];
    }
    unsigned cores = (k->spmd_variants >> spec->variant) & 1u ? (unsigned)spec->cfg->cores.v : 1;
    for (unsigned c = 0; c < cores; c++) {
        gs_kb *kb = gs_kb_create(j->p, c);
        if (!kb) return gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
        gs_status st = k->build(kb, a);
        j->tracker_work += gs_kb_tracker_work(kb);
        if (st == GS_OK) st = gs_kb_status(kb);
        if (st != GS_OK) {
            if (err) {
                const gs_error *ke = gs_kb_error(kb);
                if (ke->code != GS_OK)
                    *err = *ke;
                else
                    gs_error_set(err, st, NULL, 0, 0, "%s failed: %s", k->name, gs_status_str(st));
            }
            gs_kb_free(kb);
            return st;
        }
        gs_kb_free(kb);
    }
    return GS_OK;
}

/* Tensors are converted CHUNK elements at a time through the bulk fp32 converters (one
 * dtype dispatch per chunk, not per element; the same conversions as gs_dtype_load/store). */
#define CHUNK 1024

/* Elements [e0, e0 + n) of an encoded tensor as fp32 (quad-packed MX types element by
 * element, since their elements are not a fixed number of bytes apart in this sense). */
static void load_floats(gs_dtype t, const void *data, uint64_t e0, float *out, size_t n)
{
    if (gs_dtype_is_mx(t)) {
        for (size_t k = 0; k < n; k++)
            out[k] = gs_dtype_load(t, data, e0 + k);
        return;
    }
    gs_dtype_to_f32(t, (const char *)data + e0 * gs_dtype_size(t), 1, out, n);
}

static void store_floats(gs_dtype t, void *data, uint64_t e0, const float *v, size_t n)
{
    if (gs_dtype_is_mx(t)) {
        for (size_t k = 0; k < n; k++)
            gs_dtype_store(t, data, e0 + k, v[k]);
        return;
    }
    gs_dtype_from_f32(t, v, (char *)data + e0 * gs_dtype_size(t), 1, n);
}

/* splitmix64: small, fast, and identical everywhere */
static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void gs_job_set_seed(gs_job *j, uint64_t seed)
{
    if (j) j->spec.seed = seed;
}

gs_status gs_job_init_memory(gs_job *j, gs_error *err)
{
    gs_mem_free(j->mem);
    /* SBUF/PSUM poisoned (NaN for float reads) so a kernel reading a tile it never wrote fails */
    j->mem = gs_mem_create_filled(j->p, 0xFF, err);
    if (!j->mem) return err ? err->code : GS_ERR_NOMEM;
    for (int i = 0; i < j->n_decl; i++) {
        const gs_tensor_decl *d = &j->decl[i];
        int32_t id = j->args.t[i].id;
        const gs_tensor_info *ti = gs_program_tensor(j->p, id);
        uint8_t *data = gs_mem_tensor(j->mem, id);
        if (d->kind != GS_TENSOR_INPUT) {
            /* sentinel: NaN for float dtypes, a recognisable pattern for integers, so a kernel
             * that writes nothing fails */
            memset(data, gs_dtype_is_float(d->dtype) ? 0xFF : 0x5A, ti->bytes);
            continue;
        }
        float chunk[CHUNK];
        if (d->init) {
            for (uint64_t e0 = 0; e0 < ti->elems; e0 += CHUNK) {
                const size_t n = (size_t)GS_MIN((uint64_t)CHUNK, ti->elems - e0);
                for (size_t k = 0; k < n; k++)
                    chunk[k] = (float)d->init[e0 + k];
                store_floats(d->dtype, data, e0, chunk, n);
            }
            continue;
        }
        uint64_t s = j->spec.seed * 0x100000001B3ull + (uint64_t)i * 0x9E3779B97F4A7C15ull + 1;
        for (uint64_t e0 = 0; e0 < ti->elems; e0 += CHUNK) {
            const size_t n = (size_t)GS_MIN((uint64_t)CHUNK, ti->elems - e0);
            for (size_t k = 0; k < n; k++) {
                double u = (double)(splitmix(&s) >> 11) * (1.0 / 9007199254740992.0);
                double v = d->lo + (d->hi - d->lo) * u;
                if (d->integer) v = floor(v);
                chunk[k] = (float)v;
            }
            store_floats(d->dtype, data, e0, chunk, n);
        }
    }
    return GS_OK;
}

static double *decode(const gs_tensor_info *ti, const void *data)
{
    size_t bytes;
    if (!gs_size_mul((size_t)ti->elems, sizeof(double), &bytes)) return NULL;
    double *d = gs_malloc(bytes);
    if (!d) return NULL;
    gs_prefault(d, bytes); /* written in full below */
    float chunk[CHUNK];
    for (uint64_t e0 = 0; e0 < ti->elems; e0 += CHUNK) {
        const size_t n = (size_t)GS_MIN((uint64_t)CHUNK, ti->elems - e0);
        load_floats(ti->dtype, data, e0, chunk, n);
        for (size_t k = 0; k < n; k++)
            d[e0 + k] = chunk[k];
    }
    return d;
}

gs_status gs_job_check_outputs(gs_job *j, gs_job_check *res, gs_error *err)
{
    memset(res, 0, sizeof *res);
    if (!j->spec.kernel->reference) return GS_OK; /* nothing to check against: checked = 0 */
    const double *in[MAX_TENSORS] = {0};
    double *outv[MAX_TENSORS] = {0};
    double *owned[MAX_TENSORS] = {0};
    int ni = 0, no = 0;
    gs_status st = GS_OK;
    for (int i = 0; i < j->n_decl; i++) {
        const gs_tensor_info *ti = gs_program_tensor(j->p, j->args.t[i].id);
        if (j->decl[i].kind == GS_TENSOR_INPUT) {
            owned[i] = decode(ti, gs_mem_tensor(j->mem, j->args.t[i].id));
            in[ni++] = owned[i];
        } else {
            owned[i] = gs_calloc(ti->elems, sizeof(double));
            outv[no++] = owned[i];
        }
        if (!owned[i]) {
            st = gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
            goto done;
        }
    }
    j->spec.kernel->reference(&j->args, in, outv);
    if (j->spec.kernel->reference_status && j->spec.kernel->reference_status(err) != GS_OK) {
        /* the outputs could not be checked: the job fails (as a wrong result would), its times
         * stand, and the error is the reference's own, not a comparison against no values */
        err->code = GS_ERR_MISMATCH;
        st = GS_ERR_MISMATCH;
        goto done;
    }
    res->checked = 1;
    double L = j->spec.kernel->reduction_len ? j->spec.kernel->reduction_len(&j->args) : 1.0;
    /* the kernel's own per-element bounds (gs_kernel_def.error_bound), parallel to outv */
    double *bound[MAX_TENSORS] = {0};
    const int per_element = j->spec.kernel->error_bound != NULL;
    if (per_element) {
        for (int o = 0; o < no; o++) {
            const gs_tensor_info *ti = NULL;
            for (int i = 0, k = 0; i < j->n_decl; i++)
                if (j->decl[i].kind != GS_TENSOR_INPUT && k++ == o)
                    ti = gs_program_tensor(j->p, j->args.t[i].id);
            bound[o] = ti ? gs_calloc(ti->elems, sizeof(double)) : NULL;
            if (!bound[o]) {
                st = gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
                goto done_bounds;
            }
        }
        j->spec.kernel->error_bound(&j->args, in, (const double *const *)outv, bound);
    }
    int oi = 0;
    /* over all outputs: "worst at" names the element furthest outside (or least inside) its
     * tolerance in whichever output it is, not the worst of the last output checked */
    double worst_excess = -1.0;
    for (int i = 0; i < j->n_decl; i++) {
        if (j->decl[i].kind == GS_TENSOR_INPUT) continue;
        const gs_tensor_info *ti = gs_program_tensor(j->p, j->args.t[i].id);
        const void *data = gs_mem_tensor(j->mem, j->args.t[i].id);
        const double *lim = bound[oi];
        const double *ref = outv[oi++];
        /* Tolerance (kernels/README.md): the output's rounding (2 ulp of its dtype, relative)
         * plus fp32 accumulation error growing with the reduction length, relative to the
         * output's RMS magnitude (so values near zero do not need impossible relative
         * accuracy). Integer outputs must match exactly. */
        /* over the finite reference values: an infinity or NaN must not widen the tolerance */
        double rms = 0.0;
        for (uint64_t e = 0; e < ti->elems; e++)
            if (isfinite(ref[e])) rms += ref[e] * ref[e];
        rms = sqrt(rms / (double)ti->elems);
        double eps = gs_dtype_eps(ti->dtype);
        double rtol = 2.0 * eps;
        double atol = gs_dtype_is_float(ti->dtype)
                          ? (2.0 * eps + 4.0 * L * gs_dtype_eps(GS_FP32)) * GS_MAX(rms, 1e-30)
                          : 0.0;
        if (lim) { /* the kernel's bounds: reported as their largest, no relative part */
            rtol = 0.0;
            atol = 0.0;
            for (uint64_t e = 0; e < ti->elems; e++)
                atol = GS_MAX(atol, lim[e]);
        }
        res->tol_abs = GS_MAX(res->tol_abs, atol);
        res->tol_rel = rtol;
        float chunk[CHUNK];
        for (uint64_t e0 = 0; e0 < ti->elems; e0 += CHUNK) {
            const size_t n = (size_t)GS_MIN((uint64_t)CHUNK, ti->elems - e0);
            load_floats(ti->dtype, data, e0, chunk, n);
            for (uint64_t e = e0; e < e0 + n; e++) {
                double got = chunk[e - e0];
                double r = ref[e];
                /* non-finite where the reference is finite, or a non-finite reference not met
                 * by the same value (NaN by any NaN; a NaN reference never passes a number) */
                const int bad_nf = isfinite(r) ? !isfinite(got) : isnan(r) ? !isnan(got) : got != r;
                if (!isfinite(r) && !bad_nf) continue;
                if (bad_nf) {
                    res->bad_nonfinite++;
                    res->mismatches++;
                    if (worst_excess < (double)INFINITY) {
                        worst_excess = INFINITY;
                        name_element(res->worst, sizeof res->worst, ti, e);
                        res->max_abs_err = INFINITY;
                    }
                    continue;
                }
                double ae = fabs(got - r);
                double re = ae / GS_MAX(fabs(r), 1e-30);
                if (ae > res->max_abs_err) res->max_abs_err = ae;
                if (fabs(r) > 1e-6 * GS_MAX(rms, 1e-30) && re > res->max_rel_err)
                    res->max_rel_err = re;
                double excess = ae - (lim ? lim[e] : atol + rtol * fabs(r));
                if (excess > 0) res->mismatches++;
                if (excess > worst_excess && worst_excess < (double)INFINITY) {
                    worst_excess = excess;
                    name_element(res->worst, sizeof res->worst, ti, e);
                }
            }
        }
    }
    if (res->mismatches)
        st = gs_error_set(err, GS_ERR_MISMATCH, NULL, 0, 0,
                          "%" PRIu64 " output elements outside tolerance (%" PRIu64
                          " non-finite), worst at %s: max abs err %.3g (tol %.3g + %.3g*|ref|)",
                          res->mismatches, res->bad_nonfinite, res->worst, res->max_abs_err,
                          res->tol_abs, res->tol_rel);
done_bounds:
    for (int o = 0; o < MAX_TENSORS; o++)
        gs_free(bound[o]);
done:
    for (int i = 0; i < MAX_TENSORS; i++)
        gs_free(owned[i]);
    return st;
}

gs_status gs_job_write_outputs(gs_job *j, const char *dir, gs_error *err)
{
    for (int i = 0; i < j->n_decl; i++) {
        if (j->decl[i].kind != GS_TENSOR_OUTPUT) continue;
        const gs_tensor_info *ti = gs_program_tensor(j->p, j->args.t[i].id);
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.f64", dir, ti->name);
        double *v = decode(ti, gs_mem_tensor(j->mem, j->args.t[i].id));
        if (!v) return gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
        /* whole or not at all: a temp file renamed over path once every byte is written (a
         * full disk left a short or empty file that read as an output) */
        gs_out out;
        gs_status st = gs_out_open(&out, path, err);
        const char *p = (const char *)v;
        size_t left = (size_t)ti->elems * sizeof(double);
        while (st == GS_OK && left > 0) {
            ssize_t w = write(out.fd, p, left);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) {
                st = gs_error_set(err, GS_ERR_IO, path, 0, 0, "cannot write: %s",
                                  strerror(w < 0 ? errno : ENOSPC));
                gs_out_abort(&out);
                break;
            }
            p += w;
            left -= (size_t)w;
        }
        if (st == GS_OK) st = gs_out_commit(&out, err);
        gs_free(v);
        if (st != GS_OK) return st;
    }
    return GS_OK;
}

gs_status gs_job_check_roofline(const gs_run_stats *st, gs_error *err)
{
    /* the model's times are integer picoseconds: allow one of rounding */
    const double slack_ns = 1e-3;
    if (st->roofline_ns > 0 && st->total_ns + slack_ns < st->roofline_ns)
        return gs_error_set(err, GS_ERR_INTERNAL, NULL, 0, 0,
                            "model error: %.3f ns is faster than the roofline on the schedule's "
                            "traffic (%.3f ns)",
                            st->total_ns, st->roofline_ns);
    if (st->min_roofline_ns > 0 && st->total_ns + slack_ns < st->min_roofline_ns)
        return gs_error_set(err, GS_ERR_INTERNAL, NULL, 0, 0,
                            "model error: %.3f ns is faster than the minimum-traffic roofline "
                            "(%.3f ns)",
                            st->total_ns, st->min_roofline_ns);
    if (st->bound_ns > 0 && st->total_ns + slack_ns < st->bound_ns)
        return gs_error_set(err, GS_ERR_INTERNAL, NULL, 0, 0,
                            "model error: %.3f ns is faster than the per-engine bound (%.3f ns, "
                            "set by %s)",
                            st->total_ns, st->bound_ns, st->bound_engine);
    return GS_OK;
}

int gs_job_is_check_shape(const gs_job_spec *spec)
{
    for (int i = 0; i < GS_SUITE_MAX_SHAPES && spec->kernel->check_shapes[i].n; i++) {
        const gs_shape *sh = &spec->kernel->check_shapes[i];
        if (sh->n != spec->n_dims) continue;
        int same = 1;
        for (int d = 0; d < sh->n; d++)
            same &= sh->d[d] == spec->dims[d];
        if (same) return 1;
    }
    return 0;
}

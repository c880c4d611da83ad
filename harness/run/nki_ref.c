/* nki_ref.c - the numpy reference of a traced NKI kernel, run by Debian's python3 in a child
 * process (gensweep/refrun.py; nki_prog_internal.h). */
#define _GNU_SOURCE /* mkdtemp */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nki_prog_internal.h"
#include "proc.h"

static gs_status write_f64(const char *path, const double *v, uint64_t n, gs_error *err)
{
    FILE *f = fopen(path, "wb");
    if (!f) return gs_error_set(err, GS_ERR_IO, path, 0, 0, "cannot write: %s", strerror(errno));
    size_t w = fwrite(v, sizeof(double), (size_t)n, f);
    int cl = fclose(f);
    if (w != n || cl != 0)
        return gs_error_set(err, GS_ERR_IO, path, 0, 0, "cannot write: %s", strerror(errno));
    return GS_OK;
}

static uint64_t elems_of(const gs_tensor_decl *d)
{
    uint64_t n = 1;
    for (int i = 0; i < d->ndim; i++)
        n *= (uint64_t)d->shape[i];
    return n;
}

static gs_status run_reference(gs_nki_prog *p, const double *const *in, double *const *out,
                               gs_error *err)
{
    char dir[1100] = "/tmp/gensweep-ref-XXXXXX";
    if (p->workdir[0]) {
        snprintf(dir, sizeof dir, "%s/ref", p->workdir);
        if (mkdir(dir, 0700) != 0 && errno != EEXIST)
            return gs_error_set(err, GS_ERR_IO, dir, 0, 0, "cannot create: %s", strerror(errno));
    } else if (!mkdtemp(dir)) {
        return gs_error_set(err, GS_ERR_IO, NULL, 0, 0, "cannot create a temporary directory: %s",
                            strerror(errno));
    }
    char path[1200], manifest[1200];
    gs_status st = GS_OK;
    snprintf(manifest, sizeof manifest, "%s/manifest", dir);
    FILE *mf = fopen(manifest, "w");
    if (!mf) st = gs_error_set(err, GS_ERR_IO, manifest, 0, 0, "cannot write: %s", strerror(errno));
    int ni = 0, no = 0;
    if (mf && p->ref_args) fprintf(mf, "args %s\n", p->ref_args);
    for (int i = 0; st == GS_OK && i < p->n_tensors; i++) {
        const gs_tensor_decl *d = &p->tensors[i].decl;
        if (d->kind == GS_TENSOR_SCRATCH) continue;
        int is_in = d->kind == GS_TENSOR_INPUT;
        fprintf(mf, "%s %d", is_in ? "in" : "out", is_in ? ni : no);
        for (int q = 0; q < d->ndim; q++)
            fprintf(mf, " %" PRId64, d->shape[q]);
        fprintf(mf, "\n");
        if (is_in) {
            snprintf(path, sizeof path, "%s/in%d.f64", dir, ni);
            st = write_f64(path, in[ni], elems_of(d), err);
            ni++;
        } else {
            no++;
        }
    }
    if (mf && fclose(mf) != 0 && st == GS_OK)
        st = gs_error_set(err, GS_ERR_IO, manifest, 0, 0, "cannot write: %s", strerror(errno));
    char errpath[1200];
    snprintf(errpath, sizeof errpath, "%s/stderr", dir);
    if (st == GS_OK) {
        const char *argv[] = {p->python, "-m", "gensweep.refrun", p->ref_file, p->ref_func,
                              dir,       NULL};
        gs_proc_opts po;
        memset(&po, 0, sizeof po);
        po.kind = GS_PROC_EXEC;
        po.exe = p->python;
        po.argv = argv;
        po.out = GS_PROC_DEVNULL;
        po.err = GS_PROC_FILE;
        po.err_path = errpath;
        po.tail_bytes = 900;
        po.env_name = "PYTHONPATH";
        po.env_value = p->frontend;
        po.exec_fail_who = "gensweep nki";
        /* the run's limits hold for the reference too (a `while True` in it must end) */
        po.timeout_s = p->wall_limit_s;
        po.cpu_limit_s = p->wall_limit_s;
        po.mem_limit = p->mem_limit;
        gs_proc *proc = gs_proc_start(&po);
        if (!proc) {
            st = gs_error_set(err, GS_ERR_IO, NULL, 0, 0, "cannot start %s: %s", p->python,
                              strerror(errno));
        } else {
            const gs_proc_result *res = gs_proc_wait(proc);
            char why[64] = "";
            if (res->timed_out)
                snprintf(why, sizeof why, "stopped at the wall limit (%g s)", p->wall_limit_s);
            else if (gs_proc_stopped_at_cpu_limit(res, p->wall_limit_s))
                snprintf(why, sizeof why, "stopped at its CPU limit (%g s)", p->wall_limit_s);
            else if (!res->exited)
                snprintf(why, sizeof why, "killed by %s", gs_proc_signal_name(res->signal));
            if (why[0])
                st = gs_error_set(err, GS_ERR_TIMEOUT, p->ref_file, 0, 0, "reference %s %s%s%s",
                                  p->ref_func, why, res->tail && res->tail[0] ? ": " : "",
                                  res->tail ? res->tail : "");
            else if (res->exit_code != 0)
                st = gs_error_set(err, GS_ERR_INVALID, p->ref_file, 0, 0, "reference %s failed: %s",
                                  p->ref_func,
                                  res->tail && res->tail[0] ? res->tail : "(no message)");
            gs_proc_free(proc);
        }
    }
    no = 0;
    for (int i = 0; st == GS_OK && i < p->n_tensors; i++) {
        const gs_tensor_decl *d = &p->tensors[i].decl;
        if (d->kind != GS_TENSOR_OUTPUT) continue;
        snprintf(path, sizeof path, "%s/out%d.f64", dir, no);
        FILE *f = fopen(path, "rb");
        uint64_t n = elems_of(d);
        size_t got = f ? fread(out[no], sizeof(double), (size_t)n, f) : 0;
        if (f) fclose(f);
        if (got != n)
            st = gs_error_set(err, GS_ERR_INVALID, p->ref_file, 0, 0,
                              "reference %s gave no values for output '%s'", p->ref_func, d->name);
        no++;
    }
    /* remove what was written (names known: manifest, stderr, in*.f64, out*.f64) */
    unlink(manifest);
    unlink(errpath);
    for (int i = 0; i < GS_KERNEL_MAX_TENSORS; i++) {
        snprintf(path, sizeof path, "%s/in%d.f64", dir, i);
        unlink(path);
        snprintf(path, sizeof path, "%s/out%d.f64", dir, i);
        unlink(path);
    }
    rmdir(dir);
    return st;
}

void gs_nki_prog_reference(const gs_kernel_args *args, const double *const *in, double *const *out)
{
    (void)args;
    gs_nki_prog *p = gs_nki_prog_active();
    if (!p) return;
    gs_error_clear(&p->ref_err);
    p->ref_st = run_reference(p, in, out, &p->ref_err);
    if (p->ref_st == GS_OK) return;
    /* no reference values: NaN everywhere, so nothing can pass by accident */
    int no = 0;
    for (int i = 0; i < p->n_tensors; i++) {
        const gs_tensor_decl *d = &p->tensors[i].decl;
        if (d->kind != GS_TENSOR_OUTPUT) continue;
        uint64_t n = elems_of(d);
        for (uint64_t e = 0; e < n; e++)
            out[no][e] = NAN;
        no++;
    }
}

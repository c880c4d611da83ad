/*
 * fault_kernels.c - test-only kernels that misbehave, and the `gensweep_faults` binary that
 * carries them: every real gensweep command (the gs_cli library) with six extra kernels
 * appended to the suite (gs_suite_append). They never ship: the normal gensweep binary does not
 * link this file; the harness code under test is exactly the shipped code.
 *
 *   fault_crash     SIGSEGV inside build
 *   fault_hang      never returns from build (the sweep's timeout must kill it); it sleeps, so
 *                   it takes no CPU from the jobs beside it on a loaded machine
 *   fault_deadlock  a real model deadlock: a raw instruction waiting on a later one
 *   fault_oom       allocates past the per-job memory limit in one step, so the limit stops it
 *                   at once however slow the machine (no race against the timeout)
 *   fault_spin      spins in build, using CPU: for CPU limits (a CPU limit stops it after that
 *                   much CPU time, however loaded the machine); nothing else should run it
 *   fault_two_outputs  copies X to two outputs Y and Z; its reference differs from the copy
 *                   in one element of Y (the first output), Z matches: the output check's
 *                   "worst at" must name Y, not the last output checked
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "commands.h"
#include "gs/isa.h"
#include "gs/builder.h"
#include "suite.h"

static gs_status build_crash(gs_kb *kb, const gs_kernel_args *a)
{
    (void)kb;
    (void)a;
    fprintf(stderr, "fault_crash: about to crash\n");
    fflush(stderr);
    raise(SIGSEGV);
    return GS_ERR_INTERNAL;
}

static gs_status build_hang(gs_kb *kb, const gs_kernel_args *a)
{
    (void)a;
    /* a hang, not a CPU burner: a spinning job would slow the jobs beside it (and an orphan of a
     * runner that failed to kill it would eat a core until reboot) */
    for (;;)
        pause();
    return gs_kb_status(kb);
}

static gs_status build_spin(gs_kb *kb, const gs_kernel_args *a)
{
    (void)a;
    for (volatile unsigned long i = 0;; i++) {
    }
    return gs_kb_status(kb);
}

static gs_status build_deadlock(gs_kb *kb, const gs_kernel_args *a)
{
    (void)a;
    gs_pool *pool = gs_pool_create(kb, GS_MEM_SBUF, "x", 1, 256);
    gs_tile t = gs_tile_alloc(pool, GS_FP32, 128, 64);
    gs_memset(kb, GS_ENG_VECTOR, t.ap, 1.0f);
    gs_program *prog = gs_kb_program(kb);
    if (!gs_kb_ok(kb) || !prog) return gs_kb_status(kb);
    /* #1 waits for #2, a later instruction on the same in-order engine: never satisfiable */
    gs_instr_draft in;
    gs_program_instr_to_draft(prog, 0, &in);
    uint32_t dep = (uint32_t)gs_program_count(prog) + 1;
    in.deps = &dep;
    in.n_deps = 1;
    in.line = __LINE__;
    gs_program_append_raw(prog, &in);
    in.deps = NULL;
    in.n_deps = 0;
    gs_program_append_raw(prog, &in);
    return gs_kb_status(kb);
}

static gs_status build_oom(gs_kb *kb, const gs_kernel_args *a)
{
    (void)a;
    /* One allocation of the whole limit: with the process's own mappings on top it exceeds the
     * address-space limit, so the refusal is immediate. Filling memory step by step instead
     * took seconds of page faults, which a loaded machine stretched past the job's timeout. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return gs_kb_fail(kb, GS_ERR_INVALID,
                          "fault_oom: no memory limit to exceed (run it under --mem-limit)");
    size_t n = (size_t)rl.rlim_cur;
    char *p = gs_malloc(n);
    if (!p)
        return gs_kb_fail(kb, GS_ERR_NOMEM, "fault_oom: out of memory allocating %zu MiB", n >> 20);
    memset(p, 1, n); /* not reached under a limit; touched so the memory would really be used */
    gs_free(p);
    return gs_kb_fail(kb, GS_ERR_INTERNAL, "fault_oom: %zu MiB allocated under a limit of as much",
                      n >> 20);
}

/* X -> SBUF -> Y and Z (fault_two_outputs) */
static gs_status build_two_outputs(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_tensor *X = &a->t[0], *Y = &a->t[1], *Z = &a->t[2];
    gs_pool *pool = gs_pool_create(kb, GS_MEM_SBUF, "x", 1, 256);
    gs_tile t = gs_tile_alloc(pool, GS_FP32, 128, 64);
    gs_dma_copy(kb, t.ap, gs_hbm_rows(X, 0, 128, 0, 64), -1);
    gs_dma_copy(kb, gs_hbm_rows(Y, 0, 128, 0, 64), t.ap, -1);
    gs_dma_copy(kb, gs_hbm_rows(Z, 0, 128, 0, 64), t.ap, -1);
    return gs_kb_status(kb);
}

static int tensors_n(const gs_kernel_args *a, gs_tensor_decl *t, int max, int n)
{
    static const char *const names[] = {"X", "Y", "Z"};
    if (max < n) return -1;
    for (int i = 0; i < n; i++) {
        memset(&t[i], 0, sizeof t[i]);
        snprintf(t[i].name, sizeof t[i].name, "%s", names[i]);
        t[i].kind = i ? GS_TENSOR_OUTPUT : GS_TENSOR_INPUT;
        t[i].dtype = a->dtype;
        t[i].ndim = 2;
        t[i].shape[0] = a->dims[0];
        t[i].shape[1] = a->dims[1];
        t[i].lo = -1;
        t[i].hi = 1;
    }
    return n;
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    (void)err;
    return tensors_n(a, t, max, 2);
}

static int tensors_two_outputs(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    (void)err;
    return tensors_n(a, t, max, 3);
}

static void reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    for (int64_t i = 0; i < a->dims[0] * a->dims[1]; i++)
        out[0][i] = in[0][i];
}

/* Y = Z = X, except Y[3, 7] (the copy is wrong there by 8, far outside any tolerance) */
static void reference_two_outputs(const gs_kernel_args *a, const double *const *in,
                                  double *const *out)
{
    for (int64_t i = 0; i < a->dims[0] * a->dims[1]; i++)
        out[0][i] = out[1][i] = in[0][i];
    out[0][3 * a->dims[1] + 7] += 8.0;
}

#define FAULT_KERNEL_T(sym, nm, fn, tens, ref)                                                     \
    static const gs_kernel_def sym = {                                                             \
        .name = nm,                                                                                \
        .summary = "test-only fault injection",                                                    \
        .n_dims = 2,                                                                               \
        .dim_names = {"R", "C"},                                                                   \
        .n_variants = 1,                                                                           \
        .variants = {"default"},                                                                   \
        .check_shapes = {{2, {128, 64}}},                                                          \
        .perf_shapes = {{2, {128, 64}}},                                                           \
        .dtypes = 1u << GS_FP32,                                                                   \
        .tensors = tens,                                                                           \
        .build = fn,                                                                               \
        .reference = ref,                                                                          \
    };

#define FAULT_KERNEL(sym, nm, fn) FAULT_KERNEL_T(sym, nm, fn, tensors, reference)

FAULT_KERNEL(k_crash, "fault_crash", build_crash)
FAULT_KERNEL(k_hang, "fault_hang", build_hang)
FAULT_KERNEL(k_deadlock, "fault_deadlock", build_deadlock)
FAULT_KERNEL(k_oom, "fault_oom", build_oom)
FAULT_KERNEL(k_spin, "fault_spin", build_spin)
FAULT_KERNEL_T(k_two_outputs, "fault_two_outputs", build_two_outputs, tensors_two_outputs,
               reference_two_outputs)

static const gs_kernel_def *const faults[] = {&k_crash, &k_hang,        &k_deadlock,
                                              &k_oom,   &k_two_outputs, &k_spin};

int main(int argc, char **argv)
{
    gs_suite_append(faults, GS_ARRAY_LEN(faults));
    return gs_main(argc, argv);
}

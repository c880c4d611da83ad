/*
 * fault_kernels.c - test-only kernels that misbehave, and the `gensweep_faults` binary that
 * carries them: the real gensweep commands (run, sweep, merge, compare, list) with four extra
 * kernels appended to the suite. They never ship: the normal gensweep binary does not link this
 * file. The suite registry is extended with the linker's --wrap (gs_suite_find/_count/_kernel),
 * so the harness code under test is exactly the shipped code.
 *
 *   fault_crash     SIGSEGV inside build
 *   fault_hang      an endless loop inside build (the sweep's timeout must kill it)
 *   fault_deadlock  a real model deadlock: a raw instruction waiting on a later one
 *   fault_oom       allocates until the per-job memory limit stops it
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "gs/isa.h"
#include "gs/builder.h"
#include "suite.h"

/* The program of the job being built, captured from gs_kb_create (test-only: the kernel API
 * deliberately has no way to reach it, and a deadlock needs a raw dependency). */
static gs_program *captured_program;

gs_kb *__real_gs_kb_create(gs_program *p, unsigned core);
gs_kb *__wrap_gs_kb_create(gs_program *p, unsigned core)
{
    captured_program = p;
    return __real_gs_kb_create(p, core);
}

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
    volatile unsigned long spin = 0;
    for (;;)
        spin++;
    return gs_kb_status(kb);
}

static gs_status build_deadlock(gs_kb *kb, const gs_kernel_args *a)
{
    (void)a;
    gs_pool *pool = gs_pool_create(kb, GS_MEM_SBUF, "x", 1, 256);
    gs_tile t = gs_tile_alloc(pool, GS_FP32, 128, 64);
    gs_memset(kb, GS_ENG_VECTOR, t.ap, 1.0f);
    if (!gs_kb_ok(kb) || !captured_program) return gs_kb_status(kb);
    /* #1 waits for #2, a later instruction on the same in-order engine: never satisfiable */
    gs_instr_draft in;
    gs_program_instr_to_draft(captured_program, 0, &in);
    uint32_t dep = (uint32_t)gs_program_count(captured_program) + 1;
    in.deps = &dep;
    in.n_deps = 1;
    in.line = __LINE__;
    gs_program_append_raw(captured_program, &in);
    in.deps = NULL;
    in.n_deps = 0;
    gs_program_append_raw(captured_program, &in);
    return gs_kb_status(kb);
}

static gs_status build_oom(gs_kb *kb, const gs_kernel_args *a)
{
    (void)a;
    /* touch every page so the memory is really used, until the limit refuses */
    size_t total = 0;
    for (;;) {
        size_t n = (size_t)256 << 20;
        char *p = gs_malloc(n);
        if (!p)
            return gs_kb_fail(kb, GS_ERR_NOMEM, "fault_oom: out of memory after %zu MiB",
                              total >> 20);
        memset(p, 1, n);
        total += n;
    }
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    (void)err;
    if (max < 2) return -1;
    for (int i = 0; i < 2; i++) {
        memset(&t[i], 0, sizeof t[i]);
        snprintf(t[i].name, sizeof t[i].name, "%s", i ? "Y" : "X");
        t[i].kind = i ? GS_TENSOR_OUTPUT : GS_TENSOR_INPUT;
        t[i].dtype = a->dtype;
        t[i].ndim = 2;
        t[i].shape[0] = a->dims[0];
        t[i].shape[1] = a->dims[1];
        t[i].lo = -1;
        t[i].hi = 1;
    }
    return 2;
}

static void reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    for (int64_t i = 0; i < a->dims[0] * a->dims[1]; i++)
        out[0][i] = in[0][i];
}

#define FAULT_KERNEL(sym, nm, fn)                                                                  \
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
        .tensors = tensors,                                                                        \
        .build = fn,                                                                               \
        .reference = reference,                                                                    \
    };

FAULT_KERNEL(k_crash, "fault_crash", build_crash)
FAULT_KERNEL(k_hang, "fault_hang", build_hang)
FAULT_KERNEL(k_deadlock, "fault_deadlock", build_deadlock)
FAULT_KERNEL(k_oom, "fault_oom", build_oom)

static const gs_kernel_def *const faults[] = {&k_crash, &k_hang, &k_deadlock, &k_oom};

size_t __real_gs_suite_count(void);
const gs_kernel_def *__real_gs_suite_kernel(size_t i);
const gs_kernel_def *__real_gs_suite_find(const char *name);

size_t __wrap_gs_suite_count(void)
{
    return __real_gs_suite_count() + GS_ARRAY_LEN(faults);
}

const gs_kernel_def *__wrap_gs_suite_kernel(size_t i)
{
    size_t n = __real_gs_suite_count();
    if (i < n) return __real_gs_suite_kernel(i);
    return i - n < GS_ARRAY_LEN(faults) ? faults[i - n] : NULL;
}

const gs_kernel_def *__wrap_gs_suite_find(const char *name)
{
    for (size_t i = 0; i < GS_ARRAY_LEN(faults); i++)
        if (!strcmp(faults[i]->name, name)) return faults[i];
    return __real_gs_suite_find(name);
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } cmds[] = {{"run", gs_cmd_run},     {"sweep", gs_cmd_sweep},
                {"merge", gs_cmd_merge}, {"compare", gs_cmd_compare},
                {"list", gs_cmd_list},   {"baseline", gs_cmd_baseline}};
    if (argc < 2) {
        fprintf(stderr, "usage: gensweep_faults run|sweep|merge|compare|list|baseline ...\n");
        return 2;
    }
    for (size_t i = 0; i < GS_ARRAY_LEN(cmds); i++)
        if (!strcmp(argv[1], cmds[i].name)) return cmds[i].run(argc - 1, argv + 1);
    fprintf(stderr, "gensweep_faults: unknown command '%s'\n", argv[1]);
    return 2;
}

/* cmd_kernels.c - `gensweep list kernels`: the kernel suite with variants, shapes, params. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "suite.h"

static void print_shape(const gs_shape *s)
{
    for (int i = 0; i < s->n; i++)
        printf("%s%" PRId64, i ? "x" : "", s->d[i]);
}

static void print_shapes(const gs_shape *list)
{
    for (int s = 0; s < GS_SUITE_MAX_SHAPES && list[s].n; s++) {
        printf(s ? ", " : "");
        print_shape(&list[s]);
    }
    printf("\n");
}

int gs_list_kernels(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--names")) {
        for (size_t k = 0; k < gs_suite_count(); k++)
            printf("%s\n", gs_suite_kernel(k)->name);
        return GS_EXIT_OK;
    }
    if (argc == 3 && !strcmp(argv[1], "--check-shapes")) {
        const gs_kernel_def *d = gs_suite_find(argv[2]);
        if (!d) {
            fprintf(stderr, "gensweep list kernels: unknown kernel '%s'\n", argv[2]);
            return GS_EXIT_USAGE;
        }
        for (int s = 0; s < GS_SUITE_MAX_SHAPES && d->check_shapes[s].n; s++) {
            print_shape(&d->check_shapes[s]);
            printf("\n");
        }
        return GS_EXIT_OK;
    }
    if (argc != 1) {
        fprintf(stderr, "usage: gensweep list kernels [--names | --check-shapes KERNEL]\n");
        return GS_EXIT_USAGE;
    }
    for (size_t k = 0; k < gs_suite_count(); k++) {
        const gs_kernel_def *d = gs_suite_kernel(k);
        printf("%s: %s\n  dims:     ", d->name, d->summary);
        for (int i = 0; i < d->n_dims; i++)
            printf("%s%s", i ? "x" : "", d->dim_names[i]);
        printf("\n  variants:");
        for (int v = 0; v < d->n_variants; v++)
            printf(" %s%s", d->variants[v],
                   (d->spmd_variants >> v) & 1u ? " (SPMD: every core)" : "");
        printf("\n  dtypes:  ");
        for (int t = 0; t < GS_DTYPE_COUNT; t++)
            if (d->dtypes & (1u << t)) printf(" %s", gs_dtype_name((gs_dtype)t));
        printf("\n  params:\n");
        for (int p = 0; p < d->n_params; p++)
            printf("    %-8s %s\n", d->param_names[p], d->param_help[p]);
        printf("  check:    ");
        print_shapes(d->check_shapes);
        printf("  perf:     ");
        print_shapes(d->perf_shapes);
    }
    return GS_EXIT_OK;
}

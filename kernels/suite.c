/* suite.c - the registry of kernels (see suite.h): the list of kernels.def. */
#include "suite.h"

#include <string.h>

static const gs_kernel_def *const kernels[] = {
#define GS_KERNEL(name, source) &gs_kernel_##name,
#include "kernels.def"
#undef GS_KERNEL
};

static const gs_kernel_def *const *appended;
static size_t n_appended;

size_t gs_suite_count(void)
{
    return sizeof kernels / sizeof kernels[0] + n_appended;
}

/* A kernel registered while the process runs (an NKI kernel the front end traced). */
static const gs_kernel_def *extra;

void gs_suite_set_extra(const gs_kernel_def *k)
{
    extra = k;
}

void gs_suite_append(const gs_kernel_def *const *k, size_t n)
{
    appended = n ? k : NULL;
    n_appended = appended ? n : 0;
}

const gs_kernel_def *gs_suite_find(const char *name)
{
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        if (strcmp(kernels[i]->name, name) == 0) return kernels[i];
    for (size_t i = 0; i < n_appended; i++)
        if (strcmp(appended[i]->name, name) == 0) return appended[i];
    if (extra && strcmp(extra->name, name) == 0) return extra;
    return NULL;
}

const gs_kernel_def *gs_suite_kernel(size_t i)
{
    const size_t n = sizeof kernels / sizeof kernels[0];
    if (i < n) return kernels[i];
    return i - n < n_appended ? appended[i - n] : NULL;
}

int gs_suite_variant(const gs_kernel_def *k, const char *name)
{
    for (int i = 0; i < k->n_variants; i++)
        if (strcmp(k->variants[i], name) == 0) return i;
    return -1;
}

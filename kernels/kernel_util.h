/*
 * kernel_util.h - small helpers shared by the kernels (written against gs/kernel.h only).
 */
#ifndef GS_KERNEL_UTIL_H
#define GS_KERNEL_UTIL_H

#include "gs/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The engine for a kernel's elementwise work from its `engine` param: 0 = the kernel's default
 * `dflt`, 1 vector, 2 scalar, 3 gpsimd. A gpsimd choice on a target without one is
 * "unsupported"; any other value is an invalid-parameter error naming `kernel`. Errors carry the
 * caller's source line.
 */
#define gs_pick_engine(kb, kernel, param, dflt, out)                                               \
    gs_pick_engine_at((kb), __FILE__, __LINE__, (kernel), (param), (dflt), (out))
gs_status gs_pick_engine_at(gs_kb *kb, const char *file, int line, const char *kernel,
                            int64_t param, gs_engine dflt, gs_engine *out);

#ifdef __cplusplus
}
#endif
#endif

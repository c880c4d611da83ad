/* kernel_util.c - helpers shared by the kernels (see kernel_util.h). */
#include "kernel_util.h"

gs_status gs_pick_engine_at(gs_kb *kb, const char *file, int line, const char *kernel,
                            int64_t param, gs_engine dflt, gs_engine *out)
{
    switch (param) {
    case 0:
        *out = dflt;
        return GS_OK;
    case 1:
        *out = GS_ENG_VECTOR;
        return GS_OK;
    case 2:
        *out = GS_ENG_SCALAR;
        return GS_OK;
    case 3:
        if (!gs_kb_caps(kb)->has_gpsimd)
            return gs_kb_fail_at(kb, file, line, GS_ERR_UNSUPPORTED,
                                 "unsupported: engine=3 (gpsimd) but the target has no gpsimd "
                                 "engine");
        *out = GS_ENG_GPSIMD;
        return GS_OK;
    default:
        return gs_kb_fail_at(kb, file, line, GS_ERR_INVALID,
                             "%s: engine=%lld (use 1 vector, 2 scalar, 3 gpsimd)", kernel,
                             (long long)param);
    }
}

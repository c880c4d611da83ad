/* job_status.c - the job status table (see job_status.h). */
#include "job_status.h"

#include <stddef.h>
#include <string.h>

static const struct {
    const char *name;
    int failure;
    int severity;
    const char *junit;
} info[] = {
#define GS_JS_INFO(e, n, f, s, j) {n, f, s, j},
    GS_JOB_STATUS_TABLE(GS_JS_INFO)
#undef GS_JS_INFO
};

static int known(gs_job_status s)
{
    return (int)s >= 0 && s < GS_JOB_STATUS_COUNT;
}

const char *gs_job_status_name(gs_job_status s)
{
    return known(s) ? info[s].name : "?";
}

int gs_job_status_is_failure(gs_job_status s)
{
    return known(s) ? info[s].failure : 1;
}

int gs_job_status_severity(gs_job_status s)
{
    return known(s) ? info[s].severity : GS_JOB_SEVERITY_FAIL;
}

const char *gs_job_status_junit(gs_job_status s)
{
    return known(s) ? info[s].junit : "error";
}

int gs_job_status_parse(const char *name)
{
    for (int i = 0; name && i < GS_JOB_STATUS_COUNT; i++)
        if (!strcmp(name, info[i].name)) return i;
    return -1;
}

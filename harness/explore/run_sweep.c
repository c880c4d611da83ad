/* run_sweep.c - one sweep through the sweep library, for the explore modules
 * (explore_internal.h). */
#include <unistd.h>

#include <cjson/cJSON.h>

#include "explore_internal.h"
#include "results.h"

static void add_error(gs_diags *d, const gs_error *e)
{
    gs_diags_add(d, e->code, e->file[0] ? e->file : NULL, e->line, e->column, "%s", e->message);
}

int gs_explore_run_sweep(const gs_sweep_opts *ov, gs_diags *d)
{
    gs_sweep *s = gs_sweep_create(ov, d);
    if (!s || gs_sweep_plan(s, d) != 0) {
        gs_sweep_free(s);
        return 2;
    }
    gs_error err;
    gs_error_clear(&err);
    int lock_fd = gs_sweep_lock_out(s, &err);
    if (lock_fd < 0) {
        add_error(d, &err);
        gs_sweep_free(s);
        return 2;
    }
    int intr = 0, rc = 0;
    cJSON *doc = gs_sweep_execute(s, &intr, &err);
    if (!doc) {
        if (err.code != GS_OK) add_error(d, &err);
        rc = 1;
    } else if (gs_results_write_dir(doc, gs_sweep_options(s)->out_dir, &err) != GS_OK) {
        add_error(d, &err);
        rc = 1;
    } else {
        const cJSON *j;
        cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(doc, "jobs"))
        {
            if (gs_sweep_record_failed(j)) rc = 1;
        }
        if (intr) rc = 1;
    }
    cJSON_Delete(doc);
    close(lock_fd);
    gs_sweep_free(s);
    return rc;
}

/* workload_suite.c - the workloads of `sweep --suite model` (workload.h): load the files, add
 * every workload's jobs on every config of one sweep (so they run at once, with the sweep's
 * progress, lock, interruption and results.json), then collect each workload's rows per config
 * from the results document. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs/strbuf.h"
#include "workload.h"

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static gs_status add_file(gs_wl_suite *ws, const char *path, gs_diags *d)
{
    gs_workload *w = gs_workload_load(path, NULL, 0, d);
    if (!w) return GS_ERR_PARSE;
    for (size_t i = 0; i < ws->n; i++)
        if (!strcmp(ws->w[i]->name, w->name)) {
            gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0,
                         "--workloads: %s and %s are both workload '%s'", ws->w[i]->path, path,
                         w->name);
            gs_workload_free(w);
            return GS_ERR_USAGE;
        }
    gs_workload **nw = gs_realloc(ws->w, (ws->n + 1) * sizeof *nw);
    if (!nw) {
        gs_workload_free(w);
        gs_diags_add(d, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
        return GS_ERR_NOMEM;
    }
    ws->w = nw;
    ws->w[ws->n++] = w;
    return GS_OK;
}

/* The *.yaml files of dir, sorted: their count (paths in *out, each and the array to gs_free),
 * or -1 with the problem in d. */
static int list_dir(const char *dir, char ***out, gs_diags *d)
{
    DIR *dp = opendir(dir);
    if (!dp) {
        gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0,
                     "--suite model: no workload directory %s (%s); give --workloads FILE,...", dir,
                     strerror(errno));
        return -1;
    }
    char **names = NULL;
    int n = 0, oom = 0;
    const struct dirent *e;
    while ((e = readdir(dp)) != NULL && !oom) {
        const size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0 || e->d_name[0] == '.') continue;
        char **nn = gs_realloc(names, (size_t)(n + 1) * sizeof *nn);
        gs_sb p;
        gs_sb_init(&p);
        gs_sb_printf(&p, "%s/%s", dir, e->d_name);
        char *s = gs_sb_take(&p); /* resets p either way */
        gs_sb_free(&p);
        if (nn) names = nn;
        if (!nn || !s) {
            gs_free(s);
            oom = 1;
            break;
        }
        names[n++] = s;
    }
    closedir(dp);
    if (oom || n == 0) {
        for (int i = 0; i < n; i++)
            gs_free(names[i]);
        gs_free(names);
        gs_diags_add(d, oom ? GS_ERR_NOMEM : GS_ERR_USAGE, NULL, 0, 0,
                     oom ? "out of memory" : "--suite model: no *.yaml workload in %s", dir);
        return -1;
    }
    qsort(names, (size_t)n, sizeof *names, str_cmp);
    *out = names;
    return n;
}

gs_status gs_wl_suite_load(gs_wl_suite *ws, const char *list, const char *dir, gs_diags *d)
{
    memset(ws, 0, sizeof *ws);
    gs_status st = GS_OK;
    if (list) {
        char *buf = gs_strdup(list);
        if (!buf) {
            gs_diags_add(d, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
            return GS_ERR_NOMEM;
        }
        char *save = NULL;
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            gs_status s1 = add_file(ws, t, d); /* every file checked: all problems at once */
            if (st == GS_OK) st = s1;
        }
        gs_free(buf);
        if (st == GS_OK && ws->n == 0) {
            gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0, "--workloads: empty list");
            st = GS_ERR_USAGE;
        }
    } else {
        char **paths = NULL;
        const int n = list_dir(dir, &paths, d);
        if (n < 0) return GS_ERR_USAGE;
        for (int i = 0; i < n; i++) {
            gs_status s1 = add_file(ws, paths[i], d);
            if (st == GS_OK) st = s1;
            gs_free(paths[i]);
        }
        gs_free(paths);
    }
    if (st != GS_OK) gs_wl_suite_free(ws);
    return st;
}

void gs_wl_suite_free(gs_wl_suite *ws)
{
    if (!ws) return;
    for (size_t i = 0; i < ws->n; i++)
        gs_workload_free(ws->w[i]);
    gs_free(ws->w);
    ws->w = NULL;
    ws->n = 0;
}

int gs_wl_suite_plan(const gs_wl_suite *ws, gs_sweep *s, gs_diags *d)
{
    for (size_t c = 0; c < gs_sweep_config_count(s); c++)
        for (size_t k = 0; k < ws->n; k++)
            if (gs_workload_add_jobs(ws->w[k], s, c) != 0) {
                gs_diags_add(d, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
                return -1;
            }
    return 0;
}

gs_wl_result *gs_wl_suite_collect(const gs_wl_suite *ws, const gs_sweep *s, const cJSON *doc,
                                  int interrupted)
{
    const size_t nc = gs_sweep_config_count(s);
    const size_t n = ws->n * nc;
    gs_wl_result *res = gs_calloc(n > 0 ? n : 1, sizeof *res);
    if (!res) return NULL;
    for (size_t k = 0; k < ws->n; k++)
        for (size_t c = 0; c < nc; c++)
            gs_workload_collect(ws->w[k], s, c, doc, interrupted, &res[k * nc + c]);
    return res;
}

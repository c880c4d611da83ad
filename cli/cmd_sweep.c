/*
 * cmd_sweep.c - `gensweep sweep`, `merge`, `compare` and `baseline update`, and the options
 * every command that runs a sweep shares (gs_sweep_parse_common); the session they run is
 * session.c.
 */
#include <errno.h>
#include <math.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "across.h"
#include "cli_util.h"
#include "commands.h"
#include "compare.h"
#include "worker.h"
#include "gs/strbuf.h"
#include "gs/units.h"
#include "report.h"
#include "results.h"
#include "sweep.h"

#define MAX_LIST GS_SWEEP_MAX_LIST

/* An error whose text may quote ids and values from a file: control characters escaped. */
static void print_escaped_error(const char *cmd, const char *msg)
{
    gs_sb sb;
    gs_sb_init(&sb);
    gs_sb_term(&sb, msg);
    fprintf(stderr, "gensweep %s: %s\n", cmd, gs_sb_cstr(&sb));
    gs_sb_free(&sb);
}

static int need(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "gensweep %s: option %s needs a value\n", argv[0], argv[*i]);
        return 0;
    }
    (*i)++;
    return 1;
}

static int parse_int(const char *cmd, const char *opt, const char *s, int lo, int *out)
{
    gs_error err;
    gs_error_clear(&err);
    int64_t v;
    if (gs_parse_int(s, lo, 100000, &v, &err) != 0) {
        fprintf(stderr, "gensweep %s: %s: %s\n", cmd, opt, err.message);
        return 0;
    }
    *out = (int)v;
    return 1;
}

/* "4GiB", "512MiB", "0" (no limit) */
static int parse_bytes(const char *cmd, const char *opt, const char *s, double *out)
{
    gs_error err;
    gs_error_clear(&err);
    if (gs_parse_size(s, out, &err) != 0) {
        fprintf(stderr, "gensweep %s: %s: %s\n", cmd, opt, err.message);
        return 0;
    }
    return 1;
}

/* Options shared by sweep, baseline update and whatif. Returns 1 if argv[*i] was one of them
 * (consuming its value), 0 if not, -1 on a bad value. */
int gs_sweep_parse_common(int argc, char **argv, int *i, gs_sweep_opts *o, const char **lists,
                          size_t *n_cfg, const char **sets, size_t *n_sets)
{
    const char *a = argv[*i];
    const char *cmd = argv[0];
    if (!strcmp(a, "--configs") || !strcmp(a, "--config") || !strcmp(a, "-c")) {
        if (!need(argc, argv, i)) return -1;
        /* --configs takes one or more values, up to the next option */
        do {
            if (*n_cfg >= MAX_LIST) {
                fprintf(stderr, "gensweep %s: too many configs\n", cmd);
                return -1;
            }
            if (!argv[*i][0]) {
                fprintf(stderr, "gensweep %s: %s: empty path\n", cmd, a);
                return -1;
            }
            lists[(*n_cfg)++] = argv[*i];
        } while (*i + 1 < argc && argv[*i + 1][0] != '-' && ++*i);
    } else if (!strcmp(a, "--kernels") || !strcmp(a, "--kernel") || !strcmp(a, "-k")) {
        if (!need(argc, argv, i)) return -1;
        if (strspn(argv[*i], ", ") == strlen(argv[*i])) {
            fprintf(stderr, "gensweep %s: %s: empty list (see gensweep list kernels)\n", cmd, a);
            return -1;
        }
        o->kernels = argv[*i];
    } else if (!strcmp(a, "--suite")) {
        if (!need(argc, argv, i)) return -1;
        if (!strcmp(argv[*i], "check"))
            o->suite = GS_SWEEP_CHECK;
        else if (!strcmp(argv[*i], "perf"))
            o->suite = GS_SWEEP_PERF;
        else if (!strcmp(argv[*i], "all"))
            o->suite = GS_SWEEP_ALL;
        else {
            fprintf(stderr, "gensweep %s: --suite must be check, perf or all%s\n", cmd,
                    !strcmp(cmd, "sweep") ? " (or model)" : "");
            return -1;
        }
    } else if (!strcmp(a, "-j") || !strcmp(a, "--jobs")) {
        if (!need(argc, argv, i) || !parse_int(cmd, a, argv[*i], 1, &o->jobs)) return -1;
    } else if (!strncmp(a, "-j", 2) && a[2]) {
        if (!parse_int(cmd, "-j", a + 2, 1, &o->jobs)) return -1;
    } else if (!strcmp(a, "--set")) {
        if (!need(argc, argv, i)) return -1;
        if (*n_sets >= MAX_LIST) {
            fprintf(stderr, "gensweep %s: too many --set options\n", cmd);
            return -1;
        }
        sets[(*n_sets)++] = argv[*i];
    } else if (!strcmp(a, "--timeout")) {
        if (!need(argc, argv, i)) return -1;
        gs_error err;
        gs_error_clear(&err);
        double v = 0;
        if (gs_parse_real(argv[*i], 0.0, 1e9, &v, &err) != 0 || !(v > 0)) {
            fprintf(stderr, "gensweep %s: --timeout: '%s' is not a positive number of seconds\n",
                    cmd, argv[*i]);
            return -1;
        }
        o->timeout_s = v;
    } else if (!strcmp(a, "--mem-limit")) {
        if (!need(argc, argv, i) || !parse_bytes(cmd, a, argv[*i], &o->mem_limit)) return -1;
    } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
        o->quiet = 1;
    } else if (!strcmp(a, "--no-tuning")) {
        o->no_tuning = 1;
    } else if (!strcmp(a, "--out") || !strcmp(a, "-o")) {
        if (!need(argc, argv, i)) return -1;
        o->out_dir = argv[*i];
    } else {
        return 0;
    }
    return 1;
}

void gs_help_sweep(void)
{
    printf("usage: gensweep sweep [--configs DIR|FILE...] [--kernels LIST]\n"
           "                      [--suite check|perf|all|model] [--workloads FILE,...]\n"
           "                      [-j N] [--shard I/N] [--out DIR] [--baseline FILE|DIR]...\n"
           "                      [--threshold 2%%] [--set KEY=VALUE]... [--timeout SECONDS]\n"
           "                      [--mem-limit SIZE] [--quiet] [--trace-dir DIR] [--no-tuning]\n"
           "                      [--no-report] [--timelines | --no-timelines]\n"
           "                      [--calibration CASES.yaml|CALIBRATION.json]\n\n"
           "Run every selected kernel on every generation, each job in its own process, and write\n"
           "results.json (results/RESULTS.md), results.csv, junit.xml and report.html to DIR.\n"
           "  --configs      config files, directories of *.yaml, or bare names (gen3:\n"
           "                 ./configs/gen3.yaml, else the installed one); default: ./configs if\n"
           "                 it exists, else the configs installed with gensweep\n"
           "  --kernels      comma-separated kernel names (default: all; see list kernels)\n"
           "  --suite        check: check shapes, functional + timing (default);\n"
           "                 perf: perf shapes, timing only; all: both; model: the model-level\n"
           "                 workloads (workloads/*.yaml: one layer each) on every config,\n"
           "                 timing only, their layer results in DIR/workloads.json\n"
           "  --workloads L  with --suite model: these comma-separated workload files instead\n"
           "  -j N           jobs at once (default: number of CPUs)\n"
           "  --shard I/N    run the I-th of N deterministic slices of the jobs (see merge)\n"
           "  --out DIR      output directory, locked while the sweep runs "
           "(default: " GS_SWEEP_DEFAULT_OUT ")\n"
           "  --baseline F   compare with a results.json, a baseline file or a directory of them;\n"
           "                 regressions (time +threshold, worse status, larger error) exit 1\n"
           "  --set K=V      override a config value for every generation (x1.5 / 1.5x relative)\n"
           "  --timeout S    kill a job after S seconds (default %.0f)\n"
           "  --mem-limit N  address-space limit per job, e.g. 2GiB; 0 = none (default 4GiB)\n"
           "  --trace-dir D  also write each job's Perfetto trace into D\n"
           "  --no-tuning    ignore configs/tuning/<gen>.json (tuned default params)\n"
           "  --timelines    aggregated timelines for every job (default: check jobs only)\n"
           "  --calibration F  add a model-vs-measured section to the report: a case file\n"
           "                 (calibration/cases.yaml: run on the sweep's configs, results in\n"
           "                 DIR/calibration.json) or a gensweep calibrate --json result\n"
           "exit status: 0 all passed (or cleanly unsupported / does-not-fit); 1 a job failed,\n"
           "crashed, timed out or deadlocked, a regression, or interrupted; 2 usage error\n",
           GS_SWEEP_DEFAULT_TIMEOUT);
}

int gs_cmd_sweep(int argc, char **argv)
{
    gs_worker_set_server(gs_run_serve); /* jobs start as forks serving a request (worker.h) */
    gs_sweep_opts o;
    const char *calibration = NULL, *workloads = NULL;
    gs_sweep_opts_default(&o);
    const char *cfgs[MAX_LIST], *sets[MAX_LIST], *bases[MAX_LIST];
    size_t n_cfg = 0, n_sets = 0, n_bases = 0;
    for (int i = 1; i < argc; i++) {
        /* the model suite is the sweep's own (whatif and baseline run kernel suites) */
        if (!strcmp(argv[i], "--suite") && i + 1 < argc && !strcmp(argv[i + 1], "model")) {
            o.suite = GS_SWEEP_MODEL;
            i++;
            continue;
        }
        int r = gs_sweep_parse_common(argc, argv, &i, &o, cfgs, &n_cfg, sets, &n_sets);
        if (r < 0) return GS_EXIT_USAGE;
        if (r > 0) continue;
        const char *a = argv[i];
        if (!strcmp(a, "--workloads")) {
            if (!need(argc, argv, &i)) return GS_EXIT_USAGE;
            if (strspn(argv[i], ", ") == strlen(argv[i])) {
                fprintf(stderr, "gensweep sweep: --workloads: empty list\n");
                return GS_EXIT_USAGE;
            }
            workloads = argv[i];
        } else if (!strcmp(a, "--shard")) {
            if (!need(argc, argv, &i)) return GS_EXIT_USAGE;
            const char *slash = strchr(argv[i], '/');
            int64_t si = 0, sn = 0;
            gs_error err;
            gs_error_clear(&err);
            char first[32] = "";
            if (slash && (size_t)(slash - argv[i]) < sizeof first)
                memcpy(first, argv[i], (size_t)(slash - argv[i]));
            if (!slash || gs_parse_int(first, 1, 1000000, &si, &err) != 0 ||
                gs_parse_int(slash + 1, 1, 1000000, &sn, &err) != 0 || si > sn) {
                fprintf(stderr,
                        "gensweep sweep: --shard: '%s' is not I/N with 1 <= I <= N <= 1000000\n",
                        argv[i]);
                return GS_EXIT_USAGE;
            }
            o.shard_index = (int)si;
            o.shard_count = (int)sn;
        } else if (!strcmp(a, "--baseline")) {
            if (!need(argc, argv, &i)) return GS_EXIT_USAGE;
            if (n_bases < MAX_LIST) bases[n_bases++] = argv[i];
        } else if (!strcmp(a, "--threshold")) {
            if (!need(argc, argv, &i)) return GS_EXIT_USAGE;
            if (gs_compare_parse_threshold(argv[i], &o.threshold) != 0) {
                fprintf(stderr, "gensweep sweep: --threshold: '%s' is not e.g. 2%% or 0.02\n",
                        argv[i]);
                return GS_EXIT_USAGE;
            }
        } else if (!strcmp(a, "--trace-dir")) {
            if (!need(argc, argv, &i)) return GS_EXIT_USAGE;
            o.trace_dir = argv[i];
        } else if (!strcmp(a, "--no-report")) {
            o.no_report = 1;
        } else if (!strcmp(a, "--calibration")) {
            if (!need(argc, argv, &i)) return GS_EXIT_USAGE;
            calibration = argv[i];
        } else if (!strcmp(a, "--timelines")) {
            o.timelines = 1;
        } else if (!strcmp(a, "--no-timelines")) {
            o.timelines = 0;
        } else {
            fprintf(stderr, "gensweep sweep: unknown option '%s' (see gensweep sweep --help)\n", a);
            return GS_EXIT_USAGE;
        }
    }
    o.configs = cfgs;
    o.n_configs = n_cfg;
    o.sets = sets;
    o.n_sets = n_sets;
    o.baselines = bases;
    o.n_baselines = n_bases;
    if (workloads && o.suite != GS_SWEEP_MODEL) {
        fprintf(stderr, "gensweep sweep: --workloads needs --suite model\n");
        return GS_EXIT_USAGE;
    }
    if (o.suite == GS_SWEEP_MODEL && (o.shard_count > 1 || o.kernels)) {
        /* workloads.json needs every step of a layer in one results set; the steps name
         * their kernels */
        fprintf(stderr, "gensweep sweep: --suite model takes no %s\n",
                o.kernels ? "--kernels (the workload files name the kernels)"
                          : "--shard (a layer's steps must run in one sweep)");
        return GS_EXIT_USAGE;
    }
    return gs_sweep_main(&o, calibration, workloads, NULL);
}

void gs_help_merge(void)
{
    printf("usage: gensweep merge --out DIR [--report] SHARD_DIR|results.json...\n\n"
           "Merge the outputs of `sweep --shard I/N` runs into one results set in DIR\n"
           "(results.json, results.csv, junit.xml): equal to the unsharded sweep's apart from\n"
           "\"wall\". Refuses different schema versions, different sweeps and duplicate jobs.\n"
           "When shards are missing or were interrupted the results are written all the same,\n"
           "marked \"complete\": false with what is missing (\"missing\"; \"not_run\": the jobs\n"
           "not run by id and shard, when the sweep's configs can be planned again here or an\n"
           "interrupted shard named them), and junit.xml has a failed test case per job not\n"
           "run.\n"
           "  --report       also write DIR/report.html (incomplete results say so on its\n"
           "                 first screen)\n"
           "exit status: 0 merged and complete, 1 incomplete (shards missing or interrupted)\n"
           "or the report could not be written, 2 usage error or invalid/inconsistent inputs\n");
}

/* The suite of a results document for the planner (0: one that cannot be planned again). */
static gs_sweep_suite merge_suite(const char *s)
{
    return !strcmp(s, "check")  ? GS_SWEEP_CHECK
           : !strcmp(s, "perf") ? GS_SWEEP_PERF
           : !strcmp(s, "all")  ? GS_SWEEP_ALL
                                : (gs_sweep_suite)0;
}

/* The plan of the sweep that made doc, planned again from doc's config files, overrides, suite
 * and the kernels of its jobs, with or without the configs' tuning files: NULL when it cannot
 * be, or when it is not doc's plan (another number of jobs than "planned_jobs", or a job of doc
 * not in it: a config changed since, a kernel whose jobs were all in the missing shards). */
static gs_sweep *merge_replan(const cJSON *doc, int no_tuning, int all_kernels)
{
    const cJSON *x, *cfgs = cJSON_GetObjectItemCaseSensitive(doc, "configs");
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(doc, "jobs");
    const char *paths[MAX_LIST], *sets[MAX_LIST];
    size_t np = 0, ns = 0;
    gs_sweep_opts o;
    gs_sweep_opts_default(&o);
    o.suite = merge_suite(gs_json_str(doc, "suite"));
    const double planned = gs_json_num(doc, "planned_jobs");
    if (!o.suite || isnan(planned)) return NULL;
    cJSON_ArrayForEach(x, cfgs)
    {
        const char *p = gs_json_str(x, "path");
        if (!*p || np == MAX_LIST || access(p, R_OK) != 0) return NULL;
        paths[np++] = p;
    }
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(doc, "overrides"))
    {
        if (!cJSON_IsString(x) || ns == MAX_LIST) return NULL;
        sets[ns++] = x->valuestring;
    }
    /* the kernels of the jobs present, once each */
    gs_sb kern;
    gs_sb_init(&kern);
    cJSON_ArrayForEach(x, jobs)
    {
        const char *k = gs_json_str(x, "kernel");
        size_t n = strlen(k);
        const char *at = gs_sb_cstr(&kern);
        int seen = 0;
        for (const char *q = at; *q && !seen;
             q = strchr(q, ',') ? strchr(q, ',') + 1 : q + strlen(q))
            seen = !strncmp(q, k, n) && (q[n] == ',' || !q[n]);
        if (!seen && n) gs_sb_printf(&kern, "%s%s", kern.len ? "," : "", k);
    }
    if (!np || !kern.len || !gs_sb_ok(&kern)) {
        gs_sb_free(&kern);
        return NULL;
    }
    o.configs = paths;
    o.n_configs = np;
    o.sets = sets;
    o.n_sets = ns;
    o.kernels = all_kernels ? NULL : gs_sb_cstr(&kern);
    o.no_tuning = no_tuning;
    o.no_report = 1;
    gs_diags d;
    gs_diags_init(&d);
    gs_sweep *s = gs_sweep_create(&o, &d);
    int ok = s && gs_sweep_plan(s, &d) == 0 && (double)gs_sweep_job_count(s) == planned;
    gs_diags_free(&d);
    gs_sb_free(&kern); /* the sweep keeps no pointer to it past planning */
    if (ok) {
        gs_json_index *ix = gs_json_index_create(jobs, 0);
        size_t found = 0;
        for (size_t i = 0; ix && i < gs_sweep_job_count(s); i++)
            found += gs_json_index_find(ix, gs_sweep_job_id(s, i)) != NULL;
        ok = ix && found == (size_t)cJSON_GetArraySize(jobs);
        gs_json_index_destroy(ix);
    }
    if (!ok) {
        gs_sweep_free(s);
        return NULL;
    }
    return s;
}

/* Add "not_run" to an incomplete merged document: the planned jobs no shard holds, by id and the
 * shard that was to run them (job k of the id-sorted plan is in shard k mod N + 1), just before
 * "wall"; why: none when the shard is missing (seen[shard] 0), "interrupted" when it was (2),
 * else "no result". The jobs the shards listed themselves (an interrupted shard's "not_run",
 * already in doc) are kept as they are. The plan is made with the kernels of the jobs present,
 * else with every kernel (a kernel whose jobs were all in the missing shards); nothing is added
 * when neither is the file's plan (merge_replan). 0, or -1 out of memory. */
static int merge_not_run(cJSON *doc, int shards, const unsigned char *seen, size_t n_seen)
{
    if (shards < 1) return 0;
    gs_sweep *s = NULL;
    for (int k = 0; k < 4 && !s; k++)
        s = merge_replan(doc, k & 1, k >> 1);
    if (!s) return 0;
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(doc, "jobs");
    cJSON *list = cJSON_DetachItemFromObjectCaseSensitive(doc, "not_run");
    if (!list) list = cJSON_CreateArray();
    gs_json_index *ix = gs_json_index_create(jobs, 0);
    gs_json_index *listed = list ? gs_json_index_create(list, 0) : NULL;
    int rc = ix && list && listed ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < gs_sweep_job_count(s); i++) {
        const char *id = gs_sweep_job_id(s, i);
        if (gs_json_index_find(ix, id) || gs_json_index_find(listed, id)) continue;
        const size_t sh = i % (size_t)shards + 1;
        const int state = seen && sh <= n_seen ? seen[sh] : 0;
        cJSON *e = cJSON_CreateObject();
        if (!e || !cJSON_AddStringToObject(e, "id", id) ||
            !cJSON_AddNumberToObject(e, "shard", (double)sh) ||
            !cJSON_AddNumberToObject(e, "shards", shards) ||
            (state &&
             !cJSON_AddStringToObject(e, "why", state == 2 ? "interrupted" : "no result"))) {
            cJSON_Delete(e);
            rc = -1;
            break;
        }
        cJSON_AddItemToArray(list, e);
    }
    gs_json_index_destroy(ix);
    gs_json_index_destroy(listed);
    gs_sweep_free(s);
    if (list && cJSON_GetArraySize(list) > 0) {
        cJSON *wall = cJSON_DetachItemFromObjectCaseSensitive(doc, "wall");
        cJSON_AddItemToObject(doc, "not_run", list);
        if (wall) cJSON_AddItemToObject(doc, "wall", wall);
    } else {
        cJSON_Delete(list);
    }
    return rc;
}

int gs_cmd_merge(int argc, char **argv)
{
    const char *out = NULL;
    int report = 0;
    size_t n = 0;
    char **paths = gs_calloc(argc > 0 ? (size_t)argc : 1, sizeof *paths);
    int rc = GS_EXIT_USAGE;
    if (!paths) {
        fprintf(stderr, "gensweep merge: out of memory\n");
        return GS_EXIT_FAIL;
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--out") || !strcmp(argv[i], "-o")) {
            if (!need(argc, argv, &i)) goto done;
            out = argv[i];
        } else if (!strcmp(argv[i], "--report")) {
            report = 1;
        } else if (argv[i][0] == '-') {
            gs_sb m;
            gs_sb_init(&m);
            gs_sb_printf(&m, "unknown option '%s' (see gensweep merge --help)", argv[i]);
            print_escaped_error("merge", gs_sb_ok(&m) ? gs_sb_cstr(&m) : "unknown option");
            gs_sb_free(&m);
            goto done;
        } else {
            size_t len = strlen(argv[i]);
            gs_sb p;
            gs_sb_init(&p);
            if (len > 5 && !strcmp(argv[i] + len - 5, ".json"))
                gs_sb_puts(&p, argv[i]);
            else
                gs_sb_printf(&p, "%s/results.json", argv[i]);
            paths[n] = gs_sb_take(&p);
            if (!paths[n]) {
                fprintf(stderr, "gensweep merge: out of memory\n");
                rc = GS_EXIT_FAIL;
                goto done;
            }
            n++;
        }
    }
    if (!out || !n) {
        fprintf(stderr, "gensweep merge: need --out DIR and at least one shard directory\n");
        goto done;
    }
    gs_error err;
    gs_error_clear(&err);
    char *why = NULL;
    unsigned char *seen = NULL;
    size_t n_seen = 0;
    cJSON *doc = gs_results_merge_ex((const char *const *)paths, n, &why, &seen, &n_seen, &err);
    /* an incomplete merge names the jobs not run, when the plan can be made again here */
    if (doc && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "complete"))) {
        if (merge_not_run(doc, (int)n_seen, seen, n_seen) != 0) {
            fprintf(stderr, "gensweep merge: out of memory\n");
            rc = GS_EXIT_FAIL;
            gs_free(why);
            gs_free(seen);
            cJSON_Delete(doc);
            goto done;
        }
    }
    gs_free(seen);
    /* every input is read and checked before anything is written */
    gs_status st = doc ? gs_results_write_dir(doc, out, &err) : err.code;
    if (st != GS_OK) {
        char buf[2048];
        gs_error_format(&err, buf, sizeof buf);
        print_escaped_error("merge", buf);
        /* bad inputs or an unusable --out are usage errors; a failed write is a failure */
        rc = !doc || st == GS_ERR_USAGE ? GS_EXIT_USAGE : GS_EXIT_FAIL;
    } else {
        int complete = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "complete"));
        printf("merged %zu result sets (%d jobs%s) -> %s/results.json\n", n,
               cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "jobs")),
               complete ? "" : ", \"complete\": false", out);
        if (!complete) {
            fprintf(stderr, "gensweep merge: incomplete: %s\n",
                    why ? why : "shards missing or interrupted");
            /* the jobs not run by id (from the configs: escaped for the terminal) */
            const cJSON *nr = cJSON_GetObjectItemCaseSensitive(doc, "not_run"), *x;
            int k = 0, total = cJSON_GetArraySize(nr);
            cJSON_ArrayForEach(x, nr)
            {
                if (k == 10) {
                    fprintf(stderr, "  ... %d more (\"not_run\" in results.json)\n", total - k);
                    break;
                }
                gs_sb line;
                gs_sb_init(&line);
                gs_sb_term(&line, gs_json_str(x, "id"));
                gs_sb_printf(&line, " (shard %.0f/%.0f", gs_json_num(x, "shard"),
                             gs_json_num(x, "shards"));
                if (*gs_json_str(x, "why")) {
                    gs_sb_puts(&line, ": ");
                    gs_sb_term(&line, gs_json_str(x, "why"));
                }
                fprintf(stderr, "  not run: %s)\n", gs_sb_ok(&line) ? gs_sb_cstr(&line) : "?");
                gs_sb_free(&line);
                k++;
            }
        }
        rc = complete ? GS_EXIT_OK : GS_EXIT_FAIL;
        if (report) {
            /* the report of what was merged, complete or not: an incomplete one says so first */
            gs_sb rp, in;
            gs_sb_init(&rp);
            gs_sb_init(&in);
            gs_sb_printf(&rp, "%s/report.html", out);
            gs_sb_printf(&in, "%s/results.json", out);
            gs_error rerr;
            gs_error_clear(&rerr);
            if (!gs_sb_ok(&rp) || !gs_sb_ok(&in)) {
                fprintf(stderr, "gensweep merge: out of memory\n");
                rc = GS_EXIT_FAIL;
            } else if (gs_report_write(gs_sb_cstr(&in), NULL, gs_sb_cstr(&rp), &rerr) != GS_OK) {
                char buf[2048];
                gs_error_format(&rerr, buf, sizeof buf);
                print_escaped_error("merge: report", buf);
                rc = GS_EXIT_FAIL;
            } else {
                printf("report: %s\n", gs_sb_cstr(&rp));
            }
            gs_sb_free(&rp);
            gs_sb_free(&in);
        }
    }
    gs_free(why);
    cJSON_Delete(doc);
done:
    for (size_t i = 0; i < n; i++)
        gs_free(paths[i]);
    gs_free(paths);
    return rc;
}

void gs_help_compare(void)
{
    printf("usage: gensweep compare BASE NEW [--threshold 2%%] [--quiet]\n\n"
           "Compare two results.json files (BASE may also be a baseline file or a directory of\n"
           "them, e.g. tests/baselines). A job regressed when its simulated time grew by more\n"
           "than the threshold, its status got worse, or its max abs error grew by more than\n"
           "10%% of its tolerance; improvements and new jobs are listed too. Exit 1 when\n"
           "anything regressed, when NEW did not run everything (interrupted, marked\n"
           "incomplete, planned jobs absent, a generation of its configs without a job), or\n"
           "when something cannot be compared (a time or check record on one side only, a\n"
           "generation of NEW with no job in BASE).\n\n"
           "usage: gensweep compare --across BASE_GEN OTHER_GEN [results.json...]\n"
           "                        [--mode timing|functional] [--quiet]\n\n"
           "Which generation is faster on what: match the jobs of two generations by\n"
           "kernel/variant/dtype/shape (in one results file or several; default\n"
           "%s) and print each job's speedup (time on BASE_GEN / time\n"
           "on OTHER_GEN), the geometric mean per kernel class and overall. --mode timing\n"
           "keeps the perf (timing-only) jobs. Exit 2 when a generation is missing or nothing\n"
           "matches.\n",
           GS_ACROSS_DEFAULT_RESULTS);
}

int gs_cmd_compare(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--across")) return gs_across_main(argc, argv);
    const char *pos[2];
    int n = 0, quiet = 0;
    double thr = 0.02;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threshold")) {
            if (!need(argc, argv, &i)) return GS_EXIT_USAGE;
            if (gs_compare_parse_threshold(argv[i], &thr) != 0) {
                fprintf(stderr, "gensweep compare: --threshold: '%s' is not e.g. 2%% or 0.02\n",
                        argv[i]);
                return GS_EXIT_USAGE;
            }
        } else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) {
            quiet = 1;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "gensweep compare: unknown option '%s'\n", argv[i]);
            return GS_EXIT_USAGE;
        } else if (n < 2) {
            pos[n++] = argv[i];
        } else {
            fprintf(stderr, "gensweep compare: expected exactly two files\n");
            return GS_EXIT_USAGE;
        }
    }
    if (n != 2) {
        fprintf(stderr, "usage: gensweep compare BASE NEW [--threshold 2%%]\n");
        return GS_EXIT_USAGE;
    }
    gs_error err;
    gs_error_clear(&err);
    cJSON *a = gs_compare_load(pos[0], &err);
    cJSON *b = a ? gs_compare_load(pos[1], &err) : NULL;
    if (!a || !b) {
        char buf[2048];
        gs_error_format(&err, buf, sizeof buf);
        print_escaped_error("compare", buf);
        cJSON_Delete(a);
        return GS_EXIT_USAGE;
    }
    gs_compare_summary s;
    /* what the new file did not run is said even with --quiet: it fails the gate */
    gs_compare_docs(a, b, thr, quiet ? NULL : stdout, &s);
    if (quiet && s.incomplete) {
        char *gaps = gs_compare_gaps(b);
        gs_sb msg;
        gs_sb_init(&msg);
        gs_sb_printf(&msg, "%s: did not run everything: %s", pos[1], gaps ? gaps : "?");
        print_escaped_error("compare", gs_sb_cstr(&msg));
        gs_sb_free(&msg);
        gs_free(gaps);
    }
    if (quiet && (s.uncompared || s.no_baseline))
        fprintf(stderr,
                "gensweep compare: %s: %d jobs cannot be compared, %d generations have no "
                "baseline (run without --quiet for which)\n",
                pos[1], s.uncompared, s.no_baseline);
    gs_sb line;
    gs_sb_init(&line);
    gs_compare_summary_line(&line, &s);
    printf("%s (threshold %.3g%%)\n", gs_sb_cstr(&line), thr * 100);
    gs_sb_free(&line);
    cJSON_Delete(a);
    cJSON_Delete(b);
    return gs_compare_failed(&s) ? GS_EXIT_FAIL : GS_EXIT_OK;
}

void gs_help_baseline(void)
{
    printf("usage: gensweep baseline update [--out DIR] [--from results.json] [--configs ...]\n"
           "                                [--kernels LIST] [-j N]\n\n"
           "Rewrite the committed check-suite baselines DIR/check-<generation>.json (default DIR\n"
           "tests/baselines): id, status, simulated time and max abs error of every job. Runs\n"
           "the check sweep (into build/sweep-baseline) unless --from gives its results. With\n"
           "--kernels, only those kernels' jobs are replaced (in place); the other kernels' jobs\n"
           "in each file stay as they are. Do it deliberately, when a model or kernel change is\n"
           "meant to move the results. Refuses incomplete results, a what-if (--set) sweep's,\n"
           "and writes nothing when its own sweep could not write its results.json.\n");
}

int gs_cmd_baseline(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "update") != 0) {
        fprintf(stderr, "usage: gensweep baseline update [--out DIR] [--from results.json]\n");
        return GS_EXIT_USAGE;
    }
    gs_sweep_opts o;
    gs_sweep_opts_default(&o);
    o.out_dir = "build/sweep-baseline";
    o.no_report = 1;
    const char *cfgs[MAX_LIST], *sets[MAX_LIST];
    size_t n_cfg = 0, n_sets = 0;
    const char *dir = "tests/baselines", *from = NULL;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--out")) {
            if (!need(argc, argv, &i)) return GS_EXIT_USAGE;
            dir = argv[i];
            continue;
        }
        if (!strcmp(argv[i], "--from")) {
            if (!need(argc, argv, &i)) return GS_EXIT_USAGE;
            from = argv[i];
            continue;
        }
        int r = gs_sweep_parse_common(argc, argv, &i, &o, cfgs, &n_cfg, sets, &n_sets);
        if (r < 0) return GS_EXIT_USAGE;
        if (r == 0 || n_sets) {
            fprintf(stderr, "gensweep baseline: unsupported option '%s'\n", argv[i]);
            return GS_EXIT_USAGE;
        }
    }
    o.configs = cfgs;
    o.n_configs = n_cfg;
    char path[4096];
    gs_error err;
    gs_error_clear(&err);
    cJSON *doc = NULL;
    if (!from) {
        o.suite = GS_SWEEP_CHECK;
        /* the sweep's own document, and only when it wrote results.json: a results.json an
         * earlier run left in the directory is never read */
        int rc = gs_sweep_main(&o, NULL, NULL, &doc);
        if (rc == GS_EXIT_USAGE) {
            cJSON_Delete(doc);
            return rc;
        }
        snprintf(path, sizeof path, "%s/results.json", o.out_dir);
        from = path;
        if (!doc) {
            fprintf(stderr,
                    "gensweep baseline: the check sweep did not write %s (the reason is above): "
                    "no baseline written\n",
                    path);
            return GS_EXIT_FAIL;
        }
        if (rc != GS_EXIT_OK)
            fprintf(stderr, "gensweep baseline: note: some jobs failed; their status is recorded "
                            "in the baseline as it is\n");
        if (gs_results_validate(doc, from, &err) != GS_OK) {
            cJSON_Delete(doc);
            doc = NULL;
        }
    } else {
        doc = gs_results_load(from, &err);
    }
    /* a what-if (`sweep --set`) measured other hardware than the configs: its times are not
     * the committed generations' */
    const cJSON *ov = cJSON_GetObjectItemCaseSensitive(doc, "overrides");
    if (doc && cJSON_GetArraySize(ov) > 0) {
        gs_sb msg;
        gs_sb_init(&msg);
        gs_sb_printf(&msg, "%s is a what-if sweep (--set", from);
        const cJSON *x;
        cJSON_ArrayForEach(x, ov)
            gs_sb_printf(&msg, " %.200s", cJSON_IsString(x) ? x->valuestring : "");
        gs_sb_puts(&msg, "), not the configs as committed: no baseline written");
        print_escaped_error("baseline", gs_sb_cstr(&msg));
        gs_sb_free(&msg);
        cJSON_Delete(doc);
        return GS_EXIT_USAGE;
    }
    /* an interrupted sweep or one shard holds only some jobs: its baselines would silently
     * drop the rest, so nothing is written */
    if (doc && cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(doc, "complete"))) {
        fprintf(stderr,
                "gensweep baseline: %s is incomplete (interrupted, a shard, or jobs missing): "
                "no baseline written\n",
                from);
        cJSON_Delete(doc);
        return GS_EXIT_FAIL;
    }
    gs_status st = doc ? gs_baseline_write(doc, o.kernels, dir, stdout, &err) : err.code;
    if (st != GS_OK) {
        char buf[2048];
        gs_error_format(&err, buf, sizeof buf);
        print_escaped_error("baseline", buf);
        cJSON_Delete(doc);
        /* a valid input whose baseline could not be written (disk full) is a failure */
        return doc && st == GS_ERR_IO ? GS_EXIT_FAIL : GS_EXIT_USAGE;
    }
    cJSON_Delete(doc);
    return GS_EXIT_OK;
}

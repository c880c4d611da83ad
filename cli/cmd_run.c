/*
 * cmd_run.c - `gensweep disasm` and `gensweep run`: one kernel on one generation. Parses the
 * options, calls the job pipeline (jobrun.h, jobspec.h), prints, maps the exit status; and the
 * job server (gs_run_serve) that runs a sweep's forked job from its request, the same way.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "gs/config.h"
#include "gs/strbuf.h"
#include "jobrun.h"
#include "jobspec.h"
#include "sweep.h" /* run has the sweep jobs' default memory limit and --set count */
#include "worker.h"

typedef struct job_opts {
    const char *config; /* --config as found (gs_cli_data_file: a path or a generation name) */
    char config_buf[GS_CLI_PATH_MAX];
    gs_job_options job; /* --kernel, --variant, --dtype, --shape, --param, --seed */
    const char *trace;
    const char *record;  /* --record FILE: the job record (RESULTS.md) for the sweep */
    const char *outputs; /* --outputs DIR: the output tensors as float64 files */
    int timeline;        /* --timeline: aggregated timeline in the record */
    const char *sets[GS_SWEEP_MAX_LIST];
    int n_sets;
    int timing_only;
    int c_executor;
    int json;
    int lines; /* --lines [N]: how many source lines; 0: not asked for */
    double sim_limit_ns;
    double wall_limit_s;
    double mem_limit; /* bytes of address space; 0: leave the inherited limit */
} job_opts;

static int need_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "gensweep %s: option %s needs a value\n", argv[0], argv[*i]);
        return 0;
    }
    (*i)++;
    return 1;
}

static int parse_double(const char *cmd, const char *opt, const char *s, double *out)
{
    gs_error err;
    gs_error_clear(&err);
    if (gs_parse_real(s, 0.0, 1e300, out, &err) != 0) {
        fprintf(stderr, "gensweep %s: %s: %s\n", cmd, opt, err.message);
        return 0;
    }
    return 1;
}

/* The address-space limit (as sweep jobs have). Returns 0 when it could not be set. */
static int apply_mem_limit(const char *cmd, double bytes)
{
    gs_error err;
    gs_error_clear(&err);
    gs_status st = gs_job_limit_memory(bytes, &err);
    if (st != GS_OK)
        fprintf(stderr, "gensweep %s: --mem-limit%s%s\n", cmd, st == GS_ERR_IO ? ": " : " ",
                err.message);
    return st != GS_ERR_IO;
}

/* Returns 1 on success, 0 after printing a usage error. */
static int parse_job_opts(int argc, char **argv, job_opts *o, int allow_run_opts)
{
    memset(o, 0, sizeof *o);
    gs_job_options_init(&o->job);
    gs_sweep_opts sweep; /* the memory limit sweep jobs have by default (none under ASan) */
    gs_sweep_opts_default(&sweep);
    o->mem_limit = sweep.mem_limit;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        gs_error err;
        gs_error_clear(&err);
        int took = gs_job_options_take(&o->job, argc, argv, &i, &err);
        if (took < 0) {
            fprintf(stderr, "gensweep %s: %s\n", argv[0], err.message);
            return 0;
        }
        if (took) continue;
        if (!strcmp(a, "--config") || !strcmp(a, "-c")) {
            if (!need_value(argc, argv, &i)) return 0;
            o->config = argv[i];
        } else if (!strcmp(a, "--set")) {
            if (!need_value(argc, argv, &i)) return 0;
            if (o->n_sets >= GS_SWEEP_MAX_LIST) {
                fprintf(stderr, "gensweep %s: too many --set options\n", argv[0]);
                return 0;
            }
            o->sets[o->n_sets++] = argv[i];
        } else if (!strcmp(a, "--mem-limit")) {
            if (!need_value(argc, argv, &i)) return 0;
            gs_error_clear(&err);
            if (gs_parse_size(argv[i], &o->mem_limit, &err) != 0) {
                fprintf(stderr, "gensweep %s: --mem-limit: %s\n", argv[0], err.message);
                return 0;
            }
        } else if (allow_run_opts && !strcmp(a, "--trace")) {
            if (!need_value(argc, argv, &i)) return 0;
            o->trace = argv[i];
        } else if (allow_run_opts && !strcmp(a, "--record")) {
            if (!need_value(argc, argv, &i)) return 0;
            o->record = argv[i];
        } else if (allow_run_opts && !strcmp(a, "--outputs")) {
            if (!need_value(argc, argv, &i)) return 0;
            o->outputs = argv[i];
        } else if (allow_run_opts && !strcmp(a, "--timeline")) {
            o->timeline = 1;
        } else if (allow_run_opts && !strcmp(a, "--timing-only")) {
            o->timing_only = 1;
        } else if (allow_run_opts && !strcmp(a, "--executor")) {
            if (!need_value(argc, argv, &i)) return 0;
            if (!strcmp(argv[i], "c"))
                o->c_executor = 1;
            else if (strcmp(argv[i], "model") != 0) {
                fprintf(stderr, "gensweep %s: --executor must be 'model' or 'c'\n", argv[0]);
                return 0;
            }
        } else if (allow_run_opts && !strcmp(a, "--json")) {
            o->json = 1;
        } else if (allow_run_opts && !strcmp(a, "--lines")) {
            o->lines = GS_CLI_LINES_DEFAULT; /* the count is optional */
            if (gs_cli_lines_has_count(argc, argv, i) &&
                !gs_cli_parse_lines(argv[0], argv[++i], &o->lines))
                return 0;
        } else if (allow_run_opts && !strcmp(a, "--sim-limit-ns")) {
            if (!need_value(argc, argv, &i) || !parse_double(argv[0], a, argv[i], &o->sim_limit_ns))
                return 0;
        } else if (allow_run_opts && !strcmp(a, "--wall-limit")) {
            if (!need_value(argc, argv, &i) || !parse_double(argv[0], a, argv[i], &o->wall_limit_s))
                return 0;
        } else {
            fprintf(stderr, "gensweep %s: unknown option '%s' (see gensweep %s --help)\n", argv[0],
                    a, argv[0]);
            return 0;
        }
    }
    if (!o->config || !o->job.kernel) {
        fprintf(stderr,
                "gensweep %s: --config and --kernel are required (see gensweep %s --help)\n",
                argv[0], argv[0]);
        return 0;
    }
    o->config =
        gs_cli_data_file(argv[0], "--config", "configs", "config", o->config, o->config_buf);
    return o->config != NULL;
}

/* Load config, apply --set, resolve the job options into spec. Returns an exit status
 * (GS_EXIT_OK to continue). */
static int make_spec(const char *cmd, const job_opts *o, gs_config **cfg_out, gs_job_spec *spec)
{
    gs_diags d;
    gs_diags_init(&d);
    gs_config *cfg = gs_config_load_with(o->config, o->sets, (size_t)o->n_sets, &d);
    if (!cfg) {
        gs_cli_print_diags_escaped(&d);
        gs_diags_free(&d);
        return GS_EXIT_USAGE;
    }
    gs_diags_free(&d);
    *cfg_out = cfg;
    gs_error err;
    gs_error_clear(&err);
    if (gs_job_spec_from_options(&o->job, cfg, spec, &err) != GS_OK) {
        fprintf(stderr, "gensweep %s: %s\n", cmd, err.message);
        return GS_EXIT_USAGE;
    }
    return GS_EXIT_OK;
}

/* Terminal-escaped: a kernel's error may quote text from a file (an NKI program's paths and
 * messages, a reference's traceback). */
static void print_error(const char *cmd, const gs_error *err)
{
    char buf[2048];
    gs_error_format(err, buf, sizeof buf);
    gs_sb sb;
    gs_sb_init(&sb);
    gs_sb_term(&sb, buf);
    fprintf(stderr, "gensweep %s: %s\n", cmd, gs_sb_cstr(&sb));
    gs_sb_free(&sb);
}

void gs_help_disasm(void)
{
    printf("usage: gensweep disasm --config FILE --kernel NAME [--shape AxBx..] [--variant V]\n"
           "                       [--dtype T] [--param NAME=VALUE]... [--set KEY=VALUE]...\n\n"
           "Build the kernel's program for the generation and print it, one instruction a line:\n"
           "index, core, engine (dma.qN for DMA queues), opcode, operands, immediates,\n"
           "dependencies and the kernel source line. The shape defaults to the kernel's first\n"
           "check shape. --config takes a file or a generation name, as in run.\n");
}

int gs_cmd_disasm(int argc, char **argv)
{
    job_opts o;
    if (!parse_job_opts(argc, argv, &o, 0)) return GS_EXIT_USAGE;
    if (!apply_mem_limit(argv[0], o.mem_limit)) return GS_EXIT_FAIL;
    gs_config *cfg = NULL;
    gs_job_spec spec;
    int rc = make_spec(argv[0], &o, &cfg, &spec);
    if (rc != GS_EXIT_OK) {
        gs_config_free(cfg);
        return rc;
    }
    gs_job *job = NULL;
    gs_error err;
    gs_error_clear(&err);
    gs_status st = gs_job_build(&spec, &job, &err);
    if (job) gs_program_disasm(gs_job_program(job), stdout);
    if (st != GS_OK) {
        print_error(argv[0], &err);
        rc = st == GS_ERR_INVALID                               ? GS_EXIT_USAGE
             : gs_job_status_is_failure(gs_job_status_from(st)) ? GS_EXIT_FAIL
                                                                : GS_EXIT_OK;
    }
    gs_job_free(job);
    gs_config_free(cfg);
    return rc;
}

void gs_help_run(void)
{
    printf("usage: gensweep run --config FILE --kernel NAME [--shape AxBx..] [--variant V]\n"
           "                    [--dtype T] [--param NAME=VALUE]... [--set KEY=VALUE]...\n"
           "                    [--timing-only] [--trace FILE] [--executor model|c] [--json]\n"
           "                    [--lines [N]]\n"
           "                    [--seed N] [--sim-limit-ns NS] [--wall-limit SECONDS]\n"
           "                    [--mem-limit SIZE] [--record FILE [--timeline]] [--outputs DIR]\n\n"
           "Run one kernel on one generation's SystemC model and print simulated time, per-engine\n"
           "utilisation, the bottleneck, the roofline and the correctness check.\n"
           "  --config FILE   a config file, or a generation name (gen3: ./configs/gen3.yaml,\n"
           "                  else the configs installed with gensweep)\n"
           "  --timing-only   skip data movement and arithmetic (same timing, no check)\n"
           "  --trace FILE    write a Chrome/Perfetto trace-event JSON of the run\n"
           "  --executor c    run the pure-C functional executor instead (no timing)\n"
           "  --json          print the full job record (results/RESULTS.md) as one JSON object\n"
           "                  (\"error\": null when nothing was checked, e.g. --timing-only)\n"
           "  --record FILE   write the job record (results/RESULTS.md, one \"jobs\" element)\n"
           "  --timeline      add the aggregated per-engine timeline to the record\n"
           "  --lines [N]     print the N (default 10) costliest kernel source lines: per line\n"
           "                  the busy time per engine, DMA time and bytes, instructions, the\n"
           "                  stall it caused and what it waited for (a dependency's line, the\n"
           "                  reuse of a pool's buffer, DMA queue order); cost = busy + DMA\n"
           "                  time + stall caused. --json always has them (\"lines\")\n"
           "  --outputs DIR   write each output tensor as DIR/NAME.f64 (float64, row-major)\n"
           "  --mem-limit N   address-space limit, e.g. 2GiB; 0 = none (default 4GiB, as\n"
           "                  sweep jobs; a limit already in force is never raised)\n"
           "  --seed N        input data seed, 0 .. 2^64-1 (default 1)\n"
           "exit status: 0 pass, unsupported or does-not-fit; 1 wrong results, deadlock or\n"
           "timeout; 2 usage or config error\n");
}

/* Write the --record file (built by gs_job_record). */
static gs_status write_record(gs_sb *sb, const char *path)
{
    gs_error werr;
    gs_error_clear(&werr);
    gs_status ws = gs_sb_ok(sb) ? gs_sb_write_file(sb, path, &werr)
                                : gs_error_set(&werr, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    if (ws != GS_OK) print_error("run --record", &werr);
    return ws;
}

/* The job once its spec is made: the output paths checked, the pipeline, the record (--record,
 * --json) or the text, the exit status. */
static int run_job(const char *cmd, const gs_job_spec *spec, const gs_job_run_opts *ro,
                   const char *record, const char *trace, int json)
{
    gs_error err;
    gs_error_clear(&err);
    /* output paths are checked before the run: a bad one is a usage error, whichever it is.
     * With a record (a sweep job, exec'd or served) the trace is a by-product: one that cannot
     * be written is the record's trace_error, the job's status and numbers stay (exit 1). */
    const char *outs[2] = {record, record ? NULL : trace};
    for (int i = 0; i < 2; i++)
        if (outs[i] && gs_sb_check_output(outs[i], &err) != GS_OK) {
            print_error(i ? "run --trace" : "run --record", &err);
            return GS_EXIT_USAGE;
        }
    gs_job_result r;
    if (gs_job_run(spec, ro, &r) != GS_OK) {
        print_error(cmd, &r.err);
        gs_job_result_free(&r);
        return GS_EXIT_USAGE;
    }
    /* the job record (RESULTS.md): the --record file and the --json output are the same */
    gs_sb rec;
    gs_sb_init(&rec);
    gs_status bs = GS_OK;
    if (json || record) {
        gs_error warn;
        gs_error_clear(&warn);
        bs = gs_job_record(&rec, spec, ro, &r, &warn);
        if (warn.code != GS_OK) print_error("run", &warn);
    }
    if (json) {
        if (bs == GS_OK)
            fputs(gs_sb_cstr(&rec), stdout);
        else
            fprintf(stderr, "gensweep run: %s building the record\n", gs_status_str(bs));
    } else {
        gs_sb text;
        gs_sb_init(&text);
        gs_job_text(&text, spec, ro, &r);
        fputs(gs_sb_cstr(&text), stdout);
        gs_sb_free(&text);
    }
    if (r.st != GS_OK) print_error(cmd, &r.err);
    int rc = gs_job_status_is_failure(r.status) ? GS_EXIT_FAIL : GS_EXIT_OK;
    /* a trace not written (disk full) is an output missing, not a different job status */
    if (ro->trace && r.trace_err.code != GS_OK) {
        print_error("run --trace", &r.trace_err);
        if (rc == GS_EXIT_OK) rc = GS_EXIT_FAIL;
    }
    if (r.bad_input) {
        /* a traced NKI program (nki.NAME: suite names have no '.') takes no such arguments:
         * its error is the kernel's own, at its line, printed above */
        if (strncmp(spec->kernel->name, "nki.", 4) != 0)
            fprintf(stderr,
                    "gensweep %s: kernel %s refused the arguments (--shape/--param/--dtype)\n", cmd,
                    spec->kernel->name);
        rc = GS_EXIT_USAGE;
    }
    if (record) {
        /* the path was checked; a write that fails now (disk full) is a failure */
        gs_status ws = bs == GS_OK ? write_record(&rec, record) : bs;
        if (ws != GS_OK) rc = ws == GS_ERR_USAGE ? GS_EXIT_USAGE : GS_EXIT_FAIL;
    }
    if (bs != GS_OK && rc == GS_EXIT_OK) rc = GS_EXIT_FAIL;
    gs_sb_free(&rec);
    gs_job_result_free(&r);
    return rc;
}

int gs_cmd_run(int argc, char **argv)
{
    job_opts o;
    if (!parse_job_opts(argc, argv, &o, 1)) return GS_EXIT_USAGE;
    if (!apply_mem_limit(argv[0], o.mem_limit)) return GS_EXIT_FAIL;
    gs_config *cfg = NULL;
    gs_job_spec spec;
    int rc = make_spec(argv[0], &o, &cfg, &spec);
    if (rc == GS_EXIT_OK) {
        /* the record --json prints always has the costliest lines */
        gs_job_run_opts ro = {
            !o.timing_only, o.c_executor,
            o.sim_limit_ns, o.wall_limit_s,
            o.trace,        o.timeline,
            o.outputs,      o.lines ? o.lines : o.json ? GS_CLI_LINES_DEFAULT : 0};
        rc = run_job(argv[0], &spec, &ro, o.record, o.trace, o.json);
    }
    gs_config_free(cfg);
    return rc;
}

int gs_run_serve(const gs_job_request *rq)
{
    if (!apply_mem_limit("run", rq->mem_limit)) return GS_EXIT_FAIL;
    /* a sweep job's trace path is not checked first: one that cannot be written is a warning
     * in the record (trace_error), the job's status and numbers stay */
    return run_job("run", rq->spec, &rq->run, rq->record, NULL, 0);
}

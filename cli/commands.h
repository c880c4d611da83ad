/* commands.h - gensweep subcommands. Each takes the arguments after its name (argv[0] is the
 * subcommand name) and returns the process exit status: 0 ok, 1 failures found, 2 usage or
 * input error. */
#ifndef GS_COMMANDS_H
#define GS_COMMANDS_H

#include <stddef.h>

enum { GS_EXIT_OK = 0, GS_EXIT_FAIL = 1, GS_EXIT_USAGE = 2 };

/* The whole command line (argv[1] the command): gensweep's main, and that of test binaries that
 * carry the real commands. Returns the exit status. */
int gs_main(int argc, char **argv);
typedef struct gs_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
    void (*help)(void); /* prints the subcommand's help to stdout */
} gs_command;

/* cmd_config.c */
int gs_cmd_validate(int argc, char **argv);
void gs_help_validate(void);
int gs_cmd_show_config(int argc, char **argv);
void gs_help_show_config(void);
/* `list gens [DIR]` (cmd_config.c) and `list kernels` */
int gs_cmd_list(int argc, char **argv);
void gs_help_list(void);

/* cmd_kernels.c: `list kernels [--names | --check-shapes K]` (argv[0] = "kernels") */
int gs_list_kernels(int argc, char **argv);

/* cmd_report.c */
int gs_cmd_report(int argc, char **argv);
void gs_help_report(void);

/* cmd_calibrate.c */
int gs_cmd_calibrate(int argc, char **argv);
void gs_help_calibrate(void);

/* cmd_nki.c: `nki run|disasm|replay` (an NKI kernel through the Python front end) */
int gs_cmd_nki(int argc, char **argv);
void gs_help_nki(void);

/* cmd_run.c */
int gs_cmd_disasm(int argc, char **argv);
void gs_help_disasm(void);
int gs_cmd_run(int argc, char **argv);
void gs_help_run(void);
/* The job server every command that runs sweeps registers (worker.h): a forked job from its
 * request, as `run --record` would run it (the job's diagnostics on its stderr). */
struct gs_job_request;
int gs_run_serve(const struct gs_job_request *rq);

/* cmd_sweep.c: the generation sweep, merging shards, comparing results, baselines */
int gs_cmd_sweep(int argc, char **argv);
void gs_help_sweep(void);
int gs_cmd_merge(int argc, char **argv);
void gs_help_merge(void);
int gs_cmd_compare(int argc, char **argv);
void gs_help_compare(void);
int gs_cmd_baseline(int argc, char **argv);
void gs_help_baseline(void);
/* The sweep session (session.c; the library, sweep.h, prints nothing): a whole sweep with its
 * progress, summary, baseline comparison and report (with the calibration results of
 * `calibration`, a case file run on the sweep's configs or a calibrate --json file, or NULL;
 * for `--suite model` the workload files of `workloads`, comma-separated, or NULL for
 * every workloads/ YAML file), returning the exit status (with `written` not NULL, *written is
 * the results document when DIR/results.json was written by this sweep, the caller's to free,
 * else NULL: a caller never reads a results file another run left there); the progress
 * printer (a gs_sweep_progress_fn; set it in the options of sweeps run directly); the library's
 * diagnostics printed the sweep's way. */
struct gs_sweep_opts;
struct gs_sweep_progress;
struct gs_diags;
struct cJSON;
int gs_sweep_main(const struct gs_sweep_opts *o, const char *calibration, const char *workloads,
                  struct cJSON **written);
void gs_sweep_cli_progress(void *ctx, const struct gs_sweep_progress *p);
void gs_sweep_print_diags(const struct gs_diags *d);
struct gs_sweep_opts;
/* cmd_sweep.c: parse one option shared by sweep, baseline and whatif (--configs,
 * --kernels, --suite, -j, --set, --timeout, --mem-limit, --quiet, --no-tuning, --out) at
 * argv[*i]. Returns 1 when consumed, 0 when not one of them, -1 after printing a usage error.
 * cfgs/sets are arrays of at least GS_SWEEP_MAX_LIST entries. */
int gs_sweep_parse_common(int argc, char **argv, int *i, struct gs_sweep_opts *o, const char **cfgs,
                          size_t *n_cfg, const char **sets, size_t *n_sets);

/* cmd_whatif.c */
int gs_cmd_whatif(int argc, char **argv);
void gs_help_whatif(void);
/* cmd_tune.c */
int gs_cmd_tune(int argc, char **argv);
void gs_help_tune(void);

/* cmd_workload.c: a model layer as kernel invocations */
int gs_cmd_workload(int argc, char **argv);
void gs_help_workload(void);

/* attribute.c: which parameter changes explain a speedup between two configs */
int gs_cmd_attribute(int argc, char **argv);
void gs_help_attribute(void);

/* cmd_bench.c */
int gs_cmd_bench(int argc, char **argv);
void gs_help_bench(void);

/* cmd_history.c: the performance history database (history add|show|export|gate) */
int gs_cmd_history(int argc, char **argv);
void gs_help_history(void);

#endif

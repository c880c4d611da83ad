/* commands.c - the command table and gs_main, which dispatches to the subcommands
 * (commands.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "version.h"
#include "worker.h"

static const gs_command commands[] = {
    {"validate", "check generation configs (exit 1 if any is invalid)", gs_cmd_validate,
     gs_help_validate},
    {"list", "list generations (list gens [DIR]) or kernels (list kernels)", gs_cmd_list,
     gs_help_list},
    {"show-config", "print a config fully resolved, with the provenance of every value",
     gs_cmd_show_config, gs_help_show_config},
    {"run", "run one kernel on one generation's model: time, utilisation, bottleneck, check",
     gs_cmd_run, gs_help_run},
    {"nki", "run an NKI kernel file (nki.language / nki.isa) on a generation's model", gs_cmd_nki,
     gs_help_nki},
    {"disasm", "print a kernel's program for a generation, one instruction a line", gs_cmd_disasm,
     gs_help_disasm},
    {"sweep", "run every kernel on every generation (job per process): results, CSV, JUnit",
     gs_cmd_sweep, gs_help_sweep},
    {"merge", "merge sharded sweep outputs into one results set", gs_cmd_merge, gs_help_merge},
    {"compare", "regressions between two results files; --across: speedups between generations",
     gs_cmd_compare, gs_help_compare},
    {"baseline", "baseline update: rewrite the committed check-suite baselines", gs_cmd_baseline,
     gs_help_baseline},
    {"whatif", "sweep one config parameter over values: sensitivity of every kernel's time",
     gs_cmd_whatif, gs_help_whatif},
    {"tune", "search a kernel's tunable params on one generation", gs_cmd_tune, gs_help_tune},
    {"calibrate", "model vs cited measurements (calibration cases); fit assumed parameters",
     gs_cmd_calibrate, gs_help_calibrate},
    {"attribute", "which parameter changes explain the speedup from one config to another",
     gs_cmd_attribute, gs_help_attribute},
    {"workload", "a model layer (workloads/*.yaml) as kernel invocations on one generation",
     gs_cmd_workload, gs_help_workload},
    {"bench", "measure the simulator itself (speed, memory, sweep, trace) against its targets",
     gs_cmd_bench, gs_help_bench},
    {"report", "write the self-contained HTML report from a results file", gs_cmd_report,
     gs_help_report},
    {"history", "performance history across commits (SQLite): add, show, export, gate",
     gs_cmd_history, gs_help_history},
};

static void usage(FILE *out)
{
    fprintf(out,
            "gensweep %s - multi-generation NeuronCore-class accelerator model and kernel "
            "portability harness\n\n"
            "usage: gensweep <command> [options]\n"
            "       gensweep <command> --help\n"
            "       gensweep --version\n\ncommands:\n",
            gs_version());
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nexit status: 0 ok, 1 failures found (invalid config, failed job, "
                 "regression), 2 usage or input error\n");
}

int gs_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return GS_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    /* OpenBLAS single-threaded (the executor uses one thread); sweep jobs start as forks of
     * this process serving the sweep's request (worker.h) */
    gs_worker_blas_single_thread();
    gs_worker_set_server(gs_run_serve);
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        if (argc > 2 && strcmp(cmd, "help") == 0) {
            for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
                if (!strcmp(commands[i].name, argv[2])) {
                    commands[i].help();
                    return GS_EXIT_OK;
                }
        }
        usage(stdout);
        return GS_EXIT_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        printf("gensweep %s (commit %s)\n", gs_version(), gs_commit());
        return GS_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(commands[i].name, cmd) != 0) continue;
        for (int a = 2; a < argc; a++) {
            if (!strcmp(argv[a], "--")) break;
            if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
                commands[i].help();
                return GS_EXIT_OK;
            }
        }
        return commands[i].run(argc - 1, argv + 1);
    }
    fprintf(stderr, "gensweep: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return GS_EXIT_USAGE;
}

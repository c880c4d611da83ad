/*
 * cmd_report.c - `gensweep report RESULTS.json [-o report.html] [--baseline BASE.json]
 * [--base-gen NAME]`: the HTML report from results files alone (reports/report.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "gs/strbuf.h"
#include "report.h"

void gs_help_report(void)
{
    printf("usage: gensweep report RESULTS.json [-o report.html] [--baseline BASE.json]\n"
           "                       [--base-gen NAME] [--threshold PCT]\n"
           "                       [--whatif WHATIF.json]... [--tuning TUNING.json]...\n"
           "                       [--attribute ATTRIBUTE.json]... [--calibration CALIB.json]\n"
           "                       [--workloads WORKLOADS.json]\n\n"
           "Write the self-contained HTML performance report for a results file (no model runs):\n"
           "first the verdict per generation pair (geomean speedup, what bounds each kernel\n"
           "class, what changed and, with --attribute, how much each change explains), the\n"
           "speedup heatmap, per-kernel rooflines and, with --workloads, the model layers;\n"
           "then summary, generations side by side, portability, engine time, timelines,\n"
           "correctness, baseline comparison, variants, what-if and tuning.\n"
           "  -o FILE           output path (default: report.html next to RESULTS.json)\n"
           "  --baseline FILE   compare with an earlier results file (regressions/improvements)\n"
           "  --base-gen NAME   generation the speedups are relative to (default: each\n"
           "                    generation against the previous one that ran the same job)\n"
           "  --threshold PCT   time change that counts as a regression (default 2)\n"
           "  --whatif FILE     add a gensweep whatif result (sensitivity curves)\n"
           "  --tuning FILE     add a tuning file (configs/tuning/GEN.json: tuning gains)\n"
           "  --attribute FILE  add a gensweep attribute result (attribute.json)\n"
           "  --calibration FILE  add gensweep calibrate --json results (model vs measured)\n"
           "  --workloads FILE  add a model sweep's workloads.json (sweep --suite model): layer\n"
           "                    time, speedup and dominant steps per generation pair\n"
           "exit status: 0 written, 2 usage error or unreadable/invalid results file\n");
}

int gs_cmd_report(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *base = NULL;
    gs_report_opts opts = {NULL, 0, NULL, NULL, 0};
    const char *extra[GS_REPORT_MAX_EXTRA];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (!strcmp(a, "-o") || !strcmp(a, "--out") || !strcmp(a, "--baseline") ||
            !strcmp(a, "--base-gen") || !strcmp(a, "--threshold") || !strcmp(a, "--whatif") ||
            !strcmp(a, "--tuning") || !strcmp(a, "--attribute") || !strcmp(a, "--calibration") ||
            !strcmp(a, "--workloads")) {
            if (!has_value) {
                fprintf(stderr, "gensweep report: option %s needs a value\n", a);
                return GS_EXIT_USAGE;
            }
            const char *v = argv[++i];
            if (!strcmp(a, "--baseline")) {
                base = v;
            } else if (!strcmp(a, "--whatif") || !strcmp(a, "--tuning") ||
                       !strcmp(a, "--attribute") || !strcmp(a, "--calibration") ||
                       !strcmp(a, "--workloads")) {
                if (opts.n_extra == GS_REPORT_MAX_EXTRA) {
                    fprintf(
                        stderr,
                        "gensweep report: at most %d --whatif/--tuning/--attribute/--calibration/"
                        "--workloads files\n",
                        GS_REPORT_MAX_EXTRA);
                    return GS_EXIT_USAGE;
                }
                extra[opts.n_extra++] = v;
                opts.extra_paths = extra;
            } else if (!strcmp(a, "--base-gen")) {
                opts.base_gen = v;
            } else if (!strcmp(a, "--threshold")) {
                /* a percentage, "2" or "2%": the strict parser refuses trailing junk, hex, inf,
                 * nan and out-of-range values */
                size_t n = strlen(v);
                char num[64];
                gs_error perr;
                gs_error_clear(&perr);
                double t = 0;
                int ok = n > 0 && n < sizeof num;
                if (ok) {
                    memcpy(num, v, n + 1);
                    if (num[n - 1] == '%') num[n - 1] = '\0';
                    ok = gs_parse_real(num, 0.0, 1e12, &t, &perr) == 0 && t > 0;
                }
                if (!ok) {
                    fprintf(stderr,
                            "gensweep report: --threshold: '%s' is not a positive "
                            "percentage (0 < PCT <= 1e12)\n",
                            v);
                    return GS_EXIT_USAGE;
                }
                opts.regress_pct = t;
            } else {
                out = v;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "gensweep report: unknown option '%s' (see gensweep report --help)\n",
                    a);
            return GS_EXIT_USAGE;
        } else if (!in) {
            in = a;
        } else {
            fprintf(stderr, "gensweep report: one results file only ('%s' is extra)\n", a);
            return GS_EXIT_USAGE;
        }
    }
    if (!in) {
        fprintf(stderr, "gensweep report: missing RESULTS.json (see gensweep report --help)\n");
        return GS_EXIT_USAGE;
    }
    char def[4096];
    if (!out) {
        /* report.html beside the results file, where the sweep leaves its other outputs */
        const char *slash = strrchr(in, '/');
        int dir = slash ? (int)(slash - in) : 0;
        int n = slash ? snprintf(def, sizeof def, "%.*s/report.html", dir, in)
                      : snprintf(def, sizeof def, "report.html");
        if (n < 0 || (size_t)n >= sizeof def) {
            fprintf(stderr, "gensweep report: path too long: %s\n", in);
            return GS_EXIT_USAGE;
        }
        out = def;
    }
    gs_error err;
    gs_error_clear(&err);
    if (gs_report_write_opts(in, base, out, &opts, &err) != GS_OK) {
        char msg[GS_ERROR_MSG_MAX + GS_ERROR_FILE_MAX + 64];
        gs_error_format(&err, msg, sizeof msg);
        /* the message may quote ids from the file: control characters escaped */
        gs_sb esc;
        gs_sb_init(&esc);
        gs_sb_term(&esc, msg);
        fprintf(stderr, "gensweep report: %s\n", gs_sb_ok(&esc) ? gs_sb_cstr(&esc) : msg);
        gs_sb_free(&esc);
        /* the inputs were fine but the report could not be written (disk full): a failure */
        return err.code == GS_ERR_IO && !strcmp(err.file, out) ? GS_EXIT_FAIL : GS_EXIT_USAGE;
    }
    printf("report: %s\n", out);
    return GS_EXIT_OK;
}

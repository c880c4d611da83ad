/* cmd_calibrate.c - `gensweep calibrate`: model vs measured over a case file, and fitting
 * [assumed] parameters to the measurements (harness/explore/calibrate.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibrate.h"
#include "cli_util.h"
#include "commands.h"
#include "gs/strbuf.h"
#include "results.h"

void gs_help_calibrate(void)
{
    printf("usage: gensweep calibrate CASES.yaml [--configs DIR|FILE]... [--fit KEY,...]\n"
           "                          [--json FILE] [--check] [-j N] [--set KEY=VALUE]...\n"
           "                          [--timeout S]\n\n"
           "Run every case of CASES.yaml (calibration/README.md) on its generation's config and\n"
           "print the model's time against the cited measurement, their ratio, and the\n"
           "geometric-mean error factor exp(mean |ln(model / measured)|) (1.00 = exact), for\n"
           "the fit cases and the validation cases apart (each case's role:), with the worst\n"
           "case of each. CASES.yaml may be a name: cases is ./calibration/cases.yaml, else the\n"
           "case file installed with gensweep.\n"
           "An nki: case runs a published NKI kernel file from a local copy of its repository,\n"
           "whose root an environment variable names (e.g. GS_NKI_SAMPLES), as `gensweep nki\n"
           "run` does; with the variable unset or the file absent the case is skipped and said.\n"
           "  --fit KEYS   fit these config keys per generation (only values tagged [assumed]\n"
           "               or [fit] are fitted; sourced ones are left alone) to the fit cases\n"
           "               of that generation (never the validation cases), and print the\n"
           "               fitted values as config lines tagged\n"
           "               [fit: CASES, N cases, geomean error before -> after]\n"
           "  --check      fail (exit 1) when the validation geomean error is above the case\n"
           "               file's targets: validate_geomean_error (or there is no timed\n"
           "               validation case)\n"
           "  --json FILE  write the results (cases, errors, fit) as JSON; `gensweep sweep\n"
           "               --calibration FILE` puts them in the report\n"
           "exit status: 0 ok, 1 a case did not run, a structural expectation (engines:)\n"
           "failed or --check failed, 2 usage or input error (bad case file:\n"
           "file:line:col: key: message)\n");
}

static void progress(const char *line, void *ctx)
{
    (void)ctx;
    fprintf(stderr, "gensweep calibrate: %s\n", line);
}

int gs_cmd_calibrate(int argc, char **argv)
{
    gs_sweep_opts o;
    gs_sweep_opts_default(&o);
    o.progress = gs_sweep_cli_progress; /* quiet below: failed case jobs only */
    o.no_report = 1;
    const char *cfgs[GS_SWEEP_MAX_LIST], *sets[GS_SWEEP_MAX_LIST];
    size_t n_cfg = 0, n_sets = 0;
    const char *cases_path = NULL, *fit_arg = NULL, *json_out = NULL;
    int check = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            gs_help_calibrate();
            return GS_EXIT_OK;
        }
        if (!strcmp(a, "--check")) {
            check = 1;
            continue;
        }
        if (!strcmp(a, "--fit") || !strcmp(a, "--json")) {
            if (i + 1 >= argc || !argv[i + 1][0]) {
                fprintf(stderr, "gensweep calibrate: %s needs a value\n", a);
                return GS_EXIT_USAGE;
            }
            *(!strcmp(a, "--fit") ? &fit_arg : &json_out) = argv[++i];
            continue;
        }
        if (!strcmp(a, "--kernels") || !strcmp(a, "--suite") || !strcmp(a, "--out")) {
            fprintf(stderr,
                    "gensweep calibrate: %s does not apply (the case file names the jobs)\n", a);
            return GS_EXIT_USAGE;
        }
        int r = gs_sweep_parse_common(argc, argv, &i, &o, cfgs, &n_cfg, sets, &n_sets);
        if (r < 0) return GS_EXIT_USAGE;
        if (r > 0) continue;
        if (a[0] == '-') {
            fprintf(stderr,
                    "gensweep calibrate: unknown option '%s' (see gensweep calibrate --help)\n", a);
            return GS_EXIT_USAGE;
        }
        if (cases_path) {
            fprintf(stderr, "gensweep calibrate: one case file, got '%s' and '%s'\n", cases_path,
                    a);
            return GS_EXIT_USAGE;
        }
        cases_path = a;
    }
    if (!cases_path) {
        fprintf(stderr,
                "gensweep calibrate: missing the case file (see gensweep calibrate --help)\n");
        return GS_EXIT_USAGE;
    }
    char cases_buf[GS_CLI_PATH_MAX];
    if (!(cases_path = gs_cli_data_file("calibrate", NULL, "calibration", "case file", cases_path,
                                        cases_buf)))
        return GS_EXIT_USAGE;
    o.configs = cfgs;
    o.n_configs = n_cfg;
    o.sets = sets;
    o.n_sets = n_sets;
    o.quiet = 1;

    /* --fit keys: known numeric keys only, checked before anything runs */
    char fit_buf[1024];
    const char *keys[16];
    size_t n_keys = 0;
    if (fit_arg) {
        if (strlen(fit_arg) >= sizeof fit_buf) {
            fprintf(stderr, "gensweep calibrate: --fit: list too long\n");
            return GS_EXIT_USAGE;
        }
        snprintf(fit_buf, sizeof fit_buf, "%s", fit_arg);
        size_t nf = 0;
        const gs_config_field *fields = gs_config_fields(&nf);
        char *save = NULL;
        for (char *t = strtok_r(fit_buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            int known = 0;
            for (size_t f = 0; f < nf; f++)
                known |= !strcmp(fields[f].path, t);
            if (!known) {
                fprintf(stderr,
                        "gensweep calibrate: --fit: '%s' is not a numeric config key (see "
                        "configs/SCHEMA.md)\n",
                        t);
                return GS_EXIT_USAGE;
            }
            if (n_keys >= 16) {
                fprintf(stderr, "gensweep calibrate: --fit: at most 16 keys\n");
                return GS_EXIT_USAGE;
            }
            keys[n_keys++] = t;
        }
        if (!n_keys) {
            fprintf(stderr, "gensweep calibrate: --fit: no keys given\n");
            return GS_EXIT_USAGE;
        }
    }

    gs_diags d;
    gs_diags_init(&d);
    gs_calib *c = gs_calib_load(cases_path, &o, &d);
    if (!c) {
        gs_diags_sort(&d);
        for (size_t i = 0; i < d.count; i++) {
            const gs_error *e = &d.items[i];
            /* messages quote names and values from the case file */
            gs_sb msg;
            gs_sb_init(&msg);
            gs_sb_term(&msg, e->message);
            if (!e->file[0]) /* the sweep's own (sweep.h): after the command it ran under */
                fprintf(stderr, "gensweep sweep: %s\n", gs_sb_cstr(&msg));
            else if (e->line > 0)
                fprintf(stderr, "%s:%d:%d: %s\n", e->file, e->line, e->column, gs_sb_cstr(&msg));
            else
                fprintf(stderr, "%s: %s\n", e->file, gs_sb_cstr(&msg));
            gs_sb_free(&msg);
        }
        gs_diags_free(&d);
        return GS_EXIT_USAGE;
    }
    gs_diags_free(&d);
    if (check && !gs_calib_has_target(c)) {
        fprintf(stderr,
                "gensweep calibrate: --check: %s has no targets: validate_geomean_error to "
                "check against\n",
                cases_path);
        gs_calib_free(c);
        return GS_EXIT_USAGE;
    }

    gs_calib_fit_opts fo = {keys, n_keys, 0, progress, NULL};
    gs_error err;
    gs_error_clear(&err);
    cJSON *doc = gs_calib_run(c, n_keys ? &fo : NULL, &err);
    gs_calib_free(c);
    if (!doc) {
        /* the message may quote a case name or an NKI case's child output: escaped */
        gs_sb msg;
        gs_sb_init(&msg);
        gs_sb_term(&msg, err.message);
        if (err.line > 0)
            fprintf(stderr, "gensweep calibrate: %s:%d: %s\n", err.file, err.line,
                    gs_sb_cstr(&msg));
        else
            fprintf(stderr, "gensweep calibrate: %s\n", gs_sb_cstr(&msg));
        gs_sb_free(&msg);
        return GS_EXIT_FAIL;
    }

    printf("%-28s %-6s %-8s %-34s %-18s %12s %12s %7s  %s\n", "case", "gen", "role", "job",
           "measure", "measured ns", "model ns", "ratio", "source");
    const cJSON *k;
    int structure_failed = 0;
    cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(doc, "cases"))
    {
        char job[128];
        gs_sb sh;
        gs_sb_init(&sh);
        const cJSON *d0;
        int first = 1;
        cJSON_ArrayForEach(d0, cJSON_GetObjectItemCaseSensitive(k, "shape"))
        {
            gs_sb_printf(&sh, "%s%.0f", first ? "" : "x", d0->valuedouble);
            first = 0;
        }
        if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(k, "nki")))
            snprintf(job, sizeof job, "%s", gs_json_str(k, "kernel"));
        else
            snprintf(job, sizeof job, "%s/%s %s", gs_json_str(k, "kernel"),
                     gs_json_str(k, "variant"), gs_sb_cstr(&sh));
        gs_sb_free(&sh);
        const double m = gs_json_num(k, "measured_ns"), mod = gs_json_num(k, "model_ns");
        /* names and sources come from the case file: control characters escaped */
        gs_sb name, gen, src;
        gs_sb_init(&name);
        gs_sb_init(&gen);
        gs_sb_init(&src);
        gs_sb_term(&name, gs_json_str(k, "name"));
        gs_sb_term(&gen, gs_json_str(k, "generation"));
        gs_sb_term(&src, gs_json_str(k, "source"));
        gs_sb jobt;
        gs_sb_init(&jobt);
        gs_sb_term(&jobt, job);
        printf("%-28s %-6s %-8s %-34s %-18s ", gs_sb_cstr(&name), gs_sb_cstr(&gen),
               gs_json_str(k, "role"), gs_sb_cstr(&jobt), gs_json_str(k, "measure"));
        gs_sb_free(&jobt);
        const char *skipped = gs_json_str(k, "skipped");
        if (skipped[0]) {
            gs_sb why;
            gs_sb_init(&why);
            gs_sb_term(&why, skipped);
            if (isnan(m))
                printf("%12s", "-");
            else
                printf("%12.1f", m);
            printf(" %12s %7s  %s (%s)\n", "-", "-", gs_sb_cstr(&src), gs_sb_cstr(&why));
            gs_sb_free(&why);
        } else if (isnan(m))
            printf("%12s %12.1f %7s", "-", mod, "-");
        else
            printf("%12.1f %12.1f %7.3f", m, mod, gs_json_num(k, "ratio"));
        if (!skipped[0]) printf("  %s\n", gs_sb_cstr(&src));
        gs_sb_free(&name);
        gs_sb_free(&gen);
        gs_sb_free(&src);
        const cJSON *em = cJSON_GetObjectItemCaseSensitive(k, "engines_match");
        if (em) {
            printf("%-28s expects %.0f DMA engine(s): the model used %.0f (%s)\n", "",
                   gs_json_num(k, "expected_engines"), gs_json_num(k, "model_engines"),
                   cJSON_IsTrue(em) ? "ok" : "MISMATCH");
            if (!cJSON_IsTrue(em)) structure_failed = 1;
        }
    }
    const double before = gs_json_num(doc, "geomean_error_before");
    const double after = gs_json_num(doc, "geomean_error");
    if (isnan(after))
        printf("geomean error factor: - (no timed case: nothing measured in time to compare)\n");
    else if (n_keys)
        printf("geomean error factor: %.3f before the fit, %.3f after\n", before, after);
    else
        printf("geomean error factor: %.3f\n", after);
    const double n_skipped = gs_json_num(doc, "skipped_cases");
    if (n_skipped > 0)
        printf("skipped    %3.0f case(s): their kernel files are not here (an nki: case's mirror "
               "variable unset or its file absent); the errors below are over the cases that "
               "ran\n",
               n_skipped);
    int check_failed = 0;
    for (int role = 0; role < 2; role++) {
        const char *rn = role ? "validate" : "fit";
        char key[64];
        snprintf(key, sizeof key, "geomean_error_%s", rn);
        const double g = gs_json_num(doc, key);
        snprintf(key, sizeof key, "%s_cases", rn);
        const double n = gs_json_num(doc, key);
        snprintf(key, sizeof key, "worst_%s", rn);
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(doc, key);
        printf("%-10s %3.0f timed case(s): ", role ? "validation" : "fit", n);
        if (isnan(g) || !cJSON_IsObject(w)) {
            printf("geomean error factor -\n");
            continue;
        }
        gs_sb wn;
        gs_sb_init(&wn);
        gs_sb_term(&wn, gs_json_str(w, "name"));
        printf("geomean error factor %.3f, worst %s (model / measured %.3f)\n", g, gs_sb_cstr(&wn),
               gs_json_num(w, "ratio"));
        gs_sb_free(&wn);
    }
    const cJSON *tok = cJSON_GetObjectItemCaseSensitive(doc, "target_ok");
    if (tok) {
        printf("validation target (%s:%.0f): geomean error factor <= %.3f: %s\n", cases_path,
               gs_json_num(doc, "target_line"), gs_json_num(doc, "target_validate_geomean_error"),
               cJSON_IsTrue(tok) ? "met" : "NOT MET");
        check_failed = check && !cJSON_IsTrue(tok);
    }
    const char *yaml = gs_json_str(doc, "yaml");
    if (yaml[0]) printf("\nfitted values (paste into the configs):\n%s", yaml);
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(doc, "fit"))
    {
        if (cJSON_GetObjectItemCaseSensitive(f, "skipped"))
            printf("not fitted: %s %s (%s)\n", gs_json_str(f, "generation"), gs_json_str(f, "key"),
                   gs_json_str(f, "skipped"));
        else if (cJSON_GetObjectItemCaseSensitive(f, "at_bound"))
            printf("at a bound: %s %s = %.6g %s (%s): the cases want it further; check them\n",
                   gs_json_str(f, "generation"), gs_json_str(f, "key"), gs_json_num(f, "after"),
                   gs_json_str(f, "unit"), gs_json_str(f, "at_bound"));
    }
    if (check_failed)
        fprintf(stderr,
                "gensweep calibrate: --check: the validation geomean error factor %.3f is above "
                "the committed target %.3f (%s:%.0f)\n",
                gs_json_num(doc, "geomean_error_validate"),
                gs_json_num(doc, "target_validate_geomean_error"), cases_path,
                gs_json_num(doc, "target_line"));
    int rc = structure_failed || check_failed ? GS_EXIT_FAIL : GS_EXIT_OK;
    if (json_out) {
        char *text = cJSON_Print(doc);
        FILE *out = text ? fopen(json_out, "w") : NULL;
        int ok = out && fputs(text, out) >= 0 && fputc('\n', out) != EOF;
        if (out && fclose(out) != 0) ok = 0;
        if (!ok) {
            fprintf(stderr, "gensweep calibrate: cannot write %s\n", json_out);
            rc = GS_EXIT_USAGE;
        } else {
            printf("wrote %s\n", json_out);
        }
        cJSON_free(text);
    }
    cJSON_Delete(doc);
    return rc;
}

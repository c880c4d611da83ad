/*
 * attribute.c - `gensweep attribute` (see attribute.h). Every run is an ordinary sweep through
 * gs_sweep_main (the job runner of `sweep` and `whatif`), with the changes as --set overrides.
 */
#include "attribute.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "gs/config.h"
#include "gs/jsonw.h"
#include "record.h"
#include "results.h"
#include "speedup.h"
#include "sweep.h"

typedef struct change {
    const char *key;
    gs_unit unit;
    double from, to;
    char assign[320]; /* "key=<to><unit>" for --set */
    int alone_ok;     /* the change alone gives a valid config (some only hold together) */
    char why[256];    /* the config error when not */
} change;

/* One sweep's passing times by job key. */
typedef struct run {
    char label[96];
    cJSON *doc;
} run;

static void print_diags(gs_diags *d)
{
    char buf[2048];
    for (size_t i = 0; i < d->count; i++) {
        gs_error_format(&d->items[i], buf, sizeof buf);
        fprintf(stderr, "%s\n", buf);
    }
}

static gs_config *load(const char *path)
{
    gs_diags d;
    gs_diags_init(&d);
    gs_config *c = gs_config_load(path, &d);
    if (!c) print_diags(&d);
    gs_diags_free(&d);
    return c;
}

/* Suffix that makes an absolute --set value mean base units. */
static const char *unit_suffix(gs_unit u)
{
    switch (u) {
    case GS_UNIT_BYTES:
        return "B";
    case GS_UNIT_BANDWIDTH:
        return "B/ns";
    case GS_UNIT_FREQ:
        return "Hz";
    case GS_UNIT_TIME:
        return "ns";
    default:
        return "";
    }
}

/* Passing time of the job with this key in doc (NAN when absent or not passed). */
static double time_of(const cJSON *doc, const char *key)
{
    const cJSON *j;
    char k[160];
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(doc, "jobs"))
    {
        gs_speedup_key(j, k, sizeof k);
        if (strcmp(k, key) != 0) continue;
        double t = gs_json_num(j, "time_ns");
        return !strcmp(gs_json_str(j, "status"), "pass") && t > 0 ? t : (double)NAN;
    }
    return NAN;
}

static int run_sweep(const gs_sweep_opts *base, const char *cfg, const char *const *sets,
                     size_t n_sets, const char *out, const char *label, run *r)
{
    snprintf(r->label, sizeof r->label, "%s", label);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", out, label);
    gs_sweep_opts o = *base;
    const char *cl[1] = {cfg};
    o.configs = cl;
    o.n_configs = 1;
    o.sets = sets;
    o.n_sets = n_sets;
    o.out_dir = dir;
    o.quiet = 1;
    o.no_report = 1;
    o.timelines = 0;
    int rc = gs_sweep_main(&o);
    if (rc == GS_EXIT_USAGE) return rc;
    char p[4200];
    snprintf(p, sizeof p, "%s/results.json", dir);
    gs_error err;
    gs_error_clear(&err);
    r->doc = gs_results_load(p, &err);
    if (!r->doc) {
        char buf[2048];
        gs_error_format(&err, buf, sizeof buf);
        fprintf(stderr, "gensweep attribute: %s\n", buf);
        return GS_EXIT_FAIL;
    }
    return rc;
}

void gs_help_attribute(void)
{
    printf("usage: gensweep attribute --from A.yaml --to B.yaml [--suite perf|check|all]\n"
           "                          [--kernels LIST] [-j N] [--out DIR] [--timeout S]\n\n"
           "Why is B faster (or slower) than A? Lists the numeric parameters that differ, runs\n"
           "the suite timing-only on A, on A with each change alone, on A with every change,\n"
           "and on B, and reports each kernel's speedup over A and the share of it each\n"
           "parameter explains (log space: ln(speedup alone) / ln(speedup with every change);\n"
           "the rest is the interaction between changes). Tuning files are not used (they\n"
           "differ per generation and would blur the attribution). Writes DIR/attribute.json\n"
           "(default DIR %s), which `gensweep report --attribute` renders.\n"
           "Exit 0 ok, 1 failed jobs, 2 usage (bad configs, nothing differs).\n",
           GS_ATTRIBUTE_DEFAULT_OUT);
}

int gs_cmd_attribute(int argc, char **argv)
{
    gs_sweep_opts o;
    gs_sweep_opts_default(&o);
    o.suite = GS_SWEEP_PERF;
    o.no_tuning = 1;
    const char *cfgs[GS_SWEEP_MAX_LIST], *sets[GS_SWEEP_MAX_LIST];
    size_t n_cfg = 0, n_sets = 0;
    const char *from = NULL, *to = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--from") || !strcmp(argv[i], "--to")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "gensweep attribute: %s needs a config file\n", argv[i]);
                return GS_EXIT_USAGE;
            }
            if (argv[i][2] == 'f')
                from = argv[++i];
            else
                to = argv[++i];
            continue;
        }
        int r = gs_sweep_parse_common(argc, argv, &i, &o, cfgs, &n_cfg, sets, &n_sets);
        if (r < 0) return GS_EXIT_USAGE;
        if (r == 0 || n_cfg || n_sets) {
            fprintf(stderr,
                    "gensweep attribute: unknown option '%s' (see gensweep attribute "
                    "--help)\n",
                    argv[i]);
            return GS_EXIT_USAGE;
        }
    }
    if (!from || !to) {
        fprintf(stderr, "gensweep attribute: --from A.yaml and --to B.yaml are required\n");
        return GS_EXIT_USAGE;
    }
    const char *out = o.out_dir ? o.out_dir : GS_ATTRIBUTE_DEFAULT_OUT;
    gs_config *a = load(from), *b = a ? load(to) : NULL;
    if (!a || !b) {
        gs_config_free(a);
        return GS_EXIT_USAGE;
    }
    size_t nf = 0;
    const gs_config_field *fields = gs_config_fields(&nf);
    change ch[GS_ATTRIBUTE_MAX_PARAMS];
    int nc = 0, one_sided = 0;
    for (size_t i = 0; i < nf; i++) {
        const gs_num *va = gs_config_get(a, fields[i].path), *vb = gs_config_get(b, fields[i].path);
        int ha = va && va->src, hb = vb && vb->src;
        if (!ha && !hb) continue;
        if (ha != hb) {
            /* present on one side only (a dtype rate, an optional engine): a capability, not a
             * value to move; it shows in the gap between "every change" and B */
            printf("  %-44s %s only (not attributed: a capability, not a value)\n", fields[i].path,
                   ha ? a->name : b->name);
            one_sided++;
            continue;
        }
        if (va->v == vb->v) continue;
        if (nc == GS_ATTRIBUTE_MAX_PARAMS) {
            fprintf(stderr, "gensweep attribute: more than %d parameters differ\n",
                    GS_ATTRIBUTE_MAX_PARAMS);
            gs_config_free(a);
            gs_config_free(b);
            return GS_EXIT_USAGE;
        }
        change *c = &ch[nc++];
        c->key = fields[i].path;
        c->unit = fields[i].unit;
        c->from = va->v;
        c->to = vb->v;
        snprintf(c->assign, sizeof c->assign, "%s=%.17g%s", c->key, c->to, unit_suffix(c->unit));
    }
    if (!nc) {
        fprintf(stderr, "gensweep attribute: no numeric parameter differs between %s and %s%s\n",
                from, to, one_sided ? " (only parameters present on one side)" : "");
        gs_config_free(a);
        gs_config_free(b);
        return GS_EXIT_USAGE;
    }
    /* a change that breaks a constraint on its own (PSUM banks vs size, say) cannot run alone:
     * it is reported, left out of the single runs, and its effect stays in the interactions */
    for (int i = 0; i < nc; i++) {
        gs_diags d;
        gs_diags_init(&d);
        gs_config *t = gs_config_load(from, &d);
        ch[i].alone_ok = t && gs_config_set(t, ch[i].assign, &d) == GS_OK;
        ch[i].why[0] = '\0';
        if (!ch[i].alone_ok && d.count)
            gs_error_format(&d.items[d.count - 1], ch[i].why, sizeof ch[i].why);
        gs_config_free(t);
        gs_diags_free(&d);
    }
    printf("%s -> %s: %d numeric parameters differ:\n", a->name, b->name, nc);
    for (int i = 0; i < nc; i++)
        printf("  %-44s %.6g -> %.6g %s%s%s\n", ch[i].key, ch[i].from, ch[i].to,
               gs_record_unit_name(ch[i].unit),
               ch[i].alone_ok ? "" : "  (invalid alone: ", ch[i].alone_ok ? "" : ch[i].why);
    /* runs: 0 = A, 1..nc = one change each, nc+1 = every change, nc+2 = B */
    int nr = nc + 3, rc = GS_EXIT_OK;
    run *runs = gs_calloc((size_t)nr, sizeof *runs);
    const char **all = gs_calloc((size_t)nc, sizeof *all);
    if (!runs || !all) {
        gs_free(runs);
        gs_free(all);
        gs_config_free(a);
        gs_config_free(b);
        return GS_EXIT_FAIL;
    }
    for (int i = 0; i < nc; i++)
        all[i] = ch[i].assign;
    for (int i = 0; i < nr && rc != GS_EXIT_USAGE; i++) {
        char label[96];
        const char *one[1];
        int r;
        if (i == 0) {
            snprintf(label, sizeof label, "from");
            r = run_sweep(&o, from, NULL, 0, out, label, &runs[i]);
        } else if (i <= nc && !ch[i - 1].alone_ok) {
            continue;
        } else if (i <= nc) {
            snprintf(label, sizeof label, "only-%.80s", ch[i - 1].key);
            one[0] = ch[i - 1].assign;
            r = run_sweep(&o, from, one, 1, out, label, &runs[i]);
        } else if (i == nc + 1) {
            snprintf(label, sizeof label, "all");
            r = run_sweep(&o, from, all, (size_t)nc, out, label, &runs[i]);
        } else {
            snprintf(label, sizeof label, "to");
            r = run_sweep(&o, to, NULL, 0, out, label, &runs[i]);
        }
        if (!o.quiet)
            printf("run %d/%d: %s%s\n", i + 1, nr, label, r == GS_EXIT_OK ? "" : " (failures)");
        fflush(stdout);
        if (r == GS_EXIT_USAGE || !runs[i].doc)
            rc = r == GS_EXIT_USAGE ? GS_EXIT_USAGE : GS_EXIT_FAIL;
        else if (r != GS_EXIT_OK)
            rc = GS_EXIT_FAIL;
    }
    if (rc == GS_EXIT_USAGE || !runs[nr - 1].doc) goto done;
    {
        /* per job key of A: times in every run */
        const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(runs[0].doc, "jobs");
        double *lsum = gs_calloc((size_t)nr, sizeof *lsum);
        int njok = 0;
        gs_sb sb;
        gs_sb_init(&sb);
        gs_jw w;
        gs_jw_init(&w, &sb);
        gs_jw_begin_object(&w, GS_JW_LINES);
        gs_jw_kstr(&w, "schema", "gensweep-attribute");
        gs_jw_kint(&w, "schema_version", 1);
        gs_jw_kstr(&w, "from", a->name);
        gs_jw_kstr(&w, "to", b->name);
        gs_jw_kstr(&w, "from_path", gs_record_rel_path(from));
        gs_jw_kstr(&w, "to_path", gs_record_rel_path(to));
        gs_jw_kstr(&w, "suite",
                   o.suite == GS_SWEEP_CHECK ? "check"
                   : o.suite == GS_SWEEP_ALL ? "all"
                                             : "perf");
        gs_jw_key(&w, "jobs");
        gs_jw_begin_array(&w, GS_JW_LINES_CLOSE);
        printf("\n%-52s %9s", "job (speedup over the 'from' config)", "all");
        for (int c = 0; c < nc; c++)
            printf(" %9.9s", strrchr(ch[c].key, '.') + 1);
        printf(" %9s\n", b->name);
        const cJSON *j;
        char key[160];
        cJSON_ArrayForEach(j, jobs)
        {
            gs_speedup_key(j, key, sizeof key);
            double t0 = time_of(runs[0].doc, key);
            double tall = time_of(runs[nc + 1].doc, key), tto = time_of(runs[nc + 2].doc, key);
            int ok = t0 > 0 && tall > 0;
            for (int c = 0; c < nc && ok; c++)
                ok = !ch[c].alone_ok || time_of(runs[c + 1].doc, key) > 0;
            if (!ok) continue; /* not passed in every run: not attributed */
            njok++;
            gs_jw_begin_object(&w, GS_JW_COMPACT);
            gs_jw_kstr(&w, "key", key);
            gs_jw_kstr(&w, "kernel", gs_json_str(j, "kernel"));
            gs_jw_knum(&w, "time_from", t0);
            gs_jw_knum(&w, "speedup_all", t0 / tall);
            gs_jw_knum(&w, "speedup_to", tto > 0 ? t0 / tto : (double)NAN);
            gs_jw_key(&w, "speedup");
            gs_jw_begin_array(&w, GS_JW_COMPACT);
            printf("%-52.52s %8.3fx", key, t0 / tall);
            double lall = log(t0 / tall), shsum = 0;
            lsum[nc + 1] += lall;
            for (int c = 0; c < nc; c++) {
                double s = ch[c].alone_ok ? t0 / time_of(runs[c + 1].doc, key) : (double)NAN;
                if (ch[c].alone_ok) lsum[c + 1] += log(s);
                gs_jw_num(&w, s);
                printf(" %8.3fx", s);
            }
            gs_jw_end_array(&w);
            gs_jw_key(&w, "share");
            gs_jw_begin_array(&w, GS_JW_COMPACT);
            for (int c = 0; c < nc; c++) {
                if (!ch[c].alone_ok) {
                    gs_jw_null(&w);
                    continue;
                }
                double s = t0 / time_of(runs[c + 1].doc, key);
                /* a job the changes leave (nearly) unchanged has no speedup to share out */
                double sh = fabs(lall) > 1e-6 ? log(s) / lall : (double)NAN;
                shsum += sh;
                gs_jw_num(&w, sh);
            }
            gs_jw_end_array(&w);
            gs_jw_knum(&w, "interaction_share", isfinite(shsum) ? 1 - shsum : (double)NAN);
            gs_jw_end_object(&w);
            if (tto > 0)
                printf(" %8.3fx\n", t0 / tto);
            else
                printf(" %9s\n", "-");
        }
        /* B's geomean over the same jobs (those that ran on B) */
        double lto = 0;
        int nto = 0;
        cJSON_ArrayForEach(j, jobs)
        {
            gs_speedup_key(j, key, sizeof key);
            double t0 = time_of(runs[0].doc, key), tto = time_of(runs[nc + 2].doc, key);
            if (t0 > 0 && tto > 0) {
                lto += log(t0 / tto);
                nto++;
            }
        }
        double gall = njok ? exp(lsum[nc + 1] / njok) : (double)NAN;
        double lg_all = njok ? lsum[nc + 1] / njok : (double)NAN;
        gs_jw_end_array(&w);
        gs_jw_key(&w, "all");
        gs_jw_begin_object(&w, GS_JW_SPACED);
        gs_jw_kint(&w, "jobs", njok);
        gs_jw_knum(&w, "geomean", gall);
        gs_jw_end_object(&w);
        gs_jw_key(&w, "to_all");
        gs_jw_begin_object(&w, GS_JW_SPACED);
        gs_jw_kint(&w, "jobs", nto);
        gs_jw_knum(&w, "geomean", nto ? exp(lto / nto) : (double)NAN);
        gs_jw_end_object(&w);
        gs_jw_key(&w, "params");
        gs_jw_begin_array(&w, GS_JW_LINES_CLOSE);
        double shsum = 0;
        int best = -1;
        for (int c = 0; c < nc; c++) {
            double g = njok && ch[c].alone_ok ? exp(lsum[c + 1] / njok) : (double)NAN;
            double sh =
                fabs(lg_all) > 1e-9 && ch[c].alone_ok ? (lsum[c + 1] / njok) / lg_all : (double)NAN;
            if (ch[c].alone_ok) shsum += sh;
            if (ch[c].alone_ok && isfinite(sh) &&
                (best < 0 || sh > (lsum[best + 1] / njok) / lg_all))
                best = c;
            gs_jw_begin_object(&w, GS_JW_COMPACT);
            gs_jw_kstr(&w, "key", ch[c].key);
            gs_jw_kstr(&w, "unit", gs_record_unit_name(ch[c].unit));
            gs_jw_knum(&w, "from", ch[c].from);
            gs_jw_knum(&w, "to", ch[c].to);
            gs_jw_knum(&w, "geomean", g);
            gs_jw_knum(&w, "share", sh);
            if (!ch[c].alone_ok) gs_jw_kstr(&w, "invalid_alone", ch[c].why);
            gs_jw_end_object(&w);
        }
        gs_jw_end_array(&w);
        gs_jw_knum(&w, "interaction_share", isfinite(shsum) ? 1 - shsum : (double)NAN);
        gs_jw_end_object(&w);
        gs_sb_putc(&sb, '\n');
        if (!njok)
            fprintf(stderr, "gensweep attribute: no job passed in every run: nothing to "
                            "attribute\n");
        else
            printf("\n%s vs %s: %.3fx geomean over %d jobs with every numeric change on %s (%s "
                   "itself: %.3fx over %d jobs)\n",
                   b->name, a->name, gall, njok, a->name, b->name,
                   nto ? exp(lto / nto) : (double)NAN, nto);
        for (int c = 0; c < nc && njok; c++) {
            if (!ch[c].alone_ok) {
                printf("  %-44s cannot run alone (counted in the interactions)\n", ch[c].key);
                continue;
            }
            double sh = fabs(lg_all) > 1e-9 ? (lsum[c + 1] / njok) / lg_all : (double)NAN;
            printf("  %-44s %7.3fx alone, explains %5.1f%%%s\n", ch[c].key,
                   njok ? exp(lsum[c + 1] / njok) : (double)NAN, 100 * sh,
                   c == best ? "  <- most" : "");
        }
        if (njok && isfinite(shsum))
            printf("  %-44s explains %5.1f%%%s\n", "interactions (parts do not add up)",
                   100 * (1 - shsum), fabs(1 - shsum) >= 0.05 ? "" : " (negligible)");
        char p[4200];
        snprintf(p, sizeof p, "%s/attribute.json", out);
        gs_error err;
        gs_error_clear(&err);
        if (!njok) {
            rc = GS_EXIT_FAIL;
        } else if (gs_jw_finish(&w, &err) == GS_ERR_INTERNAL ||
                   gs_sb_write_file(&sb, p, &err) != GS_OK) {
            char buf[2048];
            gs_error_format(&err, buf, sizeof buf);
            fprintf(stderr, "gensweep attribute: %s\n", buf);
            rc = GS_EXIT_FAIL;
        } else {
            printf("attribute: %s\n", p);
        }
        gs_sb_free(&sb);
        gs_free(lsum);
    }
done:
    for (int i = 0; i < nr; i++)
        cJSON_Delete(runs[i].doc);
    gs_free(runs);
    gs_free(all);
    gs_config_free(a);
    gs_config_free(b);
    return rc;
}

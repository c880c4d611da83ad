/*
 * attribute.c - which parameter changes explain a speedup between two configs (attribute.h).
 * Every run is an ordinary sweep through the sweep library, with the changes as --set
 * overrides.
 */
#include "attribute.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore_internal.h"
#include "gs/config.h"
#include "gs/jsonw.h"
#include "record.h"
#include "results.h"
#include "speedup.h"

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

/* One run's sweep into out/label; its results document in *doc (NULL when none was written).
 * 0, 1 (failures) or 2 (usage), as gs_explore_run_sweep. */
static int run_sweep(const gs_sweep_opts *base, const char *cfg, const char *const *sets,
                     size_t n_sets, const char *out, const char *label, cJSON **doc, gs_diags *d)
{
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
    *doc = NULL;
    int rc = gs_explore_run_sweep(&o, d);
    if (rc == 2) return rc;
    char p[4200];
    snprintf(p, sizeof p, "%s/results.json", dir);
    gs_error err;
    gs_error_clear(&err);
    *doc = gs_results_load(p, &err);
    if (!*doc) {
        char buf[2048];
        gs_error_format(&err, buf, sizeof buf);
        gs_diags_add(d, err.code, NULL, 0, 0, "%s", buf);
        return 1;
    }
    return rc;
}

/* The differing numeric parameters of a and b into r; GS_ERR_USAGE with d when none or too
 * many differ. */
static gs_status find_changes(const gs_config *a, const gs_config *b, const gs_attribute_opts *o,
                              gs_attribute_result *r, gs_diags *d)
{
    size_t nf = 0;
    const gs_config_field *fields = gs_config_fields(&nf);
    for (size_t i = 0; i < nf; i++) {
        const gs_num *va = gs_config_get(a, fields[i].path), *vb = gs_config_get(b, fields[i].path);
        int ha = va && va->src, hb = vb && vb->src;
        if (!ha && !hb) continue;
        if (ha != hb) {
            /* present on one side only (a dtype rate, an optional engine): a capability, not a
             * value to move; it shows in the gap between "every change" and B */
            if (r->n_one_sided < GS_ATTRIBUTE_MAX_PARAMS) {
                r->one_sided[r->n_one_sided] = fields[i].path;
                r->one_sided_on[r->n_one_sided++] = ha ? r->from_name : r->to_name;
            }
            continue;
        }
        if (va->v == vb->v) continue;
        if (r->n_changes == GS_ATTRIBUTE_MAX_PARAMS) {
            gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0, "more than %d parameters differ",
                         GS_ATTRIBUTE_MAX_PARAMS);
            return GS_ERR_USAGE;
        }
        gs_attribute_change *c = &r->changes[r->n_changes++];
        c->key = fields[i].path;
        c->unit = fields[i].unit;
        c->from = va->v;
        c->to = vb->v;
        snprintf(c->assign, sizeof c->assign, "%s=%.17g%s", c->key, c->to,
                 gs_unit_base_name(c->unit));
    }
    if (!r->n_changes) {
        gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0,
                     "no numeric parameter differs between %s and %s%s", o->from, o->to,
                     r->n_one_sided ? " (only parameters present on one side)" : "");
        return GS_ERR_USAGE;
    }
    /* a change that breaks a constraint on its own (PSUM banks vs size, say) cannot run alone:
     * it is reported, left out of the single runs, and its effect stays in the interactions */
    for (int i = 0; i < r->n_changes; i++) {
        gs_attribute_change *c = &r->changes[i];
        gs_diags cd;
        gs_diags_init(&cd);
        gs_config *t = gs_config_load_with(o->from, (const char *const[]){c->assign}, 1, &cd);
        c->alone_ok = t != NULL;
        c->why[0] = '\0';
        if (!c->alone_ok && cd.count)
            gs_error_format(&cd.items[cd.count - 1], c->why, sizeof c->why);
        gs_config_free(t);
        gs_diags_free(&cd);
    }
    return GS_OK;
}

/* The attribute.json document over the runs (0 = A, 1..nc = one change each, nc+1 = every
 * change, nc+2 = B) through w; r->jobs and r->best set. */
static void emit_doc(gs_jw *w, const gs_attribute_opts *o, gs_attribute_result *r,
                     cJSON *const *runs)
{
    const int nc = r->n_changes;
    const gs_attribute_change *ch = r->changes;
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(runs[0], "jobs");
    double lsum[GS_ATTRIBUTE_MAX_PARAMS + 3] = {0};
    int njok = 0;
    gs_jw_begin_object(w, GS_JW_LINES);
    gs_jw_kstr(w, "schema", "gensweep-attribute");
    gs_jw_kint(w, "schema_version", 1);
    gs_jw_kstr(w, "from", r->from_name);
    gs_jw_kstr(w, "to", r->to_name);
    gs_jw_kstr(w, "from_path", gs_record_rel_path(o->from));
    gs_jw_kstr(w, "to_path", gs_record_rel_path(o->to));
    gs_jw_kstr(w, "suite",
               o->sweep.suite == GS_SWEEP_CHECK ? "check"
               : o->sweep.suite == GS_SWEEP_ALL ? "all"
                                                : "perf");
    gs_jw_key(w, "jobs");
    gs_jw_begin_array(w, GS_JW_LINES_CLOSE);
    const cJSON *j;
    char key[160];
    cJSON_ArrayForEach(j, jobs)
    {
        gs_speedup_key(j, key, sizeof key);
        double t0 = time_of(runs[0], key);
        double tall = time_of(runs[nc + 1], key), tto = time_of(runs[nc + 2], key);
        int ok = t0 > 0 && tall > 0;
        for (int c = 0; c < nc && ok; c++)
            ok = !ch[c].alone_ok || time_of(runs[c + 1], key) > 0;
        if (!ok) continue; /* not passed in every run: not attributed */
        njok++;
        gs_jw_begin_object(w, GS_JW_COMPACT);
        gs_jw_kstr(w, "key", key);
        gs_jw_kstr(w, "kernel", gs_json_str(j, "kernel"));
        gs_jw_knum(w, "time_from", t0);
        gs_jw_knum(w, "speedup_all", t0 / tall);
        gs_jw_knum(w, "speedup_to", tto > 0 ? t0 / tto : (double)NAN);
        gs_jw_key(w, "speedup");
        gs_jw_begin_array(w, GS_JW_COMPACT);
        double lall = log(t0 / tall), shsum = 0;
        lsum[nc + 1] += lall;
        for (int c = 0; c < nc; c++) {
            double s = ch[c].alone_ok ? t0 / time_of(runs[c + 1], key) : (double)NAN;
            if (ch[c].alone_ok) lsum[c + 1] += log(s);
            gs_jw_num(w, s);
        }
        gs_jw_end_array(w);
        gs_jw_key(w, "share");
        gs_jw_begin_array(w, GS_JW_COMPACT);
        for (int c = 0; c < nc; c++) {
            if (!ch[c].alone_ok) {
                gs_jw_null(w);
                continue;
            }
            double s = t0 / time_of(runs[c + 1], key);
            /* a job the changes leave (nearly) unchanged has no speedup to share out */
            double sh = fabs(lall) > 1e-6 ? log(s) / lall : (double)NAN;
            shsum += sh;
            gs_jw_num(w, sh);
        }
        gs_jw_end_array(w);
        gs_jw_knum(w, "interaction_share", isfinite(shsum) ? 1 - shsum : (double)NAN);
        gs_jw_end_object(w);
    }
    /* B's geomean over the same jobs (those that ran on B) */
    double lto = 0;
    int nto = 0;
    cJSON_ArrayForEach(j, jobs)
    {
        gs_speedup_key(j, key, sizeof key);
        double t0 = time_of(runs[0], key), tto = time_of(runs[nc + 2], key);
        if (t0 > 0 && tto > 0) {
            lto += log(t0 / tto);
            nto++;
        }
    }
    double gall = njok ? exp(lsum[nc + 1] / njok) : (double)NAN;
    double lg_all = njok ? lsum[nc + 1] / njok : (double)NAN;
    gs_jw_end_array(w);
    gs_jw_key(w, "all");
    gs_jw_begin_object(w, GS_JW_SPACED);
    gs_jw_kint(w, "jobs", njok);
    gs_jw_knum(w, "geomean", gall);
    gs_jw_end_object(w);
    gs_jw_key(w, "to_all");
    gs_jw_begin_object(w, GS_JW_SPACED);
    gs_jw_kint(w, "jobs", nto);
    gs_jw_knum(w, "geomean", nto ? exp(lto / nto) : (double)NAN);
    gs_jw_end_object(w);
    gs_jw_key(w, "params");
    gs_jw_begin_array(w, GS_JW_LINES_CLOSE);
    double shsum = 0;
    int best = -1;
    for (int c = 0; c < nc; c++) {
        double g = njok && ch[c].alone_ok ? exp(lsum[c + 1] / njok) : (double)NAN;
        double sh =
            fabs(lg_all) > 1e-9 && ch[c].alone_ok ? (lsum[c + 1] / njok) / lg_all : (double)NAN;
        if (ch[c].alone_ok) shsum += sh;
        if (ch[c].alone_ok && isfinite(sh) && (best < 0 || sh > (lsum[best + 1] / njok) / lg_all))
            best = c;
        gs_jw_begin_object(w, GS_JW_COMPACT);
        gs_jw_kstr(w, "key", ch[c].key);
        gs_jw_kstr(w, "unit", gs_unit_record_name(ch[c].unit));
        gs_jw_knum(w, "from", ch[c].from);
        gs_jw_knum(w, "to", ch[c].to);
        gs_jw_knum(w, "geomean", g);
        gs_jw_knum(w, "share", sh);
        if (!ch[c].alone_ok) gs_jw_kstr(w, "invalid_alone", ch[c].why);
        gs_jw_end_object(w);
    }
    gs_jw_end_array(w);
    gs_jw_knum(w, "interaction_share", isfinite(shsum) ? 1 - shsum : (double)NAN);
    gs_jw_end_object(w);
    r->jobs = njok;
    r->best = best;
}

gs_status gs_attribute_run(const gs_attribute_opts *o, gs_attribute_result *r, gs_diags *d)
{
    memset(r, 0, sizeof *r);
    r->best = -1;
    if (!o->from || !o->to) {
        gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0, "--from A.yaml and --to B.yaml are required");
        return GS_ERR_USAGE;
    }
    const char *out = o->out_dir ? o->out_dir : GS_ATTRIBUTE_DEFAULT_OUT;
    gs_config *a = gs_config_load_with(o->from, NULL, 0, d);
    gs_config *b = a ? gs_config_load_with(o->to, NULL, 0, d) : NULL;
    if (!a || !b) {
        gs_config_free(a);
        return GS_ERR_USAGE;
    }
    snprintf(r->from_name, sizeof r->from_name, "%s", a->name);
    snprintf(r->to_name, sizeof r->to_name, "%s", b->name);
    gs_status st = find_changes(a, b, o, r, d);
    gs_config_free(a);
    gs_config_free(b);
    if (o->on_changes) o->on_changes(o->progress_ctx, r);
    if (st != GS_OK) return st;
    const int nc = r->n_changes, nr = nc + 3;
    cJSON **runs = gs_calloc((size_t)nr, sizeof *runs);
    const char **all = gs_calloc((size_t)nc, sizeof *all);
    if (!runs || !all) {
        gs_free(runs);
        gs_free(all);
        gs_diags_add(d, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
        return GS_ERR_NOMEM;
    }
    for (int i = 0; i < nc; i++)
        all[i] = r->changes[i].assign;
    /* runs: 0 = A, 1..nc = one change each, nc+1 = every change, nc+2 = B */
    st = GS_OK;
    int missing = 0;
    for (int i = 0; i < nr && st != GS_ERR_USAGE; i++) {
        char label[96];
        const char *one[1];
        int rc;
        if (i == 0) {
            snprintf(label, sizeof label, "from");
            rc = run_sweep(&o->sweep, o->from, NULL, 0, out, label, &runs[i], d);
        } else if (i <= nc && !r->changes[i - 1].alone_ok) {
            continue;
        } else if (i <= nc) {
            snprintf(label, sizeof label, "only-%.80s", r->changes[i - 1].key);
            one[0] = r->changes[i - 1].assign;
            rc = run_sweep(&o->sweep, o->from, one, 1, out, label, &runs[i], d);
        } else if (i == nc + 1) {
            snprintf(label, sizeof label, "all");
            rc = run_sweep(&o->sweep, o->from, all, (size_t)nc, out, label, &runs[i], d);
        } else {
            snprintf(label, sizeof label, "to");
            rc = run_sweep(&o->sweep, o->to, NULL, 0, out, label, &runs[i], d);
        }
        if (o->progress) o->progress(o->progress_ctx, i, nr, label, rc != 0);
        if (rc == 2)
            st = GS_ERR_USAGE;
        else if (!runs[i])
            missing = 1;
        else if (rc != 0)
            r->failed_runs++;
    }
    if (st != GS_ERR_USAGE && runs[nr - 1]) {
        gs_sb sb;
        gs_sb_init(&sb);
        gs_jw w;
        gs_jw_init(&w, &sb);
        emit_doc(&w, o, r, runs);
        gs_sb_putc(&sb, '\n');
        snprintf(r->path, sizeof r->path, "%s/attribute.json", out);
        gs_error err;
        gs_error_clear(&err);
        if (gs_jw_finish(&w, &err) != GS_OK) {
            gs_diags_add(d, err.code, NULL, 0, 0, "%s", err.message);
            st = err.code;
        } else {
            r->doc = cJSON_Parse(gs_sb_cstr(&sb));
            if (!r->jobs) {
                gs_diags_add(d, GS_ERR_INVALID, NULL, 0, 0,
                             "no job passed in every run: nothing to attribute");
                st = GS_ERR_INVALID;
            } else if (gs_sb_write_file(&sb, r->path, &err) != GS_OK) {
                char buf[2048];
                gs_error_format(&err, buf, sizeof buf);
                gs_diags_add(d, err.code, NULL, 0, 0, "%s", buf);
                st = err.code;
            } else {
                r->written = 1;
            }
        }
        gs_sb_free(&sb);
    }
    if (st == GS_OK && (missing || !runs[nr - 1])) st = GS_ERR_IO; /* a run left no results */
    for (int i = 0; i < nr; i++)
        cJSON_Delete(runs[i]);
    gs_free(runs);
    gs_free(all);
    return st;
}

void gs_attribute_result_free(gs_attribute_result *r)
{
    if (!r) return;
    cJSON_Delete(r->doc);
    r->doc = NULL;
}

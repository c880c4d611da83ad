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

/* The item (group or key) of change c in r, created when new; -1 when r has no room. */
static int item_of(gs_attribute_result *r, const gs_attribute_opts *o, const char *key)
{
    char name[96];
    int g = -1;
    if (!o->by_keys) g = gs_config_group_of(key);
    size_t ng = 0;
    const gs_config_group *groups = gs_config_groups(&ng);
    snprintf(name, sizeof name, "%s", g >= 0 ? groups[g].name : key);
    for (int i = 0; i < r->n_items; i++)
        if (!strcmp(r->items[i].name, name)) return i;
    if (r->n_items == GS_ATTRIBUTE_MAX_PARAMS) return -1;
    gs_attribute_item *it = &r->items[r->n_items];
    snprintf(it->name, sizeof it->name, "%s", name);
    it->group = g >= 0;
    return r->n_items++;
}

/* The --set assignments of item i's changes into out (room for r->n_changes); their count. */
static size_t item_sets(const gs_attribute_result *r, int i, const char **out)
{
    size_t n = 0;
    for (int c = 0; c < r->n_changes; c++)
        if (r->changes[c].item == i) out[n++] = r->changes[c].assign;
    return n;
}

/* Whether A with the sets loads; the last config error into why when not. */
static int loads_with(const char *from, const char *const *sets, size_t n, char *why, size_t size)
{
    gs_diags cd;
    gs_diags_init(&cd);
    gs_config *t = gs_config_load_with(from, sets, n, &cd);
    int ok = t != NULL;
    why[0] = '\0';
    if (!ok && cd.count) gs_error_format(&cd.items[cd.count - 1], why, size);
    gs_config_free(t);
    gs_diags_free(&cd);
    return ok;
}

/* The differing numeric parameters of a and b into r, gathered into items; GS_ERR_USAGE with d
 * when none or too many differ. */
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
        gs_units_format(c->from, c->unit, c->from_text, sizeof c->from_text);
        gs_units_format(c->to, c->unit, c->to_text, sizeof c->to_text);
        snprintf(c->assign, sizeof c->assign, "%s=%.17g%s", c->key, c->to,
                 gs_unit_base_name(c->unit));
        c->item = item_of(r, o, c->key); /* never -1: there are no more items than changes */
        r->items[c->item].n_changes++;
    }
    if (!r->n_changes) {
        gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0,
                     "no numeric parameter differs between %s and %s%s", o->from, o->to,
                     r->n_one_sided ? " (only parameters present on one side)" : "");
        return GS_ERR_USAGE;
    }
    /* an item that breaks a constraint on its own (PSUM banks vs size, say) cannot run alone:
     * it is reported, left out of the single runs, and its effect stays in the interactions */
    const char *sets[GS_ATTRIBUTE_MAX_PARAMS];
    for (int i = 0; i < r->n_items; i++) {
        gs_attribute_item *it = &r->items[i];
        it->alone_ok = loads_with(o->from, sets, item_sets(r, i, sets), it->why, sizeof it->why);
    }
    return GS_OK;
}

/* Mean ln(speedup) over A of run over the jobs passing in A and in run (NAN when none). */
static double mean_log(const cJSON *a, const cJSON *run)
{
    double l = 0;
    int n = 0;
    const cJSON *j;
    char key[160];
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(a, "jobs"))
    {
        gs_speedup_key(j, key, sizeof key);
        double t0 = time_of(a, key), t = time_of(run, key);
        if (t0 > 0 && t > 0) {
            l += log(t0 / t);
            n++;
        }
    }
    return n ? l / n : (double)NAN;
}

/* The pairs among the top o->pairs items that ran alone (largest |ln speedup| first) into r. */
static void choose_pairs(const gs_attribute_opts *o, gs_attribute_result *r, cJSON *const *runs)
{
    int top[GS_ATTRIBUTE_MAX_PARAMS], nt = 0;
    double mag[GS_ATTRIBUTE_MAX_PARAMS];
    for (int i = 0; i < r->n_items; i++) {
        if (!r->items[i].alone_ok || !runs[i + 1]) continue;
        double m = fabs(mean_log(runs[0], runs[i + 1]));
        int k = nt++;
        while (k > 0 && mag[k - 1] < m) { /* stable: equal effects keep the schema's order */
            top[k] = top[k - 1];
            mag[k] = mag[k - 1];
            k--;
        }
        top[k] = i;
        mag[k] = m;
    }
    int k = o->pairs < GS_ATTRIBUTE_MAX_PAIR_ITEMS ? o->pairs : GS_ATTRIBUTE_MAX_PAIR_ITEMS;
    if (k > nt) k = nt;
    const char *sets[GS_ATTRIBUTE_MAX_PARAMS];
    for (int x = 0; x < k; x++)
        for (int y = x + 1; y < k; y++) {
            gs_attribute_pair *p = &r->pairs[r->n_pairs++];
            p->a = top[x] < top[y] ? top[x] : top[y];
            p->b = top[x] < top[y] ? top[y] : top[x];
            size_t n = item_sets(r, p->a, sets);
            n += item_sets(r, p->b, sets + n);
            p->ok = loads_with(o->from, sets, n, p->why, sizeof p->why);
        }
}

/* Why a share of ln(speedup) over ln(all) cannot be formed, or NULL when it can. */
static const char *share_na(double l, double lall, int ran, const char *not_run)
{
    if (!ran) return not_run;
    if (!isfinite(l)) return "no job passed in every run";
    if (fabs(lall) <= 1e-9) return "every change together leaves the time unchanged";
    return NULL;
}

/* The attribute.json document over the runs (0 = A, 1..ni = one item each, ni+1 = every
 * change, ni+2 = B, ni+3.. = the pairs) through w; r->jobs and r->best set. */
static void emit_doc(gs_jw *w, const gs_attribute_opts *o, gs_attribute_result *r,
                     cJSON *const *runs)
{
    const int ni = r->n_items, np = r->n_pairs;
    const gs_attribute_item *it = r->items;
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(runs[0], "jobs");
    double lsum[GS_ATTRIBUTE_MAX_PARAMS + 3 + GS_ATTRIBUTE_MAX_PAIRS] = {0};
    int njok = 0;
    gs_jw_begin_object(w, GS_JW_LINES);
    gs_jw_kstr(w, "schema", "gensweep-attribute");
    gs_jw_kint(w, "schema_version", 2);
    gs_jw_kstr(w, "from", r->from_name);
    gs_jw_kstr(w, "to", r->to_name);
    gs_jw_kstr(w, "from_path", gs_record_rel_path(o->from));
    gs_jw_kstr(w, "to_path", gs_record_rel_path(o->to));
    gs_jw_kstr(w, "suite",
               o->sweep.suite == GS_SWEEP_CHECK ? "check"
               : o->sweep.suite == GS_SWEEP_ALL ? "all"
                                                : "perf");
    gs_jw_kstr(w, "items", o->by_keys ? "keys" : "groups");
    gs_jw_key(w, "jobs");
    gs_jw_begin_array(w, GS_JW_LINES_CLOSE);
    const cJSON *j;
    char key[160];
    cJSON_ArrayForEach(j, jobs)
    {
        gs_speedup_key(j, key, sizeof key);
        double t0 = time_of(runs[0], key);
        double tall = time_of(runs[ni + 1], key), tto = time_of(runs[ni + 2], key);
        int ok = t0 > 0 && tall > 0;
        for (int c = 0; c < ni && ok; c++)
            ok = !it[c].alone_ok || time_of(runs[c + 1], key) > 0;
        for (int p = 0; p < np && ok; p++)
            ok = !r->pairs[p].ok || time_of(runs[ni + 3 + p], key) > 0;
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
        lsum[ni + 1] += lall;
        for (int c = 0; c < ni; c++) {
            double s = it[c].alone_ok ? t0 / time_of(runs[c + 1], key) : (double)NAN;
            if (it[c].alone_ok) lsum[c + 1] += log(s);
            gs_jw_num(w, s);
        }
        gs_jw_end_array(w);
        gs_jw_key(w, "share");
        gs_jw_begin_array(w, GS_JW_COMPACT);
        for (int c = 0; c < ni; c++) {
            if (!it[c].alone_ok) {
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
        gs_jw_key(w, "pair_share");
        gs_jw_begin_array(w, GS_JW_COMPACT);
        for (int p = 0; p < np; p++) {
            const gs_attribute_pair *pp = &r->pairs[p];
            if (!pp->ok) {
                gs_jw_null(w);
                continue;
            }
            double lp = log(t0 / time_of(runs[ni + 3 + p], key));
            lsum[ni + 3 + p] += lp;
            double li = lp - log(t0 / time_of(runs[pp->a + 1], key)) -
                        log(t0 / time_of(runs[pp->b + 1], key));
            gs_jw_num(w, fabs(lall) > 1e-6 ? li / lall : (double)NAN);
        }
        gs_jw_end_array(w);
        gs_jw_end_object(w);
    }
    /* B's geomean over the same jobs (those that ran on B) */
    double lto = 0;
    int nto = 0;
    cJSON_ArrayForEach(j, jobs)
    {
        gs_speedup_key(j, key, sizeof key);
        double t0 = time_of(runs[0], key), tto = time_of(runs[ni + 2], key);
        if (t0 > 0 && tto > 0) {
            lto += log(t0 / tto);
            nto++;
        }
    }
    double gall = njok ? exp(lsum[ni + 1] / njok) : (double)NAN;
    double lg_all = njok ? lsum[ni + 1] / njok : (double)NAN;
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
    if (!nto) gs_jw_kstr(w, "na", "no job passed on both configs");
    gs_jw_end_object(w);
    gs_jw_key(w, "params");
    gs_jw_begin_array(w, GS_JW_LINES_CLOSE);
    double shsum = 0, best_sh = 0;
    int best = -1;
    for (int c = 0; c < ni; c++) {
        double l = njok && it[c].alone_ok ? lsum[c + 1] / njok : (double)NAN;
        const char *na = share_na(l, lg_all, it[c].alone_ok, "invalid alone");
        double sh = na ? (double)NAN : l / lg_all;
        if (it[c].alone_ok && isfinite(sh)) shsum += sh;
        if (isfinite(sh) && (best < 0 || sh > best_sh)) {
            best = c;
            best_sh = sh;
        }
        gs_jw_begin_object(w, GS_JW_COMPACT);
        gs_jw_kstr(w, "key", it[c].name);
        gs_jw_kbool(w, "group", it[c].group);
        const gs_attribute_change *one = NULL;
        gs_jw_key(w, "keys");
        gs_jw_begin_array(w, GS_JW_COMPACT);
        for (int k = 0; k < r->n_changes; k++) {
            const gs_attribute_change *ch = &r->changes[k];
            if (ch->item != c) continue;
            one = ch;
            gs_jw_begin_object(w, GS_JW_COMPACT);
            gs_jw_kstr(w, "key", ch->key);
            gs_jw_kstr(w, "unit", gs_unit_record_name(ch->unit));
            gs_jw_knum(w, "from", ch->from);
            gs_jw_knum(w, "to", ch->to);
            gs_jw_kstr(w, "from_text", ch->from_text);
            gs_jw_kstr(w, "to_text", ch->to_text);
            gs_jw_end_object(w);
        }
        gs_jw_end_array(w);
        if (it[c].n_changes == 1 && one) { /* one key: its values at the top, as before */
            gs_jw_kstr(w, "unit", gs_unit_record_name(one->unit));
            gs_jw_knum(w, "from", one->from);
            gs_jw_knum(w, "to", one->to);
            gs_jw_kstr(w, "from_text", one->from_text);
            gs_jw_kstr(w, "to_text", one->to_text);
        }
        gs_jw_knum(w, "geomean", isfinite(l) ? exp(l) : (double)NAN);
        gs_jw_knum(w, "share", sh);
        if (na) gs_jw_kstr(w, "na", na);
        if (!it[c].alone_ok) gs_jw_kstr(w, "invalid_alone", it[c].why);
        gs_jw_end_object(w);
    }
    gs_jw_end_array(w);
    double inter = isfinite(lg_all) && fabs(lg_all) > 1e-9 ? 1 - shsum : (double)NAN;
    gs_jw_knum(w, "interaction_share", inter);
    if (!isfinite(inter))
        gs_jw_kstr(w, "interaction_na", "every change together leaves the time unchanged");
    gs_jw_key(w, "pairs");
    gs_jw_begin_array(w, GS_JW_LINES_CLOSE);
    double psum = 0;
    for (int p = 0; p < np; p++) {
        const gs_attribute_pair *pp = &r->pairs[p];
        double lp = pp->ok && njok ? lsum[ni + 3 + p] / njok : (double)NAN;
        double li = lp - lsum[pp->a + 1] / njok - lsum[pp->b + 1] / njok;
        const char *na = share_na(li, lg_all, pp->ok, "invalid together");
        double sh = na ? (double)NAN : li / lg_all;
        if (isfinite(sh)) psum += sh;
        gs_jw_begin_object(w, GS_JW_COMPACT);
        gs_jw_kstr(w, "a", it[pp->a].name);
        gs_jw_kstr(w, "b", it[pp->b].name);
        gs_jw_knum(w, "geomean", isfinite(lp) ? exp(lp) : (double)NAN);
        gs_jw_knum(w, "interaction", isfinite(li) ? exp(li) : (double)NAN);
        gs_jw_knum(w, "share", sh);
        if (na) gs_jw_kstr(w, "na", na);
        if (!pp->ok) gs_jw_kstr(w, "invalid_together", pp->why);
        gs_jw_end_object(w);
    }
    gs_jw_end_array(w);
    gs_jw_knum(w, "residual_share", isfinite(inter) ? inter - psum : (double)NAN);
    gs_jw_end_object(w);
    r->jobs = njok;
    r->best = best;
}

/* Run i of r's plan (0 = A, 1..ni items, ni+1 every change, ni+2 B, ni+3.. pairs): its label and
 * sets; 0 when it is not run (an item invalid alone, a pair invalid together). */
static int plan_run(const gs_attribute_result *r, int i, char *label, size_t lsize,
                    const char **sets, size_t *n_sets, const char **cfg, const gs_attribute_opts *o)
{
    const int ni = r->n_items;
    *cfg = o->from;
    *n_sets = 0;
    if (i == 0) {
        snprintf(label, lsize, "from");
    } else if (i <= ni) {
        if (!r->items[i - 1].alone_ok) return 0;
        snprintf(label, lsize, "only-%.80s", r->items[i - 1].name);
        *n_sets = item_sets(r, i - 1, sets);
    } else if (i == ni + 1) {
        snprintf(label, lsize, "all");
        for (int c = 0; c < r->n_changes; c++)
            sets[(*n_sets)++] = r->changes[c].assign;
    } else if (i == ni + 2) {
        snprintf(label, lsize, "to");
        *cfg = o->to;
    } else {
        const gs_attribute_pair *p = &r->pairs[i - ni - 3];
        if (!p->ok) return 0;
        snprintf(label, lsize, "pair-%.40s+%.40s", r->items[p->a].name, r->items[p->b].name);
        *n_sets = item_sets(r, p->a, sets);
        *n_sets += item_sets(r, p->b, sets + *n_sets);
    }
    return 1;
}

gs_status gs_attribute_run(const gs_attribute_opts *o, gs_attribute_result *r, gs_diags *d)
{
    memset(r, 0, sizeof *r);
    r->best = -1;
    if (!o->from || !o->to) {
        gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0, "--from A.yaml and --to B.yaml are required");
        return GS_ERR_USAGE;
    }
    if (o->pairs < 0 || o->pairs > GS_ATTRIBUTE_MAX_PAIR_ITEMS) {
        gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0, "--pairs must be 0 .. %d",
                     GS_ATTRIBUTE_MAX_PAIR_ITEMS);
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
    const int ni = r->n_items;
    int k = o->pairs, n_alone = 0;
    for (int i = 0; i < ni; i++)
        n_alone += r->items[i].alone_ok;
    if (k > n_alone) k = n_alone;
    const int np = k * (k - 1) / 2, nr = ni + 3 + np;
    cJSON **runs = gs_calloc((size_t)nr, sizeof *runs);
    if (!runs) {
        gs_diags_add(d, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
        return GS_ERR_NOMEM;
    }
    st = GS_OK;
    int missing = 0;
    for (int i = 0; i < nr && st != GS_ERR_USAGE; i++) {
        if (i == ni + 3) choose_pairs(o, r, runs); /* ranked by the single runs */
        char label[96];
        const char *sets[GS_ATTRIBUTE_MAX_PARAMS], *cfg;
        size_t n_sets;
        if (!plan_run(r, i, label, sizeof label, sets, &n_sets, &cfg, o)) continue;
        int rc = run_sweep(&o->sweep, cfg, sets, n_sets, out, label, &runs[i], d);
        if (o->progress) o->progress(o->progress_ctx, i, nr, label, rc != 0);
        if (rc == 2)
            st = GS_ERR_USAGE;
        else if (!runs[i])
            missing = 1;
        else if (rc != 0)
            r->failed_runs++;
    }
    if (st != GS_ERR_USAGE && runs[ni + 2]) {
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
    if (st == GS_OK && (missing || !runs[ni + 2])) st = GS_ERR_IO; /* a run left no results */
    for (int i = 0; i < nr; i++)
        cJSON_Delete(runs[i]);
    gs_free(runs);
    return st;
}

void gs_attribute_result_free(gs_attribute_result *r)
{
    if (!r) return;
    cJSON_Delete(r->doc);
    r->doc = NULL;
}

/*
 * report_load.c - reading and checking the report's inputs (results, baseline, what-if, tuning
 * and attribution files) and the escaping / formatting helpers every section uses.
 */
#include "report_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_status.h"
#include "results_schema.h"

/* Job statuses come from the one table in results/job_status.h; -1 for a status it does not
 * know (the validator refuses those, so only a caller of the internals sees one). */
int gs_rp_status_index(const char *s)
{
    return gs_job_status_parse(s);
}

int gs_rp_status_is_failure(const char *s)
{
    return gs_job_status_is_failure((gs_job_status)gs_job_status_parse(s));
}

size_t gs_rp_status_count(void)
{
    return GS_JOB_STATUS_COUNT;
}

const char *gs_rp_status_name(size_t i)
{
    return i < GS_JOB_STATUS_COUNT ? gs_job_status_name((gs_job_status)i) : "";
}

/* CSS class of a status: its own name when known (safe characters), else "unknown". */
const char *gs_rp_status_class(const char *s)
{
    int i = gs_rp_status_index(s);
    return i < 0 ? "unknown" : gs_job_status_name((gs_job_status)i);
}

/* ---- JSON access: absent or wrong-typed fields read as "" / NaN, never crash ---- */

const cJSON *gs_rp_jget(const cJSON *o, const char *k)
{
    return o ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

const char *gs_rp_jstr(const cJSON *o, const char *k)
{
    const cJSON *v = gs_rp_jget(o, k);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : "";
}

const char *gs_rp_job_bound(const cJSON *o)
{
    const char *l = gs_rp_jstr(o, "bottleneck_label");
    return *l ? l : gs_rp_jstr(o, "bottleneck");
}

const char *gs_rp_job_bound_class(const cJSON *o, char *buf, size_t size)
{
    const char *kind = gs_rp_jstr(o, "bound_kind"), *on = gs_rp_jstr(o, "busiest");
    if (!strcmp(kind, "throughput") && *on)
        snprintf(buf, size, "throughput-bound on %s", on);
    else if (!strcmp(kind, "latency"))
        snprintf(buf, size, "%s", "latency-bound");
    else
        snprintf(buf, size, "%s", gs_rp_jstr(o, "bottleneck"));
    return buf;
}

double gs_rp_jnum(const cJSON *o, const char *k)
{
    const cJSON *v = gs_rp_jget(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : (double)NAN;
}

/* ---- output helpers ---- */

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is not one (overlong forms,
 * surrogates and code points past U+10FFFF are invalid too). */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (!n || c > 0xF4) return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    if (c == 0xE0 && s[1] < 0xA0) return 0;  /* overlong */
    if (c == 0xED && s[1] >= 0xA0) return 0; /* surrogate */
    if (c == 0xF0 && s[1] < 0x90) return 0;  /* overlong */
    if (c == 0xF4 && s[1] >= 0x90) return 0; /* past U+10FFFF */
    return n;
}

/* The code point of the valid n-byte UTF-8 sequence at s. */
static unsigned utf8_cp(const unsigned char *s, size_t n)
{
    if (n == 1) return s[0];
    unsigned cp = s[0] & (0x7Fu >> n);
    for (size_t i = 1; i < n; i++)
        cp = cp << 6 | (s[i] & 0x3Fu);
    return cp;
}

/* Characters that change the direction of what follows them: the embeddings, overrides and
 * marks (U+061C, U+200E-F, U+202A-E), and strong right-to-left letters. */
static int bidi_active(unsigned cp)
{
    return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2066 && cp <= 0x2069) || (cp >= 0x0590 && cp <= 0x08FF) ||
           (cp >= 0xFB1D && cp <= 0xFDFF) || (cp >= 0xFE70 && cp <= 0xFEFF) ||
           (cp >= 0x10800 && cp <= 0x10FFF) || (cp >= 0x1E800 && cp <= 0x1EFFF);
}

/* Escape at most max bytes of s (cut at a character boundary): control characters other than
 * tab/newline become '?', invalid UTF-8 becomes U+FFFD, so the page is always valid UTF-8.
 * A string with right-to-left text or direction controls is isolated (U+2068 FIRST STRONG
 * ISOLATE ... U+2069 POP DIRECTIONAL ISOLATE, which ends every embedding or override opened
 * inside), and its own isolate controls become U+FFFD so that it cannot close the isolate
 * early: a U+202E in a job id never reverses the status after it. Returns the bytes of s
 * consumed. */
static size_t text_n(gs_sb *sb, const char *s, size_t max)
{
    const unsigned char *u = (const unsigned char *)s;
    int isolate = 0;
    for (size_t k = 0; u[k] && k < max && !isolate;) {
        size_t n = utf8_len(u + k);
        if (!n) {
            k++;
            continue;
        }
        isolate = k + n <= max && bidi_active(utf8_cp(u + k, n));
        k += n;
    }
    if (isolate) gs_sb_puts(sb, "\xE2\x81\xA8");
    size_t i = 0;
    while (u[i] && i < max) {
        size_t n = utf8_len(u + i);
        if (n == 0) {
            gs_sb_puts(sb, "\xEF\xBF\xBD");
            i++;
            continue;
        }
        if (i + n > max) break;
        unsigned char c = u[i];
        if (c == '&')
            gs_sb_puts(sb, "&amp;");
        else if (c == '<')
            gs_sb_puts(sb, "&lt;");
        else if (c == '>')
            gs_sb_puts(sb, "&gt;");
        else if (c == '"')
            gs_sb_puts(sb, "&quot;");
        else if (c == '\'')
            gs_sb_puts(sb, "&#39;");
        else if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
            gs_sb_putc(sb, '?');
        else if (n == 3 && utf8_cp(u + i, n) >= 0x2066 && utf8_cp(u + i, n) <= 0x2069)
            gs_sb_puts(sb, "\xEF\xBF\xBD");
        else
            gs_sb_putn(sb, s + i, n);
        i += n;
    }
    if (isolate) gs_sb_puts(sb, "\xE2\x81\xA9");
    return i;
}

/* Escaped text, at most GS_RP_DETAIL_MAX bytes of it: no input string can make the page grow
 * beyond that per use (a results file may carry a megabyte-long reason). */
void gs_rp_text(gs_sb *sb, const char *s)
{
    if (!s) return;
    size_t used = text_n(sb, s, GS_RP_DETAIL_MAX);
    if (s[used]) gs_sb_printf(sb, "… [cut: %zu bytes in all]", used + strlen(s + used));
}

void gs_rp_text_cut(gs_sb *sb, const char *s)
{
    if (!s) return;
    size_t n = strlen(s);
    if (n <= GS_RP_CELL_MAX) {
        text_n(sb, s, n);
        return;
    }
    text_n(sb, s, GS_RP_CELL_MAX);
    gs_sb_puts(sb, "…<details class=\"more\"><summary>full text</summary><div>");
    gs_rp_text(sb, s);
    gs_sb_puts(sb, "</div></details>");
}

/* A time in ns as text with a readable unit; "—" when unknown. */
void gs_rp_put_time(gs_sb *sb, double ns)
{
    if (!isfinite(ns))
        gs_sb_puts(sb, "—");
    else if (ns < 1e3)
        gs_sb_printf(sb, "%.3g ns", ns);
    else if (ns < 1e6)
        gs_sb_printf(sb, "%.4g µs", ns / 1e3);
    else if (ns < 1e9)
        gs_sb_printf(sb, "%.4g ms", ns / 1e6);
    else
        gs_sb_printf(sb, "%.4g s", ns / 1e9);
}

void gs_rp_put_num(gs_sb *sb, double v)
{
    if (isfinite(v))
        gs_sb_printf(sb, "%.4g", v);
    else
        gs_sb_puts(sb, "—");
}

/* data-v attribute for sorting numbers ("" for unknown: sorted last by the script). */
void gs_rp_put_dv(gs_sb *sb, double v)
{
    if (isfinite(v))
        gs_sb_printf(sb, " data-v=\"%.6g\"", v);
    else
        gs_sb_puts(sb, " data-v=\"\"");
}

/* <td> with a number and its sort value. */
void gs_rp_td_num(gs_sb *sb, double v)
{
    gs_sb_puts(sb, "<td class=\"n\"");
    gs_rp_put_dv(sb, v);
    gs_sb_puts(sb, ">");
    gs_rp_put_num(sb, v);
    gs_sb_puts(sb, "</td>");
}

void gs_rp_td_time(gs_sb *sb, double ns)
{
    gs_sb_puts(sb, "<td class=\"n\"");
    gs_rp_put_dv(sb, ns);
    gs_sb_puts(sb, ">");
    gs_rp_put_time(sb, ns);
    gs_sb_puts(sb, "</td>");
}

void gs_rp_td_text(gs_sb *sb, const char *s)
{
    gs_sb_puts(sb, "<td>");
    gs_rp_text(sb, s);
    gs_sb_puts(sb, "</td>");
}

void gs_rp_status_badge(gs_sb *sb, const char *status)
{
    gs_sb_printf(sb, "<span class=\"st %s\">", gs_rp_status_class(status));
    gs_rp_text(sb, status);
    gs_sb_puts(sb, "</span>");
}

void gs_rp_row_label(gs_sb *sb, const krow *r)
{
    gs_rp_text(sb, r->kernel);
    gs_sb_puts(sb, "/");
    gs_rp_text(sb, r->variant);
    gs_sb_puts(sb, " ");
    gs_rp_text(sb, r->dtype);
}

/* Attributes the filter script matches on: data-gen, data-kernel, data-status; each a
 * '|'-separated list (a matrix row spans several generations and statuses). */
void gs_rp_filter_attrs(gs_sb *sb, const char *gens, const char *kernel, const char *status)
{
    gs_sb_puts(sb, " data-gen=\"");
    gs_rp_text(sb, gens);
    gs_sb_puts(sb, "\" data-kernel=\"");
    gs_rp_text(sb, kernel);
    gs_sb_puts(sb, "\" data-status=\"");
    gs_rp_text(sb, status);
    gs_sb_puts(sb, "\"");
}

/* ---- loading ---- */

/* A results file, checked by the validator every consumer shares (results/results_schema.h):
 * a malformed file gets the same error here as in compare and merge. */
gs_status gs_rp_check_results(const cJSON *root, const char *name, gs_error *err)
{
    return gs_results_validate(root, name, err);
}

/* A what-if, tuning, attribution or calibration document, registered in r by its "schema". */
gs_status gs_rp_add_extra(rep *r, const cJSON *root, const char *name, gs_error *err)
{
    const char *schema = gs_rp_jstr(root, "schema");
    int whatif = !strcmp(schema, "gensweep-whatif"), tuning = !strcmp(schema, "gensweep-tuning");
    int attrib = !strcmp(schema, "gensweep-attribute");
    int calib = !strcmp(schema, "gensweep-calibration");
    int wl = !strcmp(schema, "gensweep-workloads");
    if (!whatif && !tuning && !attrib && !calib && !wl)
        return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                            "not a what-if, tuning, attribution, calibration or workloads file: "
                            "\"schema\" is none of \"gensweep-whatif\", \"gensweep-tuning\", "
                            "\"gensweep-attribute\", \"gensweep-calibration\", "
                            "\"gensweep-workloads\"");
    /* attribution 2 added parameter groups, pairs and value texts; 1 still renders */
    double v = gs_rp_jnum(root, "schema_version"), vmax = attrib ? 2 : 1;
    if (v != 1 && v != vmax)
        return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                            "%s schema_version %g is not supported (this gensweep reads %s)",
                            schema, v, attrib ? "1 and 2" : "1");
    if (whatif)
        r->whatif[r->n_whatif++] = root;
    else if (tuning)
        r->tuning[r->n_tuning++] = root;
    else if (calib)
        r->calib[r->n_calib++] = root;
    else if (wl)
        r->wl[r->n_wl++] = root;
    else
        r->attrib[r->n_attrib++] = root;
    return GS_OK;
}

int gs_rp_gen_index(rep *r, const char *g)
{
    for (int i = 0; i < r->n_gens; i++)
        if (!strcmp(r->gens[i], g)) return i;
    return -1;
}

/* Fill jobs (n = size of "jobs"); for the main file also register generations and rows. */
gs_status gs_rp_load_jobs(rep *r, const cJSON *root, const char *name, rjob **out, size_t *n,
                          int main_file, gs_error *err)
{
    const cJSON *jobs = gs_rp_jget(root, "jobs");
    size_t cnt = (size_t)cJSON_GetArraySize(jobs);
    rjob *js = gs_calloc(cnt ? cnt : 1, sizeof *js);
    if (!js) return gs_error_set(err, GS_ERR_NOMEM, name, 0, 0, "out of memory");
    size_t i = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, jobs)
    {
        rjob *j = &js[i];
        if (!cJSON_IsObject(o)) {
            gs_free(js);
            return gs_error_set(err, GS_ERR_INVALID, name, 0, 0, "jobs[%zu] is not an object", i);
        }
        j->o = o;
        j->id = gs_rp_jstr(o, "id");
        j->gen = gs_rp_jstr(o, "generation");
        j->kernel = gs_rp_jstr(o, "kernel");
        j->variant = gs_rp_jstr(o, "variant");
        j->dtype = gs_rp_jstr(o, "dtype");
        j->status = gs_rp_jstr(o, "status");
        j->reason = gs_rp_jstr(o, "reason");
        j->time_ns = gs_rp_jnum(o, "time_ns");
        if (!*j->id || !*j->gen || !*j->kernel || !*j->status) {
            gs_status st = gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                                        "jobs[%zu] (%.200s) lacks \"generation\" or \"kernel\" "
                                        "(the report groups jobs by them)",
                                        i, j->id);
            gs_free(js);
            return st;
        }
        j->size = 1;
        size_t sl = 0;
        const cJSON *d;
        cJSON_ArrayForEach(d, gs_rp_jget(o, "shape"))
        {
            double v = cJSON_IsNumber(d) ? d->valuedouble : 0;
            j->size *= v;
            int w = snprintf(j->shape + sl, sizeof j->shape - sl, "%s%.0f", sl ? "x" : "", v);
            if (w > 0 && (size_t)w < sizeof j->shape - sl) sl += (size_t)w;
        }
        j->gen_i = gs_rp_gen_index(r, j->gen);
        j->row_i = -1;
        if (main_file) {
            if (j->gen_i < 0) {
                if (r->n_gens == MAX_GENS) {
                    gs_free(js);
                    return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                                        "more than %d generations in one report", MAX_GENS);
                }
                r->gens[r->n_gens] = j->gen;
                j->gen_i = r->n_gens++;
            }
            for (size_t k = 0; k < r->n_rows; k++)
                if (!strcmp(r->rows[k].kernel, j->kernel) &&
                    !strcmp(r->rows[k].variant, j->variant) && !strcmp(r->rows[k].dtype, j->dtype))
                    j->row_i = (int)k;
            if (j->row_i < 0) {
                krow *nr = gs_realloc(r->rows, (r->n_rows + 1) * sizeof *nr);
                if (!nr) {
                    gs_free(js);
                    return gs_error_set(err, GS_ERR_NOMEM, name, 0, 0, "out of memory");
                }
                r->rows = nr;
                r->rows[r->n_rows] = (krow){j->kernel, j->variant, j->dtype};
                j->row_i = (int)r->n_rows++;
            }
        }
        i++;
    }
    *out = js;
    *n = cnt;
    return GS_OK;
}

/* The representative job of a kernel row on a generation: the largest shape, preferring one
 * that has a time. NULL when the row never ran there. */
const rjob *gs_rp_representative(const rep *r, size_t row, int gen)
{
    const rjob *best = NULL;
    for (size_t q = 0; q < gs_rp_row_count(r, row); q++) {
        const rjob *j = gs_rp_row_job(r, row, q);
        if (j->gen_i != gen) continue;
        int jt = isfinite(j->time_ns), bt = best && isfinite(best->time_ns);
        if (!best || (jt && !bt) || (jt == bt && j->size > best->size)) best = j;
    }
    return best;
}

/* Every job's verdict against the baseline, from gs_compare_job (results/compare.h): the
 * judgement the CI gate and `gensweep compare` make. Baseline jobs absent from the results get
 * "missing" (a regression: their generation and kernel ran) or "not run". */
gs_status gs_rp_judge_baseline(rep *r, gs_error *err)
{
    gs_json_index *bix = gs_json_index_create(gs_rp_jget(r->broot, "jobs"), 0);
    gs_json_index *cix = gs_json_index_create(gs_rp_jget(r->root, "jobs"), 0);
    gs_status st = GS_OK;
    if (!bix || !cix) {
        st = gs_error_set(err, GS_ERR_NOMEM, r->baseline_name, 0, 0, "out of memory");
    } else {
        double thr = r->regress_pct / 100.0;
        for (size_t i = 0; i < r->n_jobs; i++) {
            rjob *j = &r->jobs[i];
            gs_compare_job(gs_json_index_find(bix, j->id), j->o, 1, thr, &j->diff);
        }
        for (size_t i = 0; i < r->n_bjobs; i++) {
            rjob *b = &r->bjobs[i];
            const cJSON *c = gs_json_index_find(cix, b->id);
            gs_compare_job(b->o, c, !c && gs_compare_covers(cix, b->id), thr, &b->diff);
        }
    }
    gs_json_index_destroy(bix);
    gs_json_index_destroy(cix);
    return st;
}

/* ---- sections ---- */

int gs_rp_budget_hit(rep *r)
{
    if (r->sb->len <= GS_REPORT_BUDGET_BYTES) return 0;
    r->cut = 1;
    return 1;
}

void gs_rp_section_open(gs_sb *sb, const char *id, const char *title)
{
    gs_sb_printf(sb, "<section id=\"%s\"><h2>%s</h2>\n", id, title);
}

void gs_rp_section_close(gs_sb *sb)
{
    gs_sb_puts(sb, "</section>\n");
}

void gs_rp_gen_table_open(rep *r, const char *table_class, const char *row_head)
{
    gs_sb *sb = r->sb;
    gs_sb_printf(sb, "<div class=\"scroll\"><table class=\"%s\"><thead><tr><th>%s</th>",
                 table_class, row_head);
    for (int g = 0; g < r->n_gens; g++) {
        gs_sb_puts(sb, "<th>");
        gs_rp_text(sb, r->gens[g]);
        gs_sb_puts(sb, "</th>");
    }
    gs_sb_puts(sb, "</tr></thead><tbody>\n");
}

void gs_rp_kernel_gen_table(rep *r, const char *table_class, const gs_rp_kernel_cells *t)
{
    gs_sb *sb = r->sb;
    gs_rp_gen_table_open(r, table_class, "kernel/variant dtype");
    for (size_t k = 0; k < r->n_rows; k++) {
        if (gs_rp_budget_hit(r)) break;
        if (t->row_shown && !t->row_shown(r, k, t->ctx)) continue;
        gs_sb_puts(sb, "<tr");
        if (t->row_attrs)
            t->row_attrs(r, k, t->ctx);
        else
            gs_rp_filter_attrs(sb, "", r->rows[k].kernel, "");
        gs_sb_puts(sb, "><th scope=\"row\">");
        gs_rp_row_label(sb, &r->rows[k]);
        gs_sb_puts(sb, "</th>");
        for (int g = 0; g < r->n_gens; g++)
            t->cell(r, k, g, t->ctx);
        gs_sb_puts(sb, "</tr>\n");
    }
    gs_sb_puts(sb, "</tbody></table></div>\n");
}

/* A parameter value with a readable unit. */
void gs_rp_put_param(gs_sb *sb, double v, const char *unit)
{
    if (!isfinite(v)) {
        gs_sb_puts(sb, "—");
    } else if (!strcmp(unit, "B")) {
        static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
        int k = 0;
        while (k < 4 && fabs(v) >= 1024 && fmod(v, 1024) == 0) {
            v /= 1024;
            k++;
        }
        gs_sb_printf(sb, "%g %s", v, u[k]);
    } else if (!strcmp(unit, "Hz")) {
        gs_sb_printf(sb, "%g GHz", v / 1e9);
    } else if (!strcmp(unit, "B/s") || !strcmp(unit, "B/ns")) {
        double gbps = !strcmp(unit, "B/s") ? v / 1e9 : v; /* 1 B/ns = 1 GB/s */
        if (fabs(gbps) >= 1000)
            gs_sb_printf(sb, "%.4g TB/s", gbps / 1000);
        else
            gs_sb_printf(sb, "%.4g GB/s", gbps);
    } else if (!strcmp(unit, "ns")) {
        gs_rp_put_time(sb, v);
    } else {
        gs_sb_printf(sb, "%g", v);
        if (*unit && strcmp(unit, "count") != 0) {
            gs_sb_puts(sb, " ");
            gs_rp_text(sb, unit);
        }
    }
}

/* Is status b worse than a: a higher severity, then later in the status table. An unknown
 * status is the worst. */
int gs_rp_worse_status(const char *a, const char *b)
{
    int ia = gs_rp_status_index(a), ib = gs_rp_status_index(b);
    if (ia < 0) return 0;
    if (ib < 0) return 1;
    int sa = gs_job_status_severity((gs_job_status)ia),
        sb = gs_job_status_severity((gs_job_status)ib);
    return sb != sa ? sb > sa : ib > ia;
}

/* Heatmap colour for a speedup: blue tints above 1, vermillion tints below (Okabe-Ito blue and
 * vermillion, both distinguishable under the common colour-vision deficiencies). */
void gs_rp_speedup_style(gs_sb *sb, double s)
{
    double t = fabs(log2(s)) / 3.0; /* full colour at 8x either way */
    if (t > 1) t = 1;
    int r0 = s >= 1 ? 0x00 : 0xD5, g0 = s >= 1 ? 0x72 : 0x5E, b0 = s >= 1 ? 0xB2 : 0x00;
    int rr = (int)(255 + (r0 - 255) * t * 0.75), gg = (int)(255 + (g0 - 255) * t * 0.75),
        bb = (int)(255 + (b0 - 255) * t * 0.75);
    gs_sb_printf(sb, " style=\"background:#%02x%02x%02x%s\"", rr, gg, bb,
                 t > 0.6 ? ";color:#fff" : "");
}

/* A trace path is linked only when it is relative and stays below the report's folder. */
int gs_rp_safe_relative_link(const char *p)
{
    if (!*p || p[0] == '/' || p[0] == '\\' || strstr(p, "..") || strchr(p, ':') || strstr(p, "//"))
        return 0;
    for (const char *c = p; *c; c++)
        if ((unsigned char)*c < 0x21 || *c == '"' || *c == '\'' || *c == '<' || *c == '>' ||
            *c == '#' || *c == '?')
            return 0;
    return 1;
}

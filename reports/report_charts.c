/*
 * report_charts.c - the per-kernel charts of the drill-down: timelines (one Gantt chart per
 * generation on a shared time axis) and variants (grouped bars per generation).
 */
#include "report_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "svg.h"

/* The job of a kernel row on a generation whose timeline is drawn: the largest shape that has
 * one (timelines come with the functional jobs, not the perf suite's timing-only ones). */
static const rjob *timeline_job(const rep *r, size_t row, int gen)
{
    const rjob *best = NULL;
    for (size_t q = 0; q < gs_rp_row_count(r, row); q++) {
        const rjob *j = gs_rp_row_job(r, row, q);
        if (j->gen_i != gen || !cJSON_IsObject(gs_rp_jget(j->o, "timeline"))) continue;
        if (!best || j->size > best->size) best = j;
    }
    return best;
}

static double timeline_total(const rjob *j)
{
    double t = gs_rp_jnum(gs_rp_jget(j->o, "timeline"), "total_ns");
    return t > 0 ? t : j->time_ns;
}

/* The time a timeline slice's instructions cover: its sixth element (records merge slices
 * across idle gaps), else its extent. */
static double slice_busy(const cJSON *s)
{
    const cJSON *a = cJSON_GetArrayItem(s, 0), *b = cJSON_GetArrayItem(s, 1);
    if (!cJSON_IsNumber(a) || !cJSON_IsNumber(b) || !(b->valuedouble >= a->valuedouble)) return 0;
    const double span = b->valuedouble - a->valuedouble;
    const cJSON *busy = cJSON_GetArrayItem(s, 5);
    if (cJSON_IsNumber(busy) && busy->valuedouble >= 0) return GS_MIN(span, busy->valuedouble);
    return span;
}

/* axis_ns: the time axis's extent, shared by the generations of one kernel. */
static void timeline_chart(rep *r, const rjob *j, const cJSON *tl, int slice_budget, double axis_ns)
{
    gs_sb *sb = r->sb;
    const cJSON *tracks = gs_rp_jget(tl, "tracks");
    int ntr = cJSON_GetArraySize(tracks),
        shown = ntr < TIMELINE_MAX_TRACKS ? ntr : TIMELINE_MAX_TRACKS;
    double total = gs_rp_jnum(tl, "total_ns");
    if (!(total > 0)) total = j->time_ns;
    if (!(total > 0) || shown == 0) {
        gs_sb_puts(sb, "<p>Empty timeline.</p>");
        return;
    }
    int nslices = 0;
    for (int t = 0; t < shown; t++)
        nslices += cJSON_GetArraySize(gs_rp_jget(cJSON_GetArrayItem(tracks, t), "slices"));
    /* merge consecutive slices so the whole chart stays within its budget */
    int group = nslices > slice_budget ? (nslices + slice_budget - 1) / slice_budget : 1;
    gs_svg_plot p;
    gs_svg_plot_init(&p, 900, 28 + 16.0 * shown + 44);
    p.left = 110;
    p.right = 70; /* the busy-% labels */
    p.x = (gs_svg_axis){0, (axis_ns > total ? axis_ns : total) / 1e3, 0, "time (µs)"};
    p.y = (gs_svg_axis){0, 1, 0, NULL};
    gs_svg_axis_nice(&p.x);
    gs_sb_printf(sb,
                 "<svg class=\"gantt\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
                 "role=\"img\" aria-label=\"timeline\">",
                 p.width, p.height, p.width, p.height);
    double ybot = p.height - p.bottom;
    for (int i = 0; i <= 5; i++) {
        double v = p.x.lo + (p.x.hi - p.x.lo) * i / 5, x = gs_svg_px(&p, v);
        gs_sb_printf(sb, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                     x, p.top, x, ybot);
        gs_sb_printf(sb, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, ybot + 14);
        gs_svg_num(sb, v);
        gs_sb_puts(sb, "</text>");
    }
    gs_svg_text(sb, (p.left + p.width - p.right) / 2, p.height - 6, "middle", "axis", "time (µs)");
    gs_svg_text(sb, p.width - p.right + 6, p.top - 4, "start", "axis", "busy");
    for (int t = 0; t < shown; t++) {
        const cJSON *tr = cJSON_GetArrayItem(tracks, t);
        double y = p.top + 16.0 * t;
        const char *name = gs_rp_jstr(tr, "name");
        gs_svg_text(sb, p.left - 6, y + 11, "end", NULL, name);
        /* colour by engine kind: the track name's last word before any queue number */
        int ci = strstr(name, "tensor")   ? 3
                 : strstr(name, "vector") ? 0
                 : strstr(name, "scalar") ? 5
                 : strstr(name, "gpsimd") ? 4
                                          : 1;
        const cJSON *sl = gs_rp_jget(tr, "slices");
        /* how busy the track is: the record says (the union of its instructions), or the sum
         * of its slices' busy time */
        double track_busy = gs_rp_jnum(tr, "busy_ns");
        if (!(track_busy >= 0)) {
            track_busy = 0;
            for (const cJSON *it = cJSON_IsArray(sl) ? sl->child : NULL; it; it = it->next)
                track_busy += slice_busy(it);
        }
        const double pct = 100.0 * GS_MIN(1.0, track_busy / total);
        gs_sb_printf(sb, "<text class=\"busy\" x=\"%.0f\" y=\"%.0f\">%.*f%%</text>",
                     p.width - p.right + 6, y + 11, pct < 9.95 ? 1 : 0, pct);
        gs_sb_printf(sb, "<g fill=\"%s\">", gs_svg_colour(ci));
        /* a bar takes `group` slices, and more while they start within its first pixel (so
         * no bar is narrower than a pixel only to be widened; its density says how busy) */
        for (const cJSON *it = cJSON_IsArray(sl) ? sl->child : NULL; it;) {
            double s0 = INFINITY, s1 = -INFINITY, cnt = 0, busy = 0;
            const char *iname = "", *src = "";
            int m = 0;
            for (; it; it = it->next) {
                const cJSON *a = cJSON_GetArrayItem(it, 0), *b = cJSON_GetArrayItem(it, 1);
                if (!cJSON_IsNumber(a) || !cJSON_IsNumber(b)) continue;
                if (m >= group &&
                    gs_svg_px(&p, a->valuedouble / 1e3) - gs_svg_px(&p, s0 / 1e3) >= 1.0)
                    break;
                if (a->valuedouble < s0) s0 = a->valuedouble;
                if (b->valuedouble > s1) s1 = b->valuedouble;
                const cJSON *c = cJSON_GetArrayItem(it, 4);
                cnt += cJSON_IsNumber(c) ? c->valuedouble : 1;
                busy += slice_busy(it);
                if (m++ == 0) {
                    const cJSON *nm = cJSON_GetArrayItem(it, 2), *sr = cJSON_GetArrayItem(it, 3);
                    iname = cJSON_IsString(nm) ? nm->valuestring : "";
                    src = cJSON_IsString(sr) ? sr->valuestring : "";
                }
            }
            if (!(s1 >= s0)) continue;
            double x0 = gs_svg_px(&p, s0 / 1e3), x1 = gs_svg_px(&p, s1 / 1e3);
            /* a bar that spans idle time is drawn as dense as it is busy, and one widened to
             * half a pixel to be seen is drawn thinner by as much */
            const double density = s1 > s0 ? GS_MIN(1.0, busy / (s1 - s0)) : 1.0;
            const double w = x1 - x0 < 0.5 ? 0.5 : x1 - x0;
            const double ink = GS_MIN(1.0, density * (x1 - x0) / w);
            gs_sb_printf(sb, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"12\"", x0, y, w);
            if (ink < 0.995) { /* " opacity=\".123\"": short, the report has many bars */
                char op[16];
                snprintf(op, sizeof op, "%.3f", GS_MAX(0.001, ink));
                gs_sb_printf(sb, " opacity=\"%s\"", op + (op[0] == '0'));
            }
            gs_sb_puts(sb, "><title>");
            gs_rp_text(sb, iname);
            if (cnt > 1) gs_sb_printf(sb, " (×%.0f)", cnt);
            gs_sb_puts(sb, " — ");
            /* kernels/ is where every kernel source is: the file name says which */
            gs_rp_text(sb, !strncmp(src, "kernels/", 8) ? src + 8 : src);
            gs_sb_printf(sb, "\n%.4g–%.4g µs</title></rect>", s0 / 1e3, s1 / 1e3);
        }
        gs_sb_puts(sb, "</g>");
    }
    gs_sb_puts(sb, "</svg>");
    if (ntr > shown)
        gs_sb_printf(sb, "<p class=\"note\">%d more tracks not drawn (see the trace).</p>",
                     ntr - shown);
}

/* The timelines are sampled to one row per kernel and variant: its bf16 row, or, when that has
 * no timeline (or there is none), each of its other rows (the file keeps every timeline).
 * sampled[k] for every row; NULL on OOM (then every row is drawn). */
static int *sampled_rows(const rep *r)
{
    int *has = gs_calloc(r->n_rows + 1, sizeof *has), *out = gs_calloc(r->n_rows + 1, sizeof *out);
    if (!has || !out) {
        gs_free(has);
        gs_free(out);
        return NULL;
    }
    for (size_t k = 0; k < r->n_rows; k++)
        for (int g = 0; g < r->n_gens && !has[k]; g++)
            has[k] = timeline_job(r, k, g) != NULL;
    for (size_t k = 0; k < r->n_rows; k++) {
        const krow *row = &r->rows[k];
        out[k] = 1;
        if (!strcmp(row->dtype, "bf16")) continue;
        for (size_t i = 0; i < r->n_rows && out[k]; i++) {
            const krow *o = &r->rows[i];
            if (has[i] && !strcmp(o->dtype, "bf16") && !strcmp(o->kernel, row->kernel) &&
                !strcmp(o->variant, row->variant))
                out[k] = 0;
        }
    }
    gs_free(has);
    return out;
}

void gs_rp_sec_timelines(rep *r)
{
    gs_sb *sb = r->sb;
    gs_rp_section_open(sb, "timelines", "Timelines");
    gs_sb_puts(sb,
               "<p>For each kernel and variant (its bf16 row; the other dtypes' timelines are "
               "in the results file), the largest shape with a timeline: engines and DMA "
               "queues over time (aggregated: a bar may stand for several instructions, ×N in its "
               "tooltip, and one "
               "that spans idle time is drawn as dense as the track was busy in it; each "
               "track ends with its busy share of the run). The generations of one kernel share "
               "one time axis, so bar lengths compare. Hover "
               "a bar for the instruction and the kernel source line.</p>\n"
               "<p class=\"legend\">");
    static const struct {
        const char *name;
        int colour;
    } kinds[] = {{"tensor", 3}, {"vector", 0}, {"scalar", 5}, {"gpsimd", 4}, {"DMA queues", 1}};
    for (size_t i = 0; i < GS_ARRAY_LEN(kinds); i++)
        gs_sb_printf(sb, "<span><b class=\"sw\" style=\"color:%s\">■</b> %s</span> ",
                     gs_svg_colour(kinds[i].colour), kinds[i].name);
    gs_sb_puts(sb, "</p>\n");
    int *sampled = sampled_rows(r);
    int ntl = 0;
    for (size_t k = 0; k < r->n_rows; k++)
        for (int g = 0; g < r->n_gens; g++)
            ntl += (!sampled || sampled[k]) && timeline_job(r, k, g) != NULL;
    if (!ntl) gs_sb_puts(sb, "<p>No job in these results carries a timeline.</p>\n");
    int budget = ntl ? TIMELINE_TOTAL_SLICES / ntl : 0;
    if (budget < TIMELINE_MIN_SLICES) budget = TIMELINE_MIN_SLICES;
    int first = 1;
    for (size_t k = 0; k < r->n_rows; k++) {
        if (gs_rp_budget_hit(r)) break;
        if (sampled && !sampled[k]) continue;
        const rjob *tj[MAX_GENS];
        double axis = 0; /* the longest of the row's timelines */
        int any = 0;
        for (int g = 0; g < r->n_gens; g++) {
            tj[g] = timeline_job(r, k, g);
            if (!tj[g]) continue;
            any = 1;
            if (timeline_total(tj[g]) > axis) axis = timeline_total(tj[g]);
        }
        if (!any) continue;
        gs_sb_printf(sb, "<details class=\"tl\"%s><summary>", first ? " open" : "");
        first = 0;
        gs_rp_row_label(sb, &r->rows[k]);
        gs_sb_puts(sb, "</summary>");
        for (int g = 0; g < r->n_gens; g++) {
            const rjob *j = tj[g];
            if (!j) continue;
            const cJSON *tl = gs_rp_jget(j->o, "timeline");
            gs_sb_puts(sb, "<h4>");
            gs_rp_text(sb, j->id);
            gs_sb_puts(sb, " — ");
            gs_rp_put_time(sb, j->time_ns);
            gs_sb_puts(sb, "</h4>");
            timeline_chart(r, j, tl, budget, axis);
            const char *trace = gs_rp_jstr(j->o, "trace");
            if (*trace) {
                gs_sb_puts(sb, "<p class=\"note\">Full trace: ");
                if (gs_rp_safe_relative_link(trace)) {
                    gs_sb_puts(sb, "<a href=\"");
                    gs_rp_text(sb, trace);
                    gs_sb_puts(sb, "\">");
                    gs_rp_text(sb, trace);
                    gs_sb_puts(sb, "</a>");
                } else {
                    gs_sb_puts(sb, "<code>");
                    gs_rp_text(sb, trace);
                    gs_sb_puts(sb, "</code>");
                }
                gs_sb_puts(sb, " (Perfetto / chrome://tracing JSON)</p>");
            }
        }
        gs_sb_puts(sb, "</details>\n");
    }
    gs_free(sampled);
    gs_rp_section_close(sb);
}

/* Grouped bars: one group per generation, one bar per variant (time in µs). */
void gs_rp_sec_variants(rep *r)
{
    gs_sb *sb = r->sb;
    gs_rp_section_open(sb, "variants", "Variants");
    gs_sb_puts(sb, "<p>Kernels with more than one variant (the matmul ladder, fused vs "
                   "unfused): time of each variant at its largest shape, per generation (lower "
                   "is better).</p>\n<div class=\"charts\">");
    int any = 0;
    for (size_t k = 0; k < r->n_rows; k++) {
        if (gs_rp_budget_hit(r)) break;
        /* one chart per kernel+dtype, drawn at the first row of that pair */
        int first = 1, nvar = 0;
        for (size_t e = 0; e < k && first; e++)
            first = !(strcmp(r->rows[e].kernel, r->rows[k].kernel) == 0 &&
                      strcmp(r->rows[e].dtype, r->rows[k].dtype) == 0);
        if (!first) continue;
        size_t vrows[16];
        for (size_t e = k; e < r->n_rows && nvar < 16; e++)
            if (!strcmp(r->rows[e].kernel, r->rows[k].kernel) &&
                !strcmp(r->rows[e].dtype, r->rows[k].dtype))
                vrows[nvar++] = e;
        if (nvar < 2) continue;
        any = 1;
        double ymax = 0;
        for (int v = 0; v < nvar; v++)
            for (int g = 0; g < r->n_gens; g++) {
                const rjob *j = gs_rp_representative(r, vrows[v], g);
                if (j && j->time_ns / 1e3 > ymax) ymax = j->time_ns / 1e3;
            }
        gs_svg_plot p;
        gs_svg_plot_init(&p, 460, 300);
        p.top = 48;
        p.x = (gs_svg_axis){0, 1, 0, "generation"};
        p.y = (gs_svg_axis){0, ymax > 0 ? ymax : 1, 0, "time (µs)"};
        gs_svg_axis_nice(&p.y);
        gs_sb_puts(sb, "<figure><figcaption>");
        gs_rp_text(sb, r->rows[k].kernel);
        gs_sb_puts(sb, " ");
        gs_rp_text(sb, r->rows[k].dtype);
        gs_sb_puts(sb, "</figcaption>");
        /* y axis only: the x positions are categories */
        gs_sb_printf(sb,
                     "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
                     "height=\"%.0f\" role=\"img\" aria-label=\"variants\">",
                     p.width, p.height, p.width, p.height);
        for (int i = 0; i <= 5; i++) {
            double v = p.y.lo + (p.y.hi - p.y.lo) * i / 5, y = gs_svg_py(&p, v);
            gs_sb_printf(sb,
                         "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                         "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
                         p.left, y, p.width - p.right, y, p.left - 4, y + 4);
            gs_svg_num(sb, v);
            gs_sb_puts(sb, "</text>");
        }
        gs_sb_printf(sb, "<g transform=\"translate(14 %.1f) rotate(-90)\">",
                     (p.top + p.height - p.bottom) / 2);
        gs_svg_text(sb, 0, 0, "middle", "axis", "time (µs)");
        gs_sb_puts(sb, "</g>");
        double gw = (p.width - p.left - p.right) / (r->n_gens ? r->n_gens : 1);
        double bw = gw * 0.8 / nvar;
        for (int g = 0; g < r->n_gens; g++) {
            double gx = p.left + gw * g + gw * 0.1;
            gs_svg_text(sb, gx + gw * 0.4, p.height - p.bottom + 14, "middle", NULL, r->gens[g]);
            for (int v = 0; v < nvar; v++) {
                const rjob *j = gs_rp_representative(r, vrows[v], g);
                if (!j || !(j->time_ns > 0)) continue;
                double y = gs_svg_py(&p, j->time_ns / 1e3);
                gs_sb_printf(sb,
                             "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                             "fill=\"%s\"><title>",
                             gx + bw * v, y, bw * 0.9, p.height - p.bottom - y, gs_svg_colour(v));
                gs_rp_text(sb, j->id);
                gs_sb_puts(sb, ": ");
                gs_rp_put_time(sb, j->time_ns);
                gs_sb_puts(sb, "</title></rect>");
            }
        }
        gs_svg_text(sb, (p.left + p.width - p.right) / 2, p.height - 6, "middle", "axis",
                    "generation (bars: variants)");
        const char *labels[16], *colours[16];
        for (int v = 0; v < nvar; v++) {
            labels[v] = r->rows[vrows[v]].variant;
            colours[v] = gs_svg_colour(v);
        }
        gs_svg_plot lp = p;
        lp.top = 24;
        gs_svg_legend(sb, &lp, labels, colours, nvar);
        gs_svg_end(sb);
        gs_sb_puts(sb, "</figure>");
    }
    gs_sb_puts(sb, "</div>\n");
    if (!any) gs_sb_puts(sb, "<p>No kernel in these results has more than one variant.</p>\n");
    gs_rp_section_close(sb);
}

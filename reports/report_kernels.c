/*
 * report_kernels.c - the per-kernel tables with one column per generation: portability matrix,
 * where the time goes (engine busy/stall bars) and DMA engines and queues. Each is a
 * gs_rp_kernel_gen_table (report_load.c) with its own cell writer.
 */
#include "report_int.h"

#include <math.h>
#include <string.h>

#include "svg.h"

/* Engines in display order; the results file may lack some (gpsimd on gen1). */
static const char *const engine_names[] = {"tensor", "vector", "scalar", "gpsimd", "dma"};
#define N_ENGINES ((int)GS_ARRAY_LEN(engine_names))
static const char *const stall_keys[] = {"busy_ns", "stall_dep_ns", "stall_dma_ns",
                                         "stall_port_ns"};
static const char *const stall_labels[] = {"busy", "waiting on a dependency", "waiting on DMA",
                                           "waiting on a port"};
static const int stall_colours[] = {3, 0, 1, 5}; /* gs_svg_colour indices */
#define N_STALLS ((int)GS_ARRAY_LEN(stall_keys))

/* Scratch text of the portability matrix, reused from row to row. */
typedef struct portability_ctx {
    gs_sb tip, gens, sts;
} portability_ctx;

/* A matrix row spans several generations and statuses: the filter matches any of its jobs'. */
static void portability_attrs(rep *r, size_t k, void *ctx)
{
    portability_ctx *c = ctx;
    gs_sb_reset(&c->gens);
    gs_sb_reset(&c->sts);
    for (size_t q = 0; q < gs_rp_row_count(r, k); q++) {
        const rjob *j = gs_rp_row_job(r, k, q);
        gs_sb_puts(&c->gens, r->gens[j->gen_i]);
        gs_sb_putc(&c->gens, '|');
        gs_sb_puts(&c->sts, j->status);
        gs_sb_putc(&c->sts, '|');
    }
    gs_rp_filter_attrs(r->sb, gs_sb_cstr(&c->gens), r->rows[k].kernel, gs_sb_cstr(&c->sts));
}

static void portability_cell(rep *r, size_t k, int g, void *ctx)
{
    gs_sb *sb = r->sb, *tip = &((portability_ctx *)ctx)->tip;
    const char *worst = NULL;
    gs_sb_reset(tip);
    for (size_t q = 0; q < gs_rp_row_count(r, k); q++) {
        const rjob *j = gs_rp_row_job(r, k, q);
        if (j->gen_i != g) continue;
        if (!worst || gs_rp_worse_status(worst, j->status)) worst = j->status;
        gs_sb_printf(tip, "%s%s: %s", tip->len ? "\n" : "", j->shape, j->status);
        if (isfinite(j->time_ns)) {
            gs_sb_puts(tip, ", ");
            gs_rp_put_time(tip, j->time_ns);
        }
        if (*j->reason) /* a tooltip shows the start of a long reason */
            gs_sb_printf(tip, " — %.200s%s", j->reason, strlen(j->reason) > 200 ? "…" : "");
    }
    if (!worst) {
        gs_sb_puts(sb, "<td class=\"none\" data-v=\"\">not run</td>");
        return;
    }
    const rjob *rep_job = gs_rp_representative(r, k, g);
    gs_sb_printf(sb, "<td class=\"cell %s\" tabindex=\"0\" title=\"", gs_rp_status_class(worst));
    gs_rp_text(sb, gs_sb_cstr(tip));
    gs_sb_puts(sb, "\"");
    gs_rp_put_dv(sb, rep_job ? rep_job->time_ns : (double)NAN);
    gs_sb_puts(sb, "><b>");
    gs_rp_text(sb, worst);
    gs_sb_puts(sb, "</b><br>");
    gs_rp_put_time(sb, rep_job ? rep_job->time_ns : (double)NAN);
    gs_sb_puts(sb, "</td>");
}

void gs_rp_sec_portability(rep *r)
{
    gs_sb *sb = r->sb;
    gs_rp_section_open(sb, "portability", "Portability matrix");
    gs_sb_puts(sb, "<p>Worst status over each kernel's shapes, and the time at its largest "
                   "shape. Hover or focus a cell for every shape's status, time and reason.</p>\n");
    portability_ctx c;
    gs_sb_init(&c.tip);
    gs_sb_init(&c.gens);
    gs_sb_init(&c.sts);
    gs_rp_kernel_gen_table(
        r, "sortable filterable matrix",
        &(gs_rp_kernel_cells){.row_attrs = portability_attrs, .cell = portability_cell, .ctx = &c});
    if (!gs_sb_ok(&c.tip) || !gs_sb_ok(&c.gens) || !gs_sb_ok(&c.sts)) sb->oom = 1;
    gs_sb_free(&c.tip);
    gs_sb_free(&c.gens);
    gs_sb_free(&c.sts);
    gs_rp_section_close(sb);
}

/* DMA queue IDs per core of generation g (results from before the engine x queue model have
 * only core.dma.engines, which then meant queues). */
static double dma_queues(const rep *r, int g)
{
    const cJSON *params = gs_rp_jget(r->cfg[g], "params");
    double q = gs_rp_jnum(gs_rp_jget(params, "core.dma.queues"), "value");
    if (!(q > 0)) q = gs_rp_jnum(gs_rp_jget(params, "core.dma.engines"), "value");
    return q > 0 ? q : 1;
}

/* The DMA engines and queue IDs of a kernel row's largest shape: how many engines its
 * transfers kept busy and how evenly (a transfer over few partitions uses few engines). */
static void dma_cell(rep *r, size_t k, int g, void *ctx)
{
    (void)ctx;
    gs_sb *sb = r->sb;
    const rjob *j = gs_rp_representative(r, k, g);
    const cJSON *dma = j ? gs_rp_jget(j->o, "dma") : NULL;
    const cJSON *busy = gs_rp_jget(dma, "engine_busy_ns");
    const cJSON *qt = gs_rp_jget(dma, "queue_transfers");
    double cores = j ? gs_rp_jnum(j->o, "cores_used") : (double)NAN;
    if (!(cores > 0)) cores = 1;
    if (!j || !cJSON_IsArray(busy) || !(j->time_ns > 0)) {
        gs_sb_puts(sb, "<td class=\"none\">—</td>");
        return;
    }
    int used = 0, n = 0, queues = 0;
    double max = 0, sum = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, busy)
    {
        n++;
        if (!cJSON_IsNumber(v) || !(v->valuedouble > 0)) continue;
        used++;
        sum += v->valuedouble;
        if (v->valuedouble > max) max = v->valuedouble;
    }
    cJSON_ArrayForEach(v, qt) queues += cJSON_IsNumber(v) && v->valuedouble > 0;
    const double denom = j->time_ns * cores; /* summed over the cores used */
    gs_sb_printf(sb, "<td>%d of %d engines; busiest %.0f %%, mean %.0f %%; %d queue%s</td>", used,
                 n, 100 * max / denom, used ? 100 * sum / used / denom : 0.0, queues,
                 queues == 1 ? "" : "s");
}

/* A kernel row's largest shape on one generation: a bar per engine, split into busy and the
 * stall kinds as shares of the run, and the bottleneck under it. */
static void engine_cell(rep *r, size_t k, int g, void *ctx)
{
    (void)ctx;
    gs_sb *sb = r->sb;
    const rjob *j = gs_rp_representative(r, k, g);
    const cJSON *eng = j ? gs_rp_jget(j->o, "engines") : NULL;
    double t = j ? j->time_ns : (double)NAN;
    if (!eng || !(t > 0)) {
        gs_sb_puts(sb, "<td class=\"none\">—</td>");
        return;
    }
    double cores = gs_rp_jnum(j->o, "cores_used");
    if (!(cores > 0)) cores = 1;
    gs_sb_puts(sb, "<td>");
    gs_svg_plot p;
    gs_svg_plot_init(&p, 230, 18 + 14.0 * N_ENGINES + 24);
    p.left = 50;
    p.top = 8;
    p.bottom = 32;
    p.right = 12;
    p.x = (gs_svg_axis){0, 100, 0, "% of run time"};
    p.y = (gs_svg_axis){0, 1, 0, NULL};
    /* the frame without y ticks: engine names label the rows instead */
    gs_sb_printf(sb,
                 "<svg class=\"mini\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
                 "height=\"%.0f\" role=\"img\" aria-label=\"engine time\">",
                 p.width, p.height, p.width, p.height);
    double x0 = p.left, x1 = p.width - p.right, y = p.top;
    for (int e = 0; e < N_ENGINES; e++, y += 14) {
        const cJSON *es = gs_rp_jget(eng, engine_names[e]);
        gs_svg_text(sb, x0 - 4, y + 10, "end", NULL, engine_names[e]);
        if (!es) continue;
        /* DMA: busy and port waits are the engine pool's occupancy (per core), the
         * dependency stalls are summed over its queue IDs */
        const int is_dma = !strcmp(engine_names[e], "dma");
        double acc = 0;
        for (int s = 0; s < N_STALLS; s++) {
            double v = gs_rp_jnum(es, stall_keys[s]);
            if (!(v > 0)) continue;
            const double denom = t * cores * (is_dma && (s == 1 || s == 2) ? dma_queues(r, g) : 1);
            double f = v / denom * 100;
            if (acc + f > 100) f = 100 - acc;
            if (f <= 0) continue;
            gs_sb_printf(sb,
                         "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"11\" "
                         "fill=\"%s\"><title>%s %s: ",
                         x0 + acc / 100 * (x1 - x0), y, f / 100 * (x1 - x0),
                         gs_svg_colour(stall_colours[s]), engine_names[e], stall_labels[s]);
            gs_rp_put_time(sb, v);
            gs_sb_printf(sb, " (%.1f %%)</title></rect>", v / denom * 100);
            acc += f;
        }
    }
    gs_sb_printf(sb, "<line class=\"axisl\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x0,
                 y + 2, x1, y + 2);
    for (int tk = 0; tk <= 100; tk += 50)
        gs_sb_printf(sb, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d</text>",
                     x0 + tk / 100.0 * (x1 - x0), y + 14, tk);
    gs_svg_text(sb, (x0 + x1) / 2, y + 27, "middle", "axis", "% of run time");
    gs_sb_puts(sb, "</svg><br>bottleneck: <b>");
    gs_rp_text(sb, *gs_rp_jstr(j->o, "bottleneck") ? gs_rp_jstr(j->o, "bottleneck") : "—");
    gs_sb_puts(sb, "</b> · ");
    gs_rp_text(sb, j->shape);
    gs_sb_puts(sb, "</td>");
}

void gs_rp_sec_engines(rep *r)
{
    gs_sb *sb = r->sb;
    gs_rp_section_open(sb, "engines", "Where the time goes");
    gs_sb_puts(sb,
               "<p>Per engine, the share of the run each engine spent busy or stalled (time "
               "summed over cores, divided by run time × cores; for DMA, busy is the DMA engines' "
               "mean occupancy and its dependency waits are averaged over its queue IDs), for each "
               "kernel row's largest shape. The bottleneck is the engine on "
               "the critical path.</p>\n<p class=\"legend\">");
    for (int s = 0; s < N_STALLS; s++)
        gs_sb_printf(sb, "<span><b class=\"sw\" style=\"color:%s\">■</b> %s</span> ",
                     gs_svg_colour(stall_colours[s]), stall_labels[s]);
    gs_sb_puts(sb, "</p>\n");
    gs_rp_kernel_gen_table(r, "filterable engines", &(gs_rp_kernel_cells){.cell = engine_cell});
    gs_sb_puts(sb, "<h3>DMA engines and queues</h3>\n<p>Per generation: the DMA engines the run "
                   "used (of the core's), the busiest engine's busy share of the run, the mean "
                   "over the engines used, and the queue IDs with transfers. Each transfer is "
                   "split over the engines by partition group, so a kernel moving few "
                   "partitions per transfer leaves engines idle.</p>\n");
    gs_rp_kernel_gen_table(r, "filterable", &(gs_rp_kernel_cells){.cell = dma_cell});
    gs_rp_section_close(sb);
}

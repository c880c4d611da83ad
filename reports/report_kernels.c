/*
 * report_kernels.c - the per-kernel tables with one column per generation: portability matrix,
 * where the time goes (engine busy/stall bars) and DMA engines and queues. Each is a
 * gs_rp_kernel_gen_table (report_load.c) with its own cell writer.
 */
#include "report_int.h"

#include <math.h>
#include <string.h>

#include "gs/stats.h"
#include "svg.h"

/* Engines in display order; the results file may lack some (gpsimd on gen1). */
static const char *const engine_names[] = {"tensor", "vector", "scalar", "gpsimd", "dma"};
#define N_ENGINES ((int)GS_ARRAY_LEN(engine_names))
static const char *const stall_keys[] = {"busy_ns", "stall_dep_ns", "stall_dma_ns",
                                         "stall_port_ns"};
static const char *const stall_labels[] = {"busy", "waiting on a dependency", "waiting on DMA",
                                           "waiting on a port"};
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
 * stall kinds as shares of the run (the bar's full width is the run), and what bounds it under
 * it. Compact, as there is one per kernel row and generation: the stall kinds' colours are the
 * stylesheet's (.st0 ...), the scale is the section's caption. */
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
    const int x0 = 46, w = 170, row = 13;
    const int height = row * N_ENGINES + 4;
    gs_sb_printf(sb,
                 "<svg class=\"mini eb\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
                 "role=\"img\" aria-label=\"engine time\">",
                 x0 + w + 4, height, x0 + w + 4, height);
    /* one light band behind the bars marks their full width (the run) */
    gs_sb_printf(sb, "<rect class=\"eb0\" x=\"%d\" y=\"0\" width=\"%d\" height=\"%d\"/>", x0, w,
                 height);
    int y = 2;
    for (int e = 0; e < N_ENGINES; e++, y += row) {
        const cJSON *es = gs_rp_jget(eng, engine_names[e]);
        gs_sb_printf(sb, "<text x=\"%d\" y=\"%d\">%s</text>", x0 - 4, y + 9, engine_names[e]);
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
                         "<rect class=\"st%d\" x=\"%.4g\" y=\"%d\" width=\"%.3g\" "
                         "height=\"10\"><title>%s %s: ",
                         s, x0 + acc / 100 * w, y, f / 100 * w, engine_names[e], stall_labels[s]);
            gs_rp_put_time(sb, v);
            gs_sb_printf(sb, " (%.1f %%)</title></rect>", v / denom * 100);
            acc += f;
        }
    }
    gs_sb_puts(sb, "</svg><br><b>");
    gs_rp_text(sb, *gs_rp_job_bound(j->o) ? gs_rp_job_bound(j->o) : "—");
    gs_sb_puts(sb, "</b> · ");
    gs_rp_text(sb, j->shape);
    gs_sb_puts(sb, "</td>");
}

/* Bytes in a readable decimal unit (MB = 10^6 bytes, as GB/s is 10^9 bytes per second). */
static void put_mb(gs_sb *sb, double b)
{
    if (b >= 1e9)
        gs_sb_printf(sb, "%.3g GB", b / 1e9);
    else if (b >= 1e6)
        gs_sb_printf(sb, "%.3g MB", b / 1e6);
    else if (b >= 1e3)
        gs_sb_printf(sb, "%.3g kB", b / 1e3);
    else
        gs_sb_printf(sb, "%.0f B", b);
}

/* A kernel row's largest shape: bytes its instructions read and wrote per memory level (HBM,
 * SBUF, PSUM) and their sum over the run's time. */
static void level_cell(rep *r, size_t k, int g, void *ctx)
{
    (void)ctx;
    gs_sb *sb = r->sb;
    const rjob *j = gs_rp_representative(r, k, g);
    const cJSON *lv = j ? gs_rp_jget(j->o, "levels") : NULL;
    if (!j || !cJSON_IsObject(lv) || !(j->time_ns > 0)) {
        gs_sb_puts(sb, "<td class=\"none\">—</td>");
        return;
    }
    static const char *const names[] = {"hbm", "sbuf", "psum"};
    static const char *const labels[] = {"HBM", "SBUF", "PSUM"};
    gs_sb_puts(sb, "<td class=\"levels\">");
    for (int m = 0; m < 3; m++) {
        const cJSON *o = gs_rp_jget(lv, names[m]);
        const double rd = gs_rp_jnum(o, "read_bytes"), wr = gs_rp_jnum(o, "write_bytes");
        if (m) gs_sb_puts(sb, "<br>");
        gs_sb_printf(sb, "<b>%s</b> ", labels[m]);
        if (!(rd >= 0) || !(wr >= 0)) {
            gs_sb_puts(sb, "—");
            continue;
        }
        put_mb(sb, rd);
        gs_sb_puts(sb, " read, ");
        put_mb(sb, wr);
        gs_sb_printf(sb, " written · %.4g GB/s", (rd + wr) / j->time_ns);
    }
    gs_sb_puts(sb, "</td>");
}

void gs_rp_sec_engines(rep *r)
{
    gs_sb *sb = r->sb;
    gs_rp_section_open(sb, "engines", "Where the time goes");
    gs_sb_printf(
        sb,
        "<p>Per engine, the share of the run each engine spent busy or stalled (time "
        "summed over cores, divided by run time × cores; for DMA, busy is the DMA engines' "
        "mean occupancy and its dependency waits are averaged over its queue IDs), for each "
        "kernel row's largest shape; each bar's full width is the run's time. Under each: "
        "throughput-bound on the busiest "
        "resource when it was occupied for at least %.0f%% of the run, else latency-bound "
        "with the critical path's largest parts (dependency chains and latencies: no "
        "resource saturated).</p>\n<p class=\"legend\">",
        100 * GS_THROUGHPUT_SHARE);
    for (int s = 0; s < N_STALLS; s++)
        gs_sb_printf(sb, "<span><b class=\"sw st%d\">■</b> %s</span> ", s, stall_labels[s]);
    gs_sb_puts(sb, "</p>\n");
    gs_rp_kernel_gen_table(r, "filterable engines", &(gs_rp_kernel_cells){.cell = engine_cell});
    gs_sb_puts(sb, "<h3>DMA engines and queues</h3>\n<p>Per generation: the DMA engines the run "
                   "used (of the core's), the busiest engine's busy share of the run, the mean "
                   "over the engines used, and the queue IDs with transfers. Each transfer is "
                   "split over the engines by partition group, so a kernel moving few "
                   "partitions per transfer leaves engines idle.</p>\n");
    gs_rp_kernel_gen_table(r, "filterable", &(gs_rp_kernel_cells){.cell = dma_cell});
    gs_sb_puts(sb, "<h3>Memory levels</h3>\n<p>Per generation: the bytes the run's instructions "
                   "read and wrote in each level (every input operand in a level is a read, "
                   "every output a write; an accumulating matmul also reads its PSUM tile; a "
                   "transfer from HBM to SBUF is an HBM read and an SBUF write), and their sum "
                   "over the run's time. Operand traffic, not port occupancy.</p>\n");
    gs_rp_kernel_gen_table(r, "filterable", &(gs_rp_kernel_cells){.cell = level_cell});
    gs_rp_section_close(sb);
}

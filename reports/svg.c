/* svg.c - inline-SVG plot frames, axes, legends (see svg.h). */
#include "svg.h"

#include "report_int.h"

#include <math.h>
#include <string.h>

/* Okabe-Ito: black, orange, sky blue, bluish green, yellow, blue, vermillion, reddish purple.
 * Yellow is dropped from the cycle: too faint on white for thin lines and small points. */
static const char *const okabe_ito[] = {"#E69F00", "#56B4E9", "#009E73", "#0072B2",
                                        "#D55E00", "#CC79A7", "#000000"};

const char *gs_svg_colour(int i)
{
    int n = (int)GS_ARRAY_LEN(okabe_ito);
    return okabe_ito[((i % n) + n) % n];
}

void gs_svg_plot_init(gs_svg_plot *p, double width, double height)
{
    memset(p, 0, sizeof *p);
    p->width = width;
    p->height = height;
    /* room for tick labels on the left/bottom, axis titles outside them, a legend on top */
    p->left = 64;
    p->right = 16;
    p->top = 28;
    p->bottom = 44;
}

void gs_svg_axis_nice(gs_svg_axis *a)
{
    double lo = a->lo, hi = a->hi;
    if (a->log) {
        if (!(lo > 0) || !isfinite(lo)) lo = hi > 0 && isfinite(hi) ? hi / 10 : 1;
        if (!(hi > 0) || !isfinite(hi)) hi = lo * 10;
        lo = pow(10, floor(log10(lo)));
        hi = pow(10, ceil(log10(hi)));
        if (hi <= lo) hi = lo * 10;
    } else {
        if (!isfinite(lo)) lo = 0;
        if (!isfinite(hi)) hi = lo + 1;
        if (lo >= 0) lo = 0;
        if (hi <= lo) hi = lo + 1;
        double span = hi - lo, step = pow(10, floor(log10(span)));
        if (span / step < 3) step /= 2;
        hi = ceil(hi / step) * step;
        if (lo < 0) lo = floor(lo / step) * step;
    }
    a->lo = lo;
    a->hi = hi;
}

static double frac(const gs_svg_axis *a, double v)
{
    double f;
    if (a->log)
        f = v > 0 ? (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo)) : 0;
    else
        f = (v - a->lo) / (a->hi - a->lo);
    if (!isfinite(f)) f = 0;
    return f < 0 ? 0 : f > 1 ? 1 : f;
}

double gs_svg_px(const gs_svg_plot *p, double x)
{
    return p->left + frac(&p->x, x) * (p->width - p->left - p->right);
}

double gs_svg_py(const gs_svg_plot *p, double y)
{
    return p->height - p->bottom - frac(&p->y, y) * (p->height - p->top - p->bottom);
}

void gs_svg_num(gs_sb *sb, double v)
{
    double a = fabs(v);
    if (v == 0)
        gs_sb_puts(sb, "0");
    else if (a >= 1e-3 && a < 1e4)
        gs_sb_printf(sb, "%g", v);
    else
        gs_sb_printf(sb, "%.0e", v);
}

void gs_svg_text(gs_sb *sb, double x, double y, const char *anchor, const char *cls,
                 const char *text)
{
    gs_sb_printf(sb, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"", x, y, anchor);
    if (cls) gs_sb_printf(sb, " class=\"%s\"", cls);
    gs_sb_puts(sb, ">");
    gs_rp_text(sb, text);
    gs_sb_puts(sb, "</text>");
}

/* Tick values: each decade on a log axis (every other one past 8 decades), 5 steps on a
 * linear one. */
static int ticks(const gs_svg_axis *a, double *out, int max)
{
    int n = 0;
    if (a->log) {
        int d0 = (int)floor(log10(a->lo) + 1e-9), d1 = (int)ceil(log10(a->hi) - 1e-9);
        int step = d1 - d0 > 8 ? 2 : 1;
        for (int d = d0; d <= d1 && n < max; d += step)
            out[n++] = pow(10, d);
    } else {
        for (int i = 0; i <= 5 && n < max; i++)
            out[n++] = a->lo + (a->hi - a->lo) * i / 5.0;
    }
    return n;
}

void gs_svg_begin(gs_sb *sb, const gs_svg_plot *p, const char *aria_label)
{
    gs_sb_printf(sb,
                 "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
                 "role=\"img\" aria-label=\"",
                 p->width, p->height, p->width, p->height);
    gs_rp_text(sb, aria_label);
    gs_sb_puts(sb, "\">");
    double x0 = p->left, x1 = p->width - p->right, y0 = p->height - p->bottom, y1 = p->top;
    double t[32];
    int n = ticks(&p->x, t, 32);
    for (int i = 0; i < n; i++) {
        double x = gs_svg_px(p, t[i]);
        gs_sb_printf(sb, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                     x, y0, x, y1);
        gs_sb_printf(sb, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, y0 + 14);
        gs_svg_num(sb, t[i]);
        gs_sb_puts(sb, "</text>");
    }
    n = ticks(&p->y, t, 32);
    for (int i = 0; i < n; i++) {
        double y = gs_svg_py(p, t[i]);
        gs_sb_printf(sb, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                     x0, y, x1, y);
        gs_sb_printf(sb, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", x0 - 4, y + 4);
        gs_svg_num(sb, t[i]);
        gs_sb_puts(sb, "</text>");
    }
    gs_sb_printf(sb, "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
                 x0, y1, x1 - x0, y0 - y1);
    if (p->x.label) gs_svg_text(sb, (x0 + x1) / 2, p->height - 6, "middle", "axis", p->x.label);
    if (p->y.label) {
        gs_sb_printf(sb, "<g transform=\"translate(14 %.1f) rotate(-90)\">", (y0 + y1) / 2);
        gs_svg_text(sb, 0, 0, "middle", "axis", p->y.label);
        gs_sb_puts(sb, "</g>");
    }
}

void gs_svg_end(gs_sb *sb)
{
    gs_sb_puts(sb, "</svg>");
}

void gs_svg_legend(gs_sb *sb, const gs_svg_plot *p, const char *const *labels,
                   const char *const *colours, int n)
{
    /* right-aligned row; widths estimated at 6.5 px per character of the 11 px font */
    double w = 0;
    for (int i = 0; i < n; i++)
        w += 18 + 6.5 * (double)strlen(labels[i]) + 10;
    double x = p->width - p->right - w;
    if (x < p->left) x = p->left;
    gs_sb_puts(sb, "<g class=\"legend\">");
    for (int i = 0; i < n; i++) {
        gs_sb_printf(sb, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>", x,
                     p->top - 20, colours[i]);
        gs_svg_text(sb, x + 16, p->top - 10, "start", NULL, labels[i]);
        x += 18 + 6.5 * (double)strlen(labels[i]) + 10;
    }
    gs_sb_puts(sb, "</g>");
}

/*
 * svg.h - small inline-SVG chart helpers for the HTML report: a plot frame with labelled linear
 * or log axes, the Okabe-Ito colour-blind safe palette, and escaped text. Everything is written
 * through gs/strbuf.h; every string argument that can come from an input file is escaped here.
 */
#ifndef GS_REPORT_SVG_H
#define GS_REPORT_SVG_H

#include "gs/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Okabe & Ito (2008) palette, black first: distinguishable under the common colour-vision
 * deficiencies. gs_svg_colour(i) cycles through the 7 colours after black. */
const char *gs_svg_colour(int i);

typedef struct gs_svg_axis {
    double lo, hi;     /* data range (both > 0 for a log axis) */
    int log;           /* 1: log10 scale */
    const char *label; /* axis title with its unit, e.g. "time (us)" */
} gs_svg_axis;

/* A plot: an SVG of width x height pixels with margins for the axes. */
typedef struct gs_svg_plot {
    double width, height;
    double left, right, top, bottom; /* margins in pixels */
    gs_svg_axis x, y;
} gs_svg_plot;

/* Initialise a plot with the default margins. */
void gs_svg_plot_init(gs_svg_plot *p, double width, double height);
/* Widen [lo, hi] to "nice" bounds for the axis type (decades on a log axis, 0-based on a
 * linear one when lo >= 0). Degenerate or non-finite ranges become a usable default. */
void gs_svg_axis_nice(gs_svg_axis *a);
/* Data -> pixel coordinates (clamped to the plot area). */
double gs_svg_px(const gs_svg_plot *p, double x);
double gs_svg_py(const gs_svg_plot *p, double y);

/* Open <svg> with a viewBox, role="img" and the aria-label (escaped); draw the frame, grid,
 * ticks and axis titles. Close with gs_svg_end. */
void gs_svg_begin(gs_sb *sb, const gs_svg_plot *p, const char *aria_label);
void gs_svg_end(gs_sb *sb);
/* <text> at (x, y) pixels; anchor is "start", "middle" or "end"; text is escaped. */
void gs_svg_text(gs_sb *sb, double x, double y, const char *anchor, const char *cls,
                 const char *text);
/* A compact number for tick labels: 1e-3 .. 1e4 plainly, else with an SI-like exponent. */
void gs_svg_num(gs_sb *sb, double v);
/* A legend: n coloured swatches with labels, laid out in one row at the top right. */
void gs_svg_legend(gs_sb *sb, const gs_svg_plot *p, const char *const *labels,
                   const char *const *colours, int n);

#ifdef __cplusplus
}
#endif
#endif

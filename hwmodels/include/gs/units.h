/*
 * gs/units.h - quantities with units in config values ("24MiB", "820GiB/s", "2.8GHz", "1.3us").
 *
 * Every kind of quantity has one base unit, the one the models compute in:
 *   size      B          (B KiB MiB GiB TiB KB MB GB TB)
 *   bandwidth B/ns       (B/ns GB/s GiB/s TB/s MB/s MiB/s; 1 GB/s = 1 B/ns)
 *   frequency Hz         (Hz kHz MHz GHz)
 *   time      ns         (ns us ms s)
 * Counts, cycles and factors (GS_UNIT_COUNT, GS_UNIT_REAL, GS_UNIT_CYCLES) are plain numbers and
 * take no unit. Unit names are case-sensitive (MB is not Mb, ms is not Ms).
 */
#ifndef GS_UNITS_H
#define GS_UNITS_H

#include <stddef.h>
#include "gs/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kind of quantity a config value holds (gs_config_fields() gives each key's kind). */
typedef enum gs_unit {
    GS_UNIT_COUNT,     /* plain positive integer */
    GS_UNIT_REAL,      /* plain positive number (ratios, factors) */
    GS_UNIT_BYTES,     /* B KiB MiB GiB KB MB GB */
    GS_UNIT_BANDWIDTH, /* GB/s GiB/s B/ns TB/s MB/s (stored as bytes per ns) */
    GS_UNIT_FREQ,      /* Hz MHz GHz */
    GS_UNIT_TIME,      /* ns us ms s (stored as ns) */
    GS_UNIT_CYCLES     /* plain number of engine cycles */
} gs_unit;

/* Parse "NUMBER[ ]UNIT" (or a plain NUMBER for unitless kinds) into base units. NUMBER is
 * decimal: [+-]digits[.digits][e[+-]digits]; no hex, inf or nan. Leading/trailing blanks are
 * ignored. On failure returns GS_ERR_PARSE (malformed number, missing or wrong unit) or
 * GS_ERR_INVALID (number out of double range) and writes a one-line reason, e.g.
 * "'GHz' is a frequency unit; expected a size (B, KiB, ...)", into msg (if msg_size > 0). The
 * range and sign of the value are not checked here (that is the caller's rule). */
gs_status gs_units_parse(const char *text, gs_unit kind, double *out, char *msg, size_t msg_size);

/* Human name of a kind ("size", "bandwidth", "frequency", "time", "count", "number",
 * "cycle count"). */
const char *gs_unit_kind_name(gs_unit kind);
/* The base unit a kind is stored in ("B", "B/ns", "Hz", "ns", "" for plain numbers). */
const char *gs_unit_base_name(gs_unit kind);
/* A kind's unit in records and documents (results/RESULTS.md: "B", "B/ns", "Hz", "ns", "count",
 * "cycles", "" for plain numbers). */
const char *gs_unit_record_name(gs_unit kind);
/* The accepted unit names of a kind as "B, KiB, MiB, ..." ("" for plain numbers). */
const char *gs_unit_list(gs_unit kind);

/* Format a base-unit value with the unit of its kind that gives the shortest exact-looking text
 * (%.12g of the scaled value): 25165824 bytes -> "24MiB", 2.8e9 Hz -> "2.8GHz", 1300 ns ->
 * "1.3us". Plain kinds print the number alone. Always NUL-terminates buf (size > 0). */
void gs_units_format(double v, gs_unit kind, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif

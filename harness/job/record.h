/*
 * record.h - the JSON records of results.json (schema: results/RESULTS.md): one job record
 * (written by `gensweep run --record FILE` in the job process), one config record (written by
 * the sweep for every config it ran; the job id is jobspec.h's), and the aggregated timeline built
 * from a Perfetto trace. Everything is written through the JSON writer (gs/jsonw.h).
 *
 * Source paths (kernel file:line in reasons and timelines) are written relative to the source
 * tree, so records do not depend on where the repository was cloned.
 */
#ifndef GS_RECORD_H
#define GS_RECORD_H

#include "gs/config.h"
#include "gs/stats.h"
#include "gs/strbuf.h"
#include "job.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Slices per timeline track the aggregation aims at (adjacent slices are merged until a track
 * has at most this many). */
#define GS_TIMELINE_MAX_SLICES 300

/* Everything one job record says. Pointers may be NULL where noted. */
typedef struct gs_record_job_info {
    const gs_job_spec *spec; /* required */
    int functional;          /* 1: functional + timing; 0: timing only */
    gs_job_status status;
    const char *reason;        /* NULL: "" */
    const char *stderr_tail;   /* NULL: "" */
    const gs_run_stats *stats; /* NULL: the model did not run to the end (metrics null) */
    const gs_program *program; /* NULL: not built (instructions, high water null) */
    const gs_job_check *check; /* NULL or !checked: "error": null */
    const char *timeline_json; /* a rendered timeline object, or NULL ("timeline" omitted) */
    const char *lines_json;    /* a rendered lines object (lines.h), or NULL ("lines" omitted) */
    const char *trace_path;    /* NULL: "trace": null */
    const char *trace_error;   /* why the asked-for trace was not written; NULL: no member */
    double wall_s;             /* simulation wall seconds; < 0: no "wall_s" key */
} gs_record_job_info;

/* Append one job object (RESULTS.md "jobs" element) on one line. When info->wall_s >= 0 a
 * "wall_s" key is added; the sweep moves it to "wall"."jobs" so the job stays host-independent.
 * GS_ERR_NOMEM when sb ran out of memory (GS_ERR_INTERNAL: a bug in the writer's use). */
gs_status gs_record_write_job(gs_sb *sb, const gs_record_job_info *info);

/* Append one config object (RESULTS.md "configs" element) on one line; status as above. */
gs_status gs_record_write_config(gs_sb *sb, const gs_config *c);

/* Append the aggregated timeline object of a run of program p (tl: what the run did, as
 * gs_run_opts.on_timeline hands it over)
 * {"total_ns": .., "tracks": [{"name": "c0 tensor", "slices": [[t0, t1, op, src, n], ..]}]}:
 * one track per compute engine or DMA queue that ran instructions; per track, adjacent slices
 * of the same opcode are merged (the allowed gap doubling until at most max_slices remain; if
 * a track alternates opcodes too finely, neighbours of different opcodes are merged too and
 * named "mixed"). Times in ns, as the run's trace gives them. GS_ERR_NOMEM with err set. */
gs_status gs_record_timeline(const gs_program *p, const gs_timeline *tl, double total_ns,
                             int max_slices, gs_sb *sb, gs_error *err);

/* A path made relative to the working directory when it lies under it (else unchanged); points
 * into `path`. */
const char *gs_record_rel_path(const char *path);

/* gs_error_format with paths under the working directory made relative to it. */
void gs_record_format_error(const gs_error *err, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif

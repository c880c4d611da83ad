/*
 * across.c - `gensweep compare --across` (see across.h). The matching and the geometric means
 * live in reports/speedup.c so that the report's verdict and this command agree.
 */
#include "across.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "gs/common.h"
#include "results.h"
#include "speedup.h"

#define ACROSS_MAX_FILES 64

/* Strings from results files reach a terminal: control characters (escape sequences) are
 * printed as '?'. */
static void put_safe(FILE *f, const char *s, int width)
{
    int n = 0;
    for (; s && *s; s++, n++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
    for (; n < width; n++)
        fputc(' ', f);
}

typedef struct mode_filter {
    const char *mode;
} mode_filter;

static int keep_mode(const cJSON *job, void *ctx)
{
    const mode_filter *m = ctx;
    return !m->mode || !strcmp(gs_json_str(job, "mode"), m->mode);
}

/* Generations seen in the documents, for the "not found" message. */
static void list_gens(const cJSON *const *jobs, size_t n, FILE *f)
{
    const char *seen[64];
    int ns = 0;
    for (size_t i = 0; i < n && ns < 64; i++) {
        const char *g = gs_json_str(jobs[i], "generation");
        int dup = !*g;
        for (int k = 0; k < ns && !dup; k++)
            dup = !strcmp(seen[k], g);
        if (dup) continue;
        seen[ns++] = g;
        fputs(ns > 1 ? ", " : "", f);
        put_safe(f, g, 0);
    }
    if (!ns) fputs("none", f);
}

int gs_across_run(const cJSON *const *docs, size_t n, const char *base, const char *other,
                  const char *mode, int quiet, FILE *out, FILE *errout)
{
    size_t total = 0;
    for (size_t d = 0; d < n; d++)
        total += (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(docs[d], "jobs"));
    const cJSON **jobs = gs_calloc(total ? total : 1, sizeof *jobs);
    if (!jobs) {
        fprintf(errout, "gensweep compare: out of memory\n");
        return GS_EXIT_FAIL;
    }
    size_t nj = 0;
    int has_base = 0, has_other = 0;
    for (size_t d = 0; d < n; d++) {
        const cJSON *j;
        cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(docs[d], "jobs"))
        {
            if (!cJSON_IsObject(j)) continue;
            jobs[nj++] = j;
            has_base |= !strcmp(gs_json_str(j, "generation"), base);
            has_other |= !strcmp(gs_json_str(j, "generation"), other);
        }
    }
    if (!has_base || !has_other) {
        fprintf(errout, "gensweep compare --across: generation '");
        put_safe(errout, has_base ? other : base, 0);
        fprintf(errout, "' has no job in the results (generations there: ");
        list_gens(jobs, nj, errout);
        fprintf(errout, ")\n");
        gs_free(jobs);
        return GS_EXIT_USAGE;
    }
    mode_filter mf = {mode};
    gs_speedup_pair p;
    if (gs_speedup_compare(jobs, nj, base, other, keep_mode, &mf, &p) != 0) {
        fprintf(errout, "gensweep compare: out of memory\n");
        gs_free(jobs);
        return GS_EXIT_FAIL;
    }
    int rc = GS_EXIT_OK;
    if (p.n_compared == 0) {
        fprintf(errout, "gensweep compare --across: nothing to compare: ");
        if (p.n_match == 0)
            fprintf(errout,
                    "no job of %s matches a job of %s by kernel/variant/dtype/shape%s%s%s "
                    "(%zu distinct jobs on %s, %zu on %s)\n",
                    base, other, mode ? " in mode '" : "", mode ? mode : "", mode ? "'" : "",
                    p.n_base, base, p.n_other, other);
        else
            fprintf(errout, "%zu jobs match, but none passed with a time on both %s and %s\n",
                    p.n_match, base, other);
        rc = GS_EXIT_USAGE;
        goto done;
    }
    if (!quiet) {
        fprintf(out, "%-58s %12s %12s %9s\n", "kernel/variant/dtype/shape", base, other, "speedup");
        for (size_t i = 0; i < p.n_match; i++) {
            const gs_speedup_match *m = &p.m[i];
            char key[160];
            gs_speedup_key(m->base, key, sizeof key);
            put_safe(out, key, 58);
            double tb = gs_json_num(m->base, "time_ns"), to = gs_json_num(m->other, "time_ns");
            if (isfinite(m->speedup)) {
                fprintf(out, " %10.3fus %10.3fus %8.3fx\n", tb / 1e3, to / 1e3, m->speedup);
            } else {
                fprintf(out, " %12s %12s  not compared (", "", "");
                put_safe(out, gs_json_str(m->base, "status"), 0);
                fputs(" -> ", out);
                put_safe(out, gs_json_str(m->other, "status"), 0);
                fputs(")\n", out);
            }
        }
        fputc('\n', out);
    }
    fprintf(out,
            "speedup of %s over %s (time on %s / time on %s; > 1: %s faster), geomean per "
            "kernel class:\n",
            other, base, base, other, other);
    for (int c = 0; c < p.n_cls; c++)
        fprintf(out, "  %-14s %7.3fx  (%d jobs, %.3fx .. %.3fx)\n", p.cls[c].name, p.cls[c].geomean,
                p.cls[c].n, p.cls[c].min, p.cls[c].max);
    fprintf(out,
            "geomean: %.3fx over %zu jobs (%zu matched, %zu not compared; %zu only on %s, "
            "%zu only on %s)\n",
            p.geomean, p.n_compared, p.n_match, p.n_match - p.n_compared, p.n_base - p.n_match,
            base, p.n_other - p.n_match, other);
done:
    gs_speedup_pair_free(&p);
    gs_free(jobs);
    return rc;
}

int gs_across_main(int argc, char **argv)
{
    const char *base = NULL, *other = NULL, *mode = NULL;
    const char *files[ACROSS_MAX_FILES];
    size_t nf = 0;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--across")) {
            if (i + 2 >= argc || argv[i + 1][0] == '-' || argv[i + 2][0] == '-') {
                fprintf(stderr, "gensweep compare: --across needs two generation names "
                                "(e.g. --across gen3 gen4)\n");
                return GS_EXIT_USAGE;
            }
            base = argv[++i];
            other = argv[++i];
            if (strchr(other, '/') || strstr(other, ".json")) {
                fprintf(stderr,
                        "gensweep compare: --across needs two generation names before "
                        "the results files ('%s' looks like a file)\n",
                        other);
                return GS_EXIT_USAGE;
            }
        } else if (!strcmp(a, "--mode")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "gensweep compare: --mode needs timing or functional\n");
                return GS_EXIT_USAGE;
            }
            mode = argv[++i];
            if (strcmp(mode, "timing") != 0 && strcmp(mode, "functional") != 0) {
                fprintf(stderr, "gensweep compare: --mode '%s': expected timing or functional\n",
                        mode);
                return GS_EXIT_USAGE;
            }
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            quiet = 1;
        } else if (a[0] == '-') {
            fprintf(stderr, "gensweep compare --across: unknown option '%s'\n", a);
            return GS_EXIT_USAGE;
        } else if (nf < ACROSS_MAX_FILES) {
            files[nf++] = a;
        } else {
            fprintf(stderr, "gensweep compare --across: at most %d results files\n",
                    ACROSS_MAX_FILES);
            return GS_EXIT_USAGE;
        }
    }
    if (!base || !other) return GS_EXIT_USAGE;
    if (!strcmp(base, other)) {
        fprintf(stderr, "gensweep compare --across: BASE and OTHER are both '%s'\n", base);
        return GS_EXIT_USAGE;
    }
    if (!nf) files[nf++] = GS_ACROSS_DEFAULT_RESULTS;
    cJSON *docs[ACROSS_MAX_FILES] = {NULL};
    int rc = GS_EXIT_OK;
    for (size_t i = 0; i < nf; i++) {
        gs_error err;
        gs_error_clear(&err);
        docs[i] = gs_results_load(files[i], &err);
        if (!docs[i]) {
            char buf[2048];
            gs_error_format(&err, buf, sizeof buf);
            fprintf(stderr, "gensweep compare: ");
            put_safe(stderr, buf, 0);
            fputc('\n', stderr);
            rc = GS_EXIT_USAGE;
            break;
        }
    }
    if (rc == GS_EXIT_OK)
        rc =
            gs_across_run((const cJSON *const *)docs, nf, base, other, mode, quiet, stdout, stderr);
    for (size_t i = 0; i < nf; i++)
        cJSON_Delete(docs[i]);
    return rc;
}

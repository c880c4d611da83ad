/*
 * cmd_history.c - `gensweep history add|show|export|gate`: the performance history database
 * (history.h) from the command line.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "compare.h"
#include "gs/strbuf.h"
#include "history.h"
#include "results.h"

#define DEFAULT_LAST 10

void gs_help_history(void)
{
    printf(
        "usage: gensweep history add RESULTS.json --db FILE [--commit C] [--date D]\n"
        "                            [--replace] [--bad]\n"
        "       gensweep history show --db FILE [--kernel K] [--gen G] [--last N]\n"
        "                             [--threshold PCT]\n"
        "       gensweep history export --db FILE [--kernel K] [--gen G] [--last N]\n"
        "                               [--threshold PCT] [-o FILE]\n"
        "       gensweep history gate --db FILE RESULTS.json [--threshold PCT] [--commit C]\n\n"
        "The performance history: an SQLite database with one recorded sweep per commit, to\n"
        "follow each job's simulated time across commits.\n"
        "  add        record RESULTS.json as the run of its commit (the results' tool.commit\n"
        "             unless --commit) dated its start (unless --date YYYY-MM-DD[THH:MM:SSZ]);\n"
        "             adding a recorded commit again changes nothing unless --replace.\n"
        "             The database is created if missing.\n"
        "  show       the last N runs (default %d) and, per job, its latest time, the change\n"
        "             since the first of them, a sparkline and the change points\n"
        "  export     the same as JSON (schema gensweep-history, results/RESULTS.md) to FILE or\n"
        "             stdout, for the report\n"
        "  gate       compare RESULTS.json with the last run recorded as good (complete, no\n"
        "             failing job) of another commit: like compare, regressions exit 1,\n"
        "             and so do results that did not all run (interrupted, incomplete)\n"
        "  --db FILE        the history database\n"
        "  --kernel K       only the jobs of kernel K\n"
        "  --gen G          only the jobs of generation G\n"
        "  --last N         how many of the most recent runs (default %d)\n"
        "  --threshold PCT  time change that counts as a change point / regression (default 2%%)\n"
        "exit status: 0 ok; 1 gate found regressions, or a write failed; 2 usage error, or a\n"
        "missing, damaged or foreign database (which is left untouched)\n",
        DEFAULT_LAST, DEFAULT_LAST);
}

typedef struct hist_args {
    const char *db, *kernel, *gen, *commit, *date, *out, *pos;
    int last, replace, bad;
    double threshold;
} hist_args;

static int parse(int argc, char **argv, hist_args *a)
{
    memset(a, 0, sizeof *a);
    a->last = DEFAULT_LAST;
    a->threshold = 0.02;
    const char *sub = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const char **dst = NULL;
        if (!strcmp(o, "--db"))
            dst = &a->db;
        else if (!strcmp(o, "--kernel") || !strcmp(o, "-k"))
            dst = &a->kernel;
        else if (!strcmp(o, "--gen") || !strcmp(o, "--generation"))
            dst = &a->gen;
        else if (!strcmp(o, "--commit"))
            dst = &a->commit;
        else if (!strcmp(o, "--date"))
            dst = &a->date;
        else if (!strcmp(o, "-o") || !strcmp(o, "--out"))
            dst = &a->out;
        if (dst || !strcmp(o, "--last") || !strcmp(o, "--threshold")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "gensweep history %s: %s needs a value\n", sub, o);
                return -1;
            }
            const char *v = argv[++i];
            if (dst) {
                *dst = v;
            } else if (!strcmp(o, "--last")) {
                char *end;
                long n = strtol(v, &end, 10);
                if (end == v || *end || n < 1 || n > 100000) {
                    fprintf(stderr,
                            "gensweep history %s: --last: '%s' is not a count from 1 to 100000\n",
                            sub, v);
                    return -1;
                }
                a->last = (int)n;
            } else if (gs_compare_parse_threshold(v, &a->threshold) != 0) {
                fprintf(stderr, "gensweep history %s: --threshold: '%s' is not e.g. 2%% or 0.02\n",
                        sub, v);
                return -1;
            }
        } else if (!strcmp(o, "--replace")) {
            a->replace = 1;
        } else if (!strcmp(o, "--bad")) {
            a->bad = 1;
        } else if (o[0] == '-' && o[1]) {
            fprintf(stderr,
                    "gensweep history %s: unknown option '%s' (see gensweep history --help)\n", sub,
                    o);
            return -1;
        } else if (a->pos) {
            fprintf(stderr, "gensweep history %s: one results file only ('%s', then '%s')\n", sub,
                    a->pos, o);
            return -1;
        } else {
            a->pos = o;
        }
    }
    if (!a->db) {
        fprintf(stderr, "gensweep history %s: --db FILE is required\n", sub);
        return -1;
    }
    return 0;
}

/* One line of prefix + s on stdout, s's control characters escaped (s comes from a file). */
static void print_term(const char *prefix, const char *s)
{
    gs_sb sb;
    gs_sb_init(&sb);
    gs_sb_term(&sb, s);
    printf("%s%s\n", prefix, gs_sb_cstr(&sb));
    gs_sb_free(&sb);
}

static int report_error(const char *sub, const gs_error *err)
{
    char buf[GS_ERROR_MSG_MAX + GS_ERROR_FILE_MAX + 64];
    gs_error_format(err, buf, sizeof buf);
    gs_sb esc; /* messages may quote paths, ids or values from files */
    gs_sb_init(&esc);
    gs_sb_term(&esc, buf);
    fprintf(stderr, "gensweep history %s: %s\n", sub, gs_sb_cstr(&esc));
    gs_sb_free(&esc);
    return GS_EXIT_USAGE;
}

static gs_history *open_db(const char *sub, const char *path, int create, int *rc)
{
    gs_error err;
    gs_error_clear(&err);
    gs_history *h = NULL;
    gs_status st = gs_history_open(path, create, 0, &h, &err);
    if (st != GS_OK) {
        *rc = report_error(sub, &err);
        /* the database opened but could not be written (a full disk, an I/O error): a write
         * that failed, exit 1; a missing, damaged or foreign database is exit 2 */
        if (st == GS_ERR_IO) *rc = GS_EXIT_FAIL;
    }
    return h;
}

static cJSON *load_results(const char *sub, const char *path, int *rc)
{
    if (!path) {
        fprintf(stderr, "gensweep history %s: which results file? (RESULTS.json)\n", sub);
        *rc = GS_EXIT_USAGE;
        return NULL;
    }
    gs_error err;
    gs_error_clear(&err);
    cJSON *doc = gs_results_load(path, &err);
    if (!doc) *rc = report_error(sub, &err);
    return doc;
}

static int cmd_add(int argc, char **argv)
{
    hist_args a;
    if (parse(argc, argv, &a) != 0) return GS_EXIT_USAGE;
    int rc = GS_EXIT_OK;
    cJSON *res = load_results("add", a.pos, &rc);
    if (!res) return rc;
    gs_error err;
    gs_error_clear(&err);
    gs_history_key key;
    if (gs_history_key_of(res, a.commit, a.date, &key, &err) != GS_OK) {
        cJSON_Delete(res);
        return report_error("add", &err);
    }
    gs_history *h = open_db("add", a.db, 1, &rc);
    if (!h) {
        cJSON_Delete(res);
        return rc;
    }
    gs_history_added what;
    gs_status st = gs_history_add(h, res, &key, a.replace, a.bad, &what, &err);
    if (st != GS_OK) {
        rc = report_error("add", &err);
        if (st == GS_ERR_IO) rc = GS_EXIT_FAIL;
    } else {
        static const char *const said[] = {
            "recorded", "already recorded; unchanged (--replace overwrites)", "replaced"};
        printf("%s: commit %s (%s): %d jobs %s\n", a.db, key.commit, key.date,
               cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(res, "jobs")), said[what]);
    }
    gs_history_close(h);
    cJSON_Delete(res);
    return rc;
}

static void fmt_time(char *buf, size_t n, double ns)
{
    if (!isfinite(ns))
        snprintf(buf, n, "-");
    else if (ns >= 1e9)
        snprintf(buf, n, "%.3f s", ns / 1e9);
    else if (ns >= 1e6)
        snprintf(buf, n, "%.3f ms", ns / 1e6);
    else if (ns >= 1e3)
        snprintf(buf, n, "%.3f us", ns / 1e3);
    else
        snprintf(buf, n, "%.1f ns", ns);
}

/* One block character per run (min..max of the job's times), ' ' where it has no time. */
static void sparkline(const cJSON *times, gs_sb *sb)
{
    static const char *const bars[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                       "\u2585", "\u2586", "\u2587", "\u2588"};
    double lo = INFINITY, hi = -INFINITY;
    const cJSON *t;
    cJSON_ArrayForEach(t, times) if (cJSON_IsNumber(t))
    {
        lo = fmin(lo, t->valuedouble);
        hi = fmax(hi, t->valuedouble);
    }
    cJSON_ArrayForEach(t, times)
    {
        if (!cJSON_IsNumber(t)) {
            gs_sb_putc(sb, ' ');
            continue;
        }
        int k = hi > lo ? (int)lrint(7.0 * (t->valuedouble - lo) / (hi - lo)) : 0;
        gs_sb_puts(sb, bars[k < 0 ? 0 : k > 7 ? 7 : k]);
    }
}

static cJSON *export_doc(const char *sub, hist_args *a, int *rc)
{
    gs_history *h = open_db(sub, a->db, 0, rc);
    if (!h) return NULL;
    gs_error err;
    gs_error_clear(&err);
    cJSON *doc = gs_history_export(h, a->last, a->kernel, a->gen, a->threshold, &err);
    if (!doc) *rc = report_error(sub, &err);
    gs_history_close(h);
    return doc;
}

static int cmd_show(int argc, char **argv)
{
    hist_args a;
    if (parse(argc, argv, &a) != 0) return GS_EXIT_USAGE;
    if (a.pos) {
        fprintf(stderr, "gensweep history show: unexpected argument '%s'\n", a.pos);
        return GS_EXIT_USAGE;
    }
    int rc = GS_EXIT_OK;
    cJSON *doc = export_doc("show", &a, &rc);
    if (!doc) return rc;
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(doc, "runs");
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(doc, "jobs");
    printf("%s: last %d runs, oldest first\n", a.db, cJSON_GetArraySize(runs));
    printf("  run  %-14s %-20s  %-6s %6s  %s\n", "commit", "date", "suite", "jobs", "good");
    const cJSON *r;
    int i = 0;
    cJSON_ArrayForEach(r, runs)
    {
        /* commits, dates, suites and job ids come from the database: escaped */
        gs_sb cm, dt, su;
        gs_sb_init(&cm);
        gs_sb_init(&dt);
        gs_sb_init(&su);
        gs_sb_term(&cm, gs_json_str(r, "commit"));
        gs_sb_term(&dt, gs_json_str(r, "date"));
        gs_sb_term(&su, gs_json_str(r, "suite"));
        printf("  %3d  %-14.14s %-20s  %-6s %6d  %s\n", ++i, gs_sb_cstr(&cm), gs_sb_cstr(&dt),
               gs_sb_cstr(&su), (int)gs_json_num(r, "jobs"),
               cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "good")) ? "yes" : "no");
        gs_sb_free(&cm);
        gs_sb_free(&dt);
        gs_sb_free(&su);
    }
    printf("\n%-50s %12s %9s  %-*s  changes over %g%%\n", "job", "latest", "vs first",
           cJSON_GetArraySize(runs), "trend", gs_json_num(doc, "threshold") * 100);
    const cJSON *j;
    cJSON_ArrayForEach(j, jobs)
    {
        const cJSON *times = cJSON_GetObjectItemCaseSensitive(j, "time_ns");
        double first = NAN, last = NAN;
        const cJSON *t;
        cJSON_ArrayForEach(t, times) if (cJSON_IsNumber(t))
        {
            if (isnan(first)) first = t->valuedouble;
            last = t->valuedouble;
        }
        char tb[32], vs[32];
        fmt_time(tb, sizeof tb, last);
        if (first > 0 && isfinite(last))
            snprintf(vs, sizeof vs, "%+.1f%%", (last / first - 1) * 100);
        else
            snprintf(vs, sizeof vs, "-");
        gs_sb sb;
        gs_sb_init(&sb);
        sparkline(times, &sb);
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(j, "changes"))
        {
            char commit[16];
            snprintf(commit, sizeof commit, "%.12s", gs_json_str(c, "commit"));
            gs_sb_printf(&sb, "  %+.1f%% at ", (gs_json_num(c, "ratio") - 1) * 100);
            gs_sb_term(&sb, commit);
        }
        gs_sb id;
        gs_sb_init(&id);
        gs_sb_term(&id, gs_json_str(j, "id"));
        printf("%-50s %12s %9s  %s\n", gs_sb_cstr(&id), tb, vs, gs_sb_cstr(&sb));
        gs_sb_free(&id);
        gs_sb_free(&sb);
    }
    if (!cJSON_GetArraySize(jobs)) printf("(no jobs%s)\n", a.kernel || a.gen ? " match" : "");
    cJSON_Delete(doc);
    return GS_EXIT_OK;
}

static int cmd_export(int argc, char **argv)
{
    hist_args a;
    if (parse(argc, argv, &a) != 0) return GS_EXIT_USAGE;
    if (a.pos) {
        fprintf(stderr, "gensweep history export: unexpected argument '%s' (-o FILE?)\n", a.pos);
        return GS_EXIT_USAGE;
    }
    int rc = GS_EXIT_OK;
    cJSON *doc = export_doc("export", &a, &rc);
    if (!doc) return rc;
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    if (!text) {
        fprintf(stderr, "gensweep history export: out of memory\n");
        return GS_EXIT_FAIL;
    }
    if (!a.out) {
        printf("%s\n", text);
        cJSON_free(text);
        return GS_EXIT_OK;
    }
    gs_sb sb;
    gs_sb_init(&sb);
    gs_sb_puts(&sb, text);
    gs_sb_putc(&sb, '\n');
    cJSON_free(text);
    gs_error err;
    gs_error_clear(&err);
    if (gs_sb_write_file(&sb, a.out, &err) != GS_OK) {
        gs_sb_free(&sb);
        report_error("export", &err);
        /* a path refused (a symlink, device or FIFO) is a usage error; a failed write is not */
        return err.code == GS_ERR_USAGE ? GS_EXIT_USAGE : GS_EXIT_FAIL;
    }
    gs_sb_free(&sb);
    printf("wrote %s\n", a.out);
    return GS_EXIT_OK;
}

static int cmd_gate(int argc, char **argv)
{
    hist_args a;
    if (parse(argc, argv, &a) != 0) return GS_EXIT_USAGE;
    int rc = GS_EXIT_OK;
    cJSON *res = load_results("gate", a.pos, &rc);
    if (!res) return rc;
    gs_history *h = open_db("gate", a.db, 0, &rc);
    if (!h) {
        cJSON_Delete(res);
        return rc;
    }
    const char *commit =
        a.commit ? a.commit : gs_json_str(cJSON_GetObjectItemCaseSensitive(res, "tool"), "commit");
    gs_error err;
    gs_error_clear(&err);
    int found = 0;
    cJSON *base = gs_history_last_good(h, *commit ? commit : NULL, &found, &err);
    gs_history_close(h);
    if (!found) {
        if (err.code != GS_OK) {
            cJSON_Delete(res);
            return report_error("gate", &err);
        }
        printf("%s: no good run of another commit recorded: nothing to compare with\n", a.db);
        /* nothing to compare with, but results that did not all run still fail */
        char *gaps = gs_compare_gaps(res);
        cJSON_Delete(res);
        if (!gaps) return GS_EXIT_OK;
        print_term("INCOMPLETE  the new results did not run everything: ", gaps);
        gs_free(gaps);
        return GS_EXIT_FAIL;
    }
    {
        gs_sb line;
        gs_sb_init(&line);
        gs_sb_printf(&line, "commit %s (%s)", gs_json_str(base, "commit"),
                     gs_json_str(base, "date"));
        print_term("comparing with the last good run: ", gs_sb_cstr(&line));
        gs_sb_free(&line);
    }
    gs_compare_summary s;
    gs_compare_docs(base, res, a.threshold, stdout, &s);
    gs_sb line;
    gs_sb_init(&line);
    gs_compare_summary_line(&line, &s);
    printf("%s (threshold %g%%)\n", gs_sb_cstr(&line), a.threshold * 100);
    gs_sb_free(&line);
    cJSON_Delete(base);
    cJSON_Delete(res);
    return gs_compare_failed(&s) ? GS_EXIT_FAIL : GS_EXIT_OK;
}

int gs_cmd_history(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } subs[] = {{"add", cmd_add}, {"show", cmd_show}, {"export", cmd_export}, {"gate", cmd_gate}};
    if (argc < 2) {
        fprintf(stderr, "gensweep history: which one? add, show, export or gate "
                        "(see gensweep history --help)\n");
        return GS_EXIT_USAGE;
    }
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (!strcmp(argv[1], subs[i].name)) return subs[i].run(argc - 1, argv + 1);
    fprintf(stderr, "gensweep history: unknown subcommand '%s' (add, show, export, gate)\n",
            argv[1]);
    return GS_EXIT_USAGE;
}

/* cli_util.c - small option parsing shared by gensweep subcommands (see cli_util.h). */
#include "cli_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datadir.h"
#include "gs/common.h"
#include "gs/strbuf.h"

int gs_cli_parse(int argc, char **argv, int allow_set, gs_cli_args *out)
{
    memset(out, 0, sizeof *out);
    size_t n = argc > 0 ? (size_t)argc : 1;
    out->sets = gs_calloc(n, sizeof *out->sets);
    out->pos = gs_calloc(n, sizeof *out->pos);
    const char *cmd = argc > 0 ? argv[0] : "?";
    if (!out->sets || !out->pos) {
        fprintf(stderr, "gensweep %s: out of memory\n", cmd);
        gs_cli_args_free(out);
        return -1;
    }
    int only_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_pos || a[0] != '-' || !strcmp(a, "-")) {
            out->pos[out->n_pos++] = a;
        } else if (!strcmp(a, "--")) {
            only_pos = 1;
        } else if (allow_set && !strcmp(a, "--set")) {
            if (i + 1 >= argc) {
                fprintf(stderr,
                        "gensweep %s: --set needs KEY=VALUE (e.g. --set "
                        "core.dma.bandwidth_per_engine=34GB/s)\n",
                        cmd);
                gs_cli_args_free(out);
                return -1;
            }
            out->sets[out->n_sets++] = argv[++i];
        } else if (allow_set && !strncmp(a, "--set=", 6)) {
            out->sets[out->n_sets++] = a + 6;
        } else {
            fprintf(stderr, "gensweep %s: unknown option '%s' (see gensweep %s --help)\n", cmd, a,
                    cmd);
            gs_cli_args_free(out);
            return -1;
        }
    }
    return 0;
}

void gs_cli_args_free(gs_cli_args *a)
{
    if (!a) return;
    gs_free(a->sets);
    gs_free(a->pos);
    memset(a, 0, sizeof *a);
}

void gs_cli_print_diags(const char *cmd, const gs_diags *d)
{
    char buf[2048];
    gs_sb esc;
    gs_sb_init(&esc);
    for (size_t i = 0; d && i < d->count; i++) {
        gs_error_format(&d->items[i], buf, sizeof buf);
        /* messages quote names from the files (a workload's, a step's) */
        const char *m = gs_cli_term(&esc, buf);
        if (d->items[i].file[0])
            fprintf(stderr, "%s\n", m);
        else
            fprintf(stderr, "gensweep %s: %s\n", cmd, m);
    }
    gs_sb_free(&esc);
}

void gs_cli_print_diags_escaped(const gs_diags *d)
{
    char buf[2048];
    gs_sb esc;
    gs_sb_init(&esc);
    for (size_t i = 0; d && i < d->count; i++) {
        gs_error_format(&d->items[i], buf, sizeof buf);
        gs_sb_reset(&esc);
        gs_sb_term(&esc, buf); /* messages quote text from the config file */
        fprintf(stderr, "%s\n", gs_sb_cstr(&esc));
    }
    gs_sb_free(&esc);
}

const char *gs_cli_data_file(const char *cmd, const char *opt, const char *subdir, const char *what,
                             const char *arg, char *buf)
{
    gs_error err;
    gs_error_clear(&err);
    if (gs_data_find(subdir, what, arg, buf, GS_CLI_PATH_MAX, &err) != GS_OK) {
        fprintf(stderr, "gensweep %s: %s%s%s\n", cmd, opt ? opt : "", opt ? " " : "", err.message);
        return NULL;
    }
    return buf;
}

const char *gs_cli_term(gs_sb *sb, const char *s)
{
    gs_sb_reset(sb);
    gs_sb_term(sb, s);
    return gs_sb_ok(sb) ? gs_sb_cstr(sb) : "?";
}

int gs_cli_lines_has_count(int argc, char **argv, int i)
{
    if (i + 1 >= argc) return 0;
    const char *s = argv[i + 1];
    return s[0] != '-' || (s[1] >= '0' && s[1] <= '9');
}

int gs_cli_parse_lines(const char *cmd, const char *s, int *out)
{
    int64_t n = 0;
    gs_error err;
    gs_error_clear(&err);
    if (gs_parse_int(s, 1, GS_CLI_LINES_MAX, &n, &err) != 0) {
        fprintf(stderr,
                "gensweep %s: --lines: '%s' is not a number of source lines to show (1 .. %d)\n",
                cmd, s, GS_CLI_LINES_MAX);
        return 0;
    }
    *out = (int)n;
    return 1;
}

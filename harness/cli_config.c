/* cli_config.c - the commands' shared config loading (a config plus its --set overrides) and
 * diagnostics printing. Separate from cli_util.c, whose number parsers the fuzz targets compile
 * on their own without the config loader. */
#include "cli_util.h"

#include <stdio.h>

#include "gs/config.h"

gs_config *gs_cli_load_config(const char *path, const char *const *sets, size_t n_sets,
                              const char *extra, gs_diags *diags)
{
    gs_diags d;
    gs_diags_init(&d);
    gs_config *c = gs_config_load(path, &d);
    /* every override, then one validation (gs_config_set_all): the order does not matter */
    const char **all = c ? gs_calloc(n_sets + 1, sizeof *all) : NULL;
    if (c && !all) {
        gs_diags_add(&d, GS_ERR_NOMEM, "--set", 0, 0, "out of memory");
        gs_config_free(c);
        c = NULL;
    }
    size_t n = 0;
    for (size_t i = 0; c && i < n_sets; i++)
        all[n++] = sets[i];
    if (c && extra) all[n++] = extra;
    if (c && gs_config_set_all(c, all, n, &d) != GS_OK) {
        gs_config_free(c);
        c = NULL;
    }
    gs_free(all);
    for (size_t i = 0; !c && i < d.count; i++) {
        const gs_error *e = &d.items[i];
        gs_diags_add(diags, e->code, e->file, e->line, e->column, "%s", e->message);
    }
    gs_diags_free(&d);
    return c;
}

void gs_cli_print_diags(const char *cmd, const gs_diags *d)
{
    char buf[2048];
    for (size_t i = 0; d && i < d->count; i++) {
        gs_error_format(&d->items[i], buf, sizeof buf);
        if (d->items[i].file[0])
            fprintf(stderr, "%s\n", buf);
        else
            fprintf(stderr, "gensweep %s: %s\n", cmd, buf);
    }
}

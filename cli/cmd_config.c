/* cmd_config.c - the config subcommands: validate, show-config, list (topic dispatch; the
 * `gens` topic lives here). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "datadir.h"
#include "gs/strbuf.h"
#include "gs/config.h"

/* Print every diagnostic, sorted, one "file:line:col: key: message" per line. */
static void print_diags(gs_diags *d)
{
    gs_diags_sort(d);
    char buf[GS_ERROR_MSG_MAX + GS_ERROR_FILE_MAX + 32];
    gs_sb esc;
    gs_sb_init(&esc);
    for (size_t i = 0; i < d->count; i++) {
        gs_error_format(&d->items[i], buf, sizeof buf);
        /* messages quote keys and values from the file: no control sequence reaches a terminal */
        gs_sb_reset(&esc);
        gs_sb_term(&esc, buf);
        fprintf(stderr, "%s\n", gs_sb_cstr(&esc));
    }
    gs_sb_free(&esc);
    if (d->dropped) fprintf(stderr, "(%zu more errors not shown)\n", d->dropped);
}

/* Was the load stopped because `path` itself could not be read (an input error, exit 2)? */
static int unreadable(const gs_diags *d, const char *path)
{
    return d->count == 1 && d->items[0].code == GS_ERR_IO && !strcmp(d->items[0].file, path);
}

/* Load path and apply the overrides. Returns the config, or NULL with *exit_code set and the
 * errors printed. */
static gs_config *load_with_sets(const char *path, const gs_cli_args *a, int *exit_code)
{
    gs_diags d;
    gs_diags_init(&d);
    gs_config *c = gs_config_load_with(path, a->sets, a->n_sets, &d);
    if (!c) {
        /* an unreadable file or an override that is no key=value of the schema: usage */
        int usage = unreadable(&d, path) || (d.count && d.items[d.count - 1].code == GS_ERR_USAGE &&
                                             !strcmp(d.items[d.count - 1].file, "--set"));
        *exit_code = usage ? GS_EXIT_USAGE : GS_EXIT_FAIL;
        print_diags(&d);
        gs_diags_free(&d);
        return NULL;
    }
    gs_diags_free(&d);
    *exit_code = GS_EXIT_OK;
    return c;
}

void gs_help_validate(void)
{
    printf("usage: gensweep validate [--set KEY=VALUE]... FILE...\n\n"
           "Load each generation config (resolving extends:), apply the overrides, and check\n"
           "it against the schema (configs/SCHEMA.md). Every problem is printed to stderr as\n"
           "  file:line:col: key.path: message\n\n"
           "options:\n"
           "  --set KEY=VALUE  override one number after loading, e.g.\n"
           "                   --set core.dma.bandwidth_per_engine=34GB/s  (absolute, with unit)\n"
           "                   --set core.sbuf=x2  or  --set core.sbuf=1.5x  (relative)\n"
           "                   repeatable; each override is validated like the file\n\n"
           "exit status: 0 all valid, 1 any invalid, 2 usage error or unreadable file\n");
}

int gs_cmd_validate(int argc, char **argv)
{
    gs_cli_args a;
    if (gs_cli_parse(argc, argv, 1, &a) < 0) return GS_EXIT_USAGE;
    if (a.n_pos == 0) {
        fprintf(stderr, "gensweep validate: no config file given (see gensweep validate --help)\n");
        gs_cli_args_free(&a);
        return GS_EXIT_USAGE;
    }
    int worst = GS_EXIT_OK;
    for (size_t i = 0; i < a.n_pos; i++) {
        int code;
        gs_config *c = load_with_sets(a.pos[i], &a, &code);
        if (c) {
            printf("%s: ok (%s, family %s)\n", a.pos[i], c->name, c->family);
            gs_config_free(c);
        } else {
            fprintf(stderr, "%s: invalid\n", a.pos[i]);
        }
        if (code > worst) worst = code;
    }
    gs_cli_args_free(&a);
    return worst;
}

void gs_help_show_config(void)
{
    printf("usage: gensweep show-config [--set KEY=VALUE]... FILE\n\n"
           "Print the config fully resolved (extends: merged, overrides applied) as YAML. Every\n"
           "number is written VALUE [source] (a key of sources:, 'assumed', or '--set') with a\n"
           "comment naming the file:line:col it came from; defaulted optional keys appear as\n"
           "comments.\n\n"
           "options:\n"
           "  --set KEY=VALUE  override one number (see gensweep validate --help)\n\n"
           "exit status: 0 ok, 1 invalid config, 2 usage error or unreadable file\n");
}

int gs_cmd_show_config(int argc, char **argv)
{
    gs_cli_args a;
    if (gs_cli_parse(argc, argv, 1, &a) < 0) return GS_EXIT_USAGE;
    if (a.n_pos != 1) {
        fprintf(stderr,
                "gensweep show-config: expected exactly one config file, got %zu (see "
                "gensweep show-config --help)\n",
                a.n_pos);
        gs_cli_args_free(&a);
        return GS_EXIT_USAGE;
    }
    int code = GS_EXIT_USAGE;
    char buf[GS_CLI_PATH_MAX];
    const char *path = gs_cli_data_file("show-config", NULL, "configs", "config", a.pos[0], buf);
    gs_config *c = path ? load_with_sets(path, &a, &code) : NULL;
    if (c) {
        gs_config_dump_yaml(c, stdout);
        gs_config_free(c);
    }
    gs_cli_args_free(&a);
    return code;
}

/* ---- list: one row per topic; `list kernels` is added next to `gens` ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void print_tflops(double flops)
{
    if (flops > 0)
        printf(" %8.1f", flops / 1e12);
    else
        printf(" %8s", "-");
}

/* A SIMD engine's bf16 throughput of one core, 1e9 elements/s ("-" when it has no bf16). */
static void print_elems(const gs_simd_cfg *e)
{
    /* the peak: the vector performance mode's rate where the engine has one */
    double epc = GS_MAX(e->elems_per_cycle[GS_BF16].v, e->perf_mode_epc[GS_BF16].v);
    if (!e->present || !(epc > 0)) {
        printf(" %8s", "-");
        return;
    }
    double simd_cores = e->cores.v > 0 ? e->cores.v : 1.0;
    printf(" %8.1f", e->lanes.v * epc * simd_cores * e->clock.v / 1e9);
}

/* list gens [DIR]: every DIR/NAME.yaml (not subdirectories, so what-if variants stay out). */
static int list_gens(int argc, char **argv)
{
    gs_cli_args a;
    if (gs_cli_parse(argc, argv, 0, &a) < 0) return GS_EXIT_USAGE;
    if (a.n_pos > 1) {
        fprintf(stderr, "gensweep list gens: expected at most one directory\n");
        gs_cli_args_free(&a);
        return GS_EXIT_USAGE;
    }
    const char *dir = a.n_pos ? a.pos[0] : gs_default_configs_dir();
    DIR *dh = opendir(dir);
    if (!dh) {
        fprintf(stderr,
                "gensweep list gens: cannot open directory '%s' (run from the "
                "repository root or pass DIR)\n",
                dir);
        gs_cli_args_free(&a);
        return GS_EXIT_USAGE;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(dh)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l < 6 || strcmp(de->d_name + l - 5, ".yaml") || de->d_name[0] == '.') continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **nn = gs_realloc(names, cap * sizeof *nn);
            if (!nn) break;
            names = nn;
        }
        names[n] = gs_strdup(de->d_name);
        if (names[n]) n++;
    }
    closedir(dh);
    int rc = GS_EXIT_OK;
    if (n == 0) {
        fprintf(stderr, "gensweep list gens: no *.yaml configs in '%s'\n", dir);
        rc = GS_EXIT_USAGE;
    } else {
        qsort(names, n, sizeof *names, cmp_str);
        printf("%-16s %-7s %5s %8s %8s %8s %9s %9s %8s %9s %8s %8s\n", "name", "family", "cores",
               "bf16", "fp32", "fp8", "HBM GB/s", "SBUF MiB", "mxfp8", "DMA GB/s", "vec G/s",
               "act G/s");
        for (size_t i = 0; i < n; i++) {
            gs_sb path;
            gs_sb_init(&path);
            gs_sb_printf(&path, "%s/%s", dir, names[i]);
            gs_diags d;
            gs_diags_init(&d);
            gs_config *c = gs_config_load(gs_sb_cstr(&path), &d);
            if (!c) {
                print_diags(&d);
                fprintf(stderr, "%s: invalid\n", gs_sb_cstr(&path));
                rc = GS_EXIT_FAIL;
            } else {
                printf("%-16s %-7s %5.0f", c->name, c->family, c->cores.v);
                print_tflops(gs_config_peak_flops(c, GS_BF16));
                print_tflops(gs_config_peak_flops(c, GS_FP32));
                print_tflops(gs_config_peak_flops(c, GS_FP8_E4M3));
                printf(" %9.0f %9.1f", gs_config_hbm_bytes_per_s(c) / 1e9,
                       c->sbuf_bytes.v / (1024.0 * 1024.0));
                print_tflops(gs_config_peak_flops(c, GS_FP8_E4M3_X4));
                /* bytes per ns are GB/s */
                printf(" %9.0f", c->dma.engines.v * c->dma.bandwidth_per_engine.v);
                print_elems(&c->vector);
                print_elems(&c->scalar);
                printf("\n");
            }
            gs_config_free(c);
            gs_diags_free(&d);
            gs_sb_free(&path);
        }
        printf("(bf16/fp32/fp8/mxfp8: peak matmul TFLOP/s per core (fp8 with double row where the "
               "family has it); HBM per chip;\n DMA: all engines of one core; vec/act: bf16 "
               "elements per second of one core's vector / scalar (activation) engine, 1e9)\n");
    }
    for (size_t i = 0; i < n; i++)
        gs_free(names[i]);
    gs_free(names);
    gs_cli_args_free(&a);
    return rc;
}

typedef struct list_topic {
    const char *name;
    const char *args;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the topic name */
} list_topic;

static const list_topic list_topics[] = {
    {"gens", "[DIR]",
     "generation configs in DIR (default: ./configs, else the installed configs) with derived "
     "peak numbers",
     list_gens},
    {"kernels", "[--names | --check-shapes K]",
     "the kernel suite: variants, dims, dtypes, params, check and perf shapes", gs_list_kernels},
};

void gs_help_list(void)
{
    printf("usage: gensweep list TOPIC [ARGS]\n\ntopics:\n");
    for (size_t i = 0; i < GS_ARRAY_LEN(list_topics); i++)
        printf("  %s %-8s %s\n", list_topics[i].name, list_topics[i].args, list_topics[i].summary);
    printf("\nexit status: 0 ok, 1 some entry is invalid, 2 usage error\n");
}

int gs_cmd_list(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "gensweep list: missing topic (see gensweep list --help)\n");
        return GS_EXIT_USAGE;
    }
    for (size_t i = 0; i < GS_ARRAY_LEN(list_topics); i++)
        if (!strcmp(argv[1], list_topics[i].name)) return list_topics[i].run(argc - 1, argv + 1);
    fprintf(stderr, "gensweep list: unknown topic '%s'; topics:", argv[1]);
    for (size_t i = 0; i < GS_ARRAY_LEN(list_topics); i++)
        fprintf(stderr, " %s", list_topics[i].name);
    fprintf(stderr, "\n");
    return GS_EXIT_USAGE;
}

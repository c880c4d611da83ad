/*
 * cmd_nki.c - `gensweep nki run|disasm|replay`: an NKI kernel file, traced by the Python front
 * end (python/gensweep, docs/NKI.md) into a program (harness/run/nki_prog.h), then run through the
 * same job pipeline as `gensweep run` (the program's kernel is found by name like a suite
 * kernel; `run`'s options, output, record and exit codes apply unchanged).
 */
#define _GNU_SOURCE /* mkdtemp */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_util.h"
#include "commands.h"
#include "gs/builder.h"
#include "gs/jsonw.h"
#include "gs/strbuf.h"
#include "jobrun.h"
#include "nki_prog.h"
#include "proc.h"
#include "suite.h"
#include "sweep.h" /* run's default memory limit */

#define MAX_ARGS 64

void gs_help_nki(void)
{
    printf("usage: gensweep nki run FILE.py --kernel NAME --config CFG [--arg NAME=VALUE]...\n"
           "                        [--reference FILE.py:FUNC] [--keep-program FILE.gsk]\n"
           "                        [--max-instructions N] [--no-schedule] [--grid AxB..]\n"
           "                        [run options: --seed N --timing-only --json --trace F\n"
           "                         --record F --timeline --lines [N] --set KEY=VALUE ...]\n"
           "       gensweep nki disasm FILE.py --kernel NAME --config CFG [--arg NAME=VALUE]...\n"
           "       gensweep nki replay PROG.gsk --config CFG [--reference FILE.py:FUNC]\n"
           "                        [run options]\n"
           "       gensweep nki caps --config CFG [--set KEY=VALUE]...\n\n"
           "Run an NKI kernel (nki.language / nki.isa, docs/NKI.md) on a generation's model. The\n"
           "Python front end traces the kernel with the generation's tile sizes; the traced\n"
           "program then runs exactly as `gensweep run` runs a C kernel (same output, --json\n"
           "record, statuses and exit codes; the record's kernel is nki.NAME).\n"
           "  --arg NAME=DTYPE:SHAPE[:LO:HI]  an HBM input: random values from --seed, uniform\n"
           "                  in [LO, HI) (default -1, 1), e.g. a_input=bf16:256x1024\n"
           "  --arg NAME=LITERAL  a Python literal for a non-tensor parameter, e.g. shape2D=(4,8)\n"
           "  --reference FILE.py:FUNC  a numpy function of the inputs (float64) returning the\n"
           "                  outputs; the outputs are checked against it with the dtype-aware\n"
           "                  tolerance. Without it the outputs are not checked.\n"
           "  --keep-program F  keep the traced program (.gsk) at F (for `nki replay`)\n"
           "  --max-instructions N  stop a kernel that issues more (default 4000000)\n"
           "  --grid AxB..    launch an @nki.jit kernel on an SPMD grid (kernel[A, B]), e.g. 4x2\n"
           "  --no-schedule   keep the traced program order (default: the scheduler reorders\n"
           "                  each engine's instructions within the dependencies, docs/NKI.md)\n"
           "  replay          run a traced program again. It runs no code the program file\n"
           "                  names: the outputs are checked only against a --reference given\n"
           "                  here (the one Python process replay may start)\n"
           "  caps            print the generation's capabilities as the front end sees them\n"
           "--wall-limit S and --mem-limit N (run options) bound the tracer and the reference\n"
           "too: each child gets S wall and S CPU seconds and N bytes of address space. On\n"
           "SIGINT, SIGTERM or SIGHUP the children are killed and the temporary files removed.\n"
           "An operation the model lacks is status `unsupported` naming it and the kernel line;\n"
           "an error in the kernel (bad index, exception, overflow) names the kernel line.\n"
           "Environment: GENSWEEP_PYTHON (default /usr/bin/python3), GENSWEEP_FRONTEND (the\n"
           "directory holding the nki and gensweep packages; default: the repository's python/\n"
           "or the installed share/gensweep/python).\n"
           "exit status: as `gensweep run`; 2 also for a kernel that cannot be traced\n");
}

/* "gensweep WHO: file:line: message", terminal-escaped: messages quote program files, kernel
 * paths and reference tracebacks (control characters and bidi controls as \xNN). */
static void print_error(const char *who, const gs_error *err)
{
    char buf[2048];
    gs_error_format(err, buf, sizeof buf);
    gs_sb sb;
    gs_sb_init(&sb);
    gs_sb_term(&sb, buf);
    fprintf(stderr, "gensweep %s: %s\n", who, gs_sb_cstr(&sb));
    gs_sb_free(&sb);
}

static int is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* The interpreter: GENSWEEP_PYTHON, else Debian's /usr/bin/python3 (it sees python3-numpy),
 * else python3 on PATH. */
static const char *python_exe(void)
{
    const char *e = getenv("GENSWEEP_PYTHON");
    if (e && *e) return e;
    if (access("/usr/bin/python3", X_OK) == 0) return "/usr/bin/python3";
    return "python3";
}

/* The directory holding the front end's packages. */
static const char *frontend_dir(void)
{
    static char dir[PATH_MAX];
    const char *e = getenv("GENSWEEP_FRONTEND");
    if (e && *e) return e;
#ifdef GS_SOURCE_PYTHON_DIR
    if (is_dir(GS_SOURCE_PYTHON_DIR "/nki")) return GS_SOURCE_PYTHON_DIR;
#endif
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            char rel[PATH_MAX + 32];
            snprintf(rel, sizeof rel, "%s/../share/gensweep/python", exe);
            if (is_dir(rel) && realpath(rel, dir)) return dir;
        }
    }
    return "python";
}

/* PYTHONPATH for the tracer and the reference: the front end first, then the user's own
 * PYTHONPATH (a kernel's helper packages, e.g. a checkout of the NKI Library), never replaced. */
static const char *python_path(void)
{
    static char path[2 * PATH_MAX + 2];
    const char *fe = frontend_dir();
    const char *user = getenv("PYTHONPATH");
    if (!user || !*user) return fe;
    int n = snprintf(path, sizeof path, "%s:%s", fe, user);
    return n > 0 && (size_t)n < sizeof path ? path : fe;
}

/* The target's capabilities as the front end reads them (its tile sizes, dtypes, cores). */
static gs_status write_caps(const gs_config *cfg, const char *path, gs_error *err)
{
    gs_program *p = gs_program_create(cfg);
    gs_kb *kb = p ? gs_kb_create(p, 0) : NULL;
    if (!kb) {
        gs_program_free(p);
        return gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    const gs_caps *c = gs_kb_caps(kb);
    gs_sb sb;
    gs_sb_init(&sb);
    gs_jw w;
    gs_jw_init(&w, &sb);
    gs_jw_begin_object(&w, GS_JW_COMPACT);
    gs_jw_kstr(&w, "generation", cfg->name);
    gs_jw_kint(&w, "partitions", c->partitions);
    gs_jw_kint(&w, "pe_rows", c->pe_rows);
    gs_jw_kint(&w, "pe_cols", c->pe_cols);
    gs_jw_kint(&w, "moving_free_max", c->moving_free_max);
    gs_jw_kint(&w, "sbuf_partition_bytes", (int64_t)c->sbuf_partition_bytes);
    gs_jw_kint(&w, "psum_partition_bytes", (int64_t)c->psum_partition_bytes);
    gs_jw_kint(&w, "psum_bank_bytes", (int64_t)c->psum_bank_bytes);
    gs_jw_kint(&w, "psum_banks", c->psum_banks);
    gs_jw_kint(&w, "max_free_sbuf", c->max_free_sbuf);
    gs_jw_kint(&w, "max_free_psum", c->max_free_psum);
    gs_jw_kint(&w, "cores", c->cores);
    gs_jw_kint(&w, "dma_queues", c->dma_queues);
    gs_jw_kbool(&w, "has_gpsimd", c->has_gpsimd);
    gs_jw_kbool(&w, "dma_transpose", c->dma_transpose);
    gs_jw_kbool(&w, "dma_cast", c->dma_cast);
    gs_jw_key(&w, "dtypes");
    gs_jw_begin_array(&w, GS_JW_COMPACT);
    for (int t = 0; t < GS_DTYPE_COUNT; t++)
        if (c->dtypes & (1u << t)) gs_jw_str(&w, gs_dtype_name((gs_dtype)t));
    gs_jw_end_array(&w);
    gs_jw_key(&w, "matmul_dtypes");
    gs_jw_begin_array(&w, GS_JW_COMPACT);
    for (int t = 0; t < GS_DTYPE_COUNT; t++)
        if (c->matmul_dtypes & (1u << t)) gs_jw_str(&w, gs_dtype_name((gs_dtype)t));
    gs_jw_end_array(&w);
    gs_jw_key(&w, "ops");
    gs_jw_begin_array(&w, GS_JW_COMPACT);
    for (int o = 0; o < GS_OPCODE_COUNT; o++)
        if (c->ops & (1ull << o)) gs_jw_str(&w, gs_opcode_name((gs_opcode)o));
    gs_jw_end_array(&w);
    gs_jw_end_object(&w);
    gs_kb_free(kb);
    gs_program_free(p);
    gs_status st = gs_jw_finish(&w, err);
    if (st == GS_OK && !strcmp(path, "-")) {
        fputs(gs_sb_cstr(&sb), stdout);
        fputc('\n', stdout);
    } else if (st == GS_OK) {
        st = gs_sb_write_file(&sb, path, err);
    }
    gs_sb_free(&sb);
    return st;
}

typedef struct nki_opts {
    const char *file; /* FILE.py, or PROG.gsk for replay */
    const char *kernel;
    const char *config; /* a path or a generation name, as found (gs_cli_data_file) */
    char config_buf[GS_CLI_PATH_MAX];
    const char *reference; /* --reference FILE.py:FUNC, split into: */
    char ref_path[1024];
    char ref_func[256];
    const char *keep;
    const char *max_instr; /* --max-instructions N: the tracer's cap (a runaway loop stops) */
    const char *grid;      /* --grid AxB..: the SPMD launch grid (checked by the tracer) */
    int no_schedule;       /* --no-schedule: program order, as traced */
    const char *args[MAX_ARGS];
    int n_args;
    const char *sets[MAX_ARGS];
    int n_sets;
    const char *pass[2 * MAX_ARGS]; /* options handed to run / disasm as they are */
    int n_pass;
    double wall_limit_s; /* --wall-limit, --mem-limit (also handed to run): the children's too */
    double mem_limit;
} nki_opts;

/* --reference FILE.py:FUNC into ref_path / ref_func: FUNC a Python name, FILE a regular file
 * (checked before anything runs: a wrong one is a usage error, not a failed check). */
static int split_reference(nki_opts *o, const char *sub)
{
    const char *colon = strrchr(o->reference, ':');
    size_t plen = colon ? (size_t)(colon - o->reference) : 0;
    const char *func = colon ? colon + 1 : "";
    int name_ok = func[0] && !(func[0] >= '0' && func[0] <= '9') &&
                  strspn(func, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
                      strlen(func);
    if (!plen || !name_ok || plen >= sizeof o->ref_path || strlen(func) >= sizeof o->ref_func) {
        fprintf(stderr, "gensweep nki %s: --reference: expected FILE.py:FUNC\n", sub);
        return 0;
    }
    memcpy(o->ref_path, o->reference, plen);
    o->ref_path[plen] = '\0';
    memcpy(o->ref_func, func, strlen(func) + 1);
    struct stat sb;
    int found = stat(o->ref_path, &sb) == 0;
    if (!found || !S_ISREG(sb.st_mode)) {
        gs_sb msg;
        gs_sb_init(&msg);
        gs_sb_term(&msg, o->ref_path);
        fprintf(stderr, "gensweep nki %s: --reference: %s: %s\n", sub, gs_sb_cstr(&msg),
                found ? "not a regular file" : strerror(errno));
        gs_sb_free(&msg);
        return 0;
    }
    return 1;
}

/* Options of run / disasm that take a value (handed over as they are). */
static int run_option_with_value(const char *a)
{
    static const char *const with[] = {"--seed",         "--trace",      "--record",
                                       "--sim-limit-ns", "--wall-limit", "--mem-limit",
                                       "--executor",     "--outputs",    NULL};
    for (int i = 0; with[i]; i++)
        if (!strcmp(a, with[i])) return 1;
    return 0;
}

static int run_option_flag(const char *a)
{
    return !strcmp(a, "--timing-only") || !strcmp(a, "--json") || !strcmp(a, "--timeline") ||
           !strcmp(a, "--lines");
}

/* The values of --wall-limit and --mem-limit, which the tracer and the reference get too. */
static int limit_value(nki_opts *o, const char *opt, const char *value, const char *sub)
{
    gs_error err;
    gs_error_clear(&err);
    int bad = !strcmp(opt, "--wall-limit")
                  ? gs_parse_real(value, 0.0, 1e300, &o->wall_limit_s, &err) != 0
              : !strcmp(opt, "--mem-limit") ? gs_parse_size(value, &o->mem_limit, &err) != 0
                                            : 0;
    if (bad) fprintf(stderr, "gensweep nki %s: %s: %s\n", sub, opt, err.message);
    return !bad;
}

static int parse(int argc, char **argv, nki_opts *o, const char *sub)
{
    memset(o, 0, sizeof *o);
    gs_sweep_opts sweep; /* run's default memory limit (sweep jobs'; none under ASan) */
    gs_sweep_opts_default(&sweep);
    o->mem_limit = sweep.mem_limit;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (a[0] != '-' && !o->file) {
            o->file = a;
            continue;
        }
        const char **one = NULL;
        if (!strcmp(a, "--kernel") || !strcmp(a, "-k"))
            one = &o->kernel;
        else if (!strcmp(a, "--config") || !strcmp(a, "-c"))
            one = &o->config;
        else if (!strcmp(a, "--reference"))
            one = &o->reference;
        else if (!strcmp(a, "--keep-program"))
            one = &o->keep;
        else if (!strcmp(a, "--max-instructions"))
            one = &o->max_instr;
        else if (!strcmp(a, "--grid"))
            one = &o->grid;
        if (one) {
            if (!has_value) {
                fprintf(stderr, "gensweep nki %s: option %s needs a value\n", sub, a);
                return 0;
            }
            *one = argv[++i];
            continue;
        }
        if (!strcmp(a, "--no-schedule")) {
            o->no_schedule = 1;
            continue;
        }
        if (!strcmp(a, "--arg") || !strcmp(a, "--set")) {
            if (!has_value) {
                fprintf(stderr, "gensweep nki %s: option %s needs a value\n", sub, a);
                return 0;
            }
            int is_arg = a[2] == 'a';
            int *n = is_arg ? &o->n_args : &o->n_sets;
            if (*n == MAX_ARGS) {
                fprintf(stderr, "gensweep nki %s: too many %s options\n", sub, a);
                return 0;
            }
            (is_arg ? o->args : o->sets)[(*n)++] = argv[++i];
            continue;
        }
        if (run_option_with_value(a) || run_option_flag(a)) {
            /* --lines' count is optional: the next word when it is not an option and FILE is
             * given (or it starts with a digit), as run takes it */
            const int lines = !strcmp(a, "--lines");
            int take = run_option_with_value(a) ||
                       (lines && gs_cli_lines_has_count(argc, argv, i) &&
                        (o->file || (argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9') ||
                         argv[i + 1][0] == '-'));
            if (take && !has_value) {
                fprintf(stderr, "gensweep nki %s: option %s needs a value\n", sub, a);
                return 0;
            }
            if (o->n_pass + 1 + take > (int)(sizeof o->pass / sizeof o->pass[0])) {
                fprintf(stderr, "gensweep nki %s: too many run options (at most %d words)\n", sub,
                        (int)(sizeof o->pass / sizeof o->pass[0]));
                return 0;
            }
            o->pass[o->n_pass++] = a;
            if (take) o->pass[o->n_pass++] = argv[++i];
            if (!limit_value(o, a, argv[i], sub)) return 0;
            /* checked before anything is traced, as run checks it */
            int count = 0;
            char cmd[32];
            snprintf(cmd, sizeof cmd, "nki %s", sub);
            if (lines && take && !gs_cli_parse_lines(cmd, argv[i], &count)) return 0;
            continue;
        }
        fprintf(stderr, "gensweep nki %s: unknown option '%s' (see gensweep nki --help)\n", sub, a);
        return 0;
    }
    int replay = !strcmp(sub, "replay");
    if (!o->file || !o->config || (!replay && !o->kernel)) {
        fprintf(stderr, "gensweep nki %s: %s, --config%s are required (see gensweep nki --help)\n",
                sub, replay ? "PROG.gsk" : "FILE.py", replay ? "" : " and --kernel");
        return 0;
    }
    if (replay && (o->kernel || o->n_args || o->grid)) {
        fprintf(stderr, "gensweep nki replay: --kernel, --arg and --grid belong to the trace (nki "
                        "run); "
                        "a traced program has them already\n");
        return 0;
    }
    if (o->reference && !split_reference(o, sub)) return 0;
    char cmd[32];
    snprintf(cmd, sizeof cmd, "nki %s", sub);
    o->config = gs_cli_data_file(cmd, "--config", "configs", "config", o->config, o->config_buf);
    return o->config != NULL;
}

/*
 * The command's temporary directory (the caps, the traced program, the reference's files in
 * ref/) and every path that may be created in it, all computed before anything is: a signal
 * handler removes them and may not format or allocate. SIGINT, SIGTERM and SIGHUP kill the
 * children (gs_proc_kill_running: none is left writing there), remove the files and the
 * directory, and end the command by the same signal; every other exit path removes them too.
 */
#define TMP_FILES (6 + 2 * GS_KERNEL_MAX_TENSORS)
static char g_tmp_dir[32];
static char g_tmp_ref[48];
static char g_tmp_files[TMP_FILES][80];
static volatile sig_atomic_t g_tmp_armed;
static const int k_stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define N_STOP_SIGNALS (int)(sizeof k_stop_signals / sizeof k_stop_signals[0])
static struct sigaction g_old_actions[N_STOP_SIGNALS];

/* Async-signal-safe: unlink and rmdir only. */
static void tmp_remove_files(void)
{
    for (int i = 0; i < TMP_FILES; i++)
        if (g_tmp_files[i][0]) unlink(g_tmp_files[i]);
    rmdir(g_tmp_ref);
    rmdir(g_tmp_dir);
}

static void on_stop_signal(int sig)
{
    if (g_tmp_armed) {
        g_tmp_armed = 0;
        /* NOLINTNEXTLINE(bugprone-signal-handler): kill and waitpid only (proc.h) */
        gs_proc_kill_running();
        tmp_remove_files();
    }
    signal(sig, SIG_DFL);
    raise(sig); /* delivered when the handler returns: the command ends by the signal */
}

/* Create the directory (signals blocked until its names are known and the handler is in
 * place). Returns 0, or -1 with errno. */
static int tmp_create(void)
{
    sigset_t stop, old;
    sigemptyset(&stop);
    for (int i = 0; i < N_STOP_SIGNALS; i++)
        sigaddset(&stop, k_stop_signals[i]);
    sigprocmask(SIG_BLOCK, &stop, &old);
    snprintf(g_tmp_dir, sizeof g_tmp_dir, "/tmp/gensweep-nki-XXXXXX");
    if (!mkdtemp(g_tmp_dir)) {
        int e = errno;
        g_tmp_dir[0] = '\0';
        sigprocmask(SIG_SETMASK, &old, NULL);
        errno = e;
        return -1;
    }
    snprintf(g_tmp_ref, sizeof g_tmp_ref, "%s/ref", g_tmp_dir);
    int n = 0;
    const long pid = (long)getpid();
    snprintf(g_tmp_files[n++], sizeof g_tmp_files[0], "%s/caps.json", g_tmp_dir);
    snprintf(g_tmp_files[n++], sizeof g_tmp_files[0], "%s/caps.json.tmp.%ld", g_tmp_dir, pid);
    snprintf(g_tmp_files[n++], sizeof g_tmp_files[0], "%s/kernel.gsk", g_tmp_dir);
    snprintf(g_tmp_files[n++], sizeof g_tmp_files[0], "%s/kernel.gsk.tmp.%ld", g_tmp_dir, pid);
    snprintf(g_tmp_files[n++], sizeof g_tmp_files[0], "%s/manifest", g_tmp_ref);
    snprintf(g_tmp_files[n++], sizeof g_tmp_files[0], "%s/stderr", g_tmp_ref);
    for (int i = 0; i < GS_KERNEL_MAX_TENSORS; i++) {
        snprintf(g_tmp_files[n++], sizeof g_tmp_files[0], "%s/in%d.f64", g_tmp_ref, i);
        snprintf(g_tmp_files[n++], sizeof g_tmp_files[0], "%s/out%d.f64", g_tmp_ref, i);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < N_STOP_SIGNALS; i++)
        sigaction(k_stop_signals[i], &sa, &g_old_actions[i]);
    g_tmp_armed = 1;
    sigprocmask(SIG_SETMASK, &old, NULL);
    return 0;
}

/* Remove the directory and put the signal actions back (any exit path of the command). */
static void tmp_finish(void)
{
    if (!g_tmp_dir[0]) return;
    g_tmp_armed = 0;
    for (int i = 0; i < N_STOP_SIGNALS; i++)
        sigaction(k_stop_signals[i], &g_old_actions[i], NULL);
    tmp_remove_files();
    g_tmp_dir[0] = '\0';
}

/* Trace the kernel into prog. Returns an exit status (GS_EXIT_OK: traced). */
static int trace(const nki_opts *o, const gs_config *cfg, const char *caps, const char *prog)
{
    gs_error err;
    gs_error_clear(&err);
    if (write_caps(cfg, caps, &err) != GS_OK) {
        print_error("nki", &err);
        return GS_EXIT_FAIL;
    }
    const char *argv[16 + 2 * MAX_ARGS];
    int n = 0;
    const char *py = python_exe();
    argv[n++] = py;
    argv[n++] = "-m";
    argv[n++] = "gensweep.trace";
    argv[n++] = "--caps";
    argv[n++] = caps;
    argv[n++] = "--out";
    argv[n++] = prog;
    if (o->no_schedule) argv[n++] = "--no-schedule";
    if (o->max_instr) {
        argv[n++] = "--max-instructions";
        argv[n++] = o->max_instr;
    }
    if (o->grid) {
        argv[n++] = "--grid";
        argv[n++] = o->grid;
    }
    for (int i = 0; i < o->n_args; i++) {
        argv[n++] = "--arg";
        argv[n++] = o->args[i];
    }
    argv[n++] = o->file;
    argv[n++] = o->kernel;
    argv[n] = NULL;
    gs_proc_opts po;
    memset(&po, 0, sizeof po);
    po.kind = GS_PROC_EXEC;
    po.exe = py;
    po.argv = argv;
    po.out = GS_PROC_INHERIT;
    po.err = GS_PROC_INHERIT;
    po.env_name = "PYTHONPATH";
    po.env_value = python_path();
    po.exec_fail_who = "gensweep nki";
    /* run's limits hold for the tracer too: a `while True` in a kernel must end */
    po.timeout_s = o->wall_limit_s;
    po.cpu_limit_s = o->wall_limit_s;
    po.mem_limit = o->mem_limit;
    gs_proc *proc = gs_proc_start(&po);
    if (!proc) {
        fprintf(stderr, "gensweep nki: cannot start %s: %s\n", py, strerror(errno));
        return GS_EXIT_FAIL;
    }
    const gs_proc_result *r = gs_proc_wait(proc);
    int rc = r->exited ? r->exit_code : GS_EXIT_FAIL;
    struct stat sb;
    if (rc == 0 && stat(prog, &sb) != 0) {
        /* traced, says the exit status, and nothing written: the kernel ended the process */
        fprintf(stderr, "gensweep nki: the front end ended without writing a program (did the "
                        "kernel end the process, e.g. os._exit?)\n");
        rc = GS_EXIT_USAGE;
    } else if (r->exited && rc > GS_EXIT_USAGE && rc != 127) {
        fprintf(stderr, "gensweep nki: the front end exited with status %d\n", rc);
    }
    if (r->timed_out)
        fprintf(stderr, "gensweep nki: the front end was stopped at --wall-limit (%g s)\n",
                o->wall_limit_s);
    else if (gs_proc_stopped_at_cpu_limit(r, o->wall_limit_s))
        fprintf(stderr,
                "gensweep nki: the front end was stopped at its CPU limit (%g s, from "
                "--wall-limit)\n",
                o->wall_limit_s);
    else if (!r->exited)
        fprintf(stderr, "gensweep nki: the front end was killed by %s\n",
                gs_proc_signal_name(r->signal));
    else if (rc == 127)
        fprintf(stderr, "gensweep nki: no Python interpreter at %s (set GENSWEEP_PYTHON)\n", py);
    gs_proc_free(proc);
    if (rc == 0) return GS_EXIT_OK;
    return rc == GS_EXIT_USAGE ? GS_EXIT_USAGE : GS_EXIT_FAIL;
}

/* Run (or list) the loaded program through `run` / `disasm`. */
static int run_program(const nki_opts *o, const char *prog_path, int disasm, int replay)
{
    gs_error err;
    gs_error_clear(&err);
    gs_nki_prog *prog = gs_nki_prog_load(prog_path, &err);
    if (!prog) {
        print_error("nki", &err);
        return err.code == GS_ERR_IO || err.code == GS_ERR_INVALID ? GS_EXIT_USAGE : GS_EXIT_FAIL;
    }
    gs_nki_prog_set_python(prog, python_exe(), python_path());
    gs_nki_prog_set_limits(prog, o->wall_limit_s, o->mem_limit);
    if (g_tmp_dir[0]) gs_nki_prog_set_workdir(prog, g_tmp_dir);
    /* the reference is the command line's; a path in the program file is never run */
    if (o->reference && gs_nki_prog_set_reference(prog, o->ref_path, o->ref_func, &err) != GS_OK) {
        print_error("nki", &err);
        gs_nki_prog_free(prog);
        return GS_EXIT_USAGE;
    }
    if (replay && !o->reference)
        fprintf(stderr, "gensweep nki replay: no --reference: the outputs are not checked%s\n",
                gs_nki_prog_names_reference(prog)
                    ? " (the reference the program file names is not run: replay runs no code "
                      "from a program file)"
                    : "");
    const gs_kernel_def *k = gs_nki_prog_kernel(prog);
    gs_suite_set_extra(k);
    const char *words[16 + 4 * MAX_ARGS];
    int n = 0;
    words[n++] = disasm ? "disasm" : "run";
    words[n++] = "--config";
    words[n++] = o->config;
    words[n++] = "--kernel";
    words[n++] = k->name;
    words[n++] = "--shape";
    words[n++] = gs_nki_prog_shape(prog);
    words[n++] = "--dtype";
    words[n++] = gs_nki_prog_dtype(prog);
    for (int i = 0; i < o->n_sets; i++) {
        words[n++] = "--set";
        words[n++] = o->sets[i];
    }
    for (int i = 0; i < o->n_pass; i++)
        words[n++] = o->pass[i];
    /* run / disasm take a mutable argv, as main's */
    char *argv[16 + 4 * MAX_ARGS + 1];
    int ok = 1;
    for (int i = 0; i < n; i++)
        ok &= (argv[i] = gs_strdup(words[i])) != NULL;
    argv[n] = NULL;
    if (!ok) {
        for (int i = 0; i < n; i++)
            gs_free(argv[i]);
        gs_suite_set_extra(NULL);
        gs_nki_prog_free(prog);
        fprintf(stderr, "gensweep nki: out of memory\n");
        return GS_EXIT_FAIL;
    }
    int rc = disasm ? gs_cmd_disasm(n, argv) : gs_cmd_run(n, argv);
    for (int i = 0; i < n; i++)
        gs_free(argv[i]);
    /* a failed reference is the job's check error, which run printed; it cannot pass */
    if (gs_nki_prog_reference_status(prog, &err) != GS_OK && rc == GS_EXIT_OK) {
        print_error("nki", &err);
        rc = GS_EXIT_FAIL;
    }
    gs_suite_set_extra(NULL);
    gs_nki_prog_free(prog);
    return rc;
}

/* --keep-program: the traced program copied to path whole, or not at all (a full disk: exit 1,
 * nothing at path; the tracer writes into the temporary directory only). */
static int keep_program(const char *prog, const char *path)
{
    gs_error err;
    gs_error_clear(&err);
    gs_sb sb;
    gs_sb_init(&sb);
    FILE *f = fopen(prog, "rb");
    char buf[65536];
    size_t n;
    while (f && (n = fread(buf, 1, sizeof buf, f)) > 0)
        gs_sb_putn(&sb, buf, n);
    gs_status st = !f || ferror(f)  ? gs_error_set(&err, GS_ERR_IO, prog, 0, 0, "cannot read: %s",
                                                   strerror(errno))
                   : !gs_sb_ok(&sb) ? gs_error_set(&err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory")
                                    : gs_sb_write_file(&sb, path, &err);
    if (f) fclose(f);
    gs_sb_free(&sb);
    if (st == GS_OK) return GS_EXIT_OK;
    print_error("nki run --keep-program", &err);
    return st == GS_ERR_USAGE ? GS_EXIT_USAGE : GS_EXIT_FAIL;
}

/* `nki caps --config CFG [--set K=V]...`: the capabilities the front end traces with. */
static int caps_main(int argc, char **argv)
{
    const char *config = NULL;
    const char *sets[MAX_ARGS];
    int n_sets = 0;
    for (int i = 0; i < argc; i++) {
        int is_cfg = !strcmp(argv[i], "--config") || !strcmp(argv[i], "-c");
        if (!is_cfg && !strcmp(argv[i], "--set") && n_sets == MAX_ARGS) {
            fprintf(stderr, "gensweep nki caps: too many --set options (at most %d)\n", MAX_ARGS);
            return GS_EXIT_USAGE;
        }
        if ((is_cfg || !strcmp(argv[i], "--set")) && i + 1 < argc) {
            if (is_cfg)
                config = argv[++i];
            else
                sets[n_sets++] = argv[++i];
            continue;
        }
        fprintf(stderr, "gensweep nki caps: unexpected '%s' (--config CFG [--set K=V]...)\n",
                argv[i]);
        return GS_EXIT_USAGE;
    }
    if (!config) {
        fprintf(stderr, "gensweep nki caps: --config is required\n");
        return GS_EXIT_USAGE;
    }
    gs_diags d;
    gs_diags_init(&d);
    gs_config *cfg = gs_config_load_with(config, sets, (size_t)n_sets, &d);
    if (!cfg) {
        gs_cli_print_diags_escaped(&d);
        gs_diags_free(&d);
        return GS_EXIT_USAGE;
    }
    gs_diags_free(&d);
    gs_error err;
    gs_error_clear(&err);
    gs_status st = write_caps(cfg, "-", &err);
    gs_config_free(cfg);
    if (st != GS_OK) {
        print_error("nki caps", &err);
        return GS_EXIT_FAIL;
    }
    return GS_EXIT_OK;
}

int gs_cmd_nki(int argc, char **argv)
{
    if (argc < 2) {
        gs_help_nki();
        return GS_EXIT_USAGE;
    }
    const char *sub = argv[1];
    int is_run = !strcmp(sub, "run"), is_disasm = !strcmp(sub, "disasm");
    if (!strcmp(sub, "caps")) return caps_main(argc - 2, argv + 2);
    if (!is_run && !is_disasm && strcmp(sub, "replay") != 0) {
        fprintf(stderr, "gensweep nki: unknown subcommand '%s' (run, disasm, replay, caps)\n", sub);
        return GS_EXIT_USAGE;
    }
    nki_opts o;
    if (!parse(argc - 2, argv + 2, &o, sub)) return GS_EXIT_USAGE;
    if (is_disasm && o.n_pass) {
        fprintf(stderr, "gensweep nki disasm: %s is a run option\n", o.pass[0]);
        return GS_EXIT_USAGE;
    }
    if (!is_run && !is_disasm) {
        /* replay starts a process only for a --reference; its files go to the directory */
        if (o.reference && tmp_create() != 0) {
            fprintf(stderr, "gensweep nki: cannot create a temporary directory: %s\n",
                    strerror(errno));
            return GS_EXIT_FAIL;
        }
        int rc = run_program(&o, o.file, 0, 1);
        tmp_finish();
        return rc;
    }
    if (o.keep && gs_sb_check_output(o.keep, &(gs_error){0}) != GS_OK) {
        fprintf(stderr, "gensweep nki run: --keep-program %s: not a writable file path\n", o.keep);
        return GS_EXIT_USAGE;
    }
    gs_diags d;
    gs_diags_init(&d);
    gs_config *cfg = gs_config_load_with(o.config, o.sets, (size_t)o.n_sets, &d);
    if (!cfg) {
        gs_cli_print_diags_escaped(&d);
        gs_diags_free(&d);
        return GS_EXIT_USAGE;
    }
    gs_diags_free(&d);
    if (tmp_create() != 0) {
        fprintf(stderr, "gensweep nki: cannot create a temporary directory: %s\n", strerror(errno));
        gs_config_free(cfg);
        return GS_EXIT_FAIL;
    }
    char caps[64], prog[64];
    snprintf(caps, sizeof caps, "%s/caps.json", g_tmp_dir);
    snprintf(prog, sizeof prog, "%s/kernel.gsk", g_tmp_dir);
    int rc = trace(&o, cfg, caps, prog);
    gs_config_free(cfg);
    if (rc == GS_EXIT_OK && o.keep) rc = keep_program(prog, o.keep);
    if (rc == GS_EXIT_OK) rc = run_program(&o, prog, is_disasm, 0);
    tmp_finish();
    return rc;
}

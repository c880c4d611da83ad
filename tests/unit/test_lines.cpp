// The costliest source lines of a run (harness/job/lines.h; `run --lines`, the record's
// "lines"): the motivating case (a 4 KiB bias load costing about as much DMA time as the 1 MiB
// input beside it), a load waiting on the previous tile's cast through a single-buffered pool
// (a buffer reuse attributed to the pool's declaration site), `nki run --lines` on a project
// NKI kernel, and in every case the per-line numbers summed (top rows + the rest) equal the
// run's own per-engine totals in the same record. The pipeline runs in a forked child
// (SystemC elaborates once per process); the NKI case runs the built binary.
#include <gtest/gtest.h>

#include <cjson/cJSON.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <string>

#include "../support/cli_run.h"
#include "gs/config.h"
#include "jobrun.h"
#include "suite_job.h"

extern "C" {
extern const gs_kernel_def lines_test_bias, lines_test_reuse;
extern int lines_test_bias_load_line, lines_test_input_load_line, lines_test_pool_line,
    lines_test_reuse_load_line;
}

namespace
{

const char kKernelFile[] = "tests/unit/lines_kernels.c";

/* The job record of `def` on gen2 (timing only) with `lines` lines, from a forked child; the
 * child also reports the lines its kernel exported. "" when the run failed. */
struct Rec {
    std::string json;
    int line[4] = {0, 0, 0, 0};
};

Rec run_record(const gs_kernel_def *def, gs_dtype dtype, int lines)
{
    int fd[2];
    Rec out;
    if (pipe(fd) != 0) return out;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        gs_diags d;
        gs_diags_init(&d);
        std::string path = std::string(GS_SOURCE_DIR) + "/configs/gen2.yaml";
        gs_config *cfg = gs_config_load(path.c_str(), &d);
        gs_diags_free(&d);
        std::string text;
        if (cfg) {
            gs_job_spec spec = gs_test_suite_spec(cfg, def, 0, dtype, def->check_shapes[0]);
            gs_job_run_opts opts{};
            opts.lines = lines;
            gs_job_result r;
            if (gs_job_run(&spec, &opts, &r) == GS_OK && r.status == GS_JOB_PASS) {
                gs_sb sb;
                gs_sb_init(&sb);
                if (gs_job_record(&sb, &spec, &opts, &r, nullptr) == GS_OK) text = gs_sb_cstr(&sb);
                gs_sb_free(&sb);
            } else {
                text = std::string("error: ") + r.err.message;
            }
            gs_job_result_free(&r);
        }
        gs_config_free(cfg);
        const int ls[4] = {lines_test_bias_load_line, lines_test_input_load_line,
                           lines_test_pool_line, lines_test_reuse_load_line};
        bool ok = write(fd[1], ls, sizeof ls) == (ssize_t)sizeof ls &&
                  write(fd[1], text.data(), text.size()) == (ssize_t)text.size();
        _exit(ok ? 0 : 1);
    }
    close(fd[1]);
    if (pid > 0) {
        if (read(fd[0], out.line, sizeof out.line) != (ssize_t)sizeof out.line) return out;
        char buf[4096];
        ssize_t n;
        while ((n = read(fd[0], buf, sizeof buf)) > 0)
            out.json.append(buf, (size_t)n);
        int ws = 0;
        waitpid(pid, &ws, 0);
    }
    close(fd[0]);
    return out;
}

double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

bool close_to(double a, double b)
{
    return std::fabs(a - b) <= 1e-6 * std::fmax(std::fabs(a), std::fabs(b)) + 1e-3;
}

/* The lines' rows (top + rest) summed against the record's own totals: compute-engine busy and
 * stalls (engines.*), DMA time (the queues' busy time) and bytes, instructions. "" when they
 * agree, else what differs. */
std::string sums_mismatch(const cJSON *rec)
{
    const cJSON *lines = cJSON_GetObjectItemCaseSensitive(rec, "lines");
    const cJSON *engines = cJSON_GetObjectItemCaseSensitive(rec, "engines");
    const cJSON *dma = cJSON_GetObjectItemCaseSensitive(rec, "dma");
    if (!cJSON_IsObject(lines) || !cJSON_IsObject(engines) || !cJSON_IsObject(dma))
        return "no lines, engines or dma in the record";
    double busy[8] = {0}, dma_ns = 0, dma_bytes = 0, instr = 0, caused = 0;
    const char *names[] = {"tensor", "vector", "scalar", "gpsimd"};
    auto add = [&](const cJSON *row) {
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(row, "busy_ns");
        for (int e = 0; e < 4; e++)
            busy[e] += num(b, names[e]);
        dma_ns += num(row, "dma_ns");
        dma_bytes += num(row, "dma_bytes");
        instr += num(row, "instructions");
        caused += num(row, "stall_caused_ns");
    };
    const cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(lines, "top")) add(row);
    const cJSON *rest = cJSON_GetObjectItemCaseSensitive(lines, "rest");
    if (cJSON_IsObject(rest)) add(rest);
    std::string bad;
    double stalls = 0;
    const cJSON *eng;
    cJSON_ArrayForEach(eng, engines)
    {
        stalls += num(eng, "stall_dep_ns") + num(eng, "stall_dma_ns");
        for (int e = 0; e < 4; e++)
            if (!strcmp(eng->string, names[e]) && !close_to(busy[e], num(eng, "busy_ns")))
                bad += std::string(" busy ") + names[e];
    }
    double queues = 0;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(dma, "queue_busy_ns")) queues +=
        row->valuedouble;
    if (!close_to(dma_ns, queues)) bad += " dma time";
    if (!close_to(dma_bytes, num(rec, "dma_bytes"))) bad += " dma bytes";
    if (!close_to(instr, num(rec, "instructions"))) bad += " instructions";
    if (!close_to(caused, stalls)) bad += " stall caused";
    return bad;
}

const cJSON *row_of(const cJSON *rec, const std::string &src)
{
    const cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(
                                cJSON_GetObjectItemCaseSensitive(rec, "lines"), "top"))
    {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(row, "src");
        if (cJSON_IsString(s) && src == s->valuestring) return row;
    }
    return nullptr;
}

std::string src_of(int line)
{
    return std::string(kKernelFile) + ":" + std::to_string(line);
}

TEST(Lines, TinyBiasLoadShowsItsDmaCost)
{
    Rec r = run_record(&lines_test_bias, GS_FP32, 10);
    cJSON *rec = cJSON_Parse(r.json.c_str());
    ASSERT_NE(rec, nullptr) << r.json;
    const cJSON *bias = row_of(rec, src_of(r.line[0]));
    const cJSON *input = row_of(rec, src_of(r.line[1]));
    ASSERT_NE(bias, nullptr) << r.json;
    ASSERT_NE(input, nullptr) << r.json;
    EXPECT_EQ(num(bias, "dma_bytes"), 4096.0);
    EXPECT_EQ(num(input, "dma_bytes"), 1048576.0);
    // 1/256 of the bytes, yet a large part of the DMA time: fixed and descriptor costs
    EXPECT_GT(num(bias, "dma_ns"), 0.3 * num(input, "dma_ns")) << r.json;
    EXPECT_EQ(sums_mismatch(rec), "");
    cJSON_Delete(rec);
}

TEST(Lines, BufferReuseWaitIsTheDeclarationSite)
{
    Rec r = run_record(&lines_test_reuse, GS_BF16, 10);
    cJSON *rec = cJSON_Parse(r.json.c_str());
    ASSERT_NE(rec, nullptr) << r.json;
    const cJSON *load = row_of(rec, src_of(r.line[3]));
    ASSERT_NE(load, nullptr) << r.json;
    bool found = false;
    const cJSON *w;
    cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(load, "waits"))
    {
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(w, "kind");
        const cJSON *pool = cJSON_GetObjectItemCaseSensitive(w, "pool");
        const cJSON *src = cJSON_GetObjectItemCaseSensitive(w, "src");
        if (cJSON_IsString(kind) && !strcmp(kind->valuestring, "buffer reuse")) {
            found = true;
            ASSERT_TRUE(cJSON_IsString(pool) && cJSON_IsString(src));
            EXPECT_STREQ(pool->valuestring, "in");
            EXPECT_EQ(src->valuestring, src_of(r.line[2]));
            EXPECT_GT(num(w, "ns"), 0.0);
        }
    }
    EXPECT_TRUE(found) << r.json;
    EXPECT_EQ(sums_mismatch(rec), "");
    cJSON_Delete(rec);
}

TEST(Lines, TopRowsAndTheRestSumToTheRunTotals)
{
    // only two rows shown: the rest row carries the others, the sums still hold
    Rec r = run_record(&lines_test_reuse, GS_BF16, 2);
    cJSON *rec = cJSON_Parse(r.json.c_str());
    ASSERT_NE(rec, nullptr) << r.json;
    const cJSON *lines = cJSON_GetObjectItemCaseSensitive(rec, "lines");
    EXPECT_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(lines, "top")), 2);
    EXPECT_TRUE(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(lines, "rest")));
    EXPECT_EQ(sums_mismatch(rec), "");
    // a check that can fail: one row's DMA time changed breaks the sum
    cJSON *top0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(lines, "top"), 0);
    cJSON_ReplaceItemInObjectCaseSensitive(top0, "dma_ns",
                                           cJSON_CreateNumber(num(top0, "dma_ns") + 100.0));
    EXPECT_NE(sums_mismatch(rec), "");
    cJSON_Delete(rec);
}

TEST(Lines, NkiRunLinesNamesThePythonLines)
{
    const std::string args = "nki run tests/nki/kernels/ops.py --kernel add_old --config "
                             "configs/gen3.yaml --arg a=bf16:128x1024 --arg b=bf16:128x1024 ";
    CliRun text = gs_test_gensweep(args + "--lines 3");
    ASSERT_EQ(text.rc, 0) << text.err;
    EXPECT_NE(text.out.find("lines       3 of"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("tests/nki/kernels/ops.py:15"), std::string::npos) << text.out;
    CliRun json = gs_test_gensweep(args + "--json");
    ASSERT_EQ(json.rc, 0) << json.err;
    cJSON *rec = cJSON_Parse(json.out.c_str());
    ASSERT_NE(rec, nullptr) << json.out;
    // the loads of x and y (lines 15, 16) and the store (17) each move 256 KiB
    for (int line : {15, 16, 17}) {
        const cJSON *row = row_of(rec, "tests/nki/kernels/ops.py:" + std::to_string(line));
        ASSERT_NE(row, nullptr) << line << " " << json.out;
        EXPECT_EQ(num(row, "dma_bytes"), 262144.0) << line;
    }
    EXPECT_EQ(sums_mismatch(rec), "");
    cJSON_Delete(rec);
}

} // namespace

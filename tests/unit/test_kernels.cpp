// Every kernel x every generation config found in configs/ x every check shape, run through the
// pure-C functional executor and checked against the kernel's reference. A new YAML file in
// configs/ is covered automatically. Also: a deliberately broken kernel must be caught.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <ostream>
#include <string>
#include <map>
#include <vector>

#include "gs/config.h"
#include "job.h"
#include "shipped_configs.h"

namespace
{

std::vector<std::string> config_files()
{
    return gs_test_shipped_configs();
}

struct Case {
    std::string config;
    const gs_kernel_def *kernel;
    int variant;
    gs_shape shape;
};

void PrintTo(const Case &c, std::ostream *os)
{
    *os << c.config << " " << c.kernel->name << "/" << c.kernel->variants[c.variant];
}

std::vector<Case> all_cases()
{
    std::vector<Case> cases;
    for (const auto &cfg : config_files())
        for (size_t k = 0; k < gs_suite_count(); k++) {
            const gs_kernel_def *def = gs_suite_kernel(k);
            for (int v = 0; v < def->n_variants; v++)
                for (int s = 0; s < GS_SUITE_MAX_SHAPES && def->check_shapes[s].n; s++)
                    cases.push_back({cfg, def, v, def->check_shapes[s]});
        }
    return cases;
}

std::string case_name(const testing::TestParamInfo<Case> &info)
{
    const Case &c = info.param;
    std::string base = c.config.substr(c.config.rfind('/') + 1);
    base = base.substr(0, base.size() - 5);
    std::string n = base + "_" + c.kernel->name + "_" + c.kernel->variants[c.variant];
    for (int i = 0; i < c.shape.n; i++)
        n += (i ? "x" : "_") + std::to_string(c.shape.d[i]);
    for (auto &ch : n)
        if (!isalnum((unsigned char)ch)) ch = '_';
    return n;
}

struct ConfigHolder {
    gs_config *cfg = nullptr;
    explicit ConfigHolder(const std::string &path)
    {
        gs_diags d;
        gs_diags_init(&d);
        cfg = gs_config_load(path.c_str(), &d);
        std::string msgs;
        for (size_t i = 0; i < d.count; i++)
            msgs += std::string(d.items[i].message) + "\n";
        EXPECT_NE(cfg, nullptr) << path << ":\n" << msgs;
        gs_diags_free(&d);
    }
    ~ConfigHolder() { gs_config_free(cfg); }
};

// Execute in a valid order as different from program order as possible: among the instructions
// whose dependencies have completed, always the one issued last. Valid means what the machine
// guarantees: the explicit dependencies, and each compute engine of a core running its
// instructions one after the other in program order (the builder leaves out a dependency that
// order already gives, e.g. on an earlier read of the same engine that a later one covers). DMA
// queues give no such order (their transfers may complete out of order): only dependencies.
gs_status exec_adversarial(gs_mem *m, const gs_program *p, gs_error *err)
{
    size_t n = gs_program_count(p);
    std::vector<uint32_t> missing(n);
    std::vector<std::vector<uint32_t>> users(n);
    std::map<std::pair<unsigned, int>, uint32_t> last_on_engine;
    for (size_t i = 0; i < n; i++) {
        const gs_instr *in = gs_program_instr(p, i);
        missing[i] = in->n_deps;
        for (uint32_t d = 0; d < in->n_deps; d++)
            users[in->deps[d]].push_back((uint32_t)i);
        if (in->engine == GS_ENG_DMA) continue;
        auto key = std::make_pair((unsigned)in->core, (int)in->engine);
        auto prev = last_on_engine.find(key);
        if (prev != last_on_engine.end()) {
            missing[i]++;
            users[prev->second].push_back((uint32_t)i);
        }
        last_on_engine[key] = (uint32_t)i;
    }
    std::vector<uint32_t> ready; // a max-heap on the index
    for (size_t i = 0; i < n; i++)
        if (!missing[i]) ready.push_back((uint32_t)i);
    std::make_heap(ready.begin(), ready.end());
    size_t done = 0;
    while (!ready.empty()) {
        std::pop_heap(ready.begin(), ready.end());
        uint32_t i = ready.back();
        ready.pop_back();
        gs_status st = gs_exec_instr(m, p, i, err);
        if (st != GS_OK) return st;
        done++;
        for (uint32_t u : users[i])
            if (--missing[u] == 0) {
                ready.push_back(u);
                std::push_heap(ready.begin(), ready.end());
            }
    }
    return done == n ? GS_OK : gs_error_set(err, GS_ERR_DEADLOCK, nullptr, 0, 0, "cycle");
}

class KernelCheck : public testing::TestWithParam<Case>
{
};

TEST_P(KernelCheck, MatchesReferenceOrReportsCleanReason)
{
    const Case &c = GetParam();
    ConfigHolder h(c.config);
    ASSERT_NE(h.cfg, nullptr);
    gs_job_spec spec{};
    spec.cfg = h.cfg;
    spec.kernel = c.kernel;
    spec.variant = c.variant;
    spec.dtype = GS_BF16;
    spec.n_dims = c.shape.n;
    for (int i = 0; i < c.shape.n; i++)
        spec.dims[i] = c.shape.d[i];
    spec.seed = 7;
    gs_job *job = nullptr;
    gs_error err;
    gs_error_clear(&err);
    gs_status st = gs_job_build(&spec, &job, &err);
    if (st == GS_ERR_UNSUPPORTED || st == GS_ERR_DOES_NOT_FIT) {
        // a clean reason, naming the kernel line
        EXPECT_TRUE(std::strstr(err.message, "unsupported") ||
                    std::strstr(err.message, "does not fit"))
            << err.message;
        gs_job_free(job);
        return;
    }
    ASSERT_EQ(st, GS_OK) << err.file << ":" << err.line << ": " << err.message;
    ASSERT_GT(gs_program_count(gs_job_program(job)), 0u);
    ASSERT_EQ(gs_job_init_memory(job, &err), GS_OK) << err.message;
    ASSERT_EQ(gs_exec_program(gs_job_memory(job), gs_job_program(job), &err), GS_OK) << err.message;
    gs_job_check chk;
    EXPECT_EQ(gs_job_check_outputs(job, &chk, &err), GS_OK) << err.message;
    EXPECT_TRUE(chk.checked);
    EXPECT_EQ(chk.mismatches, 0u);
    // Dependencies must be complete: any order that respects them gives the same bytes. Run
    // again in an adversarial order (always the latest ready instruction first) and compare.
    const gs_program *p = gs_job_program(job);
    std::vector<std::vector<uint8_t>> first;
    for (size_t t = 0; t < gs_program_tensor_count(p); t++) {
        const gs_tensor_info *ti = gs_program_tensor(p, (int32_t)t);
        const uint8_t *d =
            static_cast<const uint8_t *>(gs_mem_tensor(gs_job_memory(job), (int32_t)t));
        first.emplace_back(d, d + ti->bytes);
    }
    ASSERT_EQ(gs_job_init_memory(job, &err), GS_OK) << err.message;
    ASSERT_EQ(exec_adversarial(gs_job_memory(job), p, &err), GS_OK) << err.message;
    for (size_t t = 0; t < gs_program_tensor_count(p); t++) {
        const gs_tensor_info *ti = gs_program_tensor(p, (int32_t)t);
        const uint8_t *d =
            static_cast<const uint8_t *>(gs_mem_tensor(gs_job_memory(job), (int32_t)t));
        EXPECT_EQ(std::memcmp(d, first[t].data(), ti->bytes), 0)
            << "tensor " << ti->name
            << " differs when instructions run in another dependency-respecting "
               "order: a dependency is missing";
    }
    gs_job_free(job);
}

INSTANTIATE_TEST_SUITE_P(Suite, KernelCheck, testing::ValuesIn(all_cases()), case_name);

TEST(KernelSuite, ConfigsAndKernelsExist)
{
    EXPECT_GE(config_files().size(), 3u) << "configs/gen1.yaml .. gen3.yaml";
    EXPECT_GE(gs_suite_count(), 2u);
    for (size_t k = 0; k < gs_suite_count(); k++) {
        const gs_kernel_def *d = gs_suite_kernel(k);
        EXPECT_EQ(gs_suite_find(d->name), d);
        bool ragged = false;
        for (int s = 0; s < GS_SUITE_MAX_SHAPES && d->check_shapes[s].n; s++)
            for (int i = 0; i < d->check_shapes[s].n; i++)
                if (d->check_shapes[s].d[i] % 128) ragged = true;
        EXPECT_TRUE(ragged) << d->name << " needs a ragged check shape";
    }
}

// ---- the checker must catch a broken kernel ----

// elementwise add that forgets the last column of every row block (an off-by-one tail)
gs_status broken_add(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    int64_t R = a->dims[0], W = a->dims[1];
    gs_pool *p = gs_pool_create(kb, GS_MEM_SBUF, "x", 3, (uint64_t)W * 4);
    for (int64_t r0 = 0; r0 < R; r0 += c->partitions) {
        unsigned np = (unsigned)std::min<int64_t>(c->partitions, R - r0);
        uint32_t nf = (uint32_t)(W - 1);
        gs_tile ta = gs_tile_alloc(p, a->dtype, np, nf);
        gs_tile tb = gs_tile_alloc(p, a->dtype, np, nf);
        gs_tile to = gs_tile_alloc(p, a->dtype, np, nf);
        gs_dma_copy(kb, ta.ap, gs_hbm_rows(&a->t[0], r0, np, 0, nf), -1);
        gs_dma_copy(kb, tb.ap, gs_hbm_rows(&a->t[1], r0, np, 0, nf), -1);
        gs_tensor_tensor(kb, to.ap, ta.ap, tb.ap, GS_ALU_ADD);
        gs_dma_copy(kb, gs_hbm_rows(&a->t[2], r0, np, 0, nf), to.ap, -1);
    }
    return gs_kb_status(kb);
}

// elementwise add that computes A - B: wrong values everywhere
gs_status wrong_op(gs_kb *kb, const gs_kernel_args *a)
{
    int64_t R = a->dims[0], W = a->dims[1];
    gs_pool *p = gs_pool_create(kb, GS_MEM_SBUF, "x", 3, (uint64_t)W * 4);
    unsigned np = (unsigned)R;
    gs_tile ta = gs_tile_alloc(p, a->dtype, np, (uint32_t)W);
    gs_tile tb = gs_tile_alloc(p, a->dtype, np, (uint32_t)W);
    gs_tile to = gs_tile_alloc(p, a->dtype, np, (uint32_t)W);
    gs_dma_copy(kb, ta.ap, gs_hbm_rows(&a->t[0], 0, np, 0, (uint32_t)W), -1);
    gs_dma_copy(kb, tb.ap, gs_hbm_rows(&a->t[1], 0, np, 0, (uint32_t)W), -1);
    gs_tensor_tensor(kb, to.ap, ta.ap, tb.ap, GS_ALU_SUB);
    gs_dma_copy(kb, gs_hbm_rows(&a->t[2], 0, np, 0, (uint32_t)W), to.ap, -1);
    return gs_kb_status(kb);
}

// elementwise add that computes 2 min(A, B) = A + B - |A - B|: below the reference everywhere
// (a checker that took got - ref for the error, not its magnitude, would pass it)
gs_status below_everywhere(gs_kb *kb, const gs_kernel_args *a)
{
    int64_t R = a->dims[0], W = a->dims[1];
    gs_pool *p = gs_pool_create(kb, GS_MEM_SBUF, "x", 4, (uint64_t)W * 4);
    unsigned np = (unsigned)R;
    gs_tile ta = gs_tile_alloc(p, a->dtype, np, (uint32_t)W);
    gs_tile tb = gs_tile_alloc(p, a->dtype, np, (uint32_t)W);
    gs_tile tm = gs_tile_alloc(p, a->dtype, np, (uint32_t)W);
    gs_tile to = gs_tile_alloc(p, a->dtype, np, (uint32_t)W);
    gs_dma_copy(kb, ta.ap, gs_hbm_rows(&a->t[0], 0, np, 0, (uint32_t)W), -1);
    gs_dma_copy(kb, tb.ap, gs_hbm_rows(&a->t[1], 0, np, 0, (uint32_t)W), -1);
    gs_tensor_tensor(kb, tm.ap, ta.ap, tb.ap, GS_ALU_MIN);
    gs_tensor_tensor(kb, to.ap, tm.ap, tm.ap, GS_ALU_ADD);
    gs_dma_copy(kb, gs_hbm_rows(&a->t[2], 0, np, 0, (uint32_t)W), to.ap, -1);
    return gs_kb_status(kb);
}

void run_broken(gs_kernel_fn fn, int64_t R, int64_t W, gs_job_check *chk, gs_status *st)
{
    ConfigHolder h(std::string(GS_SOURCE_DIR) + "/configs/gen2.yaml");
    ASSERT_NE(h.cfg, nullptr);
    gs_kernel_def def = gs_kernel_elementwise_add;
    def.build = fn;
    gs_job_spec spec{};
    spec.cfg = h.cfg;
    spec.kernel = &def;
    spec.dtype = GS_BF16;
    spec.n_dims = 2;
    spec.dims[0] = R;
    spec.dims[1] = W;
    spec.seed = 3;
    gs_job *job = nullptr;
    gs_error err;
    ASSERT_EQ(gs_job_build(&spec, &job, &err), GS_OK) << err.message;
    ASSERT_EQ(gs_job_init_memory(job, &err), GS_OK);
    ASSERT_EQ(gs_exec_program(gs_job_memory(job), gs_job_program(job), &err), GS_OK);
    *st = gs_job_check_outputs(job, chk, &err);
    gs_job_free(job);
}

TEST(Checker, CatchesAnOffByOneTail)
{
    gs_job_check chk;
    gs_status st = GS_OK;
    run_broken(broken_add, 200, 33, &chk, &st);
    EXPECT_EQ(st, GS_ERR_MISMATCH);
    // the unwritten last column keeps the NaN sentinel: 200 elements
    EXPECT_EQ(chk.bad_nonfinite, 200u);
    EXPECT_EQ(chk.mismatches, 200u);
    // the worst element is named by [row, col], not a flat index: the first unwritten one
    EXPECT_NE(std::string(chk.worst).find("[0, 32]"), std::string::npos) << chk.worst;
}

TEST(Checker, CatchesValuesBelowTheReferenceEverywhere)
{
    gs_job_check chk;
    gs_status st = GS_OK;
    run_broken(below_everywhere, 64, 40, &chk, &st);
    EXPECT_EQ(st, GS_ERR_MISMATCH);
    EXPECT_GT(chk.mismatches, 64u * 40u / 2);
    EXPECT_GT(chk.max_abs_err, 0.1); // a magnitude, never a negative difference
    EXPECT_EQ(chk.bad_nonfinite, 0u);
}

TEST(Checker, CatchesWrongValues)
{
    gs_job_check chk;
    gs_status st = GS_OK;
    run_broken(wrong_op, 64, 40, &chk, &st);
    EXPECT_EQ(st, GS_ERR_MISMATCH);
    EXPECT_GT(chk.mismatches, 64u * 40u / 2);
    EXPECT_EQ(chk.bad_nonfinite, 0u);
    EXPECT_GT(chk.max_abs_err, 0.1);
}

// ---- tile lifetimes: a handle to a buffer its pool has since rotated ----

// elementwise add through a one-buffer pool that allocates B's tile before it is done with A's:
// the pool hands out its only buffer again, so `ta` names the buffer that now holds B. With
// `alias` set it uses `tb` where the stale `ta` stood: the program the builder used to emit for
// the stale handle (the two patterns are the same bytes apart from their allocation number).
gs_status rotated_add(gs_kb *kb, const gs_kernel_args *a, bool alias, int *stale_line)
{
    int64_t R = a->dims[0], W = a->dims[1];
    unsigned np = (unsigned)R;
    gs_pool *in = gs_pool_create(kb, GS_MEM_SBUF, "in", 1, (uint64_t)W * 4);
    gs_pool *out = gs_pool_create(kb, GS_MEM_SBUF, "out", 1, (uint64_t)W * 4);
    gs_tile ta = gs_tile_alloc(in, a->dtype, np, (uint32_t)W);
    gs_dma_copy(kb, ta.ap, gs_hbm_rows(&a->t[0], 0, np, 0, (uint32_t)W), -1);
    gs_tile tb = gs_tile_alloc(in, a->dtype, np, (uint32_t)W); // the same buffer: ta is stale
    gs_dma_copy(kb, tb.ap, gs_hbm_rows(&a->t[1], 0, np, 0, (uint32_t)W), -1);
    EXPECT_EQ(ta.ap.tensor, tb.ap.tensor);
    EXPECT_EQ(std::memcmp(&ta.ap, &tb.ap, offsetof(gs_ap, gen)), 0) << "the same pattern";
    EXPECT_NE(ta.ap.gen, tb.ap.gen);
    gs_tile to = gs_tile_alloc(out, a->dtype, np, (uint32_t)W);
    *stale_line = __LINE__ + 1;
    gs_tensor_tensor(kb, to.ap, alias ? tb.ap : ta.ap, tb.ap, GS_ALU_ADD);
    gs_dma_copy(kb, gs_hbm_rows(&a->t[2], 0, np, 0, (uint32_t)W), to.ap, -1);
    return gs_kb_status(kb);
}

int g_stale_line = 0;
gs_status stale_add(gs_kb *kb, const gs_kernel_args *a)
{
    return rotated_add(kb, a, false, &g_stale_line);
}
gs_status aliased_add(gs_kb *kb, const gs_kernel_args *a)
{
    return rotated_add(kb, a, true, &g_stale_line);
}

gs_job_spec add_spec(const gs_config *cfg, const gs_kernel_def *def, int64_t R, int64_t W)
{
    gs_job_spec spec{};
    spec.cfg = cfg;
    spec.kernel = def;
    spec.dtype = GS_BF16;
    spec.n_dims = 2;
    spec.dims[0] = R;
    spec.dims[1] = W;
    spec.seed = 3;
    return spec;
}

// What the stale handle read: the aliased program builds (a timing-only job, which checks no
// data, reports pass) and computes B + B, which the functional check rejects everywhere.
TEST(TileLifetime, AStaleHandleReadTheNewerTilesData)
{
    ConfigHolder h(std::string(GS_SOURCE_DIR) + "/configs/gen2.yaml");
    ASSERT_NE(h.cfg, nullptr);
    gs_kernel_def def = gs_kernel_elementwise_add;
    def.build = aliased_add;
    gs_job_spec spec = add_spec(h.cfg, &def, 64, 40);
    gs_job *job = nullptr;
    gs_error err;
    ASSERT_EQ(gs_job_build(&spec, &job, &err), GS_OK) << err.message;
    ASSERT_EQ(gs_job_init_memory(job, &err), GS_OK);
    ASSERT_EQ(gs_exec_program(gs_job_memory(job), gs_job_program(job), &err), GS_OK);
    gs_job_check chk;
    EXPECT_EQ(gs_job_check_outputs(job, &chk, &err), GS_ERR_MISMATCH);
    EXPECT_GT(chk.mismatches, 64u * 40u / 2);
    gs_job_free(job);
}

// ... and now the stale handle itself is an error when the kernel is built, at the kernel line
// that used it, naming the tile, its pool and where the buffer's newer tile was allocated.
TEST(TileLifetime, AStaleHandleIsABuildError)
{
    ConfigHolder h(std::string(GS_SOURCE_DIR) + "/configs/gen2.yaml");
    ASSERT_NE(h.cfg, nullptr);
    gs_kernel_def def = gs_kernel_elementwise_add;
    def.build = stale_add;
    gs_job_spec spec = add_spec(h.cfg, &def, 64, 40);
    gs_job *job = nullptr;
    gs_error err;
    gs_error_clear(&err);
    EXPECT_EQ(gs_job_build(&spec, &job, &err), GS_ERR_INVALID);
    gs_job_free(job);
    std::string msg = err.message;
    EXPECT_NE(msg.find("tensor_tensor in0: stale tile: tile 1 of pool 'in' (buffer 'in.0')"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("gave its buffer to tile 2 (allocated at "), std::string::npos) << msg;
    EXPECT_NE(std::string(err.file).find("test_kernels.cpp"), std::string::npos) << err.file;
    EXPECT_EQ(err.line, g_stale_line);
}

} // namespace

TEST(RooflineCheck, ARunFasterThanPhysicsIsAModelError)
{
    gs_run_stats st;
    memset(&st, 0, sizeof st);
    gs_error err;
    EXPECT_EQ(gs_job_check_roofline(&st, &err), GS_OK); // no roofline: nothing to check
    st.total_ns = 100.0;
    st.roofline_ns = 80.0;
    st.min_roofline_ns = 60.0;
    EXPECT_EQ(gs_job_check_roofline(&st, &err), GS_OK);
    st.total_ns = 100.0;
    st.min_roofline_ns = 100.0005; // within a picosecond of rounding
    EXPECT_EQ(gs_job_check_roofline(&st, &err), GS_OK);
    st.min_roofline_ns = 101.0;
    EXPECT_EQ(gs_job_check_roofline(&st, &err), GS_ERR_INTERNAL);
    EXPECT_NE(std::string(err.message).find("minimum-traffic roofline"), std::string::npos);
    st.min_roofline_ns = 50.0;
    st.roofline_ns = 120.0;
    EXPECT_EQ(gs_job_check_roofline(&st, &err), GS_ERR_INTERNAL);
    EXPECT_NE(std::string(err.message).find("schedule's traffic"), std::string::npos);
}

// Kernels read tunables by name (gs/kernel.h): the harness passes the kernel's param names.
TEST(KernelParams, LookupByNameWithDefault)
{
    const gs_kernel_def *k = gs_suite_find("matmul");
    ASSERT_NE(k, nullptr);
    gs_kernel_args a{};
    a.param_names = k->param_names;
    a.n_params = k->n_params;
    for (int i = 0; i < k->n_params; i++)
        a.param[i] = 0;
    a.param[1] = 3; // the second registered name
    EXPECT_EQ(gs_kernel_param(&a, k->param_names[1], 2), 3);
    EXPECT_EQ(gs_kernel_param(&a, k->param_names[0], 256), 256); // 0: the default
    EXPECT_EQ(gs_kernel_param(&a, "no_such_param", 7), -1);      // a kernel bug, never a value
    gs_kernel_args none{};
    EXPECT_EQ(gs_kernel_param(&none, "tn", 5), -1);
}

// Valid configs at the edges (one DMA queue, one DMA engine, a tiny SBUF, 64 free elements per
// instruction): every kernel on every
// check and perf shape builds, or says cleanly that it is unsupported or does not fit. Never a
// kernel error (a queue it assumed, a chunk of 0). Only the build runs (timing-only perf shapes are
// large), so the tiny configs cost little.
TEST(KernelEdges, ValidSmallConfigsNeverGiveKernelErrors)
{
    const std::vector<std::vector<const char *>> edges = {
        {"core.dma.queues=1"},
        {"core.dma.engines=1"},
        {"core.sbuf=1KiB"},
        {"core.sbuf=8KiB", "core.dma.queues=1"},
        {"engines.vector.max_free_sbuf=64", "engines.scalar.max_free_sbuf=64",
         "engines.gpsimd.max_free_sbuf=64"},
    };
    const std::string gen2 = std::string(GS_SOURCE_DIR) + "/configs/gen2.yaml";
    for (const auto &sets : edges) {
        ConfigHolder h(gen2);
        ASSERT_NE(h.cfg, nullptr);
        std::string label;
        for (const char *s : sets) {
            gs_diags d;
            gs_diags_init(&d);
            ASSERT_EQ(gs_config_set(h.cfg, s, &d), GS_OK)
                << s << ": " << (d.count ? d.items[0].message : "");
            gs_diags_free(&d);
            label += std::string(label.empty() ? "" : " ") + s;
        }
        const bool tiny_sbuf = label.find("core.sbuf") != std::string::npos;
        for (size_t k = 0; k < gs_suite_count(); k++) {
            const gs_kernel_def *def = gs_suite_kernel(k);
            for (int v = 0; v < def->n_variants; v++)
                for (int perf = 0; perf < (tiny_sbuf ? 2 : 1); perf++)
                    for (int s = 0; s < GS_SUITE_MAX_SHAPES; s++) {
                        const gs_shape &sh = perf ? def->perf_shapes[s] : def->check_shapes[s];
                        if (!sh.n) break;
                        gs_job_spec spec{};
                        spec.cfg = h.cfg;
                        spec.kernel = def;
                        spec.variant = v;
                        spec.dtype = GS_BF16;
                        spec.n_dims = sh.n;
                        for (int i = 0; i < sh.n; i++)
                            spec.dims[i] = sh.d[i];
                        spec.seed = 1;
                        gs_job *job = nullptr;
                        gs_error err;
                        gs_error_clear(&err);
                        gs_status st = gs_job_build(&spec, &job, &err);
                        gs_job_free(job);
                        EXPECT_TRUE(st == GS_OK || st == GS_ERR_UNSUPPORTED ||
                                    st == GS_ERR_DOES_NOT_FIT)
                            << label << ": " << def->name << "/" << def->variants[v]
                            << (perf ? " perf" : " check") << " shape " << s << ": "
                            << gs_status_name(st) << ": " << err.message;
                    }
        }
    }
}

// Tests for the generation config loader (gs/config.h): the real configs, every validation rule,
// extends, --set, show-config, the schema documentation and the malformed-config corpus.
#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gs/config.h"
#include "gs/isa.h"

namespace
{

const std::string kSrc = GS_SOURCE_DIR;
const std::string kConfigs = kSrc + "/configs";

std::string diags_text(const gs_diags &d)
{
    std::string s;
    char buf[2048];
    for (size_t i = 0; i < d.count; i++) {
        gs_error_format(&d.items[i], buf, sizeof buf);
        s += buf;
        s += "\n";
    }
    return s;
}

// A loaded config plus the diagnostics of the load; frees both.
struct Loaded {
    gs_config *c = nullptr;
    gs_diags d;
    Loaded() { gs_diags_init(&d); }
    ~Loaded()
    {
        gs_config_free(c);
        gs_diags_free(&d);
    }
    std::string errors() const { return diags_text(d); }
    bool has(const std::string &needle) const { return errors().find(needle) != std::string::npos; }
};

void load_file(Loaded &l, const std::string &path)
{
    l.c = gs_config_load(path.c_str(), &l.d);
}

void load_str(Loaded &l, const std::string &yaml, const char *name = "t.yaml",
              const std::string &dir = kConfigs)
{
    l.c = gs_config_load_string(yaml.data(), yaml.size(), name, dir.c_str(), &l.d);
}

std::string tmpdir(const std::string &sub)
{
    std::string base = std::string(GS_BINARY_DIR) + "/test_config_tmp";
    mkdir(base.c_str(), 0755);
    std::string d = base + "/" + sub;
    mkdir(d.c_str(), 0755);
    return d;
}

void write_file(const std::string &path, const std::string &text)
{
    std::ofstream f(path, std::ios::binary);
    f << text;
}

std::string read_all(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

std::string set_err(gs_config *c, const char *assignment, gs_status want)
{
    gs_diags d;
    gs_diags_init(&d);
    EXPECT_EQ(gs_config_set(c, assignment, &d), want) << assignment << "\n" << diags_text(d);
    std::string s = diags_text(d);
    gs_diags_free(&d);
    return s;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// schema table

TEST(ConfigSchema, FieldsAreUniqueAndReachable)
{
    size_t n = 0;
    const gs_config_field *f = gs_config_fields(&n);
    ASSERT_GT(n, 60u);
    std::set<std::string> seen;
    Loaded l;
    load_file(l, kConfigs + "/gen3.yaml");
    ASSERT_NE(l.c, nullptr) << l.errors();
    for (size_t i = 0; i < n; i++) {
        EXPECT_TRUE(seen.insert(f[i].path).second) << f[i].path;
        EXPECT_NE(gs_config_get(l.c, f[i].path), nullptr) << f[i].path;
        EXPECT_TRUE(f[i].description && *f[i].description) << f[i].path;
    }
    EXPECT_EQ(gs_config_get(l.c, "core.nope"), nullptr);
    EXPECT_EQ(gs_config_get(l.c, nullptr), nullptr);
    EXPECT_EQ(gs_config_get(l.c, "core.sbuf"), &l.c->sbuf_bytes);
    EXPECT_EQ(gs_config_get(l.c, "core.semaphore_latency"), &l.c->sem_latency);
    EXPECT_EQ(gs_config_get(l.c, "engines.tensor.rate.fp8_e4m3"), &l.c->tensor.rate[GS_FP8_E4M3]);
    EXPECT_EQ(gs_config_get(l.c, "engines.gpsimd.elems_per_cycle.int32"),
              &l.c->gpsimd.elems_per_cycle[GS_INT32]);
}

TEST(ConfigSchema, EveryKeyIsDocumented)
{
    std::string doc = read_all(kConfigs + "/SCHEMA.md");
    ASSERT_FALSE(doc.empty());
    size_t n = 0;
    const gs_config_field *f = gs_config_fields(&n);
    for (size_t i = 0; i < n; i++)
        EXPECT_NE(doc.find(std::string("`") + f[i].path + "`"), std::string::npos)
            << f[i].path << " is not documented in configs/SCHEMA.md";
    const char *others[] = {"name",
                            "family",
                            "description",
                            "extends",
                            "sources",
                            "dtypes",
                            "ops",
                            "core.dma.transpose",
                            "core.dma.hw_descriptors",
                            "core.dma.cast",
                            "engines.gpsimd.present",
                            "engines.vector.present",
                            "engines.scalar.present"};
    for (const char *k : others)
        EXPECT_NE(doc.find(std::string("`") + k + "`"), std::string::npos) << k;
#define GS_T_OP(e, name, eng) EXPECT_NE(doc.find(name), std::string::npos) << name;
    GS_OPCODE_TABLE(GS_T_OP)
#undef GS_T_OP
}

TEST(ConfigSchema, EngineNames)
{
    static const char *const want[] = {"tensor", "vector", "scalar", "gpsimd", "dma"};
    ASSERT_EQ(sizeof want / sizeof want[0], (size_t)GS_ENGINE_COUNT);
    for (int e = 0; e < GS_ENGINE_COUNT; e++)
        EXPECT_STREQ(gs_engine_name((gs_engine)e), want[e]);
    EXPECT_STREQ(gs_engine_name((gs_engine)99), "?");
    EXPECT_STREQ(gs_engine_name((gs_engine)-1), "?");
}

// The ops list is stored as 1ull << gs_opcode: every name maps to its own enum bit.
TEST(ConfigSchema, OpsBitsFollowTheOpcodeEnum)
{
    struct Op {
        gs_opcode op;
        const char *name;
    } ops[] = {
#define GS_T_OP(e, name, eng) {e, name},
        GS_OPCODE_TABLE(GS_T_OP)
#undef GS_T_OP
    };
    ASSERT_EQ(sizeof ops / sizeof ops[0], (size_t)GS_OPCODE_COUNT);
    for (const Op &o : ops) {
        Loaded l;
        // gen4: the family with every extension op (matmul_mx, quantize_mx)
        load_str(l, std::string("extends: gen4\nops: [") + o.name + "]\n");
        ASSERT_NE(l.c, nullptr) << o.name << "\n" << l.errors();
        EXPECT_EQ(l.c->ops, 1ull << o.op) << o.name;
    }
}

// ---------------------------------------------------------------------------------------------
// the real configs

struct GenCase {
    const char *file;
    double bf16_tf, fp32_tf, fp8_tf; // expected per-core peaks (the public Neuron pages cited in
                                     // configs/), 0 = unsupported
    int cores;
    bool gpsimd;
};

class RealConfig : public ::testing::TestWithParam<GenCase>
{
};

TEST_P(RealConfig, LoadsWithFactsPeaks)
{
    const GenCase &g = GetParam();
    Loaded l;
    load_file(l, kConfigs + "/" + g.file);
    ASSERT_NE(l.c, nullptr) << l.errors();
    EXPECT_EQ(l.d.count, 0u);
    const gs_config *c = l.c;
    EXPECT_NEAR(gs_config_peak_flops(c, GS_BF16) / 1e12, g.bf16_tf, 1.0);
    EXPECT_NEAR(gs_config_peak_flops(c, GS_FP32) / 1e12, g.fp32_tf, 1.0);
    EXPECT_NEAR(gs_config_peak_flops(c, GS_FP8_E4M3) / 1e12, g.fp8_tf, 1.0);
    EXPECT_EQ(c->cores.v, g.cores);
    EXPECT_EQ(gs_config_has_engine(c, GS_ENG_GPSIMD), g.gpsimd ? 1 : 0);
    EXPECT_TRUE(gs_config_has_engine(c, GS_ENG_TENSOR) && gs_config_has_engine(c, GS_ENG_DMA));
    EXPECT_TRUE(gs_config_has_dtype(c, GS_BF16));
    EXPECT_EQ(gs_config_sbuf_partition_bytes(c) * 128, (size_t)c->sbuf_bytes.v);
    EXPECT_EQ(gs_config_psum_bank_bytes(c), 2048u);
    EXPECT_GT(c->n_sources, 3u);
}

// Every written number has provenance that resolves: a source key of the file or "assumed",
// and a file:line:col.
TEST_P(RealConfig, EveryNumberHasProvenance)
{
    Loaded l;
    load_file(l, kConfigs + "/" + GetParam().file);
    ASSERT_NE(l.c, nullptr) << l.errors();
    size_t n = 0;
    const gs_config_field *f = gs_config_fields(&n);
    size_t written = 0;
    for (size_t i = 0; i < n; i++) {
        const gs_num *v = gs_config_get(l.c, f[i].path);
        if (!v->src) continue;
        written++;
        bool known = !strcmp(v->src, "assumed") || !strcmp(v->src, "fit");
        for (size_t k = 0; k < l.c->n_sources; k++)
            known |= !strcmp(v->src, l.c->source_keys[k]);
        EXPECT_TRUE(known) << f[i].path << " [" << v->src << "]";
        EXPECT_NE(v->file, nullptr) << f[i].path;
        EXPECT_GT(v->line, 0) << f[i].path;
        EXPECT_GT(v->col, 0) << f[i].path;
        if (!strcmp(v->src, "assumed")) {
            EXPECT_NE(v->note, nullptr) << f[i].path << ": say why";
        }
    }
    EXPECT_GT(written, 40u);
}

INSTANTIATE_TEST_SUITE_P(Gens, RealConfig,
                         ::testing::Values(GenCase{"gen1.yaml", 16.4, 16.4, 0, 4, false},
                                           GenCase{"gen2.yaml", 91.75, 22.9, 91.75, 2, true},
                                           GenCase{"gen3.yaml", 78.6, 19.7, 157.3, 8, true},
                                           GenCase{"whatif/gen3-2x-sbuf.yaml", 78.6, 19.7, 157.3, 8,
                                                   true}),
                         [](const ::testing::TestParamInfo<GenCase> &i) {
                             std::string s = i.param.file;
                             for (char &ch : s)
                                 if (!isalnum((unsigned char)ch)) ch = '_';
                             return s;
                         });

TEST(RealConfigs, GenerationSpecifics)
{
    Loaded g1, g2, g3;
    load_file(g1, kConfigs + "/gen1.yaml");
    load_file(g2, kConfigs + "/gen2.yaml");
    load_file(g3, kConfigs + "/gen3.yaml");
    ASSERT_TRUE(g1.c && g2.c && g3.c) << g1.errors() << g2.errors() << g3.errors();
    // gen2: 24 MiB SBUF = 128 x 192 KiB, 2 MiB PSUM in 8 banks, 820 GiB/s
    EXPECT_EQ(gs_config_sbuf_partition_bytes(g2.c), 192u * 1024);
    EXPECT_EQ(gs_config_psum_partition_bytes(g2.c), 16u * 1024);
    EXPECT_NEAR(gs_config_hbm_bytes_per_s(g2.c), 820.0 * 1073741824.0, 1.0);
    EXPECT_EQ(g2.c->dma.engines.v, 16);
    EXPECT_EQ(g2.c->dma.queues.v, 16);
    EXPECT_EQ(g2.c->dma.bandwidth_per_engine.v, 27.2);
    EXPECT_STREQ(g2.c->dma.bandwidth_per_engine.src, "DMAO");
    EXPECT_EQ(g2.c->dma.issue_latency.v, 1300);
    EXPECT_STREQ(g2.c->dma.issue_latency.src, "PG");
    EXPECT_EQ(g2.c->dma.min_efficient_chunk.v, 512);
    EXPECT_EQ(gs_config_dma_partitions_per_engine(g2.c), 8u); // 128 partitions / 16 engines
    // the dependent-instruction chain: 64 vector cycles + semaphore ~ 189 ns (PG)
    double chain = 64.0 / g2.c->vector.clock.v * 1e9 + g2.c->sem_latency.v;
    EXPECT_NEAR(chain, 189.0, 2.0);
    // gen3: 28 MiB = 128 x 224 KiB, DGE 600 ns, transpose, vector 2 per lane (bf16/fp16 4 in
    // the performance mode of SBUF-only tensor_copy / tensor_scalar)
    EXPECT_EQ(gs_config_sbuf_partition_bytes(g3.c), 224u * 1024);
    EXPECT_EQ(g3.c->dma.issue_latency.v, 600);
    EXPECT_TRUE(g3.c->dma.hw_descriptors);
    EXPECT_TRUE(g3.c->dma.transpose);
    EXPECT_TRUE(g3.c->ops & (1ull << GS_OP_DMA_TRANSPOSE));
    EXPECT_EQ(g3.c->vector.elems_per_cycle[GS_BF16].v * g3.c->vector.lanes.v, 256);
    EXPECT_EQ(g3.c->vector.perf_mode_epc[GS_BF16].v * g3.c->vector.lanes.v, 512);
    EXPECT_EQ(g3.c->vector.perf_mode_epc[GS_FP16].v * g3.c->vector.lanes.v, 512);
    EXPECT_EQ(g3.c->vector.elems_per_cycle[GS_FP32].v * g3.c->vector.lanes.v, 256);
    EXPECT_EQ(g3.c->vector.clock.v, 0.96e9);
    // fp8 at 2x bf16 through double row (K 256 per matmul), not through a faster column rate
    EXPECT_EQ(g3.c->tensor.rate[GS_FP8_E5M2].v, 1);
    EXPECT_TRUE(g3.c->tensor.double_row);
    EXPECT_DOUBLE_EQ(gs_config_peak_flops(g3.c, GS_FP8_E4M3),
                     2 * gs_config_peak_flops(g3.c, GS_BF16));
    EXPECT_NEAR(gs_config_hbm_bytes_per_s(g3.c), 2.9e12, 1.0);
    // gen1: no GpSimd, no GpSimd-only ops, no fp8
    EXPECT_FALSE(g1.c->gpsimd.present);
    EXPECT_FALSE(g1.c->ops & (1ull << GS_OP_IOTA));
    EXPECT_TRUE(g1.c->ops & (1ull << GS_OP_MEMSET));
    EXPECT_FALSE(gs_config_has_dtype(g1.c, GS_FP8_E4M3));
    EXPECT_EQ(gs_config_peak_flops(g1.c, GS_FP8_E4M3), 0.0);
    EXPECT_EQ(gs_config_peak_flops(nullptr, GS_BF16), 0.0);
    // defaults of optional keys: written nowhere, so src is NULL and the value is the default
    EXPECT_EQ(g2.c->vector.cores.src, nullptr);
    EXPECT_EQ(g2.c->vector.cores.v, 1);
    EXPECT_STREQ(g2.c->name, "gen2");
    EXPECT_STREQ(g2.c->family, "gen2");
    EXPECT_NE(g2.c->description, nullptr);
}

// ---------------------------------------------------------------------------------------------
// extends

TEST(ConfigExtends, DeepOverrideChangesOneValue)
{
    Loaded l;
    load_str(l,
             "extends: gen2\ncore:\n  dma:\n    bandwidth_per_engine: \"34GB/s [assumed: 2x]\"\n",
             "fast-dma.yaml");
    ASSERT_NE(l.c, nullptr) << l.errors();
    EXPECT_EQ(l.c->dma.bandwidth_per_engine.v, 34);
    EXPECT_STREQ(l.c->dma.bandwidth_per_engine.file, "fast-dma.yaml");
    EXPECT_STREQ(l.c->dma.bandwidth_per_engine.src, "assumed");
    EXPECT_STREQ(l.c->dma.bandwidth_per_engine.note, "2x");
    // siblings in the same map come from the parent
    EXPECT_EQ(l.c->dma.engines.v, 16);
    EXPECT_NE(std::string(l.c->dma.engines.file).find("gen2.yaml"), std::string::npos);
    EXPECT_STREQ(l.c->family, "gen2");
    EXPECT_STREQ(l.c->name, "fast-dma"); // names are not inherited
    EXPECT_EQ(l.c->n_sources, 8u);       // inherited
}

TEST(ConfigExtends, WhatIfFileInSubdirectory)
{
    Loaded l;
    load_file(l, kConfigs + "/whatif/gen3-2x-sbuf.yaml");
    ASSERT_NE(l.c, nullptr) << l.errors();
    EXPECT_EQ(l.c->sbuf_bytes.v, 56.0 * 1024 * 1024);
    EXPECT_NE(std::string(l.c->sbuf_bytes.file).find("gen3-2x-sbuf.yaml"), std::string::npos);
    EXPECT_EQ(l.c->cores.v, 8);
    EXPECT_NE(std::string(l.c->cores.file).find("configs/gen3.yaml"), std::string::npos);
    EXPECT_STREQ(l.c->name, "gen3-2x-sbuf");
}

TEST(ConfigExtends, ChildCanRemoveGpsimd)
{
    Loaded l;
    load_str(l, "extends: gen2\nengines:\n  gpsimd:\n    present: false\n"
                "ops: [dma_copy, matmul, activation, tensor_tensor, memset]\n");
    ASSERT_NE(l.c, nullptr) << l.errors();
    EXPECT_FALSE(gs_config_has_engine(l.c, GS_ENG_GPSIMD));
}

TEST(ConfigExtends, ChildListsReplaceParentLists)
{
    Loaded l;
    load_str(l, "extends: gen3\ndtypes: [bf16, fp32]\nengines:\n  tensor:\n    rate:\n"
                "      fp8_e4m3: 2 [G3]\n");
    // rate maps merge key by key, so the inherited fp8 rate now names a dtype not in dtypes
    ASSERT_EQ(l.c, nullptr);
    EXPECT_TRUE(l.has("engines.tensor.rate.fp8_e4m3: dtype fp8_e4m3 is not in dtypes"))
        << l.errors();
}

TEST(ConfigExtends, CycleIsReportedWithTheChain)
{
    std::string d = tmpdir("cycle");
    write_file(d + "/a.yaml", "extends: b\n");
    write_file(d + "/b.yaml", "extends: c.yaml\n");
    write_file(d + "/c.yaml", "extends: ./a\n");
    Loaded l;
    load_file(l, d + "/a.yaml");
    ASSERT_EQ(l.c, nullptr);
    EXPECT_TRUE(l.has("c.yaml:1:10: extends: extends cycle: " + d + "/a.yaml -> " + d +
                      "/b.yaml -> " + d + "/c.yaml -> " + d + "/a.yaml"))
        << l.errors();
    Loaded self;
    write_file(d + "/self.yaml", "# comment\nextends: self\n");
    load_file(self, d + "/self.yaml");
    ASSERT_EQ(self.c, nullptr);
    EXPECT_TRUE(self.has("self.yaml:2:10: extends: extends cycle:")) << self.errors();
}

TEST(ConfigExtends, ChainLengthIsLimited)
{
    std::string d = tmpdir("chain");
    for (int i = 0; i < 12; i++)
        write_file(d + "/c" + std::to_string(i) + ".yaml",
                   "extends: c" + std::to_string(i + 1) + "\n");
    Loaded l;
    load_file(l, d + "/c0.yaml");
    ASSERT_EQ(l.c, nullptr);
    EXPECT_TRUE(l.has("extends chain longer than 8 files")) << l.errors();
}

TEST(ConfigExtends, ParentErrorsPointAtTheParent)
{
    std::string d = tmpdir("parent");
    write_file(d + "/base.yaml", "extends: " + kConfigs + "/gen2\n");
    Loaded abs;
    load_file(abs, d + "/base.yaml");
    EXPECT_TRUE(abs.has("is an absolute path")) << abs.errors();
    write_file(d + "/p.yaml", "core: [oops\n");
    write_file(d + "/child.yaml", "extends: p\n");
    Loaded l;
    load_file(l, d + "/child.yaml");
    ASSERT_EQ(l.c, nullptr);
    EXPECT_TRUE(l.has(d + "/p.yaml:2:1: YAML syntax error")) << l.errors();
}

// ---------------------------------------------------------------------------------------------
// validation rules not covered by one-error corpus files

TEST(ConfigValidate, ReportsAllErrorsInAFile)
{
    Loaded l;
    load_str(l,
             "extends: gen2\n"
             "core:\n"
             "  sbuf: 1000B [G2]\n"     // not divisible
             "  partitionz: 128 [G2]\n" // unknown key
             "chip:\n"
             "  cores: 2 [nowhere]\n" // unknown source
             "engines:\n"
             "  tensor:\n"
             "    clock: 2.8GB [G2]\n", // wrong unit
             "many.yaml");
    ASSERT_EQ(l.c, nullptr);
    EXPECT_TRUE(l.has("many.yaml:3:9: core.sbuf: 1000 B is not divisible")) << l.errors();
    EXPECT_TRUE(l.has("many.yaml:4:3: core.partitionz: unknown key (did you mean 'partitions'?)"))
        << l.errors();
    EXPECT_TRUE(l.has("many.yaml:6:10: chip.cores: unknown source 'nowhere'")) << l.errors();
    EXPECT_TRUE(l.has("many.yaml:9:12: engines.tensor.clock: 'GB' is a size unit; expected a "
                      "frequency"))
        << l.errors();
    EXPECT_EQ(l.d.count, 4u) << l.errors();
}

TEST(ConfigValidate, EveryErrorHasFileLineColumnAndKey)
{
    Loaded l;
    load_str(l, "extends: gen2\ncore:\n  sbuf: -1MiB [G2]\n  psum:\n    banks: 0 [G2]\n",
             "loc.yaml");
    ASSERT_EQ(l.c, nullptr);
    ASSERT_GE(l.d.count, 2u);
    for (size_t i = 0; i < l.d.count; i++) {
        EXPECT_STREQ(l.d.items[i].file, "loc.yaml");
        EXPECT_GT(l.d.items[i].line, 0);
        EXPECT_GT(l.d.items[i].column, 0);
    }
    EXPECT_TRUE(l.has("loc.yaml:3:9: core.sbuf: -1MiB must not be negative")) << l.errors();
    EXPECT_TRUE(l.has("loc.yaml:5:12: core.psum.banks: 0 must be greater than zero")) << l.errors();
}

TEST(ConfigValidate, ZeroIsAllowedForOverheads)
{
    Loaded l;
    load_str(l, "extends: gen2\ncore:\n  semaphore_latency: 0ns [assumed]\n  dma:\n"
                "    descriptor_overhead: 0ns [assumed]\n");
    EXPECT_NE(l.c, nullptr) << l.errors();
}

TEST(ConfigValidate, PoolAlignmentAndQuadrantsAreCheckedAndDefault)
{
    Loaded l;
    load_str(l, "extends: gen2\ncore:\n  pool_alignment: 48B [assumed]\n"
                "  partition_quadrants: 3 [assumed]\n");
    EXPECT_EQ(l.c, nullptr);
    EXPECT_NE(l.errors().find("core.pool_alignment: 48 B is not a power of two"), std::string::npos)
        << l.errors();
    EXPECT_NE(l.errors().find("core.partition_quadrants: 3 does not divide core.partitions (128)"),
              std::string::npos)
        << l.errors();
    // a config that does not give them has the defaults (the shipped ones give them)
    Loaded d;
    load_str(d, "extends: gen2\ndelete: [core.pool_alignment, core.partition_quadrants]\n");
    ASSERT_NE(d.c, nullptr) << d.errors();
    EXPECT_EQ(d.c->pool_alignment.v, 64);
    EXPECT_EQ(d.c->partition_quadrants.v, 4);
}

TEST(ConfigValidate, MissingRequiredKeysAreNamed)
{
    Loaded l;
    load_str(l, "family: gen2\nsources: {X: doc}\nchip:\n  cores: 2 [X]\n", "min.yaml");
    ASSERT_EQ(l.c, nullptr);
    EXPECT_TRUE(l.has("min.yaml:4:3: chip.hbm: missing required section")) << l.errors();
    EXPECT_TRUE(l.has("min.yaml:1:1: core: missing required section")) << l.errors();
    EXPECT_TRUE(l.has("engines: missing required section")) << l.errors();
    EXPECT_TRUE(l.has("dtypes: missing required key")) << l.errors();
    // one error per missing section, not one per key in it
    EXPECT_EQ(l.errors().find("core.sbuf"), std::string::npos) << l.errors();
}

TEST(ConfigValidate, MissingEngineSectionSuggestsPresentFalse)
{
    std::string gen1 = read_all(kConfigs + "/gen1.yaml");
    size_t at = gen1.find("  gpsimd:\n    present: false [V1]\n");
    ASSERT_NE(at, std::string::npos);
    gen1.erase(at, strlen("  gpsimd:\n    present: false [V1]\n"));
    Loaded l;
    load_str(l, gen1, "nogpsimd.yaml");
    ASSERT_EQ(l.c, nullptr);
    EXPECT_TRUE(l.has("engines.gpsimd: missing required section (write 'present: false'"))
        << l.errors();
}

TEST(ConfigValidate, HugeAndEmptyInputs)
{
    std::string big = "description: \"";
    big.append(GS_CONFIG_MAX_BYTES, 'x');
    big += "\"\n";
    Loaded l;
    load_str(l, big, "big.yaml");
    ASSERT_EQ(l.c, nullptr);
    EXPECT_TRUE(l.has("big.yaml: file is larger than 1048576 bytes")) << l.errors().substr(0, 200);
    std::string d = tmpdir("huge");
    write_file(d + "/big.yaml", big);
    Loaded f;
    load_file(f, d + "/big.yaml");
    ASSERT_EQ(f.c, nullptr);
    EXPECT_TRUE(f.has("file is larger than 1048576 bytes")) << f.errors().substr(0, 200);

    for (const char *empty : {"", "   \n\n", "# only a comment\n", "---\n", "~\n"}) {
        Loaded e;
        load_str(e, empty, "empty.yaml");
        EXPECT_EQ(e.c, nullptr);
        EXPECT_TRUE(e.has("empty.yaml:1:1: empty config")) << e.errors();
    }
    Loaded nul;
    nul.c = gs_config_load_string(nullptr, 0, nullptr, nullptr, &nul.d);
    EXPECT_EQ(nul.c, nullptr);
}

TEST(ConfigValidate, UnreadableFiles)
{
    Loaded l;
    load_file(l, kSrc + "/no/such/file.yaml");
    ASSERT_EQ(l.c, nullptr);
    ASSERT_EQ(l.d.count, 1u);
    EXPECT_EQ(l.d.items[0].code, GS_ERR_IO);
    Loaded dir;
    load_file(dir, kConfigs);
    EXPECT_TRUE(dir.has("not a regular file")) << dir.errors();
    // NULL diags are allowed: the result alone says it failed
    EXPECT_EQ(gs_config_load((kSrc + "/no/such.yaml").c_str(), nullptr), nullptr);
}

TEST(ConfigValidate, AliasBombIsRejectedQuickly)
{
    std::string y = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
    const char *prev = "a";
    std::vector<std::string> names = {"b", "c", "d", "e", "f", "g", "h", "i"};
    for (const std::string &n : names) {
        y += n + ": &" + n + " [";
        for (int k = 0; k < 9; k++)
            y += std::string(k ? "," : "") + "*" + prev;
        y += "]\n";
        prev = n.c_str();
        (void)prev;
    }
    Loaded l;
    load_str(l, y, "bomb.yaml");
    ASSERT_EQ(l.c, nullptr);
    EXPECT_TRUE(l.has("YAML aliases")) << l.errors().substr(0, 300);
}

TEST(ConfigValidate, UnknownKeySuggestions)
{
    Loaded l;
    load_str(l, "extends: gen2\ncore:\n  dma:\n    bandwith_per_engine: 17GB/s [DMA]\n"
                "engines:\n  tensr: {}\n  vector:\n    elems_per_cycle:\n      bfloat16: 1 [G2]\n");
    ASSERT_EQ(l.c, nullptr);
    EXPECT_TRUE(l.has("core.dma.bandwith_per_engine: unknown key (did you mean "
                      "'bandwidth_per_engine'?)"))
        << l.errors();
    EXPECT_TRUE(l.has("engines.tensr: unknown key (did you mean 'tensor'?)")) << l.errors();
    EXPECT_TRUE(l.has("engines.vector.elems_per_cycle.bfloat16: unknown dtype 'bfloat16'"))
        << l.errors();
}

TEST(ConfigValidate, ProvenanceTags)
{
    Loaded ok;
    load_str(ok, "extends: gen2\ncore:\n  sbuf: \"24MiB [G2: 128 x 192 KiB]\"\n  partitions: "
                 "128 [ assumed ]\n");
    ASSERT_NE(ok.c, nullptr) << ok.errors();
    EXPECT_STREQ(ok.c->sbuf_bytes.src, "G2");
    EXPECT_STREQ(ok.c->sbuf_bytes.note, "128 x 192 KiB");
    EXPECT_STREQ(ok.c->partitions.src, "assumed");
    EXPECT_EQ(ok.c->partitions.note, nullptr);
    for (const char *bad :
         {"24MiB []", "24MiB [G2", "24MiB [: x]", "24MiB [G2] extra", "[G2] 24MiB"}) {
        Loaded l;
        load_str(l, std::string("extends: gen2\ncore:\n  sbuf: \"") + bad + "\"\n");
        EXPECT_EQ(l.c, nullptr) << bad;
        EXPECT_TRUE(l.has("core.sbuf:")) << bad << "\n" << l.errors();
    }
    // a local source key works, and sources are inherited and extendable
    Loaded loc;
    load_str(loc,
             "extends: gen2\nsources:\n  MINE: my lab notebook\ncore:\n  sbuf: 24MiB [MINE]\n");
    ASSERT_NE(loc.c, nullptr) << loc.errors();
    EXPECT_STREQ(loc.c->sbuf_bytes.src, "MINE");
    EXPECT_EQ(loc.c->n_sources, 9u);
}

TEST(ConfigValidate, InconsistentValues)
{
    struct Case {
        const char *yaml;
        const char *expect;
    } cases[] = {
        {"core:\n  psum:\n    banks: 16 [assumed]\n",
         "engines.tensor.moving_free_max: 512 fp32 results (2048 B) do not fit one PSUM bank per "
         "partition (1024 B)"},
        {"engines:\n  tensor:\n    cols: 256 [assumed]\n",
         "engines.tensor.cols: 256 is larger than core.partitions (128)"},
        {"engines:\n  gpsimd:\n    lanes: 129 [assumed]\n",
         "engines.gpsimd.lanes: 129 is larger than core.partitions"},
        {"core:\n  partitions: 96 [assumed]\n",
         "engines.tensor.rows: 128 is larger than core.partitions (96)"},
        {"engines:\n  gpsimd:\n    present: false\n",
         "'gather' runs on the GpSimd engine, but engines.gpsimd is not present"},
        {"engines:\n  scalar:\n    present: false\n",
         "engines.scalar.present: only engines.gpsimd"},
    };
    for (const Case &k : cases) {
        Loaded l;
        load_str(l, std::string("extends: gen2\n") + k.yaml);
        EXPECT_EQ(l.c, nullptr) << k.yaml;
        EXPECT_TRUE(l.has(k.expect)) << k.yaml << "\n" << l.errors();
    }
}

// ---------------------------------------------------------------------------------------------
// --set

TEST(ConfigSet, AbsoluteOverride)
{
    Loaded l;
    load_file(l, kConfigs + "/gen2.yaml");
    ASSERT_NE(l.c, nullptr);
    EXPECT_EQ(set_err(l.c, "core.dma.bandwidth_per_engine=34GB/s", GS_OK), "");
    EXPECT_EQ(l.c->dma.bandwidth_per_engine.v, 34);
    EXPECT_STREQ(l.c->dma.bandwidth_per_engine.src, "--set");
    EXPECT_STREQ(l.c->dma.bandwidth_per_engine.file, "--set");
    EXPECT_EQ(set_err(l.c, " engines.tensor.clock = 3GHz ", GS_OK), "");
    EXPECT_EQ(l.c->tensor.clock.v, 3e9);
    EXPECT_EQ(set_err(l.c, "engines.vector.cores=2", GS_OK), ""); // an optional key
    EXPECT_EQ(l.c->vector.cores.v, 2);
}

TEST(ConfigSet, RelativeOverride)
{
    Loaded l;
    load_file(l, kConfigs + "/gen2.yaml");
    ASSERT_NE(l.c, nullptr);
    EXPECT_EQ(set_err(l.c, "core.sbuf=x1.5", GS_OK), "");
    EXPECT_EQ(l.c->sbuf_bytes.v, 36.0 * 1024 * 1024);
    EXPECT_EQ(set_err(l.c, "core.dma.bandwidth_per_engine=2x", GS_OK), "");
    EXPECT_EQ(l.c->dma.bandwidth_per_engine.v, 54.4);
    ASSERT_NE(l.c->dma.bandwidth_per_engine.note, nullptr);
    EXPECT_NE(std::string(l.c->dma.bandwidth_per_engine.note).find("27.2GB/s (DMAO)"),
              std::string::npos)
        << l.c->dma.bandwidth_per_engine.note;
    EXPECT_EQ(set_err(l.c, "chip.cores=*2", GS_OK), "");
    EXPECT_EQ(l.c->cores.v, 4);
}

TEST(ConfigSet, InvalidOverridesLeaveTheConfigUnchanged)
{
    Loaded l;
    load_file(l, kConfigs + "/gen2.yaml");
    ASSERT_NE(l.c, nullptr);
    gs_config before = *l.c;
    EXPECT_NE(set_err(l.c, "core.sbuf=1000B", GS_ERR_INVALID)
                  .find("--set: core.sbuf: 1000 B is not divisible by core.partitions (128)"),
              std::string::npos);
    EXPECT_NE(set_err(l.c, "core.dma.bandwith_per_engine=34GB/s", GS_ERR_INVALID)
                  .find("unknown key (did you mean 'core.dma.bandwidth_per_engine'?)"),
              std::string::npos);
    EXPECT_NE(set_err(l.c, "core.sbuf=34GB/s", GS_ERR_INVALID).find("'GB/s' is a bandwidth unit"),
              std::string::npos);
    EXPECT_NE(set_err(l.c, "chip.cores=x1.25", GS_ERR_INVALID).find("must be a whole number"),
              std::string::npos);
    EXPECT_NE(set_err(l.c, "chip.cores=0", GS_ERR_INVALID).find("must be greater than zero"),
              std::string::npos);
    EXPECT_NE(set_err(l.c, "chip.cores=xfast", GS_ERR_INVALID).find("bad factor"),
              std::string::npos);
    EXPECT_NE(set_err(l.c, "core.partitions=64", GS_ERR_INVALID)
                  .find("engines.tensor.rows: 128 is larger than core.partitions (64)"),
              std::string::npos);
    EXPECT_NE(set_err(l.c, "core.dma.transpose=true", GS_ERR_INVALID)
                  .find("core.dma.transpose_factor: required when core.dma.transpose is true"),
              std::string::npos);
    EXPECT_NE(set_err(l.c, "core.dma.transpose=yes", GS_ERR_INVALID).find("expected true or false"),
              std::string::npos);
    EXPECT_NE(set_err(l.c, "core.dma.transpose_factor=x2", GS_ERR_INVALID).find("no value"),
              std::string::npos);
    EXPECT_NE(set_err(l.c, "core.sbuf", GS_ERR_USAGE).find("expected KEY=VALUE"),
              std::string::npos);
    EXPECT_EQ(memcmp(&before, l.c, sizeof before), 0);
    // then in the right order it works
    EXPECT_EQ(set_err(l.c, "core.dma.transpose_factor=2", GS_OK), "");
    EXPECT_EQ(set_err(l.c, "core.dma.transpose=true", GS_OK), "");
    EXPECT_TRUE(l.c->dma.transpose);
}

// Overrides are validated together once all are applied: a pair that is valid together is
// accepted in either order (one alone would be refused), a pair invalid together is refused in
// either order and leaves the config as it was. Relative ones still scale what the earlier
// ones left.
TEST(ConfigSet, OverridesAreValidatedTogetherInAnyOrder)
{
    const std::vector<std::vector<const char *>> valid = {
        {"core.psum.size=x2", "core.psum.banks=16"},
        {"core.psum.banks=16", "core.psum.size=x2"},
        {"core.dma.transpose=true", "core.dma.transpose_factor=2"},
        {"core.dma.transpose_factor=2", "core.dma.transpose=true"},
    };
    for (const auto &sets : valid) {
        Loaded l;
        load_file(l, kConfigs + "/gen2.yaml");
        ASSERT_NE(l.c, nullptr);
        gs_diags d;
        gs_diags_init(&d);
        EXPECT_EQ(gs_config_set_all(l.c, sets.data(), sets.size(), &d), GS_OK)
            << sets[0] << " " << sets[1] << "\n"
            << diags_text(d);
        gs_diags_free(&d);
    }
    for (const auto &sets : std::vector<std::vector<const char *>>{
             {"core.psum.banks=16", "core.sbuf=x2"}, {"core.sbuf=x2", "core.psum.banks=16"}}) {
        Loaded l;
        load_file(l, kConfigs + "/gen2.yaml");
        ASSERT_NE(l.c, nullptr);
        gs_config before = *l.c;
        gs_diags d;
        gs_diags_init(&d);
        EXPECT_EQ(gs_config_set_all(l.c, sets.data(), sets.size(), &d), GS_ERR_INVALID);
        EXPECT_NE(diags_text(d).find("do not fit one PSUM bank"), std::string::npos)
            << diags_text(d);
        EXPECT_EQ(memcmp(&before, l.c, sizeof before), 0);
        gs_diags_free(&d);
    }
    Loaded l;
    load_file(l, kConfigs + "/gen2.yaml");
    ASSERT_NE(l.c, nullptr);
    const char *twice[] = {"core.sbuf=x2", "core.sbuf=x1.5"};
    EXPECT_EQ(gs_config_set_all(l.c, twice, 2, nullptr), GS_OK);
    EXPECT_EQ(l.c->sbuf_bytes.v, 72.0 * 1024 * 1024);
}

TEST(ConfigSet, AbsentEngineKeysCannotBeSet)
{
    Loaded l;
    load_file(l, kConfigs + "/gen1.yaml");
    ASSERT_NE(l.c, nullptr);
    EXPECT_NE(set_err(l.c, "engines.gpsimd.clock=1GHz", GS_ERR_INVALID)
                  .find("engines.gpsimd is not present"),
              std::string::npos);
}

TEST(ConfigSet, WorksOnAHandBuiltConfig)
{
    // Other modules build configs by hand in tests; --set must not need the loader's store.
    Loaded l;
    load_file(l, kConfigs + "/gen2.yaml");
    ASSERT_NE(l.c, nullptr);
    gs_config *c = static_cast<gs_config *>(gs_calloc(1, sizeof(gs_config)));
    *c = *l.c;
    c->store = nullptr;
    c->name = c->family = c->description = c->path = nullptr;
    c->n_sources = 0;
    c->source_keys = c->source_refs = nullptr;
    EXPECT_EQ(set_err(c, "core.sbuf=x2", GS_OK), "");
    EXPECT_EQ(c->sbuf_bytes.v, 48.0 * 1024 * 1024);
    gs_config_free(c);
}

// ---------------------------------------------------------------------------------------------
// show-config

namespace
{
std::string dump(const gs_config *c)
{
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gs_config_dump_yaml(c, f);
    fclose(f);
    std::string s(buf, len);
    free(buf);
    return s;
}
} // namespace

TEST(ConfigDump, RoundTripsThroughTheLoader)
{
    for (const char *g : {"gen1.yaml", "gen2.yaml", "gen3.yaml", "whatif/gen3-2x-sbuf.yaml"}) {
        Loaded a;
        load_file(a, kConfigs + "/" + g);
        ASSERT_NE(a.c, nullptr) << a.errors();
        std::string y = dump(a.c);
        Loaded b;
        load_str(b, y, "dumped.yaml");
        ASSERT_NE(b.c, nullptr) << g << "\n" << b.errors() << "\n" << y;
        size_t n = 0;
        const gs_config_field *f = gs_config_fields(&n);
        for (size_t i = 0; i < n; i++) {
            const gs_num *x = gs_config_get(a.c, f[i].path), *z = gs_config_get(b.c, f[i].path);
            EXPECT_EQ(x->v, z->v) << g << " " << f[i].path;
            EXPECT_EQ(!x->src, !z->src) << g << " " << f[i].path;
            if (x->src && z->src) {
                EXPECT_STREQ(x->src, z->src) << f[i].path;
            }
            if (x->note && z->note) {
                EXPECT_STREQ(x->note, z->note) << f[i].path;
            }
        }
        EXPECT_EQ(a.c->dtypes, b.c->dtypes);
        EXPECT_EQ(a.c->ops, b.c->ops);
        EXPECT_EQ(a.c->dma.transpose, b.c->dma.transpose);
        EXPECT_EQ(a.c->dma.hw_descriptors, b.c->dma.hw_descriptors);
        EXPECT_EQ(a.c->dma.cast, b.c->dma.cast);
        EXPECT_EQ(a.c->gpsimd.present, b.c->gpsimd.present);
        EXPECT_STREQ(a.c->name, b.c->name);
    }
}

TEST(ConfigDump, ShowsProvenanceAndOverrides)
{
    Loaded l;
    load_file(l, kConfigs + "/gen2.yaml");
    ASSERT_NE(l.c, nullptr);
    ASSERT_EQ(set_err(l.c, "core.dma.bandwidth_per_engine=34GB/s", GS_OK), "");
    std::string y = dump(l.c);
    EXPECT_NE(y.find("bandwidth_per_engine: 34GB/s [--set]"), std::string::npos) << y;
    EXPECT_NE(y.find("sbuf: 24MiB [G2]"), std::string::npos) << y;
    EXPECT_NE(y.find("configs/gen2.yaml:"), std::string::npos) << y;
    EXPECT_NE(y.find("# cores: 1 (default)"), std::string::npos) << y;
    EXPECT_NE(y.find("ops: [dma_copy, matmul"), std::string::npos) << y;
}

// ---------------------------------------------------------------------------------------------
// the malformed-config corpus: every tests/configs/bad/*.yaml starts with one or more
//   # expect: TEXT
// lines; loading must fail and every TEXT must appear in the formatted errors. TEXT starting
// with ':' is prefixed with the file's own path ("file.yaml:7:12: core.sbuf: ...").

TEST(ConfigCorpus, EveryBadConfigFailsWithItsExpectedError)
{
    std::string dir = kSrc + "/tests/configs/bad";
    DIR *dh = opendir(dir.c_str());
    ASSERT_NE(dh, nullptr);
    std::vector<std::string> files;
    while (dirent *de = readdir(dh)) {
        std::string n = de->d_name;
        if (n.size() > 5 && n.substr(n.size() - 5) == ".yaml") files.push_back(n);
    }
    closedir(dh);
    ASSERT_GE(files.size(), 40u);
    for (const std::string &n : files) {
        std::string path = dir + "/" + n;
        std::string text = read_all(path);
        std::vector<std::string> expects;
        std::istringstream in(text);
        std::string line;
        while (std::getline(in, line) && line.rfind("# expect: ", 0) == 0)
            expects.push_back(line.substr(10));
        ASSERT_FALSE(expects.empty()) << n << " has no '# expect:' header";
        Loaded l;
        load_file(l, path);
        EXPECT_EQ(l.c, nullptr) << n << " loaded but should not";
        std::string errs = l.errors();
        for (const std::string &e : expects) {
            std::string want = e[0] == ':' ? path + e : e;
            EXPECT_NE(errs.find(want), std::string::npos)
                << n << ": expected\n  " << want << "\ngot\n"
                << errs;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// allocation failure: every failing allocation gives NULL + an error or a valid config, and
// never a crash or leak (the asan preset checks leaks).

namespace
{
long g_alloc_budget = -1;
void *fail_malloc(size_t n, void *)
{
    if (g_alloc_budget == 0) return nullptr;
    if (g_alloc_budget > 0) g_alloc_budget--;
    return malloc(n ? n : 1);
}
void *fail_realloc(void *p, size_t n, void *)
{
    if (g_alloc_budget == 0) return nullptr;
    if (g_alloc_budget > 0) g_alloc_budget--;
    return realloc(p, n ? n : 1);
}
void plain_free(void *p, void *)
{
    free(p);
}
} // namespace

TEST(ConfigAlloc, SurvivesEveryAllocationFailure)
{
    gs_allocator a = {fail_malloc, fail_realloc, plain_free, nullptr};
    // gen1 (absent engine), gen2, and a what-if (extends, file reading)
    for (const char *g : {"gen1.yaml", "gen2.yaml", "whatif/gen3-2x-sbuf.yaml"}) {
        std::string path = kConfigs + "/" + g;
        bool succeeded = false;
        long budget = 0;
        for (; budget < 50000 && !succeeded; budget++) {
            gs_diags d;
            gs_diags_init(&d);
            gs_set_allocator(&a);
            g_alloc_budget = budget;
            gs_config *c = gs_config_load(path.c_str(), &d);
            if (c) {
                succeeded = true;
                gs_config_set(c, "core.sbuf=x2", &d);
                gs_config_set(c, "core.dma.bandwidth_per_engine=1.5x", &d);
            }
            gs_config_free(c);
            g_alloc_budget = -1;
            gs_diags_free(&d);
            gs_set_allocator(nullptr);
        }
        EXPECT_TRUE(succeeded) << g;
        EXPECT_GT(budget, 300) << g << ": a load needs hundreds of allocations";
    }
}

// Every numeric key is in exactly one parameter group (the first matching), and the groups
// `gensweep attribute` relies on hold what their names say.
TEST(ConfigSchema, EveryKeyHasAGroup)
{
    size_t n = 0, ng = 0;
    const gs_config_field *f = gs_config_fields(&n);
    const gs_config_group *g = gs_config_groups(&ng);
    ASSERT_GT(ng, 0u);
    for (size_t i = 0; i < n; i++) {
        int gi = gs_config_group_of(f[i].path);
        ASSERT_GE(gi, 0) << f[i].path << " is in no parameter group";
        std::string p = f[i].path, name = g[gi].name;
        if (p.rfind("engines.tensor.rate.", 0) == 0) {
            EXPECT_EQ(name, "tensor_rates") << p;
        }
        if (p.rfind("core.dma.", 0) == 0) {
            EXPECT_EQ(name, "dma") << p;
        }
        if (p.size() > 6 && p.compare(p.size() - 6, 6, ".clock") == 0) {
            EXPECT_EQ(name, "clocks") << p;
        }
    }
    EXPECT_STREQ(g[gs_config_group_of("chip.hbm.bandwidth")].name, "hbm");
    EXPECT_STREQ(g[gs_config_group_of("chip.hbm.latency")].name, "hbm");
    EXPECT_STREQ(g[gs_config_group_of("core.psum.size")].name, "onchip_memory");
    EXPECT_STREQ(g[gs_config_group_of("engines.vector.perf_mode_elems_per_cycle.bf16")].name,
                 "vector_rates");
    EXPECT_EQ(gs_config_group_of("no.such.key"), -1);
    // every group is documented in SCHEMA.md
    std::string doc = read_all(kConfigs + "/SCHEMA.md");
    for (size_t i = 0; i < ng; i++)
        EXPECT_NE(doc.find(std::string("| `") + g[i].name + "` |"), std::string::npos)
            << g[i].name << " is not in configs/SCHEMA.md";
}

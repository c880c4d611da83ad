// CLI tests for the config commands: run the built gensweep binary and check exit codes and
// messages of validate, list gens and show-config.
#include <gtest/gtest.h>

#include "../support/cli_run.h"

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace
{

const std::string kSrc = GS_SOURCE_DIR;

std::string slurp(const std::string &path)
{
    return gs_test_slurp(path);
}

// Run gensweep with args (a shell fragment) in the source directory.
CliRun gensweep(const std::string &args)
{
    return gs_test_gensweep(args);
}

bool has(const std::string &s, const std::string &needle)
{
    return s.find(needle) != std::string::npos;
}

} // namespace

TEST(CliConfig, ValidateGoodConfigs)
{
    CliRun r = gensweep("validate configs/gen1.yaml configs/gen2.yaml configs/gen3.yaml "
                        "configs/whatif/gen3-2x-sbuf.yaml");
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has(r.out, "configs/gen2.yaml: ok")) << r.out;
    EXPECT_EQ(r.err, "");
}

TEST(CliConfig, ValidateUsageErrors)
{
    CliRun r = gensweep("validate");
    EXPECT_EQ(r.rc, 2);
    EXPECT_TRUE(has(r.err, "no config file given")) << r.err;
    r = gensweep("validate --frobnicate configs/gen2.yaml");
    EXPECT_EQ(r.rc, 2);
    EXPECT_TRUE(has(r.err, "unknown option '--frobnicate'")) << r.err;
    r = gensweep("validate configs/no-such-gen.yaml");
    EXPECT_EQ(r.rc, 2);
    EXPECT_TRUE(has(r.err, "configs/no-such-gen.yaml: cannot open")) << r.err;
    r = gensweep("validate --set");
    EXPECT_EQ(r.rc, 2);
    EXPECT_TRUE(has(r.err, "--set needs KEY=VALUE")) << r.err;
    r = gensweep("validate --set core.sbuf configs/gen2.yaml");
    EXPECT_EQ(r.rc, 2);
    EXPECT_TRUE(has(r.err, "expected KEY=VALUE")) << r.err;
}

TEST(CliConfig, ValidateHelp)
{
    CliRun r = gensweep("validate --help");
    EXPECT_EQ(r.rc, 0);
    EXPECT_TRUE(has(r.out, "usage: gensweep validate [--set KEY=VALUE]... FILE...")) << r.out;
    EXPECT_TRUE(has(r.out, "exit status")) << r.out;
    r = gensweep("show-config --help");
    EXPECT_EQ(r.rc, 0);
    EXPECT_TRUE(has(r.out, "usage: gensweep show-config")) << r.out;
    r = gensweep("list --help");
    EXPECT_EQ(r.rc, 0);
    EXPECT_TRUE(has(r.out, "gens")) << r.out;
    r = gensweep("--help");
    EXPECT_EQ(r.rc, 0);
    EXPECT_TRUE(has(r.out, "validate")) << r.out;
}

TEST(CliConfig, ValidateWithOverrides)
{
    CliRun r = gensweep("validate --set core.dma.bandwidth_per_engine=34GB/s --set=core.sbuf=x2 "
                        "configs/gen2.yaml configs/gen3.yaml");
    EXPECT_EQ(r.rc, 0) << r.err;
    r = gensweep("validate --set core.sbuf=1000B configs/gen2.yaml");
    EXPECT_EQ(r.rc, 1);
    EXPECT_TRUE(has(r.err, "--set: core.sbuf: 1000 B is not divisible by core.partitions (128)"))
        << r.err;
    r = gensweep("validate --set engines.gpsimd.clock=1GHz configs/gen1.yaml");
    EXPECT_EQ(r.rc, 1);
    EXPECT_TRUE(has(r.err, "engines.gpsimd is not present")) << r.err;
}

// Every corpus file fails with its expected file:line:col message, all in one run.
TEST(CliConfig, ValidateBadCorpus)
{
    CliRun r = gensweep("validate tests/configs/bad/*.yaml");
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.out, "") << "a bad config validated:\n" << r.out;
    DIR *dh = opendir((kSrc + "/tests/configs/bad").c_str());
    ASSERT_NE(dh, nullptr);
    int files = 0;
    while (dirent *de = readdir(dh)) {
        std::string n = de->d_name;
        if (n.size() < 6 || n.substr(n.size() - 5) != ".yaml") continue;
        files++;
        std::string rel = "tests/configs/bad/" + n;
        std::istringstream in(slurp(kSrc + "/" + rel));
        std::string line;
        while (std::getline(in, line) && line.rfind("# expect: ", 0) == 0) {
            std::string e = line.substr(10);
            std::string want = e[0] == ':' ? rel + e : "tests/configs/bad/" + e;
            EXPECT_TRUE(has(r.err, want)) << n << ": missing\n  " << want;
        }
        EXPECT_TRUE(has(r.err, rel + ": invalid")) << n;
    }
    closedir(dh);
    EXPECT_GE(files, 40);
}

TEST(CliConfig, ListGens)
{
    CliRun r = gensweep("list gens configs");
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has(r.out, "name")) << r.out;
    // derived peaks agree with the published figures (genN/README.md): gen1 16 TF, gen2 92 bf16 /
    // 23 fp32, gen3 79 / 158 fp8
    EXPECT_TRUE(has(r.out, "gen1             gen1        4     16.4")) << r.out;
    EXPECT_TRUE(has(r.out, "gen2             gen2        2     91.8     22.9     91.8       880"))
        << r.out;
    EXPECT_TRUE(has(r.out, "gen3             gen3        8     78.6     19.7    157.3      2900"))
        << r.out;
    EXPECT_TRUE(has(
        r.out,
        "gen4             gen4        8     78.6     19.7    157.3      4900      32.0    314.6"))
        << r.out;
    EXPECT_FALSE(has(r.out, "gen3-2x-sbuf")) << "what-if subdirectory is not listed";
    CliRun d = gensweep("list gens"); // default: configs/ of the current directory
    EXPECT_EQ(d.rc, 0) << d.err;
    EXPECT_EQ(d.out, r.out);
    CliRun w = gensweep("list gens configs/whatif");
    EXPECT_EQ(w.rc, 0) << w.err;
    EXPECT_TRUE(has(w.out, "gen3-2x-sbuf")) << w.out;
}

TEST(CliConfig, ListErrors)
{
    CliRun r = gensweep("list");
    EXPECT_EQ(r.rc, 2);
    EXPECT_TRUE(has(r.err, "missing topic")) << r.err;
    r = gensweep("list gpus");
    EXPECT_EQ(r.rc, 2);
    EXPECT_TRUE(has(r.err, "unknown topic 'gpus'")) << r.err;
    r = gensweep("list gens /no/such/dir");
    EXPECT_EQ(r.rc, 2);
    EXPECT_TRUE(has(r.err, "cannot open directory '/no/such/dir'")) << r.err;
    r = gensweep("list gens configs extra");
    EXPECT_EQ(r.rc, 2);
    r = gensweep("list gens tests/configs/bad");
    EXPECT_EQ(r.rc, 1);
    EXPECT_TRUE(has(r.err, "tests/configs/bad/zero.yaml:5:14: core.dma.engines:")) << r.err;
}

TEST(CliConfig, ShowConfig)
{
    CliRun r = gensweep("show-config configs/gen2.yaml");
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(
        has(r.out, "bandwidth_per_engine: \"27.2GB/s [DMAO: theoretical, NeuronCore-v2 and -v3]\""))
        << r.out;
    EXPECT_TRUE(has(r.out, "# configs/gen2.yaml:")) << r.out;
    r = gensweep("show-config --set core.dma.bandwidth_per_engine=34GB/s configs/gen2.yaml");
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has(r.out, "bandwidth_per_engine: 34GB/s [--set]")) << r.out;
    r = gensweep("show-config configs/whatif/gen3-2x-sbuf.yaml");
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has(r.out, "sbuf: \"56MiB [assumed: what-if, 2x gen3]\"")) << r.out;
    EXPECT_TRUE(has(r.out, "# configs/whatif/../gen3.yaml:") || has(r.out, "# configs/gen3.yaml:"))
        << r.out;
    r = gensweep("show-config configs/gen1.yaml configs/gen2.yaml");
    EXPECT_EQ(r.rc, 2);
    EXPECT_TRUE(has(r.err, "expected exactly one config file")) << r.err;
    r = gensweep("show-config tests/configs/bad/zero.yaml");
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.out, "");
}

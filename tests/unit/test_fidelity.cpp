// Fidelity through the CLI: gensweep calibrate (the shipped cases reproduce their measurements, a
// fit recovers a value the cases were made from, bad case files get file:line:col errors with
// exit status 2), the machine-true roofline of `run`, and check shapes that must fit.
#include <gtest/gtest.h>

#include "../support/cli_run.h"

#include <cjson/cJSON.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
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

std::string tmp(const std::string &name)
{
    return std::string(GS_BINARY_DIR) + "/calibrate_" + std::to_string(getpid()) + "_" + name;
}

CliRun gensweep(const std::string &args)
{
    return gs_test_gensweep(args);
}

struct Json {
    cJSON *doc = nullptr;
    explicit Json(const std::string &path) : doc(cJSON_Parse(slurp(path).c_str())) {}
    ~Json() { cJSON_Delete(doc); }
    const cJSON *find_case(const char *name) const
    {
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(doc, "cases"))
        {
            if (!strcmp(cJSON_GetObjectItemCaseSensitive(c, "name")->valuestring, name)) return c;
        }
        return nullptr;
    }
};

double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : (double)NAN;
}

} // namespace

TEST(Calibrate, ShippedCasesReproduceTheirMeasurements)
{
    const std::string json = tmp("shipped.json");
    CliRun r = gensweep("calibrate calibration/cases.yaml -j 2 --json '" + json + "'");
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    Json j(json);
    ASSERT_NE(j.doc, nullptr);
    // DMA overview, first example: A[4,4096] bf16 on one engine in 1416 ns, within 15%
    const cJSON *a = j.find_case("dmao-4x4096");
    ASSERT_NE(a, nullptr);
    EXPECT_NEAR(num(a, "ratio"), 1.0, 0.15);
    EXPECT_EQ(num(a, "model_engines"), 1.0);
    // second example: A[128,128] on all 16 engines (2 KiB each)
    const cJSON *b = j.find_case("dmao-128x128");
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(num(b, "model_engines"), 16.0);
    EXPECT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(b, "engines_match")));
    EXPECT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j.doc, "structure_ok")));
    // the committed configs hold the values fitted to the fit cases: those stay close
    EXPECT_LT(num(j.doc, "geomean_error_fit"), 1.10);
    EXPECT_NE(r.out.find("geomean error factor"), std::string::npos) << r.out;
    std::remove(json.c_str());
}

TEST(Calibrate, FitRecoversTheValueTheMeasurementCameFrom)
{
    // A config whose fixed_latency is an assumption (100 ns), and a "measurement" made by the
    // model itself at 300 ns: the fit must find 300 ns again.
    const std::string cfg = tmp("cfg.yaml"), cases = tmp("cases.yaml"), json = tmp("fit.json");
    {
        std::ofstream f(cfg);
        /* extends: takes a path relative to the file */
        const std::string rel =
            std::filesystem::relative(kSrc + "/configs/gen3", std::string(GS_BINARY_DIR)).string();
        f << "name: fitme\nextends: " << rel << "\ncore:\n  dma:\n"
          << "    fixed_latency: \"100ns [assumed: test]\"\n";
    }
    auto write_cases = [&](const std::string &time) {
        std::ofstream f(cases);
        f << "sources: {T: test}\ncases:\n  - name: one\n    config: fitme\n"
          << "    kernel: ubench_dma\n    shape: [4, 4096]\n    dtype: bf16\n"
          << "    measure: transfer\n    time: " << time << "\n    source: T\n    role: fit\n"
          << "  - name: two\n    config: fitme\n    kernel: ubench_dma\n    shape: [8, 2048]\n"
          << "    dtype: bf16\n    measure: transfer\n    time: " << time
          << "\n    source: T\n    role: fit\n";
    };
    write_cases("1us");
    CliRun r = gensweep("calibrate '" + cases + "' --configs '" + cfg +
                        "' --set core.dma.fixed_latency=300ns --json '" + json + "'");
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    double truth = 0;
    {
        Json j(json);
        ASSERT_NE(j.doc, nullptr);
        truth = num(j.find_case("one"), "model_ns");
    }
    ASSERT_GT(truth, 1000.0);
    // both cases move 32 KiB through one engine (8 partitions per engine, descriptors made by
    // hardware on gen3): the same span, so one measured time fits both
    char t[64];
    snprintf(t, sizeof t, "%.6fns", truth);
    write_cases(t);
    r = gensweep("calibrate '" + cases + "' --configs '" + cfg +
                 "' --fit core.dma.fixed_latency --json '" + json + "'");
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("[fit: "), std::string::npos) << r.out;
    Json j(json);
    ASSERT_NE(j.doc, nullptr);
    const cJSON *fit = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j.doc, "fit"), 0);
    ASSERT_NE(fit, nullptr);
    EXPECT_EQ(num(fit, "before"), 100.0);
    /* within 2%: the small pull towards the starting value (CAL_PRIOR_WEIGHT) biases it a little */
    EXPECT_NEAR(num(fit, "after"), 300.0, 6.0);
    EXPECT_GT(num(fit, "geomean_error_before"), 1.05);
    EXPECT_LT(num(fit, "geomean_error_after"), 1.02);
    for (const std::string &p : {cfg, cases, json})
        std::remove(p.c_str());
}

// A measurement no value in range explains (50 s for a 32 KiB transfer): the fit stops at the
// config's limit (fixed_latency <= 1 ms) or at its search range and says so, and the table,
// the fitted values and the JSON are still there. The range does not grow round after round.
TEST(Calibrate, AFitAtABoundStopsThereAndSaysSo)
{
    const std::string cases = tmp("bound-cases.yaml"), json = tmp("bound.json");
    const std::string rel =
        std::filesystem::relative(kSrc + "/configs/gen3", std::string(GS_BINARY_DIR)).string();
    {
        std::ofstream f(cases);
        f << "sources: {T: test}\ncases:\n  - name: slow\n    config: fitme\n"
          << "    kernel: ubench_dma\n    shape: [4, 4096]\n    dtype: bf16\n"
          << "    measure: transfer\n    time: 50s\n    source: T\n    role: fit\n";
    }
    struct Start {
        const char *latency, *bound;
        double most;
    } starts[] = {{"100us", "upper: the config's limit", 1e6},
                  {"100ns", "upper: the search range", 6400}};
    for (const Start &st : starts) {
        const std::string cfg = tmp("bound-cfg.yaml");
        {
            std::ofstream f(cfg);
            f << "name: fitme\nextends: " << rel << "\ncore:\n  dma:\n"
              << "    fixed_latency: \"" << st.latency << " [assumed: test]\"\n";
        }
        CliRun r = gensweep("calibrate '" + cases + "' --configs '" + cfg +
                            "' --fit core.dma.fixed_latency --json '" + json + "'");
        ASSERT_EQ(r.rc, 0) << st.latency << "\n" << r.out << r.err;
        EXPECT_NE(r.out.find("slow "), std::string::npos) << r.out; // the table
        EXPECT_NE(r.out.find("[fit: "), std::string::npos) << r.out;
        EXPECT_NE(r.out.find(std::string("at a bound: fitme core.dma.fixed_latency")),
                  std::string::npos)
            << r.out;
        EXPECT_NE(r.out.find(st.bound), std::string::npos) << r.out;
        Json j(json);
        ASSERT_NE(j.doc, nullptr);
        const cJSON *fit = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j.doc, "fit"), 0);
        ASSERT_NE(fit, nullptr);
        EXPECT_LE(num(fit, "after"), st.most) << st.latency;
        EXPECT_GE(num(fit, "after"), 0.99 * st.most) << st.latency;
        EXPECT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(fit, "at_bound")),
                     st.bound);
        std::remove(cfg.c_str());
    }
    for (const std::string &p : {cases, json})
        std::remove(p.c_str());
}

// Every shipped case has a role, and the two roles' errors are reported apart: counts, geomean
// error factor and worst case of each, in the JSON and the table.
TEST(Calibrate, FitAndValidationErrorsAreReportedApart)
{
    const std::string json = tmp("split.json");
    CliRun r = gensweep("calibrate calibration/cases.yaml -j 2 --json '" + json + "'");
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    Json j(json);
    ASSERT_NE(j.doc, nullptr);
    int fit = 0, val = 0;
    double val_log = 0, worst = 0;
    std::string worst_name;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(j.doc, "cases"))
    {
        const std::string role = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "role"));
        ASSERT_TRUE(role == "fit" || role == "validate") << role;
        const double ratio = num(c, "ratio");
        if (std::isnan(ratio)) continue;
        if (role == "fit") {
            fit++;
            continue;
        }
        val++;
        val_log += std::fabs(std::log(ratio));
        if (std::fabs(std::log(ratio)) > worst) {
            worst = std::fabs(std::log(ratio));
            worst_name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "name"));
        }
    }
    ASSERT_GT(fit, 0);
    ASSERT_GT(val, 0);
    EXPECT_EQ(num(j.doc, "fit_cases"), fit);
    EXPECT_EQ(num(j.doc, "validate_cases"), val);
    EXPECT_NEAR(num(j.doc, "geomean_error_validate"), std::exp(val_log / val), 1e-9);
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(j.doc, "worst_validate");
    ASSERT_TRUE(cJSON_IsObject(w));
    EXPECT_EQ(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(w, "name")), worst_name);
    EXPECT_NEAR(num(w, "error_factor"), std::exp(worst), 1e-9);
    // the fit cases are the ones the committed configs were fitted to: within 10% overall
    EXPECT_LT(num(j.doc, "geomean_error_fit"), 1.10);
    EXPECT_NE(r.out.find("validation "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("worst " + worst_name), std::string::npos) << r.out;
    std::remove(json.c_str());
}

// --fit minimises over the fit cases only: a validation case that no value explains (50 s for
// 32 KiB) does not move the fitted value away from the one the fit case came from, and the
// value's [fit: ...] tag counts only the fit case.
TEST(Calibrate, FitIgnoresValidationCases)
{
    const std::string cfg = tmp("vcfg.yaml"), cases = tmp("vcases.yaml"), json = tmp("vfit.json");
    {
        std::ofstream f(cfg);
        const std::string rel =
            std::filesystem::relative(kSrc + "/configs/gen3", std::string(GS_BINARY_DIR)).string();
        f << "name: fitme\nextends: " << rel << "\ncore:\n  dma:\n"
          << "    fixed_latency: \"100ns [assumed: test]\"\n";
    }
    // the "measurement" of the fit case: the model's own span at fixed_latency = 300 ns
    {
        std::ofstream f(cases);
        f << "sources: {T: test}\ncases:\n  - name: one\n    config: fitme\n"
          << "    kernel: ubench_dma\n    shape: [4, 4096]\n    dtype: bf16\n"
          << "    measure: transfer\n    time: 1us\n    source: T\n    role: fit\n";
    }
    CliRun r = gensweep("calibrate '" + cases + "' --configs '" + cfg +
                        "' --set core.dma.fixed_latency=300ns --json '" + json + "'");
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    double truth = 0;
    {
        Json j(json);
        ASSERT_NE(j.doc, nullptr);
        truth = num(j.find_case("one"), "model_ns");
    }
    // two fit cases (32 KiB through one engine each: the same span) and a validation case
    char t[64];
    snprintf(t, sizeof t, "%.6fns", truth);
    {
        std::ofstream f(cases);
        f << "sources: {T: test}\ncases:\n  - name: one\n    config: fitme\n"
          << "    kernel: ubench_dma\n    shape: [4, 4096]\n    dtype: bf16\n"
          << "    measure: transfer\n    time: " << t << "\n    source: T\n    role: fit\n"
          << "  - name: two\n    config: fitme\n    kernel: ubench_dma\n    shape: [8, 2048]\n"
          << "    dtype: bf16\n    measure: transfer\n    time: " << t << "\n    source: T\n"
          << "    role: fit\n"
          << "  - name: far\n    config: fitme\n    kernel: ubench_dma\n    shape: [4, 2048]\n"
          << "    dtype: bf16\n    measure: transfer\n    time: 50s\n    source: T\n"
          << "    role: validate\n";
    }
    r = gensweep("calibrate '" + cases + "' --configs '" + cfg +
                 "' --fit core.dma.fixed_latency --json '" + json + "'");
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("2 cases, geomean error"), std::string::npos) << r.out;
    Json j(json);
    ASSERT_NE(j.doc, nullptr);
    const cJSON *fit = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j.doc, "fit"), 0);
    ASSERT_NE(fit, nullptr);
    EXPECT_NEAR(num(fit, "after"), 300.0, 6.0);
    EXPECT_EQ(num(fit, "cases"), 2.0);
    // the validation case is reported at the fitted value, far off, on its own
    EXPECT_LT(num(j.doc, "geomean_error_fit"), 1.02);
    EXPECT_GT(num(j.doc, "geomean_error_validate"), 1000.0);
    for (const std::string &p : {cfg, cases, json})
        std::remove(p.c_str());
}

// --check holds the validation error to the committed target: the shipped file meets it (the
// CI test calibration_validation_target), a tighter target fails with exit 1 and says by how
// much, and --check on a file without a target is a usage error.
TEST(Calibrate, CheckFailsAboveTheTarget)
{
    CliRun r = gensweep("calibrate calibration/cases.yaml -j 2 --check");
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_NE(r.out.find(": met"), std::string::npos) << r.out;
    std::string text = slurp(kSrc + "/calibration/cases.yaml");
    const std::string key = "validate_geomean_error: ";
    const size_t at = text.find(key);
    ASSERT_NE(at, std::string::npos);
    text.replace(at + key.size(), text.find('\n', at) - at - key.size(), "1.0");
    const std::string tight = tmp("tight.yaml");
    {
        std::ofstream f(tight);
        f << text;
    }
    r = gensweep("calibrate '" + tight + "' -j 2 --check");
    EXPECT_EQ(r.rc, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("NOT MET"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("is above the committed target 1.000"), std::string::npos) << r.err;
    // without --check the same file only reports
    r = gensweep("calibrate '" + tight + "' -j 2");
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    r = gensweep("calibrate tests/calibration/no_timed_case.yaml --check");
    EXPECT_EQ(r.rc, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("has no targets: validate_geomean_error"), std::string::npos) << r.err;
    std::remove(tight.c_str());
}

TEST(Calibrate, SourcedValuesAreNotFitted)
{
    CliRun r = gensweep("calibrate calibration/cases.yaml --fit core.dma.bandwidth_per_engine");
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("not fitted: gen3 core.dma.bandwidth_per_engine (sourced"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("[fit: "), std::string::npos) << r.out;
}

TEST(Calibrate, UsageErrors)
{
    struct Case {
        const char *args, *msg;
    } cases[] = {
        {"calibrate", "missing the case file"},
        {"calibrate calibration/cases.yaml --fit no.such.key", "not a numeric config key"},
        {"calibrate calibration/cases.yaml --fit", "needs a value"},
        {"calibrate calibration/cases.yaml --kernels matmul", "does not apply"},
        {"calibrate calibration/cases.yaml --bogus", "unknown option"},
        {"calibrate calibration/cases.yaml calibration/cases.yaml", "one case file"},
        {"calibrate calibration/", "not a regular file"},
        /* a bare name is looked up (./calibration/NAME.yaml, then installed) even when it is a
         * directory here, as `--config gen3` is in the repository root */
        {"calibrate calibration", "'calibration': a directory, not a file, and no case file of "
                                  "that name in ./calibration/calibration.yaml"},
        {"calibrate no/such/file.yaml", "no such file"},
    };
    for (const Case &c : cases) {
        CliRun r = gensweep(c.args);
        EXPECT_EQ(r.rc, 2) << c.args << "\n" << r.out << r.err;
        EXPECT_NE(r.err.find(c.msg), std::string::npos) << c.args << "\n" << r.err;
    }
}

TEST(Calibrate, BadCaseFilesNameTheProblemAndWhere)
{
    struct Case {
        const char *file, *msg;
    } cases[] = {
        {"malformed.yaml", "malformed.yaml:2:1: YAML:"},
        {"no_cases.yaml", "cases: a list of cases is required"},
        {"unknown_config.yaml", ":4:13: cases[0].config: no loaded config is named 'gen9'"},
        {"unknown_kernel.yaml", ":5:13: cases[0].kernel: unknown kernel 'nope'"},
        {"bad_unit.yaml", ":8:11: cases[0].time: 'GHz' is a frequency unit"},
        {"unknown_source.yaml", "cases[0].source: 'Y' is not a key of sources:"},
        {"wrong_rank.yaml", "cases[0].shape: ubench_dma takes 2 sizes, got 1"},
        {"engines_not_transfer.yaml", "need measure: transfer"},
        {"duplicate_name.yaml", "cases[1].name: 'a' is used twice (first at line 3)"},
        {"unknown_keys.yaml", "cases[0].colour: unknown key"},
        {"nothing_to_compare.yaml", "nothing to compare"},
        {"time_out_of_range.yaml", ":8:11: cases[0].time: '1e-300ns' is out of range"},
        {"bandwidth_out_of_range.yaml",
         ":8:23: cases[0].engine_bandwidth: '1e300GB/s' is out of range"},
        {"per_step_doubled_refused.yaml",
         ":6:12: cases[0].shape: ubench_chain refuses the per_step case's second run"},
        {"too_many_sources.yaml", ":66:3: sources: more than 64 sources"},
        {"missing_role.yaml", ":3:5: cases[0]: role: is required (fit or validate)"},
        {"bad_role.yaml", ":8:11: cases[0].role: expected fit (a measurement --fit may use) or "
                          "validate"},
        {"bad_target.yaml", ":3:27: targets.validate_geomean_error: expected a number in 1..1000"},
        {"unknown_target.yaml", ":3:3: targets.validation: unknown key"},
        /* nki: blocks (a kernel file outside the repository) */
        {"nki_not_mapping.yaml", ":5:10: cases[0].nki: expected a mapping"},
        {"nki_bad_arg.yaml", ":9:33: cases[0].nki.args: '128x512': expected NAME=VALUE"},
        {"nki_with_shape.yaml", ":6:12: cases[0].shape: not with nki:"},
        {"nki_unknown_key.yaml", ":9:7: cases[0].nki.path: unknown key"},
        {"nki_bad_mirror.yaml",
         ":6:15: cases[0].nki.mirror: expected the name of an environment variable"},
        {"nki_missing_commit.yaml", ":6:7: cases[0].nki: commit: is required"},
        {"nki_outside_path.yaml", ":7:13: cases[0].nki.file: expected a path relative to the "
                                  "mirror's root, without '..'"},
        {"nki_transfer.yaml", ":3:5: cases[0]: an nki: case measures kernel or kernel_with_launch"},
    };
    for (const Case &c : cases) {
        CliRun r = gensweep(std::string("calibrate tests/calibration/bad/") + c.file);
        EXPECT_EQ(r.rc, 2) << c.file << "\n" << r.out << r.err;
        EXPECT_NE(r.err.find(c.msg), std::string::npos) << c.file << "\n" << r.err;
        EXPECT_EQ(r.out, "") << c.file; // nothing ran
    }
}

// An nki: case names a kernel file under the directory an environment variable names (a local
// mirror of a public repository). Without the variable, or without the file, the case is
// skipped and said, never an error: the other cases still run and are checked.
TEST(Calibrate, NkiCaseWithoutItsMirrorIsSkipped)
{
    const std::string json = tmp("nki-skip.json");
    unsetenv("GS_TEST_NKI_MIRROR");
    CliRun r = gensweep("calibrate tests/calibration/nki_cases.yaml --json '" + json + "'");
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("(skipped: $GS_TEST_NKI_MIRROR not set)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("skipped      2 case(s)"), std::string::npos) << r.out;
    Json j(json);
    ASSERT_NE(j.doc, nullptr);
    EXPECT_EQ(num(j.doc, "skipped_cases"), 2.0);
    EXPECT_EQ(num(j.doc, "validate_cases"), 1.0); // only the suite case is timed
    const cJSON *k = j.find_case("nki-tiny-add");
    ASSERT_NE(k, nullptr);
    EXPECT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(k, "model_ns")));
    EXPECT_EQ(num(k, "measured_ns"), 16000.0);
    // the mirror set, one file absent in it: that case alone is skipped, naming the file
    const std::string mirror = kSrc + "/tests/calibration/nki_mirror";
    setenv("GS_TEST_NKI_MIRROR", mirror.c_str(), 1);
    r = gensweep("calibrate tests/calibration/nki_cases.yaml --json '" + json + "'");
    unsetenv("GS_TEST_NKI_MIRROR");
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("(skipped: $GS_TEST_NKI_MIRROR/kernels/absent.py: no such file)"),
              std::string::npos)
        << r.out;
    Json j2(json);
    ASSERT_NE(j2.doc, nullptr);
    EXPECT_EQ(num(j2.doc, "skipped_cases"), 1.0);
    EXPECT_EQ(num(j2.doc, "validate_cases"), 2.0);
    std::remove(json.c_str());
}

// With the mirror present the case runs as `gensweep nki run` runs the same file (a child
// process of the same binary): the same model time, its reference checked, and the case records
// the repository, commit and path it was measured against.
TEST(Calibrate, NkiCaseRunsAsNkiRunDoes)
{
    const std::string json = tmp("nki-run.json");
    const std::string mirror = kSrc + "/tests/calibration/nki_mirror";
    setenv("GS_TEST_NKI_MIRROR", mirror.c_str(), 1);
    CliRun r = gensweep("calibrate tests/calibration/nki_cases.yaml --json '" + json + "'");
    unsetenv("GS_TEST_NKI_MIRROR");
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    Json j(json);
    ASSERT_NE(j.doc, nullptr);
    const cJSON *k = j.find_case("nki-tiny-add");
    ASSERT_NE(k, nullptr);
    const double model = num(k, "model_ns");
    ASSERT_GT(model, 0.0);
    EXPECT_DOUBLE_EQ(num(k, "ratio"), model / 16000.0);
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(k, "nki");
    ASSERT_TRUE(cJSON_IsObject(n));
    EXPECT_STREQ(cJSON_GetObjectItemCaseSensitive(n, "repository")->valuestring, "gensweep/tests");
    EXPECT_STREQ(cJSON_GetObjectItemCaseSensitive(n, "commit")->valuestring,
                 "0123456789abcdef0123456789abcdef01234567");
    EXPECT_STREQ(cJSON_GetObjectItemCaseSensitive(n, "path")->valuestring, "kernels/tiny_add.py");
    EXPECT_STREQ(cJSON_GetObjectItemCaseSensitive(k, "kernel")->valuestring, "nki.tiny_add");
    // the same kernel through the command: the same time with launch
    CliRun direct = gensweep("nki run tests/calibration/nki_mirror/kernels/tiny_add.py --kernel "
                             "tiny_add --config configs/gen2.yaml --arg a=bf16:128x512 --arg "
                             "b=bf16:128x512 --timing-only --json");
    ASSERT_EQ(direct.rc, 0) << direct.out << direct.err;
    cJSON *rec = cJSON_Parse(direct.out.c_str());
    ASSERT_NE(rec, nullptr) << direct.out;
    EXPECT_DOUBLE_EQ(model, num(rec, "time_with_launch_ns"));
    cJSON_Delete(rec);
    std::remove(json.c_str());
}

// An NKI case whose kernel does not pass is a failed case (exit 1) naming the case file's line
// and what nki run said, not a silently missing number.
TEST(Calibrate, NkiCaseThatFailsIsAnError)
{
    const std::string cases = tmp("nki-fail.yaml");
    {
        std::ofstream f(cases);
        f << "sources: {T: t}\ncases:\n  - name: wrong-shape\n    config: gen2\n"
             "    nki: {mirror: GS_TEST_NKI_MIRROR, file: kernels/tiny_add.py, kernel: tiny_add,\n"
             "          args: [a=bf16:128x512, b=bf16:64x512], repository: gensweep/tests,\n"
             "          commit: 0123456}\n    measure: kernel\n    role: validate\n"
             "    time: 1us\n    source: T\n";
    }
    const std::string mirror = kSrc + "/tests/calibration/nki_mirror";
    setenv("GS_TEST_NKI_MIRROR", mirror.c_str(), 1);
    CliRun r = gensweep("calibrate '" + cases + "'");
    unsetenv("GS_TEST_NKI_MIRROR");
    EXPECT_EQ(r.rc, 1) << r.out << r.err;
    EXPECT_NE(r.err.find(cases + ":3: case wrong-shape: gensweep nki run kernels/tiny_add.py "
                                 "(tiny_add) did not pass"),
              std::string::npos)
        << r.err;
    std::remove(cases.c_str());
}

// Only a structural case: no timed measurement, so no error factor to print (not "nan").
TEST(Calibrate, NoTimedCaseHasNoErrorFactor)
{
    CliRun r = gensweep("calibrate tests/calibration/no_timed_case.yaml");
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_EQ(r.out.find("nan"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("geomean error factor: - (no timed case"), std::string::npos) << r.out;
}

// Case names and sources come from the file: ESC, BEL and OSC never reach the terminal raw,
// in the table or in a load error.
TEST(Calibrate, CaseNamesAndSourcesAreEscaped)
{
    CliRun r = gensweep("calibrate tests/calibration/name_escapes.yaml");
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find('\a'), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("a\\x1b[2J\\x07"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("X\\x1b]0;pwned\\x07"), std::string::npos) << r.out;
    r = gensweep("calibrate tests/calibration/bad/duplicate_name_escapes.yaml");
    EXPECT_EQ(r.rc, 2) << r.out << r.err;
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("'a\\x1b[2J' is used twice"), std::string::npos) << r.err;
}

// A kernel launch costs core.launch_overhead end to end: the record carries it as launch_ns
// and time_with_launch_ns = time_ns + launch_ns, and time_ns (the kernel) does not move with it.
TEST(RunFidelity, LaunchCostIsReportedApartFromTheKernelTime)
{
    auto record = [](const std::string &set) {
        CliRun r = gensweep("run --config configs/gen2.yaml --kernel elementwise_add --shape "
                            "128x512 --timing-only --json" +
                            set);
        EXPECT_EQ(r.rc, 0) << r.out << r.err;
        cJSON *d = cJSON_Parse(r.out.c_str());
        std::array<double, 3> v = {num(d, "time_ns"), num(d, "launch_ns"),
                                   num(d, "time_with_launch_ns")};
        cJSON_Delete(d);
        return v;
    };
    const auto shipped = record(""), none = record(" --set core.launch_overhead=0ns"),
               big = record(" --set core.launch_overhead=25us");
    ASSERT_GT(shipped[0], 0.0);
    EXPECT_GT(shipped[1], 0.0); // every generation config charges one
    EXPECT_DOUBLE_EQ(shipped[2], shipped[0] + shipped[1]);
    EXPECT_EQ(none[1], 0.0);
    EXPECT_DOUBLE_EQ(none[2], none[0]);
    EXPECT_EQ(big[1], 25000.0);
    EXPECT_DOUBLE_EQ(big[2], big[0] + 25000.0);
    // the kernel's own time is the same whatever a launch costs
    EXPECT_EQ(shipped[0], none[0]);
    EXPECT_EQ(big[0], none[0]);
}

// measure: kernel_with_launch compares time_with_launch_ns, so --fit core.launch_overhead over
// whole-kernel cases finds the launch cost the "measurements" were made with (7 us, from 10 us).
TEST(Calibrate, FitRecoversTheLaunchCost)
{
    const std::string cases = tmp("launch-cases.yaml"), json = tmp("launch.json");
    auto write = [&](const std::string &a, const std::string &b) {
        std::ofstream f(cases);
        f << "sources: {T: test}\ncases:\n";
        const char *shapes[2] = {"[128, 512]", "[256, 2048]"};
        const std::string times[2] = {a, b};
        for (int i = 0; i < 2; i++)
            f << "  - name: k" << i << "\n    config: gen2\n    kernel: elementwise_add\n"
              << "    shape: " << shapes[i]
              << "\n    dtype: fp32\n    measure: kernel_with_launch\n"
              << "    role: fit\n    time: " << times[i] << "\n    source: T\n";
    };
    write("1us", "1us");
    CliRun r =
        gensweep("calibrate '" + cases + "' --set core.launch_overhead=7us --json '" + json + "'");
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    std::string truth[2];
    {
        Json j(json);
        ASSERT_NE(j.doc, nullptr);
        for (int i = 0; i < 2; i++) {
            const double t = num(j.find_case(("k" + std::to_string(i)).c_str()), "model_ns");
            ASSERT_GT(t, 7000.0); // the launch is in what this measure compares
            char b[64];
            snprintf(b, sizeof b, "%.6fns", t);
            truth[i] = b;
        }
    }
    write(truth[0], truth[1]);
    r = gensweep("calibrate '" + cases + "' --fit core.launch_overhead --json '" + json + "'");
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    Json j(json);
    ASSERT_NE(j.doc, nullptr);
    const cJSON *fit = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j.doc, "fit"), 0);
    ASSERT_NE(fit, nullptr);
    EXPECT_EQ(num(fit, "before"), 10000.0);
    EXPECT_NEAR(num(fit, "after"), 7000.0, 140.0);
    for (const std::string &p : {cases, json})
        std::remove(p.c_str());
}

TEST(RunFidelity, ACheckShapeThatDoesNotFitIsAFailure)
{
    // 64 KiB of SBUF (512 B per partition): matmul's check shape cannot fit
    CliRun r = gensweep("run --config configs/gen2.yaml --kernel matmul --variant naive --shape "
                        "128x128x512 --set core.sbuf=64KiB --json");
    EXPECT_EQ(r.rc, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("\"status\":\"fail\""), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("a check shape must fit every generation"), std::string::npos) << r.err;
    // the same SBUF with a shape that is not a check shape: a clean does-not-fit
    r = gensweep("run --config configs/gen2.yaml --kernel matmul --variant naive --shape "
                 "128x128x500 --set core.sbuf=64KiB --json");
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("\"status\":\"does-not-fit\""), std::string::npos) << r.out;
}

TEST(RunFidelity, LargeElementwiseIsNearTheDmaBound)
{
    // 8192 x 8192 bf16 add: 3 x 128 MiB through one core's 16 engines of 27.2 GB/s
    for (const char *gen : {"gen2", "gen3"}) {
        CliRun r = gensweep(std::string("run --config configs/") + gen +
                            ".yaml --kernel elementwise_add --shape 8192x8192 --timing-only");
        ASSERT_EQ(r.rc, 0) << r.err;
        const size_t at = r.out.find("bound on the minimum traffic");
        ASSERT_NE(at, std::string::npos) << r.out;
        const size_t eq = r.out.find("actual/bound = ", at);
        ASSERT_NE(eq, std::string::npos) << r.out;
        const double ratio = std::stod(r.out.substr(eq + 15));
        EXPECT_GE(ratio, 1.0) << gen;
        EXPECT_LE(ratio, 1.5) << gen << "\n" << r.out;
        EXPECT_NE(r.out.find("DMA 1 cores x 16 engines x 27.2 GB/s"), std::string::npos) << r.out;
    }
}

TEST(RunFidelity, MatmulSchedulesShrinkTheirTilesToFitASmallCore)
{
    // 64 partitions, 4 MiB SBUF, 64x64 PE array: the default tile width no longer fits a
    // K-deep block; the schedules must narrow it rather than report does-not-fit
    struct Job {
        const char *kernel, *variant, *shape;
    } jobs[] = {{"matmul", "hoisted", "2048x8192x2048"},
                {"matmul", "blocked", "2048x8192x2048"},
                {"matmul", "pipelined", "2048x8192x2048"},
                {"mlp", "fused", "4096x4096x4096"},
                {"layernorm", "bn_stats", "2048x8192"}};
    for (const Job &j : jobs) {
        CliRun r = gensweep(std::string("run --config configs/whatif/small-core.yaml --kernel ") +
                            j.kernel + " --variant " + j.variant + " --shape " + j.shape +
                            " --timing-only --json");
        EXPECT_EQ(r.rc, 0) << j.kernel << "/" << j.variant << "\n" << r.out << r.err;
        EXPECT_NE(r.out.find("\"status\":\"pass\""), std::string::npos)
            << j.kernel << "/" << j.variant << "\n"
            << r.out << r.err;
    }
}

TEST(Calibrate, TheReportShowsModelVsMeasured)
{
    // a sweep given the case file runs it on its configs and puts the section in its report
    const std::string out = tmp("sweep");
    CliRun r = gensweep("sweep --kernels elementwise_add --suite check -j 2 --quiet --out '" + out +
                        "' --calibration calibration/cases.yaml");
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    const std::string html = slurp(out + "/report.html");
    const size_t at = html.find("id=\"calibration\"");
    ASSERT_NE(at, std::string::npos);
    const std::string sec = html.substr(at, html.find("</section>", at) - at);
    EXPECT_NE(sec.find("dmao-4x4096"), std::string::npos) << sec;
    EXPECT_NE(sec.find("Geometric-mean error factor"), std::string::npos) << sec;
    EXPECT_NE(sec.find("nki-dma-overview"), std::string::npos) << sec; // the cited page
    // fit and validation errors apart, each with its worst case, and the committed target
    EXPECT_NE(sec.find("Fit cases (the only ones"), std::string::npos) << sec;
    EXPECT_NE(sec.find("Validation cases (measurements the model was never fitted to)"),
              std::string::npos)
        << sec;
    EXPECT_NE(sec.find("committed target"), std::string::npos) << sec;
    EXPECT_NE(sec.find("<td>validate</td>"), std::string::npos) << sec;
    Json cal(out + "/calibration.json");
    ASSERT_NE(cal.doc, nullptr);
    EXPECT_STREQ(cJSON_GetObjectItemCaseSensitive(cal.doc, "schema")->valuestring,
                 "gensweep-calibration");
    // report --calibration takes the written results; without it the section says how
    r = gensweep("report '" + out + "/results.json' -o '" + out + "/r2.html' --calibration '" +
                 out + "/calibration.json'");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(slurp(out + "/r2.html").find("dmao-128x128"), std::string::npos);
    r = gensweep("report '" + out + "/results.json' -o '" + out + "/r3.html'");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(slurp(out + "/r3.html").find("No calibration results given"), std::string::npos);
    std::system(("rm -rf '" + out + "'").c_str());
}

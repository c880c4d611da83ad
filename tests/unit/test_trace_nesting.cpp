// Every trace of real kernel runs on every shipped generation keeps the trace-event format's
// nesting rule: complete ("X") events on one pid/tid either nest or are disjoint (viewers such
// as Perfetto drop a slice that partially overlaps another on its track). The runs are chosen
// for what breaks the rule: DMA engines serving shares back to back while earlier ones still
// wait for their HBM latency, queues with transfers in flight that end out of order, two cores,
// DMA transposes and gathers. DMA slices carry their bytes and endpoints, and each DMA engine's
// bandwidth counter moves exactly the bytes of the shares on its track. The record's timeline
// (the report's) says how busy each slice and track was.
#include <gtest/gtest.h>

#include <cjson/cJSON.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../support/cli_run.h"
#include "../support/shipped_configs.h"

namespace
{

struct KernelRun {
    const char *args; /* kernel, shape, variant, ... */
};
const KernelRun kRuns[] = {
    {"--kernel matmul --variant hoisted --shape 200x300x700"},
    {"--kernel matmul --shape 1024x1024x1024 --timing-only"},
    {"--kernel matmul --variant spmd --shape 512x512x512"},
    {"--kernel mlp --variant unfused --shape 300x200x150"},
    {"--kernel ubench_matmul_stream --shape 8x128x128x512"},
    {"--kernel elementwise_add --shape 256x1024"},
    {"--kernel softmax --shape 200x3000"},
    {"--kernel embedding"},
    {"--kernel transpose"},
};

int64_t ps(const cJSON *v)
{
    return std::llround(v->valuedouble * 1e6);
}

struct Slice {
    int64_t ts, end;
    int index;
};

/* Partial overlaps on one track: sorted by start (longest first), a slice must end by the end
 * of every open slice it starts inside. Returns the count; `example` describes the first. */
size_t partial_overlaps(std::vector<Slice> v, std::string *example)
{
    std::sort(v.begin(), v.end(), [](const Slice &a, const Slice &b) {
        return a.ts != b.ts ? a.ts < b.ts : a.end > b.end;
    });
    std::vector<const Slice *> open;
    size_t n = 0;
    for (const Slice &s : v) {
        while (!open.empty() && open.back()->end <= s.ts)
            open.pop_back();
        if (!open.empty() && s.end > open.back()->end) {
            if (n++ == 0) {
                std::ostringstream os;
                os << "instruction " << s.index << " [" << s.ts << ", " << s.end
                   << ") ps partially overlaps instruction " << open.back()->index << " ["
                   << open.back()->ts << ", " << open.back()->end << ")";
                *example = os.str();
            }
            continue; /* judged against the rest as if it were not there */
        }
        open.push_back(&s);
    }
    return n;
}

class TraceNesting : public ::testing::TestWithParam<std::string>
{
};

TEST_P(TraceNesting, SlicesNestOrAreDisjointAndDmaSlicesSayWhatTheyMove)
{
    char dir[] = "/tmp/gs-test-nesting-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    size_t traces = 0;
    for (const KernelRun &run : kRuns) {
        const std::string trace = std::string(dir) + "/t.json";
        const std::string args = std::string("run --config '") + GetParam() + "' " + run.args +
                                 " --trace '" + trace + "'";
        const CliRun r = gs_test_gensweep(args);
        ASSERT_EQ(r.rc, 0) << args << "\n" << r.err;
        const std::string text = gs_test_slurp(trace);
        if (r.out.find("unsupported") != std::string::npos && text.empty()) continue;
        cJSON *root = cJSON_Parse(text.c_str());
        ASSERT_NE(root, nullptr) << args << ": trace is not JSON";
        ++traces;
        const cJSON *events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
        ASSERT_TRUE(cJSON_IsArray(events));

        std::map<std::pair<int, int>, std::string> names;
        std::map<std::pair<int, int>, std::vector<Slice>> tracks;
        std::map<std::pair<int, std::string>, double> share_bytes; // (pid, engine track)
        std::map<std::pair<int, std::string>, std::vector<std::pair<int64_t, double>>> counters;
        size_t dma_slices = 0, missing_args = 0;
        std::string first_missing;
        const cJSON *ev;
        cJSON_ArrayForEach(ev, events)
        {
            const char *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph")->valuestring;
            const int pid = cJSON_GetObjectItemCaseSensitive(ev, "pid")->valueint;
            const int tid = cJSON_GetObjectItemCaseSensitive(ev, "tid")->valueint;
            const cJSON *args_obj = cJSON_GetObjectItemCaseSensitive(ev, "args");
            const std::string name = cJSON_GetObjectItemCaseSensitive(ev, "name")->valuestring;
            if (!strcmp(ph, "M") && name == "thread_name") {
                names[{pid, tid}] = cJSON_GetObjectItemCaseSensitive(args_obj, "name")->valuestring;
            } else if (!strcmp(ph, "X")) {
                Slice s;
                s.ts = ps(cJSON_GetObjectItemCaseSensitive(ev, "ts"));
                s.end = s.ts + ps(cJSON_GetObjectItemCaseSensitive(ev, "dur"));
                s.index = cJSON_GetObjectItemCaseSensitive(args_obj, "index")->valueint;
                tracks[{pid, tid}].push_back(s);
                const std::string &track = names[{pid, tid}]; // names come first
                if (track.rfind("dma ", 0) == 0) { // every slice on a DMA queue or engine
                    ++dma_slices;
                    const cJSON *bytes = cJSON_GetObjectItemCaseSensitive(args_obj, "bytes");
                    const cJSON *from = cJSON_GetObjectItemCaseSensitive(args_obj, "from");
                    const cJSON *to = cJSON_GetObjectItemCaseSensitive(args_obj, "to");
                    const bool ok = cJSON_IsNumber(bytes) && bytes->valuedouble > 0 &&
                                    cJSON_IsString(from) && *from->valuestring &&
                                    cJSON_IsString(to) && *to->valuestring;
                    if (!ok && missing_args++ == 0)
                        first_missing = track + " slice " + std::to_string(s.index);
                    if (!cJSON_IsNumber(bytes)) continue;
                    if (track.rfind("dma engine ", 0) == 0)
                        share_bytes[{pid, track}] += bytes->valuedouble;
                }
            } else if (!strcmp(ph, "C")) {
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(args_obj, "GB/s");
                if (cJSON_IsNumber(v))
                    counters[{pid, name}].push_back(
                        {ps(cJSON_GetObjectItemCaseSensitive(ev, "ts")), v->valuedouble});
            }
        }
        EXPECT_GT(dma_slices, 0u) << args;
        for (const auto &kv : tracks) {
            std::string example;
            const size_t n = partial_overlaps(kv.second, &example);
            EXPECT_EQ(n, 0u) << args << ": track \"" << names[kv.first] << "\" (pid "
                             << kv.first.first << ", tid " << kv.first.second << ") has " << n
                             << " partially overlapping slices of " << kv.second.size()
                             << "; first: " << example;
        }
        EXPECT_EQ(missing_args, 0u) << args
                                    << ": DMA slices without bytes, source or "
                                       "destination; first: "
                                    << first_missing;
        // each engine's bandwidth counter (GB/s steps) integrates to the bytes of its shares
        EXPECT_FALSE(share_bytes.empty()) << args;
        for (const auto &kv : share_bytes) {
            auto c = counters.find({kv.first.first, kv.first.second + " bandwidth"});
            ASSERT_NE(c, counters.end()) << args << ": no bandwidth counter for " << kv.first.second
                                         << " of pid " << kv.first.first;
            std::vector<std::pair<int64_t, double>> steps = c->second;
            std::stable_sort(steps.begin(), steps.end(),
                             [](const auto &a, const auto &b) { return a.first < b.first; });
            double bytes = 0;
            for (size_t k = 0; k + 1 < steps.size(); ++k) {
                EXPECT_GE(steps[k].second, -1e-9) << args;
                bytes += steps[k].second * (double)(steps[k + 1].first - steps[k].first) / 1000.0;
            }
            ASSERT_FALSE(steps.empty());
            EXPECT_NEAR(steps.back().second, 0.0, 1e-9) << args << ": counter does not end at 0";
            EXPECT_NEAR(bytes, kv.second, 1e-6 * kv.second + 1.0)
                << args << ": " << kv.first.second << " of pid " << kv.first.first;
        }
        cJSON_Delete(root);
        unlink(trace.c_str());
    }
    EXPECT_GE(traces, 6u) << "too few kernels ran on " << GetParam();
    rmdir(dir);
}

// The record's timeline (what the report draws) says how busy each track was: a slice merged
// across idle gaps carries the time its instructions cover, and a track's busy_ns is the union
// of its instructions, which for an engine of a one-core run is the engine's busy time. A gen2
// 2048^3 matmul has 1024 matmuls over 1.75 ms busy 0.19 ms, merged into a few slices.
TEST(RecordTimeline, SlicesAndTracksSayHowBusyTheyWere)
{
    char dir[] = "/tmp/gs-test-rectl-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string rec = std::string(dir) + "/rec.json";
    const CliRun r = gs_test_gensweep("run --config configs/gen2.yaml --kernel matmul --shape "
                                      "2048x2048x2048 --timing-only --timeline --record '" +
                                      rec + "'");
    ASSERT_EQ(r.rc, 0) << r.err;
    cJSON *doc = cJSON_Parse(gs_test_slurp(rec).c_str());
    ASSERT_NE(doc, nullptr);
    const cJSON *job = doc; // the record is one job element
    const cJSON *tl = cJSON_GetObjectItemCaseSensitive(job, "timeline");
    const double total = cJSON_GetObjectItemCaseSensitive(tl, "total_ns")->valuedouble;
    const double tensor_busy = cJSON_GetObjectItemCaseSensitive(
                                   cJSON_GetObjectItemCaseSensitive(
                                       cJSON_GetObjectItemCaseSensitive(job, "engines"), "tensor"),
                                   "busy_ns")
                                   ->valuedouble;
    bool saw_tensor = false, saw_gap = false;
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(tl, "tracks"))
    {
        const std::string name = cJSON_GetObjectItemCaseSensitive(t, "name")->valuestring;
        const cJSON *busy = cJSON_GetObjectItemCaseSensitive(t, "busy_ns");
        ASSERT_TRUE(cJSON_IsNumber(busy)) << name << " has no busy_ns";
        EXPECT_LE(busy->valuedouble, total * (1 + 1e-12)) << name;
        double sum = 0, span = 0;
        const cJSON *s;
        cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(t, "slices"))
        {
            const double a = cJSON_GetArrayItem(s, 0)->valuedouble,
                         b = cJSON_GetArrayItem(s, 1)->valuedouble;
            const cJSON *sb = cJSON_GetArrayItem(s, 5);
            ASSERT_TRUE(cJSON_IsNumber(sb)) << name << ": a slice without its busy time";
            EXPECT_LE(sb->valuedouble, (b - a) * (1 + 1e-12) + 1e-9) << name;
            EXPECT_GT(sb->valuedouble, 0) << name;
            sum += sb->valuedouble;
            span += b - a;
        }
        EXPECT_GE(sum, busy->valuedouble * (1 - 1e-9)) << name; // the union is at most the sum
        if (span > 2 * busy->valuedouble) saw_gap = true;
        if (name == "c0 tensor") {
            saw_tensor = true;
            EXPECT_NEAR(busy->valuedouble, tensor_busy, 1e-9 * tensor_busy);
            EXPECT_NEAR(sum, tensor_busy, 1e-9 * tensor_busy); // in order: disjoint
        }
    }
    EXPECT_TRUE(saw_tensor);
    EXPECT_TRUE(saw_gap) << "no slice merged across idle time: the test lost its case";
    cJSON_Delete(doc);
    unlink(rec.c_str());
    rmdir(dir);
}

std::string config_name(const ::testing::TestParamInfo<std::string> &p)
{
    return gs_test_config_name(p.param);
}

INSTANTIATE_TEST_SUITE_P(Shipped, TraceNesting, ::testing::ValuesIn(gs_test_shipped_configs()),
                         config_name);

} // namespace

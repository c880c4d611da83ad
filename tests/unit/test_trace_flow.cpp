// The Perfetto trace of a real kernel run (`gensweep run --trace`): every event has a kind from
// a fixed schema (M metadata, X slices, C counters, s/f flow pairs) with that kind's fields and
// types; flows join a producer slice to a consumer slice on another track that really depends on
// it (the consumer's args.deps); source paths are relative to the repository and exist.
#include <gtest/gtest.h>

#include <cjson/cJSON.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace
{

std::string slurp(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

/* ps from a trace timestamp printed as microseconds with six decimals */
int64_t ps(const cJSON *v)
{
    return std::llround(v->valuedouble * 1e6);
}

enum Kind { STR, NUM, INT, OBJ, ARR };
struct Field {
    const char *name;
    Kind kind;
};
/* The schema: the fields each event kind must have (and only these kinds may appear). */
const std::map<std::string, std::vector<Field>> kSchema = {
    {"M", {{"pid", INT}, {"tid", INT}, {"name", STR}, {"args", OBJ}}},
    {"X", {{"pid", INT}, {"tid", INT}, {"name", STR}, {"ts", NUM}, {"dur", NUM}, {"args", OBJ}}},
    {"C", {{"pid", INT}, {"tid", INT}, {"name", STR}, {"ts", NUM}, {"args", OBJ}}},
    {"s", {{"id", INT}, {"name", STR}, {"cat", STR}, {"pid", INT}, {"tid", INT}, {"ts", NUM}}},
    {"f",
     {{"id", INT},
      {"name", STR},
      {"cat", STR},
      {"pid", INT},
      {"tid", INT},
      {"ts", NUM},
      {"bp", STR}}},
};

bool has_kind(const cJSON *v, Kind k)
{
    switch (k) {
    case STR:
        return cJSON_IsString(v);
    case NUM:
        return cJSON_IsNumber(v) && std::isfinite(v->valuedouble) && v->valuedouble >= 0;
    case INT:
        return cJSON_IsNumber(v) && v->valuedouble == std::floor(v->valuedouble);
    case OBJ:
        return cJSON_IsObject(v);
    case ARR:
        return cJSON_IsArray(v);
    }
    return false;
}

struct Slice {
    int pid, tid;
    int64_t ts, end;
    int index;
    std::set<int> deps;
};

TEST(TraceFlow, EventsFollowTheSchemaAndFlowsJoinRealDependencies)
{
    char dir[] = "/tmp/gs-test-trace-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string trace = std::string(dir) + "/mm.json";
    // two cores: flows cross engines and DMA queues
    std::string cmd = std::string(GS_GENSWEEP_BIN) + " run --config " + GS_SOURCE_DIR +
                      "/configs/gen2.yaml --kernel matmul --shape 256x256x512 --trace " + trace +
                      " >/dev/null 2>&1";
    int st = system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << cmd;
    cJSON *root = cJSON_Parse(slurp(trace).c_str());
    ASSERT_NE(root, nullptr) << "not JSON";
    const cJSON *events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    ASSERT_TRUE(cJSON_IsArray(events));

    std::map<std::string, int> count;
    std::map<int, Slice> slices; // by instruction index
    std::map<long, std::vector<const cJSON *>> flows;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, events)
    {
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
        ASSERT_TRUE(cJSON_IsString(ph));
        auto it = kSchema.find(ph->valuestring);
        ASSERT_NE(it, kSchema.end()) << "event kind '" << ph->valuestring << "' not in the schema";
        for (const Field &f : it->second)
            ASSERT_TRUE(has_kind(cJSON_GetObjectItemCaseSensitive(ev, f.name), f.kind))
                << ph->valuestring << " event: field " << f.name << " missing or mistyped";
        count[ph->valuestring]++;
        const int pid = cJSON_GetObjectItemCaseSensitive(ev, "pid")->valueint;
        const int tid = cJSON_GetObjectItemCaseSensitive(ev, "tid")->valueint;
        if (!strcmp(ph->valuestring, "X")) {
            const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
            const cJSON *src = cJSON_GetObjectItemCaseSensitive(args, "src");
            const cJSON *deps = cJSON_GetObjectItemCaseSensitive(args, "deps");
            ASSERT_TRUE(has_kind(src, STR));
            ASSERT_TRUE(has_kind(deps, ARR));
            ASSERT_TRUE(has_kind(cJSON_GetObjectItemCaseSensitive(args, "index"), INT));
            // repository-relative source path of an existing file
            std::string path(src->valuestring);
            path = path.substr(0, path.rfind(':'));
            ASSERT_NE(path[0], '/') << src->valuestring;
            struct stat sb;
            ASSERT_EQ(stat((std::string(GS_SOURCE_DIR) + "/" + path).c_str(), &sb), 0) << path;
            Slice s;
            s.pid = pid;
            s.tid = tid;
            s.ts = ps(cJSON_GetObjectItemCaseSensitive(ev, "ts"));
            s.end = s.ts + ps(cJSON_GetObjectItemCaseSensitive(ev, "dur"));
            s.index = cJSON_GetObjectItemCaseSensitive(args, "index")->valueint;
            const cJSON *d;
            cJSON_ArrayForEach(d, deps) s.deps.insert(d->valueint);
            slices[s.index] = s;
        } else if (!strcmp(ph->valuestring, "s") || !strcmp(ph->valuestring, "f")) {
            flows[(long)cJSON_GetObjectItemCaseSensitive(ev, "id")->valuedouble].push_back(ev);
        }
    }
    EXPECT_GT(count["M"], 0);
    EXPECT_GT(count["X"], 10);
    EXPECT_GT(count["C"], 0);
    ASSERT_GT(flows.size(), 0u) << "no flow events";
    EXPECT_EQ(count["s"], count["f"]);

    // the slice of (pid, tid) enclosing ts, -1 if none; for "f" the one starting at ts
    auto find = [&](int pid, int tid, int64_t ts, bool starting) {
        for (const auto &kv : slices) {
            const Slice &s = kv.second;
            if (s.pid != pid || s.tid != tid) continue;
            if (starting ? s.ts == ts : (s.ts <= ts && (ts < s.end || s.ts == s.end)))
                return kv.first;
        }
        return -1;
    };
    size_t cross_deps = 0;
    for (const auto &kv : slices)
        for (int d : kv.second.deps)
            if (slices.count(d) &&
                (slices[d].pid != kv.second.pid || slices[d].tid != kv.second.tid))
                cross_deps++;
    std::set<std::pair<int, int>> joined;
    for (const auto &kv : flows) {
        ASSERT_EQ(kv.second.size(), 2u) << "flow " << kv.first << " is not one s/f pair";
        const cJSON *s = kv.second[0], *f = kv.second[1];
        ASSERT_STREQ(cJSON_GetObjectItemCaseSensitive(s, "ph")->valuestring, "s");
        ASSERT_STREQ(cJSON_GetObjectItemCaseSensitive(f, "ph")->valuestring, "f");
        EXPECT_STREQ(cJSON_GetObjectItemCaseSensitive(f, "bp")->valuestring, "e");
        EXPECT_STREQ(cJSON_GetObjectItemCaseSensitive(s, "cat")->valuestring,
                     cJSON_GetObjectItemCaseSensitive(f, "cat")->valuestring);
        auto at = [](const cJSON *e, const char *k) {
            return cJSON_GetObjectItemCaseSensitive(e, k)->valueint;
        };
        const int from =
            find(at(s, "pid"), at(s, "tid"), ps(cJSON_GetObjectItemCaseSensitive(s, "ts")), false);
        const int to =
            find(at(f, "pid"), at(f, "tid"), ps(cJSON_GetObjectItemCaseSensitive(f, "ts")), true);
        ASSERT_GE(from, 0) << "flow " << kv.first << " starts outside every slice";
        ASSERT_GE(to, 0) << "flow " << kv.first << " ends where no slice starts";
        EXPECT_TRUE(slices[to].deps.count(slices[from].index))
            << "flow " << kv.first << ": " << to << " does not depend on " << from;
        EXPECT_TRUE(slices[from].pid != slices[to].pid || slices[from].tid != slices[to].tid);
        EXPECT_LE(slices[from].end, slices[to].ts);
        joined.insert({from, to});
    }
    // every cross-track dependency has its arrow, and only once
    EXPECT_EQ(joined.size(), flows.size());
    EXPECT_EQ(flows.size(), cross_deps);
    cJSON_Delete(root);
    unlink(trace.c_str());
    rmdir(dir);
}

} // namespace

// Tests for gs/jsonw.h: separators, layouts, escaping, number formats and misuse detection.
#include <gtest/gtest.h>
#include <cjson/cJSON.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "gs/jsonw.h"

namespace
{

struct Writer {
    gs_sb sb;
    gs_jw w;
    Writer()
    {
        gs_sb_init(&sb);
        gs_jw_init(&w, &sb);
    }
    ~Writer() { gs_sb_free(&sb); }
    Writer(const Writer &) = delete;
    Writer &operator=(const Writer &) = delete;
    std::string text() { return gs_sb_cstr(&sb); }
    gs_status finish()
    {
        gs_error err;
        gs_error_clear(&err);
        return gs_jw_finish(&w, &err);
    }
};

std::string num_text(double v)
{
    gs_sb sb;
    gs_sb_init(&sb);
    gs_sb_json_num(&sb, v);
    std::string s = gs_sb_cstr(&sb);
    gs_sb_free(&sb);
    return s;
}

} // namespace

TEST(JsonWriter, NestsObjectsAndArraysWithCommasWhereTheyBelong)
{
    Writer t;
    gs_jw_begin_object(&t.w, GS_JW_COMPACT);
    gs_jw_kstr(&t.w, "id", "a");
    gs_jw_key(&t.w, "shape");
    gs_jw_begin_array(&t.w, GS_JW_COMPACT);
    gs_jw_int(&t.w, 128);
    gs_jw_int(&t.w, 64);
    gs_jw_end_array(&t.w);
    gs_jw_key(&t.w, "empty");
    gs_jw_begin_object(&t.w, GS_JW_COMPACT);
    gs_jw_end_object(&t.w);
    gs_jw_key(&t.w, "rows");
    gs_jw_begin_array(&t.w, GS_JW_COMPACT);
    gs_jw_begin_array(&t.w, GS_JW_COMPACT);
    gs_jw_end_array(&t.w);
    gs_jw_begin_object(&t.w, GS_JW_COMPACT);
    gs_jw_kbool(&t.w, "t", 1);
    gs_jw_kbool(&t.w, "f", 0);
    gs_jw_knull(&t.w, "n");
    gs_jw_end_object(&t.w);
    gs_jw_null(&t.w);
    gs_jw_end_array(&t.w);
    gs_jw_knum(&t.w, "x", 0.5);
    gs_jw_kint(&t.w, "i", -3);
    gs_jw_kstr(&t.w, "none", nullptr);
    gs_jw_end_object(&t.w);
    EXPECT_EQ(t.finish(), GS_OK);
    EXPECT_EQ(t.text(), "{\"id\":\"a\",\"shape\":[128,64],\"empty\":{},\"rows\":[[],{\"t\":true,"
                        "\"f\":false,\"n\":null},null],\"x\":0.5,\"i\":-3,\"none\":null}");
    cJSON *doc = cJSON_Parse(t.text().c_str());
    ASSERT_NE(doc, nullptr);
    EXPECT_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "rows")), 3);
    cJSON_Delete(doc);
}

TEST(JsonWriter, EachContainerKeepsItsOwnLayout)
{
    Writer t;
    gs_jw_begin_object(&t.w, GS_JW_LINES);
    gs_jw_kstr(&t.w, "schema", "s");
    gs_jw_key(&t.w, "jobs");
    gs_jw_begin_array(&t.w, GS_JW_LINES);
    gs_jw_begin_object(&t.w, GS_JW_COMPACT);
    gs_jw_kint(&t.w, "a", 1);
    gs_jw_kint(&t.w, "b", 2);
    gs_jw_end_object(&t.w);
    gs_jw_begin_object(&t.w, GS_JW_SPACED);
    gs_jw_kint(&t.w, "a", 1);
    gs_jw_kint(&t.w, "b", 2);
    gs_jw_end_object(&t.w);
    gs_jw_end_array(&t.w);
    gs_jw_key(&t.w, "none");
    gs_jw_begin_array(&t.w, GS_JW_LINES);
    gs_jw_end_array(&t.w);
    gs_jw_key(&t.w, "none_close");
    gs_jw_begin_array(&t.w, GS_JW_LINES_CLOSE);
    gs_jw_end_array(&t.w);
    gs_jw_key(&t.w, "spaced");
    gs_jw_begin_array(&t.w, GS_JW_SPACED);
    gs_jw_int(&t.w, 1);
    gs_jw_int(&t.w, 2);
    gs_jw_end_array(&t.w);
    gs_jw_end_object(&t.w);
    EXPECT_EQ(t.finish(), GS_OK);
    EXPECT_EQ(t.text(), "{\n\"schema\": \"s\",\n\"jobs\": [\n{\"a\":1,\"b\":2},\n{\"a\": 1, \"b\": "
                        "2}\n],\n\"none\": [],\n\"none_close\": [\n],\n\"spaced\": [1, 2]\n}");
}

TEST(JsonWriter, EscapesKeysAndStrings)
{
    Writer t;
    gs_jw_begin_object(&t.w, GS_JW_COMPACT);
    gs_jw_kstr(&t.w, "k\"\\\n<", "a\tb\x01\x7f</script>\xff\xc3\xa9");
    gs_jw_end_object(&t.w);
    EXPECT_EQ(t.finish(), GS_OK);
    EXPECT_EQ(t.text(), "{\"k\\\"\\\\\\n\\u003c\":\"a\\tb\\u0001\\u007f\\u003c/script>\\ufffd"
                        "\xc3\xa9\"}");
    cJSON *doc = cJSON_Parse(t.text().c_str());
    ASSERT_NE(doc, nullptr);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "k\"\\\n<");
    ASSERT_TRUE(cJSON_IsString(v));
    EXPECT_STREQ(v->valuestring, "a\tb\x01\x7f</script>\xef\xbf\xbd\xc3\xa9");
    cJSON_Delete(doc);
}

// Long keys and values take the slower paths (no single small append); the text is the same.
TEST(JsonWriter, LongKeysAndValuesAreWrittenWhole)
{
    const std::string lk(200, 'k'), lv(300, 'v');
    Writer t;
    gs_jw_begin_object(&t.w, GS_JW_SPACED);
    gs_jw_kstr(&t.w, lk.c_str(), lv.c_str());
    gs_jw_key(&t.w, (lk + "<").c_str());
    gs_jw_begin_array(&t.w, GS_JW_SPACED);
    gs_jw_raw(&t.w, lv.c_str());
    gs_jw_raw(&t.w, lv.c_str());
    gs_jw_end_array(&t.w);
    gs_jw_end_object(&t.w);
    EXPECT_EQ(t.finish(), GS_OK);
    EXPECT_EQ(t.text(),
              "{\"" + lk + "\": \"" + lv + "\", \"" + lk + "\\u003c\": [" + lv + ", " + lv + "]}");
}

// Keys of every length around the writer's one-append limit, plain and needing an escape.
TEST(JsonWriter, KeysAroundTheShortKeyLimit)
{
    for (size_t n = 1; n < 120; n++) {
        const std::string a(n - 1, 'a'), k = a + "a", ke = a + "\"";
        Writer t;
        gs_jw_begin_object(&t.w, GS_JW_LINES);
        gs_jw_kint(&t.w, k.c_str(), 1);
        gs_jw_kint(&t.w, ke.c_str(), 2);
        gs_jw_end_object(&t.w);
        EXPECT_EQ(t.finish(), GS_OK);
        EXPECT_EQ(t.text(), "{\n\"" + k + "\": 1,\n\"" + a + "\\\"\": 2\n}") << n;
    }
}

TEST(JsonWriter, NumbersAreFormattedAsTheStringBuilderFormatsThem)
{
    const double vals[] = {
        0.0,   -0.0,   0.1, 1.0 / 3,  42,       -7, 1e15, 1e15 - 1, 12291.271000000001,
        1e300, 5e-324, NAN, INFINITY, -INFINITY};
    for (double v : vals) {
        Writer t;
        gs_jw_num(&t.w, v);
        EXPECT_EQ(t.finish(), GS_OK);
        EXPECT_EQ(t.text(), num_text(v)) << v;
    }
    Writer t;
    gs_jw_begin_array(&t.w, GS_JW_COMPACT);
    gs_jw_int(&t.w, INT64_MIN);
    gs_jw_int(&t.w, INT64_MAX);
    gs_jw_int(&t.w, 0);
    gs_jw_uint(&t.w, UINT64_MAX);
    gs_jw_raw(&t.w, "1.500000");
    gs_jw_rawn(&t.w, "2.25xyz", 4);
    gs_jw_end_array(&t.w);
    EXPECT_EQ(t.finish(), GS_OK);
    EXPECT_EQ(t.text(), "[-9223372036854775808,9223372036854775807,0,18446744073709551615,"
                        "1.500000,2.25]");
}

TEST(JsonWriter, AppendsToExistingTextAndSurvivesAFlushBetweenValues)
{
    Writer t;
    gs_sb_puts(&t.sb, "prefix ");
    gs_jw_begin_array(&t.w, GS_JW_LINES);
    gs_jw_int(&t.w, 1);
    std::string out = t.text();
    gs_sb_reset(&t.sb); // as the trace does after writing an event to its file
    gs_jw_int(&t.w, 2);
    gs_jw_end_array(&t.w);
    out += t.text();
    EXPECT_EQ(t.finish(), GS_OK);
    EXPECT_EQ(out, "prefix [\n1,\n2\n]");
}

// Each misuse: the error names it, nothing more is appended, finish reports it.
static void expect_misuse(void (*write)(gs_jw *), const char *before, const char *why)
{
    Writer t;
    write(&t.w);
    ASSERT_NE(gs_jw_error(&t.w), nullptr) << why;
    EXPECT_STREQ(gs_jw_error(&t.w), why);
    EXPECT_EQ(t.text(), before) << why;
    gs_jw_int(&t.w, 1);
    gs_jw_end_object(&t.w);
    gs_jw_end_array(&t.w);
    EXPECT_EQ(t.text(), before) << why << ": text appended after the error";
    EXPECT_STREQ(gs_jw_error(&t.w), why) << "the first misuse is kept";
    gs_error err;
    gs_error_clear(&err);
    EXPECT_EQ(gs_jw_finish(&t.w, &err), GS_ERR_INTERNAL);
    EXPECT_NE(std::string(err.message).find(why), std::string::npos) << err.message;
}

TEST(JsonWriter, MisuseIsAStickyErrorNamingIt)
{
    expect_misuse(
        [](gs_jw *w) {
            gs_jw_begin_object(w, GS_JW_COMPACT);
            gs_jw_int(w, 1);
        },
        "{", "a value without a key in an object");
    expect_misuse(
        [](gs_jw *w) {
            gs_jw_begin_object(w, GS_JW_COMPACT);
            gs_jw_kint(w, "a", 1);
            gs_jw_begin_array(w, GS_JW_COMPACT);
        },
        "{\"a\":1", "a value without a key in an object");
    expect_misuse(
        [](gs_jw *w) {
            gs_jw_begin_array(w, GS_JW_COMPACT);
            gs_jw_key(w, "a");
        },
        "[", "a key outside an object");
    expect_misuse([](gs_jw *w) { gs_jw_key(w, "a"); }, "", "a key outside an object");
    expect_misuse(
        [](gs_jw *w) {
            gs_jw_begin_object(w, GS_JW_COMPACT);
            gs_jw_key(w, "a");
            gs_jw_key(w, "b");
        },
        "{\"a\":", "two keys without a value between them");
    expect_misuse(
        [](gs_jw *w) {
            gs_jw_begin_object(w, GS_JW_COMPACT);
            gs_jw_key(w, nullptr);
        },
        "{", "a NULL key");
    expect_misuse(
        [](gs_jw *w) {
            gs_jw_begin_object(w, GS_JW_COMPACT);
            gs_jw_end_array(w);
        },
        "{", "an array closed while an object is open");
    expect_misuse(
        [](gs_jw *w) {
            gs_jw_begin_array(w, GS_JW_COMPACT);
            gs_jw_end_object(w);
        },
        "[", "an object closed while an array is open");
    expect_misuse([](gs_jw *w) { gs_jw_end_array(w); }, "", "an array closed with nothing open");
    expect_misuse(
        [](gs_jw *w) {
            gs_jw_begin_object(w, GS_JW_COMPACT);
            gs_jw_key(w, "a");
            gs_jw_end_object(w);
        },
        "{\"a\":", "an object closed after a key without its value");
    expect_misuse(
        [](gs_jw *w) {
            gs_jw_int(w, 1);
            gs_jw_int(w, 2);
        },
        "1", "a second value at the top level");
    expect_misuse(
        [](gs_jw *w) {
            gs_jw_begin_array(w, GS_JW_COMPACT);
            gs_jw_end_array(w);
            gs_jw_begin_array(w, GS_JW_COMPACT);
        },
        "[]", "a second value at the top level");
    expect_misuse(
        [](gs_jw *w) {
            gs_jw_begin_array(w, GS_JW_COMPACT);
            gs_jw_raw(w, "");
        },
        "[", "an empty raw value");
    expect_misuse([](gs_jw *w) { gs_jw_begin_array(w, (gs_jw_layout)7); }, "", "an unknown layout");
}

TEST(JsonWriter, NestsToTheMaximumDepthAndNoDeeper)
{
    Writer t;
    for (int i = 0; i < GS_JW_MAX_DEPTH; i++)
        gs_jw_begin_array(&t.w, GS_JW_COMPACT);
    EXPECT_EQ(gs_jw_error(&t.w), nullptr);
    for (int i = 0; i < GS_JW_MAX_DEPTH; i++)
        gs_jw_end_array(&t.w);
    EXPECT_EQ(t.finish(), GS_OK);
    EXPECT_EQ(t.text(), std::string(GS_JW_MAX_DEPTH, '[') + std::string(GS_JW_MAX_DEPTH, ']'));

    Writer d;
    for (int i = 0; i <= GS_JW_MAX_DEPTH; i++)
        gs_jw_begin_array(&d.w, GS_JW_COMPACT);
    EXPECT_STREQ(gs_jw_error(&d.w), "nesting deeper than GS_JW_MAX_DEPTH");
    EXPECT_EQ(d.text(), std::string(GS_JW_MAX_DEPTH, '['));
    EXPECT_EQ(d.finish(), GS_ERR_INTERNAL);
}

TEST(JsonWriter, FinishReportsAnIncompleteValueAndOutOfMemory)
{
    gs_error err;
    {
        Writer t;
        gs_error_clear(&err);
        EXPECT_EQ(gs_jw_finish(&t.w, &err), GS_ERR_INTERNAL);
        EXPECT_STREQ(err.message, "JSON writer: no value written");
    }
    {
        Writer t;
        gs_jw_begin_object(&t.w, GS_JW_COMPACT);
        gs_jw_key(&t.w, "a");
        gs_jw_begin_array(&t.w, GS_JW_COMPACT);
        gs_error_clear(&err);
        EXPECT_EQ(gs_jw_finish(&t.w, &err), GS_ERR_INTERNAL);
        EXPECT_STREQ(err.message, "JSON writer: 2 container(s) left open");
    }
    {
        Writer t;
        gs_jw_str(&t.w, "x");
        t.sb.oom = 1; // as a failed allocation leaves it
        gs_error_clear(&err);
        EXPECT_EQ(gs_jw_finish(&t.w, &err), GS_ERR_NOMEM);
    }
}

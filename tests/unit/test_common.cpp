// Tests for gs/common.h and gs/strbuf.h.
#include <gtest/gtest.h>
#include <cstring>

#include "gs/common.h"
#include "gs/strbuf.h"

TEST(Status, StringsComeFromOneTable)
{
    EXPECT_STREQ(gs_status_str(GS_OK), "ok");
    EXPECT_STREQ(gs_status_name(GS_ERR_DOES_NOT_FIT), "GS_ERR_DOES_NOT_FIT");
    EXPECT_STREQ(gs_status_str(GS_ERR_DOES_NOT_FIT), "does not fit");
    EXPECT_STREQ(gs_status_str((gs_status)999), "?");
    for (int i = 0; i < GS_STATUS_COUNT; i++)
        EXPECT_STRNE(gs_status_str((gs_status)i), "?");
}

TEST(Error, FormatsFileLineColumn)
{
    gs_error e;
    gs_error_clear(&e);
    EXPECT_EQ(gs_error_set(&e, GS_ERR_PARSE, "a.yaml", 3, 7, "bad %s", "key"), GS_ERR_PARSE);
    char buf[256];
    gs_error_format(&e, buf, sizeof buf);
    EXPECT_STREQ(buf, "a.yaml:3:7: bad key");
    gs_error_set(&e, GS_ERR_IO, "b", 0, 0, "gone");
    gs_error_format(&e, buf, sizeof buf);
    EXPECT_STREQ(buf, "b: gone");
    EXPECT_EQ(gs_error_set(nullptr, GS_ERR_IO, nullptr, 0, 0, "x"), GS_ERR_IO);
}

TEST(Diags, CollectsAndSortsStably)
{
    gs_diags d;
    gs_diags_init(&d);
    gs_diags_add(&d, GS_ERR_INVALID, "f", 5, 1, "five");
    gs_diags_add(&d, GS_ERR_INVALID, "f", 2, 9, "two-a");
    gs_diags_add(&d, GS_ERR_INVALID, "f", 2, 9, "two-b");
    gs_diags_sort(&d);
    ASSERT_EQ(d.count, 3u);
    EXPECT_STREQ(d.items[0].message, "two-a");
    EXPECT_STREQ(d.items[1].message, "two-b");
    EXPECT_STREQ(d.items[2].message, "five");
    gs_diags_free(&d);
}

static size_t g_allocs;
static void *count_malloc(size_t n, void *)
{
    g_allocs++;
    return malloc(n ? n : 1);
}
static void *count_realloc(void *p, size_t n, void *)
{
    g_allocs++;
    return realloc(p, n ? n : 1);
}
static void count_free(void *p, void *)
{
    free(p);
}

TEST(Alloc, HookIsUsedAndOverflowIsCaught)
{
    gs_allocator a = {count_malloc, count_realloc, count_free, nullptr};
    gs_set_allocator(&a);
    g_allocs = 0;
    char *s = gs_strdup("hello");
    EXPECT_EQ(g_allocs, 1u);
    gs_free(s);
    EXPECT_EQ(gs_calloc(SIZE_MAX / 2, 4), nullptr);
    gs_set_allocator(nullptr);
    size_t out = 0;
    EXPECT_FALSE(gs_size_mul(SIZE_MAX, 2, &out));
    EXPECT_TRUE(gs_size_add(1, 2, &out));
    EXPECT_EQ(out, 3u);
}

TEST(EditDistance, SuggestsNearKeys)
{
    EXPECT_EQ(gs_edit_distance("clock", "clock", 5), 0u);
    EXPECT_EQ(gs_edit_distance("clokc", "clock", 5), 2u);
    EXPECT_EQ(gs_edit_distance("bandwith", "bandwidth", 5), 1u);
    EXPECT_EQ(gs_edit_distance("abc", "xyz_long_name", 3), 3u);
}

TEST(StrBuf, EscapesForEveryFormat)
{
    gs_sb sb;
    gs_sb_init(&sb);
    gs_sb_json_str(&sb, "a\"b\\c\n<script>\x01");
    EXPECT_STREQ(gs_sb_cstr(&sb), "\"a\\\"b\\\\c\\n\\u003cscript>\\u0001\"");
    gs_sb_reset(&sb);
    gs_sb_html(&sb, "<script>alert('x')&\"</script>");
    EXPECT_STREQ(gs_sb_cstr(&sb), "&lt;script&gt;alert(&#39;x&#39;)&amp;&quot;&lt;/script&gt;");
    gs_sb_reset(&sb);
    gs_sb_csv(&sb, "a,b\"c");
    EXPECT_STREQ(gs_sb_cstr(&sb), "\"a,b\"\"c\"");
    gs_sb_reset(&sb);
    gs_sb_json_str(&sb, "\xff\xfe ok \xc3\xa9");
    EXPECT_STREQ(gs_sb_cstr(&sb), "\"\\ufffd\\ufffd ok \xc3\xa9\"");
    gs_sb_reset(&sb);
    gs_sb_json_num(&sb, 0.1);
    gs_sb_putc(&sb, ' ');
    gs_sb_json_num(&sb, 1.0 / 0.0);
    gs_sb_putc(&sb, ' ');
    gs_sb_json_num(&sb, 42);
    EXPECT_STREQ(gs_sb_cstr(&sb), "0.10000000000000001 null 42");
    gs_sb_free(&sb);
}

// Terminal text: C0, DEL, C1 and the bidirectional controls escaped byte by byte; other UTF-8
// (an accent, a non-control U+2000 block character) and backslashes as they are.
TEST(StrBuf, TerminalTextEscapesControlsAndBidiOverrides)
{
    gs_sb sb;
    gs_sb_init(&sb);
    gs_sb_term(&sb, "a\x1b[31mb\x7f\xc2\x9b c\\d \xc3\xa9");
    EXPECT_STREQ(gs_sb_cstr(&sb), "a\\x1b[31mb\\x7f\\xc2\\x9b c\\d \xc3\xa9");
    gs_sb_reset(&sb);
    // RLO, LRI/PDI, LRM, ALM, and an en dash (U+2013) that stays
    gs_sb_term(&sb, "x\xe2\x80\xaey\xe2\x81\xa6z\xe2\x81\xa9\xe2\x80\x8e\xd8\x9c\xe2\x80\x93");
    EXPECT_STREQ(gs_sb_cstr(&sb), "x\\xe2\\x80\\xaey\\xe2\\x81\\xa6z\\xe2\\x81\\xa9"
                                  "\\xe2\\x80\\x8e\\xd8\\x9c\xe2\x80\x93");
    gs_sb_reset(&sb);
    gs_sb_term(&sb, "\xe2\x80"); // a truncated sequence at the end: as it is, nothing read past
    EXPECT_STREQ(gs_sb_cstr(&sb), "\xe2\x80");
    gs_sb_free(&sb);
}

TEST(StrBuf, GrowsPastSmallBuffer)
{
    gs_sb sb;
    gs_sb_init(&sb);
    std::string big(5000, 'x');
    gs_sb_printf(&sb, "%s%d", big.c_str(), 7);
    EXPECT_EQ(sb.len, 5001u);
    char *t = gs_sb_take(&sb);
    EXPECT_EQ(strlen(t), 5001u);
    gs_free(t);
    EXPECT_EQ(sb.len, 0u);
}

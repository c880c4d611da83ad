// Tests for gs/units.h: parsing quantities with units and formatting them back.
#include <gtest/gtest.h>
#include <cmath>
#include <cstdlib>
#include <string>

#include "gs/strbuf.h"
#include "gs/units.h"

namespace
{

double parse_ok(const char *text, gs_unit u)
{
    double v = -1;
    char msg[256];
    EXPECT_EQ(gs_units_parse(text, u, &v, msg, sizeof msg), GS_OK) << text << ": " << msg;
    return v;
}

std::string parse_err(const char *text, gs_unit u, gs_status want = GS_ERR_PARSE)
{
    double v = -1;
    char msg[256] = "";
    EXPECT_EQ(gs_units_parse(text, u, &v, msg, sizeof msg), want) << text;
    return msg;
}

std::string fmt(double v, gs_unit u)
{
    char buf[64];
    gs_units_format(v, u, buf, sizeof buf);
    return buf;
}

} // namespace

TEST(Units, Sizes)
{
    EXPECT_EQ(parse_ok("24MiB", GS_UNIT_BYTES), 24.0 * 1024 * 1024);
    EXPECT_EQ(parse_ok("2 MiB", GS_UNIT_BYTES), 2.0 * 1024 * 1024);
    EXPECT_EQ(parse_ok("512B", GS_UNIT_BYTES), 512.0);
    EXPECT_EQ(parse_ok("1.5KiB", GS_UNIT_BYTES), 1536.0);
    EXPECT_EQ(parse_ok("96GiB", GS_UNIT_BYTES), 96.0 * 1024 * 1024 * 1024);
    EXPECT_EQ(parse_ok("1TiB", GS_UNIT_BYTES), 1099511627776.0);
    EXPECT_EQ(parse_ok("1KB", GS_UNIT_BYTES), 1e3);
    EXPECT_EQ(parse_ok("3MB", GS_UNIT_BYTES), 3e6);
    EXPECT_EQ(parse_ok("8GB", GS_UNIT_BYTES), 8e9);
    EXPECT_EQ(parse_ok("2TB", GS_UNIT_BYTES), 2e12);
    EXPECT_EQ(parse_ok("  4KiB  ", GS_UNIT_BYTES), 4096.0);
}

TEST(Units, BandwidthIsBytesPerNanosecond)
{
    EXPECT_EQ(parse_ok("17GB/s", GS_UNIT_BANDWIDTH), 17.0);
    EXPECT_EQ(parse_ok("23B/ns", GS_UNIT_BANDWIDTH), 23.0);
    EXPECT_NEAR(parse_ok("820GiB/s", GS_UNIT_BANDWIDTH), 880.468295, 1e-6);
    EXPECT_EQ(parse_ok("2.9TB/s", GS_UNIT_BANDWIDTH), 2900.0);
    EXPECT_NEAR(parse_ok("500MB/s", GS_UNIT_BANDWIDTH), 0.5, 1e-12);
    EXPECT_NEAR(parse_ok("1024MiB/s", GS_UNIT_BANDWIDTH), 1.073741824, 1e-12);
}

TEST(Units, FrequencyIsHertz)
{
    EXPECT_EQ(parse_ok("2.8GHz", GS_UNIT_FREQ), 2.8e9);
    EXPECT_EQ(parse_ok("1120MHz", GS_UNIT_FREQ), 1.12e9);
    EXPECT_EQ(parse_ok("100kHz", GS_UNIT_FREQ), 1e5);
    EXPECT_EQ(parse_ok("50Hz", GS_UNIT_FREQ), 50.0);
}

TEST(Units, TimeIsNanoseconds)
{
    EXPECT_EQ(parse_ok("600ns", GS_UNIT_TIME), 600.0);
    EXPECT_EQ(parse_ok("1.3us", GS_UNIT_TIME), 1300.0);
    EXPECT_EQ(parse_ok("2ms", GS_UNIT_TIME), 2e6);
    EXPECT_EQ(parse_ok("1s", GS_UNIT_TIME), 1e9);
}

TEST(Units, PlainKinds)
{
    EXPECT_EQ(parse_ok("128", GS_UNIT_COUNT), 128.0);
    EXPECT_EQ(parse_ok("0.25", GS_UNIT_REAL), 0.25);
    EXPECT_EQ(parse_ok("64", GS_UNIT_CYCLES), 64.0);
    EXPECT_EQ(parse_ok("1e3", GS_UNIT_CYCLES), 1000.0);
    EXPECT_EQ(parse_ok("-2", GS_UNIT_COUNT), -2.0); // the sign is the caller's rule
    EXPECT_EQ(parse_ok(".5", GS_UNIT_REAL), 0.5);
}

TEST(Units, WrongUnitNamesTheExpectedOnes)
{
    std::string m = parse_err("24GHz", GS_UNIT_BYTES);
    EXPECT_NE(m.find("'GHz' is a frequency unit; expected a size (B, KiB"), std::string::npos) << m;
    m = parse_err("17GB", GS_UNIT_BANDWIDTH);
    EXPECT_NE(m.find("'GB' is a size unit; expected a bandwidth (GB/s"), std::string::npos) << m;
    m = parse_err("5ns", GS_UNIT_FREQ);
    EXPECT_NE(m.find("time unit"), std::string::npos) << m;
    m = parse_err("128B", GS_UNIT_COUNT);
    EXPECT_NE(m.find("'B' is a size unit; a count takes a plain number"), std::string::npos) << m;
    m = parse_err("3 apples", GS_UNIT_REAL);
    EXPECT_NE(m.find("unexpected 'apples'"), std::string::npos) << m;
    m = parse_err("24Mib", GS_UNIT_BYTES); // case-sensitive
    EXPECT_NE(m.find("unknown unit 'Mib'"), std::string::npos) << m;
}

TEST(Units, MissingUnitAndMalformedNumbers)
{
    EXPECT_NE(parse_err("1024", GS_UNIT_BYTES).find("missing unit"), std::string::npos);
    EXPECT_NE(parse_err("", GS_UNIT_COUNT).find("missing value"), std::string::npos);
    EXPECT_NE(parse_err("GHz", GS_UNIT_FREQ).find("is not a number"), std::string::npos);
    parse_err("inf", GS_UNIT_REAL);
    parse_err("nan", GS_UNIT_REAL);
    parse_err("0x10", GS_UNIT_COUNT);
    parse_err("1,5", GS_UNIT_REAL);
    parse_err("--1", GS_UNIT_REAL);
}

TEST(Units, OverflowIsAnError)
{
    EXPECT_NE(parse_err("1e400", GS_UNIT_REAL, GS_ERR_INVALID).find("out of range"),
              std::string::npos);
    // finite number, infinite after scaling
    parse_err("1e300TiB", GS_UNIT_BYTES, GS_ERR_INVALID);
    EXPECT_EQ(parse_ok("1e-400", GS_UNIT_REAL), 0.0); // underflow: the range check decides
}

TEST(Units, FormatPicksTheShortestExactSpelling)
{
    EXPECT_EQ(fmt(24.0 * 1024 * 1024, GS_UNIT_BYTES), "24MiB");
    EXPECT_EQ(fmt(1000, GS_UNIT_BYTES), "1KB");
    EXPECT_EQ(fmt(512, GS_UNIT_BYTES), "512B");
    EXPECT_EQ(fmt(2.8e9, GS_UNIT_FREQ), "2.8GHz");
    EXPECT_EQ(fmt(1.12e9, GS_UNIT_FREQ), "1.12GHz");
    EXPECT_EQ(fmt(1300, GS_UNIT_TIME), "1.3us");
    EXPECT_EQ(fmt(17, GS_UNIT_BANDWIDTH), "17GB/s");
    EXPECT_EQ(fmt(2900, GS_UNIT_BANDWIDTH), "2.9TB/s");
    EXPECT_EQ(fmt(820 * 1.073741824, GS_UNIT_BANDWIDTH), "820GiB/s");
    EXPECT_EQ(fmt(128, GS_UNIT_COUNT), "128");
    EXPECT_EQ(fmt(0.25, GS_UNIT_REAL), "0.25");
}

TEST(Units, FormatRoundTrips)
{
    const double vals[] = {1, 3, 1000, 1023, 1536, 123456789, 0.1, 1.0 / 3, 7e-3, 2.5e12};
    const gs_unit kinds[] = {GS_UNIT_BYTES, GS_UNIT_BANDWIDTH, GS_UNIT_FREQ, GS_UNIT_TIME,
                             GS_UNIT_REAL};
    for (gs_unit u : kinds)
        for (double v : vals) {
            std::string s = fmt(v, u);
            double back = -1;
            ASSERT_EQ(gs_units_parse(s.c_str(), u, &back, nullptr, 0), GS_OK) << s;
            EXPECT_EQ(back, v) << s;
        }
}

TEST(Units, KindNamesAndLists)
{
    EXPECT_STREQ(gs_unit_kind_name(GS_UNIT_BYTES), "size");
    EXPECT_STREQ(gs_unit_base_name(GS_UNIT_BANDWIDTH), "B/ns");
    EXPECT_STREQ(gs_unit_base_name(GS_UNIT_COUNT), "");
    EXPECT_NE(std::string(gs_unit_list(GS_UNIT_TIME)).find("us"), std::string::npos);
    EXPECT_STREQ(gs_unit_list(GS_UNIT_CYCLES), "");
}

// A valid decimal of any length is a number (it used to be "not a number" past 64 chars).
TEST(Units, LongDecimalsAreNumbers)
{
    std::string digits = "1." + std::string(300, '0') + "1";
    EXPECT_DOUBLE_EQ(parse_ok(digits.c_str(), GS_UNIT_REAL), 1.0);
    std::string big = "2" + std::string(80, '0') + "e-80GHz";
    EXPECT_DOUBLE_EQ(parse_ok(big.c_str(), GS_UNIT_FREQ), 2e9);
    std::string huge = "9" + std::string(400, '9');
    EXPECT_NE(parse_err(huge.c_str(), GS_UNIT_REAL, GS_ERR_INVALID).find("out of range"),
              std::string::npos);
}

// Numbers written to JSON: the integer fast path must not cast out-of-range doubles (UB).
TEST(Units, JsonNumbersOutsideLongLongRange)
{
    for (double v : {1e300, -1e300, 9.3e18, -9.3e18, 1e15, 123.0, -0.5}) {
        gs_sb sb;
        gs_sb_init(&sb);
        gs_sb_json_num(&sb, v);
        EXPECT_EQ(strtod(gs_sb_cstr(&sb), nullptr), v) << gs_sb_cstr(&sb);
        gs_sb_free(&sb);
    }
}

// The one parsing layer for command-line numbers, sizes and durations (common/parse_values.h):
// what it accepts, what it refuses, and that its messages stay short and name the range.
#include <gtest/gtest.h>

#include <cfloat>

#include "common/parse_values.h"

namespace dmindex {
namespace {

TEST(ParseValues, CountsAreDecimalDigitsWithinTheirLimits) {
  EXPECT_EQ(*ParseCount("0"), 0u);
  EXPECT_EQ(*ParseCount("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(*ParseCount("5", 1, 10), 5u);
  for (const char* bad : {"", " 5", "5 ", "+5", "5x", "0x10", "1e6", "1.5", "18446744073709551616"})
    EXPECT_TRUE(ParseCount(bad).status().IsInvalidArgument()) << bad;
  EXPECT_TRUE(ParseCount("0", 1, 10).status().IsInvalidArgument());
  EXPECT_TRUE(ParseCount("11", 1, 10).status().IsInvalidArgument());
  const Status negative = ParseCount("-5", 0, 100).status();
  EXPECT_NE(negative.message().find("negative"), std::string::npos) << negative.message();
  EXPECT_NE(negative.message().find("[0, 100]"), std::string::npos) << negative.message();
}

TEST(ParseValues, RealsAreFiniteAndWithinOpenOrClosedBounds) {
  EXPECT_DOUBLE_EQ(*ParseReal("0.5", {0, 1}), 0.5);
  EXPECT_DOUBLE_EQ(*ParseReal("1e-3", {0, 1}), 1e-3);
  EXPECT_DOUBLE_EQ(*ParseReal("1", {0, 1}), 1.0);
  EXPECT_FALSE(ParseReal("1", {0, 1, false, true}).ok());   // [0, 1)
  EXPECT_FALSE(ParseReal("0", {0, 1, true, false}).ok());   // (0, 1]
  for (const char* bad : {"nan", "NaN", "inf", "-inf", "1e400", "", "0.5x", " 0.5", "0,5"})
    EXPECT_TRUE(ParseReal(bad, {-1e9, 1e9}).status().IsInvalidArgument()) << bad;
  EXPECT_FALSE(ParseReal("-0.1", {0, 1}).ok());
}

TEST(ParseValues, MessagesNameTheRangeBriefly) {
  const Status s = ParseReal("-1", {0, DBL_MAX, true}).status();
  EXPECT_EQ(s.message(), "'-1': expected a number > 0");
  EXPECT_EQ(ParseReal("2", {0, 1, false, true}).status().message(), "'2': expected a number [0, 1)");
  const Status huge = ParseReal("5", {0, 1e300}).status();
  EXPECT_LT(huge.message().size(), 60u) << huge.message();  // 1e+300, not 301 digits
  EXPECT_EQ(FormatNumber(604800), "604800");
  EXPECT_EQ(FormatNumber(0.25), "0.25");
  EXPECT_EQ(FormatNumber(DBL_MAX), "1.79769e+308");
}

TEST(ParseValues, ByteSizesTakeBinarySuffixesAndLimits) {
  EXPECT_EQ(*ParseByteSize("4096"), 4096u);
  EXPECT_EQ(*ParseByteSize("64K"), 64u << 10);
  EXPECT_EQ(*ParseByteSize("32mb"), 32u << 20);
  EXPECT_EQ(*ParseByteSize("4GiB"), 4ull << 30);
  EXPECT_EQ(*ParseByteSize("1T"), 1ull << 40);
  for (const char* bad : {"", "-1G", "1.5G", "G", "4Q", "99999999999T", "4 G"})
    EXPECT_TRUE(ParseByteSize(bad).status().IsInvalidArgument()) << bad;
  EXPECT_FALSE(ParseByteSize("1K", 4096).ok());
  EXPECT_FALSE(ParseByteSize("2G", 0, 1ull << 30).ok());
}

TEST(ParseValues, DurationsTakeUnitsAndDefaultToTheBareUnit) {
  const RealRange any{0, 1e9};
  EXPECT_DOUBLE_EQ(*ParseDuration("2", 1.0, any), 2.0);
  EXPECT_DOUBLE_EQ(*ParseDuration("2", 1e-3, any), 2e-3);  // a bare number in ms
  EXPECT_DOUBLE_EQ(*ParseDuration("250ms", 1.0, any), 0.25);
  EXPECT_DOUBLE_EQ(*ParseDuration("1.5s", 1e-3, any), 1.5);
  EXPECT_DOUBLE_EQ(*ParseDuration("10us", 1.0, any), 1e-5);
  EXPECT_DOUBLE_EQ(*ParseDuration("2m", 1.0, any), 120.0);
  EXPECT_DOUBLE_EQ(*ParseDuration("1h", 1.0, any), 3600.0);
  EXPECT_DOUBLE_EQ(*ParseDuration("1e2", 1.0, any), 100.0);
  for (const char* bad : {"", "nan", "inf", "2 s", "2x", "ms", "-1", "1e10"})
    EXPECT_TRUE(ParseDuration(bad, 1.0, any).status().IsInvalidArgument()) << bad;
  // The range is shown in the unit the user types.
  const Status ms = ParseDuration("99999", 1e-3, {0, 60}).status();
  EXPECT_NE(ms.message().find("[0, 60000] ms"), std::string::npos) << ms.message();
}

}  // namespace
}  // namespace dmindex

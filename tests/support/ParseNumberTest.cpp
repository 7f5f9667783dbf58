#include "support/ParseNumber.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace spyre;

TEST(ParseNumber, DecimalHexAndSigns) {
  EXPECT_EQ(parseInt64("0"), 0);
  EXPECT_EQ(parseInt64("-17"), -17);
  EXPECT_EQ(parseInt64("+17"), 17);
  EXPECT_EQ(parseInt64("0x1F"), 31);
  EXPECT_EQ(parseInt64("-0x10"), -16);
  EXPECT_EQ(parseInt64("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(parseInt64("-9223372036854775808"), INT64_MIN);
}

TEST(ParseNumber, TellsMalformedFromOutOfRange) {
  int64_t v = 0;
  EXPECT_EQ(parseInt64("", v), IntParse::Malformed);
  EXPECT_EQ(parseInt64("-", v), IntParse::Malformed);
  EXPECT_EQ(parseInt64("0x", v), IntParse::Malformed);
  EXPECT_EQ(parseInt64("12a", v), IntParse::Malformed);
  EXPECT_EQ(parseInt64("1.5", v), IntParse::Malformed);
  EXPECT_EQ(parseInt64(" 1", v), IntParse::Malformed);
  EXPECT_EQ(parseInt64("9223372036854775808", v), IntParse::OutOfRange);
  EXPECT_EQ(parseInt64("-9223372036854775809", v), IntParse::OutOfRange);
  EXPECT_EQ(parseInt64("0x10000000000000000", v), IntParse::OutOfRange);
}

TEST(ParseNumber, DecimalFloatsInYamlSyntax) {
  EXPECT_EQ(parseDouble("1"), 1.0);
  EXPECT_EQ(parseDouble("-2.5"), -2.5);
  EXPECT_EQ(parseDouble("+2.5"), 2.5);
  EXPECT_EQ(parseDouble("1e9"), 1e9);
  EXPECT_EQ(parseDouble("1.5E-3"), 0.0015);
  EXPECT_EQ(parseDouble(".5"), 0.5);
  EXPECT_EQ(parseDouble("5."), 5.0);
  // The nearest double, as the compiler reads the literal.
  EXPECT_EQ(parseDouble("0.1"), 0.1);
  ASSERT_TRUE(parseDouble("-0"));
  EXPECT_TRUE(std::signbit(*parseDouble("-0")));
}

TEST(ParseNumber, DoubleTellsMalformedFromOutOfRangeAndNotFinite) {
  double v = 0;
  for (const char *s : {"", "-", ".", "e5", "1e", "1-2", "++1", "0x10", "1,5",
                        " 1", "1 ", "inf", "nan", "infinity", "1f"})
    EXPECT_EQ(parseDouble(s, v), DoubleParse::Malformed) << "'" << s << "'";
  for (const char *s : {".inf", "+.inf", "-.Inf", ".INF", ".nan", ".NaN"})
    EXPECT_EQ(parseDouble(s, v), DoubleParse::NotFinite) << s;
  EXPECT_EQ(parseDouble("1e999", v), DoubleParse::OutOfRange);
  EXPECT_EQ(parseDouble("-1e999", v), DoubleParse::OutOfRange);
  EXPECT_EQ(parseDouble("1e999"), std::nullopt);
  EXPECT_EQ(parseDouble(".inf"), std::nullopt);
}

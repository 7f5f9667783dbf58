#include "support/ParseNumber.h"

#include <gtest/gtest.h>

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

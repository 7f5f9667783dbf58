// `spyre dlf16` run as a user would: exact output lines, flags, and a named
// usage error with exit code 2 for each kind of bad argument.
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using spyre::test::runSpyre;

namespace {

void expectOutput(const std::vector<std::string> &args,
                  const std::string &expected) {
  auto r = runSpyre(args);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, expected);
  EXPECT_EQ(r.err, "");
}

void expectUsageError(const std::vector<std::string> &args,
                      const std::string &expectedErr) {
  auto r = runSpyre(args);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, expectedErr + "\n");
}

} // namespace

TEST(Dlf16Cli, EncodesValuesOnePerLine) {
  // 1.001 is 0.512 DL16 ulps above 1, so it rounds up to 1 + 2^-9; the exact
  // tie 1 + 2^-10 rounds away from zero in either sign.
  expectOutput({"dlf16", "1", "1.001", "1.0009765625", "-1.0009765625", "0.5",
                "-15", "65504"},
               "1 -> 0x3e00 = 1\n"
               "1.001 -> 0x3e01 = 1.001953125\n"
               "1.0009765625 -> 0x3e01 = 1.001953125\n"
               "-1.0009765625 -> 0xbe01 = -1.001953125\n"
               "0.5 -> 0x3c00 = 0.5\n"
               "-15 -> 0xc5c0 = -15\n"
               "65504 -> 0x5e00 = 65536\n");
}

TEST(Dlf16Cli, SpecialValuesAndFlags) {
  expectOutput({"dlf16", "nan", "-nan", "inf", "-inf", "1e10", "-0", "1e-12",
                "8573157376", "4.6657078e-10"},
               "nan -> 0x7fff = nan (invalid)\n"
               "-nan -> 0xffff = -nan (invalid)\n"
               "inf -> 0x7fff = nan (overflow)\n"
               "-inf -> 0xffff = -nan (overflow)\n"
               "1e10 -> 0x7fff = nan (overflow)\n"
               "-0 -> 0x8000 = -0\n"
               "1e-12 -> 0x0000 = 0 (underflow)\n"
               "8573157376 -> 0x7ffe = 8573157376\n"
               "4.6657078e-10 -> 0x0001 = 4.665707820095122e-10\n");
}

TEST(Dlf16Cli, SaturateClampsFiniteOverflowOnly) {
  expectOutput({"dlf16", "--saturate", "1e10", "-1e10", "inf", "2"},
               "1e10 -> 0x7ffe = 8573157376 (overflow)\n"
               "-1e10 -> 0xfffe = -8573157376 (overflow)\n"
               "inf -> 0x7fff = nan (overflow)\n"
               "2 -> 0x4000 = 2\n");
}

TEST(Dlf16Cli, OptionsMayFollowValues) {
  expectOutput({"dlf16", "-inf", "1e10", "--saturate"},
               "-inf -> 0xffff = -nan (overflow)\n"
               "1e10 -> 0x7ffe = 8573157376 (overflow)\n");
}

TEST(Dlf16Cli, DecodesCodes) {
  expectOutput({"dlf16", "--decode", "0x3e00", "0x7FFE", "0x1", "0x8000",
                "0xfffe", "0x7fff", "0xFFFF", "0x3e01"},
               "0x3e00 = 1\n"
               "0x7ffe = 8573157376\n"
               "0x0001 = 4.665707820095122e-10\n"
               "0x8000 = -0\n"
               "0xfffe = -8573157376\n"
               "0x7fff = nan (special: NaN or Inf)\n"
               "0xffff = -nan (special: NaN or Inf)\n"
               "0x3e01 = 1.001953125\n");
}

TEST(Dlf16Cli, ValueThatIsNotANumberIsAUsageError) {
  expectUsageError({"dlf16", "1", "abc"},
                   "spyre dlf16: error: 'abc' is not a number (expected e.g. "
                   "1.5, -2e-3, 0x1p-4, nan, inf)");
  expectUsageError({"dlf16", "1.5x"},
                   "spyre dlf16: error: '1.5x' is not a number (expected e.g. "
                   "1.5, -2e-3, 0x1p-4, nan, inf)");
}

TEST(Dlf16Cli, HexIntegerWithoutDecodeIsAUsageError) {
  expectUsageError({"dlf16", "0x3e00"},
                   "spyre dlf16: error: '0x3e00' looks like a DL16 code: use "
                   "--decode to decode it, or give a hex float a p exponent "
                   "(e.g. 0x1.8p3)");
}

TEST(Dlf16Cli, BadCodeIsAUsageError) {
  const char *suffix =
      "' is not a DL16 code (expected 0x followed by 1 to 4 hex digits)";
  for (const char *bad : {"0x12345", "3e00", "0x", "0xg1", "-0x1"})
    expectUsageError({"dlf16", "--decode", "0x1", bad},
                     std::string("spyre dlf16: error: '") + bad + suffix);
}

TEST(Dlf16Cli, MissingValuesAndUnknownOptionsAreUsageErrors) {
  expectUsageError({"dlf16"}, "spyre dlf16: error: no values given; usage: "
                              "spyre dlf16 [--saturate] VALUE... | spyre "
                              "dlf16 --decode CODE...");
  expectUsageError({"dlf16", "--bogus", "1"},
                   "spyre dlf16: error: unknown option '--bogus'");
  auto r = runSpyre({"dlf16", "--decode", "--saturate", "0x1"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--saturate excludes --decode"), std::string::npos)
      << r.err;
}

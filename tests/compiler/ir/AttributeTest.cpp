// Attributes: kinds, sorted dictionaries, exact float text and the generic
// attribute syntax the printer writes and the parser reads.
#include "compiler/ir/Attribute.h"
#include "compiler/ir/Parser.h"
#include "compiler/ref/Random.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

namespace spyre::compiler {
namespace {

Attribute parse(const std::string &text) {
  DiagnosticEngine diags;
  std::optional<Attribute> a = parseAttribute(text, "attr", diags);
  EXPECT_TRUE(a.has_value()) << diags.str();
  return a ? *a : Attribute(0);
}

std::string parseError(const std::string &text) {
  DiagnosticEngine diags;
  EXPECT_FALSE(parseAttribute(text, "attr", diags).has_value()) << text;
  return diags.hasErrors() ? diags.diagnostics().front().str() : "";
}

TEST(AttrDict, KeepsEntriesSortedByName) {
  AttrDict d;
  d.set("zeta", 1);
  d.set("alpha", 2);
  d.set("mid", 3);
  std::vector<std::string> names;
  for (const NamedAttribute &e : d)
    names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"alpha", "mid", "zeta"}));
  EXPECT_EQ(d.str(), "{alpha = 2, mid = 3, zeta = 1}");
}

TEST(AttrDict, SetReplacesAndEraseRemoves) {
  AttrDict d{{"a", 1}, {"b", true}};
  d.set("a", "text");
  EXPECT_EQ(d.get("a").asString(), "text");
  EXPECT_EQ(d.size(), 2u);
  EXPECT_TRUE(d.erase("a"));
  EXPECT_FALSE(d.erase("a"));
  EXPECT_EQ(d.find("a"), nullptr);
  EXPECT_EQ(d.str(), "{b = true}");
}

TEST(AttrDict, EqualityIgnoresInsertionOrder) {
  AttrDict a, b;
  a.set("x", 1);
  a.set("y", 2);
  b.set("y", 2);
  b.set("x", 1);
  EXPECT_EQ(a, b);
  b.set("y", 3);
  EXPECT_FALSE(a == b);
}

TEST(Attribute, KindsAndConstructors) {
  EXPECT_TRUE(Attribute(3).isInt());
  EXPECT_TRUE(Attribute(int64_t(3)).isInt());
  EXPECT_TRUE(Attribute(2.5).isFloat());
  EXPECT_TRUE(Attribute(true).isBool());
  // A string literal must not decay to bool.
  EXPECT_TRUE(Attribute("tanh").isString());
  EXPECT_EQ(Attribute::ints({1, 2}).kindName(), "int list");
  EXPECT_EQ(Attribute::floats({1.0}).kindName(), "float list");
  EXPECT_EQ(Attribute::list({Attribute(1), Attribute("a")}).kindName(), "list");
}

TEST(Attribute, EmptyListIsBothAnIntAndAFloatList) {
  Attribute empty = Attribute::list({});
  EXPECT_TRUE(empty.isIntList());
  EXPECT_TRUE(empty.isFloatList());
  EXPECT_EQ(empty, Attribute::ints({}));
  EXPECT_EQ(empty, Attribute::floats({}));
}

TEST(Attribute, FloatsCompareByBits) {
  EXPECT_FALSE(Attribute(0.0) == Attribute(-0.0));
  double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(Attribute(nan), Attribute(-nan));
  EXPECT_FALSE(Attribute(1) == Attribute(1.0));
}

TEST(Attribute, FormatsFloatsShortestAndAlwaysAsFloats) {
  EXPECT_EQ(formatDouble(1.0), "1.0");
  EXPECT_EQ(formatDouble(-2.0), "-2.0");
  EXPECT_EQ(formatDouble(0.1), "0.1");
  EXPECT_EQ(formatDouble(1e-5), "1e-05");
  EXPECT_EQ(formatDouble(1e300), "1e+300");
  EXPECT_EQ(formatDouble(-0.0), "-0.0");
  EXPECT_EQ(formatDouble(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(formatDouble(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(formatDouble(std::nan("")), "nan");
  EXPECT_EQ(formatFloat(0.1f), "0.1");
  EXPECT_EQ(formatFloat(16777216.0f), "16777216.0");
}

TEST(Attribute, PrintsNestedValues) {
  AttrDict inner{{"c", true}};
  AttrDict outer{{"b", Attribute::list({Attribute(1), Attribute(2.5), Attribute("x")})},
                 {"a", inner}};
  EXPECT_EQ(Attribute(outer).str(), "{a = {c = true}, b = [1, 2.5, \"x\"]}");
  AttrDict quotedKey{{"weird key", 1}, {"ok.key_1", 2}};
  EXPECT_EQ(quotedKey.str(), "{ok.key_1 = 2, \"weird key\" = 1}");
}

TEST(Attribute, QuotesStrings) {
  EXPECT_EQ(quoteString("a\"b\\c\nd\te\x01\x7f"),
            "\"a\\\"b\\\\c\\nd\\te\\x01\\x7f\"");
  EXPECT_EQ(quoteString("\xc3\xbc"), "\"\xc3\xbc\"");
}

TEST(AttributeText, ParsesWhatItPrints) {
  EXPECT_EQ(parse("3"), Attribute(3));
  EXPECT_EQ(parse("-7"), Attribute(-7));
  EXPECT_EQ(parse("1.5"), Attribute(1.5));
  EXPECT_EQ(parse("1e-05"), Attribute(1e-5));
  EXPECT_EQ(parse("-inf"), Attribute(-std::numeric_limits<double>::infinity()));
  EXPECT_EQ(parse("nan"), Attribute(std::nan("")));
  EXPECT_EQ(parse("false"), Attribute(false));
  EXPECT_EQ(parse("\"a\\x41\\n\""), Attribute("aA\n"));
  EXPECT_EQ(parse("[]"), Attribute::list({}));
  EXPECT_EQ(parse("[1, 2, 3]"), Attribute::ints({1, 2, 3}));
  EXPECT_EQ(parse("{b = [1.0], a = {}}"),
            Attribute(AttrDict{{"a", AttrDict{}}, {"b", Attribute::floats({1.0})}}));
}

TEST(AttributeText, RoundTripsDoublesExactly) {
  ref::Pcg32 rng(11, 3);
  for (int i = 0; i < 2000; ++i) {
    const uint64_t high = rng.next(); // two statements: a fixed draw order
    uint64_t bits = (high << 32) | rng.next();
    double d = std::bit_cast<double>(bits);
    if (std::isnan(d))
      continue;
    Attribute a(d);
    EXPECT_EQ(parse(a.str()), a) << a.str();
  }
}

TEST(AttributeText, ReportsErrorsWithLocation) {
  EXPECT_EQ(parseError("[1, 2"), "attr:1:6: error: expected ',', found end of input\n"
                                 "[1, 2\n     ^");
  EXPECT_EQ(parseError("{a = 1, a = 2}"),
            "attr:1:9: error: attribute 'a' is given twice\n{a = 1, a = 2}\n        ^");
  EXPECT_EQ(parseError("99999999999999999999"),
            "attr:1:1: error: integer 99999999999999999999 is out of range\n"
            "99999999999999999999\n^");
  EXPECT_EQ(parseError("\"abc"), "attr:1:1: error: unterminated string\n\"abc\n^");
  EXPECT_EQ(parseError("\"\\q\""),
            "attr:1:2: error: unknown escape '\\q' (use \\\", \\\\, \\n, \\t or "
            "\\xHH)\n\"\\q\"\n ^");
  EXPECT_EQ(parseError("1 2"),
            "attr:1:3: error: unexpected '2' after the attribute\n1 2\n  ^");
}

TEST(AttributeText, RejectsDeepNestingWithoutExhaustingTheStack) {
  std::string deep(100000, '[');
  EXPECT_EQ(parseError(deep).substr(0, 59),
            "attr:1:65: error: attributes nest deeper than 64 levels\n[[[");
  std::string ok = std::string(64, '[') + std::string(64, ']');
  EXPECT_EQ(parse(ok).kindName(), "list");
}

} // namespace
} // namespace spyre::compiler

// The textual IR: golden output, print/parse round trips on hand-made and
// random graphs, and one file per parse error in tests/compiler/ir/bad/.
#include "compiler/ir/Parser.h"
#include "compiler/ir/Printer.h"
#include "compiler/ir/Verifier.h"
#include "support/Hash.h"
#include "testlib/Golden.h"
#include "testlib/RandomGraph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

namespace spyre::compiler {
namespace {

TensorType f32(Shape s) { return {ElementType::F32, std::move(s)}; }

/// A graph that uses every printing feature: quoted names, inline and
/// referenced constants of each element type, a multi-result op, and
/// annotations on the graph, values and ops.
std::unique_ptr<Graph> showcase() {
  auto g = std::make_unique<Graph>("showcase");
  g->annotations().set("pipeline", "O0");
  Value *x = g->addInput("x", f32({7, 100}));
  x->annotations().set("layout", AttrDict{{"device_shape", Attribute::ints({2, 7, 64})},
                                          {"stick_dim", 2}});
  std::vector<double> w(100 * 3);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<double>(i % 7) - 3.0;
  Value *weight = g->addConstant("fc/weight", ConstantData::fromDoubles(f32({3, 100}), w));
  Value *bias = g->addConstant("fc.bias", ConstantData::fromDoubles(f32({3}), {0.1, -0.5, 2.0}));
  g->addConstant("half", ConstantData::fromDoubles({ElementType::F16, {2}}, {0.1, 65504.0}));
  g->addConstant("bytes", ConstantData::fromDoubles({ElementType::I8, {3}}, {-128, 0, 127}));
  g->addConstant("ints", ConstantData::fromDoubles({ElementType::I32, {}}, {-7}));
  Op *fc = buildOp(*g, OpKind::Linear, "fc", {x, weight, bias}, {}, {"h"});
  fc->annotations().set("core_split", AttrDict{{"dim", 0}, {"cores", 32}});
  Op *sp = buildOp(*g, OpKind::Split, "split qkv", {fc->result()},
                   {{"axis", -1}, {"sizes", Attribute::ints({1, 2})}}, {"a", "b c"});
  sp->result(1)->annotations().set("note", "tab\there");
  Op *act = buildOp(*g, OpKind::Gelu, "act", {sp->result(1)},
                    {{"approximate", "tanh"}}, {"y"});
  g->setOutputs({act->result(), sp->result(0)});
  return g;
}

std::unique_ptr<Graph> parseOk(const std::string &text, const ConstantPool *pool) {
  DiagnosticEngine diags;
  std::unique_ptr<Graph> g = parseGraph(text, "test.ir", diags, pool);
  EXPECT_NE(g, nullptr) << diags.str() << "\n" << text;
  return g;
}

TEST(Printer, ShowcaseMatchesGolden) {
  spyre::test::expectGolden(printGraph(*showcase()), "compiler/ir/showcase.ir");
}

TEST(Printer, PrintsOneOpPerLine) {
  auto g = showcase();
  EXPECT_EQ(printOp(*g->findOp("split qkv")),
            "%a, %\"b c\" = split @\"split qkv\"(%h) {axis = -1, sizes = [1, 2]} : "
            "f32[7, 1], f32[7, 2] #{note = \"tab\\there\"}");
}

TEST(Printer, InlinesSmallConstantsAndDigestsLargeOnes) {
  std::vector<double> v(17, 1.5);
  ConstantDataPtr big = ConstantData::fromDoubles(f32({17}), v);
  v.resize(16);
  ConstantDataPtr small = ConstantData::fromDoubles(f32({16}), v);
  EXPECT_EQ(printConstantData(*big), "data<0x" + toHex(big->digest(), 16) + ">");
  EXPECT_EQ(printConstantData(*small).rfind("dense<[1.5, 1.5, ", 0), 0u);
  PrintOptions none;
  none.inlineConstantLimit = 0;
  EXPECT_EQ(printConstantData(*small, none).rfind("data<0x", 0), 0u);

  // A NaN with a payload has no text that reads back to its bits.
  uint32_t payloadNaN = 0x7fa00001;
  std::string bytes(4, '\0');
  std::memcpy(bytes.data(), &payloadNaN, 4);
  ConstantDataPtr nan = ConstantData::create(f32({1}), bytes);
  EXPECT_EQ(printConstantData(*nan).rfind("data<0x", 0), 0u);
  float inf = std::numeric_limits<float>::infinity();
  std::memcpy(bytes.data(), &inf, 4);
  EXPECT_EQ(printConstantData(*ConstantData::create(f32({1}), bytes)), "dense<[inf]>");
}

TEST(Printer, IsDeterministic) {
  auto a = showcase(), b = showcase();
  // Attributes set in another order print the same.
  a->findOp("fc")->annotations() = AttrDict{};
  a->findOp("fc")->annotations().set("cores", 32);
  a->findOp("fc")->annotations().set("alpha", 1);
  b->findOp("fc")->annotations() = AttrDict{};
  b->findOp("fc")->annotations().set("alpha", 1);
  b->findOp("fc")->annotations().set("cores", 32);
  EXPECT_EQ(printGraph(*a), printGraph(*b));
}

TEST(Parser, RoundTripsTheShowcase) {
  auto g = showcase();
  ConstantPool pool;
  pool.addGraph(*g);
  std::string text = printGraph(*g);
  auto parsed = parseOk(text, &pool);
  ASSERT_NE(parsed, nullptr);
  EXPECT_EQ(graphDifference(*g, *parsed), "");
  EXPECT_EQ(printGraph(*parsed), text);
  // Ops remember where they were written.
  EXPECT_EQ(parsed->findOp("fc")->loc().str(), "test.ir:8:3");
}

TEST(Parser, RoundTripsRandomGraphs) {
  for (uint64_t seed = 0; seed < 300; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    auto g = test::randomGraph(seed);
    ConstantPool pool;
    pool.addGraph(*g);
    std::string text = printGraph(*g);
    auto parsed = parseOk(text, &pool);
    ASSERT_NE(parsed, nullptr);
    EXPECT_EQ(graphDifference(*g, *parsed), "");
    EXPECT_EQ(printGraph(*parsed), text);
  }
}

TEST(Parser, AcceptsCommentsDefaultsAndIntsForFloats) {
  auto g = parseOk("// a comment line\n"
                   "graph @g { // trailing comment\n"
                   "  input %x : f32[3, 4]\n"
                   "  %y = layernorm @ln(%x) {epsilon = 0} : f32[3, 4]\n"
                   "  %z = pow @p(%y) {exponent = 2} : f32[3, 4]\n"
                   "  return %z\n"
                   "}\n",
                   nullptr);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->findOp("ln")->attrs().str(), "{axis = -1, epsilon = 0.0}");
  EXPECT_EQ(g->findOp("p")->attrs().str(), "{exponent = 2.0}");
}

TEST(Parser, ChecksReferencedDataAgainstTheDeclaredType) {
  ConstantDataPtr data = ConstantData::fromDoubles(f32({20}), std::vector<double>(20, 1.0));
  ConstantPool pool;
  pool.add(data);
  std::string hex = "0x" + toHex(data->digest(), 16);
  auto g = parseOk("graph @g {\n  const %w : f32[20] = data<" + hex + ">\n  return %w\n}\n",
                   &pool);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(&g->findValue("w")->constantData(), data.get());

  DiagnosticEngine diags;
  EXPECT_EQ(parseGraph("graph @g {\n  const %w : f32[4, 5] = data<" + hex + ">\n  return %w\n}\n",
                       "t.ir", diags, &pool),
            nullptr);
  EXPECT_EQ(diags.diagnostics().front().str(),
            "t.ir:2:31: error: data " + hex + " is f32[20], not f32[4, 5]\n"
            "  const %w : f32[4, 5] = data<" + hex + ">\n"
            "                              ^");
}

TEST(Parser, ReadsExactFloatData) {
  // Values whose shortest text must be read as float32, not via double.
  std::vector<float> values{0.1f, 1e-45f, 3.4028235e38f, -0.0f, 16777217.0f,
                            std::nextafter(1.0f, 2.0f)};
  std::string bytes(values.size() * 4, '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  auto g = std::make_unique<Graph>("g");
  g->addConstant("c", ConstantData::create(f32({6}), bytes));
  g->setOutputs({g->findValue("c")});
  auto parsed = parseOk(printGraph(*g), nullptr);
  ASSERT_NE(parsed, nullptr);
  EXPECT_EQ(parsed->findValue("c")->constantData().bytes(), bytes);
}

// ---- One file per parse error ----

std::vector<std::string> badFiles() {
  std::vector<std::string> names;
  for (const auto &e : std::filesystem::directory_iterator(
           spyre::test::srcPath("tests/compiler/ir/bad")))
    if (e.path().extension() == ".ir")
      names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

class BadIr : public ::testing::TestWithParam<std::string> {};

// Each file starts with `// expect: <the error line>`; the error must be
// exactly that line, followed by the offending source line and a caret
// under the reported column.
TEST_P(BadIr, ReportsItsError) {
  std::string name = GetParam() + ".ir";
  std::string text = spyre::test::readSource("tests/compiler/ir/bad/" + name);
  const std::string marker = "// expect: ";
  ASSERT_EQ(text.rfind(marker, 0), 0u) << name << " lacks its expect line";
  std::string expected = text.substr(marker.size(), text.find('\n') - marker.size());

  DiagnosticEngine diags;
  EXPECT_EQ(parseGraph(text, name, diags), nullptr);
  ASSERT_EQ(diags.errorCount(), 1u) << diags.str();
  const Diagnostic &d = diags.diagnostics().front();
  std::string shown = d.str();
  EXPECT_EQ(shown.substr(0, shown.find('\n')), expected);
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    lines.push_back(text.substr(start, nl - start));
  ASSERT_GE(d.loc.line, 1);
  ASSERT_LE(static_cast<size_t>(d.loc.line), lines.size());
  EXPECT_EQ(shown, expected + "\n" + lines[static_cast<size_t>(d.loc.line) - 1] +
                       "\n" + std::string(static_cast<size_t>(d.loc.col) - 1, ' ') + "^");
}

INSTANTIATE_TEST_SUITE_P(Files, BadIr, ::testing::ValuesIn(badFiles()),
                         [](const ::testing::TestParamInfo<std::string> &i) {
                           return i.param;
                         });

TEST(Parser, NeverCrashesOnMangledText) {
  // Every prefix and every single-byte corruption of a valid text either
  // parses or reports one located error.
  std::string text = printGraph(*showcase());
  ConstantPool pool;
  pool.addGraph(*showcase());
  for (size_t cut = 0; cut < text.size(); cut += 3) {
    DiagnosticEngine diags;
    std::unique_ptr<Graph> g = parseGraph(text.substr(0, cut), "t.ir", diags, &pool);
    EXPECT_EQ(g == nullptr, diags.hasErrors());
  }
  const char replacements[] = {'%', '"', '{', ']', '0', '\n', 'x', '\\', '#', '-'};
  for (size_t i = 0; i < text.size(); i += 2) {
    std::string mangled = text;
    mangled[i] = replacements[i % sizeof replacements];
    DiagnosticEngine diags;
    std::unique_ptr<Graph> g = parseGraph(mangled, "t.ir", diags, &pool);
    EXPECT_EQ(g == nullptr, diags.hasErrors());
    if (g) {
      DiagnosticEngine verify;
      EXPECT_TRUE(verifyGraph(*g, verify)) << verify.str();
    }
  }
}

} // namespace
} // namespace spyre::compiler

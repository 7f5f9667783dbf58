// Elementwise ops with a per-row operand ([.., R, 1], what reductions with
// keepdims give) broadcast along the last dim: softmax, layer norm and RMS
// norm written as primitive ops (as ONNX exports them before opset 17),
// compiled at -O0 and -O2, simulated with numerics and the schedule checks,
// and compared with the host reference (CompileCheck.h; tolerance depth *
// 2^-8 * (|reference| + mean |reference|) + 2^-31). The column is
// broadcast in LX by the column kernel: the broadcast ops make no scratch
// tensor and no transpose, and every tensor the program declares is written
// exactly once, so the bytes written are the results' bytes (the outputs',
// the intermediates' and the reductions').
#include "compiler/driver/Compile.h"
#include "compiler/driver/CompileCheck.h"

#include <gtest/gtest.h>

#include <set>

namespace spyre::compiler {
namespace {

using test::checkCompiledWith;
using test::CheckedRun;
using test::Range;

std::string shapeText(const std::vector<int64_t> &s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i)
    t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

/// `s` with its last dim 1.
std::vector<int64_t> column(std::vector<int64_t> s) {
  s.back() = 1;
  return s;
}

/// Mnemonics of the instructions that op `name` emitted.
std::set<std::string> mnemonicsOf(const isa::Program &p,
                                  const std::string &name) {
  std::set<std::string> m;
  for (const isa::Stream &s : p.streams)
    for (size_t i = 0; i < s.code.size(); ++i)
      if (s.provenance[i] < p.strings.size() &&
          p.strings[s.provenance[i]] == name)
        m.insert(std::string(s.code[i].desc().mnemonic));
  return m;
}

/// Scratch tensors op `name` made (`name.tmp<i>`).
std::vector<std::string> scratchOf(const isa::Program &p,
                                   const std::string &name) {
  std::vector<std::string> names;
  for (const isa::TensorDecl &t : p.tensors)
    if (t.name.rfind(name + ".tmp", 0) == 0)
      names.push_back(t.name);
  return names;
}

/// Bytes of every tensor the program computes (not inputs or constants).
uint64_t computedBytes(const isa::Program &p) {
  uint64_t sticks = 0;
  for (const isa::TensorDecl &t : p.tensors)
    if (t.kind != isa::TensorKind::Input && t.kind != isa::TensorKind::Const)
      sticks += t.sizeSticks;
  return sticks * isa::kStickBytes;
}

/// Compiles and checks `text` at -O0 and -O2; the ops in `broadcastOps`
/// take a column operand: no scratch, no transpose, and device memory
/// is written once per computed stick.
void checkColumnGraph(const std::string &text, int depth,
                      const std::vector<std::string> &broadcastOps,
                      Range range = {}) {
  std::unique_ptr<Graph> g = test::parseGraphText(text);
  ASSERT_TRUE(g);
  for (int level : {0, 2}) {
    SCOPED_TRACE("-O" + std::to_string(level));
    CompileOptions co;
    co.optLevel = level;
    const CheckedRun run = checkCompiledWith(*g, co, depth, range);
    ASSERT_TRUE(run.compiled);
    const isa::Program &p = run.compiled->program;
    for (const std::string &op : broadcastOps) {
      SCOPED_TRACE(op);
      EXPECT_EQ(scratchOf(p, op), std::vector<std::string>{});
      const std::set<std::string> m = mnemonicsOf(p, op);
      EXPECT_TRUE(m.count("bcast")) << "the column is not broadcast in LX";
      EXPECT_FALSE(m.count("xpose"));
    }
    EXPECT_EQ(run.writeBytes, computedBytes(p));
  }
}

/// softmax(x) over the last dim as ONNX writes it without the Softmax op:
/// ReduceMax, Sub, Exp, ReduceSum, Div.
std::string softmaxGraph(const std::vector<int64_t> &s) {
  const std::string t = shapeText(s), c = shapeText(column(s));
  return "graph @t {\n  input %x : f32" + t +
         "\n  %m = reduce_max @m(%x) {axes = [-1], keepdims = true} : f32" + c +
         "\n  %d = sub @d(%x, %m) : f32" + t + "\n  %e = exp @e(%d) : f32" + t +
         "\n  %s = reduce_sum @s(%e) {axes = [-1], keepdims = true} : f32" + c +
         "\n  %y = div @y(%e, %s) : f32" + t + "\n  return %y\n}";
}

/// Layer norm without weights (centred) or RMS norm as primitives:
/// [ReduceMean, Sub,] Mul (or Pow), ReduceMean, Add eps, Sqrt, Div.
std::string normGraph(const std::vector<int64_t> &s, bool centred, bool pow) {
  const std::string t = shapeText(s), c = shapeText(column(s));
  std::string g = "graph @t {\n  input %x : f32" + t +
                  "\n  const %eps : f32[] = dense<[1e-05]>\n";
  std::string v = "%x";
  if (centred) {
    g += "  %mu = reduce_mean @mu(%x) {axes = [-1], keepdims = true} : f32" +
         c + "\n  %c = sub @c(%x, %mu) : f32" + t + "\n";
    v = "%c";
  }
  g += pow ? "  %sq = pow @sq(" + v + ") {exponent = 2.0} : f32" + t + "\n"
           : "  %sq = mul @sq(" + v + ", " + v + ") : f32" + t + "\n";
  g += "  %var = reduce_mean @var(%sq) {axes = [-1], keepdims = true} : f32" +
       c + "\n  %ve = add @ve(%var, %eps) : f32" + c +
       "\n  %sd = sqrt @sd(%ve) : f32" + c + "\n  %y = div @y(" + v +
       ", %sd) : f32" + t + "\n  return %y\n}";
  return g;
}

TEST(ColumnBroadcast, SoftmaxAsPrimitives) {
  for (const std::vector<int64_t> &s : std::vector<std::vector<int64_t>>{
           {7, 100}, {77, 129}, {1, 3072}, {2, 7, 100}, {1000, 7}}) {
    SCOPED_TRACE(shapeText(s));
    checkColumnGraph(softmaxGraph(s), 4, {"d", "y"});
  }
}

TEST(ColumnBroadcast, LayerNormAndRmsNormAsPrimitives) {
  checkColumnGraph(normGraph({7, 129}, true, false), 6, {"c", "y"});
  checkColumnGraph(normGraph({77, 100}, true, true), 6, {"c", "y"});
  checkColumnGraph(normGraph({3, 5, 64}, false, false), 6, {"y"});
}

TEST(ColumnBroadcast, ColumnAsFirstOperand) {
  // sub and div with the column first, and add and mul (commutative) the
  // same way round; inputs in [0.5, 3] so every divisor is away from zero.
  checkColumnGraph(R"(graph @t {
  input %x : f32[77, 129]
  %m = reduce_max @m(%x) {axes = [-1], keepdims = true} : f32[77, 1]
  %s = reduce_sum @s(%x) {axes = [-1], keepdims = true} : f32[77, 1]
  %a = sub @a(%m, %x) : f32[77, 129]
  %b = div @b(%s, %x) : f32[77, 129]
  %c = add @c(%m, %x) : f32[77, 129]
  %d = mul @d(%s, %x) : f32[77, 129]
  return %a, %b, %c, %d
})",
                   3, {"a", "b", "c", "d"}, {0.5f, 3.0f});
}

TEST(ColumnBroadcast, ColumnWithFewerLeadingDimsAndOneRow) {
  // A [7, 1] column of a [1, 7, 129] result; a one-element first operand
  // of sub and div over one row (a column of one row, which the scalar
  // path takes only as the second operand).
  checkColumnGraph(R"(graph @t {
  input %x : f32[1, 7, 129]
  input %c : f32[7, 1]
  %y = sub @y(%x, %c) : f32[1, 7, 129]
  return %y
})",
                   2, {"y"});
  checkColumnGraph(R"(graph @t {
  input %x : f32[1, 100]
  input %c : f32[1]
  %a = sub @a(%c, %x) : f32[1, 100]
  %b = div @b(%c, %x) : f32[1, 100]
  return %a, %b
})",
                   2, {"a", "b"}, {0.5f, 3.0f});
}

} // namespace
} // namespace spyre::compiler

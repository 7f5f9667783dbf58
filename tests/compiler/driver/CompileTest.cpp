// The compiler end to end: every op kind over odd shapes, and whole models,
// compiled at -O0 and -O2, simulated with numerics and the schedule checks,
// and compared with the host reference in double precision fed the same
// DL16-rounded inputs. The tolerance is documented in docs/compiler.md: each
// value the device stores in DL16 is rounded to 9 fraction bits (relative
// error at most 2^-10), so an element may differ from the reference by
// depth * 2^-8 * (|reference| + the mean |reference| of the output) + 2^-31
// (values below DL16's smallest normal flush to zero), depth being the
// number of DL16 roundings on the longest path to it.
#include "compiler/driver/Compile.h"
#include "compiler/driver/CompileCheck.h"
#include "compiler/import/GraphJson.h"
#include "compiler/ir/Parser.h"
#include "compiler/ref/Evaluator.h"
#include "compiler/codegen/KernelHarness.h"
#include "support/FileIO.h"
#include "testlib/Golden.h"
#include "testlib/RandomGraph.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

namespace spyre::compiler {
namespace {

using test::checkCompiled;
using test::Range;

std::unique_ptr<Graph> parse(const std::string &text) {
  DiagnosticEngine diags;
  std::unique_ptr<Graph> g = parseGraph(text, "test.ir", diags);
  EXPECT_TRUE(g) << diags.str();
  return g;
}

void checkBothLevels(const std::string &text, int depth, Range range = {}) {
  std::unique_ptr<Graph> g = parse(text);
  ASSERT_TRUE(g);
  checkCompiled(*g, 0, depth, range);
  checkCompiled(*g, 2, depth, range);
}

/// A constant of exactly representable DL16 values (multiples of 1/32).
std::string dense(int64_t n, int seed) {
  std::ostringstream s;
  s << "dense<[";
  for (int64_t i = 0; i < n; ++i)
    s << (i ? ", " : "") << ((i * 7 + seed * 13) % 33 - 16) / 32.0;
  s << "]>";
  return s.str();
}

// ------------------------------------------------------------- matmuls

TEST(CompileOps, MatmulOddShapes) {
  checkBothLevels(R"(graph @t {
  input %a : f32[7, 100]
  input %b : f32[100, 129]
  %y = matmul @mm(%a, %b) {transpose_a = false, transpose_b = false} : f32[7, 129]
  return %y
})",
                  4);
}

TEST(CompileOps, LinearWithConstantWeightAndBias) {
  checkBothLevels("graph @t {\n  input %x : f32[77, 100]\n"
                  "  const %w : f32[70, 100] = " +
                      dense(7000, 1) + "\n  const %b : f32[70] = " +
                      dense(70, 2) +
                      "\n  %y = linear @fc(%x, %w, %b) : f32[77, 70]\n"
                      "  return %y\n}",
                  4);
}

TEST(CompileOps, BiasComputedAfterTheMatmulIsNotFolded) {
  // As ONNX Gemm with beta imports: the scaled bias comes after the matmul
  // in op order, so folding the add into the matmul would read it early.
  checkBothLevels(R"(graph @t {
  input %a : f32[2, 7]
  input %b : f32[7, 4]
  input %c : f32[4]
  const %beta : f32[] = dense<[0.5]>
  %mm = matmul @mm(%a, %b) {transpose_a = false, transpose_b = false} : f32[2, 4]
  %cb = mul @beta(%c, %beta) : f32[4]
  %y = add @bias(%mm, %cb) : f32[2, 4]
  return %y
})",
                  4);
}

TEST(CompileOps, BatchedMatmulPerBatchAndBroadcastB) {
  checkBothLevels(R"(graph @t {
  input %a : f32[3, 7, 64]
  input %b : f32[3, 64, 129]
  %y = matmul @mm(%a, %b) {transpose_a = false, transpose_b = false} : f32[3, 7, 129]
  return %y
})",
                  4);
  checkBothLevels(R"(graph @t {
  input %a : f32[2, 5, 100]
  input %b : f32[100, 70]
  %y = matmul @mm(%a, %b) {transpose_a = false, transpose_b = false} : f32[2, 5, 70]
  return %y
})",
                  4);
}

TEST(CompileOps, MatmulWithTransposedActivation) {
  checkBothLevels(R"(graph @t {
  input %q : f32[2, 7, 64]
  input %k : f32[2, 9, 64]
  %s = matmul @mm(%q, %k) {transpose_a = false, transpose_b = true} : f32[2, 7, 9]
  return %s
})",
                  4);
}

// -------------------------------------------------------- elementwise

TEST(CompileOps, BinaryWithBroadcasts) {
  for (const char *op : {"add", "sub", "mul", "div"}) {
    SCOPED_TRACE(op);
    checkBothLevels(std::string("graph @t {\n  input %a : f32[7, 129]\n"
                                "  input %b : f32[7, 129]\n  %y = ") +
                        op + " @o(%a, %b) : f32[7, 129]\n  return %y\n}",
                    3, {0.5f, 3.0f});
    checkBothLevels(std::string("graph @t {\n  input %a : f32[3, 5, 100]\n"
                                "  input %b : f32[100]\n  %y = ") +
                        op + " @o(%a, %b) : f32[3, 5, 100]\n  return %y\n}",
                    3, {0.5f, 3.0f});
  }
  // Broadcasts the kernels do not take directly: a column, a middle dim,
  // both operands, a broadcast first operand of a non-commutative op.
  struct Bcast {
    std::string a, b, y;
  };
  for (const Bcast &c : std::vector<Bcast>{{"[7, 100]", "[7, 1]", "[7, 100]"},
                                           {"[3, 5, 70]", "[3, 1, 70]", "[3, 5, 70]"},
                                           {"[3, 1, 70]", "[1, 5, 1]", "[3, 5, 70]"},
                                           {"[100]", "[7, 100]", "[7, 100]"}})
    for (const char *op : {"sub", "div"}) {
      SCOPED_TRACE(std::string(op) + " " + c.a + " " + c.b);
      checkBothLevels(std::string("graph @t {\n  input %a : f32") + c.a +
                          "\n  input %b : f32" + c.b + "\n  %y = " + op +
                          " @o(%a, %b) : f32" + c.y + "\n  return %y\n}",
                      3, {0.5f, 3.0f});
    }
  checkBothLevels(R"(graph @t {
  input %a : f32[1, 77]
  const %c : f32[] = dense<[0.375]>
  %y = mul @o(%a, %c) : f32[1, 77]
  return %y
})",
                  3);
}

TEST(CompileOps, UnaryOps) {
  struct Case {
    std::string op, attrs;
    Range range;
  };
  const std::vector<Case> cases = {
      {"relu", "", {}},
      {"gelu", " {approximate = \"none\"}", {}},
      {"gelu", " {approximate = \"tanh\"}", {}},
      {"silu", "", {}},
      {"sigmoid", "", {}},
      {"tanh", "", {}},
      {"exp", "", {-2, 2}},
      {"sqrt", "", {0.25f, 4}},
      {"rsqrt", "", {0.25f, 4}},
      {"reciprocal", "", {0.5f, 4}},
      {"neg", "", {}},
      {"abs", "", {}},
      {"pow", " {exponent = 3.0}", {-2, 2}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.op + c.attrs);
    checkBothLevels("graph @t {\n  input %x : f32[7, 100]\n  %y = " + c.op +
                        " @u(%x)" + c.attrs +
                        " : f32[7, 100]\n  return %y\n}",
                    4, c.range);
  }
}

// ----------------------------------------------- rows, norms, reductions

TEST(CompileOps, SoftmaxOnLastAndFirstAxis) {
  checkBothLevels(R"(graph @t {
  input %x : f32[7, 100]
  %y = softmax @s(%x) {axis = -1} : f32[7, 100]
  return %y
})",
                  4);
  checkBothLevels(R"(graph @t {
  input %x : f32[5, 77]
  %y = softmax @s(%x) {axis = 0} : f32[5, 77]
  return %y
})",
                  4);
}

TEST(CompileOps, NormsOverSeveralTrailingDims) {
  checkBothLevels("graph @t {\n  input %x : f32[5, 3, 7]\n"
                  "  const %w : f32[3, 7] = " +
                      dense(21, 3) + "\n  const %b : f32[3, 7] = " +
                      dense(21, 4) +
                      "\n  %y = layernorm @ln(%x, %w, %b) {axis = 1, "
                      "epsilon = 1e-05} : f32[5, 3, 7]\n  return %y\n}",
                  6);
  checkBothLevels("graph @t {\n  input %x : f32[4, 33]\n"
                  "  %y = rmsnorm @rn(%x) {axis = 0, "
                  "epsilon = 1e-05} : f32[4, 33]\n  return %y\n}",
                  6);
}

TEST(CompileOps, TanhGeluWrittenOut) {
  checkBothLevels(R"(graph @t {
  input %x : f32[7, 100]
  const %half : f32[] = dense<[0.5]>
  const %one : f32[] = dense<[1.0]>
  const %beta : f32[] = dense<[0.7978845]>
  const %kappa : f32[] = dense<[0.044715]>
  %sq = mul @sq(%x, %x) : f32[7, 100]
  %cb = mul @cb(%x, %sq) : f32[7, 100]
  %k = mul @k(%kappa, %cb) : f32[7, 100]
  %s = add @s(%x, %k) : f32[7, 100]
  %i = mul @i(%beta, %s) : f32[7, 100]
  %t = tanh @t(%i) : f32[7, 100]
  %p = add @p(%one, %t) : f32[7, 100]
  %m = mul @m(%x, %p) : f32[7, 100]
  %y = mul @g(%half, %m) : f32[7, 100]
  return %y
})",
                  3);
}

TEST(CompileOps, SiluWrittenAsMulOfSigmoid) {
  checkBothLevels(R"(graph @t {
  input %x : f32[7, 100]
  %s = sigmoid @s(%x) : f32[7, 100]
  %y = mul @m(%x, %s) : f32[7, 100]
  return %y
})",
                  3);
}

TEST(CompileOps, LayerNormAndRmsNorm) {
  checkBothLevels("graph @t {\n  input %x : f32[7, 129]\n"
                  "  const %w : f32[129] = " +
                      dense(129, 3) + "\n  const %b : f32[129] = " +
                      dense(129, 4) +
                      "\n  %y = layernorm @ln(%x, %w, %b) {axis = -1, "
                      "epsilon = 1e-05} : f32[7, 129]\n  return %y\n}",
                  6);
  checkBothLevels("graph @t {\n  input %x : f32[3, 100]\n"
                  "  const %w : f32[100] = " +
                      dense(100, 5) +
                      "\n  %y = rmsnorm @rn(%x, %w) {axis = -1, "
                      "epsilon = 1e-05} : f32[3, 100]\n  return %y\n}",
                  6);
}

TEST(CompileOps, ReductionsOnAnyAxis) {
  checkBothLevels(R"(graph @t {
  input %x : f32[7, 100]
  %y = reduce_sum @r(%x) {axes = [-1], keepdims = false} : f32[7]
  return %y
})",
                  4, {0.5f, 2});
  checkBothLevels(R"(graph @t {
  input %x : f32[5, 77]
  %y = reduce_mean @r(%x) {axes = [0], keepdims = true} : f32[1, 77]
  return %y
})",
                  4);
  checkBothLevels(R"(graph @t {
  input %x : f32[3, 6, 70]
  %y = reduce_max @r(%x) {axes = [1], keepdims = false} : f32[3, 70]
  return %y
})",
                  2);
}

// ------------------------------------------------------- data movement

TEST(CompileOps, Transposes) {
  checkBothLevels(R"(graph @t {
  input %x : f32[7, 129]
  %y = transpose @p(%x) {perm = [1, 0]} : f32[129, 7]
  return %y
})",
                  1);
  checkBothLevels(R"(graph @t {
  input %x : f32[3, 5, 70]
  %y = transpose @p(%x) {perm = [1, 0, 2]} : f32[5, 3, 70]
  return %y
})",
                  1);
  checkBothLevels(R"(graph @t {
  input %x : f32[7, 2, 64]
  %y = transpose @p(%x) {perm = [1, 0, 2]} : f32[2, 7, 64]
  return %y
})",
                  1);
  checkBothLevels(R"(graph @t {
  input %x : f32[2, 3, 70]
  %y = transpose @p(%x) {perm = [2, 0, 1]} : f32[70, 2, 3]
  return %y
})",
                  1);
}

TEST(CompileOps, ReshapesSplitsAndConcats) {
  checkBothLevels(R"(graph @t {
  input %x : f32[7, 128]
  %h = reshape @split_heads(%x) {shape = [7, 2, 64]} : f32[7, 2, 64]
  %p = transpose @perm(%h) {perm = [1, 0, 2]} : f32[2, 7, 64]
  %e = exp @e(%p) : f32[2, 7, 64]
  %b = transpose @back(%e) {perm = [1, 0, 2]} : f32[7, 2, 64]
  %y = reshape @merge(%b) {shape = [7, 128]} : f32[7, 128]
  return %y
})",
                  2);
  checkBothLevels(R"(graph @t {
  input %x : f32[6, 100]
  %a, %b = split @s(%x) {axis = 0, sizes = [2, 4]} : f32[2, 100], f32[4, 100]
  %c, %d = split @t(%x) {axis = 1, sizes = [64, 36]} : f32[6, 64], f32[6, 36]
  %e = concat @j(%c, %d) {axis = 1} : f32[6, 100]
  %f = concat @k(%b, %a) {axis = 0} : f32[6, 100]
  %y = add @sum(%e, %f) : f32[6, 100]
  return %y
})",
                  3);
}

TEST(CompileOps, ReshapesThatMoveElementsBetweenLanes) {
  // Heads narrower than a stick, as in small attention blocks, and a
  // regrouping by a common divisor (6 -> 4 via 2).
  checkBothLevels(R"(graph @t {
  input %x : f32[16, 64]
  %h = reshape @heads(%x) {shape = [16, 4, 16]} : f32[16, 4, 16]
  %p = transpose @perm(%h) {perm = [1, 0, 2]} : f32[4, 16, 16]
  %q = relu @r(%p) : f32[4, 16, 16]
  %b = transpose @back(%q) {perm = [1, 0, 2]} : f32[16, 4, 16]
  %y = reshape @merge(%b) {shape = [16, 64]} : f32[16, 64]
  return %y
})",
                  2);
  checkBothLevels(R"(graph @t {
  input %x : f32[5, 6]
  %y = reshape @r(%x) {shape = [10, 3]} : f32[10, 3]
  %z = reshape @s(%y) {shape = [3, 10]} : f32[3, 10]
  return %z
})",
                  1);
}

TEST(CompileOps, SplitAndConcatOffSticks) {
  checkBothLevels(R"(graph @t {
  input %x : f32[7, 100]
  %a, %b, %c = split @s(%x) {axis = 1, sizes = [30, 50, 20]} : f32[7, 30], f32[7, 50], f32[7, 20]
  %y = concat @j(%c, %a, %b) {axis = 1} : f32[7, 100]
  return %y
})",
                  1);
}

TEST(CompileOps, OutputsThatAreViewsOrInputsAreCopied) {
  checkBothLevels(R"(graph @t {
  input %x : f32[7, 100]
  %v = reshape @r(%x) {shape = [1, 7, 100]} : f32[1, 7, 100]
  %w = reshape @s(%x) {shape = [7, 1, 100]} : f32[7, 1, 100]
  %y = relu @u(%x) : f32[7, 100]
  %z = reshape @t(%y) {shape = [1, 700]} : f32[1, 700]
  return %v, %w, %y, %z
})",
                  2);
}

TEST(CompileOps, CausalMaskThenSoftmax) {
  checkBothLevels(R"(graph @t {
  input %x : f32[2, 7, 9]
  %m = causal_mask_add @mask(%x) : f32[2, 7, 9]
  %y = softmax @s(%m) {axis = -1} : f32[2, 7, 9]
  return %y
})",
                  4);
}

// Scores * scale, the mask and the softmax become one causal_softmax
// (canonicalize), here with more keys than queries, across two sticks.
TEST(CompileOps, ScaledCausalSoftmaxOfWideScores) {
  checkBothLevels(R"(graph @t {
  input %x : f32[3, 5, 70]
  const %c : f32[] = dense<[0.125]>
  %s = mul @scale(%x, %c) : f32[3, 5, 70]
  %m = causal_mask_add @mask(%s) : f32[3, 5, 70]
  %y = softmax @s(%m) {axis = -1} : f32[3, 5, 70]
  return %y
})",
                  4);
}

// ------------------------------------------------------------- models

TEST(CompileModels, ExampleModelsMatchTheReference) {
  for (const char *m : {"mlp_block", "norm_softmax", "gpt_block"}) {
    SCOPED_TRACE(m);
    std::unique_ptr<Graph> g = loadGraphJsonOrThrow(
        spyre::test::srcPath(std::string("examples/models/") + m + "/model.json"));
    uint64_t o0 = checkCompiled(*g, 0, 8);
    uint64_t o2 = checkCompiled(*g, 2, 8);
    EXPECT_LE(o2, o0) << "-O2 is slower than the naive plan";
  }
}

// ------------------------------------------------------ errors, mapping

TEST(CompileErrors, ModelLargerThanDeviceMemory) {
  std::unique_ptr<Graph> g = parse(R"(graph @t {
  input %x : f32[4096, 4096]
  %y = relu @r(%x) : f32[4096, 4096]
  return %y
})");
  ASSERT_TRUE(g);
  hw::HwConfig small = hw::builtinConfig();
  small.memory.sizeBytes = 16 << 20;
  DiagnosticEngine diags;
  EXPECT_FALSE(compileGraph(*g, small, {}, diags));
  EXPECT_NE(diags.str().find("the model does not fit device memory"),
            std::string::npos)
      << diags.str();
}

} // namespace
} // namespace spyre::compiler

namespace spyre::compiler {
namespace {

std::optional<CompileResult> compileWith(const Graph &g, int level,
                                         const std::string &mappingIn,
                                         DiagnosticEngine &diags) {
  CompileOptions co;
  co.optLevel = level;
  co.mappingIn = mappingIn;
  return compileGraph(g, hw::builtinConfig(), co, diags);
}

TEST(CompileMapping, ASavedMappingReplaysTheSameProgram) {
  std::unique_ptr<Graph> g =
      loadGraphJsonOrThrow(spyre::test::srcPath("examples/models/mlp_block/model.json"));
  DiagnosticEngine diags;
  std::optional<CompileResult> first = compileWith(*g, 2, "", diags);
  ASSERT_TRUE(first) << diags.str();
  const std::string dir = spyre::test::makeTempDir();
  const std::string path = dir + "/mapping.json";
  writeFileAtomic(path, first->mappingJson);
  // Replayed at -O0, the file's decisions win over the level's.
  std::optional<CompileResult> again = compileWith(*g, 0, path, diags);
  ASSERT_TRUE(again) << diags.str();
  EXPECT_EQ(isa::writeProgram(again->program),
            isa::writeProgram(first->program));
  EXPECT_EQ(again->mappingJson, first->mappingJson);
}

TEST(CompileMapping, AHandEditedSplitIsFollowed) {
  std::unique_ptr<Graph> g =
      loadGraphJsonOrThrow(spyre::test::srcPath("examples/models/mlp_block/model.json"));
  const std::string dir = spyre::test::makeTempDir();
  const std::string path = dir + "/mapping.json";
  writeFileAtomic(path, R"({"ops": {"fc1": {"cores": 1, "first_core": 3}}})");
  DiagnosticEngine diags;
  std::optional<CompileResult> r = compileWith(*g, 2, path, diags);
  ASSERT_TRUE(r) << diags.str();
  EXPECT_NE(r->mappingJson.find("\"fc1\": {\"cores\":1,\"first_core\":3,"
                                "\"grid\":[1,1]"),
            std::string::npos)
      << r->mappingJson;
}

TEST(CompileMapping, ImpossibleMappingsAreNamedErrors) {
  std::unique_ptr<Graph> g =
      loadGraphJsonOrThrow(spyre::test::srcPath("examples/models/mlp_block/model.json"));
  const std::string dir = spyre::test::makeTempDir();
  struct Case {
    std::string json, error;
  };
  const std::vector<Case> cases = {
      {R"({"ops": {"fc1": {"cores": 4, "first_core": 30}}})",
       "op 'fc1' (matmul): mapping puts the op on cores [30, 34), the chip "
       "has cores [0, 32)"},
      {R"({"ops": {"fc1": {"cores": 2, "first_core": 0, "grid": [4, 1], "tile": [8, 64, 64]}}})",
       "op 'fc1' (matmul): mapping cannot be used: grid 4x1 does not fit a "
       "7x128 product"},
      {R"({"ops": {"fc1": {"cores": 1, "first_core": 0, "grid": [1, 1], "tile": [8, 60, 64]}}})",
       "tiles 8x60x64 are not multiples of 8 x 64 x 64"},
      {R"({"ops": {"nope": {"cores": 1}}})", "the graph has no op 'nope'"},
      {R"({"ops": {"fc1": {"cores": 0}}})", "'cores' must be an integer >= 1"},
      {R"({"ops": {"fc1": {"tiles": [1]}}})", "unknown mapping field 'tiles'"},
      {R"({"ops": [}})", "not valid JSON"},
      // Values that would overflow a sum or an int are refused, not wrapped.
      {R"({"ops": {"fc1": {"cores": 9223372036854775807, "first_core": 1}}})",
       "mapping puts the op on cores [1, 9223372036854775807), the chip has "
       "cores [0, 32)"},
      {R"({"ops": {"fc1": {"lx": [9223372036854775000, 1000]}}})",
       "mapping gives the LX region [9223372036854775000, "
       "9223372036854775807) sticks, LX has 16384"},
      {R"({"ops": {"fc1": {"cores": 1, "first_core": 0, "grid": [4294967297, 1], "tile": [8, 64, 64]}}})",
       "grid 4294967297x1 has more parts than the chip has cores (32)"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.json);
    const std::string path = dir + "/m.json";
    writeFileAtomic(path, c.json);
    DiagnosticEngine diags;
    EXPECT_FALSE(compileWith(*g, 2, path, diags));
    EXPECT_NE(diags.str().find(c.error), std::string::npos) << diags.str();
  }
}

} // namespace
} // namespace spyre::compiler

namespace spyre::compiler {
namespace {

// Random graphs of every op kind with odd shapes: each compiles at -O0 and
// -O2 or is refused with a located error naming an op (never an internal
// error), and what compiles runs without findings and matches the
// reference. Inputs stay in [0.5, 2] so that div, sqrt, rsqrt, reciprocal
// and pow stay well defined; the depth bound is loose because chains are
// long. (Seeds past 60 include ill-conditioned chains, e.g. seed 177's
// reciprocal of x - mean(x), where DL16 rounding makes a difference zero
// that double precision keeps: right on the device, wrong to compare. So
// does seed 30: the sum of a layernorm's outputs, zero in exact
// arithmetic, 2^-10 after DL16 rounding.)
TEST(CompileRandom, RandomGraphsCompileRunAndMatch) {
  int compiled = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    // Seed 33 takes the reciprocal of gelu(-6.6), about -1.6e-10: below
    // DL16's smallest normal (2^-31), so the device holds 0 and its
    // reciprocal is -inf where the reference's is -6e9; the rmsnorm after it
    // is NaN on the device and finite on the host.
    if (seed == 30 || seed == 33)
      continue;
    SCOPED_TRACE("seed " + std::to_string(seed));
    test::RandomGraphOptions o;
    o.ops = 8;
    o.annotations = false;
    o.controlCharNames = false;
    o.slashNames = false;
    o.specialValues = false;
    std::unique_ptr<Graph> g = test::randomGraph(seed, o);
    DiagnosticEngine diags;
    CompileOutcome r = compile(*g, hw::builtinConfig(), {}, diags);
    if (!r.result) {
      EXPECT_EQ(r.status, CompileStatus::UserError) << diags.str();
      EXPECT_NE(diags.str().find("op '"), std::string::npos) << diags.str();
      continue;
    }
    ++compiled;
    checkCompiled(*g, 0, 16, {0.5f, 2.0f});
    checkCompiled(*g, 2, 16, {0.5f, 2.0f});
  }
  EXPECT_GT(compiled, 12);
}

} // namespace
} // namespace spyre::compiler

// Fusion of elementwise chains: chains of every step kind (SFU unary ops,
// constant scalars as immediates, operands of the chain's shape, a row of
// its last dim or one element, operand-first sub and div) compiled at -O0
// (unfused) and -O2 (one kernel per chain), simulated with numerics and the
// schedule checks and compared with the host reference (CompileCheck.h);
// -O2 keeps the intermediates in LX, so it moves fewer device-memory bytes;
// the mapping carries `chain` and `fused_into` so a replay is exact, a
// chain an edited mapping breaks is a named error, values that are graph
// outputs end a chain, and an operand computed after the chain's first op
// moves the chain to its last op.
#include "compiler/driver/Compile.h"
#include "compiler/driver/CompileCheck.h"
#include "compiler/ir/Parser.h"
#include "support/FileIO.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

namespace spyre::compiler {
namespace {

using test::checkCompiledWith;
using test::CheckedRun;

std::unique_ptr<Graph> parse(const std::string &text) {
  DiagnosticEngine diags;
  std::unique_ptr<Graph> g = parseGraph(text, "test.ir", diags);
  EXPECT_TRUE(g) << diags.str();
  return g;
}

CheckedRun checkAt(const Graph &g, int level, int depth,
                   const std::string &mappingIn = "") {
  CompileOptions co;
  co.optLevel = level;
  co.mappingIn = mappingIn;
  return checkCompiledWith(g, co, depth, {0.5f, 2.0f});
}

bool has(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

// Unary ops and constant scalars (immediates), the running value always
// the first operand: exp, * 0.5, + 1, - 0.25 (adds -0.25), sqrt, pow 3,
// neg, abs.
const char *kUnaryAndImmediates = R"(graph @t {
  input %x : f32[7, 129]
  const %half : f32[] = dense<[0.5]>
  const %one : f32[] = dense<[1.0]>
  const %quarter : f32[] = dense<[0.25]>
  %a = exp @e(%x) : f32[7, 129]
  %b = mul @scale(%a, %half) : f32[7, 129]
  %c = add @shift(%one, %b) : f32[7, 129]
  %d = sub @lower(%c, %quarter) : f32[7, 129]
  %f = sqrt @root(%d) : f32[7, 129]
  %g = pow @cube(%f) {exponent = 3.0} : f32[7, 129]
  %h = neg @flip(%g) : f32[7, 129]
  %y = abs @mag(%h) : f32[7, 129]
  return %y
})";

// Operands of the chain's shape, second and first: x * z, z + v, z / v
// (operand first), z - v (operand first), v - z, then abs.
const char *kFullOperands = R"(graph @t {
  input %x : f32[7, 129]
  input %z : f32[7, 129]
  %a = mul @prod(%x, %z) : f32[7, 129]
  %b = add @plus(%z, %a) : f32[7, 129]
  %c = div @ratio(%z, %b) : f32[7, 129]
  %d = sub @diff(%z, %c) : f32[7, 129]
  %f = sub @less(%d, %z) : f32[7, 129]
  %y = abs @mag(%f) : f32[7, 129]
  return %y
})";

// A row of the last dim (a bias) and one element (an input scalar, and a
// constant divisor, which is no immediate): x + r, v * s, s / v (operand
// first, broadcast), r - v (operand first, a row), v / r, v / 3, sigmoid.
const char *kRowsAndScalars = R"(graph @t {
  input %x : f32[3, 5, 100]
  input %r : f32[100]
  input %s : f32[]
  const %three : f32[] = dense<[3.0]>
  %a = add @bias(%r, %x) : f32[3, 5, 100]
  %b = mul @gain(%a, %s) : f32[3, 5, 100]
  %c = div @inv(%s, %b) : f32[3, 5, 100]
  %d = sub @back(%r, %c) : f32[3, 5, 100]
  %f = div @norm(%d, %r) : f32[3, 5, 100]
  %h = div @third(%f, %three) : f32[3, 5, 100]
  %y = sigmoid @act(%h) : f32[3, 5, 100]
  return %y
})";

struct ChainCase {
  const char *text;
  std::vector<std::string> chains; ///< in the -O2 mapping
  int depth;
};

const std::vector<ChainCase> &chainCases() {
  static const std::vector<ChainCase> cases = {
      {kUnaryAndImmediates,
       {"\"e\": {\"chain\":[\"scale\",\"shift\",\"lower\",\"root\","
        "\"cube\",\"flip\",\"mag\"]"},
       10},
      // x and z streamed by `prod`, z again by `plus` and `ratio`: a fifth
      // stream (`diff`) is more than the kernel takes, so `diff` starts a
      // chain of its own (on z, subtracting the first chain's result).
      {kFullOperands,
       {"\"prod\": {\"chain\":[\"plus\",\"ratio\"]",
        "\"diff\": {\"chain\":[\"less\",\"mag\"]"},
       8},
      {kRowsAndScalars,
       {"\"bias\": {\"chain\":[\"gain\",\"inv\",\"back\",\"norm\","
        "\"third\",\"act\"]"},
       9},
  };
  return cases;
}

TEST(Fusion, ChainsOfEveryStepKindMatchTheReference) {
  for (const ChainCase &c : chainCases()) {
    SCOPED_TRACE(c.text);
    std::unique_ptr<Graph> g = parse(c.text);
    ASSERT_TRUE(g);
    const CheckedRun o0 = checkAt(*g, 0, c.depth);
    const CheckedRun o2 = checkAt(*g, 2, c.depth);
    ASSERT_TRUE(o0.compiled && o2.compiled);
    EXPECT_FALSE(has(o0.compiled->mappingJson, "chain"))
        << o0.compiled->mappingJson;
    for (const std::string &chain : c.chains)
      EXPECT_TRUE(has(o2.compiled->mappingJson, chain))
          << o2.compiled->mappingJson;
  }
  // Every op after the first names it.
  std::unique_ptr<Graph> g = parse(kUnaryAndImmediates);
  DiagnosticEngine diags;
  std::optional<CompileResult> r =
      compileGraph(*g, hw::builtinConfig(), {}, diags);
  ASSERT_TRUE(r) << diags.str();
  for (const char *op : {"scale", "shift", "lower", "root", "cube", "flip",
                         "mag"})
    EXPECT_TRUE(has(r->mappingJson, "\"" + std::string(op) +
                                        "\": {\"fused_into\":\"e\"}"))
        << op;
}

TEST(Fusion, IntermediatesStayInLx) {
  // exp, * 0.5, + 1 on x [64, 512]: the -O0 plan reads each op's operand
  // and writes its result (the constants are immediates), the chain reads
  // x and writes y once. Every value is DL16 on the device, 512 columns are
  // 8 whole sticks: 64 * 512 * 2 bytes per tensor, no padding.
  std::unique_ptr<Graph> g = parse(R"(graph @t {
  input %x : f32[64, 512]
  const %half : f32[] = dense<[0.5]>
  const %one : f32[] = dense<[1.0]>
  %a = exp @e(%x) : f32[64, 512]
  %b = mul @scale(%a, %half) : f32[64, 512]
  %y = add @shift(%b, %one) : f32[64, 512]
  return %y
})");
  ASSERT_TRUE(g);
  const CheckedRun o0 = checkAt(*g, 0, 4);
  const CheckedRun o2 = checkAt(*g, 2, 4);
  const uint64_t tensor = 64 * 512 * 2;
  EXPECT_EQ(o0.readBytes, 3 * tensor);
  EXPECT_EQ(o0.writeBytes, 3 * tensor);
  EXPECT_EQ(o2.readBytes, tensor);
  EXPECT_EQ(o2.writeBytes, tensor);
  EXPECT_LT(o2.cycles, o0.cycles);
}

TEST(Fusion, ASavedChainMappingReplaysTheSameProgram) {
  std::unique_ptr<Graph> g = parse(kRowsAndScalars);
  ASSERT_TRUE(g);
  DiagnosticEngine diags;
  std::optional<CompileResult> first =
      compileGraph(*g, hw::builtinConfig(), {}, diags);
  ASSERT_TRUE(first) << diags.str();
  const std::string dir = spyre::test::makeTempDir();
  const std::string path = dir + "/mapping.json";
  writeFileAtomic(path, first->mappingJson);
  // At -O0 too: the file's chain wins over the level's choice.
  for (int level : {2, 0}) {
    SCOPED_TRACE(level);
    CompileOptions co;
    co.optLevel = level;
    co.mappingIn = path;
    std::optional<CompileResult> again =
        compileGraph(*g, hw::builtinConfig(), co, diags);
    ASSERT_TRUE(again) << diags.str();
    EXPECT_EQ(isa::writeProgram(again->program),
              isa::writeProgram(first->program));
    EXPECT_EQ(again->mappingJson, first->mappingJson);
  }
}

TEST(Fusion, OpsAMappingNamesWithoutAChainRunSeparately) {
  // An edited file that drops the chain (every op named, none fusing):
  // each op runs on its own, and the results are still right.
  std::unique_ptr<Graph> g = parse(kFullOperands);
  ASSERT_TRUE(g);
  const std::string dir = spyre::test::makeTempDir();
  const std::string path = dir + "/mapping.json";
  writeFileAtomic(path, R"({"ops": {"prod": {}, "plus": {}, "ratio": {},
    "diff": {}, "less": {"cores": 3, "first_core": 1}, "mag": {}}})");
  const CheckedRun r = checkAt(*g, 2, 8, path);
  ASSERT_TRUE(r.compiled);
  EXPECT_FALSE(has(r.compiled->mappingJson, "chain"))
      << r.compiled->mappingJson;
  EXPECT_TRUE(has(r.compiled->mappingJson,
                  "\"less\": {\"cores\":3,\"first_core\":1,"))
      << r.compiled->mappingJson;
}

TEST(Fusion, BrokenChainsInAMappingAreNamedErrors) {
  std::unique_ptr<Graph> g = parse(kFullOperands);
  ASSERT_TRUE(g);
  const std::string dir = spyre::test::makeTempDir();
  struct Case {
    std::string json, error;
  };
  const std::vector<Case> cases = {
      // Out of order: `ratio` does not use `prod`'s result.
      {R"({"ops": {"prod": {"chain": ["ratio", "plus"]},
                   "plus": {"fused_into": "prod"},
                   "ratio": {"fused_into": "prod"}}})",
       "op 'prod' (mul): cannot run the elementwise chain [ratio, plus]: "
       "'ratio' is not the only use of 'a', or that is a graph output"},
      {R"({"ops": {"prod": {"chain": ["plus", "nope"]},
                   "plus": {"fused_into": "prod"}}})",
       "op 'prod' (mul): cannot run the elementwise chain [plus, nope]: the "
       "graph has no op 'nope'"},
      // A chained op that does not name the chain's first op.
      {R"({"ops": {"prod": {"chain": ["plus"]}, "plus": {}}})",
       "op 'prod' (mul): cannot run the elementwise chain [plus]: 'plus' "
       "does not name 'prod' in 'fused_into'"},
      // `fused_into` naming an op whose chain does not hold it.
      {R"({"ops": {"prod": {"chain": ["plus"]},
                   "plus": {"fused_into": "prod"},
                   "mag": {"fused_into": "prod"}}})",
       "op 'mag' (abs): 'fused_into' names 'prod', whose mapping does not "
       "fuse this op"},
      {R"({"ops": {"prod": {"chain": ["plus", "ratio", "diff"]},
                   "plus": {"fused_into": "prod"},
                   "ratio": {"fused_into": "prod"},
                   "diff": {"fused_into": "prod"}}})",
       "op 'prod' (mul): cannot run the elementwise chain [plus, ratio, "
       "diff]: with 'diff' the kernel would stream 5 tensors, more than the "
       "4 it has registers for"},
      {R"({"ops": {"prod": {"chain": "plus"}}})",
       "'chain' must be a non-empty list of op names"},
      {R"({"ops": {"prod": {"chain": ["plus", 3]}}})",
       "expected a list of strings"},
      {R"({"ops": {"prod": {"overlap": 1}}})",
       "'overlap' must be true or false"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.json);
    const std::string path = dir + "/m.json";
    writeFileAtomic(path, c.json);
    CompileOptions co;
    co.mappingIn = path;
    DiagnosticEngine diags;
    EXPECT_FALSE(compileGraph(*g, hw::builtinConfig(), co, diags));
    EXPECT_TRUE(has(diags.str(), c.error)) << diags.str();
  }
}

TEST(Fusion, GraphOutputsEndAChainAndLateOperandsMoveIt) {
  // `a` is an output, so `e` runs alone and the chain starts at `twice`;
  // `late` is computed after `twice`, so the chain twice -> act -> mix runs
  // where `mix` was, after `late` (as llama's silu(gate) * up reads `up`).
  // The saved mapping replays to the same program.
  std::unique_ptr<Graph> g = parse(R"(graph @t {
  input %x : f32[7, 129]
  input %z : f32[7, 129]
  const %two : f32[] = dense<[2.0]>
  %a = exp @e(%x) : f32[7, 129]
  %b = mul @twice(%a, %two) : f32[7, 129]
  %c = tanh @act(%b) : f32[7, 129]
  %l = relu @late(%z) : f32[7, 129]
  %y = add @mix(%c, %l) : f32[7, 129]
  return %a, %y
})");
  ASSERT_TRUE(g);
  const CheckedRun r = checkAt(*g, 2, 6);
  ASSERT_TRUE(r.compiled);
  const std::string &m = r.compiled->mappingJson;
  EXPECT_TRUE(has(m, "\"twice\": {\"chain\":[\"act\",\"mix\"],")) << m;
  EXPECT_TRUE(has(m, "\"act\": {\"fused_into\":\"twice\"}")) << m;
  EXPECT_TRUE(has(m, "\"mix\": {\"fused_into\":\"twice\"}")) << m;
  EXPECT_TRUE(has(m, "\"late\": {\"cores\"")) << m;
  EXPECT_TRUE(has(m, "\"e\": {\"cores\"")) << m;
  // The chain reads `late`'s result, so it runs in a later phase.
  const std::string afterLate = m.substr(m.find("\"late\""));
  EXPECT_TRUE(has(afterLate, "\"twice\"")) << m;

  const std::string path = spyre::test::makeTempDir() + "/mapping.json";
  writeFileAtomic(path, r.compiled->mappingJson);
  CompileOptions co;
  co.mappingIn = path;
  DiagnosticEngine diags;
  std::optional<CompileResult> again =
      compileGraph(*g, hw::builtinConfig(), co, diags);
  ASSERT_TRUE(again) << diags.str();
  EXPECT_EQ(isa::writeProgram(again->program),
            isa::writeProgram(r.compiled->program));
}

TEST(Fusion, O0DividesWithoutOverlap) {
  std::unique_ptr<Graph> g = parse(kUnaryAndImmediates);
  ASSERT_TRUE(g);
  CompileOptions co;
  co.optLevel = 0;
  DiagnosticEngine diags;
  std::optional<CompileResult> r =
      compileGraph(*g, hw::builtinConfig(), co, diags);
  ASSERT_TRUE(r) << diags.str();
  EXPECT_TRUE(has(r->mappingJson, "\"overlap\":false")) << r->mappingJson;
  co.optLevel = 2;
  r = compileGraph(*g, hw::builtinConfig(), co, diags);
  ASSERT_TRUE(r) << diags.str();
  EXPECT_FALSE(has(r->mappingJson, "overlap")) << r->mappingJson;
}

} // namespace
} // namespace spyre::compiler

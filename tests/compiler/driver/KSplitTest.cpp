// The matmul K split through the compiler, as a user runs it: `spyre compile
// -O2` on a graph whose matmul has a small output and a long K records
// `k_split` in --mapping-out, the program it builds matches the host
// reference on the simulator with no finding, a replay with --mapping-in
// gives the same program bytes, -O0 keeps K whole, and a replayed k_split
// the op cannot take is an error naming the op and the reason, exit code 1.
// Tolerance as CompileTest.cpp: depth * 2^-8 * (|reference| + mean
// |reference|) + 2^-31.
#include "compiler/driver/Compile.h"
#include "compiler/driver/CompileCheck.h"
#include "compiler/import/GraphJson.h"
#include "support/FileIO.h"
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>


namespace spyre::compiler {
namespace {

using spyre::test::runSpyre;

/// A one-matmul graph JSON: a [M, K] x b [K, N] -> c.
std::string matmulGraph(int64_t m, int64_t k, int64_t n) {
  auto shape = [](int64_t r, int64_t c) {
    return "[" + std::to_string(r) + ", " + std::to_string(c) + "]";
  };
  return R"({"format": "spyre-graph", "version": 1, "name": "mm",
    "inputs": [{"name": "a", "dtype": "f32", "shape": )" +
         shape(m, k) + R"(},
               {"name": "b", "dtype": "f32", "shape": )" +
         shape(k, n) + R"(}],
    "outputs": ["c"],
    "ops": [{"name": "mm", "op": "matmul", "inputs": ["a", "b"], "outputs": ["c"]}]})";
}

/// The op "mm" of a mapping file written by --mapping-out.
nlohmann::json mmMapping(const std::string &path) {
  return nlohmann::json::parse(readFile(path, kTextFileLimit))["ops"]["mm"];
}

TEST(CompileKSplit, SmallOutputLongKSplitsAndReplays) {
  const std::string dir = spyre::test::makeTempDir();
  const std::string model = dir + "/model.json";
  // 64 x 128 outputs over K = 16384 (docs/kernels.md, K split).
  writeFileAtomic(model, matmulGraph(64, 16384, 128));
  const spyre::test::ToolResult first =
      runSpyre({"compile", model, "-O2", "-o", dir + "/first.spyre",
                "--mapping-out", dir + "/mapping.json"});
  ASSERT_EQ(first.exitCode, 0) << first.err;
  const nlohmann::json mm = mmMapping(dir + "/mapping.json");
  ASSERT_TRUE(mm.contains("k_split")) << mm.dump();
  const int64_t kSplit = mm["k_split"].get<int64_t>();
  EXPECT_GT(kSplit, 1) << mm.dump();
  // Every partner of every block has a core.
  EXPECT_EQ(mm["cores"].get<int64_t>(), mm["grid"][0].get<int64_t>() *
                                            mm["grid"][1].get<int64_t>() *
                                            kSplit)
      << mm.dump();

  const spyre::test::ToolResult again = runSpyre(
      {"compile", model, "-O2", "-o", dir + "/again.spyre", "--mapping-in",
       dir + "/mapping.json", "--mapping-out", dir + "/again.json"});
  ASSERT_EQ(again.exitCode, 0) << again.err;
  EXPECT_EQ(readFile(dir + "/again.spyre", kTextFileLimit), readFile(dir + "/first.spyre", kTextFileLimit));
  EXPECT_EQ(readFile(dir + "/again.json", kTextFileLimit), readFile(dir + "/mapping.json", kTextFileLimit));

  // -O0 never splits K.
  const spyre::test::ToolResult plain =
      runSpyre({"compile", model, "-O0", "-o", dir + "/plain.spyre",
                "--mapping-out", dir + "/plain.json"});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  EXPECT_EQ(mmMapping(dir + "/plain.json")["k_split"], 1);
}

/// Compiles `model` at -O2 (with `mapping` unless empty), runs it on random
/// inputs, compares with the reference (depth 3: DL16 inputs and output)
/// and returns the mapping JSON the compile wrote.
std::string checkAgainstReference(const std::string &model,
                                  const std::string &mapping) {
  std::unique_ptr<Graph> g = loadGraphJsonOrThrow(model);
  CompileOptions co;
  co.optLevel = 2;
  co.mappingIn = mapping;
  const test::CheckedRun run = test::checkCompiledWith(*g, co, 3);
  return run.compiled ? run.compiled->mappingJson : "";
}

TEST(CompileKSplit, ASplitProgramMatchesTheReference) {
  // K = 4097 over 3 partners (the last range shorter), odd M and N, from a
  // mapping that gives only the split: the planner chooses the grid and
  // tiles under it.
  const std::string dir = spyre::test::makeTempDir();
  writeFileAtomic(dir + "/model.json", matmulGraph(7, 4097, 129));
  writeFileAtomic(dir + "/mapping.json", R"({"ops": {"mm": {"k_split": 3}}})");
  const std::string json =
      checkAgainstReference(dir + "/model.json", dir + "/mapping.json");
  EXPECT_NE(json.find("\"k_split\":3"), std::string::npos) << json;
}

TEST(CompileKSplit, BatchedProductsWithTheirOwnBSplitPerBatch) {
  // Two [64, 8192] x [8192, 64] products, each on its group of 16 cores:
  // the planner splits each product's K there as it would on its own.
  const std::string dir = spyre::test::makeTempDir();
  writeFileAtomic(dir + "/model.json",
                  R"({"format": "spyre-graph", "version": 1, "name": "bmm",
    "inputs": [{"name": "a", "dtype": "f32", "shape": [2, 64, 8192]},
               {"name": "b", "dtype": "f32", "shape": [2, 8192, 64]}],
    "outputs": ["c"],
    "ops": [{"name": "mm", "op": "matmul", "inputs": ["a", "b"],
             "outputs": ["c"]}]})");
  const std::string json = checkAgainstReference(dir + "/model.json", "");
  const nlohmann::json mapping = nlohmann::json::parse(json);
  EXPECT_GT(mapping["ops"]["mm"].value("k_split", 0), 1) << json;
}

TEST(CompileKSplit, ImpossibleSplitsAreNamedErrors) {
  const std::string dir = spyre::test::makeTempDir();
  const std::string model = dir + "/model.json";
  // K = 300: 5 sticks of 64.
  writeFileAtomic(model, matmulGraph(77, 300, 200));
  struct Case {
    std::string json, error;
  };
  const std::vector<Case> cases = {
      {R"({"ops": {"mm": {"cores": 2, "first_core": 0, "grid": [1, 1], "tile": [80, 128, 256], "k_split": 0}}})",
       "op 'mm' (matmul): mapping cannot be used: k_split 0 is not a "
       "number of K partners (1 or more; 1 does not split)"},
      {R"({"ops": {"mm": {"cores": 6, "first_core": 0, "grid": [1, 1], "tile": [80, 64, 256], "k_split": 6}}})",
       "op 'mm' (matmul): mapping cannot be used: k_split 6 gives "
       "more partners than K 300 has sticks of 64 (5; a partner takes at "
       "least one)"},
      {R"({"ops": {"mm": {"cores": 4, "first_core": 0, "grid": [1, 2], "tile": [80, 64, 128], "k_split": 3}}})",
       "op 'mm' (matmul): mapping cannot be used: grid 1x2 with "
       "k_split 3 needs 6 cores, the op has 4"},
      {R"({"ops": {"mm": {"k_split": 6}}})",
       "op 'mm' (matmul): k_split 6 gives more partners than K 300 "
       "has sticks of 64 (5; a partner takes at least one)"},
      {R"({"ops": {"mm": {"k_split": 99}}})",
       "op 'mm' (matmul): mapping cannot be used: k_split 99 has more "
       "partners than the chip has cores (32)"},
      {R"({"ops": {"mm": {"k_split": -1}}})",
       "bad.json: error: at 'ops.mm': 'k_split' must be an integer >= 0"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.json);
    writeFileAtomic(dir + "/bad.json", c.json);
    const spyre::test::ToolResult r =
        runSpyre({"compile", model, "-O2", "-o", dir + "/bad.spyre",
                  "--mapping-in", dir + "/bad.json"});
    EXPECT_EQ(r.exitCode, 1) << r.err;
    // Plan errors are located at the op in the model, file errors at the
    // mapping entry.
    const std::string located =
        c.error.rfind("op 'mm'", 0) == 0
            ? "model.json: error: at 'ops[0]': " + c.error
            : c.error;
    EXPECT_NE(r.err.find(located), std::string::npos) << r.err;
  }
}

} // namespace
} // namespace spyre::compiler

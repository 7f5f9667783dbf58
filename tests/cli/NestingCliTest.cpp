// Input nested far beyond any real file, through the commands a user runs:
// every parser that builds a tree (JSON, YAML) or recurses (the sweep
// expressions) refuses it with a located error and exit 1 (2 for a command
// line option), where it once overflowed the stack (support/Nesting.h).
// The sizes are those of the hostile files that crashed `spyre`.
#include "hw/HwConfig.h"
#include "isa/Assembler.h"
#include "isa/Program.h"
#include "support/Diagnostic.h"
#include "support/FileIO.h"
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace spyre::test {
namespace {

std::string nested(size_t levels, const std::string &inner = "") {
  return std::string(levels, '[') + inner + std::string(levels, ']');
}

/// Expects exit `code`, a first stderr line of `first`, and a short stderr:
/// a message never echoes the megabytes it refused.
void expectRefused(const ToolResult &r, int code, const std::string &first) {
  EXPECT_EQ(r.exitCode, code) << firstLine(r.err);
  EXPECT_EQ(firstLine(r.err), first);
  EXPECT_LT(r.err.size(), 2000u);
}

/// A program with one host op, assembled for the built-in config.
isa::Program hostProgram() {
  DiagnosticEngine diags;
  isa::Program p = isa::assemble(
      ".tensor input x fp32 [1, 32] @ 0x0\n"
      ".tensor output y fp32 [1, 32] @ 0x1\n"
      ".host \"cos\" \"Cos\" \"{}\" in x out y flops 32\n"
      ".core 0\n.engine dma.load\n host 0\n halt\n",
      "p.s", hw::builtinConfig(), diags);
  EXPECT_FALSE(diags.hasErrors()) << diags.str();
  return p;
}

TEST(NestingCli, ProgramWithDeepHostAttributesIsRefusedByEveryReader) {
  // writeProgram computes the checksum as the reader checks it, so only the
  // attributes are wrong: 400,000 levels of JSON arrays.
  const std::string dir = makeTempDir();
  isa::Program p = hostProgram();
  p.hostOps.at(0).attrs = "{\"a\":" + nested(400000) + "}";
  writeFileAtomic(dir + "/p.spyre", isa::writeProgram(p));
  const std::string want =
      "p.spyre: error: section 'HOST': host op 0 ('cos'): the attributes nest "
      "deeper than 200 levels of arrays and objects (at byte 204)";
  for (const std::vector<std::string> &args :
       {std::vector<std::string>{"verify", "p.spyre"},
        {"sim", "p.spyre"},
        {"disasm", "p.spyre"}}) {
    SCOPED_TRACE(args[0]);
    expectRefused(runSpyre(args, dir), 1, want);
  }
  // At the limit the attributes parse (and Cos then names what is wrong).
  p.hostOps.at(0).attrs = "{\"a\":" + nested(199) + "}";
  writeFileAtomic(dir + "/p.spyre", isa::writeProgram(p));
  const ToolResult r = runSpyre({"verify", "p.spyre"}, dir);
  EXPECT_EQ(firstLine(r.err).find("nest deeper"), std::string::npos) << r.err;
}

TEST(NestingCli, AssemblyWithDeepHostAttributesIsRefused) {
  const std::string dir = makeTempDir();
  writeFileAtomic(dir + "/p.s",
                  ".tensor input x fp32 [1, 32] @ 0x0\n"
                  ".tensor output y fp32 [1, 32] @ 0x1\n"
                  ".host \"cos\" \"Cos\" \"{\\\"a\\\":" +
                      nested(150000) +
                      "}\" in x out y flops 32\n"
                      ".core 0\n.engine dma.load\n host 0\n halt\n");
  expectRefused(runSpyre({"asm", "p.s", "-o", "p.spyre"}, dir), 1,
                "p.s:3:1: error: host op 'cos': the attributes nest deeper "
                "than 200 levels of arrays and objects (at byte 204)");
  EXPECT_FALSE(std::filesystem::exists(dir + "/p.spyre"));
}

TEST(NestingCli, DeepYamlIsRefusedWithWhereAndWhy) {
  const std::string dir = makeTempDir();
  writeFileAtomic(dir + "/flow.yaml", "chip: " + nested(400000) + "\n");
  expectRefused(runSpyre({"config", "check", "flow.yaml"}, dir), 1,
                "flow.yaml:1:70: error: YAML nests deeper than 64 levels of "
                "maps and lists here; at most 64 are accepted");
  std::string block;
  for (int i = 0; i < 100; ++i)
    block += std::string(2 * static_cast<size_t>(i), ' ') + "k:\n";
  writeFileAtomic(dir + "/block.yaml", block + std::string(200, ' ') + "v\n");
  expectRefused(runSpyre({"config", "check", "block.yaml"}, dir), 1,
                "block.yaml:65:129: error: YAML nests deeper than 64 levels "
                "of maps and lists here; at most 64 are accepted");
  // A sweep spec reads YAML the same way.
  writeFileAtomic(dir + "/spec.yaml", "grid: " + nested(1000) + "\n");
  expectRefused(runSpyre({"sweep", "spec.yaml", "--dry-run"}, dir), 1,
                "spec.yaml:1:70: error: YAML nests deeper than 64 levels of "
                "maps and lists here; at most 64 are accepted");
}

TEST(NestingCli, DeepJsonIsRefusedByEveryJsonReader) {
  const std::string dir = makeTempDir();
  writeFileAtomic(
      dir + "/m.json",
      "{\"format\": \"spyre-graph\", \"version\": 1, \"name\": \"d\",\n"
      " \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [4, "
      "64]}],\n \"outputs\": [\"y\"],\n \"ops\": [{\"name\": \"act\", \"op\": "
      "\"relu\", \"inputs\": [\"x\"], \"outputs\": [\"y\"],\n  \"attrs\": "
      "{\"n\": " +
          nested(400000) + "}}]}\n");
  const std::string graph = "m.json:5:214: error: JSON nests deeper than 200 "
                            "levels of arrays and objects here; at most 200 "
                            "are accepted";
  expectRefused(runSpyre({"compile", "m.json", "-o", "m.spyre"}, dir), 1,
                graph);
  expectRefused(runSpyre({"graph", "print", "m.json"}, dir), 1, graph);
  // A statistics file for `spyre report`, a mapping for --mapping-in.
  writeFileAtomic(dir + "/stats.json", "{\"cores\": " + nested(400000) + "}");
  expectRefused(runSpyre({"report", "stats.json", "-o", "r.html"}, dir), 1,
                "stats.json:1:210: error: JSON nests deeper than 200 levels "
                "of arrays and objects here; at most 200 are accepted");
  writeFileAtomic(dir + "/map.json", "{\"ops\": {\"x\": " + nested(400000) +
                                         "}}");
  const ToolResult mapped = runSpyre(
      {"compile", srcPath("examples/models/mlp_block/model.json"), "-o",
       "m.spyre", "--mapping-in", "map.json"},
      dir);
  expectRefused(mapped, 1,
                "map.json:1:213: error: JSON nests deeper than 200 levels of "
                "arrays and objects here; at most 200 are accepted");
  EXPECT_FALSE(std::filesystem::exists(dir + "/m.spyre"));
}

TEST(NestingCli, DeepSweepExpressionsAreRefused) {
  const std::string dir = makeTempDir();
  writeFileAtomic(dir + "/spec.yaml",
                  "models: [" + srcPath("examples/models/mlp_block/model.json") +
                      "]\ngrid: {chip.cores: [4, 8]}\nconstraints:\n  - " +
                      std::string(10000, '(') + "1" + std::string(10000, ')') +
                      "\n");
  expectRefused(runSpyre({"sweep", "spec.yaml", "--dry-run"}, dir), 1,
                "spec.yaml:4:10005: error: the expression is 20001 characters "
                "long; at most 10000 are accepted");
  writeFileAtomic(dir + "/spec.yaml",
                  "models: [" + srcPath("examples/models/mlp_block/model.json") +
                      "]\ngrid: {chip.cores: [4, 8]}\nconstraints:\n  - " +
                      std::string(500, '(') + "1" + std::string(500, ')') +
                      "\n");
  expectRefused(runSpyre({"sweep", "spec.yaml", "--dry-run"}, dir), 1,
                "spec.yaml:4:105: error: the expression nests deeper than 100 "
                "levels (parentheses, unary minus and 'not' together)");
  // --cost is read before the sweep's folder: a usage error.
  expectRefused(runSpyre({"sweep", "report", dir, "--cost",
                          std::string(20000, '(') + "1" +
                              std::string(20000, ')')},
                         dir),
                2,
                "--cost:1:10001: error: the expression is 40001 characters "
                "long; at most 10000 are accepted");
}

TEST(NestingCli, SweepOfABillionPointsIsRefusedBeforeExpanding) {
  const std::string dir = makeTempDir();
  std::string values;
  for (int i = 0; i < 1000; ++i)
    values += (i ? ", " : "") + std::to_string(65536 + 128 * i);
  writeFileAtomic(dir + "/spec.yaml",
                  "models: [" + srcPath("examples/models/mlp_block/model.json") +
                      "]\ngrid:\n  lx.size_bytes: [" + values +
                      "]\n  memory.size_bytes: [" + values +
                      "]\n  memory.latency_cycles: [" + values + "]\n");
  expectRefused(runSpyre({"sweep", "spec.yaml", "--dry-run"}, dir), 1,
                "spec.yaml: error: the spec expands to 1000000000 points (1 x "
                "1000 x 1000 x 1000, models first, before the constraints); "
                "at most 100000 are expanded: split the sweep, or raise the "
                "limit with --max-points N");
  // The limit is read exactly: nothing wraps or saturates into a huge one.
  for (const char *bad : {"0", "-1", "99999999999999999999999", "1e9", "x"})
    expectRefused(
        runSpyre({"sweep", "spec.yaml", "--dry-run", "--max-points", bad}, dir),
        2,
        std::string("--max-points: error: expected a whole number from 1 to "
                    "9223372036854775807, got '") +
            bad + "'");
}

} // namespace
} // namespace spyre::test

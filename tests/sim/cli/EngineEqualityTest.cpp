// The simulator's results over every example, against checked-in
// expectations (tests/golden/sim/engine-equality/): each example program of
// examples/asm/ under `spyre sim`, each example model of examples/models/
// under `spyre run`, and one layer of each example language model of
// examples/llm/ under `spyre llm`, each with statistics, a trace and its
// outputs. An expectation holds the exit code, the run's cycles and
// instructions, its findings, and the FNV-1a hash of every byte the run
// wrote (terminal summary, statistics, trace, output tensors), so any change
// to the engine that moves a cycle, a number, a finding or a trace byte shows
// here, with the figure that moved. A change that is meant to move figures
// regenerates the files (scripts/update-golden.sh) and says why in its commit.
#include "SimRun.h"

#include "support/Hash.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

namespace spyre::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string hashOf(const std::string &bytes) {
  return toHex(fnv1a64(bytes), 16);
}

/// The folders or files of `relative` whose names pass `keep`, sorted.
std::vector<std::string> entries(const std::string &relative, bool dirs,
                                 const std::string &suffix) {
  std::vector<std::string> names;
  for (const auto &e : fs::directory_iterator(srcPath(relative))) {
    const std::string name = e.path().filename().string();
    if (e.is_directory() != dirs)
      continue;
    if (!suffix.empty() &&
        (name.size() <= suffix.size() ||
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0))
      continue;
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// The expectation text of one finished run: its exit code, the figures
/// of its statistics, and a hash per file it wrote.
std::string describe(const ToolResult &tool, const std::string &dir) {
  std::string out = "exit " + std::to_string(tool.exitCode) + "\n";
  EXPECT_TRUE(tool.exitCode == 0 || tool.exitCode == 3) << tool.err;
  const std::string statsText = readBytes(dir + "/stats.json");
  const json stats = json::parse(statsText, nullptr, /*allow_exceptions=*/false);
  if (stats.is_object()) {
    auto figure = [&](const char *key) {
      if (stats.contains(key))
        out += std::string(key) + " " + stats.at(key).dump() + "\n";
    };
    figure("total_cycles");
    figure("instructions");
    figure("dram_read_bytes");
    figure("dram_write_bytes");
    if (stats.contains("findings"))
      for (const json &f : stats.at("findings"))
        out += "finding " + f.value("kind", std::string()) + " @" +
               f.value("cycle", json()).dump() + "\n";
  }
  out += "summary " + hashOf(tool.out) + "\n";
  out += "stats " + hashOf(statsText) + "\n";
  out += "trace " + hashOf(readBytes(dir + "/trace.json")) + "\n";
  if (fs::is_directory(dir + "/out")) {
    std::vector<std::string> files;
    for (const auto &e : fs::directory_iterator(dir + "/out"))
      files.push_back(e.path().filename().string());
    std::sort(files.begin(), files.end());
    for (const std::string &f : files)
      out += "output " + f + " " + hashOf(readBytes(dir + "/out/" + f)) + "\n";
  }
  return out;
}

TEST(EngineEquality, ExamplePrograms) {
  std::string all;
  for (const std::string &file : entries("examples/asm", false, ".s")) {
    const std::string name = file.substr(0, file.size() - 2);
    SCOPED_TRACE(name);
    const std::string program = assembleExample(name, makeTempDir());
    SimArgs args;
    if (fs::is_directory(simData(name))) {
      args.inputs = simData(name);
      args.outputs = true;
    } else {
      args.timingOnly = true;
    }
    SimRun run = simulate(program, args);
    all += "== " + name + "\n" + describe(run.tool, run.dir);
  }
  expectGolden(all, "sim/engine-equality/programs.txt");
}

TEST(EngineEquality, ExampleModels) {
  std::string all;
  for (const std::string &name : entries("examples/models", true, "")) {
    SCOPED_TRACE(name);
    const std::string dir = makeTempDir();
    const std::string folder = "examples/models/" + name + "/";
    const std::string model = fs::exists(srcPath(folder + "model.json"))
                                  ? folder + "model.json"
                                  : folder + "model.onnx";
    ToolResult tool = runSpyre(
        {"run", model, "--stats", dir + "/stats.json",
         "--trace", dir + "/trace.json", "--outputs", dir + "/out", "--seed",
         "1"});
    all += "== " + name + "\n" + describe(tool, dir);
  }
  expectGolden(all, "sim/engine-equality/models.txt");
}

TEST(EngineEquality, ExampleLanguageModels) {
  std::string all;
  for (const std::string &file : entries("examples/llm", false, ".json")) {
    if (file.rfind("tiny-", 0) != 0)
      continue; // the full-size configs are the long tests' and the bench's
    for (const char *mode : {"prefill", "decode"}) {
      const std::string name = file + " " + mode;
      SCOPED_TRACE(name);
      const std::string dir = makeTempDir();
      std::vector<std::string> args = {
          "llm",   "examples/llm/" + file, "--layers", "1",       "--mode",
          mode,    "--stats",             dir + "/stats.json", "--trace",
          dir + "/trace.json"};
      if (std::string(mode) == "prefill")
        args.insert(args.end(), {"--tokens", "64"});
      else
        args.insert(args.end(), {"--context", "128"});
      ToolResult tool = runSpyre(args);
      // The compile's wall time is the one line that differs between runs.
      tool.out = std::regex_replace(
          tool.out, std::regex("(^|\n)[ \t]*compile[ \t][^\n]*"), "$1");
      all += "== " + name + "\n" + describe(tool, dir);
    }
  }
  expectGolden(all, "sim/engine-equality/llm.txt");
}

} // namespace
} // namespace spyre::test

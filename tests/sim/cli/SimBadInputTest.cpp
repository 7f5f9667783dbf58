// `spyre sim` on bad input: each case exits with its code (1 bad input,
// 2 usage, 3 a finding) and a located message naming what is wrong, and
// never crashes or hangs. Input folders are built per test from the
// fixtures in tests/data/sim/.
#include "SimRun.h"

#include "support/Hash.h"
#include "testlib/FileSizeLimit.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace spyre::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// A fresh inputs folder holding `files` (name in the folder -> fixture
/// under tests/data/sim/).
std::string
inputsFolder(const std::vector<std::pair<std::string, std::string>> &files) {
  std::string dir = makeTempDir() + "/inputs";
  fs::create_directories(dir);
  for (const auto &[name, fixture] : files)
    fs::copy_file(simData(fixture), dir + "/" + name);
  return dir;
}

void writeText(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary) << text;
}

/// Runs `spyre sim args...` and expects exit `code` with `message` as the
/// first line of stderr.
void expectError(const std::vector<std::string> &args, int code,
                 const std::string &message) {
  ToolResult r = runSpyre(args);
  EXPECT_EQ(r.exitCode, code) << r.out << r.err;
  EXPECT_EQ(firstLine(r.err), message) << r.err;
}

TEST(SimBadInput, MissingInputFile) {
  std::string program = assembleExample("pt_matmul", makeTempDir());
  std::string inputs = inputsFolder({{"A.npy", "pt_matmul/A.npy"}});
  expectError({"sim", program, "--inputs", inputs}, 1,
              inputs + "/B.npy: error: missing input 'B' (expected this file)");
}

TEST(SimBadInput, MisnamedNpyFile) {
  // The output's name instead of the input's: a likely slip.
  std::string program = assembleExample("dma_copy", makeTempDir());
  std::string inputs = inputsFolder({{"y.npy", "dma_copy/x.npy"}});
  expectError({"sim", program, "--inputs", inputs}, 1,
              inputs +
                  "/y.npy: error: names no input of the program (inputs: x)");
}

TEST(SimBadInput, NonNpyFileInInputsFolder) {
  std::string program = assembleExample("dma_copy", makeTempDir());
  std::string inputs = inputsFolder({{"x.npy", "dma_copy/x.npy"}});
  writeText(inputs + "/notes.txt", "where x came from\n");
  expectError({"sim", program, "--inputs", inputs}, 1,
              inputs + "/notes.txt: error: not a .npy file; the inputs folder "
                       "holds one NAME.npy per program input");
}

TEST(SimBadInput, CorruptNpyFile) {
  std::string program = assembleExample("dma_copy", makeTempDir());
  std::string inputs = inputsFolder({});
  writeText(inputs + "/x.npy", "not numpy\n");
  ToolResult r = runSpyre({"sim", program, "--inputs", inputs});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(
      firstLine(r.err).rfind(inputs + "/x.npy: error: invalid .npy file", 0),
      0u)
      << r.err;
}

TEST(SimBadInput, WrongShape) {
  std::string program = assembleExample("dma_copy", makeTempDir());
  std::string inputs = inputsFolder({{"x.npy", "bad/x_3x99_f32.npy"}});
  expectError({"sim", program, "--inputs", inputs}, 1,
              inputs + "/x.npy: error: input 'x' has shape [3, 99] but the "
                       "program expects [3, 100]");
}

TEST(SimBadInput, WrongDtype) {
  std::string program = assembleExample("dma_copy", makeTempDir());
  std::string inputs = inputsFolder({{"x.npy", "bad/x_int32.npy"}});
  expectError({"sim", program, "--inputs", inputs}, 1,
              inputs +
                  "/x.npy: error: input 'x' is int32 but the program's dl16 "
                  "tensor needs float32 or float16");
}

TEST(SimBadInput, MissingInputsFolder) {
  std::string dir = makeTempDir();
  std::string program = assembleExample("dma_copy", dir);
  expectError({"sim", program, "--inputs", dir + "/nope"}, 1,
              dir + "/nope: error: inputs folder does not exist");
}

TEST(SimBadInput, NoInputsGiven) {
  std::string program = assembleExample("dma_copy", makeTempDir());
  expectError({"sim", program}, 1,
              program +
                  ": error: the program has inputs (x); give --inputs DIR "
                  "with one NAME.npy per input, or --timing-only");
}

TEST(SimBadInput, ProgramCompiledForAnotherConfig) {
  std::string dir = makeTempDir();
  // The built-in config with one value changed: half the LX.
  std::string yaml = readSource("configs/spyre.yaml");
  const std::string from = "size_bytes: 2097152", to = "size_bytes: 1048576";
  size_t at = yaml.find(from);
  ASSERT_NE(at, std::string::npos);
  ASSERT_EQ(yaml.find(from, at + 1), std::string::npos);
  yaml.replace(at, from.size(), to);
  std::string config = dir + "/half-lx.yaml";
  writeText(config, yaml);

  ToolResult def = runSpyre({"config", "fingerprint"});
  ASSERT_EQ(def.exitCode, 0) << def.err;
  std::string defaultPrint = firstLine(def.out);
  std::string program = dir + "/dma_copy.spyre";
  ToolResult asmRun = runSpyre({"asm", srcPath("examples/asm/dma_copy.s"), "-o",
                                program, "--config", config});
  ASSERT_EQ(asmRun.exitCode, 0) << asmRun.err;
  size_t p = asmRun.out.find("(config 0x");
  ASSERT_NE(p, std::string::npos) << asmRun.out;
  std::string otherPrint = asmRun.out.substr(p + 8, 18);
  ASSERT_EQ(defaultPrint.size(), 18u);
  ASSERT_NE(otherPrint, defaultPrint);

  expectError({"sim", program, "--timing-only"}, 1,
              program + ": error: compiled for config " + otherPrint +
                  " but the simulated config (built-in) is " + defaultPrint +
                  "; recompile, or pass the config it was compiled for");
  // With the config it was compiled for, the same file runs.
  ToolResult ok =
      runSpyre({"sim", program, "--timing-only", "--config", config});
  EXPECT_EQ(ok.exitCode, 0) << ok.err;
}

TEST(SimBadInput, TruncatedOrCorruptProgram) {
  std::string dir = makeTempDir();
  std::string program = assembleExample("dma_copy", dir);
  std::string bytes = readBytes(program);
  ASSERT_GT(bytes.size(), 100u);

  std::string half = dir + "/half.spyre";
  writeText(half, bytes.substr(0, bytes.size() / 2));
  ToolResult r = runSpyre({"sim", half, "--timing-only"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(
      firstLine(r.err).rfind(
          half + ": error: truncated: the header says the payload is ", 0),
      0u)
      << r.err;

  std::string stub = dir + "/stub.spyre";
  writeText(stub, bytes.substr(0, 10));
  expectError({"sim", stub, "--timing-only"}, 1,
              stub + ": error: truncated: 10 bytes, shorter than the 48-byte "
                     "program header");

  std::string flipped = dir + "/flipped.spyre";
  std::string corrupt = bytes;
  corrupt.back() = static_cast<char>(corrupt.back() ^ 0x01);
  writeText(flipped, corrupt);
  r = runSpyre({"sim", flipped, "--timing-only"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(firstLine(r.err).rfind(flipped + ": error: checksum mismatch", 0),
            0u)
      << r.err;

  expectError(
      {"sim", dir + "/none.spyre", "--timing-only"}, 1,
      dir + "/none.spyre: error: cannot open file: No such file or directory");
}

// A file with the built-in config's fingerprint that the config cannot hold
// (made here by assembling for 64 cores and rewriting the fingerprint and
// checksum) is refused before it runs (found by the `program` fuzz target,
// where it aborted the simulator).
TEST(SimBadInput, ProgramThatDoesNotFitTheConfig) {
  std::string dir = makeTempDir();
  std::string yaml = readSource("configs/spyre.yaml");
  const std::string from = "cores: 32", to = "cores: 64";
  size_t at = yaml.find(from);
  ASSERT_NE(at, std::string::npos);
  yaml.replace(at, from.size(), to);
  std::string config = dir + "/64-cores.yaml";
  writeText(config, yaml);
  writeText(dir + "/far.s", ".core 40\n.engine sfu.0\n nop\n halt\n");
  std::string program = dir + "/far.spyre";
  ToolResult asmRun =
      runSpyre({"asm", dir + "/far.s", "-o", program, "--config", config});
  ASSERT_EQ(asmRun.exitCode, 0) << asmRun.err;

  ToolResult def = runSpyre({"config", "fingerprint"});
  ASSERT_EQ(def.exitCode, 0) << def.err;
  uint64_t fingerprint = std::stoull(firstLine(def.out), nullptr, 16);
  std::string bytes = readBytes(program);
  for (int i = 0; i < 8; ++i) // header: fingerprint at 16, CRC-32 at 32
    bytes[16 + static_cast<size_t>(i)] =
        static_cast<char>((fingerprint >> (8 * i)) & 0xFF);
  for (int i = 0; i < 4; ++i)
    bytes[32 + static_cast<size_t>(i)] = 0;
  uint32_t crc = crc32(bytes.data(), bytes.size());
  for (int i = 0; i < 4; ++i)
    bytes[32 + static_cast<size_t>(i)] = static_cast<char>((crc >> (8 * i)) & 0xFF);
  writeText(program, bytes);

  expectError({"sim", program, "--timing-only"}, 1,
              program + ": error: stream core 40 sfu.0: the config has 32 "
                        "cores (chip.cores)");
}

TEST(SimBadInput, UnwritableOutputPaths) {
  std::string dir = makeTempDir();
  std::string program = assembleExample("dma_copy", dir);
  std::string inputs = simData("dma_copy");
  // A regular file where a folder must go: fails even for root.
  std::string file = dir + "/plain-file";
  writeText(file, "x");
  expectError({"sim", program, "--inputs", inputs, "--outputs", file}, 1,
              file + ": error: cannot create outputs folder: Not a directory");
  expectError(
      {"sim", program, "--inputs", inputs, "--outputs", file + "/sub"}, 1,
      file + "/sub: error: cannot create outputs folder: Not a directory");
  expectError(
      {"sim", program, "--timing-only", "--stats", dir + "/no/stats.json"}, 1,
      dir + "/no/stats.json: error: cannot write file: No such file or "
            "directory");
  expectError(
      {"sim", program, "--timing-only", "--trace", file + "/trace.json"}, 1,
      file + "/trace.json: error: cannot write file: Not a directory");
}

// The trace goes to its file as it is made: a write that fails part way
// (a limit on file size, as a disk that fills up) is the located error of
// any unwritable path, and neither the trace nor its temporary file stays.
TEST(SimBadInput, TraceWriteFailingPartWayLeavesNoFile) {
  std::string dir = makeTempDir();
  std::string program = assembleExample("pt_matmul", dir);
  std::string out = makeTempDir();
  for (const char *name : {"trace.json", "trace.json.gz"}) {
    const std::string trace = out + "/" + name;
    ToolResult r;
    {
      FileSizeLimit limit(512);
      r = runSpyre({"sim", program, "--timing-only", "--trace", trace});
    }
    EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
    EXPECT_EQ(firstLine(r.err),
              trace + ": error: cannot write file: File too large");
    EXPECT_TRUE(fs::is_empty(out)) << name;
  }
  // A device is written in place, and a full one says so.
  if (fs::exists("/dev/full"))
    expectError({"sim", program, "--timing-only", "--trace", "/dev/full"}, 1,
                "/dev/full: error: cannot write file: No space left on device");
}

TEST(SimBadInput, TimingOnlyHasNoOutputs) {
  std::string dir = makeTempDir();
  std::string program = assembleExample("dma_copy", dir);
  expectError(
      {"sim", program, "--timing-only", "--outputs", dir + "/out"}, 2,
      "--outputs: error: --timing-only computes no numbers, so there are "
      "no outputs to write");
}

/// 65535 x 65535 nops: about 4.3e9 cycles, far longer than a test may run.
const char *const kLongLoop = R"(.program "long_loop"
.core 0
.engine sfu.0
.op "spin"
    loop 65535, outer_end
    loop 65535, inner_end
    nop
inner_end:
outer_end:
    halt
)";

TEST(SimBadInput, MaxCyclesStopsALongLoopQuickly) {
  std::string program = assembleText("long_loop", kLongLoop, makeTempDir());
  auto start = std::chrono::steady_clock::now();
  SimRun run = simulate(
      program, {.timingOnly = true, .extra = {"--max-cycles", "20000"}});
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_LT(seconds, 10.0);
  EXPECT_EQ(run.tool.exitCode, 3) << run.tool.err;
  const json &findings = run.stats.at("findings");
  ASSERT_EQ(findings.size(), 1u) << findings.dump(2);
  EXPECT_EQ(findings[0].at("kind"), "max-cycles");
  EXPECT_EQ(findings[0].at("cycle"), 20000);
  EXPECT_EQ(findings[0].at("stream"), "core 0 sfu.0");
  EXPECT_EQ(findings[0].at("source_op"), "spin");
  EXPECT_NE(
      findings[0].at("message").get<std::string>().find("--max-cycles 20000"),
      std::string::npos);
  // A limit is not a deadlock: the stopped stream gets no second finding.
  expectTraceMatchesStats(run.traceText, run.stats);
}

TEST(SimBadInput, MaxInstructionsStopsAtTheBudget) {
  std::string program = assembleText("long_loop", kLongLoop, makeTempDir());
  SimRun run = simulate(
      program, {.timingOnly = true, .extra = {"--max-instructions", "1000"}});
  EXPECT_EQ(run.tool.exitCode, 3) << run.tool.err;
  const json &findings = run.stats.at("findings");
  ASSERT_EQ(findings.size(), 1u) << findings.dump(2);
  EXPECT_EQ(findings[0].at("kind"), "max-instructions");
  // The budget is what ran: 1000 instructions, 1000 trace slices.
  EXPECT_EQ(run.stats.at("instructions"), 1000);
  expectTraceMatchesStats(run.traceText, run.stats);
}

} // namespace
} // namespace spyre::test

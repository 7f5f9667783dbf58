// The SystemC boundary through examples/systemc/, a top level of its own
// (one simulation per process, as a user runs it): with the chip's built-in
// memory module it writes the bytes `spyre sim` writes; with the example's
// plain memory (a fixed latency, no Spyre extension) in its place the
// outputs stay bit-identical and the cycles grow within the bounds the added
// latency implies; debug transport reads a tensor back out of either memory.
#include "SimRun.h"

#include "support/Gzip.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

namespace spyre::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

ToolResult runExample(const std::vector<std::string> &args) {
  return runExecutable(SPYRE_SYSTEMC_EXAMPLE, args);
}

/// Every file of a folder, by name ({} when it does not exist).
std::map<std::string, std::string> filesOf(const std::string &dir) {
  std::map<std::string, std::string> files;
  if (fs::is_directory(dir))
    for (const auto &e : fs::directory_iterator(dir))
      files[e.path().filename().string()] = readBytes(e.path().string());
  return files;
}

/// A figure of the terminal summary: "cycles       1283" -> 1283.
uint64_t summaryFigure(const std::string &out, const std::string &key) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex("(^|\n)" + key + " +([0-9]+)"))) {
    ADD_FAILURE() << "no '" << key << "' in:\n" << out;
    return 0;
  }
  return std::stoull(m[2]);
}

/// The example memory's line: "memory       12 transactions, 100 ns each
/// (150 cycles)" -> {12, 150}.
std::pair<uint64_t, uint64_t> memoryLine(const std::string &out) {
  std::smatch m;
  if (!std::regex_search(out, m,
                         std::regex("\nmemory +([0-9]+) transactions, [0-9]+ "
                                    "ns each \\(([0-9]+) cycles\\)"))) {
    ADD_FAILURE() << "no memory line in:\n" << out;
    return {0, 0};
  }
  return {std::stoull(m[1]), std::stoull(m[2])};
}

/// The most ld/st instructions any one engine stream executed, from the
/// slices of a trace (one per executed instruction, one thread per stream).
uint64_t mostDmaOnOneEngine(const std::string &traceText) {
  const json trace = json::parse(traceText, nullptr, false);
  std::map<std::pair<int, int>, uint64_t> perThread;
  uint64_t most = 0;
  for (const json &e : trace.at("traceEvents"))
    if (e.value("ph", "") == "X" &&
        (e.value("name", "") == "ld" || e.value("name", "") == "st"))
      most = std::max(
          most, ++perThread[{e.at("pid").get<int>(), e.at("tid").get<int>()}]);
  return most;
}

/// Inputs for an example program when tests/data/sim has them.
std::string inputsOf(const std::string &name) {
  return fs::is_directory(simData(name)) ? simData(name) : "";
}

TEST(SystemCBoundary, BuiltInMemoryWritesWhatSpyreSimWrites) {
  for (const char *name : {"dma_copy", "pt_matmul", "ring_exchange",
                           "sfu_softmax", "race", "oob"}) {
    SCOPED_TRACE(name);
    const std::string program = assembleExample(name, makeTempDir());
    const std::string inputs = inputsOf(name);
    SimRun sim = simulate(program, {.inputs = inputs,
                                    .outputs = !inputs.empty(),
                                    .timingOnly = inputs.empty()});
    const std::string dir = makeTempDir();
    std::vector<std::string> args = {program,
                                     "--memory",
                                     "builtin",
                                     "--stats",
                                     dir + "/stats.json",
                                     "--trace",
                                     dir + "/trace.json"};
    if (inputs.empty())
      args.push_back("--timing-only");
    else
      args.insert(args.end(), {"--inputs", inputs, "--outputs", dir + "/out"});
    ToolResult ex = runExample(args);
    EXPECT_EQ(ex.exitCode, sim.tool.exitCode) << ex.err;
    EXPECT_EQ(ex.out, sim.tool.out);
    EXPECT_TRUE(readBytes(dir + "/stats.json") == sim.statsText)
        << "stats differ";
    EXPECT_TRUE(readBytes(dir + "/trace.json") == sim.traceText)
        << "traces differ";
    EXPECT_EQ(filesOf(dir + "/out").size(), filesOf(sim.outputs()).size());
    EXPECT_TRUE(filesOf(dir + "/out") == filesOf(sim.outputs()))
        << "outputs differ";
  }
  // A trace named .gz is gzipped, as spyre sim's: the same bytes as
  // gzipCompress of the plain trace.
  const std::string program = assembleExample("dma_copy", makeTempDir());
  const SimRun sim = simulate(program, {.timingOnly = true});
  const std::string dir = makeTempDir();
  ToolResult gz = runExample({program, "--memory", "builtin", "--timing-only",
                              "--trace", dir + "/trace.json.gz"});
  EXPECT_EQ(gz.exitCode, 0) << gz.err;
  EXPECT_TRUE(readBytes(dir + "/trace.json.gz") == gzipCompress(sim.traceText))
      << "the gzipped trace differs";
}

TEST(SystemCBoundary, ReplacedMemoryKeepsOutputsAndAddsItsLatency) {
  for (const char *name : {"dma_copy", "pt_matmul"}) {
    SCOPED_TRACE(name);
    const std::string program = assembleExample(name, makeTempDir());
    SimRun sim = simulate(program, {.inputs = simData(name), .outputs = true});
    ASSERT_EQ(sim.tool.exitCode, 0) << sim.tool.err;

    auto run = [&](uint64_t latencyNs, bool timingOnly) {
      const std::string dir = makeTempDir();
      std::vector<std::string> args = {program,
                                       "--memory",
                                       "simple",
                                       "--latency-ns",
                                       std::to_string(latencyNs),
                                       "--trace",
                                       dir + "/trace.json"};
      if (timingOnly)
        args.push_back("--timing-only");
      else
        args.insert(args.end(),
                    {"--inputs", simData(name), "--outputs", dir + "/out"});
      ToolResult r = runExample(args);
      EXPECT_EQ(r.exitCode, 0) << r.err;
      if (!timingOnly) {
        EXPECT_TRUE(filesOf(dir + "/out") == filesOf(sim.outputs()))
            << "outputs differ from spyre sim at " << latencyNs << " ns";
      }
      return std::make_pair(r, readBytes(dir + "/trace.json"));
    };
    const auto [fast, fastTrace] = run(0, false);
    const auto [slow, slowTrace] = run(100, false);
    const auto [again, againTrace] = run(100, false);
    const auto [timed, timedTrace] = run(100, true);

    // The same latency gives the same run; the bytes do not move the time.
    EXPECT_EQ(again.out, slow.out);
    EXPECT_TRUE(againTrace == slowTrace) << "traces of two equal runs differ";
    EXPECT_EQ(summaryFigure(timed.out, "cycles"),
              summaryFigure(slow.out, "cycles"));

    // 100 ns in whole cycles of the clock: the kernel's period is 1/clock
    // rounded to its picosecond resolution, and the chip rounds a target's
    // delay up to whole cycles.
    const double ghz = sim.stats.at("clock_ghz").get<double>();
    const auto periodPs = static_cast<uint64_t>(std::llround(1000.0 / ghz));
    const uint64_t latency = (100000 + periodPs - 1) / periodPs;
    const auto [transactions, reported] = memoryLine(slow.out);
    EXPECT_EQ(reported, latency);
    EXPECT_EQ(memoryLine(fast.out).second, 0u);
    EXPECT_EQ(memoryLine(fast.out).first, transactions);

    // Every burst waits the latency once. Each engine runs its ld/st one
    // after another and each takes at least the latency longer, so the run
    // grows by at least that many latencies; it grows by at most one
    // latency per transaction (all of them one after another).
    const uint64_t perEngine = mostDmaOnOneEngine(sim.traceText);
    ASSERT_GT(perEngine, 0u);
    EXPECT_GE(transactions, perEngine);
    const uint64_t c0 = summaryFigure(fast.out, "cycles");
    const uint64_t c1 = summaryFigure(slow.out, "cycles");
    ASSERT_GT(c1, c0);
    EXPECT_GE(c1 - c0, perEngine * latency) << c0 << " -> " << c1;
    EXPECT_LE(c1 - c0, transactions * latency) << c0 << " -> " << c1;
  }
}

TEST(SystemCBoundary, DebugTransportReadsATensorBack) {
  // dma_copy copies x to y; the fixture's values are exact in DL16, so both
  // tensors read back out of device memory hold them unchanged.
  const std::string program = assembleExample("dma_copy", makeTempDir());
  const std::vector<float> x = readF32(simData("dma_copy/x.npy"), {3, 100});
  for (const char *memory : {"simple", "builtin"}) {
    SCOPED_TRACE(memory);
    const std::string dir = makeTempDir();
    for (const char *tensor : {"x", "y"}) {
      ToolResult r = runExample({program, "--memory", memory, "--inputs",
                                 simData("dma_copy"), "--peek", tensor,
                                 dir + "/" + tensor + ".npy"});
      ASSERT_EQ(r.exitCode, 0) << r.err;
      EXPECT_EQ(readF32(dir + "/" + tensor + ".npy", {3, 100}), x) << tensor;
    }
  }
}

TEST(SystemCBoundary, BadOptionsAreNamed) {
  const std::string program = assembleExample("dma_copy", makeTempDir());
  ToolResult r = runExample({program, "--latency-ns", "-5"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--latency-ns takes whole nanoseconds"),
            std::string::npos)
      << r.err;
  r = runExample({program, "--inputs", simData("dma_copy"), "--peek", "z",
                  makeTempDir() + "/z.npy"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("no tensor 'z'"), std::string::npos) << r.err;
  r = runExample({program, "--memory-bytes", "0"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--memory-bytes takes"), std::string::npos) << r.err;
  r = runExample({program, "--memory", "dram"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--memory is 'simple' or 'builtin'"), std::string::npos)
      << r.err;
}

} // namespace
} // namespace spyre::test

namespace spyre::test {
namespace {

TEST(SystemCBoundary, AnErrorResponseStopsTheRunAndNamesTheBurst) {
  // dma_copy stores y at stick 0x10, byte 0x800: past a memory of 1 KiB.
  const std::string program = assembleExample("dma_copy", makeTempDir());
  ToolResult r = runExample({program, "--memory-bytes", "1024", "--timing-only",
                             "--latency-ns", "0"});
  EXPECT_EQ(r.exitCode, 1) << r.out;
  EXPECT_NE(r.err.find("chip: error: the memory target answered the ignore of "
                       "128 bytes at 0x800 for core 0 with "
                       "TLM_ADDRESS_ERROR_RESPONSE"),
            std::string::npos)
      << r.err;
  // With numbers the chip first loads the inputs' page (64 KiB at 0) into
  // the memory through debug transport, which a 1 KiB memory refuses.
  r = runExample(
      {program, "--memory-bytes", "1024", "--inputs", simData("dma_copy")});
  EXPECT_EQ(r.exitCode, 1) << r.out;
  EXPECT_NE(r.err.find("chip: error: the memory target took fewer than 65536 "
                       "bytes at 0x0 through transport_dbg"),
            std::string::npos)
      << r.err;
}

TEST(SystemCBoundary, HostOpsNeedTheBuiltInMemory) {
  // A host op reads and writes the machine's own device memory, which a
  // memory of another module does not share.
  const std::string dir = makeTempDir();
  const std::string program =
      assembleText("hostcos",
                   ".program \"hostcos\"\n"
                   ".tensor input x fp32 [1, 32] @ 0x0\n"
                   ".tensor output y fp32 [1, 32] @ 0x1\n"
                   ".host \"cos\" \"Cos\" \"{}\" in x out y flops 32\n"
                   ".core 0\n.engine dma.load\n    host 0\n    halt\n",
                   dir);
  ToolResult r = runExample({program, "--timing-only"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("hostcos: error: the program has host ops"),
            std::string::npos)
      << r.err;
  r = runExample({program, "--timing-only", "--memory", "builtin"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
}

} // namespace
} // namespace spyre::test

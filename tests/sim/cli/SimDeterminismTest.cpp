// The same program run twice in fresh processes writes the same bytes:
// statistics, trace and every output file; and the SystemC quantum, which
// only decides how far the model runs between kernel time steps, changes
// none of them.
#include "SimRun.h"

#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

namespace spyre::test {
namespace {

namespace fs = std::filesystem;

/// Every file of a run's outputs folder, by name.
std::map<std::string, std::string> outputFiles(const SimRun &run) {
  std::map<std::string, std::string> files;
  for (const auto &e : fs::directory_iterator(run.outputs()))
    files[e.path().filename().string()] = readBytes(e.path().string());
  return files;
}

void expectSameBytes(const SimRun &a, const SimRun &b) {
  EXPECT_EQ(a.tool.exitCode, 0) << a.tool.err;
  EXPECT_EQ(b.tool.exitCode, 0) << b.tool.err;
  ASSERT_FALSE(a.statsText.empty());
  ASSERT_FALSE(a.traceText.empty());
  EXPECT_EQ(a.tool.out, b.tool.out);
  EXPECT_TRUE(a.statsText == b.statsText) << "stats differ";
  EXPECT_TRUE(a.traceText == b.traceText) << "traces differ";
  std::map<std::string, std::string> filesA = outputFiles(a);
  EXPECT_FALSE(filesA.empty());
  EXPECT_TRUE(filesA == outputFiles(b)) << "output files differ";
}

// ring_exchange crosses cores (ring transfers, a barrier); pt_matmul has
// bursts queueing at the memory channel.
const char *const kPrograms[] = {"ring_exchange", "pt_matmul"};

TEST(SimDeterminism, TwoRunsWriteTheSameBytes) {
  for (const char *example : kPrograms) {
    SCOPED_TRACE(example);
    std::string program = assembleExample(example, makeTempDir());
    SimArgs args{.inputs = simData(example), .outputs = true};
    SimRun first = simulate(program, args);
    SimRun second = simulate(program, args);
    expectSameBytes(first, second);
    expectTraceMatchesStats(first.traceText, first.stats);
  }
}

TEST(SimDeterminism, QuantumDoesNotChangeResults) {
  for (const char *example : kPrograms) {
    SCOPED_TRACE(example);
    std::string program = assembleExample(example, makeTempDir());
    SimArgs base{.inputs = simData(example), .outputs = true};
    SimRun reference = simulate(program, base);
    for (const char *quantum : {"1", "7", "1000000"}) {
      SCOPED_TRACE(std::string("--quantum ") + quantum);
      SimArgs args = base;
      args.extra = {"--quantum", quantum};
      expectSameBytes(reference, simulate(program, args));
    }
  }
}

} // namespace
} // namespace spyre::test

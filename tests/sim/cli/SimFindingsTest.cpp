// The faulty examples (race, deadlock, oob, uninit) each make `spyre sim`
// exit 3 with exactly one finding of their own kind, located at the
// instruction, stream, source op and address range the example's comment
// names; their *_fixed twins run clean and compute the right numbers.
#include "SimRun.h"

#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace spyre::test {
namespace {

using nlohmann::json;

struct FaultCase {
  const char *example;
  const char *inputs; ///< folder under tests/data/sim/
  const char *kind;
  const char *stream;
  int64_t instruction;
  const char *text;
  const char *sourceOp;
  const char *addressRange;
  const char *conflicting; ///< "" when the finding has no other party
  const char *messagePart;
};

/// Names the case in test output instead of dumping its bytes.
void PrintTo(const FaultCase &c, std::ostream *os) { *os << c.example; }

const FaultCase kFaults[] = {
    // The SFU's relu (sfu.0 #0) reads stick 0 while the load engine's ld
    // (dma.load #0) writes it, with no signal/wait between them.
    {"race", "relu_1x64", "lx-race", "core 0 sfu.0", 0, "relu 0x10, 0x0",
     "relu", "lx[0x0, 0x1) sticks",
     "core 0 dma.load #0 (ld 0x0, 0x0) [op load_x]",
     "read races with an earlier write"},
    // The store engine waits on c1 at its first instruction; only c0 and c2
    // are ever signalled.
    {"deadlock", "relu_1x64", "deadlock", "core 0 dma.store", 0, "wait c1, 1",
     "store_y", "", "", "waits forever for counter c1 of core 0 to reach 1"},
    // ld [r1] with r1 = 0x3ffe and run=4 writes LX sticks 0x3ffe..0x4001;
    // LX has 2 MiB / 128 = 0x4000 sticks.
    {"oob", "oob", "out-of-bounds", "core 0 dma.load", 1, "ld [r1], 0x0, run=4",
     "load_x", "lx[0x3ffe, 0x4002) sticks", "",
     "write outside LX (size 0x4000 sticks)"},
    // relu n=2 reads LX sticks 0 and 1; the load wrote only stick 0.
    {"uninit", "relu_1x128", "lx-uninitialized-read", "core 0 sfu.0", 1,
     "relu 0x10, 0x0, n=2", "relu", "lx[0x1, 0x2) sticks", "",
     "read of LX never written"},
};

class SimFaulty : public testing::TestWithParam<FaultCase> {};

void expectTheFinding(const SimRun &run, const FaultCase &c) {
  EXPECT_EQ(run.tool.exitCode, 3) << run.tool.out << run.tool.err;
  const json &findings = run.stats.at("findings");
  ASSERT_EQ(findings.size(), 1u) << findings.dump(2);
  EXPECT_EQ(run.stats.at("findings_dropped"), 0);
  const json &f = findings[0];
  EXPECT_EQ(f.at("kind"), c.kind);
  EXPECT_EQ(f.at("core"), 0);
  EXPECT_EQ(f.at("stream"), c.stream);
  EXPECT_EQ(f.at("instruction"), c.instruction);
  EXPECT_EQ(f.at("text"), c.text);
  EXPECT_EQ(f.at("source_op"), c.sourceOp);
  EXPECT_EQ(f.at("address_range"), c.addressRange);
  EXPECT_EQ(f.at("conflicting"), c.conflicting);
  EXPECT_NE(f.at("message").get<std::string>().find(c.messagePart),
            std::string::npos)
      << f.at("message");
  EXPECT_LE(f.at("cycle").get<uint64_t>(),
            run.stats.at("total_cycles").get<uint64_t>());
  // The terminal summary lists the same finding on one line.
  std::string line = "cycle " + f.at("cycle").dump() + ": " + c.kind + ": " +
                     c.stream + " #" + std::to_string(c.instruction) + " (" +
                     c.text + ") [op " + c.sourceOp + "]: ";
  EXPECT_NE(run.tool.out.find("findings     1\n  " + line), std::string::npos)
      << "expected in the summary: " << line << "\n"
      << run.tool.out;
  expectTraceMatchesStats(run.traceText, run.stats);
}

TEST_P(SimFaulty, ReportsExactlyItsOwnFinding) {
  const FaultCase &c = GetParam();
  std::string program = assembleExample(c.example, makeTempDir());
  SimRun run =
      simulate(program, {.inputs = simData(c.inputs), .outputs = true});
  expectTheFinding(run, c);
}

TEST_P(SimFaulty, TimingOnlyFindsTheSame) {
  const FaultCase &c = GetParam();
  std::string program = assembleExample(c.example, makeTempDir());
  SimRun timing = simulate(program, {.timingOnly = true});
  expectTheFinding(timing, c);
  SimRun full = simulate(program, {.inputs = simData(c.inputs)});
  EXPECT_EQ(full.stats.at("findings"), timing.stats.at("findings"));
}

INSTANTIATE_TEST_SUITE_P(Examples, SimFaulty, testing::ValuesIn(kFaults),
                         [](const testing::TestParamInfo<FaultCase> &param) {
                           return std::string(param.param.example);
                         });

struct FixedCase {
  const char *example;
  const char *inputs;
  int64_t lanes; ///< x and y are [1, lanes]; 0: no output
};

/// Names the case in test output instead of dumping its bytes.
void PrintTo(const FixedCase &c, std::ostream *os) { *os << c.example; }

const FixedCase kFixed[] = {
    {"race_fixed", "relu_1x64", 64},
    {"deadlock_fixed", "relu_1x64", 64},
    {"oob_fixed", "oob", 0},
    {"uninit_fixed", "relu_1x128", 128},
};

class SimFixed : public testing::TestWithParam<FixedCase> {};

TEST_P(SimFixed, RunsCleanWithTheRightNumbers) {
  const FixedCase &c = GetParam();
  std::string program = assembleExample(c.example, makeTempDir());
  SimRun run =
      simulate(program, {.inputs = simData(c.inputs), .outputs = true});
  EXPECT_EQ(run.tool.exitCode, 0) << run.tool.out << run.tool.err;
  EXPECT_TRUE(run.stats.at("findings").empty())
      << run.stats.at("findings").dump(2);
  expectTraceMatchesStats(run.traceText, run.stats);
  if (c.lanes == 0)
    return;
  // y = relu(x); the inputs are exact in DL16, and so is max(x, 0).
  std::vector<float> x =
      readF32(simData(std::string(c.inputs) + "/x.npy"), {1, c.lanes});
  std::vector<float> y = readF32(run.outputs() + "/y.npy", {1, c.lanes});
  ASSERT_EQ(y.size(), x.size());
  ASSERT_TRUE(std::any_of(x.begin(), x.end(), [](float v) { return v < 0; }));
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(y[i], std::max(x[i], 0.0f)) << "y[" << i << "]";
}

INSTANTIATE_TEST_SUITE_P(Examples, SimFixed, testing::ValuesIn(kFixed),
                         [](const testing::TestParamInfo<FixedCase> &param) {
                           return std::string(param.param.example);
                         });

// oob.s: "the simulator reports out-of-bounds with the range and does not
// perform the access", so the load moves no bytes from device memory.
TEST(SimFindings, OutOfBoundsLoadMovesNoBytes) {
  std::string program = assembleExample("oob", makeTempDir());
  SimRun run = simulate(program, {.timingOnly = true});
  EXPECT_EQ(run.tool.exitCode, 3);
  EXPECT_EQ(run.stats.at("memory").at("busy_cycles"), 0.0);
  EXPECT_EQ(run.stats.at("dram_read_bytes"), 0)
      << "bytes counted for a load that was not performed";
}

} // namespace
} // namespace spyre::test

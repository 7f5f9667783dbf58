// `spyre sim --max-cycles` and `--max-instructions` stop a long program
// early, with a `max-cycles` / `max-instructions` finding and exit code 3
// (docs/sim-output.md), instead of running it to the end.
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <fstream>

namespace spyre::test {
namespace {

// 400 x 250 = 100,000 iterations of a one-cycle `nop` (loop counts stop at
// 65,535, so two nested loops). Run to the end it starts 100,402
// instructions: the outer loop once, the inner loop once per outer
// iteration (400), the 100,000 nops and the halt.
const char *const kLongLoop = R"(.program "long_loop"
.core 0
.engine dma.load
    loop    400, outer
    loop    250, inner
    nop
inner:
outer:
    halt
)";

/// The value on the summary line that starts with `key`.
std::string summaryValue(const std::string &out, const std::string &key) {
  size_t at = out.find("\n" + key + " ");
  if (out.rfind(key + " ", 0) == 0)
    at = 0;
  else if (at != std::string::npos)
    ++at;
  if (at == std::string::npos)
    return "";
  std::string line = out.substr(at, out.find('\n', at) - at);
  return line.substr(line.find_first_not_of(' ', key.size()));
}

class Limits : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = makeTempDir();
    std::ofstream(dir_ + "/long_loop.s") << kLongLoop;
    ToolResult r =
        runSpyre({"asm", "long_loop.s", "-o", "long_loop.spyre"}, dir_);
    ASSERT_EQ(r.exitCode, 0) << r.err;
  }
  ToolResult sim(const std::vector<std::string> &extra) {
    std::vector<std::string> args = {"sim", "long_loop.spyre", "--timing-only"};
    args.insert(args.end(), extra.begin(), extra.end());
    return runSpyre(args, dir_);
  }
  std::string dir_;
};

TEST_F(Limits, LoopRunsToTheEndWithoutALimit) {
  ToolResult r = sim({});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(summaryValue(r.out, "instructions"),
            std::to_string(1 + 400 + 100000 + 1))
      << r.out;
  EXPECT_EQ(summaryValue(r.out, "findings"), "0") << r.out;
}

TEST_F(Limits, MaxCyclesStopsTheLoop) {
  ToolResult r = sim({"--max-cycles", "1000"});
  EXPECT_EQ(r.exitCode, 3) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(summaryValue(r.out, "findings"), "1") << r.out;
  EXPECT_NE(
      r.out.find("  cycle 1000: max-cycles: core 0 dma.load #2 (nop): the "
                 "run passed --max-cycles 1000 with streams still running\n"),
      std::string::npos)
      << r.out;
  // Stopped near the limit, far from the 100,402 instructions of the loop.
  EXPECT_LE(std::stoull(summaryValue(r.out, "instructions")), 1001u) << r.out;
}

TEST_F(Limits, MaxInstructionsStopsTheLoop) {
  ToolResult r = sim({"--max-instructions", "5000"});
  EXPECT_EQ(r.exitCode, 3) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(summaryValue(r.out, "findings"), "1") << r.out;
  EXPECT_NE(r.out.find("max-instructions: core 0 dma.load #2 (nop): the run "
                       "passed its budget of 5000 instructions\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(summaryValue(r.out, "instructions"), "5000") << r.out;
}

// A program that declares 64 GiB of scratch in the 128 GiB device address
// space and moves six sticks past it: the simulator's device memory is
// sparse (pages are allocated when written), so host memory stays small.
const char *const kHugeTensor = R"(.program "huge"
.tensor scratch x dl16 [6, 64] @ 0x0
.tensor scratch huge dl16 [8388608, 4096] @ 0x10
.tensor output y dl16 [6, 64] @ 0x20000010
.core 0
.engine dma.load
    li      r1, 0x100
    li      r2, 0x0
    loop    6, load_done
    ld      [r1], [r2]
    signal  c0, 1
    addi    r1, r1, 1
    addi    r2, r2, 1
load_done:
    halt
.engine dma.store
    li      r1, 0x100
    li      r2, 0x20000010
    loop    6, store_done
    wait    c0, 1
    st      [r2], [r1]
    addi    r1, r1, 1
    addi    r2, r2, 1
store_done:
    halt
)";

TEST(HostMemory, StaysSmallForHugeDeclaredTensors) {
  const std::string dir = makeTempDir();
  std::ofstream(dir + "/huge.s") << kHugeTensor;
  ToolResult a = runSpyre({"asm", "huge.s", "-o", "huge.spyre"}, dir);
  ASSERT_EQ(a.exitCode, 0) << a.err;
  ToolResult r = runSpyre({"sim", "huge.spyre"}, dir);
  // x is scratch nobody wrote, so the loads report uninitialised reads
  // (exit 3); what matters is that the run completes in little memory.
  EXPECT_EQ(r.exitCode, 3) << r.err;
  EXPECT_EQ(summaryValue(r.out, "device mem"),
            "768 bytes read, 768 bytes written")
      << r.out << r.err;
  // This test runs in its own process (ctest), so the largest child is one
  // of the two spyre runs above.
  rusage usage{};
  ASSERT_EQ(getrusage(RUSAGE_CHILDREN, &usage), 0);
  EXPECT_LT(usage.ru_maxrss, 256 * 1024) << "KiB of the largest child";
}

} // namespace
} // namespace spyre::test

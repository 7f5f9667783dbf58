// `spyre sim --max-cycles`, `--max-instructions` and `--max-records` stop a
// long program early, with a `max-cycles` / `max-instructions` /
// `max-records` finding and exit code 3 (docs/sim-output.md), instead of
// running it to the end; `--progress` shows a long run is alive; `spyre run`
// takes the same options with the same meanings.
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <zlib.h>

#include <fstream>
#include <regex>
#include <sstream>

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

std::string slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

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

TEST_F(Limits, MaxRecordsStopsARunThatKeepsRecords) {
  ToolResult r = sim({"--stats", "s.json", "--max-records", "3000"});
  EXPECT_EQ(r.exitCode, 3) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(summaryValue(r.out, "findings"), "1") << r.out;
  // One stream: every instruction executed is one record, and the run stops
  // before the one past the limit.
  EXPECT_EQ(summaryValue(r.out, "instructions"), "3000") << r.out;
  EXPECT_NE(r.out.find("max-records: core 0 dma.load #2 (nop): the run kept "
                       "3000 records ("),
            std::string::npos)
      << r.out;
  const std::string stats = slurp(dir_ + "/s.json");
  EXPECT_NE(stats.find("\"max-records\""), std::string::npos);
}

TEST_F(Limits, MaxRecordsDoesNotLimitARunWithoutRecords) {
  ToolResult r = sim({"--max-records", "3000"});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(summaryValue(r.out, "instructions"),
            std::to_string(1 + 400 + 100000 + 1));
}

TEST_F(Limits, ProgressLinesGoToStderrWhenAsked) {
  // Interval 0: a line at every check (every 16,384 instructions) after the
  // first, which starts the clock.
  ToolResult r = sim({"--progress", "always", "--progress-interval", "0"});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  const std::regex line(R"(spyre sim: [0-9]+\.[0-9]{3} ms simulated \(cycle )"
                        R"(([0-9]+)\), ([0-9]+) instructions, [0-9]+\.[0-9]{2} )"
                        R"(M instructions/s)");
  std::istringstream err(r.err);
  std::string text;
  std::vector<uint64_t> counts;
  while (std::getline(err, text)) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(text, m, line)) << text;
    counts.push_back(std::stoull(m[2]));
  }
  // 100,402 instructions: checks at 16,384 x 1..6, lines at 2..6.
  EXPECT_EQ(counts, (std::vector<uint64_t>{32768, 49152, 65536, 81920, 98304}));
  // The same run without progress gives the same summary.
  ToolResult quiet = sim({"--progress", "never"});
  EXPECT_EQ(quiet.err, "");
  EXPECT_EQ(quiet.out, r.out);
}

TEST_F(Limits, BadProgressOptionsAreUsageErrors) {
  for (const std::vector<std::string> &args :
       {std::vector<std::string>{"--progress", "sometimes"},
        {"--progress-interval", "nan"},
        {"--progress-interval", "-1"},
        {"--progress-interval", "1e9"},
        {"--max-records", "-1"}}) {
    ToolResult r = sim(args);
    EXPECT_EQ(r.exitCode, 2) << args[0] << " " << args[1] << ": " << r.err;
    EXPECT_NE(r.err.find(args[0]), std::string::npos) << r.err;
  }
}

// `spyre run` takes the limits and trace options of `spyre sim`.
class RunLimits : public ::testing::Test {
protected:
  void SetUp() override { dir_ = makeTempDir(); }
  ToolResult run(const std::vector<std::string> &extra) {
    std::vector<std::string> args = {
        "run", srcPath("examples/models/gpt_decoder/model.onnx"),
        "--timing-only"};
    args.insert(args.end(), extra.begin(), extra.end());
    return runSpyre(args, dir_);
  }
  std::string dir_;
};

TEST_F(RunLimits, MaxCyclesAndMaxInstructionsStopTheRun) {
  ToolResult r = run({"--max-cycles", "1000"});
  EXPECT_EQ(r.exitCode, 3) << r.out << r.err;
  EXPECT_NE(r.out.find(": max-cycles: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the run passed --max-cycles 1000 with streams still "
                       "running"),
            std::string::npos)
      << r.out;
  r = run({"--max-instructions", "50"});
  EXPECT_EQ(r.exitCode, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("passed its budget of 50 instructions"),
            std::string::npos)
      << r.out;
  r = run({"--max-records", "50"});
  EXPECT_EQ(r.exitCode, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("max-records: "), std::string::npos) << r.out;
}

TEST_F(RunLimits, TraceWindowAndCoresLimitTheTrace) {
  ToolResult all = run({"--trace", "all.json"});
  ASSERT_EQ(all.exitCode, 0) << all.err;
  ToolResult some =
      run({"--trace", "some.json", "--trace-cores", "0", "--trace-window",
           "0:2000"});
  ASSERT_EQ(some.exitCode, 0) << some.err;
  const std::string full = slurp(dir_ + "/all.json");
  const std::string part = slurp(dir_ + "/some.json");
  EXPECT_LT(part.size() * 4, full.size());
  EXPECT_NE(full.find("\"core 1\""), std::string::npos);
  EXPECT_EQ(part.find("\"core 1\""), std::string::npos);
  EXPECT_NE(part.find("\"core 0\""), std::string::npos);
  // The same limits, misused, give the same usage errors as `spyre sim`.
  ToolResult r = run({"--trace-window", "0:10"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            "--trace-window: error: limits what --trace writes, but no "
            "--trace is given");
  r = run({"--trace", "t.json", "--trace-cores", "32"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("core 32 does not exist"), std::string::npos) << r.err;
}

std::string gunzipFile(const std::string &path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f)
    return "";
  std::string out;
  char buffer[65536];
  int n = 0;
  while ((n = gzread(f, buffer, sizeof buffer)) > 0)
    out.append(buffer, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

TEST_F(RunLimits, TraceEndingInGzIsTheSameTraceGzipped) {
  ToolResult plain = run({"--trace", "t.json"});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  ToolResult gz = run({"--trace", "t.json.gz"});
  ASSERT_EQ(gz.exitCode, 0) << gz.err;
  const std::string json = slurp(dir_ + "/t.json");
  const std::string packed = slurp(dir_ + "/t.json.gz");
  ASSERT_GE(packed.size(), 2u);
  EXPECT_EQ(packed.substr(0, 2), "\x1f\x8b");
  EXPECT_EQ(gunzipFile(dir_ + "/t.json.gz"), json);
  // A decoder block's trace: at most a fifth of the plain JSON.
  EXPECT_LT(packed.size() * 5, json.size())
      << packed.size() << " of " << json.size();
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
